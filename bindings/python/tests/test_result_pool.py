"""The pool of large results (mpcf/_result_pool.py): memory of a freed
result is handed to the next one, never while any array or view still uses
it; the limit is kept; results written into reused memory are right
(against SciPy's cityblock distances of step functions on a unit grid)."""

import gc

import numpy as np
import pytest
from scipy.spatial.distance import cdist as scipy_cdist
from scipy.spatial.distance import pdist as scipy_pdist

import mpcf
from mpcf import _result_pool

BIG = 80 << 20  # bytes: above the pool's 32 MiB threshold, and so is BIG / 2


@pytest.fixture
def pool():
    old = mpcf.result_pool_limit()
    mpcf.release_result_memory()
    mpcf.set_result_pool_limit(1 << 30)
    yield _result_pool
    mpcf.release_result_memory()
    mpcf.set_result_pool_limit(old)


def address(a):
    return a.__array_interface__["data"][0]


def test_freed_result_memory_is_reused(pool):
    a = pool.empty((BIG // 4,), np.float32)
    at = address(a)
    assert a.flags.writeable and a.flags.c_contiguous
    a[:] = 1.5
    assert pool.result_pool_held() == 0
    del a
    gc.collect()
    assert pool.result_pool_held() == BIG
    b = pool.empty((BIG // 8,), np.float64)  # same bytes, another dtype
    assert address(b) == at
    assert b.shape == (BIG // 8,) and b.dtype == np.float64
    assert pool.result_pool_held() == 0


def test_memory_in_use_is_never_handed_out(pool):
    a = pool.empty((BIG // 4,), np.float32)
    b = pool.empty((BIG // 4,), np.float32)
    assert address(a) != address(b)
    view = a[1000:2000]
    view[:] = 7.0
    del a
    gc.collect()
    assert pool.result_pool_held() == 0  # the view still uses it
    c = pool.empty((BIG // 4,), np.float32)
    assert address(c) != address(view) - 4000
    c[:] = -1.0
    assert np.all(view == 7.0)
    del view
    gc.collect()
    assert pool.result_pool_held() == BIG
    del b, c


def test_sizes_and_limit(pool):
    small = pool.empty((1000,), np.float64)  # below the threshold: plain np.empty
    assert small.flags.owndata
    a = pool.empty((BIG // 4,), np.float32)
    del a
    gc.collect()
    # More than twice smaller: not served from the BIG block.
    b = pool.empty((BIG // 8 - 1,), np.float32)  # BIG / 2 - 4 bytes
    assert pool.result_pool_held() == BIG
    del b
    gc.collect()
    assert pool.result_pool_held() == BIG + BIG // 2  # its block: whole pages
    # A lower limit returns the oldest blocks to the system at once.
    mpcf.set_result_pool_limit(BIG)
    assert pool.result_pool_held() <= BIG
    mpcf.release_result_memory()
    assert pool.result_pool_held() == 0
    # Off: every result its own np.empty.
    mpcf.set_result_pool_limit(0)
    c = pool.empty((BIG // 4,), np.float32)
    assert c.flags.owndata
    del c
    gc.collect()
    assert pool.result_pool_held() == 0


def test_limit_arguments(pool, monkeypatch):
    with pytest.raises(ValueError, match="negative"):
        mpcf.set_result_pool_limit(-1)
    with pytest.raises(TypeError, match="int"):
        mpcf.set_result_pool_limit(1.5)
    monkeypatch.setenv("MPCF_RESULT_POOL_BYTES", "12345")
    assert _result_pool._default_limit() == 12345
    monkeypatch.setenv("MPCF_RESULT_POOL_BYTES", "lots")
    with pytest.raises(ValueError, match="MPCF_RESULT_POOL_BYTES = 'lots'"):
        _result_pool._default_limit()
    monkeypatch.delenv("MPCF_RESULT_POOL_BYTES")
    assert 0 < _result_pool._default_limit() <= 4 << 30


def grid_pcfs(rng, n):
    """n PCFs with breakpoints at t = 0, 1, 2, 3 (values there, 0 from t = 3):
    their L1 distance is the cityblock distance of the first three values."""
    values = rng.integers(-4, 5, size=(n, 3)).astype(np.float32)
    pcfs = [np.array([[0, v[0]], [1, v[1]], [2, v[2]], [3, 0]], dtype=np.float32) for v in values]
    return mpcf.PcfCollection(pcfs, dtype=np.float32), values


def test_results_in_reused_memory(pool):
    rng = np.random.default_rng(3)
    n = 4700  # the condensed float32 result is 42 MiB
    X, values = grid_pcfs(rng, n)
    want = scipy_pdist(values, "cityblock").astype(np.float32)
    D = mpcf.pdist(X, backend="cpu")
    at = address(D)
    np.testing.assert_array_equal(D, want)
    D[:] = np.nan  # what the next result's memory holds before libmpcf writes it
    del D
    gc.collect()
    D = mpcf.pdist(X, backend="cpu")
    assert address(D) == at
    np.testing.assert_array_equal(D, want)
    del D
    # The square layout (its diagonal included) and cdist into reused memory.
    S = mpcf.pdist(X, backend="cpu", layout="square")
    S[:] = np.nan
    del S
    gc.collect()
    S = mpcf.pdist(X, backend="cpu", layout="square")
    np.testing.assert_array_equal(S, scipy_cdist(values, values, "cityblock").astype(np.float32))
    S[:] = np.nan
    del S
    gc.collect()
    Y, yvalues = grid_pcfs(rng, 2500)
    C = mpcf.cdist(X, Y, backend="cpu")
    np.testing.assert_array_equal(C, scipy_cdist(values, yvalues, "cityblock").astype(np.float32))
