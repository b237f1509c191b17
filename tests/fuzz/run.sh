#!/usr/bin/env bash
# Fuzzes one target for a while and keeps what it learnt:
#
#   tests/fuzz/run.sh TARGET MINUTES [CORPUS_DIR] [-- LIBFUZZER_OPTIONS...]
#
# TARGET is capi, csv or pcf_file. Builds the libFuzzer programs with clang into
# build-fuzz/ (configured on the first run, incremental afterwards), fuzzes
# for MINUTES minutes starting from the in-tree corpus
# tests/fuzz/corpus/TARGET and CORPUS_DIR (default:
# build-fuzz/corpus/TARGET, a working corpus that grows from run to run),
# then merges the new inputs that add coverage into CORPUS_DIR and prints
# the figures: executions, executions per second, coverage. A failure stops
# the run: its input is saved under build-fuzz/fuzz-artifacts/TARGET/ and the
# script exits 1 (after merging) naming the file and how to replay it.
#
# Environment: MPCF_FUZZ_BUILD_DIR (default build-fuzz), MPCF_JOBS (build
# jobs, default 2), MPCF_FUZZ_NICE (nice level, default 10),
# MPCF_FUZZ_STRICT=1 (no known-defect filter, see README.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ $# -lt 2 ]; then
  sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
target=$1
minutes=$2
shift 2
seeds=$root/tests/fuzz/corpus/$target
build=${MPCF_FUZZ_BUILD_DIR:-$root/build-fuzz}
corpus=$build/corpus/$target
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  corpus=$(realpath -m "$1")
  shift
fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
case $target in
  capi) extra=(-max_len=4096) ;;
  csv) extra=(-max_len=4096 "-dict=$root/tests/fuzz/csv.dict") ;;
  pcf_file) extra=(-max_len=4096) ;;
  *) echo "run.sh: unknown target '$target' (capi, csv or pcf_file)" >&2; exit 2 ;;
esac
nice_level=${MPCF_FUZZ_NICE:-10}

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DMPCF_BUILD_FUZZERS=ON -DMPCF_WITH_CUDA=OFF -DMPCF_BUILD_CLI=OFF \
    -DMPCF_BUILD_BENCHMARKS=OFF -DMPCF_BUILD_PYTHON=OFF -DMPCF_BUILD_R=OFF
fi
nice -n "$nice_level" cmake --build "$build" --target "fuzz_$target" "fuzz_${target}_replay" -j "${MPCF_JOBS:-2}"

mkdir -p "$corpus"
artifacts=$build/fuzz-artifacts/$target
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mpcf-fuzz-$target.XXXXXX")
log=$build/fuzz-$target.log
trap 'rm -rf "$scratch"' EXIT

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
inputs=("$scratch" "$corpus")
[ "$(realpath "$corpus")" = "$(realpath "$seeds")" ] || inputs+=("$seeds")
echo "== fuzz_$target for $minutes min, corpus $corpus, log $log"
status=0
nice -n "$nice_level" "$build/tests/fuzz/fuzz_$target" \
  -max_total_time=$((minutes * 60)) -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "${extra[@]}" "$@" "${inputs[@]}" > "$log" 2>&1 || status=$?

before=$(find "$corpus" -maxdepth 1 -type f | wc -l)
nice -n "$nice_level" "$build/tests/fuzz/fuzz_$target" -merge=1 -artifact_prefix="$artifacts/" "${extra[@]}" "$corpus" "$scratch" \
  > "$build/fuzz-$target-merge.log" 2>&1 || true
after=$(find "$corpus" -maxdepth 1 -type f | wc -l)

last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
echo "last status line: $last"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" || true
echo "coverage: $(echo "$last" | grep -oE 'cov: [0-9]+' || echo '?') edges, $(echo "$last" | grep -oE 'ft: [0-9]+' || echo '?') features"
echo "corpus: $before -> $after inputs in $corpus"
if [ "$status" -ne 0 ]; then
  echo "== fuzz_$target FAILED (exit $status); the report:"
  grep -E 'CHECK FAILED|while running|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|Test unit written|SUMMARY' "$log" | head -20
  echo "reproduce: $build/tests/fuzz/fuzz_${target}_replay FILE (the file above; or fuzz_$target FILE)"
  exit 1
fi
