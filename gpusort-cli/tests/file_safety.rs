//! `gpusort sort` never damages what is there and never leaves debris: outputs that are not
//! regular files, symbolic links, owners and modes, interruptions by signals, memory limits, a
//! closed stdout, streams and devices as inputs, and `.npy` headers by numpy's rules. Each case
//! checks the exit code, that OUT is the old file or the complete result, and that no temporary
//! file is left.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn bin() -> String {
    std::env::var("GPUSORT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpusort").into())
}

fn gpusort(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("runs")
}

fn s(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn entries(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// A `.npy` (version 1.0) with the header dict `dict` and `data` after it.
fn npy_with_dict(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = dict.to_string();
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

fn u32_npy(keys: &[u32]) -> Vec<u8> {
    let data: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    npy_with_dict(
        &format!(
            "{{'descr': '<u4', 'fortran_order': False, 'shape': ({},), }}",
            keys.len()
        ),
        &data,
    )
}

/// The u32 keys of a `.npy` file's bytes (None if it is not one of `<u4` keys).
fn npy_keys(bytes: &[u8]) -> Option<Vec<u32>> {
    if !bytes.starts_with(b"\x93NUMPY\x01\x00") || bytes.len() < 10 {
        return None;
    }
    let start = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(bytes.get(10..start)?).ok()?;
    if !header.contains("'<u4'") {
        return None;
    }
    let data = &bytes[start..];
    Some(
        data.as_chunks::<4>()
            .0
            .iter()
            .map(|c| u32::from_le_bytes(*c))
            .collect(),
    )
}

/// Whether `path` holds exactly the sorted keys `expected`.
fn holds(path: &Path, expected: &[u32]) -> bool {
    fs::read(path)
        .ok()
        .and_then(|b| npy_keys(&b))
        .is_some_and(|k| k == expected)
}

/// `n` pseudo-random u32 keys.
fn keys(n: usize) -> Vec<u32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
        })
        .collect()
}

/// A directory with `in.npy` (`n` keys); its path, and the keys `out.npy` must hold once sorted.
fn setup(n: usize) -> (tempfile::TempDir, PathBuf, Vec<u32>) {
    let dir = tempfile::tempdir().unwrap();
    let input = keys(n);
    let path = dir.path().join("in.npy");
    fs::write(&path, u32_npy(&input)).unwrap();
    let mut sorted = input;
    sorted.sort_unstable();
    (dir, path, sorted)
}

