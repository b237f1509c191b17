"""mpcf against hand-computed values, the independent reference in
reference.py, and SciPy on grid-aligned step functions."""

import math

import numpy as np
import pytest
from scipy.spatial import distance as ssd

import mpcf
import reference as ref
from conftest import BACKENDS, RTOL

INF = math.inf
DTYPES = [np.float32, np.float64]
PS = [1, 2, 3.5, INF]
WINDOWS = [None, (0.5, 7.25), (-INF, 3.0), (2.0, INF)]

F = [(0, 3), (1, 0)]
G = [(0, 1), (2, 0)]
H = [(0, 10), (2, 5), (3, 0)]


# ---------------------------------------------------------------- known values


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_known_values(backend, dtype):
    # Hand-computed: |f-g| = 2 on [0,1), 1 on [1,2) -> L1 3, L2 sqrt(5), Linf 2.
    X = mpcf.PcfCollection([F, G], dtype=dtype)
    assert mpcf.pdist(X, backend=backend).tolist() == [3.0]
    np.testing.assert_allclose(mpcf.pdist(X, 2, backend=backend), [math.sqrt(5)], rtol=RTOL[dtype])
    assert mpcf.pdist(X, INF, backend=backend).tolist() == [2.0]
    # |10-5|*2 + |5-5|*1 + |0-5|*3 = 25
    Y = mpcf.PcfCollection([[(0, 10), (2, 5), (3, 0)], [(0, 5), (6, 0)]], dtype=dtype)
    assert mpcf.pdist(Y, backend=backend).tolist() == [25.0]
    # 4*4*3 = 48, 4*2*3 = 24, 2*2*3 = 12
    K = mpcf.l2_kernel([[(0, 4), (3, 0)], [(0, 2), (3, 0)]], backend=backend)
    assert K.tolist() == [[48.0, 24.0], [24.0, 12.0]]
    assert mpcf.pdist(mpcf.PcfCollection([F, G, H], dtype=dtype), backend=backend).tolist() == [3.0, 22.0, 23.0]


def test_known_single_pair_values():
    assert mpcf.lp_distance(F, G) == 3.0
    assert mpcf.lp_distance(H, [(0, 5), (6, 0)]) == 25.0
    assert mpcf.lp_distance(F, G, INF) == 2.0
    assert mpcf.l2_inner_product(F, G) == 3.0
    assert mpcf.lp_norm([F, G]).tolist() == [3.0, 2.0]
    assert mpcf.lp_norm([F, G], INF).tolist() == [3.0, 1.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_tails(backend):
    one_forever = [(0, 1)]
    zero = [(0, 0)]
    minus_two_from_1 = [(1, -2)]
    X = [one_forever, zero, minus_two_from_1]
    # (1 vs 0): 1 for ever; (1 vs -2 from t=1): non-zero for ever; (0 vs -2): same.
    assert mpcf.pdist(X, backend=backend).tolist() == [INF, INF, INF]
    # Over [0, 2): 2, 1 + 3 = 4, 2
    assert mpcf.pdist(X, window=(0, 2), backend=backend).tolist() == [2.0, 4.0, 2.0]
    assert mpcf.pdist(X, INF, backend=backend).tolist() == [1.0, 3.0, 2.0]
    K = mpcf.l2_kernel(X, backend=backend)
    assert K.tolist() == [[INF, 0.0, -INF], [0.0, 0.0, 0.0], [-INF, 0.0, INF]]
    # Two functions equal after t = 5: their difference vanishes on the tail.
    assert mpcf.pdist([[(0, 1), (5, 7)], [(0, 3), (5, 7)]], backend=backend).tolist() == [10.0]


# ---------------------------------------------------------------- random vs reference


def _typed(fs, dtype):
    """An empty list carries no dtype; give it one."""
    return fs if fs else mpcf.PcfCollection([], dtype=dtype)


def _assert_matches(actual, expected, dtype, scale=None):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape
    finite = np.isfinite(expected)
    # Infinities (and their signs) must match exactly.
    np.testing.assert_array_equal(actual[~finite], expected[~finite])
    assert np.all(np.isfinite(actual[finite]))
    tol = RTOL[dtype] * (np.abs(expected[finite]) if scale is None else np.asarray(scale)[finite])
    err = np.abs(actual[finite] - expected[finite])
    assert np.all(err <= tol + 1e-300), f"max error {err.max() if err.size else 0}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tails", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 9])
