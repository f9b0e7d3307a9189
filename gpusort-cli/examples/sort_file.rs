//! The library with the tool's files (`gpusort_cli::files`): sort a `.npy` file into another,
//! written atomically (a temporary file beside the output, renamed when complete), on the GPU or
//! else the CPU.
//!
//!     cargo run --release -p gpusort-cli --example sort_file                  # a demo file
//!     cargo run --release -p gpusort-cli --example sort_file -- IN.npy OUT.npy
//!
//! `gpusort sort IN OUT` does the same with progress bars, raw files and `--argsort`.

use gpusort::{DType, Error, GpuSorter, Order, cpu::CpuAlgo, with_key_type};
use gpusort_cli::files::{AtomicOutput, FileFormat, KeyFile, LeKey};
use std::path::{Path, PathBuf};

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> BoxResult<()> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let demo_dir;
    let (input, output) = match args.as_slice() {
        [input, output] => (input.clone(), output.clone()),
        [] => {
            demo_dir = tempfile::tempdir()?;
            let input = demo_dir.path().join("keys.npy");
            write_demo_input(&input)?;
            (input, demo_dir.path().join("sorted.npy"))
        }
        _ => return Err("usage: sort_file [INPUT.npy OUTPUT.npy]".into()),
    };

    let gpu = match GpuSorter::new() {
        Ok(gpu) => Some(gpu),
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no GPU ({e}): sorting on the CPU");
            None
        }
        Err(e) => return Err(e.into()),
    };

    // Opening checks the header, the key type and the size before any key is read.
    let mut file = KeyFile::open(&input, FileFormat::Npy, None)?;
    let (dtype, len) = (file.dtype(), file.len());
    // The output is checked (its temporary file created) before minutes of reading and sorting.
    let out = AtomicOutput::create(&output)?;
    // From the key type in the header to generic code.
    let sorted_on = with_key_type!(dtype, K => sort_into::<K>(&mut file, out, gpu.as_ref())?);
    println!(
        "sorted {len} {dtype} keys from {} into {} on {sorted_on}",
        input.display(),
        output.display()
    );

    let mut check = KeyFile::open(&output, FileFormat::Npy, Some(dtype))?;
    with_key_type!(dtype, K => {
        let keys: Vec<K> = check.read_keys(&mut |_| {})?;
        assert!(keys.is_sorted_by_key(|k| gpusort::SortKey::ordered_bits(*k, Order::Ascending)));
    });
    Ok(())
}

/// Reads the keys, sorts them ascending and writes them to `out`; returns where they were sorted.
fn sort_into<K: LeKey>(
    file: &mut KeyFile,
    mut out: AtomicOutput,
    gpu: Option<&GpuSorter>,
) -> BoxResult<String> {
    let mut keys: Vec<K> = file.read_keys(&mut |_| {})?;
    let sorted_on = match gpu {
        Some(gpu) => {
            gpu.sort_unstable(&mut keys, Order::Ascending)?;
            gpu.device_name().to_string()
        }
        None => {
            CpuAlgo::Radix.sort(&mut keys, Order::Ascending);
            "the CPU (radix sort)".to_string()
        }
    };
    out.begin(FileFormat::Npy, K::DTYPE, keys.len() as u64)?;
    out.write_keys(&keys, &mut |_| {})?;
    out.commit()?; // nothing appears at the output's path before this
    Ok(sorted_on)
}

/// A demo input of 2^20 random `f64` keys, as numpy's `np.save` writes a float64 array.
fn write_demo_input(path: &Path) -> BoxResult<()> {
    // Reproducible keys in [-0.5, 0.5): a multiplicative hash of each index.
    let keys: Vec<f64> = (0..1u64 << 20)
        .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
        .collect();
    let mut out = AtomicOutput::create(path)?;
    out.begin(FileFormat::Npy, DType::F64, keys.len() as u64)?;
    out.write_keys(&keys, &mut |_| {})?;
    out.commit()?;
    Ok(())
}
