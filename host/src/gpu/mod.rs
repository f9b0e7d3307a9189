//! The GPU side: a [`GpuSorter`] owns a CUDA context, the kernels' module and a stream.
//!
//! Two sorts: `sort_unstable*` (the bitonic network, in place, no scratch) and `sort*`,
//! `sort_pairs*`, `argsort*` (the stable merge-path merge sort, with a scratch buffer as large
//! as the keys and values; see [`merge::scratch_bytes`]).

mod bitonic;
pub mod merge;

use crate::error::{CudaContext, Error, Result};
use crate::keys::{Order, SortKey, SortValue};
use cust::context::{Context, CurrentContext};
use cust::device::Device;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use cust::sys as cuda;
use kernels_gpu::tuning::MAX_KEYS;

/// The kernels, compiled to PTX by `build.rs`.
pub const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// The GPU sorts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum GpuAlgo {
    /// The bitonic network: unstable, in place, no scratch ([`GpuSorter::sort_unstable`]).
    Bitonic,
    /// The merge-path merge sort: stable, with scratch ([`GpuSorter::sort`]).
    Merge,
}

impl GpuAlgo {
    /// Its name on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            GpuAlgo::Bitonic => "bitonic",
            GpuAlgo::Merge => "merge",
        }
    }
}

/// Sorts on one CUDA device.
///
/// Creating one initialises the driver, binds the device's primary context and JIT-compiles
/// the kernels (about 0.2 s and 0.07 s on an H100): create it once and reuse it. Every method
/// makes the context current on the calling thread first, so a sorter may move between threads.
pub struct GpuSorter {
    // Field order is drop order: module and stream go before the context that owns them.
    module: Module,
    stream: Stream,
    context: Context,
    name: String,
}

impl GpuSorter {
    /// A sorter on the first CUDA device.
    ///
    /// # Errors
    /// [`Error::NoDriver`], [`Error::NoDevice`], or [`Error::Cuda`] if the context or module
    /// cannot be created.
    pub fn new() -> Result<Self> {
        Self::with_device(0)
    }

    /// A sorter on CUDA device `ordinal`.
    ///
    /// # Errors
    /// As [`GpuSorter::new`], and [`Error::InvalidDevice`] for an ordinal past the last device.
    pub fn with_device(ordinal: u32) -> Result<Self> {
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
        let context = Context::new(device).context("creating a CUDA context")?;
        let module = Module::from_ptx(KERNELS_PTX, &[]).context("loading the kernels' PTX")?;
        bitonic::configure(&module)?;
        merge::configure(&module)?;
        let stream =
            Stream::new(StreamFlags::NON_BLOCKING, None).context("creating a CUDA stream")?;
        Ok(GpuSorter {
            module,
            stream,
            context,
            name,
        })
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// The stream all work of this sorter is queued on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Makes this sorter's context current on the calling thread.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver refuses.
    pub fn bind(&self) -> Result<()> {
        CurrentContext::set_current(&self.context).context("making the CUDA context current")
    }

    /// Free and total device memory, in bytes.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the driver cannot tell.
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        self.bind()?;
        let (free, total) = cust::memory::mem_get_info().context("reading free device memory")?;
        Ok((free as u64, total as u64))
    }

    /// A device buffer of `len` values, checked against free memory first; its contents are
    /// unspecified.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the bytes needed and free, or [`Error::Cuda`].
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

    /// A device copy of `keys`.
    ///
    /// # Errors
    /// As [`GpuSorter::alloc`].
    pub fn upload<T: DeviceCopy>(&self, keys: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buffer = self.alloc(keys.len(), "the keys")?;
        buffer
            .copy_from(keys)
            .context("copying keys to the device")?;
        Ok(buffer)
    }

    /// Sorts `keys` (unstable: equal keys may be reordered; floats as `total_cmp`) with the
    /// bitonic network, through a device buffer of the same length.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`]. On error `keys`
    /// is unchanged unless the final copy back failed.
    pub fn sort_unstable<K: SortKey>(&self, keys: &mut [K], order: Order) -> Result<()> {
        if keys.len() <= 1 {
            return Ok(());
        }
        check_len(keys.len())?;
        let mut device = self.upload(keys)?;
        self.sort_unstable_device(&mut device, order)?;
        device
            .copy_to(keys)
            .context("copying sorted keys to the host")
    }

