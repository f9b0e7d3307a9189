//! `gpusort topk K INPUT OUTPUT`: the k smallest or largest keys of a `.npy` or raw file (of
//! the whole array, or of each row), and optionally their indices, into files.
//!
//! The file work (checking, chunked reading, atomic writing) is [`crate::files`]'s, as for
//! `gpusort sort`; the selection is [`GpuSorter::top_k`] on the GPU, or [`top_k_cpu`] without
//! one.

use super::count;
use super::main_job::{Backend, open_gpu};
use super::outputs::{self, Dest, Out};
use super::progress::Progress;
use super::sort_file::{row_len_indivisible, row_len_mismatch};
use crate::cleanup::test_point;
use crate::cpu::threads;
use crate::files::{CHUNK_BYTES, FileFormat, KeyFile, LeKey, same_file};
use crate::gpu::GpuSorter;
use crate::keys::{DType, Order};
use crate::with_key_type;
use anyhow::{Context as _, Result, bail};
use clap::Args;
use gpusort::topk::{TopK, top_k_cpu};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Settings of `gpusort topk K INPUT OUTPUT` (the fields are its arguments).
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, Command};
///
/// let cli = Cli::parse_from(["gpusort", "topk", "10", "scores.npy", "best.npy", "--largest"]);
/// let Some(Command::TopK(args)) = cli.command else { unreachable!() };
/// assert_eq!((args.k, args.order()?), (10, gpusort::Order::Descending));
/// let cli = Cli::parse_from(["gpusort", "topk", "1", "a", "b", "--largest", "--order", "desc"]);
/// let Some(Command::TopK(args)) = cli.command else { unreachable!() };
/// assert_eq!(args.order()?, gpusort::Order::Descending); // consistent: accepted
/// let cli = Cli::parse_from(["gpusort", "topk", "1", "a", "b", "--largest", "--order", "asc"]);
/// let Some(Command::TopK(args)) = cli.command else { unreachable!() };
/// assert!(args.order().is_err()); // contradictory: refused
/// # Ok::<(), anyhow::Error>(())
/// ```
#[derive(Debug, Args)]
pub struct TopKArgs {
    /// How many keys to select: per row for a matrix, else of the whole array (1 to the row
    /// length; above 1024 the keys are sorted instead).
    pub k: usize,
    /// The keys: a 1-D .npy array (u32, i32, f32, u64, i64 or f64, little-endian), a 2-D one
    /// (C order; a top-k per row, along the last axis), or raw little-endian keys (any other
    /// name; needs --dtype); `-` reads standard input (a .npy unless --format raw).
    pub input: PathBuf,
    /// Where to write the selected keys, best first, with INPUT's key type: shape (K,), or
    /// (ROWS, K) per row; a .npy if the name ends in .npy, else raw (a name like .npz that looks
    /// like NumPy's is refused); `-` (or /dev/stdout) writes to standard output, a .npy unless
    /// --format raw. Put in place only when complete, together with IDX.
    pub output: PathBuf,
    /// Also write each selected key's index (in the array, or in its row) here, as u64 in
    /// OUTPUT's shape: a .npy if the name ends in .npy, else raw, as OUTPUT.
    #[arg(long, value_name = "IDX")]
    pub indices: Option<PathBuf>,
    /// Which keys: asc selects the k smallest (smallest first), desc the k largest (largest
    /// first); floats like total_cmp (NaN is the largest); ties go to the lower index
    /// [default: asc].
    #[arg(long, value_enum)]
    pub order: Option<Order>,
    /// The k largest: the same as --order desc (which may be given too).
    #[arg(long)]
    pub largest: bool,
    /// A top-k per row of N keys of a 1-D or raw INPUT (its length a multiple of N); for a
    /// 2-D .npy, if given, it must be the row length.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub row_len: Option<u64>,
    /// Key type: required for raw files; for a .npy, if given, it must be the file's.
    #[arg(long, value_enum)]
    pub dtype: Option<DType>,
    /// Format of INPUT, OUTPUT and IDX [default: npy for names ending in .npy and for standard
    /// input and output, raw for other names].
    #[arg(long, value_enum)]
    pub format: Option<FileFormat>,
    /// Where to select; without a GPU, `auto` selects on the CPU (all cores).
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
}

impl TopKArgs {
    /// The order asked for: `--largest` is descending, `--order` as given, ascending without
    /// either.
    ///
    /// # Errors
    /// `--largest` with `--order asc`, which contradict each other.
    pub fn order(&self) -> Result<Order> {
        match (self.largest, self.order) {
            (true, Some(Order::Ascending)) => bail!(
                "--largest selects the largest keys and --order asc the smallest: give one of them"
            ),
            (true, _) => Ok(Order::Descending),
            (false, order) => Ok(order.unwrap_or(Order::Ascending)),
        }
    }
}

