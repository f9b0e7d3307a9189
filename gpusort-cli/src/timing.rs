//! Timing of sorts: CUDA events on the GPU, wall clock on the CPU; median, min and max.
//!
//! Each function sorts a fresh copy of the input per repetition and returns the [`Timing`] in
//! milliseconds with the last sorted output, for verification.
//!
//! ```
//! use gpusort::{Order, cpu::CpuAlgo};
//! use gpusort_cli::{inputs::{Dist, generate}, timing};
//!
//! let input: Vec<u32> = generate(1 << 16, Dist::Uniform, 42);
//! let (ms, sorted) = timing::cpu(CpuAlgo::Std, &input, Order::Ascending, 3);
//! assert!(ms.min <= ms.median && ms.median <= ms.max);
//! assert!(sorted.is_sorted());
//! ```

use crate::cpu::CpuAlgo;
use crate::error::{CudaContext, Result};
use crate::gpu::{GpuAlgo, GpuSorter, Options, Work};
use crate::keys::{Order, SortKey, SortValue};
use cust::event::{Event, EventFlags};
use cust::memory::{AsyncCopyDestination, CopyDestination, DeviceBuffer, DeviceCopy};
use cust::stream::Stream;
use std::time::Instant;

/// Median, min and max of repeated timings, in ms.
///
/// # Examples
///
/// ```
/// use gpusort_cli::timing::Timing;
///
/// let t = Timing::of(vec![3.0, 1.0, 2.0, 10.0]);
/// assert_eq!((t.min, t.median, t.max), (1.0, 3.0, 10.0));
/// ```
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
    /// Summarises samples. The median of an even number of samples is the upper middle one
    /// (a sample, not an average).
    ///
    /// # Panics
    /// If `samples` is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use gpusort_cli::timing::Timing;
    ///
    /// assert_eq!(Timing::of(vec![4.0]), Timing { median: 4.0, min: 4.0, max: 4.0 });
    /// ```
    pub fn of(mut samples: Vec<f64>) -> Timing {
        samples.sort_by(f64::total_cmp);
        Timing {
            median: samples[samples.len() / 2],
            min: samples[0],
            max: samples[samples.len() - 1],
        }
    }
}

/// How [`gpu_kernel`] times a GPU sort.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuTiming {
    /// Events around the sort alone; the device copy that restores the input is queued before
    /// the first event.
    #[default]
    Sort,
    /// As `bench/peers/peers.cu` times CUB and thrust: events around the restoring copy and
    /// the sort, less the median of the copy timed alone. Below 2^13 keys a timed launch
    /// carries microseconds of event and launch overhead, which this subtracts with the copy's,
    /// so it is the measure to put beside the peers' numbers.
    LikePeers,
}

