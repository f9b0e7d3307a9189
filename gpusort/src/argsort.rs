//! Argsort: the permutation that sorts keys, and gathering keys through it.
//!
//! These run on the CPU; the GPU argsort is [`crate::GpuSorter::argsort`] (the stable merge
//! sort of (key, index) pairs), and [`crate::GpuSorter::sort_by_key`] carries payloads of up to
//! 16 bytes with the keys. Sorting records by one of their fields:
//!
//! ```
//! use gpusort::{Order, argsort::{argsort_cpu, gather}};
//!
//! let names = ["ada", "bob", "cy", "dee"];
//! let ages = [36u32, 25, 36, 19];
//! let by_age = argsort_cpu(&ages, Order::Ascending);
//! assert_eq!(gather(&names, &by_age), ["dee", "bob", "ada", "cy"]); // ada before cy: stable
//! ```

use crate::cpu::radix;
use crate::keys::{Order, SortKey};
use rayon::prelude::*;

/// The stable permutation that sorts `keys` in `order` (floats as `total_cmp`): `keys[perm[0]],
/// keys[perm[1]], …` is sorted, and equal keys keep their input order (in both orders: a
/// descending argsort is not the reverse of the ascending one when keys repeat).
///
/// 16 bytes per key beside the keys, and a little more while sorting (below).
///
/// # Current implementation
///
/// Runs on the CPU, on rayon's threads: a radix sort of (ordered bits, index) pairs. Its first
/// pass reads the keys and writes the pairs into 2048 buckets by their highest differing key
/// bits; each bucket is then sorted by the bits below in the cache, with a scratch buffer per
/// thread as large as the bucket (std's sort of the pairs for a bucket larger than an eighth of
/// the pairs' share of a thread, or 4 MiB: the pairs are distinct, so that sort is stable on
/// the keys too). Sorting pairs instead of indices by key avoids a random access into the keys
/// per step. Memory beside the keys: the pairs, 16 bytes per key, whose allocation the
/// permutation then reuses, and the per-thread scratch, under an eighth of the pairs or 4 MiB
/// a thread. The GPU version is [`crate::GpuSorter::argsort`].
///
/// # Examples
///
/// ```
/// use gpusort::{Order, argsort::argsort_cpu};
/// assert_eq!(argsort_cpu(&[3u32, 1, 3, 0], Order::Ascending), [3, 1, 0, 2]);
/// assert_eq!(argsort_cpu(&[3u32, 1, 3, 0], Order::Descending), [0, 2, 1, 3]);
/// ```
pub fn argsort_cpu<K: SortKey>(keys: &[K], order: Order) -> Vec<u64> {
    let _ = crate::cpu::start_threads();
    let pairs = sorted_pairs::<K, u64>(keys, order);
    // Serial, so that the pairs' allocation is reused for the indices.
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// [`argsort_cpu`] with `u32` indices, for up to 2^32 keys: the (ordered bits, index) pairs
/// take 8 bytes per key for 4-byte keys and 16 for 8-byte keys, and the permutation 4, so that
/// the peak beside the keys is 2 (4-byte keys) or 2.5 (8-byte keys) times their size, where
/// [`argsort_cpu`] needs 4 (or 3) times; the per-thread scratch of the sort adds at most an
/// eighth of the pairs, or 4 MiB a thread.
///
/// # Panics
/// If there are more than 2^32 keys.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, argsort::argsort_cpu_u32};
/// assert_eq!(argsort_cpu_u32(&[3u32, 1, 3, 0], Order::Ascending), [3, 1, 0, 2]);
/// ```
pub fn argsort_cpu_u32<K: SortKey>(keys: &[K], order: Order) -> Vec<u32> {
    assert!(
        keys.len() as u64 <= 1 << 32,
        "argsort_cpu_u32: {} keys need u64 indices",
        keys.len()
    );
    let _ = crate::cpu::start_threads();
    let pairs = sorted_pairs::<K, u32>(keys, order);
    let mut perm: Vec<u32> = pairs.into_iter().map(|(_, i)| i).collect();
    // The pairs' allocation, where it was reused, is twice as large or more.
    perm.shrink_to_fit();
    perm
}

/// An index type of the argsort: `u32` or `u64`.
trait Index: Copy + Ord + Send + Sync {
    /// `i`, which fits.
    fn from_usize(i: usize) -> Self;
}

impl Index for u32 {
    fn from_usize(i: usize) -> Self {
        i as u32
    }
}

impl Index for u64 {
    fn from_usize(i: usize) -> Self {
        i as u64
    }
}

/// Scratch bytes a thread may use to sort one bucket of pairs by radix, at least.
const BUCKET_SCRATCH_MIN: usize = 4 << 20;

/// The (ordered bits, index) pairs of `keys`, sorted: by key, then by index.
fn sorted_pairs<K: SortKey, I: Index>(keys: &[K], order: Order) -> Vec<(K::Bits, I)> {
    let n = keys.len();
    let pair = |k: &K, i: usize| (k.ordered_bits(order), I::from_usize(i));
    let key_bits = |k: &K| -> u64 { k.ordered_bits(order).into() };
    let top = radix::varying_bits(keys, &key_bits);
    if n < radix::RADIX_MIN || top == 0 {
        // Few keys, or all equal (then in input order already).
        let mut pairs: Vec<_> = keys.iter().enumerate().map(|(i, k)| pair(k, i)).collect();
        pairs.sort_unstable();
        return pairs;
    }
    let key = |p: &(K::Bits, I)| -> u64 { p.0.into() };
    let mut pairs = Vec::with_capacity(n);
    let (counts, shift) = radix::scatter_into(keys, &mut pairs, |k, i| pair(k, i), &key, top);
    let pair_bytes = size_of::<(K::Bits, I)>();
    let scratch_max = BUCKET_SCRATCH_MIN.max(n * pair_bytes / (8 * rayon::current_num_threads()));
    radix::split_mut(&mut pairs, &counts)
        .into_par_iter()
        .for_each_init(Vec::new, |scratch, bucket| {
            if size_of_val(bucket) > scratch_max {
                // Distinct pairs: unstable is stable here.
                bucket.par_sort_unstable();
            } else {
                scratch.clear();
                scratch.extend_from_slice(bucket);
                radix::sort_bits(bucket, scratch, &key, shift, true);
            }
        });
    pairs
}

/// `keys` taken in the order of `indices`: `out[j] = keys[indices[j]]`, on rayon's threads.
///
/// With a permutation from [`argsort_cpu`] it sorts `keys`, or any other slice of the same
/// length by those keys. `indices` need not be a permutation: indices may repeat or be left
/// out.
///
/// # Panics
/// If an index is out of bounds.
///
/// # Examples
///
/// ```
/// use gpusort::argsort::gather;
///
/// assert_eq!(gather(&['a', 'b', 'c'], &[2, 0, 2]), ['c', 'a', 'c']);
/// ```
pub fn gather<K: Copy + Send + Sync>(keys: &[K], indices: &[u64]) -> Vec<K> {
    let _ = crate::cpu::start_threads();
    indices.par_iter().map(|&i| keys[i as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The stable permutation by std's stable sort of indices by ordered bits.
    fn reference<K: SortKey>(keys: &[K], order: Order) -> Vec<u64> {
        let mut perm: Vec<u64> = (0..keys.len() as u64).collect();
        perm.sort_by_key(|&i| keys[i as usize].ordered_bits(order));
        perm
    }

    fn assert_argsorts<K: SortKey>(keys: &[K]) {
        for order in [Order::Ascending, Order::Descending] {
            let expected = reference(keys, order);
            assert_eq!(
                argsort_cpu(keys, order),
                expected,
                "{} {order:?}, n = {}",
                K::DTYPE,
                keys.len()
            );
            let narrow: Vec<u64> = argsort_cpu_u32(keys, order)
                .into_iter()
                .map(u64::from)
                .collect();
            assert_eq!(
                narrow,
                expected,
                "u32 indices, {} {order:?}, n = {}",
                K::DTYPE,
                keys.len()
            );
        }
    }

    /// Keys from `i`: few distinct values (so that stability shows), zeros, and small negative
    /// floats or all-ones integers.
    fn keys<K: SortKey>(n: usize, distinct: u32) -> Vec<K> {
        (0..n as u32)
            .map(|i| {
                let v = i.wrapping_mul(2_654_435_761) % distinct;
                if i % 11 == 0 {
                    K::from_bits(K::Bits::default()) // +0.0, or 0
                } else if i % 13 == 0 {
                    K::from_random(u64::MAX) // a small negative float, or all ones
                } else {
                    K::from_small(v)
                }
            })
            .collect()
    }

    #[test]
    fn stable_at_the_radix_thresholds_every_key_type() {
        // Below and above the radix sort's floor, one scatter piece and several, buckets that
        // the scratch of a thread holds and ones split again; few and many distinct keys.
        for n in [0, 1, 1023, 1024, 1025, (1 << 16) + 3, (1 << 18) + 1] {
            for distinct in [1, 3, 1000, 1 << 30] {
                assert_argsorts(&keys::<u32>(n, distinct));
                assert_argsorts(&keys::<i32>(n, distinct));
                assert_argsorts(&keys::<f32>(n, distinct));
                assert_argsorts(&keys::<u64>(n, distinct));
                assert_argsorts(&keys::<i64>(n, distinct));
                assert_argsorts(&keys::<f64>(n, distinct));
            }
        }
    }

    #[test]
    fn nans_and_signed_zeros_in_total_order_stably() {
        let mut keys = vec![f64::NAN, -0.0, 0.0, -f64::NAN, 1.0, -0.0, f64::NAN, 0.0];
        keys = keys.repeat(300); // 2400 keys: the radix sort, not std's
        assert_argsorts(&keys);
        let perm = argsort_cpu(&keys, Order::Ascending);
        let first = &perm[..300];
        assert!(
            first.windows(2).all(|w| w[0] < w[1]),
            "the -NaNs, in input order"
        );
        assert!(first.iter().all(|&i| keys[i as usize].is_nan()));
    }

    proptest! {
        #[test]
        fn arbitrary_keys_stably(bits in proptest::collection::vec(any::<u64>(), 0..4000), shift in 0u32..64) {
            // Shifted down, keys repeat and share high bits.
            let wide: Vec<f64> = bits.iter().map(|b| f64::from_bits(b >> shift)).collect();
            let narrow: Vec<i32> = bits.iter().map(|b| (b >> shift) as i32).collect();
            assert_argsorts(&wide);
            assert_argsorts(&narrow);
        }
    }

    #[test]
    fn equal_keys_keep_input_order_both_ways() {
        let keys = [2i64, -1, 2, 5, -1, 2];
        assert_eq!(argsort_cpu(&keys, Order::Ascending), [1, 4, 0, 2, 5, 3]);
        assert_eq!(argsort_cpu(&keys, Order::Descending), [3, 0, 2, 5, 1, 4]);
    }

    #[test]
    fn gathers_to_the_sorted_keys() {
        let keys = [0.5f64, f64::NAN, -0.0, 0.0, -3.0];
        let sorted = gather(&keys, &argsort_cpu(&keys, Order::Ascending));
        let bits: Vec<u64> = sorted.iter().map(|k| k.to_bits()).collect();
        let expected: Vec<u64> = [-3.0, -0.0, 0.0, 0.5, f64::NAN]
            .iter()
            .map(|k: &f64| k.to_bits())
            .collect();
        assert_eq!(bits, expected);
    }

    #[test]
    fn u32_indices_agree_with_u64_ones() {
        let keys = [2i64, -1, 2, 5, -1, 2, i64::MIN];
        for order in [Order::Ascending, Order::Descending] {
            let wide = argsort_cpu(&keys, order);
            let narrow: Vec<u64> = argsort_cpu_u32(&keys, order)
                .into_iter()
                .map(u64::from)
                .collect();
            assert_eq!(narrow, wide);
        }
    }

    #[test]
    fn empty() {
        assert!(argsort_cpu::<u32>(&[], Order::Ascending).is_empty());
    }
}
