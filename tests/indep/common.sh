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

# score_row FILE TITLE BIN: the row of S/N bin BIN ("5-15", ">15") in the
# table of rvfit-indep score's output FILE whose title holds TITLE ("pull
# widths", "Cramer-Rao"), its bracketed medians dropped: "BIN n X...".
score_row() {
    awk -v title="$2" -v bin="$3" '
        index($0, title) { t = 1; next }
        t && $1 == bin { gsub(/\([^)]*\)/, ""); print; exit }' "$1"
}

# pulls_in_range LABEL ROW: fails, saying why, unless ROW (a score_row of
# the pull widths) exists and its four widths lie in [0.8, 1.25].
pulls_in_range() {
    [ -n "$2" ] || { echo "$1: no pull widths in the score"; return 1; }
    awk -v l="$1" '{
        for (k = 3; k <= 6; k++)
            if (!($k >= 0.8 && $k <= 1.25)) {
                printf "%s: pull width %s of parameter %d outside [0.8, 1.25]\n", l, $k, k - 2
                bad = 1
            }
        } END { exit bad }' <<< "$2"
}
