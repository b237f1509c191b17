"""PCF and PLF collections: NumPy arrays and nested lists into validated
libmpcf handles."""

from __future__ import annotations

import numbers
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _errors
from ._lib import address, check, swig

DTypeLike = Union[None, str, type, np.dtype]

_C_DTYPES = {np.dtype(np.float32): swig.MPCF_FLOAT32, np.dtype(np.float64): swig.MPCF_FLOAT64}
_MAX_NDIM = 32


def _float_dtype(dtype: DTypeLike, what: str = "dtype") -> Optional[np.dtype]:
    """None, or dtype as np.float32 / np.float64; anything else is a TypeError."""
    if dtype is None:
        return None
    try:
        d = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{what} must be float32 or float64, not {dtype!r}") from exc
    if d not in _C_DTYPES:
        raise TypeError(f"{what} must be float32 or float64, not {d}")
    return d


# How to turn other data into float64, in the terms of every function that
# takes PCFs (pdist(X), cdist(X, Y), PcfCollection(data), ...).
def _convert_hint(cls: type) -> str:
    return (
        "convert it with .astype(np.float64), or wrap the input as "
        f"mpcf.{cls.__name__}(data, dtype=np.float64)"
    )


def _a(noun: str) -> str:
    """'a str', 'an int'."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def _format_index(index: Tuple[int, ...]) -> str:
    return "(" + ", ".join(str(i) for i in index) + (",)" if len(index) == 1 else ")")


class _FunctionCollection:
    """The implementation shared by :class:`PcfCollection` and
    :class:`PlfCollection`: a libmpcf collection handle with its tensor shape
    and dtype. A subclass names its kind of function (``_NOUN``, used in the
    messages Python composes) and the C calls that create it."""

    #: "PCF" or "PLF": how messages composed in Python name one function.
    _NOUN = "PCF"
    #: The mpcf_function_type of this class's handles.
    _FUNCTION_TYPE = swig.MPCF_PIECEWISE_CONSTANT
    _CREATE = staticmethod(swig.mpcf_pcfs_create)
    _CREATE_INTERLEAVED = staticmethod(swig.mpcf_pcfs_create_interleaved)

    __slots__ = ("_handle", "_shape", "_dtype", "_total", "__weakref__")

    def __init__(self, data: Any, dtype: DTypeLike = None) -> None:
        if isinstance(data, _FunctionCollection) and not isinstance(data, type(self)):
            raise TypeError(
                f"the data is a {type(data).__name__}; a {type(self).__name__} is not made from "
                "it (the function type is never converted)"
            )
        other = as_collection(data, dtype, kind=type(self))
        self._handle = other._handle
        self._shape = other._shape
        self._dtype = other._dtype
        self._total = other._total

    @classmethod
    def _wrap(cls, handle: Any, shape: Tuple[int, ...], dtype: np.dtype) -> Any:
        self = cls.__new__(cls)
        self._handle = handle
        self._shape = shape
        self._dtype = dtype
        self._total = int(check(swig.mpcf_pcfs_total_breakpoints(handle)))
        return self

    @classmethod
    def from_csr(
        cls,
        offsets: Any,
        times: Any,
        values: Any,
        shape: Optional[Sequence[int]] = None,
        dtype: DTypeLike = None,
    ) -> Any:
        """Builds a collection from CSR arrays.

        Function i has the breakpoints ``times[offsets[i]:offsets[i+1]]``,
        ``values[offsets[i]:offsets[i+1]]``; so ``offsets`` has n + 1
        non-decreasing entries starting at 0 and ``times`` and ``values``
        have ``offsets[n]`` entries each.

        Parameters
        ----------
        offsets : 1-D array of integers
            Used without a copy when it is contiguous uint64.
        times, values : 1-D float32 or float64 arrays of one dtype
            Used without a copy when contiguous (any stride is accepted).
        shape : sequence of int, optional
            Tensor shape whose product is n (default ``(n,)``).
        dtype : float32, float64 or None
            Convert times and values to this dtype.

        Raises
        ------
        TypeError
            Non-integer offsets, times/values not float32/float64 or of two
            dtypes (without ``dtype``).
        ValueError
            Arrays that are not 1-D, lengths that do not match
            ``offsets[-1]``, negative or decreasing offsets, a ``shape``
            whose product is not n, invalid PCFs (:class:`mpcf.InvalidPcfError`).

        Examples
        --------
        >>> import numpy as np, mpcf
        >>> X = mpcf.PcfCollection.from_csr(
        ...     offsets=np.array([0, 2, 4], dtype=np.uint64),
        ...     times=np.array([0.0, 1.0, 0.0, 2.0]),
        ...     values=np.array([3.0, 0.0, 1.0, 0.0]))
        >>> float(mpcf.pdist(X)[0])
        3.0
        """
        target = _float_dtype(dtype)
        off = np.asarray(offsets)
        if off.dtype.kind not in "iu":
            raise TypeError(f"offsets must be an array of integers, not {off.dtype}")
        if off.ndim != 1 or off.shape[0] < 1:
            raise ValueError(
                f"offsets must be a 1-D array of n + 1 >= 1 entries, not of shape {off.shape}"
            )
        if off.dtype.kind == "i" and off.size and int(off.min()) < 0:
            k = int(np.argmax(off < 0))
            raise ValueError(f"offsets[{k}] = {int(off[k])} is negative")
        off = np.ascontiguousarray(off, dtype=np.uint64)
        n = off.shape[0] - 1

        arrays = []
        for name, a in (("times", times), ("values", values)):
            arr = np.asarray(a)
            if arr.ndim != 1:
                raise ValueError(f"{name} must be a 1-D array, not of shape {arr.shape}")
            if target is None and arr.dtype not in _C_DTYPES:
                raise TypeError(
                    f"{name} has dtype {arr.dtype}; libmpcf computes in float32 or float64: "
                    f"convert it ({name}.astype(np.float64)) or pass dtype=np.float64"
                )
            if target is not None and arr.dtype.kind not in "iuf":
                raise TypeError(f"{name} has dtype {arr.dtype}, which cannot be read as numbers")
            arrays.append(arr)
        t, v = arrays
        if target is None:
            if t.dtype != v.dtype:
                raise TypeError(
                    f"times is {t.dtype} but values is {v.dtype}; they must share one dtype "
                    "(convert one, or pass dtype=np.float64 or dtype=np.float32)"
                )
            target = t.dtype
        total = int(off[-1])
        for name, arr in (("times", t), ("values", v)):
            if arr.shape[0] != total:
                raise ValueError(
                    f"{name} has {arr.shape[0]} entries but offsets[{n}] = {total} says there "
                    f"are {total} breakpoints"
                )
        t = np.ascontiguousarray(t, dtype=target)
        v = np.ascontiguousarray(v, dtype=target)
        handle = check(
            cls._CREATE(
                _C_DTYPES[target],
                n,
                address(off),
                address(t) if total else None,
                address(v) if total else None,
            )
        )
        out_shape = (n,) if shape is None else _shape_tuple(shape)
        return _finish(handle, out_shape, target)

    @property
    def shape(self) -> Tuple[int, ...]:
        """The tensor shape (``()`` for a single function)."""
        return self._shape

    @property
    def ndim(self) -> int:
        """Number of tensor dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of functions (the product of the shape)."""
        return int(np.prod(self._shape, dtype=np.int64)) if self._shape else 1

    @property
    def dtype(self) -> np.dtype:
        """float32 or float64; results of computations have this dtype."""
        return self._dtype

    @property
    def total_breakpoints(self) -> int:
        """Breakpoints over all functions."""
        return self._total

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError(f"len() of a single {self._NOUN} (a collection of shape ())")
        return self._shape[0]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(shape={self._shape}, dtype={self._dtype.name}, "
            f"total_breakpoints={self._total})"
        )

    def slice(self, begin: int, end: int) -> Any:
        """The PCFs ``begin .. end-1`` as a collection of shape ``(end - begin,)``
        that shares this one's breakpoints: nothing is copied (constant time
        and memory), and the slice keeps the breakpoints alive after this
        collection is gone.

        Indices are flat (row-major over the shape), with
        ``0 <= begin <= end <= self.size``; no negative indices or steps. A
        slice computes like any collection, with the same bits as the same
        PCFs within this one: ``mpcf.cdist(X.slice(0, 100), X.slice(100, 200))``
        is that block of ``mpcf.pdist(X, layout="square")``. A slice of a
        slice counts within it. Pickling a slice stores its PCFs only.

        Raises
        ------
        TypeError
            begin or end not an integer.
        ValueError
            A negative index, ``begin > end`` or ``end > self.size`` (as
            :class:`mpcf.InvalidArgumentError`).

        Examples
        --------
        >>> import mpcf
        >>> X = mpcf.PcfCollection([[(0, 3), (1, 0)], [(0, 1), (2, 0)], [(0, 10), (2, 5), (3, 0)]])
        >>> V = X.slice(1, 3)
        >>> V.shape, V.total_breakpoints
        ((2,), 5)
        >>> mpcf.pdist(V)
        array([23.])
        """
        bounds = []
        for name, value in (("begin", begin), ("end", end)):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
            if int(value) < 0:
                raise ValueError(f"{name} = {int(value)} is negative; slices take 0 <= begin <= end <= size")
            bounds.append(min(int(value), 2**64 - 1))
        b, e = bounds
        handle = check(swig.mpcf_pcfs_slice(self._handle, b, e))
        return type(self)._wrap(handle, (e - b,), self._dtype)

    # ---- [tda] read-out and pickling ----------------------------------

    def to_csr(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The breakpoints in CSR form: ``(offsets, times, values)``.

        PCF i (row-major over the shape) has the breakpoints
        ``times[offsets[i]:offsets[i+1]]``, ``values[offsets[i]:offsets[i+1]]``;
        ``offsets`` is uint64 with ``size + 1`` entries, ``times`` and
        ``values`` have the collection's dtype. Fresh arrays (copies).

        Examples
        --------
        >>> import mpcf
        >>> mpcf.PcfCollection([[(0, 3), (1, 0)], [(0, 1)]]).to_csr()
        (array([0, 2, 3], dtype=uint64), array([0., 1., 0.]), array([3., 0., 1.]))
        """
        offsets = np.empty(self.size + 1, dtype=np.uint64)
        check(swig.mpcf_pcfs_offsets(self._handle, address(offsets), offsets.size))
        times = np.empty(self._total, dtype=self._dtype)
        values = np.empty(self._total, dtype=self._dtype)
        if self._total:
            check(swig.mpcf_pcfs_breakpoints(self._handle, address(times), address(values), self._total))
        return offsets, times, values

    def to_list(self) -> Any:
        """The PCFs as ``(m, 2)`` arrays of ``(t, v)`` rows, in nested lists
        following the shape (like ``numpy.ndarray.tolist``): a list for shape
        ``(n,)``, a list of lists for ``(n, k)``, the array itself for ``()``.

        Examples
        --------
        >>> import mpcf
        >>> mpcf.PcfCollection([[(0, 3), (1, 0)], [(0, 1)]]).to_list()
        [array([[0., 3.],
               [1., 0.]]), array([[0., 1.]])]
        """
        offsets, times, values = self.to_csr()
        points = np.stack([times, values], axis=1)
        flat = [points[int(offsets[i]) : int(offsets[i + 1])] for i in range(self.size)]
        if not self._shape:
            return flat[0]

        def nest(items: List[np.ndarray], shape: Tuple[int, ...]) -> List[Any]:
            if len(shape) == 1:
                return list(items)
            step = len(items) // shape[0] if shape[0] else 0
            return [nest(items[k * step : (k + 1) * step], shape[1:]) for k in range(shape[0])]

        return nest(flat, self._shape)

    def __reduce__(self):
        # Pickles as its CSR arrays, rebuilt (and validated, like any input)
        # by from_csr. Pickle protocol 5, as Dask uses it, sends the arrays'
        # memory out of band without a copy; the bytes of the PCF file, the
        # earlier form (from_bytes still loads such pickles), cost 0.45 s to
        # make and 0.54 s to load for 205 MB on a 2-core machine against
        # 0.03 s and 0.12 s.
        offsets, times, values = self.to_csr()
        return (_from_csr_pickle, (type(self), offsets, times, values, self._shape))



