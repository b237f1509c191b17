#!/usr/bin/env bash
# The CUDA wheel on the GPU machine, in one command (no network there):
#
#   source .device/on-device.sh && bash packaging/wheels/gpu_check.sh [BUILD_DIR]
#
# Carry the folder .whl/ (the wheel build tools, made on a machine with
# network by `bash packaging/wheels/download_build_wheels.sh`) and .device/.
#   1. builds the CUDA wheel (mpcf-cuda) with this machine's python3 and the
#      build tools from .whl/, for sm_90 only (SASS and PTX of sm_90: the full
#      sm_75..sm_120 set takes longer and is not needed to test on H100/H200;
#      set MPCF_WHEEL_CUDA_ARCHITECTURES to change it);
#   2. pip installs it into a fresh venv that sees the machine's NumPy, SciPy
#      and pytest (--system-site-packages, --no-index), with the compilers,
#      CMake and SWIG stubbed out, checks what was installed and runs the GPU
#      tests of bindings/python/tests (pytest -m gpu) against it;
#   3. times mpcf.pdist from the installed wheel (n = 20,000, m = 128,
#      float32; packaging/wheels/time_pdist.py) and, when BUILD_DIR is given,
#      the C benchmark of the same case in the same run
#      (bench_gpu --benchmark_filter='^e2e/pdist_L1/f32/n20000/m128/'; built
#      in BUILD_DIR first when it is not there).
# MPCF_GPU_CHECK_WHEEL=PATH skips step 1 and checks that wheel instead.
# Everything is logged to $MPCF_GPU_CHECK_DIR/gpu_check.log (default
# build-gpu-check/). Exit status: non-zero when any step fails.
# MPCF_GPU_CHECK_DRY_RUN=1 tries the script on a machine without a GPU: the
# CPU tests instead of the GPU ones, and the CPU backend timed at n = 2,000.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$root/packaging/wheels
work=${MPCF_GPU_CHECK_DIR:-$root/build-gpu-check}
bench_dir=${1:-}
python=${PYTHON:-python3}
mkdir -p "$work"
exec > >(tee "$work/gpu_check.log") 2>&1

step() { printf '\n==== gpu_check: %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

step "machine"
nvidia-smi -L || true
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
"$python" --version
git -C "$root" log --oneline -1 2>/dev/null || true
[ -d "$root/.whl" ] || { echo "gpu_check: no .whl/ folder: run packaging/wheels/download_build_wheels.sh where there is network and carry .whl" >&2; exit 1; }

export MPCF_WHEEL_FIND_LINKS=$root/.whl
if [ -n "${MPCF_GPU_CHECK_WHEEL:-}" ]; then
  step "1. the CUDA wheel given in MPCF_GPU_CHECK_WHEEL (not built here)"
  wheel=$MPCF_GPU_CHECK_WHEEL
else
  step "1. build the CUDA wheel (sm_90)"
  start=$SECONDS
  MPCF_WHEEL_CUDA_ARCHITECTURES=${MPCF_WHEEL_CUDA_ARCHITECTURES:-90} \
  MPCF_WHEEL_DIR=$work/dist MPCF_WHEEL_BUILD_DIR=$work/build PYTHON=$python \
    bash "$here/build.sh" cuda
  echo "gpu_check: wheel build took $((SECONDS - start)) s"
  wheel=$(ls "$work"/dist/mpcf_cuda-*.whl)
fi

step "2. install into a fresh venv, run the GPU tests (pytest -m gpu) against it"
tests=(--require-gpu -m gpu)
timing=(--n 20000 --m 128 --dtype float32 --backend cuda --repeat 3 --touched --knn 10)
if [ "${MPCF_GPU_CHECK_DRY_RUN:-0}" = 1 ]; then
  echo "gpu_check: dry run: the CPU tests, the CPU backend at n = 2,000"
  tests=(-m "not gpu")
  timing=(--n 2000 --m 128 --dtype float32 --backend cpu --repeat 1)
fi
"$python" "$here/check_wheel.py" --work "$work/check" --wheel "$wheel" --offline --venv-python "$python" \
  -- "${tests[@]}"
venv_python=$work/check/venv/bin/python

step "3. time mpcf.pdist from the installed wheel"
# As users run it: no LD_LIBRARY_PATH (the wheel finds its own libmpcf).
(cd "$work" && env -u LD_LIBRARY_PATH \
  PYTHONPATH="$(cat "$work/check/pythonpath" 2>/dev/null || echo "${PYTHONPATH:-}")" \
  "$venv_python" "$here/time_pdist.py" "${timing[@]}")

if [ -n "$bench_dir" ]; then
  step "3b. the C benchmark of the same case (bench_gpu in $bench_dir)"
  bench=$bench_dir/tests/benchmarks/gpu/bench_gpu
  if [ ! -x "$bench" ]; then
    cmake -S "$root" -B "$bench_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPCF_WITH_CUDA=ON \
      -DPython3_EXECUTABLE="$(command -v "$python")"
    cmake --build "$bench_dir" --target bench_gpu
  fi
  "$bench" --benchmark_filter='^e2e/pdist_L1/f32/n20000/m128/' --benchmark_counters_tabular=true
fi
step "done: the wheel $(basename "$wheel") passed; log in $work/gpu_check.log"
