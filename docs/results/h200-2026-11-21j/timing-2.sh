tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) || exit 1
/tmp/peers 10 16 > $OUT/peers.csv 2> $OUT/peers.err
run() { bundle/$1/gpusort bench --backend gpu --min-log2 10 --max-log2 16 --algos bitonic,merge --dtypes u32,f32,u64 --reps 30 $2 --peers $OUT/peers.csv --compare --out $OUT/$3 > $OUT/$3.log 2>&1; echo "== $3"; grep -E '^(bitonic|merge) ' $OUT/$3.log; }
run bin "--gpu-timing like-peers" like-peers-bin
run bin "--gpu-timing sort" sort-bin
run bin-prev "" sort-bin-prev
run bin "--gpu-timing like-peers" like-peers-bin-2
