#!/usr/bin/env bash
# Output libmpcf: builds the C library with CMake and installs it into $PREFIX
# (lib/libmpcf.so*, include/mpcf/, lib/cmake/mpcf/, lib/pkgconfig/mpcf.pc).
# conda-build provides PREFIX, CPU_COUNT, CMAKE_ARGS and the variant variable
# cuda_compiler_version ("None" for the CPU build).
set -euxo pipefail

cuda_args=(-DMPCF_WITH_CUDA=OFF)
if [[ "${cuda_compiler_version:-None}" != "None" ]]; then
  # SASS for every architecture this CUDA release supports from Turing on,
  # plus PTX of the newest, so later GPUs can JIT-compile it.
  case "${cuda_compiler_version}" in
    12.[0-7]|12.[0-7].*) archs="75-real;80-real;86-real;89-real;90" ;;
    *)                   archs="75-real;80-real;86-real;89-real;90-real;100-real;120" ;;
  esac
  cuda_args=(-DMPCF_WITH_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${archs}")
fi

# CMAKE_ARGS first: the options after it are what this package is.
cmake -S "${SRC_DIR}" -B build-libmpcf ${CMAKE_ARGS:-} \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="${PREFIX}" \
  -DCMAKE_INSTALL_LIBDIR=lib \
  -DBUILD_TESTING=OFF \
  -DMPCF_BUILD_BENCHMARKS=OFF \
  -DMPCF_BUILD_CLI=OFF \
  -DMPCF_BUILD_PYTHON=OFF \
  -DMPCF_BUILD_R=OFF \
  "${cuda_args[@]}"
cmake --build build-libmpcf --parallel "${CPU_COUNT:-1}"
cmake --install build-libmpcf
