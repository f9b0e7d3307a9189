//! The command-line tool as a user runs it.

use std::process::{Command, Output};

/// The binary under test: cargo's, or `GPUSORT_BIN` where the tests were moved to another
/// machine (`scripts/gpu-bundle.sh`).
fn gpusort(args: &[&str]) -> Output {
    let bin = std::env::var("GPUSORT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpusort").into());
    Command::new(bin).args(args).output().expect("runs")
}

fn gpu_present() -> bool {
    gpusort::GpuSorter::new().is_ok()
}

#[test]
fn cpu_backend_sorts_verifies_and_prints_the_table() {
    let out = gpusort(&[
        "--n",
        "50000",
        "--backend",
        "cpu",
        "--dtype",
        "f32",
        "--order",
        "desc",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for row in [
        "cpu std sort_unstable",
        "cpu rayon",
        "cpu bitonic (1 thread)",
        "Mkeys/s",
        "verified: every output",
    ] {
        assert!(stdout.contains(row), "missing {row:?} in\n{stdout}");
    }
}

#[test]
fn auto_backend_without_gpu_says_so_and_uses_the_cpu() {
    if gpu_present() {
        return;
    }
    let out = gpusort(&["--n", "1000", "--no-baselines"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sorting on the CPU instead"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("cpu fallback"));
}

#[test]
fn each_gpu_sort_by_name_sorts_and_verifies() {
    if !gpu_present() {
        return;
    }
    // 100001 u32 keys: `auto` takes the radix sort on the device and the bitonic sort for host
    // slices (the measured table, 2^17).
    for (algo, shown, shown_host) in [
        ("bitonic", "bitonic", "bitonic"),
        ("merge", "merge", "merge"),
        ("radix", "radix", "radix"),
        ("auto", "radix (auto)", "bitonic (auto)"),
    ] {
        let out = gpusort(&[
            "--n",
            "100001",
            "--algo",
            algo,
            "--no-baselines",
            "--reps",
            "2",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{algo}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("gpu {shown} (kernels")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("gpu {shown_host} (end-to-end")),
            "{stdout}"
        );
        let said = "--algo auto chose the radix sort for the keys on the device and the bitonic \
                    sort for host slices";
        assert_eq!(stdout.contains(said), algo == "auto", "{stdout}");
        assert!(stdout.contains("verified: every output"), "{stdout}");
    }
}

#[test]
fn gpu_backend_without_gpu_fails_clearly() {
    if gpu_present() {
        return;
    }
    let out = gpusort(&["--n", "1000", "--backend", "gpu"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("GPU backend is not available"), "{stderr}");
}

#[test]
fn bad_flag_values_are_refused_with_a_message() {
    for (args, needle) in [
        (vec!["--n", "-5"], "invalid value '-5' for '--n <N>'"),
        (vec!["--n", "lots"], "invalid digit"),
        (vec!["--dtype", "u16"], "u16"),
        (vec!["--dist", "zipf"], "zipf"),
        (vec!["--backend", "tpu"], "tpu"),
        (vec!["--algo", "quick"], "quick"),
        (vec!["--reps", "0"], "--reps"),
    ] {
        let out = gpusort(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn n_too_large_for_memory_is_refused_before_allocating() {
    // 10^12 u64 keys: 24 TB for the job's buffers, more than any device or this host holds.
    let out = gpusort(&["--n", "1000000000000", "--dtype", "u64", "--no-baselines"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--n 1000000000000 is too large for"),
        "{stderr}"
    );
    assert!(stderr.contains("24000000000000 bytes needed"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A full or closed standard output is an error with exit code 2 and a message, never a panic:
/// for the main job and the benchmark sweep as for `gpusort sort`.
#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full here");
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out_dir = dir.path().to_str().expect("UTF-8");
    let runs: [&[&str]; 2] = [
        &["--n", "1000", "--backend", "cpu"],
        &[
            "bench",
            "--algos",
            "cpu_std",
            "--min-log2",
            "10",
            "--max-log2",
            "10",
            "--dtypes",
            "u32",
            "--out",
            out_dir,
        ],
    ];
    for args in runs {
        let bin =
            std::env::var("GPUSORT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpusort").into());
        let out = Command::new(bin)
            .args(args)
            .stdout(full.try_clone().expect("a second handle"))
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("writing to standard output"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
