"""Tests a wheel of the Python package as users get it (ctest: python_wheel).

    python check_wheel.py --work DIR [--build cpu|cpu-aarch64 | --wheel FILE]
                          [--offline] [--venv-python PY] [--root DIR]
                          [pytest arguments...]

1. --build cpu runs `packaging/wheels/build.sh cpu` (build trees kept under
   DIR/build, so a second run only recompiles what changed); --wheel FILE
   takes a wheel built before (e.g. the CUDA wheel on the GPU machine; a
   pattern that names one file, e.g. the wheel of another test).
2. Creates a fresh virtual environment DIR/venv and installs the wheel with
   `pip install --only-binary=:all:`: NumPy, SciPy and pytest come as wheels
   from PyPI (or, with --offline, from the interpreter's own site-packages:
   the venv then sees them and pip uses no index). While pip and the tests
   run, `cc`, `gcc`, `g++`, `c++`, `nvcc`, `cmake` and `swig` on PATH are
   stubs that fail: nothing may be compiled.
3. Checks the installed package: imported from the venv, libmpcf loaded from
   the package's own folder, the files the wheel must hold, known values.
4. Runs bindings/python/tests against the installed package (from a folder
   outside the repository, MPCF_PYTHON_EXPECT_PACKAGE naming the installed
   copy), with the remaining arguments (default `-m "not gpu"`).

With --root DIR, steps 2 to 4 run inside DIR, the root of another Debian
system (made by packaging/install-deps.sh with debootstrap: Debian 11's
Python 3.9, Debian 13's Python 3.13, Debian 12 for arm64, whose programs run
under QEMU's user-mode emulation), with that system's python3: a fresh
machine of another release, glibc and CPython (or architecture) that sees
nothing of this one but the repository and the work folder (bind-mounted,
the repository read-only), /proc, and this machine's DNS, hosts and TLS
certificates (to reach PyPI). It needs root (chroot, mounts in a private
mount namespace: unshare).

Exit status: pytest's, 1 for a failed step, 77 (skip) when --build is asked
and PyPI cannot be reached for the build tools, or when --root names no
Debian root (or this is not root).
"""

import argparse
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TESTS = os.path.join(ROOT, "bindings", "python", "tests")
PACKAGE_SOURCES = os.path.join(ROOT, "bindings", "python", "src", "mpcf")
FORBIDDEN_TOOLS = ("cc", "gcc", "g++", "c++", "clang", "clang++", "nvcc", "cmake", "swig", "swig4.0")

VERIFY = r"""
import os, sys
import mpcf
site, expected_files = sys.argv[1], set(sys.argv[2].split(","))
here = os.path.dirname(os.path.realpath(mpcf.__file__))
assert here == os.path.join(os.path.realpath(site), "mpcf"), f"mpcf imported from {here}, not {site}"
maps = {line.split()[-1] for line in open("/proc/self/maps") if "libmpcf" in line}
assert maps, "libmpcf is not loaded"
for path in maps:
    assert os.path.dirname(os.path.realpath(path)) == here, f"libmpcf loaded from {path}, not {here}"
f = [(0, 3), (1, 0)]; g = [(0, 1), (2, 0)]; h = [(0, 10), (2, 5), (3, 0)]
assert mpcf.pdist([f, g, h]).tolist() == [3.0, 22.0, 23.0]
assert mpcf.lp_distance(h, [(0, 5), (6, 0)]) == 25.0
assert mpcf.l2_kernel([[(0, 4), (3, 0)], [(0, 2), (3, 0)]]).tolist() == [[48.0, 24.0], [24.0, 12.0]]
assert mpcf.cdist([[f, g]], [f, g, h], p=float("inf")).shape == (1, 2, 3)
assert mpcf.stable_rank([(0, 2), (1, 3), (1, float("inf"))]).to_list().tolist() == [[0, 3], [2, 1]]
d, i = mpcf.knn([f, g, h], k=1)
assert d.ravel().tolist() == [3.0, 3.0, 22.0] and i.ravel().tolist() == [1, 0, 0], (d, i)
files = {n for n in os.listdir(here) if n != "__pycache__"}
ext = {n for n in files if n.startswith("_swigmpcf") and n.endswith(".so")}
assert len(ext) == 1, f"expected one compiled module, found {sorted(ext)}"
assert files == expected_files | ext, f"files {sorted(files)}, expected {sorted(expected_files | ext)}"
print("installed", mpcf.__version__, "from", here, "with", ext.pop())
print(mpcf.build_info())
print("CUDA devices:", mpcf.cuda_device_count())
"""


def run(cmd, **kw):
    shown = [a if len(a) < 200 else a[:40].strip() + " ..." for a in cmd]
    print("+", " ".join(shown), flush=True)
    return subprocess.run(cmd, **kw)


