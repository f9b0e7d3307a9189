#!/usr/bin/env bash
# On the device, in one call: NVIDIA's peers (CUB radix, CUB merge sort, thrust) and torch.sort,
# then `gpusort bench` over the same sizes, so that the ratios come from one run on one GPU.
# Usage: scripts/device-bench.sh BUNDLE PEERS_DIR OUT_DIR [MIN_LOG2 MAX_LOG2]
set -euo pipefail
bundle=$1 peers=$2 out=$3 lo=${4:-10} hi=${5:-28}
mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90 "$peers/peers.cu" -o /tmp/peers
/tmp/peers "$((lo > 16 ? lo : 16))" "$hi" > "$out/peers.csv"
python3 "$peers/torch_peers.py" "$((lo > 16 ? lo : 16))" "$hi" > "$out/torch.csv" || echo "torch peers failed" >&2
"$bundle/bin/gpusort" bench --min-log2 "$lo" --max-log2 "$hi" --algos bitonic,merge,cpu_std,cpu_rayon,cpu_bitonicN \
  --dtypes u32,f32 --out "$out" --peers "$out/peers.csv" --peers "$out/torch.csv" --compare
