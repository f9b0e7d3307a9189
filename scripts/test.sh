#!/usr/bin/env bash
# The test command: set-up (idempotent), formatting, the committed PTX against the kernels' source,
# lints, every test of the workspace, then a downstream project and the library's package on
# stable Rust.
# GPU tests run when a CUDA device is present and say they were skipped when not.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo fmt --all --check
# The committed PTX (gpusort/kernels.ptx) must be what the Rust kernels compile to. Its build
# (`core` for nvptx64, then the kernels, then one link) keeps a core busy only part of the time,
# so it runs beside the lints and tests, in target directories of its own; its output shows if
# it fails.
ptx_log=$(mktemp)
CARGO_TARGET_DIR=target/xtask cargo xtask ptx --check >"$ptx_log" 2>&1 &
ptx=$!
trap 'kill "$ptx" 2>/dev/null || true; rm -f "$ptx_log"' EXIT
# Profile `tests` (optimised less than release, without its LTO) for both, so that the build
# scripts and procedural macros clippy compiles serve the tests too.
cargo clippy --workspace --all-targets --locked --profile tests -- -D warnings
cargo test --workspace --locked --profile tests
if ! wait "$ptx"; then
  cat "$ptx_log" >&2
  exit 1
fi
# A project outside the workspace (examples/downstream) builds with the stable toolchain, with the
# library as a path dependency, and runs: on the GPU where there is one, else on the CPU. Its
# build and the packages' below share one target directory, so the dependencies build once.
cargo fmt --check --manifest-path examples/downstream/Cargo.toml
cargo +stable run --locked --manifest-path examples/downstream/Cargo.toml --target-dir target/stable
# The library and the kernels crate package, and their packages build with the stable toolchain.
# Cargo takes a crate of one version from a registry to never change, so it would reuse an
# earlier run's unpacking and build of the packaged kernels crate: both go first, with the
# packages' earlier verification.
for package in kernels-gpu gpusort; do
  version=$(cargo pkgid --package "$package" | sed 's/.*#//')
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$package-$version"
done
rm -rf target/stable/package
cargo +stable package --package kernels-gpu --package gpusort --allow-dirty --quiet \
  --target-dir target/stable
