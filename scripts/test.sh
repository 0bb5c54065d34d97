#!/usr/bin/env bash
# Build with warnings as errors and run the whole test suite.
# RVFIT_SANITIZE=1 builds and runs it under AddressSanitizer + UBSan.
# For the build matrix (.ci/run): RVFIT_BUILD_DIR names the build
# directory, RVFIT_CMAKE_ARGS adds configure options (e.g.
# -DRVFIT_CUDA=OFF) and RVFIT_TESTS limits ctest to a regex of test names.
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
cmake -S . -B "$build" "${flags[@]}" ${extra[@]+"${extra[@]}"}
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j2 --timeout 1500 ${select[@]+"${select[@]}"}
