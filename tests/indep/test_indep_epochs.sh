#!/usr/bin/env bash
# Joint fits against an independent truth (issue 26), CI-sized: 24 stars
# of 2-5 exposures (rvfit-indep epochs, seed 7, about a third of them
# single-lined binaries on Keplerian orbits) in 2 per-exposure spectra-
# files, fitted with --epochs joint and one spectrum at a time.
# rvfit-indep score-epochs checks, on numbers measured at this seed (the
# data and the fits are deterministic):
#  - VRAD_PVALUE of the 19 constant stars is not far from uniform (KS p
#    > 0.01, measured 0.96; at most 10 % below 0.001, measured 1 star);
#  - the per-exposure VRAD pull width of all 81 exposures lies in
#    [0.75, 1.3] (measured 1.01; the S/N bins hold 21-38 exposures, too
#    few to check one by one);
#  - the joint TEFF and LOGG scatter about the truth is below the single
#    fits' on the same stars (measured 92.6 K / 148.3 K, 0.206 / 0.348).
#    Not FEH: on this grid both are set by the library's interpolation
#    error, and on the 1,500 stars of bench/indep/joint.sh the joint FEH is
#    only 6 % better at S/N > 15, which 24 stars cannot resolve (0.250 /
#    0.301 before the prep change of 2026-11-28, 0.240 / 0.236 after,
#    while the paired comparison still has the joint nearer the truth
#    than its exposures' rms for 16-18 of the 24 stars);
#  - at least 3 of the 4 binaries with K1 / sigma >= 8 are flagged
#    (VRAD_PVALUE < 0.001; 3 are).
# The acceptance measurement on 1500 stars with the issue's bounds is
# bench/indep/joint.sh (docs/benchmarks.md, "Joint fits").  Library: the
# indep_lib fixture.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
d=$RVFIT_TEST_TMP/indep_epochs
lib=$RVFIT_TEST_TMP/indep_lib/lib
rm -rf "$d"
mkdir -p "$d"
"$ind" epochs --out "$d/ep" --truth "$d/truth.fits" --nstar 24 --seed 7 \
    --nfile 2 --nexp-max 5 --threads 2
"$RVFIT_BIN" fit -t "$lib" -o "$d/joint" -j 2 --no-models --epochs joint \
    "$d"/ep/spectra-*.fits 2>"$d/joint.log"
"$RVFIT_BIN" fit -t "$lib" -o "$d/single" -j 2 --no-models \
    "$d"/ep/spectra-*.fits 2>"$d/single.log"
"$ind" score-epochs "$d/joint/rvtab_joint.fits" "$d/truth.fits" \
    "$d"/single/rvtab_spectra-*.fits --check --ks-p 0.01 --frac-lo 0 \
    --frac-hi 0.1 --pull-lo 0.75 --pull-hi 1.3 --pull-min-n 60 \
    --joint-better=TEFF,LOGG --complete-k 8 --complete-min 0.6
rm -rf "$d"