def _from_csr_pickle(cls: Any, offsets: Any, times: Any, values: Any, shape: Any) -> Any:
    """A collection pickled by _FunctionCollection.__reduce__."""
    return cls.from_csr(offsets, times, values, shape=tuple(shape))


class PcfCollection(_FunctionCollection):
    """An immutable, validated tensor of piecewise constant functions (PCFs).

    A PCF is a list of m >= 1 breakpoints (t_k, v_k) with finite, strictly
    increasing times t_k and finite values v_k:
    f(t) = 0 for t < t_0, f(t) = v_k on [t_k, t_{k+1}), and f(t) = v_{m-1}
    for t >= t_{m-1}. One PCF is written as an (m, 2) array whose rows are
    (t_k, v_k), or as a list of (t, v) pairs.

    A collection holds PCFs of one dtype (float32 or float64) arranged in a
    tensor ``shape`` (row-major). It accepts:

    * a list (or tuple) of PCFs: shape ``(n,)``;
    * nested lists of PCFs: the nesting gives the shape, e.g. a list of 2
      lists of 3 PCFs has shape ``(2, 3)``; the nesting must be regular;
    * one PCF: shape ``()``;
    * an array of shape ``(*shape, m, 2)``: PCFs that all have m breakpoints
      (used without a copy when it is C-contiguous with the right dtype);
    * CSR arrays, through :meth:`from_csr`.

    The data is validated once, here, and copied into the library; the
    arrays may change afterwards without affecting the collection.

    Dtypes are never mixed silently: NumPy arrays must be float32 or float64
    and all of one dtype, unless ``dtype`` asks for a conversion. Plain
    Python numbers take ``dtype`` (default float64).

    Parameters
    ----------
    data : PCF, nested lists of PCFs, or array of shape (..., m, 2)
    dtype : float32, float64 or None
        Convert the data to this dtype; None keeps the arrays' own dtype.

    Raises
    ------
    TypeError
        Arrays that are not float32/float64 (without ``dtype``), arrays of
        both float32 and float64 (without ``dtype``), non-numeric data.
    ValueError
        A PCF that is not an (m, 2) array, irregular nesting, and (as
        :class:`mpcf.InvalidPcfError`) a PCF with no breakpoints, times not
        strictly increasing, NaN or infinite times or values; the message
        names the function and the breakpoint.

    Examples
    --------
    >>> import mpcf
    >>> f = [(0.0, 3.0), (1.0, 0.0)]          # 3 on [0, 1), then 0
    >>> g = [(0.0, 1.0), (2.0, 0.0)]          # 1 on [0, 2), then 0
    >>> X = mpcf.PcfCollection([f, g])
    >>> X.shape, X.dtype, X.total_breakpoints
    ((2,), dtype('float64'), 4)
    >>> mpcf.PcfCollection([[f, g, f], [g, f, g]], dtype="float32").shape
    (2, 3)
    """

    __slots__ = ()


