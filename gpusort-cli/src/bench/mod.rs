//! Benchmark sweeps over sizes × sorts × key types × orders, as `gpusort bench` runs them.
//!
//! - [`plan`]: which sorts run at which sizes.
//! - [`sweep`]: generating the keys, timing each sort, verifying it against std's sort.
//! - [`report`]: the CSV and the markdown table.
//! - [`plot`]: the SVG plot of keys per second against n.
//! - [`peers`]: the peer benchmark's CSV (CUB, thrust, torch) and the ratios to it.
//! - [`segments`]: the segmented sorts' sweep (rows of one length, variable-length segments).
//! - [`topk`]: the top-k sweep (`--topk`), beside `torch.topk`.
//!
//! A sweep of the CPU sorts, with its reports, runs without a GPU:
//!
//! ```
//! use gpusort_cli::bench::{Algo, plan::Plan, report, sweep};
//! use gpusort::{DType, Order};
//! use gpusort_cli::{inputs::Dist, timing::GpuTiming};
//!
//! let plan = Plan {
//!     min_log2: 10,
//!     max_log2: 12,
//!     algos: vec![Algo::CpuStd, Algo::CpuRayon],
//!     named: false,
//!     cpu_max_log2: 24,
//!     dtypes: vec![DType::U32],
//!     orders: vec![Order::Ascending],
//! };
//! let settings = sweep::Settings {
//!     reps: 10,
//!     gpu_timing: GpuTiming::Sort,
//!     cpu_reps: 2,
//!     dist: Dist::Uniform,
//!     seed: 42,
//! };
//! let outcome = sweep::run(&plan, &settings, None, &mut |_| {});
//! assert_eq!(outcome.measurements.len(), 6);
//! assert!(outcome.measurements.iter().all(|m| m.verified));
//! print!("{}", report::csv(&outcome.measurements));
//! ```

pub mod multi;
pub mod peers;
pub mod plan;
pub mod plot;
pub mod report;
pub mod segments;
pub mod sweep;
pub mod topk;

use crate::cpu::CpuAlgo;
use crate::gpu::GpuAlgo;
use crate::keys::{DType, Order};
use crate::timing::Timing;
use std::fmt;

/// The sorts a sweep can time, named as in `--algos` and the CSV.
///
/// A new GPU sort is one variant here (with its name in [`Algo::name`]) and one arm in
/// [`Algo::gpu`]. The `_pairs` sorts carry a value per key, as wide as the key (`u32` values
/// with 4-byte keys, `u64` with 8-byte ones, as `bench/peers`' `pairs` rows): the keys' input
/// positions, checked to be the stable sorting permutation.
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::Algo;
/// use gpusort::cpu::CpuAlgo;
/// use gpusort::gpu::GpuAlgo;
///
/// assert_eq!(Algo::CpuRayon.cpu(), Some(CpuAlgo::Rayon));
/// assert!(Algo::Bitonic.is_gpu());
/// assert_eq!(Algo::Bitonic.to_string(), "bitonic");
/// assert_eq!(Algo::RadixPairs.gpu(), Some((GpuAlgo::Radix, true)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Algo {
    /// The GPU bitonic sort on device-resident keys.
    #[value(name = "bitonic")]
    Bitonic,
    /// The GPU stable merge sort on device-resident keys (scratch allocated outside the timing).
    #[value(name = "merge")]
    Merge,
    /// The GPU radix sort on device-resident keys (scratch allocated outside the timing).
    #[value(name = "radix")]
    Radix,
    /// The GPU merge sort of device-resident pairs: keys with values as wide as the keys.
    #[value(name = "merge_pairs")]
    MergePairs,
    /// The GPU radix sort of device-resident pairs: keys with values as wide as the keys.
    #[value(name = "radix_pairs")]
    RadixPairs,
    /// std's `sort_unstable` on one core.
    #[value(name = "cpu_std")]
    CpuStd,
    /// rayon's `par_sort_unstable` on all cores.
    #[value(name = "cpu_rayon")]
    CpuRayon,
    /// The bitonic network on one core.
    #[value(name = "cpu_bitonic1")]
    CpuBitonic1,
    /// The bitonic network on all cores.
    #[value(name = "cpu_bitonicN")]
    CpuBitonicN,
}

