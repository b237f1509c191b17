"""Every documented error: the exception class, the built-in it derives
from, and a message that names what is wrong."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import mpcf
from mpcf import _lib, swigmpcf

F = [(0.0, 3.0), (1.0, 0.0)]
G = [(0.0, 1.0), (2.0, 0.0)]


# ---------------------------------------------------------------- the hierarchy


@pytest.mark.parametrize(
    "status, cls, builtin",
    [
        (swigmpcf.MPCF_ERROR_INVALID_ARGUMENT, mpcf.InvalidArgumentError, ValueError),
        (swigmpcf.MPCF_ERROR_INVALID_PCF, mpcf.InvalidPcfError, ValueError),
        (swigmpcf.MPCF_ERROR_BUFFER_TOO_SMALL, mpcf.BufferTooSmallError, ValueError),
        (swigmpcf.MPCF_ERROR_DTYPE_MISMATCH, mpcf.DtypeMismatchError, TypeError),
        (swigmpcf.MPCF_ERROR_DTYPE_MISMATCH, mpcf.DtypeMismatchError, ValueError),
        (swigmpcf.MPCF_ERROR_OUT_OF_MEMORY, mpcf.OutOfMemoryError, MemoryError),
        (swigmpcf.MPCF_ERROR_CUDA_UNAVAILABLE, mpcf.CudaUnavailableError, RuntimeError),
        (swigmpcf.MPCF_ERROR_CUDA, mpcf.CudaError, RuntimeError),
        (swigmpcf.MPCF_ERROR_CANCELLED, mpcf.CancelledError, RuntimeError),
        (swigmpcf.MPCF_ERROR_INTERNAL, mpcf.InternalError, RuntimeError),
    ],
)
def test_each_status_maps_to_its_exception(status, cls, builtin):
    err = _lib.error_for(status)
    assert type(err) is cls
    assert isinstance(err, builtin) and isinstance(err, mpcf.Error)
    assert err.status == status
    assert err.status_name == swigmpcf.mpcf_status_name(status)


def test_a_library_error_carries_status_and_message():
    with pytest.raises(mpcf.InvalidArgumentError) as info:
        mpcf.pdist([F, G], p=0.5)
    assert info.value.status == swigmpcf.MPCF_ERROR_INVALID_ARGUMENT
    assert info.value.status_name == "MPCF_ERROR_INVALID_ARGUMENT"
    assert "p = 0.5" in str(info.value) and "p must be >= 1" in str(info.value)


# ---------------------------------------------------------------- invalid PCFs


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.empty((0, 2)), "PCF 1 has no breakpoints"),
        ([(0, 1), (2, 3), (1, 0)], "PCF 1, breakpoint 2: time 1 is smaller than the previous time 2"),
        ([(0, 1), (0, 2)], "PCF 1, breakpoint 1: time 0 repeats the previous time 0"),
        ([(0, 1), (1, math.nan)], "PCF 1, breakpoint 1: value is nan"),
        ([(0, 1), (math.inf, 0)], "PCF 1, breakpoint 1: time is inf"),
        ([(math.nan, 1)], "PCF 1, breakpoint 0: time is nan"),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_invalid_pcfs_are_rejected_with_their_index(bad, message, dtype):
    with pytest.raises(mpcf.InvalidPcfError, match=message) as info:
        mpcf.PcfCollection([F, np.asarray(bad, dtype=dtype)])
    assert isinstance(info.value, ValueError)
    with pytest.raises(mpcf.InvalidPcfError, match=message):
        mpcf.pdist([F, np.asarray(bad, dtype=dtype)])


def test_invalid_pcf_in_a_tensor_names_the_tensor_index():
    with pytest.raises(mpcf.InvalidPcfError, match=r"PCF 4, breakpoint 1.*index \(1, 1\)") as info:
        mpcf.PcfCollection([[F, G, F], [G, [(0, 1), (0, 2)], F]])
    # The flat index (row-major: (1, 1) is 1 * 3 + 1), from libmpcf.
    assert (info.value.function_index, info.value.breakpoint_index) == (4, 1)


# The second function's data; libmpcf's indices of the offending entry,
# worked out by hand (None: the function as a whole).
@pytest.mark.parametrize(
    "bad, breakpoint",
    [
        (np.empty((0, 2)), None),                  # no breakpoints
        ([(0, 1), (2, 3), (1, 0)], 2),             # t_2 = 1 < t_1 = 2
        ([(0, 1), (0, 2)], 1),                     # t_1 repeats t_0
        ([(0, 1), (1, 0), (2, 5), (3, math.nan)], 3),
        ([(math.inf, 1)], 0),
    ],
)
@pytest.mark.parametrize("kind", [mpcf.PcfCollection, mpcf.PlfCollection])
def test_invalid_data_errors_carry_libmpcfs_indices(bad, breakpoint, kind):
    with pytest.raises(mpcf.InvalidPcfError) as info:
        kind([F, G, np.asarray(bad, dtype=np.float64)])
    err = info.value
    assert (err.function_index, err.breakpoint_index) == (2, breakpoint)
    assert (err.barcode_index, err.bar_index) == (None, None)
    # The same numbers as the message, which libmpcf writes from them.
    assert f"PCF 2" in str(err)
    if breakpoint is not None:
        assert f"breakpoint {breakpoint}:" in str(err)


def test_errors_not_about_data_carry_no_indices():
    with pytest.raises(mpcf.InvalidArgumentError) as info:
        mpcf.pdist([F, G], p=0.5)
    err = info.value
    assert (err.function_index, err.breakpoint_index, err.barcode_index, err.bar_index) == \
        (None, None, None, None)
    # After a failure with indices, the next one without carries none.
    with pytest.raises(mpcf.InvalidPcfError):
        mpcf.PcfCollection([F, [(1, 1), (0, 0)]])
    with pytest.raises(mpcf.InvalidArgumentError) as info:
        mpcf.pdist([F, G], window=(2, 1))
    assert info.value.function_index is None


def test_the_error_detail_through_swig():
    status, detail = swigmpcf.mpcf_last_error_detail()
    assert status == swigmpcf.MPCF_OK
    with pytest.raises(mpcf.InvalidPcfError):
        mpcf.PcfCollection([F, G, [(0, 1), (2, 2), (2, 3)]])
    status, detail = swigmpcf.mpcf_last_error_detail()
    assert status == swigmpcf.MPCF_OK
    assert detail == {"status": swigmpcf.MPCF_ERROR_INVALID_PCF, "function_index": 2,
                      "breakpoint_index": 2, "barcode_index": -1, "bar_index": -1}


def test_knn_range_is_libmpcfs():
    # 1 <= k <= the candidates, checked by libmpcf before anything is
    # allocated (a huge k is a clear error, not a MemoryError).
    X = [F, G, [(0.0, 2.0), (1.0, 0.0)]]
    with pytest.raises(mpcf.InvalidArgumentError, match=r"k = 3 is more than the 2 other functions of X \(X\.size - 1\)"):
        mpcf.knn(X, 3)
    with pytest.raises(mpcf.InvalidArgumentError, match=r"k = 10000000000000 is more than the 3 functions of Y"):
        mpcf.knn(X, 10**13, X)
    with pytest.raises(mpcf.InvalidArgumentError, match=r"k = 0; k must be at least 1"):
        mpcf.knn(X, 0)
    with pytest.raises(ValueError, match="k = -1 is negative"):
        mpcf.knn(X, -1)
    with pytest.raises(ValueError, match="does not fit a 64-bit count"):
        mpcf.knn(X, 2**64)


def test_invalid_pcf_in_lp_distance():
    with pytest.raises(mpcf.InvalidPcfError, match="PCF 0, breakpoint 1"):
        mpcf.lp_distance(F, [(1, 1), (0, 0)])


# ---------------------------------------------------------------- input forms and dtypes


@pytest.mark.parametrize(
    "data, exc, message",
    [
        ([np.array(F, dtype=np.int64)], TypeError, r"index \(0,\) has dtype int64.*float32 or float64"),
        ([np.array(F, dtype=np.float16)], TypeError, "has dtype float16"),
        (np.array([F], dtype=np.int32), TypeError, "the array has dtype int32"),
        ([np.array(F, dtype=np.float32), np.array(G)], TypeError, "mixes float32.*and float64"),
        ([np.array(F, dtype=np.complex128)], TypeError, "complex128"),
        ([[("a", "b")]], TypeError, r"index \(0, 0, 0\) is a str"),
        ([[(Fraction(0), Fraction(1, 3))]], TypeError, r"index \(0,\) holds non-numeric data"),
        ([np.array([["0", "1"]])], TypeError, "has dtype <U1"),
        ([np.zeros((3, 3))], ValueError, r"index \(0,\) has shape \(3, 3\)"),
        (np.zeros(4), ValueError, r"shape \(\.\.\., m, 2\)"),
        (np.zeros((4, 3)), ValueError, r"shape \(\.\.\., m, 2\)"),
        ([[F, G], [F]], ValueError, "irregular nesting"),
        ([F, [(0, 1), (1,)]], ValueError, r"index \(1,\)"),
        ([F, 5], TypeError, r"index \(1,\) is an int;"),
        (5, TypeError, r"the element at index \(\) is an int;"),
        ([F, {"t": 1}], TypeError, "is a dict"),
        ([np.zeros(5)], ValueError, r"index \(0,\) is an array of shape \(5,\)"),
    ],
)
def test_bad_input_forms(data, exc, message):
    with pytest.raises(exc, match=message):
        mpcf.PcfCollection(data)
    with pytest.raises(exc, match=message):
        mpcf.pdist(data)


@pytest.mark.parametrize(
    "data",
    [
        np.array([F], dtype=np.int64),
        [np.array(F, dtype=np.int64)],
        [np.array(F, dtype=np.float32), np.array(G)],
    ],
)
def test_dtype_errors_suggest_what_pdist_accepts(data):
    # pdist has no dtype= argument: the message names what works from there.
    with pytest.raises(TypeError) as info:
        mpcf.pdist(data)
    message = str(info.value)
    assert "mpcf.PcfCollection(data, dtype=np.float64)" in message
    assert "pass dtype=" not in message
    converted = mpcf.PcfCollection(data, dtype=np.float64)
    assert mpcf.pdist(converted).dtype == np.float64


def test_a_collection_inside_a_list_is_rejected():
    X = mpcf.PcfCollection([F])
    with pytest.raises(TypeError, match="is a PcfCollection"):
        mpcf.PcfCollection([X, X])


@pytest.mark.parametrize("dtype", [np.int32, "int64", np.complex64, "bogus", object])
def test_bad_dtype_argument(dtype):
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        mpcf.PcfCollection([F], dtype=dtype)


def test_complex_data_is_rejected_even_with_a_dtype():
    with pytest.raises(TypeError, match="complex"):
        mpcf.PcfCollection([np.array(F, dtype=np.complex128)], dtype=np.float64)
    with pytest.raises(TypeError, match="complex"):
        mpcf.PcfCollection(np.array([F], dtype=np.complex128), dtype=np.float64)


def test_an_existing_collection_is_not_converted():
    X = mpcf.PcfCollection([F], dtype=np.float32)
    with pytest.raises(TypeError, match="not converted silently"):
        mpcf.PcfCollection(X, dtype=np.float64)


@pytest.mark.parametrize(
    "x_dtype, y_dtype", [(np.float32, np.float64), (np.float64, np.float32)]
)
def test_dtype_mismatch_between_operands(x_dtype, y_dtype):
    X = mpcf.PcfCollection([F, G], dtype=x_dtype)
    Y = mpcf.PcfCollection([F], dtype=y_dtype)
    for call in (lambda: mpcf.cdist(X, Y), lambda: mpcf.l2_kernel(X, Y)):
        with pytest.raises(mpcf.DtypeMismatchError, match="both collections must share one dtype") as info:
            call()
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    with pytest.raises(mpcf.DtypeMismatchError):
        mpcf.lp_distance(np.array(F, dtype=x_dtype), np.array(G, dtype=y_dtype))
    with pytest.raises(mpcf.DtypeMismatchError):
        mpcf.l2_inner_product(np.array(F, dtype=x_dtype), np.array(G, dtype=y_dtype))


def test_single_pcf_arguments_must_be_single():
    with pytest.raises(ValueError, match=r"f must be a single PCF.*shape \(2,\)"):
        mpcf.lp_distance([F, G], F)
    with pytest.raises(ValueError, match="g must be a single PCF"):
        mpcf.l2_inner_product(F, [F, G])


# ---------------------------------------------------------------- messages in Python's terms


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda: mpcf.pdist([F, G], p=0.5), r"^p = 0\.5 is not a valid exponent; p must be >= 1 \(or float\('inf'\)\)$"),
        (lambda: mpcf.PcfCollection([F, [(0, 1), (0, 2)]]), r"^PCF 1, breakpoint 1: time 0 repeats"),
        (lambda: mpcf.pdist([F, G], window=(2, 1)), r"^window \[2, 1\) is invalid"),
        (lambda: mpcf.pdist([F, G], threads=-1), r"^threads = -1 is outside"),
        (lambda: mpcf.PcfCollection.from_csr([1, 2, 4], T, V), r"^offsets\[0\] is 1; it must be 0$"),
    ],
)
def test_library_messages_do_not_start_with_c_function_names(call, expected):
    with pytest.raises(mpcf.Error, match=expected) as info:
        call()
    assert "mpcf_" not in str(info.value)


def test_python_message_translation():
    assert _lib.python_message("mpcf_pdist_start: p = 0 is bad (or INFINITY)") == "p = 0 is bad (or float('inf'))"
    assert _lib.python_message("mpcf_options_set_devices: device_ids[2] = -3 is negative") == (
        "devices[2] = -3 is negative"
    )
    assert _lib.python_message("no prefix: mpcf_x stays") == "no prefix: mpcf_x stays"


# ---------------------------------------------------------------- CSR input


T = np.array([0.0, 1.0, 0.0, 2.0])
V = np.array([3.0, 0.0, 1.0, 0.0])


@pytest.mark.parametrize(
    "offsets, times, values, kwargs, exc, message",
    [
        (np.array([0.0, 2.0, 4.0]), T, V, {}, TypeError, "offsets must be an array of integers"),
        (np.array([[0, 2, 4]]), T, V, {}, ValueError, "offsets must be a 1-D array"),
        (np.array([], dtype=np.int64), T, V, {}, ValueError, "n \\+ 1 >= 1 entries"),
        ([0, -2, 4], T, V, {}, ValueError, r"offsets\[1\] = -2 is negative"),
        ([0, 2, 5], T, V, {}, ValueError, r"times has 4 entries but offsets\[2\] = 5"),
        ([0, 2, 4], T, V[:3], {}, ValueError, r"values has 3 entries"),
        ([0, 2, 4], T.reshape(2, 2), V, {}, ValueError, "times must be a 1-D array"),
        ([0, 2, 4], T.astype(np.int64), V, {}, TypeError, "times has dtype int64"),
        ([0, 2, 4], T.astype(np.float32), V, {}, TypeError, "times is float32 but values is float64"),
        ([0, 2, 4], T.astype(np.complex128), V, {"dtype": np.float64}, TypeError, "cannot be read as numbers"),
        ([1, 2, 4], T, V, {}, mpcf.InvalidArgumentError, r"offsets\[0\] is 1; it must be 0"),
        ([0, 3, 2, 4], np.arange(4.0), V, {}, mpcf.InvalidArgumentError, r"offsets\[2\] = 2 is smaller than offsets\[1\] = 3"),
        ([0, 2, 2, 4], T, V, {}, mpcf.InvalidPcfError, "PCF 1 has no breakpoints"),
        ([0, 2, 4], T, V, {"shape": (3,)}, mpcf.InvalidArgumentError, r"shape \(3\) holds 3 elements but the collection has 2"),
        ([0, 2, 4], T, V, {"shape": (-1, -2)}, ValueError, r"shape\[0\] = -1 is negative"),
        ([0, 2, 4], T, V, {"shape": (2.0,)}, TypeError, r"shape\[0\] must be an integer"),
        ([0, 2, 4], T, V, {"shape": "ab"}, TypeError, r"shape\[0\] must be an integer"),
        ([0, 2, 4], T, V, {"shape": (1,) * 33 + (2,)}, ValueError, "at most 32"),
    ],
)
def test_bad_csr_input(offsets, times, values, kwargs, exc, message):
    with pytest.raises(exc, match=message):
        mpcf.PcfCollection.from_csr(offsets, times, values, **kwargs)


# ---------------------------------------------------------------- operation arguments


@pytest.mark.parametrize("p", [0.5, 0, -1, math.nan, -math.inf])
def test_bad_exponent(p):
    for call in (
        lambda: mpcf.pdist([F, G], p),
        lambda: mpcf.cdist([F], [G], p),
        lambda: mpcf.lp_distance(F, G, p),
        lambda: mpcf.lp_norm([F], p),
    ):
        with pytest.raises(mpcf.InvalidArgumentError, match=r"p = .* is not a valid exponent"):
            call()


@pytest.mark.parametrize("p", [True, "2", None, 1j])
def test_exponent_of_the_wrong_type(p):
    with pytest.raises(TypeError, match="p must be a real number"):
        mpcf.pdist([F, G], p)
    with pytest.raises(TypeError, match="p must be a real number"):
        mpcf.lp_distance(F, G, p)


@pytest.mark.parametrize(
    "window, exc, message",
    [
        ((2.0, 1.0), mpcf.InvalidArgumentError, r"window \[2, 1\) is invalid"),
        ((1.0, 1.0), mpcf.InvalidArgumentError, r"window \[1, 1\) is invalid"),
        ((math.nan, 1.0), mpcf.InvalidArgumentError, "neither NaN"),
        ((math.inf, math.inf), mpcf.InvalidArgumentError, "is invalid"),
        ((0.0,), ValueError, "window must be a pair"),
        ((0.0, 1.0, 2.0), ValueError, "window must be a pair"),
        ("ab", ValueError, "window must be a pair"),
        (3.0, ValueError, "window must be a pair"),
        (("0", 1), TypeError, r"window\[0\] must be a real number"),
    ],
)
def test_bad_window(window, exc, message):
    for call in (
        lambda: mpcf.pdist([F, G], window=window),
        lambda: mpcf.cdist([F], [G], window=window),
        lambda: mpcf.l2_kernel([F], window=window),
        lambda: mpcf.lp_distance(F, G, window=window),
        lambda: mpcf.l2_inner_product(F, G, window=window),
        lambda: mpcf.lp_norm([F], window=window),
    ):
        with pytest.raises(exc, match=message):
            call()


def test_bad_layout():
    with pytest.raises(ValueError, match="layout must be one of 'condensed', 'square', 'packed_lower'"):
        mpcf.pdist([F, G], layout="dense")
    with pytest.raises(ValueError, match="layout must be one of 'square', 'packed_lower', not 'condensed'"):
        mpcf.l2_kernel([F, G], layout="condensed")
    with pytest.raises(ValueError, match="cross kernel"):
        mpcf.l2_kernel([F], [G], layout="packed_lower")


def test_bad_backend():
    with pytest.raises(ValueError, match="backend must be one of 'auto', 'cpu', 'cuda', not 'gpu'"):
        mpcf.pdist([F, G], backend="gpu")


@pytest.mark.parametrize(
    "threads, exc, message",
    [
        (-1, mpcf.InvalidArgumentError, r"threads = -1 is outside 0\.\.4096"),
        (5000, mpcf.InvalidArgumentError, r"threads = 5000 is outside 0\.\.4096"),
        (2**40, ValueError, "is outside"),
        (1.5, TypeError, "threads must be an integer"),
        (True, TypeError, "threads must be an integer"),
    ],
)
def test_bad_threads(threads, exc, message):
    with pytest.raises(exc, match=message):
        mpcf.pdist([F, G], threads=threads)


@pytest.mark.parametrize(
    "devices, exc, message",
    [
        ([0, 0], mpcf.InvalidArgumentError, "device id 0 is listed twice"),
        ([-1], mpcf.InvalidArgumentError, r"^devices\[0\] = -1 is negative"),
        ([], ValueError, "devices is empty"),
        (0, TypeError, "devices must be a sequence"),
        (["0"], TypeError, r"devices\[0\] must be an integer"),
        ([2**40], ValueError, "not a valid device id"),
    ],
)
def test_bad_devices(devices, exc, message):
    with pytest.raises(exc, match=message):
        mpcf.pdist([F, G], devices=devices)


def test_bad_progress_argument():
    with pytest.raises(TypeError, match="progress must be True or False"):
        mpcf.pdist([F, G], progress="yes")


@pytest.mark.skipif(mpcf.cuda_device_count() > 0, reason="a CUDA device is present")
def test_cuda_backend_without_cuda():
    for call in (
        lambda: mpcf.pdist([F, G], backend="cuda"),
        lambda: mpcf.cdist([F], [G], backend="cuda"),
        lambda: mpcf.l2_kernel([F, G], backend="cuda"),
    ):
        with pytest.raises(mpcf.CudaUnavailableError, match="^CUDA not available: backend='cuda'") as info:
            call()
        assert isinstance(info.value, RuntimeError)
        if not mpcf.has_cuda():
            assert "the CUDA build is the package mpcf-cuda" in str(info.value)


def test_cuda_fallback_warns_once_only_for_a_cuda_build_without_devices(monkeypatch):
    monkeypatch.setattr(_lib, "_cuda_fallback_checked", False)
    falls_back = mpcf.has_cuda() and mpcf.cuda_device_count() == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mpcf.pdist([F, G], backend="cpu")  # never warns, and does not use up the check
        first = mpcf.pdist([F, G])
        mpcf.pdist([F, G])
    fallbacks = [w for w in caught if issubclass(w.category, mpcf.CudaFallbackWarning)]
    assert first.tolist() == [3.0]
    if falls_back:
        assert len(fallbacks) == 1, [str(w.message) for w in caught]
        assert "computes on the CPU" in str(fallbacks[0].message)
        assert fallbacks[0].filename == __file__  # points at the caller's line
    else:
        assert fallbacks == []
    assert issubclass(mpcf.CudaFallbackWarning, RuntimeWarning)


@pytest.mark.gpu
def test_absent_cuda_device():
    absent = mpcf.cuda_device_count() + 7
    with pytest.raises(mpcf.CudaUnavailableError):
        mpcf.pdist([F, G], backend="cuda", devices=[absent])


def test_result_too_large_for_memory():
    # 2^21 one-breakpoint PCFs: the condensed result would need 17.6 TB.
    X = mpcf.PcfCollection(np.zeros((2**21, 1, 2)))
    with pytest.raises(MemoryError):
        mpcf.pdist(X)
    del X


# ---------------------------------------------------------------- the low-level module


def test_low_level_calls_with_null_handles_report_errors():
    status, count = swigmpcf.mpcf_pcfs_count(None)
    assert status == swigmpcf.MPCF_ERROR_INVALID_ARGUMENT
    assert "argument 'pcfs' is NULL" in swigmpcf.mpcf_last_error_message()
    assert swigmpcf.mpcf_task_wait(None, 0.0) == swigmpcf.MPCF_ERROR_INVALID_ARGUMENT
    status, _ = swigmpcf.mpcf_pdist_start(None, 1.0, 0, None, 0, None)
    assert status == swigmpcf.MPCF_ERROR_INVALID_ARGUMENT
    with pytest.raises(TypeError):
        # an options handle where a collection is expected
        swigmpcf.mpcf_pcfs_count(swigmpcf.mpcf_options_create()[1])
    with pytest.raises(TypeError, match="integer address"):
        swigmpcf.mpcf_pcfs_create(swigmpcf.MPCF_FLOAT64, 0, "not an address", None, None)
