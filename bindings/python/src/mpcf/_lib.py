"""The bridge to libmpcf: loads the SWIG module, checks the library version,
turns status codes into exceptions and builds option handles."""

from __future__ import annotations

import numbers
import os
import re
import warnings
from typing import Any, Iterable, Optional, Sequence, Tuple

import numpy as np

from . import _errors

try:
    from . import swigmpcf as _swig
except ImportError as exc:  # pragma: no cover - depends on how mpcf was installed
    raise ImportError(
        "mpcf: the compiled module mpcf.swigmpcf (or the libmpcf.so it needs) could not be "
        f"loaded from {os.path.dirname(os.path.abspath(__file__))}: {exc}. Install the package "
        "with `pip install mpcf` (a wheel) or `pip install bindings/python` (from the "
        "repository), or build it with CMake and put "
        "<build>/bindings/python on PYTHONPATH."
    ) from exc

swig = _swig

# The version of mpcf.h this package was compiled against.
HEADER_VERSION = (_swig.MPCF_VERSION_MAJOR, _swig.MPCF_VERSION_MINOR, _swig.MPCF_VERSION_PATCH)


def check_library_version(loaded: int, header: Tuple[int, int, int], loaded_text: str) -> None:
    """Raises ImportError unless the loaded library (encoded MAJOR*10000 +
    MINOR*100 + PATCH) can serve a package built against `header`: the same
    major version and at least the header's minor.patch."""
    major, minor, patch = header
    wanted = major * 10000 + minor * 100 + patch
    if loaded // 10000 != major or loaded < wanted:
        raise ImportError(
            f"mpcf: the loaded libmpcf is version {loaded_text} but this package was built for "
            f"libmpcf {major}.{minor}.{patch}; it needs major version {major} and at least "
            f"{major}.{minor}.{patch}. Reinstall the package, or point the library search path "
            "at a matching libmpcf."
        )


check_library_version(_swig.mpcf_version(), HEADER_VERSION, _swig.mpcf_version_string())

_ERRORS = {
    _swig.MPCF_ERROR_INVALID_ARGUMENT: _errors.InvalidArgumentError,
    _swig.MPCF_ERROR_INVALID_PCF: _errors.InvalidPcfError,
    _swig.MPCF_ERROR_BUFFER_TOO_SMALL: _errors.BufferTooSmallError,
    _swig.MPCF_ERROR_DTYPE_MISMATCH: _errors.DtypeMismatchError,
    _swig.MPCF_ERROR_OUT_OF_MEMORY: _errors.OutOfMemoryError,
    _swig.MPCF_ERROR_CUDA_UNAVAILABLE: _errors.CudaUnavailableError,
    _swig.MPCF_ERROR_CUDA: _errors.CudaError,
    _swig.MPCF_ERROR_CANCELLED: _errors.CancelledError,
    _swig.MPCF_ERROR_INTERNAL: _errors.InternalError,
}


# libmpcf's messages begin with the C entry point ("mpcf_pdist_start: ...")
# and name C spellings; a Python user sees the Python ones.
_C_FUNCTION_PREFIX = re.compile(r"^mpcf_[a-z0-9_]+: ")
_PYTHON_TERMS = (
    ("(or INFINITY)", "(or float('inf'))"),
    ("device_ids[", "devices["),
    ("(count(X) - 1)", "(X.size - 1)"),
    ("backend CUDA was requested", "backend='cuda' was requested"),
    ("kernels need a finite scale > 0", "kernels need a finite scale (sigma) > 0"),
    (
        "this libmpcf was built without CUDA support",
        "this mpcf was built without CUDA support (the CUDA build is the package mpcf-cuda)",
    ),
)


def python_message(message: str) -> str:
    """libmpcf's message in Python's terms: without the C function name in
    front, with Python's spelling of infinity, devices= and backend=."""
    message = _C_FUNCTION_PREFIX.sub("", message)
    for c_term, python_term in _PYTHON_TERMS:
        message = message.replace(c_term, python_term)
    return message


def _index(value: int) -> Optional[int]:
    return None if value < 0 else int(value)


def error_for(status: int) -> _errors.Error:
    """The exception for a failed call, with libmpcf's message and the
    indices of the invalid input (mpcf_last_error_detail); reads this
    thread's last error, so call it right after the failing C call."""
    cls = _ERRORS.get(status, _errors.InternalError)
    message = _swig.mpcf_last_error_message() or f"libmpcf call failed with status {status}"
    got, detail = _swig.mpcf_last_error_detail()
    if got != _swig.MPCF_OK or detail["status"] != status:
        detail = {}  # not this failure's (cannot happen: read right after it)
    return cls(
        python_message(message), status, _swig.mpcf_status_name(status),
        *(_index(detail.get(k, -1)) for k in ("function_index", "breakpoint_index",
                                                "barcode_index", "bar_index")))


