# Call 2 (H100): every GPU test with REQUIRE_GPU=1 and the main jobs (bundle/run.sh), then
# compute-sanitizer on the bitonic paths (tiny, small, tile sort and windows; 4- and 8-byte keys).
tar xJf bundle-all.tar.xz
R=$OUT/r; mkdir -p $R
timeout 330 bash bundle/run.sh test > $R/tests.log 2>&1; echo "run.sh test rc $?" >> $R/tests.log
grep -E "^test result|FAILED|panicked|passed, .* failed|rc " $R/tests.log | sort | uniq -c | sort -rn | head -20
grep -E "^test result" $R/tests.log | awk '{s+=$4; f+=$6} END {print "tests passed", s, "failed", f}'
grep -E "kernels|bitonic|merge" $R/tests.log | grep -E "\|" | head -8
cd bundle
for tool in memcheck racecheck synccheck initcheck; do for a in "--n 1000 --dtype u32" "--n 4095 --dtype f32 --order desc" "--n 50000 --dtype i32" "--n 300001 --dtype u32" "--n 200003 --dtype u64 --order desc"; do
  echo "=== $tool $a"; timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 bin/gpusort $a --algo bitonic --reps 1 --no-baselines 2>&1 | grep -E "SUMMARY|rror"; done; done > $R/sanitize.log 2>&1
grep -E "SUMMARY|rror" $R/sanitize.log | sort | uniq -c
grep -c "^===" $R/sanitize.log
