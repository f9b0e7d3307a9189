//! `gpusort topk K INPUT OUTPUT`: the k smallest or largest keys of a `.npy` or raw file (of
//! the whole array, or of each row), and optionally their indices, into files.
//!
//! The file work (checking, chunked reading, atomic writing) is [`crate::files`]'s, as for
//! `gpusort sort`; the selection is [`GpuSorter::top_k_rows`] on the GPU, or
//! [`top_k_rows_cpu`] without one.

use super::main_job::{Backend, open_gpu};
use super::progress::Progress;
use crate::cpu::threads;
use crate::files::{AtomicOutput, CHUNK_BYTES, FileFormat, KeyFile, LeKey, same_file};
use crate::gpu::GpuSorter;
use crate::keys::{DType, Order};
use crate::with_key_type;
use anyhow::{Context as _, Result, bail};
use clap::Args;
use gpusort::topk::{TopK, top_k_rows_cpu};
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
/// assert_eq!((args.k, args.order()), (10, gpusort::Order::Descending));
/// assert!(Cli::try_parse_from(["gpusort", "topk", "1", "a", "b", "--largest", "--order", "asc"]).is_err());
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
    /// (ROWS, K) per row; a .npy if the name ends in .npy, else raw.
    pub output: PathBuf,
    /// Also write each selected key's index (in the array, or in its row) here, as u64 in
    /// OUTPUT's shape: a .npy if the name ends in .npy, else raw.
    #[arg(long, value_name = "IDX")]
    pub indices: Option<PathBuf>,
    /// Which keys: asc selects the k smallest (smallest first), desc the k largest (largest
    /// first); floats like total_cmp (NaN is the largest); ties go to the lower index.
    #[arg(long, value_enum, default_value_t = Order::Ascending, conflicts_with = "largest")]
    pub order: Order,
    /// The k largest: the same as --order desc.
    #[arg(long)]
    pub largest: bool,
    /// A top-k per row of N keys of a 1-D or raw INPUT (its length a multiple of N); for a
    /// 2-D .npy, if given, it must be the row length.
    #[arg(long, value_name = "N")]
    pub row_len: Option<usize>,
    /// Key type: required for raw files; for a .npy, if given, it must be the file's.
    #[arg(long, value_enum)]
    pub dtype: Option<DType>,
    /// Format of INPUT, OUTPUT and IDX [default: npy for names ending in .npy, raw for others].
    #[arg(long, value_enum)]
    pub format: Option<FileFormat>,
    /// Where to select; without a GPU, `auto` selects on the CPU (all cores).
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
}

