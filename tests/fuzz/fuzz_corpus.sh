#!/usr/bin/env bash
# CTest fixture: the seed corpus of the fuzz targets in DIR/{ini,library,
# desi,sdss,lamost}: small seeds from rvfit_fuzz_seeds, mock stars of each
# instrument (rvfit mock spectra), and the real files when present.
# Usage: fuzz_corpus.sh SEEDS_BINARY DIR
set -euo pipefail
seeds=$1 dir=$2
rm -rf "$dir"
mkdir -p "$dir"
"$seeds" "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for inst in desi sdss; do
    "${RVFIT_BIN:?run via ctest}" mock spectra --instrument "$inst" --nstar 1 \
        --seed 7 --out "$dir/$inst/mock.fits" --truth "$tmp/truth-$inst.fits" \
        > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
done
# LAMOST: one file per star; the mock alternates the two file layouts
mkdir -p "$dir/lamost"
"$RVFIT_BIN" mock spectra --instrument lamost --nstar 2 --seed 7 \
    --out "$tmp/lamost" --truth "$tmp/truth-lamost.fits" > "$tmp/log" 2>&1 ||
    { cat "$tmp/log"; exit 1; }
cp "$tmp"/lamost/*.fits "$dir/lamost/"
real=${RVFIT_SHARED_DATA:-}
if [ -n "$real" ] && [ -d "$real" ]; then
    cp "$real"/desi/coadd-*.fits "$dir/desi/" 2>/dev/null || true
    cp "$real"/sdss/spec-*.fits "$dir/sdss/" 2>/dev/null || true
else
    echo "fuzz_corpus: no real data (RVFIT_SHARED_DATA): mock and seeds only"
fi
# the INI seeds also get the documented example configurations
"$RVFIT_BIN" config > "$dir/ini/config-dump.ini"
ls -l "$dir"/*