class PlfCollection(_FunctionCollection):
    """An immutable, validated tensor of piecewise linear functions (PLFs).

    A PLF is a list of m >= 1 breakpoints (t_k, v_k) with finite, strictly
    increasing times t_k and finite values v_k: f(t) = 0 for t < t_0 (a jump
    to v_0 at t_0), f is the linear interpolation of v_k and v_{k+1} on
    [t_k, t_{k+1}], and f(t) = v_{m-1} for t >= t_{m-1}. Persistence
    landscapes and silhouettes (:func:`mpcf.landscape`,
    :func:`mpcf.silhouette`) are PLFs.

    It takes the same inputs as :class:`PcfCollection` (lists of (t, v)
    pairs, ``(m, 2)`` arrays, nested lists, arrays of shape
    ``(..., m, 2)``, :meth:`from_csr`) with the same rules, and every
    function that takes a PCF collection takes a PLF collection: distances
    and kernels are exact for PLFs too (f - g is linear on each merged
    piece). Plain lists passed to those functions are read as PCFs: wrap
    them in a PlfCollection to compute with PLFs. Mixing PCFs and PLFs in
    one call is an :class:`mpcf.InvalidArgumentError`.

    Parameters
    ----------
    data : PLF, nested lists of PLFs, or array of shape (..., m, 2)
    dtype : float32, float64 or None
        Convert the data to this dtype; None keeps the arrays' own dtype.

    Raises
    ------
    TypeError, ValueError
        As :class:`PcfCollection` (an invalid PLF as
        :class:`mpcf.InvalidPcfError`, naming the function and the
        breakpoint).

    Examples
    --------
    >>> import mpcf
    >>> tent = [(0, 0), (1, 1), (2, 0)]        # rises to 1 at t = 1, back to 0 at 2
    >>> X = mpcf.PlfCollection([tent, [(0, 0), (2, 2), (3, 0)]])
    >>> X
    PlfCollection(shape=(2,), dtype=float64, total_breakpoints=6)
    >>> mpcf.evaluate(X, [0.5, 1.5])
    array([[0.5, 0.5],
           [0.5, 1.5]])
    >>> mpcf.lp_norm(X)                        # the areas under the tents
    array([1., 3.])
    >>> float(mpcf.pdist(X, p=2)[0] ** 2)      # the integral of (f - g)^2: 8/3
    2.6666666666666665
    """

    __slots__ = ()
    _NOUN = "PLF"
    _FUNCTION_TYPE = swig.MPCF_PIECEWISE_LINEAR
    _CREATE = staticmethod(swig.mpcf_plfs_create)
    _CREATE_INTERLEAVED = staticmethod(swig.mpcf_plfs_create_interleaved)


