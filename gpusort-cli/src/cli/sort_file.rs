//! `gpusort sort INPUT OUTPUT`: sort the keys of a `.npy` or raw file into another file; an
//! array of two or more dimensions (or a raw file with `--row-len`) row by row, along its last
//! axis.
//!
//! The file work (checking, chunked reading, atomic writing) is [`crate::files`]'s; this module
//! picks the formats, the backend and the order of the steps.

use super::main_job::{Backend, open_gpu};
use super::outputs::{self, Dest, Out};
use super::progress::Progress;
use super::{SortAlgo, count};
use crate::argsort::{argsort_cpu, argsort_cpu_u32};
use crate::cleanup::test_point;
use crate::cpu::{CpuAlgo, threads};
use crate::files::{CHUNK_BYTES, FileFormat, KeyFile, LeKey, key_bytes, same_file};
use crate::gpu::{GpuAlgo, GpuSorter, HostPlan, Options, Segments, Sorting};
use crate::keys::{DType, Order, SortKey};
use crate::with_key_type;
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

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
    /// The file to sort: a .npy array of u32, i32, f32, u64, i64 or f64 (little-endian, C
    /// order), or raw little-endian keys (any other name; needs --dtype); `-` reads standard
    /// input (a .npy unless --format raw). A 1-D array is sorted whole; an array of two or more
    /// dimensions is sorted along its last axis, each row on its own, as NumPy's
    /// np.sort(a, axis=-1).
    pub input: PathBuf,
    /// Where to write the sorted keys, with INPUT's key type and shape (with --row-len: rows of
    /// its length): a .npy if the name ends in .npy, else raw (a name like .npz that looks like
    /// NumPy's is refused). A regular file or a new name (a symbolic link: the file it points
    /// to); written beside it unnamed and put in place only when complete, together with IDX.
    /// `-` (or /dev/stdout) writes to standard output, a .npy unless --format raw; the report
    /// then goes to stderr.
    pub output: PathBuf,
    /// Key type: required for raw files; for a .npy, if given, it must be the file's.
    #[arg(long, value_enum)]
    pub dtype: Option<DType>,
    /// Format of INPUT, OUTPUT and IDX [default: npy for names ending in .npy and for standard
    /// input and output, raw for other names].
    #[arg(long, value_enum)]
    pub format: Option<FileFormat>,
    /// Sort order (floats: NaN last ascending, -0.0 before +0.0, like total_cmp).
    #[arg(long, value_enum, default_value_t = Order::Ascending)]
    pub order: Order,
    /// Sort algorithm on the GPU for a 1-D INPUT (`auto`: the fastest for the size and key
    /// width, measured; the report names it). Rows (an array of two or more dimensions, or
    /// --row-len) are always sorted by the segmented sort, and an --algo other than auto is
    /// refused with them.
    #[arg(long, value_enum, default_value_t = SortAlgo::Auto)]
    pub algo: SortAlgo,
    /// Sort rows of N keys each, independently: a raw INPUT or a 1-D .npy is read as an array
    /// of shape (keys / N, N), which N must divide, and the outputs have that shape. Of a .npy
    /// of two or more dimensions, N must be the last axis (sorted without it too).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub row_len: Option<u64>,
    /// Where to sort; without a GPU, `auto` sorts on the CPU (a radix sort on all cores).
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Also write the sorting permutation to IDX (int64; a .npy if the name ends in .npy, else
    /// raw, as OUTPUT; `-` is standard output): OUTPUT is INPUT taken at these indices, and
    /// both appear together. Stable: equal keys keep their input order. Computed on the GPU if there is one
    /// (`--algo auto`: the faster of the merge and radix sorts; or the one named; for rows the
    /// segmented sort), else on the CPU; `--algo bitonic` is refused with it (not stable). For
    /// rows, each row's permutation, as positions within the row, with INPUT's shape (NumPy's
    /// np.argsort(a, axis=-1, kind='stable')).
    #[arg(long, value_name = "IDX")]
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
/// use gpusort_cli::files::{FileFormat, KeyFile};
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
    // Every argument is checked before anything is read or created.
    let keys_dest = outputs::destination(&args.output, "OUTPUT")?;
    let index_dest = args
        .argsort
        .as_deref()
        .map(|p| outputs::destination(p, "--argsort"))
        .transpose()?;
    let stdin = args.input == Path::new("-");
    let in_format = outputs::format_of(&args.input, stdin, args.format, "INPUT")?;
    let out_format =
        outputs::format_of(&args.output, keys_dest.is_stream(), args.format, "OUTPUT")?;
    let index_format = match (&args.argsort, &index_dest) {
        (Some(p), Some(d)) => Some(outputs::format_of(
            p,
            d.is_stream(),
            args.format,
            "--argsort",
        )?),
        _ => None,
    };
    check_flags(args, stdin, &keys_dest, index_dest.as_ref())?;
    // Every output is checked (by creating the file its keys go to) before any keys are read,
    // so that a bad path fails at once, not after minutes of reading and sorting.
    let keys_out = Out::open(&keys_dest)?;
    let index_out = index_dest.as_ref().map(Out::open).transpose()?;
    let mut input = KeyFile::open_array(&args.input, in_format, args.dtype)?;
    let shape = sorted_shape(&input, args.row_len)?;
    let row_len = (shape.len() > 1).then(|| shape[shape.len() - 1]);
    if row_len.is_some() && args.algo != SortAlgo::Auto {
        bail!(
            "--algo {} applies to 1-D inputs; the rows of {} (shape {}) are always sorted by the \
             segmented sort: leave --algo at auto",
            algo_name(args.algo),
            input.path().display(),
            py_shape(&shape)
        );
    }
    let mut gpu = open_gpu(args.backend)?;
    check_memory(&input, row_len, args.argsort.is_some(), gpu.as_ref())?;
    let progress = Progress::new();
    if let Some(gpu) = &mut gpu {
        // Keys too many for the device are sorted in chunks and merged: shown on the bar.
        gpu.set_progress(Some(progress.sort_hook(key_bytes(input.dtype()) as u64)));
    }

    let start = Instant::now();
    let job = Job {
        order: args.order,
        algo: args.algo,
        out_format,
        index_format: index_format.unwrap_or(FileFormat::Npy),
        gpu: gpu.as_ref(),
        progress: &progress,
    };
    let (len, dtype) = (input.len(), input.dtype());
    let sorted_on =
        with_key_type!(dtype, K => job.sort::<K>(&mut input, &shape, keys_out, index_out))?;
    drop(progress);
    let what = match row_len {
        Some(row_len) => format!(
            "{} of {} (shape {})",
            count(
                shape[..shape.len() - 1]
                    .iter()
                    .fold(1, |rows: u64, &d| rows.saturating_mul(d)),
                "row",
                "rows"
            ),
            count(row_len, &format!("{dtype} key"), &format!("{dtype} keys")),
            py_shape(&shape)
        ),
        None => count(len, &format!("{dtype} key"), &format!("{dtype} keys")),
    };
    let argsort_note = index_dest
        .as_ref()
        .map_or(String::new(), |d| format!(" (permutation: {})", d.name()));
    let report = format!(
        "gpusort: sorted {what} {} from {} into {}{argsort_note} on {sorted_on} in {:.2} s",
        match args.order {
            Order::Ascending => "ascending",
            Order::Descending => "descending",
        },
        input.path().display(),
        keys_dest.name(),
        start.elapsed().as_secs_f64(),
    );
    let written = format!("the sorted keys were written to {}", keys_dest.name());
    let streamed = keys_dest.is_stream() || index_dest.as_ref().is_some_and(Dest::is_stream);
    super::print_report(&report, &written, streamed)
}

