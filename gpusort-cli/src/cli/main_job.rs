//! The main job: generate keys, sort them on the GPU, verify against std's sort, and time the
//! CPU baselines beside it.

use super::SortAlgo;
use super::progress::Progress;
use crate::cpu::CpuAlgo;
use crate::error::Error;
use crate::gpu::{GpuAlgo, GpuSorter, Sorting};
use crate::inputs::{Dist, generate};
use crate::keys::{DType, Order, SortKey};
use crate::timing::{self, GpuTiming, Timing};
use crate::verify::{Mismatch, check_against, reference};
use crate::with_key_type;
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use std::process::ExitCode;

/// Largest n for which the single-thread CPU bitonic sort runs unless asked for by name.
const BITONIC1_DEFAULT_MAX: usize = 1 << 24;
/// Largest key bytes for which the pinned copies alone are timed beside the host-to-host sort
/// (they pin a copy of the keys).
const COPIES_MAX_BYTES: usize = 1 << 30;

/// Where to sort (`--backend auto|gpu|cpu`).
///
/// # Examples
///
/// ```
/// use gpusort_cli::cli::{Backend, main_job::open_gpu};
///
/// assert!(open_gpu(Backend::Cpu)?.is_none()); // never touches the driver
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The GPU if there is one, else the CPU (said on stderr).
    Auto,
    /// The GPU; fail if there is none.
    Gpu,
    /// The CPU only.
    Cpu,
}

/// Generate keys, sort them, verify against std's sort and print a timing table: the settings
/// of `gpusort` without a subcommand (the fields are its flags).
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::Cli;
///
/// let job = Cli::parse_from(["gpusort", "--n", "1000", "--dtype", "i64"]).job;
/// assert_eq!((job.n, job.dtype, job.seed), (1000, gpusort::DType::I64, 42));
/// ```
#[derive(Debug, Args)]
pub struct MainJob {
    /// Number of keys.
    #[arg(long, default_value_t = 1 << 25, allow_negative_numbers = true)]
    pub n: usize,
    /// Key type.
    #[arg(long, value_enum, default_value_t = DType::U32)]
    pub dtype: DType,
    /// Sort order.
    #[arg(long, value_enum, default_value_t = Order::Ascending)]
    pub order: Order,
    /// Input distribution (`blog`: integers 0..=10000, many repeats).
    #[arg(long, value_enum, default_value_t = Dist::Uniform)]
    pub dist: Dist,
    /// Where to sort.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// GPU sort: bitonic (unstable, in place), merge (stable), radix (stable), or auto (the
    /// fastest of the three for the size, key width and device, measured; the report names
    /// it).
    #[arg(long, value_enum, default_value_t = SortAlgo::Auto)]
    pub algo: SortAlgo,
    /// Timed GPU repetitions after one warm-up (the median is reported).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// Timed repetitions of each CPU baseline.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub cpu_reps: u32,
    /// Seed of the generated keys.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Skip verification against std's sort.
    #[arg(long)]
    pub no_verify: bool,
    /// CPU baselines to time, comma-separated [default: std,rayon,radix,bitonic-n, and bitonic1
    /// up to 2^24 keys].
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        conflicts_with = "no_baselines"
    )]
    pub baselines: Option<Vec<CpuAlgo>>,
    /// Time no CPU baseline.
    #[arg(long)]
    pub no_baselines: bool,
    /// Sort across this many GPUs instead (keys made, sorted and checked on the GPUs, so n
    /// may exceed one GPU's memory), beside the one-GPU sort of the same keys where they fit.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub gpus: Option<u32>,
    /// As `--gpus`, on these device ordinals, comma-separated; one may repeat (its parts then
    /// share the device, which runs the multi-GPU code on one GPU).
    #[arg(long, value_delimiter = ',', conflicts_with = "gpus")]
    pub devices: Option<Vec<u32>>,
    /// How keys move between GPUs with `--gpus`/`--devices`: peer-to-peer where the driver
    /// allows it (auto), or always through pinned host memory (host) [default: auto].
    #[arg(long, value_enum)]
    pub exchange: Option<crate::multi::Exchange>,
}

