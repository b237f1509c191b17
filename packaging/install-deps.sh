#!/usr/bin/env bash
# Installs everything libmpcf's build, tests and bindings need on Debian 12
# (run as root). Idempotent: packages already present are left alone.
#   MPCF_DEPS=minimal  only what building the library and the CLI needs
#   PYTHON=...         the interpreter that gets the Python packages (default python3)
#   MPCF_VENV=...      where the virtual environment goes when one is needed
#                      (default: .venv in the repository)
#   --print-python     print the interpreter to use for Python on stdout
#                      (all other messages go to stderr)
#   MPCF_ROOTS=...     where the Debian roots of the wheel tests go (default
#                      /var/cache/mpcf/debian-roots); MPCF_ROOTS=none makes none
#   MPCF_ROOT_ARM64=1  also the arm64 root (for ctest python_wheel_aarch64)
#
# The wheel tests install the wheels into other Debian systems (ctest
# python_wheel_py39 and _py313): Debian 11 (Python 3.9, glibc 2.31) and
# Debian 13 (Python 3.13), each a minimal root made once by debootstrap
# (about 2 minutes each, 270 MB) and kept; with MPCF_ROOT_ARM64=1 also
# Debian 12 for arm64 (python_wheel_aarch64, whose programs run under QEMU's
# user-mode emulation; about 4 minutes).
#
# Python packages are installed with pip. Debian's own python3 refuses that
# (PEP 668, "externally-managed-environment"): for it, they go into a
# virtual environment made here, and --print-python names its interpreter.
# Activate it yourself with `source .venv/bin/activate`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
print_python=0
for arg in "$@"; do
  case "$arg" in
    --print-python) print_python=1 ;;
    *) echo "install-deps: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
say() { echo "install-deps: $*" >&2; }

apt_install() {  # apt_install [--no-install-recommends] PACKAGE...
  local opts=() missing=""
  if [ "$1" = --no-install-recommends ]; then opts=("$1"); shift; fi
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  say "apt-get install${opts[*]:+ ${opts[*]}}$missing"
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${_mpcf_apt_updated:-}" ]; then apt-get update -qq >&2; _mpcf_apt_updated=1; fi
  apt-get install -y -qq "${opts[@]}" $missing >/dev/null
}

minimal="build-essential cmake pkg-config libhwy-dev"
# g++-11: nvcc's host compiler for the CUDA wheel (its libstdc++ needs glibc
# 2.34 at most); debootstrap: the roots of the wheel tests (below).
full="$minimal libcmocka-dev libbenchmark-dev swig python3-dev python3-venv r-base-core r-base-dev \
r-cran-rcpp r-cran-testthat python3-pycparser g++-11 debootstrap"
if [ "${MPCF_DEPS:-full}" = minimal ]; then
  apt_install $minimal
  [ $print_python = 1 ] && echo "${PYTHON:-python3}"
  exit 0
fi
apt_install $full
# checkbashisms, for R CMD check --as-cran (portability of the R package's configure).
apt_install --no-install-recommends devscripts

# The Debian roots of the wheel tests: NAME SUITE ARCH, each with python3
# and its venv module. An arm64 root's programs run through binfmt_misc and
# QEMU (registered here where it is not yet).
roots=${MPCF_ROOTS:-/var/cache/mpcf/debian-roots}
make_root() {  # make_root NAME SUITE ARCH
  local dest=$roots/$1
  [ -x "$dest/usr/bin/python3" ] && [ -f "$dest/.mpcf-root-done" ] && return 0
  if [ "$3" != "$(dpkg --print-architecture)" ]; then
    apt_install qemu-user-static binfmt-support
    if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
      [ -e /proc/sys/fs/binfmt_misc/register ] \
        || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
      update-binfmts --enable qemu-aarch64 >&2 2>/dev/null || true
    fi
    if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
      say "no binfmt_misc registration of qemu-aarch64 here: the $1 root is not made (its tests skip)"
      return 0
    fi
  fi
  say "debootstrap $2 ($3) into $dest (about 2 minutes)"
  rm -rf "$dest" && mkdir -p "$roots"
  if ! debootstrap --variant=minbase --arch="$3" --include=python3,python3-venv "$2" "$dest" \
      >"$roots/$1.log" 2>&1; then
    say "debootstrap $2 ($3) failed: $roots/$1.log"
    tail -n 20 "$roots/$1.log" >&2
    exit 1
  fi
  touch "$dest/.mpcf-root-done"
}
if [ "$roots" != none ]; then
  make_root bullseye-amd64 bullseye amd64
  make_root trixie-amd64 trixie amd64
  if [ "${MPCF_ROOT_ARM64:-0}" = 1 ]; then make_root bookworm-arm64 bookworm arm64; fi
fi

py=${PYTHON:-python3}
py=$(command -v "$py") || { say "no Python interpreter '${PYTHON:-python3}'"; exit 1; }
# PEP 668: an interpreter outside any venv whose stdlib carries EXTERNALLY-MANAGED.
if "$py" - <<'PY'
import os, sys, sysconfig
managed = os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
sys.exit(0 if managed and sys.prefix == sys.base_prefix else 1)
PY
then
  venv=${MPCF_VENV:-$root/.venv}
  if [ ! -x "$venv/bin/python3" ]; then
    say "$py is managed by Debian (PEP 668, pip refuses to install into it):"
    say "Python packages go into the virtual environment $venv (source $venv/bin/activate)"
    "$py" -m venv "$venv" >&2
  fi
  py=$venv/bin/python3
fi

# dask, distributed and zarr: the tests of mpcf.dask (a LocalCluster of worker
# processes, mpcf.dask.to_zarr); they skip where these are missing.
need=""
for m in numpy scipy pytest scikit_build_core pycparser jinja2 yaml dask distributed zarr matplotlib; do
  "$py" -c "import $m" 2>/dev/null || need="$need $m"
done
if [ -n "$need" ]; then
  say "pip install$need (into $("$py" -c 'import sys; print(sys.prefix)'))"
  "$py" -m pip install -q --disable-pip-version-check \
    $(echo "$need" | sed 's/scikit_build_core/scikit-build-core/; s/\byaml\b/pyyaml/; s/\bdask\b/dask[array]/') >&2
fi

# umap-learn and scikit-learn: the tests of mpcf.kneighbors_graph with the
# clients its docstring names (bindings/python/tests/test_graph_clients.py;
# they skip where these are missing). Pinned, so that CI runs the docstring's
# examples against known versions; umap-learn brings numba, llvmlite and
# pynndescent (wheels, about 25 s to install). Checked by installed version,
# not by import: importing umap compiles its numba functions (about 20 s).
# persim: its exact landscapes (PersLandscapeExact) are an independent
# reference for mpcf.landscape (bindings/python/tests/test_plf.py); it brings
# matplotlib.
pins="umap-learn==0.5.12 scikit-learn==1.9.1 persim==0.4.1"
pinned=$("$py" - $pins <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
for requirement in sys.argv[1:]:
    name, wanted = requirement.split("==")
    try:
        installed = version(name)
    except PackageNotFoundError:
        installed = None
    if installed != wanted:
        print(requirement)
PY
)
if [ -n "$pinned" ]; then
  say "pip install" $pinned "(into $("$py" -c 'import sys; print(sys.prefix)'))"
  "$py" -m pip install -q --disable-pip-version-check $pinned >&2
fi
[ $print_python = 1 ] && echo "$py"
exit 0
