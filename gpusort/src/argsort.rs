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

use crate::keys::{Order, SortKey};
use rayon::prelude::*;

/// The stable permutation that sorts `keys` in `order` (floats as `total_cmp`): `keys[perm[0]],
/// keys[perm[1]], …` is sorted, and equal keys keep their input order (in both orders: a
/// descending argsort is not the reverse of the ascending one when keys repeat).
///
/// O(n log n) work; 16 bytes per key beside the keys.
///
/// # Current implementation
///
/// Runs on the CPU: rayon's parallel sort of (ordered bits, index) pairs. The pairs are distinct,
/// so any sort of them is stable on the keys; sorting pairs instead of indices by key avoids a
/// random access into the keys per comparison (2^28 `f32` keys on 2 cores: 43 s instead of
/// 463 s). Memory: 16 bytes per key, beside the keys. The GPU version is
/// [`crate::GpuSorter::argsort`].
///
/// # Examples
///
/// ```
/// use gpusort::{Order, argsort::argsort_cpu};
/// assert_eq!(argsort_cpu(&[3u32, 1, 3, 0], Order::Ascending), [3, 1, 0, 2]);
/// assert_eq!(argsort_cpu(&[3u32, 1, 3, 0], Order::Descending), [0, 2, 1, 3]);
/// ```
pub fn argsort_cpu<K: SortKey>(keys: &[K], order: Order) -> Vec<u64> {
    let mut pairs: Vec<(K::Bits, u64)> = keys
        .par_iter()
        .enumerate()
        .map(|(i, k)| (k.ordered_bits(order), i as u64))
        .collect();
    pairs.par_sort_unstable();
    // Serial, so that the pairs' allocation is reused for the indices.
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// [`argsort_cpu`] with `u32` indices, for up to 2^32 keys: the (ordered bits, index) pairs
/// take 8 bytes per key for 4-byte keys and 16 for 8-byte keys, and the permutation 4, so that
/// the peak beside the keys is 2 (4-byte keys) or 2.5 (8-byte keys) times their size, where
/// [`argsort_cpu`] needs 4 (or 3) times.
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
    let mut pairs: Vec<(K::Bits, u32)> = keys
        .par_iter()
        .enumerate()
        .map(|(i, k)| (k.ordered_bits(order), i as u32))
        .collect();
    pairs.par_sort_unstable();
    let mut perm: Vec<u32> = pairs.into_iter().map(|(_, i)| i).collect();
    // The pairs' allocation, where it was reused, is twice as large or more.
    perm.shrink_to_fit();
    perm
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
    indices.par_iter().map(|&i| keys[i as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
