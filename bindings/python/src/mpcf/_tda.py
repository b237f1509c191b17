"""Persistence barcodes to PCFs (Betti curves, stable ranks, accumulated
persistence) and pointwise operations on collections (sum, mean, linear
combinations, evaluation), over libmpcf's C API."""

from __future__ import annotations

import numbers
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _errors
from ._collection import PcfCollection, PlfCollection, _finish, _float_dtype, _format_index, as_collection
from ._lib import address, check, swig

BarcodesLike = Any

_KINDS = {
    "betti": swig.MPCF_BETTI_CURVE,
    "stable_rank": swig.MPCF_STABLE_RANK,
    "accumulated_persistence": swig.MPCF_ACCUMULATED_PERSISTENCE,
}


# ----------------------------------------------------------------------
# Reading the barcode formats
# ----------------------------------------------------------------------

def _is_scalar(x: Any) -> bool:
    return isinstance(x, (numbers.Real, np.generic)) and not isinstance(x, (bool, np.bool_))


def _is_bar(x: Any) -> bool:
    """A (birth, death) pair of numbers."""
    if isinstance(x, np.ndarray):
        return x.ndim == 1 and x.shape[0] == 2
    return isinstance(x, (list, tuple)) and len(x) == 2 and _is_scalar(x[0]) and _is_scalar(x[1])


def _is_gudhi_item(x: Any) -> bool:
    """One entry of GUDHI's persistence(): (dimension, (birth, death))."""
    return (
        isinstance(x, (list, tuple))
        and len(x) == 2
        and isinstance(x[0], (numbers.Integral, np.integer))
        and not isinstance(x[0], (bool, np.bool_))
        and _is_bar(x[1])
    )


def _is_ripser(x: Any) -> bool:
    return isinstance(x, dict) and "dgms" in x


def _bars(x: Any, where: str) -> np.ndarray:
    """One barcode as a C-contiguous (k, 2) float64 array."""
    try:
        arr = np.asarray(x)
    except ValueError as exc:
        raise ValueError(f"{where} is not a regular list of (birth, death) pairs: {exc}") from None
    if arr.size == 0:
        return np.empty((0, 2), dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{where} has shape {arr.shape}; a barcode is a (k, 2) array of (birth, death) rows")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{where} holds non-numeric data ({arr.dtype})")
    return np.ascontiguousarray(arr, dtype=np.float64)


def _check_dimension(dimension: Any) -> Optional[int]:
    if dimension is None:
        return None
    if isinstance(dimension, (bool, np.bool_)) or not isinstance(dimension, (numbers.Integral, np.integer)):
        raise TypeError(f"dimension must be a non-negative integer or None, not {dimension!r}")
    if int(dimension) < 0:
        raise ValueError(f"dimension = {int(dimension)} is negative")
    return int(dimension)


def _from_ripser(x: dict, dimension: Optional[int], where: str) -> Tuple[Tuple[int, ...], List[np.ndarray]]:
    dgms = x["dgms"]
    if not isinstance(dgms, (list, tuple)):
        raise TypeError(f"{where}['dgms'] must be a list of (k, 2) arrays (one per dimension), not {type(dgms).__name__}")
    if dimension is None:
        return (len(dgms),), [_bars(d, f"{where}['dgms'][{k}]") for k, d in enumerate(dgms)]
    if dimension >= len(dgms):
        raise ValueError(
            f"dimension = {dimension} but {where} holds diagrams of dimensions 0 .. {len(dgms) - 1} "
            "(ripser's maxdim)"
        )
    return (), [_bars(dgms[dimension], f"{where}['dgms'][{dimension}]")]


