"""Distances and kernels between PCF collections.

Each matrix operation allocates its NumPy result once and lets libmpcf write
into it directly. The computation runs as a libmpcf task; this module polls
it every 0.1 s with the GIL released, so other Python threads keep running,
a progress bar can be drawn and Ctrl-C (KeyboardInterrupt) cancels the task.
The task is always finished (cancelled and waited for) before the result
buffer can be released.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple

import numpy as np

from . import _lib, _result_pool
from ._collection import as_collection, object_view, single_pcf
from ._lib import address, check, exponent, make_options, swig
from ._progress import make_bar

PcfsLike = Any  # a PcfCollection or anything PcfCollection() accepts

_POLL_SECONDS = 0.1

_PDIST_LAYOUTS = {
    "condensed": swig.MPCF_LAYOUT_CONDENSED,
    "square": swig.MPCF_LAYOUT_DENSE,
    "packed_lower": swig.MPCF_LAYOUT_PACKED_LOWER,
}
_KERNEL_LAYOUTS = {
    "square": swig.MPCF_LAYOUT_DENSE,
    "packed_lower": swig.MPCF_LAYOUT_PACKED_LOWER,
}


def _physical_memory_bytes() -> Optional[int]:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _empty(shape: Any, dtype: Any) -> np.ndarray:
    """np.empty, refusing results larger than the machine's physical memory,
    and taking large results from the pool of already-written memory
    (_result_pool.py).

    Where the kernel overcommits memory, np.empty of a huge size succeeds and
    the process is killed later, while the result is being written; a clear
    MemoryError up front is what the caller can act on.
    """
    count = int(np.prod(shape, dtype=np.float64)) if np.ndim(shape) else int(shape)
    need = count * np.dtype(dtype).itemsize
    have = _physical_memory_bytes()
    if have is not None and need > have:
        raise MemoryError(
            f"the result needs {need / 2**30:.1f} GiB ({count} elements of {np.dtype(dtype).name}) "
            f"but this machine has {have / 2**30:.1f} GiB of memory"
        )
    return _result_pool.empty(shape, dtype)


def _output(out: Any, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The caller's `out` (checked: a writable C-contiguous ndarray, np.memmap
    included, of the result's dtype and size), or a new array of `shape`."""
    count = int(np.prod(shape, dtype=np.float64))
    if out is None:
        return _empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array (np.memmap included), not {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"out has dtype {out.dtype} but the result is {np.dtype(dtype).name}")
    if out.size != count:
        raise ValueError(f"out has {out.size} elements (shape {out.shape}) but the result has "
                         f"{count} (shape {shape})")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def _layout(layout: Any, allowed: dict) -> int:
    if not isinstance(layout, str) or layout not in allowed:
        names = ", ".join(repr(k) for k in allowed)
        raise ValueError(f"layout must be one of {names}, not {layout!r}")
    return allowed[layout]


_BACKENDS = {swig.MPCF_BACKEND_CPU: "cpu", swig.MPCF_BACKEND_CUDA: "cuda"}
_REASONS = {
    swig.MPCF_REASON_REQUESTED: "requested",
    swig.MPCF_REASON_AUTO_THRESHOLD_MET: "auto: at least the CUDA threshold of merge steps",
    swig.MPCF_REASON_AUTO_BELOW_THRESHOLD: "auto: below the CUDA threshold",
    swig.MPCF_REASON_AUTO_NO_CUDA_BUILD: "auto: libmpcf was built without CUDA",
    swig.MPCF_REASON_AUTO_NO_DEVICE: "auto: no CUDA device",
    swig.MPCF_REASON_CPU_ONLY: "computed on the CPU only",
}
_last = threading.local()  # .info: the last computation's, per thread


def _account(raw: Dict[str, Any]) -> Dict[str, Any]:
    """libmpcf's account of a computation (mpcf_task_info) in Python's terms."""
    return {
        "backend": _BACKENDS.get(raw["backend"], str(raw["backend"])),
        "reason": _REASONS.get(raw["reason"], str(raw["reason"])),
        "threads": raw["threads"],
        "devices": raw["devices"],
        "merge_steps": raw["merge_steps"],
        "seconds": raw["seconds"],
    }


def _remember(raw: Dict[str, Any]) -> None:
    """Keeps libmpcf's account of a finished computation (mpcf_task_info)."""
    _last.info = _account(raw)


