//! Stream-ordered work on memory the caller already has: [`Queue`], the streams it runs on
//! ([`AsStream`]) and the device memory it reads and writes ([`DeviceMemory`],
//! [`DeviceMemoryMut`]).
//!
//! A queue is a sorter's view of one stream of its context: its own, a `cust` stream, a
//! `cudarc` stream (feature `cudarc`) or a raw `CUstream` that another library created. Its
//! calls only queue work: they never wait for the device, and their results are there once the
//! stream has reached them. Scratch comes from the caller ([`Queue::with_scratch`], sized by
//! [`GpuSorter::scratch_bytes`]) or, by default, from the device's memory pool in the stream's
//! order (`cuMemAllocAsync`, freed by `cuMemFreeAsync` right after the work that uses it).

use super::auto::Sorting;
use super::launch::On;
use super::modules::Family;
use super::scratch::StreamScratch;
use super::{GpuAlgo, GpuSorter, check_indices, check_len, radix};
use crate::error::{Error, Result, driver};
use crate::keys::{Order, SortKey, SortValue};
use cust::memory::{DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::sys as cuda;
use std::ffi::c_void;
use std::marker::PhantomData;

/// How a sort is done: the order and, optionally, which of the GPU sorts runs (`None`: `auto`,
/// the fastest for the size, the key width and where the keys are). Every sorting call takes
/// `impl Into<Options>`, so an [`Order`] alone means `auto`.
///
/// # Examples
///
/// ```
/// use gpusort::{GpuAlgo, Options, Order};
///
/// let auto: Options = Order::Ascending.into();
/// assert_eq!(auto.algo, None);
/// let radix = Options { algo: Some(GpuAlgo::Radix), ..Order::Descending.into() };
/// assert_eq!(radix.order, Order::Descending);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Ascending or descending.
    pub order: Order,
    /// The sort to run; `None` lets `auto` choose.
    pub algo: Option<GpuAlgo>,
}

impl From<Order> for Options {
    fn from(order: Order) -> Options {
        Options { order, algo: None }
    }
}

/// A stream that a [`Queue`] may queue work on: a live stream of the sorter's context.
///
/// Implemented for `cust`'s [`Stream`](cust::stream::Stream), for `cudarc`'s `CudaStream`
/// (feature `cudarc`) and for [`RawStream`], a `CUstream` from anywhere else.
pub trait AsStream {
    /// The driver's handle.
    fn as_raw_stream(&self) -> cuda::CUstream;

    /// The stream as `cudarc` knows it, which `cudarc`'s buffers order their work with.
    #[cfg(feature = "cudarc")]
    #[doc(hidden)]
    fn as_cudarc(&self) -> Option<&cudarc::driver::CudaStream> {
        None
    }
}

impl AsStream for cust::stream::Stream {
    fn as_raw_stream(&self) -> cuda::CUstream {
        self.as_inner()
    }
}

/// A `CUstream` created by other code (a framework, the CUDA runtime, the driver API).
#[derive(Clone, Copy, Debug)]
pub struct RawStream(cuda::CUstream);

impl RawStream {
    /// Wraps `stream`.
    ///
    /// # Safety
    /// `stream` is a live stream (or null, the legacy default stream) for as long as any
    /// [`Queue`] made from it is used, and until the work queued through one has run.
    pub unsafe fn new(stream: cuda::CUstream) -> RawStream {
        RawStream(stream)
    }
}

impl AsStream for RawStream {
    fn as_raw_stream(&self) -> cuda::CUstream {
        self.0
    }
}

/// Device memory of `T`s that queued work may read: its address for work on a queue, and its
/// length.
///
/// Implemented for `cust`'s [`DeviceSlice`] and [`DeviceBuffer`], for [`RawDeviceSlice`]
/// (memory that other code allocated) and, with feature `cudarc`, for `cudarc`'s
/// `CudaSlice`, `CudaView` and `CudaViewMut`.
pub trait DeviceMemory<T> {
    /// Elements.
    fn len(&self) -> usize;

    /// Whether it holds no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its address for work that `queue` is about to queue, which reads it; the returned
    /// access is dropped once that work is queued.
    #[doc(hidden)]
    fn read<'s>(&'s self, queue: &'s Queue<'_>) -> Result<Access<'s>>;
}

