//! Inputs and checks for tests and benchmarks of the multi-GPU sort (feature `testing`): keys
//! made and verified on the GPUs themselves, for arrays too large to make or check on the host.

use super::MultiGpuSorter;
use super::device::blocks_for;
use crate::error::{Result, driver};
use crate::gpu::{GpuSorter, Shape};
use crate::keys::{Order, SortKey};
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::sys as cuda;
use kernels_gpu::kernels::{
    Kernel, multi_check_u32, multi_check_u64, multi_fill_u32, multi_fill_u64,
};
use kernels_gpu::keys::KeyBits;
use kernels_gpu::multi::{CheckArgs, FillArgs};
use kernels_gpu::tuning::{MULTI_CHECK_BLOCKS, MULTI_THREADS};

/// The state of keys spread over GPUs, from [`MultiGpuSorter::check`]: sortedness and a
/// checksum of the multiset, computed on the GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartsCheck {
    /// Keys in all parts.
    pub n: u64,
    /// Neighbours out of order inside the parts.
    pub descents: u64,
    /// Neighbouring parts whose boundary is out of order (last key of one above the first of
    /// the next non-empty one).
    pub bad_boundaries: u64,
    /// Order-independent checksum of the keys' bits: equal before and after a sort.
    pub checksum: u64,
}

impl PartsCheck {
    /// Sorted within and across parts.
    pub fn sorted(&self) -> bool {
        self.descents == 0 && self.bad_boundaries == 0
    }
}

impl MultiGpuSorter {
    /// Uninitialised parts for `n` keys split evenly (the first `n % G` one longer), part `i`
    /// on GPU `i`, for [`MultiGpuSorter::fill_random`] to fill.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`](crate::Error::OutOfDeviceMemory) or
    /// [`Error::Cuda`](crate::Error::Cuda).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use gpusort::{MultiGpuSorter, Order};
    ///
    /// // Keys generated on the GPUs, sorted and checked there:
    /// let gpus = MultiGpuSorter::new(None)?;
    /// let mut parts = gpus.alloc_parts::<u64>(1 << 30)?;
    /// gpus.fill_random(&mut parts, 42)?;
    /// let before = gpus.check(&parts, Order::Ascending)?;
    /// let stats = gpus.sort_device(&mut parts, Order::Ascending)?;
    /// let after = gpus.check(&parts, Order::Ascending)?;
    /// assert!(after.sorted() && after.checksum == before.checksum);
    /// println!("{stats}");
    /// # Ok::<(), gpusort::Error>(())
    /// ```
    pub fn alloc_parts<K: SortKey>(&self, n: u64) -> Result<Vec<DeviceBuffer<K>>> {
        self.gpus
            .iter()
            .zip(self.part_lens(n))
            .map(|(gpu, len)| gpu.alloc::<K>(len as usize, "a part of the keys"))
            .collect()
    }

    /// Fills the parts with random keys (key `k` of the whole, counting across parts in order,
    /// is [`kernels_gpu::multi::random_key`]`(seed, k)` cut to the key's width), on the GPUs.
    ///
    /// # Errors
    /// [`Error::PartCount`](crate::Error::PartCount) or [`Error::Cuda`](crate::Error::Cuda).
    pub fn fill_random<K: SortKey>(&self, parts: &mut [DeviceBuffer<K>], seed: u64) -> Result<()> {
        self.check_parts(parts.len())?;
        let mut first = 0;
        for (gpu, part) in self.gpus.iter().zip(parts.iter()) {
            let (ptr, n) = (part.as_device_ptr().as_raw(), part.len() as u64);
            fill(gpu, size_of::<K>(), ptr, n, seed, first)?;
            first += n;
        }
        self.synchronize("filling the parts with random keys")
    }

