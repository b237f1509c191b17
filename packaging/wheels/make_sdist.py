"""Makes the source distribution of the Python package mpcf (build.sh sdist).

    python make_sdist.py --root REPO --stage DIR --out DIST

bindings/python/pyproject.toml builds from the repository (its CMake source
directory is ../..), which an sdist of bindings/python alone would not hold.
So the sdist is made from a staged tree: the files git tracks of the top-level
CMake project that the Python package needs (core/, capi/, cuda/, the
install rules of packaging/, bindings/python/ with its tests) and, at its
top, that pyproject.toml with its paths made relative to the top and SWIG
added to the build requirements (from PyPI: nothing but a compiler and CMake
is needed from the machine). scikit-build-core's own build_sdist hook then
writes mpcf-<version>.tar.gz; `pip install` of it builds libmpcf (CUDA where
nvcc and a GPU are there, the SIMD walk where Highway's headers are) and the
module for the installing interpreter.

Needs git (the file list) and scikit-build-core in this interpreter.
"""

import argparse
import os
import shutil
import subprocess
import sys

# What the sdist holds: the top-level project minus what a Python build
# leaves out (tests/, the other bindings, the conda recipe, the wheels' scripts).
PATHS = [
    "CMakeLists.txt",
    "core",
    "capi",
    "cuda",
    "packaging/CMakeLists.txt",
    "packaging/cmake",
    "packaging/pkgconfig",
    "bindings/CMakeLists.txt",
    "bindings/python",
]

# (old, new) in bindings/python/pyproject.toml, each found exactly once.
EDITS = [
    ('requires = ["scikit-build-core>=0.10"]',
     'requires = ["scikit-build-core>=0.10", "swig>=4.2"]'),
    ('readme = "README.md"', 'readme = "bindings/python/README.md"'),
    ('cmake.source-dir = "../.."', 'cmake.source-dir = "."'),
    ('wheel.packages = ["src/mpcf"]', 'wheel.packages = ["bindings/python/src/mpcf"]'),
]

HEADER = """\
# The pyproject.toml of the mpcf sdist, made by packaging/wheels/make_sdist.py
# from bindings/python/pyproject.toml (paths relative to the top of the
# repository; SWIG from PyPI).
"""


def sdist_pyproject(text):
    for old, new in EDITS:
        if text.count(old) != 1:
            raise SystemExit(f"make_sdist: bindings/python/pyproject.toml must hold {old!r} once")
        text = text.replace(old, new)
    return HEADER + text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--stage", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    root, stage, out = (os.path.abspath(p) for p in (args.root, args.stage, args.out))

    files = subprocess.run(["git", "-C", root, "ls-files", "-z", "--"] + PATHS,
                           capture_output=True, check=True).stdout.decode().split("\0")
    files = [f for f in files if f and os.path.isfile(os.path.join(root, f))]
    if "core/CMakeLists.txt" not in files:
        raise SystemExit(f"make_sdist: git lists no sources under {root}")
    shutil.rmtree(stage, ignore_errors=True)
    for f in files:
        os.makedirs(os.path.dirname(os.path.join(stage, f)), exist_ok=True)
        shutil.copy2(os.path.join(root, f), os.path.join(stage, f))
    with open(os.path.join(root, "bindings", "python", "pyproject.toml")) as f:
        pyproject = sdist_pyproject(f.read())
    with open(os.path.join(stage, "pyproject.toml"), "w") as f:
        f.write(pyproject)

    os.makedirs(out, exist_ok=True)
    os.chdir(stage)
    from scikit_build_core.build import build_sdist

    name = build_sdist(out)
    print(f"make_sdist: {os.path.join(out, name)} ({len(files) + 1} files)")


if __name__ == "__main__":
    sys.exit(main())