/// Device memory of `T`s that queued work may write.
pub trait DeviceMemoryMut<T>: DeviceMemory<T> {
    /// Its address for work that `queue` is about to queue, which writes it.
    #[doc(hidden)]
    fn write<'s>(&'s mut self, queue: &'s Queue<'_>) -> Result<Access<'s>>;
}

/// An address handed to queued work, and what the memory's owner needs done once the work is
/// queued (`cudarc` records the stream's progress in the buffer's events).
#[doc(hidden)]
pub struct Access<'s> {
    pub(super) address: u64,
    _owner: Owner<'s>,
}

enum Owner<'s> {
    Plain(PhantomData<&'s ()>),
    #[cfg(feature = "cudarc")]
    Cudarc(#[allow(dead_code)] cudarc::driver::SyncOnDrop<'s>),
}

impl Access<'_> {
    fn plain(address: u64) -> Self {
        Access {
            address,
            _owner: Owner::Plain(PhantomData),
        }
    }
}

impl<T: DeviceCopy> DeviceMemory<T> for DeviceSlice<T> {
    fn len(&self) -> usize {
        DeviceSlice::len(self)
    }

    fn read<'s>(&'s self, _: &'s Queue<'_>) -> Result<Access<'s>> {
        Ok(Access::plain(self.as_device_ptr().as_raw()))
    }
}

impl<T: DeviceCopy> DeviceMemoryMut<T> for DeviceSlice<T> {
    fn write<'s>(&'s mut self, _: &'s Queue<'_>) -> Result<Access<'s>> {
        Ok(Access::plain(self.as_device_ptr().as_raw()))
    }
}

impl<T: DeviceCopy> DeviceMemory<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        DeviceSlice::len(self)
    }

    fn read<'s>(&'s self, _: &'s Queue<'_>) -> Result<Access<'s>> {
        Ok(Access::plain(self.as_device_ptr().as_raw()))
    }
}

impl<T: DeviceCopy> DeviceMemoryMut<T> for DeviceBuffer<T> {
    fn write<'s>(&'s mut self, _: &'s Queue<'_>) -> Result<Access<'s>> {
        Ok(Access::plain(self.as_device_ptr().as_raw()))
    }
}

/// `len` elements of `T` at a device address that other code allocated (`cuMemAlloc`,
/// `cudaMalloc`, a framework's allocator, a memory pool).
///
/// # Examples
///
/// ```no_run
/// use gpusort::{GpuSorter, Order, RawDeviceSlice, RawStream};
///
/// # fn from_elsewhere() -> (u64, usize, cust::sys::CUstream) { unimplemented!() }
/// let gpu = GpuSorter::new()?;
/// let (address, len, stream) = from_elsewhere(); // u32 keys and a stream of the same device
/// // SAFETY: `address` holds `len` u32s of this device's primary context and `stream` is live,
/// // both until the stream has run the sort.
/// let (mut keys, stream) = unsafe { (RawDeviceSlice::<u32>::new(address, len), RawStream::new(stream)) };
/// gpu.queue_on(&stream)?.sort(&mut keys, Order::Ascending)?; // returns at once
/// # Ok::<(), gpusort::Error>(())
/// ```
#[derive(Debug)]
pub struct RawDeviceSlice<T> {
    address: u64,
    len: usize,
    _element: PhantomData<*mut T>,
}

impl<T> RawDeviceSlice<T> {
    /// `len` elements at `address`.
    ///
    /// # Safety
    /// `address` is device memory of the sorter's context (the device's primary context, as
    /// the CUDA runtime and `cudarc` use), at least `len × size_of::<T>()` bytes, aligned for
    /// `T`, that nothing else writes (or, for inputs, reads and writes) until the stream has run
    /// the work queued on it, and that stays allocated until then.
    pub unsafe fn new(address: u64, len: usize) -> Self {
        RawDeviceSlice {
            address,
            len,
            _element: PhantomData,
        }
    }
}

impl<T> DeviceMemory<T> for RawDeviceSlice<T> {
    fn len(&self) -> usize {
        self.len
    }

    fn read<'s>(&'s self, _: &'s Queue<'_>) -> Result<Access<'s>> {
        Ok(Access::plain(self.address))
    }
}

