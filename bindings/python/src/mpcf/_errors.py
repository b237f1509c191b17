"""Exceptions raised for libmpcf status codes.

Every C status but ``MPCF_OK`` becomes an :class:`Error` subclass that also
derives from the built-in exception a Python user would expect, so
``except ValueError`` catches bad input and ``except MemoryError`` catches an
allocation failure. The message is the library's own sentence naming the
argument and the offending index or value; the indices of invalid input
data are also attributes, as libmpcf reports them (``mpcf_last_error_detail``).
"""

from __future__ import annotations

from typing import Optional


class Error(Exception):
    """Base class of the errors libmpcf reports.

    Attributes
    ----------
    status : int
        The C status code (``mpcf_status``).
    status_name : str
        Its C name, e.g. ``"MPCF_ERROR_INVALID_PCF"``.
    function_index, breakpoint_index : int or None
        Invalid PCF/PLF data: the function (its flat index in the data given)
        and its breakpoint (None when the error is about the whole function,
        e.g. one without breakpoints). None for other errors.
    barcode_index, bar_index : int or None
        A bad barcode: the barcode (flat index) and its bar (None when the
        error is about the whole barcode). None for other errors.

    Indices count from 0, as in the message.
    """

    status: int = -1
    status_name: str = ""
    function_index: Optional[int] = None
    breakpoint_index: Optional[int] = None
    barcode_index: Optional[int] = None
    bar_index: Optional[int] = None

    def __init__(self, message: str, status: int = -1, status_name: str = "",
                 function_index: Optional[int] = None, breakpoint_index: Optional[int] = None,
                 barcode_index: Optional[int] = None, bar_index: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status
        self.status_name = status_name
        self.function_index = function_index
        self.breakpoint_index = breakpoint_index
        self.barcode_index = barcode_index
        self.bar_index = bar_index

    def _location(self):
        return (self.function_index, self.breakpoint_index, self.barcode_index, self.bar_index)

    def __reduce__(self):
        return (type(self), (str(self), self.status, self.status_name) + self._location())


class InvalidArgumentError(Error, ValueError):
    """A bad argument: p < 1 or NaN, a bad window, an unknown option value,
    a shape that does not match the number of functions, bad CSR offsets."""


class InvalidPcfError(Error, ValueError):
    """PCF data breaking the rules: no breakpoints, times not strictly
    increasing, NaN or infinite times or values. The message names the
    function and the breakpoint."""


class BufferTooSmallError(Error, ValueError):
    """An output buffer smaller than the result (a bug in the caller)."""


class DtypeMismatchError(Error, TypeError, ValueError):
    """Two collections of different dtypes (float32 and float64) combined."""


class OutOfMemoryError(Error, MemoryError):
    """Host or device memory could not be allocated."""


class CudaUnavailableError(Error, RuntimeError):
    """The CUDA backend was requested but this libmpcf has no CUDA support,
    no usable device is present, or a listed device does not exist."""


class CudaError(Error, RuntimeError):
    """A CUDA call failed while computing."""


class CancelledError(Error, RuntimeError):
    """The computation was cancelled."""


class InternalError(Error, RuntimeError):
    """An internal consistency check of libmpcf failed (a bug)."""


class CudaFallbackWarning(RuntimeWarning):
    """Issued once per process when a CUDA build of mpcf (mpcf-cuda) finds no
    CUDA driver or device and computes on the CPU with backend="auto"."""


__all__ = [
    "Error",
    "InvalidArgumentError",
    "InvalidPcfError",
    "BufferTooSmallError",
    "DtypeMismatchError",
    "OutOfMemoryError",
    "CudaUnavailableError",
    "CudaError",
    "CancelledError",
    "InternalError",
    "CudaFallbackWarning",
]
