"""Piecewise linear functions (PlfCollection), persistence landscapes and
silhouettes, and objects of several functions (components=True).

The references here are independent of libmpcf: exact rational arithmetic
(fractions.Fraction) on dyadic PLFs, tents evaluated with NumPy on a grid
with every critical point, persim's exact landscapes, and per-component
matrices combined in NumPy."""

import io
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest

import mpcf

INF = float("inf")


# ----------------------------------------------------------------------
# An exact reference in rational arithmetic
# ----------------------------------------------------------------------

def _frac_points(f):
    return [(Fraction(float(t)), Fraction(float(v))) for t, v in f]


def _right(f, a):
    """f(a+) of a PLF (right-continuous: f(t0) = v0)."""
    if a < f[0][0]:
        return Fraction(0)
    if a >= f[-1][0]:
        return f[-1][1]
    for (t0, v0), (t1, v1) in zip(f, f[1:]):
        if t0 <= a < t1:
            return v0 + (v1 - v0) * (a - t0) / (t1 - t0)
    raise AssertionError


def _left(f, b):
    """f(b-): 0 up to t0 (the jump at t0), the interpolation after."""
    if b <= f[0][0]:
        return Fraction(0)
    if b > f[-1][0]:
        return f[-1][1]
    for (t0, v0), (t1, v1) in zip(f, f[1:]):
        if t0 < b <= t1:
            return v0 + (v1 - v0) * (b - t0) / (t1 - t0)
    raise AssertionError


def _pieces(f, g, window):
    """(width, f(a+), f(b-), g(a+), g(b-)) of every bounded merged piece in
    the window, and the tail values (f_last, g_last) when the window is
    unbounded on the right (else None)."""
    a, b = (-INF, INF) if window is None else window
    cuts = sorted({t for t, _ in f} | {t for t, _ in g} | {Fraction(x) for x in (a, b) if math.isfinite(x)})
    cuts = [t for t in cuts if (a == -INF or t >= Fraction(a)) and (b == INF or t <= Fraction(b))]
    out = [(r - l, _right(f, l), _left(f, r), _right(g, l), _left(g, r)) for l, r in zip(cuts, cuts[1:])]
    # before the first breakpoint both functions are 0: nothing to add
    tail = (f[-1][1], g[-1][1]) if b == INF else None
    return out, tail


def _abs_power_integral(x, y, w, p):
    """The integral of |h|^p over a piece of width w where h is linear from
    x to y (p = 1, 2, 3), split at the root of h."""
    if p == 2:
        return w * (x * x + x * y + y * y) / 3
    ax, ay = abs(x), abs(y)
    if x * y < 0:  # h changes sign: two triangles
        return w * (ax ** (p + 1) + ay ** (p + 1)) / ((p + 1) * (ax + ay))
    if p == 1:
        return w * (ax + ay) / 2
    return w * (ax ** 3 + ax ** 2 * ay + ax * ay ** 2 + ay ** 3) / 4


def exact_power_sum(f, g, p, window=None):
    """The integral of |f - g|^p (a Fraction, or inf)."""
    f, g = _frac_points(f), _frac_points(g)
    pieces, tail = _pieces(f, g, window)
    if tail is not None and tail[0] != tail[1]:
        return INF
    return sum((_abs_power_integral(fa - ga, fb - gb, w, p) for w, fa, fb, ga, gb in pieces), Fraction(0))


def exact_sup(f, g, window=None):
    f, g = _frac_points(f), _frac_points(g)
    pieces, tail = _pieces(f, g, window)
    values = [abs(fa - ga) for _, fa, _, ga, _ in pieces] + [abs(fb - gb) for _, _, fb, _, gb in pieces]
    if tail is not None:
        values.append(abs(tail[0] - tail[1]))
    return max(values, default=Fraction(0))


def exact_inner(f, g, window=None):
    """The integral of f g (a Fraction, or +-inf) and a bound on the integral
    of |f g| (the scale of rounding errors)."""
    f, g = _frac_points(f), _frac_points(g)
    pieces, tail = _pieces(f, g, window)
    if tail is not None and tail[0] * tail[1] != 0:
        return (INF if tail[0] * tail[1] > 0 else -INF), 0
    total = Fraction(0)
    scale = Fraction(0)
    for w, fa, fb, ga, gb in pieces:
        total += w * (2 * fa * ga + fa * gb + fb * ga + 2 * fb * gb) / 6
        scale += w * (abs(fa) + abs(fb)) * (abs(ga) + abs(gb))
    return total, scale


