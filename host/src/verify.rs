//! Checking a sort's output: sorted in the requested order and the same multiset as the input.

use crate::keys::{Order, SortKey};
use rayon::prelude::*;

/// Why an output is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// Different lengths.
    #[error("output has {output} keys, input had {input}")]
    Length {
        /// Input length.
        input: usize,
        /// Output length.
        output: usize,
    },
    /// Two neighbours out of order.
    #[error("not sorted: key {at} ({left}) comes before key {} ({right})", at + 1)]
    Unsorted {
        /// Index of the first key of the pair.
        at: usize,
        /// The key at `at`.
        left: String,
        /// The key at `at + 1`.
        right: String,
    },
    /// Sorted, but the keys are not the input's.
    #[error(
        "sorted, but not the input's keys: position {at} holds {found}, std's sort has {expected}"
    )]
    Multiset {
        /// First differing position.
        at: usize,
        /// What the output holds there.
        found: String,
        /// What std's sort holds there.
        expected: String,
    },
}

/// Checks `output` against `reference`, the input sorted by std in the same order. Keys are
/// compared by bits, so −0.0/+0.0 and NaN payloads count as different keys.
pub fn check_against<K: SortKey>(
    output: &[K],
    reference: &[K],
    order: Order,
) -> Result<(), Mismatch> {
    if output.len() != reference.len() {
        return Err(Mismatch::Length {
            input: reference.len(),
            output: output.len(),
        });
    }
    let unsorted = output
        .par_windows(2)
        .position_first(|w| w[1].ordered_bits(order) < w[0].ordered_bits(order));
    if let Some(at) = unsorted {
        let (left, right) = (format!("{:?}", output[at]), format!("{:?}", output[at + 1]));
        return Err(Mismatch::Unsorted { at, left, right });
    }
    let differs = output
        .par_iter()
        .zip(reference.par_iter())
        .position_first(|(a, b)| a.to_bits() != b.to_bits());
    if let Some(at) = differs {
        let (found, expected) = (format!("{:?}", output[at]), format!("{:?}", reference[at]));
        return Err(Mismatch::Multiset {
            at,
            found,
            expected,
        });
    }
    Ok(())
}

/// std's sort of `input` in `order`: the oracle.
pub fn reference<K: SortKey>(input: &[K], order: Order) -> Vec<K> {
    let mut sorted = input.to_vec();
    sorted.sort_unstable_by_key(|k| k.ordered_bits(order));
    sorted
}

/// Checks `output` against std's sort of `input`.
pub fn check<K: SortKey>(output: &[K], input: &[K], order: Order) -> Result<(), Mismatch> {
    check_against(output, &reference(input, order), order)
}