def last_task_info() -> Optional[Dict[str, Any]]:
    """What libmpcf reports about the last computation that succeeded on
    this thread (``pdist``, ``cdist``, ``l2_kernel``, ``knn``,
    ``kneighbors_graph``, ``kernel_matvec``, ``lp_distance``,
    ``l2_inner_product``, ``lp_norm``), or None before the first.

    Returns
    -------
    dict or None
        ``backend`` ("cpu" or "cuda"), ``reason`` (why that backend, e.g.
        "auto: below the CUDA threshold"), ``threads`` (CPU worker threads;
        0 on CUDA), ``devices`` (the CUDA device ids, a tuple), ``merge_steps``
        (the work: the sum over the computed pairs of the breakpoints of both
        functions) and ``seconds`` (the computation's wall-clock time).

    Examples
    --------
    >>> import mpcf
    >>> d = mpcf.pdist([[(0, 1), (1, 0)], [(0, 2), (1, 0)]], backend="cpu", threads=1)
    >>> info = mpcf.last_task_info()
    >>> info["backend"], info["threads"], info["merge_steps"]    # one pair: 2 + 2
    ('cpu', 1, 4.0)
    """
    info = getattr(_last, "info", None)
    return dict(info) if info is not None else None


def _run_task(start: Callable[[], Any], progress: bool, desc: str) -> None:
    """Starts a task with `start()` and polls it to the end.

    The caller keeps the output array referenced for the whole call. On any
    exception (KeyboardInterrupt included) the task is cancelled, waited
    for and destroyed (its thread joined) before the exception propagates,
    so nothing writes into the output or runs after this returns or raises. Should an exception arrive between the C
    call and the assignment below, the dropped task object itself cancels
    and waits for the task (its destructor), still while the caller's output
    is alive.
    """
    bar = make_bar(progress, desc)
    task = None
    try:
        task = check(start())
        while True:
            status = swig.mpcf_task_wait(task, _POLL_SECONDS)
            if status != swig.MPCF_RUNNING:
                break
            if bar is not None:
                bar.update(*check(swig.mpcf_task_progress(task)))
        if status != swig.MPCF_OK:
            raise _lib.error_for(status)
        _remember(check(swig.mpcf_task_info_get(task)))
        if bar is not None:
            bar.update(*check(swig.mpcf_task_progress(task)))
    except BaseException:
        if task is not None:
            swig.mpcf_task_cancel(task)
            swig.mpcf_task_wait(task, -1.0)
            # Destroyed now (its thread joined), not when the traceback that
            # holds this frame is dropped: after the raise nothing of the
            # task is left, whoever keeps the exception.
            task = None
        raise
    finally:
        if bar is not None:
            bar.close()


