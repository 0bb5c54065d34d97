#!/usr/bin/env bash
# Back-to-back timing of two rvfit builds on the same DESI coadd, run
# alternately (A B A B ...) so that both see the same load on a shared
# machine.  Prints one Markdown row per run: build, wall s, spectra/s,
# points, load average before and after; the rvtabs stay in OUT/A, OUT/B.
#   bash bench/ab_desi.sh BUILD_A BUILD_B [PAIRS=2] [COADD] [LIB] [OUT]
# BUILD_* are CMake build directories holding rvfit and plugins/.
set -euo pipefail
cd "$(dirname "$0")/.."
a=$1 b=$2 pairs=${3:-2}
coadd=${4:-bench/data/coadd-desi-1000.fits}
lib=${5:-bench/data/lib-desi-std}
out=${6:-bench/data/ab}
threads=${RVFIT_THREADS:-2}
mkdir -p "$out/A" "$out/B"
echo "| run | build | wall s | spectra/s | points | load before | load after |"
echo "|---|---|---|---|---|---|---|"
for i in $(seq 1 "$pairs"); do
    for side in A B; do
        dir=$a
        [ "$side" = B ] && dir=$b
        l0=$(cut -d' ' -f1-3 /proc/loadavg)
        t0=$(date +%s.%N)
        RVFIT_PLUGIN_PATH="$dir/plugins" "$dir/rvfit" fit --templates "$lib" \
            --output-dir "$out/$side" --overwrite --threads "$threads" \
            "$coadd" 2> "$out/$side/log"
        t1=$(date +%s.%N)
        l1=$(cut -d' ' -f1-3 /proc/loadavg)
        n=$(sed -n 's/.*profile: \([0-9]*\) spectra in.*/\1/p' "$out/$side/log")
        pts=$(sed -n 's/.*evaluated \([0-9]*\) points.*/\1/p' "$out/$side/log" | tail -1)
        awk -v i="$i" -v s="$side" -v d="$dir" -v t0="$t0" -v t1="$t1" -v n="$n" \
            -v p="$pts" -v l0="$l0" -v l1="$l1" 'BEGIN {
            w = t1 - t0
            printf "| %d | %s (%s) | %.1f | %.2f | %s | %s | %s |\n", i, s, d, w, n / w, p, l0, l1 }'
    done
done