def random_dyadic_plf(rng, zero_tail=True):
    """Times and values multiples of 1/16: constant pieces, zero crossings
    and a jump at t0 happen often."""
    m = int(rng.integers(1, 7))
    times = np.sort(rng.choice(np.arange(-32, 64), size=m, replace=False)) / 16.0
    values = rng.integers(-24, 25, size=m) / 16.0
    if m > 2 and rng.random() < 0.3:
        values[1] = values[0]  # a constant piece
    if zero_tail or rng.random() < 0.5:
        values[-1] = 0.0
    return np.stack([times, values], axis=1)


def _close(got, exact, rel=1e-13, scale=0.0):
    if isinstance(exact, float) and math.isinf(exact):
        return got == exact
    exact = float(exact)
    return abs(got - exact) <= rel * abs(exact) + 1e-15 * float(scale)


def _sample(rng, n, zero_tail=True):
    return [random_dyadic_plf(rng, zero_tail) for _ in range(n)]


# ----------------------------------------------------------------------
# The collection
# ----------------------------------------------------------------------

def test_plf_collection_inputs_and_readout():
    f = [(0.0, 0.0), (1.0, 1.0), (2.0, 0.0)]
    X = mpcf.PlfCollection([f, np.array(f)])
    assert not isinstance(X, mpcf.PcfCollection) and isinstance(X, mpcf.PlfCollection)
    assert X.shape == (2,) and X.dtype == np.float64 and X.size == 2 and X.total_breakpoints == 6
    assert repr(X) == "PlfCollection(shape=(2,), dtype=float64, total_breakpoints=6)"
    A = mpcf.PlfCollection(np.zeros((2, 3, 1, 2), dtype=np.float32))
    assert A.shape == (2, 3) and A.dtype == np.float32
    N = mpcf.PlfCollection([[f, f, f], [f, f, f]], dtype="float32")
    assert N.shape == (2, 3) and type(N) is mpcf.PlfCollection
    one = mpcf.PlfCollection(f)
    assert one.shape == () and np.array_equal(one.to_list(), np.array(f))
    off, t, v = X.to_csr()
    C = mpcf.PlfCollection.from_csr(off, t, v)
    assert type(C) is mpcf.PlfCollection and np.array_equal(C.to_csr()[1], t)
    assert type(mpcf.PcfCollection.from_csr(off, t, v)) is mpcf.PcfCollection
    S = N.slice(1, 4)
    assert type(S) is mpcf.PlfCollection and S.shape == (3,)
    for Z in (X, one, N, S):
        again = pickle.loads(pickle.dumps(Z))
        assert type(again) is mpcf.PlfCollection and again.shape == Z.shape
        assert all(np.array_equal(a, b) for a, b in zip(again.to_csr(), Z.to_csr()))
    # a PLF is not a PCF: the same breakpoints give other integrals
    assert mpcf.lp_norm(X)[0] == 1.0 and mpcf.lp_norm(mpcf.PcfCollection([f]))[0] == 1.0
    assert mpcf.lp_norm(mpcf.PlfCollection([[(0, 0), (2, 2), (3, 0)]]))[0] == 3.0
    assert mpcf.lp_norm(mpcf.PcfCollection([[(0, 0), (2, 2), (3, 0)]]))[0] == 2.0


