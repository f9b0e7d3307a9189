//! The device work of the multi-GPU sort besides the single-GPU merge kernels: the sample and
//! rank kernels behind the splitter search, reads of device keys, and the kernels that make
//! random keys and check sorted ones on the GPUs.

use super::select::{Ranks, SortedParts};
use crate::error::{CudaContext, Result, driver};
use crate::gpu::GpuSorter;
use cust::launch;
use cust::memory::{DeviceBuffer, DeviceCopy};
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

/// Words (`u64`) of each GPU's workspace for the cuts: three regions of [`WORKSPACE_PROBES`]
/// words (the sample or a batch of probes, and their two ranks). Allocated once per sorter:
/// with peer access enabled every allocation is mapped into every peer, which made a
/// per-sort allocation cost milliseconds.
pub(crate) const WORKSPACE_WORDS: usize = 3 * WORKSPACE_PROBES;

/// Probes ranked per launch; at least the sample of a part.
const WORKSPACE_PROBES: usize = 1 << 15;
const _: () = assert!(kernels_gpu::tuning::MULTI_SAMPLES < WORKSPACE_PROBES as u64);

/// Copies `data` to device address `ptr` of `gpu`.
fn write<T: DeviceCopy>(gpu: &GpuSorter, ptr: u64, data: &[T]) -> Result<()> {
    gpu.bind()?;
    let bytes = size_of_val(data);
    // SAFETY: the caller's `ptr` has room for `data`.
    let status = unsafe { cuda::cuMemcpyHtoD_v2(ptr, data.as_ptr().cast(), bytes) };
    driver(status, "cuMemcpyHtoD", || {
        format!("writing {bytes} bytes to {}", gpu.device_name())
    })
}

/// Sorted parts of encoded keys (`B`, the keys' bit type) on the GPUs, one per sorter, with
/// each GPU's workspace ([`WORKSPACE_WORDS`] words at `workspaces[i]`).
pub(crate) struct GpuParts<'a, B> {
    pub gpus: &'a [GpuSorter],
    /// Device address of each part.
    pub ptrs: Vec<u64>,
    pub lens: Vec<u64>,
    pub workspaces: Vec<u64>,
    pub bits: PhantomData<B>,
}

impl<B: DeviceCopy + Default + Ord + Copy + Send + Sync> SortedParts for GpuParts<'_, B> {
    type Key = B;

    fn lens(&self) -> Vec<u64> {
        self.lens.clone()
    }

    fn samples(&mut self, stride: u64) -> Result<Vec<Vec<B>>> {
        let name = kernel("sample", size_of::<B>());
        self.each_gpu(|i, gpu| {
            let (ptr, n, out) = (self.ptrs[i], self.lens[i], self.workspaces[i]);
            if n == 0 {
                return Ok(Vec::new());
            }
            let count = sample_count(n, stride);
            assert!(
                count as usize <= WORKSPACE_PROBES,
                "a stride too fine for the workspace"
            );
            gpu.bind()?;
            let (f, stream) = (crate::gpu::function(gpu.module(), &name)?, gpu.stream());
            // SAFETY: the part holds n keys; the workspace has room for the sample.
            unsafe {
                launch!(f<<<blocks_for(count), MULTI_THREADS, 0, stream>>>(ptr, n, stride, out))
            }
            .context("launching the sample kernel")?;
            read(gpu, out, count)
        })
    }

    fn ranks(&mut self, probes: &[B]) -> Result<Vec<Ranks>> {
        let name = kernel("ranks", size_of::<B>());
        self.each_gpu(|i, gpu| {
            let (ptr, n, work) = (self.ptrs[i], self.lens[i], self.workspaces[i]);
            let (below, not_above) = regions(work);
            let mut ranks = Ranks::default();
            for batch in probes.chunks(WORKSPACE_PROBES) {
                let count = batch.len() as u64;
                write(gpu, work, batch)?;
                let (f, stream) = (crate::gpu::function(gpu.module(), &name)?, gpu.stream());
                // SAFETY: the part holds n keys; each workspace region holds `count` words.
                unsafe {
                    launch!(f<<<blocks_for(count), MULTI_THREADS, 0, stream>>>(
                        ptr, n, work, count, below, not_above
                    ))
                }
                .context("launching the rank kernel")?;
                ranks.below.extend(read::<u64>(gpu, below, count)?);
                ranks.not_above.extend(read::<u64>(gpu, not_above, count)?);
            }
            Ok(ranks)
        })
    }

    fn windows(&mut self, ranges: &[Vec<Range<u64>>]) -> Result<Vec<Vec<Vec<B>>>> {
        let kb = size_of::<B>() as u64;
        self.each_gpu(|i, gpu| {
            let window = |r: &Range<u64>| read(gpu, self.ptrs[i] + r.start * kb, r.end - r.start);
            ranges[i].iter().map(window).collect()
        })
    }
}

impl<B: Sync> GpuParts<'_, B> {
    /// `work(i, gpu)` for every GPU, one after another. (Measured on 4 × H200: one host thread
    /// per GPU made the cuts slower, 2.3 → 3.2 ms with rayon's threads, 1.0 → 2.1 ms on two GPUs
    /// with fresh threads: the copies are tiny, and each thread pays for making its context
    /// current and for the driver's per-thread state.)
    fn each_gpu<T: Send>(
        &self,
        work: impl Fn(usize, &GpuSorter) -> Result<T> + Sync,
    ) -> Result<Vec<T>> {
        self.gpus
            .iter()
            .enumerate()
            .map(|(i, gpu)| work(i, gpu))
            .collect()
    }
}

/// The two rank regions of a workspace at `work`.
fn regions(work: u64) -> (u64, u64) {
    let region = (WORKSPACE_PROBES * 8) as u64;
    (work + region, work + 2 * region)
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
