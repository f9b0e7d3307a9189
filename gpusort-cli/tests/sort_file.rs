//! `gpusort sort INPUT OUTPUT` as a user runs it: every key type and order through `.npy` and raw
//! files against std's sort, argsort, float edge cases, arrays of two or more dimensions and raw
//! files with `--row-len` sorted row by row, and every bad input refused with a message, exit
//! code 2, no new output, and the input and any existing output untouched.

use npyz::WriterBuilder;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: cargo's, or `GPUSORT_BIN` where the tests were moved to another
/// machine (`scripts/gpu-bundle.sh`).
fn gpusort(args: &[&str]) -> Output {
    let bin = std::env::var("GPUSORT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpusort").into());
    Command::new(bin).args(args).output().expect("runs")
}

/// Runs `gpusort sort ARGS…` and insists it succeeded.
fn sort_ok(args: &[&str]) {
    let out = gpusort(&[&["sort"], args].concat());
    assert!(
        out.status.success(),
        "gpusort sort {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn s(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// A key type as the tests see it, with std's comparison as the oracle.
trait Key: Copy + Debug + PartialEq + npyz::AutoSerialize + npyz::Deserialize + 'static {
    /// `--dtype` value.
    const NAME: &'static str;
    /// `.npy` descr.
    const DESCR: &'static str;
    /// std's total order (`Ord`, or `total_cmp` for floats).
    fn total(&self, other: &Self) -> Ordering;
    fn bits(self) -> u64;
    fn le_bytes(self) -> Vec<u8>;
    fn from_le(bytes: &[u8]) -> Self;
    /// A test key from random bits: duplicates, extremes and (floats) ±0.0, NaN, ∞, subnormals.
    fn from_random(bits: u64) -> Self;
}

macro_rules! int_key {
    ($t:ty, $name:literal, $descr:literal) => {
        impl Key for $t {
            const NAME: &'static str = $name;
            const DESCR: &'static str = $descr;
            fn total(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            fn bits(self) -> u64 {
                self as u64
            }
            fn le_bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().unwrap())
            }
            fn from_random(bits: u64) -> Self {
                match bits % 4 {
                    0 => (bits >> 8) as $t % 16,
                    1 => <$t>::MIN,
                    _ => (bits >> 2) as $t,
                }
            }
        }
    };
}

macro_rules! float_key {
    ($t:ty, $u:ty, $name:literal, $descr:literal) => {
        impl Key for $t {
            const NAME: &'static str = $name;
            const DESCR: &'static str = $descr;
            fn total(&self, other: &Self) -> Ordering {
                self.total_cmp(other)
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn le_bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().unwrap())
            }
            fn from_random(bits: u64) -> Self {
                const SPECIAL: [$t; 6] = [
                    0.0,
                    -0.0,
                    <$t>::NAN,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    -<$t>::NAN,
                ];
                match bits % 8 {
                    0 => SPECIAL[(bits >> 8) as usize % SPECIAL.len()],
                    1 | 2 => ((bits >> 8) % 16) as $t - 8.0,
                    _ => <$t>::from_bits((bits >> 3) as $u),
                }
            }
        }
    };
}

int_key!(u32, "u32", "<u4");
int_key!(i32, "i32", "<i4");
int_key!(u64, "u64", "<u8");
int_key!(i64, "i64", "<i8");
float_key!(f32, u32, "f32", "<f4");
float_key!(f64, u64, "f64", "<f8");

/// `n` test keys from a fixed seed.
fn keys<K: Key>(n: usize, seed: u64) -> Vec<K> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            // xorshift64*
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            K::from_random(x.wrapping_mul(0x2545_F491_4F6C_DD1D))
        })
        .collect()
}

/// std's stable sort: the oracle.
fn std_sorted<K: Key>(keys: &[K], order: &str) -> Vec<K> {
    let mut sorted = keys.to_vec();
    match order {
        "asc" => sorted.sort_by(K::total),
        _ => sorted.sort_by(|a, b| b.total(a)),
    }
    sorted
}

fn bits<K: Key>(keys: &[K]) -> Vec<u64> {
    keys.iter().map(|&k| k.bits()).collect()
}

fn write_npy<K: Key>(path: &Path, keys: &[K]) {
    write_npy_shaped(path, keys, &[keys.len() as u64]);
}

/// A C-order `.npy` of shape `shape`, as numpy's `np.save` writes one.
fn write_npy_shaped<K: Key>(path: &Path, keys: &[K], shape: &[u64]) {
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(BufWriter::new(File::create(path).unwrap()))
        .begin_nd()
        .unwrap();
    writer.extend(keys.iter().copied()).unwrap();
    writer.finish().unwrap();
}

