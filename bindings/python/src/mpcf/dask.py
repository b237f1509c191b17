"""Distance matrices and nearest neighbours of PCF and PLF collections
(objects of several functions with ``components=True``) on a Dask
cluster (``dask.distributed``): a laptop's ``LocalCluster``, an HPC
scheduler through ``dask-jobqueue`` (``SLURMCluster``, ...) or Kubernetes.

Install with ``pip install 'mpcf[dask]'`` (Dask with ``dask.array`` and
``dask.distributed``; add ``zarr`` for :func:`to_zarr`).

How a run works:

* The collection is scattered once to every worker (``client.scatter(X,
  broadcast=True)``); tasks refer to it and never carry PCF data. A
  collection scattered with :func:`scatter` is also kept by each worker for
  later calls (until :meth:`ScatteredPcfs.release`), whatever Dask's Active
  Memory Manager does with the extra replicas of its key.
* The matrix is cut into tiles of ``chunks`` rows by ``chunks`` columns. A
  tile is one libmpcf call on the worker, over slices of the collection the
  worker holds (:meth:`mpcf.PcfCollection.slice`, no copy): a ``cdist`` of
  rows i0..i1 against columns j0..j1, or, on the diagonal of a ``pdist``, a
  ``pdist`` of rows i0..i1 (each pair computed once).
* :func:`pdist` and :func:`cdist` return a lazy ``dask.array`` whose blocks
  are those tiles; ``pdist``'s tiles above the diagonal are the transposes
  of the ones below. :func:`knn` reduces every tile to its nearest-neighbour
  lists on the worker and merges the lists of each row block by a tree of
  merges; only O(n k) numbers reach the client.
* Every value has the bits of the single-process call (``mpcf.pdist(X,
  layout="square")``, ``mpcf.cdist``, ``mpcf.knn``) on the same backend,
  whatever the chunking, the number of workers or the order in which tasks
  ran. Name the backend ("cpu" or "cuda") for that: with "auto" each tile
  chooses by its own size.
* A worker that dies mid-run loses nothing: Dask runs its tasks again
  elsewhere (the collection is on every worker).
* Each worker computes on its own cores and GPUs: ``backend``, ``threads``
  and ``devices`` come from the call, else from the worker
  (:class:`WorkerOptions`, or its Dask configuration: environment variables
  ``DASK_MPCF__BACKEND``, ``DASK_MPCF__THREADS``, ``DASK_MPCF__DEVICES``),
  else the defaults: backend "auto" and one CPU thread per task (a worker
  with t threads runs t tiles at once).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import uuid
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.base import tokenize
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"mpcf.dask needs Dask ({exc}); install it with pip install 'mpcf[dask]' "
        "(dask[array,distributed])"
    ) from exc

from . import _dask_tasks as _tasks, _ops
from ._collection import as_collection, object_view
from ._errors import InvalidArgumentError
from ._lib import check, checked_exponent, count, make_options, swig

__all__ = ["pdist", "cdist", "knn", "to_zarr", "scatter", "ScatteredPcfs", "WorkerOptions"]

ChunksLike = Union[str, int, Sequence[int], Sequence[Any]]

#: Bounds of the automatic tile side (rows and columns per tile).
_AUTO_MIN_SIDE = 256
_AUTO_MAX_SIDE = 4096
#: The automatic tiling aims at this many tiles per worker thread.
_AUTO_TILES_PER_THREAD = 4


# ---- where the collection lives ------------------------------------------


class ScatteredPcfs:
    """A :class:`mpcf.PcfCollection` or :class:`mpcf.PlfCollection` held by
    every worker of a Dask cluster, made by :func:`scatter`. :func:`pdist`,
    :func:`cdist` and :func:`knn` accept it in place of a collection, with
    or without ``components=True``, so several computations over one
    collection send it only once.

    Attributes
    ----------
    future : distributed.Future
        The collection in the cluster's memory.
    shape, size, dtype
        Those of the collection.
    kind : type
        Its class, :class:`mpcf.PcfCollection` or :class:`mpcf.PlfCollection`.
    client : distributed.Client
        The client it was scattered with.
    """

    __slots__ = ("future", "shape", "size", "dtype", "kind", "client", "_components", "_objects_of",
                 "_resident")

    def __init__(self, future: Any, shape: Tuple[int, ...], size: int, dtype: np.dtype, kind: type,
                 client: Any, components: Any = None, objects_of: Optional[int] = None,
                 resident: Optional[_tasks.Resident] = None) -> None:
        self.future = future
        self.shape = shape
        self.size = size
        self.dtype = dtype
        self.kind = kind
        self.client = client
        # What components=True makes of the collection, found by libmpcf when
        # it was scattered (the data stays on the workers): K, the functions
        # per object, or libmpcf's error refusing a component axis; None when
        # the scattered data are objects already.
        self._components = components
        # Set on the handle of those objects (_as_objects): the tasks see the
        # collection through _tasks.ComponentObjects, objects of this many
        # functions.
        self._objects_of = objects_of
        # How the tasks name it: kept by each worker (_tasks.resident), or,
        # when None, by its key (Dask copies it to a worker that lost it).
        self._resident = resident

    def release(self) -> None:
        """Frees the collection on the cluster: the workers forget the copy
        they keep, and Dask the key (as when the last reference to
        ``future`` goes). The handle cannot be used after this."""
        if self.future is None:
            return
        key = self.future.key
        try:
            self.client.run(_tasks.drop_resident, key)
        finally:
            self.future.release()
            self.future = None

    def _as_objects(self) -> "ScatteredPcfs":
        """The same scattered data as objects of K functions (components=True)."""
        found = self._components
        if found is None:
            return self
        if isinstance(found, Exception):
            raise type(found)(str(found), found.status, found.status_name)
        shape = self.shape[:-1]
        return ScatteredPcfs(self.future, shape, int(np.prod(shape, dtype=np.int64)), self.dtype,
                             self.kind, self.client, None, found, self._resident)

    def __repr__(self) -> str:
        key = "released" if self.future is None else repr(self.future.key)
        return (f"ScatteredPcfs(shape={self.shape}, dtype={self.dtype.name}, "
                f"kind={self.kind.__name__}, key={key})")


def _default_client() -> Any:
    """Dask's current client, or None when there is none (or no
    dask.distributed)."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _client_for(X: Any, client: Any) -> Any:
    """The client a computation over X uses: the one given, the one X was
    scattered with, or Dask's current one (None without any)."""
    if client is not None:
        return client
    if isinstance(X, ScatteredPcfs):
        return X.client
    return _default_client()


