#!/bin/bash
# test_e2e_python.sh — the Python package (python/) and the README's Python
# example, under pytest, against this build's librvfit and plugins: fits
# through rvfit.fit equal `rvfit fit` on the same file, loglike equals the
# CLI's chi^2 at its optimum (python/tests).  Skips (77) without a Python
# that has numpy, astropy and pytest (Debian: python3-numpy python3-astropy
# python3-pytest, scripts/setup-deps.sh), and under the sanitizers (an
# ASan-built librvfit cannot be loaded into an uninstrumented python).
set -euo pipefail
: "${RVFIT_BIN:?}" "${RVFIT_SOURCE_DIR:?}" "${RVFIT_TEST_DATA:?}"
build=$(dirname "$RVFIT_BIN")
py=""
for p in "${RVFIT_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$p" ] || continue
  if "$p" -c 'import numpy, astropy, pytest' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "SKIP: no python3 with numpy, astropy and pytest (apt-get install python3-numpy python3-astropy python3-pytest)"
  exit 77
fi
# (a here-string, not a pipe: under pipefail ldd killed by SIGPIPE when
# grep -q stops early would make the test run instead of skipping)
if grep -q 'libasan\|libubsan' <<< "$(ldd "$build/core/librvfit.so")"; then
  echo "SKIP: librvfit is built with sanitizers; python cannot load it"
  exit 77
fi
export RVFIT_BUILD_DIR=$build
export PYTHONPATH=$RVFIT_SOURCE_DIR/python/src${PYTHONPATH:+:$PYTHONPATH}
tmp=${RVFIT_TEST_TMP:-/tmp}/python
rm -rf "$tmp" && mkdir -p "$tmp"
cd "$tmp"
exec "$py" -m pytest -q -p no:cacheprovider --basetemp="$tmp/pytest" \
  "$RVFIT_SOURCE_DIR/python/tests"
