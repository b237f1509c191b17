#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine (as root): installs the build
# tools, builds libmpcf and the mpcf CLI (with CUDA when nvcc is found), and
# runs the CLI on the bundled example dataset, which prints a summary
# (n, breakpoints, backend, time, merge steps/s, checksum).
# Extra arguments go to the CLI, e.g. `bash packaging/run-example.sh pdist -p 2`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${MPCF_BUILD_DIR:-$root/build-example}
MPCF_DEPS=minimal bash "$root/packaging/install-deps.sh"
cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
  -DMPCF_BUILD_PYTHON=OFF -DMPCF_BUILD_R=OFF -DMPCF_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$out" -j "$(nproc)" --target mpcf_cli >/dev/null
exec "$out/capi/mpcf" "$@"