def _from_gudhi(x: Sequence, dimension: Optional[int], where: str) -> Tuple[Tuple[int, ...], List[np.ndarray]]:
    by_dim: dict = {}
    for k, item in enumerate(x):
        if not _is_gudhi_item(item):
            raise ValueError(
                f"{where}[{k}] is {item!r}; GUDHI's persistence() lists (dimension, (birth, death)) pairs"
            )
        by_dim.setdefault(int(item[0]), []).append(item[1])
    def bars_of(d: int) -> np.ndarray:
        got = by_dim.get(d, [])
        return _bars(got, f"the bars of dimension {d} in {where}") if got else np.empty((0, 2))
    if dimension is None:
        top = max(by_dim) if by_dim else -1
        return (top + 1,), [bars_of(d) for d in range(top + 1)]
    return (), [bars_of(dimension)]


def _from_giotto(arr: np.ndarray, dimension: Optional[int], where: str) -> Tuple[Tuple[int, ...], List[np.ndarray]]:
    """giotto-tda diagrams: (..., k, 3) rows (birth, death, homology dimension)."""
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{where} holds non-numeric data ({arr.dtype})")
    lead = tuple(int(d) for d in arr.shape[:-2])
    flat = arr.reshape((-1,) + arr.shape[-2:]) if lead else arr[np.newaxis]
    dims_col = flat[..., 2]
    if dimension is None:
        found = np.unique(dims_col)
        if not np.all(found == np.round(found)) or (found.size and found.min() < 0):
            raise ValueError(f"the third column of {where} must hold homology dimensions (0, 1, ...)")
        dims = [int(d) for d in found]
        out = []
        for diagram in flat:
            for d in dims:
                out.append(_bars(diagram[diagram[:, 2] == d, :2], where))
        return lead + (len(dims),), out
    return lead, [_bars(diagram[diagram[:, 2] == dimension, :2], where) for diagram in flat]


def _collect(
    x: Any, dimension: Optional[int], where: str, top: bool = True
) -> Tuple[Tuple[int, ...], List[np.ndarray]]:
    """The shape of the barcodes in `x` and the barcodes, row-major. An
    empty list is no barcode at the top and an empty barcode inside a list."""
    if _is_ripser(x):
        return _from_ripser(x, dimension, where)
    if isinstance(x, np.ndarray) and x.dtype != object:
        if x.ndim >= 2 and x.shape[-1] == 3:
            return _from_giotto(x, dimension, where)
        if x.ndim >= 2 and x.shape[-1] == 2:
            if dimension is not None:
                raise ValueError(
                    f"dimension = {dimension} was given but {where} is an array of (birth, death) "
                    "rows with no dimension; dimension= selects from ripser's dict, GUDHI's "
                    "persistence() list or giotto-tda's (birth, death, dimension) arrays"
                )
            lead = tuple(int(d) for d in x.shape[:-2])
            flat = x.reshape((-1,) + x.shape[-2:]) if lead else x[np.newaxis]
            return lead, [_bars(b, where) for b in flat]
        if x.size == 0 and x.ndim == 1:
            return (0,), []
        raise ValueError(
            f"{where} is an array of shape {x.shape}; a barcode is a (k, 2) array of (birth, death) "
            "rows (or (k, 3) with the homology dimension, as giotto-tda writes)"
        )
    if isinstance(x, np.ndarray):  # object array: like a list
        x = list(x)
    if not isinstance(x, (list, tuple)):
        raise TypeError(
            f"{where} is a {type(x).__name__}; expected a (k, 2) array of (birth, death) bars, a list "
            "of them, ripser's output dict or GUDHI's persistence() list"
        )
    if len(x) == 0:
        return ((0,), []) if top and dimension is None else ((), [np.empty((0, 2))])
    if _is_gudhi_item(x[0]):
        return _from_gudhi(x, dimension, where)
    if _is_bar(x[0]):
        if dimension is not None:
            raise ValueError(
                f"dimension = {dimension} was given but {where} is a list of (birth, death) pairs "
                "with no dimension"
            )
        return (), [_bars(x, where)]
    shapes = []
    bars: List[np.ndarray] = []
    for k, item in enumerate(x):
        sub_where = f"{where}[{k}]"
        shape, sub = _collect(item, dimension, sub_where, top=False)
        shapes.append(shape)
        bars.extend(sub)
        if shape != shapes[0]:
            raise ValueError(
                f"irregular nesting: {where}[0] holds barcodes of shape {shapes[0]} but "
                f"{sub_where} of shape {shape}"
            )
    return (len(x),) + shapes[0], bars


