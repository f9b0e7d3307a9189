#!/usr/bin/env python3
"""PyTorch's GPU sorts, timed the way `gpusort bench --gpu-timing like-peers` times gpusort's.

    python3 bench/peers/torch_peers.py sort LO HI    torch.sort (values and indices), stable and
                                                     not, i32 f32 i64 keys, n = 2^LO .. 2^HI
    python3 bench/peers/torch_peers.py topk LO HI    torch.topk of f32 keys, k = 1, 8, 64, 256, 1024
    python3 bench/peers/torch_peers.py topk-rows     torch.topk along the rows of 16384 x 4096 and
                                                     1024 x 65536 f32 matrices, k = 8 .. 256
    python3 bench/peers/torch_peers.py rows LOG2     torch.sort(dim=-1) (stable and not) of 2^LOG2
                                                     i32 and i64 keys as rows of 16 .. 65536 keys

CSV on stdout: peer,dtype,n,ms_median,mkeys_per_ms,correct (what `gpusort bench --peers`
reads). PyTorch has no sort of unsigned 32- or 64-bit keys, so its rows are i32, f32 and i64:
`gpusort bench` shows them beside its own sorts of the same key type.

Timing: CUDA events around (a device copy that restores the input + the call), one warm-up then
PEERS_REPS (default 10) timed runs, median, less the median of the copy timed alone: the same
procedure as bench/peers/peers.cu. The outputs come from PyTorch's caching allocator, warm after
the first run.

Rows are named like `gpusort bench --rows`'s layouts: torch_sort_rows{L} (i32, i64), with the
row length in the name; n is all the keys.

Top-k rows are named like `gpusort bench --topk`'s: torch_topk_k{k} for an array of n keys,
torch_topk_rows{L}_k{k} for n / L rows of L keys.

correct = 1 when the values are non-decreasing, the indices are a permutation, the values are
the input at the indices and, for the stable sort, equal values keep their input order: together
exactly a (stable) sort. For top-k: the values equal the first k of a descending sort and the
indices point at them.
"""

import os
import sys

import torch

REPS = max(1, int(os.environ.get("PEERS_REPS", "10")))
DTYPES = {"i32": torch.int32, "f32": torch.float32, "i64": torch.int64}
TOPK = (1, 8, 64, 256, 1024)
TOPK_ROWS = ((16384, 4096), (1024, 65536))
TOPK_ROWS_K = (8, 16, 32, 64, 128, 256)