impl<T> DeviceMemoryMut<T> for RawDeviceSlice<T> {
    fn write<'s>(&'s mut self, _: &'s Queue<'_>) -> Result<Access<'s>> {
        Ok(Access::plain(self.address))
    }
}

/// The alignment of a caller's scratch: the sorts lay their parts out from its start at this
/// alignment.
const SCRATCH_ALIGNMENT: u64 = 256;

/// The kernel families a queue's calls launch: loaded when a queue is made, since loading a
/// module waits for the work queued in its context.
const QUEUED_FAMILIES: [Family; 9] = [
    Family::Small,
    Family::Tiles,
    Family::Windows,
    Family::GenericWindows,
    Family::Merge,
    Family::Radix,
    Family::TopK,
    Family::Segments,
    Family::ShortSegments,
];

impl GpuSorter {
    /// A queue on the sorter's own stream ([`Queue::synchronize`] waits for it).
    ///
    /// # Errors
    /// As [`GpuSorter::queue_on`].
    pub fn queue(&self) -> Result<Queue<'_>> {
        self.load_queued_kernels()?;
        Ok(self.own_queue())
    }

    /// A queue on the sorter's own stream for calls that wait for it anyway (those on host
    /// slices), without loading every queued call's kernels first: each launch loads its own.
    pub(super) fn own_queue(&self) -> Queue<'_> {
        Queue {
            on: self.on_own_stream(),
            #[cfg(feature = "cudarc")]
            cudarc: None,
            scratch: None,
        }
    }

    /// Loads the kernels of every call of a queue that are not loaded yet: the driver waits for
    /// the context's queued work while it loads a module, so a queue's calls must find theirs
    /// loaded. Once per sorter.
    fn load_queued_kernels(&self) -> Result<()> {
        for family in QUEUED_FAMILIES {
            self.module(family)?;
        }
        // Page-locked memory for the tables of the segmented sorts, whose allocation may wait
        // for the device too.
        self.bind()?;
        self.table_slots.reserve()
    }

    /// A queue on `stream`, a stream of the sorter's context that the caller owns: a `cust`
    /// stream, a `cudarc` stream (feature `cudarc`), or a [`RawStream`].
    ///
    /// The first queue of a sorter loads the kernels its calls launch (the driver compiles
    /// them for the device, or takes them from its cache); loading waits for the work queued
    /// in the context. The queue's calls never wait.
    ///
    /// # Errors
    /// [`Error::DriverCall`] if the stream is not live, [`Error::WrongContext`] if it belongs
    /// to another context than the sorter's (another device, or a context that is not the
    /// device's primary one), or [`Error::Cuda`] if the kernels cannot be loaded.
    pub fn queue_on<'a, S: AsStream + ?Sized>(&'a self, stream: &'a S) -> Result<Queue<'a>> {
        let raw = stream.as_raw_stream();
        self.bind()?;
        if !raw.is_null() {
            let mut context = std::ptr::null_mut();
            // SAFETY: an out pointer; `raw` is the caller's live stream (AsStream's contract).
            let status = unsafe { cuda::cuStreamGetCtx(raw, &mut context) };
            driver(status, "cuStreamGetCtx", || {
                "reading the context of the caller's stream".into()
            })?;
            if context != self.context.as_raw() {
                return Err(Error::WrongContext { what: "the stream" });
            }
        }
        self.load_queued_kernels()?;
        Ok(Queue {
            on: On {
                sorter: self,
                stream: raw,
            },
            #[cfg(feature = "cudarc")]
            cudarc: stream.as_cudarc(),
            scratch: None,
        })
    }
}

