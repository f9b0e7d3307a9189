tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) || exit 1
( /tmp/peers 10 16; /tmp/peers 25 28 | grep -v "^peer," | grep -v "^device" ) > $OUT/peers.csv 2> /tmp/peers.err
date; wc -l $OUT/peers.csv
bundle/bin/gpusort bench --min-log2 10 --max-log2 28 --algos bitonic,merge --dtypes u32,u64 --peers $OUT/peers.csv --compare --out $OUT > $OUT/bench.log 2>&1
date; grep -E "^(bitonic|merge) " $OUT/bench.log | grep -E "2\^(10|11|12|16|25|28) "
timeout 120 python3 peers-run/torch_peers.py 25 28 > $OUT/torch.csv 2> /tmp/torch.err; cat $OUT/torch.csv
