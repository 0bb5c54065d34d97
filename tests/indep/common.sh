# Shared by the rvfit-indep end-to-end tests (sourced, not run): checks the
# environment and makes a small-preset grid, rvfit's library of it and an
# N-star coadd in a fresh work folder.
set -euo pipefail
: "${RVFIT_BIN:?}" "${RVFIT_INDEP_BIN:?}" "${RVFIT_TEST_TMP:?}"
ind=$RVFIT_INDEP_BIN

# indep_setup DIR NSTAR SEED: DIR/grid, DIR/lib, DIR/coadd.fits,
# DIR/truth.fits and an empty DIR/out.
indep_setup() {
    local d=$1 nstar=$2 seed=$3
    rm -rf "$d"
    mkdir -p "$d/out"
    "$ind" grid --out "$d/grid" --preset small --threads 2
    "$RVFIT_BIN" templates --grid "$d/grid" --out "$d/lib" -j 2 \
        2>"$d/templates.log"
    "$ind" spectra --out "$d/coadd.fits" --truth "$d/truth.fits" \
        --nstar "$nstar" --seed "$seed" --threads 2
}
