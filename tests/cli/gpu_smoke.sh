#!/usr/bin/env bash
# Checks the mpcf CLI with the CUDA backend on a machine with a GPU (a manual
# check: CI has no GPU). Builds libmpcf with CUDA and the CLI, runs the CLI
# test suite against that build, compares CUDA with CPU results on the example
# dataset, times a DESIGN.md-sized pdist end to end through the CLI, and
# cancels a running CUDA computation with SIGINT.
#
#   tests/cli/gpu_smoke.sh BUILD_DIR LOG_DIR      (from the repository root)
#
# MPCF_SMOKE_N (default 20000) sets the function count of the timed pdist.
set -u -o pipefail
build=${1:?build directory}
logs=${2:?log directory}
mkdir -p "$logs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
  -DMPCF_BUILD_PYTHON=OFF -DMPCF_BUILD_R=OFF -DMPCF_BUILD_BENCHMARKS=OFF \
  >"$logs/configure.log" 2>&1 || { tail -20 "$logs/configure.log"; exit 1; }
cmake --build "$build" --target mpcf_cli >"$logs/build.log" 2>&1 ||
  { tail -30 "$logs/build.log"; exit 1; }
mpcf=$build/capi/mpcf
"$mpcf" --version

echo "== CLI test suite against the CUDA build"
python3 tests/cli/test_cli.py --mpcf "$mpcf" --example capi/cli/data/example_pcfs.csv \
  >"$logs/test_cli.log" 2>&1 || status=1
tail -4 "$logs/test_cli.log"

echo "== CUDA vs CPU on the example dataset"
for dtype in float64 float32; do
  for cmd in "pdist" "pdist -p 2" "pdist -p inf" "kernel" "pdist --window 0.5:3"; do
    "$mpcf" $cmd --dtype $dtype --backend cuda -o "$tmp/gpu.npy" -q || status=1
    "$mpcf" $cmd --dtype $dtype --backend cpu -o "$tmp/cpu.npy" -q || status=1
    python3 - "$tmp/gpu.npy" "$tmp/cpu.npy" "$dtype" "$cmd" <<'PY' || status=1
import sys, numpy as np
g, c = np.load(sys.argv[1]), np.load(sys.argv[2])
tol = 1e-12 if sys.argv[3] == "float64" else 1e-5
assert g.shape == c.shape and g.dtype == c.dtype
rel = float(np.max(np.abs(g - c) / np.maximum(np.abs(c), 1e-30)))
print("%-22s %s  max relative difference %.2e %s" % (sys.argv[4], sys.argv[3], rel,
      "ok" if rel <= tol else "TOO LARGE"))
sys.exit(0 if rel <= tol else 1)
PY
  done
done
"$mpcf" pdist --backend cuda --summary -o "$tmp/gpu.npy" | grep -E "backend|merge steps|checksum"

n=${MPCF_SMOKE_N:-20000}
echo "== pdist n=$n m=128 (L1, gaps uniform(0.05,1), values uniform(0,10), last 0)"
python3 - "$tmp/big.csv" "$n" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(1)
n, m = int(sys.argv[2]), 128
t = np.cumsum(rng.uniform(0.05, 1.0, (n, m)), axis=1) - 0.05
v = rng.uniform(0, 10, (n, m)); v[:, -1] = 0
with open(sys.argv[1], "w") as f:
    for i in range(n):
        f.write("".join("%d,%.6f,%.6f\n" % (i, a, b) for a, b in zip(t[i], v[i])))
PY
for dtype in float32 float64; do
  "$mpcf" pdist "$tmp/big.csv" --dtype $dtype --backend cuda | grep -E "time|merge steps|backend"
done

echo "== SIGINT while CUDA computes"
"$mpcf" pdist "$tmp/big.csv" --backend cuda --progress -o "$tmp/x.npy" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do grep -q '%' "$tmp/err" && break; sleep 0.05; done
kill -INT $pid
wait $pid
rc=$?
tr '\r' '\n' <"$tmp/err" | tail -2
left=$(ls "$tmp" | grep -c '^x\.npy' || true)
echo "exit code $rc, output files left: $left"
if [ $rc -ne 130 ] && [ $rc -ne 0 ]; then status=1; fi
[ "$left" = 0 ] || [ $rc -eq 0 ] || status=1
exit $status
