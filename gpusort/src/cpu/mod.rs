//! CPU sorts: the radix sort that is the fallback without a GPU, std's and rayon's as
//! baselines, and the bitonic network on one thread and on all cores, the same network the GPU
//! runs.
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
pub(crate) mod radix;

pub use bitonic::{bitonic_sort, par_bitonic_sort};
pub(crate) use merge::merge_runs;
pub use merge::{merge_rounds, merge_sorted_pairs, merge_sorted_runs};

use crate::keys::{Order, SortKey};
use rayon::prelude::*;
use std::fmt;

/// The CPU sorts, by name: baselines for the GPU sort and its fallback without a GPU.
///
/// On the command line (`--baselines`) they are `std`, `rayon`, `radix`, `bitonic1` and
/// `bitonic-n`.
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
    /// [`radix_sort`] on all cores: the fallback without a GPU.
    Radix,
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
    /// assert_eq!(CpuAlgo::ALL.len(), 5);
    /// ```
    pub const ALL: [CpuAlgo; 5] = [
        CpuAlgo::Std,
        CpuAlgo::Rayon,
        CpuAlgo::Radix,
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
            CpuAlgo::Radix => "cpu_radix",
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
            CpuAlgo::Radix => format!("cpu radix sort ({} threads)", threads()),
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
    /// - [`CpuAlgo::Radix`]: [`radix_sort`], O(n) per pass over the bits, with a scratch
    ///   buffer as large as the keys.
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
            CpuAlgo::Radix => radix_sort(keys, order),
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

/// Sorts `keys` in `order` (floats as `total_cmp`) with a radix sort on rayon's threads: the
/// CPU sort of `gpusort sort` without a GPU. The result is the same bit for bit as every other
/// sort's.
///
/// # Current implementation
///
/// One pass on all cores scatters the keys by the 11 highest bits that differ between the
/// smallest and the largest into a scratch buffer as large as the keys, in 2048 buckets; each
/// bucket is then sorted back into the keys by least-significant-digit passes that stay in the
/// cache, on rayon's threads (the module's `radix` has the details). Memory: the scratch buffer,
/// `keys.len() * size_of::<K>()` bytes, allocated only where [`crate::memory::check`] allows
/// it; otherwise the keys are sorted in place by rayon's `par_sort_unstable`, with the same
/// result. Below 1024 keys, std's `sort_unstable`.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, cpu::radix_sort};
///
/// let mut keys = vec![0.5f64, f64::NAN, -3.0, 0.0, -0.0, f64::NEG_INFINITY];
/// radix_sort(&mut keys, Order::Descending);
/// assert!(keys[0].is_nan());
/// assert_eq!(keys[1..].iter().map(|k| k.to_bits()).collect::<Vec<_>>(),
///            [0.5, 0.0, -0.0, -3.0, f64::NEG_INFINITY].map(f64::to_bits));
/// ```
pub fn radix_sort<K: SortKey>(keys: &mut [K], order: Order) {
    let key = |k: &K| -> u64 { k.ordered_bits(order).into() };
    let n = keys.len();
    if n < radix::RADIX_MIN {
        keys.sort_unstable_by_key(|k| k.ordered_bits(order));
        return;
    }
    let top = radix::varying_bits(keys, &key);
    if top == 0 {
        // Every key is the same.
        return;
    }
    let Some(mut scratch) = radix::scratch::<K>(n) else {
        keys.par_sort_unstable_by_key(|k| k.ordered_bits(order));
        return;
    };
    let (counts, shift) = radix::scatter_into(keys, &mut scratch, |k, _| *k, &key, top);
    radix::split_mut(&mut scratch, &counts)
        .into_par_iter()
        .zip(radix::split_mut(keys, &counts))
        .for_each(|(from, to)| radix::sort_bits(from, to, &key, shift, false));
}

/// Threads rayon uses: its global pool's size (`RAYON_NUM_THREADS`, else the logical CPUs).
///
/// ```
/// assert!(gpusort::cpu::threads() >= 1);
/// ```
pub fn threads() -> usize {
    rayon::current_num_threads()
}