impl Algo {
    /// Every sort, GPU ones first.
    ///
    /// ```
    /// use gpusort_cli::bench::Algo;
    /// assert!(Algo::ALL[0].is_gpu());
    /// ```
    pub const ALL: [Algo; 9] = [
        Algo::Bitonic,
        Algo::Merge,
        Algo::Radix,
        Algo::MergePairs,
        Algo::RadixPairs,
        Algo::CpuStd,
        Algo::CpuRayon,
        Algo::CpuBitonic1,
        Algo::CpuBitonicN,
    ];

    /// The sorts a sweep times when `--algos` names none: every sort of keys alone (the
    /// `_pairs` sorts run when named).
    ///
    /// ```
    /// use gpusort_cli::bench::Algo;
    /// assert!(Algo::DEFAULT.iter().all(|a| a.gpu().is_none_or(|(_, pairs)| !pairs)));
    /// ```
    pub const DEFAULT: [Algo; 7] = [
        Algo::Bitonic,
        Algo::Merge,
        Algo::Radix,
        Algo::CpuStd,
        Algo::CpuRayon,
        Algo::CpuBitonic1,
        Algo::CpuBitonicN,
    ];

    /// The name in `--algos`, the CSV and the plot; also its `Display`.
    ///
    /// ```
    /// use gpusort_cli::bench::Algo;
    /// assert_eq!(Algo::CpuBitonicN.name(), "cpu_bitonicN");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Algo::Bitonic => "bitonic",
            Algo::Merge => "merge",
            Algo::Radix => "radix",
            Algo::MergePairs => "merge_pairs",
            Algo::RadixPairs => "radix_pairs",
            Algo::CpuStd => "cpu_std",
            Algo::CpuRayon => "cpu_rayon",
            Algo::CpuBitonic1 => "cpu_bitonic1",
            Algo::CpuBitonicN => "cpu_bitonicN",
        }
    }

    /// The CPU sort this is, or `None` for a GPU sort.
    ///
    /// ```
    /// use gpusort::cpu::CpuAlgo;
    /// use gpusort_cli::bench::Algo;
    /// assert_eq!(Algo::CpuStd.cpu(), Some(CpuAlgo::Std));
    /// assert_eq!(Algo::Bitonic.cpu(), None);
    /// ```
    pub fn cpu(self) -> Option<CpuAlgo> {
        match self {
            Algo::Bitonic | Algo::Merge | Algo::Radix | Algo::MergePairs | Algo::RadixPairs => None,
            Algo::CpuStd => Some(CpuAlgo::Std),
            Algo::CpuRayon => Some(CpuAlgo::Rayon),
            Algo::CpuBitonic1 => Some(CpuAlgo::Bitonic1),
            Algo::CpuBitonicN => Some(CpuAlgo::BitonicN),
        }
    }

    /// The GPU sort this is, and whether it carries values, or `None` for a CPU sort.
    ///
    /// ```
    /// use gpusort::gpu::GpuAlgo;
    /// use gpusort_cli::bench::Algo;
    /// assert_eq!(Algo::Merge.gpu(), Some((GpuAlgo::Merge, false)));
    /// assert_eq!(Algo::MergePairs.gpu(), Some((GpuAlgo::Merge, true)));
    /// assert_eq!(Algo::CpuStd.gpu(), None);
    /// ```
    pub fn gpu(self) -> Option<(GpuAlgo, bool)> {
        match self {
            Algo::Bitonic => Some((GpuAlgo::Bitonic, false)),
            Algo::Merge => Some((GpuAlgo::Merge, false)),
            Algo::Radix => Some((GpuAlgo::Radix, false)),
            Algo::MergePairs => Some((GpuAlgo::Merge, true)),
            Algo::RadixPairs => Some((GpuAlgo::Radix, true)),
            Algo::CpuStd | Algo::CpuRayon | Algo::CpuBitonic1 | Algo::CpuBitonicN => None,
        }
    }

    /// Whether it carries values with the keys (the `_pairs` sorts).
    pub fn carries_values(self) -> bool {
        self.gpu().is_some_and(|(_, pairs)| pairs)
    }

    /// Whether it runs on the GPU.
    ///
    /// ```
    /// use gpusort_cli::bench::Algo;
    /// assert!(!Algo::CpuRayon.is_gpu());
    /// ```
    pub fn is_gpu(self) -> bool {
        self.cpu().is_none()
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One timed sort of one (sort, key type, order, size).
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::{Algo, Measurement};
/// use gpusort::{DType, Order};
/// use gpusort_cli::timing::Timing;
///
/// let m = Measurement {
///     algo: Algo::Bitonic,
///     dtype: DType::U32,
///     order: Order::Ascending,
///     n: 1 << 20,
///     ms: Timing { median: 0.5, min: 0.4, max: 0.7 },
///     verified: true,
/// };
/// assert_eq!(m.keys_per_s(), (1 << 20) as f64 * 2000.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// The sort.
    pub algo: Algo,
    /// The key type.
    pub dtype: DType,
    /// The order.
    pub order: Order,
    /// Number of keys.
    pub n: usize,
    /// Median, min and max time of one sort, in ms.
    pub ms: Timing,
    /// Whether the output equals std's sort of the input.
    pub verified: bool,
}