    /// Checks the parts on the GPUs: sortedness in `order` inside each part and across the
    /// boundaries, and the multiset checksum.
    ///
    /// # Errors
    /// [`Error::PartCount`](crate::Error::PartCount) or [`Error::Cuda`](crate::Error::Cuda).
    pub fn check<K: SortKey>(&self, parts: &[DeviceBuffer<K>], order: Order) -> Result<PartsCheck> {
        self.check_parts(parts.len())?;
        let map = K::key_map(order);
        let mut result = PartsCheck {
            n: 0,
            descents: 0,
            bad_boundaries: 0,
            checksum: 0,
        };
        let mut last_key: Option<K::Bits> = None;
        for (gpu, part) in self.gpus.iter().zip(parts) {
            let (ptr, n) = (part.as_device_ptr().as_raw(), part.len() as u64);
            if n == 0 {
                continue;
            }
            let (descents, checksum) = check(gpu, size_of::<K>(), ptr, n, map)?;
            result.n += n;
            result.descents += descents;
            result.checksum = result.checksum.wrapping_add(checksum);
            let kb = size_of::<K>() as u64;
            let first: Vec<K::Bits> = read(gpu, ptr, 1)?;
            if let Some(last) = last_key {
                result.bad_boundaries += u64::from(last.encode(map) > first[0].encode(map));
            }
            last_key = Some(read::<K::Bits>(gpu, ptr + (n - 1) * kb, 1)?[0]);
        }
        Ok(result)
    }
}

/// The random fill of keys of `key_bytes` (4 or 8).
fn fill_kernel(key_bytes: usize) -> Kernel<FillArgs> {
    match key_bytes {
        4 => multi_fill_u32,
        _ => multi_fill_u64,
    }
}

/// The check of keys of `key_bytes` (4 or 8).
fn check_kernel(key_bytes: usize) -> Kernel<CheckArgs> {
    match key_bytes {
        4 => multi_check_u32,
        _ => multi_check_u64,
    }
}

/// `len` values of `T` at device address `ptr` of `gpu`, copied to the host (after the work
/// queued on the sorter's stream: it is blocking, and the copy runs on the legacy stream).
fn read<T: DeviceCopy + Default>(gpu: &GpuSorter, ptr: u64, len: u64) -> Result<Vec<T>> {
    gpu.bind()?;
    let mut out = vec![T::default(); len as usize];
    let bytes = len as usize * size_of::<T>();
    if bytes > 0 {
        // SAFETY: `out` has room for `bytes`; the caller's `ptr` holds `len` values.
        let status = unsafe { cuda::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), ptr, bytes) };
        driver(status, "cuMemcpyDtoH", || {
            format!("reading {bytes} bytes from {}", gpu.device_name())
        })?;
    }
    Ok(out)
}

/// Queues the filling of `n` keys of `key_bytes` at `ptr` with random keys `first..first + n`
/// of stream `seed` ([`kernels_gpu::multi::random_key`]).
fn fill(gpu: &GpuSorter, key_bytes: usize, ptr: u64, n: u64, seed: u64, first: u64) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let blocks = blocks_for(n).min(MULTI_CHECK_BLOCKS * 8);
    let args = FillArgs {
        keys: ptr,
        n,
        seed,
        first,
    };
    let shape = Shape::new(blocks, MULTI_THREADS, 0);
    // SAFETY: `ptr` holds n keys.
    unsafe {
        gpu.on_own_stream()
            .launch(fill_kernel(key_bytes), shape, args)
    }
}

/// How `n` keys of `key_bytes` at `ptr` stand: neighbours out of the order of key map `map`,
/// and the multiset checksum of their raw bits ([`kernels_gpu::multi::checksum_term`]).
fn check(gpu: &GpuSorter, key_bytes: usize, ptr: u64, n: u64, map: u32) -> Result<(u64, u64)> {
    if n == 0 {
        return Ok((0, 0));
    }
    gpu.bind()?;
    let partials: DeviceBuffer<u64> =
        gpu.alloc(2 * MULTI_CHECK_BLOCKS as usize, "check results")?;
    let out = partials.as_device_ptr().as_raw();
    let args = CheckArgs {
        keys: ptr,
        n,
        map,
        partials: out,
    };
    let shape = Shape::new(MULTI_CHECK_BLOCKS, MULTI_THREADS, 2 * MULTI_THREADS * 8);
    // SAFETY: `ptr` holds n keys; two partials per block.
    unsafe {
        gpu.on_own_stream()
            .launch(check_kernel(key_bytes), shape, args)?
    };
    let partials: Vec<u64> = read(gpu, out, 2 * u64::from(MULTI_CHECK_BLOCKS))?;
    let descents = partials.iter().step_by(2).sum();
    let checksum = partials
        .iter()
        .skip(1)
        .step_by(2)
        .fold(0u64, |s, &c| s.wrapping_add(c));
    Ok((descents, checksum))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_has_its_kernels() {
        for (kb, bits) in [(4, 32), (8, 64)] {
            assert_eq!(fill_kernel(kb).name(), format!("multi_fill_u{bits}"));
            assert_eq!(check_kernel(kb).name(), format!("multi_check_u{bits}"));
        }
    }
}