/// Times the sort of device-resident keys by `algo` with CUDA events, as `timing` says: one
/// warm-up, then `reps` timed runs, each on a fresh copy of the input made by a device-to-device
/// copy. The merge sort's scratch is allocated once, outside the timed region. Returns the
/// timing and the last run's output, copied back. Device memory: two buffers of n keys (the
/// pristine input and the working copy), plus the merge sort's scratch.
///
/// # Errors
/// [`Error::TooLong`](crate::Error::TooLong), [`Error::OutOfDeviceMemory`](crate::Error::OutOfDeviceMemory)
/// or [`Error::Cuda`](crate::Error::Cuda).
///
/// # Panics
/// If `reps` is 0.
///
/// # Examples
///
/// ```no_run
/// use gpusort::gpu::GpuAlgo;
/// use gpusort_cli::timing::{self, GpuTiming};
/// use gpusort::{GpuSorter, Order};
/// use gpusort_cli::{inputs::{Dist, generate}, verify};
///
/// let gpu = GpuSorter::new()?;
/// let input: Vec<u32> = generate(1 << 24, Dist::Uniform, 42);
/// let (ms, sorted) =
///     timing::gpu_kernel(&gpu, GpuAlgo::Bitonic, &input, Order::Ascending, 10, GpuTiming::Sort)?;
/// println!("{:.3} ms, {:.0} Mkeys/s", ms.median, input.len() as f64 / ms.median / 1e3);
/// assert!(verify::check(&sorted, &input, Order::Ascending).is_ok());
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn gpu_kernel<K: SortKey>(
    gpu: &GpuSorter,
    algo: GpuAlgo,
    input: &[K],
    order: Order,
    reps: u32,
    timing: GpuTiming,
) -> Result<(Timing, Vec<K>)> {
    let pristine = gpu.upload(input)?;
    let mut work = gpu.alloc::<K>(input.len(), "the working copy")?;
    // Empty for the bitonic sort; allocated outside the timing for the others.
    let options = Options {
        algo: Some(algo),
        order,
    };
    let bytes = gpu.scratch_bytes::<K>(Work::SortUnstable(input.len()), options)?;
    let mut scratch = gpu.alloc::<u8>(bytes as usize, "the sort's scratch")?;
    let mut queue = gpu.queue()?.with_scratch(&mut scratch)?;
    let stream = gpu.stream();
    // What the peers subtract: the restoring copy alone, median of one warm-up and `reps` runs.
    let copy_ms = match timing {
        GpuTiming::Sort => 0.0,
        GpuTiming::LikePeers => {
            let copies = event_samples(gpu, reps, "restoring the input", |start| {
                record(start, stream)?;
                restore(&mut work, &pristine, stream)
            })?;
            Timing::of(copies).median
        }
    };
    let what = format!("running the {algo} sort");
    let samples = event_samples(gpu, reps, &what, |start| {
        if timing == GpuTiming::Sort {
            restore(&mut work, &pristine, stream)?;
        }
        record(start, stream)?;
        if timing == GpuTiming::LikePeers {
            restore(&mut work, &pristine, stream)?;
        }
        queue.sort_unstable(&mut work, options)
    })?;
    let samples = samples.into_iter().map(|ms| ms - copy_ms).collect();
    let mut out = input.to_vec();
    work.copy_to(&mut out[..])
        .context("copying sorted keys back")?;
    Ok((Timing::of(samples), out))
}

/// Times device work as `bench/peers/peers.cu` times CUB: events around `queue(true)` (which
/// queues the copy that gives the work its input again, then the work), less the median of
/// `queue(false)` (the copy alone); one warm-up, then `reps` runs each. `what` names the work in
/// errors.
///
/// # Errors
/// [`Error::Cuda`](crate::Error::Cuda), or what `queue` returns.
pub fn gpu_like_peers(
    gpu: &GpuSorter,
    reps: u32,
    what: &str,
    mut queue: impl FnMut(bool) -> Result<()>,
) -> Result<Timing> {
    let stream = gpu.stream();
    let copies = event_samples(gpu, reps, "restoring the input", |start| {
        record(start, stream)?;
        queue(false)
    })?;
    let copy_ms = Timing::of(copies).median;
    let samples = event_samples(gpu, reps, what, |start| {
        record(start, stream)?;
        queue(true)
    })?;
    Ok(Timing::of(
        samples.into_iter().map(|ms| ms - copy_ms).collect(),
    ))
}

