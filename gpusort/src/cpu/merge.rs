//! Merging sorted runs on the CPU, stably and on all cores: the last step of sorting host data
//! larger than the device's memory (sorted on the GPU chunk by chunk).
//!
//! Runs are merged in pairwise rounds, ping-ponging with one buffer as large as the data. Each
//! pair's output is cut into pieces that merge independently: a piece's start in each run comes
//! from the same merge-path search the GPU merge sort uses ([`kernels_gpu::merge::merge_path`]),
//! with ties to the earlier run, so the merge is stable. Values in a slice of their own move
//! with their keys ([`merge_sorted_pairs`]); keys alone are keys with zero-sized values.

use kernels_gpu::merge::merge_path;
use rayon::prelude::*;

/// Output keys per independently merged piece.
const PIECE: usize = 1 << 16;

/// Sorts `items`, made of consecutive sorted runs of `run` items (the last may be shorter), by
/// `key`, stably: equal keys keep their order. Uses a buffer as large as `items`.
///
/// ```
/// use gpusort::cpu::merge_sorted_runs;
/// let mut v = vec![(1, 'a'), (5, 'b'), (9, 'c'), (1, 'd'), (2, 'e'), (5, 'f'), (0, 'g')];
/// merge_sorted_runs(&mut v, 3, |x| x.0);
/// assert_eq!(v, [(0, 'g'), (1, 'a'), (1, 'd'), (2, 'e'), (5, 'b'), (5, 'f'), (9, 'c')]);
/// ```
///
/// # Panics
/// If `run` is 0.
pub fn merge_sorted_runs<T, B>(items: &mut [T], run: usize, key: impl Fn(&T) -> B + Sync)
where
    T: Copy + Send + Sync,
    B: Ord,
{
    let mut nothing = vec![(); items.len()];
    merge_runs(items, &mut nothing, run, key, &|_| {});
}

/// [`merge_sorted_runs`] for keys and values in slices of their own: `keys` is made of sorted
/// runs of `run` keys (the last may be shorter), `values[i]` belongs to `keys[i]`, and both are
/// rearranged so that the keys are sorted by `key`, stably. Uses buffers as large as both.
///
/// How a sort of pairs too large for the device ends: each chunk of `run` pairs sorted on the
/// GPU, then merged here. An argsort's indices are values too; as they hold each key's position
/// in the whole input, equal keys of different chunks keep their input order.
///
/// ```
/// use gpusort::cpu::merge_sorted_pairs;
/// let mut keys = [1, 5, 9, 1, 2, 5, 0];
/// let mut values = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
/// merge_sorted_pairs(&mut keys, &mut values, 3, |&k| k);
/// assert_eq!(keys, [0, 1, 1, 2, 5, 5, 9]);
/// assert_eq!(values, ['g', 'a', 'd', 'e', 'b', 'f', 'c']);
/// ```
///
/// # Panics
/// If `run` is 0 or the slices differ in length.
pub fn merge_sorted_pairs<K, V, B>(
    keys: &mut [K],
    values: &mut [V],
    run: usize,
    key: impl Fn(&K) -> B + Sync,
) where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    B: Ord,
{
    merge_runs(keys, values, run, key, &|_| {});
}

/// Rounds of pairwise merges that turn runs of `run` items into one sorted slice of `len`:
/// `ceil(log2(ceil(len / run)))`. Each round writes every item once.
///
/// ```
/// use gpusort::cpu::merge_rounds;
/// assert_eq!(merge_rounds(10, 10), 0);
/// assert_eq!(merge_rounds(11, 10), 1);
/// assert_eq!(merge_rounds(41, 10), 3);
/// ```
///
/// # Panics
/// If `run` is 0.
pub fn merge_rounds(len: usize, run: usize) -> u32 {
    assert!(run > 0, "runs must hold at least one item");
    len.div_ceil(run).next_power_of_two().trailing_zeros()
}

