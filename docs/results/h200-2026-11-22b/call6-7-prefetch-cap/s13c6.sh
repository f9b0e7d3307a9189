set -u
tar xJf bundle-all.tar.xz
cd bundle
run() { printf "%-8s %s %9s " $1 $2 $3; $1/gpusort --n $3 --dtype $2 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for r in 1 2; do for b in bin-base bin-prev bin; do run $b u32 33554432; run $b u32 268435456; run $b u64 33554432; run $b u64 268435456; done; done 2>&1 | tee $OUT/main.txt
s=$EPOCHREALTIME; CUDA_CACHE_DISABLE=1 bin/gpusort --n 100000 --dtype u32 --algo bitonic --reps 1 --no-baselines > /dev/null 2>&1; e=$EPOCHREALTIME; python3 -c "print('first run, bitonic 100000: %.2f s' % ($e - $s))" | tee $OUT/first-run.txt
export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
