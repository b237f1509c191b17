"""What the tasks of mpcf.dask run on the workers: one tile of a distance
matrix (a cdist of two slices of the collection, or a pdist of one on the
diagonal), the k-nearest-neighbour lists of a tile, and the merge of such
lists, and the collections a worker keeps for later calls. Plain NumPy
and mpcf; Dask is needed only to look up the worker's settings and to fetch
a kept collection a worker does not hold.

Every tile is computed by libmpcf over slices (PcfCollection.slice), which
share the collection the worker already holds, so a task copies no PCF data
and its values have the bits of the single-process call.
"""

from __future__ import annotations

import collections
import numbers
import os
import threading
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from . import _ops, _reduce
from ._collection import PcfCollection

#: Name of the worker plugin (mpcf.dask.WorkerOptions) holding a worker's
#: settings, and of the Dask configuration section read on the workers.
PLUGIN_NAME = "mpcf-worker-options"
CONFIG_SECTION = "mpcf"

_SETTING_NAMES = ("backend", "threads", "devices")
#: A tile runs on one core unless told otherwise: a Dask worker with t
#: threads runs t tasks at once, the usual Dask arrangement.
_DEFAULT_THREADS = 1

Settings = Tuple[Optional[Sequence[float]], Optional[str], Optional[int], Optional[Tuple[int, ...]]]
KnnLists = Tuple[np.ndarray, np.ndarray]


def check_settings(backend: Any, threads: Any, devices: Any) -> Tuple[Optional[str], Optional[int], Optional[Tuple[int, ...]]]:
    """backend, threads and devices as a task carries them (None: the
    worker's own); TypeError / ValueError for bad values."""
    if backend is not None and (not isinstance(backend, str) or backend not in ("auto", "cpu", "cuda")):
        raise ValueError(f"backend must be one of 'auto', 'cpu', 'cuda' or None, not {backend!r}")
    if threads is not None:
        if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, numbers.Integral):
            raise TypeError(f"threads must be an integer or None, not {type(threads).__name__}")
        if not 0 <= int(threads) <= 4096:
            raise ValueError(f"threads = {int(threads)} is outside 0..4096 (0 means all hardware threads)")
        threads = int(threads)
    if devices is not None:
        if isinstance(devices, (numbers.Integral, str, bytes)):
            raise TypeError("devices must be a sequence of CUDA device ids or None")
        ids = []
        for k, d in enumerate(devices):
            if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral) or int(d) < 0:
                raise ValueError(f"devices[{k}] = {d!r} is not a CUDA device id (an integer >= 0)")
            ids.append(int(d))
        if not ids:
            raise ValueError("devices is empty; pass None to use all CUDA devices")
        devices = tuple(ids)
    return backend, threads, devices


def _worker_settings() -> Dict[str, Any]:
    """The settings of the worker this runs on: its WorkerOptions plugin,
    then its Dask configuration (section "mpcf", e.g. the environment
    variable DASK_MPCF__BACKEND=cuda). Empty outside a worker."""
    found: Dict[str, Any] = {}
    try:
        from distributed import get_worker

        plugin = get_worker().plugins.get(PLUGIN_NAME)
    except (ImportError, ValueError):
        plugin = None
    if plugin is not None:
        found.update({k: v for k, v in plugin.settings.items() if v is not None})
    try:
        import dask.config

        config = dask.config.get(CONFIG_SECTION, default={}) or {}
    except ImportError:
        config = {}
    for name in _SETTING_NAMES:
        if name not in found and config.get(name) is not None:
            found[name] = config[name]
    return found


def options(settings: Settings) -> Dict[str, Any]:
    """Keyword arguments for mpcf.pdist / cdist / knn on this worker: the
    call's settings where given, else the worker's, else the defaults."""
    window, backend, threads, devices = settings
    worker = _worker_settings()
    backend, threads, devices = check_settings(
        backend if backend is not None else worker.get("backend"),
        threads if threads is not None else worker.get("threads"),
        devices if devices is not None else worker.get("devices"),
    )
    return {
        "window": window,
        "backend": backend if backend is not None else "auto",
        "threads": threads if threads is not None else _DEFAULT_THREADS,
        "devices": devices,
    }


