"""mpcf.dask on a LocalCluster of worker processes: pdist, cdist and knn have
the bits of the single-process calls for any chunking (and agree with SciPy
on a grid), also for objects of several PCFs or PLFs (components=True, on
scattered collections too; against rationals on a small case), the
collection is sent to the workers once, the workers' settings reach libmpcf,
a worker killed in the middle of a run changes nothing, and matrices go to
Zarr. Skipped without dask.distributed."""

import math
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
from scipy.spatial import distance as scipy_distance  # noqa: E402

import mpcf  # noqa: E402
import mpcf.dask as mdask  # noqa: E402
from mpcf import _dask_tasks  # noqa: E402

# The helpers below run on the workers (client.run), which cannot import
# this file: send them by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

TIMEOUT = 300  # seconds for any one computation; a hang fails instead of blocking CI


def _cluster(**kwargs):
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", **kwargs)


@pytest.fixture(scope="module")
def client():
    # Not the default client: every test names the client it uses, and the
    # tests of the local scheduler see no client at all.
    with _cluster() as cluster, distributed.Client(cluster, set_as_default=False) as c:
        yield c


def compute(client, x):
    return client.compute(x).result(timeout=TIMEOUT)


def random_pcfs(rng, n, max_m=8, dtype=np.float64):
    funcs = []
    for _ in range(n):
        m = int(rng.integers(1, max_m + 1))
        t = np.cumsum(rng.uniform(0.05, 1.0, m)) - 1.0
        v = rng.uniform(0.0, 10.0, m)
        v[-1] = 0.0
        funcs.append(np.stack([t, v], axis=1).astype(dtype))
    return mpcf.PcfCollection(funcs)


def grid_pcfs(rng, n, T=12, levels=4):
    """PCFs with breakpoints at integers in [0, T) and integer values, 0 from
    the last breakpoint on, and their samples at 0, 1, ..., T-1: on this grid
    the Lp distance is the Minkowski distance of the samples (unit pieces),
    exactly an integer for p = 1 and p = inf (so ties are exact)."""
    funcs, samples = [], np.zeros((n, T))
    for i in range(n):
        m = int(rng.integers(1, 5))
        t = np.sort(rng.choice(T, size=m, replace=False)).astype(float)
        v = rng.integers(0, levels, m).astype(float)
        v[-1] = 0.0
        funcs.append(np.stack([t, v], axis=1))
        for k in range(m):
            samples[i, int(t[k]):] = v[k]
    return mpcf.PcfCollection(funcs), samples


# ---- pdist -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("p", [1, 2.5, np.inf])
def test_pdist_has_the_bits_of_the_single_call_for_any_chunking(client, rng, dtype, p):
    X = random_pcfs(rng, 37, dtype=dtype)
    want = mpcf.pdist(X, p, layout="square")
    for chunks in (1, 6, 16, 37, 100, (10, 1, 20, 6), "auto"):
        D = mdask.pdist(X, p, chunks=chunks, client=client)
        assert isinstance(D, da.Array) and D.shape == (37, 37) and D.dtype == dtype
        got = compute(client, D)
        assert got.tobytes() == want.tobytes(), chunks


def test_pdist_chunks_are_the_tiles(client, rng):
    X = random_pcfs(rng, 10)
    D = mdask.pdist(X, chunks=4, client=client)
    assert D.chunks == ((4, 4, 2), (4, 4, 2))
    # Tiles above the diagonal are transposes of the ones below: 6 computed
    # tiles (3 diagonal + 3 below) and 3 transposes.
    assert len(dict(D.__dask_graph__().layers[D.name])) == 9
    # A block can be computed on its own.
    block = compute(client, D.blocks[0, 2])
    assert block.tobytes() == mpcf.pdist(X, layout="square")[0:4, 8:10].tobytes()


def test_pdist_agrees_with_scipy_on_a_grid(client, rng):
    X, samples = grid_pcfs(rng, 30)
    for p, metric, kwargs in ((1, "cityblock", {}), (np.inf, "chebyshev", {}), (3, "minkowski", {"p": 3})):
        got = compute(client, mdask.pdist(X, p, chunks=7, client=client))
        want = scipy_distance.squareform(scipy_distance.pdist(samples, metric, **kwargs))
        if p == 3:
            np.testing.assert_allclose(got, want, rtol=1e-12)
        else:
            assert np.array_equal(got, want)


def test_pdist_of_a_tensor_and_a_window(client, rng):
    X = mpcf.PcfCollection(np.stack([random_pcfs(rng, 1, max_m=5).to_list()[0][:1]] * 1))  # shape ()
    assert compute(client, mdask.pdist(X, client=client)).tolist() == [[0.0]]
    funcs = [np.array([[0.0, float(i % 3)], [1.0 + i, 0.0]]) for i in range(12)]
    T = mpcf.PcfCollection([funcs[:6], funcs[6:]])  # shape (2, 6)
    got = compute(client, mdask.pdist(T, 2, chunks=5, window=(0.5, 4.0), client=client))
    assert got.tobytes() == mpcf.pdist(T, 2, window=(0.5, 4.0), layout="square").tobytes()


def test_empty_and_single(client):
    empty = mpcf.PcfCollection.from_csr(np.zeros(1, np.uint64), np.zeros(0), np.zeros(0))
    assert compute(client, mdask.pdist(empty, client=client)).shape == (0, 0)
    one = mpcf.PcfCollection([[(0.0, 1.0), (1.0, 0.0)]])
    assert compute(client, mdask.pdist(one, client=client)).tolist() == [[0.0]]
    assert compute(client, mdask.cdist(one, empty, client=client)).shape == (1, 0)


# ---- cdist -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cdist_has_the_bits_of_the_single_call(client, rng, dtype):
    X = random_pcfs(rng, 23, dtype=dtype)
    Y = random_pcfs(rng, 17, dtype=dtype)
    for p in (1, 2, np.inf):
        want = mpcf.cdist(X, Y, p)
        for chunks in (1, 5, (4, 9), ((10, 13), 3), ("auto", (17,)), "auto"):
            got = compute(client, mdask.cdist(X, Y, p, chunks=chunks, client=client))
            assert got.tobytes() == want.tobytes(), (p, chunks)