def check(result: Any) -> Any:
    """Takes what a wrapped call returned (a status, or [status, outputs...]),
    raises on failure and returns the outputs (one value, a tuple, or None)."""
    if isinstance(result, (list, tuple)):
        status, outputs = result[0], tuple(result[1:])
    else:
        status, outputs = result, ()
    if status != _swig.MPCF_OK:
        raise error_for(status)
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else outputs


def address(array: np.ndarray) -> int:
    """Address of a C-contiguous array's first element."""
    return int(array.ctypes.data)


_BACKENDS = {
    "auto": _swig.MPCF_BACKEND_AUTO,
    "cpu": _swig.MPCF_BACKEND_CPU,
    "cuda": _swig.MPCF_BACKEND_CUDA,
}


def _real(value: Any, what: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a real number, not {type(value).__name__}")
    return float(value)


def exponent(p: Any) -> float:
    """p as a float (validated further by the library: p >= 1 or inf)."""
    return _real(p, "p")


def checked_exponent(p: Any) -> float:
    """p as a float, checked by libmpcf's rule (mpcf_exponent_check), for
    callers that check before they call a computation."""
    p = exponent(p)
    check(_swig.mpcf_exponent_check(p))
    return p


def count(k: Any, what: str) -> int:
    """An integer argument that counts something (k), as the uint64 libmpcf
    takes; libmpcf judges its range."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{what} must be an integer, not {type(k).__name__}")
    k = int(k)
    if k < 0:
        raise ValueError(f"{what} = {k} is negative")
    if k >= 2**64:
        raise ValueError(f"{what} = {k} does not fit a 64-bit count")
    return k


def device_id(d: Any, what: str) -> int:
    """A CUDA device id argument, as the C int libmpcf takes; libmpcf judges
    whether the device exists (and refuses negative ids)."""
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral):
        raise TypeError(f"{what} must be an integer device id, not {type(d).__name__}")
    if not -(2**31) <= int(d) < 2**31:
        raise ValueError(f"{what} = {int(d)} is not a valid device id")
    return int(d)


_cuda_fallback_checked = False


def warn_if_cuda_falls_back(backend: str) -> None:
    """Once per process: a CUDA build of libmpcf asked for backend="auto"
    where no CUDA driver or device is usable says that it computes on the CPU
    (mpcf.CudaFallbackWarning). A CPU build and backend="cpu" never warn."""
    global _cuda_fallback_checked
    if backend != "auto" or _cuda_fallback_checked:
        return
    _cuda_fallback_checked = True
    if _swig.mpcf_has_cuda() and _swig.mpcf_cuda_device_count() == 0:
        warnings.warn(
            "mpcf: this mpcf has the CUDA backend, but no CUDA driver or device was found "
            "(mpcf.cuda_device_count() == 0), so it computes on the CPU. Pass backend='cpu', or "
            "filter mpcf.CudaFallbackWarning, to silence this.",
            _errors.CudaFallbackWarning,
            stacklevel=4,
        )


def make_options(
    window: Optional[Sequence[float]] = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
) -> Any:
    """An mpcf_options handle for the keyword arguments the public functions
    share. Raises TypeError / ValueError for bad values."""
    options = check(_swig.mpcf_options_create())

    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise ValueError(f"backend must be one of 'auto', 'cpu', 'cuda', not {backend!r}")
    warn_if_cuda_falls_back(backend)
    check(_swig.mpcf_options_set_backend(options, _BACKENDS[backend]))

    if threads is not None:
        if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral):
            raise TypeError(f"threads must be an integer or None, not {type(threads).__name__}")
        if not -(2**31) <= int(threads) < 2**31:
            raise ValueError(f"threads = {int(threads)} is outside 0..4096 (0 means all hardware threads)")
        check(_swig.mpcf_options_set_threads(options, int(threads)))

    if window is not None:
        if isinstance(window, (str, bytes)) or not hasattr(window, "__len__") or len(window) != 2:
            raise ValueError(f"window must be a pair (a, b) or None, not {window!r}")
        a = _real(window[0], "window[0]")
        b = _real(window[1], "window[1]")
        check(_swig.mpcf_options_set_window(options, a, b))

    if devices is not None:
        if isinstance(devices, (numbers.Integral, str, bytes)):
            raise TypeError("devices must be a sequence of CUDA device ids or None")
        ids = []
        for k, d in enumerate(devices):
            ids.append(device_id(d, f"devices[{k}]"))
        if not ids:
            raise ValueError("devices is empty; pass None to use all CUDA devices")
        id_array = np.asarray(ids, dtype=np.intc)
        check(_swig.mpcf_options_set_devices(options, len(ids), address(id_array)))

    return options

