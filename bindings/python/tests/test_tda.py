"""Barcodes to PCFs, pointwise operations (mean, sum, combine, evaluate),
read-out and files.

Expected values are written out by hand or come from the plain-Python
references below, which follow the definitions literally (count the bars,
sum the values) and share no code with libmpcf or the mpcf package."""

import bisect
import inspect
import io
import math
import os
import pickle
import struct

import numpy as np
import pytest

import mpcf

INF = math.inf

# ----------------------------------------------------------------------
# References
# ----------------------------------------------------------------------


def ref_betti(bars, t):
    return sum(1 for b, d in bars if b <= t < d)


def ref_stable_rank(bars, t):
    return 0 if t < 0 else sum(1 for b, d in bars if d - b > t)


def ref_meanage(b, d):
    return 0.5 * b + 0.5 * d


def ref_apf(bars, t):
    """Biscio & Moller: the lengths of the bars whose meanage is <= t (an
    infinite bar's meanage is inf, so it never counts). math.fsum: exact."""
    return math.fsum(d - b for b, d in bars if d < INF and ref_meanage(b, d) <= t)


def ref_events(kind, bars):
    """Every time at which the summary may change."""
    if kind == "betti":
        return {x for b, d in bars for x in (b, d) if x < INF}
    if kind == "stable_rank":
        return {0.0} | {d - b for b, d in bars if d < INF}
    return {ref_meanage(b, d) for b, d in bars if d < INF}


REF = {"betti": ref_betti, "stable_rank": ref_stable_rank, "accumulated_persistence": ref_apf}
API = {
    "betti": mpcf.betti_curve,
    "stable_rank": mpcf.stable_rank,
    "accumulated_persistence": mpcf.accumulated_persistence,
}


def ref_breakpoints(kind, bars):
    """The canonical breakpoints: the event times where the value differs
    from the value just before (0 before the first); (0, 0) if none."""
    out, previous = [], 0.0
    for t in sorted(ref_events(kind, bars)):
        v = REF[kind](bars, t)
        if v != previous:
            out.append((t, v))
            previous = v
    return out or [(0.0, 0.0)]


def ref_value(pcf, t):
    """pcf(t) for rows (t_k, v_k): 0 before the first, then the last value
    at or before t."""
    times = [float(r[0]) for r in pcf]
    k = bisect.bisect_right(times, t) - 1
    return 0.0 if k < 0 else float(pcf[k][1])


def random_barcode(rng, k, dyadic=True):
    """k bars with births in [-4, 4), lengths in [0, 4] (some 0), some
    infinite. Dyadic numbers (multiples of 1/8) keep every sum exact."""
    bars = []
    for _ in range(k):
        if dyadic:
            b = int(rng.integers(-32, 32)) / 8
            length = int(rng.integers(0, 33)) / 8
        else:
            b = float(rng.uniform(-4, 4))
            length = float(rng.uniform(0, 4)) if rng.random() > 0.1 else 0.0
        d = INF if rng.random() < 0.1 else b + length
        bars.append((b, d))
    return bars


def random_pcf(rng, m, dyadic=True):
    times = np.cumsum(rng.integers(1, 9, size=m) / 8) - 2
    if dyadic:
        values = rng.integers(-40, 40, size=m) / 4
    else:
        values = rng.uniform(-10, 10, size=m)
    return np.stack([times, values], axis=1)


def canonical(rows):
    """No value repeats the previous (0 before the first)."""
    previous = 0.0
    for _, v in rows:
        if v == previous:
            return False
        previous = v
    return True


# ----------------------------------------------------------------------
# Barcodes: hand-worked values
# ----------------------------------------------------------------------

ISSUE_BARS = np.array([[0, 2], [1, 3], [1, INF]])