def scatter(X: Any, client: Any = None) -> ScatteredPcfs:
    """Sends a collection to every worker of the cluster once
    (``client.scatter(X, broadcast=True)``) and returns a handle to it for
    :func:`pdist`, :func:`cdist` and :func:`knn`.

    Each worker also keeps X in its process until :meth:`ScatteredPcfs.release`
    (or until more recently used collections need its room: at most
    ``mpcf.resident-bytes`` of the worker's Dask configuration, e.g.
    ``DASK_MPCF__RESIDENT_BYTES="4 GiB"``, by default a quarter of its
    memory limit). So Dask's Active Memory Manager, which every 2 s drops the
    extra copies of a key no task waits for, does not make the next call
    copy X back to the workers. The tasks name X by that kept copy, not by
    its key: a worker without it (one that joined later, or dropped it)
    fetches it from the cluster once. Dask counts the kept copy as the
    worker's unmanaged memory once its own replica is dropped. Where X is
    over some worker's limit, no worker keeps it and the tasks name the key
    (as for a collection passed to a call directly).

    Parameters
    ----------
    X : PcfCollection, PlfCollection or anything PcfCollection accepts
    client : distributed.Client, optional
        Default: Dask's current client.

    Raises
    ------
    ValueError
        No client given and none is running.
    """
    return _scatter(X, client, keep=True)


def _scatter(X: Any, client: Any, keep: bool) -> ScatteredPcfs:
    """scatter; keep=False for a collection sent by one call only (its tasks
    name the key, and the workers keep nothing after the call)."""
    if isinstance(X, ScatteredPcfs):
        return X
    client = client if client is not None else _default_client()
    if client is None:
        raise ValueError("mpcf.dask.scatter needs a dask.distributed Client (none is running)")
    components = None
    if not isinstance(X, _tasks.ComponentObjects):
        X = as_collection(X)
        try:  # libmpcf's verdict on a component axis, for later calls with components=True
            object_view(X, True)
            components = int(X.shape[-1])
        except InvalidArgumentError as exc:
            components = exc
    # hash=False: the key is random, so X is not pickled once more to name it.
    future = client.scatter(X, broadcast=True, hash=False)
    resident = None
    if keep:
        resident = _tasks.Resident(future.key, _tasks.collection_bytes(X))
        kept = client.run(_tasks.keep_resident, future.key, resident.nbytes)
        if any(k is False for k in kept.values()):
            # Over some worker's limit: the tasks name the key (Dask then keeps
            # a replica where tasks wait for it), rather than fetch it per task.
            client.run(_tasks.drop_resident, future.key)
            resident = None
    return ScatteredPcfs(future, X.shape, X.size, X.dtype, _kind(X), client, components,
                         None, resident)


def _input(X: Any, default_dtype: Any = np.float64, components: Any = False,
           kind: Optional[type] = None) -> Any:
    """X as a ScatteredPcfs or a collection (plain data as functions of
    kind, PCFs by default; plain numbers take default_dtype), so that its
    size is known before anything is sent; with components=True, its objects
    (_tasks.ComponentObjects, or a ScatteredPcfs read as objects)."""
    components = _components(components)
    if isinstance(X, ScatteredPcfs):
        return X._as_objects() if components else X
    if isinstance(X, _tasks.ComponentObjects):
        return X
    X = as_collection(X, None, default_dtype, kind)
    return _tasks.ComponentObjects(X) if components else X


