"""PcfCollection.slice: views of a range of PCFs that share the breakpoints
(mpcf_pcfs_slice). Hand-worked values, lifetime, pickling, errors, and the
bits of tiles computed over slices against the single call."""

import gc
import pickle

import numpy as np
import pytest

import mpcf
from conftest import BACKENDS

F0 = [(0.0, 3.0), (1.0, 0.0)]                 # 3 on [0, 1)
F1 = [(0.0, 1.0), (2.0, 0.0)]                 # 1 on [0, 2)
F2 = [(0.0, 10.0), (2.0, 5.0), (3.0, 0.0)]    # 10 on [0, 2), 5 on [2, 3)
F3 = [(1.0, 4.0), (2.0, 0.0)]                 # 4 on [1, 2)
# By hand: d01 = 3, d02 = 22, d03 = 7, d12 = 23, d13 = 4, d23 = 21.
FOUR = [F0, F1, F2, F3]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slice_holds_its_range(dtype):
    X = mpcf.PcfCollection(FOUR, dtype=dtype)
    V = X.slice(1, 3)
    assert V.shape == (2,) and V.dtype == dtype and V.total_breakpoints == 5
    offsets, times, values = V.to_csr()
    assert offsets.tolist() == [0, 2, 5]
    assert times.tolist() == [0, 2, 0, 2, 3] and values.tolist() == [1, 0, 10, 5, 0]
    assert mpcf.pdist(V).tolist() == [23.0]
    assert mpcf.cdist(X.slice(0, 2), X.slice(2, 4)).tolist() == [[22.0, 7.0], [23.0, 4.0]]


def test_slice_outlives_its_parent_and_slices_of_slices_count_within():
    X = mpcf.PcfCollection(FOUR)
    V = X.slice(1, 4)          # F1, F2, F3
    W = V.slice(1, 3)          # F2, F3
    del X, V
    gc.collect()
    assert mpcf.pdist(W, layout="square").tolist() == [[0.0, 21.0], [21.0, 0.0]]
    assert W.slice(2, 2).shape == (0,)


def test_slice_of_a_tensor_is_flat():
    X = mpcf.PcfCollection([[F0, F1], [F2, F3]])
    V = X.slice(1, 4)
    assert V.shape == (3,)
    assert mpcf.pdist(V).tolist() == [23.0, 4.0, 21.0]


def test_pickled_slice_holds_its_pcfs_only():
    X = mpcf.PcfCollection(FOUR)
    V = X.slice(2, 4)
    data = pickle.dumps(V)
    assert len(data) < len(pickle.dumps(X))
    back = pickle.loads(data)
    assert back.shape == (2,)
    assert [a.tolist() for a in back.to_list()] == [[list(p) for p in F2], [list(p) for p in F3]]


def test_bad_ranges():
    X = mpcf.PcfCollection(FOUR)
    with pytest.raises(mpcf.InvalidArgumentError, match="begin = 3 is greater than end = 2"):
        X.slice(3, 2)
    with pytest.raises(mpcf.InvalidArgumentError, match="end = 5 is beyond the collection's 4 functions"):
        X.slice(0, 5)
    with pytest.raises(ValueError, match="begin = -1 is negative"):
        X.slice(-1, 2)
    with pytest.raises(TypeError, match="end must be an integer"):
        X.slice(0, 2.0)
    with pytest.raises(mpcf.InvalidArgumentError, match="end = "):
        X.slice(0, 2**70)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [1, 2.5, np.inf])
def test_tiles_over_slices_have_the_bits_of_the_single_call(rng, dtype, p, backend):
    n = 29
    funcs = []
    for _ in range(n):
        m = int(rng.integers(1, 9))
        t = np.cumsum(rng.uniform(0.05, 1.0, m)) - 0.5
        v = rng.uniform(0.0, 10.0, m)
        v[-1] = 0.0
        funcs.append(np.stack([t, v], axis=1).astype(dtype))
    X = mpcf.PcfCollection(funcs)
    whole = mpcf.pdist(X, p, layout="square", backend=backend)
    for side in (1, 4, 10, 29):
        tiled = np.full((n, n), np.nan, dtype=dtype)
        for i0 in range(0, n, side):
            i1 = min(i0 + side, n)
            for j0 in range(0, n, side):
                j1 = min(j0 + side, n)
                if i0 == j0:
                    tile = mpcf.pdist(X.slice(i0, i1), p, layout="square", backend=backend)
                else:
                    tile = mpcf.cdist(X.slice(i0, i1), X.slice(j0, j1), p, backend=backend, threads=1)
                tiled[i0:i1, j0:j1] = tile
        assert tiled.tobytes() == whole.tobytes()
