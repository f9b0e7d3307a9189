//! `gpusort bench` as a user runs it, on the CPU backend (so it runs with or without a GPU).

use std::path::Path;
use std::process::{Command, Output};

/// The binary under test: cargo's, or `GPUSORT_BIN` where the tests were moved to another
/// machine (`scripts/gpu-bundle.sh`).
fn gpusort(args: &[&str]) -> Output {
    let bin = std::env::var("GPUSORT_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_gpusort").into());
    Command::new(bin).args(args).output().expect("runs")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The contents of the SVG's `<text>` elements, trimmed.
fn svg_texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
        .collect()
}

const ALGOS: [&str; 3] = ["cpu_std", "cpu_rayon", "cpu_bitonicN"];
const DTYPES: [&str; 2] = ["u32", "f64"];
const ORDERS: [&str; 2] = ["asc", "desc"];
const SIZES: [usize; 3] = [1 << 10, 1 << 11, 1 << 12];

fn cpu_sweep(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "bench",
        "--backend",
        "cpu",
        "--min-log2",
        "10",
        "--max-log2",
        "12",
        "--algos",
        "cpu_std,cpu_rayon,cpu_bitonicN",
        "--dtypes",
        "u32,f64",
        "--orders",
        "asc,desc",
        "--out",
        out.to_str().expect("a UTF-8 temporary path"),
    ];
    args.extend_from_slice(extra);
    gpusort(&args)
}

