#!/usr/bin/env python3
"""Persistence landscape distance matrices end to end: barcodes in, matrix out.

n diagrams of --bars bars each, drawn by NumPy's default generator
(PCG64, ``numpy.random.default_rng(seed)``): births uniform on [0, 1),
lengths exponential with mean 0.1 (death = birth + length; every bar finite).
The landscape distance of two diagrams with k levels is
(sum_{j<=k} ||lambda_j - lambda'_j||_p^p)^(1/p), for p = 1 and p = 2.

Columns:

* mpcf, per --backend: ``mpcf.landscape(bars, k)`` (a PlfCollection of shape
  (n, k), exact breakpoints), then ``mpcf.pdist(L, p, components=True,
  layout="square")`` (the n x n matrix, exact). Timed for real at n.
* persim 0.4.1 ``PersLandscapeExact`` (exact, pure Python, one pair at a
  time): its landscapes of the diagrams of --pairs random pairs (every
  level: persim has no k; timed per diagram), cut to the first k levels, and
  ``(A - B).p_norm(p)`` per pair, which is the same sum over levels. The
  matrix time is EXTRAPOLATED: n x (landscape per diagram) +
  n(n-1)/2 x (distance per pair).
* GUDHI ``representations.Landscape(num_landscapes=k, resolution=--grid)``
  (sampled on a grid of --grid points inside [min birth, max death], fitted
  on all n diagrams; timed for real at n), then SciPy's
  ``scipy.spatial.distance.pdist`` (cityblock / euclidean) of the vectors.
  GUDHI's samples are sqrt(2) times the tents (its rotated coordinates) and
  the landscapes vanish at both ends of the range, so the grid estimate of
  the distance is h^(1/p) ||u - v||_p / sqrt(2), h the grid step (the
  trapezoid rule). The pairwise part is timed on the first --grid-rows
  diagrams and EXTRAPOLATED to n(n-1)/2 pairs (real when --grid-rows >= n).
  Its error is the largest relative difference to mpcf's exact distances on
  the sampled pairs and on all pairs of the --grid-rows block.

Agreement with persim: mpcf's distances against persim's on every sampled
pair (k levels), and on the first --full-pairs pairs with every level
(mpcf.landscape with k = --bars against persim's full landscapes).

    python tests/benchmarks/landscapes.py                      # n = 10,000, 100 bars, k = 5
    python tests/benchmarks/landscapes.py --n 500 --pairs 20   # a quick look
    python tests/benchmarks/landscapes.py --backend cpu cuda   # a column per backend

Needs mpcf (e.g. PYTHONPATH=build/bindings/python), NumPy and SciPy;
persim==0.4.1 and gudhi for their columns (left out, with a note, when
missing). Not part of CI: prints a markdown table, asserts nothing about
time.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

Pairs = List[Tuple[int, int]]


def make_diagrams(n: int, bars: int, seed: int) -> np.ndarray:
    """(n, bars, 2) (birth, death) rows: births uniform on [0, 1), lengths
    exponential with mean 0.1 (PCG64 seeded with seed)."""
    rng = np.random.default_rng(seed)
    births = rng.uniform(0.0, 1.0, size=(n, bars))
    lengths = rng.exponential(0.1, size=(n, bars))
    return np.stack([births, births + lengths], axis=-1)


def sample_pairs(n: int, count: int, seed: int) -> Pairs:
    """count distinct pairs i < j, uniform among the n(n-1)/2 pairs."""
    count = min(count, n * (n - 1) // 2)
    rng = np.random.default_rng(seed + 1)
    chosen: Dict[Tuple[int, int], None] = {}
    while len(chosen) < count:
        i, j = (int(x) for x in rng.integers(0, n, size=2))
        if i != j:
            chosen[(min(i, j), max(i, j))] = None
    return list(chosen)


def relative_errors(approx: np.ndarray, exact: np.ndarray) -> np.ndarray:
    approx, exact = np.asarray(approx, dtype=np.float64), np.asarray(exact, dtype=np.float64)
    nonzero = exact != 0
    return np.abs(approx[nonzero] - exact[nonzero]) / exact[nonzero]


# ---- mpcf --------------------------------------------------------------------


def run_mpcf(mpcf, diagrams: np.ndarray, k: int, ps: Sequence[float], backend: str,
             threads: Optional[int], pairs: Pairs, block: int) -> dict:
    """Times landscape + pdist at the full n; keeps the distances of the
    sampled pairs and of the first `block` rows for the comparisons."""
    out: dict = {"pdist": {}, "pairs": {}, "block": {}}
    t0 = time.perf_counter()
    L = mpcf.landscape(diagrams, k)
    out["landscape"] = time.perf_counter() - t0
    out["breakpoints"] = L.total_breakpoints if hasattr(L, "total_breakpoints") else None
    rows = np.array([i for i, _ in pairs], dtype=np.int64)
    cols = np.array([j for _, j in pairs], dtype=np.int64)
    for p in ps:
        t0 = time.perf_counter()
        D = mpcf.pdist(L, p, components=True, layout="square", backend=backend, threads=threads)
        out["pdist"][p] = time.perf_counter() - t0
        out["pairs"][p] = D[rows, cols].copy()
        out["block"][p] = D[:block, :block].copy()
        del D
    return out


def mpcf_full_depth(mpcf, diagrams: np.ndarray, pairs: Pairs, ps: Sequence[float]) -> Dict[float, np.ndarray]:
    """Distances of the pairs with every level (k = number of bars)."""
    res: Dict[float, List[float]] = {p: [] for p in ps}
    for i, j in pairs:
        L = mpcf.landscape(diagrams[[i, j]], diagrams.shape[1])
        for p in ps:
            res[p].append(float(mpcf.pdist(L, p, components=True)[0]))
    return {p: np.array(v) for p, v in res.items()}


# ---- persim ------------------------------------------------------------------


def stable_p_norm(levels: list, p: float) -> float:
    """The Lp norm (sum over levels) of piecewise linear functions given as
    persim's critical pairs, integrated without cancellation: on a piece
    from y0 to y1 of width w, w (|y0| + |y1|) / 2 (p = 1) or
    w (y0^2 + y0 y1 + y1^2) / 3 (p = 2) when y0 and y1 do not have opposite
    signs, w (|y0|^(p+1) + |y1|^(p+1)) / ((p + 1)(|y0| + |y1|)) when the
    piece crosses zero. persim's own p_norm divides |y1|^(p+1) - |y0|^(p+1)
    by the slope, which loses every digit on a piece of the difference of
    two landscapes that is constant up to rounding (both tents rising
    together): its values are off by up to a few percent on these diagrams."""
    if p not in (1, 2):
        raise ValueError("stable_p_norm knows p = 1 and p = 2")
    total = 0.0
    for level in levels:
        xy = np.asarray(level, dtype=np.float64)
        if len(xy) < 2:
            continue
        w = np.diff(xy[:, 0])
        y0, y1 = xy[:-1, 1], xy[1:, 1]
        crossing = y0 * y1 < 0
        a0, a1 = np.abs(y0), np.abs(y1)
        if p == 1:
            same = w * (a0 + a1) / 2
        else:
            same = w * (y0 * y0 + y0 * y1 + y1 * y1) / 3
        with np.errstate(invalid="ignore", divide="ignore"):
            cross = w * (a0 ** (p + 1) + a1 ** (p + 1)) / ((p + 1) * (a0 + a1))
        total += float(np.sum(np.where(crossing, cross, same)))
    return total ** (1.0 / p)


def run_persim(diagrams: np.ndarray, k: int, ps: Sequence[float], pairs: Pairs, full_pairs: int) -> dict:
    from persim.landscapes import PersLandscapeExact

    used = sorted({i for pair in pairs for i in pair})
    t0 = time.perf_counter()
    full = {i: PersLandscapeExact(dgms=[diagrams[i]], hom_deg=0) for i in used}
    per_diagram = (time.perf_counter() - t0) / len(used)
    levels = {i: PersLandscapeExact(critical_pairs=full[i].critical_pairs[:k], hom_deg=0) for i in used}
    out: dict = {"per_diagram": per_diagram, "per_pair": {}, "pairs": {}, "stable": {}, "full": {},
                 "depth": max(len(full[i].critical_pairs) for i in used)}
    for p in ps:
        t0 = time.perf_counter()
        values = [(levels[i] - levels[j]).p_norm(p=p) for i, j in pairs]
        out["per_pair"][p] = (time.perf_counter() - t0) / len(pairs)
        out["pairs"][p] = np.array(values)
        if p in (1, 2):
            # persim's landscapes and differences, integrated without cancellation.
            out["stable"][p] = np.array([stable_p_norm((levels[i] - levels[j]).critical_pairs, p)
                                         for i, j in pairs])
            out["full"][p] = np.array([stable_p_norm((full[i] - full[j]).critical_pairs, p)
                                       for i, j in pairs[:full_pairs]])
    return out


# ---- GUDHI on a grid ---------------------------------------------------------


def run_gudhi(diagrams: np.ndarray, k: int, ps: Sequence[float], grid: int, block: int, pairs: Pairs) -> dict:
    from gudhi.representations import Landscape
    from scipy.spatial.distance import pdist as scipy_pdist

    t0 = time.perf_counter()
    vectorizer = Landscape(num_landscapes=k, resolution=grid)
    V = vectorizer.fit_transform(list(diagrams))
    out: dict = {"vectorize": time.perf_counter() - t0, "pdist_block": {}, "pairs": {}, "block": {}}
    step = float(vectorizer.grid_[1] - vectorizer.grid_[0])
    assert np.allclose(np.diff(vectorizer.grid_), step), "GUDHI's grid is not uniform"
    rows = np.array([i for i, _ in pairs], dtype=np.int64)
    cols = np.array([j for _, j in pairs], dtype=np.int64)
    for p in ps:
        scale = step ** (1.0 / p) / math.sqrt(2.0)
        metric = {1: "cityblock", 2: "euclidean"}.get(p, "minkowski")
        kwargs = {} if metric != "minkowski" else {"p": p}
        t0 = time.perf_counter()
        Dv = scipy_pdist(V[:block], metric, **kwargs) * scale
        out["pdist_block"][p] = time.perf_counter() - t0
        out["block"][p] = Dv
        diff = np.abs(V[rows] - V[cols])
        out["pairs"][p] = (np.sum(diff ** p, axis=1) ** (1.0 / p)) * scale
    return out


# ---- report ------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 100:
        return f"{seconds:.0f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.3g} ms"


def condensed(block: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(block.shape[0], 1)
    return block[i, j]


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="diagrams (default 10,000)")
    ap.add_argument("--bars", type=int, default=100, help="bars per diagram (default 100)")
    ap.add_argument("--k", type=int, default=5, help="landscape levels (default 5)")
    ap.add_argument("--pairs", type=int, default=200, help="random pairs for persim and the errors (default 200)")
    ap.add_argument("--full-pairs", type=int, default=10,
                    help="of those, pairs compared with persim at every level (default 10)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the diagrams and the pairs (default 0)")
    ap.add_argument("--grid", type=int, default=1000, help="GUDHI grid points (default 1,000)")
    ap.add_argument("--grid-rows", type=int, default=1000,
                    help="diagrams whose grid distance matrix is computed (then extrapolated to n; default 1,000)")
    ap.add_argument("--p", type=float, nargs="+", default=[1.0, 2.0], help="exponents (default 1 2)")
    ap.add_argument("--backend", nargs="+", default=["cpu"], choices=["cpu", "cuda", "auto"],
                    help="mpcf backends, a column each (default cpu)")
    ap.add_argument("--threads", type=int, default=None, help="mpcf CPU threads (default all)")
    ap.add_argument("--no-persim", action="store_true")
    ap.add_argument("--no-gudhi", action="store_true")
    args = ap.parse_args(argv)

    import mpcf

    ps = [int(p) if float(p).is_integer() else p for p in args.p]
    n, block = args.n, min(args.grid_rows, args.n)
    all_pairs = n * (n - 1) // 2
    print(f"# Landscape distance matrices: n = {n:,} diagrams of {args.bars} bars, k = {args.k}, "
          f"seed {args.seed}")
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    print(f"mpcf: {mpcf.build_info()}")
    diagrams = make_diagrams(n, args.bars, args.seed)
    pairs = sample_pairs(n, args.pairs, args.seed)
    notes: List[str] = []

    ours: Dict[str, dict] = {}
    for backend in args.backend:
        try:
            ours[backend] = run_mpcf(mpcf, diagrams, args.k, ps, backend, args.threads, pairs, block)
        except Exception as exc:  # e.g. no CUDA here: the column says why
            notes.append(f"mpcf backend {backend}: {type(exc).__name__}: {exc}")
        print(f"  mpcf {backend} done; load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    reference = next(iter(ours.values()), None)

    persim = None
    if not args.no_persim:
        try:
            persim = run_persim(diagrams, args.k, ps, pairs, args.full_pairs)
        except ImportError as exc:
            notes.append(f"persim: not installed ({exc})")
        print(f"  persim done; load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    gudhi = None
    if not args.no_gudhi:
        try:
            gudhi = run_gudhi(diagrams, args.k, ps, args.grid, block, pairs)
        except ImportError as exc:
            notes.append(f"GUDHI: not installed ({exc})")
        print(f"  GUDHI done; load average {os.getloadavg()[0]:.2f}", file=sys.stderr)

    # The table.
    head = [f"mpcf {b} (exact)" for b in ours]
    if persim is not None:
        head.append("persim PersLandscapeExact (exact)")
    if gudhi is not None:
        head.append(f"GUDHI Landscape, {args.grid}-point grid + SciPy pdist")
    print()
    print("| | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")

    def row(name: str, cells: List[str]) -> None:
        print(f"| {name} | " + " | ".join(cells) + " |")

    ex = "" if block >= n else " (extrapolated)"
    cells = [fmt_time(o["landscape"]) for o in ours.values()]
    if persim is not None:
        cells.append(f"{fmt_time(n * persim['per_diagram'])} (extrapolated: {fmt_time(persim['per_diagram'])} "
                     f"per diagram, every level)")
    if gudhi is not None:
        cells.append(f"{fmt_time(gudhi['vectorize'])} (sampling, k x {args.grid} values per diagram)")
    row(f"landscapes of {n:,} diagrams", cells)
    for p in ps:
        cells = [fmt_time(o["pdist"][p]) for o in ours.values()]
        if persim is not None:
            cells.append(f"{fmt_time(all_pairs * persim['per_pair'][p])} (extrapolated: "
                         f"{fmt_time(persim['per_pair'][p])} per pair)")
        if gudhi is not None:
            t = gudhi["pdist_block"][p] * all_pairs / (block * (block - 1) // 2)
            cells.append(f"{fmt_time(t)}{ex}")
        row(f"distance matrix, p = {p} ({all_pairs:,} pairs)", cells)
    for p in ps:
        cells = [fmt_time(o["landscape"] + o["pdist"][p]) for o in ours.values()]
        if persim is not None:
            cells.append(f"{fmt_time(n * persim['per_diagram'] + all_pairs * persim['per_pair'][p])} (extrapolated)")
        if gudhi is not None:
            t = gudhi["vectorize"] + gudhi["pdist_block"][p] * all_pairs / (block * (block - 1) // 2)
            cells.append(f"{fmt_time(t)}{ex}")
        row(f"end to end, p = {p}", cells)
    if reference is not None:
        for p in ps:
            cells = ["exact" for _ in ours]
            if persim is not None:
                cell = (f"{relative_errors(persim['pairs'][p], reference['pairs'][p]).max():.1e} "
                        f"(its p_norm, on {len(pairs)} pairs)")
                if p in persim["stable"]:
                    cell += (f"; {relative_errors(persim['stable'][p], reference['pairs'][p]).max():.0e} "
                             "integrated without cancellation")
                cells.append(cell)
            if gudhi is not None:
                e_pairs = relative_errors(gudhi["pairs"][p], reference["pairs"][p]).max()
                e_block = relative_errors(gudhi["block"][p], condensed(reference["block"][p])).max()
                cells.append(f"{e_pairs:.1e} on the {len(pairs)} pairs, {e_block:.1e} on the "
                             f"{block * (block - 1) // 2:,} pairs of {block:,} diagrams")
            row(f"largest relative difference to mpcf, p = {p}", cells)

    print()
    first = next(iter(ours), None)
    for b, o in ours.items():
        if b == first:
            continue
        for p in ps:
            same = np.array_equal(o["pairs"][p], reference["pairs"][p]) and \
                np.array_equal(o["block"][p], reference["block"][p])
            worst = max(relative_errors(o["pairs"][p], reference["pairs"][p]).max(initial=0.0),
                        relative_errors(condensed(o["block"][p]), condensed(reference["block"][p])).max(initial=0.0))
            print(f"mpcf {b} vs {first}, p = {p}: " +
                  ("the same bits" if same else f"largest relative difference {worst:.1e}") +
                  " on the sampled pairs and the block")
    if reference is not None and persim is not None:
        stable = [p for p in ps if p in persim["stable"]]
        print(f"Agreement with persim, largest relative difference on {len(pairs)} pairs, k = {args.k}: "
              "persim's landscapes and differences integrated without cancellation (stable_p_norm): " +
              ", ".join(f"p = {p}: {relative_errors(persim['stable'][p], reference['pairs'][p]).max():.1e}"
                        for p in stable) +
              "; persim's own (A - B).p_norm(p): " +
              ", ".join(f"p = {p}: {relative_errors(persim['pairs'][p], reference['pairs'][p]).max():.1e}"
                        for p in ps))
        full = pairs[: args.full_pairs]
        ours_full = mpcf_full_depth(mpcf, diagrams, full, stable)
        print(f"Agreement with persim at every level (mpcf k = {args.bars}; persim's deepest level among "
              f"the sampled diagrams: {persim['depth']}), {len(full)} pairs, integrated without "
              "cancellation: " +
              ", ".join(f"p = {p}: {relative_errors(persim['full'][p], ours_full[p]).max():.1e}"
                        for p in stable))
    if reference is not None:
        print(f"Exact landscapes: {reference['breakpoints']:,} breakpoints "
              f"({reference['breakpoints'] / (n * args.k):.1f} per level)")
    for note in notes:
        print(f"Note: {note}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