fn write_raw<K: Key>(path: &Path, keys: &[K]) {
    fs::write(
        path,
        keys.iter().flat_map(|k| k.le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
}

/// A `.npy` file's keys, checking its dtype is `K`'s and returning its shape.
fn read_npy<K: Key>(path: &Path) -> (Vec<K>, Vec<u64>) {
    let npy = npyz::NpyFile::new(File::open(path).unwrap()).unwrap();
    assert_eq!(
        npy.dtype().descr(),
        format!("'{}'", K::DESCR),
        "{}",
        path.display()
    );
    assert_eq!(npy.order(), npyz::Order::C);
    let shape = npy.shape().to_vec();
    (npy.into_vec().unwrap(), shape)
}

fn read_raw<K: Key>(path: &Path) -> Vec<K> {
    let bytes = fs::read(path).unwrap();
    assert_eq!(bytes.len() % size_of::<K>(), 0, "{}", path.display());
    bytes.chunks_exact(size_of::<K>()).map(K::from_le).collect()
}

/// A hand-written `.npy` (version 1.0) header, for files npyz would not write.
fn npy_bytes(descr: &str, fortran: bool, shape: &str) -> Vec<u8> {
    let fortran = if fortran { "True" } else { "False" };
    let mut dict =
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}");
    // numpy pads with spaces and a newline so that the data starts on a multiple of 64 bytes.
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes
}

// ---------------------------------------------------------------------------------------------
// Success

/// Every order × format (npy, raw) × backend (cpu, auto) × GPU sort (auto, merge, radix) for one
/// key type.
fn sorts_like_std<K: Key>() {
    let dir = tempfile::tempdir().unwrap();
    let input = keys::<K>(1000, 7);
    for order in ["asc", "desc"] {
        let expected = bits(&std_sorted(&input, order));
        for (backend, algo) in [
            ("cpu", "auto"),
            ("auto", "auto"),
            ("auto", "merge"),
            ("auto", "radix"),
        ] {
            let (npy_in, npy_out) = (dir.path().join("in.npy"), dir.path().join("out.npy"));
            write_npy(&npy_in, &input);
            sort_ok(&[
                s(&npy_in),
                s(&npy_out),
                "--order",
                order,
                "--backend",
                backend,
                "--algo",
                algo,
            ]);
            let (sorted, shape) = read_npy::<K>(&npy_out);
            assert_eq!(shape, [1000]);
            assert_eq!(bits(&sorted), expected, "{} npy {order} {backend}", K::NAME);

            let (raw_in, raw_out) = (dir.path().join("in.bin"), dir.path().join("out.bin"));
            write_raw(&raw_in, &input);
            let args = [s(&raw_in), s(&raw_out), "--dtype", K::NAME];
            let flags = ["--order", order, "--backend", backend, "--algo", algo];
            sort_ok(&[&args[..], &flags[..]].concat());
            let sorted = read_raw::<K>(&raw_out);
            assert_eq!(bits(&sorted), expected, "{} raw {order} {backend}", K::NAME);
        }
    }
}

#[test]
fn sorts_u32_like_std() {
    sorts_like_std::<u32>();
}

#[test]
fn sorts_i32_like_std() {
    sorts_like_std::<i32>();
}

#[test]
fn sorts_f32_like_std() {
    sorts_like_std::<f32>();
}

#[test]
fn sorts_u64_like_std() {
    sorts_like_std::<u64>();
}

#[test]
fn sorts_i64_like_std() {
    sorts_like_std::<i64>();
}

#[test]
fn sorts_f64_like_std() {
    sorts_like_std::<f64>();
}

#[test]
fn converts_between_raw_and_npy_by_output_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = keys::<i32>(300, 3);
    let (raw, npy, back) = (
        dir.path().join("keys.dat"),
        dir.path().join("sorted.npy"),
        dir.path().join("sorted.raw"),
    );
    write_raw(&raw, &input);
    sort_ok(&[s(&raw), s(&npy), "--dtype", "i32", "--backend", "cpu"]);
    let (sorted, shape) = read_npy::<i32>(&npy);
    assert_eq!(
        (sorted.clone(), shape),
        (std_sorted(&input, "asc"), vec![300])
    );
    sort_ok(&[s(&npy), s(&back), "--backend", "cpu"]);
    assert_eq!(read_raw::<i32>(&back), sorted);
}

#[test]
fn format_flag_overrides_the_names() {
    let dir = tempfile::tempdir().unwrap();
    let input = keys::<u64>(100, 4);
    let (npy_named_raw, out) = (dir.path().join("a.keys"), dir.path().join("b.keys"));
    write_npy(&npy_named_raw, &input);
    sort_ok(&[
        s(&npy_named_raw),
        s(&out),
        "--format",
        "npy",
        "--backend",
        "cpu",
    ]);
    assert_eq!(read_npy::<u64>(&out).0, std_sorted(&input, "asc"));
}

