//! What a sweep measures: sizes, sorts, key types, orders, and which sort runs at which size.

use super::Algo;
use crate::keys::{DType, Order};

/// Largest `--max-log2` (and `--min-log2`, `--cpu-max-log2`): 2^32 keys of 8 bytes are 32 GiB
/// per host copy, and a sweep holds three (the input, std's sort of it and a sorted output).
pub const MAX_LOG2: u32 = 32;

/// Largest log2 n at which `cpu_bitonic1` runs unless `--algos` names it: its O(n log² n)
/// compare-exchanges on one core take seconds per sort from here on.
pub const BITONIC1_DEFAULT_MAX_LOG2: u32 = 22;

/// The sweep: every size from 2^`min_log2` to 2^`max_log2` × `dtypes` × `orders`, each with
/// the sorts of `algos` that run at that size.
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::{Algo, plan::Plan};
/// use gpusort::{DType, Order};
///
/// let plan = Plan {
///     min_log2: 20,
///     max_log2: 26,
///     algos: Algo::DEFAULT.to_vec(),
///     named: false,
///     cpu_max_log2: 24,
///     dtypes: vec![DType::U32, DType::F32],
///     orders: vec![Order::Ascending],
/// };
/// assert_eq!(plan.log2_sizes().count(), 7);
/// assert_eq!(plan.algos_at(26), [Algo::Bitonic, Algo::Merge, Algo::Radix]); // CPU sorts stop at 2^24
/// assert_eq!(plan.cap(Algo::CpuBitonic1), 22);     // and the one-core bitonic at 2^22
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Smallest size, as log2 n.
    pub min_log2: u32,
    /// Largest size, as log2 n.
    pub max_log2: u32,
    /// The sorts, in the order they run at each size.
    pub algos: Vec<Algo>,
    /// Whether `algos` were named on the command line: a sort named there is not held to its
    /// default cap (only `cpu_bitonic1` has one), only to `cpu_max_log2`.
    pub named: bool,
    /// Largest size, as log2 n, at which CPU sorts run.
    pub cpu_max_log2: u32,
    /// The key types.
    pub dtypes: Vec<DType>,
    /// The orders.
    pub orders: Vec<Order>,
}

impl Plan {
    /// The sizes, as log2 n, smallest first.
    ///
    /// ```
    /// # use gpusort_cli::bench::{Algo, plan::Plan};
    /// # use gpusort::{DType, Order};
    /// let plan = Plan {
    ///     min_log2: 20,
    ///     max_log2: 26,
    ///     algos: Algo::DEFAULT.to_vec(),
    ///     named: false,
    ///     cpu_max_log2: 24,
    ///     dtypes: vec![DType::U32, DType::F32],
    ///     orders: vec![Order::Ascending],
    /// };
    /// assert_eq!(plan.log2_sizes(), 20..=26);
    /// ```
    pub fn log2_sizes(&self) -> std::ops::RangeInclusive<u32> {
        self.min_log2..=self.max_log2
    }

    /// Largest log2 n at which `algo` runs: `max_log2` for GPU sorts, `cpu_max_log2` for CPU
    /// sorts, at most [`BITONIC1_DEFAULT_MAX_LOG2`] for `cpu_bitonic1` unless `named`.
    ///
    /// ```
    /// # use gpusort_cli::bench::{Algo, plan::Plan};
    /// # use gpusort::{DType, Order};
    /// let plan = Plan {
    ///     min_log2: 20,
    ///     max_log2: 26,
    ///     algos: Algo::DEFAULT.to_vec(),
    ///     named: false,
    ///     cpu_max_log2: 24,
    ///     dtypes: vec![DType::U32, DType::F32],
    ///     orders: vec![Order::Ascending],
    /// };
    /// assert_eq!(plan.cap(Algo::Bitonic), 26);
    /// assert_eq!(plan.cap(Algo::CpuStd), 24);
    /// assert_eq!(Plan { named: true, ..plan }.cap(Algo::CpuBitonic1), 24);
    /// ```
    pub fn cap(&self, algo: Algo) -> u32 {
        match algo {
            _ if algo.is_gpu() => self.max_log2,
            Algo::CpuBitonic1 if !self.named => self.cpu_max_log2.min(BITONIC1_DEFAULT_MAX_LOG2),
            _ => self.cpu_max_log2,
        }
    }

    /// The sorts that run at 2^`log2` keys, in `algos` order.
    ///
    /// ```
    /// # use gpusort_cli::bench::{Algo, plan::Plan};
    /// # use gpusort::{DType, Order};
    /// let plan = Plan {
    ///     min_log2: 20,
    ///     max_log2: 26,
    ///     algos: Algo::DEFAULT.to_vec(),
    ///     named: false,
    ///     cpu_max_log2: 24,
    ///     dtypes: vec![DType::U32, DType::F32],
    ///     orders: vec![Order::Ascending],
    /// };
    /// assert_eq!(plan.algos_at(23), [Algo::Bitonic, Algo::Merge, Algo::Radix, Algo::CpuStd, Algo::CpuRayon, Algo::CpuBitonicN]);
    /// ```
    pub fn algos_at(&self, log2: u32) -> Vec<Algo> {
        self.algos
            .iter()
            .copied()
            .filter(|&a| log2 <= self.cap(a))
            .collect()
    }