/// `--algo`'s value as given on the command line.
fn algo_name(algo: SortAlgo) -> String {
    algo.to_possible_value()
        .map_or(String::new(), |v| v.get_name().to_owned())
}

/// Refuses settings that contradict each other, before anything is read or created: `--algo`
/// (a GPU sort) with `--backend cpu`, `--argsort` with the unstable bitonic sort, `--in-place`
/// with a stream, both outputs on standard output, and an output over the input (unless
/// `--in-place`) or over the other output.
fn check_flags(args: &SortArgs, stdin: bool, keys: &Dest, index: Option<&Dest>) -> Result<()> {
    if args.backend == Backend::Cpu && args.algo != SortAlgo::Auto {
        bail!(
            "--algo {} names a GPU sort, and --backend cpu sorts on the CPU (its radix sort): \
             drop one",
            algo_name(args.algo)
        );
    }
    if args.argsort.is_some() {
        args.algo.stable_gpu()?;
    }
    if args.in_place && (stdin || keys.is_stream()) {
        bail!(
            "--in-place replaces INPUT with its sorted keys, a file: it does not apply to \
             standard input or output"
        );
    }
    if keys.is_stream() && index.is_some_and(Dest::is_stream) {
        bail!(
            "OUTPUT and --argsort are both standard output: one stream cannot hold two arrays; \
             name a file for one of them"
        );
    }
    check_paths(args, stdin, keys, index)
}

