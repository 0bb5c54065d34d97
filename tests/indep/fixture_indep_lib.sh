#!/usr/bin/env bash
# The small-preset grid of rvfit-indep and rvfit's library of it, shared by
# the joint-fit tests (fixture indep_lib): $RVFIT_TEST_TMP/indep_lib/lib.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
d=$RVFIT_TEST_TMP/indep_lib
rm -rf "$d"
mkdir -p "$d"
"$ind" grid --out "$d/grid" --preset small --threads 2
"$RVFIT_BIN" templates --grid "$d/grid" --out "$d/lib" -j 2 \
    2>"$d/templates.log"
rm -rf "$d/grid"