def _kind(X: Any) -> type:
    """The collection class of X (a collection, its objects or a
    ScatteredPcfs)."""
    if isinstance(X, ScatteredPcfs):
        return X.kind
    if isinstance(X, _tasks.ComponentObjects):
        return type(X.X)
    return type(X)


def _components(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"components must be True or False, not {value!r} ({type(value).__name__})")
    return bool(value)


class _Source:
    """The collection as the tasks see it: a key of the graph (the scattered
    future, or the collection itself as one task of the graph when no
    distributed client is running), with its shape, size and dtype. `arg`
    is what a task names as its collection: the key, or, for a scattered
    collection read as objects, a task nested in the tile's task that views
    it so on the worker (O(1), nothing sent). `token` names the data and
    how it is read, for the names of the graph's layers."""

    def __init__(self, X: Any, client: Any) -> None:
        if isinstance(X, ScatteredPcfs):
            if client is not None and X.client is not client:
                raise ValueError("the ScatteredPcfs was scattered with another client than client=")
            if X.future is None:
                raise ValueError("the ScatteredPcfs was released (ScatteredPcfs.release)")
            self.ref = dask.delayed(X.future)
            self.shape, self.size, self.dtype, self.client = X.shape, X.size, X.dtype, X.client
            # The kept copy (no dependency on the key: nothing is copied),
            # else the key.
            data = (_tasks.resident, X._resident) if X._resident is not None else self.ref.key
            if X._objects_of is None:
                self.arg = data
            else:
                self.arg = (_tasks.ComponentObjects, data)
            self.token = (self.ref.key, X._objects_of)
            return
        self.shape, self.size, self.dtype = X.shape, X.size, X.dtype
        self.client = client if client is not None else _default_client()
        if self.client is None:
            # No cluster: Dask's local scheduler, X held once by the graph.
            self.ref = dask.delayed(X, name="mpcf-pcfs-" + uuid.uuid4().hex)
        else:
            self.ref = dask.delayed(_scatter(X, self.client, keep=False).future)
        self.arg = self.ref.key
        self.token = (self.ref.key, None)


def _objects_of(X: Any) -> Optional[int]:
    """K, the functions per object, of an input read as objects
    (components=True), from its metadata alone; None for plain functions
    (and for scattered data that were objects already, which only this
    module makes, after checking them)."""
    if isinstance(X, _tasks.ComponentObjects):
        return X.K
    if isinstance(X, ScatteredPcfs):
        return X._objects_of
    return None


def _empty_like(X: Any, K: Optional[int]) -> Any:
    """An empty collection of X's kind and dtype: shape (0, K) for objects
    of K functions, else (0,)."""
    dtype = np.dtype(X.dtype)
    none = np.empty(0, dtype=dtype)
    return _kind(X).from_csr(np.zeros(1, dtype=np.uint64), none, none,
                             shape=(0, K) if K is not None else None)


def _inputs(X: Any, Y: Any, components: Any = False) -> Tuple[Any, Any]:
    """X and Y of a cross computation (plain data in Y takes X's dtype and
    kind). libmpcf judges whether they go together (one dtype, one kind of
    function, objects of one K) on empty collections of theirs (shape (0,)
    or (0, K)): the data may be on the workers only, their metadata is here.
    So a mismatch fails at the call with libmpcf's message rather than when
    the tiles are computed, and nothing is computed to find it."""
    same = Y is X
    X = _input(X, np.float64, components)
    Y = X if same else _input(Y, X.dtype, components, _kind(X))
    if not same:
        kx, ky = _objects_of(X), _objects_of(Y)
        objects = kx is not None and ky is not None
        _ops.cdist(_empty_like(X, kx if objects else None), _empty_like(Y, ky if objects else None),
                   components=objects)
    return X, Y


def _sources(X: Any, Y: Any, client: Any) -> Tuple[_Source, _Source]:
    """Sends X and Y (once when they are the same object)."""
    sx = _Source(X, client)
    if Y is X:
        return sx, sx
    return sx, _Source(Y, client if client is not None else sx.client)


def _graph(name: str, dsk: Dict[Any, Any], sources: Iterable[_Source]) -> HighLevelGraph:
    """One graph layer of tasks over the collections' keys."""
    deps: List[Any] = []
    for s in sources:
        if all(s.ref is not d for d in deps):
            deps.append(s.ref)
    return HighLevelGraph.from_collections(name, dsk, dependencies=deps)


# ---- arguments -----------------------------------------------------------


def _settings(window: Any, backend: Any, threads: Any, devices: Any) -> _tasks.Settings:
    """What every task carries: validated here, so that a mistake fails at
    the call rather than on the workers."""
    backend, threads, devices = _tasks.check_settings(backend, threads, devices)
    if window is not None:
        make_options(window, "cpu")  # checks the window (a < b, numbers)
        window = (float(window[0]), float(window[1]))
    return (window, backend, threads, devices)


