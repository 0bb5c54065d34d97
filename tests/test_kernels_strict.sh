#!/bin/bash
# test_kernels_strict.sh — the shared kernel source (plugins/kernels) as
# strict OpenCL C 1.2, in double and in float: clang -x cl -pedantic
# -Werror.  PoCL, the CI's OpenCL, accepts extensions that other vendors'
# compilers refuse: variadic macros passed here for months and broke the
# build on NVIDIA's OpenCL at its first run on a GPU.  Skips (77) without
# clang (scripts/setup-deps.sh --fuzz installs it, as .ci/run does).
set -u
src=${RVFIT_SOURCE_DIR:?}
if ! command -v clang >/dev/null; then
    echo "SKIPPED: clang not installed (it checks the kernels as OpenCL C)"
    exit 77
fi
fail=0
for prec in -DRVK_FP64 -URVK_FP64; do
    if ! clang -x cl -cl-std=CL1.2 -Xclang -finclude-default-header \
        -fsyntax-only -pedantic -Wall -Wextra -Werror "$prec" \
        -I"$src/plugins/kernels" -I"$src/core/sdk/include" \
        "$src/plugins/kernels/rvfit_kernels.c"; then
        echo "FAIL: the kernels are not strict OpenCL C 1.2 ($prec)"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "test_kernels_strict: passed (double and float)"
exit $fail