def _barcodes_csr(barcodes: BarcodesLike, dimension: Any) -> Tuple[Tuple[int, ...], int, np.ndarray, np.ndarray]:
    """The barcodes' shape, count, CSR offsets and (birth, death) rows."""
    shape, bars = _collect(barcodes, _check_dimension(dimension), "barcodes")
    counts = np.fromiter((b.shape[0] for b in bars), dtype=np.uint64, count=len(bars))
    offsets = np.zeros(len(bars) + 1, dtype=np.uint64)
    np.cumsum(counts, out=offsets[1:])
    flat = np.concatenate(bars) if bars else np.empty((0, 2))
    flat = np.ascontiguousarray(flat, dtype=np.float64)
    return shape, len(bars), offsets, flat


def _of_barcodes(barcodes: BarcodesLike, dimension: Any, dtype: Any, create: Any,
                 levels: Tuple[int, ...] = ()) -> Any:
    """The collection libmpcf makes from the barcodes: create(c_dtype, count,
    offsets, bars) is the C call on their CSR form (the summary's own
    arguments bound by the caller); the result has the barcodes' shape +
    levels. A bad barcode of a nested input is named by its tensor index
    too."""
    target = _float_dtype(dtype) or np.dtype(np.float64)
    shape, count, offsets, flat = _barcodes_csr(barcodes, dimension)
    c_dtype = swig.MPCF_FLOAT32 if target == np.float32 else swig.MPCF_FLOAT64
    try:
        handle = check(create(c_dtype, count, address(offsets), address(flat) if flat.size else None))
    except _errors.InvalidArgumentError as exc:
        # libmpcf locates the barcode by its flat index (exc.barcode_index).
        b = exc.barcode_index
        if b is None or len(shape) <= 1 or b >= count:
            raise
        index = tuple(int(i) for i in np.unravel_index(b, shape))
        raise type(exc)(
            f"{exc} (barcode {b} is the one at index {_format_index(index)} of the input)",
            exc.status,
            exc.status_name,
            barcode_index=b,
            bar_index=exc.bar_index,
        ) from None
    return _finish(handle, shape + levels, target)


def _from_barcodes(kind: str, barcodes: BarcodesLike, dimension: Any, dtype: Any) -> PcfCollection:
    return _of_barcodes(barcodes, dimension, dtype,
                        lambda *csr: swig.mpcf_pcfs_from_barcodes(_KINDS[kind], *csr))


_BARCODES_DOC = """
    Parameters
    ----------
    barcodes
        One barcode or many, in any of these forms:

        * a ``(k, 2)`` array (or list of ``(birth, death)`` pairs): one
          barcode, giving a collection of shape ``()``;
        * an array of shape ``(..., k, 2)``: barcodes with ``k`` bars each,
          shape ``(...)``;
        * ripser's output, ``{'dgms': [array per dimension], ...}``: the
          diagram of ``dimension``, shape ``()``, or with ``dimension=None``
          one barcode per dimension, shape ``(maxdim + 1,)``;
        * GUDHI's ``SimplexTree.persistence()`` list of
          ``(dimension, (birth, death))``: likewise, shape ``()`` or
          ``(top dimension + 1,)``;
        * giotto-tda diagrams, arrays of ``(birth, death, dimension)`` rows
          of shape ``(..., k, 3)``: shape ``(...)`` for one ``dimension``,
          ``(..., number of dimensions present)`` without;
        * a list of any of these (all of one shape): shape ``(len, ...)``;
          inside it, ``[]`` is an empty barcode (``[]`` alone is no barcode).
          A list of ripser dicts or GUDHI lists with ``dimension=1`` gives
          the H1 curve of each.

        ``death`` may be ``inf``; births must be finite and ``birth <= death``.
    dimension : int, optional
        The homology dimension to take from ripser, GUDHI or giotto-tda output.
    dtype : float32 or float64
        Of the result (bars are read in float64 and the breakpoints rounded
        once).

    Returns
    -------
    PcfCollection
        One PCF per barcode, in canonical form (no breakpoint repeats the
        previous value). A barcode without a bar of positive length gives
        the zero function, the single breakpoint (0, 0).

    Raises
    ------
    mpcf.InvalidArgumentError
        A bad bar (NaN, infinite birth, death < birth, a number overflowing
        the dtype); the message names the barcode and the bar (both counted
        from 0), e.g. ``barcode 2, bar 5 (birth 3, death 1): ...``.
    ValueError, TypeError
        Input in none of the forms above.
"""


