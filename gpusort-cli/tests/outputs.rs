//! A run's outputs as a reader of the directory sees them (issue 56): OUT and IDX of
//! `sort --argsort` become visible together or not at all, whatever signal comes at whatever
//! moment, and the message and exit code say which; standard output as an output; the naming and
//! `--format` rules of every output; one-line errors; flags that agree accepted and flags that
//! contradict refused up front; the grammar of the reports; and the progress bars.
//!
//! Interruptions at chosen moments use the test hook `GPUSORT_TEST_SIGNAL_AT=POINT[:SIGNAL]`,
//! which makes the binary send itself the signal at a named point of the run (see
//! `gpusort_cli::cleanup::test_point`), so that no test depends on timing luck; the random-time
//! test asserts only what holds at every moment.

use std::collections::BTreeSet;
use std::ffi::CStr;
use std::fs::{self, File};
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn bin() -> String {
    std::env::var("GPUSORT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpusort").into())
}

fn gpusort(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("runs")
}

fn gpusort_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(bin())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("runs")
}

fn s(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn entries(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|n| n.to_string()).collect()
}

/// A `.npy` (version 1.0) of `descr` keys of shape (n,), with `data` after the header.
fn npy(descr: &str, n: usize, data: &[u8]) -> Vec<u8> {
    npy_shaped(descr, &format!("({n},)"), data)
}

/// A `.npy` (version 1.0) of `descr` keys of shape `shape` (as Python writes it).
fn npy_shaped(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
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

/// The data of a `.npy` file's bytes (after the header) and its header text.
fn npy_data(bytes: &[u8]) -> Option<(String, &[u8])> {
    if !bytes.starts_with(b"\x93NUMPY\x01\x00") || bytes.len() < 10 {
        return None;
    }
    let start = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(bytes.get(10..start)?).ok()?.to_string();
    Some((header, &bytes[start..]))
}

/// `n` pseudo-random u32 keys with many repeats (so that a stable permutation shows).
fn keys(n: usize) -> Vec<u32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32 % 1000
        })
        .collect()
}

/// The keys of a run: INPUT's bytes, and the sorted keys' and the stable permutation's data.
struct Case {
    dir: tempfile::TempDir,
    input: PathBuf,
    out: PathBuf,
    idx: PathBuf,
    sorted: Vec<u8>,
    perm: Vec<u8>,
}

fn case(n: usize) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let input = keys(n);
    let path = dir.path().join("in.npy");
    let data: Vec<u8> = input.iter().flat_map(|k| k.to_le_bytes()).collect();
    fs::write(&path, npy("<u4", n, &data)).unwrap();
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by_key(|&i| input[i]);
    Case {
        out: dir.path().join("out.npy"),
        idx: dir.path().join("idx.npy"),
        input: path,
        sorted: perm.iter().flat_map(|&i| input[i].to_le_bytes()).collect(),
        perm: perm
            .iter()
            .flat_map(|&i| (i as i64).to_le_bytes())
            .collect(),
        dir,
    }
}

impl Case {
    fn argsort(&self) -> Vec<&str> {
        vec![
            "sort",
            s(&self.input),
            s(&self.out),
            "--argsort",
            s(&self.idx),
            "--backend",
            "cpu",
        ]
    }

    /// Whether OUT and IDX hold the complete results.
    fn new_out(&self) -> bool {
        fs::read(&self.out).ok().is_some_and(|b| {
            npy_data(&b).is_some_and(|(h, d)| h.contains("'<u4'") && d == self.sorted)
        })
    }

    fn new_idx(&self) -> bool {
        fs::read(&self.idx).ok().is_some_and(|b| {
            npy_data(&b).is_some_and(|(h, d)| h.contains("'<i8'") && d == self.perm)
        })
    }

    /// Writes the old outputs.
    fn old(&self) {
        fs::write(&self.out, b"old out").unwrap();
        fs::write(&self.idx, b"old idx").unwrap();
    }

    fn old_out(&self) -> bool {
        fs::read(&self.out).is_ok_and(|b| b == b"old out")
    }

    fn old_idx(&self) -> bool {
        fs::read(&self.idx).is_ok_and(|b| b == b"old idx")
    }
}

/// The points of a run, in order, and whether the outputs are in place (the commit begun, so
/// that the run ends as done) from each on. The journal is written before the first rename.
const POINTS: [(&str, bool); 10] = [
    ("reading", false),
    ("sorted", false),
    ("written", false),
    ("staged-1", false),
    ("staged-2", false),
    ("journal", true),
    ("renamed-1", true),
    ("renamed-2", true),
    ("committed", true),
    ("reported", true),
];