    /// Sorts keys already on the device, in place (no temporary device memory), and waits.
    ///
    /// # Errors
    /// [`Error::TooLong`] or [`Error::Cuda`] (launch or execution failure).
    pub fn sort_unstable_device<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        self.enqueue_sort_unstable(keys, order)?;
        self.synchronize("running the bitonic sort")
    }

    /// Queues the in-place sort of device keys on [`GpuSorter::stream`] without waiting.
    ///
    /// # Errors
    /// [`Error::TooLong`] or [`Error::Cuda`] if a launch is refused; execution errors show at
    /// the next synchronisation.
    pub fn enqueue_sort_unstable<K: SortKey>(
        &self,
        keys: &mut DeviceSlice<K>,
        order: Order,
    ) -> Result<()> {
        check_len(keys.len())?;
        self.bind()?;
        let (ptr, len) = (keys.as_device_ptr().as_raw(), keys.len() as u64);
        bitonic::enqueue(self, ptr, len, size_of::<K>(), K::key_map(order))
    }

    /// Sorts `keys` stably (equal keys keep their order; floats as `total_cmp`) with the
    /// merge-path merge sort, through device buffers.
    ///
    /// Device memory: the keys plus [`merge::scratch_bytes`] (about as much again).
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`]. On error `keys`
    /// is unchanged unless the final copy back failed.
    pub fn sort<K: SortKey>(&self, keys: &mut [K], order: Order) -> Result<()> {
        if keys.len() <= 1 {
            return Ok(());
        }
        check_len(keys.len())?;
        let mut device = self.upload(keys)?;
        self.sort_device(&mut device, order)?;
        device
            .copy_to(keys)
            .context("copying sorted keys to the host")
    }

    /// Sorts keys already on the device stably, in place, and waits. Allocates (and frees) a
    /// scratch buffer of [`merge::scratch_bytes`] bytes, about the size of the keys, after
    /// checking that much memory is free.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`].
    pub fn sort_device<K: SortKey>(&self, keys: &mut DeviceSlice<K>, order: Order) -> Result<()> {
        check_len(keys.len())?;
        let mut scratch = self.sort_scratch::<K>(keys.len(), 0)?;
        self.enqueue_sort(keys, order, &mut scratch)?;
        self.synchronize("running the merge sort")
    }

    /// Scratch for the stable sort of `len` keys of type `K` with values of `value_bytes`
    /// bytes each (0 for keys only, 4 or 8), checked against free memory first.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the bytes needed and free, or [`Error::Cuda`].
    pub fn sort_scratch<K: SortKey>(&self, len: usize, value_bytes: usize) -> Result<Scratch> {
        let bytes = merge::scratch_bytes(len as u64, size_of::<K>(), value_bytes);
        // u64 elements keep every part 8-aligned.
        let buffer = if bytes == 0 {
            None
        } else {
            Some(self.alloc::<u64>(bytes.div_ceil(8) as usize, "the merge sort's scratch")?)
        };
        Ok(Scratch { buffer, bytes })
    }

    /// Queues the stable sort of device keys on [`GpuSorter::stream`] without waiting, using
    /// `scratch` (from [`GpuSorter::sort_scratch`] for at least this many keys of this type;
    /// it must live until the stream is synchronised).
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
        self.enqueue_merge::<K>(
            keys.as_device_ptr().as_raw(),
            0,
            0,
            keys.len(),
            order,
            scratch,
        )
    }

    /// Sorts `keys` stably and applies the same permutation to `values` (one per key): the
    /// merge sort with the values carried along.
    ///
    /// Device memory: keys and values, twice over (see [`merge::scratch_bytes`]).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or
    /// [`Error::Cuda`].
    pub fn sort_pairs<K: SortKey, V: SortValue>(
        &self,
        keys: &mut [K],
        values: &mut [V],
        order: Order,
    ) -> Result<()> {
        check_pairs(keys.len(), values.len())?;
        if keys.len() <= 1 {
            return Ok(());
        }
        let mut device_keys = self.upload(keys)?;
        let mut device_values = self.alloc::<V>(values.len(), "the values")?;
        device_values
            .copy_from(&*values)
            .context("copying values to the device")?;
        self.sort_pairs_device(&mut device_keys, &mut device_values, order)?;
        device_keys
            .copy_to(keys)
            .context("copying sorted keys to the host")?;
        device_values
            .copy_to(values)
            .context("copying permuted values to the host")
    }

    /// [`GpuSorter::sort_pairs`] on device buffers, in place; waits. Allocates (and frees) the
    /// scratch ([`merge::scratch_bytes`]).
    ///
    /// # Errors
    /// As [`GpuSorter::sort_pairs`].
    pub fn sort_pairs_device<K: SortKey, V: SortValue>(
        &self,
        keys: &mut DeviceSlice<K>,
        values: &mut DeviceSlice<V>,
        order: Order,
    ) -> Result<()> {
        check_pairs(keys.len(), values.len())?;
        let mut scratch = self.sort_scratch::<K>(keys.len(), size_of::<V>())?;
        self.enqueue_merge::<K>(
            keys.as_device_ptr().as_raw(),
            values.as_device_ptr().as_raw(),
            size_of::<V>(),
            keys.len(),
            order,
            &mut scratch,
        )?;
        self.synchronize("running the merge sort of pairs")
    }

    /// The stable permutation that sorts `keys` in `order`, as `u64` indices (any length):
    /// `keys[perm[0]], keys[perm[1]], …` is sorted, equal keys in input order. `keys` is not
    /// changed. Device memory: 2 × (keys + 8 bytes per key).
    ///
    /// # Errors
    /// As [`GpuSorter::sort_pairs`].
    pub fn argsort<K: SortKey>(&self, keys: &[K], order: Order) -> Result<Vec<u64>> {
        self.argsort_as::<K, u64>(keys, order)
    }

    /// [`GpuSorter::argsort`] with `u32` indices: less memory and traffic (2 × (keys + 4 bytes
    /// per key)), for up to 2^32 keys.
    ///
    /// # Errors
    /// [`Error::TooLong`] past 2^32 keys; otherwise as [`GpuSorter::sort_pairs`].
    pub fn argsort_u32<K: SortKey>(&self, keys: &[K], order: Order) -> Result<Vec<u32>> {
        let max = u64::from(u32::MAX) + 1;
        if keys.len() as u64 > max {
            return Err(Error::TooLong {
                len: keys.len() as u64,
                max,
            });
        }
        self.argsort_as::<K, u32>(keys, order)
    }

    fn argsort_as<K: SortKey, V: SortValue>(&self, keys: &[K], order: Order) -> Result<Vec<V>> {
        let mut indices: Vec<V> = (0..keys.len() as u64).map(V::from_index).collect();
        if keys.len() <= 1 {
            return Ok(indices);
        }
        let mut device_keys = self.upload(keys)?;
        let mut device_values = self.upload(&indices)?;
        self.sort_pairs_device(&mut device_keys, &mut device_values, order)?;
        device_values
            .copy_to(&mut indices[..])
            .context("copying the permutation to the host")?;
        Ok(indices)
    }

    fn enqueue_merge<K: SortKey>(
        &self,
        keys: u64,
        values: u64,
        value_bytes: usize,
        len: usize,
        order: Order,
        scratch: &mut Scratch,
    ) -> Result<()> {
        check_len(len)?;
        let needed = merge::scratch_bytes(len as u64, size_of::<K>(), value_bytes);
        assert!(
            scratch.bytes >= needed,
            "scratch of {} bytes for a sort that needs {needed}",
            scratch.bytes
        );
        self.bind()?;
        let launch = merge::Launch {
            keys,
            values,
            scratch: scratch
                .buffer
                .as_ref()
                .map_or(0, |b| b.as_device_ptr().as_raw()),
            n: len as u64,
            key_bytes: size_of::<K>(),
            value_bytes,
            map: K::key_map(order),
        };
        merge::enqueue(self, &launch)
    }

    /// Sorts host keys with `algo`.
    ///
    /// # Errors
    /// As [`GpuSorter::sort_unstable`] or [`GpuSorter::sort`].
    pub fn sort_with<K: SortKey>(&self, algo: GpuAlgo, keys: &mut [K], order: Order) -> Result<()> {
        match algo {
            GpuAlgo::Bitonic => self.sort_unstable(keys, order),
            GpuAlgo::Merge => self.sort(keys, order),
        }
    }

    /// Waits for the stream; `what` names the work in an error.
    ///
    /// # Errors
    /// [`Error::Cuda`] with the first error of the queued work.
    pub fn synchronize(&self, what: &str) -> Result<()> {
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

/// `cuInit`, with the failures that mean "no driver" told apart from "no device".
fn init_driver() -> Result<()> {
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