def _shape_tuple(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError as exc:
        raise TypeError(f"shape must be a sequence of integers, not {shape!r}") from exc
    for k, d in enumerate(dims):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral):
            raise TypeError(f"shape[{k}] must be an integer, not {d!r}")
        if int(d) < 0:
            raise ValueError(f"shape[{k}] = {int(d)} is negative")
    return tuple(int(d) for d in dims)


def _create(cls: type, dtype: np.dtype, points: np.ndarray, offsets: np.ndarray, shape: Tuple[int, ...]):
    """Creates the handle from interleaved points; names the tensor index of
    an invalid PCF when the shape has more than one dimension."""
    n = offsets.shape[0] - 1
    try:
        return check(
            cls._CREATE_INTERLEAVED(
                _C_DTYPES[dtype], n, address(offsets), address(points) if points.size else None
            )
        )
    except _errors.InvalidPcfError as exc:
        # libmpcf locates the function by its flat index (exc.function_index).
        i = exc.function_index
        if i is None or len(shape) <= 1 or i >= n:
            raise
        where = _format_index(tuple(int(j) for j in np.unravel_index(i, shape)))
        raise type(exc)(
            f"{exc} ({cls._NOUN} {i} is the function at index {where} of the input)",
            exc.status,
            exc.status_name,
            i,
            exc.breakpoint_index,
        ) from None


