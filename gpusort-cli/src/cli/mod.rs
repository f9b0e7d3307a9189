//! The command-line tool `gpusort`: the main job (no subcommand), `bench`, `sort` and `topk`.
//!
//! `gpusort-cli/src/main.rs` is [`Cli::parse`](clap::Parser::parse) and [`run`]; the modes are
//! public so that other programs can run them too:
//!
//! ```
//! use clap::Parser;
//! use gpusort_cli::cli::{Cli, run};
//!
//! let cli = Cli::parse_from(["gpusort", "--n", "4096", "--dtype", "f32", "--backend", "cpu", "--no-baselines"]);
//! let code = run(cli)?; // prints the table; without a GPU, the CPU fallback's row
//! assert_eq!(code, std::process::ExitCode::SUCCESS);
//! # Ok::<(), anyhow::Error>(())
//! ```

/// Writes to standard output; a closed or full standard output is an error like any other (exit
/// code 2, reported after the work and its files are settled), never a panic.
macro_rules! say {
    ($($arg:tt)*) => {
        anyhow::Context::context(
            std::io::Write::write_fmt(&mut std::io::stdout(), format_args!($($arg)*)),
            "writing to standard output",
        )?
    };
}

/// [`say!`] with a line break at the end, as `println!`.
macro_rules! sayln {
    ($($arg:tt)*) => {
        say!("{}\n", format_args!($($arg)*))
    };
}

pub mod bench;
pub mod main_job;
mod outputs;
mod progress;
pub mod sort_file;
pub mod topk_file;

use anyhow::{Context as _, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use gpusort::gpu::GpuAlgo;
use std::io::Write as _;
use std::process::ExitCode;

/// Prints the closing `report` of a file command, once its outputs are complete and in place:
/// on standard output, or on stderr where `to_stderr` (an output went to standard output). A
/// closed or full stream is an error of its own, which says that `written` (the outputs, named)
/// was written all the same.
fn print_report(report: &str, written: &str, to_stderr: bool) -> Result<ExitCode> {
    let (stream, printed) = if to_stderr {
        let mut stderr = std::io::stderr().lock();
        (
            "standard error",
            writeln!(stderr, "{report}").and_then(|()| stderr.flush()),
        )
    } else {
        let mut stdout = std::io::stdout().lock();
        (
            "standard output",
            writeln!(stdout, "{report}").and_then(|()| stdout.flush()),
        )
    };
    printed.with_context(|| format!("writing the report to {stream} ({written})"))?;
    crate::cleanup::test_point("reported");
    Ok(ExitCode::SUCCESS)
}

/// `n` and the noun, singular for one: `1 key`, `2 keys`.
fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A command-line error of clap's on one line, for `gpusort: error: …`: its message and tips
/// without the usage, then where to read more: `--help` of the subcommand among `args` (the
/// command line, program name first), or of `gpusort`.
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, error_line};
///
/// let args = ["gpusort", "sort", "in.npy"];
/// let err = Cli::try_parse_from(args).unwrap_err();
/// assert_eq!(
///     error_line(&err, &args),
///     "the following required arguments were not provided: <OUTPUT> (see gpusort sort --help)"
/// );
/// let args = ["gpusort", "--n", "-5"];
/// let err = Cli::try_parse_from(args).unwrap_err();
/// assert_eq!(
///     error_line(&err, &args),
///     "invalid value '-5' for '--n <N>': invalid digit found in string (see gpusort --help)"
/// );
/// ```
pub fn error_line(err: &clap::Error, args: &[impl AsRef<std::ffi::OsStr>]) -> String {
    let text = err.render().to_string();
    let mut line = String::new();
    for part in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if part.starts_with("Usage:") || part.starts_with("For more information") {
            break;
        }
        let part = part.strip_prefix("error: ").unwrap_or(part);
        if line.is_empty() {
            line = part.to_string();
        } else if line.ends_with(':') {
            line = format!("{line} {part}");
        } else {
            line = format!("{line}; {part}");
        }
    }
    let command = <Cli as clap::CommandFactory>::command();
    let sub = args
        .get(1)
        .and_then(|a| a.as_ref().to_str())
        .and_then(|a| command.find_subcommand(a))
        .map(|s| format!(" {}", s.get_name()));
    format!("{line} (see gpusort{} --help)", sub.unwrap_or_default())
}

pub use main_job::{Backend, MainJob};

/// Sort arrays on NVIDIA GPUs with kernels written in Rust, and compare with the CPU.
///
/// Without a subcommand: generate keys, sort them on the GPU, verify against std's sort and
/// print a table beside the CPU baselines.
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, Command};
///
/// let cli = Cli::parse_from(["gpusort", "sort", "keys.npy", "sorted.npy", "--order", "desc"]);
/// assert!(matches!(cli.command, Some(Command::Sort(_))));
/// assert!(Cli::try_parse_from(["gpusort", "--n", "-1"]).is_err());
/// ```
#[derive(Debug, Parser)]
#[command(
    name = "gpusort",
    version,
    args_conflicts_with_subcommands = true,
    about = "Sort arrays on NVIDIA GPUs with kernels written in Rust, and compare with the CPU.",
    long_about = "Sort arrays on NVIDIA GPUs with kernels written in Rust, and compare with the \
                  CPU.\n\nWithout a subcommand: generate keys, sort them on the GPU, verify \
                  against std's sort and print a table beside the CPU baselines. Exit codes: 0 \
                  sorted and verified, 1 a verification failed, 2 an error.",
    after_help = "Examples:\n  \
                  gpusort --n 33554432 --dtype f32           sort 2^25 random floats on the GPU, verify, compare with the CPU\n  \
                  gpusort sort keys.npy sorted.npy           sort a .npy file (see gpusort sort --help)\n  \
                  gpusort topk 10 keys.npy top.npy --largest the 10 largest keys of a .npy file\n  \
                  gpusort bench --max-log2 26 --out results  sweep sizes and sorts; CSV, markdown and a plot"
)]
pub struct Cli {
    /// A subcommand; none runs the main job.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The main job's settings.
    #[command(flatten)]
    pub job: MainJob,
}

