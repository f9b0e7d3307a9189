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

use crate::error::{Error, Result};
use crate::keys::{Order, SortKey};
use rayon::prelude::*;
use std::fmt;
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};

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
        let _ = start_threads();
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
    let _ = start_threads();
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

/// Threads rayon uses: its global pool's size (`RAYON_NUM_THREADS`, else the logical CPUs, or
/// as many of those as the process can start: [`start_threads`]).
///
/// ```
/// assert!(gpusort::cpu::threads() >= 1);
/// ```
pub fn threads() -> usize {
    start_threads().unwrap_or(1)
}

/// Starts rayon's global pool, unless something already has, with as many of the threads it
/// would start (`RAYON_NUM_THREADS`, else one per logical CPU) as the process can afford: under
/// an address-space limit (`ulimit -v`) their stacks take at most an eighth of what is left,
/// and where starting them fails (a limit on processes or memory) half as many are tried, down
/// to one. Returns the pool's size. The library's sorts call it before their
/// first parallel step; call it first in a program that should report the failure itself.
///
/// rayon starts its global pool once, on first use, and panics if a thread of it cannot be
/// started; threads started here first, and joined, show what the process can afford.
///
/// # Errors
/// [`Error::NoThreads`] if not even one thread can be started; the pool is then left unstarted.
///
/// ```
/// let threads = gpusort::cpu::start_threads()?;
/// assert_eq!(threads, rayon::current_num_threads());
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn start_threads() -> Result<usize> {
    static STARTED: OnceLock<std::result::Result<usize, String>> = OnceLock::new();
    let started = STARTED.get_or_init(|| {
        let wanted = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n > 0)
            .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
            .unwrap_or(1);
        let affordable = crate::memory::address_space_room().map_or(usize::MAX, |room| {
            (room / 8 / THREAD_STACK_BYTES).max(1) as usize
        });
        let mut threads = wanted.min(affordable);
        loop {
            match can_start(threads) {
                Ok(()) => {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .spawn_handler(spawn_retrying);
                    // An error here means that the program started the pool first: its
                    // pool stands.
                    let _ = pool.build_global();
                    return Ok(rayon::current_num_threads());
                }
                Err(e) if threads == 1 => return Err(e.to_string()),
                Err(_) => threads /= 2,
            }
        }
    });
    started.clone().map_err(Error::NoThreads)
}

/// Starts one of the global pool's threads, trying again a few times where the system refuses
/// a thread for a moment (`EAGAIN` under load): a pool that fails to start cannot be started
/// again, and every parallel call after it would panic.
fn spawn_retrying(thread: rayon::ThreadBuilder) -> std::io::Result<()> {
    let (name, stack) = (thread.name().map(str::to_owned), thread.stack_size());
    // The thread's work, taken by the one spawn that succeeds.
    let work = std::sync::Arc::new(Mutex::new(Some(thread)));
    let (mut pause, mut tries) = (std::time::Duration::from_millis(1), 1);
    loop {
        let mut builder = std::thread::Builder::new();
        if let Some(name) = &name {
            builder = builder.name(name.clone());
        }
        if let Some(bytes) = stack {
            builder = builder.stack_size(bytes);
        }
        let mine = work.clone();
        let run = move || {
            let thread = mine.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(thread) = thread {
                thread.run();
            }
        };
        match builder.spawn(run) {
            Ok(_) => return Ok(()),
            Err(e) if tries == 7 => return Err(e),
            Err(_) => {
                std::thread::sleep(pause);
                (pause, tries) = (pause * 4, tries + 1);
            }
        }
    }
}

/// The address space a thread of rayon's takes for its stack (std's default, which rayon keeps).
const THREAD_STACK_BYTES: u64 = 2 << 20;

/// Whether `threads` threads with rayon's stacks can run at once: each is started and waits
/// until all are (or one could not be), then each is joined, which unmaps its stack before the
/// pool's threads need the room.
fn can_start(threads: usize) -> std::io::Result<()> {
    let released = (Mutex::new(false), Condvar::new());
    let wait = || {
        let (lock, signal) = &released;
        let mut go = lock.lock().unwrap_or_else(PoisonError::into_inner);
        while !*go {
            go = signal.wait(go).unwrap_or_else(PoisonError::into_inner);
        }
    };
    std::thread::scope(|scope| {
        let mut started = Vec::with_capacity(threads);
        let mut failed = Ok(());
        for _ in 0..threads {
            match std::thread::Builder::new().spawn_scoped(scope, wait) {
                Ok(handle) => started.push(handle),
                Err(e) => {
                    failed = Err(e);
                    break;
                }
            }
        }
        let (lock, signal) = &released;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        signal.notify_all();
        // Joined, not left to the scope: a thread the scope waits for may still hold its stack
        // when the scope returns.
        for handle in started {
            let _ = handle.join();
        }
        failed
    })
}