impl Measurement {
    /// Keys sorted per second at the median time ([`keys_per_s`]).
    pub fn keys_per_s(&self) -> f64 {
        keys_per_s(self.n, self.ms.median)
    }
}

/// Keys per second of sorting `n` keys in `ms` milliseconds.
///
/// ```
/// assert_eq!(gpusort_cli::bench::keys_per_s(1000, 2.0), 500_000.0);
/// ```
pub fn keys_per_s(n: usize, ms: f64) -> f64 {
    n as f64 / (ms / 1e3)
}

/// `asc` or `desc`, as on the command line.
///
/// ```
/// use gpusort::Order;
/// use gpusort_cli::bench::order_name;
/// assert_eq!(order_name(Order::Descending), "desc");
/// ```
pub fn order_name(order: Order) -> &'static str {
    match order {
        Order::Ascending => "asc",
        Order::Descending => "desc",
    }
}

/// `n` as `2^k` when it is a power of two, else in decimal.
///
/// ```
/// use gpusort_cli::bench::size_name;
/// assert_eq!(size_name(1 << 20), "2^20");
/// assert_eq!(size_name(1000), "1000");
/// ```
pub fn size_name(n: usize) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

/// `items` without repeats, in first-seen order (for comma lists such as `--algos a,b,a`).
/// O(n²): for short lists.
///
/// ```
/// assert_eq!(gpusort_cli::bench::unique(&[3, 1, 3, 2, 1]), [3, 1, 2]);
/// ```
pub fn unique<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut seen = Vec::with_capacity(items.len());
    for &item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn algo_names_are_the_command_line_names() {
        for algo in Algo::ALL {
            let value = algo.to_possible_value().expect("not hidden");
            assert_eq!(value.get_name(), algo.name());
            assert_eq!(Algo::from_str(algo.name(), false), Ok(algo));
            if let Some(cpu) = algo.cpu() {
                assert_eq!(cpu.name(), algo.name(), "the CPU sorts' names elsewhere");
            }
        }
        assert_eq!(Algo::value_variants(), Algo::ALL);
    }

    #[test]
    fn only_bitonic_merge_and_radix_are_on_the_gpu() {
        let gpu: Vec<_> = Algo::ALL.into_iter().filter(|a| a.is_gpu()).collect();
        assert_eq!(
            gpu,
            [
                Algo::Bitonic,
                Algo::Merge,
                Algo::Radix,
                Algo::MergePairs,
                Algo::RadixPairs
            ]
        );
        for algo in Algo::ALL {
            assert_eq!(algo.gpu().is_some(), algo.is_gpu(), "{algo}");
            let stable = algo.gpu().is_some_and(|(a, _)| a != GpuAlgo::Bitonic);
            assert!(
                !algo.carries_values() || stable,
                "{algo}: only stable sorts carry values"
            );
            assert_eq!(algo.carries_values(), algo.name().ends_with("_pairs"));
        }
    }

    #[test]
    fn the_default_sorts_are_every_sort_of_keys_alone() {
        let keys: Vec<_> = Algo::ALL
            .into_iter()
            .filter(|a| !a.carries_values())
            .collect();
        assert_eq!(keys, Algo::DEFAULT);
    }

    #[test]
    fn keys_per_second_from_milliseconds() {
        assert_eq!(keys_per_s(1 << 20, 2.0), (1u64 << 20) as f64 * 500.0);
    }

    #[test]
    fn names_of_orders_and_sizes() {
        assert_eq!(order_name(Order::Ascending), "asc");
        assert_eq!(order_name(Order::Descending), "desc");
        assert_eq!(size_name(1 << 20), "2^20");
        assert_eq!(size_name(1), "2^0");
        assert_eq!(size_name(1000), "1000");
    }

    #[test]
    fn unique_keeps_first_occurrences_in_order() {
        assert_eq!(unique(&[3, 1, 3, 2, 1]), [3, 1, 2]);
        assert_eq!(unique::<u8>(&[]), []);
    }
}
