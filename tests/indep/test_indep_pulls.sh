#!/usr/bin/env bash
# Parameter errors against an independent truth (issue 14's acceptance):
# 600 stars of rvfit-indep (small grid, seed 3: a set not used while the
# error model was developed, docs/benchmarks.md "Issue 14: the error model
# completed") fitted by rvfit; the pull widths of TEFF, LOGG, FEH and
# ALPHAFE (rvfit-indep score: 1.4826 MAD about the median of
# (fit - true) / <AXIS>_ERR) must lie in [0.8, 1.25] in the S/N 5-15 and
# > 15 bins, each of at least 40 stars.  Measured 1.12 / 0.89 / 0.97 / 0.98
# and 1.01 / 0.90 / 0.88 / 1.08; before the error model had the axes'
# shifts as one vector, bounded errors for non-positive-definite Hessians
# and the basin of fits held on a node (db14f86), six of the eight cells
# lay at 1.38-1.81 and this test fails there (checked).  About 2 minutes
# on 2 cores.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
d=$RVFIT_TEST_TMP/indep_pulls
indep_setup "$d" 600 3
"$RVFIT_BIN" fit -t "$d/lib" -o "$d/out" -j 2 --no-models "$d/coadd.fits" \
    2>"$d/fit.log"
"$ind" score "$d/out/rvtab_coadd.fits" "$d/truth.fits" >"$d/score.txt"
cat "$d/score.txt"

fail=0
for bin in 5-15 '>15'; do
    row=$(score_row "$d/score.txt" "pull widths" "$bin")
    pulls_in_range "bin $bin" "$row" || fail=1
    n=$(awk '{ print $2 }' <<< "$row")
    [ "${n:-0}" -ge 40 ] || { echo "bin $bin: ${n:-no} stars"; fail=1; }
done
[ "$fail" = 0 ] || { echo "FAIL: see $d"; exit 1; }
echo "pull widths in [0.8, 1.25] at S/N >= 5"
rm -rf "$d"