_CLASSES = {}  # mpcf_function_type -> class, filled below the classes


def function_class(handle: Any) -> type:
    """PcfCollection or PlfCollection, as mpcf_pcfs_function_type says."""
    kind = int(check(swig.mpcf_pcfs_function_type(handle)))
    try:
        return _CLASSES[kind]
    except KeyError:  # pragma: no cover - a newer libmpcf's function type
        raise TypeError(f"libmpcf returned a collection of unknown function type {kind}") from None


def _finish(handle: Any, shape: Tuple[int, ...], dtype: np.dtype) -> Any:
    """Wraps a handle that libmpcf made in the class of its function type,
    giving it `shape`."""
    if len(shape) > _MAX_NDIM:
        raise ValueError(f"shape {shape} has {len(shape)} dimensions; at most {_MAX_NDIM} are supported")
    if shape:
        dims = np.asarray(shape, dtype=np.uint64)
        check(swig.mpcf_pcfs_reshape(handle, len(shape), address(dims)))
    else:
        count = int(check(swig.mpcf_pcfs_count(handle)))
        if count != 1:
            raise ValueError(f"shape () holds 1 function but the collection has {count}")
    return function_class(handle)._wrap(handle, shape, dtype)


def _from_array(cls: type, arr: np.ndarray, target: Optional[np.dtype]) -> Any:
    """An array of shape (*shape, m, 2): used in place when possible."""
    if arr.ndim < 2 or arr.shape[-1] != 2:
        raise ValueError(
            f"an array of {cls._NOUN}s must have shape (..., m, 2) (rows of (t, v)), not {arr.shape}"
        )
    if target is None:
        if arr.dtype not in _C_DTYPES:
            raise TypeError(
                f"the array has dtype {arr.dtype}; libmpcf computes in float32 or float64: "
                f"{_convert_hint(cls)}"
            )
        target = arr.dtype
    elif arr.dtype.kind not in "iuf":
        raise TypeError(f"the array has dtype {arr.dtype}, which cannot be read as numbers")
    points = np.ascontiguousarray(arr, dtype=target)
    shape = tuple(int(d) for d in arr.shape[:-2])
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    m = int(arr.shape[-2])
    offsets = np.arange(n + 1, dtype=np.uint64) * np.uint64(m)
    handle = _create(cls, target, points, offsets, shape)
    return _finish(handle, shape, target)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.generic))


