set -u
tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && { /tmp/peers 25 25; /tmp/peers 28 28 | grep -v "^device"; } > $OUT/peers.csv
grep -E "cub_merge|d2d_copy" $OUT/peers.csv | grep -E ",(33554432|268435456),"
run() { printf "L%-3s %s %9s " "$1" $2 $3; GPUSORT_WINDOW_LOG2=$1 bundle/bin/gpusort --n $3 --dtype $2 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for r in 1 2; do for l in 13 14; do run $l u32 33554432; run $l f32 33554432; run $l u32 268435456; done; done 2>&1 | tee $OUT/main.txt
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
ncu --clock-control none --metrics $M -k regex:bitonic_window --launch-count 21 bundle/bin/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu25.txt 2>&1; python3 scripts/ncu-summary.py $OUT/ncu25.txt | tail -24
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for tool in memcheck racecheck synccheck initcheck; do for a in "--n 300001 --dtype u32" "--n 200003 --dtype f32 --order desc"; do
echo "=== $tool $a"; timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin/gpusort $a --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done > $OUT/sanitize.log 2>&1
grep -E "SUMMARY|rror" $OUT/sanitize.log | sort | uniq -c
