//! The GPU side: a [`GpuSorter`] owns a CUDA context, the kernels' modules and a stream.
//!
//! | CUDA concept | here |
//! |---|---|
//! | `cuInit`, device, primary context | [`GpuSorter::new`], [`GpuSorter::with_device`], [`GpuSorter::bind`] |
//! | modules (the PTX, JIT-compiled for the device) | [`KERNELS_PTX`], one module per family of kernels, each loaded on first use |
//! | stream | [`GpuSorter::stream`], [`GpuSorter::synchronize`] |
//! | `cuMemAlloc`, `cuMemcpyHtoD`, `cuMemGetInfo` | [`GpuSorter::alloc`], [`GpuSorter::upload`], [`GpuSorter::memory_info`] |
//! | kernel launches | [`GpuSorter::sort_unstable_device`], [`GpuSorter::enqueue_sort_unstable`], [`GpuSorter::sort_device`], [`GpuSorter::enqueue_sort`] |
//!
//! Three sorts ([`GpuAlgo`]): the bitonic network (unstable, in place, no scratch per call; up
//! to 2^16 keys in one launch through a 512 KiB workspace each sorter allocates once), the
//! stable merge-path merge sort and the stable LSD radix sort (each with a scratch buffer as
//! large as the keys and values; [`merge::scratch_bytes`], [`radix::scratch_bytes`]). The
//! default calls run `auto`'s choice ([`Sorting`], [`GpuSorter::auto_device`]): the fastest by
//! n, key width and values on the device's measured table, among all three for
//! `sort_unstable*`, among the stable two for `sort*`, `sort_pairs*`, `sort_by_key`,
//! `argsort*`; an unstable sort whose choice's scratch does not fit runs the bitonic sort. The
//! `*_with` calls run the sort they are given.
//!
//! Host slices whose sort does not fit on the device are sorted in chunks that fit and merged
//! on the CPU ([`GpuSorter::set_memory_budget`]); [`GpuSorter::set_progress`] reports on it.

mod auto;
mod bitonic;
mod context;
mod launch;
mod limits;
pub mod merge;
mod modules;
mod overlap;
mod pinned;
mod progress;
pub mod radix;
mod segments;
mod staging;
pub mod topk;

pub use auto::{HostPlan, Sorting};
pub use limits::DeviceLimits;
#[doc(hidden)]
pub use limits::DeviceProfile;
pub use pinned::PinnedBuffer;
pub use progress::{Phase, Progress, ProgressHook};
pub use segments::Segments;

use crate::error::{CudaContext, Error, Result, driver};
use crate::keys::{Order, SortKey, SortValue};
use auto::Pick;
pub(crate) use context::ContextKind;
use context::SorterContext;
use cust::device::Device;
use cust::function::Function;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use cust::sys as cuda;
use kernels_gpu::kernels::{Kernel, KernelArgs};
use kernels_gpu::tuning::MAX_KEYS;
pub(crate) use launch::Shape;
use modules::Modules;
use overlap::Chunked;
use rayon::prelude::*;
use staging::Staging;
use std::sync::{Mutex, PoisonError};

/// How far ahead the blocks of kernel `name`, launched as `(name, threads, shared bytes)` and
/// each reading `tile_bytes`, prefetch on a device of `limits`
/// ([`DeviceLimits::prefetch_ahead`] of its occupancy, counting at most `cap` blocks per
/// multiprocessor).
fn prefetch_ahead(
    module: &Module,
    limits: &DeviceLimits,
    (name, threads, shared, tile_bytes): (&str, u32, u32, u32),
    cap: u32,
) -> Result<u64> {
    let per_multiprocessor = resident_blocks(module, (name, threads, shared))?;
    Ok(limits.prefetch_ahead(per_multiprocessor.min(cap), tile_bytes))
}

/// How many blocks of kernel `name`, launched as `(name, threads, shared bytes)`, a
/// multiprocessor holds at once.
fn resident_blocks(module: &Module, (name, threads, shared): (&str, u32, u32)) -> Result<u32> {
    modules::function(module, name)?
        .max_active_blocks_per_multiprocessor(threads.into(), shared as usize)
        .context(&format!("reading the occupancy of {name}"))
}

/// The kernels of `kernels-gpu`, compiled to PTX by rustc's `nvptx64-nvidia-cuda` target
/// (`cargo xtask ptx` in the repository, which the test command checks is current) and embedded
/// in the library from `kernels.ptx` in its package. A sorter loads it as one module per
/// family of kernels, each the first time a sort needs it; the driver compiles a module for the
/// device then (and keeps the result in its compute cache for later processes).
///
/// # Examples
///
/// ```
/// use gpusort::gpu::KERNELS_PTX;
///
/// assert!(KERNELS_PTX.contains(".entry bitonic_window_u32"));
/// assert!(KERNELS_PTX.contains(".entry bitonic_small_u64"));
/// ```
pub const KERNELS_PTX: &str = include_str!("../../kernels.ptx");

/// The GPU sorts. The default calls choose among them (`auto`: [`GpuAlgo::fastest_for`],
/// [`GpuSorter::auto_device`]); the `*_with` calls take one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum GpuAlgo {
    /// The bitonic network: unstable, in place, no scratch.
    Bitonic,
    /// The merge-path merge sort: stable, with scratch ([`merge::scratch_bytes`]).
    Merge,
    /// The least-significant-digit radix sort (Onesweep): stable, with scratch
    /// ([`radix::scratch_bytes`]); a pass per 8-bit digit.
    Radix,
}

impl GpuAlgo {
    /// Its name on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            GpuAlgo::Bitonic => "bitonic",
            GpuAlgo::Merge => "merge",
            GpuAlgo::Radix => "radix",
        }
    }
}

/// Sorts on one CUDA device.
///
/// Creating one initialises the driver, binds the device's primary context and JIT-compiles
/// the kernels (about 0.2 s and 0.07 s on an H100): create it once and reuse it. Every method
/// that touches the device makes the context current on the calling thread first, so a sorter
/// may move between threads (it is `Send` and `Sync`). Work is queued on one stream of its own,
/// created blocking: it is ordered with CUDA's legacy default stream, where `cust`'s
/// synchronous copies run, so keys copied with them are in place before a sort starts.
/// Host-slice sorts also use a second stream of their own for their copies, which overlap the
/// sort; they return when all is done.
///
/// Dropping it releases the modules, the stream and its hold on the primary context; device
/// buffers made by [`GpuSorter::alloc`] and [`GpuSorter::upload`] are freed by their own drop.
///
/// # Examples
///
/// ```no_run
/// use gpusort::{GpuSorter, Order};
///
/// let sorter = GpuSorter::new()?;
/// println!("sorting on {}", sorter.device_name());
/// let mut keys = vec![0.5f64, -2.0, f64::INFINITY, -0.0];
/// sorter.sort_unstable(&mut keys, Order::Descending)?;
/// assert_eq!(keys, [f64::INFINITY, 0.5, -0.0, -2.0]);
/// # Ok::<(), gpusort::Error>(())
/// ```
///
/// One sorter can serve several threads:
///
/// ```
/// fn shareable<T: Send + Sync>() {}
/// shareable::<gpusort::GpuSorter>();
/// ```
pub struct GpuSorter {
    // Field order is drop order: modules and stream go before the context that owns them.
    /// The kernels, a module per family, each loaded on first use.
    modules: Modules,
    stream: Stream,
    /// The copies of host-slice sorts, which overlap the sort on `stream` (`overlap`).
    copies: Stream,
    /// Pinned slots for host-slice sorts, allocated by the first one.
    staging: Mutex<Option<Staging>>,
    /// Cap on the device memory host-slice sorts plan with ([`GpuSorter::set_memory_budget`]).
    memory_budget: Option<u64>,
    /// Told how sorts in chunks advance ([`GpuSorter::set_progress`]).
    progress: Option<ProgressHook>,
    /// Scratch and barrier counter of the one-launch small sort.
    small: bitonic::Workspace,
    /// The device's limits (capped by a test profile), from which the kernels and shapes of
    /// every sort are chosen.
    limits: DeviceLimits,
    context: SorterContext,
    device: Device,
    name: String,
}

impl Drop for GpuSorter {
    /// Makes the sorter's context current before its fields go: unloading a module acts on the
    /// current context, so with another one current (another device's sorter, say) the modules
    /// would stay loaded.
    fn drop(&mut self) {
        // A failure leaves the modules to go with the context, the best that can be done here.
        let _ = self.bind();
    }
}

