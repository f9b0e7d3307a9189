//! CPU sorts: std's and rayon's as baselines and fallback, and the bitonic network on one
//! thread and on all cores, the same network the GPU runs.
//!
//! All of them take the same keys and [`Order`] as the GPU sort and give the same output bit
//! for bit (floats as `total_cmp`).
//!
//! ```
//! use gpusort::{Order, cpu::CpuAlgo};
//!
//! for algo in CpuAlgo::ALL {
//!     let mut keys = vec![0.5f32, f32::NAN, -3.0, -0.0, 0.0];
//!     algo.sort(&mut keys, Order::Ascending);
//!     assert_eq!(keys[..4], [-3.0, -0.0, 0.0, 0.5], "{algo}");
//!     assert!(keys[4].is_nan());
//! }
//! ```

mod bitonic;
mod merge;

pub use bitonic::{bitonic_sort, par_bitonic_sort};
pub(crate) use merge::merge_runs;
pub use merge::{merge_rounds, merge_sorted_pairs, merge_sorted_runs};

use crate::keys::{Order, SortKey};
use rayon::slice::ParallelSliceMut;
use std::fmt;

/// The CPU sorts, by name: baselines for the GPU sort and its fallback without a GPU.
///
/// On the command line (`--baselines`) they are `std`, `rayon`, `bitonic1` and `bitonic-n`.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, cpu::CpuAlgo};
///
/// let mut keys = vec![3u64, 1, 2];
/// CpuAlgo::Rayon.sort(&mut keys, Order::Ascending);
/// assert_eq!(keys, [1, 2, 3]);
/// assert_eq!(CpuAlgo::Rayon.name(), "cpu_rayon");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum CpuAlgo {
    /// `slice::sort_unstable_by_key` on the ordered bits.
    Std,
    /// rayon's `par_sort_unstable_by_key` on all cores.
    Rayon,
    /// The bitonic network on one thread.
    Bitonic1,
    /// The bitonic network on all cores (rayon).
    BitonicN,
}

impl CpuAlgo {
    /// Every CPU sort, in the order of the reports.
    ///
    /// ```
    /// use gpusort::cpu::CpuAlgo;
    /// assert_eq!(CpuAlgo::ALL.len(), 4);
    /// ```
    pub const ALL: [CpuAlgo; 4] = [
        CpuAlgo::Std,
        CpuAlgo::Rayon,
        CpuAlgo::Bitonic1,
        CpuAlgo::BitonicN,
    ];

    /// Short name, as in the bench CSV; also its `Display`.
    ///
    /// ```
    /// use gpusort::cpu::CpuAlgo;
    /// assert_eq!(CpuAlgo::BitonicN.name(), "cpu_bitonicN");
    /// assert_eq!(CpuAlgo::BitonicN.to_string(), "cpu_bitonicN");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            CpuAlgo::Std => "cpu_std",
            CpuAlgo::Rayon => "cpu_rayon",
            CpuAlgo::Bitonic1 => "cpu_bitonic1",
            CpuAlgo::BitonicN => "cpu_bitonicN",
        }
    }

    /// What it is, for reports, with rayon's thread count where it uses rayon.
    ///
    /// ```
    /// use gpusort::cpu::CpuAlgo;
    /// assert_eq!(CpuAlgo::Std.describe(), "cpu std sort_unstable");
    /// assert!(CpuAlgo::Rayon.describe().ends_with(" threads)"));
    /// ```
    pub fn describe(self) -> String {
        match self {
            CpuAlgo::Std => "cpu std sort_unstable".into(),
            CpuAlgo::Rayon => format!("cpu rayon par_sort_unstable ({} threads)", threads()),
            CpuAlgo::Bitonic1 => "cpu bitonic (1 thread)".into(),
            CpuAlgo::BitonicN => format!("cpu bitonic ({} threads)", threads()),
        }
    }

    /// Sorts `keys` in `order` (floats as `total_cmp`); unstable, like the GPU sort, and with
    /// the same output bit for bit.
    ///
    /// # Current implementation
    ///
    /// - [`CpuAlgo::Std`]: `sort_unstable_by_key` on [`SortKey::ordered_bits`]; O(n log n),
    ///   in place.
    /// - [`CpuAlgo::Rayon`]: `par_sort_unstable_by_key` on the same bits, on rayon's threads.
    /// - [`CpuAlgo::Bitonic1`], [`CpuAlgo::BitonicN`]: [`bitonic_sort`] and
    ///   [`par_bitonic_sort`], O(n log² n) compare-exchanges, in place.
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort::{Order, cpu::CpuAlgo};
    ///
    /// let mut keys = vec![-2i32, 7, 0, 7, -9];
    /// CpuAlgo::Bitonic1.sort(&mut keys, Order::Descending);
    /// assert_eq!(keys, [7, 7, 0, -2, -9]);
    /// ```
    pub fn sort<K: SortKey>(self, keys: &mut [K], order: Order) {
        match self {
            CpuAlgo::Std => keys.sort_unstable_by_key(|k| k.ordered_bits(order)),
            CpuAlgo::Rayon => keys.par_sort_unstable_by_key(|k| k.ordered_bits(order)),
            CpuAlgo::Bitonic1 => bitonic_sort(keys, order),
            CpuAlgo::BitonicN => par_bitonic_sort(keys, order),
        }
    }
}

impl fmt::Display for CpuAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Threads rayon uses: its global pool's size (`RAYON_NUM_THREADS`, else the logical CPUs).
///
/// ```
/// assert!(gpusort::cpu::threads() >= 1);
/// ```
pub fn threads() -> usize {
    rayon::current_num_threads()
}
