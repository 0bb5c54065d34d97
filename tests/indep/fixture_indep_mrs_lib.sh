#!/usr/bin/env bash
# The mrs-preset grid of rvfit-indep (0.9 km/s sampling, 4800-6950 A) and
# rvfit's library of it for the LAMOST MRS arms (arms = mrs), shared by
# the MRS fit tests (fixture indep_mrs_lib): $RVFIT_TEST_TMP/indep_mrs_lib/lib.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
d=$RVFIT_TEST_TMP/indep_mrs_lib
rm -rf "$d"
mkdir -p "$d"
printf '[instrument.lamost]\narms = mrs\n' > "$d/mrs.ini"
"$ind" grid --out "$d/grid" --preset mrs --threads 2
"$RVFIT_BIN" templates --grid "$d/grid" -i lamost -c "$d/mrs.ini" \
    --out "$d/lib" -j 2 2>"$d/templates.log"
rm -rf "$d/grid"
