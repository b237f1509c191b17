#!/usr/bin/env python3
"""A result written into fresh memory versus an already-touched buffer.

The first call from Python, R or Julia writes its result into a freshly
allocated array, whose pages the kernel faults in (and zeroes) as the results
arrive. With MPCF_OUTPUT_PREFAULT=1, libmpcf faults the output in ahead of the
writes, on background threads (MADV_POPULATE_WRITE, transparent huge pages),
while the computation starts (off by default: it measured slower on a 16-core
GPU host). This times, in turns, the same pdist L1

  * fresh: mpcf.pdist(X) (a new np.empty result every call);
  * touched: mpcf.pdist(X, out=buf) into the same, already-written buffer;
  * fresh, prefault on: as fresh, with MPCF_OUTPUT_PREFAULT=1;

and prints the medians and fresh / touched.

    PYTHONPATH=build/bindings/python python tests/benchmarks/fresh_output.py --n 10000 --m 32
    # on a GPU machine:
    PYTHONPATH=build-sm90/bindings/python python tests/benchmarks/fresh_output.py \\
        --backend cuda --n 20000 --m 128 --dtype float32
"""

from __future__ import annotations

import argparse
import gc
import os
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
    print("| dtype | result | fresh | touched | fresh, prefault on | fresh / touched | on / touched |")
    print("|---|---|---|---|---|---|---|")
    for dname in args.dtype.split(","):
        dtype = np.dtype(dname)
        X = mpcf.PcfCollection.from_csr(offsets, t.astype(dtype).ravel(), v.astype(dtype).ravel())
        touched = np.ones(n * (n - 1) // 2, dtype=dtype)

        def fresh(off=False):
            if off:
                os.environ["MPCF_OUTPUT_PREFAULT"] = "1"
            try:
                gc.collect()
                t0 = time.perf_counter()
                D = mpcf.pdist(X, backend=args.backend, threads=args.threads)
                elapsed = time.perf_counter() - t0
            finally:
                os.environ.pop("MPCF_OUTPUT_PREFAULT", None)
            del D  # its pages go back to the system (a large array is its own mapping)
            return elapsed

        def warm():
            t0 = time.perf_counter()
            mpcf.pdist(X, backend=args.backend, threads=args.threads, out=touched)
            return time.perf_counter() - t0

        warm()
        fresh()
        runs = {"fresh": [], "touched": [], "off": []}
        for _ in range(args.repeat):
            runs["fresh"].append(fresh())
            runs["touched"].append(warm())
            runs["off"].append(fresh(off=True))
        med = {k: statistics.median(x) for k, x in runs.items()}
        mb = touched.nbytes / 2**20
        print(f"| {dname} | {mb:.0f} MiB | {med['fresh']:.4f} s | {med['touched']:.4f} s | "
              f"{med['off']:.4f} s | **{med['fresh'] / med['touched']:.2f}** | "
              f"{med['off'] / med['touched']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
