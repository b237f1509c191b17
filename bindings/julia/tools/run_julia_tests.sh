#!/bin/sh
# Runs the Julia package's test/runtests.jl against the libmpcf named by
# MPCF_LIBRARY, when a `julia` (>= 1.6) is on PATH; otherwise reports SKIP
# (exit 77, ctest's SKIP_RETURN_CODE) with the reason.
# Usage: run_julia_tests.sh <path to bindings/julia/Mpcf>
set -u
pkg=${1:?usage: run_julia_tests.sh <path to the Mpcf package>}

if ! command -v julia >/dev/null 2>&1; then
  echo "SKIP: no 'julia' executable on PATH, so the Julia package tests cannot run here" \
       "(the ccall signature check julia_signatures runs regardless)"
  exit 77
fi
version=$(julia --startup-file=no --version 2>/dev/null | sed -n 's/^julia version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $version
if [ $# -ne 2 ] || [ "$1" -lt 1 ] || { [ "$1" -eq 1 ] && [ "$2" -lt 6 ]; }; then
  echo "SKIP: the julia on PATH ($(command -v julia)) is not Julia >= 1.6," \
       "which the Mpcf package needs"
  exit 77
fi
if [ -z "${MPCF_LIBRARY:-}" ]; then
  echo "error: MPCF_LIBRARY is not set; point it at the built libmpcf.so" >&2
  exit 1
fi
exec julia --startup-file=no --check-bounds=yes --project="$pkg" "$pkg/test/runtests.jl"
