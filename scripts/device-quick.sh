#!/usr/bin/env bash
# On the device: times the main job's GPU kernels for each bundle given, at several sizes, and
# summarises ncu per kernel at 2^25. Usage: scripts/device-quick.sh BUNDLE...
for b in "$@"; do
  echo "##### $b"
  ptxas -arch=sm_90 -v -o /dev/null "$b/kernels.ptx" 2>&1 | grep -E 'registers|spill' | paste - - | sed 's/ptxas info *: //g' | head -4
  for n in 65536 1048576 33554432 268435456; do
    printf '%10s ' "$n"; "$b/bin/gpusort" --n "$n" --reps 10 --no-baselines --no-verify | grep 'kernels' | cut -d'|' -f3
  done
  ncu --clock-control none --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$b/bin/gpusort" --n 33554432 --reps 1 --no-baselines --no-verify > "/tmp/ncu-$(basename "$b").txt" 2>&1
  python3 "$(dirname "$0")/ncu-summary.py" "/tmp/ncu-$(basename "$b").txt"
done