def _total_threads(client: Any) -> int:
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # a client that cannot answer: assume one machine
            pass
    import os

    return max(1, os.cpu_count() or 1)


def _side_for_tiles(rows: int, cols: int, tiles: int, triangle: bool) -> int:
    """The tile side that cuts the plane into about `tiles` tiles: the
    triangle's nb (nb + 1) / 2 tiles of side rows / nb, or a rectangle's
    squares."""
    if triangle:
        nb = math.ceil((math.sqrt(8 * tiles + 1) - 1) / 2)
        return math.ceil(rows / max(nb, 1))
    return math.ceil(math.sqrt(rows * cols / tiles))


def _auto_side(rows: int, cols: int, threads: int, triangle: bool) -> int:
    """About _AUTO_TILES_PER_THREAD tiles per worker thread, sides within
    [_AUTO_MIN_SIDE, _AUTO_MAX_SIDE]."""
    side = _side_for_tiles(rows, cols, _AUTO_TILES_PER_THREAD * threads, triangle)
    return max(1, min(max(side, _AUTO_MIN_SIDE), _AUTO_MAX_SIDE))


def _gpu_workers(client: Any, settings: _tasks.Settings) -> Dict[Any, int]:
    """The GPUs the workers' libmpcf would compute knn tiles on, per worker
    address (asked of each, with its own settings; workers without any left
    out). Without a client: {None: this process's GPUs}. Empty where there
    are none, or where the workers cannot say."""
    if client is None:
        gpus = _tasks.gpus_used(settings)
        return {None: gpus} if gpus > 0 else {}
    try:
        answers = client.run(_tasks.gpus_used, settings)
    except Exception:  # workers that cannot answer: tile as for CPUs
        return {}
    return {worker: int(c) for worker, c in answers.items() if int(c) > 0}


def _band_workers(gpu_workers: Dict[Any, int]) -> List[Any]:
    """The worker of each band, in order: a worker of g GPUs takes g bands
    (each computed on all its GPUs); none without a cluster."""
    if None in gpu_workers:
        return []
    return [worker for worker, gpus in sorted(gpu_workers.items()) for _ in range(gpus)]


def _gpu_bands(n: int, bands: int, triangle: bool) -> Tuple[int, ...]:
    """Row block sizes of knn on GPU workers: `bands` blocks of equal work,
    one libmpcf task each. Of the lower triangle (triangle), rows 0..b-1
    hold b (b - 1) / 2 pairs, so the bounds are n sqrt(w / bands); else
    equal blocks. Fewer blocks where n is too small for that many."""
    bands = max(1, min(bands, n))
    if triangle:
        bounds = [round(n * math.sqrt(w / bands)) for w in range(bands + 1)]
    else:
        bounds = [round(n * w / bands) for w in range(bands + 1)]
    bounds[-1] = n
    sizes = [b - a for a, b in zip(bounds, bounds[1:])]
    return tuple(s for s in sizes if s > 0)


