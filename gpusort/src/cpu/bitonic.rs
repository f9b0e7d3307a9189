//! The bitonic network on the CPU, comparator for comparator the one the GPU kernels run
//! (see [`kernels_gpu::bitonic`]): mirrored first step per stage, partners past the end skipped.

use crate::keys::{Order, SortKey};
use kernels_gpu::bitonic::ceil_log2;
use rayon::prelude::*;

/// Below this many comparators a step's block is not split further across threads.
const MIN_PARALLEL_PAIRS: usize = 1 << 14;

/// Sorts `keys` in `order` with the bitonic network on the calling thread: comparator for
/// comparator what the GPU kernels do, for any length (partners past the end are skipped).
///
/// Unstable; O(n log² n) compare-exchanges (⌈log₂ n⌉ stages of up to ⌈log₂ n⌉ steps), the same
/// for every input of length n; in place.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, cpu::bitonic_sort};
///
/// let mut keys = [5u32, 3, 9, 1, 7];
/// bitonic_sort(&mut keys, Order::Ascending);
/// assert_eq!(keys, [1, 3, 5, 7, 9]);
/// ```
pub fn bitonic_sort<K: SortKey>(keys: &mut [K], order: Order) {
    network(keys, order, false);
}

/// Sorts `keys` in `order` with the bitonic network, each step spread over rayon's threads.
///
/// The same comparators as [`bitonic_sort`], so the same output; steps with fewer than 16384
/// comparators per block are split by blocks only.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, cpu::par_bitonic_sort};
///
/// let input: Vec<f64> = (0..100_000u64).map(|i| (i * 7919 % 100_003) as f64 - 5e4).collect();
/// let mut keys = input.clone();
/// par_bitonic_sort(&mut keys, Order::Descending);
/// let mut expected = input;
/// expected.sort_by(|a, b| b.total_cmp(a));
/// assert_eq!(keys, expected);
/// ```
pub fn par_bitonic_sort<K: SortKey>(keys: &mut [K], order: Order) {
    network(keys, order, true);
}

fn network<K: SortKey>(keys: &mut [K], order: Order, parallel: bool) {
    let stages = ceil_log2(keys.len() as u64);
    for stage in 1..=stages {
        for s in (0..stage).rev() {
            let step = Step {
                half: 1 << s,
                mirror: s == stage - 1,
                order,
            };
            if parallel {
                let blocks_per_task = (MIN_PARALLEL_PAIRS / step.half).max(1);
                keys.par_chunks_mut(2 * step.half)
                    .with_min_len(blocks_per_task)
                    .for_each(|block| step.run(block, true));
            } else {
                keys.chunks_mut(2 * step.half)
                    .for_each(|block| step.run(block, false));
            }
        }
    }
}

/// One step of the network on blocks of `2·half` keys.
#[derive(Clone, Copy)]
struct Step {
    half: usize,
    mirror: bool,
    order: Order,
}

impl Step {
    /// Compare-exchanges the pairs of one block (the last block may be short).
    fn run<K: SortKey>(self, block: &mut [K], parallel: bool) {
        let order = self.order;
        let exchange = move |(lo, hi): (&mut K, &mut K)| {
            if hi.ordered_bits(order) < lo.ordered_bits(order) {
                std::mem::swap(lo, hi);
            }
        };
        if block.len() <= self.half {
            return; // every partner is past the end
        }
        let (low, high) = block.split_at_mut(self.half);
        // Mirrored: low[i] pairs with the block's key 2·half−1−i, i.e. high read backwards;
        // when high is short, the first low keys have partners past the end.
        let low = if self.mirror {
            &mut low[self.half - high.len()..]
        } else {
            low
        };
        let parallel = parallel && self.half >= MIN_PARALLEL_PAIRS;
        match (self.mirror, parallel) {
            (true, true) => low
                .par_iter_mut()
                .zip(high.par_iter_mut().rev())
                .with_min_len(MIN_PARALLEL_PAIRS)
                .for_each(exchange),
            (true, false) => low.iter_mut().zip(high.iter_mut().rev()).for_each(exchange),
            (false, true) => low
                .par_iter_mut()
                .zip(high.par_iter_mut())
                .with_min_len(MIN_PARALLEL_PAIRS)
                .for_each(exchange),
            (false, false) => low.iter_mut().zip(high.iter_mut()).for_each(exchange),
        }
    }
}