def _is_point(x: Any) -> bool:
    """A (t, v) pair: a length-2 list/tuple of numbers or a 1-D array of 2."""
    if isinstance(x, np.ndarray):
        return x.ndim == 1 and x.shape[0] == 2
    return isinstance(x, (list, tuple)) and len(x) == 2 and _is_scalar(x[0]) and _is_scalar(x[1])


def _walk(obj: Any, index: Tuple[int, ...], leaves: List[Tuple[Tuple[int, ...], Any]],
          noun: str = "PCF") -> Tuple[int, ...]:
    """Collects the functions of nested lists in row-major order and returns
    the shape below `index`."""
    if isinstance(obj, _FunctionCollection):
        raise TypeError(
            f"the element at index {_format_index(index)} is a {type(obj).__name__}; nested inputs "
            "must be arrays or lists of (t, v) pairs"
        )
    if isinstance(obj, np.ndarray) and obj.dtype != object:
        if obj.ndim == 2:
            leaves.append((index, obj))
            return ()
        if obj.ndim > 2:
            sub = tuple(int(d) for d in obj.shape[:-2])
            for idx in np.ndindex(*sub):
                leaves.append((index + idx, obj[idx]))
            return sub
        raise ValueError(
            f"the element at index {_format_index(index)} is an array of shape {obj.shape}; "
            f"a {noun} is an (m, 2) array of (t, v) rows"
        )
    if isinstance(obj, np.ndarray):  # object array: nested like lists
        obj = list(obj) if obj.ndim else [obj.item()]
    if not isinstance(obj, (list, tuple)):
        raise TypeError(
            f"the element at index {_format_index(index)} is {_a(type(obj).__name__)}; expected a "
            f"{noun} ((m, 2) array or list of (t, v) pairs) or a list of {noun}s"
        )
    if obj and _is_point(obj[0]):
        leaves.append((index, obj))
        return ()
    shapes = []
    for k, child in enumerate(obj):
        shapes.append(_walk(child, index + (k,), leaves, noun))
    if shapes and any(s != shapes[0] for s in shapes):
        k = next(k for k, s in enumerate(shapes) if s != shapes[0])
        raise ValueError(
            f"irregular nesting: the element at index {_format_index(index + (0,))} has shape "
            f"{shapes[0]} but the one at {_format_index(index + (k,))} has shape {shapes[k]}"
        )
    return (len(obj),) + (shapes[0] if shapes else ())


def _leaf_array(leaf: Any, index: Tuple[int, ...], target: Optional[np.dtype],
                cls: type) -> Tuple[np.ndarray, bool]:
    """One function as an (m, 2) array and whether its dtype came from a NumPy
    array (typed) or from plain Python numbers."""
    where = _format_index(index)
    noun = cls._NOUN
    typed = isinstance(leaf, np.ndarray)
    try:
        arr = np.asarray(leaf)
    except ValueError as exc:
        raise ValueError(f"the {noun} at index {where} is not a regular list of (t, v) pairs: {exc}") from None
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"the {noun} at index {where} has shape {arr.shape}; a {noun} is an (m, 2) array of (t, v) rows"
        )
    if typed:
        if target is None and arr.dtype not in _C_DTYPES:
            raise TypeError(
                f"the {noun} at index {where} has dtype {arr.dtype}; libmpcf computes in float32 or "
                f"float64: {_convert_hint(cls)}"
            )
        if arr.dtype.kind not in "iuf":
            raise TypeError(f"the {noun} at index {where} has dtype {arr.dtype}, which cannot be read as numbers")
    elif arr.dtype.kind not in "iuf":
        raise TypeError(f"the {noun} at index {where} holds non-numeric data ({arr.dtype})")
    return arr, typed


