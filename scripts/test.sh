#!/usr/bin/env bash
# The test command: set-up (idempotent), formatting, the committed PTX against the kernels' source,
# lints, then every test of the workspace.
# GPU tests run when a CUDA device is present and say they were skipped when not.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo fmt --all --check
# The committed PTX (gpusort/kernels.ptx) must be what the Rust kernels compile to.
cargo xtask ptx --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --release --locked
