#!/usr/bin/env bash
# End-to-end smoke test on independent data: rvfit-indep grid (small) ->
# rvfit templates -> 30-star rvfit-indep coadd -> rvfit fit; the median
# |VRAD - true| of the stars with S/N > 10 must be below 5 km/s (a loose
# sanity bound: bench/indep/run.sh measures the accuracy).  Also checks that
# the generator's output does not depend on the thread count and that
# `rvfit mock compare` reads its truth table.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
d=$RVFIT_TEST_TMP/indep_e2e
indep_setup "$d" 30 11

"$ind" spectra --out "$d/t1.fits" --truth "$d/t1_truth.fits" --nstar 3 \
    --seed 5 --threads 1
"$ind" spectra --out "$d/t2.fits" --truth "$d/t2_truth.fits" --nstar 3 \
    --seed 5 --threads 2
cmp "$d/t1.fits" "$d/t2.fits"
cmp "$d/t1_truth.fits" "$d/t2_truth.fits"

"$RVFIT_BIN" fit -t "$d/lib" -o "$d/out" -j 2 "$d/coadd.fits" 2>"$d/fit.log"
"$RVFIT_BIN" mock compare "$d/out/rvtab_coadd.fits" "$d/truth.fits" 3
"$ind" score "$d/out/rvtab_coadd.fits" "$d/truth.fits" \
    --check-absdv 5 --check-snr 10
rm -rf "$d"