def test_the_hand_worked_case():
    assert mpcf.betti_curve(ISSUE_BARS).to_list().tolist() == [[0, 1], [1, 3], [2, 2], [3, 1]]
    assert mpcf.stable_rank(ISSUE_BARS).to_list().tolist() == [[0, 3], [2, 1]]
    # meanages 1 and 2, lengths 2 and 2; the infinite bar never counts
    assert mpcf.accumulated_persistence(ISSUE_BARS).to_list().tolist() == [[1, 2], [2, 4]]
    X = mpcf.betti_curve(ISSUE_BARS)
    assert X.shape == () and X.dtype == np.float64
    assert mpcf.evaluate(X, [-1, 0, 0.5, 1, 2.5, 3, 1e9]).tolist() == [0, 1, 1, 3, 2, 1, 1]


@pytest.mark.parametrize("kind", list(API))
def test_empty_barcodes_and_zero_length_bars_give_the_zero_function(kind):
    for bars in (np.empty((0, 2)), [(1, 1), (-2, -2)], np.array([[5.0, 5.0]])):
        assert API[kind](bars).to_list().tolist() == [[0, 0]]


def test_infinite_bars_give_constant_tails():
    bars = [(-3, INF), (0, INF), (1, 2)]
    assert mpcf.betti_curve(bars).to_list().tolist() == [[-3, 1], [0, 2], [1, 3], [2, 2]]
    assert mpcf.stable_rank(bars).to_list().tolist() == [[0, 3], [1, 2]]
    assert mpcf.accumulated_persistence(bars).to_list().tolist() == [[1.5, 1]]


def test_float32_results_round_the_breakpoints_once():
    bars = [(0.1, 0.7), (0.2, INF)]
    X = mpcf.betti_curve(bars, dtype="float32")
    assert X.dtype == np.float32
    want = np.array([[0.1, 1], [0.2, 2], [0.7, 1]], dtype=np.float32)
    assert np.array_equal(X.to_list(), want)
    # a bar too short for float32 vanishes: the curve of the rounded barcode
    assert mpcf.betti_curve([(1.0, 1.0 + 1e-12)], dtype=np.float32).to_list().tolist() == [[0, 0]]
    assert mpcf.stable_rank([(0, 0.1)], dtype="float32").to_list()[1, 0] == np.float32(0.1)


# ----------------------------------------------------------------------
# Barcodes: against the references
# ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(API))
def test_random_barcodes_match_the_reference_exactly(kind, rng):
    barcodes = [random_barcode(rng, int(rng.integers(0, 25))) for _ in range(60)]
    X = API[kind]([np.array(b, dtype=float).reshape(-1, 2) for b in barcodes])
    assert X.shape == (60,)
    for bars, got in zip(barcodes, X.to_list()):
        assert [tuple(r) for r in got.tolist()] == ref_breakpoints(kind, bars)


@pytest.mark.parametrize("kind", list(API))
def test_random_real_barcodes_match_the_reference_pointwise(kind, rng):
    barcodes = [random_barcode(rng, int(rng.integers(1, 30)), dyadic=False) for _ in range(30)]
    X = API[kind](barcodes)
    for bars, got in zip(barcodes, X.to_list()):
        events = sorted(ref_events(kind, bars))
        probes = events + [e + 1e-9 for e in events] + [e - 1e-9 for e in events] + [-10.0, 100.0]
        values = mpcf.evaluate(mpcf.PcfCollection(got), probes)
        want = [REF[kind](bars, t) for t in probes]
        assert values.tolist() == want  # APF values: exact sums rounded once, like math.fsum
        assert canonical(got.tolist())


# ----------------------------------------------------------------------
# Barcodes: input forms
# ----------------------------------------------------------------------


def test_arrays_of_barcodes_give_their_leading_shape():
    X = mpcf.stable_rank(np.tile(ISSUE_BARS, (2, 3, 1, 1)))
    assert X.shape == (2, 3)
    assert all(f.tolist() == [[0, 3], [2, 1]] for row in X.to_list() for f in row)
    nested = mpcf.betti_curve([[ISSUE_BARS, []], [[(0, 1)], np.empty((0, 2))]])
    assert nested.shape == (2, 2)
    assert nested.to_list()[1][0].tolist() == [[0, 1], [1, 0]]
    assert mpcf.betti_curve([]).shape == (0,)


