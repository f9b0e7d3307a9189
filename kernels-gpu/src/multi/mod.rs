//! Pure math of the multi-GPU sort (host and GPU): the regular sample of a sorted part, the
//! ranks of probe keys in it, and the random keys and checksums used to generate and verify
//! data on the GPUs; and the arguments of the kernels that do each.

#[cfg(target_arch = "nvptx64")]
mod kernels;

use crate::args::Addr;

crate::args::kernel_args! { $
    /// The argument of the sample kernels (`multi_sample_*`): the regular sample of a sorted
    /// part, every `stride`-th key and the last ([`sample_position`]).
    pub struct SampleArgs, entry sample_entry {
        /// The part's `n` sorted keys, read.
        pub keys: Addr,
        /// Keys in the part, at least one.
        pub n: u64,
        /// Keys from one sample to the next.
        pub stride: u64,
        /// Where the kernel writes the [`sample_count`]`(n, stride)` sampled keys.
        pub out: Addr,
    }
}

crate::args::kernel_args! { $
    /// The argument of the rank kernels (`multi_ranks_*`): the lower and upper bound of each
    /// probe key in a sorted part ([`rank`]).
    pub struct RanksArgs, entry ranks_entry {
        /// The part's `n` sorted keys, read.
        pub keys: Addr,
        /// Keys in the part.
        pub n: u64,
        /// The `count` probe keys, read.
        pub probes: Addr,
        /// Probes.
        pub count: u64,
        /// Where the kernel writes, per probe, the part's keys below it (`count` `u64`).
        pub below: Addr,
        /// Where the kernel writes, per probe, the part's keys not above it (`count` `u64`).
        pub not_above: Addr,
    }
}

crate::args::kernel_args! { $
    /// The argument of the fill kernels (`multi_fill_*`): random keys `first .. first + n` of
    /// a stream ([`random_key`], truncated to the key's width).
    pub struct FillArgs, entry fill_entry {
        /// Where the kernel writes the `n` keys.
        pub keys: Addr,
        /// Keys to write.
        pub n: u64,
        /// The stream of random keys.
        pub seed: u64,
        /// The index in the stream of the first key written.
        pub first: u64,
    }
}

crate::args::kernel_args! { $
    /// The argument of the check kernels (`multi_check_*`): per block, the neighbours out of
    /// order and the multiset checksum ([`checksum_term`]) of its keys.
    pub struct CheckArgs, entry check_entry {
        /// The `n` keys, read.
        pub keys: Addr,
        /// Keys.
        pub n: u64,
        /// The key map whose order the keys should be in.
        pub map: u32,
        /// Where the kernel writes, per block, its count of keys greater than the next
        /// (encoded with `map`) and its checksum: two `u64`, at `2 · block` and
        /// `2 · block + 1`.
        pub partials: Addr,
    }
}

/// Sample `m` of a sorted part of `n > 0` keys taken every `stride` keys: position
/// `min(m · stride, n − 1)`, so the samples start at the first key and end at the last, and at
/// most `stride − 1` keys lie strictly between two consecutive samples.
#[inline(always)]
pub fn sample_position(m: u64, n: u64, stride: u64) -> u64 {
    m.saturating_mul(stride).min(n - 1)
}

/// How many samples a part of `n > 0` keys gives at `stride`: up to and including the last key.
#[inline(always)]
pub fn sample_count(n: u64, stride: u64) -> u64 {
    (n - 1).div_ceil(stride) + 1
}

/// Keys of sorted `keys` below `probe` (`strictly = true`) or not above it (`false`): the lower
/// or upper bound of `probe`. `key(i)` reads key `i < n`.
#[inline(always)]
pub fn rank<K: PartialOrd>(probe: K, n: u64, strictly: bool, key: impl Fn(u64) -> K) -> u64 {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let k = key(mid);
        let before = if strictly { k < probe } else { k <= probe };
        if before {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijection of `u64` that mixes every
/// input bit into every output bit.
#[inline(always)]
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Random key `index` of the stream `seed`: the same on every GPU and on the host, so data made
/// on the GPUs can be checked anywhere.
#[inline(always)]
pub fn random_key(seed: u64, index: u64) -> u64 {
    mix64(mix64(seed) ^ index)
}

/// A key's term in the multiset checksum: the checksum of a set of keys is the wrapping sum of
/// their terms, independent of order, and changes when a key is lost, duplicated or altered
/// (except with probability about 2^-64 per change).
#[inline(always)]
pub fn checksum_term(bits: u64) -> u64 {
    mix64(bits ^ 0x6a09_e667_f3bc_c908)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn samples_bracket_every_key_within_a_stride() {
        for n in 1..60u64 {
            for stride in 1..9u64 {
                let count = sample_count(n, stride);
                let positions: Vec<u64> =
                    (0..count).map(|m| sample_position(m, n, stride)).collect();
                assert_eq!(positions[0], 0);
                assert_eq!(*positions.last().unwrap(), n - 1, "n {n} stride {stride}");
                for w in positions.windows(2) {
                    assert!(w[1] > w[0] && w[1] - w[0] <= stride, "{positions:?}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn rank_is_the_lower_or_upper_bound(
            mut keys in prop::collection::vec(0u8..10, 0..50),
            probe in 0u8..11,
        ) {
            keys.sort();
            let n = keys.len() as u64;
            let below = rank(probe, n, true, |i| keys[i as usize]);
            let not_above = rank(probe, n, false, |i| keys[i as usize]);
            prop_assert_eq!(below as usize, keys.iter().filter(|&&k| k < probe).count());
            prop_assert_eq!(not_above as usize, keys.iter().filter(|&&k| k <= probe).count());
        }
    }

    #[test]
    fn checksum_tells_multisets_apart() {
        let sum = |keys: &[u64]| {
            keys.iter()
                .fold(0u64, |s, &k| s.wrapping_add(checksum_term(k)))
        };
        assert_eq!(sum(&[1, 2, 3]), sum(&[3, 1, 2]));
        assert_ne!(sum(&[1, 2, 3]), sum(&[1, 2, 2]));
        assert_ne!(sum(&[1, 2, 3]), sum(&[1, 2, 3, 0]));
        assert_ne!(random_key(7, 0), random_key(7, 1));
        assert_ne!(random_key(7, 0), random_key(8, 0));
    }
}
