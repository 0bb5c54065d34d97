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
# LAMOST: one star in each file layout (DR1-DR7 image, DR8+ table)
mkdir -p "$dir/lamost"
for layout in dr7 dr8; do
    printf '[instrument.lamost]\nmock_layout = %s\n' "$layout" > "$tmp/$layout.ini"
    "$RVFIT_BIN" mock spectra --instrument lamost -c "$tmp/$layout.ini" \
        --nstar 1 --seed 7 --out "$dir/lamost/mock-$layout.fits" \
        --truth "$tmp/truth-lamost.fits" > "$tmp/log" 2>&1 ||
        { cat "$tmp/log"; exit 1; }
done
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
