#!/usr/bin/env bash
# Builds what bench/gpu/device_check.sh runs on a GPU machine that has the
# CUDA driver but none of rvfit's Debian libraries: a build tree without
# MPI and Cairo (their runtime parts are not plain libraries) in
# .devstage/build-gpu, stripped and without object files, and the shared
# libraries it needs beyond the C/C++ runtime and the driver in .devlibs/.
# Both paths are git-ignored (.git/info/exclude) and travel with the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup-deps.sh
b=build-gpu
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRVFIT_WERROR=ON \
    -DRVFIT_MPI=OFF -DRVFIT_CAIRO=OFF -DRVFIT_FUZZ=OFF >/dev/null
cmake --build "$b" -j"$(nproc)" >/dev/null
rm -rf .devstage .devlibs
mkdir -p .devstage .devlibs
cp -a "$b" .devstage/
find .devstage -depth -type d -name CMakeFiles -exec rm -rf {} +
rm -rf .devstage/"$b"/testdata .devstage/"$b"/testtmp
find .devstage -type f \( -name '*.so*' -o -perm -u+x \) -exec sh -c \
    'file -b "$1" | grep -q ELF && strip --strip-debug "$1"' _ {} \;
ldd "$b"/rvfit "$b"/plugins/*.so "$b"/tests/test_* 2>/dev/null | awk '$2 == "=>" {print $3}' |
    sort -u | grep -v -E "/$b/|/(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+)\.so" |
    xargs -r cp -L -t .devlibs/
# Variants of the cuda plugin for device_check.sh's variants phase:
# RVFIT_GPU_VARIANTS="NAME=-DOPTION=VALUE[,-DOPTION=VALUE] ..." builds
# each in build-gpu-NAME and stages its rvfit_backend_cuda.so alone.
for v in ${RVFIT_GPU_VARIANTS:-}; do
    name=${v%%=*}
    opts=${v#*=}
    cmake -S . -B "$b-$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRVFIT_WERROR=ON \
        -DRVFIT_MPI=OFF -DRVFIT_CAIRO=OFF -DRVFIT_FUZZ=OFF ${opts//,/ } >/dev/null
    cmake --build "$b-$name" -j"$(nproc)" --target rvfit_backend_cuda >/dev/null
    mkdir -p .devstage/variants/"$name"
    cp "$b-$name"/plugins/rvfit_backend_cuda.so .devstage/variants/"$name"/
    strip --strip-debug .devstage/variants/"$name"/rvfit_backend_cuda.so
done
du -sh .devstage .devlibs
