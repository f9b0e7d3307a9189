//! The device work of the multi-GPU sort besides the single-GPU merge kernels: the sample and
//! rank kernels behind the splitter search, reads of device keys, and the kernels that make
//! random keys and check sorted ones on the GPUs.

use super::select::{Ranks, SortedParts};
use crate::error::{Result, driver};
use crate::gpu::{GpuSorter, Shape};
use cust::memory::{DeviceCopy, LockedBuffer};
use cust::sys as cuda;
use kernels_gpu::kernels::{
    Kernel, multi_ranks_u32, multi_ranks_u64, multi_sample_u32, multi_sample_u64,
};
use kernels_gpu::multi::{RanksArgs, SampleArgs, sample_count};
use kernels_gpu::tuning::MULTI_THREADS;
use std::marker::PhantomData;
use std::ops::Range;

/// The sample kernel of keys of `key_bytes` (4 or 8).
fn sample_kernel(key_bytes: usize) -> Kernel<SampleArgs> {
    match key_bytes {
        4 => multi_sample_u32,
        _ => multi_sample_u64,
    }
}

/// The rank kernel of keys of `key_bytes` (4 or 8).
fn ranks_kernel(key_bytes: usize) -> Kernel<RanksArgs> {
    match key_bytes {
        4 => multi_ranks_u32,
        _ => multi_ranks_u64,
    }
}

/// Blocks of `MULTI_THREADS` threads for one thread per item.
pub(super) fn blocks_for(items: u64) -> u32 {
    items.div_ceil(u64::from(MULTI_THREADS)).max(1) as u32
}

/// Words (`u64`) of each GPU's workspace for the cuts: three regions of [`WORKSPACE_PROBES`]
/// words (the sample or a batch of probes, and their two ranks). Allocated once per sorter:
/// with peer access enabled every allocation is mapped into every peer, which made a
/// per-sort allocation cost milliseconds.
pub(crate) const WORKSPACE_WORDS: usize = 3 * WORKSPACE_PROBES;

/// Bytes of each GPU's pinned staging buffer for the cuts' reads.
pub(crate) const STAGE_BYTES: usize = 4 << 20;

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
    /// Per GPU, pinned host memory the reads go through.
    pub stages: &'a mut [LockedBuffer<u8>],
    pub bits: PhantomData<B>,
}

impl<B: DeviceCopy + Default + Ord + Copy> SortedParts for GpuParts<'_, B> {
    type Key = B;

    fn lens(&self) -> Vec<u64> {
        self.lens.clone()
    }

    fn samples(&mut self, stride: u64) -> Result<Vec<Vec<B>>> {
        let kernel = sample_kernel(size_of::<B>());
        let mut requests = vec![Vec::new(); self.gpus.len()];
        for (i, gpu) in self.gpus.iter().enumerate() {
            let (ptr, n, out) = (self.ptrs[i], self.lens[i], self.workspaces[i]);
            if n == 0 {
                continue;
            }
            let count = sample_count(n, stride);
            assert!(
                count as usize <= WORKSPACE_PROBES,
                "a stride too fine for the workspace"
            );
            let args = SampleArgs {
                keys: ptr,
                n,
                stride,
                out,
            };
            let shape = Shape::new(blocks_for(count), MULTI_THREADS, 0);
            // SAFETY: the part holds n keys; the workspace has room for the sample.
            unsafe { gpu.on_own_stream().launch(kernel, shape, args)? };
            requests[i].push((out, count));
        }
        let mut read = self.read_all::<B>(&requests)?;
        Ok(read
            .iter_mut()
            .map(|r| r.pop().unwrap_or_default())
            .collect())
    }

    fn ranks(&mut self, probes: &[B]) -> Result<Vec<Ranks>> {
        let kernel = ranks_kernel(size_of::<B>());
        let mut ranks = vec![Ranks::default(); self.gpus.len()];
        for batch in probes.chunks(WORKSPACE_PROBES) {
            let count = batch.len() as u64;
            let mut requests = vec![Vec::new(); self.gpus.len()];
            for (i, gpu) in self.gpus.iter().enumerate() {
                let (ptr, n, work) = (self.ptrs[i], self.lens[i], self.workspaces[i]);
                let (below, not_above) = regions(work);
                write(gpu, work, batch)?;
                let args = RanksArgs {
                    keys: ptr,
                    n,
                    probes: work,
                    count,
                    below,
                    not_above,
                };
                let shape = Shape::new(blocks_for(count), MULTI_THREADS, 0);
                // SAFETY: the part holds n keys; each workspace region holds `count` words.
                unsafe { gpu.on_own_stream().launch(kernel, shape, args)? };
                requests[i] = vec![(below, count), (not_above, count)];
            }
            for (r, mut read) in ranks.iter_mut().zip(self.read_all::<u64>(&requests)?) {
                r.not_above.extend(read.pop().unwrap_or_default());
                r.below.extend(read.pop().unwrap_or_default());
            }
        }
        Ok(ranks)
    }

    fn spans(&mut self, ranges: &[Vec<Range<u64>>]) -> Result<Vec<Vec<Vec<B>>>> {
        let kb = size_of::<B>() as u64;
        let requests: Vec<Vec<(u64, u64)>> = ranges
            .iter()
            .zip(&self.ptrs)
            .map(|(ranges, &ptr)| {
                ranges
                    .iter()
                    .map(|r| (ptr + r.start * kb, r.end - r.start))
                    .collect()
            })
            .collect();
        self.read_all::<B>(&requests)
    }
}