def pdist(
    X: PcfsLike,
    p: float = 1,
    *,
    window: Optional[Sequence[float]] = None,
    layout: str = "condensed",
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    progress: bool = False,
    out: Optional[np.ndarray] = None,
    components: bool = False,
) -> np.ndarray:
    r"""Lp distances between all pairs of PCFs (or PLFs) of X.

    .. math::

        d_p(f, g) = \Big(\int_a^b |f(t) - g(t)|^p \, dt\Big)^{1/p},
        \qquad d_\infty(f, g) = \sup_{a \le t < b} |f(t) - g(t)|

    over the window [a, b) (default the whole real line). A piece where
    f - g is exactly 0 contributes exactly 0, however long; a non-zero
    difference on an unbounded piece gives ``inf``.

    Parameters
    ----------
    X : PcfCollection or anything it accepts (list of (m, 2) arrays, ...)
        n PCFs (a tensor shape is flattened row-major).
    p : float
        p >= 1, or ``numpy.inf`` for the supremum distance.
    window : (a, b), optional
        Integrate over [a, b) only; a < b, a may be -inf, b may be inf. For
        float32 data a and b are rounded to float32.
    layout : {"condensed", "square", "packed_lower"}
        "condensed": SciPy's condensed vector of the n(n-1)/2 pairs (0,1),
        (0,2), ..., (1,2), ... (``scipy.spatial.distance.squareform``
        turns it into the square matrix); "square": the symmetric n x n
        matrix with zero diagonal; "packed_lower": the lower triangle,
        entry (i, j), i > j, at i(i-1)/2 + j.
    backend : {"auto", "cpu", "cuda"}
        "auto" uses CUDA when libmpcf has it, a device is present and the
        problem is large; "cuda" fails when CUDA is unavailable.
    threads : int, optional
        CPU worker threads (None or 0: all hardware threads).
    devices : sequence of int, optional
        CUDA device ids to use (None: all).
    progress : bool
        Show a progress bar (tqdm if installed, else a text bar on stderr).
    out : numpy.ndarray, optional
        Where to write the result: a writable C-contiguous array of X's dtype
        with the result's number of elements (any shape), an ``np.memmap``
        included, so a result larger than memory goes straight to a file.
    components : bool
        True: the last axis of X's shape is a component axis. X of shape
        ``(*S, K)`` holds ``prod(S)`` objects of K functions each (a
        landscape's K levels, Betti curves of several dimensions), and the
        distance of two objects is
        :math:`(\sum_k d_p(x_k, y_k)^p)^{1/p}` (for p = inf the largest
        component distance), computed in one pass; n is then the number of
        objects. Needs ``X.ndim >= 2``. Computed on the CPU.

    Returns
    -------
    numpy.ndarray
        Of X's dtype, shape (n(n-1)/2,) or (n, n) (``out`` itself when
        given); written in place by libmpcf.

    Raises
    ------
    ValueError
        p < 1 or NaN, a bad window, layout, backend or thread count (as
        :class:`mpcf.InvalidArgumentError` when libmpcf reports it), invalid
        PCFs (:class:`mpcf.InvalidPcfError`).
    TypeError
        Input that is not float32/float64 PCF data, p not a number.
    mpcf.CudaUnavailableError
        backend="cuda" without CUDA, or a listed device that does not exist.
    MemoryError
        The result or the working memory could not be allocated.
    KeyboardInterrupt
        Ctrl-C: the computation is cancelled.

    Examples
    --------
    >>> import mpcf
    >>> f = [(0, 3), (1, 0)]               # 3 on [0, 1), 0 after
    >>> g = [(0, 1), (2, 0)]               # 1 on [0, 2), 0 after
    >>> h = [(0, 10), (2, 5), (3, 0)]
    >>> mpcf.pdist([f, g, h])              # pairs (f,g), (f,h), (g,h)
    array([ 3., 22., 23.])
    >>> mpcf.pdist([f, g], p=float("inf"), layout="square")
    array([[0., 2.],
           [2., 0.]])
    >>> mpcf.pdist([f, g], window=(0, 1))
    array([2.])

    Objects of two functions each (``components=True``): the distance of
    (f, g) and (g, h) is d(f, g) + d(g, h) for p = 1.

    >>> mpcf.pdist([[f, g], [g, h]], components=True)
    array([26.])
    """
    X = object_view(as_collection(X), components)
    p = exponent(p)
    c_layout = _layout(layout, _PDIST_LAYOUTS)
    options = make_options(window, backend, threads, devices)
    size = check(swig.mpcf_pdist_size(X._handle, c_layout))
    given = out is not None
    out = _output(out, (size,), X.dtype)
    _run_task(
        lambda: swig.mpcf_pdist_start(X._handle, p, c_layout, address(out), size, options),
        progress,
        "pdist",
    )
    if given:
        return out
    if layout == "square":
        return out.reshape(X.size, X.size)
    return out