/// Runs `gpusort topk`.
///
/// # Errors
/// A bad input file, output path or setting (k out of range, a row length that does not
/// divide the keys), an I/O error, or a GPU error, each naming the file or the problem. After
/// an error no output file has been created or changed.
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use gpusort_cli::cli::{Cli, Command, topk_file};
/// use gpusort_cli::files::{FileFormat, KeyFile};
///
/// let dir = tempfile::tempdir()?;
/// let (input, output, idx) =
///     (dir.path().join("keys.bin"), dir.path().join("top.npy"), dir.path().join("idx.npy"));
/// std::fs::write(&input, [3i32, -1, 7, 2].map(i32::to_le_bytes).concat())?;
/// let cli = Cli::parse_from([
///     "gpusort", "topk", "2", input.to_str().unwrap(), output.to_str().unwrap(),
///     "--dtype", "i32", "--largest", "--indices", idx.to_str().unwrap(), "--backend", "cpu",
/// ]);
/// let Some(Command::TopK(args)) = cli.command else { unreachable!() };
/// topk_file::run(&args)?;
/// let top: Vec<i32> = KeyFile::open(&output, FileFormat::Npy, None)?.read_keys(&mut |_| {})?;
/// let indices: Vec<u64> = KeyFile::open(&idx, FileFormat::Npy, None)?.read_keys(&mut |_| {})?;
/// assert_eq!((top, indices), (vec![7, 3], vec![2, 0]));
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn run(args: &TopKArgs) -> Result<ExitCode> {
    // Every argument is checked before anything is read or created.
    let order = args.order()?;
    let keys_dest = outputs::destination(&args.output, "OUTPUT")?;
    let index_dest = args
        .indices
        .as_deref()
        .map(|p| outputs::destination(p, "--indices"))
        .transpose()?;
    let stdin = args.input == Path::new("-");
    let in_format = outputs::format_of(&args.input, stdin, args.format, "INPUT")?;
    let out_format =
        outputs::format_of(&args.output, keys_dest.is_stream(), args.format, "OUTPUT")?;
    let index_format = match (&args.indices, &index_dest) {
        (Some(p), Some(d)) => Some(outputs::format_of(
            p,
            d.is_stream(),
            args.format,
            "--indices",
        )?),
        _ => None,
    };
    if keys_dest.is_stream() && index_dest.as_ref().is_some_and(Dest::is_stream) {
        bail!(
            "OUTPUT and --indices are both standard output: one stream cannot hold two arrays; \
             name a file for one of them"
        );
    }
    check_paths(args, stdin, &keys_dest, index_dest.as_ref())?;
    let keys_out = Out::open(&keys_dest)?;
    let index_out = index_dest.as_ref().map(Out::open).transpose()?;
    let mut input = KeyFile::open_array(&args.input, in_format, args.dtype)?;
    let shown = input.path().display().to_string();
    if input.shape().len() > 2 {
        bail!(
            "{shown} holds a {}-D array of shape {:?}; top-k takes 1-D arrays, and 2-D ones row by \
             row",
            input.shape().len(),
            input.shape()
        );
    }
    let len = input.len();
    let row_len = match (input.row_len(), args.row_len) {
        (Some(file), Some(asked)) if file != asked => {
            return Err(row_len_mismatch(asked, &input, file));
        }
        (Some(file), _) => Some(file),
        (None, Some(asked)) if !len.is_multiple_of(asked) => {
            return Err(row_len_indivisible(asked, &input));
        }
        (None, asked) => asked,
    };
    let per = row_len.unwrap_or(len);
    let k = args.k as u64;
    if k == 0 && per > 0 {
        bail!("K = 0: a top-k selects at least 1 key (K is 1 to {per} for {shown})");
    }
    if k > per || k == 0 {
        match row_len {
            _ if len == 0 => bail!("K = {k}: {shown} holds no keys to select from"),
            Some(n) => bail!(
                "K = {k} is more than the {} of each row of {shown}: K is 1 to {n} here",
                count(n, "key", "keys")
            ),
            None => bail!(
                "K = {k} is more than the {} of {shown}: K is 1 to {len} here",
                count(len, "key", "keys")
            ),
        }
    }
    let rows = row_len.map(|n| len.checked_div(n).unwrap_or(0) as usize);
    let gpu = open_gpu(args.backend)?;
    let keys_bytes = input.data_bytes();
    crate::memory::check(
        keys_bytes.saturating_add(2 * keys_bytes.min(CHUNK_BYTES as u64)),
        format!("selecting from {shown} ({keys_bytes} bytes of keys)"),
    )?;
    let progress = Progress::new();
    let start = Instant::now();
    let job = Job {
        k: args.k,
        order,
        row_len: per as usize,
        rows,
        out_format,
        index_format,
        gpu: gpu.as_ref(),
        progress: &progress,
    };
    let dtype = input.dtype();
    let selected_on = with_key_type!(dtype, K => job.run::<K>(&mut input, keys_out, index_out))?;
    drop(progress);
    let which = match (order, k) {
        (Order::Ascending, 1) => "smallest key".to_string(),
        (Order::Descending, 1) => "largest key".to_string(),
        (Order::Ascending, k) => format!("{k} smallest keys"),
        (Order::Descending, k) => format!("{k} largest keys"),
    };
    let of = match (rows, row_len) {
        (Some(rows), Some(n)) => format!(
            "of each of {} of {}",
            count(rows as u64, "row", "rows"),
            count(n, &format!("{dtype} key"), &format!("{dtype} keys"))
        ),
        _ => format!(
            "of {}",
            count(len, &format!("{dtype} key"), &format!("{dtype} keys"))
        ),
    };
    let report = format!(
        "gpusort: selected the {which} {of} from {shown} into {} on {selected_on} in {:.2} s",
        keys_dest.name(),
        start.elapsed().as_secs_f64(),
    );
    let written = format!("the keys were written to {}", keys_dest.name());
    let streamed = keys_dest.is_stream() || index_dest.as_ref().is_some_and(Dest::is_stream);
    super::print_report(&report, &written, streamed)
}

