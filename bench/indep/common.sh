# Sourced by the bench/indep scripts (not run): rvfit and rvfit-indep
# built in BUILD, and the generator's grid with rvfit's library of it.
# Needs ROOT, BUILD, WORK, NTHREADS and FORCE set.
log() { printf '== %s\n' "$*" >&2; }
TIMEFORMAT='%R s wall, %U s user'

# indep_build: configures BUILD if needed, builds; sets RV, IND and the
# plugin path; enters WORK.
indep_build() {
    if [ ! -f "$BUILD/CMakeCache.txt" ]; then
        log "configuring rvfit in $BUILD"
        cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            >/dev/null
    fi
    log "building rvfit and rvfit-indep"
    cmake --build "$BUILD" -j "$NTHREADS" >/dev/null
    RV=$BUILD/rvfit IND=$BUILD/rvfit-indep
    export RVFIT_PLUGIN_PATH=$BUILD/plugins
    mkdir -p "$WORK"
    cd "$WORK"
}

# indep_library GRID LIB PRESET MODEL_SEED: the grid (rvfit-indep grid)
# and rvfit's library of it, each made unless present (FORCE=1: remade).
indep_library() {
    local grid=$1 lib=$2 preset=$3 mseed=$4
    if [ "$FORCE" = 1 ] ||
       [ ! -f "$grid/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits" ]; then
        rm -rf "$grid" "$lib"
        log "grid: rvfit-indep grid --preset $preset --seed $mseed"
        time "$IND" grid --out "$grid" --preset "$preset" --seed "$mseed" \
            --threads "$NTHREADS"
    fi
    if [ "$FORCE" = 1 ] || [ ! -f "$lib/rvfit_library.fits" ]; then
        log "rvfit templates"
        time "$RV" templates --grid "$grid" --out "$lib" -j "$NTHREADS" \
            2>templates.log
    fi
}