def betti_curve(barcodes: BarcodesLike, dimension: Optional[int] = None, *, dtype: Any = np.float64) -> PcfCollection:
    """Betti curves: beta(t) = number of bars with birth <= t < death.

    The curve changes exactly at the bar ends; an infinite bar leaves a
    constant tail; bars of length 0 contribute nothing.

    Examples
    --------
    >>> import numpy as np, mpcf
    >>> b = mpcf.betti_curve(np.array([[0, 2], [1, 3], [1, np.inf]]))
    >>> b.to_list()                  # 1 on [0, 1), 3 on [1, 2), 2 on [2, 3), 1 after
    array([[0., 1.],
           [1., 3.],
           [2., 2.],
           [3., 1.]])
    >>> dgms = [np.array([[0, 1]]), np.array([[0.5, 2], [1, 1.5]])]   # e.g. ripser(X)['dgms']
    >>> mpcf.betti_curve(dgms).shape, mpcf.betti_curve({"dgms": dgms}, dimension=1).shape
    ((2,), ())
    """
    return _from_barcodes("betti", barcodes, dimension, dtype)


def stable_rank(barcodes: BarcodesLike, dimension: Optional[int] = None, *, dtype: Any = np.float64) -> PcfCollection:
    """Stable ranks for the standard contour: sr(t) = number of bars with
    death - birth > t, for t >= 0 (0 before).

    The function starts at t = 0 with the number of bars of positive length
    and drops at each bar length; infinite bars leave a constant tail.

    Examples
    --------
    >>> import numpy as np, mpcf
    >>> sr = mpcf.stable_rank(np.array([[0, 2], [1, 3], [1, np.inf]]))
    >>> sr.to_list()
    array([[0., 3.],
           [2., 1.]])
    """
    return _from_barcodes("stable_rank", barcodes, dimension, dtype)


def accumulated_persistence(
    barcodes: BarcodesLike, dimension: Optional[int] = None, *, dtype: Any = np.float64
) -> PcfCollection:
    """Accumulated persistence functions: apf(t) = the sum of the lengths
    death - birth of the bars whose meanage (birth + death) / 2 is <= t.

    This is the APF of Biscio and Moller (J. Comput. Graph. Statist. 28(3),
    2019, arXiv:1611.00630). An infinite bar has meanage +inf and never
    counts (replace its death by a finite value if it should).

    Examples
    --------
    >>> import mpcf
    >>> persistence = [(1, (1.0, 3.0)), (0, (0.0, 2.0)), (0, (0.0, float("inf")))]  # GUDHI
    >>> mpcf.accumulated_persistence(persistence, dimension=0).to_list()
    array([[1., 2.]])
    """
    return _from_barcodes("accumulated_persistence", barcodes, dimension, dtype)


def _clip(clip: Any) -> float:
    if clip is None:
        return float("inf")
    if isinstance(clip, (bool, np.bool_)) or not isinstance(clip, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"clip must be a real number or None, not {clip!r} ({type(clip).__name__})")
    return float(clip)