impl std::fmt::Debug for GpuSorter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuSorter")
            .field("device", &self.name)
            .field("memory_budget", &self.memory_budget)
            .field("progress_hook", &self.progress.is_some())
            .finish_non_exhaustive()
    }
}

impl GpuSorter {
    /// A sorter on the first CUDA device (ordinal 0, the first in `CUDA_VISIBLE_DEVICES`).
    ///
    /// # Errors
    /// [`Error::NoDriver`] without a usable driver, [`Error::NoDevice`] without a GPU, or
    /// [`Error::Cuda`] / [`Error::DriverCall`] if the context or stream cannot be created.
    /// The kernels load when a sort first needs them; a module the driver cannot load is that
    /// sort's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{Error, GpuSorter};
    ///
    /// match GpuSorter::new() {
    ///     Ok(gpu) => println!("GPU: {}", gpu.device_name()),
    ///     Err(Error::NoDriver(_) | Error::NoDevice) => println!("no GPU: sort on the CPU"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new() -> Result<Self> {
        Self::with_device(0)
    }

    /// A sorter on CUDA device `ordinal`.
    ///
    /// # Errors
    /// As [`GpuSorter::new`], and [`Error::InvalidDevice`] for an ordinal past the last device.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{Error, GpuSorter};
    ///
    /// let second = GpuSorter::with_device(1);
    /// if let Err(Error::InvalidDevice { count, .. }) = &second {
    ///     println!("only {count} device(s)");
    /// }
    /// ```
    pub fn with_device(ordinal: u32) -> Result<Self> {
        Self::with_context(ordinal, ContextKind::Primary, None)
    }

    /// A sorter on CUDA device `ordinal` that chooses its kernels and shapes as on a device
    /// with `profile`'s limits (each the smaller of the device's and the profile's): for tests,
    /// which run the GPU suite on one device as it would run on others.
    ///
    /// # Errors
    /// As [`GpuSorter::with_device`].
    #[doc(hidden)]
    pub fn with_profile(ordinal: u32, profile: DeviceProfile) -> Result<Self> {
        Self::with_context(ordinal, ContextKind::Primary, Some(profile))
    }

    /// A sorter on CUDA device `ordinal` in a context of `kind`, its limits capped by
    /// `profile`.
    pub(crate) fn with_context(
        ordinal: u32,
        kind: ContextKind,
        profile: Option<DeviceProfile>,
    ) -> Result<Self> {
        init_driver()?;
        let count = Device::num_devices().context("counting CUDA devices")?;
        if count == 0 {
            return Err(Error::NoDevice);
        }
        if ordinal >= count {
            return Err(Error::InvalidDevice { ordinal, count });
        }
        let device = Device::get_device(ordinal).context("opening the CUDA device")?;
        let name = device.name().context("reading the device name")?;
        let limits = DeviceLimits::read(&device)?;
        let limits = profile.map_or(limits, |p| limits.capped(p));
        // Current from here on: the streams, the workspace and (later) the modules belong to it.
        let context = SorterContext::open(device, kind)?;
        // The kernels' modules load (the driver compiles them) as sorts first need them.
        let modules = Modules::new(limits);
        // A blocking stream: it waits for work on the legacy default stream, where cust's
        // synchronous copies run (a pageable host-to-device copy may return before its DMA is
        // done), so a sort never starts on keys still in flight.
        let stream = Stream::new(StreamFlags::DEFAULT, None).context("creating a CUDA stream")?;
        // Blocking too; ordered with the sorting stream through events only.
        let copies = Stream::new(StreamFlags::DEFAULT, None).context("creating a CUDA stream")?;
        let staging = Mutex::new(None);
        let small = bitonic::Workspace::new()?;
        Ok(GpuSorter {
            modules,
            stream,
            copies,
            staging,
            memory_budget: None,
            progress: None,
            small,
            limits,
            context,
            device,
            name,
        })
    }

    /// The device's name, e.g. "NVIDIA H200".
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let gpu = gpusort::GpuSorter::new()?;
    /// assert!(!gpu.device_name().is_empty());
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// The device's limits that the sorter chose its kernels and shapes from, read when it was
    /// created: every device from sm_70 (V100, T4, A100, RTX 30xx and 40xx, L4, H100, H200,
    /// …) runs every sort; where a kernel tuned for the H100 and H200 asks for more shared
    /// memory per block than the device has, a compact variant of it runs instead (see
    /// [`DeviceLimits`]).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let gpu = gpusort::GpuSorter::new()?;
    /// let limits = gpu.limits();
    /// println!(
    ///     "sm_{}{}: {} multiprocessors, {} KiB of shared memory per block",
    ///     limits.compute_capability.0,
    ///     limits.compute_capability.1,
    ///     limits.multiprocessors,
    ///     limits.max_shared_per_block / 1024
    /// );
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }

    /// The stream all work of this sorter is queued on (blocking), for queueing more work
    /// in order with a sort: copies, events, other kernels.
    ///
    /// # Examples
    ///
    /// Timing a sort with CUDA events:
    ///
    /// ```no_run
    /// use cust::event::{Event, EventFlags};
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = gpu.upload(&vec![7u32; 1 << 20])?;
    /// let start = Event::new(EventFlags::DEFAULT).unwrap();
    /// let stop = Event::new(EventFlags::DEFAULT).unwrap();
    /// start.record(gpu.stream()).unwrap();
    /// gpu.enqueue_sort_unstable(&mut keys, Order::Ascending)?;
    /// stop.record(gpu.stream()).unwrap();
    /// gpu.synchronize("sorting")?;
    /// println!("{} ms", stop.elapsed_time_f32(&start).unwrap());
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Makes this sorter's context current on the calling thread, for `cust` calls of your own
    /// on this device (the sorter's methods do it themselves).
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver refuses.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use cust::memory::DeviceBuffer;
    ///
    /// let gpu = gpusort::GpuSorter::new()?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| -> gpusort::Result<()> {
    ///         gpu.bind()?; // cust's own calls below need the context on this thread
    ///         let zeros = DeviceBuffer::<u32>::zeroed(1024).expect("allocating");
    ///         assert_eq!(zeros.len(), 1024);
    ///         Ok(())
    ///     });
    /// });
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn bind(&self) -> Result<()> {
        self.context.make_current()
    }

    /// Free and total device memory, in bytes.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver cannot tell.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let gpu = gpusort::GpuSorter::new()?;
    /// let (free, total) = gpu.memory_info()?;
    /// println!("{} of {} MiB free: room for {} u64 keys", free >> 20, total >> 20, free / 8);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        self.bind()?;
        let (free, total) = cust::memory::mem_get_info().context("reading free device memory")?;
        Ok((free as u64, total as u64))
    }

    /// A device buffer of `len` values, checked against free memory first; its contents are
    /// unspecified. `what` names the buffer in an [`Error::OutOfDeviceMemory`].
    ///
    /// The device counterpart of `Vec::with_capacity(len)` followed by filling it: write to it
    /// (with `cust`'s copies or a sort's output) before reading it.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the bytes needed and free, or [`Error::Cuda`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use cust::memory::CopyDestination;
    /// use gpusort::{Error, GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = gpu.alloc::<f32>(3, "my keys")?;
    /// keys.copy_from(&[2.0f32, -1.0, 0.5][..]).expect("copy to the device");
    /// gpu.sort_unstable_device(&mut keys, Order::Ascending)?;
    ///
    /// match gpu.alloc::<u64>(1 << 45, "a huge buffer") {
    ///     Err(Error::OutOfDeviceMemory { requested, free, .. }) => assert!(requested > free),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    pub fn alloc<T: DeviceCopy>(&self, len: usize, what: &'static str) -> Result<DeviceBuffer<T>> {
        let requested = (len as u64).saturating_mul(size_of::<T>() as u64);
        let (free, total) = self.memory_info()?;
        if requested > free {
            return Err(Error::OutOfDeviceMemory {
                what,
                requested,
                free,
                total,
            });
        }
        // SAFETY: DeviceCopy types have no invalid bit patterns the device could create.
        match unsafe { DeviceBuffer::uninitialized(len) } {
            Err(cust::error::CudaError::OutOfMemory) => Err(Error::OutOfDeviceMemory {
                what,
                requested,
                free,
                total,
            }),
            other => other.context("allocating device memory"),
        }
    }

    /// A device copy of `keys`: the device counterpart of `keys.to_vec()`.
    ///
    /// # Errors
    /// As [`GpuSorter::alloc`], and [`Error::Cuda`] if the copy fails.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use cust::memory::CopyDestination;
    ///
    /// let gpu = gpusort::GpuSorter::new()?;
    /// let on_device = gpu.upload(&[5u64, 1, 4])?;
    /// let mut back = [0u64; 3];
    /// on_device.copy_to(&mut back[..]).expect("copy to the host");
    /// assert_eq!(back, [5, 1, 4]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn upload<T: DeviceCopy>(&self, keys: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buffer = self.alloc(keys.len(), "the keys")?;
        buffer
            .copy_from(keys)
            .context("copying keys to the device")?;
        Ok(buffer)
    }

    /// Sorts the host slice `keys` in `order` on the GPU: the counterpart of
    /// [`slice::sort_unstable`].
    ///
    /// This sort is unstable (equal keys may be reordered), but keys equal in its order have the
    /// same bits, so the result is bit for bit std's sort of the same keys. Floats are ordered
    /// like [`f32::total_cmp`]: NaNs with the sign bit set first, then −∞, …, −0.0, +0.0, …, +∞,
    /// the other NaNs; descending is the exact reverse.
    ///
    /// # Current implementation
    ///
    /// Copies the keys into a new device buffer of the same length, sorts it there with
    /// `auto`'s choice ([`GpuSorter::auto_host`] with [`Sorting::Unstable`]), copies it back
    /// and frees it. `auto` takes the fastest of the three sorts end to end for n and the key
    /// width on the device's measured table for host slices (on an H100: the bitonic network up
    /// to 2^26 4-byte or 2^25 8-byte keys, the merge sort above; the radix sort, fastest on the
    /// device from 2^23 keys, cannot overlap the copies; [`kernels_gpu::tuning::auto`]); where
    /// that is the merge sort and its scratch (as large as the keys) does not fit in free device
    /// memory (or the budget of [`GpuSorter::set_memory_budget`]), the bitonic network, which
    /// sorts in place: O(n log² n) compare-exchanges, the same for every input of length n. The
    /// copies go through eight reused 4 MiB pinned slots, filled and emptied on all cores while
    /// the DMA engine moves others, and overlap the sort: the keys go up in chunks of
    /// [`OVERLAP_CHUNK`](kernels_gpu::tuning::OVERLAP_CHUNK) keys, each sorted as soon as it
    /// has landed (by the bitonic and the merge sort; the radix sort waits for all of them), and
    /// the last pass is launched in parts, each copied back as soon as it is written. Device
    /// memory: n keys, and the scratch of the merge or radix sort where one runs; host memory:
    /// the slots, allocated by the first host-slice sort. Keys that do not fit even alone are
    /// sorted in chunks that do and merged on the CPU. For 0 or 1 keys it returns at once,
    /// without touching the device. With keys already on the device, call
    /// [`GpuSorter::sort_unstable_device`] and save both copies; [`GpuSorter::sort_with`] runs
    /// a sort of your choice.
    ///
    /// # Errors
    /// [`Error::TooLong`] beyond [`MAX_KEYS`] keys, [`Error::OutOfDeviceMemory`] if a buffer
    /// does not fit after all, or [`Error::Cuda`] if a copy, launch or the sort fails. On error
    /// `keys` is unchanged unless the final copy back failed.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut v = vec![-5i32, 4, 1, -3, 2];
    /// gpu.sort_unstable(&mut v, Order::Ascending)?;
    /// assert_eq!(v, [-5, -3, 1, 2, 4]);
    ///
    /// let mut f = vec![0.0f32, f32::NAN, -0.0, f32::NEG_INFINITY];
    /// gpu.sort_unstable(&mut f, Order::Descending)?;
    /// assert!(f[0].is_nan());
    /// assert_eq!(f[1..].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
    ///            [0.0f32.to_bits(), (-0.0f32).to_bits(), f32::NEG_INFINITY.to_bits()]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_unstable<K: SortKey>(&self, keys: &mut [K], order: Order) -> Result<()> {
        self.sort_keys(Pick::Auto(Sorting::Unstable), keys, order)
    }

    /// Caps the device memory that host-slice sorts ([`GpuSorter::sort_unstable`],
    /// [`GpuSorter::sort`], [`GpuSorter::sort_by_key`], [`GpuSorter::sort_pairs`],
    /// [`GpuSorter::argsort`]) plan with, and the scratch that `auto` gives the default device
    /// sorts ([`GpuSorter::auto_device`]); `None` (the default) means the memory free when they
    /// start. Keys (and values) whose sort needs more are sorted in chunks that fit, one after
    /// another, and the sorted chunks are merged on the CPU (stably, on all cores), with a host
    /// buffer as large as the keys and values; an unstable sort whose faster choice's scratch
    /// does not fit runs the in-place bitonic sort instead. Mostly for testing those paths
    /// without filling a GPU.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let mut gpu = GpuSorter::new()?;
    /// gpu.set_memory_budget(Some(64 << 20)); // 64 MiB: 2^26 u64 keys go in chunks
    /// let mut keys: Vec<u64> = (0..1u64 << 26).rev().collect();
    /// gpu.sort(&mut keys, Order::Ascending)?;
    /// assert!(keys.is_sorted());
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn set_memory_budget(&mut self, bytes: Option<u64>) {
        self.memory_budget = bytes;
    }

    /// Sets the hook that host-slice sorts in chunks (those that do not fit on the device, see
    /// [`GpuSorter::set_memory_budget`]) report their [`Progress`] to, or removes it (`None`).
    /// Sorts that fit on the device in one piece do not call it.
    ///
    /// The hook is called on the sorting thread after each chunk is sorted, and by the merging
    /// threads, one call at a time, after each piece of the merge (64 Ki keys): keep it short,
    /// e.g. updating a progress bar.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::gpu::{Phase, Progress};
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let mut gpu = GpuSorter::new()?;
    /// gpu.set_memory_budget(Some(16 << 20));
    /// gpu.set_progress(Some(Box::new(|p: Progress| {
    ///     if p.done == p.total {
    ///         eprintln!("{:?} done: {} keys", p.phase, p.total);
    ///     }
    /// })));
    /// let mut keys: Vec<u32> = (0..10_000_000u32).rev().collect();
    /// gpu.sort(&mut keys, Order::Ascending)?; // prints "Sorting done", then "Merging done"
    /// gpu.set_progress(None);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn set_progress(&mut self, hook: Option<ProgressHook>) {
        self.progress = hook;
    }

    fn report(&self, progress: Progress) {
        if let Some(hook) = &self.progress {
            hook(progress);
        }
    }

    /// Every host-slice sort: `keys` sorted with `pick` (a named sort or `auto`'s), `values`
    /// (one per key; zero-sized for keys alone, or any payload of up to 16 bytes for the stable
    /// sorts) permuted with them. Sorted on the device in one round trip when keys, values and
    /// scratch fit there, else in chunks that fit, merged on the CPU ([`auto::plan_host`]).
    fn sort_host<K: SortKey, P: Copy + Send + Sync>(
        &self,
        pick: Pick,
        keys: HostKeys<'_, K>,
        values: &mut [P],
        order: Order,
    ) -> Result<()> {
        let slot = value_slot::<P>()?;
        check_pairs(keys.len(), values.len())?;
        let n = keys.len();
        if n <= 1 {
            return Ok(());
        }
        check_len(n)?;
        let room = self.room()?;
        let plan = self.plan_host::<K>(pick, n, slot, room);
        match plan.chunk {
            None => self.sort_fitting(keys, values, order, plan.algo),
            Some(chunk) => {
                // The chunks are sorted in place and merged: an argsort's keys need a copy.
                let mut copy = Vec::new();
                let keys = match keys {
                    HostKeys::Sort(keys) => keys,
                    HostKeys::Read(keys) => {
                        keys.par_iter().copied().collect_into_vec(&mut copy);
                        &mut copy[..]
                    }
                };
                self.sort_in_chunks(keys, values, chunk as usize, order, (pick, room))
            }
        }
    }

    /// The device memory that host-slice sorts and `auto` plan with: the memory free now, or
    /// the budget if that is less, less a sixteenth kept back for the small buffers.
    fn room(&self) -> Result<u64> {
        let (free, _) = self.memory_info()?;
        let room = self.memory_budget.map_or(free, |budget| budget.min(free));
        Ok(room - room / 16)
    }

    /// [`auto::plan_host`] on this device for `n` keys of `K` with values in slots of `slot`
    /// bytes and `room` bytes of device memory.
    fn plan_host<K: SortKey>(&self, pick: Pick, n: usize, slot: usize, room: u64) -> HostPlan {
        let (table, max_shared) = (self.limits.auto_table(), self.limits.max_shared_per_block);
        auto::plan_host(
            table,
            pick,
            n as u64,
            size_of::<K>(),
            slot,
            room,
            max_shared,
        )
    }

    /// Sorts `keys` (and `values`) chunk by chunk, each with the sort `pick` names or with
    /// `auto`'s choice for its length in `room` bytes, then merges the sorted chunks on the CPU.
    /// Values hold whatever the caller put there: an argsort's indices are positions in the
    /// whole input, so equal keys of different chunks merge in input order.
    fn sort_in_chunks<K: SortKey, P: Copy + Send + Sync>(
        &self,
        keys: &mut [K],
        values: &mut [P],
        chunk: usize,
        order: Order,
        (pick, room): (Pick, u64),
    ) -> Result<()> {
        let n = keys.len() as u64;
        let slot = value_slot::<P>()?;
        let mut sorted = 0;
        for (part, part_values) in keys.chunks_mut(chunk).zip(values.chunks_mut(chunk)) {
            sorted += part.len() as u64;
            let algo = self.plan_host::<K>(pick, part.len(), slot, room).algo;
            self.sort_fitting(HostKeys::Sort(part), part_values, order, algo)?;
            self.report(Progress::new(Phase::Sorting, sorted, n));
        }
        let total = n * u64::from(crate::cpu::merge_rounds(keys.len(), chunk));
        let merged = Mutex::new(0);
        let written = |count: usize| {
            if self.progress.is_some() {
                let mut done = merged.lock().unwrap_or_else(PoisonError::into_inner);
                *done += count as u64;
                self.report(Progress::new(Phase::Merging, *done, total));
            }
        };
        crate::cpu::merge_runs(keys, values, chunk, |k| k.ordered_bits(order), &written);
        Ok(())
    }

    /// Sorts host keys (and values) that fit on the device with `algo`: one round trip, the
    /// copies overlapping the sort ([`overlap`]).
    fn sort_fitting<K: SortKey, P: Copy>(
        &self,
        keys: HostKeys<'_, K>,
        values: &mut [P],
        order: Order,
        algo: GpuAlgo,
    ) -> Result<()> {
        check_len(keys.len())?;
        let slot = value_slot::<P>()?;
        let n = keys.len() as u64;
        let key_bytes = size_of::<K>();
        let map = K::key_map(order);
        self.bind()?;
        if algo == GpuAlgo::Bitonic {
            assert_eq!(slot, 0, "the bitonic sort carries no values");
            return self.round_trip(keys, values, |keys, _| {
                Ok(bitonic::Chunked {
                    sorter: self,
                    keys,
                    n,
                    key_bytes,
                    map,
                })
            });
        }
        // `buffer` lives until the round trip has waited for the sort.
        let buffer = self.scratch_for::<K>(algo, keys.len(), slot)?;
        let (scratch, max_shared) = (buffer.device_ptr(), self.limits.max_shared_per_block);
        if algo == GpuAlgo::Radix {
            self.round_trip(keys, values, |keys, values| {
                let launch = radix::Launch {
                    keys,
                    values,
                    scratch,
                    n,
                    key_bytes,
                    value_bytes: slot,
                    map,
                };
                Ok(Chunked {
                    sorter: self,
                    launch,
                })
            })
        } else {
            self.round_trip(keys, values, |keys, values| {
                let launch = merge::Launch {
                    keys,
                    values,
                    scratch,
                    n,
                    key_bytes,
                    value_bytes: slot,
                    encode: map,
                    decode: map,
                    max_shared,
                };
                Ok(Chunked {
                    sorter: self,
                    launch,
                })
            })
        }
    }

    /// Sorts keys already on the device, in place, and waits for the sort to finish: the
    /// device counterpart of [`slice::sort_unstable`] on a `&mut [K]`.
    ///
    /// Guarantees as [`GpuSorter::sort_unstable`]. When it returns `Ok`, the keys are sorted
    /// and may be read through any stream.
    ///
    /// # Current implementation
    ///
    /// `auto`'s choice ([`GpuSorter::auto_device`] with [`Sorting::Unstable`]): the fastest of
    /// the three sorts for n and the key width on the device's measured table; where that is
    /// the merge or the radix sort, it allocates (and frees) its scratch, about the size of the
    /// keys, if that fits in free device memory (and the budget of
    /// [`GpuSorter::set_memory_budget`]); where it does not, or the table says so, the bitonic
    /// network, in place, with no temporary device memory. [`GpuSorter::sort_device_with`] runs
    /// the sort you name.
    ///
    /// The bitonic network: up to
    /// [`SMALL_SORT_MAX_KEYS`](kernels_gpu::tuning::SMALL_SORT_MAX_KEYS) (2^16) keys it is one
    /// launch ([`kernels_gpu::small`]): up to 4096 keys one block sorts them in registers; above,
    /// 2 to 16 blocks sort 4096-key tiles and finish the network in a few *windows*, exchanging
    /// keys through a 512 KiB workspace the sorter allocated once, with grid barriers between
    /// windows. Longer inputs take one tile-sort launch (8192-key tiles), then *window passes*
    /// ([`kernels_gpu::window`]): each launch's blocks hold 8192 keys that agree on all but 13
    /// index bits and run as many of the network's following steps on those bits as they can,
    /// in registers, warp shuffles and shared memory (23 launches at 2^25 keys, 31 at 2^28).
    /// Keys are mapped to order-preserving unsigned bits as they are first loaded and mapped
    /// back as they are last stored, so signed, float and descending sorts cost no extra pass.
    ///
    /// # Errors
    /// [`Error::TooLong`] beyond [`MAX_KEYS`] keys, or [`Error::Cuda`] (launch or execution
    /// failure, including earlier work on the sorter's stream that failed).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use cust::memory::CopyDestination;
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut on_device = gpu.upload(&[5u64, 1, 4, 1])?;
    /// gpu.sort_unstable_device(&mut on_device, Order::Descending)?;
    /// let mut back = [0u64; 4];
    /// on_device.copy_to(&mut back[..]).expect("copy to the host");
    /// assert_eq!(back, [5, 4, 1, 1]);
    ///
    /// // A part of a buffer is a `DeviceSlice` too:
    /// gpu.sort_unstable_device(&mut on_device.index(1..), Order::Ascending)?;
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_unstable_device<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        let algo = self.auto_device::<K>(Sorting::Unstable, keys.len())?;
        if algo != GpuAlgo::Bitonic {
            match self.scratch_for::<K>(algo, keys.len(), 0) {
                Ok(mut scratch) => {
                    self.enqueue_sort_with(algo, keys, order, &mut scratch)?;
                    return self.synchronize(&format!("running the {} sort", algo.name()));
                }
                // Less memory than a moment ago: the bitonic sort needs none.
                Err(Error::OutOfDeviceMemory { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.enqueue_sort_with(GpuAlgo::Bitonic, keys, order, &mut Scratch::none())?;
        self.synchronize("running the bitonic sort")
    }

    /// Queues the in-place sort of device keys on [`GpuSorter::stream`] and returns without
    /// waiting; [`GpuSorter::synchronize`] waits for it.
    ///
    /// The keys are sorted once the stream reaches the end of the queued work. Until then,
    /// read or write them only through work queued on the same stream or on the legacy default
    /// stream (where `cust`'s synchronous copies run; the sorter's stream is blocking, so they are
    /// ordered after the sort). The borrow of `keys` ends when this returns: keep the buffer
    /// alive until the stream is synchronised.
    ///
    /// # Current implementation
    ///
    /// As [`GpuSorter::sort_unstable_device`], `auto`'s choice, except for the merge or radix
    /// sort's scratch: it is allocated in the order of the sorter's stream
    /// (`cuMemAllocAsync`, from the device's memory pool) and freed there right after the
    /// sort's launches (`cuMemFreeAsync`), so the memory goes back once the stream has run the
    /// sort, before the next synchronisation returns. Where the device has no memory pools, or
    /// the pool cannot supply the scratch, the bitonic network runs, in place.
    ///
    /// # Errors
    /// [`Error::TooLong`] beyond [`MAX_KEYS`] keys, or [`Error::Cuda`] /
    /// [`Error::DriverCall`] if a launch or the scratch's allocation is refused; execution
    /// errors show at the next synchronisation.
    ///
    /// # Examples
    ///
    /// Sorting two buffers back to back and waiting once:
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut a = gpu.upload(&[3u32, 1, 2])?;
    /// let mut b = gpu.upload(&[-1.5f32, 9.0, 0.0])?;
    /// gpu.enqueue_sort_unstable(&mut a, Order::Ascending)?;
    /// gpu.enqueue_sort_unstable(&mut b, Order::Descending)?;
    /// gpu.synchronize("sorting a and b")?; // now a and b may be read
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn enqueue_sort_unstable<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        check_len(keys.len())?;
        let (keys, len) = (keys.as_device_ptr().as_raw(), keys.len());
        let algo = self.auto_device::<K>(Sorting::Unstable, len)?;
        if algo != GpuAlgo::Bitonic {
            let bytes = self.scratch_bytes::<K>(algo, len, 0);
            if let Some(scratch) = self.stream_scratch(bytes)? {
                return self.enqueue_scratch_sort::<K>(
                    algo,
                    (keys, 0, 0),
                    len,
                    order,
                    scratch.range,
                );
            }
        }
        self.enqueue_scratch_sort::<K>(GpuAlgo::Bitonic, (keys, 0, 0), len, order, (0, 0))
    }

    /// Sorts `keys` stably (equal keys keep their order; floats as `total_cmp`) through device
    /// buffers: the counterpart of [`slice::sort`].
    ///
    /// `auto` chooses the sort ([`GpuSorter::auto_host`] with [`Sorting::Stable`]): the faster
    /// end to end of the merge-path merge sort and the radix sort for n and the key width on the
    /// device's measured table for host slices (on an H100 the merge sort, whose chunks are
    /// sorted as they land, but for 2^17 to 2^20 4-byte keys: the radix sort);
    /// [`GpuSorter::sort_with`] runs the one you name.
    /// Device memory: the keys plus the sort's scratch ([`merge::scratch_bytes`],
    /// [`radix::scratch_bytes`]: about as much again). Keys whose sort does not fit (or exceeds
    /// [`GpuSorter::set_memory_budget`]) are sorted in chunks that fit and merged on the CPU,
    /// stably, with a host buffer as large as the keys.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`]. On error `keys`
    /// is unchanged unless the final copy back failed, or a chunk was already sorted.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = vec![2.5f64, -1.0, f64::NAN, -0.0, 0.0];
    /// gpu.sort(&mut keys, Order::Ascending)?;
    /// assert_eq!(keys[..4], [-1.0, -0.0, 0.0, 2.5]);
    /// assert!(keys[4].is_nan());
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort<K: SortKey>(&self, keys: &mut [K], order: Order) -> Result<()> {
        self.sort_keys(Pick::Auto(Sorting::Stable), keys, order)
    }

    /// Sorts keys already on the device stably, in place, and waits: `auto`'s stable sort
    /// ([`GpuSorter::auto_device`] with [`Sorting::Stable`], as [`GpuSorter::sort`] chooses).
    /// Allocates (and frees) its scratch, about the size of the keys
    /// ([`merge::scratch_bytes`], [`radix::scratch_bytes`]), after checking that much memory
    /// is free; a stable sort has no in-place fallback.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    pub fn sort_device<K: SortKey>(&self, keys: &mut DeviceSlice<K>, order: Order) -> Result<()> {
        check_len(keys.len())?;
        let algo = self.auto_device::<K>(Sorting::Stable, keys.len())?;
        self.sort_device_with(algo, keys, order)
    }

    /// `auto`'s sort for `sorting` of `n` keys of type `K` already on the device: the one
    /// [`GpuSorter::sort_unstable_device`], [`GpuSorter::enqueue_sort_unstable`],
    /// [`GpuSorter::sort_device`] and [`GpuSorter::sort_pairs_device`] run. The fastest for n,
    /// the key width and the values on the device's measured table for keys on the device
    /// ([`DeviceLimits::auto_table`]; [`GpuAlgo::fastest_for`] reads the H100's); for
    /// [`Sorting::Unstable`], the bitonic sort where that choice's scratch does not fit in the
    /// free device memory (or the budget of [`GpuSorter::set_memory_budget`]), less a sixteenth.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the free memory cannot be read.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::GpuSorter;
    /// use gpusort::gpu::Sorting;
    ///
    /// let mut gpu = GpuSorter::new()?;
    /// println!("2^25 u32 keys: {:?}", gpu.auto_device::<u32>(Sorting::Unstable, 1 << 25)?);
    /// gpu.set_memory_budget(Some(1 << 20)); // no room for a scratch buffer of 128 MiB
    /// assert_eq!(
    ///     gpu.auto_device::<u32>(Sorting::Unstable, 1 << 25)?,
    ///     gpusort::gpu::GpuAlgo::Bitonic
    /// );
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn auto_device<K: SortKey>(&self, sorting: Sorting, n: usize) -> Result<GpuAlgo> {
        let (table, key_bytes) = (&self.limits.auto_table().device, size_of::<K>());
        let algo = auto::fastest(table, sorting, n as u64, key_bytes);
        if sorting.is_stable() || algo == GpuAlgo::Bitonic {
            return Ok(algo);
        }
        let max_shared = self.limits.max_shared_per_block;
        let spare = self.room()?;
        Ok(auto::choose(
            table, sorting, n as u64, key_bytes, spare, max_shared,
        ))
    }

    /// How a host-slice sort of `n` keys of type `K` runs with `auto` for `sorting` (for
    /// [`Sorting::Pairs`], `value_bytes` is the slot the values travel in: 4, 8 or 16): the
    /// sort [`GpuSorter::sort_unstable`], [`GpuSorter::sort`], [`GpuSorter::sort_pairs`],
    /// [`GpuSorter::sort_by_key`] and [`GpuSorter::argsort`] would run with the memory free
    /// now, and whether in chunks. The choice is the device table's for host slices, measured
    /// end to end (the copies overlap the bitonic and the merge sort, not the radix sort). The
    /// keys, values and the choice's scratch go on the device
    /// whole where they fit in free memory (and the budget), less a sixteenth; an unstable sort
    /// that does not fit with its scratch runs the bitonic sort whole if the keys alone fit;
    /// else the keys go in chunks that fit, each sorted with `auto`'s choice for its length,
    /// merged on the CPU.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the free memory cannot be read.
    pub fn auto_host<K: SortKey>(&self, sorting: Sorting, n: usize) -> Result<HostPlan> {
        let room = self.room()?;
        Ok(self.plan_host::<K>(Pick::Auto(sorting), n, sorting.value_bytes(), room))
    }

    /// Scratch for the merge sort of `len` keys of type `K` with values of `value_bytes`
    /// bytes each (0 for keys only, 4, 8 or 16), checked against free memory first
    /// ([`GpuSorter::scratch_for`] with [`GpuAlgo::Merge`]).
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the bytes needed and free, or [`Error::Cuda`].
    pub fn sort_scratch<K: SortKey>(&self, len: usize, value_bytes: usize) -> Result<Scratch> {
        self.scratch_for::<K>(GpuAlgo::Merge, len, value_bytes)
    }

    /// Scratch for a sort with `algo` of `len` keys of type `K` with values of `value_bytes`
    /// bytes each (0 for keys only, 4, 8 or 16), checked against free memory first: none for
    /// the bitonic sort, [`merge::scratch_bytes`] or [`radix::scratch_bytes`] for the others.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the bytes needed and free, or [`Error::Cuda`].
    pub fn scratch_for<K: SortKey>(
        &self,
        algo: GpuAlgo,
        len: usize,
        value_bytes: usize,
    ) -> Result<Scratch> {
        let bytes = self.scratch_bytes::<K>(algo, len, value_bytes);
        let what = match algo {
            GpuAlgo::Bitonic => "",
            GpuAlgo::Merge => "the merge sort's scratch",
            GpuAlgo::Radix => "the radix sort's scratch",
        };
        // Device allocations start 256-aligned; the layouts align each part within.
        let buffer = if bytes == 0 {
            None
        } else {
            Some(self.alloc::<u64>(bytes.div_ceil(8) as usize, what)?)
        };
        Ok(Scratch { buffer, bytes })
    }

    /// Queues the sort of device keys with `algo` on [`GpuSorter::stream`] without waiting,
    /// using `scratch` (from [`GpuSorter::scratch_for`] with the same `algo`, for at least this
    /// many keys of this type; it must live until the stream is synchronised).
    ///
    /// # Errors
    /// [`Error::TooLong`], or [`Error::Cuda`] if a launch is refused.
    ///
    /// # Panics
    /// If `scratch` is too small.
    pub fn enqueue_sort_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        order: Order,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let (len, keys) = (keys.len(), (keys.as_device_ptr().as_raw(), 0, 0));
        self.enqueue_scratch_sort::<K>(algo, keys, len, order, scratch.range())
    }

    /// Sorts keys already on the device with `algo` and waits for the sort: scratch from
    /// [`GpuSorter::scratch_for`], [`GpuSorter::enqueue_sort_with`], then a wait.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    pub fn sort_device_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        let mut scratch = self.scratch_for::<K>(algo, keys.len(), 0)?;
        self.enqueue_sort_with(algo, keys, order, &mut scratch)?;
        self.synchronize(&format!("running the {} sort", algo.name()))
    }

    /// Queues the stable merge sort of device keys on [`GpuSorter::stream`] without waiting,
    /// using `scratch` (from [`GpuSorter::sort_scratch`] for at least this many keys of this
    /// type; it must live until the stream is synchronised). `auto`'s stable sort, queued:
    /// [`GpuSorter::auto_device`], [`GpuSorter::scratch_for`], [`GpuSorter::enqueue_sort_with`].
    ///
    /// # Errors
    /// [`Error::TooLong`], or [`Error::Cuda`] if a launch is refused.
    ///
    /// # Panics
    /// If `scratch` is too small.
    pub fn enqueue_sort<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
        scratch: &mut Scratch,
    ) -> Result<()> {
        self.enqueue_sort_with(GpuAlgo::Merge, keys, order, scratch)
    }

    /// Sorts `keys` stably and applies the same permutation to `values` (one per key): `auto`'s
    /// stable sort (the merge or the radix sort) with the values carried along, as in
    /// [`GpuSorter::sort_by_key`]. Values are `u32`, `u64` or `u128` ([`SortValue`]);
    /// [`GpuSorter::sort_by_key`] takes any payload of up to 16 bytes.
    ///
    /// Device memory: keys and values, twice over (see [`merge::scratch_bytes`],
    /// [`radix::scratch_bytes`]); pairs that do not fit are sorted in chunks and merged on the
    /// CPU, as in [`GpuSorter::sort_by_key`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or
    /// [`Error::Cuda`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = [3i32, 1, 3, 2];
    /// let mut values = [10u64, 11, 12, 13];
    /// gpu.sort_pairs(&mut keys, &mut values, Order::Ascending)?;
    /// assert_eq!((keys, values), ([1, 2, 3, 3], [11, 13, 10, 12]));
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_pairs<K: SortKey, V: SortValue>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        order: Order,
    ) -> Result<()> {
        self.sort_by_key(keys, values, order)
    }

    /// Sorts `keys` stably and moves each payload with its key: `payload[i]` belongs to
    /// `keys[i]` before and after. The counterpart of sorting `(key, payload)` pairs with
    /// [`slice::sort_by_key`] on the key (and of thrust's `stable_sort_by_key`).
    ///
    /// `P` is any `Copy` type of at most 16 bytes (structs, arrays, tuples, padding and
    /// all). The kernels only move payloads, never look at them: payloads of 4, 8 or 16 bytes
    /// travel as they are; others are spread into slots of 4, 8 or 16 bytes as they are
    /// copied to the device, and packed again on the way back, their padding bytes copied
    /// along as bytes (a zero-sized `P` is a sort of the keys alone). For larger records, sort
    /// indices ([`GpuSorter::argsort`]) and gather the records through them.
    ///
    /// # Current implementation
    ///
    /// `auto`'s stable sort with the payloads carried along ([`GpuSorter::auto_host`] with
    /// [`Sorting::Pairs`]): the faster of the merge-path merge sort and the radix sort for n and
    /// the key width on the device's table for host slices (its pairs breakpoints are, until a
    /// sweep with values exists, those measured with keys alone:
    /// [`kernels_gpu::tuning::auto::HOST_PAIRS_32`]);
    /// [`GpuSorter::sort_by_key_with`] runs the one you name. Device memory: keys and payload
    /// slots, twice over ([`merge::scratch_bytes`], [`radix::scratch_bytes`]). When that does
    /// not fit in free device memory (or the budget of [`GpuSorter::set_memory_budget`]),
    /// chunks that fit are sorted one after another and merged on the CPU, stably and on all
    /// cores, with host buffers as large as the keys and payloads; [`GpuSorter::set_progress`]
    /// reports on it.
    /// Copies go through the sorter's pinned staging slots and overlap the sort, as in
    /// [`GpuSorter::sort_unstable`].
    ///
    /// # Errors
    /// [`Error::PayloadTooLarge`] for a `P` of more than 16 bytes, [`Error::LengthMismatch`],
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{Error, GpuSorter, Order};
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq)]
    /// struct Station {
    ///     id: u16,
    ///     code: [u8; 3],
    /// }
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut temperatures = [21.5f32, 19.0, 21.5, -3.0];
    /// let mut stations = [
    ///     Station { id: 1, code: *b"OSL" },
    ///     Station { id: 2, code: *b"BER" },
    ///     Station { id: 3, code: *b"ROM" },
    ///     Station { id: 4, code: *b"HEL" },
    /// ];
    /// gpu.sort_by_key(&mut temperatures, &mut stations, Order::Descending)?;
    /// assert_eq!(temperatures, [21.5, 21.5, 19.0, -3.0]);
    /// let ids: Vec<u16> = stations.iter().map(|s| s.id).collect();
    /// assert_eq!(ids, [1, 3, 2, 4]); // 1 before 3: stable
    ///
    /// let mut too_large = [[0u8; 17]; 4];
    /// assert!(matches!(
    ///     gpu.sort_by_key(&mut temperatures, &mut too_large, Order::Ascending),
    ///     Err(Error::PayloadTooLarge { size: 17, max: 16 })
    /// ));
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_by_key<K: SortKey, P: Copy + Send + Sync>(
        &self,
        keys: &mut [K],
        payload: &mut [P],
        order: Order,
    ) -> Result<()> {
        let value_bytes = value_slot::<P>()?;
        let sorting = if value_bytes == 0 {
            Sorting::Stable
        } else {
            Sorting::Pairs { value_bytes }
        };
        self.sort_host(Pick::Auto(sorting), HostKeys::Sort(keys), payload, order)
    }

    /// [`GpuSorter::sort_by_key`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`] (device memory: keys and payload slots twice over, and
    /// [`radix::scratch_bytes`]'s status words).
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::sort_by_key`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::gpu::GpuAlgo;
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = [3u64, 1, 3, 2];
    /// let mut names = [*b"c0", *b"a0", *b"c1", *b"b0"];
    /// gpu.sort_by_key_with(GpuAlgo::Radix, &mut keys, &mut names, Order::Ascending)?;
    /// assert_eq!(names, [*b"a0", *b"b0", *b"c0", *b"c1"]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn sort_by_key_with<K: SortKey, P: Copy + Send + Sync>(
        &self,
        algo: GpuAlgo,
        keys: &mut [K],
        payload: &mut [P],
        order: Order,
    ) -> Result<()> {
        stable(algo)?;
        self.sort_host(Pick::Algo(algo), HostKeys::Sort(keys), payload, order)
    }

    /// [`GpuSorter::sort_pairs`] on device buffers, in place; waits. Values are `u32`, `u64` or
    /// `u128` ([`SortValue`]). `auto`'s stable sort ([`GpuSorter::auto_device`] with
    /// [`Sorting::Pairs`]); allocates (and frees) its scratch ([`merge::scratch_bytes`],
    /// [`radix::scratch_bytes`]).
    ///
    /// # Errors
    /// As [`GpuSorter::sort_pairs`].
    pub fn sort_pairs_device<K: SortKey, V: SortValue>(
        &self,
        keys: &mut DeviceSlice<K>,
        values: &mut DeviceSlice<V>,
        order: Order,
    ) -> Result<()> {
        let value_bytes = size_of::<V>();
        let algo = self.auto_device::<K>(Sorting::Pairs { value_bytes }, keys.len())?;
        self.sort_pairs_device_with(algo, keys, values, order)
    }

    /// [`GpuSorter::sort_pairs_device`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`]. Allocates (and frees) its scratch ([`GpuSorter::scratch_for`]).
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::sort_pairs`].
    pub fn sort_pairs_device_with<K: SortKey, V: SortValue>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        values: &mut DeviceSlice<V>,
        order: Order,
    ) -> Result<()> {
        stable(algo)?;
        check_pairs(keys.len(), values.len())?;
        let mut scratch = self.scratch_for::<K>(algo, keys.len(), size_of::<V>())?;
        self.enqueue_sort_pairs_with(algo, keys, values, order, &mut scratch)?;
        // `scratch` lives until the sort is done.
        self.synchronize(&format!("running the {} sort of pairs", algo.name()))
    }

    /// Queues the stable sort with `algo` of device keys and their values on
    /// [`GpuSorter::stream`] without waiting, using `scratch` (from [`GpuSorter::scratch_for`]
    /// with the same `algo`, for at least this many keys of this type with values of this
    /// type; it must live until the stream is synchronised).
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`], [`Error::LengthMismatch`],
    /// [`Error::TooLong`], or [`Error::Cuda`] if a launch is refused.
    ///
    /// # Panics
    /// If `scratch` is too small.
    pub fn enqueue_sort_pairs_with<K: SortKey, V: SortValue>(
        &self,
        algo: GpuAlgo,
        keys: &mut DeviceSlice<K>,
        values: &mut DeviceSlice<V>,
        order: Order,
        scratch: &mut Scratch,
    ) -> Result<()> {
        stable(algo)?;
        check_pairs(keys.len(), values.len())?;
        let buffers = (
            keys.as_device_ptr().as_raw(),
            values.as_device_ptr().as_raw(),
            size_of::<V>(),
        );
        self.enqueue_scratch_sort::<K>(algo, buffers, keys.len(), order, scratch.range())
    }

    /// The stable permutation that sorts `keys` in `order`, as `u64` indices (any length):
    /// `keys[perm[0]], keys[perm[1]], …` is sorted, equal keys in input order. `keys` is not
    /// changed. The keys are sorted with their indices by `auto`'s stable sort, as in
    /// [`GpuSorter::sort_pairs`] ([`GpuSorter::argsort_with`] runs the one you name). Device
    /// memory: 2 × (keys + 8 bytes per key), and the radix sort's status words where it runs;
    /// keys that do not fit are sorted in chunks (with the indices of the whole input) and
    /// merged on the CPU, with a host copy of the keys.
    ///
    /// # Errors
    /// As [`GpuSorter::sort_pairs`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let ages = [36u32, 25, 36, 19];
    /// assert_eq!(gpu.argsort(&ages, Order::Ascending)?, [3, 1, 0, 2]);
    /// assert_eq!(gpu.argsort(&ages, Order::Descending)?, [0, 2, 1, 3]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn argsort<K: SortKey>(&self, keys: &[K], order: Order) -> Result<Vec<u64>> {
        let sorting = Sorting::Pairs { value_bytes: 8 };
        self.argsort_as::<K, u64>(Pick::Auto(sorting), keys, order)
    }

    /// [`GpuSorter::argsort`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`].
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::argsort`].
    pub fn argsort_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &[K],
        order: Order,
    ) -> Result<Vec<u64>> {
        stable(algo)?;
        self.argsort_as::<K, u64>(Pick::Algo(algo), keys, order)
    }

    /// [`GpuSorter::argsort`] with `u32` indices: less memory and traffic (2 × (keys + 4 bytes
    /// per key)), for up to 2^32 keys.
    ///
    /// # Errors
    /// [`Error::TooLong`] past 2^32 keys; otherwise as [`GpuSorter::sort_pairs`].
    pub fn argsort_u32<K: SortKey>(&self, keys: &[K], order: Order) -> Result<Vec<u32>> {
        let sorting = Sorting::Pairs { value_bytes: 4 };
        self.argsort_u32_as(Pick::Auto(sorting), keys, order)
    }

    /// [`GpuSorter::argsort_u32`] with a chosen stable sort: [`GpuAlgo::Merge`] or
    /// [`GpuAlgo::Radix`].
    ///
    /// # Errors
    /// [`Error::NotStable`] for [`GpuAlgo::Bitonic`]; otherwise as [`GpuSorter::argsort_u32`].
    pub fn argsort_u32_with<K: SortKey>(
        &self,
        algo: GpuAlgo,
        keys: &[K],
        order: Order,
    ) -> Result<Vec<u32>> {
        stable(algo)?;
        self.argsort_u32_as(Pick::Algo(algo), keys, order)
    }

    /// [`GpuSorter::argsort_as`] with `u32` indices, for up to 2^32 keys.
    fn argsort_u32_as<K: SortKey>(&self, pick: Pick, keys: &[K], order: Order) -> Result<Vec<u32>> {
        let max = u64::from(u32::MAX) + 1;
        if keys.len() as u64 > max {
            return Err(Error::TooLong {
                len: keys.len() as u64,
                max,
            });
        }
        self.argsort_as::<K, u32>(pick, keys, order)
    }

    /// The stable sort of the indices `0..n` by `keys`: the keys are only read (on the device
    /// they are sorted with the indices, and only the indices come back).
    fn argsort_as<K: SortKey, V: SortValue>(
        &self,
        pick: Pick,
        keys: &[K],
        order: Order,
    ) -> Result<Vec<V>> {
        let mut indices: Vec<V> = (0..keys.len() as u64)
            .into_par_iter()
            .map(V::from_index)
            .collect();
        self.sort_host(pick, HostKeys::Read(keys), &mut indices, order)?;
        Ok(indices)
    }

    /// Bytes of scratch `algo` needs for `len` keys of type `K` with values of `value_bytes`
    /// on this device ([`merge::scratch_bytes`], [`radix::scratch_bytes`]; none for the
    /// bitonic sort).
    fn scratch_bytes<K: SortKey>(&self, algo: GpuAlgo, len: usize, value_bytes: usize) -> u64 {
        let max_shared = self.limits.max_shared_per_block;
        auto::scratch_bytes(algo, len as u64, size_of::<K>(), value_bytes, max_shared)
    }

    /// Queues the sort with `algo` of `len` keys at device address `keys` and their values at
    /// `values` (`value_bytes` each; 0 for none), given as `(keys, values, value_bytes)`, with
    /// the scratch at `scratch` = (address, bytes): at least what `algo` needs.
    ///
    /// # Panics
    /// If the scratch is too small, or the bitonic sort is given values.
    fn enqueue_scratch_sort<K: SortKey>(
        &self,
        algo: GpuAlgo,
        (keys, values, value_bytes): (u64, u64, usize),
        len: usize,
        order: Order,
        (scratch, scratch_bytes): (u64, u64),
    ) -> Result<()> {
        check_len(len)?;
        let needed = self.scratch_bytes::<K>(algo, len, value_bytes);
        assert!(
            scratch_bytes >= needed,
            "scratch of {scratch_bytes} bytes for a {} sort that needs {needed}",
            algo.name()
        );
        self.bind()?;
        let (n, key_bytes, map) = (len as u64, size_of::<K>(), K::key_map(order));
        match algo {
            GpuAlgo::Bitonic => {
                assert_eq!(value_bytes, 0, "the bitonic sort carries no values");
                bitonic::enqueue(self, keys, n, key_bytes, map)
            }
            GpuAlgo::Radix => {
                let launch = radix::Launch {
                    keys,
                    values,
                    scratch,
                    n,
                    key_bytes,
                    value_bytes,
                    map,
                };
                radix::enqueue(self, &launch)
            }
            GpuAlgo::Merge => {
                let launch = merge::Launch {
                    keys,
                    values,
                    scratch,
                    n,
                    key_bytes,
                    value_bytes,
                    encode: map,
                    decode: map,
                    max_shared: self.limits.max_shared_per_block,
                };
                merge::enqueue(self, &launch)
            }
        }
    }

    /// `bytes` of scratch allocated in the order of the sorter's stream, freed in that order
    /// when dropped: `None` where the device has no memory pools or its pool cannot supply
    /// them.
    fn stream_scratch(&self, bytes: u64) -> Result<Option<StreamScratch<'_>>> {
        self.bind()?;
        let mut ptr = 0;
        // SAFETY: an out pointer and the sorter's live stream.
        let status =
            unsafe { cuda::cuMemAllocAsync(&mut ptr, bytes as usize, self.stream.as_inner()) };
        use cuda::cudaError_enum as E;
        match status {
            E::CUDA_SUCCESS => Ok(Some(StreamScratch {
                stream: &self.stream,
                range: (ptr, bytes),
            })),
            E::CUDA_ERROR_OUT_OF_MEMORY | E::CUDA_ERROR_NOT_SUPPORTED => Ok(None),
            other => {
                let what = || format!("allocating {bytes} bytes of scratch on the sort's stream");
                driver(other, "cuMemAllocAsync", what).map(|()| None)
            }
        }
    }

    /// Sorts host keys with `algo` rather than `auto`'s choice: as [`GpuSorter::sort_unstable`]
    /// (any of the three) or [`GpuSorter::sort`] (the merge or the radix sort) otherwise do.
    ///
    /// # Errors
    /// As [`GpuSorter::sort_unstable`] or [`GpuSorter::sort`].
    pub fn sort_with<K: SortKey>(&self, algo: GpuAlgo, keys: &mut [K], order: Order) -> Result<()> {
        self.sort_keys(Pick::Algo(algo), keys, order)
    }

    /// Sorts host keys alone with `pick`.
    fn sort_keys<K: SortKey>(&self, pick: Pick, keys: &mut [K], order: Order) -> Result<()> {
        // Zero-sized values: nothing is allocated, copied or moved for them.
        let mut no_values = vec![(); keys.len()];
        self.sort_host(pick, HostKeys::Sort(keys), &mut no_values, order)
    }

    /// Kernel `name`, from its family's module (loaded, and so compiled, on first use), with
    /// the sorter's context made current: the module loads into this sorter's context, and the
    /// launch that follows (on this sorter's stream) runs in it, whatever context the thread
    /// had current before.
    pub(crate) fn function<A: KernelArgs>(&self, kernel: Kernel<A>) -> Result<Function<'_>> {
        self.bind()?;
        self.modules.function(kernel.family(), kernel.name())
    }

    /// Kernel `name`, as [`GpuSorter::function`] finds a typed handle's.
    pub(crate) fn function_named(&self, name: &str) -> Result<Function<'_>> {
        let family = modules::Family::of(name).unwrap_or_else(|| panic!("{name} is no kernel"));
        self.bind()?;
        self.modules.function(family, name)
    }

    /// `family`'s module and its settings, loaded into the sorter's context if this is its
    /// first use (the context is made current, as by [`GpuSorter::function`]).
    pub(crate) fn module(&self, family: modules::Family) -> Result<&modules::Loaded> {
        self.bind()?;
        self.modules.get(family)
    }

    /// The driver's handle of the sorter's context.
    pub(crate) fn raw_context(&self) -> cuda::CUcontext {
        self.context.as_raw()
    }

    /// The device.
    pub(crate) fn device(&self) -> Device {
        self.device
    }

    /// Queues the stable sort of `len` keys of `key_bytes` at device address `keys`, encoding
    /// them with `encode` and decoding with `decode` at the end (`IDENTITY` leaves them
    /// encoded), with `scratch` of at least [`merge::scratch_bytes`] bytes.
    pub(crate) fn enqueue_merge_sort_raw(
        &self,
        keys: u64,
        len: u64,
        key_bytes: usize,
        (encode, decode): (u32, u32),
        scratch: u64,
    ) -> Result<()> {
        self.bind()?;
        let launch = merge::Launch {
            keys,
            values: 0,
            scratch,
            n: len,
            key_bytes,
            value_bytes: 0,
            encode,
            decode,
            max_shared: self.limits.max_shared_per_block,
        };
        merge::enqueue(self, &launch)
    }

    /// Waits until all work queued on [`GpuSorter::stream`] is done; `what` names the work in
    /// an error.
    ///
    /// # Errors
    /// [`Error::Cuda`] with the first error of the queued work, its context `what`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{GpuSorter, Order};
    ///
    /// let gpu = GpuSorter::new()?;
    /// let mut keys = gpu.upload(&[2u64, 1])?;
    /// gpu.enqueue_sort_unstable(&mut keys, Order::Ascending)?;
    /// gpu.synchronize("sorting my keys")?;
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn synchronize(&self, what: &str) -> Result<()> {
        self.bind()?;
        self.stream.synchronize().context(what)
    }
}

/// Device scratch of the stable sort, from [`GpuSorter::sort_scratch`].
pub struct Scratch {
    buffer: Option<DeviceBuffer<u64>>,
    bytes: u64,
}

impl Scratch {
    /// Its size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// No scratch: what the bitonic sort needs.
    fn none() -> Scratch {
        Scratch {
            buffer: None,
            bytes: 0,
        }
    }

    /// Its device address, 0 where the sort needs none.
    fn device_ptr(&self) -> u64 {
        self.buffer
            .as_ref()
            .map_or(0, |b| b.as_device_ptr().as_raw())
    }

    /// Its device address and size.
    fn range(&self) -> (u64, u64) {
        (self.device_ptr(), self.bytes)
    }
}

/// Scratch from the device's memory pool, allocated on a stream (`cuMemAllocAsync`) and freed
/// on it when dropped (`cuMemFreeAsync`): work queued on the stream in between may use it, and
/// the memory goes back to the pool once the stream has run that work.
struct StreamScratch<'a> {
    stream: &'a Stream,
    /// Device address and size.
    range: (u64, u64),
}

impl Drop for StreamScratch<'_> {
    fn drop(&mut self) {
        // SAFETY: the pointer came from cuMemAllocAsync and is freed once, in stream order. A
        // failure (the context's earlier error) leaves it to the pool, freed with the context.
        let _ = unsafe { cuda::cuMemFreeAsync(self.range.0, self.stream.as_inner()) };
    }
}

/// Keys of a host-slice sort: sorted in place, or only read (an argsort, whose result is the
/// permutation).
enum HostKeys<'a, K> {
    Sort(&'a mut [K]),
    Read(&'a [K]),
}

impl<K> HostKeys<'_, K> {
    fn as_slice(&self) -> &[K] {
        match self {
            HostKeys::Sort(keys) => keys,
            HostKeys::Read(keys) => keys,
        }
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }
}

/// The most bytes of payload the kernels carry per key.
const MAX_PAYLOAD_BYTES: usize = 16;

/// Bytes of the device slot each value of type `P` travels in: the narrowest value width of
/// the kernels ([`merge::VALUE_BYTES`]) that holds it, 0 for zero-sized values.
///
/// # Errors
/// [`Error::PayloadTooLarge`] past [`MAX_PAYLOAD_BYTES`].
fn value_slot<P>() -> Result<usize> {
    let size = size_of::<P>();
    merge::VALUE_BYTES
        .into_iter()
        .find(|&width| width >= size)
        .ok_or(Error::PayloadTooLarge {
            size,
            max: MAX_PAYLOAD_BYTES,
        })
}

/// The sorts that can carry values: all but the bitonic network, which is not stable.
fn stable(algo: GpuAlgo) -> Result<()> {
    match algo {
        GpuAlgo::Bitonic => Err(Error::NotStable { algo: algo.name() }),
        GpuAlgo::Merge | GpuAlgo::Radix => Ok(()),
    }
}

fn check_pairs(keys: usize, values: usize) -> Result<()> {
    if keys != values {
        return Err(Error::LengthMismatch {
            keys: keys as u64,
            values: values as u64,
        });
    }
    Ok(())
}

fn check_len(len: usize) -> Result<()> {
    if len as u64 > MAX_KEYS {
        return Err(Error::TooLong {
            len: len as u64,
            max: MAX_KEYS,
        });
    }
    Ok(())
}

/// The body of kernel `name` in the embedded PTX, for tests that read what the compiler made.
#[cfg(test)]
fn kernel_ptx(name: &str) -> &'static str {
    let start = KERNELS_PTX
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no kernel {name} in the PTX"));
    let body = &KERNELS_PTX[start..];
    &body[..body
        .find("\n}\n")
        .expect("an entry ends with a closing brace")]
}

/// Asserts that kernel `name` keeps its arrays in registers: no local (stack) memory in its
/// PTX. `see` says where the cost of the alternative is recorded.
#[cfg(test)]
fn assert_no_local_memory(name: &str, see: &str) {
    assert!(
        !kernel_ptx(name).contains(".local"),
        "{name} keeps arrays in local memory (see {see})"
    );
}

/// `cuInit`, with the failures that mean "no driver" told apart from "no device".
pub(crate) fn init_driver() -> Result<()> {
    // SAFETY: cuInit may be called any number of times from any thread.
    let status = unsafe { cuda::cuInit(0) };
    use cuda::cudaError_enum as E;
    match status {
        E::CUDA_SUCCESS => Ok(()),
        E::CUDA_ERROR_NO_DEVICE => Err(Error::NoDevice),
        E::CUDA_ERROR_STUB_LIBRARY => Err(Error::NoDriver(
            "libcuda is the toolkit's stub, not a driver".into(),
        )),
        // CUDA_ERROR_INSUFFICIENT_DRIVER (35), newer than cust_raw's headers.
        other if other as u32 == 35 => Err(Error::NoDriver(
            "the NVIDIA driver is older than this program needs".into(),
        )),
        other => Err(Error::NoDriver(format!("cuInit failed with {other:?}"))),
    }
}