#[test]
fn floats_sort_in_total_order() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.npy"), dir.path().join("out.npy"));
    let keys = [
        1.0f32,
        f32::NAN,
        0.0,
        -0.0,
        f32::NEG_INFINITY,
        f32::INFINITY,
        -1.0,
        -0.0,
        0.0,
    ];
    write_npy(&input, &keys);
    sort_ok(&[s(&input), s(&output), "--backend", "cpu"]);
    let ascending = [
        f32::NEG_INFINITY,
        -1.0,
        -0.0,
        -0.0,
        0.0,
        0.0,
        1.0,
        f32::INFINITY,
        f32::NAN,
    ];
    assert_eq!(bits(&read_npy::<f32>(&output).0), bits(&ascending));
    sort_ok(&[s(&input), s(&output), "--backend", "cpu", "--order", "desc"]);
    let descending: Vec<f32> = ascending.iter().rev().copied().collect();
    assert_eq!(bits(&read_npy::<f32>(&output).0), bits(&descending));

    let keys = [-0.0f64, f64::NAN, 0.0, -f64::NAN, -0.0];
    write_npy(&input, &keys);
    sort_ok(&[s(&input), s(&output), "--backend", "cpu"]);
    let ascending = [-f64::NAN, -0.0, -0.0, 0.0, f64::NAN];
    assert_eq!(bits(&read_npy::<f64>(&output).0), bits(&ascending));
}

#[test]
fn empty_and_one_key_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output, index) = (
        dir.path().join("in.npy"),
        dir.path().join("out.npy"),
        dir.path().join("idx.npy"),
    );
    for keys in [vec![], vec![42i64]] {
        write_npy::<i64>(&input, &keys);
        sort_ok(&[
            s(&input),
            s(&output),
            "--argsort",
            s(&index),
            "--backend",
            "cpu",
        ]);
        assert_eq!(
            read_npy::<i64>(&output),
            (keys.clone(), vec![keys.len() as u64])
        );
        let (perm, shape) = read_npy::<i64>(&index);
        assert_eq!((perm.len(), shape), (keys.len(), vec![keys.len() as u64]));
    }
    let (raw_in, raw_out) = (dir.path().join("in.bin"), dir.path().join("out.bin"));
    fs::write(&raw_in, b"").unwrap();
    sort_ok(&[
        s(&raw_in),
        s(&raw_out),
        "--dtype",
        "f64",
        "--backend",
        "auto",
    ]);
    assert_eq!(fs::read(&raw_out).unwrap(), b"");
}

/// Checks `perm` (read from the file) is the stable sorting permutation of `input`, and that
/// `sorted` is `input` gathered through it.
fn check_argsort<K: Key>(input: &[K], sorted: &[K], perm: &[i64], order: &str) {
    let mut seen = perm.to_vec();
    seen.sort_unstable();
    assert!(
        seen.iter().copied().eq(0..input.len() as i64),
        "not a permutation"
    );
    let gathered: Vec<K> = perm.iter().map(|&i| input[i as usize]).collect();
    assert_eq!(
        bits(&gathered),
        bits(sorted),
        "keys do not gather through the permutation"
    );
    assert_eq!(bits(sorted), bits(&std_sorted(input, order)));
    // Stable: std's stable sort of the indices gives exactly the same permutation.
    let mut expected: Vec<i64> = (0..input.len() as i64).collect();
    expected.sort_by(|&a, &b| {
        let (a, b) = (&input[a as usize], &input[b as usize]);
        if order == "asc" {
            a.total(b)
        } else {
            b.total(a)
        }
    });
    assert_eq!(perm, expected, "not stable");
}

#[test]
fn argsort_is_stable_and_gathers_to_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let (index, output) = (dir.path().join("idx.npy"), dir.path().join("out.npy"));
    // Few distinct keys, so that stability shows.
    let floats: Vec<f32> = keys::<f32>(2000, 11)
        .iter()
        .map(|k| (k.abs() % 4.0).floor())
        .collect();
    let input = dir.path().join("f.npy");
    write_npy(&input, &floats);
    for order in ["asc", "desc"] {
        for algo in ["auto", "radix"] {
            sort_ok(&[
                s(&input),
                s(&output),
                "--argsort",
                s(&index),
                "--order",
                order,
                "--algo",
                algo,
            ]);
            let (perm, shape) = read_npy::<i64>(&index);
            assert_eq!(shape, [2000]);
            check_argsort(&floats, &read_npy::<f32>(&output).0, &perm, order);
        }
    }

    let ints: Vec<u64> = keys::<u64>(1500, 12).iter().map(|k| k % 10).collect();
    let input = dir.path().join("u.bin");
    let raw_out = dir.path().join("out.bin");
    write_raw(&input, &ints);
    let args = [
        s(&input),
        s(&raw_out),
        "--dtype",
        "u64",
        "--argsort",
        s(&index),
    ];
    sort_ok(&[&args[..], &["--order", "desc", "--backend", "cpu"]].concat());
    check_argsort(
        &ints,
        &read_raw::<u64>(&raw_out),
        &read_npy::<i64>(&index).0,
        "desc",
    );
}

