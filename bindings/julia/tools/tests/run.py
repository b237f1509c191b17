#!/usr/bin/env python3
"""Runs one test module of the Julia binding tools for ctest.

Usage: run.py MODULE [NEEDED_PYTHON_MODULE ...]

Exits 77 (ctest's SKIP_RETURN_CODE) with the reason when a needed Python
module is missing, else 0 when every test passes and 1 otherwise.
"""

from __future__ import annotations

import importlib
import os
import sys
import unittest


def main(argv) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    module, needed = argv[0], argv[1:]
    for name in needed:
        try:
            importlib.import_module(name)
        except ImportError:
            print(f"SKIP: the Python module {name} is not installed (pip install {name}); "
                  f"{module} needs it")
            return 77
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