/// The merge behind [`merge_sorted_runs`] and [`merge_sorted_pairs`]. `written(m)` is called
/// as each piece of `m` outputs is done, from the merging threads, possibly at the same time:
/// the calls add up to `keys.len()` per round ([`merge_rounds`]).
pub(crate) fn merge_runs<K, V, B>(
    keys: &mut [K],
    values: &mut [V],
    run: usize,
    key: impl Fn(&K) -> B + Sync,
    written: &(dyn Fn(usize) + Sync),
) where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    B: Ord,
{
    assert!(run > 0, "runs must hold at least one item");
    assert_eq!(keys.len(), values.len(), "one value per key");
    let n = keys.len();
    if n <= run {
        return;
    }
    let (mut key_buffer, mut value_buffer) = (keys.to_vec(), values.to_vec());
    let mut width = run;
    let mut in_place = true;
    while width < n {
        let (from, to) = if in_place {
            (
                Pairs::new(keys, values),
                (&mut key_buffer[..], &mut value_buffer[..]),
            )
        } else {
            (
                Pairs::new(&key_buffer, &value_buffer),
                (&mut *keys, &mut *values),
            )
        };
        // Safe split: each pair of runs writes only its own range of the output.
        to.0.par_chunks_mut(2 * width)
            .zip(to.1.par_chunks_mut(2 * width))
            .enumerate()
            .for_each(|(p, out)| {
                let start = p * 2 * width;
                let (mid, end) = ((start + width).min(n), (start + 2 * width).min(n));
                let (a, b) = (from.range(start, mid), from.range(mid, end));
                merge_pair(a, b, out, &key, written);
            });
        in_place = !in_place;
        width *= 2;
    }
    if !in_place {
        keys.copy_from_slice(&key_buffer);
        values.copy_from_slice(&value_buffer);
    }
}

/// Keys and their values, read side by side.
#[derive(Clone, Copy)]
struct Pairs<'a, K, V> {
    keys: &'a [K],
    values: &'a [V],
}

impl<'a, K, V> Pairs<'a, K, V> {
    fn new(keys: &'a [K], values: &'a [V]) -> Self {
        Pairs { keys, values }
    }

    fn range(self, start: usize, end: usize) -> Self {
        Pairs::new(&self.keys[start..end], &self.values[start..end])
    }

    fn len(self) -> usize {
        self.keys.len()
    }
}

