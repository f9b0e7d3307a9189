//! `gpusort sort INPUT OUTPUT`: sort the keys of a `.npy` or raw file into another file.
//!
//! The file work (checking, chunked reading, atomic writing) is [`crate::files`]'s; this module
//! picks the formats, the backend and the order of the steps.

use super::main_job::{Backend, open_gpu};
use super::progress::Progress;
use crate::argsort::{argsort_cpu, argsort_cpu_u32};
use crate::cpu::{CpuAlgo, threads};
use crate::files::{AtomicOutput, CHUNK_BYTES, FileFormat, KeyFile, LeKey, key_bytes, same_file};
use crate::gpu::{GpuAlgo, GpuSorter, HostPlan, Sorting};
use crate::keys::{DType, Order};
use crate::with_key_type;
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// GPU sort algorithms of the file sort and the main job.
///
/// ```
/// use clap::ValueEnum;
/// use gpusort::gpu::GpuAlgo;
/// use gpusort_cli::cli::sort_file::SortAlgo;
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
    /// The GPU sort it names for keys alone, `None` for `auto`: the library's default calls
    /// choose then (`sort_unstable`, `sort_unstable_device`; [`GpuSorter::auto_device`]).
    pub fn gpu(self) -> Option<GpuAlgo> {
        match self {
            SortAlgo::Auto => None,
            SortAlgo::Bitonic => Some(GpuAlgo::Bitonic),
            SortAlgo::Merge => Some(GpuAlgo::Merge),
            SortAlgo::Radix => Some(GpuAlgo::Radix),
        }
    }

    /// The stable GPU sort it names for an argsort, `None` for `auto`: the library's stable
    /// choice then (`argsort`, `argsort_u32`).
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

/// Settings of the file sort, `gpusort sort INPUT OUTPUT` (the fields are its arguments).
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, Command};
///
/// let cli = Cli::parse_from(["gpusort", "sort", "keys.bin", "sorted.npy", "--dtype", "u64"]);
/// let Some(Command::Sort(args)) = cli.command else { unreachable!() };
/// assert_eq!(args.dtype, Some(gpusort::DType::U64));
/// assert!(!args.in_place);
/// ```
#[derive(Debug, Args)]
pub struct SortArgs {
    /// The file to sort: a 1-D .npy array of u32, i32, f32, u64, i64 or f64 (little-endian),
    /// or raw little-endian keys (any other name; needs --dtype); `-` reads standard input (a
    /// .npy unless --format raw).
    pub input: PathBuf,
    /// Where to write the sorted keys, with INPUT's key type and shape: a .npy if the name ends
    /// in .npy, else raw. A regular file or a new name (a symbolic link: the file it points
    /// to); written beside it unnamed and put in place only when complete.
    pub output: PathBuf,
    /// Key type: required for raw files; for a .npy, if given, it must be the file's.
    #[arg(long, value_enum)]
    pub dtype: Option<DType>,
    /// Format of INPUT and OUTPUT [default: npy for names ending in .npy, raw for others].
    #[arg(long, value_enum)]
    pub format: Option<FileFormat>,
    /// Sort order (floats: NaN last ascending, -0.0 before +0.0, like total_cmp).
    #[arg(long, value_enum, default_value_t = Order::Ascending)]
    pub order: Order,
    /// Sort algorithm on the GPU (`auto`: the fastest for the size and key width, measured; the
    /// report names it).
    #[arg(long, value_enum, default_value_t = SortAlgo::Auto)]
    pub algo: SortAlgo,
    /// Where to sort; without a GPU, `auto` sorts on the CPU (a radix sort on all cores).
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Also write the sorting permutation to IDX.npy (int64): OUTPUT is INPUT taken at these
    /// indices. Stable: equal keys keep their input order. Computed on the GPU if there is one
    /// (`--algo auto`: the faster of the merge and radix sorts; or the one named), else on the
    /// CPU; `--algo bitonic` is refused with it (not stable).
    #[arg(long, value_name = "IDX.npy")]
    pub argsort: Option<PathBuf>,
    /// Allow OUTPUT to be INPUT, which is then replaced (through a temporary file, like any
    /// output); through a symbolic link, the file it points to is sorted.
    #[arg(long)]
    pub in_place: bool,
}