def _chunks_1d(chunks: Any, n: int, side: int, what: str) -> Tuple[int, ...]:
    """Row (or column) chunk sizes: an int side, a sequence of sizes summing
    to n, or "auto" (side)."""
    if isinstance(chunks, str):
        if chunks != "auto":
            raise ValueError(f"{what} must be 'auto', an int or a sequence of ints, not {chunks!r}")
        chunks = side
    if isinstance(chunks, (bool, np.bool_)):
        raise TypeError(f"{what} must be 'auto', an int or a sequence of ints, not a bool")
    if isinstance(chunks, numbers.Integral):
        c = int(chunks)
        if c < 1:
            raise ValueError(f"{what} = {c}; a tile needs at least 1 row")
        return tuple([c] * (n // c) + ([n % c] if n % c else []))
    try:
        sizes = tuple(chunks)
    except TypeError:
        raise TypeError(f"{what} must be 'auto', an int or a sequence of ints, not {chunks!r}") from None
    for k, c in enumerate(sizes):
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral) or int(c) < 1:
            raise ValueError(f"{what}[{k}] = {c!r}; chunk sizes must be integers >= 1")
    sizes = tuple(int(c) for c in sizes)
    if sum(sizes) != n:
        raise ValueError(f"{what} {sizes} add up to {sum(sizes)} but there are {n} PCFs")
    return sizes


def _chunks_2d(chunks: Any, rows: int, cols: int, threads: int, side: Any = None,
               col_side: Any = None) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """Chunks of a cross computation: "auto" or an int for both axes, or a
    pair (rows, columns), each "auto", an int or a sequence of sizes. "auto"
    is `side` (and `col_side` for the columns, if given) where given, else
    the CPU rule (_auto_side)."""
    if side is None:
        side = _auto_side(rows, cols, threads, triangle=False)
    if col_side is None:
        col_side = side
    if isinstance(chunks, (tuple, list)):
        if len(chunks) != 2:
            raise ValueError(
                f"chunks {tuple(chunks)!r}: a cross computation takes 'auto', an int, or a pair "
                "(rows, columns) of those or of sequences of sizes")
        row_spec, col_spec = chunks
    else:
        row_spec = col_spec = chunks
    return (_chunks_1d(row_spec, rows, side, "chunks (rows)"),
            _chunks_1d(col_spec, cols, col_side, "chunks (columns)"))


def _bounds(sizes: Sequence[int]) -> List[Tuple[int, int]]:
    out, start = [], 0
    for s in sizes:
        out.append((start, start + s))
        start += s
    return out


def _array(name: str, dsk: Dict[Any, Any], sources: Iterable[_Source], chunks: Any, dtype: np.dtype) -> Any:
    return da.Array(_graph(name, dsk, sources), name, chunks=chunks, dtype=dtype)


# ---- distance matrices ---------------------------------------------------


def pdist(
    X: Any,
    p: float = 1,
    *,
    chunks: ChunksLike = "auto",
    window: Optional[Sequence[float]] = None,
    client: Any = None,
    backend: Optional[str] = None,
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    components: bool = False,
) -> Any:
    """The Lp distances between all pairs of X as a lazy, square
    ``dask.array`` of shape (n, n), computed tile by tile on the workers.

    The result is the square (symmetric, zero-diagonal) matrix, not SciPy's
    condensed vector: a dask.array's blocks are rectangles of the matrix.
    Its values are the bits of ``mpcf.pdist(X, p, layout="square")``. Tiles
    on the diagonal are one libmpcf pdist each (every pair once), tiles
    below it one cdist each, tiles above it the transposes of those below
    (nothing is computed twice).

    Parameters
    ----------
    X : PcfCollection, anything it accepts, or a :class:`ScatteredPcfs`
        n PCFs (a tensor shape is flattened row-major). Scattered to every
        worker once, at this call, unless it is a ScatteredPcfs already.
    p : float
        p >= 1 or inf.
    chunks : "auto", int or sequence of ints
        Rows (and columns) per tile: one side, or the sizes of the row
        blocks (summing to n). "auto": about 4 tiles per worker thread,
        sides between 256 and 4096.
    window : (a, b), optional
        Integrate over [a, b) only, as in :func:`mpcf.pdist`.
    client : distributed.Client, optional
        The cluster (default: Dask's current client). Without any client the
        array computes on Dask's local scheduler, the collection held once
        by the graph.
    backend, threads, devices : optional
        libmpcf's settings for every task (None: each worker's own, see
        :class:`WorkerOptions`; then backend "auto", 1 thread per task, all
        devices).
    components : bool
        As in :func:`mpcf.pdist`: X of shape ``(*S, K)`` holds ``prod(S)``
        objects of K functions, and n counts objects (tiles cut between
        objects). X may be a :class:`ScatteredPcfs` of such a collection
        (scattered as it is; each task views its slice as objects on the
        worker).

    Returns
    -------
    dask.array.Array
        Shape (n, n), X's dtype, chunks ``(chunks, chunks)``. Compute it
        (``.compute()``, ``client.compute``), slice it, reduce it, or store
        it (:func:`to_zarr`).

    Examples
    --------
    >>> import mpcf, mpcf.dask
    >>> X = [[(0, 3), (1, 0)], [(0, 1), (2, 0)], [(0, 10), (2, 5), (3, 0)]]
    >>> D = mpcf.dask.pdist(X, chunks=2)       # a dask.array; no client: local scheduler
    >>> D.chunks
    ((2, 1), (2, 1))
    >>> D.compute()
    array([[ 0.,  3., 22.],
           [ 3.,  0., 23.],
           [22., 23.,  0.]])
    """
    p = checked_exponent(p)
    settings = _settings(window, backend, threads, devices)
    X = _input(X, np.float64, components)
    n = X.size
    client = _client_for(X, client)
    side = _auto_side(n, n, _total_threads(client), triangle=True)
    sizes = _chunks_1d(chunks, n, side, "chunks")
    if n == 0:
        return da.zeros((0, 0), dtype=X.dtype)
    src = _Source(X, client)
    bounds = _bounds(sizes)
    name = "mpcf-pdist-" + tokenize(src.token, p, settings, sizes)
    dsk: Dict[Any, Any] = {}
    for I, (i0, i1) in enumerate(bounds):
        for J, (j0, j1) in enumerate(bounds):
            if I == J:
                dsk[(name, I, J)] = (_tasks.pdist_tile, src.arg, i0, i1, p, settings)
            elif I > J:
                dsk[(name, I, J)] = (_tasks.cdist_tile, src.arg, i0, i1, src.arg, j0, j1, p, settings)
            else:
                dsk[(name, I, J)] = (np.transpose, (name, J, I))
    return _array(name, dsk, [src], (sizes, sizes), src.dtype)


def cdist(
    X: Any,
    Y: Any,
    p: float = 1,
    *,
    chunks: ChunksLike = "auto",
    window: Optional[Sequence[float]] = None,
    client: Any = None,
    backend: Optional[str] = None,
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    components: bool = False,
) -> Any:
    """The Lp distances between every PCF of X and every PCF of Y as a lazy
    ``dask.array`` of shape (X.size, Y.size) (tensor shapes flattened
    row-major), each tile one libmpcf cdist of two slices on a worker. The
    values are the bits of ``mpcf.cdist(X, Y, p)``.

    Parameters
    ----------
    X, Y : PcfCollection, anything it accepts, or :class:`ScatteredPcfs`
        Of one dtype. Each is scattered to every worker once.
    chunks : "auto", int, or a pair (rows, columns)
        Tile sides: "auto" or an int for both axes, or a pair whose entries
        ("auto", an int, or a sequence of block sizes) give the rows (X) and
        the columns (Y). "auto": about 4 tiles per worker thread, sides
        between 256 and 4096.
    p, window, client, backend, threads, devices, components
        As in :func:`pdist` (with components, the shape counts objects).

    Examples
    --------
    >>> import mpcf, mpcf.dask
    >>> f, g, h = [(0, 3), (1, 0)], [(0, 1), (2, 0)], [(0, 10), (2, 5), (3, 0)]
    >>> mpcf.dask.cdist([f, g], [g, h, f], chunks=(1, 2)).compute()
    array([[ 3., 22.,  0.],
           [ 0., 23.,  3.]])
    """
    p = checked_exponent(p)
    settings = _settings(window, backend, threads, devices)
    X, Y = _inputs(X, Y, components)
    client = _client_for(X, client)
    row_sizes, col_sizes = _chunks_2d(chunks, X.size, Y.size, _total_threads(client))
    if X.size == 0 or Y.size == 0:
        return da.zeros((X.size, Y.size), dtype=X.dtype)
    sx, sy = _sources(X, Y, client)
    name = "mpcf-cdist-" + tokenize(sx.token, sy.token, p, settings, row_sizes, col_sizes)
    dsk: Dict[Any, Any] = {}
    for I, (i0, i1) in enumerate(_bounds(row_sizes)):
        for J, (j0, j1) in enumerate(_bounds(col_sizes)):
            dsk[(name, I, J)] = (_tasks.cdist_tile, sx.arg, i0, i1, sy.arg, j0, j1, p, settings)
    return _array(name, dsk, [sx, sy], (row_sizes, col_sizes), sx.dtype)


# ---- nearest neighbours --------------------------------------------------


def knn(
    X: Any,
    k: int,
    Y: Any = None,
    *,
    p: float = 1,
    chunks: ChunksLike = "auto",
    split_every: int = 8,
    window: Optional[Sequence[float]] = None,
    client: Any = None,
    backend: Optional[str] = None,
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    components: bool = False,
) -> Tuple[np.ndarray, np.ndarray]:
    """The k nearest neighbours of every PCF of X, computed on the cluster:
    ``(distances, indices)`` as NumPy arrays, the bits of ``mpcf.knn(X, k,
    Y, p=p)``.

    Without Y the neighbours are the other PCFs of X: tiles on the diagonal
    are one libmpcf knn each; a tile below the diagonal is one libmpcf knn
    both ways (mpcf_knn_both: the lists of its rows among its columns and
    of its columns among its rows from one pass, every pair computed once
    as in the single-process call, the k smallest picked where they are
    computed, on a GPU on the device); a band of rows (GPU workers, "auto")
    is both: its square on the diagonal and the band against the rows
    above it. With Y, every tile is one libmpcf
    knn of a slice of X among a slice of Y. The lists of a row block
    are merged on the workers by a tree of merges (``split_every`` lists per
    merge, two at a time by libmpcf's mpcf_knn_merge); the client receives
    O(n k) numbers. Neighbours are ascending by
    (distance, index), equal distances going to the smaller index and inf
    last, so the result does not depend on the tiling or the merge order.

    Parameters
    ----------
    X, Y : PcfCollection, anything it accepts, or :class:`ScatteredPcfs`
    k : int
        1 <= k <= X.size - 1 (no Y) or Y.size.
    p : float
        p >= 1 or inf.
    chunks
        Tile sides: as in :func:`pdist` without Y, as in :func:`cdist` with Y;
        but where the workers compute on GPUs (libmpcf on each sees a CUDA
        device and the backend is not "cpu"; asked of every worker when
        chunks has an "auto"), "auto" makes one task per GPU of the
        cluster: g bands of rows of equal work (without Y: rows 0..b-1 hold
        b (b - 1) / 2 pairs, so the bounds are n sqrt(w / g); with Y: equal
        bands, each against all of Y).
    split_every : int
        Lists merged by one task of the tree (>= 2).
    window, client, backend, threads, devices, components
        As in :func:`pdist` (with components, shapes and indices count
        objects).

    Returns
    -------
    (distances, indices) : numpy.ndarray, shapes ``X.shape + (k,)``
        distances of X's dtype, indices int64 (flat indices of X's or Y's
        shape).

    Examples
    --------
    >>> import mpcf, mpcf.dask
    >>> X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 4), (1, 0)], [(0, 1), (1, 0)]]
    >>> d, i = mpcf.dask.knn(X, 2, chunks=2)
    >>> i
    array([[3, 1],
           [0, 3],
           [1, 0],
           [0, 1]])
    """
    k = count(k, "k")
    if isinstance(split_every, (bool, np.bool_)) or not isinstance(split_every, numbers.Integral) \
            or split_every < 2:
        raise ValueError(f"split_every = {split_every!r}; a merge takes at least 2 lists")
    p = checked_exponent(p)
    settings = _settings(window, backend, threads, devices)
    if Y is None:
        X = Yc = _input(X, np.float64, components)
    else:
        X, Yc = _inputs(X, Y, components)
    # The tiles check k against themselves; the whole is checked here, by
    # libmpcf's rule, before anything is sent to the cluster.
    check(swig.mpcf_knn_check(X.size, Yc.size if Y is not None else -1, int(bool(components)),
                              p, k))
    client = _client_for(X, client)
    threads_total = _total_threads(client)
    # "auto" anywhere in chunks: GPU-sized tiles where the workers would
    # compute them on GPUs (asked of the workers only then).
    wants_auto = isinstance(chunks, str) or (isinstance(chunks, (tuple, list)) and any(
        isinstance(c, str) for c in chunks))
    gpu_workers = _gpu_workers(client, settings) if wants_auto else {}
    gpus = sum(gpu_workers.values())
    # GPU workers and "auto": one task per GPU of the cluster, each a band
    # of rows of equal work (a band's rows against all columns, or of the
    # triangle against the rows above them), so that each GPU uploads the
    # collection and plans its blocks about once per call.
    bands = gpus > 0 and isinstance(chunks, str)
    if Y is None:
        side = (_gpu_bands(X.size, gpus, True) if gpus
                else _auto_side(X.size, X.size, threads_total, triangle=True))
        row_sizes = col_sizes = _chunks_1d(chunks, X.size, side, "chunks")
    elif gpus:
        # "auto" of X: the bands; of Y: all of it (a band's lists are whole).
        row_sizes, col_sizes = _chunks_2d(chunks, X.size, Yc.size, threads_total,
                                          _gpu_bands(X.size, gpus, False), (Yc.size,))
    else:
        row_sizes, col_sizes = _chunks_2d(chunks, X.size, Yc.size, threads_total)
    sx, sy = _sources(X, Yc, client)
    rows, cols = _bounds(row_sizes), _bounds(col_sizes)
    name = "mpcf-knn-" + tokenize(sx.token, sy.token, Y is None, k, p, settings, row_sizes, col_sizes,
                                  split_every, bands)
    dsk: Dict[Any, Any] = {}
    parts: List[List[Tuple[Any, Any]]] = [[] for _ in rows]  # (key, pick) per row block
    # The bands go one to a GPU (Dask would otherwise start two on one
    # worker and leave the other idle until it steals one).
    slots = _band_workers(gpu_workers) if bands else []
    pins: Dict[Any, List[Any]] = {}
    for I, (i0, i1) in enumerate(rows):
        if Y is None and bands:
            key = (name + "-band", I)
            dsk[key] = (_tasks.knn_band, sx.arg, i0, i1, k, p, settings)
            if I < len(slots):
                pins[key] = [slots[I]]
            parts[I].append((key, 0))
            for J, (j0, j1) in enumerate(rows[:I]):
                parts[J].append((key, (1, j0, j1)))
            continue
        for J, (j0, j1) in enumerate(cols):
            key = (name + "-tile", I, J)
            if Y is not None:
                dsk[key] = (_tasks.knn_cross, sx.arg, i0, i1, sy.arg, j0, j1, k, p, settings)
                if len(cols) == 1 and len(rows) == len(slots):
                    pins[key] = [slots[I]]
                parts[I].append((key, -1))
            elif I == J:
                if i1 - i0 > 1:
                    dsk[key] = (_tasks.knn_diagonal, sx.arg, i0, i1, k, p, settings)
                    parts[I].append((key, -1))
            elif I > J:
                dsk[key] = (_tasks.knn_below_diagonal, sx.arg, i0, i1, j0, j1, k, p, settings)
                parts[I].append((key, 0))
                parts[J].append((key, 1))
    results = []
    for I, row_parts in enumerate(parts):
        level = 0
        while len(row_parts) > 1 or level == 0:
            merged = []
            for s in range(0, len(row_parts), split_every):
                group = row_parts[s : s + split_every]
                key = (name + "-merge", I, level, s)
                dsk[key] = (_tasks.merge_parts, k, [g[0] for g in group], [g[1] for g in group])
                merged.append((key, -1))
            row_parts = merged
            level += 1
        results.append(row_parts[0][0])
    with (dask.annotate(workers=pins.get, allow_other_workers=True) if pins
          else contextlib.nullcontext()):
        graph = _graph(name, dsk, [sx, sy])
    lists = [Delayed(key, graph, layer=name) for key in results]
    target = sx.client
    if target is not None:
        computed = target.gather(target.compute(lists))
    else:
        computed = dask.compute(*lists)
    distances = np.concatenate([c[0] for c in computed], axis=0)
    indices = np.concatenate([c[1] for c in computed], axis=0)
    return distances.reshape(sx.shape + (k,)), indices.reshape(sx.shape + (k,))


# ---- storing --------------------------------------------------------------


def to_zarr(D: Any, url: Any, component: Optional[str] = None, *, overwrite: bool = False,
            compute: bool = True, **kwargs: Any) -> Any:
    """Writes a distance matrix of :func:`pdist` or :func:`cdist` (any
    dask.array) to a Zarr array through ``dask.array.to_zarr``: every worker
    writes the tiles it computed, so the matrix never passes through the
    client. Needs the ``zarr`` package.

    Zarr chunks are regular; a matrix tiled with unequal chunks is first
    rechunked to its largest chunk size.

    Parameters
    ----------
    D : dask.array.Array
    url : str, zarr store or zarr.Array
        Where to write (a path, a URL with a protocol, a store).
    component : str, optional
        The array's path inside a Zarr group.
    overwrite : bool
        Replace an existing array (else writing over one fails).
    compute : bool
        Write now (True; on the cluster that holds D's collection), or return
        the delayed write (a ``dask.delayed`` object) to compute later.
    **kwargs
        Passed to ``dask.array.to_zarr`` (e.g. ``storage_options``).

    Examples
    --------
    >>> import mpcf.dask, zarr                               # doctest: +SKIP
    >>> mpcf.dask.to_zarr(mpcf.dask.pdist(X, chunks=4096), "D.zarr")  # doctest: +SKIP
    >>> zarr.open_array("D.zarr")[:10, :10]                  # doctest: +SKIP
    """
    try:
        import zarr  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"mpcf.dask.to_zarr needs zarr ({exc}); pip install zarr") from exc
    if not isinstance(D, da.Array):
        raise TypeError(f"D must be a dask.array (from mpcf.dask.pdist or cdist), not {type(D).__name__}")
    regular = tuple(max(c) if c else 1 for c in D.chunks)
    if any(len(set(c[:-1])) > 1 or (c and c[-1] > c[0]) for c in D.chunks):
        D = D.rechunk(regular)
    import inspect

    if overwrite:
        if "mode" in inspect.signature(da.to_zarr).parameters:
            kwargs.setdefault("mode", "w")
        else:  # Dask before the mode= argument
            kwargs.setdefault("overwrite", True)
    store = da.to_zarr(D, url, component=component, compute=False, **kwargs)
    if not compute:
        return store
    # The cluster that holds D's collection runs the write, whether or not
    # its client is Dask's current one.
    client = _client_of(D)
    if client is not None:
        client.compute(store).result()
    else:
        store.compute()
    return None


