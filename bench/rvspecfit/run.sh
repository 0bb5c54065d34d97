#!/bin/bash
# Side-by-side benchmark of rvfit and rvspecfit on the same synthetic inputs.
# One command from a fresh clone:   bash bench/rvspecfit/run.sh
# Builds rvfit (cmake, in $RVFIT_BUILD), installs the pinned rvspecfit into
# bench/rvspecfit/.venv, writes the grid and the mock coadd, builds both
# template libraries, fits with both, and writes the report
# ($WORK/report.md, $WORK/report.json) and replaces the "rvspecfit
# comparison" section of docs/benchmarks.md (UPDATE_DOCS=0: no).
#
# Environment (defaults): NSTAR (100), SEED (1), PRESET (small), NTHREADS (2),
# RVS_MODES ("resmat nores"), RVFIT_BIG (1000: extra rvfit-only throughput
# run on that many stars, 0 = none), WORK (bench/rvspecfit/work),
# RVFIT_BUILD (build-bench), FORCE=1 redoes grid/mock/templates,
# REUSE_FITS=1 keeps fits that already have an output and a timing record
# (to regenerate the report without refitting).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NSTAR=${NSTAR:-100} SEED=${SEED:-1} PRESET=${PRESET:-small}
NTHREADS=${NTHREADS:-2} RVFIT_BIG=${RVFIT_BIG:-1000} RVS_MODES=${RVS_MODES:-resmat nores}
WORK=${WORK:-$HERE/work}
BUILD=${RVFIT_BUILD:-$ROOT/build-bench}
FORCE=${FORCE:-0}
VENV=$HERE/.venv
log() { printf '== %s\n' "$*" >&2; }
# reuse TIMING.json OUTPUT: true when an earlier fit may be kept
reuse() { [ "${REUSE_FITS:-0}" = 1 ] && [ -f "$1" ] && [ -f "$2" ]; }

# --- rvfit (incremental build, so the binary matches the checkout) ---------
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    log "configuring rvfit in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" >/dev/null
fi
log "building rvfit"
cmake --build "$BUILD" -j "$NTHREADS" >/dev/null
RVFIT=$BUILD/rvfit
export RVFIT_PLUGIN_PATH=$BUILD/plugins

# --- rvspecfit (pinned, own venv) -------------------------------------------
if [ ! -x "$VENV/bin/rvs_desi_fit" ]; then
    log "installing rvspecfit into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -r "$HERE/requirements.txt"
fi
PY=$VENV/bin/python

# --- shared inputs -------------------------------------------------------------
mkdir -p "$WORK"
cd "$WORK"
T="$PY $HERE/timed.py"
if [ "$FORCE" = 1 ] || [ ! -f grid/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits ]; then
    rm -rf grid
    log "grid: rvfit mock grid --preset $PRESET"
    "$RVFIT" mock grid --out grid --preset "$PRESET" --threads "$NTHREADS"
fi
MOCK=coadd-mock-$PRESET-$NSTAR-$SEED.fits
TRUTH=truth-$PRESET-$NSTAR-$SEED.fits
if [ "$FORCE" = 1 ] || [ ! -f "$MOCK" ]; then
    log "mock coadd: $NSTAR stars, seed $SEED"
    "$RVFIT" mock spectra --out "$MOCK" --truth "$TRUTH" --nstar "$NSTAR" \
        --seed "$SEED" --preset "$PRESET" --threads "$NTHREADS"
fi
# rvspecfit needs FIBERMAP.BRICKID (see convert.py); the spectra are untouched
RVSIN=coadd-rvs-$PRESET-$NSTAR-$SEED.fits
[ -f "$RVSIN" ] && [ "$FORCE" != 1 ] || "$PY" "$HERE/convert.py" "$MOCK" "$RVSIN"

# --- template libraries --------------------------------------------------------
if [ "$FORCE" = 1 ] || [ ! -f lib_rvfit/rvfit_library.fits ]; then
    log "rvfit templates (sigma0 0.4 A)"
    $T time_prep_rvfit.json -- "$RVFIT" templates --grid grid --out lib_rvfit \
        --threads "$NTHREADS"