/// `out = stable merge of a and b`, in pieces of [`PIECE`] outputs on all cores.
fn merge_pair<K, V, B>(
    a: Pairs<'_, K, V>,
    b: Pairs<'_, K, V>,
    out: (&mut [K], &mut [V]),
    key: &(impl Fn(&K) -> B + Sync),
    written: &(dyn Fn(usize) + Sync),
) where
    K: Copy + Send + Sync,
    V: Copy + Send + Sync,
    B: Ord,
{
    let split = |diag: usize| {
        merge_path(
            diag as u64,
            a.len() as u64,
            b.len() as u64,
            |i| key(&a.keys[i as usize]),
            |j| key(&b.keys[j as usize]),
        ) as usize
    };
    out.0
        .par_chunks_mut(PIECE)
        .zip(out.1.par_chunks_mut(PIECE))
        .enumerate()
        .for_each(|(p, (out_keys, out_values))| {
            let diag = p * PIECE;
            let (mut i, end_i) = (split(diag), split(diag + out_keys.len()));
            let mut j = diag - i;
            for (k, v) in out_keys.iter_mut().zip(out_values.iter_mut()) {
                // Take from a unless a is used up for this piece or b's key is strictly smaller.
                let take_a = i < end_i && (j >= b.len() || key(&b.keys[j]) >= key(&a.keys[i]));
                if take_a {
                    (*k, *v) = (a.keys[i], a.values[i]);
                    i += 1;
                } else {
                    (*k, *v) = (b.keys[j], b.values[j]);
                    j += 1;
                }
            }
            written(out_keys.len());
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A payload with padding (1 + 3 padding + 4 bytes) and odd-sized fields, as a caller's
    /// struct might be.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Record {
        tag: u8,
        index: u32,
        bytes: [u8; 3],
    }

    proptest! {
        #[test]
        fn merges_runs_like_a_stable_sort(
            keys in proptest::collection::vec(0u8..6, 0..3000),
            run in 1usize..700,
        ) {
            // Items are (key, input index); runs sorted by key stably, then merged.
            let mut items: Vec<(u8, u32)> = keys.iter().copied().zip(0..).collect();
            for chunk in items.chunks_mut(run) {
                chunk.sort_by_key(|x| x.0);
            }
            let mut expected = items.clone();
            expected.sort_by_key(|x| x.0);
            merge_sorted_runs(&mut items, run, |x| x.0);
            prop_assert_eq!(items, expected);
        }

        #[test]
        fn merges_pairs_like_a_stable_sort_of_the_pairs(
            input in proptest::collection::vec((0u16..8, any::<u8>(), any::<[u8; 3]>()), 0..3000),
            run in 1usize..900,
        ) {
            // Keys with few distinct values, so that stability shows; values carry the input
            // index, so any reordering of equal keys would be seen.
            let mut keys: Vec<u16> = input.iter().map(|x| x.0).collect();
            let mut values: Vec<Record> = input
                .iter()
                .zip(0..)
                .map(|(&(_, tag, bytes), index)| Record { tag, index, bytes })
                .collect();
            let mut pairs: Vec<(u16, Record)> = keys.iter().copied().zip(values.clone()).collect();
            pairs.sort_by_key(|p| p.0);
            for (k, v) in keys.chunks_mut(run).zip(values.chunks_mut(run)) {
                let mut chunk: Vec<(u16, Record)> = k.iter().copied().zip(v.iter().copied()).collect();
                chunk.sort_by_key(|p| p.0);
                for (i, (key, value)) in chunk.into_iter().enumerate() {
                    (k[i], v[i]) = (key, value);
                }
            }
            merge_sorted_pairs(&mut keys, &mut values, run, |&k| k);
            let got: Vec<(u16, Record)> = keys.into_iter().zip(values).collect();
            prop_assert_eq!(got, pairs);
        }

        #[test]
        fn argsort_indices_of_chunks_merge_into_the_stable_permutation(
            keys in proptest::collection::vec(-3i32..3, 0..2000),
            run in 1usize..500,
        ) {
            // What the chunked GPU argsort does: each chunk sorted with the indices of the
            // whole input (chunk start + position), then merged.
            let mut sorted = keys.clone();
            let mut indices: Vec<u64> = (0..keys.len() as u64).collect();
            for (k, v) in sorted.chunks_mut(run).zip(indices.chunks_mut(run)) {
                v.sort_by_key(|&i| keys[i as usize]);
                for (slot, &i) in k.iter_mut().zip(v.iter()) {
                    *slot = keys[i as usize];
                }
            }
            merge_sorted_pairs(&mut sorted, &mut indices, run, |&k| k);
            let mut expected: Vec<u64> = (0..keys.len() as u64).collect();
            expected.sort_by_key(|&i| keys[i as usize]);
            prop_assert_eq!(indices, expected);
        }
    }

    #[test]
    fn pieces_split_long_merges() {
        let n = 3 * PIECE + 17;
        let mut items: Vec<(u32, u32)> = (0..n as u32).map(|i| (i % 1000, i)).collect();
        let run = n / 3 + 1;
        for chunk in items.chunks_mut(run) {
            chunk.sort_by_key(|x| x.0);
        }
        let mut expected = items.clone();
        expected.sort_by_key(|x| x.0);
        merge_sorted_runs(&mut items, run, |x| x.0);
        assert_eq!(items, expected);
    }

    #[test]
    fn progress_adds_up_to_every_item_once_per_round() {
        for (n, run) in [(10, 10), (11, 10), (5 * PIECE + 3, PIECE + 1), (1000, 7)] {
            let mut keys: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            for chunk in keys.chunks_mut(run) {
                chunk.sort_unstable();
            }
            let mut values: Vec<[u8; 16]> = keys.iter().map(|k| [*k as u8; 16]).collect();
            let (written, calls) = (AtomicUsize::new(0), AtomicUsize::new(0));
            merge_runs(&mut keys, &mut values, run, |&k| k, &|m| {
                written.fetch_add(m, Ordering::Relaxed);
                calls.fetch_add(1, Ordering::Relaxed);
            });
            let rounds = merge_rounds(n, run) as usize;
            assert_eq!(written.into_inner(), n * rounds, "n = {n}, run = {run}");
            // At least one piece per pair of runs in every round.
            assert!(calls.into_inner() >= rounds, "n = {n}, run = {run}");
            assert!(keys.is_sorted());
            assert!(keys.iter().zip(&values).all(|(k, v)| *v == [*k as u8; 16]));
        }
    }

    #[test]
    #[should_panic(expected = "one value per key")]
    fn values_of_another_length_panic() {
        merge_sorted_pairs(&mut [3, 1], &mut [0u8; 3], 1, |&k: &i32| k);
    }
}
