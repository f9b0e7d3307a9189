//! The GPU side: a [`GpuSorter`] owns a CUDA context, the kernels' module and a stream.

mod bitonic;
mod staging;

use crate::error::{CudaContext, Error, Result};
use crate::keys::{Order, SortKey};
use cust::context::{Context, CurrentContext};
use cust::device::Device;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use cust::sys as cuda;
use kernels_gpu::tuning::MAX_KEYS;
use staging::Staging;
use std::sync::Mutex;

/// The kernels, compiled to PTX by `build.rs`.
pub const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// Sorts on one CUDA device.
///
/// Creating one initialises the driver, binds the device's primary context and JIT-compiles
/// the kernels (about 0.2 s and 0.07 s on an H100): create it once and reuse it. Every method
/// makes the context current on the calling thread first, so a sorter may move between threads.
pub struct GpuSorter {
    // Field order is drop order: module and stream go before the context that owns them.
    module: Module,
    stream: Stream,
    /// Pinned chunks for host-slice sorts, allocated by the first one.
    staging: Mutex<Option<Staging>>,
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
        // A blocking stream: it waits for work on the legacy default stream, where cust's
        // synchronous copies run (a pageable host-to-device copy may return before its DMA is
        // done), so a sort never starts on keys still in flight.
        let stream = Stream::new(StreamFlags::DEFAULT, None).context("creating a CUDA stream")?;
        let staging = Mutex::new(None);
        Ok(GpuSorter {
            module,
            stream,
            staging,
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
    /// bitonic network, through a device buffer of the same length. The keys travel through two
    /// reused 16 MiB pinned chunks, copied on all cores while the DMA engine moves the other chunk.
    ///
    /// # Errors
    /// [`Error::TooLong`], [`Error::OutOfDeviceMemory`], or [`Error::Cuda`]. On error `keys`
    /// is unchanged unless the final copy back failed.
    pub fn sort_unstable<K: SortKey>(&self, keys: &mut [K], order: Order) -> Result<()> {
        if keys.len() <= 1 {
            return Ok(());
        }
        check_len(keys.len())?;
        let mut device = self.alloc::<K>(keys.len(), "the keys")?;
        // SAFETY: SortKey types are plain integers and floats (the trait is sealed): every byte
        // pattern is a valid key, and the byte view covers exactly the slice.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<u8>(), size_of_val(keys))
        };
        // SAFETY: the byte view covers exactly the device buffer, which outlives it.
        let mut device_bytes = unsafe {
            DeviceSlice::from_raw_parts_mut(device.as_device_ptr().cast::<u8>(), bytes.len())
        };
        let mut staging = self
            .staging
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if staging.is_none() {
            *staging = Some(Staging::new()?);
        }
        let staging = staging.as_mut().expect("just created");
        staging.upload(bytes, &mut device_bytes, &self.stream)?;
        self.enqueue_sort_unstable(&mut device, order)?;
        staging.download(&device_bytes, bytes, &self.stream)
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

    /// Waits for the stream; `what` names the work in an error.
    ///
    /// # Errors
    /// [`Error::Cuda`] with the first error of the queued work.
    pub fn synchronize(&self, what: &str) -> Result<()> {
        self.stream.synchronize().context(what)
    }
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