const SIGNALS: [(&str, i32, &str); 3] = [
    ("SIGINT", 2, "interrupted (SIGINT)"),
    ("SIGTERM", 15, "terminated (SIGTERM)"),
    ("SIGHUP", 1, "hung up (SIGHUP)"),
];

// ---------------------------------------------------------------------------------------------
// Outputs committed together

#[test]
fn argsort_interrupted_at_every_point_leaves_out_and_idx_both_old_or_both_new() {
    let c = case(20_000);
    for (signal, number, said) in SIGNALS {
        for (point, done) in POINTS {
            c.old();
            let hook = format!("{point}:{signal}");
            let run = gpusort_env(&c.argsort(), &[("GPUSORT_TEST_SIGNAL_AT", &hook)]);
            let err = stderr(&run);
            let at = format!("{signal} at {point}");
            if done {
                assert!(c.new_out() && c.new_idx(), "{at}: not both new: {err}");
                assert_eq!(run.status.code(), Some(0), "{at}: {err}");
                let message = format!(
                    "gpusort: {signal} came after the run was done: {} and {} hold its complete \
                     results",
                    s(&c.out),
                    s(&c.idx)
                );
                assert!(err.contains(&message), "{at}: {err}");
                assert!(!err.contains("no output was changed"), "{at}: {err}");
            } else {
                assert!(c.old_out() && c.old_idx(), "{at}: not both old: {err}");
                assert_eq!(run.status.code(), Some(128 + number), "{at}: {err}");
                assert!(
                    err.contains(&format!("gpusort: {said}; no output was changed")),
                    "{at}: {err}"
                );
                assert!(!err.contains("sorted"), "{at}: {err}");
            }
            assert_eq!(
                entries(c.dir.path()),
                names(&["in.npy", "out.npy", "idx.npy"]),
                "{at} left a temporary file"
            );
        }
    }
}

#[test]
fn new_outputs_interrupted_at_every_point_appear_together_or_not_at_all() {
    let c = case(5000);
    for (point, done) in POINTS {
        let _ = fs::remove_file(&c.out);
        let _ = fs::remove_file(&c.idx);
        let run = gpusort_env(&c.argsort(), &[("GPUSORT_TEST_SIGNAL_AT", point)]);
        let err = stderr(&run);
        if done {
            assert!(c.new_out() && c.new_idx(), "{point}: {err}");
            assert_eq!(run.status.code(), Some(0), "{point}: {err}");
        } else {
            assert!(!c.out.exists() && !c.idx.exists(), "{point}: {err}");
            assert_eq!(run.status.code(), Some(130), "{point}: {err}");
            assert!(err.contains("no output was changed"), "{point}: {err}");
        }
        let expected: &[&str] = if done {
            &["in.npy", "out.npy", "idx.npy"]
        } else {
            &["in.npy"]
        };
        assert_eq!(entries(c.dir.path()), names(expected), "{point}");
    }
}

/// SIGKILL cannot be caught: killed at each point, a run leaves OUT and IDX both old (perhaps
/// with complete `.new` files), or the journal of its commit, which the next run writing in the
/// directory finishes; either way no hidden file is left after that run.
#[test]
fn argsort_killed_at_every_point_is_all_old_or_finished_by_the_next_run() {
    let c = case(5000);
    for (point, done) in POINTS {
        c.old();
        let hook = format!("{point}:SIGKILL");
        let run = gpusort_env(&c.argsort(), &[("GPUSORT_TEST_SIGNAL_AT", &hook)]);
        assert_eq!(run.status.signal(), Some(9), "{point}: {}", stderr(&run));
        let hidden: Vec<String> = entries(c.dir.path())
            .into_iter()
            .filter(|n| n.starts_with('.'))
            .collect();
        let journal = hidden.iter().any(|n| n.ends_with(".commit"));
        match point {
            "journal" => assert!(journal && c.old_out() && c.old_idx(), "{point}: {hidden:?}"),
            // The README says so: between the renames, OUT is new and IDX old until the next run.
            "renamed-1" => assert!(journal && c.new_out() && c.old_idx(), "{point}"),
            "renamed-2" => assert!(journal && c.new_out() && c.new_idx(), "{point}"),
            _ if done => assert!(hidden.is_empty() && c.new_out() && c.new_idx(), "{point}"),
            _ => {
                assert!(
                    !journal && c.old_out() && c.old_idx(),
                    "{point}: {hidden:?}"
                );
                assert!(
                    hidden
                        .iter()
                        .all(|n| n.ends_with(".new") && n.contains("npy.")),
                    "{point}: {hidden:?}"
                );
            }
        }
        // The next run that writes there, even one that then fails, settles it.
        let missing = c.dir.path().join("missing.npy");
        let next = gpusort(&["sort", s(&missing), s(&c.out), "--argsort", s(&c.idx)]);
        let err = stderr(&next);
        assert_eq!(next.status.code(), Some(2), "{point}: {err}");
        assert!(err.contains("missing.npy does not exist"), "{point}: {err}");
        assert_eq!(
            err.contains("finished the commit of an earlier run that was killed"),
            matches!(point, "journal" | "renamed-1"),
            "{point}: {err}"
        );
        if done {
            assert!(c.new_out() && c.new_idx(), "{point}: {err}");
        } else {
            assert!(c.old_out() && c.old_idx(), "{point}: {err}");
        }
        assert_eq!(
            entries(c.dir.path()),
            names(&["in.npy", "out.npy", "idx.npy"]),
            "{point}: left behind"
        );
    }
}

