#!/usr/bin/env bash
# The SIMD walks on aarch64 (ctest aarch64_qemu, -DMPCF_TEST_AARCH64_QEMU=ON):
# cross-compiles the tests of the walks with zig, as the aarch64 wheel is
# compiled (packaging/wheels/zig/toolchain.cmake, glibc 2.17, Highway's
# headers), and runs them under QEMU's user-mode emulation, whose CPU models
# have NEON (and SVE), so that every instruction set compiled for aarch64 is
# checked against the scalar walk, bit for bit:
#   test_simd_walk        every set against the scalar walk (walks, executor,
#                         PCFs and PLFs, objects), on QEMU's `max` CPU (NEON,
#                         SVE)
#   test_kernel_matvec    the mat-vec's exact sums on every set (the walks'
#                         NEON set takes the sums' scalar path) against a
#                         plain reference, bit for bit
#   capi test_plf         the C API's PLF operations against hand values, and
#   capi test_errors      its errors (a set of x86-64 refused), on a
#                         Cortex-A53 (ARMv8.0-A), MPCF_CPU_SIMD=scalar, neon
# (test_plf_walk has no SIMD path, and its long double reference is software
# quad precision on aarch64: many minutes under QEMU; it is not run.)
#
#   bash tests/aarch64_qemu.sh --work DIR [--root DIR]
#
# --work: the build trees and tools, kept (a second run only recompiles what
# changed; the first compiles zig's libc++, a few minutes). --root: the
# Debian 12 arm64 root of the wheel tests (packaging/install-deps.sh with
# MPCF_ROOT_ARM64=1; default /var/cache/mpcf/debian-roots/bookworm-arm64):
# its dynamic loader and glibc run the tests, its CMocka (libcmocka0; taken
# from the root's Debian archive with `apt-get download` when it is not
# installed there) is linked. About 10 minutes on 2 cores (a first build
# 5 more), most of it test_simd_walk under emulation.
#
# Needs: qemu-aarch64-static (qemu-user-static), CMake, Highway's headers
# (libhwy-dev, or MPCF_HWY_INCLUDE_DIR), CMocka's header (libcmocka-dev),
# PyPI for zig (the ziglang version build-requirements.txt pins) or an
# interpreter that has it (MPCF_ZIG_PYTHON). Exit 77 (skipped) when one of
# them or the root is missing.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=""
root=/var/cache/mpcf/debian-roots/bookworm-arm64
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work=$2; shift 2 ;;
    --root) root=$2; shift 2 ;;
    *) echo "aarch64_qemu: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$work" ] || { echo "aarch64_qemu: --work DIR is required" >&2; exit 2; }
mkdir -p "$work" && work=$(cd "$work" && pwd)
say() { printf '== aarch64_qemu: %s\n' "$*"; }
skip() { printf 'aarch64_qemu: skipped: %s\n' "$*"; exit 77; }

qemu=$(command -v qemu-aarch64-static || true)
[ -n "$qemu" ] || skip "no qemu-aarch64-static (apt-get install qemu-user-static)"
[ -x "$root/lib/ld-linux-aarch64.so.1" ] \
  || skip "no arm64 root at $root (MPCF_ROOT_ARM64=1 bash packaging/install-deps.sh)"

# zig, from PyPI into a virtual environment of the work folder.
py=${MPCF_ZIG_PYTHON:-}
if [ -z "$py" ]; then
  zig_req=$(grep '^ziglang' "$repo/packaging/wheels/build-requirements.txt")
  py=$work/tools/bin/python
  if ! "$py" -m ziglang version >/dev/null 2>&1; then
    rm -rf "$work/tools"
    python3 -m venv "$work/tools" || skip "python3 -m venv failed (apt-get install python3-venv)"
    "$py" -m pip install -q --disable-pip-version-check "$zig_req" \
      || skip "could not install $zig_req from PyPI"
  fi
fi
"$py" -m ziglang version >/dev/null 2>&1 || skip "no zig in $py"

# zig's build must not see /usr/include (this machine's glibc headers): it
# gets copies of Highway's and CMocka's headers.
inc=$work/include
rm -rf "$inc" && mkdir -p "$inc/hwy-include" "$inc/cmocka"
hwy=${MPCF_HWY_INCLUDE_DIR:-$(printf '#include <hwy/highway.h>\n' | c++ -E -x c++ - 2>/dev/null \
  | sed -n 's|^# [0-9]* "\(.*\)/hwy/highway.h".*|\1|p' | head -n 1 || true)}
