#!/usr/bin/env python3
"""Scaling of mpcf.dask over worker processes on one machine.

For each worker count w (LocalCluster(n_workers=w, threads_per_worker=1),
CPU backend, one libmpcf thread per task) it times

  pdist (persist)  the tiles of mpcf.dask.pdist computed and kept on the workers
  pdist (gather)   the same, then the n x n matrix gathered into the client
  knn              mpcf.dask.knn (the tree-merged lists reach the client)

and, in the same process, the single-process calls on w threads
(mpcf.pdist(X, layout="square"), mpcf.knn). It prints one table:

  speedup     t(1 worker) / t(w workers)
  efficiency  speedup / w
  overhead    t(w workers) / t(single process, w threads)
  CPU time    CPU seconds of the client, scheduler and worker processes for
              one run, beside those of the single-process call: what the
              distribution costs in work, which the load of a shared machine
              changes far less than the wall times

then the fixed cost of a distributed call at a small n, and the scheduler's
cost per task (the same small problem cut into many tiles or one). All
clusters run side by side and the cases are interleaved, so that a change of
the machine's load touches every case alike; each time is the best of
--repeat runs. Inputs as in bench_cpu: t_0 = 0, gaps uniform(0.05, 1),
values uniform(0, 10), last value 0. The distributed results are checked
against the single-process ones (the same bits) before timing.

With --gpu-beside C1,C2,... (a CUDA build of mpcf and a GPU) it also times,
for each C, a LocalCluster of C CPU workers and one GPU worker (one thread
each; the GPU worker's tasks run libmpcf with backend "cuda", the others with
"cpu", set through each worker's Dask configuration "mpcf.backend"), against
the single-process calls on the GPU and on all cores. GPU and CPU round the
last bits differently, so these results are checked against the CPU ones
within 1e-9 relative, not bitwise.

Needs mpcf (a build tree's bindings/python on PYTHONPATH, or an installed
wheel) and dask[array,distributed]:

    PYTHONPATH=build/bindings/python python3 tests/benchmarks/dask/bench_dask_scaling.py \\
        --n 3000 --m 128 --workers 1,2 --chunks 500
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from contextlib import ExitStack
from typing import Callable, Dict, List

import numpy as np

import mpcf
import mpcf.dask as mdask
from distributed import Client, LocalCluster, futures_of, wait


def make_input(n: int, m: int, dtype: str, seed: int = 1) -> mpcf.PcfCollection:
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.05, 1.0, (n, m)), axis=1)
    t -= t[:, :1]
    v = rng.uniform(0.0, 10.0, (n, m))
    v[:, -1] = 0.0
    return mpcf.PcfCollection(np.stack([t, v], axis=2).astype(dtype))


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _own_cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def worker_cpu(client) -> float:
    """CPU seconds used so far by the worker processes of a cluster."""
    return sum(client.run(_own_cpu_seconds).values())


def _set_backend(backend: str) -> None:
    """On a worker: its tasks run libmpcf on this backend (the call passes none)."""
    import dask

    dask.config.set({"mpcf.backend": backend})


def tile_count(n: int, chunks: int) -> int:
    nb = -(-n // chunks)
    return nb * (nb + 1) // 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=3000, help="PCFs (default 3000)")
    ap.add_argument("--m", type=int, default=128, help="breakpoints per PCF (default 128)")
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--workers", default="1,2", help="worker process counts (default 1,2)")
    ap.add_argument("--chunks", type=int, default=500, help="rows per tile (default 500)")
    ap.add_argument("--k", type=int, default=10, help="neighbours for knn (default 10)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per case; the best counts (default 5)")
    ap.add_argument("--small-n", type=int, default=200, help="n of the fixed-cost case (default 200)")
    ap.add_argument("--gpu-beside", default="",
                    help="CPU worker counts to run beside one GPU worker, e.g. 0,15 (default: no GPU runs)")
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",") if w]
    gpu_beside = [int(c) for c in args.gpu_beside.split(",") if c]

    X = make_input(args.n, args.m, args.dtype)
    small = make_input(args.small_n, args.m, args.dtype, seed=2)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"# mpcf.dask scaling: n = {args.n}, m = {args.m}, {args.dtype}, tiles of {args.chunks} rows "
          f"({tile_count(args.n, args.chunks)} computed tiles), k = {args.k}, best of {args.repeat}")
    print(f"# machine: {cores} usable cores, load average {os.getloadavg()[0]:.2f} at start; "
          f"{mpcf.build_info()}")
    import dask
    import distributed

    print(f"# Python {sys.version.split()[0]}, NumPy {np.__version__}, dask {dask.__version__}, "
          f"distributed {distributed.__version__}")

    reference = {"pdist": mpcf.pdist(X, layout="square", backend="cpu"),
                 "knn": mpcf.knn(X, args.k, backend="cpu")}
    ops = ("pdist (persist)", "pdist (gather)", "knn")
    best: Dict[tuple, float] = {}
    scatter_s: Dict[int, float] = {}
    small_rows: List[str] = []
    gpu_rows: List[str] = []

    cpu: Dict[tuple, float] = {}

    def record(key, fn, client=None):
        """Wall time, and CPU time of this process (client and scheduler)
        plus, for a cluster, its worker processes."""
        cpu0 = time.process_time() + (worker_cpu(client) if client else 0.0)
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        used = time.process_time() + (worker_cpu(client) if client else 0.0) - cpu0
        best[key] = min(best.get(key, float("inf")), elapsed)
        cpu[key] = min(cpu.get(key, float("inf")), used)

    with ExitStack() as stack:
        clients = {}
        for w in workers:  # all clusters up at once, idle while another one runs
            cluster = stack.enter_context(LocalCluster(
                n_workers=w, threads_per_worker=1, processes=True, dashboard_address=":0",
                silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster, set_as_default=False))
            client.run(lambda: __import__("mpcf.dask"))  # workers import mpcf before timing
            start = time.perf_counter()
            S = mdask.scatter(X, client=client)
            scatter_s[w] = time.perf_counter() - start
            clients[w] = (client, S)
            got = client.compute(mdask.pdist(S, chunks=args.chunks, backend="cpu")).result()
            assert got.tobytes() == reference["pdist"].tobytes(), "pdist differs from the single call"
            d, i = mdask.knn(S, args.k, chunks=args.chunks, backend="cpu")
            assert d.tobytes() == reference["knn"][0].tobytes() and np.array_equal(i, reference["knn"][1])

        def dask_case(op, w):
            client, S = clients[w]
            if op == "pdist (persist)":  # tiles computed and left on the workers
                D = client.persist(mdask.pdist(S, chunks=args.chunks, backend="cpu"))
                with client.as_current():
                    wait(futures_of(D))
                del D
            elif op == "pdist (gather)":  # and the matrix brought to the client
                client.compute(mdask.pdist(S, chunks=args.chunks, backend="cpu")).result()
            else:
                mdask.knn(S, args.k, chunks=args.chunks, backend="cpu")

        def single_case(op, w):
            if op == "knn":
                mpcf.knn(X, args.k, backend="cpu", threads=w)
            else:
                mpcf.pdist(X, layout="square", backend="cpu", threads=w)

        # Interleaved, so that a change of the machine's load touches every
        # case alike; the best run of each counts.
        for _ in range(args.repeat):
            for w in workers:
                for op in ops:
                    if op != "pdist (gather)":
                        record(("single", op, w), lambda: single_case(op, w))
                    record(("dask", op, w), lambda: dask_case(op, w), clients[w][0])

        # Fixed cost at a small n, and the scheduler's cost per task: the
        # same problem as one tile and as many.
        if workers:
            w = workers[0]
            client, _ = clients[w]
            Ss = mdask.scatter(small, client=client)
            side = max(1, args.small_n // 20)
            nb = -(-args.small_n // side)
            tasks = nb * nb  # tiles on and below the diagonal, transposes above
            one_single = best_of(5, lambda: mpcf.pdist(small, layout="square", backend="cpu", threads=w))
            one_tile = best_of(5, lambda: client.compute(mdask.pdist(Ss, chunks=args.small_n, backend="cpu")).result())
            many = best_of(5, lambda: client.compute(mdask.pdist(Ss, chunks=side, backend="cpu")).result())
            knn_single = best_of(5, lambda: mpcf.knn(small, args.k, backend="cpu", threads=w))
            knn_one = best_of(5, lambda: mdask.knn(Ss, args.k, chunks=args.small_n, backend="cpu"))
            plural = "s" if w > 1 else ""
            small_rows += [
                f"| pdist, n = {args.small_n}, single process ({w} thread{plural}) | {one_single * 1e3:.1f} ms | |",
                f"| pdist, n = {args.small_n}, mpcf.dask, 1 tile ({w} worker{plural}) | {one_tile * 1e3:.1f} ms "
                f"| +{(one_tile - one_single) * 1e3:.1f} ms |",
                f"| pdist, n = {args.small_n}, mpcf.dask, tiles of {side} ({tasks} tasks) | {many * 1e3:.1f} ms "
                f"| {(many - one_tile) / (tasks - 1) * 1e3:.2f} ms per extra task |",
                f"| knn, n = {args.small_n}, single process ({w} thread{plural}) | {knn_single * 1e3:.1f} ms | |",
                f"| knn, n = {args.small_n}, mpcf.dask, 1 tile ({w} worker{plural}) | {knn_one * 1e3:.1f} ms "
                f"| +{(knn_one - knn_single) * 1e3:.1f} ms |",
            ]

        # One GPU worker beside C CPU workers: every worker takes tiles as it
        # becomes free, so the GPU worker takes most of them.
        if gpu_beside:
            cuda_ref = mpcf.pdist(X, layout="square", backend="cuda")
            cases = {
                "pdist (persist), single process, GPU": lambda: mpcf.pdist(X, layout="square", backend="cuda"),
                f"pdist (persist), single process, CPU ({cores} threads)":
                    lambda: mpcf.pdist(X, layout="square", backend="cpu", threads=cores),
                "knn, single process, GPU": lambda: mpcf.knn(X, args.k, backend="cuda"),
                f"knn, single process, CPU ({cores} threads)": lambda: mpcf.knn(X, args.k, backend="cpu", threads=cores),
            }
            for c in gpu_beside:
                cluster = stack.enter_context(LocalCluster(
                    n_workers=c + 1, threads_per_worker=1, processes=True, dashboard_address=":0",
                    silence_logs=logging.ERROR))
                client = stack.enter_context(Client(cluster, set_as_default=False))
                addresses = sorted(client.scheduler_info()["workers"])
                client.run(_set_backend, "cuda", workers=addresses[:1])
                if c:
                    client.run(_set_backend, "cpu", workers=addresses[1:])
                client.run(lambda: __import__("mpcf.dask"))
                S = mdask.scatter(X, client=client)
                got = client.compute(mdask.pdist(S, chunks=args.chunks)).result()
                np.testing.assert_allclose(got, reference["pdist"], rtol=1e-9, atol=0)
                np.testing.assert_allclose(got, cuda_ref, rtol=1e-9, atol=0)
                d, _ = mdask.knn(S, args.k, chunks=args.chunks)
                np.testing.assert_allclose(d, reference["knn"][0], rtol=1e-9, atol=0)

                def persist(client=client, S=S):
                    D = client.persist(mdask.pdist(S, chunks=args.chunks))
                    with client.as_current():
                        wait(futures_of(D))

                cases[f"pdist (persist), mpcf.dask, 1 GPU worker + {c} CPU workers"] = persist
                cases[f"knn, mpcf.dask, 1 GPU worker + {c} CPU workers"] = \
                    lambda S=S: mdask.knn(S, args.k, chunks=args.chunks)
            gpu_best = {name: float("inf") for name in cases}
            for _ in range(args.repeat):  # interleaved, as above
                for name, fn in cases.items():
                    start = time.perf_counter()
                    fn()
                    gpu_best[name] = min(gpu_best[name], time.perf_counter() - start)
            gpu_rows = [f"| {name} | {t:.3f} s |" for name, t in gpu_best.items()]

    def single_key(op, w):
        return ("single", "pdist (persist)" if op == "pdist (gather)" else op, w)

    rows = [{"op": op, "workers": w, "time": best[("dask", op, w)], "single": best[single_key(op, w)],
             "cpu": cpu[("dask", op, w)], "single_cpu": cpu[single_key(op, w)]}
            for op in ops for w in workers]
    if workers:
        base = {r["op"]: r["time"] for r in rows if r["workers"] == workers[0]}
        print()
        print("| operation | workers | time | speedup | efficiency | single process, same cores | overhead "
              "| CPU time: mpcf.dask / single process |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            speedup = base[r["op"]] / r["time"] * workers[0]
            print(f"| {r['op']} | {r['workers']} | {r['time']:.3f} s | {speedup:.2f}x | "
                  f"{speedup / r['workers'] * 100:.0f}% | {r['single']:.3f} s | "
                  f"{r['time'] / r['single']:.2f}x | {r['cpu']:.2f} s / {r['single_cpu']:.2f} s |")
        print()
        print("scatter of the input (once per cluster): " +
              ", ".join(f"{w} worker{'s' if w > 1 else ''} {t * 1e3:.0f} ms" for w, t in scatter_s.items()))
        print()
        print("| fixed costs | time | overhead |")
        print("|---|---|---|")
        for line in small_rows:
            print(line)
    if gpu_rows:
        print()
        print(f"| one GPU worker beside CPU workers (n = {args.n}, tiles of {args.chunks} rows) | time |")
        print("|---|---|")
        for line in gpu_rows:
            print(line)
    print(f"# load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