def test_cdist_agrees_with_scipy_and_flattens_tensors(client, rng):
    X, xs = grid_pcfs(rng, 12)
    Y, ys = grid_pcfs(rng, 8)
    got = compute(client, mdask.cdist(X, Y, chunks=(5, 3), client=client))
    assert np.array_equal(got, scipy_distance.cdist(xs, ys, "cityblock"))
    Xt = mpcf.PcfCollection([X.to_list()[:6], X.to_list()[6:]])  # shape (2, 6)
    got = compute(client, mdask.cdist(Xt, Y, chunks=4, client=client))
    assert got.shape == (12, 8)
    assert got.tobytes() == mpcf.cdist(Xt, Y).reshape(12, 8).tobytes()


# ---- knn -----------------------------------------------------------------------


def brute_force_knn(D, k, exclude_self):
    """Row by row: the k smallest (distance, index) of the full matrix."""
    n = D.shape[0]
    dist, idx = np.empty((n, k)), np.empty((n, k), dtype=np.int64)
    for i in range(n):
        cols = [j for j in range(D.shape[1]) if not (exclude_self and j == i)]
        order = sorted(cols, key=lambda j: (D[i, j], j))[:k]
        idx[i] = order
        dist[i] = D[i, order]
    return dist, idx


def test_knn_with_ties_against_brute_force_and_the_single_call(client, rng):
    X, samples = grid_pcfs(rng, 41, T=6, levels=2)  # few distinct distances: many ties
    D = scipy_distance.squareform(scipy_distance.pdist(samples, "cityblock"))
    want_d, want_i = brute_force_knn(D, 6, exclude_self=True)
    single_d, single_i = mpcf.knn(X, 6)
    assert np.array_equal(single_d, want_d) and np.array_equal(single_i, want_i)
    for chunks, split_every in ((1, 8), (3, 2), (10, 3), (41, 8), ((20, 1, 20), 2), ("auto", 8)):
        d, i = mdask.knn(X, 6, chunks=chunks, split_every=split_every, client=client)
        assert d.tobytes() == single_d.tobytes(), (chunks, split_every)
        assert i.dtype == np.int64 and np.array_equal(i, single_i), (chunks, split_every)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("p", [1, 2.5, np.inf])
def test_knn_has_the_bits_of_the_single_call(client, rng, dtype, p):
    X = random_pcfs(rng, 33, dtype=dtype)
    want_d, want_i = mpcf.knn(X, 5, p=p)
    for chunks in (4, 13):
        d, i = mdask.knn(X, 5, p=p, chunks=chunks, client=client)
        assert d.dtype == dtype
        assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)
    k = 32  # every other PCF
    d, i = mdask.knn(X, k, p=p, chunks=7, client=client)
    want_d, want_i = mpcf.knn(X, k, p=p)
    assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)


def test_knn_among_y(client, rng):
    X, xs = grid_pcfs(rng, 19)
    Y, ys = grid_pcfs(rng, 23)
    want_d, want_i = brute_force_knn(scipy_distance.cdist(xs, ys, "cityblock"), 4, exclude_self=False)
    for chunks in (1, 5, (7, 4), "auto"):
        d, i = mdask.knn(X, 4, Y, chunks=chunks, client=client)
        assert np.array_equal(d, want_d) and np.array_equal(i, want_i), chunks
    d, i = mdask.knn(X, 23, Y, chunks=(5, 6), client=client)
    single_d, single_i = mpcf.knn(X, 23, Y)
    assert d.tobytes() == single_d.tobytes() and np.array_equal(i, single_i)


def test_knn_tile_below_the_diagonal_is_one_pass(rng):
    # A tile below the diagonal is one libmpcf knn both ways (every pair
    # computed once): the lists of both row blocks, as knn of the rows among
    # the columns and of the columns among the rows give them.
    X = mpcf.PcfCollection(random_pcfs(rng, 12))
    rows, cols = X.slice(6, 12), X.slice(0, 6)
    for backend in ("cpu", "auto"):
        for p in (1, 2.5, np.inf):
            want_r = mpcf.knn(rows, 3, cols, p=p, backend=backend)
            want_c = mpcf.knn(cols, 3, rows, p=p, backend=backend)
            (d_r, i_r), (d_c, i_c) = _dask_tasks.knn_below_diagonal(
                X, 6, 12, 0, 6, 3, p, (None, backend, 2, None))
            assert d_r.tobytes() == want_r[0].tobytes() and np.array_equal(i_r, want_r[1])
            assert d_c.tobytes() == want_c[0].tobytes() and np.array_equal(i_c, want_c[1] + 6)
        info = mpcf.last_task_info()  # of the tile's one call
        assert info["threads"] == 2
        # Every pair of the tile once: 6 x 6 pairs.
        assert info["merge_steps"] == 6 * (rows.total_breakpoints + cols.total_breakpoints)
    # Fewer candidates than k on one side: each side's k is its own.
    (d_r, _), (d_c, _) = _dask_tasks.knn_below_diagonal(X, 4, 12, 0, 2, 3, 1.0,
                                                        (None, "cpu", 1, None))
    assert d_r.shape == (8, 2) and d_c.shape == (2, 3)


def test_gpu_bands_of_equal_work():
    # Row bounds n sqrt(w / b) of the triangle (rows 0..r-1 hold r (r - 1) / 2
    # pairs), worked out by hand: 200,000 sqrt(1/2) = 141,421.4; 40 sqrt(1/3)
    # = 23.09, 40 sqrt(2/3) = 32.66. A rectangle: equal blocks.
    bands = mdask._gpu_bands
    assert bands(200_000, 2, True) == (141_421, 58_579)
    assert bands(40, 3, True) == (23, 10, 7)
    assert bands(40, 1, True) == (40,)
    assert bands(100, 4, False) == (25, 25, 25, 25)
    assert bands(10, 3, False) == (3, 4, 3)
    # More bands than rows: at most one row each, none empty.
    assert bands(2, 5, False) == (1, 1)
    assert bands(3, 8, True) == (2, 1)   # 3 bands at most: bounds 0, 1.73, 2.45, 3


def test_gpus_used_by_a_worker(monkeypatch):
    monkeypatch.setattr(_dask_tasks._ops, "cuda_device_count", lambda: 2)
    used = _dask_tasks.gpus_used
    assert used((None, None, None, None)) == 2            # backend auto: all devices
    assert used((None, "cuda", None, None)) == 2
    assert used((None, "cpu", None, None)) == 0           # the CPU asked for
    assert used((None, None, None, (1,))) == 1            # the devices named ...
    assert used((None, None, None, (1, 5, 7))) == 1       # ... that exist
    monkeypatch.setattr(_dask_tasks._ops, "cuda_device_count", lambda: 0)
    assert used((None, "cuda", None, None)) == 0


