#!/usr/bin/env bash
# Standard DESI benchmark (../shared/design/benchmarks.md): grid-std in
# PHOENIX layout -> lib-desi -> desi-N synthetic coadd -> rvfit fit.
# Prints spectra/s, the per-stage profile, peak RSS and accuracy in S/N
# bins as a Markdown block for docs/benchmarks.md.
#   bash bench/run_desi.sh [NSTAR=1000] [BACKEND=cpu] [GRID=std]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}; backend=${2:-cpu}; preset=${3:-std}
bash scripts/setup-deps.sh
build=${RVFIT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
rv="$PWD/$build/rvfit"
export RVFIT_PLUGIN_PATH="$PWD/$build/plugins"
d=${RVFIT_BENCH_DIR:-bench/data}
mkdir -p "$d/out"
# Python is used here only to score the results against the truth.
if [ ! -x bench/.venv/bin/python ]; then
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q numpy astropy
fi
grid="$d/grid-$preset"; lib="$d/lib-desi-$preset"
[ -d "$grid/PHOENIX-ACES-AGSS-COND-2011" ] || "$rv" mock grid --preset "$preset" --out "$grid"
[ -s "$lib/rvfit_library.fits" ] || "$rv" templates --grid "$grid" --instrument desi --out "$lib"
coadd="$d/coadd-desi-$n.fits"; truth="$d/truth-desi-$n.fits"
[ -s "$coadd" ] || "$rv" mock spectra --instrument desi --preset "$preset" --nstar "$n" \
    --seed 2026 --vmax 400 --vsini-max 10 --snr-min 3 --snr-max 50 \
    --out "$coadd" --truth "$truth"
log="$d/out/fit-$backend-$n.log"
/usr/bin/time -v "$rv" fit --templates "$lib" --output-dir "$d/out" --overwrite \
    --backend "$backend" "$coadd" 2> "$log"
tab="$d/out/rvtab_coadd-desi-$n.fits"
echo "### desi-$n, backend $backend, grid-$preset"
echo
echo "- date $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)," \
     "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E "profile:|evaluated|peak RSS" "$log" | sed 's/^\[ *[0-9.]*\] info  rvfit: /- /'
grep -E "Maximum resident" "$log" | sed 's/^\s*/- /'
echo
echo '```'
bench/.venv/bin/python bench/evaluate.py "$tab" "$truth"
echo '```'
