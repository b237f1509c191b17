"""mpcf.plot and mpcf.plot_barcode: the drawn data (line vertices, segments,
markers, limits) against values worked out by hand, rendered with
matplotlib's Agg backend; and the message when matplotlib is missing.

The right end of the tails is the largest breakpoint plus 5% of the span of
all breakpoint times; the inputs here span 20, so it is the largest time + 1.
"""

import doctest
import os
import sys

import numpy as np
import pytest

import mpcf


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def xy(line):
    return np.asarray(line.get_xdata(), dtype=float).tolist(), np.asarray(line.get_ydata(), dtype=float).tolist()


def test_pcfs_are_drawn_as_steps_through_their_breakpoints(plt, tmp_path):
    X = mpcf.PcfCollection([[(0, 3), (1, 0)], [(0, 1), (2, 5), (20, 0)]])
    fig, ax = plt.subplots()
    assert mpcf.plot(X, ax) is ax
    assert len(ax.lines) == 2
    # times 0 .. 20: the tails end at 20 + 0.05 * 20 = 21
    assert xy(ax.lines[0]) == ([0, 1, 21], [3, 0, 0])
    assert xy(ax.lines[1]) == ([0, 2, 20, 21], [1, 5, 0, 0])
    assert all(line.get_drawstyle() == "steps-post" for line in ax.lines)
    fig.savefig(tmp_path / "pcfs.png")
    assert (tmp_path / "pcfs.png").stat().st_size > 0


def test_plfs_are_drawn_as_lines_through_their_breakpoints(plt):
    P = mpcf.PlfCollection([[(0, 0), (10, 10), (20, 0)], [(5, 2), (15, -1)]])
    fig, ax = plt.subplots()
    mpcf.plot(P, ax)
    assert xy(ax.lines[0]) == ([0, 10, 20, 21], [0, 10, 0, 0])
    assert xy(ax.lines[1]) == ([5, 15, 21], [2, -1, -1])
    assert all(line.get_drawstyle() == "default" for line in ax.lines)


def test_a_landscape_is_one_line_per_level_through_the_tents(plt):
    # Barcode (0, 4), (1, 3): lambda_1(t) = max(0, min(t, 4 - t)) (its tent
    # peaks at (2, 2)), lambda_2(t) = max(0, min(t - 1, 3 - t)).
    L = mpcf.landscape([[(0, 4), (1, 3)]], k=2)
    fig, ax = plt.subplots()
    mpcf.plot(L, ax, right=6)
    assert len(ax.lines) == 2
    lambdas = [lambda t: max(0.0, min(t, 4 - t)), lambda t: max(0.0, min(t - 1, 3 - t))]
    for line, lam in zip(ax.lines, lambdas):
        x, y = xy(line)
        assert x[-1] == 6 and y[-1] == 0
        assert y == [lam(t) for t in x[:-1]] + [0]
    assert (2, 2) in zip(*xy(ax.lines[0])) and (2, 1) in zip(*xy(ax.lines[1]))


def test_every_function_of_a_tensor_in_row_major_order_with_labels(plt):
    X = mpcf.PcfCollection([[[(0, 1)], [(0, 2)]], [[(0, 3)], [(20, 4)]]])  # shape (2, 2)
    fig, ax = plt.subplots()
    mpcf.plot(X, ax, label=["a", "b", "c", "d"], color="k")
    assert [xy(line) for line in ax.lines] == [
        ([0, 21], [1, 1]), ([0, 21], [2, 2]), ([0, 21], [3, 3]), ([20, 21], [4, 4])]
    assert [line.get_label() for line in ax.lines] == ["a", "b", "c", "d"]
    assert all(line.get_color() == "k" for line in ax.lines)
    with pytest.raises(ValueError, match="label has 3 entries for 4 functions"):
        mpcf.plot(X, ax, label=["a", "b", "c"])