#[test]
fn in_place_replaces_the_input_with_its_sorted_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.npy");
    let input = keys::<u32>(500, 5);
    write_npy(&path, &input);
    // Spelled differently on purpose: still the same file.
    let other_spelling = dir.path().join(".").join("keys.npy");
    sort_ok(&[
        s(&path),
        s(&other_spelling),
        "--in-place",
        "--backend",
        "cpu",
    ]);
    assert_eq!(read_npy::<u32>(&path).0, std_sorted(&input, "asc"));
    assert_eq!(
        entries(dir.path()),
        BTreeSet::from(["keys.npy".to_string()])
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input: refused with a message, exit code 2, nothing written, nothing changed.

fn entries(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Runs `gpusort sort ARGS…` in `dir` and checks it is refused: exit code 2, `needle` in the
/// message, no panic, and every file in `dir` exactly as before (no new output, no temporary
/// file left, input and existing outputs unchanged).
fn refused(dir: &Path, args: &[&str], needle: &str) -> String {
    let before: Vec<(String, Option<Vec<u8>>)> = entries(dir)
        .into_iter()
        .map(|name| (name.clone(), fs::read(dir.join(&name)).ok()))
        .collect();
    let out = gpusort(&[&["sort"], args].concat());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {needle:?} not in:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    let after: Vec<(String, Option<Vec<u8>>)> = entries(dir)
        .into_iter()
        .map(|name| (name.clone(), fs::read(dir.join(&name)).ok()))
        .collect();
    assert!(before == after, "{args:?} changed {}", dir.display());
    stderr
}

/// A temporary directory with a valid `in.npy` of 100 f32 keys; and the paths `in.npy` and
/// `out.npy` in it.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npy");
    write_npy(&input, &keys::<f32>(100, 1));
    let output = dir.path().join("out.npy");
    (dir, input, output)
}

#[test]
fn missing_input() {
    let (dir, _, output) = setup();
    let missing = dir.path().join("missing.npy");
    let stderr = refused(dir.path(), &[s(&missing), s(&output)], "does not exist");
    assert!(stderr.contains("missing.npy"), "{stderr}");
}

#[test]
fn unreadable_input() {
    // Root reads any file whatever its mode: a directory is unreadable as keys for everyone.
    let (dir, _, output) = setup();
    let sub = dir.path().join("sub.npy");
    fs::create_dir(&sub).unwrap();
    let stderr = refused(dir.path(), &[s(&sub), s(&output)], "cannot read");
    assert!(
        stderr.contains("sub.npy") && stderr.contains("directory"),
        "{stderr}"
    );
}

#[test]
fn not_a_npy_file() {
    let (dir, _, output) = setup();
    let text = dir.path().join("text.npy");
    fs::write(&text, "a,b,c\n1,2,3\n").unwrap();
    refused(
        dir.path(),
        &[s(&text), s(&output)],
        "text.npy is not a .npy file",
    );
    fs::write(&text, b"\x93NU").unwrap();
    refused(dir.path(), &[s(&text), s(&output)], "is not a .npy file");
}

#[test]
fn garbled_header() {
    let (dir, _, output) = setup();
    let bad = dir.path().join("bad.npy");
    let mut bytes = npy_bytes("<f4", false, "(1,)");
    bytes[12] = b'#';
    fs::write(&bad, bytes).unwrap();
    refused(
        dir.path(),
        &[s(&bad), s(&output)],
        "bad.npy has a bad .npy header",
    );
}

#[test]
fn truncated_data_and_header() {
    let (dir, input, output) = setup();
    let bytes = fs::read(&input).unwrap();
    let cut = dir.path().join("cut.npy");
    fs::write(&cut, &bytes[..bytes.len() - 6]).unwrap();
    refused(
        dir.path(),
        &[s(&cut), s(&output)],
        "cut.npy is truncated: it should hold 400 bytes of data (100 keys) but holds 394",
    );
    fs::write(&cut, &bytes[..40]).unwrap();
    refused(
        dir.path(),
        &[s(&cut), s(&output)],
        "cut.npy is truncated: it ends inside the .npy header",
    );
}

#[test]
fn trailing_bytes() {
    let (dir, input, output) = setup();
    let mut bytes = fs::read(&input).unwrap();
    bytes.extend_from_slice(b"junk");
    let long = dir.path().join("long.npy");
    fs::write(&long, bytes).unwrap();
    refused(
        dir.path(),
        &[s(&long), s(&output)],
        "long.npy has 4 bytes after the array's data",
    );
}

#[test]
fn unsupported_dtypes() {
    let (dir, _, output) = setup();
    let file = dir.path().join("odd.npy");
    for (descr, why) in [
        ("<c8", "complex"),
        ("<c16", "complex"),
        ("|O", "Python objects"),
        (">u4", "big-endian"),
        (">f8", "big-endian"),
        ("|b1", "bool"),
        ("<f2", "float width"),
        ("<i2", "integer width"),
        ("|u1", "integer width"),
        ("<U3", "strings"),
        ("<M8[D]", "dates"),
    ] {
        let mut bytes = npy_bytes(descr, false, "(2,)");
        bytes.extend_from_slice(&[0; 32]);
        fs::write(&file, bytes).unwrap();
        let stderr = refused(dir.path(), &[s(&file), s(&output)], why);
        assert!(
            stderr.contains(&format!("odd.npy has dtype '{descr}'")),
            "{stderr}"
        );
    }
}

#[test]
fn zero_dimensional_and_overflowing_shapes() {
    let (dir, _, output) = setup();
    let file = dir.path().join("scalar.npy");
    let mut bytes = npy_bytes("<f4", false, "()");
    bytes.extend_from_slice(&[0; 4]);
    fs::write(&file, bytes).unwrap();
    refused(
        dir.path(),
        &[s(&file), s(&output)],
        "scalar.npy holds a 0-D array of shape ()",
    );
    // A shape whose product overflows u64 (npyz multiplies it out while parsing).
    let huge = "(1099511627776, 1099511627776)";
    fs::write(&file, npy_bytes("<f4", false, huge)).unwrap();
    refused(
        dir.path(),
        &[s(&file), s(&output)],
        "shape (1099511627776, 1099511627776) of f32 keys needs more than 2^64 bytes",
    );
}

#[test]
fn fortran_order() {
    let (dir, _, output) = setup();
    let file = dir.path().join("fortran.npy");
    let mut bytes = npy_bytes("<i8", true, "(2, 3)");
    bytes.extend_from_slice(&[0; 48]);
    fs::write(&file, bytes).unwrap();
    refused(
        dir.path(),
        &[s(&file), s(&output)],
        "fortran.npy is stored in Fortran order",
    );
}

#[test]
fn raw_size_not_a_multiple_of_the_key_size() {
    let (dir, _, _) = setup();
    let (raw, output) = (dir.path().join("keys.bin"), dir.path().join("out.bin"));
    fs::write(&raw, [0u8; 12]).unwrap();
    refused(
        dir.path(),
        &[s(&raw), s(&output), "--dtype", "f64"],
        "raw file",
    );
    let stderr = refused(
        dir.path(),
        &[s(&raw), s(&output), "--dtype", "u64"],
        "12 bytes",
    );
    assert!(
        stderr.contains("not a multiple of the u64 key size (8 bytes)"),
        "{stderr}"
    );
}

#[test]
fn raw_file_without_dtype() {
    let (dir, _, _) = setup();
    let (raw, output) = (dir.path().join("keys.bin"), dir.path().join("out.bin"));
    fs::write(&raw, [0u8; 16]).unwrap();
    let stderr = refused(dir.path(), &[s(&raw), s(&output)], "pass --dtype");
    assert!(
        stderr.contains("keys.bin is read as a raw file"),
        "{stderr}"
    );
}

#[test]
fn dtype_flag_that_contradicts_the_npy() {
    let (dir, input, output) = setup();
    refused(
        dir.path(),
        &[s(&input), s(&output), "--dtype", "i32"],
        "in.npy holds f32 keys, not i32",
    );
}

#[test]
fn output_directory_missing() {
    let (dir, input, _) = setup();
    let output = dir.path().join("no/such/dir/out.npy");
    refused(dir.path(), &[s(&input), s(&output)], "does not exist");
}

#[test]
fn output_directory_is_a_file() {
    let (dir, input, _) = setup();
    let output = input.join("out.npy");
    refused(
        dir.path(),
        &[s(&input), s(&output)],
        "in.npy is not a directory",
    );
}

#[test]
fn output_directory_read_only() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, input, _) = setup();
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes into read-only directories: then the case cannot be made here.
    if tempfile::tempfile_in(&locked).is_ok() {
        eprintln!("skipped: a read-only directory is writable here (running as root)");
        return;
    }
    let output = locked.join("out.npy");
    let stderr = refused(dir.path(), &[s(&input), s(&output)], "cannot write");
    assert!(stderr.contains("ermission denied"), "{stderr}");
    assert!(entries(&locked).is_empty());
}