[ -n "$hwy" ] && [ -f "$hwy/hwy/highway.h" ] || skip "no Google Highway headers (apt-get install libhwy-dev)"
cp -r "$hwy/hwy" "$inc/hwy-include/"
cmocka_h=$(printf '#include <cmocka.h>\n' | cc -E -x c - -include stdarg.h -include stddef.h \
  -include setjmp.h -include stdint.h 2>/dev/null | sed -n 's|^# [0-9]* "\(.*/cmocka.h\)".*|\1|p' | head -n 1 || true)
[ -n "$cmocka_h" ] && [ -f "$cmocka_h" ] || skip "no cmocka.h (apt-get install libcmocka-dev)"
cp "$cmocka_h" "$inc/cmocka/"

# CMocka for aarch64: the root's, or its Debian package unpacked here.
cmocka_so=$root/usr/lib/aarch64-linux-gnu/libcmocka.so.0
if [ ! -e "$cmocka_so" ]; then
  cmocka_so=$work/libcmocka/usr/lib/aarch64-linux-gnu/libcmocka.so.0
  if [ ! -e "$cmocka_so" ]; then
    [ "$(id -u)" = 0 ] || skip "libcmocka0 is not in $root, and only root can fetch it with its apt"
    dl=$(mktemp -d "$root/tmp/mpcf-cmocka.XXXXXX")
    chroot "$root" sh -c "cd /tmp/$(basename "$dl") && apt-get download -q libcmocka0" >/dev/null 2>&1 \
      || { rm -rf "$dl"; skip "could not download libcmocka0 with the root's apt"; }
    dpkg-deb -x "$dl"/libcmocka0_*.deb "$work/libcmocka"
    rm -rf "$dl"
  fi
fi

export MPCF_ZIG_TARGET=aarch64-linux-gnu.2.17 MPCF_ZIG_PYTHON=$py
export ZIG_GLOBAL_CACHE_DIR=${ZIG_GLOBAL_CACHE_DIR:-$work/zig-cache}
export ZIG_LOCAL_CACHE_DIR=${ZIG_LOCAL_CACHE_DIR:-$ZIG_GLOBAL_CACHE_DIR}
build=$work/build
gen=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && gen=(-G Ninja)
say "configuring $build (zig, aarch64-linux-gnu.2.17)"
cmake -S "$repo" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_TOOLCHAIN_FILE=$repo/packaging/wheels/zig/toolchain.cmake" \
  -DMPCF_WITH_CUDA=OFF -DMPCF_BUILD_PYTHON=OFF -DMPCF_BUILD_R=OFF -DMPCF_BUILD_CLI=OFF \
  -DMPCF_BUILD_BENCHMARKS=OFF -DMPCF_WITH_HIGHWAY=ON "-DMPCF_HWY_INCLUDE_DIR=$inc/hwy-include" \
  "-DCMOCKA_INCLUDE_DIR=$inc/cmocka" "-DCMOCKA_LIBRARY=$cmocka_so" >"$work/configure.log" 2>&1 \
  || { tail -n 30 "$work/configure.log"; exit 1; }
grep 'mpcf: SIMD CPU walk' "$work/configure.log" || { echo "aarch64_qemu: no SIMD walk configured" >&2; exit 1; }
say "building the tests"
cmake --build "$build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
  --target test_simd_walk test_kernel_matvec test_plf test_errors

failed=0
run() {  # run CPU SIMD NAME PROGRAM...
  local cpu=$1 simd=$2 name=$3; shift 3
  local log=$work/log-$name-$cpu-$simd.txt start=$SECONDS
  if env MPCF_CPU_SIMD="$simd" "$qemu" -L "$root" -cpu "$cpu" "$@" >"$log" 2>&1; then
    say "passed: $name, cpu $cpu, MPCF_CPU_SIMD=$simd ($((SECONDS - start)) s)"
  else
    say "FAILED: $name, cpu $cpu, MPCF_CPU_SIMD=$simd (log $log)"
    tail -n 30 "$log"
    failed=1
  fi
}
# Every set against the scalar walk (the test sets MPCF_CPU_SIMD itself).
run max auto test_simd_walk "$build/tests/core/test_simd_walk"
run max auto test_kernel_matvec "$build/tests/core/test_kernel_matvec"
grep -h "instruction sets:" "$work"/log-test_simd_walk-max-auto.txt || true
# The plain ARMv8.0-A, no SVE: the code zig compiled runs there.
for simd in scalar neon; do
  run cortex-a53 "$simd" capi_plf "$build/tests/capi/test_plf"
  run cortex-a53 "$simd" capi_errors "$build/tests/capi/test_errors"
done
[ $failed = 0 ] && say "all passed"
exit $failed