/// Refuses a sort whose host memory the process cannot have, before any key is read: the keys;
/// for an argsort the (key, index) pairs and the sort's scratch on the CPU or the indices from
/// the GPU; keys sorted on the GPU in chunks also need a host copy to merge into; and the read
/// and write buffers. Rows of `row_len` keys are sorted in place, and an argsort of them needs
/// the positions and a row's scratch per thread (on the GPU they go in batches that fit).
fn check_memory(
    input: &KeyFile,
    row_len: Option<u64>,
    argsort: bool,
    gpu: Option<&GpuSorter>,
) -> Result<()> {
    let n = input.len();
    let key = key_bytes(input.dtype()) as u64;
    let index = if row_len.unwrap_or(n) <= 1 << 32 {
        4
    } else {
        8
    };
    let keys = input.data_bytes();
    let buffers = 2 * keys.min(CHUNK_BYTES as u64);
    if let Some(row_len) = row_len {
        // An empty array may declare rows of any length.
        let row_len = row_len.min(n);
        let mut need = keys.saturating_add(buffers);
        if argsort {
            // The positions; on the CPU a row's stable sort per thread (its merge buffer, half
            // the row) or, for rows taken one at a time, the 1-D argsort's pairs of a row.
            need = need.saturating_add(n.saturating_mul(index));
            if gpu.is_none() {
                let scratch = (threads() as u64)
                    .saturating_mul(row_len.saturating_mul(index))
                    .max(row_len.saturating_mul(3 * key.max(index)));
                need = need.saturating_add(scratch);
            }
        }
        crate::memory::check(
            need,
            format!(
                "sorting the rows of {} ({keys} bytes of keys{})",
                input.path().display(),
                if argsort { ", with --argsort" } else { "" }
            ),
        )?;
        return Ok(());
    }
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
        let free = crate::memory::device_memory(gpu).map_or(0, |(free, _)| free);
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

/// Refuses to overwrite the input (unless `--in-place`) and to write two outputs to one file;
/// streams (standard input and output) are no file.
fn check_paths(args: &SortArgs, stdin: bool, keys: &Dest, index: Option<&Dest>) -> Result<()> {
    let input = (!stdin).then_some(args.input.as_path());
    let file = |d: Option<&Dest>| match d {
        Some(Dest::File(p)) => Some(p.clone()),
        _ => None,
    };
    let (output, index) = (file(Some(keys)), file(index));
    let same = |a: Option<&Path>, b: Option<&PathBuf>| matches!((a, b), (Some(a), Some(b)) if same_file(a, b));
    if same(input, output.as_ref()) && !args.in_place {
        bail!(
            "OUTPUT {} is the input file; pass --in-place to replace it with its sorted keys",
            args.output.display()
        );
    }
    if let Some(index) = &index {
        if same(input, Some(index)) {
            bail!(
                "--argsort {} is the input file; the permutation needs a file of its own",
                index.display()
            );
        }
        if same(output.as_deref(), Some(index)) {
            bail!(
                "--argsort {} is also OUTPUT; the permutation needs a file of its own",
                index.display()
            );
        }
    }
    Ok(())
}

/// The shape the keys of `input` are sorted and written in: the file's, or with `--row-len`
/// (`row_len`) rows of that length. An array of two or more dimensions is sorted along its
/// last axis.
fn sorted_shape(input: &KeyFile, row_len: Option<u64>) -> Result<Vec<u64>> {
    let shape = input.shape().to_vec();
    let Some(n) = row_len else {
        return Ok(shape);
    };
    match input.row_len() {
        Some(last) if last == n => Ok(shape),
        Some(last) => Err(row_len_mismatch(n, input, last)),
        None if input.len().is_multiple_of(n) => Ok(vec![input.len() / n, n]),
        None => Err(row_len_indivisible(n, input)),
    }
}

/// `--row-len n` against the rows of `last` keys of the array of `input` (sort and topk alike).
pub(crate) fn row_len_mismatch(n: u64, input: &KeyFile, last: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "--row-len {n} does not match {}: its array of shape {} has rows of {} (its last axis, \
         along which it is taken row by row without --row-len)",
        input.path().display(),
        py_shape(input.shape()),
        count(last, "key", "keys")
    )
}