impl MainJob {
    /// Refuses flags that contradict each other, before any work: the GPUs of `--gpus` or
    /// `--devices`, or a GPU sort named by `--algo`, with `--backend cpu`; `--exchange` without
    /// several GPUs; a baseline named twice.
    fn check(&self) -> Result<()> {
        if self.backend == Backend::Cpu {
            if let Some(gpus) = self.gpus {
                bail!("--gpus {gpus} sorts on GPUs and --backend cpu on the CPU: drop one");
            }
            if self.devices.is_some() {
                bail!("--devices sorts on GPUs and --backend cpu on the CPU: drop one");
            }
            if self.algo != SortAlgo::Auto {
                bail!(
                    "--algo {} names a GPU sort, and --backend cpu times the CPU's sorts only: \
                     drop one",
                    self.algo
                        .to_possible_value()
                        .map_or(String::new(), |v| v.get_name().to_owned())
                );
            }
        }
        if self.exchange.is_some() && self.gpus.is_none() && self.devices.is_none() {
            bail!("--exchange applies to the sort across GPUs: give --gpus or --devices too");
        }
        if let Some(baselines) = &self.baselines {
            for (i, algo) in baselines.iter().enumerate() {
                if baselines[..i].contains(algo) {
                    bail!(
                        "--baselines names {} twice: each baseline is timed once (--cpu-reps \
                         repeats it)",
                        algo.to_possible_value()
                            .map_or(String::new(), |v| v.get_name().to_owned())
                    );
                }
            }
        }
        Ok(())
    }

    fn baselines(&self) -> Vec<CpuAlgo> {
        if self.no_baselines {
            return Vec::new();
        }
        self.baselines.clone().unwrap_or_else(|| {
            CpuAlgo::ALL
                .into_iter()
                .filter(|&a| a != CpuAlgo::Bitonic1 || self.n <= BITONIC1_DEFAULT_MAX)
                .collect()
        })
    }
}

/// Runs the main job; the exit code is 1 when a verification failed.
///
/// # Errors
/// A GPU error when the GPU was required or failed mid-way (an [`Error`] in the chain).
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, main_job};
///
/// let job = Cli::parse_from(["gpusort", "--n", "5000", "--backend", "cpu", "--baselines", "std"]).job;
/// assert_eq!(main_job::run(&job)?, std::process::ExitCode::SUCCESS);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn run(job: &MainJob) -> Result<ExitCode> {
    job.check()?;
    if let Some(gpus) = job.gpus {
        return multi_job(job, &(0..gpus).collect::<Vec<_>>());
    }
    if let Some(devices) = &job.devices {
        return multi_job(job, devices);
    }
    with_key_type!(job.dtype, K => main_job::<K>(job))
}