/// Work of one sorter queued on one stream, on device memory the caller has: every call
/// returns once its work is queued, without waiting for the device.
///
/// Made by [`GpuSorter::queue`] (the sorter's stream) or [`GpuSorter::queue_on`] (the
/// caller's). The memory a call is given must stay allocated, and untouched by other streams,
/// until the stream has run the call's work; its borrow ends when the call returns. Errors of
/// the work itself (a kernel that fails) show where the stream is next synchronised.
///
/// Scratch: the caller's ([`Queue::with_scratch`]), else allocated from the device's memory
/// pool in the stream's order and given back in that order once the work that uses it is
/// queued; where the pool cannot supply it, an unstable sort runs the in-place bitonic sort and
/// other calls return [`Error::OutOfDeviceMemory`].
///
/// # Examples
///
/// ```no_run
/// use cust::memory::CopyDestination;
/// use gpusort::{GpuSorter, Order};
///
/// let gpu = GpuSorter::new()?;
/// let mut keys = gpu.upload(&[3u32, 1, 2])?;
/// let mut values = gpu.upload(&[30u64, 10, 20])?;
/// let mut queue = gpu.queue()?;
/// queue.sort_by_key(&mut keys, &mut values, Order::Ascending)?;
/// queue.synchronize()?;
/// let mut back = [0u64; 3];
/// values.copy_to(&mut back[..]).expect("copy to the host");
/// assert_eq!(back, [10, 20, 30]);
/// # Ok::<(), gpusort::Error>(())
/// ```
pub struct Queue<'a> {
    pub(super) on: On<'a>,
    #[cfg(feature = "cudarc")]
    cudarc: Option<&'a cudarc::driver::CudaStream>,
    /// The caller's scratch: address and bytes.
    scratch: Option<(u64, u64)>,
}

impl std::fmt::Debug for Queue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("stream", &self.on.stream)
            .field("scratch", &self.scratch)
            .finish_non_exhaustive()
    }
}

impl<'a> Queue<'a> {
    /// The queue with `scratch` as the scratch of every call: at least
    /// [`GpuSorter::scratch_bytes`] for each, starting 256-byte aligned (as allocations do).
    /// The queue borrows it for its lifetime; the stream must have run the work queued before
    /// it is used otherwise.
    ///
    /// # Errors
    /// [`Error::BadDeviceMemory`] for memory that is not aligned or not on the sorter's
    /// device, or a `cudarc` buffer on a queue not made from a `cudarc` stream.
    pub fn with_scratch(
        mut self,
        scratch: &'a mut (impl DeviceMemoryMut<u8> + ?Sized),
    ) -> Result<Self> {
        let bytes = scratch.len() as u64;
        let address = self.write(scratch, "the scratch")?.address;
        if !address.is_multiple_of(SCRATCH_ALIGNMENT) {
            let reason = format!("it starts at {address:#x}, not {SCRATCH_ALIGNMENT}-byte aligned");
            return Err(Error::BadDeviceMemory {
                what: "the scratch",
                reason,
            });
        }
        self.scratch = Some((address, bytes));
        Ok(self)
    }

    /// Queues the stable sort of `keys`, in place: the device counterpart of
    /// [`slice::sort`]. `auto` chooses between the merge and the radix sort unless `options`
    /// names one.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::NotStable`] for [`GpuAlgo::Bitonic`],
    /// [`Error::OutOfDeviceMemory`] where the pool cannot supply the scratch, or
    /// [`Error::Cuda`] / [`Error::DriverCall`] if a launch is refused.
    pub fn sort<K: SortKey>(
        &mut self,
        keys: &mut (impl DeviceMemoryMut<K> + ?Sized),
        options: impl Into<Options>,
    ) -> Result<()> {
        let options = options.into();
        let len = keys.len();
        check_len(len)?;
        let algo = self.on.device_choice::<K>(options, Sorting::Stable, len)?;
        let keys = self.write(keys, "the keys")?;
        self.run_sort::<K>(algo, (keys.address, 0, 0), len, options.order)
    }

    /// Queues the sort of `keys`, in place, equal keys in any order: the device counterpart of
    /// [`slice::sort_unstable`]. `auto` chooses among the three sorts (the in-place bitonic sort
    /// where the faster one's scratch is not there) unless `options` names one.
    ///
    /// # Errors
    /// As [`Queue::sort`], without [`Error::NotStable`].
    pub fn sort_unstable<K: SortKey>(
        &mut self,
        keys: &mut (impl DeviceMemoryMut<K> + ?Sized),
        options: impl Into<Options>,
    ) -> Result<()> {
        let options = options.into();
        let len = keys.len();
        check_len(len)?;
        let access = self.write(keys, "the keys")?;
        let keys = access.address;
        let algo = match (options.algo, self.scratch) {
            (Some(algo), _) => algo,
            // The caller's scratch decides what fits, not the free memory.
            (None, Some(_)) => self.on.auto_device_table::<K>(Sorting::Unstable, len),
            (None, None) => self.on.auto_device::<K>(Sorting::Unstable, len)?,
        };
        let keys = (keys, 0, 0);
        if options.algo.is_some() || algo == GpuAlgo::Bitonic {
            return self.run_sort::<K>(algo, keys, len, options.order);
        }
        // `auto`'s choice where its scratch is there, else the bitonic sort, in place.
        let bytes = self.on.scratch_bytes_of::<K>(algo, len, 0);
        match self.scratch_of(bytes)? {
            Some(scratch) => {
                let scratch = (scratch.range().0, bytes);
                self.on
                    .enqueue_sort::<K>(algo, keys, len, options.order, scratch)
            }
            None => self
                .on
                .enqueue_sort::<K>(GpuAlgo::Bitonic, keys, len, options.order, (0, 0)),
        }
    }

