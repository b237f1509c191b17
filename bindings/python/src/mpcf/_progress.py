"""Progress bars for long computations: tqdm when it is installed, a plain
text bar on stderr otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any, Optional, TextIO


class StderrBar:
    """A one-line text bar, redrawn at most every `interval` seconds."""

    def __init__(self, desc: str, stream: Optional[TextIO] = None, width: int = 30,
                 interval: float = 0.2) -> None:
        self._desc = desc
        self._stream = stream if stream is not None else sys.stderr
        self._width = width
        self._interval = interval
        self._last_draw = -float("inf")
        self._last = (0, 0)

    def update(self, done: int, total: int) -> None:
        self._last = (done, total)
        now = time.monotonic()
        if now - self._last_draw >= self._interval:
            self._draw(done, total)
            self._last_draw = now

    def _draw(self, done: int, total: int) -> None:
        if total > 0:
            fraction = min(1.0, done / total)
            filled = int(round(fraction * self._width))
            bar = "#" * filled + "." * (self._width - filled)
            line = f"\r{self._desc}: [{bar}] {100.0 * fraction:5.1f}% ({done}/{total} pairs)"
        else:
            line = f"\r{self._desc}: [{'.' * self._width}]   0.0% (starting)"
        self._stream.write(line)
        self._stream.flush()

    def close(self) -> None:
        self._draw(*self._last)
        self._stream.write("\n")
        self._stream.flush()


class TqdmBar:
    """The same interface over a tqdm bar."""

    def __init__(self, tqdm_class: Any, desc: str) -> None:
        self._bar = tqdm_class(total=0, desc=desc, unit="pair", unit_scale=True)

    def update(self, done: int, total: int) -> None:
        if total and self._bar.total != total:
            self._bar.total = total
            self._bar.refresh()
        if done > self._bar.n:
            self._bar.update(done - self._bar.n)

    def close(self) -> None:
        self._bar.close()


def make_bar(progress: bool, desc: str) -> Optional[Any]:
    """None when `progress` is false; a tqdm bar if tqdm can be imported; a
    StderrBar otherwise."""
    if not isinstance(progress, (bool, int)):
        raise TypeError(f"progress must be True or False, not {type(progress).__name__}")
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return StderrBar(desc)
    return TqdmBar(tqdm, desc)
