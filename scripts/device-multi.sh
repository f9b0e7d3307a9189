#!/usr/bin/env bash
# The multi-GPU runs on a machine of several GPUs, from a bundle of scripts/gpu-bundle.sh:
#   scripts/device-multi.sh BUNDLE OUT
# multi-GPU tests (every GPU required), the main job at 2^30 u32 on 2 and on all GPUs, the
# multi-GPU bench sweep (1, 2, all GPUs), a sort larger than one GPU's memory, the host-staged
# exchange, and compute-sanitizer memcheck over the peer path. Logs go to OUT.
set -uo pipefail
bundle=$1 out=$2
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi topo -m > "$out/topo.txt" 2>&1
export REQUIRE_GPU=1 REQUIRE_GPUS=$gpus
run() { echo "=== $*"; "$@"; echo "rc=$?"; }
{
  run "$bundle/tests/test-multi_gpu"
  for g in 2 "$gpus"; do
    run "$bundle/bin/gpusort" --gpus "$g" --n 1073741824 --reps 10
    run "$bundle/bin/gpusort" --gpus "$g" --n 1073741824 --dtype u64 --reps 5
  done
  run "$bundle/bin/gpusort" --gpus "$gpus" --n 1073741824 --reps 5 --exchange host
} 2>&1 | tee "$out/multi.log"
{
  run "$bundle/bin/gpusort" bench --gpus "1,2,$gpus" --min-log2 24 --max-log2 30 --dtypes u32,u64 --reps 5 --out "$out"
  # Larger than one GPU's memory: 40 × 2^30 u32 keys (160 GiB) over all GPUs.
  [ "$gpus" -ge 4 ] && run "$bundle/bin/gpusort" --gpus "$gpus" --n 42949672960 --reps 1
  run compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 10 "$bundle/bin/gpusort" --gpus "$gpus" --n 1000003 --reps 1
} 2>&1 | tee "$out/multi-bench.log"