/// Signals at whatever moment the clock gives: only what holds at every moment is asserted.
#[test]
fn random_time_interrupts_never_split_out_and_idx() {
    let c = case(1 << 23);
    let mut outcomes = Vec::new();
    for delay_ms in [
        0u64, 5, 20, 50, 100, 150, 200, 300, 400, 500, 650, 800, 1000, 1500,
    ] {
        c.old();
        let child = Command::new(bin())
            .args(c.argsort())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        // SAFETY: a signal to the child this test started and has not yet reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let run = child.wait_with_output().unwrap();
        let err = stderr(&run);
        let at = format!("SIGINT after {delay_ms} ms");
        let (old, new) = (c.old_out() && c.old_idx(), c.new_out() && c.new_idx());
        assert!(old || new, "{at}: OUT and IDX split: {err}");
        match run.status.code() {
            Some(0) => assert!(new, "{at}: {err}"),
            Some(130) => {
                assert!(old, "{at}: {err}");
                assert!(err.contains("no output was changed"), "{at}: {err}");
            }
            // Before the handlers were installed, at start-up: killed by the signal itself.
            None => assert!(old && run.status.signal() == Some(2), "{at}: {err}"),
            Some(code) => panic!("{at}: exit code {code}: {err}"),
        }
        outcomes.push((delay_ms, run.status.code()));
        assert_eq!(
            entries(c.dir.path()),
            names(&["in.npy", "out.npy", "idx.npy"]),
            "{at} left a temporary file"
        );
    }
    // Which runs the signal cut short depends on the machine's speed: said, not asserted.
    eprintln!("delay (ms) and exit code: {outcomes:?}");
}