def test_plain_data_is_read_as_pcfs_and_one_time_gets_a_tail_of_one(plt):
    fig, ax = plt.subplots()
    mpcf.plot(np.array([[2.0, 7.0]]), ax)      # one breakpoint: its tail runs to 2 + 1
    (line,) = ax.lines
    assert xy(line) == ([2, 3], [7, 7]) and line.get_drawstyle() == "steps-post"


def test_the_current_axes_by_default(plt):
    fig = plt.figure()
    ax = mpcf.plot([[(0, 1), (1, 0)]])
    assert ax is plt.gca() and ax.figure is fig and len(ax.lines) == 1


def test_a_barcode_is_drawn_bar_by_bar_and_infinite_bars_reach_the_right_edge(plt, tmp_path):
    bars = np.array([[0, 20], [5, np.inf], [10, 10]])
    fig, ax = plt.subplots()
    assert mpcf.plot_barcode(bars, ax) is ax
    (segments,) = ax.collections
    # finite ends 0 .. 20: the right edge is 21
    assert [s.tolist() for s in segments.get_segments()] == [
        [[0, 0], [20, 0]], [[5, 1], [21, 1]], [[10, 2], [10, 2]]]
    (marker,) = ax.lines
    assert xy(marker) == ([21], [1]) and marker.get_marker() == ">"
    assert marker.get_linestyle() == "None"
    assert ax.get_xlim() == (-1.05, 21.0) and ax.get_ylim() == (-1.0, 3.0)
    fig.savefig(tmp_path / "barcode.png")
    assert (tmp_path / "barcode.png").stat().st_size > 0


def test_a_barcode_with_right_and_without_infinite_bars(plt):
    fig, ax = plt.subplots()
    mpcf.plot_barcode([(1, 2), (0, 3)], ax, right=4, color="r")
    assert [s.tolist() for s in ax.collections[0].get_segments()] == [[[1, 0], [2, 0]], [[0, 1], [3, 1]]]
    assert len(ax.lines) == 0                      # no infinite bar, no marker
    assert ax.get_xlim() == (-0.2, 4.0)
    fig2, ax2 = plt.subplots()
    mpcf.plot_barcode(np.empty((0, 2)), ax2)       # an empty barcode draws nothing
    assert len(ax2.collections[0].get_segments()) == 0 and len(ax2.lines) == 0


def test_bad_bars_are_refused_naming_the_bar(plt):
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match=r"bar 1 .*death is smaller than the birth"):
        mpcf.plot_barcode([(0, 1), (3, 1)], ax)
    with pytest.raises(ValueError, match=r"\(m, 2\) array"):
        mpcf.plot_barcode([1, 2, 3], ax)


@pytest.mark.parametrize("call", [
    lambda: mpcf.plot(mpcf.PcfCollection([[(0, 1)]])),
    lambda: mpcf.plot_barcode([(0, 1)]),
], ids=["plot", "plot_barcode"])
def test_without_matplotlib_the_message_says_how_to_install_it(monkeypatch, call):
    # A None entry in sys.modules makes `import matplotlib` raise ImportError.
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"matplotlib, which is not installed; install it with `pip install matplotlib`"):
        call()


@pytest.mark.parametrize("fn", [mpcf.plot, mpcf.plot_barcode], ids=["plot", "plot_barcode"])
def test_docstring_examples_run(plt, fn):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(fn, globs={}) if t.examples]
    assert tests
    for test in tests:
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


def test_the_readme_figure_script_runs(plt, tmp_path):
    """bindings/python/examples/plot_readme.py, which makes the README's
    figure from the documented calls, still runs and writes a PNG."""
    import runpy

    script = os.path.join(os.path.dirname(__file__), "..", "examples", "plot_readme.py")
    if not os.path.exists(script):
        pytest.skip("the examples are not beside these tests (installed package)")
    out = tmp_path / "figure.png"
    runpy.run_path(script, run_name="plot_readme")["main"](str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
