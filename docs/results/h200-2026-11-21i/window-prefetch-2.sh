tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && /tmp/peers 25 28 > $OUT/peers.csv
grep -E "cub_merge|d2d_copy" $OUT/peers.csv | grep -E ",(33554432|268435456),"
run() { printf "%-9s %-36s %s %9s %-7s " $1 "$2" $3 $4 $5; env $2 bundle/$1/gpusort --n $4 --dtype $3 --algo $5 --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for n in 33554432 268435456; do
  for b in bin-prev bin-all bin; do run $b X=1 u32 $n bitonic; done
  for a in 50 150; do run bin GPUSORT_WINDOW_PREFETCH_AHEAD=$a u32 $n bitonic; done
  for d in f32 u64; do run bin-prev X=1 $d $n bitonic; run bin-all X=1 $d $n bitonic; run bin X=1 $d $n bitonic; done
done 2>&1 | tee $OUT/main.txt
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
for b in bin-prev bin-all bin; do ncu --clock-control none --metrics $M -k regex:bitonic_window --launch-count 23 bundle/$b/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu25-$b.txt 2>&1; done
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
for tool in memcheck racecheck synccheck initcheck; do for c in "3|--n 300001 --dtype u32" "5|--n 100003 --dtype f32 --order desc" "2|--n 200003 --dtype u64"; do
v=${c%%|*}; a=${c#*|}
echo "=== $tool ahead $v $a"; GPUSORT_WINDOW_PREFETCH_AHEAD=$v timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin-all/gpusort $a --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done > $OUT/sanitize.log 2>&1
echo "=== memcheck default 2^21"; timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 bin/gpusort --n 2097152 --dtype u32 --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror" >> $OUT/sanitize.log
grep -E "SUMMARY|rror" $OUT/sanitize.log | sort | uniq -c