/// [`gpu_kernel`] for a stable sort of pairs: each key of `input` carries its input position
/// as a value of type `V`, through the sort by `algo` (the merge or the radix sort); the
/// values' buffers are restored and timed with the keys'. Returns the timing, the last run's
/// keys and values. Device memory: two buffers of n keys and n values, plus the sort's
/// scratch; host memory: the positions and the values that come back.
///
/// # Errors
/// [`Error::NotStable`](crate::Error::NotStable) for the bitonic sort, otherwise as
/// [`gpu_kernel`].
///
/// # Panics
/// If `reps` is 0.
///
/// # Examples
///
/// ```no_run
/// use gpusort::gpu::GpuAlgo;
/// use gpusort::{GpuSorter, Order};
/// use gpusort_cli::timing::{self, GpuTiming};
/// use gpusort_cli::{inputs::{Dist, generate}, verify};
///
/// let gpu = GpuSorter::new()?;
/// let input: Vec<u32> = generate(1 << 24, Dist::Uniform, 42);
/// let (ms, keys, values) = timing::gpu_kernel_pairs::<u32, u32>(
///     &gpu, GpuAlgo::Radix, &input, Order::Ascending, 10, GpuTiming::Sort,
/// )?;
/// println!("{:.3} ms", ms.median);
/// assert!(verify::check_stable_values(&input, &keys, &values).is_ok());
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn gpu_kernel_pairs<K: SortKey, V: SortValue>(
    gpu: &GpuSorter,
    algo: GpuAlgo,
    input: &[K],
    order: Order,
    reps: u32,
    timing: GpuTiming,
) -> Result<(Timing, Vec<K>, Vec<V>)> {
    let positions: Vec<V> = (0..input.len() as u64).map(V::from_index).collect();
    let (keys, values) = (gpu.upload(input)?, gpu.upload(&positions)?);
    let mut work_keys = gpu.alloc::<K>(input.len(), "the working copy")?;
    let mut work_values = gpu.alloc::<V>(input.len(), "the working copy of the values")?;
    let options = Options {
        algo: Some(algo),
        order,
    };
    let value_bytes = size_of::<V>();
    let work = Work::SortByKey {
        len: input.len(),
        value_bytes,
    };
    let bytes = gpu.scratch_bytes::<K>(work, options)?;
    let mut scratch = gpu.alloc::<u8>(bytes as usize, "the sort's scratch")?;
    let mut queue = gpu.queue()?.with_scratch(&mut scratch)?;
    let stream = gpu.stream();
    let restore_both = |work_keys: &mut DeviceBuffer<K>, work_values: &mut DeviceBuffer<V>| {
        restore(work_keys, &keys, stream)?;
        restore(work_values, &values, stream)
    };
    let copy_ms = match timing {
        GpuTiming::Sort => 0.0,
        GpuTiming::LikePeers => {
            let copies = event_samples(gpu, reps, "restoring the input", |start| {
                record(start, stream)?;
                restore_both(&mut work_keys, &mut work_values)
            })?;
            Timing::of(copies).median
        }
    };
    let what = format!("running the {algo} sort of pairs");
    let samples = event_samples(gpu, reps, &what, |start| {
        if timing == GpuTiming::Sort {
            restore_both(&mut work_keys, &mut work_values)?;
        }
        record(start, stream)?;
        if timing == GpuTiming::LikePeers {
            restore_both(&mut work_keys, &mut work_values)?;
        }
        queue.sort_by_key(&mut work_keys, &mut work_values, options)
    })?;
    let samples = samples.into_iter().map(|ms| ms - copy_ms).collect();
    let (mut out_keys, mut out_values) = (input.to_vec(), positions);
    work_keys
        .copy_to(&mut out_keys[..])
        .context("copying sorted keys back")?;
    work_values
        .copy_to(&mut out_values[..])
        .context("copying sorted values back")?;
    Ok((Timing::of(samples), out_keys, out_values))
}

/// Times what `queue` puts on the sorter's stream from the moment it records the event it is
/// given to the end: one warm-up, then `reps` timed runs, each waited for (`what` names the
/// work in errors). Returns the `reps` times in ms.
fn event_samples(
    gpu: &GpuSorter,
    reps: u32,
    what: &str,
    mut queue: impl FnMut(&Event) -> Result<()>,
) -> Result<Vec<f64>> {
    // Events belong to the context current when they are made: the sorter's.
    gpu.bind()?;
    let event = || Event::new(EventFlags::DEFAULT).context("creating a CUDA event");
    let (start, stop) = (event()?, event()?);
    let mut samples = Vec::new();
    for rep in 0..=reps {
        queue(&start)?;
        record(&stop, gpu.stream())?;
        gpu.stream().synchronize().context(what)?;
        if rep > 0 {
            let ms = stop.elapsed_time_f32(&start).context("reading an event")?;
            samples.push(f64::from(ms));
        }
    }
    Ok(samples)
}

/// Records `event` on `stream`.
fn record(event: &Event, stream: &Stream) -> Result<()> {
    event.record(stream).context("recording an event")
}

/// Queues on `stream` the device copy that gives `work` the unsorted input again. The caller
/// synchronises `stream` before it drops or reads either buffer.
fn restore<K: DeviceCopy>(
    work: &mut DeviceBuffer<K>,
    pristine: &DeviceBuffer<K>,
    stream: &Stream,
) -> Result<()> {
    // SAFETY: both buffers outlive the copy: the caller synchronises the stream first.
    unsafe { work.async_copy_from(pristine, stream) }.context("restoring the input")
}

