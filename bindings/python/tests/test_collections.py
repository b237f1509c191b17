"""Building PCF collections: input forms, dtypes, shapes, memory layouts."""

import numpy as np
import pytest

import mpcf
import reference as ref

F = [(0.0, 3.0), (1.0, 0.0)]
G = [(0.0, 1.0), (2.0, 0.0)]
H = [(0.0, 10.0), (2.0, 5.0), (3.0, 0.0)]
# Hand-computed: d(F,G) = 3, d(F,H) = 22, d(G,H) = 23.
FGH_L1 = [3.0, 22.0, 23.0]


def test_list_of_pairs_and_arrays():
    X = mpcf.PcfCollection([F, np.array(G), tuple(H)])
    assert X.shape == (3,) and X.ndim == 1 and X.size == 3 and len(X) == 3
    assert X.dtype == np.float64 and X.total_breakpoints == 7
    assert mpcf.pdist(X).tolist() == FGH_L1
    assert repr(X) == "PcfCollection(shape=(3,), dtype=float64, total_breakpoints=7)"


def test_nested_lists_give_the_shape():
    X = mpcf.PcfCollection([[F, G, H], [H, G, F]])
    assert X.shape == (2, 3) and X.size == 6
    D = mpcf.cdist(X, [F])
    assert D.shape == (2, 3, 1)
    assert D[..., 0].tolist() == [[0.0, 3.0, 22.0], [22.0, 3.0, 0.0]]
    deep = mpcf.PcfCollection([[[F], [G]], [[H], [F]]])
    assert deep.shape == (2, 2, 1)


def test_a_single_pcf_has_shape_empty():
    X = mpcf.PcfCollection(F)
    assert X.shape == () and X.size == 1 and X.ndim == 0
    with pytest.raises(TypeError):
        len(X)
    assert mpcf.cdist(F, [G, H]).tolist() == [3.0, 22.0]
    assert mpcf.cdist([G, H], F).tolist() == [3.0, 22.0]
    assert mpcf.pdist(F).shape == (0,)


def test_empty_collections():
    X = mpcf.PcfCollection([])
    assert X.shape == (0,) and X.size == 0 and X.total_breakpoints == 0
    assert mpcf.pdist(X).shape == (0,)
    assert mpcf.pdist(X, layout="square").shape == (0, 0)
    assert mpcf.l2_kernel(X).shape == (0, 0)
    assert mpcf.cdist(X, [F, G]).shape == (0, 2)
    assert mpcf.lp_norm(X).shape == (0,)
    assert mpcf.PcfCollection([[], []]).shape == (2, 0)


def test_object_arrays_nest_like_lists():
    arr = np.empty(3, dtype=object)
    arr[0], arr[1], arr[2] = np.array(F), np.array(G), np.array(H)
    assert mpcf.pdist(arr).tolist() == FGH_L1


def test_equal_length_block_array():
    # shape (2, 2, m=2, 2): four PCFs with two breakpoints each
    block = np.array([[F, G], [G, F]])
    X = mpcf.PcfCollection(block)
    assert X.shape == (2, 2) and X.total_breakpoints == 8
    assert mpcf.cdist(X, [F])[..., 0].tolist() == [[0.0, 3.0], [3.0, 0.0]]
    # A list of such blocks nests them.
    Y = mpcf.PcfCollection([block[0], block[1]])
    assert Y.shape == (2, 2)


