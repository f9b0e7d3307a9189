set -u
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && /tmp/peers 25 28 > $OUT/peers.csv
grep -E "cub_merge|d2d_copy" $OUT/peers.csv | grep -E ",(33554432|268435456),"
run() { printf "%-4s %s %9s " "$1" $2 $3; GPUSORT_WINDOW_PREFETCH_MAX_SWITCHES=$1 peers-run/lite/bin/gpusort --n $3 --dtype $2 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for n in 33554432 268435456; do for r in 1 2; do for p in 99 1 2 0; do run $p u32 $n; done; done; done 2>&1 | tee $OUT/main.txt
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
for p in 99 1; do GPUSORT_WINDOW_PREFETCH_MAX_SWITCHES=$p ncu --clock-control none --metrics $M -k regex:bitonic_window --launch-count 23 peers-run/lite/bin/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu25-p$p.txt 2>&1; python3 scripts/ncu-summary.py $OUT/ncu25-p$p.txt | tail -2; done
ncu --clock-control none --section InstructionStats --section WarpStateStats --section SchedulerStats --section SpeedOfLight -k regex:bitonic_window --launch-count 3 peers-run/lite/bin/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu25-sections.txt 2>&1
grep -E "bitonic_window|Issued Ipc|Stall|Warp Cycles|No Eligible|Eligible Warps" $OUT/ncu25-sections.txt | head -60
