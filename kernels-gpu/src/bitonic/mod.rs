//! Index math of the bitonic sorting network, shared by the kernels, the CPU sort and the
//! tests.
//!
//! The network is used in the form in which every comparator points the same way (Batcher's bitonic
//! sorter, 1968, with each stage's first step comparing a key with its mirror image;
//! docs/design.md): stage k (k = 1 ..= log2 V, V = n rounded up to a power of two) leaves every
//! block of 2^k keys sorted ascending. Its first step compares each key of a block's lower half
//! with its mirror image in the upper half (`lo ^ (2^k − 1)`); the steps after it compare keys at
//! distance 2^(k−2), …, 1. The lower index always receives the smaller key.
//!
//! Any n works without padding: positions ≥ n behave as +∞. A comparator whose upper index is
//! ≥ n would keep +∞ where it is, so it is skipped; positions ≥ n are never read or written.
//! (Kernels may instead stand [`KeyBits::INFINITY`] in for them in registers or shared memory:
//! a comparator never moves the maximum value down, so the keys below n end up the same.)

pub mod block;
#[cfg(target_arch = "nvptx64")]
mod kernels;
pub mod small;
pub mod window;

use crate::keys::KeyBits;

/// Inserts `count` zero bits into `x` at bit position `at`: how a comparator index becomes a
/// key index.
///
/// ```
/// use kernels_gpu::bitonic::insert_zero_bits;
/// assert_eq!(insert_zero_bits(0b1011, 2, 1), 0b10011);
/// ```
#[inline(always)]
pub const fn insert_zero_bits(x: u64, at: u32, count: u32) -> u64 {
    ((x >> at) << (at + count)) | (x & ((1 << at) - 1))
}

/// Lower index of comparator `c` of a step whose partners lie 2^s apart (bit `s` of it is 0).
///
/// ```
/// use kernels_gpu::bitonic::comparator_lo;
/// // Distance 2: comparators 0, 1, 2, 3 start at keys 0, 1, 4, 5.
/// assert_eq!([0, 1, 2, 3].map(|c| comparator_lo(c, 1)), [0, 1, 4, 5]);
/// ```
#[inline(always)]
pub const fn comparator_lo(c: u64, s: u32) -> u64 {
    insert_zero_bits(c, s, 1)
}

/// Upper partner of `lo` in a step of distance 2^s: its mirror image within the block of
/// 2^(s+1) keys in the first step of a stage, `lo + 2^s` in the later ones.
///
/// ```
/// use kernels_gpu::bitonic::partner;
/// assert_eq!(partner(1, 2, true), 6); // mirrored in the block 0..8
/// assert_eq!(partner(1, 2, false), 5);
/// ```
#[inline(always)]
pub const fn partner(lo: u64, s: u32, mirror: bool) -> u64 {
    if mirror {
        lo ^ ((2 << s) - 1)
    } else {
        lo + (1 << s)
    }
}

/// Smallest `l` with `2^l ≥ n` (0 for n ≤ 1): the number of stages that sort n keys.
///
/// ```
/// use kernels_gpu::bitonic::ceil_log2;
/// assert_eq!([0, 1, 2, 3, 4, 5].map(ceil_log2), [0, 0, 1, 2, 2, 3]);
/// ```
pub const fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        u64::BITS - (n - 1).leading_zeros()
    }
}

/// Puts the smaller of `r[i]`, `r[j]` at `i` (with `i < j`).
///
/// # Panics
/// If `i` or `j` is out of bounds.
///
/// # Examples
///
/// ```
/// use kernels_gpu::bitonic::compare_exchange;
/// let mut r = [9u32, 4];
/// compare_exchange(&mut r, 0, 1);
/// assert_eq!(r, [4, 9]);
/// ```
#[inline(always)]
pub fn compare_exchange<K: KeyBits>(r: &mut [K], i: usize, j: usize) {
    let (a, b) = (r[i], r[j]);
    if b < a {
        r[i] = b;
        r[j] = a;
    }
}