/// The main job across `gpus` GPUs: random keys made on the GPUs, sorted there
/// ([`MultiGpuSorter::sort_device`]) and checked there (sorted within and across GPUs, the
/// multiset checksum unchanged), beside the one-GPU sort of the same keys when they fit.
fn multi_job(job: &MainJob, devices: &[u32]) -> Result<ExitCode> {
    use crate::bench::multi::{MultiMeasurement, measure};
    use crate::multi::{Exchange, MultiGpuSorter};
    let gpus = devices.len();
    if job.dist != Dist::Uniform {
        anyhow::bail!(
            "--gpus makes uniform random keys on the GPUs; --dist {:?} is only available \
             without --gpus",
            job.dist
        );
    }
    if gpus == 0 {
        anyhow::bail!("--devices names no device");
    }
    let multi = MultiGpuSorter::with_devices(devices, job.exchange.unwrap_or(Exchange::Auto))
        .with_context(|| format!("opening GPU(s) {devices:?}"))?;
    let n = job.n as u64;
    let device = multi.gpus()[0].device_name().to_string();
    let mut rows: Vec<MultiMeasurement> = Vec::new();
    let progress = Progress::new();
    progress.steps(if gpus > 1 { 2 } else { 1 });
    if gpus > 1 {
        progress.step(format!("{n} keys on 1 GPU, {} repetitions", job.reps));
        let single = MultiGpuSorter::with_devices(&devices[..1], Exchange::Auto)?;
        match measure(&single, job.dtype, job.order, n, job.reps, job.seed) {
            Ok(m) => rows.push(m),
            Err(e @ Error::OutOfDeviceMemory { .. }) => {
                sayln!("1 GPU: not run, the keys do not fit on one GPU ({e})");
            }
            Err(e) => return Err(e).context("the one-GPU sort"),
        }
    }
    progress.step(format!("{n} keys on {gpus} GPUs, {} repetitions", job.reps));
    let m = measure(&multi, job.dtype, job.order, n, job.reps, job.seed)
        .with_context(|| format!("sorting {n} keys on {gpus} GPU(s)"))?;
    rows.push(m);
    drop(progress);
    sayln!(
        "gpusort: {n} {} keys (uniform random, made on the GPUs), seed {}, {:?}, on {gpus} x {device} (devices {devices:?})",
        job.dtype,
        job.seed,
        job.order
    );
    sayln!(
        "| {:>4} | {:>10} | {:>10} | {:>10} | {:>12} | {:>8} | {:<14} | {:>8} |",
        "GPUs",
        "median ms",
        "min ms",
        "max ms",
        "Mkeys/s",
        "speed-up",
        "exchange",
        "verified"
    );
    sayln!(
        "|-----:|-----------:|-----------:|-----------:|-------------:|---------:|:---------------|---------:|"
    );
    let one = rows.iter().find(|r| r.gpus == 1).map(|r| r.ms.median);
    for r in &rows {
        sayln!(
            "| {:>4} | {:>10.3} | {:>10.3} | {:>10.3} | {:>12.1} | {:>8} | {:<14} | {:>8} |",
            r.gpus,
            r.ms.median,
            r.ms.min,
            r.ms.max,
            n as f64 / r.ms.median / 1e3,
            one.map_or("-".into(), |o| format!("{:.2}x", o / r.ms.median)),
            crate::bench::multi::path(&r.median_stats),
            if r.verified { "yes" } else { "FAILED" }
        );
    }
    for r in &rows {
        sayln!("phases, {} GPU(s): {}", r.gpus, r.median_stats);
    }
    if rows.iter().any(|r| !r.verified) {
        eprintln!("gpusort: VERIFICATION FAILED on the GPUs");
        return Ok(ExitCode::from(1));
    }
    sayln!(
        "verified on the GPUs: every repetition sorted within and across GPUs, multiset checksum unchanged"
    );
    Ok(ExitCode::SUCCESS)
}

/// One line of the report.
struct Row {
    what: String,
    ms: Timing,
    verified: Option<bool>,
}

/// The GPU sorter for `backend`: `None` for the CPU backend, or for `auto` without a GPU (said
/// on stderr).
///
/// # Errors
/// A GPU that `--backend gpu` asked for and is not there, or one that fails to start (an
/// [`Error`] in the chain).
///
/// # Examples
///
/// ```
/// use gpusort_cli::cli::{Backend, main_job::open_gpu};
///
/// match open_gpu(Backend::Auto)? {
///     Some(gpu) => println!("sorting on {}", gpu.device_name()),
///     None => println!("sorting on the CPU"),
/// }
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn open_gpu(backend: Backend) -> Result<Option<GpuSorter>> {
    open_gpu_or(backend, "sorting on the CPU instead")
}

/// As [`open_gpu`], with `fallback` saying on stderr what happens instead when `auto` finds no
/// GPU.
///
/// # Errors
/// As [`open_gpu`].
///
/// # Examples
///
/// ```
/// use gpusort_cli::cli::{Backend, main_job::open_gpu_or};
///
/// let gpu = open_gpu_or(Backend::Auto, "timing the CPU sorts only")?;
/// println!("GPU: {}", gpu.is_some());
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn open_gpu_or(backend: Backend, fallback: &str) -> Result<Option<GpuSorter>> {
    if backend == Backend::Cpu {
        return Ok(None);
    }
    match GpuSorter::new() {
        Ok(sorter) => Ok(Some(sorter)),
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) if backend == Backend::Auto => {
            eprintln!("gpusort: {e}; {fallback} (--backend gpu makes this an error)");
            Ok(None)
        }
        Err(e) => Err(e).context("the GPU backend is not available"),
    }
}

