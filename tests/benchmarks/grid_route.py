#!/usr/bin/env python3
"""libmpcf's exact L1 pdist beside the grid route, in one process.

The grid route is what one does without an exact library: sample every PCF
at G equally spaced times over the span of the data (the midpoint of each
cell; `mpcf.evaluate` does the sampling, which is exact and fast), then take
SciPy's `pdist(..., "cityblock")` of the n x G matrix times the cell width —
a midpoint Riemann sum of |f - g|. Its cost grows with G and its error
shrinks with G; libmpcf's result is exact. Both run on the CPU, one after
the other, in turns, median of --repeat runs; libmpcf with --threads threads
(SciPy's pdist is single-threaded; the sampling is not timed in the
grid-route time, which favours it, and is printed apart).

Input as in cpu_vs_masspcf.py (DESIGN §6: t_0 = 0, gaps uniform(0.05, 1),
values uniform(0, 10), last value 0), float64.

    PYTHONPATH=build/bindings/python python3 tests/benchmarks/grid_route.py
    PYTHONPATH=build/bindings/python python3 tests/benchmarks/grid_route.py --n 2000 --m 128 --grids 100,1000,10000

Prints a Markdown table: G, time of the grid route's pdist, time of the
sampling, libmpcf's time, the ratio, and the grid route's error: the largest
and the median relative error over all pairs against libmpcf's exact values.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def make_input(n: int, m: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    gaps = rng.uniform(0.05, 1.0, size=(n, m - 1))
    t = np.concatenate([np.zeros((n, 1)), np.cumsum(gaps, axis=1)], axis=1)
    v = rng.uniform(0.0, 10.0, size=(n, m))
    v[:, -1] = 0.0
    return t, v


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--grids", default="100,1000,10000", help="grid sizes G, comma-separated")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="libmpcf's threads")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import mpcf
    from scipy.spatial.distance import pdist as scipy_pdist

    n, m = args.n, args.m
    t, v = make_input(n, m)
    offsets = np.arange(n + 1, dtype=np.uint64) * np.uint64(m)
    X = mpcf.PcfCollection.from_csr(offsets, t.ravel(), v.ravel())
    lo, hi = 0.0, float(t.max())          # every function is 0 after its last time

    def run_mpcf():
        t0 = time.perf_counter()
        d = mpcf.pdist(X, backend="cpu", threads=args.threads)
        return time.perf_counter() - t0, d

    _, exact = run_mpcf()                  # warm-up and the exact values
    print(f"machine: {os.cpu_count()} CPUs; libmpcf {mpcf.__version__} ({mpcf.build_info()}); "
          f"n = {n}, m = {m}, float64, L1 over [{lo}, {hi:.3f}]; libmpcf on {args.threads} threads; "
          f"median of {args.repeat}")
    print()
    print("| G | grid route: pdist | grid route: sampling | libmpcf (exact) | grid route / libmpcf "
          "| grid route's error: max / median (relative) |")
    print("|---|---|---|---|---|---|")
    for G in (int(g) for g in args.grids.split(",")):
        width = (hi - lo) / G
        mid = lo + width * (np.arange(G) + 0.5)
        t0 = time.perf_counter()
        S = mpcf.evaluate(X, mid)          # (n, G)
        sampling = time.perf_counter() - t0
        grid_times, ours = [], []
        approx = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            approx = scipy_pdist(S, "cityblock") * width
            grid_times.append(time.perf_counter() - t0)
            ours.append(run_mpcf()[0])
        rel = np.abs(approx - exact) / exact
        g, o = statistics.median(grid_times), statistics.median(ours)
        print(f"| {G} | {g:.3f} s | {sampling:.3f} s | {o:.3f} s | {g / o:.1f}x | "
              f"{rel.max():.1e} / {np.median(rel):.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