def gpus_used(settings: Settings) -> int:
    """How many GPUs this worker's libmpcf would compute a knn tile on
    under the settings: 0 for backend "cpu" or where it sees no CUDA device,
    else the devices named in the settings that exist, or all of them.
    (Under backend "auto" libmpcf takes the GPU for a call of at least its
    threshold of merge steps, 2e8 by default, which the GPU-sized tiles this
    answer leads to meet unless the functions have a single breakpoint.)"""
    opts = options(settings)
    if opts["backend"] == "cpu":
        return 0
    present = _ops.cuda_device_count()
    if present == 0:
        return 0
    if opts["devices"] is not None:
        return len({d for d in opts["devices"] if d < present})
    return present


# ---- collections kept on the workers ----------------------------------------
#
# A collection scattered by mpcf.dask.scatter is also kept by each worker
# here, in its process, so that Dask's Active Memory Manager dropping the
# worker's replica of the key (it keeps one copy of a key no task waits for)
# does not make the next call copy the collection back. Tasks name such a
# collection by a Resident reference, not by its key: they do not depend on
# the key, so Dask copies nothing to the worker running them; a worker that
# does not hold it (one that joined later, or dropped it by the limit)
# fetches it once from the cluster, which keeps the key while the client
# holds the ScatteredPcfs.

#: Dask configuration key (section "mpcf") of the bytes a worker keeps; by
#: default a quarter of the worker's memory limit (of the machine's memory
#: when the worker has none).
RESIDENT_CONFIG = "resident-bytes"


class Resident:
    """A scattered collection as a task names it: its key in the cluster
    and its size in bytes (the breakpoints and offsets)."""

    __slots__ = ("key", "nbytes")

    def __init__(self, key: Any, nbytes: int) -> None:
        self.key = key
        self.nbytes = int(nbytes)

    def __reduce__(self):
        return (Resident, (self.key, self.nbytes))

    def __repr__(self) -> str:
        return f"Resident({self.key!r}, {self.nbytes})"


def collection_bytes(X: Any) -> int:
    """The bytes of a collection's breakpoints and offsets (of the
    collection under a ComponentObjects)."""
    if isinstance(X, ComponentObjects):
        X = X.X
    return int(X._total) * 2 * np.dtype(X.dtype).itemsize + (int(X.size) + 1) * 8


class ResidentStore:
    """The collections a worker keeps: the most recently used first out of
    the limit (least recently used dropped first), each at most once.
    Thread-safe (a worker runs tasks on several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: "collections.OrderedDict[Any, Tuple[Any, int, str]]" = collections.OrderedDict()

    def get(self, key: Any) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: Any, X: Any, nbytes: int, limit: int, how: str) -> bool:
        """Keeps X under key (how: "scattered" or "fetched", for tests and
        reports) unless it alone is over the limit; drops the least
        recently used ones beyond it. True when kept."""
        with self._lock:
            self._items.pop(key, None)
            if nbytes > limit:
                return False
            self._items[key] = (X, int(nbytes), how)
            total = sum(item[1] for item in self._items.values())
            while total > limit:
                _, (_, dropped, _) = self._items.popitem(last=False)
                total -= dropped
            return True

    def drop(self, key: Any) -> bool:
        with self._lock:
            return self._items.pop(key, None) is not None

    def entries(self) -> Dict[Any, Tuple[int, str, int]]:
        """key -> (bytes, how it came, id of the object), oldest first."""
        with self._lock:
            return {k: (v[1], v[2], id(v[0])) for k, v in self._items.items()}


_RESIDENT = ResidentStore()


def resident_limit() -> int:
    """The bytes this process keeps: Dask's configuration "mpcf.resident-bytes"
    (a number or a string such as "2 GiB"), else a quarter of the worker's
    memory limit, else of the machine's memory."""
    try:
        import dask.config
        from dask.utils import parse_bytes

        value = dask.config.get(f"{CONFIG_SECTION}.{RESIDENT_CONFIG}", default=None)
    except ImportError:
        value = None
    if value is not None:
        limit = parse_bytes(value) if isinstance(value, str) else int(value)
        if limit < 0:
            raise ValueError(f"{CONFIG_SECTION}.{RESIDENT_CONFIG} = {value!r} is negative")
        return limit
    memory = 0
    try:
        from distributed import get_worker

        memory = int(get_worker().memory_manager.memory_limit or 0)
    except (ImportError, ValueError, AttributeError):
        pass
    if memory <= 0:
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
            memory = 0
    return memory // 4


