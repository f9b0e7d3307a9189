tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && /tmp/peers 25 28 > $OUT/peers.csv
grep -E "cub_merge|d2d_copy" $OUT/peers.csv | grep -E ",(33554432|268435456),"
run() { echo "== $1 $2 $3 $4"; env $2 bundle/$1/gpusort --n $4 --dtype $3 --algo $5 --no-baselines --reps 10 2>&1 | grep -E "kernels|rror"; }
for n in 33554432 268435456; do
  for d in u32 f32 u64; do run bin X=1 $d $n merge; done
  run bin-base X=1 u32 $n merge
  run bin X=1 u32 $n bitonic
done 2>&1 | tee $OUT/main.txt
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
for n in 33554432 268435456; do ncu --clock-control none --metrics $M --launch-count 5 bundle/bin/gpusort --n $n --dtype u32 --algo merge --reps 1 --no-baselines --no-verify > $OUT/ncu-$n.txt 2>&1; python3 scripts/ncu-summary.py $OUT/ncu-$n.txt | tail -6; done
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for tc in "memcheck|264|--n 2097152 --dtype u32" memcheck racecheck synccheck initcheck; do for c in "3|--n 300001 --dtype u32" "5|--n 100003 --dtype f32 --order desc"; do
tool=${tc%%|*}; if [ "$tool" != "$tc" ]; then c=${tc#*|}; fi
v=${c%%|*}; a=${c#*|}
echo "=== $tool ahead $v $a"; GPUSORT_PREFETCH_AHEAD=$v timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin/gpusort $a --algo merge --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done > $OUT/sanitize.log 2>&1
grep -E "SUMMARY|rror" $OUT/sanitize.log | sort | uniq -c