/// Subcommands; see [`Cli`].
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sweep sizes × algorithms × key types × orders; write CSV, markdown and an SVG plot.
    #[command(after_help = "Examples:\n  \
        gpusort bench                                     every sort, 2^10..2^28, u32 and f32\n  \
        gpusort bench --algos merge,radix --dtypes u64    two GPU sorts of u64 keys\n  \
        gpusort bench --gpu-timing like-peers --peers peers.csv --compare   beside CUB's sorts (bench/peers, scripts/bench-peers.sh)")]
    Bench(bench::BenchArgs),
    /// Sort a .npy or raw file into another file; a 2-D (or N-D) array along its last axis.
    #[command(after_help = "Examples:\n  \
        gpusort sort keys.npy sorted.npy --order desc       a 1-D .npy of u32, i32, f32, u64, i64 or f64\n  \
        gpusort sort keys.bin sorted.bin --dtype f32        raw little-endian keys\n  \
        cat keys.npy | gpusort sort - sorted.npy --argsort idx.npy   from standard input, with the stable permutation\n  \
        gpusort sort scores.npy sorted.npy --argsort idx.npy   a 2-D .npy: each row sorted, as np.sort(a, axis=-1), and its positions\n  \
        gpusort sort rows.bin sorted.bin --dtype u32 --row-len 128   raw keys sorted in rows of 128")]
    Sort(sort_file::SortArgs),
    /// The k smallest or largest keys of a .npy or raw file (per row for a matrix), and their
    /// indices.
    #[command(
        name = "topk",
        after_help = "Examples:\n  \
        gpusort topk 100 scores.npy best.npy --largest --indices idx.npy   the 100 largest and where they are\n  \
        gpusort topk 8 logits.npy top8.npy --order desc                  a 2-D .npy: the 8 largest of each row\n  \
        gpusort topk 5 keys.bin low.bin --dtype u64 --row-len 1000      raw keys in rows of 1000"
    )]
    TopK(topk_file::TopKArgs),
}

/// Runs the command line. Exit code 0: done; 1: a verification failed; errors are reported by
/// the caller (exit code 2).
///
/// # Errors
/// Bad input or settings, or a GPU error, each with a message naming the problem: an
/// [`anyhow::Error`] whose chain holds the [`Error`](crate::Error) or
/// [`FileError`](crate::files::FileError) where there is one.
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, run};
///
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("bench-out");
/// let cli = Cli::parse_from([
///     "gpusort", "bench", "--algos", "cpu_std", "--min-log2", "10", "--max-log2", "11",
///     "--dtypes", "u32", "--cpu-reps", "1", "--out", out.to_str().unwrap(),
/// ]);
/// assert_eq!(run(cli)?, std::process::ExitCode::SUCCESS);
/// assert!(out.join("bench.csv").exists());
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        None => main_job::run(&cli.job),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Sort(args)) => sort_file::run(&args),
        Some(Command::TopK(args)) => topk_file::run(&args),
    }
}

/// GPU sort algorithms of the file sort and the main job.
///
/// ```
/// use clap::ValueEnum;
/// use gpusort::gpu::GpuAlgo;
/// use gpusort_cli::cli::SortAlgo;
/// assert_eq!(SortAlgo::from_str("bitonic", false), Ok(SortAlgo::Bitonic));
/// assert_eq!(SortAlgo::Radix.gpu(), Some(GpuAlgo::Radix));
/// assert_eq!(SortAlgo::Auto.gpu(), None); // the library's default calls choose
/// assert!(SortAlgo::Bitonic.stable_gpu().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortAlgo {
    /// The fastest of bitonic, merge and radix for the size, key width, device and where the
    /// keys are, measured (the bitonic sort where the faster one's scratch does not fit); an
    /// argsort takes the faster of merge and radix.
    Auto,
    /// The bitonic network (unstable; on the GPU).
    Bitonic,
    /// The merge-path merge sort (stable; on the GPU).
    Merge,
    /// The radix sort (stable; on the GPU).
    Radix,
}

impl SortAlgo {
    /// The GPU sort it names for keys alone, `None` for `auto`: the library's sorts given an
    /// order alone choose then (`sort_unstable` of a host slice and of a queue;
    /// [`GpuSorter::auto_device`]).
    pub fn gpu(self) -> Option<GpuAlgo> {
        match self {
            SortAlgo::Auto => None,
            SortAlgo::Bitonic => Some(GpuAlgo::Bitonic),
            SortAlgo::Merge => Some(GpuAlgo::Merge),
            SortAlgo::Radix => Some(GpuAlgo::Radix),
        }
    }

    /// The stable GPU sort it names for an argsort, `None` for `auto`: the library's stable
    /// choice then (`argsort`, with `u32` or `u64` indices).
    ///
    /// # Errors
    /// For the bitonic sort, which is not stable.
    pub fn stable_gpu(self) -> Result<Option<GpuAlgo>> {
        match self {
            SortAlgo::Bitonic => {
                bail!("--argsort needs a stable sort: use --algo merge, radix or auto, not bitonic")
            }
            algo => Ok(algo.gpu()),
        }
    }
}