def test_ripser_output():
    # what ripser(X) returns (its float32 arrays included)
    result = {
        "dgms": [np.array([[0, 0.5], [0, INF]], dtype=np.float32), np.array([[1, 3], [2, 2.5]], dtype=np.float32)],
        "cocycles": [],
        "num_edges": 3,
    }
    both = mpcf.betti_curve(result)
    assert both.shape == (2,)
    assert both.to_list()[0].tolist() == [[0, 2], [0.5, 1]]
    h1 = mpcf.betti_curve(result, dimension=1)
    assert h1.shape == () and h1.to_list().tolist() == [[1, 1], [2, 2], [2.5, 1], [3, 0]]
    many = mpcf.stable_rank([result, result, result], dimension=1)
    assert many.shape == (3,)
    assert many.to_list()[2].tolist() == [[0, 2], [0.5, 1], [2, 0]]
    with pytest.raises(ValueError, match="dimensions 0 .. 1"):
        mpcf.betti_curve(result, dimension=2)
    # the list of diagrams alone is a list of barcodes
    assert mpcf.betti_curve(result["dgms"]).shape == (2,)


def test_gudhi_output():
    persistence = [(1, (1.0, 3.0)), (0, (0.0, INF)), (1, (2.0, 2.5)), (0, (0.0, 0.5))]
    h1 = mpcf.betti_curve(persistence, dimension=1)
    assert h1.shape == () and h1.to_list().tolist() == [[1, 1], [2, 2], [2.5, 1], [3, 0]]
    assert mpcf.betti_curve(persistence, dimension=0).to_list().tolist() == [[0, 2], [0.5, 1]]
    assert mpcf.betti_curve(persistence, dimension=4).to_list().tolist() == [[0, 0]]
    every = mpcf.stable_rank(persistence)
    assert every.shape == (2,)
    assert every.to_list()[1].tolist() == [[0, 2], [0.5, 1], [2, 0]]
    assert mpcf.stable_rank([persistence, persistence[:2]], dimension=1).shape == (2,)


def test_giotto_tda_output():
    # (n_samples, n_bars, 3) rows (birth, death, dimension), padded with
    # (0, 0, dim) bars, which have length 0 and change nothing
    diagrams = np.array(
        [
            [[0, 0.5, 0], [0, 1, 0], [1, 3, 1], [0, 0, 1]],
            [[0, 2, 0], [0, 0, 0], [1, 1.5, 1], [2, 2.5, 1]],
        ]
    )
    per_dim = mpcf.betti_curve(diagrams)
    assert per_dim.shape == (2, 2)
    assert per_dim.to_list()[1][1].tolist() == [[1, 1], [1.5, 0], [2, 1], [2.5, 0]]
    h0 = mpcf.stable_rank(diagrams, dimension=0)
    assert h0.shape == (2,)
    assert h0.to_list()[0].tolist() == [[0, 2], [0.5, 1], [1, 0]]


@pytest.mark.parametrize(
    "bars, where",
    [
        ([(0, 1), (math.nan, 2)], "barcode 0, bar 1 (birth nan, death 2): the birth is NaN"),
        ([(0, math.nan)], "barcode 0, bar 0 (birth 0, death nan): the death is NaN"),
        ([(INF, INF)], "the birth is infinite"),
        ([(-INF, 1)], "the birth is infinite"),
        ([(0, 1), (3, 2)], "barcode 0, bar 1 (birth 3, death 2): the death is smaller than the birth"),
        ([(0, -INF)], "the death is smaller than the birth"),
    ],
)
def test_bad_bars_are_named(bars, where):
    for fn in API.values():
        with pytest.raises(mpcf.InvalidArgumentError, match=re_escape(where)):
            fn(bars)


