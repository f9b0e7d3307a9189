(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) && /tmp/peers 25 28 > $OUT/peers.csv
grep -E "cub_merge,u32" $OUT/peers.csv
V=peers-run/var
for n in 33554432 268435456; do for s in 32 64 128; do for a in 0 192 256 320; do
  printf "stride %3s ahead %3s n %9s " $s $a $n; GPUSORT_PREFETCH_AHEAD=$a $V/gpusort-$s --n $n --dtype u32 --algo merge --no-baselines --reps 10 --no-verify 2>&1 | grep -E "kernels" | awk -F'|' '{print $3, $4, $5}'
done; done; done 2>&1 | tee $OUT/sweep.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct,lts__t_requests_srcunit_tex.sum
for s in 32 64 128; do echo "== ncu stride $s ahead 256"; GPUSORT_PREFETCH_AHEAD=256 ncu --clock-control none --metrics $M -k regex:merge_pass_network --launch-skip 8 --launch-count 1 $V/gpusort-$s --n 268435456 --dtype u32 --algo merge --reps 1 --no-baselines --no-verify 2>&1 | grep -E "^\s+(gpu__|dram__|smsp|lts)"; done | tee $OUT/ncu.txt
