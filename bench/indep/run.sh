#!/bin/bash
# Accuracy of rvfit -- and of rvspecfit when its environment is present --
# on data from the independent generator rvfit-indep (tests/indep; see
# docs/independent-generator.md), which shares no code with rvfit's own
# mock writers.  One command:   bash bench/indep/run.sh
# Makes the grid (PHOENIX layout) and an N-star DESI coadd, builds rvfit's
# template library, fits, and prints recovered-vs-true statistics per S/N
# bin (rvfit-indep score: VRAD bias, robust scatter 1.4826 MAD, pull width,
# > 5 sigma fraction, Teff/logg/[Fe/H] bias and scatter).
#
# Environment (defaults): NSTAR (100), SEED (1), PRESET (small), NTHREADS (2),
# MODEL_SEED (1: the line list, shared by grid and coadd), ABLATE (empty =
# full observation model; e.g. cosmics,lsfshape -- see rvfit-indep --help),
# WORK (bench/indep/work), RVFIT_BUILD (build-bench), FORCE=1 remakes the
# grid, libraries and coadd, RVSPECFIT (auto: also fit with rvspecfit when
# bench/rvspecfit/.venv exists; 1: install it there first, as
# bench/rvspecfit/run.sh does; 0: rvfit only), BOUND (0; 1: each star's
# Cramer-Rao bound by rvfit-indep bound, about 1.7 CPU-s per star, cached,
# and rms((fit - true)/bound) per S/N bin in the scores), RVFIT_SET (empty;
# space-separated KEY=VALUE given to rvfit fit as --set, e.g.
# "templates.cubic=TEFF,LOGG,FEH templates.log_flux=1").
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NSTAR=${NSTAR:-100} SEED=${SEED:-1} PRESET=${PRESET:-small}
NTHREADS=${NTHREADS:-2} MODEL_SEED=${MODEL_SEED:-1} ABLATE=${ABLATE:-}
WORK=${WORK:-$HERE/work} BUILD=${RVFIT_BUILD:-$ROOT/build-bench}
FORCE=${FORCE:-0} RVSPECFIT=${RVSPECFIT:-auto}
BOUND=${BOUND:-0} RVFIT_SET=${RVFIT_SET:-}
VENV=$ROOT/bench/rvspecfit/.venv
. "$HERE/common.sh"
indep_build
grid=grid-$PRESET-m$MODEL_SEED lib=lib-rvfit-$PRESET-m$MODEL_SEED
tag=$PRESET-$NSTAR-s$SEED-m$MODEL_SEED${ABLATE:+-no-${ABLATE//,/-}}
coadd=coadd-indep-$tag.fits truth=truth-indep-$tag.fits
indep_library "$grid" "$lib" "$PRESET" "$MODEL_SEED"
if [ "$FORCE" = 1 ] || [ ! -f "$coadd" ]; then
    log "coadd: $NSTAR stars, seed $SEED${ABLATE:+, without $ABLATE}"
    time "$IND" spectra --out "$coadd" --truth "$truth" --nstar "$NSTAR" \
        --seed "$SEED" --model-seed "$MODEL_SEED" --preset "$PRESET" \
        ${ABLATE:+--ablate "$ABLATE"} --threads "$NTHREADS"
fi

bound_args=()
if [ "$BOUND" = 1 ]; then
    if [ "$FORCE" = 1 ] || [ ! -f "bound-$tag.fits" ]; then
        log "Cramer-Rao bound of each star (about 1.7 CPU-s per star)"
        time "$IND" bound "$coadd" "$truth" --out "bound-$tag.fits" \
            --threads "$NTHREADS"
    fi
    bound_args=(--bound "bound-$tag.fits")
fi
set_args=()
for kv in $RVFIT_SET; do set_args+=(--set "$kv"); done

rtag=$tag${RVFIT_SET:+-$(printf %s "$RVFIT_SET" | tr -c 'A-Za-z0-9=.' '_')}
rm -rf "out-rvfit-$rtag" && mkdir -p "out-rvfit-$rtag"
log "rvfit fit, $NTHREADS threads${RVFIT_SET:+, --set $RVFIT_SET}"
time "$RV" fit -t "$lib" -o "out-rvfit-$rtag" -j "$NTHREADS" --no-models \
    "${set_args[@]}" "$coadd" 2>"fit-rvfit-$rtag.log"
"$IND" score "out-rvfit-$rtag/rvtab_$coadd" "$truth" "${bound_args[@]}" \
    >"score-rvfit-$rtag.txt"

# --- rvspecfit on the same grid and coadd (its DESI recipe with the
# resolution matrix, as bench/rvspecfit/run.sh's "resmat" mode) ------------
have_rvs=0
if [ "$RVSPECFIT" = 1 ] && [ ! -x "$VENV/bin/rvs_desi_fit" ]; then
    log "installing rvspecfit into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -r "$ROOT/bench/rvspecfit/requirements.txt"
fi
if [ "$RVSPECFIT" != 0 ] && [ -x "$VENV/bin/rvs_desi_fit" ]; then
    have_rvs=1
    rlib=lib-rvs-resmat-$PRESET-m$MODEL_SEED
    if [ "$FORCE" = 1 ] || [ ! -f "$rlib/config.yaml" ]; then
        rm -rf "$rlib"
        log "rvspecfit templates (resmat)"
        time PATH=$VENV/bin:$PATH bash "$ROOT/bench/rvspecfit/prep_rvspecfit.sh" \
            resmat "$grid" "$rlib" "$NTHREADS" >"prep-rvs-$PRESET.log" 2>&1
    fi
    rm -rf "out-rvs-$tag" && mkdir -p "out-rvs-$tag"
    log "rvs_desi_fit, $NTHREADS processes (minutes)"
    time PATH=$VENV/bin:$PATH rvs_desi_fit --nthreads "$NTHREADS" \
        --config "$rlib/config.yaml" --resolution_matrix --no_subdirs \
        --output_dir "out-rvs-$tag" "$coadd" >"fit-rvs-$tag.log" 2>&1
    "$IND" score "out-rvs-$tag/rvtab_$coadd" "$truth" "${bound_args[@]}" \
        >"score-rvs-$tag.txt"
fi

# --- report -------------------------------------------------------------------
echo "### Independent data: rvfit-indep, preset $PRESET, $NSTAR stars," \
     "seed $SEED, model seed $MODEL_SEED${ABLATE:+, without $ABLATE}"
echo "commit $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) cores," \
     "load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
if [ "$have_rvs" = 1 ]; then
    # the two tables interleaved, one line per program and S/N bin
    awk 'FNR == 1 { prog = FILENAME ~ /score-rvs/ ? "rvspecfit" : "rvfit";
                    if (NR == 1) printf "%-9s %s\n", "program", $0; next }
         /^(S\/N<5|5-15|>15|all) / { row[$1, prog] = $0; bins[$1] = 1 }
         END { n = split("S/N<5 5-15 >15 all", b, " ");
               for (i = 1; i <= n; i++) {
                   printf "%-9s %s\n", "rvfit", row[b[i], "rvfit"];
                   printf "%-9s %s\n", "rvspecfit", row[b[i], "rvspecfit"] } }' \
        "score-rvfit-$rtag.txt" "score-rvs-$tag.txt"
else
    echo "rvfit (rvspecfit not run: no $VENV; RVSPECFIT=1 installs it)"
    cat "score-rvfit-$rtag.txt"
fi
# cross-check with the benchmark's own scorer when a Python with astropy is at
# hand (it uses IQR/1.349 for the scatter)
for py in "$ROOT/bench/.venv/bin/python" "$VENV/bin/python"; do
    if [ -x "$py" ] && "$py" -c 'import astropy' 2>/dev/null; then
        echo
        echo "bench/evaluate.py (rvfit):"
        "$py" "$ROOT/bench/evaluate.py" "out-rvfit-$rtag/rvtab_$coadd" "$truth"
        if [ "$have_rvs" = 1 ]; then
            echo "bench/evaluate.py (rvspecfit):"
            "$py" "$ROOT/bench/evaluate.py" "out-rvs-$tag/rvtab_$coadd" "$truth"
        fi
        break
    fi
done