def test_gpu_workers_asks_every_worker(client):
    class Workers:
        def __init__(self, answer):
            self.answer = answer

        def run(self, fn, *args):
            assert fn is _dask_tasks.gpus_used
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    settings = (None, None, None, None)
    # Per worker, those without a GPU left out.
    assert mdask._gpu_workers(Workers({"a": 1, "b": 2, "c": 0}), settings) == {"a": 1, "b": 2}
    assert mdask._gpu_workers(Workers(OSError("gone")), settings) == {}  # tile as for CPUs
    # The real workers of this machine see no GPU (or the backend is cpu).
    want = 2 * _dask_tasks.gpus_used(settings)
    assert sum(mdask._gpu_workers(client, settings).values()) == want
    assert mdask._gpu_workers(client, (None, "cpu", None, None)) == {}


def test_knn_auto_chunks_follow_the_gpus(rng, monkeypatch):
    # Local scheduler (this process): where the workers report g GPUs,
    # "auto" makes g bands of rows of equal work, one task each (a band:
    # its square on the diagonal and the rows above it, each pair once),
    # else tiles by the CPU rule; the bits are the single call's either way.
    X = random_pcfs(rng, 40)
    want_d, want_i = mpcf.knn(X, 3)
    calls = []
    real_diag, real_below = _dask_tasks.knn_diagonal, _dask_tasks.knn_below_diagonal
    monkeypatch.setattr(_dask_tasks, "knn_diagonal",
                        lambda X, i0, i1, *a: calls.append(("diag", i0, i1))
                        or real_diag(X, i0, i1, *a))
    monkeypatch.setattr(_dask_tasks, "knn_below_diagonal",
                        lambda X, i0, i1, j0, j1, *a: calls.append(("below", i0, i1, j0, j1))
                        or real_below(X, i0, i1, j0, j1, *a))
    for gpus, want_calls in [
        (1, [("diag", 0, 40)]),
        (2, [("diag", 0, 28), ("diag", 28, 40), ("below", 28, 40, 0, 28)]),
        (3, [("diag", 0, 23), ("diag", 23, 33), ("below", 23, 33, 0, 23), ("diag", 33, 40),
             ("below", 33, 40, 0, 33)]),
    ]:
        calls.clear()
        monkeypatch.setattr(_dask_tasks, "gpus_used", lambda settings, g=gpus: g)
        d, i = mdask.knn(X, 3, chunks="auto")
        assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i), gpus
        assert sorted(calls) == sorted(want_calls), gpus
    calls.clear()
    monkeypatch.setattr(_dask_tasks, "gpus_used", lambda settings: 0)
    d, i = mdask.knn(X, 3, chunks="auto")
    assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)
    assert calls == [("diag", 0, 40)]  # the CPU rule: one tile of at least 256 rows
    # Explicit chunks: the workers are not asked.
    calls.clear()
    monkeypatch.setattr(_dask_tasks, "gpus_used", lambda settings: 1 / 0)
    d, i = mdask.knn(X, 3, chunks=20)
    assert d.tobytes() == want_d.tobytes()
    assert sorted(calls) == [("below", 20, 40, 0, 20), ("diag", 0, 20), ("diag", 20, 40)]


def test_knn_bands_on_a_cluster(client, rng, monkeypatch):
    # The band graph on real workers (here computing on their CPUs, told
    # they have GPUs): every row block's lists merged from its band and the
    # column lists of the bands below it, the single call's bits; each band
    # on the worker it was given (a worker of g GPUs takes g bands, workers
    # in sorted order).
    X = random_pcfs(rng, 50)
    want_d, want_i = mpcf.knn(X, 4, backend="cpu")
    w0, w1 = sorted(client.scheduler_info()["workers"])
    for gpus, owners in [((1, 1), [w0, w1]), ((2, 1), [w0, w0, w1]), ((1, 3), [w0, w1, w1, w1])]:
        monkeypatch.setattr(mdask, "_gpu_workers", lambda client, settings, g=gpus: {w1: g[1], w0: g[0]})
        with distributed.get_task_stream(client) as ts:
            d, i = mdask.knn(X, 4, chunks="auto", client=client, backend="cpu")
        assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i), gpus
        ran = {}
        for task in ts.data:
            key = task["key"]
            if isinstance(key, tuple) and str(key[0]).endswith("-band"):
                ran[key[1]] = task["worker"]
        assert [ran[b] for b in sorted(ran)] == owners, gpus


def test_knn_among_y_auto_chunks_for_gpus(rng, monkeypatch):
    # With Y and g GPUs, "auto": g equal bands of X's rows, each against all
    # of Y (one knn each, nothing to merge); a pair ("auto", 5) keeps the
    # bands and cuts Y into fives.
    X, Y = random_pcfs(rng, 10), random_pcfs(rng, 12)
    want_d, want_i = mpcf.knn(X, 3, Y)
    calls = []
    real = _dask_tasks.knn_cross
    monkeypatch.setattr(_dask_tasks, "knn_cross",
                        lambda X, i0, i1, Y, j0, j1, *a: calls.append((i0, i1, j0, j1))
                        or real(X, i0, i1, Y, j0, j1, *a))
    monkeypatch.setattr(_dask_tasks, "gpus_used", lambda settings: 3)
    d, i = mdask.knn(X, 3, Y, chunks="auto")
    assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)
    assert sorted(calls) == [(0, 3, 0, 12), (3, 7, 0, 12), (7, 10, 0, 12)]
    calls.clear()
    d, i = mdask.knn(X, 3, Y, chunks=("auto", 5))
    assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)
    assert sorted(calls) == [(a, b, c, e) for a, b in ((0, 3), (3, 7), (7, 10))
                             for c, e in ((0, 5), (5, 10), (10, 12))]


@pytest.mark.gpu
def test_cuda_tiles_have_the_bits_of_the_single_cuda_calls(client, rng):
    # backend="cuda" on the workers: pdist tiles and the knn tiles below the
    # diagonal (one libmpcf knn both ways each), against the single-process
    # CUDA calls.
    for dtype in (np.float32, np.float64):
        X = random_pcfs(rng, 1201, max_m=40, dtype=dtype)
        for p in (1, 2.5, np.inf):
            want = mpcf.pdist(X, p, layout="square", backend="cuda")
            got = compute(client, mdask.pdist(X, p, chunks=500, client=client, backend="cuda"))
            assert got.tobytes() == want.tobytes(), (dtype, p)
            want_d, want_i = mpcf.knn(X, 9, p=p, backend="cuda")
            d, i = mdask.knn(X, 9, p=p, chunks=500, client=client, backend="cuda")
            assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i), (dtype, p)