fi
for mode in $RVS_MODES; do
    if [ "$FORCE" = 1 ] || [ ! -f "lib_rvs_$mode/config.yaml" ]; then
        rm -rf "lib_rvs_$mode"
        log "rvspecfit templates ($mode)"
        PATH=$VENV/bin:$PATH $T "time_prep_rvs_$mode.json" -- bash \
            "$HERE/prep_rvspecfit.sh" "$mode" grid "lib_rvs_$mode" "$NTHREADS" \
            >"prep_rvs_$mode.log" 2>&1
    fi
done

# --- fits (rerun unless REUSE_FITS=1: these are the timings) ------------------
if ! reuse time_fit_rvfit.json "out_rvfit/rvtab_$MOCK"; then
    rm -rf out_rvfit && mkdir -p out_rvfit
    log "rvfit fit, $NTHREADS threads"
    $T time_fit_rvfit.json -- "$RVFIT" fit -t lib_rvfit -o out_rvfit \
        -j "$NTHREADS" "$MOCK" 2>fit_rvfit.log
fi
for mode in $RVS_MODES; do
    reuse "time_fit_rvs_$mode.json" "out_rvs_$mode/rvtab_$RVSIN" && continue
    rm -rf "out_rvs_$mode" && mkdir -p "out_rvs_$mode"
    extra=()
    [ "$mode" = resmat ] && extra=(--resolution_matrix)
    log "rvs_desi_fit ($mode), $NTHREADS processes (minutes)"
    PATH=$VENV/bin:$PATH $T "time_fit_rvs_$mode.json" -- rvs_desi_fit \
        --nthreads "$NTHREADS" --config "lib_rvs_$mode/config.yaml" \
        "${extra[@]}" --no_subdirs --output_dir "out_rvs_$mode" "$RVSIN" \
        >"fit_rvs_$mode.log" 2>&1
done

# rvfit batches spectra, so its throughput grows with the file: one larger
# file, rvfit only (rvspecfit's cost per star does not depend on it)
cost=()
if [ "$RVFIT_BIG" -gt 0 ]; then
    BIG=coadd-mock-$PRESET-$RVFIT_BIG-2.fits
    [ -f "$BIG" ] && [ "$FORCE" != 1 ] || "$RVFIT" mock spectra --out "$BIG" \
        --truth "truth-$PRESET-$RVFIT_BIG-2.fits" --nstar "$RVFIT_BIG" --seed 2 \
        --preset "$PRESET" --threads "$NTHREADS"
    if ! reuse time_fit_rvfit_big.json "out_rvfit_big/rvtab_$BIG"; then
        rm -rf out_rvfit_big && mkdir -p out_rvfit_big
        log "rvfit fit, $RVFIT_BIG stars, $NTHREADS threads"
        $T time_fit_rvfit_big.json -- "$RVFIT" fit -t lib_rvfit \
            -o out_rvfit_big -j "$NTHREADS" --no-models "$BIG" 2>fit_rvfit_big.log
    fi
    cost=(--cost-run "rvfit ($RVFIT_BIG stars)=out_rvfit_big/rvtab_$BIG:time_fit_rvfit_big.json")
fi

# --- report --------------------------------------------------------------------
runs=(--run "rvfit=out_rvfit/rvtab_$MOCK:time_fit_rvfit.json:time_prep_rvfit.json")
for mode in $RVS_MODES; do
    runs+=(--run "rvspecfit-$mode=out_rvs_$mode/rvtab_$RVSIN:time_fit_rvs_$mode.json:time_prep_rvs_$mode.json")
done
upd=()
[ "${UPDATE_DOCS:-1}" = 1 ] && upd=(--update-docs "$ROOT/docs/benchmarks.md")
"$PY" "$HERE/report.py" --truth "$TRUTH" --mock "$MOCK" --root "$ROOT" --preset "$PRESET" \
    --threads "$NTHREADS" "${runs[@]}" "${cost[@]}" --md report.md --json report.json "${upd[@]}"
cat report.md