def re_escape(text):
    import re

    return re.escape(text)


def test_bad_bars_in_a_tensor_are_located():
    good = np.array([[0.0, 1.0]])
    bad = np.array([[0.0, 1.0], [2.0, 1.0]])
    with pytest.raises(mpcf.InvalidArgumentError, match=r"barcode 4, bar 1 .* index \(1, 1\)") as info:
        mpcf.betti_curve([[good, good, good], [good, bad, good]])
    assert info.value.status_name == "MPCF_ERROR_INVALID_ARGUMENT"
    # libmpcf's indices: the flat barcode (1 * 3 + 1) and its bar.
    assert (info.value.barcode_index, info.value.bar_index) == (4, 1)
    assert (info.value.function_index, info.value.breakpoint_index) == (None, None)
    with pytest.raises(mpcf.InvalidArgumentError) as info:
        mpcf.landscape([good, [(0.0, 1.0), (1.0, INF)]], 2)
    assert (info.value.barcode_index, info.value.bar_index) == (1, 1)
    with pytest.raises(mpcf.InvalidArgumentError, match="overflows float32"):
        mpcf.betti_curve([(0, 1e300)], dtype="float32")


def test_bad_barcode_input():
    with pytest.raises(ValueError, match="dimension= selects"):
        mpcf.betti_curve(ISSUE_BARS, dimension=1)
    with pytest.raises(ValueError, match="no dimension"):
        mpcf.betti_curve([(0, 1)], dimension=0)
    with pytest.raises(TypeError, match="dimension must be"):
        mpcf.betti_curve({"dgms": []}, dimension=1.5)
    with pytest.raises(ValueError, match="negative"):
        mpcf.betti_curve({"dgms": []}, dimension=-1)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        mpcf.betti_curve(np.zeros(3))
    with pytest.raises(TypeError, match="non-numeric"):
        mpcf.betti_curve(np.array([["a", "b"]]))
    with pytest.raises(TypeError, match="expected a"):
        mpcf.betti_curve("0,1")
    with pytest.raises(ValueError, match="irregular nesting"):
        mpcf.betti_curve([[ISSUE_BARS], ISSUE_BARS])
    with pytest.raises(ValueError, match="GUDHI"):
        mpcf.betti_curve([(0, (0.0, 1.0)), (1, 2)], dimension=0)
    with pytest.raises(TypeError, match="float32 or float64"):
        mpcf.betti_curve(ISSUE_BARS, dtype=np.int64)


# ----------------------------------------------------------------------
# Pointwise operations
# ----------------------------------------------------------------------


def ref_evaluations(pcfs, probes):
    return np.array([[ref_value(f, t) for t in probes] for f in pcfs])


def probes_of(pcfs):
    times = sorted({float(t) for f in pcfs for t in f[:, 0]})
    return times + [t - 1e-6 for t in times] + [t + 1e-6 for t in times] + [-1e9, 1e9]


def test_mean_and_sum_of_a_collection(rng):
    pcfs = [random_pcf(rng, int(rng.integers(1, 12)), dyadic=False) for _ in range(37)]
    probes = probes_of(pcfs)
    want = ref_evaluations(pcfs, probes)
    for fn, expected in ((mpcf.mean, want.mean(axis=0)), (mpcf.sum, want.sum(axis=0))):
        got = fn(pcfs)
        assert got.shape == ()
        rows = got.to_list()
        assert canonical(rows.tolist())
        assert set(rows[:, 0].tolist()) <= {float(t) for f in pcfs for t in f[:, 0]}
        np.testing.assert_allclose(mpcf.evaluate(got, probes), expected, rtol=1e-12, atol=1e-12)