def landscape(
    barcodes: BarcodesLike,
    k: int,
    dimension: Optional[int] = None,
    *,
    clip: Optional[float] = None,
    dtype: Any = np.float64,
) -> PlfCollection:
    """Persistence landscapes lambda_1 .. lambda_k: lambda_j(t) is the j-th
    largest of the tents max(0, min(t - birth, death - t)) of the bars
    (Bubenik, J. Mach. Learn. Res. 16, 2015).

    The result is a :class:`PlfCollection` of shape ``barcodes_shape +
    (k,)``: one row of k functions per barcode (``(k,)`` for one barcode),
    so ``components=True`` in :func:`mpcf.pdist` and friends gives the
    landscape distance (sum over the levels). The breakpoints are exact:
    births, deaths, peaks and the crossings of tent edges, computed in
    double and rounded once to the dtype. A level that is zero everywhere is
    the zero function (the breakpoint (0, 0)).

    Parameters
    ----------
    barcodes, dimension, dtype
        As in :func:`betti_curve`: one barcode or many, as arrays, lists,
        ripser's dict, GUDHI's persistence() list or giotto-tda's arrays.
    k : int
        The number of levels, k >= 1. Levels beyond the bars are zero
        functions; k is limited only by the size of the result (each of its
        functions takes at least a breakpoint and an offset, 24 bytes in
        float64, 16 in float32).
    clip : float, optional
        The death given to infinite bars (a bar born at or after clip then
        contributes nothing). None (default): an infinite bar is an error.

    Raises
    ------
    mpcf.InvalidArgumentError
        A bad bar (NaN, infinite birth, death < birth, a number overflowing
        the dtype, an infinite death without ``clip``), named by barcode and
        bar (``barcode 2, bar 5 (birth 3, death inf): ...``); a bad clip;
        k = 0; a k whose result needs more bytes than 64 bits count (the
        message names k and its largest value).
    mpcf.OutOfMemoryError
        A k whose result needs more than the machine's memory (a
        MemoryError; the message names k and its largest value here).
    TypeError
        k or clip not a number; barcodes in none of the forms.
    ValueError
        k < 0, barcodes in none of the forms.

    Examples
    --------
    >>> import numpy as np, mpcf
    >>> L = mpcf.landscape(np.array([[0.0, 4.0], [1.0, 3.0]]), k=2)
    >>> L
    PlfCollection(shape=(2,), dtype=float64, total_breakpoints=6)
    >>> L.to_list()[0]                 # the tent of (0, 4): peak 2 at t = 2
    array([[0., 0.],
           [2., 2.],
           [4., 0.]])
    >>> mpcf.evaluate(L, [1.5, 2.0])   # lambda_2 is the tent of (1, 3)
    array([[1.5, 2. ],
           [0.5, 1. ]])
    >>> D = mpcf.landscape([[(0, 4)], [(0, 2)], [(1, 2), (0, np.inf)]], 1, clip=4)
    >>> mpcf.pdist(D, p=2, components=True) ** 2    # the L2 landscape distance, squared
    array([4., 0., 4.])
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (numbers.Integral, np.integer)):
        raise TypeError(f"k must be an integer, not {k!r} ({type(k).__name__})")
    k = int(k)
    # Only what the C type (uint64_t) cannot carry is checked here; k = 0 and
    # a k whose result is too large are refused by libmpcf.
    if k < 0:
        raise ValueError(f"k = {k} is negative; ask for at least one landscape (k >= 1)")
    if k >= 2**64:
        raise ValueError(f"k = {k} does not fit libmpcf's 64-bit count of landscapes")
    c = _clip(clip)
    return _of_barcodes(barcodes, dimension, dtype,
                        lambda *csr: swig.mpcf_plfs_landscapes(*csr, k, c), (k,))


def silhouette(
    barcodes: BarcodesLike,
    q: float = 1,
    dimension: Optional[int] = None,
    *,
    clip: Optional[float] = None,
    dtype: Any = np.float64,
) -> PlfCollection:
    """Power-weighted silhouettes: the sum over bars of w_j tent_j(t)
    divided by the sum of the w_j, with w_j = (death - birth)^q and
    tent_j(t) = max(0, min(t - birth, death - t)) (Chazal et al., 2014).

    A :class:`PlfCollection` of the barcodes' shape (``()`` for one); exact
    breakpoints at the births, peaks and deaths; a barcode without bars of
    positive length gives the zero function.

    Parameters
    ----------
    barcodes, dimension, dtype
        As in :func:`betti_curve`: one barcode or many, as arrays, lists,
        ripser's dict, GUDHI's persistence() list or giotto-tda's arrays.
    q : float
        The power of the weights, finite and >= 0 (q = 0: the mean tent;
        libmpcf refuses others as :class:`mpcf.InvalidArgumentError`).
    clip : float, optional
        As in :func:`landscape`.

    Raises
    ------
    mpcf.InvalidArgumentError
        A bad bar (NaN, infinite birth, death < birth, a number overflowing
        the dtype, an infinite death without ``clip``), named by barcode and
        bar (``barcode 2, bar 5 (birth 3, death inf): ...``); a bad clip.
    TypeError
        q or clip not a number; barcodes in none of the forms.
    ValueError
        barcodes in none of the forms.

    Examples
    --------
    >>> import numpy as np, mpcf
    >>> S = mpcf.silhouette(np.array([[0.0, 4.0], [1.0, 3.0]]), q=1)
    >>> S.shape
    ()
    >>> mpcf.evaluate(S, [1.0, 2.0])   # (4 * tent_1 + 2 * tent_2) / 6
    array([0.66666667, 1.66666667])
    """
    if isinstance(q, (bool, np.bool_)) or not isinstance(q, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"q must be a real number, not {q!r} ({type(q).__name__})")
    qf = float(q)
    c = _clip(clip)
    return _of_barcodes(barcodes, dimension, dtype, lambda *csr: swig.mpcf_plfs_silhouettes(*csr, qf, c))


for _f in (betti_curve, stable_rank, accumulated_persistence):
    _f.__doc__ = (_f.__doc__ or "").rstrip() + "\n" + _BARCODES_DOC
del _f


# ----------------------------------------------------------------------
# Pointwise operations
# ----------------------------------------------------------------------

def _axis(axis: Any, ndim: int) -> Optional[int]:
    if axis is None:
        return None
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (numbers.Integral, np.integer)):
        raise TypeError(f"axis must be an integer or None, not {axis!r}")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"axis {a} is out of bounds for a collection of {ndim} dimension(s)")
    return a % ndim


def _reduce(X: Any, op: int, axis: Any) -> PcfCollection:
    X = as_collection(X)
    a = _axis(axis, X.ndim)
    if a is None:
        handle = check(swig.mpcf_pcfs_reduce(X._handle, op, swig.MPCF_ALL_AXES))
        return _finish(handle, (), X.dtype)
    handle = check(swig.mpcf_pcfs_reduce(X._handle, op, a))
    return _finish(handle, X.shape[:a] + X.shape[a + 1 :], X.dtype)


def mean(X: Any, axis: Optional[int] = None) -> PcfCollection:
    """The pointwise mean of PCFs: of all of them (``axis=None``, a
    collection of shape ``()``) or along one axis of the tensor shape.

    The result's breakpoints are the union of the inputs'; its value at
    every t is the mean of the inputs' values at t, summed in double
    precision as a balanced pairwise tree in index order and rounded once to
    X's dtype (the same input gives the same bits).

    Parameters
    ----------
    X : PcfCollection or anything it accepts
    axis : int, optional
        The axis to average over (negative counts from the end).

    Raises
    ------
    mpcf.InvalidArgumentError
        The mean of no function (an empty collection or axis).

    Examples
    --------
    >>> import mpcf
    >>> m = mpcf.mean([[(0, 1), (2, 0)], [(1, 3), (3, 0)]])
    >>> m.shape                       # 0.5 on [0, 1), 2 on [1, 2), 1.5 on [2, 3), 0 after
    ()
    >>> m.to_list()
    array([[0. , 0.5],
           [1. , 2. ],
           [2. , 1.5],
           [3. , 0. ]])
    >>> X = mpcf.PcfCollection([[[(0, 1)], [(0, 2)], [(0, 3)]], [[(0, 5)], [(0, 6)], [(0, 7)]]])
    >>> mpcf.mean(X, axis=0).shape, mpcf.evaluate(mpcf.mean(X, axis=1), 0)
    ((3,), array([2., 6.]))
    """
    return _reduce(X, swig.MPCF_REDUCE_MEAN, axis)


def sum(X: Any, axis: Optional[int] = None) -> PcfCollection:  # noqa: A001 - mirrors numpy.sum
    """The pointwise sum of PCFs, of all of them or along one axis; see
    :func:`mean`. The sum of no function is the zero function.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.sum([[(0, 1), (2, 0)], [(1, 3), (3, 0)]]).to_list()
    array([[0., 1.],
           [1., 4.],
           [2., 3.],
           [3., 0.]])
    """
    return _reduce(X, swig.MPCF_REDUCE_SUM, axis)


def _coefficient(x: Any, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, not {type(x).__name__}")
    return float(x)


def combine(X: Any, Y: Any, a: float = 1.0, b: float = 1.0) -> PcfCollection:
    """The pointwise linear combination ``a * X + b * Y``, PCF by PCF.

    X and Y have the same number of PCFs, or one of them has exactly one,
    which is then combined with every PCF of the other (e.g.
    ``combine(X, mpcf.mean(X), 1, -1)`` centres X). The result has the
    shape of the larger one, the union of the breakpoints, values computed
    in double and rounded once to the common dtype.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.combine([(0, 1), (2, 0)], [(1, 1), (3, 0)], 2, -1).to_list()
    array([[ 0.,  2.],
           [ 1.,  1.],
           [ 2., -1.],
           [ 3.,  0.]])
    """
    X = as_collection(X)
    Y = as_collection(Y, None, X.dtype, type(X))
    ca, cb = _coefficient(a, "a"), _coefficient(b, "b")
    handle = check(swig.mpcf_pcfs_combine(ca, X._handle, cb, Y._handle))
    if X.size == Y.size:
        shape = X.shape
    else:
        shape = Y.shape if X.size == 1 else X.shape
    return _finish(handle, shape, X.dtype)


def evaluate(X: Any, t: Any) -> np.ndarray:
    """Every PCF of X evaluated at the times t.

    Parameters
    ----------
    X : PcfCollection or anything it accepts
    t : number or array of numbers (no NaN; +-inf allowed)

    Returns
    -------
    numpy.ndarray
        Of X's dtype and shape ``X.shape + numpy.shape(t)``: entry
        ``[i..., j...]`` is ``X[i...](t[j...])``, where a PCF is 0 before its
        first breakpoint and keeps its last value for ever.

    Examples
    --------
    >>> import mpcf
    >>> mpcf.evaluate([[(0, 3), (1, 0)], [(0, 1), (2, 0)]], [0.5, 1.5, 9])
    array([[3., 0., 0.],
           [1., 1., 0.]])
    """
    X = as_collection(X)
    times = np.asarray(t)
    if times.dtype.kind not in "iuf":
        raise TypeError(f"t must hold real numbers, not {times.dtype}")
    flat = np.ascontiguousarray(times, dtype=np.float64).reshape(-1)
    out = np.empty(X.size * flat.size, dtype=X.dtype)
    check(
        swig.mpcf_pcfs_evaluate(
            X._handle, address(flat) if flat.size else None, flat.size, address(out) if out.size else None, out.size
        )
    )
    return out.reshape(X.shape + times.shape)


__all__ = [
    "betti_curve",
    "stable_rank",
    "accumulated_persistence",
    "mean",
    "sum",
    "combine",
    "evaluate",
    "landscape",
    "silhouette",
]
