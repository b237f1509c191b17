#!/usr/bin/env python3
"""kNN with mpcf.dask on GPU workers against the single-process call.

Starts a Dask scheduler and one worker process per GPU (each seeing only its
GPU through CUDA_VISIBLE_DEVICES, one thread), then times, in turns, best of
--repeat:

  * mpcf.knn(X, k) in this process on all GPUs (libmpcf's multi-GPU call);
  * mpcf.dask.knn(X, k, chunks=C) for every C of --chunks ("auto" is the
    default tiling, which asks the workers how many GPUs they compute on);
  * the same with chunks="auto" on X scattered to the workers beforehand
    (mpcf.dask.scatter: the transfer of the collection left out);

and checks that every result has the single-process call's bits. Input: the
DESIGN section 6 PCFs (t_0 = 0, gaps uniform(0.05, 1), values uniform(0, 10),
last value 0), float32.

    python3 tests/benchmarks/dask/dask_gpus_knn.py --n 200000 --m 128 --chunks auto,50000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--chunks", default="auto,50000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--back-to-back", type=int, default=0,
                    help="then N calls of the scattered case in a row, then N of the single process")
    ap.add_argument("--idle", type=float, default=0.0,
                    help="seconds of sleep before each back-to-back call")
    ap.add_argument("--no-amm", action="store_true",
                    help="start the scheduler without Dask's Active Memory Manager (whose "
                    "ReduceReplicas policy drops the scattered collection's extra replicas "
                    "when no task waits for them)")
    ap.add_argument("--task-stream", action="store_true",
                    help="also print the Dask tasks' compute time of one call, per kind and worker")
    ap.add_argument("--backend", default="cuda", help="cpu: the same with CPU workers (2), "
                    "to try the script where there is no GPU")
    args = ap.parse_args()

    import mpcf
    import mpcf.dask
    from distributed import Client

    gpus = mpcf.cuda_device_count() if args.backend == "cuda" else 2
    if gpus < 1:
        print("no CUDA device")
        return 77
    print(mpcf.build_info())
    rng = np.random.default_rng(1)
    n, m = args.n, args.m
    gaps = rng.uniform(0.05, 1.0, size=(n, m - 1))
    t = np.concatenate([np.zeros((n, 1)), np.cumsum(gaps, axis=1)], axis=1).astype(np.float32)
    v = rng.uniform(0.0, 10.0, size=(n, m)).astype(np.float32)
    v[:, -1] = 0
    offsets = np.arange(n + 1, dtype=np.uint64) * np.uint64(m)
    X = mpcf.PcfCollection.from_csr(offsets, t.ravel(), v.ravel())

    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        sched = os.path.join(tmp, "scheduler.json")
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", "0",
             "--dashboard-address", ":0", "--scheduler-file", sched],
            env=dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ACTIVE_MEMORY_MANAGER__START=(
                "False" if args.no_amm else "True")),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(100):
            if os.path.exists(sched):
                break
            time.sleep(0.1)
        for g in range(gpus):
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(g))
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", sched,
                 "--nthreads", "1", "--nworkers", "1", "--memory-limit", "0",
                 "--dashboard-address", ":0"],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        try:
            client = Client(scheduler_file=sched)
            client.wait_for_workers(gpus, timeout=120)
            print(f"kNN k = {args.k}, n = {n}, m = {m}, float32; {gpus} GPU(s); "
                  f"{gpus} Dask worker(s), one GPU and one thread each; best of {args.repeat}\n")
            ref_d, ref_i = mpcf.knn(X, args.k, backend=args.backend)
            cases = {"single process, all GPUs": lambda: mpcf.knn(X, args.k, backend=args.backend)}
            for c in args.chunks.split(","):
                chunks = c if c == "auto" else int(c)
                cases[f"mpcf.dask, chunks={c}"] = (
                    lambda chunks=chunks: mpcf.dask.knn(X, args.k, chunks=chunks, client=client,
                                                        backend=args.backend))
            # The collection sent to the workers once beforehand (mpcf.dask.scatter),
            # as repeated computations over one collection do: the knn alone.
            scattered = mpcf.dask.scatter(X, client=client)
            cases["mpcf.dask, chunks=auto, X scattered beforehand"] = (
                lambda: mpcf.dask.knn(scattered, args.k, chunks="auto", client=client,
                                      backend=args.backend))
            best = {name: float("inf") for name in cases}
            times = {name: [] for name in cases}
            same = {}
            for _ in range(args.repeat):
                for name, run in cases.items():
                    t0 = time.perf_counter()
                    d, i = run()
                    times[name].append(time.perf_counter() - t0)
                    best[name] = min(best[name], times[name][-1])
                    same[name] = bool(np.array_equal(d, ref_d) and np.array_equal(i, ref_i))
            for name, ts in times.items():
                print(f"  {name}: " + ", ".join(f"{t:.3f}" for t in ts) + " s")
            if args.back_to_back:
                # The scattered case N times in a row, then the single
                # process N times: each without the other case's call just
                # before it.
                for name in ("mpcf.dask, chunks=auto, X scattered beforehand", "single process, all GPUs"):
                    for _ in range(args.back_to_back):
                        time.sleep(args.idle)
                        t0 = time.perf_counter()
                        d, i = cases[name]()
                        t = time.perf_counter() - t0
                        same[name] &= bool(np.array_equal(d, ref_d) and np.array_equal(i, ref_i))
                        print(f"  back to back: {name}: {t:.3f} s", flush=True)
            if args.task_stream:
                # Where the time of one call goes: each Dask task's compute
                # time, summed per kind of task and per worker.
                from distributed import get_task_stream
                with get_task_stream(client) as ts:
                    t0 = time.perf_counter()
                    cases["mpcf.dask, chunks=auto, X scattered beforehand"]()
                    wall = time.perf_counter() - t0
                from dask.utils import key_split
                per_kind, per_worker, timeline = {}, {}, []
                for task in ts.data:
                    kind = key_split(task["key"])
                    for ss in task["startstops"]:
                        if ss["action"] != "compute":
                            continue
                        d = ss["stop"] - ss["start"]
                        per_kind[kind] = per_kind.get(kind, 0.0) + d
                        per_worker[task["worker"]] = per_worker.get(task["worker"], 0.0) + d
                        timeline.append((ss["start"], ss["stop"], task["worker"], kind))
                print(f"task stream of one call (X scattered), wall {wall:.3f} s:")
                for kind, d in sorted(per_kind.items(), key=lambda kv: -kv[1]):
                    print(f"  {kind}: {d:.3f} s of compute")
                for worker, d in per_worker.items():
                    print(f"  worker {worker}: {d:.3f} s busy")
                if timeline:
                    first = min(t[0] for t in timeline)
                    print("  tasks (start, stop in s from the first task's start; worker; kind):")
                    for start, stop, worker, kind in sorted(timeline):
                        print(f"    {start - first:7.3f} {stop - first:7.3f}  {worker}  {kind}")
            single = best["single process, all GPUs"]
            print("| case | time | / single process | same bits |")
            print("|---|---|---|---|")
            for name, t in best.items():
                print(f"| {name} | {t:.3f} s | {t / single:.2f} | {same[name]} |", flush=True)
            client.close()
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
