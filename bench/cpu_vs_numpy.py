#!/usr/bin/env python3
"""`gpusort sort --backend cpu` against numpy on the same .npy files, end to end.

Each run is a process of its own, timed from start to exit: gpusort reads, sorts and writes
(and syncs) the file; numpy loads, sorts and saves it (`np.sort`, or `np.argsort(kind="stable")`
with the keys gathered through it for `--argsort`). The runs of the binaries and numpy
alternate within each repetition, so that other load on the machine falls on all of them;
medians are reported, with each median's ratio to numpy's and the range of the runs.

    python3 bench/cpu_vs_numpy.py --log2 26 --reps 7 --dtypes u32,f32,u64 target/release/gpusort
    python3 bench/cpu_vs_numpy.py --argsort --reps 3 old/gpusort target/release/gpusort

Inputs (uniform u32/u64, standard normal f32/f64, seed 1) are written to --dir once and reused.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

DTYPES = {"u32": np.uint32, "i32": np.int32, "f32": np.float32,
          "u64": np.uint64, "i64": np.int64, "f64": np.float64}


def make_input(path, dtype, n):
    if os.path.exists(path):
        return
    rng = np.random.default_rng(1)
    t = np.dtype(DTYPES[dtype])
    if t.kind == "f":
        keys = rng.standard_normal(n, dtype=t)
    else:
        info = np.iinfo(t)
        keys = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
    np.save(path, keys)


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binaries", nargs="+", help="gpusort binaries to time")
    ap.add_argument("--log2", type=int, default=26, help="keys: 2^LOG2")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--dtypes", default="u32,f32,u64")
    ap.add_argument("--argsort", action="store_true", help="also write the permutation")
    ap.add_argument("--dir", default="cpu-bench", help="where the inputs and outputs go")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    times = {}
    for dtype in args.dtypes.split(","):
        make_input(os.path.join(args.dir, f"{dtype}.npy"), dtype, 1 << args.log2)
    for _ in range(args.reps):
        for dtype in args.dtypes.split(","):
            src = os.path.join(args.dir, f"{dtype}.npy")
            out = os.path.join(args.dir, "out.npy")
            idx = os.path.join(args.dir, "idx.npy")
            runs = {}
            for b in args.binaries:
                extra = ["--argsort", idx] if args.argsort else []
                runs[b] = [b, "sort", src, out, "--backend", "cpu"] + extra
            if args.argsort:
                code = (f"import numpy as np; a = np.load({src!r}); i = np.argsort(a, kind='stable');"
                        f" np.save({out!r}, a[i]); np.save({idx!r}, i)")
            else:
                code = f"import numpy as np; np.save({out!r}, np.sort(np.load({src!r})))"
            runs["numpy"] = [sys.executable, "-c", code]
            for name, cmd in runs.items():
                times.setdefault(dtype, {}).setdefault(name, []).append(timed(cmd))
    what = "argsort" if args.argsort else "sort"
    print(f"2^{args.log2} keys, {what}, {args.reps} repetitions, median seconds (ratio to numpy)")
    for dtype, per in times.items():
        numpy = statistics.median(per["numpy"])
        cells = [f"{name}: {statistics.median(t):.3f} ({statistics.median(t) / numpy:.2f}x;"
                 f" {min(t):.2f}-{max(t):.2f})" for name, t in per.items()]
        print(f"{dtype}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
