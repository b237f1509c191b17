"""k nearest neighbours, the kNN graph, kernel mat-vec, KernelOperator and
pdist/cdist into a caller's array (np.memmap included), against brute force
from SciPy and NumPy on the full matrices."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.sparse.linalg import LinearOperator, cg
from scipy.spatial.distance import squareform

import mpcf
from mpcf import _reduce
from conftest import BACKENDS, RTOL


def random_pcfs(rng, n, max_m=8, dtype=np.float64, nonzero_tail=False, grid=False):
    """n PCFs as (m, 2) arrays: times from t0 in [-1, 1) with gaps in
    [0.1, 1) (or 0, 1, 2, ... on a grid), values in [-3, 3) (or {0, 1, 2})."""
    out = []
    for _ in range(n):
        m = int(rng.integers(1, max_m + 1))
        if grid:
            t = np.arange(m, dtype=np.float64)
            v = rng.integers(0, 3, size=m).astype(np.float64)
        else:
            t = rng.uniform(-1, 1) + np.concatenate([[0.0], np.cumsum(rng.uniform(0.1, 1, m - 1))])
            v = rng.uniform(-3, 3, size=m)
        if not nonzero_tail:
            v[-1] = 0.0
        out.append(np.stack([t, v], axis=1).astype(dtype))
    return out


def brute_knn(D, k, exclude_self):
    """Rows of D sorted by (distance, index), the self column dropped."""
    n, m = D.shape
    dist = np.empty((n, k), dtype=D.dtype)
    idx = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        cols = np.array([j for j in range(m) if not (exclude_self and j == i)])
        order = np.lexsort((cols, D[i, cols]))  # primary: distance, then index
        idx[i] = cols[order[:k]]
        dist[i] = D[i, idx[i]]
    return dist, idx


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [1, 2, 3.5, np.inf])
def test_knn_matches_brute_force(rng, backend, dtype, p):
    X = random_pcfs(rng, 57, dtype=dtype)
    # The reference: a brute-force top-k of the same backend's full matrix
    # (the GPU rounds the last bits differently from the CPU, so distances
    # that differ by an ulp may order differently on the two backends; the
    # sorted distances agree within RTOL).
    D = squareform(mpcf.pdist(X, p, backend=backend), checks=False)
    want_d, want_i = brute_knn(D, 6, True)
    d, i = mpcf.knn(X, 6, p=p, backend=backend)
    assert d.dtype == dtype and i.dtype == np.int64 and d.shape == (57, 6)
    np.testing.assert_array_equal(i, want_i)
    np.testing.assert_array_equal(d, want_d)
    cpu_d, _ = brute_knn(squareform(mpcf.pdist(X, p, backend="cpu"), checks=False), 6, True)
    np.testing.assert_allclose(d, cpu_d, rtol=RTOL[dtype])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("p", [1, 2.5, np.inf])
def test_knn_both_ways(rng, backend, p):
    # One pass over X x Y: X's lists among Y and Y's among X, against
    # brute-force top-k of the rows and the columns of the same backend's
    # cdist, and bit for bit the two knn calls.
    X = random_pcfs(rng, 41, max_m=5, grid=True)
    Y = random_pcfs(rng, 26, max_m=5, grid=True)
    C = mpcf.cdist(X, Y, p, backend=backend)
    (xd, xi), (yd, yi) = _reduce.knn_both(X, Y, 7, 12, p=p, backend=backend)
    want_xd, want_xi = brute_knn(C, 7, False)
    want_yd, want_yi = brute_knn(C.T.copy(), 12, False)
    np.testing.assert_array_equal(xi, want_xi)
    np.testing.assert_array_equal(xd, want_xd)
    np.testing.assert_array_equal(yi, want_yi)
    np.testing.assert_array_equal(yd, want_yd)
    d, i = mpcf.knn(X, 7, Y, p=p, backend=backend)
    assert d.tobytes() == xd.tobytes() and np.array_equal(i, xi)
    d, i = mpcf.knn(Y, 12, X, p=p, backend=backend)
    assert d.tobytes() == yd.tobytes() and np.array_equal(i, yi)


def test_knn_both_ways_checks():
    X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 5), (2, 0)]]
    Y = [[(0, 0), (1, 0)], [(0, 3), (1, 0)]]
    with pytest.raises(mpcf.InvalidArgumentError, match="k_x: k = 3 is more than the 2 functions of Y"):
        _reduce.knn_both(X, Y, 3, 1)
    with pytest.raises(mpcf.InvalidArgumentError, match="k_y: k = 4 is more than the 3 functions of X"):
        _reduce.knn_both(X, Y, 1, 4)
    with pytest.raises(mpcf.InvalidArgumentError, match="p = 0.5"):
        _reduce.knn_both(X, Y, 1, 1, p=0.5)
    # Values worked out by hand: X0 = 1, X1 = 2 on [0, 1), X2 = 5 on [0, 2);
    # Y0 = 0, Y1 = 3 on [0, 1).
    (xd, xi), (yd, yi) = _reduce.knn_both(X, Y, 2, 3, backend="cpu")
    assert xd.tolist() == [[1, 2], [1, 2], [7, 10]] and xi.tolist() == [[0, 1], [1, 0], [1, 0]]
    assert yd.tolist() == [[1, 2, 10], [1, 2, 7]] and yi.tolist() == [[0, 1, 2], [1, 0, 2]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_knn_against_y_ties_tails_windows(rng, backend):
    grid = random_pcfs(rng, 64, max_m=5, grid=True)
    Y = random_pcfs(rng, 23, max_m=5, grid=True)
    C = mpcf.cdist(grid, Y, backend=backend)
    want_d, want_i = brute_knn(C, 23, False)
    d, i = mpcf.knn(grid, 23, Y, backend=backend)
    np.testing.assert_array_equal(i, want_i)
    np.testing.assert_array_equal(d, want_d)
    # Non-vanishing tails: inf distances, last, ties by index; and a window.
    tails = random_pcfs(rng, 30, nonzero_tail=True)
    D = squareform(mpcf.pdist(tails, backend=backend), checks=False)
    np.fill_diagonal(D, 0)
    want_d, want_i = brute_knn(D, 29, True)
    d, i = mpcf.knn(tails, 29, backend=backend)
    np.testing.assert_array_equal(i, want_i)
    assert np.isinf(d).any()
    Dw = squareform(mpcf.pdist(tails, window=(0, 2), backend=backend), checks=False)
    want_d, want_i = brute_knn(Dw, 5, True)
    d, i = mpcf.knn(tails, 5, window=(0, 2), backend=backend)
    np.testing.assert_array_equal(i, want_i)


def test_knn_same_bits_for_any_threads_and_tensor_shapes(rng):
    X = random_pcfs(rng, 80, dtype=np.float32)
    ref = mpcf.knn(X, 7, backend="cpu", threads=1)
    for threads in (2, 16):
        d, i = mpcf.knn(X, 7, backend="cpu", threads=threads)
        assert d.tobytes() == ref[0].tobytes() and np.array_equal(i, ref[1])
    T = mpcf.PcfCollection(np.stack([np.array([[0, a], [1, 0]], dtype=np.float64)
                                     for a in range(6)]).reshape(2, 3, 2, 2))
    d, i = mpcf.knn(T, 2)
    assert d.shape == (2, 3, 2) and i.shape == (2, 3, 2)
    np.testing.assert_array_equal(i[0, 0], [1, 2])  # values 0..5: nearest of 0 are 1, 2
    np.testing.assert_array_equal(d[1, 2], [1, 2])


def test_kneighbors_graph_convention(rng):
    X = random_pcfs(rng, 40)
    X.append(X[0].copy())  # a duplicate: distance 0, an explicit zero entry
    d, i = mpcf.knn(X, 4)
    G = mpcf.kneighbors_graph(X, 4, mode="distance")
    assert G.shape == (41, 41) and G.nnz == 41 * 4
    for row in range(41):
        lo, hi = G.indptr[row], G.indptr[row + 1]
        np.testing.assert_array_equal(G.indices[lo:hi], i[row])
        np.testing.assert_array_equal(G.data[lo:hi], d[row])
        assert row not in G.indices[lo:hi]  # self not included
    assert G[0, 40] == 0 and 40 in G.indices[G.indptr[0]:G.indptr[1]]
    C = mpcf.kneighbors_graph(X, 4)
    assert np.all(C.data == 1.0) and np.array_equal(C.indices, G.indices)
    with pytest.raises(ValueError, match="mode"):
        mpcf.kneighbors_graph(X, 4, mode="weights")


def reference_graph(D, k, include_self, symmetric):
    """The kNN graph from the full matrix D as {(i, j): d}: neighbours by
    (distance, index) (a stable argsort after sorting by index), the row's
    own PCF first with include_self; the union with the transpose where
    symmetric."""
    n = D.shape[0]
    edges = {}
    for i in range(n):
        others = np.array([j for j in range(n) if j != i])
        order = others[np.argsort(D[i, others], kind="stable")]
        chosen = ([i] + list(order[: k - 1])) if include_self else list(order[:k])
        for j in chosen:
            edges[(i, int(j))] = D[i, j]
            if symmetric:
                edges[(int(j), i)] = D[i, j]
    return edges


def graph_rows(G):
    """Row i of a CSR matrix as its stored (column, value) pairs, in order."""
    return [list(zip(G.indices[G.indptr[i]:G.indptr[i + 1]].tolist(),
                     G.data[G.indptr[i]:G.indptr[i + 1]].tolist())) for i in range(G.shape[0])]


@pytest.mark.parametrize("grid", [False, True], ids=["no-ties", "ties"])
@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("symmetric", [False, True])
def test_kneighbors_graph_against_brute_force(rng, grid, include_self, symmetric):
    X = random_pcfs(rng, 37, max_m=4, grid=grid)
    X.append(X[3].copy())  # an equal PCF: a stored zero off the diagonal
    D = squareform(mpcf.pdist(X), checks=False)
    k = 5
    want = reference_graph(D, k, include_self, symmetric)
    G = mpcf.kneighbors_graph(X, k, mode="distance", include_self=include_self, symmetric=symmetric)
    assert G.format == "csr" and G.shape == (38, 38) and G.dtype == np.float64
    rows = graph_rows(G)
    got = {(i, j): v for i, row in enumerate(rows) for j, v in row}
    assert sum(len(r) for r in rows) == len(got)  # no pair stored twice
    assert got == want
    for i, row in enumerate(rows):
        # Rows ordered by (the PCF itself first,) distance, then column.
        keys = [(j != i, v, j) for j, v in row]
        assert keys == sorted(keys)
        assert len(row) >= k
        if not symmetric:
            assert len(row) == k
        assert (i in dict(row)) == include_self
    if symmetric:
        assert (G != G.T).nnz == 0
        A, B = G.copy(), G.T.tocsr()
        A.sort_indices()
        B.sort_indices()
        np.testing.assert_array_equal(A.indptr, B.indptr)
        np.testing.assert_array_equal(A.indices, B.indices)  # explicit zeros too
        np.testing.assert_array_equal(A.data, B.data)
    # The equal pair (3, 37) is a stored 0 both ways, after the PCF itself.
    assert got[(37, 3)] == 0 and (not symmetric or got[(3, 37)] == 0)
    if include_self:
        assert rows[37][:2] == [(37, 0.0), (3, 0.0)]
    C = mpcf.kneighbors_graph(X, k, include_self=include_self, symmetric=symmetric)
    assert np.all(C.data == 1.0)
    np.testing.assert_array_equal(C.indices, G.indices)
    np.testing.assert_array_equal(C.indptr, G.indptr)


def test_kneighbors_graph_include_self_and_cross():
    X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 4), (1, 0)]]
    # 'auto' is scikit-learn's: True for connectivity, False for distance.
    assert mpcf.kneighbors_graph(X, 2, include_self="auto").diagonal().tolist() == [1, 1, 1]
    A = graph_rows(mpcf.kneighbors_graph(X, 2, mode="distance", include_self="auto"))
    assert all(len(row) == 2 and i not in dict(row) for i, row in enumerate(A))
    # k = 1 with include_self: the diagonal alone; k = n: every pair.
    I = mpcf.kneighbors_graph(X, 1, mode="distance", include_self=True)
    assert graph_rows(I) == [[(0, 0.0)], [(1, 0.0)], [(2, 0.0)]]
    ones = mpcf.kneighbors_graph(X, 1, include_self=np.bool_(True))
    assert graph_rows(ones) == [[(0, 1.0)], [(1, 1.0)], [(2, 1.0)]]
    F = mpcf.kneighbors_graph(X, 3, mode="distance", include_self=True, symmetric=True)
    np.testing.assert_array_equal(F.toarray(), squareform(mpcf.pdist(X)))
    assert F.nnz == 9
    # With Y: row i holds the k nearest of Y, shape (X.size, Y.size).
    Q = [[(0, 3), (1, 0)], [(0, 0), (1, 0)]]
    d, i = mpcf.knn(Q, 2, X)
    C = mpcf.kneighbors_graph(Q, 2, X, mode="distance")
    assert C.shape == (2, 3) and graph_rows(C) == [list(zip(i[r].tolist(), d[r].tolist())) for r in range(2)]
    # float32 PCFs: a float32 graph, still exactly symmetric.
    X32 = [np.asarray(x, dtype=np.float32) for x in random_pcfs(np.random.default_rng(1), 20)]
    S = mpcf.kneighbors_graph(X32, 4, mode="distance", symmetric=True)
    assert S.dtype == np.float32 and (S != S.T).nnz == 0


def test_kneighbors_graph_bad_arguments():
    X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 4), (1, 0)]]
    Q = [[(0, 3), (1, 0)]]
    with pytest.raises(ValueError, match="mode"):
        mpcf.kneighbors_graph(X, 1, mode="weights")
    with pytest.raises(ValueError, match="mode"):
        mpcf.kneighbors_graph(X, 1, mode=None)
    with pytest.raises(ValueError, match="include_self must be True, False or 'auto'"):
        mpcf.kneighbors_graph(X, 1, include_self="yes")
    for bad in (1, 0, None, 1.0, [True]):
        with pytest.raises(TypeError, match="include_self must be True, False or 'auto'"):
            mpcf.kneighbors_graph(X, 1, include_self=bad)
    for bad in (1, None, "true", np.array([True])):
        with pytest.raises(TypeError, match="symmetric must be True or False"):
            mpcf.kneighbors_graph(X, 1, symmetric=bad)
    with pytest.raises(TypeError, match="k must be an integer"):
        mpcf.kneighbors_graph(X, 2.0, include_self=True)
    with pytest.raises(TypeError, match="k must be an integer"):
        mpcf.kneighbors_graph(X, True)
    with pytest.raises(ValueError, match="k = 0; k must be at least 1"):
        mpcf.kneighbors_graph(X, 0, include_self=True)
    with pytest.raises(ValueError, match=r"with include_self=True, k = 4 asks for 3 neighbours besides "
                       r"each PCF itself: k = 3 is more than the 2 other functions of X"):
        mpcf.kneighbors_graph(X, 4, include_self=True)
    with pytest.raises(ValueError, match=r"k = 3 is more than the 2 other functions of X"):
        mpcf.kneighbors_graph(X, 3)
    with pytest.raises(ValueError, match="include_self=True .* needs Y=None"):
        mpcf.kneighbors_graph(Q, 1, X, include_self=True)
    with pytest.raises(ValueError, match="include_self=True .* needs Y=None"):
        mpcf.kneighbors_graph(Q, 1, X, include_self="auto")  # 'auto' is True for connectivity
    assert mpcf.kneighbors_graph(Q, 1, X, mode="distance", include_self="auto").shape == (1, 3)
    with pytest.raises(ValueError, match="symmetric=True needs Y=None"):
        mpcf.kneighbors_graph(Q, 1, X, symmetric=True)
    # The arguments passed on to the library are checked also where k = 1
    # with include_self computes no distance.
    with pytest.raises(ValueError, match="p = 0.5 is not a valid exponent"):
        mpcf.kneighbors_graph(X, 1, include_self=True, p=0.5)
    with pytest.raises(ValueError, match="backend"):
        mpcf.kneighbors_graph(X, 1, include_self=True, backend="gpu")
    with pytest.raises(ValueError, match="window"):
        mpcf.kneighbors_graph(X, 1, include_self=True, window=(1,))


def dense_kernel(X, Y, kernel, p, sigma, window=None):
    if kernel == "l2":
        return mpcf.l2_kernel(X, Y if Y is not None else X, window=window).astype(np.float64)
    D = mpcf.cdist(X, Y if Y is not None else X, p, window=window).astype(np.float64)
    return np.exp(-0.5 * (D / sigma) ** 2) if kernel == "gaussian" else np.exp(-D / sigma)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel,p,sigma", [("l2", None, 1.0), ("gaussian", 2, 1.5),
                                            ("laplacian", 1, 3.0), ("gaussian", np.inf, 0.7)])
def test_kernel_matvec_matches_dense(rng, backend, dtype, kernel, p, sigma):
    X = random_pcfs(rng, 45, dtype=dtype)
    Y = random_pcfs(rng, 31, dtype=dtype)
    for other, rows in ((None, 45), (Y, 31)):
        K = dense_kernel(X, other, kernel, p if p is not None else 2, sigma)
        V = rng.uniform(-1, 1, size=(rows, 3)).astype(dtype)
        want = K @ V.astype(np.float64)
        got = mpcf.kernel_matvec(X, V, other, kernel=kernel, p=p, sigma=sigma, backend=backend)
        assert got.shape == (45, 3) and got.dtype == dtype
        scale = np.abs(K) @ np.abs(V.astype(np.float64))
        assert np.all(np.abs(got - want) <= 10 * RTOL[dtype] * scale + 1e-300)
        v = V[:, 0]
        got1 = mpcf.kernel_matvec(X, v, other, kernel=kernel, p=p, sigma=sigma, backend=backend)
        assert got1.shape == (45,)
        np.testing.assert_array_equal(got1, got[:, 0])  # the same sums: the same bits


def test_kernel_matvec_same_bits_for_any_threads(rng):
    X = random_pcfs(rng, 90)
    V = rng.normal(size=(90, 16))
    ref = mpcf.kernel_matvec(X, V, kernel="gaussian", sigma=2.0, backend="cpu", threads=1)
    for threads in (2, 16):
        got = mpcf.kernel_matvec(X, V, kernel="gaussian", sigma=2.0, backend="cpu", threads=threads)
        assert got.tobytes() == ref.tobytes()


def test_kernel_operator_solves_a_ridge_system(rng):
    X = random_pcfs(rng, 60)
    y = rng.normal(size=60)
    lam = 0.5
    K = mpcf.KernelOperator(X, kernel="gaussian", p=2, sigma=1.5)
    assert isinstance(K, LinearOperator) and isinstance(K, mpcf.KernelOperator)
    assert K.shape == (60, 60) and K.dtype == np.float64
    A = LinearOperator(K.shape, matvec=lambda v: K @ v + lam * v, dtype=np.float64)
    alpha, info = cg(A, y, atol=1e-12, rtol=1e-12, maxiter=2000)
    assert info == 0
    Kd = dense_kernel(X, None, "gaussian", 2, 1.5)
    np.testing.assert_allclose(alpha, np.linalg.solve(Kd + lam * np.eye(60), y), rtol=1e-8, atol=1e-10)
    # Rectangular: K.T @ u is Y's products against X.
    Y = random_pcfs(rng, 20)
    R = mpcf.KernelOperator(X, Y, kernel="laplacian", sigma=2.0)
    u = rng.normal(size=60)
    Kr = dense_kernel(X, Y, "laplacian", 1, 2.0)
    np.testing.assert_allclose(R.T @ u, Kr.T @ u, rtol=1e-12)
    np.testing.assert_allclose(R @ np.eye(20)[:, :2], Kr[:, :2], rtol=1e-12)


def test_bad_arguments():
    X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 3), (1, 0)]]
    with pytest.raises(ValueError, match="k = 0"):
        mpcf.knn(X, 0)
    with pytest.raises(ValueError, match="k = 3 is more than the 2 other functions of X"):
        mpcf.knn(X, 3)
    with pytest.raises(TypeError, match="k must be an integer"):
        mpcf.knn(X, 1.5)
    with pytest.raises(ValueError, match="V has shape"):
        mpcf.kernel_matvec(X, [1.0, 2.0])
    with pytest.raises(ValueError, match="kernel must be one of"):
        mpcf.kernel_matvec(X, [1.0, 1.0, 2.0], kernel="rbf")
    with pytest.raises(TypeError, match="sigma must be a real number"):
        mpcf.kernel_matvec(X, [1.0, 1.0, 2.0], kernel="gaussian", sigma="1")
    out = np.zeros(2)
    with pytest.raises(ValueError, match="out has 2 elements"):
        mpcf.pdist(X, out=out)
    with pytest.raises(TypeError, match="dtype float32"):
        mpcf.pdist(X, out=np.zeros(3, dtype=np.float32))
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        mpcf.pdist(X, out=ro)
    with pytest.raises(ValueError, match="C-contiguous"):
        mpcf.cdist(X, X, out=np.zeros((3, 6))[:, ::2])
    with pytest.raises(TypeError, match="NumPy array"):
        mpcf.pdist(X, out=[0.0, 0.0, 0.0])


def test_kernel_matvec_rules_are_libmpcfs():
    # sigma, finite V and r >= 1 are judged by libmpcf alone; its message,
    # naming the argument and the offending value, comes through.
    X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 3), (1, 0)]]
    V = [1.0, 1.0, 2.0]
    need = r"kernels need a finite scale \(sigma\) > 0$"
    for kernel in ("gaussian", "laplacian"):
        for sigma, shown in ((0, "0"), (-1.5, "-1.5"), (np.inf, "inf"), (np.nan, "nan")):
            with pytest.raises(mpcf.InvalidArgumentError, match=rf"^scale = {shown} is not valid; .*{need}"):
                mpcf.kernel_matvec(X, V, kernel=kernel, sigma=sigma)
            with pytest.raises(mpcf.InvalidArgumentError, match=rf"^scale = {shown} "):
                mpcf.KernelOperator(X, kernel=kernel, sigma=sigma) @ np.ones(3)
    mpcf.kernel_matvec(X, V, kernel="l2", sigma=0)  # the L2 kernel has no scale
    with pytest.raises(mpcf.InvalidArgumentError,
                       match=r"^V\[1\]\[0\] = nan is not finite; V must be finite$"):
        mpcf.kernel_matvec(X, [1.0, np.nan, 2.0])
    with pytest.raises(mpcf.InvalidArgumentError, match=r"^V\[2\]\[1\] = -inf is not finite"):
        mpcf.kernel_matvec(X, [[1.0, 0.0], [1.0, 0.0], [1.0, -np.inf]])
    # 1e300 is finite in float64 but not in X's float32: checked as converted.
    X32 = mpcf.PcfCollection(X, dtype=np.float32)
    with np.errstate(over="ignore"), \
            pytest.raises(mpcf.InvalidArgumentError, match=r"^V\[0\]\[0\] = inf is not finite"):
        mpcf.kernel_matvec(X32, [1e300, 1.0, 1.0])
    with pytest.raises(mpcf.InvalidArgumentError,
                       match=r"^r = 0; V needs at least one column \(r >= 1\)$"):
        mpcf.kernel_matvec(X, np.zeros((3, 0)))


def test_pdist_and_cdist_into_a_callers_array(rng, tmp_path):
    X = random_pcfs(rng, 30)
    want = mpcf.pdist(X)
    out = np.full(want.size, -1.0)
    assert mpcf.pdist(X, out=out) is out
    np.testing.assert_array_equal(out, want)
    sq = np.empty((30, 30))
    assert mpcf.pdist(X, layout="square", out=sq) is sq
    np.testing.assert_array_equal(sq, squareform(want))
    mm = np.memmap(tmp_path / "c.bin", dtype=np.float64, mode="w+", shape=(30, 30))
    mpcf.cdist(X, X, out=mm)
    mm.flush()
    back = np.fromfile(tmp_path / "c.bin", dtype=np.float64).reshape(30, 30)
    np.testing.assert_array_equal(back, squareform(want))


OUT_OF_CORE = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    import mpcf
    n, path = int(sys.argv[1]), sys.argv[2]
    rng = np.random.default_rng(5)
    X = mpcf.PcfCollection(np.stack([np.array([[0, a], [1 + a, 0]]) for a in rng.uniform(0, 1, n)]))
    size = n * (n - 1) // 2
    def vm_data():
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmData"))
    # Anonymous memory (the heap) limited to 48 MiB more than now: the
    # result (size * 8 bytes) does not fit there.
    limit = vm_data() + (48 << 20)
    assert size * 8 > (64 << 20)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, resource.getrlimit(resource.RLIMIT_DATA)[1]))
    try:
        np.ones(size)
        print("in-memory: allocated")
    except MemoryError:
        print("in-memory: MemoryError")
    out = np.memmap(path, dtype=np.float64, mode="w+", shape=(size,))
    mpcf.pdist(X, out=out, backend="cpu", threads=2)
    out.flush()
    print("memmap: done")
    """
)


def test_out_of_core_pdist_into_a_memmap(tmp_path):
    n = 4200  # 8.8e6 pairs: 70 MB of float64
    path = tmp_path / "d.bin"
    proc = subprocess.run([sys.executable, "-c", OUT_OF_CORE, str(n), str(path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "in-memory: MemoryError" in proc.stdout and "memmap: done" in proc.stdout
    # Spot checks by hand: f_a = a on [0, 1 + a), then 0. For lo < hi,
    # |f_hi - f_lo| is hi - lo on [0, 1 + lo) and hi on [1 + lo, 1 + hi).
    rng = np.random.default_rng(5)
    a = rng.uniform(0, 1, n)
    D = np.memmap(path, dtype=np.float64, mode="r", shape=(n * (n - 1) // 2,))
    for i, j in [(0, 1), (0, n - 1), (17, 4000), (n - 2, n - 1)]:
        lo, hi = sorted((a[i], a[j]))
        want = (hi - lo) * (1 + lo) + hi * (hi - lo)
        k = n * i - i * (i + 1) // 2 + (j - i - 1)
        assert D[k] == pytest.approx(want, rel=1e-12)
