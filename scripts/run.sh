#!/usr/bin/env bash
# Set-up (idempotent), then the main job with the given flags, e.g. scripts/run.sh --n 33554432
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo run --release --locked -p gpusort-cli -- "$@"