def test_knn_keeps_the_shape_of_x(client, rng):
    X = random_pcfs(rng, 12)
    T = mpcf.PcfCollection([X.to_list()[:4], X.to_list()[4:8], X.to_list()[8:]])  # (3, 4)
    d, i = mdask.knn(T, 3, chunks=5, client=client)
    want_d, want_i = mpcf.knn(T, 3)
    assert d.shape == (3, 4, 3) and d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)


def test_merge_of_random_lists_against_a_sort(rng):
    # libmpcf's merge of two lists (and of one, returned cut to k) against
    # NumPy: sort each row's union by (distance, index). Integer distances,
    # so that many tie; +inf among them; float32 and float64.
    for dtype in (np.float32, np.float64):
        for ka, kb, k in [(5, 3, 4), (5, 3, 8), (1, 6, 6), (4, 4, 2)]:
            rows = 50
            idx = np.stack([rng.permutation(100)[: ka + kb] for _ in range(rows)])
            dist = rng.integers(0, 4, size=(rows, ka + kb)).astype(dtype)
            dist[rng.random((rows, ka + kb)) < 0.1] = np.inf
            parts = []
            for lo, hi in ((0, ka), (ka, ka + kb)):
                d, i = dist[:, lo:hi], idx[:, lo:hi]
                order = np.lexsort((i, d), axis=1)
                parts.append((np.take_along_axis(d, order, 1), np.take_along_axis(i, order, 1)))
            order = np.lexsort((idx, dist), axis=1)[:, :k]
            want_d, want_i = np.take_along_axis(dist, order, 1), np.take_along_axis(idx, order, 1)
            for a, b in (parts, parts[::-1]):
                d, i = _dask_tasks.merge_knn(k, a, b)
                assert d.dtype == dtype and d.tobytes() == want_d.tobytes()
                assert np.array_equal(i, want_i)


def test_merge_refuses_lists_out_of_order():
    a = (np.array([[1.0, 2.0], [3.0, 1.0]]), np.array([[0, 1], [2, 3]]))
    b = (np.array([[1.0], [2.0]]), np.array([[5], [6]]))
    with pytest.raises(mpcf.InvalidArgumentError, match="a's row 1 is not ascending"):
        _dask_tasks.merge_knn(2, a, b)
    with pytest.raises(TypeError, match="one dtype"):
        _dask_tasks.merge_knn(2, b, (b[0].astype(np.float32), b[1]))
    with pytest.raises(ValueError, match="same rows"):
        _dask_tasks.merge_knn(2, b, (b[0][:1], b[1][:1]))              # other rows
    with pytest.raises(ValueError, match="distances and indices alike"):
        _dask_tasks.merge_knn(2, b, (b[0], np.zeros((2, 2), np.int64)))  # other shapes


def test_merge_orders_ties_by_index():
    d, i = _dask_tasks.merge_knn(2, (np.array([[1.0, 2.0]]), np.array([[7, 3]])),
                                 (np.array([[1.0]]), np.array([[5]])))
    assert d.tolist() == [[1.0, 1.0]] and i.tolist() == [[5, 7]]


# ---- objects of several functions (components=True) ---------------------------


def small_functions(rng, n, K):
    """n objects of K functions with integer breakpoints in [0, 10) and
    integer values in [-3, 3], the last value 0, as (t, v) lists."""
    objects = []
    for _ in range(n):
        row = []
        for _ in range(K):
            m = int(rng.integers(1, 5))
            t = np.sort(rng.choice(10, size=m, replace=False)).astype(float)
            v = rng.integers(-3, 4, size=m).astype(float)
            v[-1] = 0.0
            row.append(np.stack([t, v], axis=1))
        objects.append(row)
    return objects


def _right(f, t, linear):
    """f(t+) in rationals: 0 before t_0, the piece's value (PCF) or its
    interpolation (PLF) inside, the last value from t_{m-1} on."""
    if t < f[0][0]:
        return Fraction(0)
    for (t0, v0), (t1, v1) in zip(f, f[1:]):
        if t0 <= t < t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if linear else v0
    return f[-1][1]


def _left(f, t, linear):
    """f(t-) in rationals."""
    if t <= f[0][0]:
        return Fraction(0)
    for (t0, v0), (t1, v1) in zip(f, f[1:]):
        if t0 < t <= t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if linear else v0
    return f[-1][1]


def exact_power_integral(f, g, p, linear):
    """The integral of |f - g|^p (p = 1 or 2) as a Fraction, for functions
    whose last values are 0: between merged breakpoints h = f - g goes
    linearly (PLF) or stays (PCF) from x = h(l+) to y = h(r-); an L1 piece
    where h changes sign is two triangles."""
    f = [(Fraction(t), Fraction(v)) for t, v in f]
    g = [(Fraction(t), Fraction(v)) for t, v in g]
    cuts = sorted({t for t, _ in f} | {t for t, _ in g})
    total = Fraction(0)
    for l, r in zip(cuts, cuts[1:]):
        w = r - l
        x = _right(f, l, linear) - _right(g, l, linear)
        y = _left(f, r, linear) - _left(g, r, linear)
        if p == 2:
            total += w * (x * x + x * y + y * y) / 3
        elif x * y < 0:
            total += w * (x * x + y * y) / (2 * (abs(x) + abs(y)))
        else:
            total += w * (abs(x) + abs(y)) / 2
    return total


def exact_object_distances(A, B, p, linear):
    """(sum_k d_p(a_k, b_k)^p)^(1/p) for every object a of A and b of B, the
    sum in rationals, rounded once (then the square root for p = 2)."""
    D = np.zeros((len(A), len(B)))
    for i, a in enumerate(A):
        for j, b in enumerate(B):
            total = sum((exact_power_integral(x, y, p, linear) for x, y in zip(a, b)), Fraction(0))
            D[i, j] = float(total) if p == 1 else math.sqrt(float(total))
    return D


KINDS = [mpcf.PcfCollection, mpcf.PlfCollection]


