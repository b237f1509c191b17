"""An independent, deliberately simple reference for the tests.

It evaluates both functions on the union of their breakpoints (and the window
ends) and sums the pieces in float64 with math.fsum. It shares no code with
libmpcf or the mpcf package and is written for clarity, not speed.
"""

from __future__ import annotations

import math
from typing import List, Sequence, Tuple

import numpy as np

Pcf = np.ndarray  # (m, 2) rows of (t, v)


def value_at(f: Pcf, t: float) -> float:
    """f(t) for t finite: 0 before the first breakpoint, else the value of
    the last breakpoint at or before t."""
    times = f[:, 0]
    k = int(np.searchsorted(times, t, side="right")) - 1
    return 0.0 if k < 0 else float(f[k, 1])


def _pieces(f: Pcf, g: Pcf, a: float, b: float) -> List[Tuple[float, float, float, float]]:
    """The pieces (left, right, f, g) of [a, b) on which f and g are both
    constant; an unbounded end is +-inf. The piece left of every breakpoint
    (where both are 0) is included when the window reaches it."""
    edges = sorted(
        {float(t) for t in f[:, 0]} | {float(t) for t in g[:, 0]}
    )
    edges = [e for e in edges if a < e < b]
    bounds = [a] + edges + [b]
    pieces = []
    for left, right in zip(bounds[:-1], bounds[1:]):
        if left == -math.inf:
            # Left of every breakpoint of both functions: both are 0.
            pieces.append((left, right, 0.0, 0.0))
        else:
            pieces.append((left, right, value_at(f, left), value_at(g, left)))
    return pieces


def _window(window, dtype) -> Tuple[float, float]:
    if window is None:
        return -math.inf, math.inf
    a, b = window
    # libmpcf integrates float32 data over the window rounded to float32.
    return float(np.dtype(dtype).type(a)), float(np.dtype(dtype).type(b))


def lp_distance(f: Pcf, g: Pcf, p: float, window=None, dtype=np.float64) -> float:
    a, b = _window(window, dtype)
    f = np.asarray(f, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    terms = []
    sup = 0.0
    for left, right, fv, gv in _pieces(f, g, a, b):
        d = abs(fv - gv)
        if d == 0.0:
            continue  # exactly zero, however long the piece
        sup = max(sup, d)
        width = right - left
        terms.append(math.inf if math.isinf(width) else (d if p == 1 else d**p) * width)
    if p == math.inf:
        return sup
    total = math.fsum(terms) if not any(math.isinf(x) for x in terms) else math.inf
    return total if p == 1 else total ** (1.0 / p)


def l2_inner(f: Pcf, g: Pcf, window=None, dtype=np.float64) -> Tuple[float, float]:
    """(integral of f*g, integral of |f*g|); the second is the scale the
    tests use for tolerances when terms of both signs cancel."""
    a, b = _window(window, dtype)
    f = np.asarray(f, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    terms = []
    for left, right, fv, gv in _pieces(f, g, a, b):
        prod = fv * gv
        if prod == 0.0:
            continue
        width = right - left
        terms.append(math.copysign(math.inf, prod) if math.isinf(width) else prod * width)
    infs = {x for x in terms if math.isinf(x)}
    if infs:
        return (infs.pop() if len(infs) == 1 else math.nan), math.inf
    return math.fsum(terms), math.fsum(abs(x) for x in terms)


def pdist_square(fs: Sequence[Pcf], p: float, window=None, dtype=np.float64) -> np.ndarray:
    n = len(fs)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i):
            D[i, j] = D[j, i] = lp_distance(fs[i], fs[j], p, window, dtype)
    return D


def condensed(D: np.ndarray) -> np.ndarray:
    """SciPy's order: (0,1), (0,2), ..., (0,n-1), (1,2), ..."""
    n = D.shape[0]
    return np.array([D[i, j] for i in range(n) for j in range(i + 1, n)])


def kernel_square(fs: Sequence[Pcf], window=None, dtype=np.float64) -> Tuple[np.ndarray, np.ndarray]:
    n = len(fs)
    K = np.zeros((n, n))
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            K[i, j], S[i, j] = l2_inner(fs[i], fs[j], window, dtype)
            K[j, i], S[j, i] = K[i, j], S[i, j]
    return K, S


def random_pcfs(rng: np.random.Generator, n: int, dtype, *, tails: bool = False,
                negative: bool = False, max_m: int = 12) -> List[Pcf]:
    """n random PCFs: t_0 in [-2, 2], gaps in [0.05, 1.5], values in
    [0, 10) (or [-10, 10) with `negative`). The last value is 0 unless
    `tails`, where about half the functions keep a non-zero value for ever.
    Values are rounded to multiples of 1/8 so float32 holds them exactly."""
    out = []
    for _ in range(n):
        m = int(rng.integers(1, max_m + 1))
        t0 = rng.uniform(-2.0, 2.0)
        gaps = rng.uniform(0.05, 1.5, size=m - 1)
        t = np.round(np.concatenate([[t0], t0 + np.cumsum(gaps)]) * 8) / 8
        t = np.unique(t)  # rounding may merge two times
        lo = -10.0 if negative else 0.0
        v = np.round(rng.uniform(lo, 10.0, size=t.shape[0]) * 8) / 8
        if not tails or rng.random() < 0.5:
            v[-1] = 0.0
        out.append(np.column_stack([t, v]).astype(dtype))
    return out
