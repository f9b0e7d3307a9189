//! Checking a sort's output: sorted in the requested order and the same multiset as the input;
//! for rows sorted each on its own ([`check_rows`]), every row.
//!
//! The oracle is std's `sort_unstable` on the keys' ordered bits ([`reference()`]); since keys
//! equal in that order have equal bits, a correct output of any sort equals it bit for bit.
//!
//! ```
//! use gpusort::{Order, cpu::CpuAlgo};
//! use gpusort_cli::verify;
//!
//! let input = vec![3u32, 1, 2];
//! let mut output = input.clone();
//! CpuAlgo::BitonicN.sort(&mut output, Order::Ascending);
//! verify::check(&output, &input, Order::Ascending).expect("sorted");
//! ```

use crate::keys::{Order, SortKey, SortValue};
use rayon::prelude::*;

/// Why an output is wrong: the first problem found, in the order length, sortedness, keys.
///
/// Keys are shown with their `Debug` form.
///
/// # Examples
///
/// ```
/// use gpusort::Order;
/// use gpusort_cli::verify::{Mismatch, check};
///
/// let err = check(&[2u32, 1], &[1, 2], Order::Ascending).unwrap_err();
/// assert_eq!(err, Mismatch::Unsorted { at: 0, left: "2".into(), right: "1".into() });
/// assert_eq!(err.to_string(), "not sorted: key 0 (2) comes before key 1 (1)");
/// ```
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
    /// A row of rows sorted each on its own is wrong; positions are within the row.
    #[error("row {row}: {mismatch}")]
    Row {
        /// The row, from 0.
        row: usize,
        /// What is wrong with it.
        mismatch: Box<Mismatch>,
    },
    /// Keys sorted, but the values that travelled with them (the keys' input positions) are
    /// not those of a stable sort.
    #[error("keys sorted, but the value at {at} ({value}) {why}")]
    Values {
        /// The first wrong position.
        at: usize,
        /// The value there.
        value: u64,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// Checks `output` against `reference`, the input sorted by std in the same order. Keys are
/// compared by bits, so −0.0/+0.0 and NaN payloads count as different keys.
///
/// Use it to check several outputs against one [`reference()`], computed once; [`check`] sorts
/// the input itself. O(n) on rayon's threads.
///
/// # Errors
/// [`Mismatch::Length`], [`Mismatch::Unsorted`] at the first pair out of order, or
/// [`Mismatch::Multiset`] at the first position that differs from `reference`.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, cpu::CpuAlgo};
/// use gpusort_cli::verify::{Mismatch, check_against, reference};
///
/// let input = [0.0f32, -0.0, 1.0];
/// let oracle = reference(&input, Order::Ascending);
/// for algo in CpuAlgo::ALL {
///     let mut output = input;
///     algo.sort(&mut output, Order::Ascending);
///     assert_eq!(check_against(&output, &oracle, Order::Ascending), Ok(()));
/// }
/// // Sorted, but +0.0 where std's sort has -0.0:
/// let wrong = check_against(&[0.0f32, 0.0, 1.0], &oracle, Order::Ascending);
/// assert!(matches!(wrong, Err(Mismatch::Multiset { at: 0, .. })));
/// ```
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

/// std's sort of `input` in `order`, on rayon's threads (the same order: keys with equal
/// ordered bits are equal): the oracle. Allocates a copy of `input`.
///
/// # Examples
///
/// ```
/// use gpusort::Order;
/// use gpusort_cli::verify::reference;
///
/// assert_eq!(reference(&[1i64, -4, 3], Order::Descending), [3, 1, -4]);
/// ```
pub fn reference<K: SortKey>(input: &[K], order: Order) -> Vec<K> {
    let mut sorted = input.to_vec();
    sorted.par_sort_unstable_by_key(|k| k.ordered_bits(order));
    sorted
}

/// Checks `output` against std's sort of `input`: [`check_against`] with [`reference()`].
///
/// # Errors
/// As [`check_against`].
///
/// # Examples
///
/// ```
/// use gpusort::Order;
/// use gpusort_cli::verify::{Mismatch, check};
///
/// assert_eq!(check(&[1u64, 2, 3], &[3, 2, 1], Order::Ascending), Ok(()));
/// assert_eq!(
///     check(&[1u64, 2], &[3, 2, 1], Order::Ascending),
///     Err(Mismatch::Length { input: 3, output: 2 })
/// );
/// ```
pub fn check<K: SortKey>(output: &[K], input: &[K], order: Order) -> Result<(), Mismatch> {
    check_against(output, &reference(input, order), order)
}

/// Checks rows sorted each on its own: `output` and `input` are rows of `row_len` keys one
/// after another (a row-major matrix), and each row of `output` must be its row of `input`
/// sorted, as [`check`] checks a whole slice. Rows are checked on rayon's threads.
///
/// # Errors
/// [`Mismatch::Length`] if the lengths differ or are not whole rows (`row_len` 0: rows of no
/// key, so no key), else [`Mismatch::Row`] for the first wrong row.
///
/// # Examples
///
/// ```
/// use gpusort::Order;
/// use gpusort_cli::verify::{Mismatch, check_rows};
///
/// let input = [3u32, 1, 2, /* next row */ 9, 7, 8];
/// assert_eq!(check_rows(&[1, 2, 3, 7, 8, 9], &input, 3, Order::Ascending), Ok(()));
/// // Sorted as a whole, but not row by row:
/// let err = check_rows(&[1, 2, 3, 9, 7, 8], &input, 3, Order::Ascending).unwrap_err();
/// assert_eq!(err.to_string(), "row 1: not sorted: key 0 (9) comes before key 1 (7)");
/// ```
pub fn check_rows<K: SortKey>(
    output: &[K],
    input: &[K],
    row_len: usize,
    order: Order,
) -> Result<(), Mismatch> {
    let whole_rows = match row_len {
        0 => input.is_empty(),
        _ => input.len().is_multiple_of(row_len),
    };
    if output.len() != input.len() || !whole_rows {
        return Err(Mismatch::Length {
            input: input.len(),
            output: output.len(),
        });
    }
    if row_len == 0 {
        return Ok(());
    }
    let wrong = output
        .par_chunks(row_len)
        .zip(input.par_chunks(row_len))
        .map(|(out, row)| check(out, row, order))
        .enumerate()
        .find_first(|(_, verdict)| verdict.is_err());
    match wrong {
        Some((row, Err(mismatch))) => Err(Mismatch::Row {
            row,
            mismatch: Box::new(mismatch),
        }),
        _ => Ok(()),
    }
}

/// Checks the values of a stable sort of pairs whose values were the keys' input positions:
/// `values[i]` is a position of `input` holding `sorted[i]`'s bits, and positions increase
/// within every run of equal keys. With `sorted` checked by [`check_against`], that makes the
/// values the stable sorting permutation. O(n) on rayon's threads.
///
/// # Errors
/// [`Mismatch::Length`], or [`Mismatch::Values`] at the first wrong value.
///
/// # Examples
///
/// ```
/// use gpusort::Order;
/// use gpusort_cli::verify::{Mismatch, check_stable_values};
///
/// let input = [5u32, 3, 5, 1];
/// let sorted = [1, 3, 5, 5];
/// assert_eq!(check_stable_values(&input, &sorted, &[3u32, 1, 0, 2]), Ok(()));
/// let swapped = check_stable_values(&input, &sorted, &[3u32, 1, 2, 0]);
/// assert!(matches!(swapped, Err(Mismatch::Values { at: 3, value: 0, .. })));
/// ```
pub fn check_stable_values<K: SortKey, V: SortValue>(
    input: &[K],
    sorted: &[K],
    values: &[V],
) -> Result<(), Mismatch> {
    if values.len() != input.len() || sorted.len() != input.len() {
        return Err(Mismatch::Length {
            input: input.len(),
            output: values.len().min(sorted.len()),
        });
    }
    let wrong = |i: usize| -> Option<&'static str> {
        let at = values[i].to_index();
        if at >= input.len() as u64 {
            return Some("is not an input position");
        }
        if input[at as usize].to_bits() != sorted[i].to_bits() {
            return Some("is the position of another key");
        }
        let equal_before = i > 0 && sorted[i - 1].to_bits() == sorted[i].to_bits();
        if equal_before && values[i - 1].to_index() >= at {
            return Some("breaks the input order of equal keys");
        }
        None
    };
    match (0..values.len())
        .into_par_iter()
        .find_first(|&i| wrong(i).is_some())
    {
        None => Ok(()),
        Some(at) => Err(Mismatch::Values {
            at,
            value: values[at].to_index(),
            why: wrong(at).expect("found wrong"),
        }),
    }
}
