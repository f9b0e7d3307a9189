//! The GPU side: a [`GpuSorter`] owns a CUDA context, the kernels' modules and a stream.
//!
//! | CUDA concept | here |
//! |---|---|
//! | `cuInit`, device, primary context | [`GpuSorter::new`], [`GpuSorter::with_device`]; [`GpuSorter::bind`] before `cust` calls of your own (`cust::memory::mem_get_info`, buffers, streams, events) |
//! | modules (the PTX, JIT-compiled for the device) | [`KERNELS_PTX`], one module per family of kernels, each loaded on first use |
//! | stream | the sorter's own ([`GpuSorter::queue`]) or a caller's ([`GpuSorter::queue_on`]: [`AsStream`], [`RawStream`]); [`Queue::synchronize`] waits for it |
//! | `cuMemAlloc`, `cuMemcpyHtoD` | `cust`'s `DeviceBuffer`; [`GpuSorter::upload`] |
//! | kernel launches on a stream, scratch from `cuMemAllocAsync` | [`Queue`]: [`Queue::sort_unstable`], [`Queue::sort`], [`Queue::sort_by_key`], [`Queue::argsort`], [`Queue::top_k`] |
//! | device pointers | [`DeviceMemory`], [`DeviceMemoryMut`]: `cust`'s buffers and slices, [`RawDeviceSlice`] |
//!
//! Three sorts ([`GpuAlgo`]): the bitonic network (unstable, in place, no scratch per call; up
//! to 2^16 keys in one launch through a 512 KiB workspace each sorter allocates once), the
//! stable merge-path merge sort and the stable LSD radix sort (each with a scratch buffer as
//! large as the keys and values; [`GpuSorter::scratch_bytes`]). Given an
//! [`Order`](crate::Order) (or [`Options`] with `algo: None`), a sort runs `auto`'s choice
//! ([`Sorting`], [`GpuSorter::auto_device`]): the fastest by n, key width and values on the
//! device's measured table, among all three for `sort_unstable`, among the stable two for
//! `sort`, `sort_by_key` and the host slices' `argsort`; an unstable sort whose choice's
//! scratch does not fit runs the bitonic sort. Given [`Options`] with `algo: Some(..)`, the
//! named sort runs.
//!
//! Host slices whose sort does not fit on the device are sorted in chunks that fit and merged
//! on the CPU ([`GpuSorter::set_memory_budget`]); [`GpuSorter::set_progress`] reports on it.

mod auto;
mod bitonic;
mod context;
mod device;
mod event;
mod host;
mod launch;
mod limits;
pub(crate) mod merge;
mod modules;
mod overlap;
mod pairs;
mod pinned;
mod progress;
mod queue;
pub(crate) mod radix;
mod scratch;
mod segments;
mod staging;
mod tables;
pub mod topk;
mod work;

pub use auto::{HostPlan, Sorting};
pub use limits::DeviceLimits;
#[cfg(any(test, feature = "testing"))]
pub use limits::DeviceProfile;
#[cfg(not(any(test, feature = "testing")))]
pub(crate) use limits::DeviceProfile;
pub use pinned::PinnedBuffer;
pub use progress::{Phase, Progress, ProgressHook};
pub use queue::{
    AsStream, DeviceMemory, DeviceMemoryMut, Options, Queue, RawDeviceSlice, RawStream,
};
pub use segments::Segments;
pub use work::Work;

use crate::error::{CudaContext, Error, Result};
use auto::Pick;
pub(crate) use context::ContextKind;
use context::SorterContext;
use cust::device::Device;
use cust::function::Function;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use cust::sys as cuda;
use host::HostKeys;
use kernels_gpu::args::KernelArgs;
use kernels_gpu::kernels::Kernel;
use kernels_gpu::tuning::MAX_KEYS;
pub(crate) use launch::Shape;
use modules::{Family, Modules, Settings};
use pairs::{check_pairs, value_slot};
use staging::Staging;
use std::sync::Mutex;

