#!/usr/bin/env bash
# Output mpcf: the Python package (pip + scikit-build-core, bindings/python),
# using the libmpcf package installed in $PREFIX (host requirement, exact pin).
#
# bindings/python builds its own copy of libmpcf from the top-level CMake
# project and bundles it as mpcf/libmpcf.so.<major>, found by the module's
# $ORIGIN RPATH. A split package must not ship a second libmpcf, so that copy
# (built without CUDA: it is thrown away) is replaced by a relative link to
# $PREFIX/lib/libmpcf.so.<major>, the file of the libmpcf package.
set -euxo pipefail

export CMAKE_BUILD_PARALLEL_LEVEL="${CPU_COUNT:-1}"
"${PYTHON}" -m pip install "${SRC_DIR}/bindings/python" -vv --no-deps --no-build-isolation \
  --no-cache-dir -Cbuild-dir="${SRC_DIR}/build-mpcf-python" -Ccmake.define.MPCF_WITH_CUDA=OFF

site=$("${PYTHON}" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
# libmpcf.so -> libmpcf.so.<major> (the SONAME) -> libmpcf.so.<version>
soname=$(readlink "${PREFIX}/lib/libmpcf.so")
test -f "${PREFIX}/lib/${soname}"
test -f "${site}/mpcf/${soname}"
rm "${site}/mpcf/${soname}"
ln -s "$("${PYTHON}" -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
  "${PREFIX}/lib/${soname}" "${site}/mpcf")" "${site}/mpcf/${soname}"