def test_plf_messages_say_plf():
    f = [(0.0, 0.0), (1.0, 1.0)]
    with pytest.raises(ValueError, match=r"the PLF at index \(1,\) has shape"):
        mpcf.PlfCollection([f, np.zeros((3, 3))])
    with pytest.raises(TypeError, match=r"the PLF at index .* mpcf\.PlfCollection\(data"):
        mpcf.PlfCollection([np.array(f, dtype=np.int64)])
    with pytest.raises(ValueError, match="an array of PLFs must have shape"):
        mpcf.PlfCollection(np.zeros((3, 3)))
    with pytest.raises(mpcf.InvalidPcfError, match=r"P[CL]F 4 is the function at index \(1, 1\)"):
        mpcf.PlfCollection([[f, f, f], [f, [(0, 1), (0, 2)], f]])
    with pytest.raises(TypeError, match="len\\(\\) of a single PLF"):
        len(mpcf.PlfCollection(f))
    with pytest.raises(TypeError, match="PcfCollection; a PlfCollection is not made from it"):
        mpcf.PlfCollection(mpcf.PcfCollection([f]))
    with pytest.raises(TypeError, match="PlfCollection; a PcfCollection is not made from it"):
        mpcf.PcfCollection(mpcf.PlfCollection([f]))
    with pytest.raises(ValueError, match="single PLF"):
        mpcf.lp_distance(mpcf.PlfCollection([f, f]), f)


# ----------------------------------------------------------------------
# Exact values
# ----------------------------------------------------------------------

WINDOWS = [None, (-0.8125, 1.3125), (0.0625, 2.5)]


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("p", [1, 2, 3, INF])
def test_distances_equal_exact_rational_reference(rng, p, window):
    fs = _sample(rng, 14, zero_tail=False)
    # the hand-picked cases: a tent, a zero crossing, a jump at t0, a tail
    fs += [np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]), np.array([[0.0, 1.0], [2.0, -1.0], [3.0, 0.0]]),
           np.array([[0.5, 2.0], [1.5, 2.0]]), np.array([[-1.0, 0.25]])]
    X = mpcf.PlfCollection(fs)
    D = mpcf.pdist(X, p, window=window, layout="square")
    half = len(fs) // 2
    C = mpcf.cdist(mpcf.PlfCollection(fs[:half]), mpcf.PlfCollection(fs[half:]), p, window=window)
    for i, f in enumerate(fs):
        for j, g in enumerate(fs):
            if p == INF:
                exact = exact_sup(f, g, window)  # different tails: the gap, not inf
                assert _close(D[i, j], exact), (i, j, D[i, j], float(exact))
                continue
            s = exact_power_sum(f, g, p, window)
            if isinstance(s, float):
                assert D[i, j] == INF, (i, j)
                continue
            assert _close(D[i, j] ** p, s, rel=1e-13 * p), (i, j, p, D[i, j] ** p, float(s))
        assert D[i, i] == 0.0
    assert np.array_equal(C, D[:half, half:])


@pytest.mark.parametrize("window", WINDOWS)
def test_l2_kernel_equals_exact_rational_reference(rng, window):
    fs = _sample(rng, 16, zero_tail=False) + [np.array([[0.5, 2.0], [1.5, 2.0]])]
    X = mpcf.PlfCollection(fs)
    K = mpcf.l2_kernel(X, window=window)
    Kx = mpcf.l2_kernel(X, mpcf.PlfCollection(fs[:5]), window=window)
    for i, f in enumerate(fs):
        for j, g in enumerate(fs):
            exact, scale = exact_inner(f, g, window)
            assert _close(K[i, j], exact, scale=scale), (i, j, K[i, j], float(exact))
            if j < 5:
                assert Kx[i, j] == K[i, j]
            if isinstance(exact, float):  # +-inf tails: only without a right window end
                assert window is None or window[1] == INF


def test_lp_distance_and_inner_product_of_single_plfs():
    f = mpcf.PlfCollection([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]])
    g = [(0.0, 1.0), (2.0, -1.0), (3.0, 0.0)]
    exact = exact_power_sum(f.to_list(), np.array(g, dtype=float), 1)
    assert _close(mpcf.lp_distance(f, g), exact)  # g is read as a PLF (f's kind)
    ip, scale = exact_inner(f.to_list(), np.array(g, dtype=float))
    assert _close(mpcf.l2_inner_product(f, g), ip, scale=scale)


# ----------------------------------------------------------------------
# Landscapes and silhouettes
# ----------------------------------------------------------------------

def _tents(bars, t):
    b, d = bars[:, :1], bars[:, 1:2]
    return np.maximum(0.0, np.minimum(t[None, :] - b, d - t[None, :]))


def _grid(diagrams):
    pts = [np.linspace(-1, 12, 1301)]
    for bars in diagrams:
        if len(bars):
            b, d = bars[:, 0], bars[:, 1]
            pts += [b, d, (b + d) / 2, ((b[:, None] + d[None, :]) / 2).ravel()]
    return np.unique(np.concatenate(pts))


