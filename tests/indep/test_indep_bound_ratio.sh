#!/usr/bin/env bash
# Parameters at the Cramer-Rao bound (issue 29), on a grid as dense as
# PHOENIX's: rvfit-indep's dense-box preset (Teff 5200-5800 K in 100 K
# steps, logg 3.5-5 and [Fe/H] -1.5-0 in 0.5, [alpha/Fe] 0-0.4 in 0.2;
# 336 models) and 200 of its stars at S/N 15-60, each with its own bound
# from the generator's noiseless spectra (rvfit-indep bound).
#
# The library built as docs/template-library.md recommends for such grids (pca,
# 20 components, cubic coefficients on TEFF, LOGG and FEH) must hold the
# issue's ratios: rms((fit - true) / bound) <= 1.3 for TEFF, FEH and
# ALPHAFE, <= 1.1 for VRAD and LOGG, parameter pull widths in
# [0.8, 1.25].  Measured on this set (seed 8) 0.99 / 1.06 / 1.04 / 1.22 /
# 1.05 (VRAD / TEFF / LOGG / FEH / ALPHAFE) and pulls 0.91-1.11; on seed
# 9 1.14 / 1.10 / 1.27 / 1.08 for the four parameters.  With 200 stars an
# rms ratio is known to about 5 %, so FEH's margin is one and a half of
# that: the test pins the level, it is not a loose bound.
#
# The default library (multilinear) on the same stars must fail the 1.3
# (measured TEFF / FEH / ALPHAFE 1.44 / 2.08 / 1.64), which shows that the
# test separates the interpolators.  About 4 minutes on 2 cores, most of
# it the bounds.
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

# score_of LIB: fits the stars with library LIB and prints rvfit-indep
# score's S/N > 15 rows, pull widths then bound ratios:
# ">15 n TEFF LOGG FEH ALPHAFE" and ">15 n VRAD TEFF LOGG FEH ALPHAFE".
score_of() {
    "$RVFIT_BIN" fit -t "$d/lib-$1" -o "$d/out-$1" -j 2 --no-models \
        "$d/coadd.fits" 2>"$d/fit-$1.log"
    "$ind" score "$d/out-$1/rvtab_coadd.fits" "$d/truth.fits" \
        --bound "$d/bound.fits" >"$d/score-$1.txt"
    awk '/pull widths of the parameters/ || /Cramer-Rao bound/ { t++; next }
         t && $1 == ">15" { gsub(/\([^)]*\)/, ""); print }' \
        "$d/score-$1.txt"
}

fail=0
score_of pca | tee "$d/pca.txt"
awk 'NR == 1 {
         for (k = 3; k <= 6; k++)
             if (!($k >= 0.8 && $k <= 1.25)) {
                 printf "pca: pull width %s of parameter %d outside [0.8, 1.25]\n", $k, k - 2
                 bad = 1
             }
     }
     NR == 2 {
         if ($2 < 150) { printf "pca: %d stars scored\n", $2; bad = 1 }
         split("VRAD TEFF LOGG FEH ALPHAFE", name)
         split("1.1 1.3 1.1 1.3 1.3", lim)
         for (k = 3; k <= 7; k++)
             if (!($k <= lim[k - 2] + 0)) {
                 printf "pca: %s at %s of the bound, above %s\n", name[k - 2], $k, lim[k - 2]
                 bad = 1
             }
     }
     END { if (NR != 2) { print "pca: score rows not found"; bad = 1 }
           exit bad }' "$d/pca.txt" || fail=1

score_of ml | tee "$d/ml.txt"
awk 'NR == 2 { worst = $4 > $6 ? $4 : $6; worst = worst > $7 ? worst : $7 }
     END { if (!(worst > 1.3)) {
               printf "multilinear within 1.3 of the bound (worst %s): the test does not separate\n", worst
               exit 1
           } }' "$d/ml.txt" || fail=1
[ "$fail" = 0 ] || { echo "FAIL: see $d"; exit 1; }
echo "pca at the bound's ratios of issue 29 on the dense box; multilinear not"
rm -rf "$d"