impl TopKArgs {
    /// The order asked for: `--largest` is descending.
    pub fn order(&self) -> Order {
        if self.largest {
            Order::Descending
        } else {
            self.order
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
/// use gpusort::files::{FileFormat, KeyFile};
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
    let format_of = |path: &Path| super::file_format(path, args.format);
    check_paths(args)?;
    let keys_out = AtomicOutput::create(&args.output)?;
    let index_out = args
        .indices
        .as_deref()
        .map(AtomicOutput::create)
        .transpose()?;
    let mut input = KeyFile::open_array(&args.input, format_of(&args.input), args.dtype)?;
    if input.shape().len() > 2 {
        bail!(
            "{} holds a {}-D array of shape {:?}; top-k takes 1-D arrays, and 2-D ones row by row",
            args.input.display(),
            input.shape().len(),
            input.shape()
        );
    }
    let len = input.len();
    let row_len = match (input.row_len(), args.row_len) {
        (Some(file), Some(asked)) if file != asked as u64 => bail!(
            "--row-len {asked}: {} holds rows of {file} keys",
            args.input.display()
        ),
        (Some(file), _) => Some(file),
        (None, asked) => asked.map(|n| n as u64),
    };
    let rows = match row_len {
        Some(row_len) => Some(gpusort::topk::check_top_k(
            len as usize,
            row_len as usize,
            args.k,
        )?),
        None => {
            gpusort::topk::check_top_k(len as usize, len as usize, args.k)?;
            None
        }
    };
    let gpu = open_gpu(args.backend)?;
    let keys_bytes = input.data_bytes();
    crate::memory::check(
        keys_bytes.saturating_add(2 * keys_bytes.min(CHUNK_BYTES as u64)),
        format!(
            "selecting from {} ({keys_bytes} bytes of keys)",
            input.path().display()
        ),
    )?;
    let progress = Progress::for_file(keys_bytes);
    let start = Instant::now();
    let job = Job {
        k: args.k,
        order: args.order(),
        row_len: row_len.map_or(len as usize, |n| n as usize),
        rows,
        out_format: format_of(&args.output),
        index_format: args.indices.as_deref().map(format_of),
        gpu: gpu.as_ref(),
        progress: &progress,
    };
    let dtype = input.dtype();
    let selected_on = with_key_type!(dtype, K => job.run::<K>(&mut input, keys_out, index_out))?;
    drop(progress);
    let which = match args.order() {
        Order::Ascending => "smallest",
        Order::Descending => "largest",
    };
    let per_row = row_len.map_or(String::new(), |n| format!(" of each row of {n}"));
    let report = format!(
        "gpusort: selected the {} {which} keys{per_row} of {len} {dtype} keys from {} into {} on \
         {selected_on} in {:.2} s",
        args.k,
        args.input.display(),
        args.output.display(),
        start.elapsed().as_secs_f64(),
    );
    let written = format!("the keys were written to {}", args.output.display());
    super::print_report(&report, &written)
}

/// Refuses to write an output over the input or two outputs to one file.
fn check_paths(args: &TopKArgs) -> Result<()> {
    if same_file(&args.input, &args.output) {
        bail!(
            "OUTPUT {} is the input file; the selected keys need a file of their own",
            args.output.display()
        );
    }
    if let Some(index) = &args.indices
        && (same_file(&args.input, index) || same_file(&args.output, index))
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
        keys_out: AtomicOutput,
        index_out: Option<AtomicOutput>,
    ) -> Result<String> {
        let progress = self.progress;
        progress.phase("reading", input.data_bytes());
        let keys: Vec<K> = input.read_keys(&mut |n| progress.inc(n))?;
        progress.spin("selecting");
        let (top, selected_on): (TopK<K>, String) = match self.gpu {
            Some(gpu) => (
                gpu.top_k_rows(&keys, self.row_len, self.k, self.order)
                    .with_context(|| {
                        format!("selecting from {} on the GPU", input.path().display())
                    })?,
                gpu.device_name().to_string(),
            ),
            None => (
                top_k_rows_cpu(&keys, self.row_len, self.k, self.order)?,
                format!("the CPU ({} threads)", threads()),
            ),
        };
        drop(keys);
        let written = (top.keys.len() * (size_of::<K>() + 8)) as u64;
        progress.phase("writing", written);
        let mut keys_out = keys_out;
        self.begin(&mut keys_out, self.out_format, K::DTYPE)?;
        keys_out.write_keys(&top.keys, &mut |n| progress.inc(n))?;
        if let (Some(mut index_out), Some(format)) = (index_out, self.index_format) {
            self.begin(&mut index_out, format, DType::U64)?;
            index_out.write_keys(&top.indices, &mut |n| progress.inc(n))?;
            // Both are complete before either is renamed.
            index_out.commit()?;
        }
        keys_out.commit()?;
        Ok(selected_on)
    }

    /// Starts an output of the result's shape: (k,) or (rows, k).
    fn begin(&self, out: &mut AtomicOutput, format: FileFormat, dtype: DType) -> Result<()> {
        match self.rows {
            Some(rows) => out.begin_array(format, dtype, &[rows as u64, self.k as u64])?,
            None => out.begin(format, dtype, self.k as u64)?,
        }
        Ok(())
    }
}
