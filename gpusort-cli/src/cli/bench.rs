//! `gpusort bench`: sweep sizes × sorts × key types × orders, verify every result against std's
//! sort, and write `bench.csv`, `bench.md` and `bench.svg`. The work is in [`crate::bench`].

use super::main_job::{Backend, open_gpu_or};
use crate::bench::peers::{self, PeerRow};
use crate::bench::plan::{self, Plan};
use crate::bench::sweep::{self, Settings, Step};
use crate::bench::{Algo, Measurement, order_name, plot, report, size_name, unique};
use crate::cpu;
use crate::gpu::GpuSorter;
use crate::inputs::Dist;
use crate::keys::{DType, Order};
use crate::timing::GpuTiming;
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Settings of the bench mode, `gpusort bench` (the fields are its flags).
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, Command};
///
/// let cli = Cli::parse_from(["gpusort", "bench", "--max-log2", "20", "--dtypes", "u32,f64"]);
/// let Some(Command::Bench(args)) = cli.command else { unreachable!() };
/// assert_eq!((args.min_log2, args.max_log2, args.dtypes.len()), (10, 20, 2));
/// ```
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Smallest size, as log2 of the number of keys.
    #[arg(long, default_value_t = 10, value_parser = log2_parser())]
    pub min_log2: u32,
    /// Largest size, as log2 of the number of keys.
    #[arg(long, default_value_t = 28, value_parser = log2_parser())]
    pub max_log2: u32,
    /// Sorts to time, comma-separated [default: every available sort of keys alone: the GPU
    /// sorts when there is a GPU, and the CPU sorts]. `merge_pairs` and `radix_pairs` time the
    /// stable GPU sorts carrying a value per key, as wide as the key (the pairs sweep that
    /// `auto`'s pairs breakpoints are measured from).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub algos: Option<Vec<Algo>>,
    /// Key types, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [DType::U32, DType::F32])]
    pub dtypes: Vec<DType>,
    /// Orders, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Order::Ascending])]
    pub orders: Vec<Order>,
    /// Where to sort: `auto` skips the GPU sorts when there is no GPU, `gpu` fails then.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Timed repetitions of a GPU sort after one warm-up (the median is reported).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// How a GPU sort is timed: `sort` puts the events around the sort alone; `like-peers`
    /// times the restoring copy and the sort together, less the copy alone, as
    /// bench/peers/peers.cu times CUB and thrust (use it for ratios to --peers rows).
    #[arg(long, value_enum, default_value_t = GpuTiming::Sort)]
    pub gpu_timing: GpuTiming,
    /// Timed repetitions of a CPU sort.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub cpu_reps: u32,
    /// Largest size for the CPU sorts, as log2 n (cpu_bitonic1 stops at 2^22 unless --algos
    /// names it).
    #[arg(long, default_value_t = 24, value_parser = log2_parser())]
    pub cpu_max_log2: u32,
    /// Distribution of the keys.
    #[arg(long, value_enum, default_value_t = Dist::Uniform)]
    pub dist: Dist,
    /// Seed of the keys.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Directory for bench.csv, bench.md and bench.svg (created if missing).
    #[arg(long, default_value = "bench-out")]
    pub out: PathBuf,
    /// CSV files of the peer benchmark (bench/peers, run by scripts/bench-peers.sh:
    /// peer,dtype,n,ms_median,...), repeatable or comma-separated: their rows join the table
    /// and the plot.
    #[arg(long, value_delimiter = ',')]
    pub peers: Vec<PathBuf>,
    /// Print our GPU times as ratios to cub_merge and cub_radix from --peers.
    #[arg(long, requires = "peers")]
    pub compare: bool,
    /// GPU counts for the multi-GPU sweep, comma-separated (e.g. `1,2,4`): rows `multi_merge`
    /// in bench-multi.csv and bench-multi.md, keys made and checked on the GPUs. Without
    /// `--algos` only the multi-GPU sweep runs.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    pub gpus: Vec<u32>,
    /// Row lengths for the segmented sorts' sweep, comma-separated (e.g. `16,128,4096`): rows
    /// of one length, 2^--segments-log2 keys in all, keys alone, pairs and argsort of each of
    /// --dtypes, in bench-segments.csv. Without `--algos` only the segmented sweeps run.
    #[arg(long, value_delimiter = ',')]
    pub rows: Vec<usize>,
    /// Time the segmented sorts on variable-length segments too (a power law and uniform
    /// 1..=2048, 2^--segments-log2 keys), and write their offsets (segments-NAME.i32, for
    /// `bench/peers/peers.cu segments`).
    #[arg(long)]
    pub segments: bool,
    /// Keys in all of each --rows and --segments case, as log2.
    #[arg(long, default_value_t = 26, value_parser = log2_parser())]
    pub segments_log2: u32,
    /// The top-k sweep, for these k up to 1024 (comma-separated; `--topk` alone:
    /// 1,8,64,256,1024): the k largest of arrays of 2^MIN-LOG2 .. 2^MAX-LOG2 keys of each of --dtypes and of each
    /// row of the --topk-rows matrices (k up to the row), on the GPU; rows `topk_k{k}` and
    /// `topk_rows{L}_k{k}` in bench-topk.csv and bench-topk.md, beside torch.topk's rows of a
    /// --peers CSV (bench/peers/torch_peers.py topk, topk-rows). Without --algos only the
    /// top-k sweep runs.
    #[arg(long, value_delimiter = ',', num_args = 0.., value_parser = clap::value_parser!(u64).range(1..))]
    pub topk: Option<Vec<u64>>,
    /// The matrices of the top-k sweep's rows, as ROWSxLEN, comma-separated [default:
    /// 16384x4096,1024x65536].
    #[arg(long, value_delimiter = ',', requires = "topk")]
    pub topk_rows: Vec<crate::bench::topk::Shape>,
}

