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
from typing import Any, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from ._collection import _C_DTYPES, as_collection, object_view
from ._lib import address, check, checked_exponent, count, exponent, make_options, swig
from ._errors import InvalidArgumentError
from ._ops import PcfsLike, _run_task

_KERNELS = {
    "l2": swig.MPCF_KERNEL_L2,
    "gaussian": swig.MPCF_KERNEL_GAUSSIAN,
    "laplacian": swig.MPCF_KERNEL_LAPLACIAN,
}
_DEFAULT_P = {"l2": 2.0, "gaussian": 2.0, "laplacian": 1.0}


def _inputs(X: Any, Y: Any, components: Any) -> Tuple[Any, Any]:
    """X and Y (None or plain data of X's dtype and function type) as
    collections, as views with a component axis for components=True."""
    X = as_collection(X)
    Yc = as_collection(Y, None, X.dtype, type(X)) if Y is not None else None
    X = object_view(X, components)
    Yc = object_view(Yc, components) if Yc is not None else None
    return X, Yc


def _check_knn(X: Any, Yc: Any, components: bool, p: float, k: int) -> None:
    """libmpcf's checks of p and k (1 <= k <= the candidates), before the
    outputs are allocated (mpcf_knn_check)."""
    check(swig.mpcf_knn_check(X.size, Yc.size if Yc is not None else -1, int(bool(components)),
                              p, k))


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
    components: bool = False,
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
        1 <= k <= X.size - 1 (no Y) or Y.size (libmpcf's rule, checked
        before anything is computed).
    p, window, backend, threads, devices, progress
        As in :func:`mpcf.pdist`.
    components : bool
        As in :func:`mpcf.pdist`: the last axis of X (and Y) is a component
        axis, and the neighbours are objects of K functions; shapes and
        indices then count objects (``X.shape[:-1]``).

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
    >>> d, i = mpcf.knn([X[:2], X[2:]], 1, components=True)   # 2 objects of 2 PCFs
    >>> d, i
    (array([[4.],
           [4.]]), array([[1],
           [0]]))
    """
    return _knn(X, k, Y, p, window, backend, threads, devices, progress, components)


def _lists(X: Any, k: int) -> Tuple[np.ndarray, np.ndarray]:
    """The outputs of a knn of X: k distances (X's dtype) and int64 indices
    per function, shaped like X."""
    return (np.empty(X.shape + (k,), dtype=X.dtype), np.empty(X.shape + (k,), dtype=np.int64))


def knn_both(
    X: PcfsLike,
    Y: PcfsLike,
    k_x: int,
    k_y: int,
    *,
    p: float = 1,
    window: Optional[Sequence[float]] = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
) -> Tuple[Tuple[np.ndarray, np.ndarray], Tuple[np.ndarray, np.ndarray]]:
    """``(knn(X, k_x, Y), knn(Y, k_y, X))`` with the same bits, from one pass
    over the pairs (each distance computed once: libmpcf's mpcf_knn_both).
    For a tile off the diagonal of a split knn (mpcf.dask)."""
    X, Yc = _inputs(X, Y, False)
    k_x, k_y = count(k_x, "k_x"), count(k_y, "k_y")
    p = exponent(p)
    options = make_options(window, backend, threads, devices)
    xd, xi = _lists(X, k_x)
    yd, yi = _lists(Yc, k_y)
    _run_task(
        lambda: swig.mpcf_knn_both_start(
            X._handle, Yc._handle, p, k_x, k_y, address(xd), address(xi), X.size * k_x,
            address(yd), address(yi), Yc.size * k_y, options),
        False,
        "knn",
    )
    return (xd, xi), (yd, yi)


def knn_merge(k: int, a: Tuple[np.ndarray, np.ndarray],
              b: Tuple[np.ndarray, np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """The first min(k, a_k + b_k) neighbours of each row of two lists of
    the same rows (``(distances, indices)``, shapes (rows, a_k) and (rows,
    b_k), each row in knn order) from disjoint candidate sets, in knn order:
    libmpcf's mpcf_knn_merge, the merge of a split knn (mpcf.dask)."""
    (ad, ai), (bd, bi) = a, b
    ad, bd = np.asarray(ad), np.asarray(bd)
    if ad.dtype != bd.dtype or ad.dtype not in _C_DTYPES:
        raise TypeError(f"knn_merge: distances of one dtype, float32 or float64 "
                        f"(not {ad.dtype} and {bd.dtype})")
    ad, bd = np.ascontiguousarray(ad), np.ascontiguousarray(bd)
    ai = np.ascontiguousarray(ai, dtype=np.int64)
    bi = np.ascontiguousarray(bi, dtype=np.int64)
    if ad.ndim != 2 or ad.shape != ai.shape or bd.shape != bi.shape or bd.shape[:1] != ad.shape[:1]:
        raise ValueError(f"knn_merge: lists of shapes {ad.shape} / {ai.shape} and {bd.shape} / "
                         f"{bi.shape}; each (rows, k), distances and indices alike, same rows")
    rows, ka, kb = ad.shape[0], ad.shape[1], bd.shape[1]
    k = min(count(k, "k"), ka + kb)
    d = np.empty((rows, k), dtype=ad.dtype)
    i = np.empty((rows, k), dtype=np.int64)
    if rows * k == 0:
        return d, i
    check(swig.mpcf_knn_merge(
        _C_DTYPES[ad.dtype], rows, k, address(ad) if ad.size else None,
        address(ai) if ai.size else None, ka, address(bd) if bd.size else None,
        address(bi) if bi.size else None, kb, address(d), address(i), rows * k))
    return d, i


def _knn(X, k, Y, p, window, backend, threads, devices, progress, components):
    X, Yc = _inputs(X, Y, components)
    k = count(k, "k")
    p = exponent(p)
    _check_knn(X, Yc, components, p, k)
    options = make_options(window, backend, threads, devices)
    distances, indices = _lists(X, k)
    size = X.size * k
    _run_task(
        lambda: swig.mpcf_knn_start(
            X._handle, Yc._handle if Yc is not None else None, p, k, address(distances),
            address(indices), size, options),
        progress,
        "knn",
    )
    return distances, indices


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {value!r} ({type(value).__name__})")
    return bool(value)


def _include_self(value: Any, mode: str) -> bool:
    """scikit-learn's include_self: True, False or 'auto' (True for
    mode='connectivity', False for mode='distance')."""
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"include_self must be True, False or 'auto', not {value!r}")
        return mode == "connectivity"
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"include_self must be True, False or 'auto', not {value!r} ({type(value).__name__})")
    return bool(value)