/// Checks a refused run: exit code 2, `needle` in the one-line message, no panic.
fn assert_refused(out: &Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "{needle:?} not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Outputs that are not regular files

#[test]
fn device_fifo_socket_and_directory_outputs_are_refused_and_untouched() {
    let (dir, input, _) = setup(100);
    let d = dir.path();

    let node = d.join("mynull");
    let made = Command::new("mknod")
        .args(["-m", "666", s(&node), "c", "1", "3"])
        .status();
    if made.is_ok_and(|s| s.success()) {
        let out = gpusort(&["sort", s(&input), s(&node), "--backend", "cpu"]);
        assert_refused(&out, "mynull: it is a character device, not a regular file");
        assert!(
            fs::symlink_metadata(&node)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        eprintln!("skipped the device node: mknod is not allowed here");
    }
    let out = gpusort(&["sort", s(&input), "/dev/null", "--backend", "cpu"]);
    assert_refused(&out, "/dev/null: it is a character device");
    assert!(
        fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );

    let fifo = d.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = gpusort(&["sort", s(&input), s(&fifo), "--backend", "cpu"]);
    assert_refused(&out, "fifo: it is a FIFO (named pipe), not a regular file");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

    let socket = d.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let out = gpusort(&["sort", s(&input), s(&socket), "--backend", "cpu"]);
    assert_refused(&out, "sock: it is a socket");
    assert!(
        fs::symlink_metadata(&socket)
            .unwrap()
            .file_type()
            .is_socket()
    );

    let before = entries(d);
    let out = gpusort(&["sort", s(&input), &format!("{}/new.npy/", s(d))]);
    assert_refused(&out, "a name ending in '/' names a directory");
    assert_eq!(entries(d), before);
}

#[test]
fn a_symlinked_output_replaces_the_file_it_points_to() {
    let (dir, input, expected) = setup(1000);
    let target = dir.path().join("target.npy");
    fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.npy");
    std::os::unix::fs::symlink("target.npy", &link).unwrap();
    let out = gpusort(&["sort", s(&input), s(&link), "--backend", "cpu"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("link.npy is a symbolic link"));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        holds(&target, &expected),
        "{} is not the sorted keys",
        target.display()
    );

    let dangling = dir.path().join("dangling.npy");
    std::os::unix::fs::symlink("nowhere.npy", &dangling).unwrap();
    let out = gpusort(&["sort", s(&input), s(&dangling), "--backend", "cpu"]);
    assert_refused(&out, "symbolic link to a file that does not exist");
    assert!(!dir.path().join("nowhere.npy").exists());
    assert_eq!(
        entries(dir.path()),
        BTreeSet::from(["in.npy", "target.npy", "link.npy", "dangling.npy"].map(String::from))
    );
}

#[test]
fn in_place_through_a_symlink_sorts_the_file_it_points_to() {
    let (dir, input, expected) = setup(1000);
    let link = dir.path().join("link.npy");
    std::os::unix::fs::symlink("in.npy", &link).unwrap();
    let out = gpusort(&["sort", s(&link), s(&link), "--in-place", "--backend", "cpu"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("replacing the file it points to"));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        holds(&input, &expected),
        "{} is not the sorted keys",
        input.display()
    );
    assert_eq!(
        entries(dir.path()),
        BTreeSet::from(["in.npy", "link.npy"].map(String::from))
    );
}

#[test]
fn replacing_an_output_keeps_its_mode_and_owner_and_unlinks_hard_links() {
    let (dir, input, expected) = setup(1000);
    let output = dir.path().join("out.npy");
    fs::write(&output, b"old").unwrap();
    fs::set_permissions(&output, fs::Permissions::from_mode(0o640)).unwrap();
    let other_owner = std::os::unix::fs::chown(&output, Some(1234), Some(4321)).is_ok();
    let hard = dir.path().join("hard.npy");
    fs::hard_link(&output, &hard).unwrap();
    let out = gpusort(&["sort", s(&input), s(&output), "--backend", "cpu"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = fs::metadata(&output).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o640);
    if other_owner {
        assert_eq!((meta.uid(), meta.gid()), (1234, 4321));
    }
    assert!(
        holds(&output, &expected),
        "{} is not the sorted keys",
        output.display()
    );
    // The README says so: other hard links keep the old contents.
    assert_eq!(fs::read(&hard).unwrap(), b"old");
}

#[test]
fn stale_temporaries_of_the_outputs_pattern_are_removed() {
    let (dir, input, expected) = setup(100);
    let stale = dir.path().join(".out.npy.Ab12Cd.tmp");
    let other = dir.path().join(".other.npy.Ab12Cd.tmp");
    for path in [&stale, &other] {
        fs::write(path, b"left by a killed run").unwrap();
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
            .unwrap();
    }
    let output = dir.path().join("out.npy");
    let out = gpusort(&["sort", s(&input), s(&output), "--backend", "cpu"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        holds(&output, &expected),
        "{} is not the sorted keys",
        output.display()
    );
    assert!(!stale.exists());
    assert!(
        other.exists(),
        "another output's file is not ours to remove"
    );
}

// ---------------------------------------------------------------------------------------------
// Interruptions

/// Kills a sort of `n` keys with `signal` after each delay, and checks what is left: `out.npy`
/// the old file or the complete result, nothing else new, the exit code the signal's.
fn interrupt(signal: i32, expected_code: Option<i32>) {
    let (dir, input, expected) = setup(1 << 23);
    let output = dir.path().join("out.npy");
    let mut saw_interrupted = false;
    for delay_ms in [0u64, 20, 60, 150, 300, 600, 1200] {
        fs::write(&output, b"old").unwrap();
        let mut child: Child = Command::new(bin())
            .args(["sort", s(&input), s(&output), "--backend", "cpu"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        // SAFETY: a signal to the child this test started and has not yet reaped.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        let old = fs::read(&output).unwrap() == b"old";
        let complete = holds(&output, &expected);
        assert!(
            old || complete,
            "signal {signal} after {delay_ms} ms: out.npy is neither the old file nor the result"
        );
        assert_eq!(
            entries(dir.path()),
            BTreeSet::from(["in.npy", "out.npy"].map(String::from)),
            "signal {signal} after {delay_ms} ms left debris"
        );
        use std::os::unix::process::ExitStatusExt;
        if status.success() {
            assert!(complete);
        } else {
            saw_interrupted = true;
            match expected_code {
                // Killed by the signal itself only when it came before the handlers were
                // installed, at start-up, before any file was touched.
                Some(code) => assert!(
                    status.code() == Some(code) || status.signal() == Some(signal),
                    "{status:?}"
                ),
                None => assert_eq!(status.signal(), Some(signal), "{status:?}"),
            }
        }
    }
    assert!(
        saw_interrupted,
        "no run was interrupted: the sort is too quick to test"
    );
}

#[test]
fn sigint_removes_the_temporary_file_and_exits_130() {
    interrupt(2, Some(130));
}

#[test]
fn sigterm_removes_the_temporary_file_and_exits_143() {
    interrupt(15, Some(143));
}

#[test]
fn sigkill_leaves_nothing_visible() {
    interrupt(9, None);
}

// ---------------------------------------------------------------------------------------------
// Memory

/// Runs `gpusort ARGS…` with its address space limited to `kib` KiB.
fn with_ulimit_v(kib: u64, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

#[test]
fn a_sort_that_does_not_fit_the_process_limits_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("keys.bin");
    // Sparse: 1 GiB of zero u64 keys without the disk space.
    File::create(&input).unwrap().set_len(1 << 30).unwrap();
    let output = dir.path().join("out.npy");
    let index = dir.path().join("idx.npy");
    let args = [
        "sort",
        s(&input),
        s(&output),
        "--dtype",
        "u64",
        "--backend",
        "cpu",
        "--argsort",
        s(&index),
    ];
    let out = with_ulimit_v(768 << 10, &args, &[]);
    assert_refused(&out, "not enough memory: sorting ");
    assert!(stderr(&out).contains("RLIMIT_AS"), "{}", stderr(&out));
    assert!(stderr(&out).contains("bytes"), "{}", stderr(&out));
    assert_eq!(
        entries(dir.path()),
        BTreeSet::from(["keys.bin".to_string()])
    );

    // With the check skipped, the failing allocation is still a clean error.
    let out = with_ulimit_v(768 << 10, &args, &[("GPUSORT_NO_MEMORY_CHECK", "1")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("memory"), "{err}");
    assert_eq!(
        entries(dir.path()),
        BTreeSet::from(["keys.bin".to_string()])
    );
}

/// More threads asked for than the process can start (512 stacks of 2 MiB under 768 MiB of
/// address space, as a machine of many cores under a memory limit has): the pool starts with
/// fewer, and the sort runs.
#[test]
fn more_threads_than_the_process_limits_allow_start_fewer() {
    let (dir, input, sorted) = setup(1 << 20);
    let output = dir.path().join("out.npy");
    let args = ["sort", s(&input), s(&output), "--backend", "cpu"];
    let out = with_ulimit_v(768 << 10, &args, &[("RAYON_NUM_THREADS", "512")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(holds(&output, &sorted));
}

#[test]
fn the_main_job_and_bench_check_the_process_limits() {
    let out = with_ulimit_v(
        1 << 20,
        &["--n", "536870912", "--dtype", "u64", "--backend", "cpu"],
        &[],
    );
    assert_refused(&out, "--n 536870912 is too large for host memory");
    assert!(stderr(&out).contains("RLIMIT_AS"), "{}", stderr(&out));
    let dir = tempfile::tempdir().unwrap();
    let out = with_ulimit_v(
        1 << 20,
        &[
            "bench",
            "--min-log2",
            "28",
            "--max-log2",
            "28",
            "--cpu-max-log2",
            "28",
            "--algos",
            "cpu_std",
            "--dtypes",
            "u64",
            "--out",
            s(dir.path()),
        ],
        &[],
    );
    assert_refused(&out, "not enough memory: the sweep at 2^28 keys");
}

// ---------------------------------------------------------------------------------------------
// Standard output

#[test]
fn a_full_stdout_is_an_error_after_the_output_is_complete() {
    let (dir, input, expected) = setup(1000);
    let output = dir.path().join("out.npy");
    let out = Command::new(bin())
        .args(["sort", s(&input), s(&output), "--backend", "cpu"])
        .stdout(File::options().write(true).open("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_refused(&out, "writing the report to standard output");
    assert!(
        holds(&output, &expected),
        "{} is not the sorted keys",
        output.display()
    );
}

// ---------------------------------------------------------------------------------------------
// Reading

#[test]
fn standard_input_and_pipes_are_read_as_streams() {
    let (dir, input, expected) = setup(5000);
    let output = dir.path().join("out.npy");
    let mut child = Command::new(bin())
        .args(["sort", "-", s(&output), "--backend", "cpu"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&fs::read(&input).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        holds(&output, &expected),
        "{} is not the sorted keys",
        output.display()
    );
}

#[test]
fn character_devices_are_refused_as_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.bin");
    let out = gpusort(&["sort", "/dev/zero", s(&output), "--dtype", "u32"]);
    assert_refused(&out, "/dev/zero is a character device, not a file of keys");
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_fifo_without_a_writer_says_it_waits() {
    let (dir, input, expected) = setup(1000);
    let fifo = dir.path().join("keys.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let output = dir.path().join("out.npy");
    let child = Command::new(bin())
        .args([
            "sort",
            s(&fifo),
            s(&output),
            "--format",
            "npy",
            "--backend",
            "cpu",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    fs::write(&fifo, fs::read(&input).unwrap()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("waiting for a writer to open the FIFO"));
    assert!(
        holds(&output, &expected),
        "{} is not the sorted keys",
        output.display()
    );
}

#[test]
fn format_raw_on_a_npy_name_says_why_it_is_raw() {
    let (dir, input, _) = setup(10);
    let out = gpusort(&[
        "sort",
        s(&input),
        s(&dir.path().join("o.bin")),
        "--format",
        "raw",
    ]);
    assert_refused(&out, "in.npy is read as a raw file (--format raw)");
}

// ---------------------------------------------------------------------------------------------
// .npy headers by numpy's rules

#[test]
fn npy_headers_follow_numpys_rules() {
    let dir = tempfile::tempdir().unwrap();
    let (file, output) = (dir.path().join("h.npy"), dir.path().join("out.npy"));
    let data: Vec<u8> = [3u32, 1, 2].iter().flat_map(|k| k.to_le_bytes()).collect();
    let refused = |dict: &str, data: &[u8], needle: &str| {
        fs::write(&file, npy_with_dict(dict, data)).unwrap();
        let out = gpusort(&["sort", s(&file), s(&output), "--backend", "cpu"]);
        assert_refused(&out, needle);
        assert_eq!(
            stderr(&out).trim_end().lines().count(),
            1,
            "{}",
            stderr(&out)
        );
        assert!(!output.exists());
    };
    refused(
        "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
        &data,
        "not exactly 'descr', 'fortran_order' and 'shape'",
    );
    refused(
        "{'descr': '<u4', 'fortran_order': False, 'shape': [3]}",
        &data,
        "shape is a list, not a tuple",
    );
    refused(
        "{'descr': '<u4', 'fortran_order': 0, 'shape': (3,)}",
        &data,
        "fortran_order is an int, not a bool",
    );
    refused(
        "[1, 2, 3]",
        &data,
        "the header is a list in Python, not a dict",
    );
    refused("{'descr': '<u4', 'fortran_order'", &data, "bad .npy header");
    let huge = "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }";
    fs::write(&file, npy_with_dict(huge, &[])).unwrap();
    let out = gpusort(&["sort", s(&file), s(&output), "--backend", "cpu"]);
    assert_refused(&out, "needs more than 2^64 bytes");
    assert!(!stderr(&out).contains("18446744073709551615"));

    // numpy loads a 1-D array saved in Fortran order like any other.
    fs::write(
        &file,
        npy_with_dict(
            "{'descr': '<u4', 'fortran_order': True, 'shape': (3,), }",
            &data,
        ),
    )
    .unwrap();
    let out = gpusort(&["sort", s(&file), s(&output), "--backend", "cpu"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(holds(&output, &[1, 2, 3]));
}