def cdist(
    X: PcfsLike,
    Y: PcfsLike,
    p: float = 1,
    *,
    window: Optional[Sequence[float]] = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    progress: bool = False,
    out: Optional[np.ndarray] = None,
    components: bool = False,
) -> np.ndarray:
    r"""Lp distances between every PCF of X and every PCF of Y (or PLFs).

    ``out[i..., j...] = d_p(X[i...], Y[j...])`` with d_p as in
    :func:`pdist`: (integral over [a, b) of |f - g|^p)^(1/p), or the
    supremum of |f - g| for p = inf.

    Parameters
    ----------
    X, Y : PcfCollection or anything it accepts, of any tensor shape
        Both of one dtype and one function type (PCF or PLF); plain Python
        numbers in Y take X's dtype, and plain data in Y X's function type.
    p, window, backend, threads, devices, progress, out
        As in :func:`pdist`.
    components : bool
        As in :func:`pdist`, for both X and Y (of shapes ``(*S_X, K)`` and
        ``(*S_Y, K)``, one K).

    Returns
    -------
    numpy.ndarray
        Shape ``X.shape + Y.shape`` (or ``out``), X's dtype, written in place
        by libmpcf; with ``components=True``, ``S_X + S_Y``.

    Raises
    ------
    mpcf.DtypeMismatchError
        X and Y have different dtypes (a TypeError and a ValueError).
    ValueError, TypeError, mpcf.CudaUnavailableError, MemoryError, KeyboardInterrupt
        As in :func:`pdist`.

    Examples
    --------
    >>> import mpcf
    >>> f = [(0, 3), (1, 0)]
    >>> g = [(0, 1), (2, 0)]
    >>> D = mpcf.cdist([f, g], [[f], [g], [f]])
    >>> D.shape
    (2, 3, 1)
    >>> D[:, :, 0]
    array([[0., 3., 0.],
           [3., 0., 3.]])
    >>> mpcf.cdist([[f, g]], [[f, f], [g, g]], components=True)   # objects (f, g) vs 2 others
    array([[3., 3.]])
    """
    return _cross(X, Y, swig.MPCF_METRIC_LP_DISTANCE, exponent(p), window, backend, threads,
                  devices, progress, "cdist", out, components)


def _cross(X, Y, metric, p, window, backend, threads, devices, progress, desc,
           out=None, components=False) -> np.ndarray:
    X = as_collection(X)
    Y = as_collection(Y, None, X.dtype, type(X))
    X = object_view(X, components)
    Y = object_view(Y, components)
    options = make_options(window, backend, threads, devices)
    out = _output(out, X.shape + Y.shape, X.dtype)
    size = out.size
    _run_task(
        lambda: swig.mpcf_cdist_start(X._handle, Y._handle, metric, p, address(out), size, options),
        progress,
        desc,
    )
    return out


def l2_kernel(
    X: PcfsLike,
    Y: Optional[PcfsLike] = None,
    *,
    window: Optional[Sequence[float]] = None,
    layout: str = "square",
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    progress: bool = False,
    components: bool = False,
) -> np.ndarray:
    r"""L2 inner products (the Gram matrix) of PCFs (or PLFs).

    .. math::

        K_{ij} = \langle f_i, f_j \rangle = \int_a^b f_i(t)\, f_j(t) \, dt

    over the window [a, b) (default the whole line). A non-zero product on an
    unbounded piece gives +inf or -inf.

    Parameters
    ----------
    X : PcfCollection or anything it accepts
    Y : optional
        Without Y: the symmetric n x n kernel of X (diagonal included). With
        Y: the cross kernel, of shape ``X.shape + Y.shape``.
    layout : {"square", "packed_lower"}
        For the symmetric kernel: the n x n matrix, or the lower triangle
        with the diagonal, entry (i, j), i >= j, at i(i+1)/2 + j. The cross
        kernel is always "square".
    window, backend, threads, devices, progress
        As in :func:`pdist`.
    components : bool
        As in :func:`pdist`: objects of K functions, whose inner product is
        :math:`\sum_k \langle x_k, y_k \rangle`.

    Returns
    -------
    numpy.ndarray
        Of X's dtype, written in place by libmpcf.

    Raises
    ------
    As :func:`pdist` and :func:`cdist`.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.l2_kernel([[(0, 4), (3, 0)], [(0, 2), (3, 0)]])
    array([[48., 24.],
           [24., 12.]])
    >>> mpcf.l2_kernel([[(0, 4), (3, 0)]], [[(0, 1), (1, 0)]])
    array([[4.]])
    >>> mpcf.l2_kernel([[[(0, 4), (3, 0)], [(0, 1), (1, 0)]]], components=True)   # 48 + 1
    array([[49.]])
    """
    if Y is not None:
        if layout != "square":
            raise ValueError(f"the cross kernel (Y given) has layout 'square' only, not {layout!r}")
        return _cross(X, Y, swig.MPCF_METRIC_L2_KERNEL, 2.0, window, backend, threads, devices,
                      progress, "l2_kernel", None, components)
    X = object_view(as_collection(X), components)
    c_layout = _layout(layout, _KERNEL_LAYOUTS)
    options = make_options(window, backend, threads, devices)
    size = check(swig.mpcf_l2_kernel_size(X._handle, c_layout))
    out = _empty(size, dtype=X.dtype)
    _run_task(
        lambda: swig.mpcf_l2_kernel_start(X._handle, c_layout, address(out), size, options),
        progress,
        "l2_kernel",
    )
    if layout == "square":
        return out.reshape(X.size, X.size)
    return out