/// Times host slice → sorted host slice (allocation, both copies and the sort) by wall clock:
/// `reps` runs of [`GpuSorter::sort_unstable`] with `algo`, no warm-up.
///
/// # Errors
/// As [`GpuSorter::sort_unstable`].
///
/// # Panics
/// If `reps` is 0.
///
/// # Examples
///
/// ```no_run
/// use gpusort::gpu::GpuAlgo;
/// use gpusort::{GpuSorter, Order};
/// use gpusort_cli::{inputs::{Dist, generate}, timing};
///
/// let gpu = GpuSorter::new()?;
/// let input: Vec<f32> = generate(1 << 24, Dist::Uniform, 42);
/// let (ms, _sorted) = timing::gpu_end_to_end(&gpu, GpuAlgo::Bitonic, &input, Order::Ascending, 5)?;
/// println!("host to host: {:.3} ms", ms.median);
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn gpu_end_to_end<K: SortKey>(
    gpu: &GpuSorter,
    algo: GpuAlgo,
    input: &[K],
    order: Order,
    reps: u32,
) -> Result<(Timing, Vec<K>)> {
    let mut keys = input.to_vec();
    let timing = time_host_sorts(gpu, algo, &mut keys, input, order, reps)?;
    Ok((timing, keys))
}

/// `reps` runs of [`GpuSorter::sort_unstable`] with `algo` on `keys`, each refilled from `input`
/// first (not timed), by wall clock.
fn time_host_sorts<K: SortKey>(
    gpu: &GpuSorter,
    algo: GpuAlgo,
    keys: &mut [K],
    input: &[K],
    order: Order,
    reps: u32,
) -> Result<Timing> {
    let mut samples = Vec::new();
    for _ in 0..reps {
        keys.copy_from_slice(input);
        let t = Instant::now();
        let options = Options {
            algo: Some(algo),
            order,
        };
        gpu.sort_unstable(keys, options)?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(Timing::of(samples))
}

/// [`gpu_end_to_end`] from a slice in page-locked host memory ([`crate::PinnedBuffer`]): the
/// copies go straight between it and the device, with no staging copy on the CPU. The buffer
/// is allocated, and refilled before each run, outside the timed region.
///
/// # Errors
/// As [`GpuSorter::sort_unstable`], and [`crate::Error::Cuda`] when pinned memory cannot be
/// had.
///
/// # Panics
/// If `reps` is 0.
///
/// # Examples
///
/// ```no_run
/// use gpusort::gpu::GpuAlgo;
/// use gpusort::{GpuSorter, Order};
/// use gpusort_cli::{inputs::{Dist, generate}, timing};
///
/// let gpu = GpuSorter::new()?;
/// let input: Vec<u32> = generate(1 << 25, Dist::Uniform, 42);
/// let (ms, _sorted) =
///     timing::gpu_end_to_end_pinned(&gpu, GpuAlgo::Merge, &input, Order::Ascending, 5)?;
/// println!("pinned host to host: {:.3} ms", ms.median);
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn gpu_end_to_end_pinned<K: SortKey>(
    gpu: &GpuSorter,
    algo: GpuAlgo,
    input: &[K],
    order: Order,
    reps: u32,
) -> Result<(Timing, Vec<K>)> {
    let mut keys = gpu.pinned_from_slice(input)?;
    let timing = time_host_sorts(gpu, algo, &mut keys, input, order, reps)?;
    Ok((timing, keys.to_vec()))
}

/// Times the two copies a host-to-host sort cannot avoid, alone: `input` from pinned host memory to
/// the device and back, one after the other on the sorter's stream, by CUDA events; one warm-up,
/// then `reps` timed runs. The floor of [`gpu_end_to_end`]: from a `PinnedBuffer`, a host-to-host
/// sort takes a little more than it (docs/decisions.md, "PinnedBuffer"). The pinned and device
/// buffers (n keys each) are allocated outside the timed region.
///
/// # Errors
/// [`Error::OutOfDeviceMemory`](crate::Error::OutOfDeviceMemory) or
/// [`Error::Cuda`](crate::Error::Cuda), also when pinned host memory cannot be had.
///
/// # Panics
/// If `reps` is 0.
///
/// # Examples
///
/// ```no_run
/// use gpusort::GpuSorter;
/// use gpusort_cli::{inputs::{Dist, generate}, timing};
///
/// let gpu = GpuSorter::new()?;
/// let input: Vec<u32> = generate(1 << 25, Dist::Uniform, 42);
/// let ms = timing::gpu_pinned_copies(&gpu, &input, 5)?;
/// println!("128 MiB up and down: {:.3} ms", ms.median);
/// # Ok::<(), gpusort::Error>(())
/// ```
pub fn gpu_pinned_copies<K: SortKey>(gpu: &GpuSorter, input: &[K], reps: u32) -> Result<Timing> {
    gpu.bind()?;
    let mut pinned =
        cust::memory::LockedBuffer::from_slice(input).context("allocating pinned host memory")?;
    let mut device = gpu.alloc::<K>(input.len(), "the keys")?;
    let stream = gpu.stream();
    let samples = event_samples(gpu, reps, "copying keys through pinned memory", |start| {
        record(start, stream)?;
        // SAFETY: both buffers live until `event_samples` has synchronised the stream.
        unsafe { device.async_copy_from(&pinned[..], stream) }.context("copying to the device")?;
        unsafe { device.async_copy_to(&mut pinned[..], stream) }.context("copying to the host")
    })?;
    Ok(Timing::of(samples))
}

/// Times a CPU sort by wall clock, `reps` runs, each on a fresh copy; no warm-up.
///
/// # Panics
/// If `reps` is 0.
///
/// # Examples
///
/// ```
/// use gpusort::{Order, cpu::CpuAlgo};
/// use gpusort_cli::timing;
///
/// let (ms, sorted) = timing::cpu(CpuAlgo::Rayon, &[3i32, -1, 2], Order::Descending, 2);
/// assert_eq!(sorted, [3, 2, -1]);
/// assert!(ms.median >= 0.0);
/// ```
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

/// Times the top-`k` of each row of `row_len` keys of device-resident `input`
/// ([`Queue::top_k`](gpusort::Queue::top_k)) with CUDA events: one warm-up, then `reps` timed runs.
/// The input is only read, so nothing restores it; the outputs and scratch are allocated once,
/// outside the timed region: what `bench/peers/torch_peers.py` measures of `torch.topk` (a
/// restoring copy and the call, less the copy). Returns the timing and the last run's result.
///
/// # Errors
/// As [`Queue::top_k`](gpusort::Queue::top_k), or [`Error::Cuda`](crate::Error::Cuda).
///
/// # Panics
/// If `reps` is 0.
pub fn gpu_top_k<K: SortKey>(
    gpu: &GpuSorter,
    input: &[K],
    row_len: usize,
    k: usize,
    order: Order,
    reps: u32,
) -> Result<(Timing, gpusort::TopK<K>)> {
    let keys = gpu.upload(input)?;
    let out_len = input.len() / row_len.max(1) * k;
    let mut out_keys = gpu.alloc::<K>(out_len, "the top-k's keys")?;
    let mut out_indices = gpu.alloc::<u64>(out_len, "the top-k's indices")?;
    let work = Work::TopK {
        len: input.len(),
        row_len,
        k,
    };
    let bytes = gpu.scratch_bytes::<K>(work, order)?;
    let mut scratch = gpu.alloc::<u8>(bytes as usize, "the top-k's scratch")?;
    let mut queue = gpu.queue()?.with_scratch(&mut scratch)?;
    let samples = event_samples(gpu, reps, "selecting the top k", |start| {
        record(start, gpu.stream())?;
        let outputs = (&mut out_keys, &mut out_indices);
        queue.top_k(&keys, row_len, k, order, outputs.0, outputs.1)
    })?;
    // The scratch's checks refused an empty input: there is a first key to fill with.
    let mut top = gpusort::TopK {
        keys: vec![input[0]; out_len],
        indices: vec![0; out_len],
    };
    out_keys
        .copy_to(&mut top.keys[..])
        .context("copying the top-k's keys back")?;
    out_indices
        .copy_to(&mut top.indices[..])
        .context("copying the top-k's indices back")?;
    Ok((Timing::of(samples), top))
}
