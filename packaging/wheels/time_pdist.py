"""Times mpcf.pdist from the installed package (packaging/wheels/gpu_check.sh).

    python time_pdist.py [--n 20000] [--m 128] [--dtype float32] [--backend cuda] [--repeat 3]
                         [--touched] [--knn K]

Input as in the C benchmark (tests/benchmarks/gpu/bench_gpu): t_0 = 0, gaps
uniform(0.05, 1), values uniform(0, 10), last value 0. The collection is
built before the clock starts (the C benchmark times from an existing handle
too); one untimed call warms up the GPU, then each timed call allocates its
own result (a fresh NumPy array, as a user's call does) and its seconds are
printed. --touched also times the same calls into one result array, filled
before the first (pdist(..., out=)); --knn K times mpcf.knn(X, K). A
300-function subset is checked against the CPU backend.
"""

import argparse
import sys
import time

import numpy as np

import mpcf


def make_input(n, m, dtype, seed=20240611):
    rng = np.random.default_rng(seed)
    times = np.zeros((n, m))
    times[:, 1:] = np.cumsum(rng.uniform(0.05, 1.0, size=(n, m - 1)), axis=1)
    values = rng.uniform(0.0, 10.0, size=(n, m))
    values[:, -1] = 0.0
    return np.ascontiguousarray(np.stack([times, values], axis=-1), dtype=dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--backend", default="cuda", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--touched", action="store_true")
    ap.add_argument("--knn", type=int, default=0)
    args = ap.parse_args()

    print(mpcf.build_info())
    print(f"mpcf {mpcf.__version__} from {mpcf.__file__}; CUDA devices: {mpcf.cuda_device_count()}")
    X = mpcf.PcfCollection(make_input(args.n, args.m, args.dtype))
    steps = (args.n - 1) * X.total_breakpoints
    case = f"pdist L1 {args.dtype} n={args.n} m={args.m} backend={args.backend}"

    mpcf.pdist(X, backend=args.backend)  # warm-up: context creation, first upload
    seconds = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        D = mpcf.pdist(X, backend=args.backend)
        seconds.append(time.perf_counter() - start)
        del D
    for k, s in enumerate(seconds):
        print(f"python {case}: call {k + 1}: {s:.4f} s ({steps / s:.3g} merge steps/s)")
    print(f"python {case}: best {min(seconds):.4f} s, median {sorted(seconds)[len(seconds) // 2]:.4f} s")

    def timed(label, fn):
        fn()
        ts = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - start)
        print(f"python {label}: best {min(ts):.4f} s, median {sorted(ts)[len(ts) // 2]:.4f} s")

    if args.touched:
        out = np.ones(args.n * (args.n - 1) // 2, dtype=args.dtype)  # every page touched
        timed(f"{case}, into a touched out= array", lambda: mpcf.pdist(X, backend=args.backend, out=out))
    if args.knn:
        timed(f"knn k={args.knn} {args.dtype} n={args.n} m={args.m} backend={args.backend}",
              lambda: mpcf.knn(X, args.knn, backend=args.backend))

    subset = mpcf.PcfCollection(make_input(300, args.m, args.dtype, seed=7))
    got = mpcf.pdist(subset, backend=args.backend)
    want = mpcf.pdist(subset, backend="cpu")
    rtol = 2e-5 if args.dtype == "float32" else 1e-12
    worst = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
    print(f"agreement with the CPU backend on 300 functions: largest relative difference {worst:.2e} (limit {rtol:g})")
    return 0 if worst <= rtol else 1


if __name__ == "__main__":
    sys.exit(main())
