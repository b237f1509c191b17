"""PCF collections in files: the mpcf PCF file format (version 1, described
in the repository README, "Persistence barcodes, means and files"), through
libmpcf's serialization, so the files are the ones the C API and the CLI
read and write."""

from __future__ import annotations

import os
import secrets
from typing import Any, Union

import numpy as np

from . import _errors
from ._collection import PcfCollection, _finish, as_collection
from ._lib import address, check, swig

PathLike = Union[str, "os.PathLike[str]"]

_DTYPES = {swig.MPCF_FLOAT32: np.dtype(np.float32), swig.MPCF_FLOAT64: np.dtype(np.float64)}


def to_bytes(X: Any) -> bytes:
    """The bytes of the PCF file of X (what :func:`save` writes)."""
    X = as_collection(X)
    size = int(check(swig.mpcf_pcfs_serialized_size(X._handle)))
    buf = np.empty(size, dtype=np.uint8)
    check(swig.mpcf_pcfs_serialize(X._handle, address(buf), size))
    return buf.tobytes()


def from_bytes(data: Any, shape: Any = None, _name: str = "the buffer") -> PcfCollection:
    """A collection from the bytes of a PCF file (validated like any input).
    `shape` overrides the stored shape (used by pickling for shape ())."""
    view = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    try:
        handle = check(swig.mpcf_pcfs_deserialize(address(view) if view.size else None, view.size))
    except _errors.Error as exc:
        message = str(exc).replace("the buffer", _name, 1)
        raise type(exc)(message, exc.status, exc.status_name) from None
    dtype = _DTYPES[int(check(swig.mpcf_pcfs_dtype(handle)))]
    if shape is None:
        ndim = int(check(swig.mpcf_pcfs_ndim(handle)))
        dims = np.zeros(ndim, dtype=np.uint64)
        check(swig.mpcf_pcfs_shape(handle, address(dims), ndim))
        shape = tuple(int(d) for d in dims)
    return _finish(handle, tuple(shape), dtype)


def save(X: Any, path: Any) -> None:
    """Saves PCFs (with their shape and dtype) to a file in the mpcf PCF
    format, which :func:`load`, the C API (``mpcf_pcfs_load``), R
    (``pcf_load``), Julia (``load_pcfs``) and the ``mpcf`` CLI read.

    Parameters
    ----------
    X : PcfCollection or anything it accepts
        A collection of shape ``()`` is stored with shape ``(1,)``.
    path : str, os.PathLike or a binary file object
        A path is written through a temporary file in the same directory
        and renamed into place, so a failure leaves no partial file.

    Raises
    ------
    OSError
        The file could not be written.

    Examples
    --------
    >>> import os, tempfile, mpcf
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "curves.mpcf")
    ...     mpcf.save([[(0, 3), (1, 0)], [(0, 1), (2, 0)]], path)
    ...     print(mpcf.load(path))
    PcfCollection(shape=(2,), dtype=float64, total_breakpoints=4)
    """
    data = to_bytes(X)
    if hasattr(path, "write") and not isinstance(path, (str, bytes, os.PathLike)):
        path.write(data)
        return
    target = os.fspath(path)
    if os.path.isdir(target):
        raise IsADirectoryError(f"cannot save to '{target}': it is a directory")
    # A fresh name next to the target, created with the usual permissions
    # (0666 less the umask), renamed over the target once complete.
    temp = f"{target}.mpcf-tmp-{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, target)
    except BaseException:
        if os.path.exists(temp):
            os.remove(temp)
        raise


def load(path: Any) -> PcfCollection:
    """Loads PCFs saved by :func:`save` (or by libmpcf in any language).

    Parameters
    ----------
    path : str, os.PathLike or a binary file object

    Returns
    -------
    PcfCollection
        With the stored shape and dtype.

    Raises
    ------
    OSError
        The file could not be read (FileNotFoundError, ...).
    mpcf.InvalidArgumentError
        Not a PCF file, truncated or corrupt (the message says which, and
        names the file).
    mpcf.InvalidPcfError
        A well-formed file whose PCFs break the rules (named like any input).

    Examples
    --------
    >>> import io, mpcf
    >>> buffer = io.BytesIO()
    >>> mpcf.save([[[(0, 1)]] * 3] * 2, buffer)          # shape (2, 3)
    >>> X = mpcf.load(io.BytesIO(buffer.getvalue()))
    >>> X.shape
    (2, 3)
    """
    if hasattr(path, "read") and not isinstance(path, (str, bytes, os.PathLike)):
        return from_bytes(path.read(), None, "the file object")
    target = os.fspath(path)
    with open(target, "rb") as f:
        data = f.read()
    return from_bytes(data, None, f"file '{target}'")


__all__ = ["save", "load"]