/// Runs the file sort.
///
/// # Errors
/// A bad input file, output path or setting, an I/O error, or a GPU error, each naming the
/// file or the problem (a [`FileError`](crate::files::FileError) or
/// [`Error`](crate::Error) in the chain where there is one). After an error no output file has
/// been created or changed.
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, Command, sort_file};
/// use gpusort::files::{FileFormat, KeyFile};
///
/// let dir = tempfile::tempdir()?;
/// let (input, output) = (dir.path().join("keys.bin"), dir.path().join("sorted.npy"));
/// std::fs::write(&input, [3i32, -1, 2].map(i32::to_le_bytes).concat())?;
/// let cli = Cli::parse_from([
///     "gpusort", "sort", input.to_str().unwrap(), output.to_str().unwrap(),
///     "--dtype", "i32", "--backend", "cpu",
/// ]);
/// let Some(Command::Sort(args)) = cli.command else { unreachable!() };
/// sort_file::run(&args)?;
/// let sorted: Vec<i32> = KeyFile::open(&output, FileFormat::Npy, None)?.read_keys(&mut |_| {})?;
/// assert_eq!(sorted, [-1, 2, 3]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn run(args: &SortArgs) -> Result<ExitCode> {
    let format_of = |path: &Path| {
        args.format.unwrap_or_else(|| {
            // Standard input has no name to go by: a .npy unless --format says otherwise.
            if path == Path::new("-") {
                FileFormat::Npy
            } else {
                FileFormat::from_path(path)
            }
        })
    };
    check_paths(args)?;
    if args.argsort.is_some() {
        args.algo.stable_gpu()?;
    }
    // Every output is checked (by creating the file its keys go to) before any keys are read,
    // so that a bad path fails at once, not after minutes of reading and sorting.
    let keys_out = AtomicOutput::create(&args.output)?;
    let index_out = args
        .argsort
        .as_deref()
        .map(AtomicOutput::create)
        .transpose()?;
    let mut input = KeyFile::open(&args.input, format_of(&args.input), args.dtype)?;
    for out in std::iter::once(&keys_out).chain(&index_out) {
        if out.target() != out.path() {
            eprintln!(
                "gpusort: {} is a symbolic link: replacing the file it points to, {}",
                out.path().display(),
                out.target().display()
            );
        }
    }
    let mut gpu = open_gpu(args.backend)?;
    check_memory(&input, args.argsort.is_some(), gpu.as_ref())?;
    let progress = Progress::for_file(input.data_bytes());
    if let Some(gpu) = &mut gpu {
        // Keys too many for the device are sorted in chunks and merged: shown on the bar.
        gpu.set_progress(Some(progress.sort_hook(key_bytes(input.dtype()) as u64)));
    }

    let start = Instant::now();
    let job = Job {
        order: args.order,
        algo: args.algo,
        out_format: format_of(&args.output),
        gpu: gpu.as_ref(),
        progress: &progress,
    };
    let (len, dtype) = (input.len(), input.dtype());
    let sorted_on = with_key_type!(dtype, K => job.sort::<K>(&mut input, keys_out, index_out))?;
    let argsort_note = args.argsort.as_ref().map_or(String::new(), |p| {
        format!(" (permutation: {})", p.display())
    });
    let report = format!(
        "gpusort: sorted {len} {dtype} keys {} from {} into {}{argsort_note} on {sorted_on} in \
         {:.2} s",
        match args.order {
            Order::Ascending => "ascending",
            Order::Descending => "descending",
        },
        args.input.display(),
        args.output.display(),
        start.elapsed().as_secs_f64(),
    );
    // The outputs are complete and in place: a closed or full stdout is an error of its own.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{report}")
        .and_then(|()| stdout.flush())
        .with_context(|| {
            format!(
                "writing the report to standard output (the sorted keys were written to {})",
                args.output.display()
            )
        })?;
    Ok(ExitCode::SUCCESS)
}