    /// Number of measurements the sweep makes (with a GPU for its GPU sorts).
    ///
    /// ```
    /// # use gpusort_cli::bench::{Algo, plan::Plan};
    /// # use gpusort::{DType, Order};
    /// let plan = Plan {
    ///     min_log2: 20,
    ///     max_log2: 26,
    ///     algos: Algo::DEFAULT.to_vec(),
    ///     named: false,
    ///     cpu_max_log2: 24,
    ///     dtypes: vec![DType::U32, DType::F32],
    ///     orders: vec![Order::Ascending],
    /// };
    /// // Per key type: bitonic, merge and radix at 7 sizes, std, rayon and bitonicN at 5,
    /// // bitonic1 at 3.
    /// assert_eq!(plan.measurements(), (3 * 7 + 3 * 5 + 3) * 2);
    /// ```
    pub fn measurements(&self) -> usize {
        let per_key_and_order: usize = self.log2_sizes().map(|l| self.algos_at(l).len()).sum();
        per_key_and_order * self.dtypes.len() * self.orders.len()
    }

    /// Sorts that stop before `max_log2`, with the largest log2 n they run at.
    ///
    /// ```
    /// # use gpusort_cli::bench::{Algo, plan::Plan};
    /// # use gpusort::{DType, Order};
    /// let plan = Plan {
    ///     min_log2: 20,
    ///     max_log2: 26,
    ///     algos: Algo::DEFAULT.to_vec(),
    ///     named: false,
    ///     cpu_max_log2: 24,
    ///     dtypes: vec![DType::U32, DType::F32],
    ///     orders: vec![Order::Ascending],
    /// };
    /// assert_eq!(plan.capped()[2], (Algo::CpuBitonic1, 22));
    /// assert_eq!(plan.capped().len(), 4);
    /// ```
    pub fn capped(&self) -> Vec<(Algo, u32)> {
        self.algos
            .iter()
            .map(|&a| (a, self.cap(a)))
            .filter(|&(_, cap)| cap < self.max_log2)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(algos: &[Algo], named: bool) -> Plan {
        Plan {
            min_log2: 10,
            max_log2: 28,
            algos: algos.to_vec(),
            named,
            cpu_max_log2: 24,
            dtypes: vec![DType::U32, DType::F32],
            orders: vec![Order::Ascending],
        }
    }

    #[test]
    fn gpu_sorts_run_at_every_size_and_cpu_sorts_up_to_the_cpu_cap() {
        use Algo::*;
        let p = plan(&Algo::DEFAULT, false);
        assert_eq!(p.log2_sizes().count(), 19);
        assert_eq!(p.algos_at(10), Algo::DEFAULT);
        assert_eq!(p.algos_at(22), Algo::DEFAULT);
        assert_eq!(
            p.algos_at(23),
            [Bitonic, Merge, Radix, CpuStd, CpuRayon, CpuBitonicN]
        );
        assert_eq!(
            p.algos_at(24),
            [Bitonic, Merge, Radix, CpuStd, CpuRayon, CpuBitonicN]
        );
        assert_eq!(p.algos_at(25), [Bitonic, Merge, Radix]);
        assert_eq!(p.algos_at(28), [Bitonic, Merge, Radix]);
        assert_eq!(
            p.capped(),
            [
                (CpuStd, 24),
                (CpuRayon, 24),
                (CpuBitonic1, 22),
                (CpuBitonicN, 24)
            ]
        );
    }

    #[test]
    fn bitonic1_named_on_the_command_line_runs_up_to_the_cpu_cap() {
        let named = plan(&[Algo::CpuBitonic1], true);
        assert_eq!(named.algos_at(24), [Algo::CpuBitonic1]);
        assert!(named.algos_at(25).is_empty());
        let lowered = Plan {
            cpu_max_log2: 20,
            ..plan(&[Algo::CpuBitonic1], false)
        };
        assert_eq!(
            lowered.cap(Algo::CpuBitonic1),
            20,
            "--cpu-max-log2 below 22 caps it too"
        );
    }

    #[test]
    fn measurements_count_every_key_type_order_and_size() {
        let p = Plan {
            min_log2: 21,
            max_log2: 25,
            orders: vec![Order::Ascending, Order::Descending],
            ..plan(&[Algo::Bitonic, Algo::CpuBitonic1], false)
        };
        // bitonic at 21..=25 (5 sizes), cpu_bitonic1 at 21..=22 (2), × 2 key types × 2 orders.
        assert_eq!(p.measurements(), (5 + 2) * 2 * 2);
    }

    #[test]
    fn one_size_when_min_is_max() {
        let p = Plan {
            min_log2: 12,
            max_log2: 12,
            ..plan(&[Algo::CpuStd], false)
        };
        assert_eq!(p.log2_sizes().collect::<Vec<_>>(), [12]);
        assert_eq!(p.measurements(), 2);
    }
}
