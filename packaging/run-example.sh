#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine (as root): installs the build
# tools, builds libmpcf and the mpcf CLI (with CUDA when nvcc is found), and
# runs the CLI on the bundled example dataset, which prints a summary
# (n, breakpoints, backend, time, merge steps/s, checksum).
# Extra arguments go to the CLI, e.g. `bash packaging/run-example.sh pdist -p 2`.
# The build's progress is shown as it goes ([percent] file); a rerun only
# rebuilds what changed. MPCF_BUILD_DIR picks the build folder (default
# build-example/); cmake options can be added with MPCF_CMAKE_ARGS, e.g.
# MPCF_CMAKE_ARGS=-DMPCF_WITH_CUDA=OFF.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${MPCF_BUILD_DIR:-$root/build-example}
say() { echo "== run-example: $*" >&2; }

say "build tools (installed from Debian's packages when missing)"
MPCF_DEPS=minimal bash "$root/packaging/install-deps.sh"

say "configuring $out"
mkdir -p "$out"
# shellcheck disable=SC2086
if ! cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
     -DMPCF_BUILD_PYTHON=OFF -DMPCF_BUILD_R=OFF -DMPCF_BUILD_BENCHMARKS=OFF \
     ${MPCF_CMAKE_ARGS:-} >"$out/configure.log" 2>&1; then
  cat "$out/configure.log" >&2
  say "configuring failed (log above, also in $out/configure.log)"
  exit 1
fi
cuda=$(sed -n 's/^MPCF_WITH_CUDA:BOOL=//p' "$out/CMakeCache.txt")
if [ "$cuda" = ON ]; then
  archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$out/CMakeCache.txt")
  say "CUDA backend: on (nvcc found; architectures ${archs:-90}); the CUDA files take about a minute on 2 cores"
  say "(MPCF_CMAKE_ARGS=-DMPCF_WITH_CUDA=OFF builds the CPU library only, in about 30 s)"
else
  say "CUDA backend: off"
fi

say "building libmpcf and the mpcf CLI with $(nproc) jobs"
start=$SECONDS
cmake --build "$out" -j "$(nproc)" --target mpcf_cli
say "built in $((SECONDS - start)) s; running $out/capi/mpcf $*"
exec "$out/capi/mpcf" "$@"
