tar xJf bundle-all.tar.xz
run() { printf "%-3s %s %9s " "$1" $2 $3; GPUSORT_WINDOW_PROGRAMS=$1 bundle/bin/gpusort --n $3 --dtype $2 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
{ for r in 1 2; do for p in 0 1; do run $p u64 33554432; run $p u32 33554432; done; done
for c in 1 0; do echo "== CUDA_CACHE_DISABLE=$c"; for i in 1 2; do /usr/bin/time -f "%e s wall" env CUDA_CACHE_DISABLE=$c bundle/bin/gpusort --n 100000 --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "wall|rror"; done; done; } 2>&1 | tee $OUT/main.txt
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/checks.log 2>&1
grep -E "FAILED|panicked" $OUT/checks.log | head -5; grep -E "passed" $OUT/checks.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for tool in memcheck racecheck synccheck initcheck; do for a in "--n 300001 --dtype u32" "--n 200003 --dtype f32 --order desc" "--n 200003 --dtype u64 --order desc"; do
echo "=== $tool $a"; timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin/gpusort $a --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done >> $OUT/checks.log 2>&1
grep -E "SUMMARY|rror" $OUT/checks.log | sort | uniq -c
