//! Timing of sorts: CUDA events on the GPU, wall clock on the CPU; median, min and max.

use crate::cpu::CpuAlgo;
use crate::error::{CudaContext, Result};
use crate::gpu::{GpuAlgo, GpuSorter};
use crate::keys::{Order, SortKey};
use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, CopyDestination};
use std::time::Instant;

/// Median, min and max of repeated timings, in ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Median.
    pub median: f64,
    /// Fastest.
    pub min: f64,
    /// Slowest.
    pub max: f64,
}

impl Timing {
    /// Summarises samples (at least one).
    pub fn of(mut samples: Vec<f64>) -> Timing {
        samples.sort_by(f64::total_cmp);
        Timing {
            median: samples[samples.len() / 2],
            min: samples[0],
            max: samples[samples.len() - 1],
        }
    }
}

/// Times the sort of device-resident keys by `algo` with CUDA events: one warm-up, then `reps`
/// timed runs, each on a fresh copy of the input made by a device-to-device copy outside the
/// timed region. The merge sort's scratch is allocated once, outside the timed region.
pub fn gpu_kernel<K: SortKey>(
    gpu: &GpuSorter,
    algo: GpuAlgo,
    input: &[K],
    order: Order,
    reps: u32,
) -> Result<(Timing, Vec<K>)> {
    let pristine = gpu.upload(input)?;
    let mut work = gpu.alloc::<K>(input.len(), "the working copy")?;
    let mut scratch = match algo {
        GpuAlgo::Bitonic => None,
        GpuAlgo::Merge => Some(gpu.sort_scratch::<K>(input.len(), 0)?),
    };
    let stream = gpu.stream();
    let event = || Event::new(EventFlags::DEFAULT).context("creating a CUDA event");
    let (start, stop) = (event()?, event()?);
    let mut samples = Vec::new();
    for rep in 0..=reps {
        // SAFETY: both buffers live until the stream is synchronised below.
        unsafe { work.async_copy_from(&pristine, stream) }.context("restoring the input")?;
        start.record(stream).context("recording an event")?;
        match &mut scratch {
            None => gpu.enqueue_sort_unstable(&mut work, order)?,
            Some(scratch) => gpu.enqueue_sort(&mut work, order, scratch)?,
        }
        stop.record(stream).context("recording an event")?;
        gpu.synchronize(&format!("running the {} sort", algo.name()))?;
        if rep > 0 {
            let ms = stop.elapsed_time_f32(&start).context("reading an event")?;
            samples.push(f64::from(ms));
        }
    }
    let mut out = input.to_vec();
    work.copy_to(&mut out[..])
        .context("copying sorted keys back")?;
    Ok((Timing::of(samples), out))
}

/// Times host slice → sorted host slice (allocation, both copies and the sort) by wall clock.
pub fn gpu_end_to_end<K: SortKey>(
    gpu: &GpuSorter,
    algo: GpuAlgo,
    input: &[K],
    order: Order,
    reps: u32,
) -> Result<(Timing, Vec<K>)> {
    let mut samples = Vec::new();
    let mut keys = input.to_vec();
    for _ in 0..reps {
        keys.copy_from_slice(input);
        let t = Instant::now();
        gpu.sort_with(algo, &mut keys, order)?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok((Timing::of(samples), keys))
}

/// Times a CPU sort by wall clock, each run on a fresh copy.
pub fn cpu<K: SortKey>(algo: CpuAlgo, input: &[K], order: Order, reps: u32) -> (Timing, Vec<K>) {
    let mut samples = Vec::new();
    let mut keys = input.to_vec();
    for _ in 0..reps {
        keys.copy_from_slice(input);
        let t = Instant::now();
        algo.sort(&mut keys, order);
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    (Timing::of(samples), keys)
}
