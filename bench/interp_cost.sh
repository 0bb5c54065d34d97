#!/usr/bin/env bash
# Cost per point of template interpolators as instruction counts, which a
# loaded machine does not disturb (docs/benchmarks.md, "Template
# interpolators").  For each library LIB, `rvfit fit` (cpu backend, one
# thread, no models) of the spectra IDS of COADD runs under callgrind,
# collecting only inside the backend's work items (cpu_*_task) and the
# core's stencil tables (rvfit_stencil_fill); prints one row per library:
# points evaluated, instructions per point, of which the interpolation of
# templates (cpu_interp) and the stencils from the core.
# Usage: interp_cost.sh RVFIT COADD IDS OUTDIR LIB...
set -euo pipefail
rvfit=$1 coadd=$2 ids=$3 out=$4
shift 4
mkdir -p "$out"
printf '| library | points | Minstr / point | interpolation | stencils (core) |\n'
printf '|---|---|---|---|---|\n'
for lib in "$@"; do
    tag=$(basename "$lib")
    cg=$out/cg_$tag.out
    valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect='cpu_*_task' --toggle-collect=rvfit_stencil_fill \
        --callgrind-out-file="$cg" \
        "$rvfit" fit -t "$lib" -o "$out/fit_$tag" --targetid "$ids" \
        --no-models -j 1 --overwrite "$coadd" > "$out/log_$tag" 2>&1
    pts=$(grep -o 'evaluated [0-9]* points in' "$out/log_$tag" | tail -1 |
          awk '{print $2}')
    tot=$(grep -o 'Collected : [0-9]*' "$out/log_$tag" | awk '{print $3}')
    ann=$(callgrind_annotate --inclusive=yes --threshold=100 "$cg" 2>/dev/null)
    # inclusive counts of a function: the first line naming it
    incl() {
        { printf '%s\n' "$ann" | grep -E "^ *[0-9,]+ .*:$1(\.arch[^ ]*)? \[" ||
              true; } |
            head -"${2:-1}" | awk '{gsub(",", "", $1); s += $1} END {print s + 0}'
    }
    itp=$(incl cpu_interp 2)
    stn=$(incl rvfit_stencil_fill)
    awk -v t="$tag" -v p="$pts" -v n="$tot" -v i="$itp" -v s="$stn" 'BEGIN {
        printf "| %s | %d | %.3f | %.3f | %.3f |\n", t, p, n / p / 1e6,
               i / p / 1e6, s / p / 1e6 }'
done