def _diagrams(rng, count):
    out = []
    for _ in range(count):
        k = int(rng.integers(0, 7))
        b = rng.integers(0, 40, size=k) / 8.0
        out.append(np.stack([b, b + rng.integers(0, 40, size=k) / 8.0], axis=1))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_landscape_against_numpy_tents(rng, dtype):
    diagrams = _diagrams(rng, 12) + [np.array([[1.0, 3.0], [1.0, 3.0], [2.0, 2.0]]), np.empty((0, 2))]
    k = 4
    L = mpcf.landscape(diagrams, k, dtype=dtype)
    assert type(L) is mpcf.PlfCollection and L.shape == (len(diagrams), k) and L.dtype == dtype
    t = _grid(diagrams)
    values = mpcf.evaluate(L, t)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for i, bars in enumerate(diagrams):
        tents = -np.sort(-_tents(bars, t), axis=0) if len(bars) else np.zeros((0, t.size))
        for j in range(k):
            want = tents[j] if j < len(bars) else np.zeros(t.size)
            np.testing.assert_allclose(values[i, j], want, rtol=0, atol=tol * 16)
    # one barcode: shape (k,)
    assert mpcf.landscape(diagrams[0], 3).shape == (3,)


@pytest.mark.parametrize("q", [0, 1, 2.5])
def test_silhouette_against_numpy_tents(rng, q):
    diagrams = _diagrams(rng, 10) + [np.array([[2.0, 2.0]]), np.empty((0, 2))]
    S = mpcf.silhouette(diagrams, q)
    assert type(S) is mpcf.PlfCollection and S.shape == (len(diagrams),)
    t = _grid(diagrams)
    values = mpcf.evaluate(S, t)
    for i, bars in enumerate(diagrams):
        w = (bars[:, 1] - bars[:, 0]) ** q if len(bars) else np.zeros(0)
        w = np.where(bars[:, 1] > bars[:, 0], w, 0.0) if len(bars) else w
        want = (w @ _tents(bars, t)) / w.sum() if w.sum() > 0 else np.zeros(t.size)
        np.testing.assert_allclose(values[i], want, rtol=1e-12, atol=1e-12)


def test_landscape_clip_and_infinite_bars():
    bars = np.array([[0.0, 2.0], [1.0, INF], [5.0, INF]])
    with pytest.raises(mpcf.InvalidArgumentError, match=r"barcode 0, bar 1 \(birth 1, death inf\)"):
        mpcf.landscape(bars, 2)
    with pytest.raises(mpcf.InvalidArgumentError, match=r"barcode 1, bar 1"):
        mpcf.landscape([np.array([[0.0, 1.0]]), bars], 2)
    with pytest.raises(mpcf.InvalidArgumentError, match=r"barcode 0, bar 1"):
        mpcf.silhouette(bars)
    L = mpcf.landscape(bars, 2, clip=4.0)  # (1, inf) -> (1, 4); (5, inf) contributes nothing
    t = np.linspace(-1, 6, 71)
    want = -np.sort(-_tents(np.array([[0.0, 2.0], [1.0, 4.0]]), t), axis=0)
    np.testing.assert_allclose(mpcf.evaluate(L, t), want, atol=1e-12)
    S = mpcf.silhouette(bars, 1, clip=4.0)
    w = np.array([2.0, 3.0])
    np.testing.assert_allclose(mpcf.evaluate(S, t), w @ _tents(np.array([[0.0, 2.0], [1.0, 4.0]]), t) / 5,
                               atol=1e-12)


def test_landscape_takes_every_barcode_format():
    dgms = [np.array([[0.0, 1.0], [0.0, INF]]), np.array([[0.5, 2.0], [1.0, 1.5]])]
    ripser = {"dgms": dgms}
    assert mpcf.landscape(ripser, 2, dimension=1).shape == (2,)
    assert mpcf.landscape(ripser, 2, clip=3).shape == (2, 2)
    gudhi = [(1, (0.5, 2.0)), (1, (1.0, 1.5)), (0, (0.0, 1.0))]
    a = mpcf.landscape(gudhi, 2, dimension=1).to_csr()
    b = mpcf.landscape(dgms[1], 2).to_csr()
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    giotto = np.array([[[0.5, 2.0, 1], [1.0, 1.5, 1], [0.0, 1.0, 0]]] * 3)
    assert mpcf.landscape(giotto, 2, dimension=1).shape == (3, 2)
    assert mpcf.silhouette(giotto, dimension=1).shape == (3,)
    assert mpcf.silhouette([gudhi, gudhi], dimension=1).shape == (2,)