/// Refuses an `--n` whose buffers cannot fit, before anything is allocated: the device holds
/// the input, a working copy and the merge sort's scratch (3 × n keys); the host holds the
/// input, std's sorted copy and an output (3 × n keys).
fn check_fits<K: SortKey>(n: usize, gpu: Option<&GpuSorter>) -> Result<()> {
    let need = (n as u64)
        .checked_mul(3 * size_of::<K>() as u64)
        .with_context(|| format!("--n {n}: too many keys to count their bytes"))?;
    if let Some(gpu) = gpu {
        let (free, total) = crate::memory::device_memory(gpu)?;
        if need > free {
            anyhow::bail!(
                "--n {n} is too large for device memory: {need} bytes needed (input, working copy \
                 and scratch of {} keys), {free} bytes free of {total}",
                K::DTYPE
            );
        }
    }
    crate::memory::check(need, format!("--n {n}")).map_err(|e| {
        anyhow::anyhow!(
            "--n {n} is too large for host memory: {need} bytes needed (input, reference and \
             output of {} keys), {} bytes available to this process ({})",
            K::DTYPE,
            e.room.bytes,
            e.room.bound
        )
    })?;
    Ok(())
}

fn main_job<K: SortKey>(job: &MainJob) -> Result<ExitCode> {
    let (n, order) = (job.n, job.order);
    let gpu = open_gpu(job.backend)?;
    check_fits::<K>(n, gpu.as_ref())?;
    // The steps, for the progress bar: the keys, the reference, the GPU's timings (or the CPU
    // fallback's) and the baselines.
    let copies = gpu.is_some() && n * size_of::<K>() <= COPIES_MAX_BYTES;
    let steps = 1
        + usize::from(!job.no_verify)
        + match (&gpu, copies) {
            (Some(_), true) => 4,
            (Some(_), false) => 2,
            (None, _) => 1,
        }
        + job.baselines().len();
    let progress = Progress::new();
    progress.steps(steps);
    progress.step(format!("generating {n} {} keys", K::DTYPE));
    let input: Vec<K> = generate(n, job.dist, job.seed);
    if !job.no_verify {
        progress.step("std's sort of the keys (the reference)");
    }
    let oracle = (!job.no_verify).then(|| reference(&input, order));
    let verdict = |out: &[K]| -> Option<Result<(), Mismatch>> {
        oracle.as_ref().map(|r| check_against(out, r, order))
    };
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    // The pinned copies alone, and the host-to-host medians (from pageable memory and from a
    // pinned buffer) to compare with them.
    let mut floor: Option<(Timing, f64, f64)> = None;
    let mut record = |what: String, ms: Timing, v: Option<Result<(), Mismatch>>| {
        if let Some(Err(m)) = &v {
            failures.push(format!("{what}: {m}"));
        }
        rows.push(Row {
            what,
            ms,
            verified: v.map(|r| r.is_ok()),
        });
    };

    let device = gpu
        .as_ref()
        .map_or("CPU only".to_string(), |g| g.device_name().to_string());
    // What `--algo auto` chose for the keys on the device and for the host slices (the library's
    // `sort_unstable` of a queue and of a host slice, given an order alone), said in the rows and
    // on a line.
    let mut chose = None;
    if let Some(gpu) = &gpu {
        let (algo, host_algo) = match job.algo.gpu() {
            Some(algo) => (algo, algo),
            None => {
                let on_device = gpu.auto_device::<K>(Sorting::Unstable, n)?;
                let on_host = gpu.auto_host::<K>(Sorting::Unstable, n)?.algo;
                chose = Some((on_device, on_host));
                (on_device, on_host)
            }
        };
        let name = |algo: GpuAlgo| match job.algo {
            SortAlgo::Auto => format!("{algo} (auto)"),
            _ => algo.to_string(),
        };
        progress.step(format!("gpu {algo} (kernels), {} repetitions", job.reps));
        let (kernel_ms, sorted) =
            timing::gpu_kernel(gpu, algo, &input, order, job.reps, GpuTiming::Sort)?;
        record(
            format!("gpu {} (kernels, device-resident)", name(algo)),
            kernel_ms,
            verdict(&sorted),
        );
        progress.step(format!("gpu {host_algo} (end-to-end)"));
        let (e2e_ms, sorted) =
            timing::gpu_end_to_end(gpu, host_algo, &input, order, job.reps.min(5))?;
        record(
            format!("gpu {} (end-to-end, host to host)", name(host_algo)),
            e2e_ms,
            verdict(&sorted),
        );
        // The floor of the host-to-host sort, and the sort from a pinned buffer, where pinning
        // a copy of the keys is cheap.
        if copies {
            progress.step(format!("gpu {host_algo} (pinned host buffer)"));
            let (pinned_ms, sorted) =
                timing::gpu_end_to_end_pinned(gpu, host_algo, &input, order, job.reps.min(5))?;
            record(
                format!("gpu {} (end-to-end, pinned host buffer)", name(host_algo)),
                pinned_ms,
                verdict(&sorted),
            );
            progress.step("the pinned copies alone");
            let copies = timing::gpu_pinned_copies(gpu, &input, job.reps)?;
            floor = Some((copies, e2e_ms.median, pinned_ms.median));
        }
    } else {
        progress.step("cpu fallback: radix sort");
        let (ms, sorted) = timing::cpu(CpuAlgo::Radix, &input, order, job.cpu_reps);
        record("cpu fallback: radix sort".into(), ms, verdict(&sorted));
    }
    for algo in job.baselines() {
        progress.step(algo.describe());
        let (ms, sorted) = timing::cpu(algo, &input, order, job.cpu_reps);
        record(algo.describe(), ms, verdict(&sorted));
    }
    drop(progress);

    sayln!(
        "gpusort: {n} {} keys, {:?} distribution, seed {}, {:?}, on {device}",
        K::DTYPE,
        job.dist,
        job.seed,
        order
    );
    if let (Some((on_device, on_host)), Some(gpu)) = (chose, &gpu) {
        let table = kernels_gpu::tuning::auto::table(gpu.limits().compute_capability);
        let fastest = GpuAlgo::from(table.device.keys(n as u64, size_of::<K>() as u32));
        sayln!(
            "--algo auto chose the {} sort for the keys on the device{} and the {} sort for host \
             slices: the fastest for {n} {}-byte keys on this device's table (measured on an {})",
            on_device,
            if fastest == on_device {
                String::new()
            } else {
                format!(" (the {fastest} sort's scratch did not fit)")
            },
            on_host,
            size_of::<K>(),
            table.measured_on,
        );
    }
    print_table(&rows, n)?;
    if let Some((copies, host_to_host, pinned)) = floor {
        sayln!(
            "pinned copies alone (up and down, {:.1} MiB each way, CUDA events): {:.3} ms median \
             (min {:.3}); host to host / copies: {:.2} from pageable memory, {:.2} from a pinned \
             buffer",
            (n * size_of::<K>()) as f64 / f64::from(1 << 20),
            copies.median,
            copies.min,
            host_to_host / copies.median,
            pinned / copies.median
        );
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("gpusort: VERIFICATION FAILED: {f}");
        }
        return Ok(ExitCode::from(1));
    }
    if oracle.is_some() {
        sayln!("verified: every output is sorted and holds the same keys as std's sort");
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(rows: &[Row], n: usize) -> Result<()> {
    let std_ms = rows
        .iter()
        .find(|r| r.what == CpuAlgo::Std.describe())
        .map(|r| r.ms.median);
    sayln!(
        "| {:<42} | {:>10} | {:>10} | {:>10} | {:>12} | {:>8} | {:>8} |",
        "sort",
        "median ms",
        "min ms",
        "max ms",
        "Mkeys/s",
        "vs std",
        "verified"
    );
    sayln!(
        "|{:-<44}|{:->12}|{:->12}|{:->12}|{:->14}|{:->10}|{:->10}|",
        "",
        "",
        "",
        "",
        "",
        "",
        ""
    );
    for r in rows {
        let speedup = std_ms.map_or("-".into(), |s| format!("{:.1}x", s / r.ms.median));
        let verified = match r.verified {
            Some(true) => "yes",
            Some(false) => "FAILED",
            None => "skipped",
        };
        sayln!(
            "| {:<42} | {:>10.3} | {:>10.3} | {:>10.3} | {:>12.1} | {:>8} | {:>8} |",
            r.what,
            r.ms.median,
            r.ms.min,
            r.ms.max,
            n as f64 / r.ms.median / 1e3,
            speedup,
            verified
        );
    }
    Ok(())
}