def _from_nested(cls: type, data: Any, target: Optional[np.dtype], default: np.dtype) -> Any:
    leaves: List[Tuple[Tuple[int, ...], Any]] = []
    shape = _walk(data, (), leaves, cls._NOUN)
    arrays = []
    typed_dtypes = {}
    for index, leaf in leaves:
        arr, typed = _leaf_array(leaf, index, target, cls)
        if typed and target is None:
            typed_dtypes.setdefault(arr.dtype, index)
        arrays.append(arr)
    if target is None:
        if len(typed_dtypes) > 1:
            (d1, i1), (d2, i2) = list(typed_dtypes.items())[:2]
            raise TypeError(
                f"the input mixes {d1} (the {cls._NOUN} at index {_format_index(i1)}) and {d2} (the "
                f"{cls._NOUN} at index {_format_index(i2)}); convert the arrays to one dtype with "
                f".astype(), or wrap the input as mpcf.{cls.__name__}(data, dtype=np.float64)"
            )
        target = next(iter(typed_dtypes)) if typed_dtypes else default
    counts = np.fromiter((a.shape[0] for a in arrays), dtype=np.uint64, count=len(arrays))
    offsets = np.zeros(len(arrays) + 1, dtype=np.uint64)
    np.cumsum(counts, out=offsets[1:])
    points = np.empty((int(offsets[-1]), 2), dtype=target)
    for k, arr in enumerate(arrays):
        points[int(offsets[k]) : int(offsets[k + 1])] = arr
    handle = _create(cls, target, points, offsets, shape)
    return _finish(handle, shape, target)


def as_collection(data: Any, dtype: DTypeLike = None, default_dtype: DTypeLike = np.float64,
                  kind: Optional[type] = None) -> Any:
    """`data` as a collection (returned as is when it already is one, a
    PcfCollection or a PlfCollection); other data is read as functions of
    `kind` (PcfCollection unless given).

    Plain Python numbers take `dtype`, else `default_dtype`; NumPy arrays
    keep their dtype unless `dtype` is given."""
    target = _float_dtype(dtype)
    cls = PcfCollection if kind is None else kind
    if isinstance(data, _FunctionCollection):
        if target is not None and target != data.dtype:
            raise TypeError(
                f"the collection has dtype {data.dtype} but dtype={target} was requested; "
                "collections are not converted silently (build a new one)"
            )
        return data
    if isinstance(data, np.ndarray) and data.dtype != object:
        return _from_array(cls, data, target)
    default = _float_dtype(default_dtype, "default_dtype")
    assert default is not None
    return _from_nested(cls, data, target, default)


def single_pcf(data: Any, name: str, default_dtype: DTypeLike = np.float64,
               kind: Optional[type] = None) -> Any:
    """One function as a collection of size 1 (for lp_distance and friends)."""
    c = as_collection(data, None, default_dtype, kind)
    if c.size != 1:
        raise ValueError(
            f"{name} must be a single {c._NOUN} ((m, 2) array or list of (t, v) pairs), not a collection "
            f"of shape {c.shape}"
        )
    return c


_CLASSES[swig.MPCF_PIECEWISE_CONSTANT] = PcfCollection
_CLASSES[swig.MPCF_PIECEWISE_LINEAR] = PlfCollection


def object_view(X: Any, components: Any) -> Any:
    """X itself (components False), or, for components=True, a view of X in
    which the last axis of its shape is a component axis: a new handle on
    the same breakpoints (mpcf_pcfs_slice, O(1)), shaped like X and marked
    with mpcf_pcfs_set_component_axis, so the user's handle (possibly shared
    between threads) is never changed. The view's Python shape is that of
    the objects, X.shape[:-1], and its size their count; it is only passed
    to libmpcf, never returned."""
    if not isinstance(components, (bool, np.bool_)):
        raise TypeError(f"components must be True or False, not {components!r} ({type(components).__name__})")
    if not components:
        return X
    n = X.size
    handle = check(swig.mpcf_pcfs_slice(X._handle, 0, n))
    if X.ndim >= 1:
        dims = np.asarray(X.shape, dtype=np.uint64)
        check(swig.mpcf_pcfs_reshape(handle, X.ndim, address(dims)))
    # ndim < 2: libmpcf refuses the component axis and says why.
    check(swig.mpcf_pcfs_set_component_axis(handle, 1))
    objects = X.shape[:-1]
    return type(X)._wrap(handle, objects, X.dtype)


def object_slice(X: Any, K: int, begin: int, end: int) -> Any:
    """The objects begin .. end-1 of X seen as objects of K functions (the
    functions begin*K .. end*K-1), as a view with a component axis whose
    Python shape is (end - begin,): for the tiles of mpcf.dask."""
    handle = check(swig.mpcf_pcfs_slice(X._handle, begin * K, end * K))
    dims = np.asarray([end - begin, K], dtype=np.uint64)
    check(swig.mpcf_pcfs_reshape(handle, 2, address(dims)))
    check(swig.mpcf_pcfs_set_component_axis(handle, 1))
    return type(X)._wrap(handle, (end - begin,), X.dtype)
