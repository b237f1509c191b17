#!/usr/bin/env bash
# Output r-mpcf: the R package mpcf (bindings/r), compiled against the libmpcf
# package installed in $PREFIX (host requirement, exact pin). The package's
# configure takes the libmpcf prefix from MPCF_HOME and links with an RPATH
# to $PREFIX/lib, which conda-build makes relative. The library is named
# explicitly: $PREFIX/lib/R/library is where conda's R keeps its packages, and
# an R from elsewhere must not install into its own site library.
set -euxo pipefail

export MPCF_HOME="${PREFIX}"
cd "${SRC_DIR}/bindings/r"
"${R}" CMD INSTALL --build --no-multiarch --library="${PREFIX}/lib/R/library" . ${R_ARGS:-}
