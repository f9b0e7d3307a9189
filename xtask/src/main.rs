//! Maintenance commands of the workspace, run as `cargo xtask <command>` (an alias in
//! `.cargo/config.toml`):
//!
//! - `ptx`: compiles `kernels-gpu` to PTX with rustc's nvptx64 backend, adds the register caps of
//!   the kernel list (`kernels_gpu::kernels`), and writes the result to `gpusort/kernels.ptx`, which the library
//!   embeds with `include_str!`.
//! - `ptx --check`: the same build, compared with the committed `gpusort/kernels.ptx`; fails if
//!   they differ, so that the embedded kernels never drift from their Rust source (the test
//!   command runs it).
//!
//! The PTX is committed so that the library builds with any Rust toolchain: building the kernels
//! needs a nightly (`-Zbuild-std=core`, the `llvm-bitcode-linker`), the one `rust-toolchain.toml`
//! pins, which `cargo xtask` runs under inside the workspace. A nested `cargo build` does the
//! work: target `nvptx64-nvidia-cuda`, `core` built from source (no nightly ships it prebuilt for
//! that target), profile `ptx` (panic = abort), and a target directory of its own
//! (`target/ptx`) so that it never waits on the outer build's lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Where the library expects the PTX, relative to the workspace root.
const PTX_PATH: &str = "gpusort/kernels.ptx";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ has a parent")
        .to_path_buf();
    match args[..] {
        ["ptx"] => {
            let ptx = build_ptx(&root);
            std::fs::write(root.join(PTX_PATH), ptx).expect("writing the PTX");
            println!("wrote {PTX_PATH}");
            ExitCode::SUCCESS
        }
        ["ptx", "--check"] => {
            let ptx = build_ptx(&root);
            let committed = std::fs::read_to_string(root.join(PTX_PATH)).unwrap_or_default();
            if committed == ptx {
                println!("{PTX_PATH} is up to date");
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "the PTX is stale: {PTX_PATH} differs from what kernels-gpu compiles to; \
                     run `cargo xtask ptx` and commit {PTX_PATH}"
                );
                ExitCode::FAILURE
            }
        }
        _ => {
            eprintln!("usage: cargo xtask ptx [--check]");
            ExitCode::from(2)
        }
    }
}

/// The kernels' PTX as the library embeds it: compiled, register caps added, crate hashes
/// normalised.
fn build_ptx(root: &Path) -> String {
    let kernels = root.join("kernels-gpu");
    let target_dir: PathBuf = root.join("target/ptx");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
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
        // Flags and wrappers of the calling environment (clippy, coverage, host rustflags) are
        // for the host.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .expect("could not run cargo to build the nvptx kernels");
    assert!(
        status.success(),
        "building kernels-gpu for nvptx64-nvidia-cuda failed (see the output above)"
    );
    let ptx_path = target_dir.join("nvptx64-nvidia-cuda/ptx/kernels_gpu.ptx");
    let ptx = std::fs::read_to_string(&ptx_path)
        .unwrap_or_else(|e| panic!("no PTX at {}: {e}", ptx_path.display()));
    let limits: Vec<(&str, u32)> = kernels_gpu::kernels::all()
        .filter_map(|k| Some((k.name, k.max_registers?)))
        .collect();
    normalise_crate_hashes(&limit_registers(&ptx, &limits))
}

/// Replaces the disambiguator of every crate named in a v0-mangled symbol (`Cs<hash>_<len><name>`,
/// e.g. `_RNvNtCs…_4core9panicking9panic_fmt`) with zeros of the same length. The hash comes from
/// the crate's `-C metadata`, which for `core` (built from the toolchain's `rust-src`) can depend
/// on where the toolchain is installed; zeroed, the PTX is the same on every machine, so the check
/// compares code only. The names stay unique (asserted) and the same length, so the symbols still
/// demangle.
fn normalise_crate_hashes(ptx: &str) -> String {
    let bytes = ptx.as_bytes();
    let mut out = String::with_capacity(ptx.len());
    // Normalised crate root → the original, to catch two crates that would become one.
    let mut seen: HashMap<String, &str> = HashMap::new();
    let (mut copied, mut from) = (0, 0);
    while let Some(offset) = ptx[from..].find("Cs") {
        let hash_start = from + offset + 2;
        from = hash_start;
        let hash_end = hash_start
            + bytes[hash_start..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
        if hash_end == hash_start || bytes.get(hash_end) != Some(&b'_') {
            continue;
        }
        let digits_end = hash_end
            + 1
            + bytes[hash_end + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        let Ok(len) = ptx[hash_end + 1..digits_end].parse::<usize>() else {
            continue;
        };
        let Some(name) = ptx.get(digits_end..digits_end + len) else {
            continue;
        };
        let original = &ptx[hash_start - 2..digits_end + len];
        let normalised = format!(
            "Cs{}{}",
            "0".repeat(hash_end - hash_start),
            &ptx[hash_end..digits_end + len]
        );
        let earlier = *seen.entry(normalised.clone()).or_insert(original);
        assert_eq!(earlier, original, "two crates named {name} in the PTX");
        out.push_str(&ptx[copied..hash_start - 2]);
        out.push_str(&normalised);
        copied = digits_end + len;
        from = copied;
    }
    out.push_str(&ptx[copied..]);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_hashes_become_zeros_of_the_same_length() {
        let ptx =
            "call _RNvNtCskrqF5emvEla_4core9panicking9panic_fmt;\n.func _RNvCsAb1_4core3foo\n";
        assert_eq!(
            normalise_crate_hashes(ptx),
            "call _RNvNtCs00000000000_4core9panicking9panic_fmt;\n.func _RNvCs000_4core3foo\n"
        );
        assert_eq!(
            normalise_crate_hashes("Cs_1x Csabc Cs1_x"),
            "Cs_1x Csabc Cs1_x"
        );
    }

    #[test]
    #[should_panic(expected = "two crates named core")]
    fn distinct_crates_stay_distinct() {
        normalise_crate_hashes("_RNvCsab_4core1f _RNvCscd_4core1g");
    }

    #[test]
    fn register_caps_go_before_the_body() {
        let ptx = ".visible .entry k(\n.param .u32 a\n)\n{\nret;\n}\n";
        assert_eq!(
            limit_registers(ptx, &[("k", 64)]),
            ".visible .entry k(\n.param .u32 a\n)\n.maxnreg 64\n{\nret;\n}\n"
        );
    }
}
