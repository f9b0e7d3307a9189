set -u
tar xJf bundle-l2.tar.xz
run() { printf "%-9s %-45s %9s " "$1" "$2" $3; env $2 bundle/$1/gpusort --n $3 --dtype u32 --algo bitonic --no-baselines --reps 10 2>&1 | grep -E "kernels|rror" | awk -F'|' '{print $3, $4, $5, $8}'; }
for r in 1 2; do
n=268435456
run bin-base X=0 $n
for c in 24 25 26 27; do for s in 2 3; do run bin "GPUSORT_L2_CHUNK_LOG2=$c GPUSORT_L2_STREAMS=$s" $n; done; done
n=33554432
run bin-base X=0 $n
for c in 23 24; do for s in 2; do run bin "GPUSORT_L2_CHUNK_LOG2=$c GPUSORT_L2_STREAMS=$s" $n; done; done
done 2>&1 | tee $OUT/overlap.txt
