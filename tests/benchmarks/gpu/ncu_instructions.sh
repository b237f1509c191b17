#!/usr/bin/env bash
# Thread instructions per merge step of the block kernels, measured by ncu
# over every launch of one bench_gpu case (a GPU machine with ncu):
#
#   tests/benchmarks/gpu/ncu_instructions.sh BUILD_DIR [CASE ...]
#
# CASE: a bench_gpu case of the '^plf/pdist' family whose name has the form
# plf/pdist_L<p>/<dtype>/n<N>/m<M>/<pcf|plf|plfpair> (default: the L1 f32
# m = 128 PCF and PLF cases); the case runs 2 iterations, i.e. 2 pdist calls
# of N(N-1)/2 pairs of 2M merge steps each. Prints, per case, each launch's
# issue-slot use and active threads per warp instruction, then
# smsp__thread_inst_executed.sum over the merge steps (the start-up launches
# of bench_gpu are counted too; they are tiny).
set -euo pipefail
build=${1:?build directory}
shift
cases=${*:-plf/pdist_L1/f32/n20000/m128/pcf plf/pdist_L1/f32/n20000/m128/plf}
for c in $cases; do
  csv=$(mktemp)
  CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} ncu --print-units base \
    --kernel-name 'regex:(object_pair_kernel|pcf_tiled_kernel|pcf_ring_kernel)' \
    --csv --page raw \
    --metrics smsp__thread_inst_executed.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio \
    "$build/tests/benchmarks/gpu/bench_gpu" --benchmark_filter="^$c/" > "$csv" 2>/dev/null
  python3 - "$csv" "$c" <<'PY'
import csv, re, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
h = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
hdr = rows[h]
data = [r for r in rows[h + 1:] if len(r) == len(hdr) and r[0].strip().isdigit()]
f = lambda r, n: float(r[hdr.index(n)].replace(",", ""))
m = re.search(r"/n(\d+)/m(\d+)/", sys.argv[2])
n, mm = int(m.group(1)), int(m.group(2))
steps = 2 * (n * (n - 1) // 2) * 2 * mm
ti = sum(f(r, "smsp__thread_inst_executed.sum") for r in data)
busy = [f(r, "smsp__issue_active.avg.pct_of_peak_sustained_active") for r in data]
act = [f(r, "smsp__thread_inst_executed_per_inst_executed.ratio") for r in data]
print(f"{sys.argv[2]}: {len(data)} launches, {ti / steps:.1f} thread instructions per merge step, "
      f"issue slots busy up to {max(busy):.1f}%, active threads per warp instruction up to {max(act):.1f}")
PY
  rm -f "$csv"
done
