#!/usr/bin/env python3
"""The fewest window passes a bitonic sort of 2^n keys needs after a tile sort of 2^t keys, when
every pass is one launch of blocks holding 2^w keys each and every load and store moves whole
segments of 2^s consecutive keys (s = 5: 128 bytes of 4-byte keys, a warp's 32 lanes).

A pass runs a consecutive run of the network's steps (stage k: bits k-1, ..., 0) whose bits are
all among its window's w bits.
- "in place" (what gpusort runs): keys stay at their index, so every window holds bits 0..s-1.
- "any layout": a pass may store its keys under any permutation of the index bits (the next pass
  reads them there); the s lowest address bits must then lie in both windows, so two consecutive
  windows share s bits, and the tile sort's output and the last pass's input obey the same rule.
  This bounds every schedule of such passes from below.
Usage: pass-floor.py (prints the pass-floor table of docs/benchmarks.md)."""
from collections import defaultdict


def steps(n, t):
    return [b for k in range(t + 1, n + 1) for b in range(k - 1, -1, -1)]


def in_place(n, t, w, s):
    seq, inf = steps(n, t), 10**9
    best = [0] + [inf] * len(seq)
    for a in range(len(seq)):
        used = set(range(s))
        for b in range(a, len(seq)):
            used.add(seq[b])
            if len(used) > w:
                break
            best[b + 1] = min(best[b + 1], best[a] + 1)
    return best[-1]


def any_layout(n, t, w, s):
    seq, inf = steps(n, t), 10**9
    bits = lambda a, b: set(seq[a:b])
    longest = {}
    for a in range(len(seq)):
        b, used = a, set()
        while b < len(seq) and len(used | {seq[b]}) <= w:
            used.add(seq[b])
            b += 1
        longest[a] = b
    # passes[b][a]: fewest passes through step b whose last pass runs steps a..b.
    passes = defaultdict(dict)
    for b in range(1, longest[0] + 1):
        if len(bits(0, b) | set(range(t))) <= t + w - s:
            passes[b][0] = 1
    done = inf
    for b in range(1, len(seq) + 1):
        for a, v in passes[b].items():
            here = bits(a, b)
            if b == len(seq):
                if len(here | set(range(s))) <= w:
                    done = min(done, v)
                continue
            for c in range(b + 1, longest[b] + 1):
                if len(here | bits(b, c)) <= 2 * w - s and v + 1 < passes[c].get(b, inf):
                    passes[c][b] = v + 1
    return done


if __name__ == "__main__":
    print("n  tile  window  segment  in_place  any_layout")
    for n in (20, 25, 28):
        for t, w, s in ((13, 13, 5), (13, 13, 4), (13, 13, 3), (13, 14, 5), (15, 13, 5)):
            print(f"2^{n} 2^{t} 2^{w} 2^{s} {in_place(n, t, w, s):3} {any_layout(n, t, w, s):3}")
