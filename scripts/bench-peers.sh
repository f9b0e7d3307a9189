#!/usr/bin/env bash
# The README's comparison with NVIDIA's sorts, in one command, on a machine with an NVIDIA GPU,
# the CUDA toolkit (nvcc) and, optionally, PyTorch with CUDA:
#
#   bash scripts/bench-peers.sh [OUT] [MIN_LOG2] [MAX_LOG2]      (default: bench-out 10 28)
#
# It builds bench/peers/peers.cu and the gpusort CLI, then on the same GPU, one after the other:
# CUB's radix and merge sorts and thrust::sort (peers.csv), torch.sort (torch.csv), and
# `gpusort bench` over the same sizes and key types, timed the same way (--gpu-timing
# like-peers), which writes OUT/bench.csv, bench.md and bench.svg with the peers' rows beside
# ours and prints our times over CUB's (also kept in OUT/compare.txt). Then the sorts gpusort
# bench has no row for: CUB's sorts of pairs (peers-pairs.csv), CUB's segmented sorts over rows
# of one length (peers-segmented.csv). Last, torch.topk of arrays and along rows
# (torch-topk.csv, torch-topk-rows.csv) and gpusort's top-k sweep beside it (bench-topk.md).
#
# Environment: DTYPES (default u32,f32,u64), CUDA_ARCH (nvcc -arch, default native),
# PEERS_REPS (timed runs of each peer, default 10), REPS (of gpusort's, default 10), GPUSORT (a
# gpusort binary built elsewhere, e.g. bundle/bin/gpusort from scripts/gpu-bundle.sh, for a GPU
# machine without Rust; then nothing is built with cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-out} lo=${2:-10} hi=${3:-28}
dtypes=${DTYPES:-u32,f32,u64}
mkdir -p "$out"

command -v nvcc >/dev/null || { echo "bench-peers: nvcc (the CUDA toolkit) is needed" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt"
date -u '+%Y-%m-%d %H:%M UTC' >> "$out/gpu.txt"

# Builds: the peers for this GPU, gpusort's CLI in release.
nvcc -O3 -std=c++17 -arch="${CUDA_ARCH:-native}" bench/peers/peers.cu -o "$out/peers"
gpusort=${GPUSORT:-}
if [ -z "$gpusort" ]; then
  bash scripts/setup.sh
  export PATH="$HOME/.cargo/bin:$PATH"
  cargo build --release --locked -p gpusort-cli
  gpusort=target/release/gpusort
fi

# Sorts of keys: the peers, then ours, on the same GPU in this one run.
"$out/peers" keys "$lo" "$hi" "$dtypes" > "$out/peers.csv"
peers="$out/peers.csv"
have_torch=0
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  have_torch=1
  python3 bench/peers/torch_peers.py sort "$lo" "$hi" > "$out/torch.csv"
  peers="$peers,$out/torch.csv"
else
  echo "bench-peers: no PyTorch with CUDA here; the torch rows are left out" >&2
fi
"$gpusort" bench --min-log2 "$lo" --max-log2 "$hi" --algos bitonic,merge,radix --dtypes "$dtypes" \
  --reps "${REPS:-10}" --gpu-timing like-peers --peers "$peers" --compare --out "$out" | tee "$out/compare.txt"

# Sorts gpusort bench has no row for, for the record of the same run.
"$out/peers" pairs "$hi" "$hi" u32,u64 > "$out/peers-pairs.csv"
"$out/peers" segmented "$((hi < 26 ? hi : 26))" > "$out/peers-segmented.csv"
# Top-k: torch.topk of arrays and along rows, then gpusort's top-k sweep beside it.
topk_peers=()
if [ "$have_torch" = 1 ]; then
  python3 bench/peers/torch_peers.py topk "$lo" "$hi" > "$out/torch-topk.csv"
  python3 bench/peers/torch_peers.py topk-rows > "$out/torch-topk-rows.csv"
  topk_peers=(--peers "$out/torch-topk.csv,$out/torch-topk-rows.csv")
fi
"$gpusort" bench --topk 1,8,64,256,1024 --topk-rows 16384x4096,1024x65536 --dtypes f32 \
  --min-log2 "$lo" --max-log2 "$hi" --reps "${REPS:-10}" "${topk_peers[@]}" --out "$out"
echo "bench-peers: results in $out/ (bench.md, bench.svg, compare.txt, bench-topk.md, the peers' CSVs, gpu.txt)"
