tar xJf bundle-all.tar.xz
(cd peers-run && nvcc -O3 -std=c++17 -arch=sm_90 peers.cu -o /tmp/peers) || exit 1
/tmp/peers 10 12 > $OUT/peers.csv 2> $OUT/peers.err
for t in like-peers sort; do bundle/bin/gpusort bench --backend gpu --min-log2 10 --max-log2 12 --algos bitonic,merge --dtypes u32 --reps 30 --gpu-timing $t --peers $OUT/peers.csv --compare --out /tmp/b-$t > $OUT/bench-$t.log 2>&1; echo "== $t"; grep -E '^(bitonic|merge) ' $OUT/bench-$t.log; done
bundle/bin/gpusort --n 33554432 --dtype u32 --algo bitonic > $OUT/main.txt 2>&1; grep -E 'bitonic|pinned copies|verified' $OUT/main.txt
cd bundle; export REQUIRE_GPU=1 GPUSORT_BIN="$PWD/bin/gpusort"
for t in tests/*; do echo "=== $t"; timeout 250 $t 2>&1 | grep -E "test result|FAILED|panicked"; done > $OUT/tests.log 2>&1
grep -E "FAILED|panicked" $OUT/tests.log | head -5; grep -E "passed" $OUT/tests.log | awk '{s+=$4; f+=$6} END {print "passed", s, "failed", f}'