@pytest.mark.parametrize("kind", KINDS)
def test_components_on_a_scattered_collection_against_rationals(client, rng, kind):
    A, B = small_functions(rng, 7, 3), small_functions(rng, 4, 3)
    X, Y = kind(A), kind(B)
    SX, SY = mdask.scatter(X, client=client), mdask.scatter(Y, client=client)
    assert SX.shape == (7, 3) and SX.kind is kind
    linear = kind is mpcf.PlfCollection
    for p in (1, 2):
        D = compute(client, mdask.pdist(SX, p, chunks=3, components=True, client=client))
        np.testing.assert_allclose(D, exact_object_distances(A, A, p, linear), rtol=1e-14, atol=0)
        C = compute(client, mdask.cdist(SX, SY, p, chunks=(3, 2), components=True, client=client))
        np.testing.assert_allclose(C, exact_object_distances(A, B, p, linear), rtol=1e-14, atol=0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("p", [1, 2.5, np.inf])
def test_components_on_scattered_collections_have_the_bits_of_the_single_calls(client, rng, kind, p):
    n, m, K = 23, 7, 3
    X = kind([random_pcfs(rng, K).to_list() for _ in range(n)])
    Y = kind([random_pcfs(rng, K).to_list() for _ in range(m)])
    assert X.shape == (n, K)
    SX, SY = mdask.scatter(X, client=client), mdask.scatter(Y, client=client)
    want = mpcf.pdist(X, p, layout="square", components=True)
    for chunks in (5, 23):
        D = compute(client, mdask.pdist(SX, p, chunks=chunks, components=True, client=client))
        assert D.shape == (n, n) and D.tobytes() == want.tobytes()
    want = mpcf.cdist(X, Y, p, components=True)
    for x, y in ((SX, SY), (SX, Y), (X, SY)):
        C = compute(client, mdask.cdist(x, y, p, chunks=(4, 3), components=True, client=client))
        assert C.tobytes() == want.tobytes()
    d, i = mdask.knn(SX, 3, p=p, chunks=6, components=True, client=client)
    d2, i2 = mpcf.knn(X, 3, p=p, components=True)
    assert d.tobytes() == d2.tobytes() and np.array_equal(i, i2)
    d, i = mdask.knn(SX, 2, SY, p=p, chunks=(5, 3), components=True, client=client)
    d2, i2 = mpcf.knn(X, 2, Y, p=p, components=True)
    assert d.tobytes() == d2.tobytes() and np.array_equal(i, i2)
    # The same scattered data read as n K functions: a graph of its own.
    D = compute(client, mdask.pdist(SX, p, chunks=23, client=client))
    assert D.tobytes() == mpcf.pdist(X, p, layout="square").tobytes()


def test_components_on_scattered_collections_bad_inputs(client):
    f = [(0.0, 1.0), (1.0, 0.0)]
    flat = mdask.scatter(mpcf.PlfCollection([f, f, f]), client=client)
    # libmpcf's verdict, found when the collection was scattered, at the call.
    with pytest.raises(mpcf.InvalidArgumentError, match="component axis needs a shape of at least 2"):
        mdask.pdist(flat, components=True, client=client)
    with pytest.raises(mpcf.InvalidArgumentError, match="component axis needs a shape of at least 2"):
        mdask.knn(flat, 1, components=True, client=client)
    assert compute(client, mdask.pdist(flat, client=client)).shape == (3, 3)
    plf = mdask.scatter(mpcf.PlfCollection([[f, f], [f, f]]), client=client)
    pcf = mdask.scatter(mpcf.PcfCollection([[f, f], [f, f]]), client=client)
    for x, y in ((plf, pcf), (plf, mpcf.PcfCollection([[f, f]])), (mpcf.PcfCollection([[f, f]]), plf)):
        with pytest.raises(mpcf.InvalidArgumentError, match="piecewise linear functions .* piecewise constant"
                           "|piecewise constant functions .* piecewise linear"):
            mdask.cdist(x, y, components=True, client=client)
    # K = 2 against K = 3: libmpcf's message, at the call (K is known from
    # the scattered collections' shapes; nothing is computed).
    narrow = mdask.scatter(mpcf.PlfCollection([[f, f, f]]), client=client)
    for x, y, kx, ky in ((plf, narrow, 2, 3), (narrow, mpcf.PlfCollection([[f, f]]), 3, 2)):
        with pytest.raises(mpcf.InvalidArgumentError,
                           match=rf"^X holds objects of {kx} components but Y holds objects of {ky} components; "
                                 "both collections must have the same component axis$"):
            mdask.cdist(x, y, components=True, client=client)
    # Plain data in Y takes X's kind, as in mpcf.cdist.
    g = [(0.0, 0.0), (2.0, 2.0), (3.0, 0.0)]
    C = compute(client, mdask.cdist(plf, [[g, f]], components=True, client=client))
    assert C.tobytes() == mpcf.cdist(mpcf.PlfCollection([[f, f], [f, f]]), [[g, f]], components=True).tobytes()
    with pytest.raises(TypeError, match="components must be True or False"):
        mdask.pdist(plf, components=1, client=client)


def test_objects_of_different_component_counts_fail_at_the_call(monkeypatch):
    # No client: Dask's synchronous scheduler. A tile that ran would be
    # computing; none may run.
    def no_tile(*args):
        raise AssertionError("a tile was computed")

    for tile in ("cdist_tile", "knn_cross", "merge_parts"):
        monkeypatch.setattr(_dask_tasks, tile, no_tile)
    f = [(0.0, 1.0), (1.0, 0.0)]
    X = mpcf.PlfCollection([[f, f], [f, f]])  # 2 objects of K = 2
    Y = mpcf.PlfCollection([[f, f, f]])  # 1 object of K = 3
    # libmpcf's message for the mismatch, written out.
    message = ("^X holds objects of 2 components but Y holds objects of 3 components; "
               "both collections must have the same component axis$")
    with pytest.raises(mpcf.InvalidArgumentError, match=message):
        mpcf.cdist(X, Y, components=True)  # the single-process call says the same
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(mpcf.InvalidArgumentError, match=message):
            mdask.cdist(X, Y, components=True, chunks=1)
        with pytest.raises(mpcf.InvalidArgumentError, match=message):
            mdask.knn(X, 1, Y, components=True, chunks=1)
        with pytest.raises(mpcf.InvalidArgumentError, match="Y holds objects of 2 components"):
            mdask.cdist(Y, X, components=True)
        # One K on both sides is fine; the graph is built, not computed.
        D = mdask.cdist(X, mpcf.PlfCollection([[f, f]]), components=True, chunks=1)
        assert D.shape == (2, 1)


# ---- the collection reaches the workers once ---------------------------------


def test_the_collection_is_sent_once_not_with_every_task(client, rng, monkeypatch):
    X = random_pcfs(rng, 40)
    pickled = []
    original = mpcf.PcfCollection.__reduce__

    def counting(self):
        pickled.append(self.size)
        return original(self)

    monkeypatch.setattr(mpcf.PcfCollection, "__reduce__", counting)
    S = mdask.scatter(X, client=client)
    assert pickled == [40]  # once, for both workers (broadcast)
    assert set(client.who_has([S.future])[S.future.key]) == set(client.scheduler_info()["workers"])
    del pickled[:]
    for chunks in (2, 20):  # 210 or 3 tiles: no task carries PCF data
        got = compute(client, mdask.pdist(S, chunks=chunks, client=client))
        assert got.tobytes() == mpcf.pdist(X, layout="square").tobytes()
        d, i = mdask.knn(S, 3, chunks=chunks, client=client)
        assert np.array_equal(i, mpcf.knn(X, 3)[1])
    assert pickled == []
    for chunks in (2, 20):  # a plain collection: scattered once per call
        compute(client, mdask.pdist(X, chunks=chunks, client=client))
    assert pickled == [40, 40]


def test_objects_of_a_scattered_collection_are_not_sent_again(client, rng, monkeypatch):
    X = mpcf.PcfCollection([random_pcfs(rng, 2).to_list() for _ in range(20)])
    pickled = []
    original = mpcf.PcfCollection.__reduce__

    def counting(self):
        pickled.append(self.size)
        return original(self)

    monkeypatch.setattr(mpcf.PcfCollection, "__reduce__", counting)
    S = mdask.scatter(X, client=client)
    assert pickled == [40]
    del pickled[:]
    got = compute(client, mdask.pdist(S, chunks=3, components=True, client=client))
    assert got.tobytes() == mpcf.pdist(X, layout="square", components=True).tobytes()
    d, i = mdask.knn(S, 2, chunks=3, components=True, client=client)
    assert np.array_equal(i, mpcf.knn(X, 2, components=True)[1])
    assert pickled == []


# ---- the workers keep a scattered collection -----------------------------------


def _holders_on_scheduler(key, dask_scheduler):
    ts = dask_scheduler.tasks.get(key)
    return sorted(ws.address for ws in (ts.who_has or ())) if ts is not None else []


def _holders(client, key):
    """The workers holding Dask's replicas of key (none once it is forgotten)."""
    return client.run_on_scheduler(_holders_on_scheduler, key)


def _wait_for(predicate, what):
    import time

    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _csr_bytes(X):
    offsets, times, values = X.to_csr()
    return offsets.nbytes + times.nbytes + values.nbytes


def _set_resident_limit(value):
    dask.config.set({"mpcf.resident-bytes": value})


def test_the_workers_keep_a_scattered_collection_when_dask_drops_its_copies(client, rng):
    """Dask's Active Memory Manager leaves one replica of the scattered key;
    a knn run wholly on the other worker then copies nothing there (the key
    stays on one worker), computes on the copy that worker kept at the
    scatter (the same object), and has the bits of the single call."""
    X = random_pcfs(rng, 60)
    S = mdask.scatter(X, client=client)
    key = S.future.key
    workers = sorted(client.scheduler_info()["workers"])
    kept = client.run(_dask_tasks.resident_entries)
    for w in workers:
        assert kept[w][key][:2] == (_csr_bytes(X), "scattered")
    client.amm.run_once()
    _wait_for(lambda: len(_holders(client, key)) == 1, "the manager left two replicas")
    holder = _holders(client, key)[0]
    other = next(w for w in workers if w != holder)
    want_d, want_i = mpcf.knn(X, 4)
    with dask.annotate(workers=[other], allow_other_workers=False):
        d, i = mdask.knn(S, 4, chunks=20, client=client)
    assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)
    assert _holders(client, key) == [holder]  # Dask copied nothing back
    after = client.run(_dask_tasks.resident_entries)
    assert after[other][key] == kept[other][key]  # the same object, kept since the scatter
    # pdist's tiles too
    with dask.annotate(workers=[other], allow_other_workers=False):
        D = mdask.pdist(S, chunks=20, client=client)
    assert compute(client, D).tobytes() == mpcf.pdist(X, layout="square").tobytes()
    assert _holders(client, key) == [holder]
    S.release()