#[test]
fn topk_outputs_are_committed_together_too() {
    let c = case(3000);
    for (point, done) in POINTS {
        c.old();
        let run = gpusort_env(
            &[
                "topk",
                "5",
                s(&c.input),
                s(&c.out),
                "--indices",
                s(&c.idx),
                "--backend",
                "cpu",
            ],
            &[("GPUSORT_TEST_SIGNAL_AT", point)],
        );
        let err = stderr(&run);
        let (old, changed) = (c.old_out() && c.old_idx(), !c.old_out() && !c.old_idx());
        assert!(if done { changed } else { old }, "{point}: {err}");
        assert_eq!(
            run.status.code(),
            Some(if done { 0 } else { 130 }),
            "{point}"
        );
        assert_eq!(
            entries(c.dir.path()),
            names(&["in.npy", "out.npy", "idx.npy"]),
            "{point}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Standard output

/// A pipe whose reader is gone: its writing end, for a child's stdout.
fn broken_pipe() -> OwnedFd {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two descriptors, which are then owned here.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just opened and belong to nobody else.
    unsafe {
        libc::close(fds[0]);
        OwnedFd::from_raw_fd(fds[1])
    }
}

#[test]
fn dash_writes_the_npy_to_standard_output_and_the_report_to_stderr() {
    let c = case(1000);
    let file = gpusort(&["sort", s(&c.input), s(&c.out), "--backend", "cpu"]);
    assert!(file.status.success(), "{}", stderr(&file));
    let expected = fs::read(&c.out).unwrap();
    fs::remove_file(&c.out).unwrap();

    let run = gpusort(&["sort", s(&c.input), "-", "--backend", "cpu"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(run.stdout, expected);
    assert!(
        stderr(&run).contains("gpusort: sorted 1000 u32 keys ascending from")
            && stderr(&run).contains("into standard output on the CPU"),
        "{}",
        stderr(&run)
    );
    assert_eq!(entries(c.dir.path()), names(&["in.npy"]), "no file named -");

    // /dev/stdout, /dev/fd/1 and a link to them are standard output too: into a pipe, and into
    // a file whose name says nothing (the stream is a .npy).
    for name in ["/dev/stdout", "/dev/fd/1"] {
        let run = gpusort(&["sort", s(&c.input), name, "--backend", "cpu"]);
        assert!(run.status.success(), "{name}: {}", stderr(&run));
        assert_eq!(run.stdout, expected, "{name}");
    }
    let redirected = c.dir.path().join("redirected");
    let run = Command::new(bin())
        .args(["sort", s(&c.input), "/dev/stdout", "--backend", "cpu"])
        .stdout(File::create(&redirected).unwrap())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(fs::read(&redirected).unwrap(), expected);
    let link = c.dir.path().join("link.npy");
    std::os::unix::fs::symlink("/dev/stdout", &link).unwrap();
    let run = gpusort(&["sort", s(&c.input), s(&link), "--backend", "cpu"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(run.stdout, expected);

    // Standard input to standard output: a filter.
    let run = Command::new(bin())
        .args(["sort", "-", "-", "--backend", "cpu"])
        .stdin(File::open(&c.input).unwrap())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(run.stdout, expected);

    // --format raw: the keys alone.
    let run = gpusort(&[
        "sort",
        s(&c.input),
        "-",
        "--format",
        "npy",
        "--backend",
        "cpu",
    ]);
    assert_eq!(run.stdout, expected);
    let raw_in = c.dir.path().join("in.bin");
    fs::write(&raw_in, npy_data(&fs::read(&c.input).unwrap()).unwrap().1).unwrap();
    let run = gpusort(&[
        "sort",
        s(&raw_in),
        "-",
        "--format",
        "raw",
        "--dtype",
        "u32",
        "--backend",
        "cpu",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(run.stdout, c.sorted);
}

#[test]
fn dash_as_idx_streams_the_permutation_beside_a_file() {
    let c = case(1000);
    let run = gpusort(&[
        "sort",
        s(&c.input),
        s(&c.out),
        "--argsort",
        "-",
        "--backend",
        "cpu",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(c.new_out());
    let (header, data) = npy_data(&run.stdout).expect("a .npy on stdout");
    assert!(header.contains("'<i8'") && data == c.perm, "{header}");
    assert!(
        stderr(&run).contains("(permutation: standard output)"),
        "{}",
        stderr(&run)
    );

    let run = gpusort(&[
        "topk",
        "3",
        s(&c.input),
        "-",
        "--indices",
        s(&c.idx),
        "--backend",
        "cpu",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (header, data) = npy_data(&run.stdout).expect("a .npy on stdout");
    assert!(
        header.contains("'<u4'") && data == &c.sorted[..12],
        "{header}"
    );
    assert!(stderr(&run).contains("gpusort: selected the 3 smallest keys"));
}

#[test]
fn a_stream_that_cannot_be_written_changes_no_file() {
    let c = case(1000);
    c.old();
    let run = Command::new(bin())
        .args([
            "sort",
            s(&c.input),
            "-",
            "--argsort",
            s(&c.idx),
            "--backend",
            "cpu",
        ])
        .stdout(broken_pipe())
        .output()
        .unwrap();
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot write the keys to standard output"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(c.old_idx(), "IDX was replaced though OUT failed");
    assert_eq!(
        entries(c.dir.path()),
        names(&["in.npy", "out.npy", "idx.npy"])
    );
}

#[test]
fn streams_that_cannot_be_outputs_are_refused_up_front() {
    let c = case(100);
    for (args, needle) in [
        (
            vec!["sort", s(&c.input), "-", "--argsort", "-"],
            "OUTPUT and --argsort are both standard output",
        ),
        (
            vec!["topk", "1", s(&c.input), "/dev/stdout", "--indices", "-"],
            "OUTPUT and --indices are both standard output",
        ),
        (
            vec!["sort", s(&c.input), "/dev/stderr"],
            "OUTPUT /dev/stderr is standard error",
        ),
        (
            vec!["sort", s(&c.input), s(&c.out), "--argsort", "/dev/fd/2"],
            "--argsort /dev/fd/2 is standard error",
        ),
        (
            vec!["sort", s(&c.input), "/dev/stdin"],
            "OUTPUT /dev/stdin is standard input",
        ),
        (
            vec!["sort", s(&c.input), "/dev/fd/7"],
            "OUTPUT /dev/fd/7 is the open file descriptor 7",
        ),
        (
            vec!["sort", "-", "-", "--in-place"],
            "--in-place replaces INPUT with its sorted keys, a file",
        ),
        (
            vec!["sort", s(&c.input), "-", "--in-place"],
            "--in-place replaces INPUT",
        ),
        (
            vec!["sort", s(&c.input), "/dev/null"],
            "/dev/null: it is a character device, not a regular file",
        ),
    ] {
        let run = Command::new(bin())
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(run.stdout.is_empty(), "{args:?}");
        assert_eq!(entries(c.dir.path()), names(&["in.npy"]), "{args:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Names and formats

#[test]
fn index_files_follow_the_name_and_format_in_sort_and_topk_alike() {
    let c = case(500);
    let d = c.dir.path();
    // sort --argsort: a .npy by its name, else raw int64; --format applies to it.
    for (idx, format, raw) in [
        ("idx.npy", None, false),
        ("idx.raw", None, true),
        ("idx", None, true),
        ("idx.raw", Some("npy"), false),
    ] {
        let path = d.join(idx);
        let out = d.join("o.npy");
        let mut args = vec![
            "sort",
            s(&c.input),
            s(&out),
            "--argsort",
            s(&path),
            "--backend",
            "cpu",
        ];
        if let Some(f) = format {
            args.extend(["--format", f]);
        }
        let run = gpusort(&args);
        assert!(run.status.success(), "{idx} {format:?}: {}", stderr(&run));
        let bytes = fs::read(&path).unwrap();
        if raw {
            assert_eq!(bytes, c.perm, "{idx} {format:?}: raw int64");
        } else {
            let (header, data) = npy_data(&bytes).unwrap();
            assert!(
                header.contains("'<i8'") && data == c.perm,
                "{idx} {format:?}"
            );
        }
        fs::remove_file(&path).unwrap();
    }
    // --format raw for every file of the run, IDX included, from raw keys.
    let raw_in = d.join("in.bin");
    fs::write(&raw_in, npy_data(&fs::read(&c.input).unwrap()).unwrap().1).unwrap();
    let (out, idx) = (d.join("o.npy"), d.join("i.npy"));
    let run = gpusort(&[
        "sort",
        s(&raw_in),
        s(&out),
        "--argsort",
        s(&idx),
        "--format",
        "raw",
        "--dtype",
        "u32",
        "--backend",
        "cpu",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(fs::read(&out).unwrap(), c.sorted);
    assert_eq!(fs::read(&idx).unwrap(), c.perm);

    // topk --indices: the same rule (u64 indices).
    for (idx, raw) in [("t.npy", false), ("t.raw", true), ("t", true)] {
        let path = d.join(idx);
        let run = gpusort(&[
            "topk",
            "2",
            s(&c.input),
            s(&d.join("top.npy")),
            "--indices",
            s(&path),
            "--backend",
            "cpu",
        ]);
        assert!(run.status.success(), "{idx}: {}", stderr(&run));
        let bytes = fs::read(&path).unwrap();
        assert_eq!(npy_data(&bytes).is_none(), raw, "{idx}");
    }
}

#[test]
fn numpy_looking_names_are_refused_rather_than_written_raw() {
    let c = case(100);
    let d = c.dir.path();
    for (args, needle) in [
        (
            vec!["sort", s(&c.input), s(&d.join("out.npz"))],
            "out.npz: a .npz name looks like a NumPy file but would be written as raw keys",
        ),
        (
            vec![
                "sort",
                s(&c.input),
                s(&c.out),
                "--argsort",
                s(&d.join("idx.NPZ")),
            ],
            "--argsort",
        ),
        (
            vec![
                "topk",
                "1",
                s(&c.input),
                s(&c.out),
                "--indices",
                s(&d.join("i.np")),
            ],
            "--indices",
        ),
        (
            vec!["sort", s(&c.input), s(&d.join("out.npy.gz"))],
            "a .npy.gz name looks like a NumPy file",
        ),
        (vec!["topk", "1", s(&d.join("k.npz")), s(&c.out)], "INPUT"),
    ] {
        let run = gpusort(&args);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.contains("name it .npy"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert_eq!(entries(d), names(&["in.npy"]), "{args:?}");
    }
    // Named explicitly, the format is the user's.
    let npz = d.join("raw.npz");
    let run = gpusort(&[
        "sort",
        s(&c.input),
        s(&npz),
        "--format",
        "npy",
        "--backend",
        "cpu",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(npy_data(&fs::read(&npz).unwrap()).is_some());
}

// ---------------------------------------------------------------------------------------------
// Errors: one line, naming the file or the flag

#[test]
fn every_error_is_one_line_naming_the_file_or_flag() {
    let c = case(10);
    let d = c.dir.path();
    let raw = d.join("keys.bin");
    fs::write(&raw, [0u8; 40]).unwrap();
    let matrix = d.join("m.npy");
    fs::write(&matrix, npy_shaped("<u4", "(2, 3)", &[0u8; 24])).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // clap's own errors
        (vec!["--n", "-5"], "invalid value '-5' for '--n <N>'"),
        (
            vec!["--dtype", "u16"],
            "invalid value 'u16' for '--dtype <DTYPE>'",
        ),
        (vec!["sort", s(&c.input)], "<OUTPUT>"),
        (
            vec!["sort", s(&c.input), s(&c.out), "--reverse"],
            "'--reverse'",
        ),
        (vec!["topk", "x", s(&c.input), s(&c.out)], "'<K>'"),
        (vec!["bench", "--max-log2", "40"], "'--max-log2 <MAX_LOG2>'"),
        (
            vec!["--baselines", "std", "--no-baselines"],
            "--no-baselines",
        ),
        // the row length: the same message from sort and topk
        (
            vec!["sort", s(&c.input), s(&c.out), "--row-len", "0"],
            "invalid value '0' for '--row-len <N>'",
        ),
        (
            vec!["topk", "1", s(&c.input), s(&c.out), "--row-len", "0"],
            "invalid value '0' for '--row-len <N>'",
        ),
        (
            vec![
                "sort",
                s(&raw),
                s(&c.out),
                "--dtype",
                "u32",
                "--row-len",
                "3",
            ],
            "--row-len 3 does not divide the 10 keys of",
        ),
        (
            vec![
                "topk",
                "1",
                s(&raw),
                s(&c.out),
                "--dtype",
                "u32",
                "--row-len",
                "3",
            ],
            "--row-len 3 does not divide the 10 keys of",
        ),
        (
            vec!["topk", "1", s(&matrix), s(&c.out), "--row-len", "2"],
            "--row-len 2 does not match",
        ),
        // k names K and the file
        (
            vec!["topk", "11", s(&c.input), s(&c.out), "--backend", "cpu"],
            "K = 11 is more than the 10 keys of",
        ),
        (
            vec!["topk", "4", s(&matrix), s(&c.out), "--backend", "cpu"],
            "K = 4 is more than the 3 keys of each row of",
        ),
        (
            vec!["topk", "0", s(&c.input), s(&c.out)],
            "K = 0: a top-k selects at least 1 key",
        ),
    ];
    for (args, needle) in cases {
        let run = gpusort(&args);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(err.starts_with("gpusort: error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {needle:?} not in {err}");
        assert!(!err.contains("Usage:"), "{args:?}: {err}");
        if needle.contains("K = ") || needle.contains("divide") || needle.contains("match") {
            let file = args
                .iter()
                .find(|a| a.contains(".npy") || a.contains(".bin"))
                .unwrap();
            assert!(err.contains(file), "{args:?}: the file is not named: {err}");
        }
    }
    // clap's errors say where to read more, for the subcommand at hand.
    let run = gpusort(&["topk", "1", s(&c.input), s(&c.out), "--row-len", "0"]);
    assert!(
        stderr(&run).contains("(see gpusort topk --help)"),
        "{}",
        stderr(&run)
    );
    // --help keeps the usage, on stdout, with exit code 0.
    for args in [vec!["--help"], vec!["sort", "--help"], vec!["topk", "-h"]] {
        let run = gpusort(&args);
        assert!(run.status.success(), "{args:?}");
        assert!(stdout(&run).contains("Usage: gpusort"), "{args:?}");
    }
}

#[test]
fn flags_that_agree_are_accepted_and_flags_that_contradict_are_refused_first() {
    let c = case(100);
    let run = gpusort(&[
        "topk",
        "3",
        s(&c.input),
        s(&c.out),
        "--largest",
        "--order",
        "desc",
        "--backend",
        "cpu",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        stdout(&run).contains("selected the 3 largest keys"),
        "{}",
        stdout(&run)
    );
    fs::remove_file(&c.out).unwrap();
    for (args, needle) in [
        (
            vec![
                "topk",
                "3",
                s(&c.input),
                s(&c.out),
                "--largest",
                "--order",
                "asc",
            ],
            "--largest selects the largest keys and --order asc the smallest",
        ),
        (
            vec!["--gpus", "1", "--backend", "cpu"],
            "--gpus 1 sorts on GPUs and --backend cpu on the CPU",
        ),
        (
            vec!["--devices", "0", "--backend", "cpu"],
            "--devices sorts on GPUs and --backend cpu on the CPU",
        ),
        (
            vec!["--algo", "radix", "--backend", "cpu"],
            "--algo radix names a GPU sort, and --backend cpu",
        ),
        (
            vec!["--exchange", "host", "--n", "10"],
            "--exchange applies to the sort across GPUs",
        ),
        (
            vec!["--baselines", "std,rayon,std", "--n", "10"],
            "--baselines names std twice",
        ),
        (
            vec![
                "sort",
                s(&c.input),
                s(&c.out),
                "--algo",
                "merge",
                "--backend",
                "cpu",
            ],
            "--algo merge names a GPU sort, and --backend cpu",
        ),
        (
            vec![
                "bench",
                "--backend",
                "cpu",
                "--rows",
                "16",
                "--out",
                s(&c.out),
            ],
            "--rows: the segmented sorts' sweep needs a GPU, and --backend cpu has none",
        ),
        (
            vec![
                "bench",
                "--backend",
                "cpu",
                "--segments",
                "--out",
                s(&c.out),
            ],
            "--segments: the segmented sorts' sweep needs a GPU",
        ),
        (
            vec!["bench", "--backend", "cpu", "--topk", "--out", s(&c.out)],
            "--topk: the top-k sweep needs a GPU",
        ),
        (
            vec![
                "bench",
                "--backend",
                "cpu",
                "--gpus",
                "2",
                "--out",
                s(&c.out),
            ],
            "--gpus: the multi-GPU sweep needs a GPU",
        ),
    ] {
        let run = gpusort(&args);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(stdout(&run).is_empty(), "{args:?}: refused before any work");
        assert_eq!(entries(c.dir.path()), names(&["in.npy"]), "{args:?}");
    }
}

#[test]
fn bench_out_that_is_a_file_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results");
    fs::write(&file, b"not a directory").unwrap();
    let run = gpusort(&[
        "bench",
        "--algos",
        "cpu_std",
        "--max-log2",
        "10",
        "--out",
        s(&file),
    ]);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "--out {}: it is a file, not a directory",
            s(&file)
        )),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    assert_eq!(fs::read(&file).unwrap(), b"not a directory");
}

// ---------------------------------------------------------------------------------------------
// Grammar

#[test]
fn reports_count_in_good_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = d.join("one.npy");
    fs::write(&one, npy("<u4", 1, &7u32.to_le_bytes())).unwrap();
    let out = d.join("o.npy");
    let run = gpusort(&["sort", s(&one), s(&out), "--backend", "cpu"]);
    assert!(
        stdout(&run).contains("gpusort: sorted 1 u32 key ascending"),
        "{}",
        stdout(&run)
    );
    let four = d.join("four.bin");
    fs::write(&four, [1u32, 4, 3, 2].map(u32::to_le_bytes).concat()).unwrap();
    let run = gpusort(&[
        "sort",
        s(&four),
        s(&out),
        "--dtype",
        "u32",
        "--row-len",
        "4",
        "--backend",
        "cpu",
    ]);
    assert!(
        stdout(&run).contains("gpusort: sorted 1 row of 4 u32 keys (shape (1, 4))"),
        "{}",
        stdout(&run)
    );
    let run = gpusort(&[
        "topk",
        "1",
        s(&four),
        s(&out),
        "--dtype",
        "u32",
        "--largest",
        "--backend",
        "cpu",
    ]);
    assert!(
        stdout(&run).contains("gpusort: selected the largest key of 4 u32 keys"),
        "{}",
        stdout(&run)
    );
    let run = gpusort(&[
        "topk",
        "1",
        s(&four),
        s(&out),
        "--dtype",
        "u32",
        "--row-len",
        "2",
        "--backend",
        "cpu",
    ]);
    assert!(
        stdout(&run).contains("gpusort: selected the smallest key of each of 2 rows of 2 u32 keys"),
        "{}",
        stdout(&run)
    );
    let run = gpusort(&[
        "topk",
        "2",
        s(&four),
        s(&out),
        "--dtype",
        "u32",
        "--row-len",
        "4",
        "--backend",
        "cpu",
    ]);
    assert!(
        stdout(&run)
            .contains("gpusort: selected the 2 smallest keys of each of 1 row of 4 u32 keys"),
        "{}",
        stdout(&run)
    );
}

// ---------------------------------------------------------------------------------------------
// Progress bars

/// A pseudo-terminal: its controlling side and the terminal a child writes to, 120 columns.
fn pty() -> Option<(File, File)> {
    // SAFETY: the calls of posix_openpt(3); every descriptor opened is owned by a File.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        if master < 0 {
            return None;
        }
        let master_file = File::from_raw_fd(master);
        if libc::grantpt(master) != 0 || libc::unlockpt(master) != 0 {
            return None;
        }
        let mut name = [0 as libc::c_char; 128];
        if libc::ptsname_r(master, name.as_mut_ptr(), name.len()) != 0 {
            return None;
        }
        let slave = libc::open(
            CStr::from_ptr(name.as_ptr()).as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY,
        );
        if slave < 0 {
            return None;
        }
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        libc::ioctl(master, libc::TIOCSWINSZ, &size);
        Some((master_file, File::from_raw_fd(slave)))
    }
}

/// Runs gpusort with stderr (or stdout) on a terminal; returns what the terminal got and the
/// exit status.
fn on_terminal(args: &[&str], env: &[(&str, &str)], stdout_too: bool) -> Option<(String, i32)> {
    let (mut master, slave) = pty()?;
    let mut command = Command::new(bin());
    command
        .args(args)
        .envs(env.iter().copied())
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .stderr(slave.try_clone().unwrap());
    if stdout_too {
        command.stdout(slave.try_clone().unwrap());
    } else {
        command.stdout(Stdio::null());
    }
    let mut child = command.spawn().unwrap();
    // The command holds copies of the terminal: the reader sees its end only once they go.
    drop(command);
    drop(slave);
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        // Ends with EIO once every copy of the terminal's descriptor is closed.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    let status = child.wait().unwrap();
    let text = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    Some((text, status.code().unwrap_or(-1)))
}

#[test]
fn long_jobs_draw_progress_on_a_terminal_and_quick_ones_do_not() {
    let c = case(1 << 20);
    // The main job, its steps named; and a file sort, its phases named. The delay before a bar
    // appears (2 s) set to 0, so that these short jobs count as long ones.
    let now = [("GPUSORT_PROGRESS_DELAY_MS", "0")];
    let Some((shown, code)) = on_terminal(
        &[
            "--n",
            "1048576",
            "--backend",
            "cpu",
            "--baselines",
            "std,rayon",
        ],
        &now,
        false,
    ) else {
        eprintln!("skipped: no pseudo-terminal here");
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("step "), "no bar: {shown:?}");
    assert!(
        [
            "generating",
            "std's sort",
            "cpu fallback",
            "cpu std",
            "cpu rayon"
        ]
        .iter()
        .any(|step| shown.contains(step)),
        "no step named: {shown:?}"
    );
    let (shown, code) = on_terminal(
        &["sort", s(&c.input), s(&c.out), "--backend", "cpu"],
        &now,
        false,
    )
    .unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(
        ["reading", "sorting", "writing"]
            .iter()
            .any(|phase| shown.contains(phase)),
        "no bar: {shown:?}"
    );
    // A quick job draws nothing with the default delay.
    let (shown, code) = on_terminal(
        &["--n", "1000", "--backend", "cpu", "--no-baselines"],
        &[],
        false,
    )
    .unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(shown.is_empty(), "{shown:?}");
    // Not on a terminal, never a bar.
    let run = gpusort_env(&["sort", s(&c.input), s(&c.out), "--backend", "cpu"], &now);
    assert!(run.status.success());
    assert!(run.stderr.is_empty(), "{}", stderr(&run));
    let run = gpusort_env(
        &["--n", "100000", "--backend", "cpu", "--baselines", "std"],
        &now,
    );
    assert!(run.status.success());
    assert!(run.stderr.is_empty(), "{}", stderr(&run));
}

#[test]
fn binary_keys_are_not_written_to_a_terminal() {
    let c = case(10);
    let Some((shown, code)) =
        on_terminal(&["sort", s(&c.input), "-", "--backend", "cpu"], &[], true)
    else {
        eprintln!("skipped: no pseudo-terminal here");
        return;
    };
    assert_eq!(code, 2, "{shown}");
    assert!(
        shown.contains("OUTPUT -: standard output is a terminal"),
        "{shown:?}"
    );
    assert!(!shown.contains("NUMPY"), "{shown:?}");
}
