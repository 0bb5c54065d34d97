#!/bin/bash
# rvspecfit template preparation for the DESI arms from a PHOENIX-layout grid.
# usage: prep_rvspecfit.sh MODE GRID_DIR OUT_DIR NTHREADS
#   MODE resmat: Gaussian sigma0 = 0.4 A (constant FWHM, --fixed_fwhm), to be
#                used with rvs_desi_fit --resolution_matrix and
#                lsf_sigma0_angstrom = 0.4 (what rvfit's library is built with)
#   MODE nores:  rvspecfit's own DESI recipe without resolution matrix:
#                FWHM 1.55 A (B, R) and 1.8 A (Z) (--resol_func x/1.55, x/1.8)
# Both: 0.4 A step on a log-lambda grid, vacuum, +-1000 km/s padding (fixed in
# rvs_make_interpol), default continuum normalisation, Delaunay interpolation
# (rvs_make_nd default), CCF set every 30th template with vsini 0 and 300.
# --resolution0 1e8: the synthetic grid is analytic (no instrumental LSF to
# subtract); the default 1e5 would narrow the kernel by ~0.5 %.
# RVS_CCF=0 skips the cross-correlation set (rvs_make_ccf, about a minute
# per arm on 2 cores), which only rvspecfit's own fits use (the template
# import test, tests/test_rvspecfit_fit.sh, sets it).
# Runs inside the rvspecfit virtual environment (PATH set by the caller).
set -euo pipefail
mode=$1 grid=$2 out=$3 nthreads=$4
ccf=${RVS_CCF:-1}
mkdir -p "$out"
db="$out/files.db"
rvs_read_grid --prefix "$grid/PHOENIX-ACES-AGSS-COND-2011/" --templdb "$db"

SIGMA0=0.4
for spec in b:3500:5900 r:5660:7720 z:7420:9924; do
    IFS=: read -r arm l0 l1 <<<"$spec"
    if [ "$mode" = resmat ]; then
        # --fixed_fwhm makes FWHM = lam_mid / resol everywhere in the arm
        resol=$(python -c "print(0.5*($l0+$l1)/(2*(2*__import__('math').log(2))**0.5*$SIGMA0))")
        rargs=(--fixed_fwhm --resol "$resol")
    else
        fw=1.55; [ "$arm" = z ] && fw=1.8
        rargs=(--resol_func "x/$fw")
    fi
    rvs_make_interpol --setup "desi_$arm" --lambda0 "$l0" --lambda1 "$l1" \
        --step 0.4 "${rargs[@]}" --resolution0 1e8 --templdb "$db" \
        --templprefix "$grid/PHOENIX-ACES-AGSS-COND-2011/" \
        --wavefile "$grid/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits" \
        --oprefix "$out/" --nthreads "$nthreads"
    rvs_make_nd --prefix "$out/" --setup "desi_$arm"
    [ "$ccf" = 0 ] || rvs_make_ccf --setup "desi_$arm" --lambda0 "$l0" --lambda1 "$l1" \
        --every 30 --vsinis 0,300 --prefix "$out/" --oprefix "$out/" \
        --step 0.4 --nthreads "$nthreads"
done

cfg="$out/config.yaml"
{
    echo "template_lib: '$(cd "$out" && pwd)/'"
    if [ "$mode" = resmat ]; then
        echo "lsf_sigma0_angstrom: {b: $SIGMA0, r: $SIGMA0, z: $SIGMA0}"
    fi
} >"$cfg"