def test_landscape_and_silhouette_bad_arguments():
    bars = np.array([[0.0, 2.0]])
    for k in (1.5, "2", True, None):
        with pytest.raises(TypeError, match="k must be an integer"):
            mpcf.landscape(bars, k)
    # k = 0 is refused by libmpcf (its message), also for no barcode at all;
    # what uint64_t cannot carry by the binding.
    for barcodes in (bars, [[]], []):
        with pytest.raises(mpcf.InvalidArgumentError, match=r"^k = 0: ask for at least one landscape \(k >= 1\)$"):
            mpcf.landscape(barcodes, 0)
    with pytest.raises(ValueError, match="k = -1 is negative"):
        mpcf.landscape(bars, -1)
    with pytest.raises(ValueError, match="does not fit"):
        mpcf.landscape(bars, 2**64)
    for q in ("1", None, True):
        with pytest.raises(TypeError, match="q must be a real number"):
            mpcf.silhouette(bars, q)
    for q in (-1.0, INF, float("nan")):
        with pytest.raises(mpcf.InvalidArgumentError):
            mpcf.silhouette(bars, q)
    for clip in ("3", True, [3]):
        with pytest.raises(TypeError, match="clip must be a real number or None"):
            mpcf.landscape(bars, 1, clip=clip)
        with pytest.raises(TypeError, match="clip must be a real number or None"):
            mpcf.silhouette(bars, clip=clip)
    with pytest.raises(mpcf.InvalidArgumentError, match="clip"):
        mpcf.landscape(bars, 1, clip=float("nan"))
    with pytest.raises(TypeError):
        mpcf.landscape(bars, 1, dtype=np.int32)
    with pytest.raises(mpcf.InvalidArgumentError, match=r"barcode 0, bar 0"):
        mpcf.landscape(np.array([[3.0, 1.0]]), 1)


def test_landscape_k_is_limited_by_the_result_size_not_by_the_bars():
    bars = np.array([[0.0, 2.0]])
    # Levels beyond the bars are the zero function: the shape stays (k,).
    L = mpcf.landscape(bars, 3)
    assert L.shape == (3,)
    assert [f.tolist() for f in L.to_list()] == [[[0, 0], [1, 1], [2, 0]], [[0, 0]], [[0, 0]]]
    # 2^64 - 1 landscapes of at least 24 bytes each (a float64 breakpoint and
    # a 64-bit offset) need more bytes than 64 bits count: libmpcf refuses k
    # by name, with its largest value floor((2^64 - 1) / 24), before
    # allocating anything (it used to build zero functions until memory ran
    # out).
    with pytest.raises(mpcf.InvalidArgumentError,
                       match=r"^k = 18446744073709551615 .*k can be at most 768614336404564650 ") as info:
        mpcf.landscape(bars, 2**64 - 1)
    assert info.value.status_name == "MPCF_ERROR_INVALID_ARGUMENT" and info.value.barcode_index is None
    # 2^40 landscapes (24 TiB) fit 64 bits but no machine's memory.
    with pytest.raises(mpcf.OutOfMemoryError, match=r"^k = 1099511627776 .*k can be at most \d+"):
        mpcf.landscape(bars, 2**40)
    with pytest.raises(MemoryError):
        mpcf.landscape([bars, bars], 2**40, dtype=np.float32)


def test_landscape_against_persim():
    landscapes = pytest.importorskip("persim.landscapes")
    rng = np.random.default_rng(7)
    for bars in _diagrams(rng, 8):
        if not len(bars) or not np.any(bars[:, 1] > bars[:, 0]):
            continue
        P = landscapes.PersLandscapeExact(dgms=[bars], hom_deg=0)
        levels = P.critical_pairs
        L = mpcf.landscape(bars, len(levels))
        t = _grid([bars])
        got = mpcf.evaluate(L, t)
        for j, pairs in enumerate(levels):
            pairs = np.asarray(pairs, dtype=float)
            want = np.interp(t, pairs[:, 0], pairs[:, 1], left=0.0, right=0.0)
            np.testing.assert_allclose(got[j], want, atol=1e-12)


