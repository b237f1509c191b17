#!/usr/bin/env bash
# Fresh vs touched output from Python on the GPU path, on a GPU machine:
#
#   bash tests/benchmarks/run_fresh_gpu.sh [BUILD_DIR]        (default build-fresh-gpu)
#
# pdist L1 of the DESIGN §6 input at n = 20,000, m = 128, float32 and float64,
# backend "cuda": a new NumPy result every call (fresh: from the result
# pool after the first call), the same call into a new np.empty (fresh, no
# pool) and into an already-written buffer (touched), in turns, median of 7
# (tests/benchmarks/fresh_output.py). Target: fresh within 10% of touched.
#
# The Python module comes from, in this order:
#   1. MPCF_FRESH_WHEEL=path/to/mpcf_cuda-*.whl: installed into a fresh venv
#      that sees the machine's NumPy (--system-site-packages, --no-index);
#      e.g. the wheel packaging/wheels/gpu_check.sh built in
#      build-gpu-check/dist/ (that route needs no SWIG on the machine);
#   2. BUILD_DIR/bindings/python when it holds the package;
#   3. else BUILD_DIR is configured and built here (CUDA for sm_90, the
#      Python package: needs the Python headers and SWIG >= 4.0, the
#      system's or the swig wheel in .whl/; Highway's
#      headers from MPCF_HWY_INCLUDE_DIR or .whl/hwy-include when the
#      system has none, see packaging/wheels/download_build_wheels.sh).
#
# With MPCF_MASSPCF_WHEELS=<folder of the masspcf==0.4.1 and tqdm wheels>
# (pip download --no-deps --only-binary=:all: --python-version <the GPU
# machine's> masspcf==0.4.1 tqdm -d <folder>, where there is network), it
# also runs tests/benchmarks/cpu_vs_masspcf.py on this machine's cores: the
# CPU backends side by side (issue target: >= 3x masspcf on 16 cores).
# Output goes to stdout and BUILD_DIR/fresh_gpu.log.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-fresh-gpu}
python=${PYTHON:-python3}
mkdir -p "$build"
exec > >(tee "$build/fresh_gpu.log") 2>&1

nvidia-smi -L || true
git -C "$root" log --oneline -1 2>/dev/null || true

if [ -n "${MPCF_FRESH_WHEEL:-}" ]; then
  venv=$build/venv
  rm -rf "$venv"
  "$python" -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install --no-index --no-deps -q "$MPCF_FRESH_WHEEL"
  run=("$venv/bin/python")
  pp=""
else
  if ! PYTHONPATH=$build/bindings/python "$python" -c "import mpcf" 2>/dev/null; then
    echo "== building the CUDA library and the Python package in $build"
    gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
    # SWIG: the system's, else the swig wheel of .whl/ (the wheel build tools
    # of packaging/wheels/download_build_wheels.sh) in a venv.
    swig=()
    if ! command -v swig >/dev/null 2>&1 && ls "$root"/.whl/swig-*.whl >/dev/null 2>&1; then
      "$python" -m venv "$build/tools"
      "$build/tools/bin/pip" install -q --no-index --find-links "$root/.whl" swig
      swig=(-DSWIG_EXECUTABLE="$build/tools/bin/swig")
    fi
    hwy=(); hwy_dir=${MPCF_HWY_INCLUDE_DIR:-$root/.whl/hwy-include}
    [ -f "$hwy_dir/hwy/highway.h" ] && hwy=(-DMPCF_HWY_INCLUDE_DIR="$hwy_dir")
    cmake -S "$root" -B "$build" "${gen[@]}" "${swig[@]}" "${hwy[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=${MPCF_CUDA_ARCHITECTURES:-90} -DMPCF_BUILD_PYTHON=ON \
      -DMPCF_BUILD_BENCHMARKS=OFF -DPython3_EXECUTABLE="$(command -v "$python")" >/dev/null
    cmake --build "$build" --target mpcf_python_package -j "$(nproc)" 2>&1 | tail -3
  fi
  run=("$python")
  pp=$build/bindings/python
fi

PYTHONPATH=$pp "${run[@]}" -c "import mpcf, sys; print(mpcf.build_info()); sys.exit(0 if mpcf.cuda_device_count() > 0 else 'no CUDA device seen by mpcf')"
PYTHONPATH=$pp "${run[@]}" "$root/tests/benchmarks/fresh_output.py" --backend cuda \
  --n 20000 --m 128 --dtype float32,float64 --repeat 7

if [ -n "${MPCF_MASSPCF_WHEELS:-}" ]; then
  echo "== the CPU backends side by side on this machine's cores (masspcf 0.4.1 vs libmpcf)"
  rm -rf "$build/masspcf-py"
  "${run[@]}" -m pip install --no-index --no-deps -q --target "$build/masspcf-py" "$MPCF_MASSPCF_WHEELS"/*.whl
  PYTHONPATH=${pp:+$pp:}$build/masspcf-py "${run[@]}" "$root/tests/benchmarks/cpu_vs_masspcf.py" --repeat 5
fi