#[test]
fn output_is_a_directory() {
    let (dir, input, _) = setup();
    let out_dir = dir.path().join("out.npy");
    fs::create_dir(&out_dir).unwrap();
    refused(
        dir.path(),
        &[s(&input), s(&out_dir)],
        "out.npy: it is a directory",
    );
}

#[test]
fn output_equal_to_input_needs_in_place() {
    let (dir, input, _) = setup();
    refused(
        dir.path(),
        &[s(&input), s(&input)],
        "is the input file; pass --in-place",
    );
    let other_spelling = dir.path().join("sub/../in.npy");
    fs::create_dir(dir.path().join("sub")).unwrap();
    refused(
        dir.path(),
        &[s(&input), s(&other_spelling)],
        "pass --in-place",
    );
    let link = dir.path().join("link.npy");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    refused(dir.path(), &[s(&input), s(&link)], "pass --in-place");
}

#[test]
fn argsort_path_equal_to_input_or_output() {
    let (dir, input, output) = setup();
    refused(
        dir.path(),
        &[s(&input), s(&output), "--argsort", s(&input)],
        "is the input file",
    );
    refused(
        dir.path(),
        &[s(&input), s(&output), "--argsort", s(&output)],
        "is also OUTPUT",
    );
}

#[test]
fn existing_output_survives_a_failure() {
    let (dir, _, output) = setup();
    fs::write(&output, b"precious").unwrap();
    let bad = dir.path().join("bad.npy");
    fs::write(&bad, npy_bytes("<f4", false, "(10,)")).unwrap();
    // `refused` checks every file, `out.npy` included, is byte-identical afterwards.
    refused(dir.path(), &[s(&bad), s(&output)], "truncated");
    assert_eq!(fs::read(&output).unwrap(), b"precious");
}

