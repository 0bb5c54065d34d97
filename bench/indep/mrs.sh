#!/bin/bash
# LAMOST MRS joint fits on the independent generator: NSTAR stars
# observed on 1..NNIGHT nights of NEXPMIN..NEXPMAX exposures each, written
# as med- files (rvfit-indep mrs; a fraction BFRAC single-lined binaries
# on Keplerian orbits), fitted with `--epochs joint` over the exposures
# ([instrument.lamost] mrs = exposures) against a library of the MRS arms
# built from the mrs-preset grid; prints rvfit-indep score-epochs (the KS
# test of VRAD_PVALUE on the constant stars, per-exposure VRAD pull widths
# per S/N bin, binary completeness against K1/sigma) and the cost.
# The measurement of docs/benchmarks.md ("LAMOST MRS"):
#   NSTAR=150 SEED=3 bash bench/indep/mrs.sh
#
# Environment (defaults): NSTAR (150), SEED (3), NNIGHT (3), NEXPMIN (2),
# NEXPMAX (5), SNRMIN (5), SNRMAX (60), BFRAC (0.3), NTHREADS (2), WORK
# (bench/indep/work), RVFIT_BUILD (build-bench), FORCE=1 remakes grid,
# library and spectra.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NSTAR=${NSTAR:-150} SEED=${SEED:-3} NNIGHT=${NNIGHT:-3}
NEXPMIN=${NEXPMIN:-2} NEXPMAX=${NEXPMAX:-5} SNRMIN=${SNRMIN:-5}
SNRMAX=${SNRMAX:-60} BFRAC=${BFRAC:-0.3} NTHREADS=${NTHREADS:-2}
WORK=${WORK:-$HERE/work} BUILD=${RVFIT_BUILD:-$ROOT/build-bench}
FORCE=${FORCE:-0}
. "$HERE/common.sh"
indep_build
grid=grid-mrs-m1 lib=lib-rvfit-mrs-m1
tag=mrs-$NSTAR-s$SEED-n$NNIGHT-e$NEXPMIN-$NEXPMAX-b$BFRAC
printf '[instrument.lamost]\narms = mrs\nmrs = exposures\n' > mrs.ini
if [ "$FORCE" = 1 ] || [ ! -f "$lib/rvfit_library.fits" ]; then
    rm -rf "$grid" "$lib"
    log "grid: rvfit-indep grid --preset mrs"
    time "$IND" grid --out "$grid" --preset mrs --threads "$NTHREADS"
    log "rvfit templates (arms = mrs)"
    time "$RV" templates --grid "$grid" -i lamost -c mrs.ini --out "$lib" \
        -j "$NTHREADS" 2>templates-mrs.log
fi
if [ "$FORCE" = 1 ] || [ ! -f "$tag/truth.fits" ]; then
    rm -rf "$tag"
    log "spectra: $NSTAR stars, seed $SEED"
    time "$IND" mrs --out "$tag" --truth "$tag/truth.fits" \
        --nstar "$NSTAR" --seed "$SEED" --nnight-max "$NNIGHT" \
        --nexp-min "$NEXPMIN" --nexp-max "$NEXPMAX" --snr-min "$SNRMIN" \
        --snr-max "$SNRMAX" --binary-frac "$BFRAC" --threads "$NTHREADS"
fi

rm -rf "out-joint-$tag"
log "rvfit fit --epochs joint (mrs = exposures)"
time "$RV" fit -t "$lib" -i lamost -c mrs.ini -o "out-joint-$tag" \
    -j "$NTHREADS" --epochs joint --no-models "$tag"/med-*.fits \
    2>"joint-$tag.log"
"$IND" score-epochs "out-joint-$tag/rvtab_joint.fits" "$tag/truth.fits"
echo
grep "evaluated .* points in" "joint-$tag.log" | tail -1 | sed 's/.*rvfit: //'
grep "profile: .*spectra in" "joint-$tag.log" | sed 's/.*profile: //'
