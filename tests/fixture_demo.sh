#!/usr/bin/env bash
# CTest fixture: the synthetic data every end-to-end test shares — a small
# grid in PHOENIX layout, the DESI template library built from it, and a
# seeded 200-star synthetic coadd with its truth table.
set -euo pipefail
d=${RVFIT_TEST_DATA:?run via ctest}
rm -rf "$d"
mkdir -p "$d"
"$RVFIT_BIN" mock grid --preset small --out "$d/grid"
"$RVFIT_BIN" templates --grid "$d/grid" --instrument desi --out "$d/lib"
"$RVFIT_BIN" mock spectra --instrument desi --nstar 200 --seed 42 \
    --snr-min 3 --snr-max 60 --vmax 500 --vsini-max 10 \
    --out "$d/coadd-mock.fits" --truth "$d/truth.fits"
test -s "$d/lib/rvfit_library.fits" && test -s "$d/coadd-mock.fits"
echo "fixture ready in $d"