/// Sorts 16 keys in registers (unstably): what each thread of the small sort and of the
/// window passes' tile sort does to its run of [`SMALL_RUN`](crate::tuning::SMALL_RUN) keys
/// first. Any sort of the run will do there, so a network with the fewest comparators known
/// for 16 keys: 60 in ten layers (one per line), where the bitonic network takes 80. Each pair
/// `(i, j)` leaves `r[i] ≤ r[j]`; written out, so that every register index is a constant.
///
/// ```
/// use kernels_gpu::bitonic::sort_sixteen;
/// let mut r = [5u32, 1, 4, 2, 8, 7, 3, 6, 16, 9, 15, 10, 14, 11, 13, 12];
/// sort_sixteen(&mut r);
/// assert!(r.is_sorted());
/// ```
#[inline(always)]
pub fn sort_sixteen<K: KeyBits>(r: &mut [K; 16]) {
    macro_rules! layers {
        ($([$(($i:literal, $j:literal))*])*) => { $($(compare_exchange(r, $i, $j);)*)* };
    }
    layers! {
        [(0, 13) (1, 12) (2, 15) (3, 14) (4, 8) (5, 6) (7, 11) (9, 10)]
        [(0, 5) (1, 7) (2, 9) (3, 4) (6, 13) (8, 14) (10, 15) (11, 12)]
        [(0, 1) (2, 3) (4, 5) (6, 8) (7, 9) (10, 11) (12, 13) (14, 15)]
        [(0, 2) (1, 3) (4, 10) (5, 11) (6, 7) (8, 9) (12, 14) (13, 15)]
        [(1, 2) (3, 12) (4, 6) (5, 7) (8, 10) (9, 11) (13, 14)]
        [(1, 4) (2, 6) (5, 8) (7, 10) (9, 13) (11, 14)]
        [(2, 4) (3, 6) (9, 12) (11, 13)]
        [(3, 5) (6, 8) (7, 9) (10, 12)]
        [(3, 4) (5, 6) (7, 8) (9, 10) (11, 12)]
        [(6, 7) (8, 9)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The network straight from its definition, one comparator at a time, skipping partners ≥ n.
    fn reference_network(keys: &mut [u32]) {
        let n = keys.len() as u64;
        for stage in 1..=ceil_log2(n) {
            for s in (0..stage).rev() {
                for c in 0..n {
                    let lo = comparator_lo(c, s);
                    let hi = partner(lo, s, s == stage - 1);
                    if hi < n && keys[hi as usize] < keys[lo as usize] {
                        keys.swap(lo as usize, hi as usize);
                    }
                }
            }
        }
    }

    #[test]
    fn insert_zero_bits_examples() {
        assert_eq!(insert_zero_bits(0b1011, 2, 1), 0b10011);
        assert_eq!(insert_zero_bits(0b1011, 0, 2), 0b101100);
        assert_eq!(insert_zero_bits(0b1011, 4, 3), 0b1011);
    }

    #[test]
    fn ceil_log2_examples() {
        let cases = [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (1 << 40, 40),
        ];
        for (n, l) in cases {
            assert_eq!(ceil_log2(n), l, "n = {n}");
        }
        assert_eq!(ceil_log2((1 << 40) + 1), 41);
    }

    #[test]
    fn the_sixteen_key_network_sorts_every_input_of_zeros_and_ones() {
        // The 0-1 principle: a comparator network that sorts every 0-1 input sorts every input.
        for bits in 0u32..1 << 16 {
            let mut r: [u32; 16] = core::array::from_fn(|i| bits >> i & 1);
            sort_sixteen(&mut r);
            assert!(r.is_sorted(), "{bits:#06x}");
        }
    }

    proptest! {
        #[test]
        fn every_step_pairs_each_index_once(stage in 1u32..10) {
            // In each step of a stage, the 2^(stage−1) comparators of a block of 2^stage keys
            // pair every index of the block with exactly one other, lower index first.
            for s in (0..stage).rev() {
                let mut seen = vec![false; 1 << stage];
                for c in 0..(1u64 << (stage - 1)) {
                    let lo = comparator_lo(c, s);
                    let hi = partner(lo, s, s == stage - 1);
                    prop_assert!(lo < hi && hi < 1 << stage);
                    prop_assert!(!seen[lo as usize] && !seen[hi as usize]);
                    seen[lo as usize] = true;
                    seen[hi as usize] = true;
                }
                prop_assert!(seen.iter().all(|&x| x));
            }
        }

        #[test]
        fn reference_network_sorts(mut v in proptest::collection::vec(any::<u32>(), 0..300)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            reference_network(&mut v);
            prop_assert_eq!(v, expected);
        }

        #[test]
        fn the_sixteen_key_network_sorts(mut v in any::<[u32; 16]>()) {
            let mut expected = v;
            expected.sort_unstable();
            sort_sixteen(&mut v);
            prop_assert_eq!(v, expected);
        }
    }
}