#[test]
fn cpu_sweep_writes_verified_csv_markdown_and_plot() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("results");
    let run = cpu_sweep(&out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");

    let csv = read(&out.join("bench.csv"));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("algo,dtype,order,n,ms_median,ms_min,ms_max,keys_per_s,verified")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows.len(),
        ALGOS.len() * DTYPES.len() * ORDERS.len() * SIZES.len()
    );
    for algo in ALGOS {
        for dtype in DTYPES {
            for order in ORDERS {
                for n in SIZES {
                    let n = n.to_string();
                    let matching = rows
                        .iter()
                        .filter(|r| r[..4] == [algo, dtype, order, n.as_str()])
                        .count();
                    assert_eq!(matching, 1, "{algo} {dtype} {order} {n} in\n{csv}");
                }
            }
        }
    }
    for row in &rows {
        assert_eq!(row.len(), 9, "{row:?}");
        assert_eq!(row[8], "true", "{row:?}");
        let ms: Vec<f64> = row[4..7].iter().map(|v| v.parse().expect("ms")).collect();
        assert!(
            ms[1] <= ms[0] && ms[0] <= ms[2],
            "min <= median <= max: {row:?}"
        );
        let keys_per_s: f64 = row[7].parse().expect("keys_per_s");
        let n: f64 = row[3].parse().expect("n");
        // From the unrounded median; the CSV's ms are rounded to the nanosecond.
        let from_csv = n / (ms[0] / 1e3);
        assert!(
            (keys_per_s - from_csv).abs() <= keys_per_s * 1e-3,
            "{row:?}"
        );
    }

    let md = read(&out.join("bench.md"));
    assert!(md.contains("**Device:** CPU only"), "{md}");
    assert!(md.contains("| cpu_bitonicN | f64 | desc | 2^12 |"), "{md}");

    let svg = read(&out.join("bench.svg"));
    let series = ALGOS.len() * DTYPES.len() * ORDERS.len();
    // The axes and ticks are black polylines; each series is one in its colour.
    let series_lines = svg
        .lines()
        .filter(|l| l.starts_with("<polyline") && !l.contains(r##"stroke="#000000""##))
        .count();
    assert_eq!(series_lines, series, "{svg}");
    let texts = svg_texts(&svg);
    for algo in ALGOS {
        for dtype in DTYPES {
            for order in ORDERS {
                let label = format!("{algo} {dtype} {order}");
                assert!(texts.contains(&label.as_str()), "no legend label {label}");
            }
        }
    }
}

#[test]
fn peers_join_the_table_and_plot_and_compare_prints_ratios() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let peers = dir.path().join("peers.csv");
    std::fs::write(
        &peers,
        "peer,dtype,n,ms_median,mkeys_per_ms,correct\n\
         cub_merge,u32,1024,0.04,0.0256,1\n\
         cub_merge,u32,65536,0.04,1.6,1\n\
         torch_sort,i32,1024,0.07,0.014,1\n",
    )
    .expect("writes");
    let run = gpusort(&[
        "bench",
        "--backend",
        "cpu",
        "--min-log2",
        "10",
        "--max-log2",
        "10",
        "--algos",
        "cpu_std",
        "--out",
        dir.path().to_str().expect("UTF-8"),
        "--peers",
        peers.to_str().expect("UTF-8"),
        "--compare",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let md = read(&dir.path().join("bench.md"));
    assert!(
        md.contains("| cub_merge | u32 | asc | 2^10 | 0.040 | – | – |"),
        "{md}"
    );
    assert!(
        !md.contains("2^16"),
        "peer rows outside the sweep are left out: {md}"
    );
    assert!(
        !md.contains("torch_sort"),
        "peer rows of other key types are left out: {md}"
    );
    let svg = read(&dir.path().join("bench.svg"));
    assert!(
        svg_texts(&svg).contains(&"cub_merge u32"),
        "the peer's series is labelled"
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("no GPU measurement"),
        "CPU sorts are not compared to CUB: {stdout}"
    );
}

#[test]
fn bad_settings_are_refused_with_a_message() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().to_str().expect("UTF-8");
    let small = ["--max-log2", "10"];
    for (args, needle) in [
        (
            vec!["--min-log2", "12", "--max-log2", "10"],
            "--min-log2 12 is above --max-log2 10",
        ),
        (
            vec!["--max-log2", "40"],
            "invalid value '40' for '--max-log2",
        ),
        (
            vec!["--algos", "quick"],
            "invalid value 'quick' for '--algos",
        ),
        (vec!["--dtypes", "u16"], "invalid value 'u16' for '--dtypes"),
        (vec!["--compare"], "--peers"),
        (
            vec!["--peers", "/nonexistent/peers.csv"],
            "reading the peer CSV",
        ),
        (
            vec!["--algos", "bitonic", "--backend", "cpu"],
            "no sort left to time",
        ),
        (
            vec![
                "--algos",
                "cpu_std",
                "--max-log2",
                "12",
                "--cpu-max-log2",
                "11",
                "--min-log2",
                "12",
            ],
            "no sort runs at these sizes",
        ),
    ] {
        let mut all = vec!["bench", "--out", out];
        if !args.contains(&"--max-log2") {
            all.extend(small);
        }
        all.extend(args.iter().copied());
        let run = gpusort(&all);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

fn gpu_present() -> bool {
    gpusort::GpuSorter::new().is_ok()
}

/// Whether `REQUIRE_GPU=1` is set (the GPU bundle's run.sh): a missing GPU then fails the GPU
/// tests instead of skipping them.
fn gpu_required() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

#[test]
fn gpu_sweep_times_and_verifies_bitonic_beside_the_cpu() {
    if !gpu_present() {
        assert!(!gpu_required(), "REQUIRE_GPU=1 but no GPU");
        eprintln!("skipped the GPU bench sweep: no CUDA device");
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = gpusort(&[
        "bench",
        "--backend",
        "gpu",
        "--min-log2",
        "10",
        "--max-log2",
        "13",
        "--algos",
        "bitonic,merge,cpu_std",
        "--dtypes",
        "u32,f64",
        "--orders",
        "asc,desc",
        "--reps",
        "3",
        "--out",
        dir.path().to_str().expect("UTF-8"),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let csv = read(&dir.path().join("bench.csv"));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 3 * 2 * 2 * 4, "{csv}");
    assert!(rows.iter().all(|r| r.ends_with(",true")), "{csv}");
    for gpu_sort in ["bitonic,", "merge,"] {
        let count = rows.iter().filter(|r| r.starts_with(gpu_sort)).count();
        assert_eq!(count, 2 * 2 * 4, "{csv}");
    }
    let md = read(&dir.path().join("bench.md"));
    assert!(!md.contains("CPU only"), "the device is named: {md}");
    assert!(md.contains("CUDA events"), "{md}");
}

/// The pairs sweep (`auto`'s pairs breakpoints are measured from it): the stable sorts carrying
/// values as wide as the keys, each verified as the stable sorting permutation.
#[test]
fn gpu_sweep_times_and_verifies_the_stable_sorts_of_pairs() {
    if !gpu_present() {
        assert!(!gpu_required(), "REQUIRE_GPU=1 but no GPU");
        eprintln!("skipped the GPU pairs sweep: no CUDA device");
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = gpusort(&[
        "bench",
        "--backend",
        "gpu",
        "--min-log2",
        "11",
        "--max-log2",
        "13",
        "--algos",
        "merge_pairs,radix_pairs",
        "--dtypes",
        "u32,f64",
        "--dist",
        "few",
        "--gpu-timing",
        "like-peers",
        "--reps",
        "3",
        "--out",
        dir.path().to_str().expect("UTF-8"),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let csv = read(&dir.path().join("bench.csv"));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2 * 2 * 3, "{csv}");
    assert!(rows.iter().all(|r| r.ends_with(",true")), "{csv}");
    for sort in ["merge_pairs,", "radix_pairs,"] {
        let count = rows.iter().filter(|r| r.starts_with(sort)).count();
        assert_eq!(count, 2 * 3, "{csv}");
    }
}

#[test]
fn pairs_sorts_need_a_gpu() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().to_str().expect("UTF-8");
    let run = gpusort(&[
        "bench",
        "--backend",
        "cpu",
        "--algos",
        "merge_pairs,radix_pairs",
        "--max-log2",
        "10",
        "--out",
        out,
    ]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("skipping the GPU sorts (merge_pairs, radix_pairs)"),
        "{stderr}"
    );
    assert!(stderr.contains("no sort left to time"), "{stderr}");
}

#[test]
fn auto_backend_without_gpu_skips_the_gpu_sorts_once_and_runs_the_cpu_ones() {
    if gpu_present() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().to_str().expect("UTF-8");
    let run = gpusort(&[
        "bench",
        "--min-log2",
        "10",
        "--max-log2",
        "10",
        "--dtypes",
        "u32",
        "--out",
        out,
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert_eq!(
        stderr
            .matches("skipping the GPU sorts (bitonic, merge, radix)")
            .count(),
        1,
        "{stderr}"
    );
    let csv = read(&dir.path().join("bench.csv"));
    let algos: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| &l[..l.find(',').unwrap()])
        .collect();
    assert_eq!(
        algos,
        ["cpu_std", "cpu_rayon", "cpu_bitonic1", "cpu_bitonicN"]
    );
}

#[test]
fn gpu_backend_without_gpu_fails_clearly() {
    if gpu_present() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().to_str().expect("UTF-8");
    let run = gpusort(&[
        "bench",
        "--backend",
        "gpu",
        "--max-log2",
        "10",
        "--out",
        out,
    ]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("GPU backend is not available"), "{stderr}");
}