def forbidding_path(work):
    """A PATH whose first folder holds failing stubs of the build tools."""
    stubs = os.path.join(work, "no-build-tools")
    os.makedirs(stubs, exist_ok=True)
    for tool in FORBIDDEN_TOOLS:
        path = os.path.join(stubs, tool)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\necho 'check_wheel: {tool} was run, but installing a wheel must build nothing' >&2\nexit 97\n")
        os.chmod(path, 0o755)
    return stubs + os.pathsep + os.environ.get("PATH", "")


def build_wheel(flavour, work):
    """bash packaging/wheels/build.sh FLAVOUR into work/dist; the wheel path."""
    dist = os.path.join(work, "dist")
    env = dict(os.environ)
    env.update(MPCF_WHEEL_DIR=dist, MPCF_WHEEL_BUILD_DIR=os.path.join(work, "build"), PYTHON=sys.executable)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    env.pop("PYTHONPATH", None)
    start = time.monotonic()
    r = run(["bash", os.path.join(HERE, "build.sh"), flavour], env=env)
    print(f"build.sh {flavour} took {time.monotonic() - start:.0f} s", flush=True)
    if r.returncode != 0:
        return None
    wheels = glob.glob(os.path.join(dist, "mpcf-*.whl"))
    if len(wheels) != 1:
        print(f"FAIL: expected one mpcf-*.whl in {dist}, found {wheels}")
        return None
    return wheels[0]


def pypi_reachable(work):
    r = run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
             "--dest", os.path.join(work, "probe"), "scikit-build-core>=0.10"],
            capture_output=True, text=True, timeout=300)
    return r.returncode == 0


# The environment that reaches PyPI from inside a --root system.
PASSED_TO_ROOT = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                  "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_DEFAULT_TIMEOUT", "PIP_TRUSTED_HOST",
                  "MPCF_WHEEL_FIND_LINKS")
CERTS = "/etc/ssl/certs/ca-certificates.crt"