def keep_resident(key: Any, nbytes: int, dask_worker: Any = None) -> Optional[bool]:
    """Run on every worker by mpcf.dask.scatter (client.run, on the
    worker's event loop): keeps the worker's replica of key. True when
    kept, False when over this worker's limit, None when the worker holds
    no replica (it fetches the collection at its first task)."""
    if dask_worker is None or key not in dask_worker.data:
        return None
    return _RESIDENT.put(key, dask_worker.data[key], nbytes, resident_limit(), "scattered")


def drop_resident(key: Any) -> bool:
    """Forgets a kept collection (ScatteredPcfs.release)."""
    return _RESIDENT.drop(key)


def resident_entries() -> Dict[Any, Tuple[int, str, int]]:
    """What this worker keeps (ResidentStore.entries)."""
    return _RESIDENT.entries()


def resident(ref: Resident) -> Any:
    """The collection a task names by ref: the one this worker keeps, else
    fetched from the cluster (once; kept from then on within the limit)."""
    X = _RESIDENT.get(ref.key)
    if X is not None:
        return X
    from distributed import Future, get_client

    # A future of this worker's client for the key in the cluster's memory
    # (state "memory": it gathers from the replicas the scheduler names).
    future = Future(ref.key, get_client(), state="memory")
    try:
        X = future.result()
    except Exception as exc:
        raise RuntimeError(f"the scattered collection {ref.key!r} is no longer in the cluster "
                           f"(released, or every worker holding it was lost): {exc}") from exc
    finally:
        future.release()
    _RESIDENT.put(ref.key, X, ref.nbytes, resident_limit(), "fetched")
    return X


# ---- tiles of a distance matrix -------------------------------------------


def pdist_tile(X: PcfCollection, i0: int, i1: int, p: float, settings: Settings) -> np.ndarray:
    """Rows and columns i0..i1-1 of the square pdist of X: a tile on the
    diagonal, each pair computed once (the condensed part of the tile),
    mirrored, zero diagonal."""
    return _ops.pdist(X.slice(i0, i1), p, layout="square", **options(settings))


def cdist_tile(X: PcfCollection, i0: int, i1: int, Y: PcfCollection, j0: int, j1: int,
               p: float, settings: Settings) -> np.ndarray:
    """d(X[i], Y[j]) for i in i0..i1-1, j in j0..j1-1."""
    return _ops.cdist(X.slice(i0, i1), Y.slice(j0, j1), p, **options(settings))


# ---- k nearest neighbours --------------------------------------------------


def knn_diagonal(X: PcfCollection, i0: int, i1: int, k: int, p: float, settings: Settings) -> KnnLists:
    """The nearest neighbours of X[i0:i1] among X[i0:i1] (never itself), at
    most k per row, indices into X."""
    d, i = _reduce.knn(X.slice(i0, i1), min(k, i1 - i0 - 1), p=p, **options(settings))
    return d, i + i0


def knn_cross(X: PcfCollection, i0: int, i1: int, Y: PcfCollection, j0: int, j1: int, k: int,
              p: float, settings: Settings) -> KnnLists:
    """The nearest neighbours of X[i0:i1] among Y[j0:j1], at most k per row,
    indices into Y."""
    d, i = _reduce.knn(X.slice(i0, i1), min(k, j1 - j0), Y.slice(j0, j1), p=p, **options(settings))
    return d, i + j0


