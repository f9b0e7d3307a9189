set -u
[ -d bundle ] || tar xJf bundle-all.tar.xz
cd bundle
first() { for b in bin-base bin; do s=$EPOCHREALTIME; CUDA_CACHE_DISABLE=1 $b/gpusort "$@" --reps 1 --no-baselines > /dev/null 2>&1; rc=$?; e=$EPOCHREALTIME; python3 -c "print(f'%-8s rc=%d %6.2f s  %s' % ('$b', $rc, $e - $s, '$*'))"; done; }
{ for r in 1 2; do first --n 4000 --dtype u32 --algo bitonic; first --n 100000 --dtype u32 --algo bitonic; first --n 100000 --dtype u32 --algo merge; first --n 100000 --dtype u64 --algo merge; done; } 2>&1 | tee $OUT/first-run.txt
s=$EPOCHREALTIME; bin/gpusort --n 100000 --dtype u32 --algo bitonic --reps 1 --no-baselines > /dev/null 2>&1; e=$EPOCHREALTIME; python3 -c "print('cached, bin, bitonic 100000: %.2f s' % ($e - $s))" | tee -a $OUT/first-run.txt
