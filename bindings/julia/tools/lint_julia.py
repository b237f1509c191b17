#!/usr/bin/env python3
"""Structural lint for Julia files that cannot be run here (no Julia).

Usage: lint_julia.py FILE.jl [FILE.jl ...]

Checks that strings, comments and brackets are terminated and balanced, that
every block keyword (function, if, for, begin, let, try, struct, ...) has its
`end`, that else/elseif/catch/finally sit in the right block, and that each
`pointer(x)` is inside `GC.@preserve x ... begin ... end`. Exit status 0 when
every file is clean, 1 otherwise (problems listed), 2 when a file is missing.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import julia_source  # noqa: E402


def lint_text(text: str) -> List[str]:
    try:
        lexed = julia_source.tokenize(text)
    except julia_source.JuliaSourceError as err:
        return [f"line {err.line}: {err.message}"]
    return julia_source.check_structure(lexed)


def main(argv: Optional[List[str]] = None) -> int:
    files = sys.argv[1:] if argv is None else argv
    if not files:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    status = 0
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as err:
            print(f"error: cannot read {path}: {err}", file=sys.stderr)
            return 2
        problems = lint_text(text)
        if problems:
            status = 1
            for p in problems:
                print(f"{path}: {p}")
        else:
            n = text.count("\n")
            print(f"OK: {path} ({n} lines): blocks, brackets and GC.@preserve are consistent")
    return status


if __name__ == "__main__":
    sys.exit(main())