def knn_below_diagonal(X: PcfCollection, i0: int, i1: int, j0: int, j1: int, k: int, p: float,
                       settings: Settings) -> Tuple[KnnLists, KnnLists]:
    """A tile below the diagonal (j1 <= i0) serves two row blocks: the rows
    i0..i1-1 find candidates among j0..j1-1, and the rows j0..j1-1 among
    i0..i1-1. Returns (lists of rows i0.., lists of rows j0..): one libmpcf
    knn both ways (mpcf_knn_both), every pair of the tile computed once and
    the k smallest of both sides chosen where it is computed (on a GPU, on
    the device), as the single-process knn does."""
    rows, cols = X.slice(i0, i1), X.slice(j0, j1)
    (d_rows, i_rows), (d_cols, i_cols) = _reduce.knn_both(
        rows, cols, min(k, j1 - j0), min(k, i1 - i0), p=p, **options(settings))
    return (d_rows, i_rows + j0), (d_cols, i_cols + i0)


def knn_band(X: PcfCollection, i0: int, i1: int, k: int, p: float,
             settings: Settings) -> Tuple[KnnLists, Optional[KnnLists]]:
    """A band of the symmetric plane for a GPU worker: the rows i0..i1-1
    against every earlier row, each pair once. Returns (lists of rows
    i0..i1-1 among X[0:i1], lists of rows 0..i0-1 among X[i0:i1] or None
    when i0 = 0): two libmpcf calls, a knn of the band's square on the
    diagonal and a knn both ways (mpcf_knn_both) of the band against the
    rows above it, so the worker uploads the collection about once and
    plans its blocks twice, where tiles of the same work would each do it
    again."""
    parts = []
    if i1 - i0 > 1:
        parts.append(knn_diagonal(X, i0, i1, k, p, settings))
    cols = None
    if i0 > 0:
        rows, cols = knn_below_diagonal(X, i0, i1, 0, i0, k, p, settings)
        parts.append(rows)
    return merge_knn(k, *parts), cols


def merge_parts(k: int, parts: Sequence[Any], picks: Sequence[Any]) -> KnnLists:
    """merge_knn over lists as the tasks deliver them: a part is the lists
    themselves (pick -1), one of the two lists of a tile below the diagonal
    or of a band (pick 0: its rows, 1: its columns), or rows lo..hi-1 of
    one of them (pick (side, lo, hi))."""
    lists = []
    for part, pick in zip(parts, picks):
        if isinstance(pick, tuple):
            side, lo, hi = pick
            d, i = part[side]
            lists.append((d[lo:hi], i[lo:hi]))
        else:
            lists.append(part if pick < 0 else part[pick])
    return merge_knn(k, *lists)


def merge_knn(k: int, *parts: KnnLists) -> KnnLists:
    """The k smallest (distance, index) of each row over lists of the same
    rows from disjoint candidate sets, two at a time by libmpcf
    (mpcf_knn_merge: the order of every knn, O(rows k) per merge). Exact and
    independent of the order of the parts: the same result for any tiling
    and any merge tree. (One part is returned as it is, cut to k: libmpcf's
    lists are in that order already.)"""
    merged = parts[0][0][:, :k], parts[0][1][:, :k]
    for part in parts[1:]:
        merged = _reduce.knn_merge(k, merged, part)
    return merged


class ComponentObjects:
    """A collection of shape (*S, K) seen as prod(S) objects of K functions
    (components=True in mpcf.dask): ``slice(i0, i1)`` gives the objects
    i0 .. i1-1 as a view with a component axis, so every tile computes over
    objects. Pickles as the collection and K."""

    __slots__ = ("X", "K", "shape", "size", "dtype")

    def __init__(self, X: Any) -> None:
        from ._collection import object_view

        object_view(X, True)  # libmpcf's message for a shape of fewer than 2 dimensions
        self.X = X
        self.K = int(X.shape[-1])
        self.shape = tuple(X.shape[:-1])
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.dtype = X.dtype

    def slice(self, begin: int, end: int) -> Any:
        from ._collection import object_slice

        return object_slice(self.X, self.K, begin, end)

    def __reduce__(self):
        return (ComponentObjects, (self.X,))
