"""Drawing functions and barcodes with matplotlib (an optional dependency).

``plot`` draws every function of a collection as one line: a PCF as steps
(``drawstyle="steps-post"`` through its breakpoints), a PLF as the straight
lines through its breakpoints. Each line starts at the function's first
breakpoint (the 0 before it is not drawn) and its last value is drawn on to
a right end shared by all the lines: the largest breakpoint time plus 5% of
the span of all breakpoint times (plus 1 when they all lie at one time), or
``right=`` when given. ``plot_barcode`` draws one persistence diagram as
horizontal bars.

matplotlib is imported on the first call only, so ``import mpcf`` never
needs it.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._collection import PcfCollection, _FunctionCollection, as_collection

_MISSING = (
    "mpcf.{name} draws with matplotlib, which is not installed; "
    "install it with `pip install matplotlib`"
)

#: The tails run on past the largest breakpoint by this share of the span.
RIGHT_MARGIN = 0.05


def _axes(ax: Any, name: str) -> Any:
    """`ax`, or the current Axes of pyplot (a new figure if there is none)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise ImportError(_MISSING.format(name=name)) from e
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # matplotlib present but pyplot broken
        raise ImportError(_MISSING.format(name=name)) from e
    return plt.gca()


def right_end(lo: float, hi: float) -> float:
    """The right end of the drawing for breakpoint times in [lo, hi]: hi plus
    5% of hi - lo, or hi + 1 when lo == hi."""
    span = hi - lo
    return hi + (RIGHT_MARGIN * span if span > 0 else 1.0)


def plot_vertices(X: Any, right: Optional[float] = None) -> Tuple[list, float]:
    """The points ``plot`` draws: one ``(x, y)`` pair of arrays per function
    (row-major over the shape), each the function's breakpoints followed by
    ``(right, last value)``, and the right end used."""
    offsets, times, values = X.to_csr()
    if right is None:
        right = right_end(float(times.min()), float(times.max())) if times.size else 1.0
    out = []
    for i in range(X.size):
        b, e = int(offsets[i]), int(offsets[i + 1])
        t = np.append(times[b:e].astype(np.float64), right)
        v = np.append(values[b:e].astype(np.float64), values[e - 1])
        out.append((t, v))
    return out, float(right)


def plot(X: Any, ax: Any = None, *, right: Optional[float] = None, **kwargs: Any) -> Any:
    """Draw every function of a collection with matplotlib; returns the Axes.

    A :class:`PcfCollection` is drawn as steps (``drawstyle="steps-post"``
    through the breakpoints: the value v_k on [t_k, t_k+1)), a
    :class:`PlfCollection` as the lines through its breakpoints. Collections
    of any shape give one line per function, in row-major order; other data
    (an ``(m, 2)`` array, a list of them) is read as PCFs. Each line starts
    at its first breakpoint and holds its last value up to the right end:
    ``right``, or the largest breakpoint time plus 5% of the span of all
    breakpoint times (plus 1 when they all lie at one time).

    ``ax``: the matplotlib Axes to draw into (default: pyplot's current
    Axes). Other keyword arguments go to ``Axes.plot`` for every line
    (``color``, ``linewidth``, ``alpha``, ...); ``label`` may be one string
    for all lines or a sequence with one label per function.

    Raises ImportError naming ``pip install matplotlib`` when matplotlib is
    missing.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, mpcf
    >>> fig, ax = plt.subplots()
    >>> line, = mpcf.plot(mpcf.PcfCollection([[(0, 2), (1, 1), (3, 0)]]), ax).lines
    >>> line.get_xdata().tolist(), line.get_ydata().tolist(), line.get_drawstyle()
    ([0.0, 1.0, 3.0, 3.15], [2.0, 1.0, 0.0, 0.0], 'steps-post')
    >>> L = mpcf.landscape([[(0, 4), (1, 3)]], k=2)      # two PLFs: lambda_1, lambda_2
    >>> len(mpcf.plot(L, ax, right=5).lines)             # two more lines on the same Axes
    3
    >>> plt.close(fig)
    """
    ax = _axes(ax, "plot")
    if not isinstance(X, _FunctionCollection):
        X = as_collection(X)
    lines, _ = plot_vertices(X, right)
    labels = kwargs.pop("label", None)
    if labels is not None and not isinstance(labels, str):
        labels = list(labels)
        if len(labels) != len(lines):
            raise ValueError(
                f"label has {len(labels)} entries for {len(lines)} functions; give one per function "
                "or a single string"
            )
    if isinstance(X, PcfCollection):
        kwargs.setdefault("drawstyle", "steps-post")
    for i, (t, v) in enumerate(lines):
        extra = {}
        if labels is not None:
            extra["label"] = labels if isinstance(labels, str) else labels[i]
        ax.plot(t, v, **kwargs, **extra)
    return ax


def plot_barcode(
    barcode: Any,
    ax: Any = None,
    *,
    right: Optional[float] = None,
    infinite_marker: str = ">",
    **kwargs: Any,
) -> Any:
    """Draw one persistence barcode: bar i as a horizontal segment from its
    birth to its death at height i; returns the Axes.

    ``barcode``: an ``(m, 2)`` array-like of (birth, death) rows, checked by
    libmpcf as :func:`betti_curve` checks bars (finite births, death >=
    birth, deaths may be ``inf``). An infinite bar runs to the right edge of
    the plot, ``right`` or the largest finite birth or death plus 5% of the
    span of the finite ends (plus 1 when they all lie at one time), and ends
    in ``infinite_marker``; the x-axis ends there. Other keyword arguments go
    to ``Axes.hlines`` (``color``, ``linewidth``, ...).

    Raises ImportError naming ``pip install matplotlib`` when matplotlib is
    missing.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, numpy as np, mpcf
    >>> fig, ax = plt.subplots()
    >>> ax = mpcf.plot_barcode(np.array([[0, 2], [1, np.inf]]), ax)
    >>> [s.tolist() for s in ax.collections[0].get_segments()]   # the second bar runs to 2.1
    [[[0.0, 0.0], [2.0, 0.0]], [[1.0, 1.0], [2.1, 1.0]]]
    >>> plt.close(fig)
    """
    ax = _axes(ax, "plot_barcode")
    bars = np.asarray(barcode, dtype=np.float64)
    if bars.ndim != 2 or bars.shape[1] != 2:
        raise ValueError(f"the barcode must be an (m, 2) array of (birth, death) rows; its shape is {bars.shape}")
    from ._tda import betti_curve

    betti_curve(bars)  # libmpcf's checks of the bars; raises naming the bad bar
    births, deaths = bars[:, 0], bars[:, 1]
    finite = np.concatenate([births, deaths[np.isfinite(deaths)]])
    if right is None:
        right = right_end(float(finite.min()), float(finite.max())) if finite.size else 1.0
    infinite = ~np.isfinite(deaths)
    ends = np.where(infinite, right, deaths)
    y = np.arange(len(bars), dtype=np.float64)
    ax.hlines(y, births, ends, **kwargs)
    if infinite.any():
        ax.plot(np.full(int(infinite.sum()), right), y[infinite], linestyle="none",
                marker=infinite_marker, color=kwargs.get("color", kwargs.get("colors", "C0")),
                clip_on=False)
    if len(bars):
        left = float(finite.min())
        ax.set_xlim(left - RIGHT_MARGIN * (right - left), right)
        ax.set_ylim(-1, len(bars))
    return ax


__all__ = ["plot", "plot_barcode"]