impl<B> GpuParts<'_, B> {
    /// Reads, per GPU `i`, each `(device address, count)` of `requests[i]` as `count` values
    /// of `T`: asynchronous copies on the GPU's stream (after its queued kernels) into its
    /// pinned staging buffer, every GPU's queued before any is waited for, in as many rounds
    /// as the staging buffers need. (One synchronous copy each, to pageable memory, would wait
    /// for each GPU in turn: docs/decisions.md, "Cuts from a sample, a workspace per GPU".)
    fn read_all<T: DeviceCopy + Default>(
        &mut self,
        requests: &[Vec<(u64, u64)>],
    ) -> Result<Vec<Vec<Vec<T>>>> {
        let size = size_of::<T>();
        let mut out: Vec<Vec<Vec<T>>> = requests
            .iter()
            .map(|r| {
                r.iter()
                    .map(|&(_, count)| Vec::with_capacity(count as usize))
                    .collect()
            })
            .collect();
        // Per GPU: the request and the values of it copied so far.
        let mut cursor = vec![(0usize, 0u64); self.gpus.len()];
        loop {
            let mut queued: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); self.gpus.len()];
            for (i, gpu) in self.gpus.iter().enumerate() {
                let stage = &mut self.stages[i];
                let capacity = (stage.len() / size) as u64;
                let mut used = 0u64;
                while cursor[i].0 < requests[i].len() && used < capacity {
                    let (req, done) = cursor[i];
                    let (ptr, count) = requests[i][req];
                    let take = (count - done).min(capacity - used);
                    if take > 0 {
                        gpu.bind()?;
                        let bytes = take as usize * size;
                        let at = used as usize * size;
                        // SAFETY: the stage holds `capacity` values; the device range is the
                        // caller's.
                        let status = unsafe {
                            cuda::cuMemcpyDtoHAsync_v2(
                                stage.as_mut_ptr().add(at).cast(),
                                ptr + done * size as u64,
                                bytes,
                                gpu.stream().as_inner(),
                            )
                        };
                        driver(status, "cuMemcpyDtoHAsync", || {
                            format!("reading {bytes} bytes from {}", gpu.device_name())
                        })?;
                        queued[i].push((req, at, bytes));
                        used += take;
                    }
                    cursor[i] = if done + take == count {
                        (req + 1, 0)
                    } else {
                        (req, done + take)
                    };
                }
            }
            if queued.iter().all(Vec::is_empty) {
                return Ok(out);
            }
            for (i, gpu) in self.gpus.iter().enumerate() {
                if queued[i].is_empty() {
                    continue;
                }
                gpu.bind()?;
                gpu.synchronize("reading keys for the multi-GPU cuts")?;
                for &(req, at, bytes) in &queued[i] {
                    let values = &mut out[i][req];
                    let old = values.len();
                    values.resize(old + bytes / size, T::default());
                    // SAFETY: the stage holds the copied bytes at `at`; `values` has room.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            self.stages[i].as_ptr().add(at),
                            values.as_mut_ptr().add(old).cast::<u8>(),
                            bytes,
                        )
                    };
                }
            }
        }
    }
}

/// The two rank regions of a workspace at `work`.
fn regions(work: u64) -> (u64, u64) {
    let region = (WORKSPACE_PROBES * 8) as u64;
    (work + region, work + 2 * region)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_has_its_kernels() {
        for (kb, bits) in [(4, 32), (8, 64)] {
            let kernels = [
                ("sample", sample_kernel(kb).name()),
                ("ranks", ranks_kernel(kb).name()),
            ];
            for (what, name) in kernels {
                assert_eq!(name, format!("multi_{what}_u{bits}"));
                assert!(crate::gpu::KERNELS_PTX.contains(&format!(".entry {name}(")));
            }
        }
    }
}
