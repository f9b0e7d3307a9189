tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) || exit 1
/tmp/peers 10 16 > $OUT/peers.csv 2> $OUT/peers.err
run() { bundle/bin/gpusort bench --backend gpu --min-log2 10 --max-log2 16 --algos bitonic,merge --dtypes u32,f32,u64 --reps 30 --gpu-timing $1 --peers $OUT/peers.csv --compare --out $OUT/$2 > $OUT/$2.log 2>&1; echo "== $2"; grep -E '^(bitonic) ' $OUT/$2.log; }
run like-peers like-peers; run sort sort
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.max
for d in u32 u64; do for n in 1024 2048 4096; do
  echo "== $d $n"; ncu --clock-control none --metrics $M -k regex:bitonic_ --launch-count 2 bundle/bin/gpusort --n $n --dtype $d --algo bitonic --reps 1 --no-baselines --no-verify 2>&1 | grep -E "bitonic_|duration|inst_exec|issue_active|cycles_elapsed" | tail -5
done; done > $OUT/ncu.txt 2>&1
grep -E '^==|duration' $OUT/ncu.txt
bundle/bin/gpusort --n 33554432 --dtype u32 --algo bitonic --no-baselines --reps 10 > $OUT/main.txt 2>&1; tail -5 $OUT/main.txt
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 250 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for tool in memcheck racecheck synccheck initcheck; do for a in "--n 1000 --dtype u32" "--n 4095 --dtype f32 --order desc" "--n 2000 --dtype u64" "--n 129 --dtype i32 --order desc"; do
echo "=== $tool $a"; timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin/gpusort $a --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done > $OUT/sanitize.log 2>&1
grep -E "SUMMARY|rror" $OUT/sanitize.log | sort | uniq -c