def _client_of(collection: Any) -> Any:
    """The client of the futures (the scattered collections) a Dask
    collection's graph refers to, or None."""
    try:
        from distributed import futures_of
    except ImportError:
        return None
    futures = futures_of(collection)
    return futures[0].client if futures else None


# ---- per-worker settings ---------------------------------------------------

try:
    from distributed import WorkerPlugin as _WorkerPluginBase
except ImportError:  # pragma: no cover - dask without distributed
    _WorkerPluginBase = object  # type: ignore[misc,assignment]


class WorkerOptions(_WorkerPluginBase):  # type: ignore[misc,valid-type]
    """libmpcf settings of the workers, registered on a cluster with
    ``client.register_plugin(mpcf.dask.WorkerOptions(backend="cuda"))``.
    They apply to every task that does not set them in its call, on every
    worker of the cluster, also on workers that join or restart later.

    Settings that differ from worker to worker (e.g. the GPUs of each) come
    from the workers' own Dask configuration instead, section ``mpcf``:
    environment variables ``DASK_MPCF__BACKEND=cuda``,
    ``DASK_MPCF__THREADS=8``, ``DASK_MPCF__DEVICES="[0, 1]"`` in the worker's
    environment (a job script, a container). The plugin's values win over
    the configuration; a call's arguments win over both.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}, optional
    threads : int, optional
        CPU threads of each libmpcf call (0: all hardware threads).
    devices : sequence of int, optional
        CUDA device ids.
    """

    name = _tasks.PLUGIN_NAME

    def __init__(self, backend: Optional[str] = None, threads: Optional[int] = None,
                 devices: Optional[Iterable[int]] = None) -> None:
        backend, threads, devices = _tasks.check_settings(backend, threads, devices)
        self.settings = {"backend": backend, "threads": threads, "devices": devices}

    def setup(self, worker: Any) -> None:  # the settings are read by each task
        pass

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.settings.items() if v is not None)
        return f"WorkerOptions({given})"
