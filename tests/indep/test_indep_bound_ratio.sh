#!/usr/bin/env bash
# Parameters at the Cramer-Rao bound (issue 29), on a grid as dense as
# PHOENIX's: rvfit-indep's dense-box preset (Teff 5200-5800 K in 100 K
# steps, logg 3.5-5 and [Fe/H] -1.5-0 in 0.5, [alpha/Fe] 0-0.4 in 0.2;
# 336 models) and 200 of its stars at S/N 15-60, each with its own bound
# from the generator's noiseless spectra (rvfit-indep bound).
#
# The library built as docs/template-library.md recommends for such grids
# (pca, 20 components, cubic coefficients on TEFF, LOGG and FEH) must hold
# the ratios rms((fit - true) / bound) it reaches there.  Pooled over
# 1,100 stars of two line lists at S/N 5-60 (docs/benchmarks.md, "The
# dense box") they are, at S/N > 15, VRAD / TEFF / LOGG / FEH / ALPHAFE
# 1.05 / 1.10 / 1.12 / 1.13 / 1.04 (since the prep change of 2026-11-28
# that stopped keeping a data pixel's box in the model; 1.06 / 1.15 /
# 1.16 / 1.27 / 1.11 before): issue 29's 1.3 for TEFF, FEH and ALPHAFE is
# met, its 1.1 for LOGG nearly.  An rms of 200 stars is known to about
# 5 %, so the limits here are those figures plus about two standard
# errors: 1.15 / 1.2 / 1.22 / 1.25 / 1.15, and pull widths in [0.8, 1.25].
# This set (seed 8) measures 0.99 / 1.02 / 1.00 / 1.13 / 1.02.
#
# The default library (multilinear) on the same stars must exceed the
# limits of TEFF, FEH or ALPHAFE (measured 1.52 / 2.34 / 1.69), which
# shows that the test separates the interpolators.  About 4 minutes on 2
# cores, most of it the bounds.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
d=$RVFIT_TEST_TMP/indep_bound_ratio
rm -rf "$d"
mkdir -p "$d"
"$ind" grid --out "$d/grid" --preset dense-box --threads 2
cat >"$d/pca.ini" <<'EOF'
[templates]
interpolator = pca
pca_components = 20
cubic = TEFF, LOGG, FEH
EOF
"$RVFIT_BIN" templates --grid "$d/grid" --out "$d/lib-pca" -c "$d/pca.ini" \
    -j 2 2>"$d/templates-pca.log"
"$RVFIT_BIN" templates --grid "$d/grid" --out "$d/lib-ml" -j 2 \
    2>"$d/templates-ml.log"
rm -rf "$d/grid"
snr=(--snr-min 15 --snr-max 60)
"$ind" spectra --out "$d/coadd.fits" --truth "$d/truth.fits" --nstar 200 \
    --seed 8 --preset dense-box "${snr[@]}" --threads 2
"$ind" bound "$d/coadd.fits" "$d/truth.fits" --out "$d/bound.fits" \
    "${snr[@]}" --threads 2 2>"$d/bound.log"

# score_of LIB: fits the stars with library LIB into $d/score-LIB.txt.
score_of() {
    "$RVFIT_BIN" fit -t "$d/lib-$1" -o "$d/out-$1" -j 2 --no-models \
        "$d/coadd.fits" 2>"$d/fit-$1.log"
    "$ind" score "$d/out-$1/rvtab_coadd.fits" "$d/truth.fits" \
        --bound "$d/bound.fits" >"$d/score-$1.txt"
}

fail=0
score_of pca
pulls_in_range pca "$(score_row "$d/score-pca.txt" "pull widths" ">15")" ||
    fail=1
# ">15 n VRAD TEFF LOGG FEH ALPHAFE"
ratio=$(score_row "$d/score-pca.txt" Cramer-Rao ">15")
echo "pca, rms / bound at S/N > 15: $ratio"
awk '{
         if ($2 < 150) { printf "pca: %d stars scored\n", $2; bad = 1 }
         split("VRAD TEFF LOGG FEH ALPHAFE", name)
         split("1.15 1.2 1.22 1.25 1.15", lim)
         for (k = 3; k <= 7; k++)
             if (!($k <= lim[k - 2] + 0)) {
                 printf "pca: %s at %s of the bound, above %s\n", name[k - 2], $k, lim[k - 2]
                 bad = 1
             }
     }
     END { if (NR != 1) { print "pca: score rows not found"; bad = 1 }
           exit bad }' <<< "$ratio" || fail=1

score_of ml
ratio=$(score_row "$d/score-ml.txt" Cramer-Rao ">15")
echo "multilinear, rms / bound at S/N > 15: $ratio"
awk '{ over = ($4 > 1.2) + ($6 > 1.25) + ($7 > 1.15) }
     END { if (!(over > 0)) {
               print "multilinear within every limit: the test does not separate"
               exit 1
           } }' <<< "$ratio" || fail=1
[ "$fail" = 0 ] || { echo "FAIL: see $d"; exit 1; }
echo "pca within its bound ratios on the dense box; multilinear not"
rm -rf "$d"
