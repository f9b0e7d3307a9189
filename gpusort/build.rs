//! Compiles `kernels-gpu` to PTX with rustc's nvptx64 backend and leaves it at
//! `$OUT_DIR/kernels.ptx`, where `src/gpu/mod.rs` embeds it with `include_str!`.
//!
//! A nested `cargo build` does the work: target `nvptx64-nvidia-cuda`, `core` built from source
//! (no nightly ships it prebuilt for that target), profile `ptx` (panic = abort), and a target
//! directory of its own so that it never waits on the outer build's lock.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let kernels = manifest_dir.join("../kernels-gpu");
    let target_dir = out_dir.join("kernels-target");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());

    println!("cargo:rerun-if-changed={}", kernels.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        kernels.join("Cargo.toml").display()
    );

    let output = Command::new(cargo)
        .args([
            "build",
            "--locked",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
        ])
        .args(["--profile", "ptx", "--manifest-path"])
        .arg(kernels.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        // The outer build's flags and wrappers (clippy, coverage, host rustflags) are for the host.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .expect("could not run cargo to build the nvptx kernels");
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        panic!("building kernels-gpu for nvptx64-nvidia-cuda failed (see the output above)");
    }
    let ptx_path = target_dir.join("nvptx64-nvidia-cuda/ptx/kernels_gpu.ptx");
    let ptx = std::fs::read_to_string(&ptx_path)
        .unwrap_or_else(|e| panic!("no PTX at {}: {e}", ptx_path.display()));
    use kernels_gpu::tuning::{
        MAX_REGISTERS, WINDOW_MAX_REGISTERS_64, WINDOW_PROGRAM_KERNELS_32,
        WINDOW_PROGRAM_KERNELS_64, WINDOW_PROGRAM_MAX_REGISTERS_32,
    };
    let programs_32 = WINDOW_PROGRAM_KERNELS_32.map(|k| (k, WINDOW_PROGRAM_MAX_REGISTERS_32));
    let programs_64 = WINDOW_PROGRAM_KERNELS_64.map(|k| (k, WINDOW_MAX_REGISTERS_64));
    let limits: Vec<(&str, u32)> = MAX_REGISTERS
        .iter()
        .chain(&programs_32)
        .chain(&programs_64)
        .copied()
        .collect();
    let ptx = limit_registers(&ptx, &limits);
    std::fs::write(out_dir.join("kernels.ptx"), ptx).expect("writing kernels.ptx");
}

/// Adds a `.maxnreg` directive to each listed kernel (what CUDA C++ gets from
/// `__launch_bounds__`; rustc has no attribute for it). The directive goes between an entry's
/// parameter list and its body.
fn limit_registers(ptx: &str, limits: &[(&str, u32)]) -> String {
    let mut out = String::with_capacity(ptx.len() + 64 * limits.len());
    let mut pending = None;
    for line in ptx.lines() {
        if let Some(name) = line
            .strip_prefix(".visible .entry ")
            .and_then(|l| l.strip_suffix('('))
        {
            pending = limits
                .iter()
                .find(|(k, _)| *k == name)
                .map(|&(_, regs)| regs);
        }
        if line == "{"
            && let Some(regs) = pending.take()
        {
            out.push_str(&format!(".maxnreg {regs}\n"));
        }
        out.push_str(line);
        out.push('\n');
    }
    for (kernel, _) in limits {
        assert!(
            ptx.contains(&format!(".entry {kernel}(")),
            "no kernel {kernel} in the PTX"
        );
    }
    out
}
