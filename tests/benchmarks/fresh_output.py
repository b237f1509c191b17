#!/usr/bin/env python3
"""A result written into fresh memory versus an already-touched buffer.

A large result in a freshly mapped array has every page faulted in (and
zeroed) by the kernel as libmpcf writes it. mpcf keeps the memory of freed
large results (the result pool, mpcf/_result_pool.py) and hands it to the
next one. This times, in turns, the same pdist L1

  * fresh: mpcf.pdist(X), a new result every call, the last one freed (the
    default: from the pool after the first call);
  * fresh, no pool: mpcf.pdist(X, out=np.empty(...)), a new mapping every
    call (what a result was before the pool);
  * touched: mpcf.pdist(X, out=buf) into the same, already-written buffer;

and prints the medians and their ratios to touched.

    PYTHONPATH=build/bindings/python python tests/benchmarks/fresh_output.py --n 10000 --m 32
    # on a GPU machine:
    PYTHONPATH=build-sm90/bindings/python python tests/benchmarks/fresh_output.py \\
        --backend cuda --n 20000 --m 128 --dtype float32
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda", "auto"])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--m", type=int, default=32)
    ap.add_argument("--dtype", default="float32,float64")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()

    import mpcf

    rng = np.random.default_rng(7)
    n, m = args.n, args.m
    gaps = rng.uniform(0.05, 1.0, size=(n, m - 1))
    t = np.concatenate([np.zeros((n, 1)), np.cumsum(gaps, axis=1)], axis=1)
    v = rng.uniform(0.0, 10.0, size=(n, m))
    v[:, -1] = 0.0
    offsets = np.arange(n + 1, dtype=np.uint64) * np.uint64(m)
    print(f"{mpcf.build_info()}")
    print(f"pdist L1, n = {n}, m = {m}, backend {args.backend}, result "
          f"{n * (n - 1) // 2} values; median of {args.repeat} runs\n")
    print("| dtype | result | fresh (pool) | fresh, no pool | touched | pool / touched | "
          "no pool / touched |")
    print("|---|---|---|---|---|---|---|")
    for dname in args.dtype.split(","):
        dtype = np.dtype(dname)
        X = mpcf.PcfCollection.from_csr(offsets, t.astype(dtype).ravel(), v.astype(dtype).ravel())
        touched = np.ones(n * (n - 1) // 2, dtype=dtype)

        def fresh(pool=True):
            gc.collect()
            t0 = time.perf_counter()
            if pool:
                D = mpcf.pdist(X, backend=args.backend, threads=args.threads)
            else:
                D = mpcf.pdist(X, backend=args.backend, threads=args.threads,
                               out=np.empty(n * (n - 1) // 2, dtype=dtype))
            elapsed = time.perf_counter() - t0
            del D  # to the pool, or (no pool) back to the system: a large array is its own mapping
            gc.collect()
            return elapsed

        def warm():
            t0 = time.perf_counter()
            mpcf.pdist(X, backend=args.backend, threads=args.threads, out=touched)
            return time.perf_counter() - t0

        warm()
        fresh()
        runs = {"fresh": [], "touched": [], "nopool": []}
        for _ in range(args.repeat):
            runs["fresh"].append(fresh())
            runs["touched"].append(warm())
            runs["nopool"].append(fresh(pool=False))
        med = {k: statistics.median(x) for k, x in runs.items()}
        mb = touched.nbytes / 2**20
        print(f"| {dname} | {mb:.0f} MiB | {med['fresh']:.4f} s | {med['nopool']:.4f} s | "
              f"{med['touched']:.4f} s | **{med['fresh'] / med['touched']:.2f}** | "
              f"{med['nopool'] / med['touched']:.2f} |", flush=True)
        del touched
        mpcf.release_result_memory()
    return 0


if __name__ == "__main__":
    sys.exit(main())
