"""Large results in memory whose pages were already written.

A new NumPy array of a large result is a fresh mapping: the kernel faults in
and zeroes every page as libmpcf writes the result, which on a GPU call costs
about as much again as the computation (a 763 MiB float32 pdist of 20,000
functions: 1.5-1.8x the same call into an already-written buffer). The pool
keeps the memory of large results once nothing refers to them any more, and
hands it to the next large result instead of a fresh mapping.

How: a result of at least ``_MIN_BYTES`` is an anonymous ``mmap`` seen
through the memoryview NumPy keeps as the array's base; the array and every
view of it keep that memoryview alive, and when the last of them is gone the
memory goes back to the pool rather than to the system. The pool holds at most
:func:`result_pool_limit` bytes (default: a quarter of the machine's memory,
at most 4 GiB; environment ``MPCF_RESULT_POOL_BYTES``); what is beyond it, or
everything after :func:`release_result_memory`, is returned to the system.
A result from the pool holds the values of an earlier one until libmpcf
overwrites them, as ``np.empty`` promises nothing either.
"""

from __future__ import annotations

import mmap
import os
import threading
import weakref
from typing import Any, List, Optional

import numpy as np

_MIN_BYTES = 32 << 20  # below this, np.empty (the allocator reuses small blocks itself)
_PAGE = mmap.PAGESIZE


def _close(mm: mmap.mmap) -> None:
    try:
        mm.close()
    except BufferError:  # still exported somewhere: unmapped when that ends
        pass


def _default_limit() -> int:
    env = os.environ.get("MPCF_RESULT_POOL_BYTES")
    if env is not None:
        try:
            value = int(env)
        except ValueError:
            raise ValueError(
                f"MPCF_RESULT_POOL_BYTES = {env!r} is not a whole number of bytes"
            ) from None
        if value < 0:
            raise ValueError(f"MPCF_RESULT_POOL_BYTES = {value} is negative")
        return value
    try:
        physical = int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        physical = 0
    return min(4 << 30, physical // 4)


class _Pool:
    def __init__(self) -> None:
        self._lock = threading.RLock()  # a finalizer may run inside a locked section (GC)
        self._free: List[mmap.mmap] = []  # oldest first
        self._limit: Optional[int] = None  # read from the environment on first use

    def limit(self) -> int:
        with self._lock:
            if self._limit is None:
                self._limit = _default_limit()
            return self._limit

    def set_limit(self, nbytes: int) -> None:
        with self._lock:
            self._limit = nbytes
            self._trim()

    def held(self) -> int:
        with self._lock:
            return sum(len(mm) for mm in self._free)

    def release(self) -> None:
        with self._lock:
            free, self._free = self._free, []
        for mm in free:
            _close(mm)

    def _trim(self) -> None:
        while self._free and self.held() > (self._limit or 0):
            _close(self._free.pop(0))

    def _take(self, nbytes: int) -> Optional[mmap.mmap]:
        # The smallest free block that holds nbytes, if at most twice as large.
        with self._lock:
            best = None
            for k, mm in enumerate(self._free):
                size = len(mm)
                if nbytes <= size <= 2 * nbytes and (best is None or size < len(self._free[best])):
                    best = k
            if best is None:
                return None
            return self._free.pop(best)

    def _give(self, mm: mmap.mmap) -> None:
        with self._lock:
            if len(mm) <= self.limit():
                self._free.append(mm)
                self._trim()
                return
        _close(mm)

    def empty(self, shape: Any, dtype: Any) -> np.ndarray:
        dtype = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.float64)) if np.ndim(shape) else int(shape)
        nbytes = count * dtype.itemsize
        if nbytes < _MIN_BYTES or nbytes > self.limit():
            return np.empty(shape, dtype=dtype)
        mm = self._take(nbytes)
        if mm is None:
            # Private: a shared anonymous mapping is shmem, whose pages
            # fault in several times slower (measured: 4.9x touched against
            # np.empty's 1.7x, one H200 host).
            mm = mmap.mmap(-1, (nbytes + _PAGE - 1) // _PAGE * _PAGE,
                           flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        flat = np.frombuffer(memoryview(mm)[:nbytes], dtype=dtype, count=count)
        # flat.base holds the export of mm (NumPy's own memoryview of it);
        # every view of the result refers to it through flat. When the last
        # is gone, the memory goes back.
        done = weakref.finalize(flat.base, self._give, mm)
        done.atexit = False
        return flat.reshape(shape)


_pool = _Pool()


def empty(shape: Any, dtype: Any) -> np.ndarray:
    """An uninitialised array of `shape` and `dtype` (np.empty semantics), from
    the pool when large."""
    return _pool.empty(shape, dtype)


def result_pool_limit() -> int:
    """Bytes of freed large results mpcf keeps for the next ones (see
    :func:`set_result_pool_limit`)."""
    return _pool.limit()


def set_result_pool_limit(nbytes: int) -> None:
    """Keep at most `nbytes` of freed large results (>= 32 MiB each) for the
    next results; 0 turns the pool off. What is held beyond goes back to the
    system now."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
        raise TypeError(f"nbytes must be an int, not {type(nbytes).__name__}")
    if nbytes < 0:
        raise ValueError(f"nbytes = {nbytes} is negative")
    _pool.set_limit(int(nbytes))


def result_pool_held() -> int:
    """Bytes the pool holds now (freed results waiting for reuse)."""
    return _pool.held()


def release_result_memory() -> None:
    """Return every freed large result the pool holds to the system."""
    _pool.release()
