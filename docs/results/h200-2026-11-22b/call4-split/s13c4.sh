set -u
tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && { /tmp/peers 25 25; /tmp/peers 28 28 | grep -v "^device"; } > $OUT/peers.csv
grep -E "cub_merge" $OUT/peers.csv | grep -E "u32,(33554432|268435456),"
cd bundle
first() { for b in bin-base bin; do s=$EPOCHREALTIME; CUDA_CACHE_DISABLE=1 $b/gpusort "$@" --reps 1 --no-baselines > /dev/null 2>&1; rc=$?; e=$EPOCHREALTIME; python3 -c "print(f'%-8s rc=%d %6.2f s  %s' % ('$b', $rc, $e - $s, '$*'))"; done; }
{ for r in 1 2; do first --n 4000 --dtype u32 --algo bitonic; first --n 100000 --dtype u32 --algo bitonic; first --n 100000 --dtype u64 --algo bitonic; first --n 100000 --dtype u32 --algo merge; done; } 2>&1 | tee $OUT/first-run.txt
run() { printf "%-8s %-4s %s %9s " $1 "$2" $3 $4; GPUSORT_WINDOW_PREFETCH_AHEAD=$2 $1/gpusort --n $4 --dtype $3 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for r in 1 2; do for v in "bin-base -" "bin -" "bin 99"; do run $v u32 33554432; run $v u32 268435456; run $v u64 33554432; done; done 2>&1 | tee $OUT/main.txt
export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
