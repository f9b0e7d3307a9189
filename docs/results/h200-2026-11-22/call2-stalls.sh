S=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction membar drain imc_miss branch_resolving sleeping tex_throttle misc; do S="$S,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
S=${S#,}
ncu --clock-control none --metrics $S,sass__inst_executed_per_opcode --print-metric-instances values -k regex:bitonic_window --launch-count 3 peers-run/lite/bin/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu25-stalls.txt 2>&1
grep -E "bitonic_window_|stalled|sass__" $OUT/ncu25-stalls.txt | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | cut -c1-400