def test_from_csr():
    X = mpcf.PcfCollection.from_csr(
        np.array([0, 2, 4, 7], dtype=np.uint64),
        np.array([0, 1, 0, 2, 0, 2, 3], dtype=np.float64),
        np.array([3, 0, 1, 0, 10, 5, 0], dtype=np.float64),
    )
    assert X.shape == (3,) and X.total_breakpoints == 7
    assert mpcf.pdist(X).tolist() == FGH_L1
    # signed offsets and an explicit shape
    Y = mpcf.PcfCollection.from_csr(
        [0, 2, 4, 7, 9], np.array([0, 1, 0, 2, 0, 2, 3, 0, 1.0]), np.array([3, 0, 1, 0, 10, 5, 0, 3, 0.0]),
        shape=(2, 2),
    )
    assert Y.shape == (2, 2)
    assert mpcf.cdist(Y, [F])[..., 0].tolist() == [[0.0, 3.0], [22.0, 0.0]]
    E = mpcf.PcfCollection.from_csr([0], np.empty(0), np.empty(0))
    assert E.shape == (0,)


def test_csr_float32_and_dtype_conversion():
    t = np.array([0, 1, 0, 2], dtype=np.float32)
    v = np.array([3, 0, 1, 0], dtype=np.float32)
    X = mpcf.PcfCollection.from_csr([0, 2, 4], t, v)
    assert X.dtype == np.float32
    assert mpcf.pdist(X).dtype == np.float32
    Y = mpcf.PcfCollection.from_csr([0, 2, 4], t.astype(np.int64), v.astype(np.int64), dtype=np.float64)
    assert Y.dtype == np.float64 and mpcf.pdist(Y).tolist() == [3.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_follows_the_arrays(dtype):
    X = mpcf.PcfCollection([np.array(F, dtype=dtype), np.array(G, dtype=dtype)])
    assert X.dtype == dtype
    D = mpcf.pdist(X)
    assert D.dtype == dtype and D.tolist() == [3.0]
    assert mpcf.l2_kernel(X).dtype == dtype
    assert mpcf.lp_norm(X).dtype == dtype
    # Plain Python numbers adopt the arrays' dtype, within one input or as Y.
    assert mpcf.PcfCollection([np.array(F, dtype=dtype), G]).dtype == dtype
    assert mpcf.cdist(X, [H]).dtype == dtype
    assert mpcf.lp_distance(np.array(F, dtype=dtype), G) == 3.0


def test_plain_numbers_default_to_float64_and_dtype_converts():
    assert mpcf.PcfCollection([F, G]).dtype == np.float64
    X = mpcf.PcfCollection([F, G], dtype="float32")
    assert X.dtype == np.float32
    # An explicit dtype converts arrays of any real dtype.
    Y = mpcf.PcfCollection([np.array(F, dtype=np.float64), np.array(G, dtype=np.int32)], dtype=np.float32)
    assert Y.dtype == np.float32 and mpcf.pdist(Y).tolist() == [3.0]
    Z = mpcf.PcfCollection(np.array([F, G], dtype=np.int64), dtype=np.float64)
    assert mpcf.pdist(Z).tolist() == [3.0]
    # A collection is accepted as is.
    assert mpcf.PcfCollection(X).dtype == np.float32


def _reversed_view(a):
    """A view of `a` with negative strides (same values)."""
    flipped = np.ascontiguousarray(a[::-1, ::-1])
    view = flipped[::-1, ::-1]
    assert view.strides[0] < 0 and view.strides[1] < 0
    return view


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous_and_negative_stride_inputs(dtype, rng):
    fs = ref.random_pcfs(rng, 8, dtype, tails=True, negative=True)
    expected = mpcf.pdist(fs)
    # negative strides
    assert mpcf.pdist([_reversed_view(f) for f in fs]).tobytes() == expected.tobytes()
    # Fortran order
    assert mpcf.pdist([np.asfortranarray(f) for f in fs]).tobytes() == expected.tobytes()
    # every other row of a wider array: columns 0 and 2 of an (m, 4) array
    wide = [np.column_stack([f[:, 0], np.full(len(f), 99, dtype), f[:, 1], np.zeros(len(f), dtype)]) for f in fs]
    assert mpcf.pdist([w[:, ::2] for w in wide]).tobytes() == expected.tobytes()
    # CSR with strided and reversed arrays
    times = np.concatenate([f[:, 0] for f in fs])
    values = np.concatenate([f[:, 1] for f in fs])
    offsets = np.concatenate([[0], np.cumsum([len(f) for f in fs])]).astype(np.int64)
    t2 = np.empty(2 * len(times), dtype)
    t2[::2] = times
    v_rev = np.ascontiguousarray(values[::-1])[::-1]
    o_rev = np.ascontiguousarray(offsets[::-1])[::-1]
    X = mpcf.PcfCollection.from_csr(o_rev, t2[::2], v_rev)
    assert mpcf.pdist(X).tobytes() == expected.tobytes()


def test_equal_length_block_array_non_contiguous(rng):
    fs = ref.random_pcfs(rng, 6, np.float64)
    m = 3
    block = np.array([np.column_stack([np.arange(m) * 0.5 + k, f[0, 1] * np.ones(m)]) for k, f in enumerate(fs)])
    expected = mpcf.pdist(block)
    assert mpcf.pdist(np.asfortranarray(block)).tobytes() == expected.tobytes()
    big = np.zeros((12, m, 2))
    big[::2] = block
    assert mpcf.pdist(big[::2]).tobytes() == expected.tobytes()
    assert mpcf.pdist(big[::2][::-1]).tobytes() == mpcf.pdist(block[::-1]).tobytes()


def test_collections_are_immutable_copies():
    f = np.array(F)
    X = mpcf.PcfCollection([f, np.array(G)])
    f[0, 1] = 100.0  # does not change X
    assert mpcf.pdist(X).tolist() == [3.0]


def test_collections_can_be_reused_and_shared():
    X = mpcf.PcfCollection([F, G, H])
    for _ in range(3):
        assert mpcf.pdist(X).tolist() == FGH_L1
    assert mpcf.cdist(X, X).shape == (3, 3)
    assert mpcf.cdist(X, X).tolist() == mpcf.pdist(X, layout="square").tolist()


def test_pickle_round_trips_and_sends_arrays_out_of_band():
    import pickle

    from mpcf import _io

    cases = [
        mpcf.PcfCollection([[(0, 3), (1, 0)], [(0, 1)]]),
        mpcf.PcfCollection([(0, 3), (1, 0)]),  # shape ()
        mpcf.PcfCollection([[[(0, 1)], [(0, 2), (1, 0)]], [[(0, 5)], [(2, 1)]]], dtype=np.float32),
        mpcf.PlfCollection([[(0, 0), (1, 2), (2, 0)], [(0, 1), (3, 1)]]),
        mpcf.PcfCollection.from_csr(np.array([0], dtype=np.uint64), np.array([]), np.array([])),
    ]
    for X in cases:
        for protocol in (2, 5):
            Y = pickle.loads(pickle.dumps(X, protocol=protocol))
            assert type(Y) is type(X) and Y.shape == X.shape and Y.dtype == X.dtype
            for a, b in zip(X.to_csr(), Y.to_csr()):
                assert a.dtype == b.dtype and np.array_equal(a, b)
    # Protocol 5 (Dask's): the breakpoints travel out of band, not in the pickle.
    X = cases[0]
    buffers = []
    data = pickle.dumps(X, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 3 and sum(memoryview(b).nbytes for b in buffers) == 8 * 3 + 8 * 3 + 8 * 3
    Y = pickle.loads(data, buffers=buffers)
    assert Y.to_list()[0].tolist() == [[0, 3], [1, 0]]

    # Pickles of the earlier form (the PCF file's bytes) still load.
    class Old:
        def __reduce__(self):
            return (_io.from_bytes, (_io.to_bytes(X), X.shape))

    Z = pickle.loads(pickle.dumps(Old()))
    assert type(Z) is mpcf.PcfCollection and [a.tolist() for a in Z.to_list()] == [[[0, 3], [1, 0]], [[0, 1]]]
