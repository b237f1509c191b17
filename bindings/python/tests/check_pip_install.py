"""End-to-end check of `pip install bindings/python` (ctest: python_pip_install).

Builds the wheel from the repository (libmpcf included) with pip, installs it
into a fresh --target directory and imports it from there in a clean
interpreter, checking known values and that the bundled libmpcf is the one
loaded. Exits 77 (skip) when scikit-build-core can be neither imported nor
downloaded from PyPI.

The build is the one users get: CUDA on when a CUDA compiler is found. Set
MPCF_PIP_TEST_CUDA=OFF (or ON) to force it.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77

VERIFY = r"""
import os, sys
import mpcf
site = sys.argv[1]
here = os.path.dirname(os.path.realpath(mpcf.__file__))
assert here == os.path.join(os.path.realpath(site), "mpcf"), here
maps = [line.split()[-1] for line in open("/proc/self/maps") if "libmpcf.so" in line]
assert maps and all(os.path.dirname(os.path.realpath(p)) == here for p in maps), maps
f = [(0, 3), (1, 0)]; g = [(0, 1), (2, 0)]; h = [(0, 10), (2, 5), (3, 0)]
assert mpcf.pdist([f, g, h]).tolist() == [3.0, 22.0, 23.0]
assert mpcf.lp_distance(h, [(0, 5), (6, 0)]) == 25.0
assert mpcf.l2_kernel([[(0, 4), (3, 0)], [(0, 2), (3, 0)]]).tolist() == [[48.0, 24.0], [24.0, 12.0]]
assert mpcf.cdist([[f, g]], [f, g, h], p=float("inf")).shape == (1, 2, 3)
assert mpcf.stable_rank([(0, 2), (1, 3), (1, float("inf"))]).to_list().tolist() == [[0, 3], [2, 1]]
expected = {"__init__.py", "_collection.py", "_errors.py", "_lib.py", "_ops.py", "_progress.py",
            "_tda.py", "_io.py", "py.typed", "swigmpcf.py", "libmpcf.so.0"}
files = {n for n in os.listdir(here) if n != "__pycache__"}
ext = {n for n in files if n.startswith("_swigmpcf") and n.endswith(".so")}
assert len(ext) == 1 and files == expected | ext, sorted(files)
print("installed mpcf", mpcf.__version__, "from", here, "-", mpcf.build_info())
"""


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw)


def have_scikit_build_core():
    probe = "import scikit_build_core, sys; print(scikit_build_core.__version__)"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    return r.returncode == 0


def pypi_has_scikit_build_core(work):
    dest = os.path.join(work, "probe")
    r = run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", dest, "scikit-build-core>=0.10"],
        capture_output=True, text=True, timeout=300,
    )
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True, help="bindings/python of the repository")
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    args = ap.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    pip_cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-cache-dir",
               "--target", os.path.join(args.work, "site")]
    if have_scikit_build_core():
        # Build with the scikit-build-core (and cmake) already installed: no network.
        pip_cmd.append("--no-build-isolation")
    elif not pypi_has_scikit_build_core(args.work):
        print("SKIP: scikit-build-core is neither installed nor downloadable from PyPI")
        return SKIP
    cuda = os.environ.get("MPCF_PIP_TEST_CUDA", "").upper()
    if cuda in ("ON", "OFF"):
        pip_cmd.append(f"-Ccmake.define.MPCF_WITH_CUDA={cuda}")
    pip_cmd += [f"-Cbuild-dir={os.path.join(args.work, 'build')}", args.source]

    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    env.pop("PYTHONPATH", None)
    start = time.monotonic()
    r = run(pip_cmd, env=env, cwd=args.work)
    print(f"pip install took {time.monotonic() - start:.0f} s", flush=True)
    if r.returncode != 0:
        print("FAIL: pip install failed")
        return 1

    # Import from the target in a clean interpreter: no build tree on any path.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME")}
    site = os.path.join(args.work, "site")
    clean["PYTHONPATH"] = site
    with tempfile.TemporaryDirectory() as cwd:
        r = run([sys.executable, "-c", VERIFY, site], env=clean, cwd=cwd)
    if r.returncode != 0:
        print("FAIL: the installed package does not work")
        return 1
    shutil.rmtree(os.path.join(args.work, "build"), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