@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_pdist_matches_reference(dtype, p, window, n, tails, backend, rng):
    fs = _typed(ref.random_pcfs(rng, n, dtype, tails=tails), dtype)
    expected = ref.pdist_square(fs, p, window, dtype)
    D = mpcf.pdist(fs, p, window=window, backend=backend)
    assert D.dtype == dtype and D.shape == (n * (n - 1) // 2,)
    _assert_matches(D, ref.condensed(expected), dtype)
    S = mpcf.pdist(fs, p, window=window, layout="square", backend=backend)
    assert S.shape == (n, n) and S.dtype == dtype
    _assert_matches(S, expected, dtype)
    assert np.all(np.diag(S) == 0)
    np.testing.assert_array_equal(S, S.T)
    if n >= 2:
        np.testing.assert_array_equal(ssd.squareform(D, checks=False), S)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["plain", "negative", "tails"])
@pytest.mark.parametrize("n", [0, 1, 2, 9])
@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_l2_kernel_matches_reference(dtype, window, n, kind, backend, rng):
    fs = _typed(ref.random_pcfs(rng, n, dtype, tails=kind == "tails", negative=kind != "plain"), dtype)
    expected, scale = ref.kernel_square(fs, window, dtype)
    K = mpcf.l2_kernel(fs, window=window, backend=backend)
    assert K.shape == (n, n) and K.dtype == dtype
    _assert_matches(K, expected, dtype, scale)
    np.testing.assert_array_equal(K, K.T)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_packed_lower_layouts(dtype, backend, rng):
    fs = ref.random_pcfs(rng, 7, dtype)
    D = ref.pdist_square(fs, 1, None, dtype)
    packed = mpcf.pdist(fs, layout="packed_lower", backend=backend)
    # entry (i, j), i > j, at i(i-1)/2 + j
    expected = [D[i, j] for i in range(7) for j in range(i)]
    _assert_matches(packed, expected, dtype)
    K, scale = ref.kernel_square(fs, None, dtype)
    packed_k = mpcf.l2_kernel(fs, layout="packed_lower", backend=backend)
    # entry (i, j), i >= j, at i(i+1)/2 + j
    idx = [(i, j) for i in range(7) for j in range(i + 1)]
    _assert_matches(packed_k, [K[i, j] for i, j in idx], dtype, [scale[i, j] for i, j in idx])


SHAPES = [(), (3,), (2, 3), (2, 1, 2), (0,), (2, 0)]


