set -u
tar xJf bundle-all.tar.xz
cd bundle
first() { for b in bin-base bin; do s=$(date +%s.%N); CUDA_CACHE_DISABLE=1 $b/gpusort "$@" --reps 1 --no-baselines > /dev/null 2>&1; rc=$?; e=$(date +%s.%N); printf "%-8s rc=%d %6.2f s  %s\n" $b $rc $(echo "$e - $s" | bc) "$*"; done; }
{ for r in 1 2; do first --n 4000 --dtype u32 --algo bitonic; first --n 100000 --dtype u32 --algo bitonic; first --n 100000 --dtype u32 --algo merge; first --n 100000 --dtype u64 --algo merge; done; } 2>&1 | tee $OUT/first-run.txt
run() { printf "%-8s %-7s %s %9s " $1 $2 $3 $4; $1/gpusort --n $4 --dtype $3 --algo $2 --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for r in 1 2; do for b in bin-base bin; do run $b bitonic u32 33554432; run $b merge u32 33554432; run $b bitonic u64 1000000; done; done 2>&1 | tee $OUT/main.txt
export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
