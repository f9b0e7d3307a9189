//! Top-k: the k smallest or largest keys of an array, or of each row of a matrix, with their
//! indices, sorted, ties broken by the lower index.
//!
//! [`TopK`] is the result of every top-k call, and every call takes the same leading
//! arguments: the keys, the row length (the keys' length for one array), k and the order. On
//! the GPU: [`GpuSorter::top_k`] for host slices, [`Queue::top_k`] for keys on the device; on
//! the CPU: [`top_k_cpu`], the fallback without a GPU and the reference of the tests. The order is
//! the sorts' ([`Order`]): [`Order::Ascending`] selects the k smallest, smallest first;
//! [`Order::Descending`] the k largest, largest first; floats as `total_cmp` (a NaN of
//! positive sign is larger than +∞).
//!
//! ```
//! use gpusort::Order;
//! use gpusort::topk::top_k_cpu;
//!
//! let scores = [0.5f32, 2.0, -1.0, 2.0, 0.0];
//! let best = top_k_cpu(&scores, scores.len(), 3, Order::Descending)?;
//! assert_eq!(best.keys, [2.0, 2.0, 0.5]);
//! assert_eq!(best.indices, [1, 3, 0]); // the tie: lower index first
//! # Ok::<(), gpusort::Error>(())
//! ```
//!
//! [`GpuSorter::top_k`]: crate::GpuSorter::top_k
//! [`Queue::top_k`]: crate::Queue::top_k

use crate::error::{Error, Result};
use crate::keys::{Order, SortKey};
use rayon::prelude::*;

/// The k best keys of an array, or of each row (row after row, k per row), with their
/// indices (within the row), best first; ties are broken by the lower index.
#[derive(Clone, Debug, PartialEq)]
pub struct TopK<K> {
    /// The selected keys: `k` per row, in the order asked for.
    pub keys: Vec<K>,
    /// The index of each selected key in the array, or in its row.
    pub indices: Vec<u64>,
}

/// Checks a top-k of `k` keys per row of `row_len` from `len` keys: `1 ≤ k ≤ row_len`, and
/// rows that divide the keys (`row_len` = `len` for one array). Returns the number of rows.
///
/// # Errors
/// [`Error::RowLength`] for a row length of 0 or one that does not divide `len`;
/// [`Error::KOutOfRange`] for k = 0 or k past the row.
///
/// ```
/// use gpusort::Error;
/// use gpusort::topk::check_top_k;
///
/// assert_eq!(check_top_k(12, 4, 2)?, 3);
/// assert!(matches!(check_top_k(12, 5, 2), Err(Error::RowLength { row_len: 5, len: 12 })));
/// assert!(matches!(check_top_k(12, 4, 5), Err(Error::KOutOfRange { k: 5, max: 4 })));
/// assert!(matches!(check_top_k(12, 12, 0), Err(Error::KOutOfRange { k: 0, .. })));
/// # Ok::<(), Error>(())
/// ```
pub fn check_top_k(len: usize, row_len: usize, k: usize) -> Result<usize> {
    if row_len == 0 || !len.is_multiple_of(row_len) {
        if row_len == 0 && len == 0 {
            return Err(Error::KOutOfRange {
                k: k as u64,
                max: 0,
            });
        }
        return Err(Error::RowLength {
            row_len: row_len as u64,
            len: len as u64,
        });
    }
    if k == 0 || k > row_len {
        return Err(Error::KOutOfRange {
            k: k as u64,
            max: row_len as u64,
        });
    }
    Ok(len / row_len)
}

/// Keys per piece of [`top_k_cpu`]'s parallel selection within a long row.
const CPU_PIECE: usize = 1 << 16;

/// The `k` best keys of each row of `row_len` keys of `keys` in `order`, and their indices
/// within the row, on the CPU (all cores): `keys.len() / row_len × k` of each, row after row;
/// `row_len = keys.len()` selects from the whole array. Rows go in parallel; a row longer than
/// 2^16 keys is cut into pieces, whose top-k are selected in parallel, then the top-k of
/// those. Memory: 16 bytes per key of a row or piece per thread, and per piece its k
/// candidates.
///
/// # Errors
/// As [`check_top_k`].
///
/// ```
/// use gpusort::Order;
/// use gpusort::topk::top_k_cpu;
///
/// let matrix = [3u32, 1, 2, /* next row */ 9, 9, 4];
/// let top = top_k_cpu(&matrix, 3, 2, Order::Ascending)?;
/// assert_eq!(top.keys, [1, 2, 4, 9]);
/// assert_eq!(top.indices, [1, 2, 2, 0]);
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn top_k_cpu<K: SortKey>(
    keys: &[K],
    row_len: usize,
    k: usize,
    order: Order,
) -> Result<TopK<K>> {
    let rows = check_top_k(keys.len(), row_len, k)?;
    crate::cpu::start_threads()?;
    let per_row: Vec<TopK<K>> = keys
        .par_chunks(row_len)
        .map(|row| {
            if row_len > CPU_PIECE {
                select_in_pieces(row, k, order)
            } else {
                let items = row
                    .iter()
                    .enumerate()
                    .map(|(i, key)| (key.ordered_bits(order), i as u64));
                finish(smallest(items.collect(), k), order)
            }
        })
        .collect();
    let mut out = TopK {
        keys: Vec::with_capacity(rows * k),
        indices: Vec::with_capacity(rows * k),
    };
    for row in per_row {
        out.keys.extend(row.keys);
        out.indices.extend(row.indices);
    }
    Ok(out)
}

