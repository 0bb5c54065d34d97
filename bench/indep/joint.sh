#!/bin/bash
# Joint fits of several exposures (--epochs joint) on the independent
# generator: NSTAR stars of 2-8 exposures each in NFILE per-exposure DESI
# spectra- files (rvfit-indep epochs; a fraction BFRAC single-lined
# binaries on Keplerian orbits), fitted jointly and, for comparison, the
# spectra of the first NSINGLE files one at a time; prints rvfit-indep
# score-epochs (the KS test of VRAD_PVALUE on the constant stars,
# per-exposure pull widths per S/N bin beside the single fits', joint
# against single parameter scatter on the stars of those files, binary
# completeness against K1/sigma) and the cost: points and backend calls
# of both runs, and per spectrum.
# The acceptance of issue 26 (docs/benchmarks.md, "Joint fits"):
#   NSTAR=1500 SEED=101 NFILE=8 NSINGLE=3 bash bench/indep/joint.sh
#
# Environment (defaults): NSTAR (200), SEED (1), NFILE (4), NSINGLE
# (NFILE), BFRAC (0.3), PRESET (small), NTHREADS (2), WORK
# (bench/indep/work), RVFIT_BUILD (build-bench), FORCE=1 remakes grid,
# library and spectra, CHECK=1 adds the acceptance checks (exit 1 when
# one fails).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NSTAR=${NSTAR:-200} SEED=${SEED:-1} NFILE=${NFILE:-4} BFRAC=${BFRAC:-0.3}
NSINGLE=${NSINGLE:-$NFILE}
PRESET=${PRESET:-small} NTHREADS=${NTHREADS:-2}
WORK=${WORK:-$HERE/work} BUILD=${RVFIT_BUILD:-$ROOT/build-bench}
FORCE=${FORCE:-0} CHECK=${CHECK:-0}
. "$HERE/common.sh"
indep_build
grid=grid-$PRESET-m1 lib=lib-rvfit-$PRESET-m1
tag=epochs-$PRESET-$NSTAR-s$SEED-f$NFILE-b$BFRAC
indep_library "$grid" "$lib" "$PRESET" 1
if [ "$FORCE" = 1 ] || [ ! -f "$tag/truth.fits" ]; then
    rm -rf "$tag"
    log "spectra: $NSTAR stars, seed $SEED, $NFILE files"
    time "$IND" epochs --out "$tag" --truth "$tag/truth.fits" \
        --nstar "$NSTAR" --seed "$SEED" --nfile "$NFILE" \
        --binary-frac "$BFRAC" --preset "$PRESET" --threads "$NTHREADS"
fi

rm -rf "out-joint-$tag" "out-single-$tag"
log "rvfit fit --epochs joint"
time "$RV" fit -t "$lib" -o "out-joint-$tag" -j "$NTHREADS" --epochs joint \
    --no-models "$tag"/spectra-*.fits 2>"joint-$tag.log"
singles=()
for ((f = 0; f < NSINGLE; f++)); do singles+=("$tag/spectra-$f.fits"); done
log "rvfit fit (single) of ${#singles[@]} files"
time "$RV" fit -t "$lib" -o "out-single-$tag" -j "$NTHREADS" --no-models \
    "${singles[@]}" 2>"single-$tag.log"

checks=()
[ "$CHECK" = 1 ] && checks=(--check --ks-p 0.01 --frac-lo 3e-4 --frac-hi 3e-3
                            --pull-lo 0.9 --pull-hi 1.1 --joint-better)
"$IND" score-epochs "out-joint-$tag/rvtab_joint.fits" "$tag/truth.fits" \
    "out-single-$tag"/rvtab_spectra-*.fits ${checks[@]+"${checks[@]}"}
echo
# Points and backend calls per spectrum (the single fits may cover only
# some files; a single fit's cost does not depend on the other spectra).
for m in joint single; do
    log=$m-$tag.log
    printf '%-7s ' "$m"
    grep "evaluated .* points in" "$log" | tail -1 | sed 's/.*rvfit: //'
    grep "profile: .*spectra in" "$log" | sed 's/.*profile: /        /'
    awk '/profile: [0-9]+ spectra in/ { for (i = 1; i < NF; i++)
                                          if ($(i + 1) == "spectra") n = $i }
         /evaluated [0-9]+ points in [0-9]+ calls/ {
             for (i = 1; i < NF; i++) {
                 if ($i == "evaluated") p = $(i + 1)
                 if ($(i + 1) == "calls" && $i ~ /^[0-9]+$/) c = $i } }
         END { if (n) printf "        %.1f points, %.4f backend calls per spectrum\n",
                             p / n, c / n }' "$log"
done
