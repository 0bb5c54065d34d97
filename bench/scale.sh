#!/usr/bin/env bash
# Survey-scale benchmark (docs/benchmarks.md, "Survey scale"):
#  1. BOSS: N one-spectrum synthetic spec files in one command vs the same
#     N spectra as one list input: spectra/s, backend calls, points/call.
#  2. desi-1k split into 8 files of different sizes: 1 rank x 2 threads vs
#     2 ranks x 1 thread (mpirun), read-ahead on and off.
# Usage: bash bench/scale.sh [NBOSS=200]
# Environment: RVFIT_BENCH_DIR (bench/data) holds grid-std, lib-desi-std
# and coadd-desi-1000.fits from bench/run_desi.sh (made if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
nboss=${1:-200}
bash scripts/setup-deps.sh
build=${RVFIT_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
case $build in /*) ;; *) build="$PWD/$build" ;; esac
rv="$build/rvfit"
export RVFIT_PLUGIN_PATH="$build/plugins"
d=${RVFIT_BENCH_DIR:-bench/data}
s="$d/scale"
mkdir -p "$s"
if [ ! -x bench/.venv/bin/python ]; then
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q numpy astropy
fi
root=""; [ "$(id -u)" = 0 ] && root="--allow-run-as-root"
line() { grep -E "$2" "$1" | tail -1 | sed 's/^\[ *[0-9.]*\] info  \(rank [0-9]* \)\{0,1\}rvfit: //'; }
# "N spectra/s", calls and points of a fit log
summary() {
    local log=$1 what=$2
    local sps calls pts
    sps=$(grep -oE '[0-9.]+ spectra/s' "$log" | tail -1)
    pts=$(grep -oE 'evaluated [0-9]+ points in [0-9]+ calls' "$log" | tail -1)
    echo "| $what | $sps | $pts |"
}

echo "### Survey scale ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'))"
echo
# --- 1. BOSS files vs list ------------------------------------------------
printf '[instrument.sdss]\nlam_max = 9900\n' > "$s/sdss.ini"
[ -d "$d/grid-small/PHOENIX-ACES-AGSS-COND-2011" ] || "$rv" mock grid --preset small --out "$d/grid-small"
[ -s "$s/lib-sdss/rvfit_library.fits" ] || "$rv" templates --grid "$d/grid-small" -i sdss -c "$s/sdss.ini" --out "$s/lib-sdss"
[ -s "$s/boss.list" ] || "$rv" mock spectra -i sdss -n "$nboss" --seed 1 -c "$s/sdss.ini" --out "$s/boss.list" --truth "$s/boss-truth.fits"
rm -rf "$s/o-list" "$s/o-files"
"$rv" fit -t "$s/lib-sdss" -i sdss -c "$s/sdss.ini" -o "$s/o-list" "$s/boss.list" 2> "$s/list.log"
"$rv" fit -t "$s/lib-sdss" -i sdss -c "$s/sdss.ini" -o "$s/o-files" "$s"/boss/spec-*.fits 2> "$s/files.log"
echo "BOSS, $nboss synthetic spectra (grid-small, sdss library), cpu backend, $(nproc) threads:"
echo
echo "| input | speed | backend work |"
echo "|---|---|---|"
summary "$s/list.log" "one list of $nboss spectra"
summary "$s/files.log" "$nboss one-spectrum files in one command"
echo
# --- 2. desi-1k in 8 files ---------------------------------------------------
grid="$d/grid-std"; lib="$d/lib-desi-std"; coadd="$d/coadd-desi-1000.fits"
[ -d "$grid/PHOENIX-ACES-AGSS-COND-2011" ] || "$rv" mock grid --preset std --out "$grid"
[ -s "$lib/rvfit_library.fits" ] || "$rv" templates --grid "$grid" --instrument desi --out "$lib"
[ -s "$coadd" ] || "$rv" mock spectra --instrument desi --preset std --nstar 1000 \
    --seed 2026 --vmax 400 --vsini-max 10 --snr-min 3 --snr-max 50 \
    --out "$coadd" --truth "$d/truth-desi-1000.fits"
[ -s "$s/desi8-8.fits" ] || bench/.venv/bin/python bench/split_coadd.py "$coadd" 8 "$s/desi8" > "$s/split.log"
echo "desi-1k split into 8 files ($(grep -oE '\([0-9]+ spectra\)' "$s/split.log" | tr -d '()a-z ' | paste -sd, -) spectra), lib-desi-std, cpu backend:"
echo
echo "| processes | read-ahead | speed | backend work | notes |"
echo "|---|---|---|---|---|"
for ra in 1 0; do
    rm -rf "$s/o1"
    "$rv" fit -t "$lib" -o "$s/o1" -j 2 --set run.readahead=$ra "$s"/desi8-*.fits 2> "$s/r1-$ra.log"
    echo "$(summary "$s/r1-$ra.log" "1 rank x 2 threads" | sed "s/^| 1 rank x 2 threads |/| 1 rank x 2 threads | $ra |/") $(line "$s/r1-$ra.log" 'profile: wait' | sed 's/profile: //') |"
    rm -rf "$s/o2"
    mpirun $root --oversubscribe -n 2 "$rv" fit -t "$lib" -o "$s/o2" -j 1 --set run.readahead=$ra "$s"/desi8-*.fits 2> "$s/r2-$ra.log"
    echo "| 2 ranks x 1 thread | $ra | $(grep -oE 'job profile: .*' "$s/r2-$ra.log" | head -1 | grep -oE '[0-9.]+ spectra/s') | $(grep -oE '[0-9]+ backend points' "$s/r2-$ra.log" | head -1) | $(grep -oE 'rank [0-9]: [0-9]+ spectra, fitting [0-9.]+ s of [0-9.]+ \([0-9]+% busy\)' "$s/r2-$ra.log" | paste -sd';' -) |"
done
echo
echo "Template library load per rank: $(grep -oE '^\[ *[0-9.]+\] info  (rank 0 )?rvfit: backend .* on ' "$s/r1-1.log" | head -1 | grep -oE '[0-9.]+' | head -1) s from start to backend ready (1 rank)."
