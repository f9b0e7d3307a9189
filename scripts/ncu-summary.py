#!/usr/bin/env python3
"""Summarises `ncu --metrics gpu__time_duration.sum,...` output per kernel name (stdin or file)."""
import collections, re, sys

METRICS = {
    "gpu__time_duration.sum": "us",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
    "launch__registers_per_thread": "regs",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "warps%",
}
values, kernel = collections.defaultdict(list), None
for line in open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin:
    m = re.match(r"\s+(\w+)\(", line) or re.match(r"\s+(bitonic_\w+|merge_\w+)", line)
    if m:
        kernel = m.group(1)
        continue
    m = re.search(r"(\S+)\s+(\S+)\s+([\d.,]+)\s*$", line)
    if m and kernel and m.group(1) in METRICS:
        scale = 1e-3 if m.group(2) == "nsecond" else 1e3 if m.group(2) == "msecond" else 1
        v = float(m.group(3).replace(",", ""))
        values[(kernel, m.group(1))].append(v * scale if m.group(1) == "gpu__time_duration.sum" else v)
print(f"{'kernel':32} {'launches':>8} {'total us':>10} {'each us':>9} {'dram%':>6} {'regs':>5} {'warps%':>7}")
for k in sorted({k for k, _ in values}):
    t = values[(k, "gpu__time_duration.sum")]
    avg = lambda m: sum(values[(k, m)]) / max(1, len(values[(k, m)]))
    print(f"{k:32} {len(t):8} {sum(t):10.1f} {sum(t) / max(1, len(t)):9.1f} "
          f"{avg('dram__throughput.avg.pct_of_peak_sustained_elapsed'):6.1f} "
          f"{avg('launch__registers_per_thread'):5.0f} {avg('sm__warps_active.avg.pct_of_peak_sustained_active'):7.1f}")