/// Refuses to write an output over the input or two outputs to one file; streams (standard
/// input and output) are no file.
fn check_paths(args: &TopKArgs, stdin: bool, keys: &Dest, index: Option<&Dest>) -> Result<()> {
    let input = (!stdin).then_some(args.input.as_path());
    let file = |d: Option<&Dest>| match d {
        Some(Dest::File(p)) => Some(p.clone()),
        _ => None,
    };
    let (output, index) = (file(Some(keys)), file(index));
    let same = |a: Option<&Path>, b: Option<&PathBuf>| matches!((a, b), (Some(a), Some(b)) if same_file(a, b));
    if same(input, output.as_ref()) {
        bail!(
            "OUTPUT {} is the input file; the selected keys need a file of their own",
            args.output.display()
        );
    }
    if let Some(index) = &index
        && (same(input, Some(index)) || same(output.as_deref(), Some(index)))
    {
        bail!(
            "--indices {} is INPUT or OUTPUT; the indices need a file of their own",
            index.display()
        );
    }
    Ok(())
}

/// What one selection needs beside the files.
struct Job<'a> {
    k: usize,
    order: Order,
    /// Keys per row (the whole array when not per row).
    row_len: usize,
    /// Rows, for a top-k per row: the outputs are then (rows, k) matrices.
    rows: Option<usize>,
    out_format: FileFormat,
    index_format: Option<FileFormat>,
    gpu: Option<&'a GpuSorter>,
    progress: &'a Progress,
}

impl Job<'_> {
    /// Reads the keys, selects, and writes the outputs; returns where it selected.
    fn run<K: LeKey>(
        &self,
        input: &mut KeyFile,
        keys_out: Out,
        index_out: Option<Out>,
    ) -> Result<String> {
        let progress = self.progress;
        test_point("reading");
        progress.phase("reading", input.data_bytes());
        let keys: Vec<K> = input.read_keys(&mut |n| progress.inc(n))?;
        progress.spin("selecting");
        let (top, selected_on): (TopK<K>, String) = match self.gpu {
            Some(gpu) => (
                gpu.top_k(&keys, self.row_len, self.k, self.order)
                    .with_context(|| {
                        format!("selecting from {} on the GPU", input.path().display())
                    })?,
                gpu.device_name().to_string(),
            ),
            None => (
                top_k_cpu(&keys, self.row_len, self.k, self.order)?,
                format!("the CPU ({} threads)", threads()),
            ),
        };
        drop(keys);
        test_point("sorted");
        let written = (top.keys.len() * (size_of::<K>() + 8)) as u64;
        progress.phase("writing", written);
        let mut keys_out = keys_out;
        self.begin(&mut keys_out, self.out_format, K::DTYPE)?;
        keys_out.write_keys(&top.keys, &mut |n| progress.inc(n))?;
        let mut outs = vec![keys_out];
        if let (Some(mut index_out), Some(format)) = (index_out, self.index_format) {
            self.begin(&mut index_out, format, DType::U64)?;
            index_out.write_keys(&top.indices, &mut |n| progress.inc(n))?;
            outs.push(index_out);
        }
        test_point("written");
        // Both complete before either is put in place; then both together.
        outputs::finish(outs)?;
        Ok(selected_on)
    }

    /// Starts an output of the result's shape: (k,) or (rows, k).
    fn begin(&self, out: &mut Out, format: FileFormat, dtype: DType) -> Result<()> {
        match self.rows {
            Some(rows) => out.begin_array(format, dtype, &[rows as u64, self.k as u64])?,
            None => out.begin_array(format, dtype, &[self.k as u64])?,
        }
        Ok(())
    }
}
