# CMake toolchain: zig as the C and C++ compiler for an old glibc
# (packaging/wheels/build.sh uses it for the CPU wheels). The environment
# gives the target: MPCF_ZIG_TARGET (x86_64-linux-gnu.2.17,
# aarch64-linux-gnu.2.17) and MPCF_ZIG_PYTHON (the interpreter with the
# ziglang package). For another architecture than this machine's it is a
# cross build.
set(_zig ${CMAKE_CURRENT_LIST_DIR})
if(NOT DEFINED ENV{MPCF_ZIG_TARGET})
  message(FATAL_ERROR "zig toolchain: set MPCF_ZIG_TARGET (e.g. x86_64-linux-gnu.2.17)")
endif()
string(REGEX MATCH "^[^-]+" _zig_arch "$ENV{MPCF_ZIG_TARGET}")
if(NOT _zig_arch STREQUAL CMAKE_HOST_SYSTEM_PROCESSOR)
  set(CMAKE_SYSTEM_NAME Linux)
  set(CMAKE_SYSTEM_PROCESSOR ${_zig_arch})
endif()
set(CMAKE_C_COMPILER ${_zig}/zig-cc)
set(CMAKE_CXX_COMPILER ${_zig}/zig-c++)
set(CMAKE_AR ${_zig}/zig-ar CACHE FILEPATH "zig ar")
set(CMAKE_RANLIB ${_zig}/zig-ranlib CACHE FILEPATH "zig ranlib")
# Stripped when linked (-s): zig's objcopy cannot strip ELF files, and this
# machine's strip may not know the target's architecture (the wheel build
# turns scikit-build-core's install --strip off).
set(CMAKE_SHARED_LINKER_FLAGS_INIT -s)
set(CMAKE_MODULE_LINKER_FLAGS_INIT -s)
set(CMAKE_EXE_LINKER_FLAGS_INIT -s)
# Programs (SWIG, Python) run on the build machine; headers and libraries
# are the target's: zig's own.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