#[test]
fn gpu_backend_without_gpu_writes_nothing() {
    if gpusort::GpuSorter::new().is_ok() {
        return;
    }
    let (dir, input, output) = setup();
    refused(
        dir.path(),
        &[s(&input), s(&output), "--backend", "gpu"],
        "GPU backend is not available",
    );
}

#[test]
fn argsort_with_the_unstable_bitonic_sort() {
    let (dir, input, output) = setup();
    let index = dir.path().join("idx.npy");
    refused(
        dir.path(),
        &[
            s(&input),
            s(&output),
            "--argsort",
            s(&index),
            "--algo",
            "bitonic",
        ],
        "--argsort needs a stable sort",
    );
}

#[test]
fn unknown_flag_values() {
    let (dir, input, output) = setup();
    for (flag, value) in [
        ("--order", "up"),
        ("--algo", "quick"),
        ("--backend", "tpu"),
        ("--dtype", "u16"),
        ("--format", "csv"),
    ] {
        let stderr = refused(dir.path(), &[s(&input), s(&output), flag, value], value);
        assert!(stderr.contains("invalid value"), "{stderr}");
    }
    refused(
        dir.path(),
        &[s(&input), s(&output), "--reverse"],
        "--reverse",
    );
    refused(dir.path(), &[s(&input)], "OUTPUT");
}

// ---------------------------------------------------------------------------------------------
// Rows: arrays of two or more dimensions along their last axis, raw files with --row-len.

/// Each row of `row_len` keys sorted by std's stable sort: `np.sort(a, axis=-1)`.
fn rows_sorted<K: Key>(keys: &[K], row_len: usize, order: &str) -> Vec<K> {
    keys.chunks(row_len.max(1))
        .flat_map(|row| std_sorted(row, order))
        .collect()
}

/// Each row's stable permutation, as positions within the row:
/// `np.argsort(a, axis=-1, kind='stable')`.
fn rows_argsorted<K: Key>(keys: &[K], row_len: usize, order: &str) -> Vec<i64> {
    keys.chunks(row_len.max(1))
        .flat_map(|row| {
            let mut positions: Vec<i64> = (0..row.len() as i64).collect();
            positions.sort_by(|&a, &b| {
                let (a, b) = (&row[a as usize], &row[b as usize]);
                if order == "asc" {
                    a.total(b)
                } else {
                    b.total(a)
                }
            });
            positions
        })
        .collect()
}

