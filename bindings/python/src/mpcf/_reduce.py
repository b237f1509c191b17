"""Reductions over the pair plane without the n x n matrix: k nearest
neighbours (and the kNN graph of scikit-learn's convention), kernel
matrix-vector products (and a SciPy LinearOperator over them).

libmpcf computes the pairs block by block, as for pdist, and reduces each
block as soon as it is computed (on the GPU, on the device), so memory stays
O(n k) or O(n r). Results are the same bits for any thread count, block
shape or GPU count on one backend.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable, Optional, Sequence, Tuple

import numpy as np

from ._collection import as_collection
from ._lib import address, check, exponent, make_options, swig
from ._ops import PcfsLike, _run_task

_KERNELS = {
    "l2": swig.MPCF_KERNEL_L2,
    "gaussian": swig.MPCF_KERNEL_GAUSSIAN,
    "laplacian": swig.MPCF_KERNEL_LAPLACIAN,
}
_DEFAULT_P = {"l2": 2.0, "gaussian": 2.0, "laplacian": 1.0}


def _count(k: Any, what: str) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{what} must be an integer, not {type(k).__name__}")
    return int(k)


def knn(
    X: PcfsLike,
    k: int,
    Y: Optional[PcfsLike] = None,
    *,
    p: float = 1,
    window: Optional[Sequence[float]] = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    progress: bool = False,
) -> Tuple[np.ndarray, np.ndarray]:
    r"""The k nearest neighbours of every PCF of X in Lp distance.

    Without Y, the neighbours are the other PCFs of X (a PCF is never its own
    neighbour; an equal one, at distance 0, is). With Y, they are the PCFs of
    Y (flat indices of Y's shape). Neighbours come ascending by (distance,
    index): equal distances go to the smaller index; ``inf`` distances come
    last. The n x n matrix is never formed.

    Parameters
    ----------
    X, Y : PcfCollection or anything it accepts
        Y of X's dtype; plain Python numbers in Y take X's dtype.
    k : int
        1 <= k <= X.size - 1 (no Y) or Y.size.
    p, window, backend, threads, devices, progress
        As in :func:`mpcf.pdist`.

    Returns
    -------
    (distances, indices) : tuple of numpy.ndarray
        Shapes ``X.shape + (k,)``; distances of X's dtype, indices int64.

    Raises
    ------
    ValueError
        k out of range (as :class:`mpcf.InvalidArgumentError`), bad p,
        window, backend.
    TypeError
        k not an integer, data not float32/float64.

    Examples
    --------
    >>> import mpcf
    >>> X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 4), (1, 0)], [(0, 1), (1, 0)]]
    >>> d, i = mpcf.knn(X, 2)
    >>> i
    array([[3, 1],
           [0, 3],
           [1, 0],
           [0, 1]])
    >>> d[:, 0]
    array([0., 1., 2., 0.])
    """
    X = as_collection(X)
    Yc = as_collection(Y, None, X.dtype) if Y is not None else None
    k = _count(k, "k")
    p = exponent(p)
    if k < 1:
        raise ValueError(f"k = {k}; k must be at least 1")
    candidates = Yc.size if Yc is not None else max(X.size - 1, 0)
    if k > candidates:
        where = "PCFs in Y" if Yc is not None else "other PCFs in X (X.size - 1)"
        raise ValueError(f"k = {k} is more than the {candidates} {where}")
    options = make_options(window, backend, threads, devices)
    distances = np.empty(X.shape + (k,), dtype=X.dtype)
    indices = np.empty(X.shape + (k,), dtype=np.int64)
    size = X.size * k
    _run_task(
        lambda: swig.mpcf_knn_start(
            X._handle, Yc._handle if Yc is not None else None, p, k, address(distances),
            address(indices), size, options),
        progress,
        "knn",
    )
    return distances, indices


def kneighbors_graph(
    X: PcfsLike,
    k: int,
    *,
    mode: str = "connectivity",
    p: float = 1,
    window: Optional[Sequence[float]] = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    progress: bool = False,
) -> Any:
    """The k-nearest-neighbour graph of X as a ``scipy.sparse.csr_matrix``,
    in scikit-learn's ``kneighbors_graph`` convention (``include_self=False``):
    row i holds its k neighbours, with the distance (``mode="distance"``,
    explicit zeros kept) or 1.0 (``mode="connectivity"``). Usable by UMAP,
    HDBSCAN and spectral clustering.

    Examples
    --------
    >>> import mpcf
    >>> X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 4), (1, 0)]]
    >>> G = mpcf.kneighbors_graph(X, 1, mode="distance")
    >>> G.toarray()
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 2., 0.]])
    """
    from scipy.sparse import csr_matrix

    if mode not in ("connectivity", "distance"):
        raise ValueError(f"mode must be 'connectivity' or 'distance', not {mode!r}")
    X = as_collection(X)
    d, i = knn(X, k, p=p, window=window, backend=backend, threads=threads, devices=devices,
               progress=progress)
    n = X.size
    d = d.reshape(n, -1)
    i = i.reshape(n, -1)
    data = d.ravel() if mode == "distance" else np.ones(n * i.shape[1], dtype=X.dtype)
    indptr = np.arange(0, n * i.shape[1] + 1, i.shape[1], dtype=np.int64)
    return csr_matrix((data, i.ravel(), indptr), shape=(n, n))


def _kernel_args(kernel: str, p: Optional[float], sigma: float) -> Tuple[int, float, float]:
    if not isinstance(kernel, str) or kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of 'l2', 'gaussian', 'laplacian', not {kernel!r}")
    p = _DEFAULT_P[kernel] if p is None else exponent(p)
    if isinstance(sigma, (bool, np.bool_)) or not isinstance(sigma, numbers.Real):
        raise TypeError(f"sigma must be a real number, not {type(sigma).__name__}")
    sigma = float(sigma)
    if kernel != "l2" and not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma = {sigma}; the {kernel} kernel needs a finite sigma > 0")
    return _KERNELS[kernel], p, sigma


def _matvec(X, Yc, V, kind, p, sigma, options, progress) -> np.ndarray:
    rows = Yc.size if Yc is not None else X.size
    V = np.asarray(V)
    if V.dtype.kind not in "iuf":
        raise TypeError(f"V must be a numeric array, not {V.dtype}")
    vector = V.ndim == 1
    if V.ndim not in (1, 2) or V.shape[0] != rows:
        what = "Y.size" if Yc is not None else "X.size"
        raise ValueError(f"V has shape {V.shape}; it needs {rows} rows ({what}), as (n,) or (n, r)")
    V2 = np.ascontiguousarray(V.reshape(rows, -1), dtype=X.dtype)
    r = V2.shape[1]
    if r == 0:
        raise ValueError("V has no columns (r = 0)")
    if not np.all(np.isfinite(V2)):
        bad = tuple(int(x) for x in np.argwhere(~np.isfinite(V2))[0])
        raise ValueError(f"V must be finite; V{list(bad) if not vector else [bad[0]]} is {V2[bad]}")
    out = np.empty((X.size, r), dtype=X.dtype)
    _run_task(
        lambda: swig.mpcf_kernel_matvec_start(
            X._handle, Yc._handle if Yc is not None else None, kind, p, sigma, address(V2),
            V2.size, r, address(out), out.size, options),
        progress,
        "kernel_matvec",
    )
    return out[:, 0] if vector else out


def kernel_matvec(
    X: PcfsLike,
    V: Any,
    Y: Optional[PcfsLike] = None,
    *,
    kernel: str = "l2",
    p: Optional[float] = None,
    sigma: float = 1.0,
    window: Optional[Sequence[float]] = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    progress: bool = False,
) -> np.ndarray:
    r"""y = K V without forming K, K_ij = k(X_i, Y_j) (Y defaults to X):

    * ``"l2"``: the L2 inner product, :math:`\int f g`;
    * ``"gaussian"``: :math:`\exp(-d_p(f, g)^2 / (2 \sigma^2))` (p = 2 by default);
    * ``"laplacian"``: :math:`\exp(-d_p(f, g) / \sigma)` (p = 1 by default).

    Each output is summed exactly after rounding every term to a fixed grid,
    so no order of the terms (threads, blocks, GPUs) changes a bit.

    Parameters
    ----------
    X, Y : PcfCollection or anything it accepts (flattened row-major)
    V : array_like, shape (Y.size,) or (Y.size, r)
        Finite; converted to X's dtype.
    kernel, p, sigma
        As above; p >= 1 or inf.
    window, backend, threads, devices, progress
        As in :func:`mpcf.pdist`.

    Returns
    -------
    numpy.ndarray
        Shape (X.size,) for a vector V, else (X.size, r); X's dtype.

    Examples
    --------
    >>> import mpcf
    >>> X = [[(0, 1), (1, 0)], [(0, 3), (1, 0)]]
    >>> mpcf.kernel_matvec(X, [1.0, 2.0])           # [[1, 3], [3, 9]] @ [1, 2]
    array([ 7., 21.])
    """
    X = as_collection(X)
    Yc = as_collection(Y, None, X.dtype) if Y is not None else None
    kind, p, sigma = _kernel_args(kernel, p, sigma)
    options = make_options(window, backend, threads, devices)
    return _matvec(X, Yc, V, kind, p, sigma, options, progress)
