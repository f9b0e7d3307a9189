#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine: the pinned Rust toolchain and, when no
# libcuda is present, Debian's libcuda1 (only needed to *link* the host; the GPU path reports
# "no CUDA device" at run time on such a machine). Prints the CUDA_LIBRARY_PATH to use.
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Rust: rustup itself, then the toolchain that rust-toolchain.toml pins (with its components).
if ! have rustup; then
  have curl || { as_root apt-get update -qq && as_root apt-get install -y -qq curl ca-certificates; }
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --default-toolchain none --profile minimal
  export PATH="$HOME/.cargo/bin:$PATH"
fi
rustup toolchain install >/dev/null 2>&1 || rustup toolchain install

# 2. libcuda for linking `cust`: keep a real driver's if there is one.
libcuda_dir() {
  for d in "${CUDA_LIBRARY_PATH:-}" /usr/local/cuda /usr/lib/x86_64-linux-gnu /usr/lib64 /usr; do
    [ -n "$d" ] || continue
    for f in "$d"/lib64/libcuda.so "$d"/lib64/stubs/libcuda.so; do
      [ -e "$f" ] && { echo "$d"; return 0; }
    done
  done
  return 1
}
if ! ldconfig -p | grep -q 'libcuda.so.1' && ! libcuda_dir >/dev/null; then
  if [ -r /etc/apt/sources.list.d/debian.sources ] && ! grep -q non-free /etc/apt/sources.list.d/debian.sources; then
    as_root sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' /etc/apt/sources.list.d/debian.sources
  fi
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends libcuda1 >/dev/null
fi