/// Checks the sorted rows and their permutations written for `input` of `shape`.
fn check_rows_written<K: Key + gpusort::SortKey>(
    input: &[K],
    shape: &[u64],
    (sorted, sorted_shape): (Vec<K>, Vec<u64>),
    perm: Option<(Vec<i64>, Vec<u64>)>,
    order: &str,
    what: &str,
) {
    let row_len = *shape.last().unwrap() as usize;
    assert_eq!(sorted_shape, shape, "{what}: output shape");
    assert_eq!(
        bits(&sorted),
        bits(&rows_sorted(input, row_len, order)),
        "{what}: sorted rows"
    );
    // The tool's own oracle agrees.
    let gpu_order = if order == "asc" {
        gpusort::Order::Ascending
    } else {
        gpusort::Order::Descending
    };
    gpusort_cli::verify::check_rows(&sorted, input, row_len, gpu_order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Some((perm, perm_shape)) = perm {
        assert_eq!(perm_shape, shape, "{what}: permutation shape");
        assert_eq!(
            perm,
            rows_argsorted(input, row_len, order),
            "{what}: permutation"
        );
    }
}

/// Rows of one key type: 2-D and 3-D arrays of short, odd, power-of-two and (on the GPU) longer
/// rows than a block sorts, few rows and many, both orders, on the CPU and the GPU where there
/// is one; keys alone and with the permutation.
fn sorts_rows_like_std<K: Key + gpusort::SortKey>() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output, index) = (
        dir.path().join("in.npy"),
        dir.path().join("out.npy"),
        dir.path().join("idx.npy"),
    );
    for (seed, shape) in [
        (1, &[37u64, 29][..]),
        (2, &[64, 128]),
        (3, &[1, 2000]),
        (4, &[2, 10_000]),
        (5, &[3, 4, 33]),
        (6, &[300, 1]),
    ] {
        let keys: Vec<K> = keys(shape.iter().product::<u64>() as usize, seed);
        write_npy_shaped(&input, &keys, shape);
        for order in ["asc", "desc"] {
            for backend in ["cpu", "auto"] {
                let what = format!("{} {shape:?} {order} {backend}", K::NAME);
                let flags = ["--order", order, "--backend", backend];
                sort_ok(&[&[s(&input), s(&output)][..], &flags].concat());
                check_rows_written(&keys, shape, read_npy(&output), None, order, &what);
                let argsort = ["--argsort", s(&index)];
                sort_ok(&[&[s(&input), s(&output)][..], &flags, &argsort].concat());
                let perm = Some(read_npy::<i64>(&index));
                check_rows_written(&keys, shape, read_npy(&output), perm, order, &what);
            }
        }
    }
}

#[test]
fn sorts_u32_rows_like_std() {
    sorts_rows_like_std::<u32>();
}

#[test]
fn sorts_i32_rows_like_std() {
    sorts_rows_like_std::<i32>();
}

#[test]
fn sorts_f32_rows_like_std() {
    sorts_rows_like_std::<f32>();
}

#[test]
fn sorts_u64_rows_like_std() {
    sorts_rows_like_std::<u64>();
}

#[test]
fn sorts_i64_rows_like_std() {
    sorts_rows_like_std::<i64>();
}

#[test]
fn sorts_f64_rows_like_std() {
    sorts_rows_like_std::<f64>();
}

#[test]
fn float_rows_sort_in_total_order() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output, index) = (
        dir.path().join("in.npy"),
        dir.path().join("out.npy"),
        dir.path().join("idx.npy"),
    );
    let keys = [
        0.0f32,
        f32::NAN,
        -0.0,
        1.0,
        // next row
        -0.0,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
    ];
    write_npy_shaped(&input, &keys, &[2, 4]);
    for backend in ["cpu", "auto"] {
        let args = [s(&input), s(&output), "--argsort", s(&index)];
        sort_ok(&[&args[..], &["--backend", backend]].concat());
        let ascending = [-0.0, 0.0, 1.0, f32::NAN, f32::NEG_INFINITY, -0.0, -0.0, 0.0];
        assert_eq!(
            bits(&read_npy::<f32>(&output).0),
            bits(&ascending),
            "{backend}"
        );
        // The two -0.0 of the second row keep their order.
        assert_eq!(
            read_npy::<i64>(&index).0,
            [2, 0, 3, 1, 1, 0, 3, 2],
            "{backend}"
        );
    }
}

