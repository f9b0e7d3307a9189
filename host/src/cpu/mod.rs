//! CPU sorts: std's and rayon's as baselines and fallback, and the bitonic network on one
//! thread and on all cores, the same network the GPU runs.

mod bitonic;

pub use bitonic::{bitonic_sort, par_bitonic_sort};

use crate::keys::{Order, SortKey};
use rayon::slice::ParallelSliceMut;
use std::fmt;

/// The CPU sorts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
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
    /// Every CPU sort.
    pub const ALL: [CpuAlgo; 4] = [
        CpuAlgo::Std,
        CpuAlgo::Rayon,
        CpuAlgo::Bitonic1,
        CpuAlgo::BitonicN,
    ];

    /// Short name, as in the bench CSV.
    pub fn name(self) -> &'static str {
        match self {
            CpuAlgo::Std => "cpu_std",
            CpuAlgo::Rayon => "cpu_rayon",
            CpuAlgo::Bitonic1 => "cpu_bitonic1",
            CpuAlgo::BitonicN => "cpu_bitonicN",
        }
    }

    /// What it is, for reports.
    pub fn describe(self) -> String {
        match self {
            CpuAlgo::Std => "cpu std sort_unstable".into(),
            CpuAlgo::Rayon => format!("cpu rayon par_sort_unstable ({} threads)", threads()),
            CpuAlgo::Bitonic1 => "cpu bitonic (1 thread)".into(),
            CpuAlgo::BitonicN => format!("cpu bitonic ({} threads)", threads()),
        }
    }

    /// Sorts `keys` in `order` (floats as `total_cmp`).
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

/// Threads rayon uses.
pub fn threads() -> usize {
    rayon::current_num_threads()
}