def run_in_root(system, work, wheel, forwarded):
    """This script, with FORWARDED arguments, inside the Debian root SYSTEM."""
    python = os.path.join(system, "usr", "bin", "python3")
    if not os.path.exists(python) and not os.path.islink(python):
        print(f"SKIP: no Debian root with python3 at {system} (packaging/install-deps.sh makes it)")
        return SKIP
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("chroot"):
        print("SKIP: running in another root needs root, unshare and chroot")
        return SKIP
    os.makedirs(work, exist_ok=True)
    if not os.path.realpath(wheel).startswith(os.path.realpath(work) + os.sep):
        shutil.copy2(wheel, work)
        wheel = os.path.join(work, os.path.basename(wheel))
    mounts = [
        "mount -t proc proc $R/proc",
        "mkdir -p $R/dev/shm && mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm",
        f"mkdir -p $R{shlex.quote(ROOT)} && mount --bind {shlex.quote(ROOT)} $R{shlex.quote(ROOT)}"
        f" && mount -o remount,bind,ro $R{shlex.quote(ROOT)}",
        f"mkdir -p $R{shlex.quote(work)} && mount --bind {shlex.quote(work)} $R{shlex.quote(work)}",
    ]
    for path in ("/etc/resolv.conf", "/etc/hosts", CERTS):
        if os.path.isfile(path):
            mounts.append(f"touch $R{path} && mount --bind {path} $R{path}")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "PIP_CERT": CERTS, "SSL_CERT_FILE": CERTS,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.update({k: os.environ[k] for k in PASSED_TO_ROOT if k in os.environ})
    inner = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + [
        "python3", os.path.join(HERE, "check_wheel.py"), "--work", work, "--wheel", wheel] + forwarded
    script = "\n".join(["set -e", "R=" + shlex.quote(os.path.abspath(system))] + mounts +
                       ['exec chroot "$R" ' + " ".join(shlex.quote(a) for a in inner)])
    release = ""
    try:
        with open(os.path.join(system, "etc", "os-release")) as f:
            release = next((l.split("=", 1)[1].strip().strip('"') for l in f if l.startswith("PRETTY_NAME=")), "")
    except OSError:
        pass
    print(f"in the root {system} ({release})", flush=True)
    # A private mount namespace: the mounts end with the command.
    return run(["unshare", "--mount", "--fork", "--propagation", "private", "sh", "-c", script]).returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True, help="scratch folder (its venv is made anew)")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--build", choices=["cpu", "cpu-aarch64"], help="build this wheel with build.sh first")
    group.add_argument("--wheel", help="the wheel to test")
    ap.add_argument("--offline", action="store_true",
                    help="no package index: the venv sees the interpreter's site-packages (NumPy, SciPy, pytest)")
    ap.add_argument("--venv-python", default=sys.executable, help="interpreter of the venv (default: this one)")
    ap.add_argument("--root", help="install and test inside this Debian root (chroot), with its python3")
    args, pytest_args = ap.parse_known_args()
    pytest_args = pytest_args or ["-m", "not gpu"]
    if pytest_args[0] == "--":
        pytest_args = pytest_args[1:]

    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    if args.build:
        if not os.environ.get("MPCF_WHEEL_FIND_LINKS") and not pypi_reachable(work):
            print("SKIP: PyPI is not reachable for the wheel build tools (set MPCF_WHEEL_FIND_LINKS)")
            return SKIP
        wheel = build_wheel(args.build, work)
        if wheel is None:
            print("FAIL: the wheel build failed")
            return 1
    else:
        # A pattern names the wheel another test built (one file).
        found = sorted(glob.glob(os.path.abspath(args.wheel)))
        if len(found) != 1:
            print(f"FAIL: {args.wheel} names {len(found)} files, not one wheel")
            return 1
        wheel = found[0]
    name = os.path.basename(wheel)
    print("wheel:", name, f"({os.path.getsize(wheel) / 1024:.0f} KiB)")
    if "-manylinux_" not in name and "-manylinux2014_" not in name:
        print(f"FAIL: {name} carries no manylinux platform tag (not repaired by auditwheel?)")
        return 1
    if args.root:
        forwarded = (["--offline"] if args.offline else []) + ["--"] + pytest_args
        return run_in_root(args.root, work, wheel, forwarded)

    venv = os.path.join(work, "venv")
    shutil.rmtree(venv, ignore_errors=True)
    venv_cmd = [args.venv_python, "-m", "venv"] + (["--system-site-packages"] if args.offline else [])
    if run(venv_cmd + [venv]).returncode != 0:
        # Without ensurepip (no python3-venv), an offline venv still has pip:
        # the interpreter's own, seen through --system-site-packages.
        shutil.rmtree(venv, ignore_errors=True)
        if not args.offline or run(venv_cmd + ["--without-pip", venv]).returncode != 0:
            print("FAIL: could not create the virtual environment (Debian: apt-get install python3-venv)")
            return 1
    py = os.path.join(venv, "bin", "python")
    if subprocess.run([py, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        # No pip in the venv nor in the interpreter's site-packages: install it
        # from the pip wheel of the wheel folder, if there is one.
        pip_wheels = glob.glob(os.path.join(os.environ.get("MPCF_WHEEL_FIND_LINKS", "/nonexistent"), "pip-*.whl"))
        if not pip_wheels or run([py, os.path.join(pip_wheels[0], "pip"), "install", "-q", "--no-index",
                                  pip_wheels[0]]).returncode != 0:
            print("FAIL: the virtual environment has no pip (and no pip wheel in MPCF_WHEEL_FIND_LINKS)")
            return 1

    # Offline (the GPU machine), NumPy, SciPy and pytest are the machine's
    # own, which its Python may find through PYTHONPATH: keep that, and let
    # pip install the wheel alone (--no-deps; the tests import NumPy anyway).
    dropped = ("PYTHONHOME", "LD_LIBRARY_PATH") if args.offline else ("PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    if args.offline:
        # Where the interpreter itself finds NumPy, SciPy and pytest (a
        # venv may not see them: user sites, vendor paths): after the venv's
        # own site-packages, so the installed mpcf still comes first.
        found = subprocess.run(
            [args.venv_python, "-c",
             "import importlib.util as u, os\n"
             "for m in ('numpy', 'scipy', 'pytest', '_pytest', 'pluggy', 'iniconfig'):\n"
             "    s = u.find_spec(m)\n"
             "    if s and s.origin: print(os.path.dirname(os.path.dirname(s.origin)))"],
            capture_output=True, text=True, env=env).stdout.split()
        extra = [d for d in dict.fromkeys(found) if d]
        if extra:
            env["PYTHONPATH"] = os.pathsep.join(([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []) + extra)
            print("offline: the interpreter's NumPy/SciPy/pytest from", ", ".join(extra))
        # For later steps that run the venv's python (gpu_check.sh's timing).
        with open(os.path.join(work, "pythonpath"), "w") as f:
            f.write(env.get("PYTHONPATH", ""))
    env["PATH"] = forbidding_path(work)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # --no-compile: no .pyc written for the whole of NumPy and SciPy (minutes
    # under emulation); the tests run with PYTHONDONTWRITEBYTECODE anyway.
    pip = [py, "-m", "pip", "install", "--disable-pip-version-check", "--no-compile", "--only-binary=:all:"]
    if args.offline:
        pip += ["--no-index", "--no-deps", wheel]
    else:
        pip += [wheel + "[test,progress]"]  # the wheel's extras: SciPy, pytest, tqdm
    if run(pip, env=env).returncode != 0:
        print("FAIL: pip install of the wheel failed")
        return 1
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()

    expected = sorted(n for n in os.listdir(PACKAGE_SOURCES) if n != "__pycache__")
    expected += ["swigmpcf.py", "libmpcf.so.0"]
    with tempfile.TemporaryDirectory() as outside:
        if run([py, "-c", VERIFY, site, ",".join(expected)], env=env, cwd=outside).returncode != 0:
            print("FAIL: the installed package is not what the wheel must hold")
            return 1
        env["MPCF_PYTHON_EXPECT_PACKAGE"] = os.path.join(site, "mpcf")
        r = run([py, os.path.join(TESTS, "run_pytest.py")] + pytest_args, env=env, cwd=outside)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
