# Call 1 (H100): the launch floor of small sorts, the peers, then the bench sweep of bitonic and
# merge (u32, f32, i32; 2^10 .. 2^28), timed like the peers, in one call.
tar xJf bundle-all.tar.xz
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,memory.total,driver_version --format=csv > $R/gpu.txt; cat $R/gpu.txt
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) || exit 1
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/h100-2026-11-22/launch-floor.cu -o /tmp/floor || exit 1
/tmp/floor > $R/floor.csv; cat $R/floor.csv
date; ( /tmp/peers 10 16; /tmp/peers 25 28 | grep -v "^peer," | grep -v "^device" ) > $R/peers.csv 2> $R/peers.err
date; grep -E "cub_(merge|radix),u32" $R/peers.csv
timeout 420 bundle/bin/gpusort bench --min-log2 10 --max-log2 28 --algos bitonic,merge --dtypes u32,f32,i32 \
  --gpu-timing like-peers --peers $R/peers.csv --compare --out $R/bench > $R/bench.log 2>&1
date; grep -E "^bitonic " $R/bench.log
tar czf $OUT/call1.tgz -C $OUT r