/// Refuses a sort whose host memory the process cannot have, before any key is read: the keys;
/// for an argsort the (key, index) pairs and the sort's scratch on the CPU or the indices from
/// the GPU; keys sorted on the GPU in chunks also need a host copy to merge into; and the read
/// and write buffers.
fn check_memory(input: &KeyFile, argsort: bool, gpu: Option<&GpuSorter>) -> Result<()> {
    let n = input.len();
    let key = key_bytes(input.dtype()) as u64;
    let index = if n <= 1 << 32 { 4 } else { 8 };
    let keys = input.data_bytes();
    let buffers = 2 * keys.min(CHUNK_BYTES as u64);
    let per_key = match (argsort, gpu) {
        // The keys; the radix sort's scratch, as large again, is checked by the library when
        // it is allocated, and without it the keys are sorted in place.
        (false, None) => key,
        // The (ordered bits, index) pairs, padded to the larger of the two, and the radix
        // sort's scratch of a thread: at most an eighth of the pairs, or 4 MiB (below).
        (true, None) => key + 2 * key.max(index) + (2 * key.max(index)).div_ceil(8),
        (false, Some(_)) => key,
        (true, Some(_)) => key + index,
    };
    let mut need = n.saturating_mul(per_key);
    if argsort && gpu.is_none() {
        need = need.saturating_add(threads() as u64 * (4 << 20));
    }
    if let Some(gpu) = gpu {
        let free = gpu.memory_info().map(|(free, _)| free).unwrap_or(0);
        // Whether the GPU sorts it whole is for it to decide: a sort that may go in chunks
        // (its working set beyond free device memory) is counted with the host copy.
        if n.saturating_mul(3 * (key + index)) > free {
            need = need.saturating_add(n.saturating_mul(key + if argsort { index } else { 0 }));
        }
    }
    crate::memory::check(
        need.saturating_add(buffers),
        format!(
            "sorting {} ({keys} bytes of keys{})",
            input.path().display(),
            if argsort { ", with --argsort" } else { "" }
        ),
    )?;
    Ok(())
}

/// Refuses to overwrite the input (unless `--in-place`) and to write two outputs to one file.
fn check_paths(args: &SortArgs) -> Result<()> {
    if same_file(&args.input, &args.output) && !args.in_place {
        bail!(
            "OUTPUT {} is the input file; pass --in-place to replace it with its sorted keys",
            args.output.display()
        );
    }
    if let Some(index) = &args.argsort {
        if same_file(&args.input, index) {
            bail!(
                "--argsort {} is the input file; the permutation needs a file of its own",
                index.display()
            );
        }
        if same_file(&args.output, index) {
            bail!(
                "--argsort {} is also OUTPUT; the permutation needs a file of its own",
                index.display()
            );
        }
    }
    Ok(())
}

/// How a GPU sort ran, for the report: `auto`'s choice says so, and a sort in chunks says that
/// it was merged on the CPU (only `auto`'s plan is known to the report; a named sort that
/// does not fit goes in chunks too).
fn describe(plan: HostPlan, auto: bool, stable: &str) -> String {
    let mut how = format!("{} sort{stable}", plan.algo.name());
    if auto {
        how += ", chosen by --algo auto";
    }
    if let Some(chunk) = plan.chunk {
        how += &format!(", in chunks of {chunk} keys merged on the CPU");
    }
    how
}

/// A sorting permutation, with indices as narrow as the length allows.
enum Perm {
    U32(Vec<u32>),
    U64(Vec<u64>),
}

/// What the sort of one file needs beside the files.
struct Job<'a> {
    order: Order,
    algo: SortAlgo,
    out_format: FileFormat,
    /// With the bar's hook set, for sorts in chunks.
    gpu: Option<&'a GpuSorter>,
    progress: &'a Progress,
}