/// Refuses a sweep whose largest size the host cannot hold, before anything is allocated: each
/// size holds the input, std's sorted reference and one sort's output (3 × n keys), and with a
/// `_pairs` sort the input positions and the values that come back (2 × n values as wide as the
/// keys).
fn check_memory(plan: &Plan) -> Result<()> {
    let Some(log2) = plan
        .log2_sizes()
        .rev()
        .find(|&l| !plan.algos_at(l).is_empty())
    else {
        return Ok(());
    };
    let key = plan
        .dtypes
        .iter()
        .map(|&d| crate::files::key_bytes(d) as u64)
        .max()
        .unwrap_or(0);
    let copies = if plan.algos_at(log2).iter().any(|a| a.carries_values()) {
        5
    } else {
        3
    };
    let need = 1u64
        .checked_shl(log2)
        .and_then(|n| n.checked_mul(copies * key))
        .unwrap_or(u64::MAX);
    crate::memory::check(
        need,
        format!("the sweep at 2^{log2} keys (input, reference and output on the host)"),
    )?;
    Ok(())
}

fn log2_parser() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(0..=i64::from(plan::MAX_LOG2))
}

/// Runs the bench mode. Exit code 0: every result verified; 1: a verification failed (the
/// sweep goes on and records it).
///
/// # Errors
/// Bad settings, an unreadable peer CSV, a GPU that `--backend gpu` asked for and is not there,
/// a GPU error mid-sweep (after writing what was measured), or files that cannot be written.
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, Command, bench};
///
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().to_str().unwrap();
/// let cli = Cli::parse_from([
///     "gpusort", "bench", "--backend", "cpu", "--max-log2", "12", "--cpu-reps", "1", "--out", out,
/// ]);
/// let Some(Command::Bench(args)) = cli.command else { unreachable!() };
/// assert_eq!(bench::run(&args)?, std::process::ExitCode::SUCCESS);
/// assert!(dir.path().join("bench.svg").exists());
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    if args.min_log2 > args.max_log2 {
        bail!(
            "--min-log2 {} is above --max-log2 {}",
            args.min_log2,
            args.max_log2
        );
    }
    check_out(&args.out)?;
    if args.backend == Backend::Cpu {
        let gpu_only = [
            (args.topk.is_some(), "--topk", "the top-k sweep"),
            (!args.gpus.is_empty(), "--gpus", "the multi-GPU sweep"),
            (
                !args.rows.is_empty(),
                "--rows",
                "the segmented sorts' sweep",
            ),
            (args.segments, "--segments", "the segmented sorts' sweep"),
        ];
        if let Some((_, flag, sweep)) = gpu_only.iter().find(|(given, ..)| *given) {
            bail!("{flag}: {sweep} needs a GPU, and --backend cpu has none: drop one");
        }
    }
    // The sweeps beside the main one; without --algos they are all that runs.
    let mut side_failed = false;
    if let Some(ks) = &args.topk {
        side_failed |= !topk_sweep(args, ks)?;
    }
    if !args.gpus.is_empty() {
        multi_sweep(args)?;
    }
    if !args.rows.is_empty() || args.segments {
        side_failed |= segments_sweep(args)? > 0;
    }
    let side =
        args.topk.is_some() || !args.gpus.is_empty() || !args.rows.is_empty() || args.segments;
    if side && args.algos.is_none() {
        return Ok(if side_failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    }
    let peer_rows = read_peers(&args.peers)?;
    let requested = unique(args.algos.as_deref().unwrap_or(&Algo::DEFAULT));
    let gpu = open_gpu_for(args.backend, &requested, args.algos.is_some())?;
    let algos: Vec<Algo> = requested
        .into_iter()
        .filter(|a| !a.is_gpu() || gpu.is_some())
        .collect();
    if algos.is_empty() {
        bail!("no sort left to time: the GPU sorts need a GPU (name CPU sorts in --algos)");
    }
    let plan = Plan {
        min_log2: args.min_log2,
        max_log2: args.max_log2,
        algos,
        named: args.algos.is_some(),
        cpu_max_log2: args.cpu_max_log2,
        dtypes: unique(&args.dtypes),
        orders: unique(&args.orders),
    };
    let caps = describe_caps(&plan);
    for cap in &caps {
        eprintln!("gpusort bench: {cap}");
    }
    if plan.measurements() == 0 {
        bail!("no sort runs at these sizes (see --cpu-max-log2)");
    }
    check_memory(&plan)?;
    // Now rather than after a sweep of minutes.
    make_out(&args.out)?;
    let settings = Settings {
        reps: args.reps,
        gpu_timing: args.gpu_timing,
        cpu_reps: args.cpu_reps,
        dist: args.dist,
        seed: args.seed,
    };
    let (outcome, failures) = sweep_with_progress(&plan, &settings, gpu.as_ref());

    let device = gpu
        .as_ref()
        .map_or("CPU only".to_string(), |g| g.device_name().to_string());
    let shown_peers = peers::relevant(
        &peer_rows,
        &plan.dtypes,
        1 << plan.min_log2,
        1 << plan.max_log2,
    );
    let about = report::About {
        device: device.clone(),
        date: now_utc(),
        notes: notes(&settings, gpu.is_some(), &args.peers, &caps),
    };
    write_reports(
        &args.out,
        &outcome.measurements,
        &shown_peers,
        &about,
        &plot::title(&device, &plan.dtypes, &plan.orders),
    )?;
    sayln!(
        "gpusort bench: {} measurements on {device}; wrote bench.csv, bench.md and bench.svg in {}",
        outcome.measurements.len(),
        args.out.display()
    );
    if args.compare {
        say!(
            "{}",
            peers::comparison_table(&peers::compare(&outcome.measurements, &peer_rows))
        );
    }
    if let Some(e) = outcome.error {
        return Err(anyhow::Error::new(e).context(format!(
            "the sweep stopped early; {} holds what was measured before",
            args.out.display()
        )));
    }
    if failures > 0 {
        eprintln!("gpusort bench: {failures} result(s) failed verification (verified=false)");
        return Ok(ExitCode::from(1));
    }
    if side_failed {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The segmented sorts' sweep (`--rows`, `--segments`): bench-segments.csv, the offsets files,
/// and a line per case on stdout. Returns how many results failed verification.
fn segments_sweep(args: &BenchArgs) -> Result<usize> {
    use crate::bench::segments::{self, Lengths, SegmentRow, Work};
    use crate::gpu::Segments;
    if args.rows.contains(&0) {
        bail!("--rows 0: a row holds at least one key");
    }
    let Some(gpu) = open_gpu_or(args.backend, "the segmented sorts' sweep needs one")? else {
        bail!("the segmented sorts' sweep (--rows, --segments) needs a GPU");
    };
    make_out(&args.out)?;
    let n = 1usize << args.segments_log2;
    let mut layouts: Vec<(String, Vec<usize>, Option<usize>)> = args
        .rows
        .iter()
        .filter(|&&len| len <= n)
        .map(|&len| (format!("rows{len}"), Vec::new(), Some(len)))
        .collect();
    if args.segments {
        for lengths in Lengths::ALL {
            let offsets = segments::offsets(lengths, n, args.seed);
            let path = args.out.join(format!("segments-{}.i32", lengths.name()));
            let bytes: Vec<u8> = offsets
                .iter()
                .flat_map(|&o| (o as i32).to_le_bytes())
                .collect();
            write_replacing(&path, &bytes)?;
            layouts.push((lengths.name().to_string(), offsets, None));
        }
    }
    let (mut rows, mut failures) = (Vec::new(), 0);
    let bar = progress_bar(layouts.len() * unique(&args.dtypes).len() * Work::ALL.len());
    for (layout, offsets, len) in &layouts {
        let (segs, count) = match len {
            Some(len) => (Segments::Rows(*len), n / len),
            None => (Segments::Offsets(offsets), offsets.len() - 1),
        };
        let keys = match len {
            Some(len) => n / len * len,
            None => *offsets.last().expect("offsets start at 0"),
        };
        for &dtype in &unique(&args.dtypes) {
            for work in Work::ALL {
                bar.set_message(format!("{layout} {} {dtype}", work.name()));
                let (ms, verified) =
                    segments::time(&gpu, dtype, work, segs, keys, args.reps, args.seed)?;
                bar.inc(1);
                failures += usize::from(!verified);
                sayln!(
                    "{layout:>16} {:>7} {dtype}: {:>9.4} ms  {:>7.2} Gkeys/s  {}",
                    work.name(),
                    ms.median,
                    keys as f64 / ms.median / 1e6,
                    if verified {
                        "verified"
                    } else {
                        "VERIFICATION FAILED"
                    }
                );
                rows.push(SegmentRow {
                    layout: layout.clone(),
                    work,
                    dtype,
                    segments: count,
                    n: keys,
                    ms,
                    verified,
                });
            }
        }
    }
    bar.finish_and_clear();
    let path = args.out.join("bench-segments.csv");
    write_replacing(&path, segments::csv(&rows).as_bytes())?;
    sayln!(
        "gpusort bench: {} segmented sorts on {}; wrote {}",
        rows.len(),
        gpu.device_name(),
        path.display()
    );
    Ok(failures)
}

/// Runs the sweep with a progress bar; failed verifications are reported on stderr as they
/// happen and counted.
fn sweep_with_progress(
    plan: &Plan,
    settings: &Settings,
    gpu: Option<&GpuSorter>,
) -> (sweep::Outcome, usize) {
    let progress = progress_bar(plan.measurements());
    let mut failures = 0;
    let outcome = sweep::run(plan, settings, gpu, &mut |step| match step {
        Step::Oracle { dtype, order, n } => progress.set_message(format!(
            "{dtype} {} {}: generating the keys and std's sort of them",
            order_name(order),
            size_name(n)
        )),
        Step::Start {
            algo,
            dtype,
            order,
            n,
        } => progress.set_message(format!(
            "{algo} {dtype} {} {}",
            order_name(order),
            size_name(n)
        )),
        Step::Done {
            measurement: m,
            mismatch,
        } => {
            progress.inc(1);
            if let Some(why) = mismatch {
                failures += 1;
                progress.suspend(|| {
                    eprintln!(
                        "gpusort bench: VERIFICATION FAILED: {} {} {} n={}: {why}",
                        m.algo,
                        m.dtype,
                        order_name(m.order),
                        m.n
                    );
                });
            }
        }
    });
    progress.finish_and_clear();
    (outcome, failures)
}

/// The GPU for the GPU sorts among `algos`, if there is one; says on stderr (once) when they
/// will be skipped.
fn open_gpu_for(backend: Backend, algos: &[Algo], named: bool) -> Result<Option<GpuSorter>> {
    let gpu_algos: Vec<&str> = algos
        .iter()
        .filter(|a| a.is_gpu())
        .map(|a| a.name())
        .collect();
    let skipping = format!("skipping the GPU sorts ({})", gpu_algos.join(", "));
    match backend {
        Backend::Cpu => {
            if named && !gpu_algos.is_empty() {
                eprintln!("gpusort bench: --backend cpu: {skipping}");
            }
            Ok(None)
        }
        Backend::Auto if gpu_algos.is_empty() => Ok(None),
        Backend::Auto | Backend::Gpu => open_gpu_or(backend, &skipping),
    }
}

/// The rows of every peer CSV, in order.
fn read_peers(paths: &[PathBuf]) -> Result<Vec<PeerRow>> {
    let mut rows = Vec::new();
    for path in paths {
        let text = fs::read_to_string(path)
            .with_context(|| format!("reading the peer CSV {}", path.display()))?;
        rows.extend(
            peers::parse(&text).with_context(|| format!("in the peer CSV {}", path.display()))?,
        );
    }
    Ok(rows)
}

/// One line per largest size below `--max-log2` at which some sorts stop, saying which and why.
fn describe_caps(plan: &Plan) -> Vec<String> {
    let mut groups: Vec<(u32, Vec<&str>)> = Vec::new();
    for (algo, cap) in plan.capped() {
        match groups.iter_mut().find(|(c, _)| *c == cap) {
            Some((_, names)) => names.push(algo.name()),
            None => groups.push((cap, vec![algo.name()])),
        }
    }
    groups
        .into_iter()
        .map(|(cap, names)| {
            let why = if cap < plan.cpu_max_log2 {
                "name it in --algos to go up to --cpu-max-log2"
            } else {
                "--cpu-max-log2"
            };
            let (names, verb) = match names.as_slice() {
                [one] => (one.to_string(), "runs"),
                more => (more.join(", "), "run"),
            };
            if cap < plan.min_log2 {
                format!("{names} skipped: every size is above 2^{cap} ({why})")
            } else {
                format!("{names} {verb} up to 2^{cap} ({why})")
            }
        })
        .collect()
}

/// The markdown report's lines about how the sweep measured.
fn notes(settings: &Settings, gpu: bool, peer_files: &[PathBuf], caps: &[String]) -> Vec<String> {
    let dist = settings.dist.to_possible_value().map_or_else(
        || format!("{:?}", settings.dist),
        |v| v.get_name().to_owned(),
    );
    let mut notes = vec![format!(
        "Keys: {dist} distribution, seed {}.",
        settings.seed
    )];
    if gpu {
        let timed = match settings.gpu_timing {
            GpuTiming::Sort => {
                "the unsorted input restored by a device copy outside the timed region"
            }
            GpuTiming::LikePeers => {
                "each timed run restores the unsorted input by a device copy, and the copy's \
                 median alone is subtracted (as the peers are timed)"
            }
        };
        notes.push(format!(
            "GPU: CUDA events, one warm-up then {} timed sorts, median shown; keys on the \
             device, {timed}.",
            settings.reps
        ));
    }
    notes.push(format!(
        "CPU: wall clock, {} timed sorts, median shown; {} threads.",
        settings.cpu_reps,
        cpu::threads()
    ));
    notes.push("Every result is checked against std's sort_unstable.".to_string());
    notes.extend(caps.iter().map(|c| format!("{c}.")));
    if !peer_files.is_empty() {
        let files: Vec<String> = peer_files.iter().map(|p| p.display().to_string()).collect();
        notes.push(format!(
            "Peer rows (ascending sorts; no min/max) from {}.",
            files.join(", ")
        ));
    }
    notes
}

/// The multi-GPU sweep of `--gpus`: writes bench-multi.csv and bench-multi.md; fails (after
/// writing them) if a result did not verify.
fn multi_sweep(args: &BenchArgs) -> Result<()> {
    use crate::bench::multi;
    use crate::multi::MultiGpuSorter;
    make_out(&args.out)?;
    let gpu_counts = unique(&args.gpus);
    let (dtypes, orders) = (unique(&args.dtypes), unique(&args.orders));
    let sizes = args.min_log2..=args.max_log2;
    let total = gpu_counts.len() * dtypes.len() * orders.len() * sizes.clone().count();
    let bar = progress_bar(total);
    let mut measurements = Vec::new();
    let mut device = String::new();
    for &g in &gpu_counts {
        let sorter = MultiGpuSorter::new(Some(g as usize))
            .with_context(|| format!("--gpus {g}: opening {g} GPU(s)"))?;
        device = sorter.gpus()[0].device_name().to_string();
        for &dtype in &dtypes {
            for &order in &orders {
                for log2 in sizes.clone() {
                    bar.set_message(format!(
                        "multi_merge {g} GPU(s) {dtype} {} {}",
                        order_name(order),
                        size_name(1 << log2)
                    ));
                    let m = multi::measure(&sorter, dtype, order, 1 << log2, args.reps, args.seed)
                        .with_context(|| format!("{g} GPU(s), {dtype}, 2^{log2} keys"))?;
                    bar.println(format!("{}", m.median_stats));
                    measurements.push(m);
                    bar.inc(1);
                }
            }
        }
    }
    bar.finish_and_clear();
    write_replacing(
        &args.out.join("bench-multi.csv"),
        multi::csv(&measurements).as_bytes(),
    )?;
    let md = multi::markdown(&device, &now_utc(), &measurements);
    write_replacing(&args.out.join("bench-multi.md"), md.as_bytes())?;
    say!("{md}");
    let failed = measurements.iter().filter(|m| !m.verified).count();
    if failed > 0 {
        bail!("{failed} multi-GPU result(s) failed verification (bench-multi.csv: verified=false)");
    }
    Ok(())
}

/// The top-k sweep (`--topk`): every k of `ks` (the defaults if none) over the arrays of the
/// size range and key types and the `--topk-rows` matrices; writes bench-topk.csv and
/// bench-topk.md. Returns whether every result was verified.
fn topk_sweep(args: &BenchArgs, ks: &[u64]) -> Result<bool> {
    use crate::bench::topk::{self, DEFAULT_KS, DEFAULT_ROWS, Shape};
    let peer_rows = read_peers(&args.peers)?;
    let Some(gpu) = open_gpu_or(args.backend, "the top-k sweep needs one")? else {
        bail!("the top-k sweep (--topk) needs a GPU");
    };
    let ks: Vec<usize> = if ks.is_empty() {
        DEFAULT_KS.to_vec()
    } else {
        unique(ks).into_iter().map(|k| k as usize).collect()
    };
    let matrices = if args.topk_rows.is_empty() {
        DEFAULT_ROWS.to_vec()
    } else {
        unique(&args.topk_rows)
    };
    let dtypes = unique(&args.dtypes);
    let mut runs = Vec::new();
    for &dtype in &dtypes {
        for log2 in args.min_log2..=args.max_log2 {
            runs.extend(ks.iter().map(|&k| (dtype, Shape::Array(1 << log2), k)));
        }
        for &shape in &matrices {
            runs.extend(ks.iter().map(|&k| (dtype, shape, k)));
        }
    }
    let max_k = gpusort::gpu::topk::TOP_K_MAX_K as usize;
    if ks.iter().any(|&k| k > max_k) {
        eprintln!(
            "gpusort bench: the top-k sweep times k up to {max_k}; larger k are a sort's first k \
             (time the sorts instead)"
        );
    }
    runs.retain(|&(_, shape, k)| k <= shape.row_len() && k <= max_k);
    let largest = runs
        .iter()
        .map(|&(d, s, _)| s.len() as u64 * crate::files::key_bytes(d) as u64);
    crate::memory::check(
        largest.max().unwrap_or(0).saturating_mul(2),
        "the top-k sweep's largest input (keys and a copy for the check)".to_string(),
    )?;
    make_out(&args.out)?;
    let bar = progress_bar(runs.len());
    let mut measurements = Vec::new();
    for (dtype, shape, k) in runs {
        let name = topk::row_name(shape, k);
        bar.set_message(format!("{name} {dtype} {}", size_name(shape.len())));
        let m = topk::measure(&gpu, dtype, shape, k, (args.reps, args.seed))
            .with_context(|| format!("{name}, {dtype}, {} keys", shape.len()))?;
        bar.println(format!(
            "{name} {dtype} {}: {:.4} ms{}",
            size_name(shape.len()),
            m.ms.median,
            if m.verified { "" } else { " NOT VERIFIED" }
        ));
        measurements.push(m);
        bar.inc(1);
    }
    bar.finish_and_clear();
    write_replacing(
        &args.out.join("bench-topk.csv"),
        topk::csv(&measurements).as_bytes(),
    )?;
    let md = topk::markdown(gpu.device_name(), &now_utc(), &measurements, &peer_rows);
    write_replacing(&args.out.join("bench-topk.md"), md.as_bytes())?;
    say!("{md}");
    let failed = measurements.iter().filter(|m| !m.verified).count();
    if failed > 0 {
        eprintln!(
            "gpusort bench: {failed} top-k result(s) failed verification (bench-topk.csv: correct=0)"
        );
    }
    Ok(failed == 0)
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
fn progress_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
        .expect("the template is valid")
        .progress_chars("=> ");
    bar.set_style(style);
    // Redraws the clock while one long step (std's sort of 2^28 keys) runs.
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// The date and time now, in UTC, to the minute.
fn now_utc() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{} {:02}:{:02} UTC", now.date(), now.hour(), now.minute())
}

/// Writes the three reports into `dir`.
fn write_reports(
    dir: &Path,
    measurements: &[Measurement],
    peer_rows: &[PeerRow],
    about: &report::About,
    title: &str,
) -> Result<()> {
    let series = plot::series(measurements, peer_rows);
    let svg = plot::svg(&series, title)?;
    write_replacing(&dir.join("bench.csv"), report::csv(measurements).as_bytes())?;
    write_replacing(
        &dir.join("bench.md"),
        report::markdown(about, measurements, peer_rows).as_bytes(),
    )?;
    write_replacing(&dir.join("bench.svg"), svg.as_bytes())
}

/// Refuses an `--out` that is there and not a directory, before any sweep.
fn check_out(out: &Path) -> Result<()> {
    match fs::metadata(out) {
        Ok(meta) if !meta.is_dir() => bail!(
            "--out {}: it is a file, not a directory; bench writes its CSV, markdown and plots \
             into a directory (created if missing)",
            out.display()
        ),
        _ => Ok(()),
    }
}

/// Creates the `--out` directory if it is missing.
fn make_out(out: &Path) -> Result<()> {
    check_out(out)?;
    fs::create_dir_all(out)
        .with_context(|| format!("--out {}: cannot create the directory", out.display()))
}

/// Writes `path` through a temporary file beside it, so a reader never sees half a file; a
/// signal afterwards says that it was replaced.
fn write_replacing(path: &Path, contents: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let temporary = path.with_file_name(format!(".{name}.tmp"));
    fs::write(&temporary, contents).with_context(|| format!("writing {}", temporary.display()))?;
    fs::rename(&temporary, path).with_context(|| format!("replacing {}", path.display()))?;
    crate::cleanup::replaced(path);
    Ok(())
}