# ----------------------------------------------------------------------
# Pointwise operations and files keep the kind
# ----------------------------------------------------------------------

def test_evaluate_mean_sum_combine_save_load(tmp_path):
    f = [(0.0, 0.0), (1.0, 1.0), (2.0, 0.0)]
    g = [(1.0, 0.0), (2.0, 2.0), (3.0, 0.0)]
    X = mpcf.PlfCollection([[f, g], [g, f]])
    np.testing.assert_array_equal(mpcf.evaluate(X, [0.5, 1.5])[0, 0], [0.5, 0.5])
    m = mpcf.mean(X)
    assert type(m) is mpcf.PlfCollection and m.shape == ()
    np.testing.assert_allclose(mpcf.evaluate(m, [0.5, 1.0, 1.5, 2.0, 2.5]), [0.25, 0.5, 0.75, 1.0, 0.5])
    s = mpcf.sum(X, axis=0)
    assert type(s) is mpcf.PlfCollection and s.shape == (2,)
    np.testing.assert_allclose(mpcf.evaluate(s, 1.5), [1.5, 1.5])
    c = mpcf.combine(X, g, 1.0, -1.0)  # plain data takes X's kind
    assert type(c) is mpcf.PlfCollection and c.shape == (2, 2)
    np.testing.assert_allclose(mpcf.evaluate(c, 1.5)[0], [-0.5, 0.0])
    path = tmp_path / "plfs.mpcf"
    mpcf.save(X, path)
    Y = mpcf.load(path)
    assert type(Y) is mpcf.PlfCollection and Y.shape == (2, 2)
    buf = io.BytesIO()
    mpcf.save(X, buf)
    Z = mpcf.load(io.BytesIO(buf.getvalue()))
    assert type(Z) is mpcf.PlfCollection
    assert all(np.array_equal(a, b) for a, b in zip(Z.to_csr(), X.to_csr()))
    # PCF files stay PCF
    mpcf.save(mpcf.PcfCollection([f]), path)
    assert type(mpcf.load(path)) is mpcf.PcfCollection


def test_mixing_pcfs_and_plfs_is_refused_by_name():
    f = [(0.0, 1.0), (1.0, 0.0)]
    P, L = mpcf.PcfCollection([f, f]), mpcf.PlfCollection([f, f])
    calls = [
        lambda: mpcf.cdist(L, P), lambda: mpcf.cdist(P, L), lambda: mpcf.l2_kernel(L, P),
        lambda: mpcf.knn(L, 1, P), lambda: mpcf.kernel_matvec(L, [1.0, 1.0], P),
        lambda: mpcf.kneighbors_graph(L, 1, P), lambda: mpcf.combine(L, P),
        lambda: mpcf.lp_distance(mpcf.PlfCollection(f), mpcf.PcfCollection(f)),
        lambda: mpcf.l2_inner_product(mpcf.PcfCollection(f), mpcf.PlfCollection(f)),
    ]
    for call in calls:
        with pytest.raises(mpcf.InvalidArgumentError, match=r"(?s)PLF.*PCF|PCF.*PLF"):
            call()


# ----------------------------------------------------------------------
# Objects of several functions
# ----------------------------------------------------------------------

def _objects(rng, n, K, kind):
    fs = [[random_dyadic_plf(rng) for _ in range(K)] for _ in range(n)]
    return kind(fs), fs


