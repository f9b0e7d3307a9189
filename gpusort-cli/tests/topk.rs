//! `gpusort topk K INPUT OUTPUT` as a user runs it: 1-D and 2-D `.npy` files and raw files
//! with `--row-len`, both orders, floats with NaN and signed zeros, ties, indices, against a
//! stable sort; and bad inputs refused with exit code 2 and no output. Runs on the GPU where
//! there is one, else on the CPU (the same results).

use npyz::WriterBuilder;
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::Path;
use std::process::{Command, Output};

/// The binary under test: cargo's, or `GPUSORT_BIN` where the tests were moved to another
/// machine.
fn gpusort(args: &[&str]) -> Output {
    let bin = std::env::var("GPUSORT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpusort").into());
    Command::new(bin).args(args).output().expect("runs")
}

fn topk_ok(args: &[&str]) -> String {
    let out = gpusort(&[&["topk"], args].concat());
    assert!(
        out.status.success(),
        "gpusort topk {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn s(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

fn write_npy<K: npyz::AutoSerialize + Copy>(path: &Path, keys: &[K], shape: &[u64]) {
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(BufWriter::new(File::create(path).unwrap()))
        .begin_nd()
        .unwrap();
    writer.extend(keys.iter().copied()).unwrap();
    writer.finish().unwrap();
}

/// A `.npy` file's keys and shape.
fn read_npy<K: npyz::Deserialize>(path: &Path) -> (Vec<K>, Vec<u64>) {
    let npy = npyz::NpyFile::new(File::open(path).unwrap()).unwrap();
    let shape = npy.shape().to_vec();
    (npy.into_vec().unwrap(), shape)
}

/// The `k` best of each row by a stable sort of the indices: keys and indices.
fn reference<K: Copy>(
    keys: &[K],
    row_len: usize,
    k: usize,
    cmp: impl Fn(&K, &K) -> std::cmp::Ordering,
) -> (Vec<K>, Vec<u64>) {
    let (mut top, mut indices) = (Vec::new(), Vec::new());
    for row in keys.chunks(row_len) {
        let mut order: Vec<usize> = (0..row.len()).collect();
        order.sort_by(|&a, &b| cmp(&row[a], &row[b]));
        for &i in &order[..k] {
            top.push(row[i]);
            indices.push(i as u64);
        }
    }
    (top, indices)
}

fn floats(n: usize) -> Vec<f32> {
    let specials = [
        f32::NAN,
        -f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    (0..n)
        .map(|i| {
            if i % 37 == 0 {
                specials[i / 37 % specials.len()]
            } else {
                ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 44) as f32 / 100.0 - 50.0
            }
        })
        .collect()
}

#[test]
fn one_array_largest_and_smallest_with_indices() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output, idx) = (
        dir.path().join("keys.npy"),
        dir.path().join("top.npy"),
        dir.path().join("idx.npy"),
    );
    let keys = floats(100_003);
    write_npy(&input, &keys, &[keys.len() as u64]);
    for (flag, k) in [
        ("--largest", 7),
        ("--order=asc", 1000),
        ("--order=desc", 1025),
    ] {
        let report = topk_ok(&[
            &k.to_string(),
            s(&input),
            s(&output),
            flag,
            "--indices",
            s(&idx),
        ]);
        assert!(report.contains("selected the"), "{report}");
        let descending = flag != "--order=asc";
        let (want_keys, want_idx) = reference(&keys, keys.len(), k, |a, b| {
            if descending {
                b.total_cmp(a)
            } else {
                a.total_cmp(b)
            }
        });
        let (got, shape) = read_npy::<f32>(&output);
        assert_eq!(shape, [k as u64]);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want_keys), "{flag} k = {k}");
        let (got_idx, shape) = read_npy::<u64>(&idx);
        assert_eq!(shape, [k as u64]);
        assert_eq!(got_idx, want_idx, "{flag} k = {k}");
    }
}

