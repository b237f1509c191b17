#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (as root):
#   1. installs the dependencies (packaging/install-deps.sh; the Python
#      packages go into .venv/ where python3 is Debian's own, PEP 668);
#   2. builds with the default configuration (CUDA on when nvcc is found) and
#      runs every ctest (GPU tests skip without a device), among them
#      python_wheel: the CPU wheel built, installed into a fresh venv from
#      the wheel alone, and the Python tests run against the installed copy;
#   3. builds without CUDA under ASan + UBSan + LSan and runs the C and C++
#      tests there.
# Build trees go to $MPCF_TEST_DIR (default: build-tests/ in the repository).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${MPCF_TEST_DIR:-$root/build-tests}
jobs=${MPCF_JOBS:-$(nproc)}

python=$(bash "$root/packaging/install-deps.sh" --print-python)

echo "== default build (CUDA auto-detected), Python: $python =="
cmake -S "$root" -B "$out/default" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$python"
cmake --build "$out/default" -j "$jobs"
ctest --test-dir "$out/default" --output-on-failure -j "$jobs"

echo "== sanitizer build (ASan + UBSan + LSan, CUDA off) =="
cmake -S "$root" -B "$out/sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPCF_WITH_CUDA=OFF \
  -DMPCF_SANITIZE=ON -DMPCF_BUILD_BENCHMARKS=OFF
cmake --build "$out/sanitize" -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$out/sanitize" --output-on-failure -j "$jobs" -LE gpu
