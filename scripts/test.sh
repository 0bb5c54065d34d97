#!/usr/bin/env bash
# Build with warnings as errors and run the whole test suite.
# RVFIT_SANITIZE=1 builds and runs it under AddressSanitizer + UBSan.
# For the build matrix (.ci/run): RVFIT_BUILD_DIR names the build
# directory, RVFIT_CMAKE_ARGS adds configure options (e.g.
# -DRVFIT_CUDA=OFF) and RVFIT_TESTS limits ctest to a regex of test names.
# RVFIT_CLEAN_OUTPUTS=1 deletes the tests' data and outputs after a run
# that passed (CI runs four builds on one disk).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
flags=(-DRVFIT_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
build=${RVFIT_BUILD_DIR:-build-test}
if [ "${RVFIT_SANITIZE:-0}" = 1 ]; then
    build=${RVFIT_BUILD_DIR:-build-sanitize}
    flags+=(-DRVFIT_SANITIZE=ON)
    # CUDA's runtime needs the shadow gap unprotected; leaks inside the
    # OpenCL/CUDA runtimes are theirs, listed in tests/lsan.supp.
    # intercept_tls_get_addr=0: GCC 12's runtime mistakes a dynamic TLS
    # block that happens to sit at one page offset (PoCL's, by chance)
    # for a pre-2.25 glibc header and its leak tracer segfaults at exit.
    export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0
    export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
read -r -a extra <<< "${RVFIT_CMAKE_ARGS:-}"
select=()
[ -n "${RVFIT_TESTS:-}" ] && select=(-R "$RVFIT_TESTS")
# The suite writes about 1.8 GiB under the build directory (test data,
# libraries, coadds, a wheel and a virtual environment); a full disk shows
# up as dozens of unrelated failures, so say it once, up front.
need_mb=${RVFIT_MIN_FREE_MB:-2048}
have_mb=0
[ -d "$build" ] && have_mb=$(du -sm "$build" | cut -f1)
mkdir -p "$build"
free_mb=$(df -Pm "$build" | awk 'NR == 2 { print $4 }')
if [ $((free_mb + have_mb)) -lt "$need_mb" ]; then
    echo "scripts/test.sh: $build: only $free_mb MiB free (+$have_mb MiB" \
         "already there); the test suite needs about $need_mb MiB." \
         "Free space or point RVFIT_BUILD_DIR at another disk" \
         "(RVFIT_MIN_FREE_MB overrides the check)." >&2
    exit 1
fi
cmake -S . -B "$build" "${flags[@]}" ${extra[@]+"${extra[@]}"}
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j2 --timeout 1500 ${select[@]+"${select[@]}"}
# Only reached when every test passed (set -e): failed runs keep theirs.
[ "${RVFIT_CLEAN_OUTPUTS:-0}" = 1 ] && rm -rf testtmp testdata
exit 0