def test_a_worker_without_the_kept_copy_fetches_it_once(client, rng):
    X = random_pcfs(rng, 50)
    S = mdask.scatter(X, client=client)
    key = S.future.key
    client.amm.run_once()
    _wait_for(lambda: len(_holders(client, key)) == 1, "the manager left two replicas")
    holder = _holders(client, key)[0]
    other = next(w for w in client.scheduler_info()["workers"] if w != holder)
    assert client.run(_dask_tasks.drop_resident, key, workers=[other]) == {other: True}
    assert key not in client.run(_dask_tasks.resident_entries, workers=[other])[other]
    with dask.annotate(workers=[other], allow_other_workers=False):
        d, i = mdask.knn(S, 3, chunks=10, client=client)  # 15 tiles and their merges
    want_d, want_i = mpcf.knn(X, 3)
    assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)
    entry = client.run(_dask_tasks.resident_entries, workers=[other])[other][key]
    assert entry[:2] == (_csr_bytes(X), "fetched")
    with dask.annotate(workers=[other], allow_other_workers=False):
        mdask.knn(S, 3, chunks=10, client=client)
    # kept from the first fetch on: the same object
    assert client.run(_dask_tasks.resident_entries, workers=[other])[other][key] == entry
    S.release()


def test_a_task_naming_a_collection_no_longer_in_the_cluster_fails_clearly(client):
    future = client.submit(_dask_tasks.resident, _dask_tasks.Resident("mpcf-no-such-key", 10),
                           pure=False)
    with pytest.raises(RuntimeError, match="'mpcf-no-such-key' is no longer in the cluster"):
        future.result(timeout=TIMEOUT)


def test_release_forgets_the_kept_copies(client, rng):
    X = random_pcfs(rng, 20)
    S = mdask.scatter(X, client=client)
    key = S.future.key
    S.release()
    assert S.future is None and "released" in repr(S)
    for entries in client.run(_dask_tasks.resident_entries).values():
        assert key not in entries
    _wait_for(lambda: not _holders(client, key), "the key outlived its release")
    with pytest.raises(ValueError, match="released"):
        mdask.knn(S, 2, client=client)
    with pytest.raises(ValueError, match="released"):
        mdask.pdist(S, client=client)
    S.release()  # twice: nothing more to do


