//! Merging sorted runs on the CPU, stably and on all cores: the last step of sorting host data
//! larger than the device's memory (sorted on the GPU chunk by chunk).
//!
//! Runs are merged in pairwise rounds, ping-ponging with one buffer as large as the data. Each
//! pair's output is cut into pieces that merge independently: a piece's start in each run comes
//! from the same merge-path search the GPU merge sort uses ([`kernels_gpu::merge::merge_path`]),
//! with ties to the earlier run, so the merge is stable.

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
    assert!(run > 0, "runs must hold at least one item");
    if items.len() <= run {
        return;
    }
    let mut buffer = items.to_vec();
    let mut width = run;
    let mut in_items = true;
    while width < items.len() {
        let (from, to): (&[T], &mut [T]) = if in_items {
            (&*items, &mut buffer[..])
        } else {
            (&buffer[..], &mut *items)
        };
        // Safe split: each pair of runs writes only its own range of the output.
        to.par_chunks_mut(2 * width)
            .enumerate()
            .for_each(|(p, out)| {
                let start = p * 2 * width;
                let a = &from[start..(start + width).min(from.len())];
                let b = &from[(start + width).min(from.len())..(start + 2 * width).min(from.len())];
                merge_pair(a, b, out, &key);
            });
        in_items = !in_items;
        width *= 2;
    }
    if !in_items {
        items.copy_from_slice(&buffer);
    }
}

/// `out = stable merge of a and b`, in pieces of [`PIECE`] outputs on all cores.
fn merge_pair<T, B>(a: &[T], b: &[T], out: &mut [T], key: &(impl Fn(&T) -> B + Sync))
where
    T: Copy + Send + Sync,
    B: Ord,
{
    let split = |diag: usize| {
        merge_path(
            diag as u64,
            a.len() as u64,
            b.len() as u64,
            |i| key(&a[i as usize]),
            |j| key(&b[j as usize]),
        ) as usize
    };
    out.par_chunks_mut(PIECE)
        .enumerate()
        .for_each(|(p, piece)| {
            let diag = p * PIECE;
            let (mut i, end_i) = (split(diag), split(diag + piece.len()));
            let mut j = diag - i;
            for slot in piece.iter_mut() {
                // Take from a unless a is used up for this piece or b's key is strictly smaller.
                let take_a = i < end_i && (j >= b.len() || key(&b[j]) >= key(&a[i]));
                if take_a {
                    *slot = a[i];
                    i += 1;
                } else {
                    *slot = b[j];
                    j += 1;
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
}