#[test]
fn a_matrix_selects_per_row_and_keeps_its_shape() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output, idx) = (
        dir.path().join("m.npy"),
        dir.path().join("top.npy"),
        dir.path().join("idx.bin"),
    );
    let (rows, row_len, k) = (300usize, 257usize, 9usize);
    // Few distinct keys: ties in every row, which go to the lower index.
    let keys: Vec<i64> = (0..rows * row_len)
        .map(|i| ((i as i64).wrapping_mul(7919) % 13) - 6)
        .collect();
    write_npy(&input, &keys, &[rows as u64, row_len as u64]);
    topk_ok(&[
        &k.to_string(),
        s(&input),
        s(&output),
        "--indices",
        s(&idx),
        "--largest",
    ]);
    let (want_keys, want_idx) = reference(&keys, row_len, k, |a, b| b.cmp(a));
    let (got, shape) = read_npy::<i64>(&output);
    assert_eq!(shape, [rows as u64, k as u64]);
    assert_eq!(got, want_keys);
    // Raw indices: u64 little-endian, row after row.
    let raw = fs::read(&idx).unwrap();
    let got_idx: Vec<u64> = raw
        .chunks(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(got_idx, want_idx);
}

#[test]
fn raw_keys_in_rows_of_row_len() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("keys.bin"), dir.path().join("low.npy"));
    let keys: Vec<u32> = (0..4000u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    fs::write(
        &input,
        keys.iter()
            .flat_map(|k| k.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    topk_ok(&[
        "3",
        s(&input),
        s(&output),
        "--dtype",
        "u32",
        "--row-len",
        "1000",
    ]);
    let (want, _) = reference(&keys, 1000, 3, |a, b| a.cmp(b));
    let (got, shape) = read_npy::<u32>(&output);
    assert_eq!(shape, [4, 3]);
    assert_eq!(got, want);
}

#[test]
fn bad_inputs_are_refused_with_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("keys.npy"), dir.path().join("top.npy"));
    write_npy(&input, &[1u64, 2, 3, 4, 5, 6], &[6]);
    let cube = dir.path().join("cube.npy");
    write_npy(&cube, &[1u32; 8], &[2, 2, 2]);
    let matrix = dir.path().join("matrix.npy");
    write_npy(&matrix, &[1u32; 6], &[2, 3]);
    // A 2-D header whose shape multiplies past 2^64 keys.
    let huge = dir.path().join("huge.npy");
    let dict =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }";
    let mut header = dict.to_string();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    fs::write(&huge, bytes).unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["1", s(&huge), s(&output)], "needs more than 2^64 bytes"),
        (
            &["0", s(&input), s(&output)],
            "K = 0: a top-k selects at least 1 key",
        ),
        (
            &["7", s(&input), s(&output)],
            "K = 7 is more than the 6 keys of",
        ),
        (
            &["1", s(&input), s(&output), "--row-len", "4"],
            "--row-len 4 does not divide the 6 keys of",
        ),
        (
            &["1", s(&input), s(&output), "--row-len", "0"],
            "invalid value '0' for '--row-len <N>'",
        ),
        (&["1", s(&cube), s(&output)], "3-D"),
        (
            &["1", s(&matrix), s(&output), "--row-len", "2"],
            "rows of 3",
        ),
        (&["1", s(&input), s(&input)], "is the input file"),
    ];
    for (args, message) in cases {
        let out = gpusort(&[&["topk"], args].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!output.exists(), "{args:?} left an output");
    }
    let (keys, _) = read_npy::<u64>(&input);
    assert_eq!(keys, [1, 2, 3, 4, 5, 6], "the input is untouched");
}

#[test]
fn the_bench_sweeps_top_k_on_a_gpu_and_says_so_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = gpusort(&[
        "bench",
        "--topk",
        "1,8,1024,2000",
        "--topk-rows",
        "3x1000",
        "--dtypes",
        "f32,u64",
        "--min-log2",
        "10",
        "--max-log2",
        "11",
        "--reps",
        "2",
        "--out",
        s(dir.path()),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && stderr.contains("needs a GPU") {
        assert!(!dir.path().join("bench-topk.csv").exists());
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let csv = fs::read_to_string(dir.path().join("bench-topk.csv")).unwrap();
    // Two types × (two sizes × k = 1, 8, 1024 + rows: k = 1, 8): 2 × 8 rows; k = 2000 is
    // above what the sweep times.
    assert_eq!(csv.lines().count(), 1 + 16, "{csv}");
    assert!(stderr.contains("up to 1024"), "{stderr}");
    assert!(csv.contains("topk_rows1000_k8,f32,3000,"), "{csv}");
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.split(',').nth(5) == Some("1")),
        "{csv}"
    );
}