def test_a_collection_over_a_workers_limit_is_named_by_its_key(client, rng):
    X = random_pcfs(rng, 30)
    size = _csr_bytes(X)
    workers = sorted(client.scheduler_info()["workers"])
    try:
        client.run(_set_resident_limit, size - 1, workers=[workers[0]])
        S = mdask.scatter(X, client=client)
        assert S._resident is None  # not kept anywhere: no task fetches it per call
        for entries in client.run(_dask_tasks.resident_entries).values():
            assert S.future.key not in entries
        d, i = mdask.knn(S, 3, chunks=10, client=client)
        assert np.array_equal(i, mpcf.knn(X, 3)[1])
        S.release()
        client.run(_set_resident_limit, size, workers=[workers[0]])
        S = mdask.scatter(X, client=client)  # exactly at the limit: kept
        assert S._resident is not None
        S.release()
    finally:
        client.run(_set_resident_limit, None)


def test_the_kept_collections_stay_within_the_limit_least_recent_first():
    store = _dask_tasks.ResidentStore()
    a, b, c, big = object(), object(), object(), object()
    assert store.put("a", a, 40, 100, "scattered")
    assert store.put("b", b, 40, 100, "fetched")
    assert store.get("a") is a  # a is now the most recent
    assert store.put("c", c, 40, 100, "scattered")  # 120 > 100: b goes
    assert list(store.entries()) == ["a", "c"]
    assert store.get("b") is None
    assert not store.put("big", big, 101, 100, "scattered")  # alone over the limit
    assert list(store.entries()) == ["a", "c"]
    assert store.put("a", a, 60, 100, "fetched")  # again, larger: 100 fits
    assert list(store.entries()) == ["c", "a"]
    assert store.put("a", a, 61, 100, "fetched")  # 101: c, now the oldest, goes
    assert store.entries() == {"a": (61, "fetched", id(a))}
    assert store.drop("a") and not store.drop("a")
    assert store.entries() == {}


class _FakeWorker:
    def __init__(self, data):
        self.data = data


def test_keep_resident_says_kept_over_the_limit_or_absent():
    X = random_pcfs(np.random.default_rng(3), 5)
    size = _csr_bytes(X)
    assert _dask_tasks.collection_bytes(X) == size
    assert _dask_tasks.keep_resident("mpcf-test-absent", size, dask_worker=_FakeWorker({})) is None
    try:
        with dask.config.set({"mpcf.resident-bytes": size - 1}):
            assert _dask_tasks.keep_resident("mpcf-test-x", size, _FakeWorker({"mpcf-test-x": X})) is False
            assert "mpcf-test-x" not in _dask_tasks.resident_entries()
        with dask.config.set({"mpcf.resident-bytes": size}):
            assert _dask_tasks.keep_resident("mpcf-test-x", size, _FakeWorker({"mpcf-test-x": X})) is True
            assert _dask_tasks.resident_entries()["mpcf-test-x"] == (size, "scattered", id(X))
            assert _dask_tasks.resident(_dask_tasks.Resident("mpcf-test-x", size)) is X
    finally:
        _dask_tasks.drop_resident("mpcf-test-x")


def test_the_resident_limit_setting():
    with dask.config.set({"mpcf.resident-bytes": "2 KiB"}):
        assert _dask_tasks.resident_limit() == 2048
    with dask.config.set({"mpcf.resident-bytes": 5000}):
        assert _dask_tasks.resident_limit() == 5000
    with dask.config.set({"mpcf.resident-bytes": -1}):
        with pytest.raises(ValueError, match="negative"):
            _dask_tasks.resident_limit()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert _dask_tasks.resident_limit() == memory // 4  # outside a worker: a quarter of the machine's


def test_default_client_and_local_scheduler(client, rng):
    X = random_pcfs(rng, 15)
    want = mpcf.pdist(X, layout="square")
    with client.as_current():  # client=None: Dask's current client
        D = mdask.pdist(X, chunks=4)
        assert D.compute().tobytes() == want.tobytes()
    # No client at all: the local scheduler, the collection in the graph once.
    from distributed import default_client

    with pytest.raises(ValueError):
        default_client()
    D = mdask.pdist(X, chunks=4)
    assert D.compute(scheduler="threads").tobytes() == want.tobytes()
    d, i = mdask.knn(X, 2, chunks=4)
    assert np.array_equal(i, mpcf.knn(X, 2)[1])
    with pytest.raises(ValueError, match="needs a dask.distributed Client"):
        mdask.scatter(X)


# ---- per-worker settings ---------------------------------------------------------


def _resolved(settings):
    return _dask_tasks.options(settings)


def resolved_in_tasks(client, settings):
    """The libmpcf keyword arguments a task computes with, on each worker."""
    futures = [client.submit(_resolved, settings, workers=[w], pure=False)
               for w in client.scheduler_info()["workers"]]
    return client.gather(futures)


def _set_config(threads):
    dask.config.set({"mpcf.threads": threads})


def test_worker_settings_reach_the_tasks(client):
    default = (None, None, None, None)
    # Defaults: backend auto, one thread per task, all devices.
    assert set(map(str, resolved_in_tasks(client, default))) == {
        str({"window": None, "backend": "auto", "threads": 1, "devices": None})}
    # The workers' Dask configuration (as DASK_MPCF__THREADS=3 would set it).
    client.run(_set_config, 3)
    try:
        for opts in resolved_in_tasks(client, default):
            assert opts["threads"] == 3
        # The plugin wins over the configuration, the call over both.
        client.register_plugin(mdask.WorkerOptions(backend="cpu", threads=2, devices=[1]))
        for opts in resolved_in_tasks(client, default):
            assert (opts["backend"], opts["threads"], opts["devices"]) == ("cpu", 2, (1,))
        for opts in resolved_in_tasks(client, (None, "auto", 5, None)):
            assert (opts["backend"], opts["threads"], opts["devices"]) == ("auto", 5, (1,))
        # What a task sees is what it computes with: CUDA asked for by the
        # plugin, on a machine without it, fails on the worker with libmpcf's
        # error; the call's backend="cpu" overrides it.
        if mpcf.cuda_device_count() == 0:
            client.register_plugin(mdask.WorkerOptions(backend="cuda"))
            X = mpcf.PcfCollection([[(0.0, 1.0), (1.0, 0.0)], [(0.0, 2.0), (1.0, 0.0)]])
            with pytest.raises(mpcf.CudaUnavailableError):
                compute(client, mdask.pdist(X, client=client))
            assert compute(client, mdask.pdist(X, client=client, backend="cpu")).tolist() == [
                [0.0, 1.0], [1.0, 0.0]]
    finally:
        client.unregister_worker_plugin(_dask_tasks.PLUGIN_NAME)
        client.run(_set_config, None)
    assert {o["threads"] for o in resolved_in_tasks(client, default)} == {1}