/// The `k` best keys of `keys` in `order` and their indices: the top-k of every piece of
/// [`CPU_PIECE`] keys in parallel, then of those.
fn select_in_pieces<K: SortKey>(keys: &[K], k: usize, order: Order) -> TopK<K> {
    let candidates: Vec<(K::Bits, u64)> = keys
        .par_chunks(CPU_PIECE)
        .enumerate()
        .flat_map_iter(|(p, piece)| {
            let first = (p * CPU_PIECE) as u64;
            let items = piece
                .iter()
                .enumerate()
                .map(move |(i, key)| (key.ordered_bits(order), first + i as u64));
            smallest(items.collect(), k)
        })
        .collect();
    finish(smallest(candidates, k), order)
}

/// The `k` smallest of `items` (all of them if fewer), in no particular order.
fn smallest<B: Ord>(mut items: Vec<(B, u64)>, k: usize) -> Vec<(B, u64)> {
    if items.len() > k {
        items.select_nth_unstable(k - 1);
        items.truncate(k);
    }
    items
}

/// Sorts the selected items and decodes their keys.
fn finish<K: SortKey>(mut items: Vec<(K::Bits, u64)>, order: Order) -> TopK<K> {
    items.sort_unstable();
    let map = K::key_map(order);
    TopK {
        keys: items
            .iter()
            .map(|&(bits, _)| K::from_bits(kernels_gpu::keys::KeyBits::decode(bits, map)))
            .collect(),
        indices: items.into_iter().map(|(_, i)| i).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference of the reference: a stable sort of the indices by key, cut at k.
    fn by_sorting<K: SortKey>(keys: &[K], k: usize, order: Order) -> TopK<K> {
        let mut indices: Vec<u64> = (0..keys.len() as u64).collect();
        indices.sort_by_key(|&i| keys[i as usize].ordered_bits(order));
        indices.truncate(k);
        TopK {
            keys: indices.iter().map(|&i| keys[i as usize]).collect(),
            indices,
        }
    }

    fn bits<K: SortKey>(top: &TopK<K>) -> (Vec<K::Bits>, Vec<u64>) {
        (
            top.keys.iter().map(|k| k.to_bits()).collect(),
            top.indices.clone(),
        )
    }

    proptest! {
        #[test]
        fn selects_what_a_stable_sort_puts_first(
            keys in proptest::collection::vec(-50i32..50, 1..200_000),
            k in 1usize..3000,
            descending: bool,
        ) {
            let k = k.min(keys.len());
            let order = if descending { Order::Descending } else { Order::Ascending };
            let got = top_k_cpu(&keys, keys.len(), k, order).unwrap();
            prop_assert_eq!(&got, &by_sorting(&keys, k, order));
        }

        #[test]
        fn rows_select_within_each_row(
            rows in 1usize..40,
            row_len in 1usize..300,
            k in 1usize..300,
            seed: u64,
        ) {
            let k = k.min(row_len);
            let keys: Vec<f64> = (0..rows * row_len)
                .map(|i| f64::from(((i as u64 ^ seed).wrapping_mul(0x9e37_79b9) % 17) as u32) - 8.0)
                .collect();
            let got = top_k_cpu(&keys, row_len, k, Order::Descending).unwrap();
            for (r, row) in keys.chunks(row_len).enumerate() {
                let expected = by_sorting(row, k, Order::Descending);
                prop_assert_eq!(&got.keys[r * k..(r + 1) * k], &expected.keys[..]);
                prop_assert_eq!(&got.indices[r * k..(r + 1) * k], &expected.indices[..]);
            }
        }
    }

    #[test]
    fn nan_and_signed_zeros_order_like_total_cmp() {
        let keys = [0.0f32, f32::NAN, -0.0, -f32::NAN, f32::INFINITY, 1.0];
        let top = top_k_cpu(&keys, keys.len(), 3, Order::Descending).unwrap();
        assert_eq!(bits(&top), bits(&by_sorting(&keys, 3, Order::Descending)));
        assert_eq!(top.indices, [1, 4, 5]);
        let top = top_k_cpu(&keys, keys.len(), 4, Order::Ascending).unwrap();
        assert_eq!(top.indices, [3, 2, 0, 5]);
    }

    #[test]
    fn bad_k_and_rows_are_errors() {
        let keys = [1u64, 2, 3, 4];
        assert!(matches!(
            top_k_cpu(&keys, 4, 5, Order::Ascending),
            Err(Error::KOutOfRange { k: 5, max: 4 })
        ));
        assert!(matches!(
            top_k_cpu::<u64>(&[], 0, 1, Order::Ascending),
            Err(Error::KOutOfRange { k: 1, max: 0 })
        ));
        assert!(matches!(
            top_k_cpu(&keys, 0, 1, Order::Ascending),
            Err(Error::RowLength { row_len: 0, len: 4 })
        ));
        assert!(matches!(
            top_k_cpu(&keys, 3, 1, Order::Ascending),
            Err(Error::RowLength { row_len: 3, len: 4 })
        ));
        assert_eq!(
            top_k_cpu(&keys, 2, 2, Order::Descending).unwrap().indices,
            [1, 0, 1, 0]
        );
    }
}
