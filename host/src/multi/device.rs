//! The device work of the multi-GPU sort besides the single-GPU merge kernels: the sample and
//! rank kernels behind the splitter search, reads of device keys, and the kernels that make
//! random keys and check sorted ones on the GPUs.

use super::select::{Ranks, SortedParts};
use crate::error::{CudaContext, Result, driver};
use crate::gpu::GpuSorter;
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy};
use cust::sys as cuda;
use kernels_gpu::multi::sample_count;
use kernels_gpu::tuning::{MULTI_CHECK_BLOCKS, MULTI_THREADS};
use std::marker::PhantomData;
use std::ops::Range;

/// Kernel `multi_<what>_u32` or `_u64` for keys of `key_bytes`.
fn kernel(what: &str, key_bytes: usize) -> String {
    format!("multi_{what}_u{}", 8 * key_bytes)
}

/// Blocks of `MULTI_THREADS` threads for one thread per item.
fn blocks_for(items: u64) -> u32 {
    items.div_ceil(u64::from(MULTI_THREADS)).max(1) as u32
}

/// `len` values of `T` at device address `ptr` of `gpu`, copied to the host (after the work
/// queued on the sorter's stream: it is blocking, and the copy runs on the legacy stream).
pub(crate) fn read<T: DeviceCopy + Default>(gpu: &GpuSorter, ptr: u64, len: u64) -> Result<Vec<T>> {
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

/// Sorted parts of encoded keys (`B`, the keys' bit type) on the GPUs, one per sorter.
pub(crate) struct GpuParts<'a, B> {
    pub gpus: &'a [GpuSorter],
    /// Device address of each part.
    pub ptrs: Vec<u64>,
    pub lens: Vec<u64>,
    pub bits: PhantomData<B>,
}

impl<B: DeviceCopy + Default + Ord + Copy> SortedParts for GpuParts<'_, B> {
    type Key = B;

    fn lens(&self) -> Vec<u64> {
        self.lens.clone()
    }

    fn samples(&mut self, stride: u64) -> Result<Vec<Vec<B>>> {
        let kb = size_of::<B>();
        let name = kernel("sample", kb);
        let mut samples = Vec::new();
        for ((gpu, &ptr), &n) in self.gpus.iter().zip(&self.ptrs).zip(&self.lens) {
            if n == 0 {
                samples.push(Vec::new());
                continue;
            }
            let count = sample_count(n, stride);
            let out = gpu.alloc::<B>(count as usize, "the sample of a part")?;
            let (f, stream) = (crate::gpu::function(gpu.module(), &name)?, gpu.stream());
            let out_ptr = out.as_device_ptr().as_raw();
            // SAFETY: the part holds n keys; `out` has room for the sample count.
            unsafe {
                launch!(f<<<blocks_for(count), MULTI_THREADS, 0, stream>>>(ptr, n, stride, out_ptr))
            }
            .context("launching the sample kernel")?;
            samples.push(read(gpu, out_ptr, count)?);
        }
        Ok(samples)
    }

    fn ranks(&mut self, probes: &[B]) -> Result<Vec<Ranks>> {
        let kb = size_of::<B>();
        let name = kernel("ranks", kb);
        let count = probes.len() as u64;
        // Launch on every GPU first, so that they search at the same time.
        let mut pending = Vec::new();
        for ((gpu, &ptr), &n) in self.gpus.iter().zip(&self.ptrs).zip(&self.lens) {
            let device_probes = gpu.upload(probes)?;
            let below = gpu.alloc::<u64>(probes.len(), "probe ranks")?;
            let not_above = gpu.alloc::<u64>(probes.len(), "probe ranks")?;
            let (f, stream) = (crate::gpu::function(gpu.module(), &name)?, gpu.stream());
            let args = (
                device_probes.as_device_ptr().as_raw(),
                below.as_device_ptr().as_raw(),
                not_above.as_device_ptr().as_raw(),
            );
            // SAFETY: the part holds n keys; the three buffers hold `count` each.
            unsafe {
                launch!(f<<<blocks_for(count), MULTI_THREADS, 0, stream>>>(
                    ptr, n, args.0, count, args.1, args.2
                ))
            }
            .context("launching the rank kernel")?;
            pending.push((gpu, device_probes, below, not_above));
        }
        pending
            .into_iter()
            .map(|(gpu, _probes, below, not_above)| {
                gpu.bind()?;
                let mut ranks = Ranks {
                    below: vec![0; probes.len()],
                    not_above: vec![0; probes.len()],
                };
                below
                    .copy_to(&mut ranks.below[..])
                    .context("reading probe ranks")?;
                not_above
                    .copy_to(&mut ranks.not_above[..])
                    .context("reading probe ranks")?;
                Ok(ranks)
            })
            .collect()
    }

    fn window(&mut self, part: usize, range: Range<u64>) -> Result<Vec<B>> {
        let ptr = self.ptrs[part] + range.start * size_of::<B>() as u64;
        read(&self.gpus[part], ptr, range.end - range.start)
    }
}

/// Queues the filling of `n` keys of `key_bytes` at `ptr` with random keys `first..first + n`
/// of stream `seed` ([`kernels_gpu::multi::random_key`]).
pub(crate) fn fill(
    gpu: &GpuSorter,
    key_bytes: usize,
    ptr: u64,
    n: u64,
    seed: u64,
    first: u64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    gpu.bind()?;
    let f = crate::gpu::function(gpu.module(), &kernel("fill", key_bytes))?;
    let stream = gpu.stream();
    let blocks = blocks_for(n).min(MULTI_CHECK_BLOCKS * 8);
    // SAFETY: `ptr` holds n keys.
    unsafe { launch!(f<<<blocks, MULTI_THREADS, 0, stream>>>(ptr, n, seed, first)) }
        .context("launching the random fill")
}

/// How `n` keys of `key_bytes` at `ptr` stand: neighbours out of the order of key map `map`,
/// and the multiset checksum of their raw bits ([`kernels_gpu::multi::checksum_term`]).
pub(crate) fn check(
    gpu: &GpuSorter,
    key_bytes: usize,
    ptr: u64,
    n: u64,
    map: u32,
) -> Result<(u64, u64)> {
    if n == 0 {
        return Ok((0, 0));
    }
    gpu.bind()?;
    let partials: DeviceBuffer<u64> =
        gpu.alloc(2 * MULTI_CHECK_BLOCKS as usize, "check results")?;
    let f = crate::gpu::function(gpu.module(), &kernel("check", key_bytes))?;
    let stream = gpu.stream();
    let shared = 2 * MULTI_THREADS * 8;
    let out = partials.as_device_ptr().as_raw();
    // SAFETY: `ptr` holds n keys; two partials per block.
    unsafe { launch!(f<<<MULTI_CHECK_BLOCKS, MULTI_THREADS, shared, stream>>>(ptr, n, map, out)) }
        .context("launching the check kernel")?;
    let partials: Vec<u64> = read(gpu, out, 2 * u64::from(MULTI_CHECK_BLOCKS))?;
    let descents = partials.iter().step_by(2).sum();
    let checksum = partials
        .iter()
        .skip(1)
        .step_by(2)
        .fold(0u64, |s, &c| s.wrapping_add(c));
    Ok((descents, checksum))
}