/// `--row-len n` that does not divide the keys of `input` (sort and topk alike).
pub(crate) fn row_len_indivisible(n: u64, input: &KeyFile) -> anyhow::Error {
    anyhow::anyhow!(
        "--row-len {n} does not divide the {} of {}: rows of {n} keys need a multiple of {n}",
        count(input.len(), "key", "keys"),
        input.path().display()
    )
}

/// A shape as NumPy writes it: `(5,)`, `(2, 3)`.
fn py_shape(shape: &[u64]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// How a GPU sort ran, for the report: `auto`'s choice says so, and a sort in chunks says that
/// it was merged on the CPU (only `auto`'s plan is known to the report; a named sort that
/// does not fit goes in chunks too).
fn describe(plan: HostPlan, auto: bool, stable: &str) -> String {
    let mut how = format!("{} sort{stable}", plan.algo);
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
    index_format: FileFormat,
    /// With the bar's hook set, for sorts in chunks.
    gpu: Option<&'a GpuSorter>,
    progress: &'a Progress,
}

impl Job<'_> {
    /// Reads, sorts and writes the keys (and the permutation, given `index_out`) in `shape`: an
    /// array of two or more dimensions row by row, along its last axis. Returns where they were
    /// sorted.
    fn sort<K: LeKey>(
        &self,
        input: &mut KeyFile,
        shape: &[u64],
        keys_out: Out,
        index_out: Option<Out>,
    ) -> Result<String> {
        let progress = self.progress;
        test_point("reading");
        progress.phase("reading", input.data_bytes());
        let mut keys: Vec<K> = input.read_keys(&mut |n| progress.inc(n))?;
        progress.spin("sorting");
        // A row that holds keys is no longer than the keys in memory; the rows of an empty array
        // may claim any length, which then bounds nothing.
        let row_len = (shape.len() > 1)
            .then(|| usize::try_from(shape[shape.len() - 1]).unwrap_or(usize::MAX));
        match index_out {
            None => {
                let sorted_on = match row_len {
                    Some(row_len) => self.sort_rows(&mut keys, row_len, input)?,
                    None => self.sort_keys(&mut keys, input)?,
                };
                test_point("sorted");
                progress.phase("writing", input.data_bytes());
                self.write(keys_out, shape, &keys, progress)?;
                Ok(sorted_on)
            }
            Some(index_out) => {
                let (perm, sorted_on) = match row_len {
                    Some(row_len) => self.argsort_rows(&keys, row_len, input)?,
                    None => self.argsort(&keys, input)?,
                };
                test_point("sorted");
                let index_bytes = keys.len() as u64 * size_of::<i64>() as u64;
                progress.phase("writing", input.data_bytes() + index_bytes);
                // A 1-D permutation is one row as long as the keys.
                let row_len = row_len.unwrap_or(keys.len());
                let outs = (keys_out, index_out);
                match perm {
                    Perm::U32(perm) => {
                        self.write_permuted(outs, shape, keys, row_len, &perm, progress)?
                    }
                    Perm::U64(perm) => {
                        self.write_permuted(outs, shape, keys, row_len, &perm, progress)?
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
                let options = Options {
                    algo: Some(algo),
                    order: self.order,
                };
                gpu.sort_unstable(keys, options).with_context(on_gpu)?;
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

    /// The stable sorting permutation of `keys` (read from `input`), on the GPU if there is
    /// one, else on the CPU; and where it was computed.
    fn argsort<K: LeKey>(&self, keys: &[K], input: &KeyFile) -> Result<(Perm, String)> {
        // u32 indices where they suffice: half the memory and traffic.
        let narrow = keys.len() as u64 <= 1 << 32;
        let Some(gpu) = self.gpu else {
            let perm = if narrow {
                Perm::U32(argsort_cpu_u32(keys, self.order))
            } else {
                Perm::U64(argsort_cpu(keys, self.order))
            };
            return Ok((
                perm,
                format!("the CPU (radix sort, stable, {} threads)", threads()),
            ));
        };
        let (n, order) = (keys.len(), self.order);
        let named = self.algo.stable_gpu()?;
        let value_bytes = if narrow { 4 } else { 8 };
        let plan = named.map_or_else(
            || gpu.auto_host::<K>(Sorting::Pairs { value_bytes }, n),
            |algo| Ok(HostPlan { algo, chunk: None }),
        )?;
        let options = Options { algo: named, order };
        let perm = if narrow {
            gpu.argsort(keys, options).map(Perm::U32)
        } else {
            gpu.argsort(keys, options).map(Perm::U64)
        }
        .with_context(|| format!("argsorting {} on the GPU", input.path().display()))?;
        let how = describe(plan, named.is_none(), ", stable");
        Ok((perm, format!("{} ({how})", gpu.device_name())))
    }

    /// Sorts each row of `row_len` keys of `keys` (read from `input`) on its own: on the GPU by
    /// the segmented sort, in batches of rows that fit its memory; on the CPU by std's sort of
    /// each row on rayon's threads, or, with fewer rows than threads, by the parallel radix sort
    /// of one row after another. Returns where.
    fn sort_rows<K: LeKey>(
        &self,
        keys: &mut [K],
        row_len: usize,
        input: &KeyFile,
    ) -> Result<String> {
        let order = self.order;
        // Rows of no key hold no keys: any chunk length does for them.
        let chunk = row_len.max(1);
        let Some(gpu) = self.gpu else {
            if keys.len() / chunk < threads() {
                keys.chunks_mut(chunk)
                    .for_each(|row| CpuAlgo::Radix.sort(row, order));
                return Ok(format!(
                    "the CPU (radix sort of each row, {} threads)",
                    threads()
                ));
            }
            keys.par_chunks_mut(chunk)
                .for_each(|row| row.sort_unstable_by_key(|k| k.ordered_bits(order)));
            return Ok(format!(
                "the CPU (std's sort of each row, {} threads)",
                threads()
            ));
        };
        let batch = rows_per_batch(gpu, chunk, size_of::<K>())?;
        for rows in keys.chunks_mut(batch.saturating_mul(chunk)) {
            gpu.sort_segments(rows, Segments::Rows(row_len), order)
                .with_context(|| {
                    format!("sorting the rows of {} on the GPU", input.path().display())
                })?;
        }
        Ok(format!("{} (segmented sort)", gpu.device_name()))
    }

    /// The stable sorting permutation of each row of `row_len` keys of `keys` (read from
    /// `input`), as positions within the row, computed as [`Job::sort_rows`] sorts; and where.
    fn argsort_rows<K: LeKey>(
        &self,
        keys: &[K],
        row_len: usize,
        input: &KeyFile,
    ) -> Result<(Perm, String)> {
        let order = self.order;
        let narrow = row_len as u64 <= 1 << 32;
        let chunk = row_len.max(1);
        let Some(gpu) = self.gpu else {
            let perm = if narrow {
                Perm::U32(argsort_rows_cpu(keys, chunk, order))
            } else {
                Perm::U64(argsort_rows_cpu(keys, chunk, order))
            };
            let how = if keys.len() / chunk < threads() {
                "radix sort of each row"
            } else {
                "std's sort of each row"
            };
            return Ok((
                perm,
                format!("the CPU ({how}, stable, {} threads)", threads()),
            ));
        };
        let context = || {
            format!(
                "argsorting the rows of {} on the GPU",
                input.path().display()
            )
        };
        if !narrow {
            // The segmented sort's positions are u32: a row this long is a 1-D argsort.
            let merge = Options {
                algo: Some(GpuAlgo::Merge),
                order,
            };
            let mut perm = Vec::with_capacity(keys.len());
            for row in keys.chunks(chunk) {
                perm.extend(gpu.argsort::<K, u64>(row, merge).with_context(context)?);
            }
            let on = format!(
                "{} ({} sort of each row, stable)",
                gpu.device_name(),
                GpuAlgo::Merge
            );
            return Ok((Perm::U64(perm), on));
        }
        let batch = rows_per_batch(gpu, chunk, size_of::<K>() + size_of::<u32>())?;
        let mut perm: Vec<u32> = Vec::new();
        for rows in keys.chunks(batch.saturating_mul(chunk)) {
            let positions = gpu
                .argsort_segments(rows, Segments::Rows(row_len), order)
                .with_context(context)?;
            if perm.is_empty() {
                perm = positions;
            } else {
                perm.extend_from_slice(&positions);
            }
        }
        let on = format!("{} (segmented sort, stable)", gpu.device_name());
        Ok((Perm::U32(perm), on))
    }

    /// Writes the sorted keys to `out`, as an array of shape `shape`, and puts it in place.
    fn write<K: LeKey>(
        &self,
        mut out: Out,
        shape: &[u64],
        keys: &[K],
        progress: &Progress,
    ) -> Result<()> {
        out.begin_array(self.out_format, K::DTYPE, shape)?;
        out.write_keys(keys, &mut |n| progress.inc(n))?;
        test_point("written");
        outputs::finish(vec![out])
    }

    /// Writes `keys` gathered through `perm`, the permutations of its rows of `row_len` keys
    /// (positions within each row), to the first output and `perm` to the second, as int64,
    /// both of shape `shape`, and puts both in place together.
    fn write_permuted<K: LeKey, I: Copy + Into<u64> + Send + Sync>(
        &self,
        (mut keys_out, mut index_out): (Out, Out),
        shape: &[u64],
        keys: Vec<K>,
        row_len: usize,
        perm: &[I],
        progress: &Progress,
    ) -> Result<()> {
        // Gathered a chunk at a time, so that the output agrees with the permutation and no
        // second full copy of the keys is made.
        let chunk_len = CHUNK_BYTES / size_of::<u64>();
        keys_out.begin_array(self.out_format, K::DTYPE, shape)?;
        for (c, indices) in perm.chunks(chunk_len).enumerate() {
            let first = c * chunk_len;
            let gathered: Vec<K> = indices
                .par_iter()
                .enumerate()
                .map(|(j, &i)| {
                    // The start of the row of key `first + j` (row_len > 0: it holds a key).
                    let row = (first + j) / row_len * row_len;
                    keys[row + i.into() as usize]
                })
                .collect();
            keys_out.write_keys(&gathered, &mut |n| progress.inc(n))?;
        }
        drop(keys);
        index_out.begin_array(self.index_format, DType::I64, shape)?;
        for indices in perm.chunks(chunk_len) {
            // Lossless: an index is below the length of a slice, at most isize::MAX.
            let indices: Vec<i64> = indices.iter().map(|&i| i.into() as i64).collect();
            index_out.write_keys(&indices, &mut |n| progress.inc(n))?;
        }
        test_point("written");
        // Both complete before either is put in place; then both together.
        outputs::finish(vec![keys_out, index_out])
    }
}

/// Rows of `row_len` keys of `key_bytes` bytes each (with their positions, for an argsort)
/// that the GPU sorts at a time: as many as take half its free memory twice over (the keys'
/// device copy, and the radix sort's scratch for rows longer than a block sorts), so that a
/// file larger than the device is sorted in batches of whole rows.
fn rows_per_batch(gpu: &GpuSorter, row_len: usize, key_bytes: usize) -> Result<usize> {
    let (free, _) = crate::memory::device_memory(gpu).context("reading the GPU's free memory")?;
    let per_row = (row_len as u64).saturating_mul(2 * key_bytes as u64).max(1);
    Ok(usize::try_from(free / 2 / per_row)
        .unwrap_or(usize::MAX)
        .max(1))
}

/// Positions within a row: `u32` for rows of up to 2^32 keys, else `u64`.
trait RowIndex: Copy + Send + Sync + Into<u64> {
    /// `i`, below the row length.
    fn from_position(i: usize) -> Self;
    /// The 1-D argsort of one row, on all threads.
    fn argsort<K: SortKey>(row: &[K], order: Order) -> Vec<Self>;
}

impl RowIndex for u32 {
    fn from_position(i: usize) -> u32 {
        i as u32
    }
    fn argsort<K: SortKey>(row: &[K], order: Order) -> Vec<u32> {
        argsort_cpu_u32(row, order)
    }
}

impl RowIndex for u64 {
    fn from_position(i: usize) -> u64 {
        i as u64
    }
    fn argsort<K: SortKey>(row: &[K], order: Order) -> Vec<u64> {
        argsort_cpu(row, order)
    }
}

/// The stable permutation of each row of `row_len` (> 0) keys on the CPU, as positions within
/// the row: std's stable sort of each row's positions by key on rayon's threads, or, with
/// fewer rows than threads, the parallel 1-D argsort of one row after another.
fn argsort_rows_cpu<K: SortKey, I: RowIndex>(keys: &[K], row_len: usize, order: Order) -> Vec<I> {
    if keys.len() / row_len < threads() {
        let mut perm = Vec::with_capacity(keys.len());
        for row in keys.chunks(row_len) {
            perm.extend(I::argsort(row, order));
        }
        return perm;
    }
    let mut perm = vec![I::from_position(0); keys.len()];
    perm.par_chunks_mut(row_len)
        .zip(keys.par_chunks(row_len))
        .for_each(|(positions, row)| {
            for (j, p) in positions.iter_mut().enumerate() {
                *p = I::from_position(j);
            }
            positions.sort_by_key(|&p| row[p.into() as usize].ordered_bits(order));
        });
    perm
}