    /// Queues the stable sort of `keys` with `values` (one per key) moved along: the device
    /// counterpart of [`GpuSorter::sort_by_key`]. Values are `u32`, `u64` or `u128`
    /// ([`SortValue`]).
    ///
    /// # Errors
    /// As [`Queue::sort`], and [`Error::LengthMismatch`].
    pub fn sort_by_key<K: SortKey, V: SortValue>(
        &mut self,
        keys: &mut (impl DeviceMemoryMut<K> + ?Sized),
        values: &mut (impl DeviceMemoryMut<V> + ?Sized),
        options: impl Into<Options>,
    ) -> Result<()> {
        let options = options.into();
        let len = keys.len();
        super::check_pairs(len, values.len())?;
        check_len(len)?;
        let value_bytes = size_of::<V>();
        let algo = self
            .on
            .device_choice::<K>(options, Sorting::Pairs { value_bytes }, len)?;
        let keys = self.write(keys, "the keys")?;
        let values = self.write(values, "the values")?;
        let buffers = (keys.address, values.address, value_bytes);
        self.run_sort::<K>(algo, buffers, len, options.order)
    }

    /// Queues the stable argsort of `keys` into `indices` (one `u32` per key, so at most 2^32
    /// keys): `indices[i]` is the position in `keys` of the i-th key in `order`, equal keys in
    /// their order. `keys` is only read.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLong`] beyond 2^32 keys,
    /// [`Error::OutOfDeviceMemory`] where the pool cannot supply the scratch, or
    /// [`Error::Cuda`] / [`Error::DriverCall`] if a launch is refused.
    pub fn argsort<K: SortKey>(
        &mut self,
        keys: &(impl DeviceMemory<K> + ?Sized),
        indices: &mut (impl DeviceMemoryMut<u32> + ?Sized),
        order: Order,
    ) -> Result<()> {
        let len = keys.len();
        super::check_pairs(len, indices.len())?;
        check_indices(len, 4)?;
        let bytes = radix::gathered_scratch_bytes(len as u64, size_of::<K>());
        let scratch = self.require_scratch(bytes, "the argsort's scratch")?;
        let keys = self.read(keys, "the keys")?;
        let indices = self.write(indices, "the indices")?;
        let buffers = (keys.address, indices.address, scratch.range().0);
        let map = K::key_map(order);
        self.on.bind()?;
        radix::enqueue_gathered(&self.on, buffers, len as u64, size_of::<K>(), map)
    }

    /// Queues the top-`k` of each row of `row_len` keys of `keys` (`row_len = keys.len()`: of
    /// the whole array), best first in `order`, ties by the lower index: `k` keys per row into
    /// `out_keys` and their indices within the row into `out_indices`, `rows × k` of each.
    /// `keys` is only read; k is at most [`TOP_K_MAX_K`](super::topk::TOP_K_MAX_K).
    ///
    /// # Errors
    /// [`Error::RowLength`], [`Error::KOutOfRange`], [`Error::LengthMismatch`] when an output
    /// does not hold `rows × k`, [`Error::OutOfDeviceMemory`] where the pool cannot supply the
    /// scratch, or [`Error::Cuda`] / [`Error::DriverCall`] if a launch is refused.
    pub fn top_k<K: SortKey>(
        &mut self,
        keys: &(impl DeviceMemory<K> + ?Sized),
        row_len: usize,
        k: usize,
        order: Order,
        out_keys: &mut (impl DeviceMemoryMut<K> + ?Sized),
        out_indices: &mut (impl DeviceMemoryMut<u64> + ?Sized),
    ) -> Result<()> {
        let len = keys.len();
        let bytes = self.on.top_k_scratch_bytes::<K>(len, row_len, k)?;
        let rows = len / row_len;
        for out in [out_keys.len(), out_indices.len()] {
            if out != rows * k {
                return Err(Error::LengthMismatch {
                    keys: (rows * k) as u64,
                    values: out as u64,
                });
            }
        }
        let scratch = self.require_scratch(bytes, "the top-k's candidates")?;
        let keys = self.read(keys, "the keys")?;
        let out = (
            self.write(out_keys, "the top-k's keys")?,
            self.write(out_indices, "the top-k's indices")?,
        );
        let out = (out.0.address, out.1.address);
        let scratch = scratch.range();
        self.on
            .enqueue_top_k::<K>((keys.address, len), (row_len, k), order, out, scratch)
    }