impl Job<'_> {
    /// Reads, sorts and writes the keys (and the permutation, given `index_out`); returns where
    /// they were sorted.
    fn sort<K: LeKey>(
        &self,
        input: &mut KeyFile,
        keys_out: AtomicOutput,
        index_out: Option<AtomicOutput>,
    ) -> Result<String> {
        let progress = self.progress;
        progress.phase("reading", input.data_bytes());
        let mut keys: Vec<K> = input.read_keys(&mut |n| progress.inc(n))?;
        progress.spin("sorting");
        match index_out {
            None => {
                let sorted_on = self.sort_keys(&mut keys, input)?;
                progress.phase("writing", input.data_bytes());
                self.write(keys_out, &keys, progress)?;
                Ok(sorted_on)
            }
            Some(index_out) => {
                // u32 indices where they suffice: half the memory and traffic.
                let narrow = keys.len() as u64 <= 1 << 32;
                let (perm, sorted_on) = match self.gpu {
                    Some(gpu) => {
                        let (n, order) = (keys.len(), self.order);
                        let named = self.algo.stable_gpu()?;
                        let value_bytes = if narrow { 4 } else { 8 };
                        let plan = named.map_or_else(
                            || gpu.auto_host::<K>(Sorting::Pairs { value_bytes }, n),
                            |algo| Ok(HostPlan { algo, chunk: None }),
                        )?;
                        let perm = match (named, narrow) {
                            (None, true) => gpu.argsort_u32(&keys, order).map(Perm::U32),
                            (None, false) => gpu.argsort(&keys, order).map(Perm::U64),
                            (Some(a), true) => gpu.argsort_u32_with(a, &keys, order).map(Perm::U32),
                            (Some(a), false) => gpu.argsort_with(a, &keys, order).map(Perm::U64),
                        }
                        .with_context(|| {
                            format!("argsorting {} on the GPU", input.path().display())
                        })?;
                        let how = describe(plan, named.is_none(), ", stable");
                        (perm, format!("{} ({how})", gpu.device_name()))
                    }
                    None => (
                        if narrow {
                            Perm::U32(argsort_cpu_u32(&keys, self.order))
                        } else {
                            Perm::U64(argsort_cpu(&keys, self.order))
                        },
                        format!("the CPU (radix sort, stable, {} threads)", threads()),
                    ),
                };
                let index_bytes = keys.len() as u64 * size_of::<i64>() as u64;
                progress.phase("writing", input.data_bytes() + index_bytes);
                match perm {
                    Perm::U32(perm) => {
                        self.write_permuted(keys_out, index_out, keys, &perm, progress)?
                    }
                    Perm::U64(perm) => {
                        self.write_permuted(keys_out, index_out, keys, &perm, progress)?
                    }
                }
                Ok(sorted_on)
            }
        }
    }

    /// Sorts `keys` (read from `input`) on the GPU if there is one, else on the CPU; returns
    /// where.
    fn sort_keys<K: LeKey>(&self, keys: &mut [K], input: &KeyFile) -> Result<String> {
        let Some(gpu) = self.gpu else {
            CpuAlgo::Radix.sort(keys, self.order);
            return Ok(format!("the CPU (radix sort, {} threads)", threads()));
        };
        let on_gpu = || format!("sorting {} on the GPU", input.path().display());
        let plan = match self.algo.gpu() {
            Some(algo) => {
                gpu.sort_with(algo, keys, self.order).with_context(on_gpu)?;
                HostPlan { algo, chunk: None }
            }
            None => {
                let plan = gpu.auto_host::<K>(Sorting::Unstable, keys.len())?;
                gpu.sort_unstable(keys, self.order).with_context(on_gpu)?;
                plan
            }
        };
        let how = describe(plan, self.algo == SortAlgo::Auto, "");
        Ok(format!("{} ({how})", gpu.device_name()))
    }

    /// Writes the sorted keys to `out` and renames it into place.
    fn write<K: LeKey>(
        &self,
        mut out: AtomicOutput,
        keys: &[K],
        progress: &Progress,
    ) -> Result<()> {
        out.begin(self.out_format, K::DTYPE, keys.len() as u64)?;
        out.write_keys(keys, &mut |n| progress.inc(n))?;
        out.commit()?;
        Ok(())
    }

    /// Writes `keys` gathered through `perm` to `keys_out` and `perm` to `index_out`, as int64
    /// `.npy`, and renames both into place.
    fn write_permuted<K: LeKey, I: Copy + Into<u64> + Send + Sync>(
        &self,
        mut keys_out: AtomicOutput,
        mut index_out: AtomicOutput,
        keys: Vec<K>,
        perm: &[I],
        progress: &Progress,
    ) -> Result<()> {
        let len = perm.len() as u64;
        // Gathered a chunk at a time, so that the output agrees with the permutation and no
        // second full copy of the keys is made.
        let chunk_len = CHUNK_BYTES / size_of::<u64>();
        keys_out.begin(self.out_format, K::DTYPE, len)?;
        for indices in perm.chunks(chunk_len) {
            let gathered: Vec<K> = indices
                .par_iter()
                .map(|&i| keys[i.into() as usize])
                .collect();
            keys_out.write_keys(&gathered, &mut |n| progress.inc(n))?;
        }
        drop(keys);
        index_out.begin(FileFormat::Npy, DType::I64, len)?;
        for indices in perm.chunks(chunk_len) {
            // Lossless: an index is below the length of a slice, at most isize::MAX.
            let indices: Vec<i64> = indices.iter().map(|&i| i.into() as i64).collect();
            index_out.write_keys(&indices, &mut |n| progress.inc(n))?;
        }
        // Both are complete before either is renamed; only a failing rename in between could
        // leave the permutation without its keys.
        index_out.commit()?;
        keys_out.commit()?;
        Ok(())
    }
}
