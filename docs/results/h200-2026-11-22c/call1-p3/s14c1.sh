set -u
tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && { /tmp/peers 25 25; /tmp/peers 28 28 | grep -v "^device"; } > $OUT/peers.csv
grep -E "cub_merge|d2d_copy" $OUT/peers.csv | grep -E ",(33554432|268435456),"
run() { printf "%-5s %s %9s " $1 $2 $3; bundle/$1/gpusort --n $3 --dtype $2 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for r in 1 2; do for b in bin-base bin; do run $b u32 33554432; run $b f32 33554432; run $b u32 268435456; run $b u64 33554432; done; done 2>&1 | tee $OUT/main.txt
for b in bin-base bin; do run $b u64 268435456; run $b u32 1048576; done 2>&1 | tee -a $OUT/main.txt
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
ncu --clock-control none --metrics $M -k regex:bitonic_window --launch-count 21 bundle/bin/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu25.txt 2>&1; python3 scripts/ncu-summary.py $OUT/ncu25.txt | tail -24
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