# ---- fault tolerance -------------------------------------------------------------


def _block_on_second_call(function_name, marker, started, release):
    """On a worker: wrap mpcf._dask_tasks.<function_name> so that the first
    worker in the whole cluster to make its second call (whoever creates
    `marker` first) writes its process id into `marker`, sets the Dask event
    `started` and waits for the event `release` before computing: it then
    holds the result of its first tile and is blocked inside its second,
    until the test releases it. Every other call, and this one once
    released, computes as usual."""
    from mpcf import _dask_tasks as tasks

    original = getattr(tasks, function_name)
    calls = []

    def blocking(*args):
        calls.append(1)
        if len(calls) == 2:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                distributed.Event(started).set()
                distributed.Event(release).wait(timeout=TIMEOUT)
        return original(*args)

    setattr(tasks, function_name, blocking)
    return os.getpid()


@pytest.mark.parametrize("operation", ["pdist", "knn"])
def test_a_worker_killed_mid_run_changes_nothing(rng, tmp_path, operation):
    """The test kills a worker process (SIGKILL) while one of its tasks is
    blocked on an event that only the test sets, so the kill falls in the
    middle of the run by construction; Dask runs that worker's tasks again
    (also the tile it had finished) and the result keeps the bits of one
    process."""
    X = random_pcfs(rng, 60)
    marker = tmp_path / "blocked"
    started, release = f"started-{operation}", f"release-{operation}"
    with _cluster() as cluster, distributed.Client(cluster, set_as_default=False) as c:
        # 15 tiles below the diagonal (chunks of 10) for 2 workers: at least
        # one worker makes a second call to the wrapped function.
        victim = "cdist_tile" if operation == "pdist" else "knn_below_diagonal"
        pids = set(c.run(_block_on_second_call, victim, str(marker), started, release).values())
        assert len(pids) == 2

        def run():
            if operation == "pdist":
                return compute(c, mdask.pdist(X, chunks=10, client=c))
            return mdask.knn(X, 4, chunks=10, client=c)

        with ThreadPoolExecutor(1) as pool:
            result = pool.submit(run)
            assert distributed.Event(started, client=c).wait(timeout=TIMEOUT)
            assert not result.done()  # a task is blocked: the run is not over
            victim_pid = int(marker.read_text())
            assert victim_pid in pids
            os.kill(victim_pid, signal.SIGKILL)
            distributed.Event(release, client=c).set()
            got = result.result(timeout=TIMEOUT)

        if operation == "pdist":
            assert got.tobytes() == mpcf.pdist(X, layout="square").tobytes()
        else:
            d, i = got
            want_d, want_i = mpcf.knn(X, 4)
            assert d.tobytes() == want_d.tobytes() and np.array_equal(i, want_i)
        assert victim_pid not in set(c.run(os.getpid).values())  # that process is gone


# ---- Zarr ------------------------------------------------------------------------


def test_to_zarr(client, rng, tmp_path):
    zarr = pytest.importorskip("zarr")
    X = random_pcfs(rng, 30)
    Y = random_pcfs(rng, 11)
    path = str(tmp_path / "D.zarr")
    mdask.to_zarr(mdask.pdist(X, chunks=8, client=client), path)
    stored = zarr.open_array(path, mode="r")
    assert stored.shape == (30, 30) and stored.chunks == (8, 8)
    assert stored[...].tobytes() == mpcf.pdist(X, layout="square").tobytes()
    # Unequal chunks are made regular; overwrite replaces the array.
    mdask.to_zarr(mdask.cdist(X, Y, chunks=((10, 5, 15), 4), client=client), path, overwrite=True)
    stored = zarr.open_array(path, mode="r")
    assert stored.shape == (30, 11) and stored.chunks == (15, 4)
    assert stored[...].tobytes() == mpcf.cdist(X, Y).tobytes()
    with pytest.raises(TypeError, match="must be a dask.array"):
        mdask.to_zarr(np.zeros((2, 2)), path)


# ---- arguments -------------------------------------------------------------------


def test_bad_arguments_fail_at_the_call(client):
    X = mpcf.PcfCollection([[(0.0, 1.0), (1.0, 0.0)], [(0.0, 2.0), (1.0, 0.0)], [(0.0, 3.0)]])
    X32 = mpcf.PcfCollection(X.to_list(), dtype=np.float32)
    with pytest.raises(ValueError, match="p = 0.5 is not a valid exponent"):
        mdask.pdist(X, 0.5, client=client)
    with pytest.raises(ValueError, match=r"add up to 4 but there are 3 PCFs"):
        mdask.pdist(X, chunks=(2, 2), client=client)
    with pytest.raises(ValueError, match="a tile needs at least 1 row"):
        mdask.pdist(X, chunks=0, client=client)
    with pytest.raises(ValueError, match="backend must be one of"):
        mdask.pdist(X, backend="gpu", client=client)
    with pytest.raises(ValueError, match=r"window \[2, 1\) is invalid"):
        mdask.pdist(X, window=(2, 1), client=client)
    with pytest.raises(mpcf.DtypeMismatchError):
        mdask.cdist(X, X32, client=client)
    with pytest.raises(ValueError, match="a pair"):
        mdask.cdist(X, X, chunks=(1, 1, 1), client=client)
    with pytest.raises(ValueError, match=r"k = 3 is more than the 2 other functions of X"):
        mdask.knn(X, 3, client=client)
    with pytest.raises(ValueError, match="k = 0"):
        mdask.knn(X, 0, client=client)
    with pytest.raises(ValueError, match="split_every"):
        mdask.knn(X, 1, split_every=1, client=client)
    with pytest.raises(TypeError, match="k must be an integer"):
        mdask.knn(X, 1.5, client=client)
    with pytest.raises(ValueError, match="devices is empty"):
        mdask.WorkerOptions(devices=[])