def test_dyadic_means_are_exact(rng):
    pcfs = [random_pcf(rng, int(rng.integers(1, 12))) for _ in range(16)]
    probes = probes_of(pcfs)
    want = ref_evaluations(pcfs, probes).mean(axis=0)
    assert mpcf.evaluate(mpcf.mean(pcfs), probes).tolist() == want.tolist()
    assert mpcf.evaluate(mpcf.mean(pcfs, axis=0), probes).tolist() == want.tolist()
    f32 = mpcf.PcfCollection(pcfs, dtype="float32")
    assert mpcf.mean(f32).dtype == np.float32
    assert mpcf.evaluate(mpcf.mean(f32), probes).tolist() == want.astype(np.float32).tolist()


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_mean_along_an_axis(axis, rng):
    shape = (2, 3, 4)
    pcfs = [random_pcf(rng, int(rng.integers(1, 6)), dyadic=False) for _ in range(24)]
    X = mpcf.PcfCollection(np.array(pcfs, dtype=object).reshape(shape).tolist())
    probes = probes_of(pcfs)
    values = ref_evaluations(pcfs, probes).reshape(shape + (len(probes),))
    for fn, ref in ((mpcf.mean, np.mean), (mpcf.sum, np.sum)):
        got = fn(X, axis=axis)
        assert got.shape == tuple(d for k, d in enumerate(shape) if k != axis % 3)
        want = ref(values, axis=axis % 3)
        np.testing.assert_allclose(mpcf.evaluate(got, probes), want, rtol=1e-12, atol=1e-12)