/// Declares a method that the workspace's tests and benchmarks call besides the crate: public
/// with the feature `testing`, crate-private without it, so that it is no part of the sorting
/// API.
macro_rules! testing_pub {
    ($(#[$attr:meta])* fn $($item:tt)*) => {
        $(#[$attr])*
        #[cfg(any(test, feature = "testing"))]
        pub fn $($item)*

        $(#[$attr])*
        #[cfg(not(any(test, feature = "testing")))]
        pub(crate) fn $($item)*
    };
}

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

/// Sets up `family`'s module, just loaded, for a device of `limits`: each sort's kernels get the
/// shared memory they launch with, and the passes that prefetch learn how far ahead.
fn configure(family: Family, module: &Module, limits: &DeviceLimits) -> Result<Settings> {
    let mut settings = Settings::default();
    match family {
        Family::Small => settings.resident = bitonic::configure_small(module, limits)?,
        Family::Tiles => bitonic::configure_tiles(module, limits)?,
        Family::Windows => settings.ahead = bitonic::configure_windows(module, limits, true)?,
        Family::GenericWindows => {
            settings.ahead = bitonic::configure_windows(module, limits, false)?
        }
        Family::Merge => settings.ahead = merge::configure(module, limits)?,
        Family::Segments => segments::configure(module, limits)?,
        Family::Radix => radix::configure(module, limits)?,
        // Their blocks fit in the 48 KiB every device gives without asking.
        Family::Multi | Family::ShortSegments => {}
        Family::TopK => topk::configure(module, limits)?,
    }
    Ok(settings)
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

/// The GPU sorts. `auto` chooses among them ([`GpuSorter::auto_device`]) unless [`Options::algo`] names one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum GpuAlgo {
    /// The bitonic network: unstable, in place, no scratch.
    Bitonic,
    /// The merge-path merge sort: stable, with scratch ([`GpuSorter::scratch_bytes`]).
    Merge,
    /// The least-significant-digit radix sort (Onesweep): stable, with scratch
    /// ([`GpuSorter::scratch_bytes`]); a pass per 8-bit digit.
    Radix,
}

impl GpuAlgo {
    /// What its scratch is called in an out-of-memory error.
    pub(crate) fn scratch_name(self) -> &'static str {
        match self {
            GpuAlgo::Bitonic => "",
            GpuAlgo::Merge => "the merge sort's scratch",
            GpuAlgo::Radix => "the radix sort's scratch",
        }
    }

    /// Its name on command lines and in reports, as [`Display`](std::fmt::Display) writes it;
    /// static for the errors that carry it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            GpuAlgo::Bitonic => "bitonic",
            GpuAlgo::Merge => "merge",
            GpuAlgo::Radix => "radix",
        }
    }
}

