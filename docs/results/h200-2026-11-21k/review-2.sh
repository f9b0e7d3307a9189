tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && /tmp/peers 25 25 > $OUT/peers.csv
grep -E "cub_merge" $OUT/peers.csv | grep -E ",33554432,"
run() { printf "%-9s %s %9s " $1 $2 $3; bundle/$1/gpusort --n $3 --dtype $2 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for n in 33554432 268435456; do for d in u32 u64; do for b in bin-prev bin bin-prev bin; do run $b $d $n; done; done; done 2>&1 | tee $OUT/main.txt
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for tool in memcheck racecheck; do for a in "--n 300001 --dtype u32" "--n 200003 --dtype u64 --order desc"; do
echo "=== $tool $a"; timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin/gpusort $a --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done > $OUT/sanitize.log 2>&1
grep -E "SUMMARY|rror" $OUT/sanitize.log | sort | uniq -c
