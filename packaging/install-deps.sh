#!/usr/bin/env bash
# Installs everything libmpcf's build, tests and bindings need on Debian 12
# (run as root). Idempotent: packages already present are left alone.
#   MPCF_DEPS=minimal  only what building the library and the CLI needs
set -euo pipefail

minimal="build-essential cmake pkg-config"
full="$minimal libcmocka-dev libbenchmark-dev swig r-base-core r-base-dev r-cran-rcpp \
r-cran-testthat python3-pycparser"
pkgs=$full
[ "${MPCF_DEPS:-full}" = minimal ] && pkgs=$minimal

missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: apt-get install$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi

if [ "${MPCF_DEPS:-full}" != minimal ]; then
  py=${PYTHON:-python3}
  need=""
  for m in numpy scipy pytest scikit_build_core pycparser jinja2 yaml; do
    "$py" -c "import $m" 2>/dev/null || need="$need $m"
  done
  if [ -n "$need" ]; then
    echo "install-deps: pip install$need"
    "$py" -m pip install -q --disable-pip-version-check $(echo "$need" | sed 's/scikit_build_core/scikit-build-core/; s/\byaml\b/pyyaml/')
  fi
fi
