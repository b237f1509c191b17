#!/usr/bin/env bash
# Builds and checks the CUDA backend on a machine with a GPU: the gpu-labelled
# ctest tests, compute-sanitizer (memcheck, racecheck) on the GPU test
# programs, and the GPU benchmark. Logs go to LOG_DIR.
#
#   tests/gpu/run_gpu_checks.sh BUILD_DIR LOG_DIR [build] [tests] [sanitize] [bench] [ncu]
#
# (no step named: build tests sanitize bench). Run from the repository root.
# MPCF_BENCH_ARGS: extra benchmark arguments (e.g. --benchmark_filter=...);
# ncu profiles one launch of the block kernel (pcf_tiled_kernel or
# pcf_ring_kernel) in the benchmark case MPCF_NCU_CASE (default
# ours/pdist_L1/f32/n20000/m512).
set -o pipefail
build=${1:?build directory}
logs=${2:?log directory}
shift 2
steps=${*:-build tests sanitize bench}
mkdir -p "$logs"
status=0
has() { [[ " $steps " == *" $1 "* ]]; }

if has build; then
  # The architecture is passed explicitly: CMake reads CUDAARCHS, not an
  # environment variable CMAKE_CUDA_ARCHITECTURES, and would otherwise fall
  # back to nvcc's default (sm_75 PTX, JIT-compiled on the H200).
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPCF_BUILD_PYTHON=OFF \
    -DMPCF_BUILD_R=OFF -DMPCF_BUILD_CLI=OFF -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" 2>&1 | tee "$logs/configure.log" | tail -3 || exit 1
  targets="mpcf test_gpu_agreement test_gpu_blocks test_gpu_cancel_oom test_gpu_internals test_gpu_reduce test_gpu_plf test_plf test_callbacks gpu_fingerprint"
  if [ -n "$(ninja -C "$build" -t targets all 2>/dev/null | grep '^bench_gpu:')" ]; then
    targets="$targets bench_gpu"
  fi
  cmake --build "$build" --target $targets 2>&1 | tee "$logs/build.log" | tail -3 || exit 1
fi

if has tests; then
  ctest --test-dir "$build" -L gpu -V 2>&1 | tee "$logs/ctest_gpu.log" || status=1
fi

if has sanitize; then
  # The tests provoke CUDA API errors on purpose (invalid device, 4 PiB
  # allocations): those are not reported; memory and race errors are.
  san() {
    local tool=$1 prog=$2
    echo "== compute-sanitizer --tool $tool $prog (MPCF_GPU_TEST_SMALL=1)"
    local path="$build/tests/gpu/$prog"
    [ -x "$path" ] || path="$build/tests/capi/$prog"
    MPCF_GPU_TEST_SMALL=1 timeout 300 compute-sanitizer --tool "$tool" --report-api-errors no \
      --error-exitcode 99 ${3:-} "$path" ${4:-} 2>&1 | tail -25
    echo "== exit code ${PIPESTATUS[0]}"
  }
  {
    san memcheck test_gpu_internals "--leak-check full"
    san memcheck test_gpu_blocks "--leak-check full"
    san memcheck test_gpu_agreement "--leak-check full"
    san memcheck test_gpu_reduce "--leak-check full"
    san memcheck test_gpu_plf "--leak-check full"
    san racecheck test_gpu_internals
    san racecheck test_gpu_blocks
    san racecheck test_gpu_reduce
    san racecheck test_gpu_plf
    san memcheck test_callbacks "--leak-check full" cuda
    san racecheck test_callbacks "" cuda
  } 2>&1 | tee "$logs/sanitizer.log"
  grep -q "exit code [^0]" "$logs/sanitizer.log" && status=1
fi

if has ncu && [ -x "$build/tests/benchmarks/gpu/bench_gpu" ]; then
  # Clocks as the card has them (--clock-control none); one launch of a
  # block kernel after the benchmark's start-up (5 launches: pdist and
  # l2_kernel, float32 and float64, and the float32 inner products' redo
  # launch), i.e. the case's warm-up launch, the
  # same as its timed one: throughput, issue, stall reasons per issued
  # instruction, shared/L1 wavefronts and bank conflicts.
  timeout 300 ncu --clock-control none --kernel-name 'regex:pcf_(tiled|ring)_kernel' --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section SchedulerStats --section WarpStateStats \
    --section InstructionStats --section Occupancy --section LaunchStats \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed.sum \
    "$build/tests/benchmarks/gpu/bench_gpu" \
    --benchmark_filter="${MPCF_NCU_CASE:-ours/pdist_L1/f32/n20000/m512}" 2>&1 |
    grep -v "^==PROF==" > "$logs/ncu.log" || status=1
  tail -120 "$logs/ncu.log"
fi

if has bench && [ -x "$build/tests/benchmarks/gpu/bench_gpu" ]; then
  "$build/tests/benchmarks/gpu/bench_gpu" --benchmark_out="$logs/bench.json" \
    --benchmark_out_format=json ${MPCF_BENCH_ARGS:-} 2>&1 | tee "$logs/bench.log" || status=1
fi
exit $status
