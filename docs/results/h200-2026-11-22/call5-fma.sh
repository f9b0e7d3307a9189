set -u
tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && { /tmp/peers 10 16; /tmp/peers 25 25 | grep -v "^device"; /tmp/peers 28 28 | grep -v "^device"; } > $OUT/peers.csv 2>/dev/null
grep -E "cub_merge" $OUT/peers.csv | grep -E ",(33554432|268435456),"
run() { printf "%-8s %s %9s " $1 $2 $3; bundle/$1/gpusort --n $3 --dtype $2 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for r in 1 2; do for b in bin-f0 bin bin-f8; do run $b u32 33554432; run $b f32 33554432; run $b u32 268435456; done; done 2>&1 | tee $OUT/main.txt
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active
for b in bin-f0 bin bin-f8; do echo "== $b"; ncu --clock-control none --metrics $M -k regex:bitonic_window --launch-count 3 bundle/$b/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify 2>&1 | grep -E "^  bitonic|duration|inst_exec|issue_active|pipe_" ; done > $OUT/ncu-tiles.txt 2>&1
grep -E "==|^  bitonic|duration" $OUT/ncu-tiles.txt
for b in bin-f0 bin; do bundle/$b/gpusort bench --backend gpu --min-log2 10 --max-log2 16 --algos bitonic --dtypes u32 --reps 30 --gpu-timing like-peers --peers $OUT/peers.csv --compare --out /tmp/small-$b > /tmp/small-$b.log 2>&1; echo "== $b"; grep -E '^(bitonic) ' /tmp/small-$b.log; done 2>&1 | tee $OUT/small.txt
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for tool in memcheck racecheck synccheck initcheck; do for a in "--n 300001 --dtype u32" "--n 200003 --dtype f32 --order desc" "--n 50000 --dtype u32"; do
echo "=== $tool $a"; timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin/gpusort $a --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done > $OUT/sanitize.log 2>&1
grep -E "SUMMARY|rror" $OUT/sanitize.log | sort | uniq -c
