tar xJf bundle-all.tar.xz
run() { printf "%-9s %s %9s %-7s " $1 $2 $3 $4; bundle/$1/gpusort --n $3 --dtype $2 --algo $4 --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for n in 33554432 268435456; do run bin-prev u32 $n bitonic; run bin u32 $n bitonic; run bin u64 $n bitonic; run bin u32 $n merge; done 2>&1 | tee $OUT/main.txt
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for c in "--n 2097152 --dtype u64" "--n 300001 --dtype i32 --order desc"; do echo "=== memcheck $c"; timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 bin/gpusort $c --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done | tee $OUT/sanitize.log
