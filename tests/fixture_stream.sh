#!/usr/bin/env bash
# CTest fixture for the multi-file tests (test_e2e_stream, test_e2e_mpi):
# five synthetic DESI coadds of different sizes (3, 17, 40, 9, 26 stars)
# and their reference fits, one file per command, one thread, no
# read-ahead, into stream/ref.
set -euo pipefail
d=${RVFIT_TEST_DATA:?run via ctest}/stream
rm -rf "$d"
mkdir -p "$d/ref"
i=0
for n in 3 17 40 9 26; do
    i=$((i + 1))
    "$RVFIT_BIN" mock spectra -i desi -n "$n" --seed $((10 + i)) \
        --snr-min 5 --snr-max 40 --out "$d/c$i.fits" --truth "$d/t$i.fits"
done
for i in 1 2 3 4 5; do
    "$RVFIT_BIN" fit --templates "$RVFIT_TEST_DATA/lib" -o "$d/ref" -j 1 \
        --set run.readahead=0 --log-level warn "$d/c$i.fits"
done
echo "stream fixture ready in $d"