def test_reduction_edge_cases():
    F = [(0.0, 1.0), (1.0, 0.0)]
    assert mpcf.mean(F).to_list().tolist() == [[0, 1], [1, 0]]  # the mean of one PCF is itself
    assert mpcf.sum([]).to_list().tolist() == [[0, 0]]
    with pytest.raises(mpcf.InvalidArgumentError, match="mean of no functions"):
        mpcf.mean([])
    assert mpcf.mean(mpcf.PcfCollection([[], []]), axis=0).shape == (0,)
    with pytest.raises(ValueError, match="out of bounds"):
        mpcf.mean([F, F], axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        mpcf.mean(F, axis=0)
    with pytest.raises(TypeError, match="axis must be"):
        mpcf.mean([F, F], axis=(0,))
    # values that cancel leave no breakpoint behind
    assert mpcf.sum([[(0, 0.1), (1, 0.7)], [(0, -0.1), (1, -0.7)]]).to_list().tolist() == [[0, 0]]


def test_combine(rng):
    X = [random_pcf(rng, int(rng.integers(1, 8)), dyadic=False) for _ in range(9)]
    Y = [random_pcf(rng, int(rng.integers(1, 8)), dyadic=False) for _ in range(9)]
    got = mpcf.combine(X, Y, 2.5, -0.75)
    assert got.shape == (9,)
    for f, g, h in zip(X, Y, got.to_list()):
        probes = probes_of([f, g])
        want = [2.5 * ref_value(f, t) - 0.75 * ref_value(g, t) for t in probes]
        np.testing.assert_allclose([ref_value(h, t) for t in probes], want, rtol=1e-12, atol=1e-12)
        assert canonical(h.tolist())
    centred = mpcf.combine(X, mpcf.mean(X), 1, -1)  # one PCF is broadcast
    assert centred.shape == (9,)
    np.testing.assert_allclose(
        mpcf.evaluate(mpcf.mean(centred), probes_of(X)), 0, atol=1e-12
    )
    with pytest.raises(mpcf.InvalidArgumentError, match="9 functions"):
        mpcf.combine(X, Y[:2])
    with pytest.raises(mpcf.DtypeMismatchError):
        mpcf.combine(mpcf.PcfCollection(X, dtype="float32"), mpcf.PcfCollection(Y))
    with pytest.raises(mpcf.InvalidArgumentError, match="finite"):
        mpcf.combine(X, Y, math.inf)
    with pytest.raises(TypeError, match="real number"):
        mpcf.combine(X, Y, "2")


def test_evaluate(rng):
    pcfs = [random_pcf(rng, int(rng.integers(1, 10)), dyadic=False) for _ in range(12)]
    probes = probes_of(pcfs) + [-INF, INF]
    rng.shuffle(probes)
    got = mpcf.evaluate(pcfs, probes)
    assert got.shape == (12, len(probes)) and got.dtype == np.float64
    assert got.tolist() == ref_evaluations(pcfs, probes).tolist()
    X = mpcf.PcfCollection(np.array(pcfs, dtype=object).reshape(3, 4).tolist(), dtype="float32")
    t = np.array(probes[:6]).reshape(2, 3)
    got32 = mpcf.evaluate(X, t)
    assert got32.shape == (3, 4, 2, 3) and got32.dtype == np.float32
    rounded = [p.astype(np.float32).astype(np.float64) for p in pcfs]  # what X holds
    assert got32.reshape(12, 6).tolist() == ref_evaluations(rounded, t.ravel()).astype(np.float32).tolist()
    assert mpcf.evaluate([(0, 3), (1, 0)], 0.5).shape == ()
    assert mpcf.evaluate([], [1, 2]).shape == (0, 2)
    with pytest.raises(mpcf.InvalidArgumentError, match=r"t\[1\] is NaN"):
        mpcf.evaluate(pcfs, [0, math.nan])
    with pytest.raises(TypeError, match="real numbers"):
        mpcf.evaluate(pcfs, ["a"])


def test_evaluate_float32_compares_times_in_double():
    X = mpcf.PcfCollection([[(0.1, 1.0)]], dtype="float32")  # t_0 = float32(0.1) > 0.1
    assert mpcf.evaluate(X, [0.1, float(np.float32(0.1))]).tolist() == [[0, 1]]


# ----------------------------------------------------------------------
# Read-out
# ----------------------------------------------------------------------


def test_to_csr_and_to_list():
    F, G = [(0.0, 3.0), (1.0, 0.0)], [(0.5, 1.0)]
    off, t, v = mpcf.PcfCollection([F, G]).to_csr()
    assert off.dtype == np.uint64 and off.tolist() == [0, 2, 3]
    assert t.tolist() == [0, 1, 0.5] and v.tolist() == [3, 0, 1]
    X = mpcf.PcfCollection([[F, G, F], [G, G, F]], dtype="float32")
    nested = X.to_list()
    assert len(nested) == 2 and len(nested[1]) == 3
    assert nested[1][0].dtype == np.float32 and nested[1][0].tolist() == [[0.5, 1]]
    again = mpcf.PcfCollection(nested)
    assert again.shape == (2, 3) and again.dtype == np.float32
    assert all(np.array_equal(a, b) for ra, rb in zip(again.to_list(), nested) for a, b in zip(ra, rb))
    assert mpcf.PcfCollection(F).to_list().tolist() == [[0, 3], [1, 0]]
    assert mpcf.PcfCollection([[], []]).to_list() == [[], []]
    assert mpcf.PcfCollection([]).to_list() == []


# ----------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------


def fnv1a(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def reference_file(shape, offsets, times, values, dtype):
    """The PCF file format, written from its definition."""
    code, fmt = (1, "f") if dtype == np.float32 else (2, "d")
    body = b"\x89MPCF\r\n\x1a" + struct.pack("<IIQQQ", 1, code, len(shape), len(offsets) - 1, len(times))
    body += struct.pack(f"<{len(shape)}Q", *shape) + struct.pack(f"<{len(offsets)}Q", *offsets)
    body += struct.pack(f"<{len(times)}{fmt}", *times) + struct.pack(f"<{len(values)}{fmt}", *values)
    return body + struct.pack("<Q", fnv1a(body))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_save_writes_the_documented_format(tmp_path, dtype):
    F, G = [(0.0, 3.0), (1.0, 0.0)], [(0.5, 1.0)]
    X = mpcf.PcfCollection([[F], [G]], dtype=dtype)
    path = tmp_path / "x.mpcf"
    mpcf.save(X, path)
    want = reference_file((2, 1), [0, 2, 3], [0, 1, 0.5], [3, 0, 1], dtype)
    assert path.read_bytes() == want
    assert os.listdir(tmp_path) == ["x.mpcf"]  # no temporary file left
    Y = mpcf.load(str(path))
    assert Y.shape == (2, 1) and Y.dtype == dtype
    assert [f.tolist() for row in Y.to_list() for f in row] == [[[0, 3], [1, 0]], [[0.5, 1]]]


def test_save_and_load_through_file_objects_and_pickle(rng):
    X = mpcf.betti_curve([random_barcode(rng, 5) for _ in range(6)])
    buffer = io.BytesIO()
    mpcf.save(X, buffer)
    Y = mpcf.load(io.BytesIO(buffer.getvalue()))
    assert Y.shape == X.shape and all(np.array_equal(a, b) for a, b in zip(X.to_list(), Y.to_list()))
    for Z in (X, mpcf.PcfCollection([(0, 1)]), mpcf.PcfCollection([]), mpcf.PcfCollection([[], []])):
        again = pickle.loads(pickle.dumps(Z))
        assert again.shape == Z.shape and again.dtype == Z.dtype
        assert again.total_breakpoints == Z.total_breakpoints
    # a shape () collection is stored with shape (1,)
    single = io.BytesIO()
    mpcf.save([(0, 1)], single)
    assert mpcf.load(io.BytesIO(single.getvalue())).shape == (1,)


def test_save_and_load_paths_go_through_libmpcf(tmp_path):
    # mpcf_pcfs_save's rules (mpcf.h): links followed, the mode kept,
    # special files refused; bytes paths and names that are not UTF-8 work.
    X = mpcf.PcfCollection([[(0, 1), (1, 0)], [(0, 2)]])
    target = tmp_path / "target.mpcf"
    mpcf.save(X, target)
    os.chmod(target, 0o600)
    link = tmp_path / "link.mpcf"
    link.symlink_to("target.mpcf")
    mpcf.save(mpcf.PcfCollection([(0, 5)]), link)
    assert link.is_symlink() and os.readlink(link) == "target.mpcf"
    assert (target.stat().st_mode & 0o777) == 0o600
    assert mpcf.load(target).to_list()[0].tolist() == [[0, 5]]
    assert sorted(os.listdir(tmp_path)) == ["link.mpcf", "target.mpcf"]
    odd = os.fsencode(str(tmp_path)) + b"/caf\xe9.mpcf"  # Latin-1, not UTF-8
    mpcf.save(X, odd)
    assert mpcf.load(odd).shape == (2,)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(mpcf.InvalidArgumentError, match="is a FIFO"):
        mpcf.save(X, fifo)
    assert fifo.is_fifo()


def test_load_errors(tmp_path):
    good = reference_file((1,), [0, 2], [0, 1], [1, 0], np.float64)
    cases = {
        "csv.mpcf": (b"id,t,v\na,0,1\n", "not an mpcf PCF file"),
        "short.mpcf": (good[:30], "truncated"),
        "cut.mpcf": (good[:-1], "truncated"),
        "long.mpcf": (good + b"\0", "corrupt"),
        "flip.mpcf": (good[:70] + bytes([good[70] ^ 1]) + good[71:], "checksum"),
        "version.mpcf": (good[:8] + b"\x07" + good[9:], "format version 7"),
    }
    for name, (data, needle) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(mpcf.InvalidArgumentError, match=needle) as info:
            mpcf.load(tmp_path / name)
        assert name in str(info.value)
    bad = reference_file((1,), [0, 2], [1, 0], [1, 0], np.float64)  # times decrease
    (tmp_path / "bad.mpcf").write_bytes(bad)
    with pytest.raises(mpcf.InvalidPcfError, match="PCF 0, breakpoint 1"):
        mpcf.load(tmp_path / "bad.mpcf")
    with pytest.raises(FileNotFoundError):
        mpcf.load(tmp_path / "missing.mpcf")
    with pytest.raises(IsADirectoryError):
        mpcf.load(tmp_path)
    with pytest.raises(IsADirectoryError):
        mpcf.save([(0, 1)], tmp_path)
    with pytest.raises(FileNotFoundError):
        mpcf.save([(0, 1)], tmp_path / "no" / "dir.mpcf")


# ----------------------------------------------------------------------
# Documentation of the new public functions
# ----------------------------------------------------------------------

NEW_PUBLIC = [
    mpcf.betti_curve, mpcf.stable_rank, mpcf.accumulated_persistence, mpcf.mean, mpcf.sum,
    mpcf.combine, mpcf.evaluate, mpcf.save, mpcf.load, mpcf.PcfCollection.to_list,
    mpcf.PcfCollection.to_csr,
]


@pytest.mark.parametrize("fn", NEW_PUBLIC, ids=lambda f: f.__qualname__)
def test_new_functions_have_running_examples_and_type_hints(fn):
    import doctest

    doc = inspect.getdoc(fn)
    assert doc and "Examples" in doc and ">>>" in doc
    assert inspect.signature(fn).return_annotation is not inspect.Signature.empty
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(recurse=False).find(fn, globs={}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


# ----------------------------------------------------------------------
# Real TDA libraries (optional: skipped when not installed)
# ----------------------------------------------------------------------


def circle(rng, n, radius=1.0, noise=0.05):
    angle = rng.uniform(0, 2 * np.pi, n)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1) + rng.normal(0, noise, (n, 2))


def test_gudhi_persistence_directly(rng):
    gudhi = pytest.importorskip("gudhi")
    st = gudhi.RipsComplex(points=circle(rng, 40), max_edge_length=3.0).create_simplex_tree(max_dimension=2)
    persistence = st.persistence()
    for dim in (0, 1):
        bars = [tuple(b) for b in st.persistence_intervals_in_dimension(dim)]
        for kind, fn in API.items():
            got = fn(persistence, dimension=dim).to_list()
            assert [tuple(r) for r in got.tolist()] == ref_breakpoints(kind, bars)
    # a circle has one long H1 bar
    assert mpcf.stable_rank(persistence, dimension=1).to_list()[-1, 1] == 0
    assert mpcf.evaluate(mpcf.stable_rank(persistence, dimension=1), 0.5) == 1


def test_ripser_output_directly(rng):
    ripser = pytest.importorskip("ripser")
    result = ripser.ripser(circle(rng, 40), maxdim=1)
    for dim in (0, 1):
        bars = [tuple(map(float, b)) for b in result["dgms"][dim]]
        assert [tuple(r) for r in mpcf.betti_curve(result, dimension=dim).to_list().tolist()] == ref_breakpoints(
            "betti", bars
        )


def test_the_readme_example_runs(tmp_path, monkeypatch):
    """The worked example of the Python README's section "Persistence
    barcodes, means and files", run as written (it uses GUDHI), and its
    results checked."""
    pytest.importorskip("gudhi")
    import re

    readme = os.path.join(os.path.dirname(__file__), "..", "README.md")
    if not os.path.exists(readme):
        pytest.skip("README.md is not next to these tests (installed package)")
    with open(readme, encoding="utf-8") as f:
        section = f.read().split("## Persistence barcodes, means and files", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    labels = scope["labels"]
    assert len(set(labels[:5])) == 1 and len(set(labels[5:])) == 1 and labels[0] != labels[5]
    at = mpcf.evaluate(scope["means"], [0.5, 1.0])
    assert at[0].tolist() == [1.0, 1.0] and at[1, 1] == 0.0  # circles keep one bar beyond 1
    assert mpcf.load(tmp_path / "stable_ranks.mpcf").shape == (2, 5)