def median_ms(work):
    """One untimed run, then REPS runs between two events; the median in ms."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for rep in range(REPS + 1):
        start.record()
        work()
        stop.record()
        stop.synchronize()
        if rep > 0:
            times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def make_keys(name, n, generator):
    """Uniform keys from a fixed seed: integers over a wide range, floats in [-1, 1)."""
    if name == "f32":
        return torch.rand(n, device="cuda", generator=generator) * 2 - 1
    if name == "i32":
        return torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int32, device="cuda", generator=generator)
    return torch.randint(-(2**62), 2**62, (n,), dtype=torch.int64, device="cuda", generator=generator)


def is_sort(x, values, indices, stable):
    ok = bool((values[1:] >= values[:-1]).all())
    ok = ok and bool((torch.bincount(indices, minlength=x.numel()) == 1).all())
    ok = ok and torch.equal(x[indices], values)
    if stable:
        ties = values[1:] == values[:-1]
        ok = ok and bool((indices[1:][ties] > indices[:-1][ties]).all())
    return ok


def row(peer, dtype, n, ms, correct):
    per_ms = n / ms / 1e6 if ms > 0 else 0.0
    print(f"{peer},{dtype},{n},{ms:.4f},{per_ms:.3f},{int(correct)}", flush=True)


def sorts(lo, hi):
    generator = torch.Generator(device="cuda")
    for name in DTYPES:
        for log2 in range(lo, hi + 1):
            n = 1 << log2
            generator.manual_seed(42)
            x = make_keys(name, n, generator)
            work = torch.empty_like(x)
            copy = median_ms(lambda: work.copy_(x))
            for stable, peer in ((False, "torch_sort"), (True, "torch_sort_stable")):
                result = []

                def run():
                    work.copy_(x)
                    result[:] = torch.sort(work, stable=stable)

                ms = median_ms(run) - copy
                values, indices = result
                row(peer, name, n, ms, is_sort(x, values, indices, stable))
                del result, values, indices


def topk(lo, hi):
    generator = torch.Generator(device="cuda")
    for log2 in range(lo, hi + 1):
        n = 1 << log2
        generator.manual_seed(42)
        x = make_keys("f32", n, generator)
        work = torch.empty_like(x)
        copy = median_ms(lambda: work.copy_(x))
        descending = torch.sort(x, descending=True).values
        for k in (k for k in TOPK if k <= n):
            result = []

            def run():
                work.copy_(x)
                result[:] = torch.topk(work, k)

            ms = median_ms(run) - copy
            values, indices = result
            correct = torch.equal(values, descending[:k]) and torch.equal(x[indices], values)
            row(f"torch_topk_k{k}", "f32", n, ms, correct)
        del descending


def topk_rows():
    """torch.topk along the last axis (the k largest of each row), timed as topk's."""
    generator = torch.Generator(device="cuda")
    for rows, length in TOPK_ROWS:
        n = rows * length
        generator.manual_seed(42)
        x = make_keys("f32", n, generator).view(rows, length)
        work = torch.empty_like(x)
        copy = median_ms(lambda: work.copy_(x))
        descending = torch.sort(x, dim=-1, descending=True).values
        for k in TOPK_ROWS_K:
            result = []

            def run():
                work.copy_(x)
                result[:] = torch.topk(work, k, dim=-1)

            ms = median_ms(run) - copy
            values, indices = result
            correct = torch.equal(values, descending[:, :k]) and torch.equal(
                torch.gather(x, 1, indices), values
            )
            row(f"torch_topk_rows{length}_k{k}", "f32", n, ms, correct)
        del descending


def rows(log2):
    """torch.sort along the last axis of (2^log2 / L, L) matrices, timed as sorts'."""
    generator = torch.Generator(device="cuda")
    n = 1 << log2
    for name in ("i32", "i64"):
        generator.manual_seed(42)
        flat = make_keys(name, n, generator)
        length = 16
        while length <= min(65536, n):
            x = flat.view(n // length, length)
            work = torch.empty_like(x)
            copy = median_ms(lambda: work.copy_(x))
            for stable, peer in ((False, "torch_sort"), (True, "torch_sort_stable")):
                result = []

                def run():
                    work.copy_(x)
                    result[:] = torch.sort(work, dim=-1, stable=stable)

                ms = median_ms(run) - copy
                values, indices = result
                correct = bool((values[:, 1:] >= values[:, :-1]).all()) and torch.equal(
                    torch.gather(x, 1, indices), values
                )
                row(f"{peer}_rows{length}", name, n, ms, correct)
                del result, values, indices
            length *= 2


def main(argv):
    if len(argv) == 3 and argv[1] == "rows":
        lo = hi = int(argv[2])
    elif len(argv) == 2 and argv[1] == "topk-rows":
        lo = hi = 0
    elif len(argv) != 4 or argv[1] not in ("sort", "topk"):
        sys.exit(__doc__)
    else:
        lo, hi = int(argv[2]), int(argv[3])
        if not 1 <= lo <= hi <= 30:
            sys.exit("sizes 2^LO .. 2^HI need 1 <= LO <= HI <= 30")
    if not torch.cuda.is_available():
        sys.exit("torch_peers: PyTorch sees no CUDA device")
    print(f"torch_peers: {torch.cuda.get_device_name(0)}, torch {torch.__version__}", file=sys.stderr)
    print("peer,dtype,n,ms_median,mkeys_per_ms,correct", flush=True)
    if argv[1] == "rows":
        rows(lo)
    elif argv[1] == "topk-rows":
        topk_rows()
    else:
        (sorts if argv[1] == "sort" else topk)(lo, hi)


if __name__ == "__main__":
    main(sys.argv)