def lp_distance(f: Any, g: Any, p: float = 1, *, window: Optional[Sequence[float]] = None) -> float:
    r"""The Lp distance between two PCFs.

    .. math::

        d_p(f, g) = \Big(\int_a^b |f(t) - g(t)|^p \, dt\Big)^{1/p}
        \quad (p = \infty: \ \sup_{a \le t < b} |f(t) - g(t)|)

    Computed on the calling thread in the PCFs' dtype, returned as a float.

    Parameters
    ----------
    f, g : PCF ((m, 2) array or list of (t, v) pairs)
        Of one dtype (plain Python numbers in g take f's dtype).
    p : float
        p >= 1 or inf.
    window : (a, b), optional
        As in :func:`pdist`.

    Raises
    ------
    ValueError
        p < 1, a bad window, f or g not a single valid PCF.
    TypeError, mpcf.DtypeMismatchError
        Non-float data, f and g of different dtypes.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.lp_distance([(0, 10), (2, 5), (3, 0)], [(0, 5), (6, 0)])
    25.0
    >>> round(mpcf.lp_distance([(0, 3), (1, 0)], [(0, 1), (2, 0)], p=2) ** 2, 12)
    5.0
    >>> mpcf.lp_distance([(0, 1)], [(0, 0)])         # 1 for ever vs. 0
    inf
    """
    F = single_pcf(f, "f")
    G = single_pcf(g, "g", F.dtype, type(F))
    options = make_options(window)
    d = float(check(swig.mpcf_lp_distance(F._handle, 0, G._handle, 0, exponent(p), options)))
    _remember(check(swig.mpcf_last_task_info()))
    return d


def l2_inner_product(f: Any, g: Any, *, window: Optional[Sequence[float]] = None) -> float:
    r"""The L2 inner product of two PCFs, :math:`\int_a^b f(t)\,g(t)\,dt`.

    Parameters and errors as in :func:`lp_distance`.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.l2_inner_product([(0, 3), (1, 0)], [(0, 1), (2, 0)])
    3.0
    >>> mpcf.l2_inner_product([(0, 2)], [(0, -1)])   # -2 for ever
    -inf
    """
    F = single_pcf(f, "f")
    G = single_pcf(g, "g", F.dtype, type(F))
    options = make_options(window)
    x = float(check(swig.mpcf_l2_inner_product(F._handle, 0, G._handle, 0, options)))
    _remember(check(swig.mpcf_last_task_info()))
    return x


def lp_norm(X: PcfsLike, p: float = 1, *, window: Optional[Sequence[float]] = None) -> np.ndarray:
    r"""The Lp norm of every PCF of X (its distance to the zero function).

    .. math::

        \|f\|_p = \Big(\int_a^b |f(t)|^p \, dt\Big)^{1/p}
        \quad (p = \infty: \ \sup_{a \le t < b} |f(t)|)

    Parameters
    ----------
    X : PcfCollection or anything it accepts (one PCF gives shape ())
    p : float
        p >= 1 or inf.
    window : (a, b), optional
        As in :func:`pdist`.

    Returns
    -------
    numpy.ndarray
        Shape X.shape, X's dtype.

    Raises
    ------
    As :func:`lp_distance`.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.lp_norm([[(0, 3), (1, 0)], [(0, 1), (2, 0)]])
    array([3., 2.])
    >>> mpcf.lp_norm([[(0, 3), (1, 0)], [(0, 1), (2, 0)]], p=float("inf"))
    array([3., 1.])
    """
    X = as_collection(X)
    p = exponent(p)
    options = make_options(window)
    out = _empty(X.shape, dtype=X.dtype)
    check(swig.mpcf_lp_norm(X._handle, p, address(out), out.size, options))
    _remember(check(swig.mpcf_last_task_info()))
    return out


def build_info() -> str:
    """One line describing the loaded libmpcf: version, CUDA on/off, CUDA
    runtime and architectures, compiler, threads.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.build_info().startswith("libmpcf " + mpcf.__version__)
    True
    """
    return swig.mpcf_build_info()


def has_cuda() -> bool:
    """Whether the loaded libmpcf was built with the CUDA backend.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.has_cuda() in (True, False)
    True
    """
    return bool(swig.mpcf_has_cuda())


