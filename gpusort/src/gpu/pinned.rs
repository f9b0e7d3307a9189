//! Page-locked ("pinned") host memory that host-slice sorts copy to and from directly.

use super::GpuSorter;
use super::staging::Byte;
use crate::error::{CudaContext, Result};
use cust::memory::LockedBuffer;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// A slice of `T` in page-locked host memory, allocated through a [`GpuSorter`]'s context.
///
/// Host-slice sorts ([`GpuSorter::sort_unstable`], [`GpuSorter::sort`],
/// [`GpuSorter::sort_by_key`], …) given a slice of a `PinnedBuffer` let the DMA engine read and
/// write it directly: no host copy through the sorter's staging memory, so the round trip costs
/// little more than the two copies over the bus (pageable memory must first be copied into
/// pinned memory by the CPU, which is slower than the bus on most machines). It dereferences
/// to `[T]`; pinned memory is a scarce system resource, so keep such buffers for the large
/// arrays you sort often.
///
/// # Examples
///
/// ```no_run
/// use gpusort::{GpuSorter, Order};
///
/// let gpu = GpuSorter::new()?;
/// let mut keys = gpu.pinned_from_slice(&[3u32, 1, 2])?;
/// gpu.sort_unstable(&mut keys, Order::Ascending)?;
/// assert_eq!(&keys[..], [1, 2, 3]);
/// # Ok::<(), gpusort::Error>(())
/// ```
pub struct PinnedBuffer<T> {
    /// The bytes of `len` values of `T` (page-aligned: any `T`'s alignment holds).
    bytes: LockedBuffer<Byte>,
    len: usize,
    _values: PhantomData<T>,
}

// SAFETY: the buffer owns its values as a Vec would; the pinned allocation is plain memory.
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
// SAFETY: as above; shared access only hands out `&[T]`.
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}

impl<T> Deref for PinnedBuffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised values of T, at a page-aligned address (aligned for any T):
        // every buffer holds at least a page.
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T> DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.bytes.as_mut_ptr().cast::<T>(), self.len) }
    }
}

impl<T> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl GpuSorter {
    /// A copy of `values` in page-locked host memory ([`PinnedBuffer`]).
    ///
    /// # Errors
    /// [`crate::Error::Cuda`] when the driver refuses the allocation (pinned memory is limited
    /// by the system's locked-memory limits).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let gpu = gpusort::GpuSorter::new()?;
    /// let pinned = gpu.pinned_from_slice(&[1.5f64, -2.0])?;
    /// assert_eq!(pinned.to_vec(), [1.5, -2.0]);
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn pinned_from_slice<T: Copy>(&self, values: &[T]) -> Result<PinnedBuffer<T>> {
        self.bind()?;
        let bytes = size_of_val(values);
        // cuMemHostAlloc returns page-aligned memory; an empty buffer gets a dangling pointer,
        // aligned for `Byte` only, so it gets one page instead.
        let allocate = bytes.max(4096);
        // SAFETY: `Byte` may hold anything, initialised or not.
        let mut buffer = unsafe { LockedBuffer::<Byte>::uninitialized(allocate) }
            .context("allocating pinned host memory")?;
        debug_assert_eq!(buffer.as_ptr() as usize % align_of::<T>(), 0);
        // SAFETY: the buffer holds at least `bytes` bytes at an address aligned for T; the
        // values are copied bit for bit (T: Copy).
        unsafe {
            std::ptr::copy_nonoverlapping(values.as_ptr(), buffer.as_mut_ptr().cast(), values.len())
        };
        Ok(PinnedBuffer {
            bytes: buffer,
            len: values.len(),
            _values: PhantomData,
        })
    }

    /// Whether `values` lie in page-locked host memory that this sorter's copies can use
    /// directly: a [`PinnedBuffer`] (or a part of one), or memory registered with the CUDA
    /// driver: what host-slice sorts check to skip the staging copies, for tests of that path
    /// (feature `testing`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let gpu = gpusort::GpuSorter::new()?;
    /// assert!(!gpu.is_page_locked(&vec![0u32; 1000]));
    /// let pinned = gpu.pinned_from_slice(&vec![0u32; 1000])?;
    /// assert!(gpu.is_page_locked(&pinned[10..20]));
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    #[cfg(any(test, feature = "testing"))]
    pub fn is_page_locked<T>(&self, values: &[T]) -> bool {
        self.bind().is_ok() && super::staging::is_page_locked(super::staging::bytes_of(values))
    }
}
