#!/usr/bin/env python3
"""libmpcf's CPU backend beside masspcf's CPU build, side by side in one process.

pdist L1 of the DESIGN §6 input (t_0 = 0, gaps uniform(0.05, 1), values
uniform(0, 10), last value 0), float32 and float64, at n = 2000, m = 128 and
n = 500, m = 512, on every core and on one core. Each case times, in turns
(so that a busy machine slows all of them alike), the same pdist with

  * masspcf 0.4.1's CPU build (masspcf.system.force_cpu(True),
    masspcf.system.limit_cpus(threads));
  * libmpcf (mpcf.pdist(..., backend="cpu", threads=threads)), with its
    choice of instruction set (mpcf's build information: cpu_simd=...);
  * libmpcf's scalar walk (MPCF_CPU_SIMD=scalar), the walk before the SIMD
    one;

and prints the median of --repeat runs of each, merge steps per second
((n - 1) n m per pdist) and the ratios. The textbook baseline (one thread,
a branchy merge) is in bench_cpu (BM_baseline_naive_l1_f64). Both libraries'
distances are compared (largest relative difference). Without masspcf
(pip install masspcf==0.4.1) its columns are left empty and libmpcf is timed
alone.

    PYTHONPATH=build/bindings/python python tests/benchmarks/cpu_vs_masspcf.py
    PYTHONPATH=build/bindings/python python tests/benchmarks/cpu_vs_masspcf.py --repeat 7 --cases 2000x128

Thread counts: "all" is os.cpu_count() (or --threads N). Both libraries
are limited through their own settings; --pin also restricts the whole
process to the first `threads` CPUs (os.sched_setaffinity) for each case.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def make_input(n: int, m: int, seed: int = 7):
    """The DESIGN §6 input as CSR arrays (float64; cast per dtype)."""
    rng = np.random.default_rng(seed)
    gaps = rng.uniform(0.05, 1.0, size=(n, m - 1))
    t = np.concatenate([np.zeros((n, 1)), np.cumsum(gaps, axis=1)], axis=1)
    v = rng.uniform(0.0, 10.0, size=(n, m))
    v[:, -1] = 0.0
    return t, v


def masspcf_collection(mp, t, v, dtype):
    pdt = mp.pcf32 if dtype == np.float32 else mp.pcf64
    X = mp.zeros((t.shape[0],), dtype=pdt)
    for i in range(t.shape[0]):
        X[i] = mp.Pcf(np.stack([t[i], v[i]], axis=1).astype(dtype))
    return X


def mpcf_collection(mpcf, t, v, dtype):
    n, m = t.shape
    offsets = np.arange(n + 1, dtype=np.uint64) * np.uint64(m)
    return mpcf.PcfCollection.from_csr(offsets, t.astype(dtype).ravel(), v.astype(dtype).ravel())


def condensed(dense: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(dense.shape[0], k=1)
    return dense[i, j]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per case and library (median)")
    ap.add_argument("--cases", default="2000x128,500x512", help="n x m, comma-separated")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--threads", default="all,1", help="'all' and/or numbers, comma-separated")
    ap.add_argument("--pin", action="store_true", help="also pin the process to the first CPUs")
    ap.add_argument("--no-scalar", action="store_true", help="skip libmpcf's scalar walk")
    args = ap.parse_args()

    import mpcf

    try:
        import masspcf as mp
    except ImportError:
        mp = None
        print("masspcf is not installed (pip install masspcf==0.4.1): timing libmpcf alone\n")
    if mp is not None:
        mp.system.force_cpu(True)

    mp_version = "not installed"
    if mp is not None:
        try:
            from importlib.metadata import version

            mp_version = version("masspcf")
        except Exception:  # noqa: BLE001 - a version string is all this is for
            mp_version = "installed"
    info = mpcf.build_info() if hasattr(mpcf, "build_info") else ""
    simd = next((p.strip() for p in info.split(";") if p.strip().startswith("cpu_simd=")), "cpu_simd=?")
    simd = simd.split(" (")[0]
    if os.environ.get("MPCF_CPU_SIMD"):
        simd += f", run with MPCF_CPU_SIMD={os.environ['MPCF_CPU_SIMD']}"
    ncpu = os.cpu_count() or 1
    print(f"machine: {ncpu} CPUs; libmpcf {mpcf.__version__} ({simd}); "
          f"masspcf {mp_version}; "
          f"median of {args.repeat} runs per cell")
    print()
    header = ("| dtype | n | m | threads | masspcf | libmpcf | libmpcf scalar walk | "
              "libmpcf / masspcf | SIMD / scalar | libmpcf steps/s | max rel. diff |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    all_cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    for case in args.cases.split(","):
        n, m = (int(x) for x in case.lower().split("x"))
        t, v = make_input(n, m)
        steps = (n - 1) * n * m
        for dname in args.dtypes.split(","):
            dtype = np.dtype(dname).type
            X = mpcf_collection(mpcf, t, v, dtype)
            M = masspcf_collection(mp, t, v, dtype) if mp is not None else None
            for tname in args.threads.split(","):
                threads = ncpu if tname == "all" else int(tname)
                if args.pin and all_cpus is not None:
                    os.sched_setaffinity(0, all_cpus[:threads])
                if mp is not None:
                    mp.system.limit_cpus(threads)
                out = np.empty(n * (n - 1) // 2, dtype=dtype)

                def run_mpcf(scalar=False):
                    # MPCF_CPU_SIMD as the caller set it, except for the
                    # scalar column.
                    old = os.environ.get("MPCF_CPU_SIMD")
                    if scalar:
                        os.environ["MPCF_CPU_SIMD"] = "scalar"
                    try:
                        t0 = time.perf_counter()
                        mpcf.pdist(X, backend="cpu", threads=threads, out=out)
                        return time.perf_counter() - t0
                    finally:
                        if old is None:
                            os.environ.pop("MPCF_CPU_SIMD", None)
                        else:
                            os.environ["MPCF_CPU_SIMD"] = old

                def run_masspcf():
                    t0 = time.perf_counter()
                    D = mp.pdist(M)
                    elapsed = time.perf_counter() - t0
                    run_masspcf.last = D
                    return elapsed

                # One untimed call each (warm-up), then the timed runs in turns.
                run_mpcf()
                if mp is not None:
                    run_masspcf()
                times = {"masspcf": [], "mpcf": [], "scalar": []}
                for _ in range(args.repeat):
                    if mp is not None:
                        times["masspcf"].append(run_masspcf())
                    times["mpcf"].append(run_mpcf())
                    if not args.no_scalar:
                        times["scalar"].append(run_mpcf(scalar=True))
                med = {k: statistics.median(x) if x else None for k, x in times.items()}
                diff = ""
                if mp is not None:
                    ref = condensed(np.asarray(run_masspcf.last.to_dense(), dtype=np.float64))
                    ours = out.astype(np.float64)
                    diff = f"{np.max(np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-300)):.1e}"
                fmt = lambda x: f"{x:.3f} s" if x is not None else "—"
                ratio = f"**{med['masspcf'] / med['mpcf']:.2f}x**" if med["masspcf"] else "—"
                sratio = f"{med['scalar'] / med['mpcf']:.2f}x" if med["scalar"] else "—"
                print(f"| {dname} | {n} | {m} | {threads} | {fmt(med['masspcf'])} | {fmt(med['mpcf'])} | "
                      f"{fmt(med['scalar'])} | {ratio} | {sratio} | {steps / med['mpcf']:.3g} | {diff} |",
                      flush=True)
                if args.pin and all_cpus is not None:
                    os.sched_setaffinity(0, all_cpus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
