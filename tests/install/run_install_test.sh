#!/bin/sh
# Installs the build tree into a temporary prefix, then builds and runs a
# consumer program against it twice: with find_package(mpcf) and with
# pkg-config. Usage: run_install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/mpcf/mpcf.h include/mpcf/mpcf_export.h lib/libmpcf.so \
         lib/cmake/mpcf/mpcfConfig.cmake lib/cmake/mpcf/mpcfConfigVersion.cmake \
         lib/pkgconfig/mpcf.pc; do
  if [ ! -e "$prefix/$f" ]; then
    # Debian's GNUInstallDirs may use lib/<multiarch>; look there too.
    alt=$(find "$prefix" -path "*${f#lib/}" 2>/dev/null | head -n 1)
    if [ -z "$alt" ]; then echo "missing after install: $f"; exit 1; fi
  fi
done

# 1. CMake package.
cmake -S "$src/tests/install/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log"
cmake --build "$work/cmake-build" >>"$work/cmake.log"
libdir=$(dirname "$(find "$prefix" -name 'libmpcf.so' | head -n 1)")
LD_LIBRARY_PATH=$libdir "$work/cmake-build/consumer"

# 2. pkg-config.
if command -v pkg-config >/dev/null 2>&1; then
  pcdir=$(dirname "$(find "$prefix" -name mpcf.pc | head -n 1)")
  flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs mpcf)
  cc -std=c11 -o "$work/consumer-pc" "$src/tests/install/consumer/consumer.c" $flags
  LD_LIBRARY_PATH=$libdir "$work/consumer-pc"
else
  echo "pkg-config not found"; exit 1
fi
# 3. The CLI of a prefix install runs without LD_LIBRARY_PATH or ldconfig
#    (RPATH $ORIGIN/../lib) and finds the installed example dataset relative
#    to itself, also after the prefix has been moved.
if [ -x "$prefix/bin/mpcf" ]; then
  mv "$prefix" "$work/moved"
  moved=$(cd "$work/moved" && pwd -P)
  out=$(env -u LD_LIBRARY_PATH -u MPCF_EXAMPLE_DATA "$moved/bin/mpcf" --threads 1) || {
    echo "the installed CLI failed (exit $?)"; exit 1; }
  echo "$out" | grep -q "^  input  *$moved/bin/\.\./share/mpcf/example_pcfs\.csv\$" || {
    echo "the installed CLI did not use its installed example dataset:"; echo "$out"; exit 1; }
  echo "installed CLI ok: $(echo "$out" | grep '^  input')"
  mv "$work/moved" "$prefix"
fi
echo "install test passed"