    /// Waits until the stream has run everything queued on it.
    ///
    /// # Errors
    /// [`Error::Cuda`] / [`Error::DriverCall`] with the failure of queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.on.bind()?;
        // SAFETY: a live stream of the sorter's context.
        let status = unsafe { cuda::cuStreamSynchronize(self.on.stream) };
        driver(status, "cuStreamSynchronize", || {
            "waiting for the work queued on the stream".into()
        })
    }

    /// The address of `memory`, read by the work about to be queued, once it is checked to be
    /// `len` elements of `T` on the sorter's device; `what` names it in an error.
    pub(super) fn read<'s, T>(
        &'s self,
        memory: &'s (impl DeviceMemory<T> + ?Sized),
        what: &'static str,
    ) -> Result<Access<'s>> {
        let access = memory.read(self)?;
        self.check(access.address, memory.len() * size_of::<T>(), what)?;
        Ok(access)
    }

    /// As [`Queue::read`], for memory the work writes.
    pub(super) fn write<'s, T>(
        &'s self,
        memory: &'s mut (impl DeviceMemoryMut<T> + ?Sized),
        what: &'static str,
    ) -> Result<Access<'s>> {
        let bytes = memory.len() * size_of::<T>();
        let access = memory.write(self)?;
        self.check(access.address, bytes, what)?;
        Ok(access)
    }

    /// Checks that `bytes` from `address` lie in one allocation on the sorter's device, so
    /// that a wrong pointer is an error here rather than a fault in a kernel.
    fn check(&self, address: u64, bytes: usize, what: &'static str) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.on.bind()?;
        use cuda::CUpointer_attribute_enum as A;
        let attribute = |attribute: A, value: *mut c_void| {
            // SAFETY: `value` points to a value of the attribute's type; a pointer the driver
            // does not know is an error status, not undefined behaviour.
            unsafe { cuda::cuPointerGetAttribute(value, attribute, address) }
        };
        let mut ordinal: i32 = -1;
        let status = attribute(
            A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            (&raw mut ordinal).cast(),
        );
        if status != cuda::CUresult::CUDA_SUCCESS {
            let reason = format!("the driver knows no allocation at {address:#x} ({status:?})");
            return Err(Error::BadDeviceMemory { what, reason });
        }
        let mut managed: u32 = 0;
        // Managed memory may be anywhere; the driver migrates it to the kernels' device.
        let _ = attribute(
            A::CU_POINTER_ATTRIBUTE_IS_MANAGED,
            (&raw mut managed).cast(),
        );
        if managed == 0 && ordinal != self.on.ordinal as i32 {
            let reason = format!(
                "it is on device {ordinal}, the sorter on device {}",
                self.on.ordinal
            );
            return Err(Error::BadDeviceMemory { what, reason });
        }
        let (mut start, mut size) = (0u64, 0usize);
        let starts = attribute(
            A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            (&raw mut start).cast(),
        );
        let sizes = attribute(A::CU_POINTER_ATTRIBUTE_RANGE_SIZE, (&raw mut size).cast());
        let known = starts == cuda::CUresult::CUDA_SUCCESS && sizes == cuda::CUresult::CUDA_SUCCESS;
        if known && address + bytes as u64 > start + size as u64 {
            let reason = format!(
                "{bytes} bytes from {address:#x} run past the end of its allocation \
                 ({size} bytes from {start:#x})"
            );
            return Err(Error::BadDeviceMemory { what, reason });
        }
        Ok(())
    }

    /// Queues the sort with `algo` of `len` keys (and values) at `buffers`, with the caller's
    /// scratch or the pool's.
    fn run_sort<K: SortKey>(
        &self,
        algo: GpuAlgo,
        buffers: (u64, u64, usize),
        len: usize,
        order: Order,
    ) -> Result<()> {
        let bytes = self.on.scratch_bytes_of::<K>(algo, len, buffers.2);
        let scratch = self.require_scratch(bytes, algo.scratch_name())?;
        let scratch = (scratch.range().0, bytes);
        self.on
            .enqueue_sort::<K>(algo, buffers, len, order, scratch)
    }

    /// `bytes` of scratch: the caller's if it holds them, else the pool's; `None` where neither
    /// can supply them.
    fn scratch_of(&self, bytes: u64) -> Result<Option<ScratchUse>> {
        if bytes == 0 {
            return Ok(Some(ScratchUse::Caller((0, 0))));
        }
        match self.scratch {
            Some((address, held)) if held >= bytes => Ok(Some(ScratchUse::Caller((address, held)))),
            Some(_) => Ok(None),
            None => Ok(self.on.pool_scratch(bytes)?.map(ScratchUse::Pool)),
        }
    }

    /// As [`Queue::scratch_of`], where `what` cannot do without.
    pub(super) fn require_scratch(&self, bytes: u64, what: &'static str) -> Result<ScratchUse> {
        match self.scratch_of(bytes)? {
            Some(scratch) => Ok(scratch),
            None => {
                let (free, total) = self.on.memory_info()?;
                let requested = bytes;
                let free = match self.scratch {
                    Some((_, held)) => held,
                    None => free,
                };
                Err(Error::OutOfDeviceMemory {
                    what,
                    requested,
                    free,
                    total,
                })
            }
        }
    }
}

