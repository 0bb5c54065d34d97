#!/usr/bin/env bash
# The demo: build rvfit, make a small synthetic grid in PHOENIX layout and
# a synthetic DESI coadd, prepare templates, fit (drawing the figure of
# docs/img/plot-example.png and the file's summary), and print recovered vs
# true radial velocities.  Everything lands in ./demo (or $RVFIT_DEMO_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
build=${RVFIT_BUILD_DIR:-build}
echo "== build -> $build (a few minutes the first time; log in $build/demo-build.log)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# the build in the background, its progress (cmake's [ NN%]) on one line
cmake --build "$build" -j"$(nproc)" > "$build/demo-build.log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
    pct=$(grep -o '^\[ *[0-9]*%\]' "$build/demo-build.log" | tail -1 || true)
    printf '\r   building %s ' "${pct:-[   0%]}"
    sleep 2
done
if wait "$pid"; then
    printf '\r   built: %s\n' "$build/rvfit"
else
    printf '\n'; tail -40 "$build/demo-build.log"
    echo "demo: the build failed (whole log: $build/demo-build.log)" >&2
    exit 1
fi
rv="$build/rvfit"
export RVFIT_PLUGIN_PATH="$PWD/$build/plugins"
d=${RVFIT_DEMO_DIR:-demo}
mkdir -p "$d/out"
echo "== synthetic grid (PHOENIX layout) -> $d/grid"
[ -d "$d/grid/PHOENIX-ACES-AGSS-COND-2011" ] ||
    "$rv" mock grid --preset small --out "$d/grid"
echo "== template library for DESI -> $d/lib"
[ -s "$d/lib/rvfit_library.fits" ] ||
    "$rv" templates --grid "$d/grid" --instrument desi --out "$d/lib"
echo "== synthetic DESI coadd, 100 stars -> $d/coadd-demo.fits"
"$rv" mock spectra --instrument desi --nstar 100 --seed 1 \
    --out "$d/coadd-demo.fits" --truth "$d/truth-demo.fits"
echo "== fit (figures of one star and of the file -> $d/plots)"
"$rv" fit --templates "$d/lib" --output-dir "$d/out" --overwrite \
    --plot-dir "$d/plots" --plot-targetid 1000005 "$d/coadd-demo.fits"
echo "== recovered vs true (first 12 stars)"
"$rv" mock compare "$d/out/rvtab_coadd-demo.fits" "$d/truth-demo.fits" 12
