//! The library's error type, [`Error`], and its [`Result`] alias.
//!
//! Every fallible GPU call returns [`Result<T>`](Result). The variants say what a caller can act
//! on: [`Error::NoDriver`] and [`Error::NoDevice`] mean "no GPU here" (sort on the CPU instead),
//! [`Error::OutOfDeviceMemory`] and [`Error::TooLong`] mean "too many keys for this device",
//! and the rest are CUDA failures with what was being done.

use cust::error::CudaError;

/// Everything that can go wrong while sorting on the GPU.
///
/// Messages (its `Display`) are full sentences for a person; match on the variants to act.
///
/// # Examples
///
/// Falling back to the CPU when there is no GPU, and reporting anything else:
///
/// ```no_run
/// use gpusort::{Error, GpuSorter, Order, cpu::CpuAlgo};
///
/// let mut keys = vec![3i32, -7, 0];
/// match GpuSorter::new() {
///     Ok(gpu) => gpu.sort_unstable(&mut keys, Order::Ascending)?,
///     Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
///         eprintln!("{e}; sorting on the CPU");
///         CpuAlgo::Std.sort(&mut keys, Order::Ascending);
///     }
///     Err(e) => return Err(e),
/// }
/// assert_eq!(keys, [-7, 0, 3]);
/// # Ok::<(), Error>(())
/// ```
///
/// The messages, which need no GPU to build:
///
/// ```
/// use gpusort::Error;
///
/// let e = Error::TooLong { len: 1 << 40, max: 1 << 39 };
/// assert_eq!(e.to_string(), "1099511627776 keys is more than the GPU kernels support (549755813888 keys)");
/// assert_eq!(Error::NoDevice.to_string(), "no CUDA-capable device is present");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library is missing, a stub, or too old for this program: there is no
    /// usable GPU here. From [`GpuSorter::new`](crate::GpuSorter::new); the string says which.
    #[error("no usable CUDA driver: {0}")]
    NoDriver(String),
    /// The driver works but sees no GPU. From [`GpuSorter::new`](crate::GpuSorter::new).
    #[error("no CUDA-capable device is present")]
    NoDevice,
    /// A device ordinal past the last device. From
    /// [`GpuSorter::with_device`](crate::GpuSorter::with_device).
    #[error("CUDA device {ordinal} does not exist ({count} present)")]
    InvalidDevice {
        /// The ordinal asked for.
        ordinal: u32,
        /// Devices present.
        count: u32,
    },
    /// Not enough free device memory for a buffer: checked before allocating, and also
    /// returned when the allocation itself runs out. From every call that allocates device
    /// memory: [`GpuSorter::upload`](crate::GpuSorter::upload), the host-slice sorts, a
    /// [`Queue`](crate::Queue)'s scratch from the memory pool.
    #[error(
        "out of device memory: {what} needs {requested} bytes, {free} bytes are free of {total}"
    )]
    OutOfDeviceMemory {
        /// What the memory was for.
        what: &'static str,
        /// Bytes asked for.
        requested: u64,
        /// Bytes free on the device when asked.
        free: u64,
        /// Bytes on the device.
        total: u64,
    },
    /// More keys than the kernels can index ([`kernels_gpu::tuning::MAX_KEYS`], 2^39).
    #[error("{len} keys is more than the GPU kernels support ({max} keys)")]
    TooLong {
        /// Keys asked for.
        len: u64,
        /// The most the kernels accept.
        max: u64,
    },
    /// Keys and values of a pair sort differ in length.
    #[error("{keys} keys but {values} values: a pair sort needs one value per key")]
    LengthMismatch {
        /// Keys given.
        keys: u64,
        /// Values given.
        values: u64,
    },
    /// A stream or buffer of another CUDA context than the sorter's, which is its device's
    /// primary context (the one the CUDA runtime and `cudarc` use). From
    /// [`GpuSorter::queue_on`](crate::GpuSorter::queue_on).
    #[error(
        "{what} belongs to another CUDA context than the sorter's (its device's primary context)"
    )]
    WrongContext {
        /// What was given.
        what: &'static str,
    },
    /// Device memory given to a [`Queue`](crate::Queue) that the kernels could not use: not
    /// memory of any CUDA allocation, memory of another device, or a range that runs past its
    /// allocation's end.
    #[error("{what} is not device memory the sorter can use: {reason}")]
    BadDeviceMemory {
        /// What it was given as.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A `cudarc` buffer given to a queue that was not made from a `cudarc` stream: `cudarc`
    /// orders the work on its buffers through its own streams' events.
    #[error(
        "a cudarc buffer needs a queue on a cudarc stream (GpuSorter::queue_on(&cudarc_stream))"
    )]
    NotOnCudarcStream,
    /// A multi-GPU sort got a different number of parts than it has GPUs. From
    /// [`MultiGpuSorter::sort_device`](crate::MultiGpuSorter::sort_device).
    #[error("{parts} parts for {gpus} GPUs: a multi-GPU sort takes one part per GPU")]
    PartCount {
        /// Parts given.
        parts: usize,
        /// GPUs of the sorter.
        gpus: usize,
    },
    /// A payload type larger than the values the kernels carry with each key (16 bytes). From
    /// [`GpuSorter::sort_by_key`](crate::GpuSorter::sort_by_key); sort indices instead
    /// ([`GpuSorter::argsort`](crate::GpuSorter::argsort)) and gather the payloads through them.
    #[error(
        "a payload of {size} bytes is larger than the {max} bytes a GPU sort carries per key; \
         argsort the keys and gather the payloads instead"
    )]
    PayloadTooLarge {
        /// `size_of` the payload type.
        size: usize,
        /// The largest payload the sorts carry.
        max: usize,
    },
    /// An unstable sort asked to carry values or to argsort, which need a stable one. From
    /// the `*_with` calls of [`GpuSorter`](crate::GpuSorter) given
    /// [`GpuAlgo::Bitonic`](crate::gpu::GpuAlgo::Bitonic).
    #[error(
        "the {algo} sort is not stable: pairs, payloads and argsort need a stable sort (merge or radix)"
    )]
    NotStable {
        /// The algorithm asked for.
        algo: &'static str,
    },
    /// Segments that do not fit the keys: rows that do not divide them, offsets that decrease
    /// or point past the last key. From the segmented sorts of
    /// [`GpuSorter`](crate::GpuSorter) ([`Segments`](crate::gpu::Segments)).
    #[error("invalid segments: {reason}")]
    BadSegments {
        /// What is wrong, naming the offending offset or length.
        reason: String,
    },
    /// A top-k asked for no keys, or for more than there are (in a row). From the top-k
    /// calls ([`crate::topk`]).
    #[error("k = {k} is out of range: a top-k selects 1 to {max} keys here")]
    KOutOfRange {
        /// The k asked for.
        k: u64,
        /// The most keys there are to select (per row).
        max: u64,
    },
    /// A row length of zero, or one that does not divide the keys into whole rows. From the
    /// per-row top-k calls ([`crate::topk`]).
    #[error("a row length of {row_len} does not divide {len} keys into rows")]
    RowLength {
        /// The row length asked for.
        row_len: u64,
        /// Keys given.
        len: u64,
    },
    /// A raw driver call, made without a `cust` wrapper, failed (e.g. setting a kernel's
    /// shared-memory size while creating a sorter).
    #[error("CUDA error while {context}: {call} returned {status}")]
    DriverCall {
        /// What was being done.
        context: String,
        /// The driver function.
        call: &'static str,
        /// The status it returned.
        status: String,
    },
    /// Not even one worker thread could be started for the CPU's share of the work (a process
    /// limit such as `ulimit -v`, `RLIMIT_NPROC` or a cgroup's `pids.max`).
    #[error("cannot start a worker thread: {0}")]
    NoThreads(String),
    /// A CUDA call made through `cust` failed: creating the context, module or stream, a
    /// copy, a launch, or the execution of queued work (reported when it is waited for).
    #[error("CUDA error while {context}: {source}")]
    Cuda {
        /// What was being done.
        context: String,
        /// The driver's error.
        source: CudaError,
    },
}

