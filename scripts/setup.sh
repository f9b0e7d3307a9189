#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine: the pinned Rust toolchain (rust-toolchain.toml),
# stable Rust and, when no libcuda is present, Debian's libcuda1 (needed to link and load the host;
# without a GPU the program then reports "no CUDA-capable device" and can fall back to the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Rust: rustup itself, then the toolchain that rust-toolchain.toml pins (with its components),
# and stable, on which the test command builds a downstream project and the library's package.
if ! have rustup; then
  have curl || { as_root apt-get update -qq && as_root apt-get install -y -qq curl ca-certificates; }
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --default-toolchain none --profile minimal
  export PATH="$HOME/.cargo/bin:$PATH"
fi
rustup toolchain install >/dev/null 2>&1 || rustup toolchain install
rustup toolchain list | grep -q '^stable-' || rustup toolchain install stable --profile minimal

# 2. libcuda for linking `cust` (-lcuda) and loading the binary: keep a driver's if there is one.
if ! ldconfig -p | grep -q 'libcuda\.so '; then
  if [ -r /etc/apt/sources.list.d/debian.sources ] && ! grep -q non-free /etc/apt/sources.list.d/debian.sources; then
    as_root sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' /etc/apt/sources.list.d/debian.sources
  elif [ -r /etc/apt/sources.list ] && ! grep -q non-free /etc/apt/sources.list; then
    as_root sed -i 's/ main$/ main contrib non-free non-free-firmware/' /etc/apt/sources.list
  fi
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends libcuda1 >/dev/null
fi
