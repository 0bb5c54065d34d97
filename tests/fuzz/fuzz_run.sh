#!/usr/bin/env bash
# One fuzz smoke run: TARGET over a fresh copy of the seed corpus for
# SECONDS with a fixed seed.  Fails on any crash, leak, timeout or
# sanitizer report (libFuzzer exits non-zero and saves the input under
# WORK/ as crash-*, leak-*, timeout-* or oom-*).
# Usage: fuzz_run.sh TARGET SEEDS WORK SECONDS [extra libFuzzer flags]
set -euo pipefail
target=$1 seeds=$2 work=$3 secs=$4
shift 4
if [ ! -x "$target" ]; then
    echo "fuzz_run.sh: $target: no such fuzz target (build it: cmake --build" \
         "BUILD --target $(basename "$target"); ctest -R fuzz runs them)" >&2
    exit 2
fi
rm -rf "$work"
mkdir -p "$work/corpus"
# each input goes to a per-process file here (fuzz_util.h)
export TMPDIR=$work
# CFITSIO 4.2 (ffgtbp) may calloc() from a garbage TFIELDS on a corrupt
# table header; outside ASan that returns NULL and CFITSIO reports a
# memory error (docs/robustness.md): let ASan return NULL too.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1
"$target" -seed=1 -max_total_time="$secs" -timeout=20 -rss_limit_mb=2560 \
    -print_final_stats=1 -artifact_prefix="$work/" "$@" \
    "$work/corpus" "$seeds"