def _union_rows(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int,
                self_first: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The directed edges (rows, cols, vals) and their reverses, each pair
    once with the smaller of its values (so (i, j) and (j, i) carry the same
    number), ordered by row, then (self first if self_first,) distance, then
    column. Returns (indptr, indices, data)."""
    r = np.concatenate([rows, cols])
    c = np.concatenate([cols, rows])
    v = np.concatenate([vals, vals])
    # Group equal (row, column) pairs; keep the smallest value of each. The
    # two copies of a pair are one computed distance (libmpcf's knn finds
    # d(i, j) once for both rows), so this only makes exactness explicit.
    order = np.lexsort((v, c, r))
    r, c, v = r[order], c[order], v[order]
    first = np.ones(r.size, dtype=bool)
    first[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    r, c, v = r[first], c[first], v[first]
    not_self = (r != c) if self_first else np.zeros(r.size, dtype=bool)
    order = np.lexsort((c, v, not_self, r))
    r, c, v = r[order], c[order], v[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    return indptr, c, v


def kneighbors_graph(
    X: PcfsLike,
    k: int,
    Y: Optional[PcfsLike] = None,
    *,
    mode: str = "connectivity",
    include_self: Union[bool, str] = False,
    symmetric: bool = False,
    p: float = 1,
    window: Optional[Sequence[float]] = None,
    backend: str = "auto",
    threads: Optional[int] = None,
    devices: Optional[Iterable[int]] = None,
    progress: bool = False,
    components: bool = False,
) -> Any:
    """The k-nearest-neighbour graph of X as a ``scipy.sparse.csr_matrix``,
    in the convention of scikit-learn's ``kneighbors_graph``; with
    ``symmetric=True``, the symmetric form that UMAP and HDBSCAN ask of a
    sparse ``metric="precomputed"`` matrix.

    Row i holds the neighbours of X[i] from :func:`knn`, with the distance
    (``mode="distance"``, explicit zeros kept: an equal PCF is a stored 0) or
    1.0 (``mode="connectivity"``). The n x n matrix is never formed.

    Parameters
    ----------
    X, Y : PcfCollection or anything it accepts
        Without Y the graph is n x n (n = X.size) and the neighbours are
        PCFs of X; with Y it is X.size x Y.size and row i holds the k
        nearest PCFs of Y to X[i] (to predict new points with a model
        fitted on a graph of Y).
    k : int
        Neighbours per row, as scikit-learn's ``n_neighbors``: 1 <= k <=
        X.size - 1 (no Y), <= X.size (``include_self``), <= Y.size (Y).
    mode : {"connectivity", "distance"}
    include_self : bool or "auto"
        As in ``sklearn.neighbors.kneighbors_graph``: True makes each PCF
        the first of its own k neighbours (a stored 0.0 on the diagonal with
        ``mode="distance"``, 1.0 with ``"connectivity"``), so a row holds the
        PCF itself and its k - 1 nearest others; False (default) holds k
        others; "auto" is True for ``mode="connectivity"`` and False for
        ``"distance"``. Not with Y.
    symmetric : bool
        True: the union of the kNN graph and its transpose, entry (i, j)
        stored where j is among the neighbours of i or i among those of j,
        with d(X_i, X_j) (the same number both ways: the result equals its
        transpose exactly, structure and values). A row then holds its own k
        neighbours and possibly more. Not with Y.
    p, window, backend, threads, devices, progress
        As in :func:`mpcf.pdist`.
    components : bool
        As in :func:`mpcf.pdist`: the graph of the objects of K functions
        (n = ``X.size // K``).

    Returns
    -------
    scipy.sparse.csr_matrix
        Data of X's dtype. Each row is ordered by distance, then column
        index, the PCF itself first where ``include_self``: scikit-learn's
        neighbour estimators ask rows "sorted by row values" of a
        precomputed sparse graph, and so take this one as it is. Column
        indices are thus in general not sorted; UMAP and HDBSCAN sort them
        themselves, in the matrix you pass where they need no dtype
        conversion (UMAP works in float32, HDBSCAN in float64).

    Raises
    ------
    ValueError
        k out of range, mode not "connectivity" or "distance", include_self
        a string other than "auto", include_self or symmetric with Y; as
        :func:`knn` for p, window, backend.
    TypeError
        k not an integer, include_self or symmetric not a bool.

    Notes
    -----
    Which graph each client wants, for n_neighbors = k (the examples below
    run all of them):

    * ``umap.UMAP(metric="precomputed", n_neighbors=k)``:
      ``kneighbors_graph(X, k, mode="distance", include_self=True,
      symmetric=True)``. umap-learn refuses a sparse matrix that is not
      symmetric ("Sparse precomputed distance matrices should be
      symmetrical!") and one with fewer than n_neighbors entries in a row
      (its default n_neighbors is 15: pass it). On a dense matrix it counts
      each point as its own first neighbour, as ``include_self`` does, so
      from this graph it builds the same fuzzy graph, and embedding, as from
      the full distance matrix (where there are no ties).
    * ``KNeighborsClassifier(n_neighbors=k, metric="precomputed")`` (and
      ``NearestNeighbors``, ``KNeighborsRegressor``): fit on
      ``kneighbors_graph(X, k + 1, mode="distance", include_self=True)``
      (as scikit-learn's ``KNeighborsTransformer`` makes it: ``predict(None)``
      then drops each point itself); predict new PCFs Q with
      ``kneighbors_graph(Q, k, X, mode="distance")``.
    * ``sklearn.cluster.HDBSCAN(metric="precomputed", min_samples=m)``
      (scikit-learn >= 1.3): ``symmetric=True`` (it checks),
      ``include_self=True`` (its ``min_samples`` counts the point itself)
      and k >= m (m defaults to ``min_cluster_size``). It refuses a graph
      of several connected components: choose k large enough that the
      graph is connected (``scipy.sparse.csgraph.connected_components``).
      Pass ``copy=True``: it writes mutual reachability distances into the
      matrix otherwise.
    * ``SpectralClustering(affinity="precomputed_nearest_neighbors",
      n_neighbors=k)``: ``kneighbors_graph(X, k, mode="distance",
      include_self=True)``, as its ``affinity="nearest_neighbors"`` builds
      on feature vectors; it symmetrises the graph itself.

    None of them takes ``inf`` entries (the distance of PCFs whose
    difference does not vanish at +inf).

    Ties: the neighbours of a row are the k smallest by (distance, index),
    as in :func:`knn`: among PCFs at the same distance the smaller index
    wins, and with ``include_self`` the PCF itself comes before an equal
    PCF (distance 0). scikit-learn's brute force on the dense matrix may
    pick another of the tied PCFs, and UMAP re-sorts each row by distance
    with an unstable sort: a tie at the k-th distance then makes another
    neighbour set, as valid as this one. Without ties the graphs are the
    same.

    Examples
    --------
    >>> import numpy as np, mpcf
    >>> X = [[(0, 1), (1, 0)], [(0, 2), (1, 0)], [(0, 4), (1, 0)]]
    >>> G = mpcf.kneighbors_graph(X, 1, mode="distance")
    >>> G.toarray()
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 2., 0.]])
    >>> S = mpcf.kneighbors_graph(X, 2, mode="distance", include_self=True, symmetric=True)
    >>> S.toarray()            # row 1 gets 2 from 2's list
    array([[0., 1., 0.],
           [1., 0., 2.],
           [0., 2., 0.]])
    >>> (S != S.T).nnz, S.nnz  # exactly symmetric; the zero diagonal is stored
    (0, 7)

    With its clients, on 60 step functions from two families (heights in
    [1, 2) and in [8, 9)):

    >>> rng = np.random.default_rng(0)
    >>> heights = np.concatenate([rng.uniform(1, 2, 30), rng.uniform(8, 9, 30)])
    >>> X = [[(0, h), (1, 0)] for h in heights]
    >>> y = np.repeat([0, 1], 30)
    >>> def split(labels):  # one label per family, a different one each, no noise
    ...     a, b = set(labels[:30]), set(labels[30:])
    ...     return len(a) == len(b) == 1 and a != b and -1 not in a | b

    UMAP (umap-learn):

    >>> import umap
    >>> G = mpcf.kneighbors_graph(X, 10, mode="distance", include_self=True, symmetric=True)
    >>> E = umap.UMAP(metric="precomputed", n_neighbors=10, random_state=0).fit_transform(G)
    >>> E.shape
    (60, 2)

    k-nearest-neighbour classification (scikit-learn):

    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> clf = KNeighborsClassifier(n_neighbors=5, metric="precomputed")
    >>> clf = clf.fit(mpcf.kneighbors_graph(X, 6, mode="distance", include_self=True), y)
    >>> bool((clf.predict(None) == y).all())   # each PCF by its 5 nearest others
    True
    >>> Q = [[(0, 1.5), (1, 0)], [(0, 8.5), (1, 0)], [(0, 3), (1, 0)]]
    >>> clf.predict(mpcf.kneighbors_graph(Q, 5, X, mode="distance"))
    array([0, 1, 0])

    HDBSCAN (scikit-learn >= 1.3) on a connected graph (k = 31 reaches
    across the families of 30):

    >>> from sklearn.cluster import HDBSCAN
    >>> G = mpcf.kneighbors_graph(X, 31, mode="distance", include_self=True, symmetric=True)
    >>> split(HDBSCAN(min_cluster_size=15, metric="precomputed", copy=True).fit_predict(G))
    True

    Spectral clustering (scikit-learn):

    >>> from sklearn.cluster import SpectralClustering
    >>> sc = SpectralClustering(n_clusters=2, affinity="precomputed_nearest_neighbors",
    ...                         n_neighbors=10, random_state=0)
    >>> split(sc.fit_predict(mpcf.kneighbors_graph(X, 10, mode="distance", include_self=True)))
    True
    """
    from scipy.sparse import csr_matrix

    if not isinstance(mode, str) or mode not in ("connectivity", "distance"):
        raise ValueError(f"mode must be 'connectivity' or 'distance', not {mode!r}")
    self_loops = _include_self(include_self, mode)
    symmetric = _flag(symmetric, "symmetric")
    X, Yc = _inputs(X, Y, components)
    if Yc is not None and self_loops:
        raise ValueError(
            "include_self=True (or 'auto' with mode='connectivity') needs Y=None: the rows of "
            "X against Y have no self")
    if Yc is not None and symmetric:
        raise ValueError("symmetric=True needs Y=None: the graph of X against Y is not square")
    k = count(k, "k")
    n = X.size
    # scikit-learn's include_self=True: each PCF is the first of its own k
    # neighbours, so knn is asked for k - 1 others (libmpcf checks that
    # count); k = 0 would ask for -1.
    others = k - 1 if self_loops else k
    if others < 0:
        raise ValueError(f"k = {k}; k must be at least 1 (with include_self=True each PCF is the "
                         "first of its own k neighbours)")
    if self_loops and others > 0:
        # libmpcf's rule on the k - 1 others (p = 1 passes; knn checks p),
        # said in terms of the k the caller gave.
        try:
            check(swig.mpcf_knn_check(n, -1, int(bool(components)), 1.0, others))
        except InvalidArgumentError as exc:
            raise type(exc)(
                f"with include_self=True, k = {k} asks for {others} neighbours besides each PCF "
                f"itself: {exc}", exc.status, exc.status_name) from None
    if others > 0:
        d, i = knn(X, others, Yc, p=p, window=window, backend=backend, threads=threads,
                   devices=devices, progress=progress)
        d = d.reshape(n, others)
        i = i.reshape(n, others)
    else:  # include_self with k = 1: the diagonal alone (the arguments still checked)
        checked_exponent(p)
        make_options(window, backend, threads, devices)
        d = np.empty((n, 0), dtype=X.dtype)
        i = np.empty((n, 0), dtype=np.int64)
    if self_loops:
        d = np.concatenate([np.zeros((n, 1), dtype=X.dtype), d], axis=1)
        i = np.concatenate([np.arange(n, dtype=np.int64)[:, None], i], axis=1)
    columns = Yc.size if Yc is not None else n
    if symmetric:
        rows = np.repeat(np.arange(n, dtype=np.int64), i.shape[1])
        indptr, indices, data = _union_rows(rows, i.ravel(), d.ravel(), n, self_loops)
    else:
        indptr = np.arange(0, n * i.shape[1] + 1, i.shape[1], dtype=np.int64)
        indices, data = i.ravel(), d.ravel()
    if mode == "connectivity":
        data = np.ones(indices.size, dtype=X.dtype)
    return csr_matrix((data, indices, indptr), shape=(n, columns))


def _kernel_args(kernel: str, p: Optional[float], sigma: float) -> Tuple[int, float, float]:
    """The kernel's code, p and sigma as libmpcf takes them; libmpcf judges
    p (>= 1 or inf) and sigma (its ``scale``: finite, > 0) when it computes."""
    if not isinstance(kernel, str) or kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of 'l2', 'gaussian', 'laplacian', not {kernel!r}")
    p = _DEFAULT_P[kernel] if p is None else exponent(p)
    if isinstance(sigma, (bool, np.bool_)) or not isinstance(sigma, numbers.Real):
        raise TypeError(f"sigma must be a real number, not {type(sigma).__name__}")
    return _KERNELS[kernel], p, float(sigma)


def _matvec(X, Yc, V, kind, p, sigma, options, progress) -> np.ndarray:
    """K V through mpcf_kernel_matvec_start. V's shape is checked here (its
    rows against the collection); libmpcf checks r >= 1 and that V, as
    converted to X's dtype, is finite."""
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
    components: bool = False,
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
        Converted to X's dtype, where it must be finite (libmpcf's rule; its
        error names the element as ``V[j][c]``, row and column).
    kernel, p, sigma
        As above; p >= 1 or inf; sigma finite and > 0 (libmpcf's ``scale``,
        the name its error uses).
    window, backend, threads, devices, progress
        As in :func:`mpcf.pdist`.
    components : bool
        As in :func:`mpcf.pdist`: K is over objects of K functions (the L2
        kernel sums the components' inner products, the others use the
        objects' distance), and X.size, Y.size count objects.

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
    >>> mpcf.kernel_matvec([X, X], [1.0, 1.0], components=True)  # 2 objects, <x, y> = 10
    array([20., 20.])
    """
    X, Yc = _inputs(X, Y, components)
    kind, p, sigma = _kernel_args(kernel, p, sigma)
    options = make_options(window, backend, threads, devices)
    return _matvec(X, Yc, V, kind, p, sigma, options, progress)