#[test]
fn raw_files_sort_by_rows_with_row_len() {
    let dir = tempfile::tempdir().unwrap();
    let input = keys::<i64>(35 * 12, 21);
    let (raw, raw_out, npy_out, index) = (
        dir.path().join("keys.bin"),
        dir.path().join("sorted.bin"),
        dir.path().join("sorted.npy"),
        dir.path().join("idx.npy"),
    );
    write_raw(&raw, &input);
    for backend in ["cpu", "auto"] {
        let args = [s(&raw), s(&raw_out), "--dtype", "i64", "--row-len", "12"];
        sort_ok(&[&args[..], &["--order", "desc", "--backend", backend]].concat());
        assert_eq!(read_raw::<i64>(&raw_out), rows_sorted(&input, 12, "desc"));

        // A .npy output gets the rows' shape, and so does the permutation.
        let args = [s(&raw), s(&npy_out), "--dtype", "i64", "--row-len", "12"];
        sort_ok(&[&args[..], &["--argsort", s(&index), "--backend", backend]].concat());
        let (sorted, perm) = (read_npy(&npy_out), Some(read_npy(&index)));
        check_rows_written(&input, &[35, 12], sorted, perm, "asc", backend);
    }
    // A 1-D .npy is read as rows too; a 2-D one takes its own row length.
    let (npy_in, matrix_in) = (dir.path().join("keys.npy"), dir.path().join("m.npy"));
    write_npy(&npy_in, &input);
    sort_ok(&[
        s(&npy_in),
        s(&npy_out),
        "--row-len",
        "35",
        "--backend",
        "cpu",
    ]);
    check_rows_written(
        &input,
        &[12, 35],
        read_npy(&npy_out),
        None,
        "asc",
        "1-D npy",
    );
    write_npy_shaped(&matrix_in, &input, &[35, 12]);
    sort_ok(&[
        s(&matrix_in),
        s(&npy_out),
        "--row-len",
        "12",
        "--backend",
        "cpu",
    ]);
    check_rows_written(
        &input,
        &[35, 12],
        read_npy(&npy_out),
        None,
        "asc",
        "2-D npy",
    );
}

#[test]
fn empty_rows_and_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output, index) = (
        dir.path().join("in.npy"),
        dir.path().join("out.npy"),
        dir.path().join("idx.npy"),
    );
    for shape in [
        &[4u64, 0][..],
        &[0, 5],
        &[0, 0],
        &[2, 3, 0],
        &[0, 2, 3],
        &[3, 1],
    ] {
        let keys: Vec<u32> = keys(shape.iter().product::<u64>() as usize, 8);
        write_npy_shaped(&input, &keys, shape);
        for backend in ["cpu", "auto"] {
            let args = [s(&input), s(&output), "--argsort", s(&index)];
            sort_ok(&[&args[..], &["--backend", backend]].concat());
            let perm = Some(read_npy(&index));
            let what = format!("{shape:?} {backend}");
            check_rows_written(&keys, shape, read_npy(&output), perm, "asc", &what);
        }
    }
}

#[test]
fn rows_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("matrix.npy");
    let input = keys::<f64>(40 * 25, 9);
    write_npy_shaped(&path, &input, &[40, 25]);
    sort_ok(&[s(&path), s(&path), "--in-place", "--order", "desc"]);
    check_rows_written(&input, &[40, 25], read_npy(&path), None, "desc", "in place");
    assert_eq!(
        entries(dir.path()),
        BTreeSet::from(["matrix.npy".to_string()])
    );
}

#[test]
fn row_len_that_does_not_fit_the_input() {
    let (dir, input, output) = setup();
    refused(
        dir.path(),
        &[s(&input), s(&output), "--row-len", "7"],
        "--row-len 7 does not divide the 100 keys of",
    );
    let raw = dir.path().join("keys.bin");
    fs::write(&raw, [0u8; 40]).unwrap();
    refused(
        dir.path(),
        &[s(&raw), s(&output), "--dtype", "u32", "--row-len", "3"],
        "--row-len 3 does not divide the 10 keys of",
    );
    let matrix = dir.path().join("matrix.npy");
    write_npy_shaped(&matrix, &keys::<u32>(12, 1), &[3, 4]);
    refused(
        dir.path(),
        &[s(&matrix), s(&output), "--row-len", "3"],
        "--row-len 3 does not match",
    );
    let stderr = refused(
        dir.path(),
        &[s(&matrix), s(&output), "--row-len", "12"],
        "shape (3, 4) has rows of 4 keys",
    );
    assert!(stderr.contains("matrix.npy"), "{stderr}");
    let stderr = refused(
        dir.path(),
        &[s(&matrix), s(&output), "--row-len", "0"],
        "invalid value",
    );
    assert!(stderr.contains("--row-len"), "{stderr}");
}

#[test]
fn algo_is_refused_with_rows() {
    let (dir, _, output) = setup();
    let matrix = dir.path().join("matrix.npy");
    write_npy_shaped(&matrix, &keys::<u32>(12, 1), &[3, 4]);
    for algo in ["merge", "radix", "bitonic"] {
        refused(
            dir.path(),
            &[s(&matrix), s(&output), "--algo", algo],
            &format!("--algo {algo} applies to 1-D inputs"),
        );
    }
    let raw = dir.path().join("keys.bin");
    fs::write(&raw, [0u8; 48]).unwrap();
    refused(
        dir.path(),
        &[
            s(&raw),
            s(&output),
            "--dtype",
            "u32",
            "--row-len",
            "4",
            "--algo",
            "merge",
        ],
        "always sorted by the segmented sort",
    );
}