def cuda_device_count() -> int:
    """Number of usable CUDA devices (0 without CUDA support, driver or device).

    Examples
    --------
    >>> import mpcf
    >>> mpcf.cuda_device_count() >= 0
    True
    """
    return int(swig.mpcf_cuda_device_count())


def gpu_cached_bytes(device: int = 0) -> int:
    """Bytes of GPU memory that mpcf keeps on ``device`` between computations.

    The device buffers of a CUDA computation are kept when it ends, up to
    :func:`gpu_cache_limit` bytes per device, and handed to the next
    computation on that device instead of being allocated again; the
    planner counts them as free memory. 0 before the device's first
    computation.

    Raises
    ------
    InvalidArgumentError
        ``device`` is negative.
    CudaUnavailableError
        The machine has no such device (or mpcf was built without CUDA).

    Examples
    --------
    >>> import mpcf
    >>> mpcf.cuda_device_count() == 0 or mpcf.gpu_cached_bytes(0) >= 0
    True
    """
    return int(check(swig.mpcf_cuda_cached_bytes(_lib.device_id(device, "device"))))


def gpu_cache_limit() -> int:
    """The most bytes of GPU memory kept per device between computations.

    1 GiB unless the environment variable ``MPCF_CUDA_CACHE_BYTES`` (a byte
    count, read once) or :func:`set_gpu_cache_limit` set it.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.gpu_cache_limit() >= 0
    True
    """
    return int(check(swig.mpcf_cuda_cache_limit()))


def set_gpu_cache_limit(nbytes: int) -> None:
    """Keeps at most ``nbytes`` of GPU memory per device between computations.

    Lowering it frees the excess now; 0 keeps nothing.

    Examples
    --------
    >>> import mpcf
    >>> before = mpcf.gpu_cache_limit()
    >>> mpcf.set_gpu_cache_limit(256 * 2**20)
    >>> mpcf.gpu_cache_limit() == 256 * 2**20
    True
    >>> mpcf.set_gpu_cache_limit(before)
    """
    check(swig.mpcf_cuda_set_cache_limit(_lib.count(nbytes, "nbytes")))


def _registrable(array: Any) -> np.ndarray:
    if not isinstance(array, np.ndarray):
        raise TypeError(f"array must be a NumPy array, not {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise ValueError("array must be C-contiguous")
    return array


def register_gpu_output(array: np.ndarray) -> None:
    """Page-locks ``array``'s memory so that the GPUs write results straight into it.

    A pdist, l2_kernel or cdist result computed on the GPU with ``out=``
    this array (or an array inside its memory) is then written by each GPU
    directly, with no host thread copying it: faster where the GPUs compute
    faster than the host copies (short functions; pdist L1, n = 50,000,
    m = 128 on 2x H200: 0.103 -> 0.094 s on two GPUs), same bits. Registering
    takes 0.02-0.06 s per GB of memory already written to (0.25 s for that
    5 GB result; far more for a fresh array), and locked memory is unavailable to the rest of the system
    until :func:`unregister_gpu_output`: register a buffer that takes many
    results, and unregister it before it is freed (keep a reference to it
    until then). Raises :class:`mpcf.CudaUnavailableError` without a CUDA
    device, ValueError for a range that overlaps one registered before.

    Examples
    --------
    >>> import numpy as np, mpcf
    >>> out = np.zeros(10)
    >>> if mpcf.cuda_device_count() > 0:
    ...     mpcf.register_gpu_output(out)
    ...     mpcf.unregister_gpu_output(out)
    """
    array = _registrable(array)
    check(swig.mpcf_cuda_register_host(_lib.address(array), int(array.nbytes)))


def unregister_gpu_output(array: np.ndarray) -> None:
    """Unlocks the memory :func:`register_gpu_output` locked for ``array``.

    Raises ValueError when ``array`` (its first element) is not where a
    registered range starts, or while a computation writes into it.
    """
    array = _registrable(array)
    check(swig.mpcf_cuda_unregister_host(_lib.address(array)))


def release_gpu_memory() -> None:
    """Frees the GPU memory mpcf keeps between computations, on every device, now.

    Computations running meanwhile keep what they use. Nothing happens
    without CUDA.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.release_gpu_memory()
    """
    check(swig.mpcf_cuda_release_memory())