@pytest.mark.parametrize("kind", [mpcf.PlfCollection, mpcf.PcfCollection])
@pytest.mark.parametrize("p", [1, 2, 3, INF])
def test_components_pdist_cdist_equal_per_component_matrices(rng, kind, p):
    n, K = 9, 3
    X, fs = _objects(rng, n, K, kind)
    parts = [mpcf.pdist(kind([row[k] for row in fs]), p, layout="square") for k in range(K)]
    want = np.max(parts, axis=0) if p == INF else np.sum([d ** p for d in parts], axis=0) ** (1 / p)
    D = mpcf.pdist(X, p, layout="square", components=True)
    assert D.shape == (n, n)
    np.testing.assert_allclose(D, want, rtol=1e-12, atol=1e-13)
    cond = mpcf.pdist(X, p, components=True)
    assert cond.shape == (n * (n - 1) // 2,)
    np.testing.assert_array_equal(cond, D[np.triu_indices(n, 1)])
    # cdist: (*S_X, *S_Y) over the objects; 4-D shapes for X
    X4 = kind([fs[:4], fs[4:8]])  # shape (2, 4, K)
    C = mpcf.cdist(X4, X, p, components=True)
    assert C.shape == (2, 4, n)
    np.testing.assert_array_equal(C.reshape(8, n), D[:8])
    # the user's collection is not changed
    assert X.shape == (n, K)
    np.testing.assert_array_equal(mpcf.pdist(X, p, layout="square"),
                                  mpcf.pdist(kind([f for row in fs for f in row]), p, layout="square"))


@pytest.mark.parametrize("kind", [mpcf.PlfCollection, mpcf.PcfCollection])
def test_components_kernel_equals_sum_of_component_kernels(rng, kind):
    n, K = 8, 2
    X, fs = _objects(rng, n, K, kind)
    parts = [mpcf.l2_kernel(kind([row[k] for row in fs])) for k in range(K)]
    G = mpcf.l2_kernel(X, components=True)
    np.testing.assert_allclose(G, np.sum(parts, axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(mpcf.l2_kernel(X, X, components=True), G)
    packed = mpcf.l2_kernel(X, layout="packed_lower", components=True)
    assert packed.shape == (n * (n + 1) // 2,)
    v = rng.standard_normal(n)
    np.testing.assert_allclose(mpcf.kernel_matvec(X, v, components=True), G @ v, rtol=1e-10, atol=1e-10)
    pytest.importorskip("scipy")
    op = mpcf.KernelOperator(X, components=True)
    assert op.shape == (n, n)
    np.testing.assert_allclose(op @ v, G @ v, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", [mpcf.PlfCollection, mpcf.PcfCollection])
@pytest.mark.parametrize("p", [1, 2, INF])
def test_components_knn_against_argsort(rng, kind, p):
    n, K, k = 12, 3, 4
    fs = [[random_dyadic_plf(rng) for _ in range(K)] for _ in range(n)]
    fs[5] = fs[2]  # an exact tie at distance 0
    X = kind(fs)
    D = mpcf.pdist(X, p, layout="square", components=True)
    d, i = mpcf.knn(X, k, p=p, components=True)
    assert d.shape == i.shape == (n, k)
    for r in range(n):
        order = [j for j in np.lexsort((np.arange(n), D[r])) if j != r][:k]
        np.testing.assert_array_equal(i[r], order)
        np.testing.assert_array_equal(d[r], D[r, order])
    Q = kind(fs[:3])
    dq, iq = mpcf.knn(Q, 2, X, p=p, components=True)
    assert iq.shape == (3, 2) and iq[0, 0] == 0 and dq[0, 0] == 0
    G = mpcf.kneighbors_graph(X, k, mode="distance", p=p, components=True)
    assert G.shape == (n, n)
    np.testing.assert_array_equal(G.indices.reshape(n, k), i)


@pytest.mark.parametrize("kind", [mpcf.PlfCollection, mpcf.PcfCollection])
def test_same_bits_for_one_and_two_threads(rng, kind):
    X, fs = _objects(rng, 30, 2, kind)
    flat = kind([f for row in fs for f in row])
    v = rng.standard_normal(30)
    for comp, Z in ((True, X), (False, flat)):
        for p in (1, 2, 3, INF):
            a = mpcf.pdist(Z, p, threads=1, components=comp)
            b = mpcf.pdist(Z, p, threads=2, components=comp)
            assert np.array_equal(a, b)
            assert np.array_equal(mpcf.cdist(Z, Z, p, threads=1, components=comp),
                                  mpcf.cdist(Z, Z, p, threads=2, components=comp))
            d1, i1 = mpcf.knn(Z, 3, p=p, threads=1, components=comp)
            d2, i2 = mpcf.knn(Z, 3, p=p, threads=2, components=comp)
            assert np.array_equal(d1, d2) and np.array_equal(i1, i2)
        assert np.array_equal(mpcf.l2_kernel(Z, threads=1, components=comp),
                              mpcf.l2_kernel(Z, threads=2, components=comp))
        w = v if comp else np.repeat(v, 2)
        assert np.array_equal(mpcf.kernel_matvec(Z, w, threads=1, components=comp),
                              mpcf.kernel_matvec(Z, w, threads=2, components=comp))


def test_landscape_distance_with_components():
    diagrams = [np.array([[0.0, 4.0], [1.0, 3.0]]), np.array([[0.0, 2.0]]), np.array([[1.0, 3.0]])]
    L = mpcf.landscape(diagrams, 2)
    D = mpcf.pdist(L, 2, layout="square", components=True)
    parts = [mpcf.pdist(mpcf.PlfCollection([L.to_list()[i][j] for i in range(3)]), 2, layout="square")
             for j in range(2)]
    np.testing.assert_allclose(D, np.sqrt(parts[0] ** 2 + parts[1] ** 2), rtol=1e-14)
    # diagram 0 vs 1: lambda_1 tents (0,4) vs (0,2): 4; lambda_2 (1,3) vs 0: 2/3
    assert _close(D[0, 1] ** 2, Fraction(4) + Fraction(2, 3), rel=1e-14)


def test_components_bad_inputs():
    f = [(0.0, 1.0), (1.0, 0.0)]
    one_d = mpcf.PlfCollection([f, f])
    for call in (lambda: mpcf.pdist(one_d, components=True), lambda: mpcf.cdist(one_d, one_d, components=True),
                 lambda: mpcf.l2_kernel(one_d, components=True), lambda: mpcf.knn(one_d, 1, components=True),
                 lambda: mpcf.kernel_matvec(one_d, [1.0], components=True),
                 lambda: mpcf.pdist(mpcf.PcfCollection(f), components=True)):
        with pytest.raises(mpcf.InvalidArgumentError, match="component axis needs a shape of at least 2"):
            call()
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError, match="components must be True or False"):
            mpcf.pdist(one_d, components=bad)
    A = mpcf.PlfCollection([[f, f], [f, f]])
    B = mpcf.PlfCollection([[f, f, f]])
    with pytest.raises(mpcf.InvalidArgumentError):
        mpcf.cdist(A, B, components=True)  # K = 2 vs K = 3
    with pytest.raises(ValueError, match="more than the 1 other objects"):
        mpcf.knn(mpcf.PlfCollection([[f, f], [f, f]]), 2, components=True)
    with pytest.raises(ValueError, match="V has shape"):
        mpcf.kernel_matvec(A, [1.0, 1.0, 1.0, 1.0], components=True)


@pytest.mark.parametrize("kind", [mpcf.PlfCollection, mpcf.PcfCollection])
def test_dask_components_equal_single_process(rng, kind):
    pytest.importorskip("dask")
    import mpcf.dask
    from mpcf import _dask_tasks

    X, fs = _objects(rng, 23, 3, kind)
    Y = kind(fs[:7])
    for p in (1, 2, INF):
        D = mpcf.dask.pdist(X, p, chunks=5, components=True).compute()
        assert np.array_equal(D, mpcf.pdist(X, p, layout="square", components=True))
        C = mpcf.dask.cdist(X, Y, p, chunks=(4, 3), components=True).compute()
        assert np.array_equal(C, mpcf.cdist(X, Y, p, components=True))
        d, i = mpcf.dask.knn(X, 3, p=p, chunks=6, components=True)
        d2, i2 = mpcf.knn(X, 3, p=p, components=True)
        assert np.array_equal(d, d2) and np.array_equal(i, i2)
    objects = pickle.loads(pickle.dumps(_dask_tasks.ComponentObjects(X)))
    assert objects.shape == (23,) and objects.K == 3
    assert np.array_equal(mpcf.pdist(objects.slice(2, 9)), mpcf.pdist(kind(fs[2:9]), components=True))
    with pytest.raises(mpcf.InvalidArgumentError, match="component axis"):
        mpcf.dask.pdist(kind(fs[0]), components=True)
    with pytest.raises(TypeError, match="components must be True or False"):
        mpcf.dask.knn(X, 1, components="yes")
