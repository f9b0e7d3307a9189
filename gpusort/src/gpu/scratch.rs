//! Scratch for the sorts that need it: its size, the caller's or the stream's allocation, and
//! the sorts queued on it.

use super::auto::{self};
use super::launch::On;
use super::{GpuAlgo, GpuSorter, bitonic, check_len, merge, radix};
use crate::error::{Result, driver};
use crate::keys::{Order, SortKey};
use cust::memory::DeviceBuffer;
use cust::sys as cuda;

impl GpuSorter {
    /// Scratch for a sort with `algo` of `len` keys of type `K` with values of `value_bytes`
    /// bytes each (0 for keys only, 4, 8 or 16), checked against free memory first: none for
    /// the bitonic sort, [`merge::scratch_bytes`] or [`radix::scratch_bytes`] for the others.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the bytes needed and free, or [`Error::Cuda`].
    pub(crate) fn scratch_for<K: SortKey>(
        &self,
        algo: GpuAlgo,
        len: usize,
        value_bytes: usize,
    ) -> Result<Scratch> {
        let bytes = self.scratch_bytes_of::<K>(algo, len, value_bytes);
        let what = algo.scratch_name();
        // Device allocations start 256-aligned; the layouts align each part within.
        let buffer = if bytes == 0 {
            None
        } else {
            Some(self.alloc::<u64>(bytes.div_ceil(8) as usize, what)?)
        };
        Ok(Scratch { buffer })
    }

    /// Bytes of scratch `algo` needs for `len` keys of type `K` with values of `value_bytes`
    /// on this device ([`merge::scratch_bytes`], [`radix::scratch_bytes`]; none for the
    /// bitonic sort).
    pub(super) fn scratch_bytes_of<K: SortKey>(
        &self,
        algo: GpuAlgo,
        len: usize,
        value_bytes: usize,
    ) -> u64 {
        let max_shared = self.limits.max_shared_per_block;
        auto::scratch_bytes(algo, len as u64, size_of::<K>(), value_bytes, max_shared)
    }
}

impl On<'_> {
    /// Queues the sort with `algo` of `len` keys at device address `keys` and their values at
    /// `values` (`value_bytes` each; 0 for none), given as `(keys, values, value_bytes)`, with
    /// the scratch at `scratch` = (address, bytes): at least what `algo` needs.
    ///
    /// # Panics
    /// If the scratch is too small, or the bitonic sort is given values.
    pub(crate) fn enqueue_sort<K: SortKey>(
        &self,
        algo: GpuAlgo,
        (keys, values, value_bytes): (u64, u64, usize),
        len: usize,
        order: Order,
        (scratch, scratch_bytes): (u64, u64),
    ) -> Result<()> {
        check_len(len)?;
        let needed = self.scratch_bytes_of::<K>(algo, len, value_bytes);
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

    /// `bytes` of scratch allocated from the device's memory pool in the order of the stream,
    /// given back in that order when dropped: `None` where the device has no memory pools or
    /// its pool cannot supply them.
    pub(crate) fn pool_scratch(&self, bytes: u64) -> Result<Option<StreamScratch>> {
        self.bind()?;
        let mut ptr = 0;
        // SAFETY: an out pointer and a live stream of the sorter's context.
        let status = unsafe { cuda::cuMemAllocAsync(&mut ptr, bytes as usize, self.stream) };
        use cuda::cudaError_enum as E;
        match status {
            E::CUDA_SUCCESS => Ok(Some(StreamScratch {
                stream: self.stream,
                range: (ptr, bytes),
            })),
            E::CUDA_ERROR_OUT_OF_MEMORY | E::CUDA_ERROR_NOT_SUPPORTED => Ok(None),
            other => {
                let what = || format!("allocating {bytes} bytes of scratch on the sort's stream");
                driver(other, "cuMemAllocAsync", what).map(|()| None)
            }
        }
    }
}

/// Device scratch of a sort, from [`GpuSorter::scratch_for`], freed when dropped.
pub(crate) struct Scratch {
    buffer: Option<DeviceBuffer<u64>>,
}

impl Scratch {
    /// Its device address, 0 where the sort needs none.
    pub(super) fn device_ptr(&self) -> u64 {
        self.buffer
            .as_ref()
            .map_or(0, |b| b.as_device_ptr().as_raw())
    }
}

/// Scratch from the device's memory pool, allocated on a stream (`cuMemAllocAsync`) and freed
/// on it when dropped (`cuMemFreeAsync`): work queued on the stream in between may use it, and
/// the memory goes back to the pool once the stream has run that work.
pub(crate) struct StreamScratch {
    stream: cuda::CUstream,
    /// Device address and size.
    pub(crate) range: (u64, u64),
}

impl Drop for StreamScratch {
    fn drop(&mut self) {
        // SAFETY: the pointer came from cuMemAllocAsync and is freed once, in stream order. A
        // failure (the context's earlier error) leaves it to the pool, freed with the context.
        let _ = unsafe { cuda::cuMemFreeAsync(self.range.0, self.stream) };
    }
}
