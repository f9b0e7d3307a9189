# Call 3 (H100): the cost of network steps across the blocks of a cluster (cluster-floor.cu),
# beside the launch floor, CUB radix and the tiny sort at 2^10 .. 2^12, all timed like the peers.
tar xJf bundle-all.tar.xz
R=$OUT/r; mkdir -p $R
D=docs/results/h100-2026-11-22
nvcc -O3 -std=c++17 -arch=sm_90 $D/cluster-floor.cu -o /tmp/cluster || exit 1
nvcc -O3 -std=c++17 -arch=sm_90 $D/launch-floor.cu -o /tmp/floor || exit 1
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) || exit 1
for i in 1 2; do /tmp/cluster > $R/cluster-$i.csv; /tmp/floor | grep -E ",(1024|2048|4096)," > $R/floor-$i.csv; done
paste -d, $R/cluster-1.csv $R/cluster-2.csv | cut -d, -f1-5,10; paste -d, $R/floor-1.csv $R/floor-2.csv | cut -d, -f1-3,6
/tmp/peers 10 12 > $R/peers.csv 2>/dev/null
for i in 1 2; do bundle/bin/gpusort bench --min-log2 10 --max-log2 12 --algos bitonic --dtypes u32 --gpu-timing like-peers --reps 100 --peers $R/peers.csv --compare --out $R/bench-$i > $R/bench-$i.log 2>&1; grep -E "^bitonic " $R/bench-$i.log; done
tar czf $OUT/call3.tgz -C $OUT r