def _tensor(rng, shape, dtype, **kw):
    """Random PCFs as nested lists with the given shape (and the flat list)."""
    n = int(np.prod(shape)) if shape else 1
    flat = ref.random_pcfs(rng, n, dtype, **kw)
    if shape == ():
        return flat[0], flat
    if n == 0:
        return mpcf.PcfCollection(np.empty(shape + (1, 2)), dtype=dtype), flat
    nested = np.empty(shape, dtype=object)
    for k, idx in enumerate(np.ndindex(*shape)):
        nested[idx] = flat[k]
    return nested.tolist(), flat


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("p", [1, 2, INF])
@pytest.mark.parametrize("yshape", [(4,), (2, 2), (1, 2, 3), ()])
@pytest.mark.parametrize("xshape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cdist_shapes_and_values(dtype, xshape, yshape, p, backend, rng):
    X, xs = _tensor(rng, xshape, dtype, tails=True)
    Y, ys = _tensor(rng, yshape, dtype, tails=True)
    C = mpcf.cdist(X, Y, p, backend=backend)
    assert C.shape == xshape + yshape and C.dtype == dtype
    expected = np.array([[ref.lp_distance(f, g, p, None, dtype) for g in ys] for f in xs])
    expected = expected.reshape(len(xs), len(ys))
    _assert_matches(C.reshape(len(xs), len(ys)), expected, dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_kernel(dtype, window, backend, rng):
    X, xs = _tensor(rng, (2, 3), dtype, negative=True, tails=True)
    Y, ys = _tensor(rng, (5,), dtype, negative=True, tails=True)
    K = mpcf.l2_kernel(X, Y, window=window, backend=backend)
    assert K.shape == (2, 3, 5) and K.dtype == dtype
    pairs = [[ref.l2_inner(f, g, window, dtype) for g in ys] for f in xs]
    expected = np.array([[v for v, _ in row] for row in pairs])
    scale = np.array([[s for _, s in row] for row in pairs])
    _assert_matches(K.reshape(6, 5), expected, dtype, scale)


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_single_pair_functions(dtype, p, window, rng):
    fs = ref.random_pcfs(rng, 6, dtype, tails=True, negative=True)
    for f, g in zip(fs[:3], fs[3:]):
        expected = ref.lp_distance(f, g, p, window, dtype)
        _assert_matches(mpcf.lp_distance(f, g, p, window=window), expected, dtype)
        value, scale = ref.l2_inner(f, g, window, dtype)
        _assert_matches(mpcf.l2_inner_product(f, g, window=window), value, dtype, scale)
    norms = mpcf.lp_norm(fs, p, window=window)
    assert norms.shape == (6,) and norms.dtype == dtype
    zero = np.array([[0.0, 0.0]])
    _assert_matches(norms, [ref.lp_distance(f, zero, p, window, dtype) for f in fs], dtype)
    one = mpcf.lp_norm(fs[0], p, window=window)
    assert one.shape == () and float(one) == float(norms[0])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_grid_aligned_steps_agree_with_scipy(dtype, backend, rng):
    # Step functions on bins of width h: f_i = v_i[k] on [k h, (k+1) h), 0 from K h.
    h, bins, n = 0.25, 40, 12
    V = rng.integers(-20, 21, size=(n, bins)).astype(np.float64)
    t = np.arange(bins + 1) * h
    fs = [np.column_stack([t, np.append(row, 0.0)]).astype(dtype) for row in V]
    rtol = RTOL[dtype]
    np.testing.assert_allclose(mpcf.pdist(fs, 1, backend=backend), ssd.pdist(V, "cityblock") * h, rtol=rtol)
    np.testing.assert_allclose(mpcf.pdist(fs, 2, backend=backend), ssd.pdist(V, "euclidean") * math.sqrt(h), rtol=rtol)
    np.testing.assert_allclose(
        mpcf.pdist(fs, 3, backend=backend), ssd.pdist(V, "minkowski", p=3) * h ** (1 / 3), rtol=rtol
    )
    np.testing.assert_array_equal(mpcf.pdist(fs, INF, backend=backend), ssd.pdist(V, "chebyshev"))
    np.testing.assert_allclose(
        mpcf.cdist(fs[:5], fs[5:], 1, backend=backend), ssd.cdist(V[:5], V[5:], "cityblock") * h, rtol=rtol
    )
    np.testing.assert_allclose(mpcf.l2_kernel(fs, backend=backend), V @ V.T * h, rtol=rtol)


def test_results_do_not_depend_on_thread_count(rng):
    fs = ref.random_pcfs(rng, 150, np.float64, tails=True, negative=True, max_m=30)
    one = mpcf.pdist(fs, 2, threads=1, backend="cpu")
    two = mpcf.pdist(fs, 2, threads=2, backend="cpu")
    assert one.tobytes() == two.tobytes()
    k1 = mpcf.l2_kernel(fs, threads=1, backend="cpu")
    k2 = mpcf.l2_kernel(fs, threads=2, backend="cpu")
    assert k1.tobytes() == k2.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_cpu_and_cuda_agree(dtype, rng):
    fs = ref.random_pcfs(rng, 300, dtype, tails=True, negative=True, max_m=40)
    for p in PS:
        _assert_matches(mpcf.pdist(fs, p, backend="cuda"), mpcf.pdist(fs, p, backend="cpu"), dtype)
    cpu = mpcf.l2_kernel(fs, backend="cpu")
    # integral of |f| |g| bounds the cancellation in integral of f g
    scale = mpcf.l2_kernel([np.column_stack([f[:, 0], np.abs(f[:, 1])]) for f in fs], backend="cpu")
    _assert_matches(mpcf.l2_kernel(fs, backend="cuda"), cpu, dtype, scale)
