set -u
tar xJf bundle-all.tar.xz
B=bundle/bin-base/gpusort
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,smsp__issue_active.avg.pct_of_peak_sustained_active
for a in 99 0; do for n in 8388608 33554432; do
echo "=== ahead=$a n=$n"
GPUSORT_WINDOW_PREFETCH_AHEAD=$a ncu --clock-control none --metrics $M -k regex:bitonic_window --launch-count 23 $B --n $n --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu-$a-$n.txt 2>&1
python3 scripts/ncu-summary.py $OUT/ncu-$a-$n.txt | tail -n +2
grep -E "lts__t_sector_hit_rate" $OUT/ncu-$a-$n.txt | awk '{s+=$NF; c++} END {print "mean L2 hit %", s/c}'
done; done
for n in 8388608 33554432; do for a in 99 0; do printf "ahead=%s n=%s " $a $n; GPUSORT_WINDOW_PREFETCH_AHEAD=$a $B --n $n --dtype u32 --algo bitonic --no-baselines --reps 20 2>&1 | grep -E "kernels" | awk -F'|' '{print $3, $4, $5}'; done; done
