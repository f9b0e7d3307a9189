P=""
for p in alu fma fmaheavy fmalite lsu adu cbu uniform xu; do P="$P,sm__inst_executed_pipe_${p}.sum"; done
for p in alu fma fmaheavy shared; do P="$P,sm__pipe_${p}_cycles_active.avg.pct_of_peak_sustained_active"; done
P=${P#,}
ncu --clock-control none --metrics $P,sass__inst_executed_per_opcode --print-metric-instances details -k regex:bitonic_window --launch-count 3 peers-run/lite/bin/gpusort --n 33554432 --dtype u32 --algo bitonic --reps 1 --no-baselines --no-verify > $OUT/ncu25-pipes.txt 2>&1
grep -vE "^==|Warning" $OUT/ncu25-pipes.txt | cut -c1-3000 | tail -80
