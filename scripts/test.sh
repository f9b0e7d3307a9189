#!/usr/bin/env bash
# The test command: set-up (idempotent), formatting, lints, then every test of the workspace.
# GPU tests run when a CUDA device is present and say they were skipped when not.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --release --locked
