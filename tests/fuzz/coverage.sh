#!/usr/bin/env bash
# Line coverage of the library by the fuzz corpora:
#
#   tests/fuzz/coverage.sh [CAPI_CORPUS_DIR [CSV_CORPUS_DIR [PCF_FILE_CORPUS_DIR]]]
#
# Builds the replay programs with clang source-based coverage
# (-fprofile-instr-generate -fcoverage-mapping, no sanitizers) into
# build-cov/, replays the corpora (default: tests/fuzz/corpus/capi,
# tests/fuzz/corpus/csv and tests/fuzz/corpus/pcf_file, regressions/ excluded) and prints llvm-cov's report
# for capi/src, core/ and capi/cli/csv_reader.c, then one line per group.
# Environment: MPCF_COV_BUILD_DIR (default build-cov), MPCF_JOBS (default 2),
# LLVM_SUFFIX (default -14: llvm-profdata-14, llvm-cov-14).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
capi_corpus=${1:-$root/tests/fuzz/corpus/capi}
csv_corpus=${2:-$root/tests/fuzz/corpus/csv}
pcf_file_corpus=${3:-$root/tests/fuzz/corpus/pcf_file}
build=${MPCF_COV_BUILD_DIR:-$root/build-cov}
sfx=${LLVM_SUFFIX--14}
profdata=llvm-profdata$sfx
cov=llvm-cov$sfx

if [ ! -f "$build/CMakeCache.txt" ]; then
  flags="-fprofile-instr-generate -fcoverage-mapping"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    -DMPCF_WITH_CUDA=OFF -DMPCF_BUILD_CLI=OFF -DMPCF_BUILD_BENCHMARKS=OFF \
    -DMPCF_BUILD_PYTHON=OFF -DMPCF_BUILD_R=OFF
fi
nice -n 10 cmake --build "$build" --target fuzz_capi_replay fuzz_csv_replay fuzz_pcf_file_replay -j "${MPCF_JOBS:-2}"

prof=$build/coverage
rm -rf "$prof"
mkdir -p "$prof"
LLVM_PROFILE_FILE="$prof/capi-%p.profraw" nice -n 10 "$build/tests/fuzz/fuzz_capi_replay" "$capi_corpus" > "$prof/capi.log"
LLVM_PROFILE_FILE="$prof/csv-%p.profraw" nice -n 10 "$build/tests/fuzz/fuzz_csv_replay" "$csv_corpus" > "$prof/csv.log"
LLVM_PROFILE_FILE="$prof/pcf_file-%p.profraw" nice -n 10 "$build/tests/fuzz/fuzz_pcf_file_replay" "$pcf_file_corpus" > "$prof/pcf_file.log"
tail -n 1 "$prof/capi.log" "$prof/csv.log" "$prof/pcf_file.log"
"$profdata" merge -sparse "$prof"/*.profraw -o "$prof/all.profdata"

objects=("$build/tests/fuzz/fuzz_capi_replay" -object "$build/tests/fuzz/fuzz_csv_replay"
         -object "$build/tests/fuzz/fuzz_pcf_file_replay"
         -object "$build/capi/libmpcf.so")
report() { # name, files...: one line with the group's line coverage
  local name=$1
  shift
  "$cov" export -summary-only "${objects[@]}" -instr-profile="$prof/all.profdata" "$@" |
    python3 -c 'import json, sys
t = json.load(sys.stdin)["data"][0]["totals"]["lines"]
print("%-28s line coverage %5.1f%% (%d of %d lines)" % (sys.argv[1], t["percent"], t["covered"], t["count"]))' "$name"
}
echo
"$cov" report "${objects[@]}" -instr-profile="$prof/all.profdata" \
  "$root"/capi/src/*.cpp "$root"/core "$root"/capi/cli/csv_reader.c
echo
report "capi/src/*.cpp" "$root"/capi/src/*.cpp
report "core/ (src and headers)" "$root"/core
report "capi/cli/csv_reader.c" "$root"/capi/cli/csv_reader.c
echo "(details: $cov show ${objects[*]} -instr-profile=$prof/all.profdata FILE)"