/// Scratch for one call: the caller's, or the pool's (given back in the stream's order when
/// dropped, after the call's work is queued).
pub(super) enum ScratchUse {
    Caller((u64, u64)),
    Pool(StreamScratch),
}

impl ScratchUse {
    /// Its device address and bytes.
    pub(super) fn range(&self) -> (u64, u64) {
        match self {
            ScratchUse::Caller(range) => *range,
            ScratchUse::Pool(pool) => pool.range,
        }
    }
}

#[cfg(feature = "cudarc")]
mod cudarc_memory {
    //! `cudarc`'s streams and buffers on a [`Queue`]: its buffers order their work through the
    //! events `cudarc` keeps on them, so a queue must run on a `cudarc` stream to use them.

    use super::{Access, AsStream, DeviceMemory, DeviceMemoryMut, Owner, Queue};
    use crate::error::{Error, Result};
    use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut};

    impl AsStream for CudaStream {
        fn as_raw_stream(&self) -> cust::sys::CUstream {
            self.cu_stream().cast()
        }

        fn as_cudarc(&self) -> Option<&CudaStream> {
            Some(self)
        }
    }

    fn stream<'s>(queue: &'s Queue<'_>) -> Result<&'s CudaStream> {
        queue.cudarc.ok_or(Error::NotOnCudarcStream)
    }

    fn access((address, sync): (u64, cudarc::driver::SyncOnDrop<'_>)) -> Access<'_> {
        Access {
            address,
            _owner: Owner::Cudarc(sync),
        }
    }

    macro_rules! readable {
        ($($t:ty),*) => {$(
            impl<T> DeviceMemory<T> for $t {
                fn len(&self) -> usize {
                    cudarc::driver::DeviceSlice::len(self)
                }

                fn read<'s>(&'s self, queue: &'s Queue<'_>) -> Result<Access<'s>> {
                    Ok(access(self.device_ptr(stream(queue)?)))
                }
            }
        )*};
    }
    readable!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);

    macro_rules! writable {
        ($($t:ty),*) => {$(
            impl<T> DeviceMemoryMut<T> for $t {
                fn write<'s>(&'s mut self, queue: &'s Queue<'_>) -> Result<Access<'s>> {
                    Ok(access(self.device_ptr_mut(stream(queue)?)))
                }
            }
        )*};
    }
    writable!(CudaSlice<T>, CudaViewMut<'_, T>);
}