/// `std::result::Result` with the library's [`Error`] as the default error type.
///
/// # Examples
///
/// ```
/// fn keys_fit(len: u64) -> gpusort::Result<()> {
///     let max = kernels_gpu::tuning::MAX_KEYS;
///     if len > max {
///         return Err(gpusort::Error::TooLong { len, max });
///     }
///     Ok(())
/// }
/// assert!(keys_fit(1 << 30).is_ok());
/// assert!(matches!(keys_fit(1 << 40), Err(gpusort::Error::TooLong { .. })));
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `Ok` for `CUDA_SUCCESS`, else [`Error::DriverCall`] naming `call` and what was being done.
pub(crate) fn driver(
    status: cust::sys::CUresult,
    call: &'static str,
    what: impl FnOnce() -> String,
) -> Result<()> {
    if status == cust::sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::DriverCall {
            context: what(),
            call,
            status: format!("{status:?}"),
        })
    }
}

/// Adds what was being done to a `cust` error, making it an [`Error::Cuda`]: for code that
/// makes `cust` calls of its own beside a sorter's.
///
/// ```
/// use gpusort::error::{CudaContext, Error};
///
/// let failed: cust::error::CudaResult<()> = Err(cust::error::CudaError::InvalidValue);
/// let err = failed.context("copying my keys").unwrap_err();
/// assert!(matches!(err, Error::Cuda { .. }));
/// assert!(err.to_string().starts_with("CUDA error while copying my keys"));
/// ```
pub trait CudaContext<T> {
    /// `self`, its error an [`Error::Cuda`] saying it happened while `what`.
    fn context(self, what: &str) -> Result<T>;
}

impl<T> CudaContext<T> for cust::error::CudaResult<T> {
    fn context(self, what: &str) -> Result<T> {
        self.map_err(|source| Error::Cuda {
            context: what.to_owned(),
            source,
        })
    }
}