/// Its name on command lines and in reports: `bitonic`, `merge` or `radix`.
///
/// ```
/// use gpusort::GpuAlgo;
///
/// assert_eq!(GpuAlgo::Radix.to_string(), "radix");
/// assert_eq!(format!("the {} sort", GpuAlgo::Merge), "the merge sort");
/// ```
impl std::fmt::Display for GpuAlgo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Sorts on one CUDA device.
///
/// Creating one initialises the driver and binds the device's primary context, and its first
/// sort of each kind has its kernels' module compiled by the driver (docs/decisions.md, "A
/// module per family"): create it once and reuse it. Every method
/// that touches the device makes the context current on the calling thread first, so a sorter
/// may move between threads (it is `Send` and `Sync`). Work is queued on one stream of its own
/// ([`GpuSorter::queue`]) unless a caller's stream is given ([`GpuSorter::queue_on`]); its own
/// is created blocking: it is ordered with CUDA's legacy default stream, where `cust`'s
/// synchronous copies run, so keys copied with them are in place before a sort starts.
/// Host-slice sorts also use a second stream of their own for their copies, which overlap the
/// sort; they return when all is done.
///
/// Dropping it releases the modules, the stream and its hold on the primary context; device
/// buffers made by [`GpuSorter::upload`] are freed by their own drop.
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
    /// Page-locked slots for tables that queued work copies to the device.
    table_slots: tables::TableSlots,
    /// The device's limits (capped by a test profile), from which the kernels and shapes of
    /// every sort are chosen.
    limits: DeviceLimits,
    context: SorterContext,
    device: Device,
    /// The device's ordinal, which device memory's pointer attributes name.
    ordinal: u32,
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
    /// which run the GPU suite on one device as it would run on others (feature `testing`).
    ///
    /// # Errors
    /// As [`GpuSorter::with_device`].
    #[cfg(any(test, feature = "testing"))]
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
        // The host's share of a sort (staging copies, merges of chunks) runs on rayon's threads.
        crate::cpu::start_threads()?;
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
        let modules = Modules::new(limits, configure);
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
            table_slots: tables::TableSlots::default(),
            limits,
            context,
            device,
            ordinal,
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
    /// …) runs every sort; where a kernel tuned for Hopper (sm_90) asks for more shared
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

    testing_pub! {
        /// The sorter's own stream (blocking), where its host-slice sorts and the queues of
        /// [`GpuSorter::queue`] queue their work: for benchmarks that time that work with CUDA
        /// events and restore its input between runs (feature `testing`). A program's own work
        /// in order with a sort goes on its own stream, given to [`GpuSorter::queue_on`].
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
        /// let mut queue = gpu.queue()?;
        /// start.record(gpu.stream()).unwrap();
        /// queue.sort_unstable(&mut keys, Order::Ascending)?;
        /// stop.record(gpu.stream()).unwrap();
        /// queue.synchronize()?;
        /// println!("{} ms", stop.elapsed_time_f32(&start).unwrap());
        /// # Ok::<(), gpusort::Error>(())
        /// ```
        fn stream(&self) -> &Stream {
            &self.stream
        }
    }

    /// Makes this sorter's context current on the calling thread, for `cust` calls of your own
    /// on this device: buffers, streams, events, the free memory (the sorter's methods do it
    /// themselves).
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver refuses.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use cust::memory::{DeviceBuffer, mem_get_info};
    ///
    /// let gpu = gpusort::GpuSorter::new()?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| -> gpusort::Result<()> {
    ///         gpu.bind()?; // cust's own calls below need the context on this thread
    ///         let (free, total) = mem_get_info().expect("reading free device memory");
    ///         println!("{} of {} MiB free", free >> 20, total >> 20);
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
    pub(crate) fn memory_info(&self) -> Result<(u64, u64)> {
        self.bind()?;
        let (free, total) = cust::memory::mem_get_info().context("reading free device memory")?;
        Ok((free as u64, total as u64))
    }

    testing_pub! {
        /// A device buffer of `len` values, checked against free memory first; its contents are
        /// unspecified. `what` names the buffer in an [`Error::OutOfDeviceMemory`]. For the
        /// workspace's tests and benchmarks (feature `testing`); a program allocates its device
        /// memory with `cust` (`DeviceBuffer`), `cudarc` or any allocator of its own.
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
        /// let mut queue = gpu.queue()?;
        /// queue.sort_unstable(&mut keys, Order::Ascending)?;
        /// queue.synchronize()?;
        ///
        /// match gpu.alloc::<u64>(1 << 45, "a huge buffer") {
        ///     Err(Error::OutOfDeviceMemory { requested, free, .. }) => assert!(requested > free),
        ///     other => panic!("{other:?}"),
        /// }
        /// # Ok::<(), Error>(())
        /// ```
        fn alloc<T: DeviceCopy>(&self, len: usize, what: &'static str) -> Result<DeviceBuffer<T>> {
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
    }

    /// A device copy of `keys`: the device counterpart of `keys.to_vec()`.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the bytes needed and free (checked before it
    /// allocates), or [`Error::Cuda`] if the allocation or the copy fails.
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

    /// `kernel`'s function, from its family's module (loaded, and so compiled, on first use), with
    /// the sorter's context made current: the module loads into this sorter's context, and the
    /// launch that follows (on this sorter's stream) runs in it, whatever context the thread
    /// had current before.
    pub(crate) fn function<A: KernelArgs>(&self, kernel: Kernel<A>) -> Result<Function<'_>> {
        self.bind()?;
        self.modules.function(kernel.family(), kernel.name())
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

    /// Waits until all work queued on the sorter's own stream is done; `what` names the work
    /// in an error.
    pub(crate) fn synchronize(&self, what: &str) -> Result<()> {
        self.bind()?;
        self.stream.synchronize().context(what)
    }
}

/// The sorts that can carry values: all but the bitonic network, which is not stable.
fn stable(algo: GpuAlgo) -> Result<GpuAlgo> {
    match algo {
        GpuAlgo::Bitonic => Err(Error::NotStable { algo: algo.name() }),
        GpuAlgo::Merge | GpuAlgo::Radix => Ok(algo),
    }
}

/// What a host-slice call runs for `sorting` with `options`: the sort they name (a stable one
/// where `sorting` needs it), or `auto`'s.
fn pick(options: Options, sorting: Sorting) -> Result<Pick> {
    match options.algo {
        None => Ok(Pick::Auto(sorting)),
        Some(algo) if sorting.is_stable() => stable(algo).map(Pick::Algo),
        Some(algo) => Ok(Pick::Algo(algo)),
    }
}

/// Refuses more keys than indices of `index_bytes` number.
fn check_indices(len: usize, index_bytes: usize) -> Result<()> {
    let max = if index_bytes < 8 {
        1 << (8 * index_bytes)
    } else {
        u64::MAX
    };
    if len as u64 > max {
        return Err(Error::TooLong {
            len: len as u64,
            max,
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
