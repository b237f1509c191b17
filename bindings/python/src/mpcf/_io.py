"""PCF collections in files: the mpcf PCF file format (version 1, described
in capi/README.md, "Persistence barcodes, means and files"). Paths
are written and read by libmpcf itself (mpcf_pcfs_save / mpcf_pcfs_load),
file objects through its serialization, so the files and the promises about
them are the C API's."""

from __future__ import annotations

import errno
import os
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
    return _finish(handle, _stored_shape(handle) if shape is None else tuple(shape), dtype)


def _stored_shape(handle: Any) -> tuple:
    ndim = int(check(swig.mpcf_pcfs_ndim(handle)))
    dims = np.zeros(ndim, dtype=np.uint64)
    check(swig.mpcf_pcfs_shape(handle, address(dims), ndim))
    return tuple(int(d) for d in dims)


def _fs_path(path: Any) -> str:
    """A path as text for messages and checks (bytes paths decoded the way
    the file system encodes them)."""
    return os.fsdecode(os.fspath(path))


def save(X: Any, path: Any) -> None:
    """Saves PCFs (with their shape and dtype) to a file in the mpcf PCF
    format, which :func:`load`, the C API (``mpcf_pcfs_load``), R
    (``pcf_load``), Julia (``load_pcfs``) and the ``mpcf`` CLI read.

    Parameters
    ----------
    X : PcfCollection or anything it accepts
        A collection of shape ``()`` is stored with shape ``(1,)``.
    path : str, bytes, os.PathLike or a binary file object
        A path is written by libmpcf's ``mpcf_pcfs_save`` (mpcf.h states it
        exactly): symbolic links are followed to the file they end at; a
        replaced file keeps its permissions (and, for root, its owner); the
        new content is written to a temporary file in the same directory,
        synced to disk and renamed into place, so the path holds the old
        file or the complete new one, never a partial file, even if the
        process is killed. A directory, FIFO, socket or device (or a link
        to one) and a read-only file are refused and left as they are.

    Raises
    ------
    IsADirectoryError
        The path is a directory.
    FileNotFoundError
        Its directory does not exist.
    mpcf.InvalidArgumentError
        Anything else that stops the save (a special file, no permission, a
        full disk, ...); the message names the file and the reason.

    Examples
    --------
    >>> import os, tempfile, mpcf
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "curves.mpcf")
    ...     mpcf.save([[(0, 3), (1, 0)], [(0, 1), (2, 0)]], path)
    ...     print(mpcf.load(path))
    PcfCollection(shape=(2,), dtype=float64, total_breakpoints=4)
    """
    if hasattr(path, "write") and not isinstance(path, (str, bytes, os.PathLike)):
        path.write(to_bytes(X))
        return
    X = as_collection(X)
    target = _fs_path(path)
    # Python's own exceptions for the two common mistakes; every other rule
    # is libmpcf's (its message names the file).
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, f"cannot save to '{target}': it is a directory")
    folder = os.path.dirname(os.path.realpath(target))
    if not os.path.isdir(folder):
        raise FileNotFoundError(
            errno.ENOENT, f"cannot save to '{target}': its directory '{folder}' does not exist"
        )
    check(swig.mpcf_pcfs_save(X._handle, os.fspath(path)))


def load(path: Any) -> PcfCollection:
    """Loads PCFs saved by :func:`save` (or by libmpcf in any language).

    Parameters
    ----------
    path : str, bytes, os.PathLike or a binary file object
        A path is read by libmpcf's ``mpcf_pcfs_load``: a regular file is
        checked against its length; a pipe or device is read only as far
        as its header declares.

    Returns
    -------
    PcfCollection
        With the stored shape and dtype.

    Raises
    ------
    OSError
        The file does not exist or cannot be accessed (FileNotFoundError,
        PermissionError, ...), or is a directory (IsADirectoryError).
    mpcf.InvalidArgumentError
        Not a PCF file, truncated or corrupt, or unreadable (the message
        says which, and names the file).
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
    target = _fs_path(path)
    os.stat(target)  # Python's own exception for a missing or inaccessible file
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, f"cannot load '{target}': it is a directory")
    handle = check(swig.mpcf_pcfs_load(os.fspath(path)))
    return _finish(handle, _stored_shape(handle), _DTYPES[int(check(swig.mpcf_pcfs_dtype(handle)))])


__all__ = ["save", "load"]
