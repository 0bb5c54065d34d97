#!/usr/bin/env bash
# GPU checks of issue 17, as one script for a short lease of a GPU machine:
# equivalence tests, device listing, cpu/cuda/opencl comparison, desi-1k
# and a desi-10k stream on cuda (precision, block size and batch sweeps,
# [run] streams and driver_threads),
# GPU utilisation sampled by nvidia-smi, and an Nsight Compute report.
#
#   bash bench/gpu/device_check.sh OUTDIR [PHASES]
#
# The build (RVFIT_BUILD_DIR, default build-gpu) is made beforehand, on a
# machine with the Debian packages, by bench/gpu/stage.sh; the shared
# libraries it needs beyond the C runtime travel in .devlibs/.  PHASES is a
# list of: env tests compare bench variants stream procs big ncu wg (default:
# all, in this order, which is also the order of importance).  variants
# A/B-tests builds of the cuda plugin alone: each .devstage/variants/NAME/
# holding a rvfit_backend_cuda.so (bench/gpu/stage.sh with
# RVFIT_GPU_VARIANTS) runs desi-1k in alternation with the main build, and
# once under Nsight Compute.  RVFIT_GPU_DEADLINE
# (seconds since the start, default 400) skips the fits that would begin
# after it; RVFIT_GPU_BIG_BATCH (default 8192) is the big phase's batch.
# Every step has its own time limit so that one hang cannot eat the lease.
set -uo pipefail
out=$(realpath -m "${1:?usage: device_check.sh OUTDIR [PHASES]}")
phases=${2:-env tests compare bench variants stream procs big ncu wg}
mkdir -p "$out/logs"
root=$PWD
b=$root/${RVFIT_BUILD_DIR:-build-gpu}
rv=$b/rvfit
export RVFIT_PLUGIN_PATH=$b/plugins
export LD_LIBRARY_PATH=$root/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
d=${RVFIT_GPU_DATA:-/tmp/rvb}
mkdir -p "$d"
t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
has() { case " $phases " in *" $1 "*) return 0 ;; esac; return 1; }
# RVFIT_GPU_EXPORT: a folder that gets a copy of the packed logs (and the
# Nsight reports) after each phase, for leases that return one folder.
pack() {
    tar -C "$out" -czf "$out/logs.tgz" logs 2>/dev/null
    [ -n "${RVFIT_GPU_EXPORT:-}" ] && cp "$out"/logs.tgz "$out"/*.ncu-rep "$RVFIT_GPU_EXPORT/" 2>/dev/null
    return 0
}

# nvidia-smi samples (100 ms) around one command: utilisation, memory, clock.
smi_run() {
    local tag=$1; shift
    nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used,clocks.sm,power.draw \
        --format=csv,noheader -lms 100 > "$out/logs/smi-$tag.csv" 2>/dev/null &
    local smi=$!
    local s=$(date +%s%N)
    "$@" > "$out/logs/$tag.log" 2>&1
    local rc=$?
    local ms=$(( ($(date +%s%N) - s) / 1000000 ))
    kill $smi 2>/dev/null; wait $smi 2>/dev/null
    printf '%s: rc %d, %d.%03d s wall\n' "$tag" $rc $((ms / 1000)) $((ms % 1000))
    grep -E "profile|evaluated|peak RSS|error|warn" "$out/logs/$tag.log" | head -20
    awk -F', ' '{u=$2+0; if (u>0) {n++; s+=u}; m=$4+0; if (m>mm) mm=m} END {
        if (n) printf "  GPU busy samples %d, mean utilisation %.0f %%, max memory %d MiB\n", n, s/n, mm}' \
        "$out/logs/smi-$tag.csv"
}

fit() { # fit TAG BACKEND OUTDIR [options...] FILES...
    local tag=$1 be=$2 od=$3; shift 3
    if [ $(( $(date +%s) - t0 )) -gt "${RVFIT_GPU_DEADLINE:-400}" ]; then
        echo "$tag: skipped (past the deadline)"; return 0
    fi
    mkdir -p "$od"
    smi_run "$tag" timeout "${FIT_TIMEOUT:-120}" "$rv" fit --templates "$d/lib" --output-dir "$od" \
        --overwrite --backend "$be" "$@"
}

if has env; then
    stamp env
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap --format=csv
    nvcc --version 2>/dev/null | tail -2
    uname -r; head -2 /etc/os-release; nproc
    # ctest's files hold the absolute paths of the machine that built them.
    src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$b/CMakeCache.txt")
    if [ "$src" != "$root" ] && [ ! -e "$src" ]; then
        mkdir -p "$(dirname "$src")" && ln -s "$root" "$src" && echo "linked $src -> $root"
    fi
    ldd "$rv" "$b"/plugins/*.so | grep "not found" && { echo "missing libraries"; exit 3; }
    # OpenCL: NVIDIA's ICD in a vendors folder of its own, when the driver
    # has one (an image may list only PoCL).
    lib=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu \
        -name 'libnvidia-opencl.so*' 2>/dev/null | head -1)
    ls /etc/OpenCL/vendors/ 2>/dev/null
    if [ -n "$lib" ]; then
        mkdir -p /tmp/icd && echo "$lib" > /tmp/icd/nvidia.icd
        echo "OpenCL ICD: $lib"
    fi
    command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null
fi
[ -s /tmp/icd/nvidia.icd ] && export OCL_ICD_VENDORS=/tmp/icd

if has tests; then
    stamp tests
    (cd "$b" && timeout 200 ctest -R 'cuda|opencl' -E emu --output-on-failure --timeout 150) \
        > "$out/logs/ctest.log" 2>&1
    tail -25 "$out/logs/ctest.log"
    # The image's own PoCL with the work-group method that avoids its
    # compiler's abort on our kernels (pocl issue 1435).
    if ls /etc/OpenCL/vendors/*pocl* >/dev/null 2>&1; then
        (cd "$b" && POCL_WORK_GROUP_METHOD=cbs OCL_ICD_VENDORS=/etc/OpenCL/vendors \
            timeout 200 ctest -R 'opencl_equiv' --output-on-failure --timeout 150) \
            > "$out/logs/ctest-pocl-cbs.log" 2>&1
        tail -8 "$out/logs/ctest-pocl-cbs.log"
    fi
    timeout 60 "$rv" plugins --devices 2>&1 | tee "$out/logs/plugins.log"
    pack
fi

if has compare || has bench || has variants || has stream || has procs || has big || has ncu || has wg; then
    stamp data
    [ -d "$d/grid" ] || timeout 200 "$rv" mock grid --preset std --out "$d/grid" 2>&1 | tail -1
    [ -s "$d/lib/rvfit_library.fits" ] || \
        timeout 200 "$rv" templates --grid "$d/grid" --instrument desi --out "$d/lib" 2>&1 | tail -1
    [ -s "$d/coadd-desi-1000.fits" ] || timeout 200 "$rv" mock spectra --instrument desi \
        --preset std --nstar 1000 --seed 2026 --vmax 400 --vsini-max 10 --snr-min 3 \
        --snr-max 50 --out "$d/coadd-desi-1000.fits" --truth "$d/truth-desi-1000.fits" 2>&1 | tail -1
    cp "$d/truth-desi-1000.fits" "$out/logs/" 2>/dev/null
    ls -la "$d"
fi

if has compare; then
    stamp compare
    # NVIDIA's OpenCL beside cuda when the driver has it (env phase).
    bes=cpu,cuda
    grep -q "platform.*NVIDIA" "$out/logs/plugins.log" 2>/dev/null && bes=cpu,cuda,opencl
    smi_run compare timeout 300 "$rv" compare --backends $bes \
        --templates "$d/lib" -o "$d/cmp" "$d/coadd-desi-1000.fits"
    grep -v -E "info|^\[" "$out/logs/compare.log" | tail -24
    for be in cpu cuda opencl; do
        cp "$d/cmp/compare-$be/rvtab_coadd-desi-1000.fits" "$out/logs/rvtab-cmp-$be.fits" 2>/dev/null
    done
    pack
fi

if has bench; then
    stamp bench
    fit cuda64 cuda "$d/o-cuda64" "$d/coadd-desi-1000.fits"
    cp "$d/o-cuda64/rvtab_coadd-desi-1000.fits" "$out/logs/rvtab-cuda64.fits"
    fit cuda32 cuda "$d/o-cuda32" --set backend.cuda.fp64=0 "$d/coadd-desi-1000.fits"
    cp "$d/o-cuda32/rvtab_coadd-desi-1000.fits" "$out/logs/rvtab-cuda32.fits"
    [ -n "${RVFIT_GPU_CPU_BENCH-1}" ] && fit cpu-all cpu "$d/o-cpu" "$d/coadd-desi-1000.fits"
    pack
fi

if has variants; then
    stamp variants
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    vs=$(ls -d "$root"/.devstage/variants/*/ 2>/dev/null)
    for v in $vs; do
        name=$(basename "$v")
        mkdir -p "/tmp/pv-$name"
        for f in "$b"/plugins/*.so; do ln -sf "$f" "/tmp/pv-$name/"; done
        ln -sf "$v/rvfit_backend_cuda.so" "/tmp/pv-$name/rvfit_backend_cuda.so"
    done
    for round in 1 2; do
        fit "main-r$round" cuda "$d/o-v" --no-models "$d/coadd-desi-1000.fits"
        for v in $vs; do
            name=$(basename "$v")
            RVFIT_PLUGIN_PATH=/tmp/pv-$name fit "$name-r$round" cuda "$d/o-v" --no-models \
                "$d/coadd-desi-1000.fits"
        done
    done
    for v in $vs; do
        name=$(basename "$v")
        [ -n "$ncu" ] || break
        RVFIT_PLUGIN_PATH=/tmp/pv-$name timeout 100 "$ncu" --clock-control none --set basic \
            --section Occupancy --section LaunchStats --section WarpStateStats -k regex:rvk_like \
            --launch-skip 10 --launch-count 2 -o "$out/logs/ncu-$name" -f \
            "$rv" fit --templates "$d/lib" --output-dir "$d/o-ncu" --overwrite --no-models \
            --backend cuda --batch-size 1000 "$d/coadd-desi-1000.fits" > /dev/null 2>&1
        "$ncu" -i "$out/logs/ncu-$name.ncu-rep" --page details 2>&1 |
            grep -E "rvk_|Duration|Registers Per|Achieved Occupancy|Compute \(SM\)|Warp Cycles Per Issued" | head -8
    done
    pack
fi

if has stream; then
    stamp stream
    # desi-10k as ten names of the desi-1k file: batches span files, so
    # the batch size, not the file, sets the call size.
    mkdir -p "$d/s10"
    for i in 0 1 2 3 4 5 6 7 8 9; do ln -sf "$d/coadd-desi-1000.fits" "$d/s10/coadd-$i.fits"; done
    for bs in 2048 8192; do
        fit "cuda64-10k-b$bs" cuda "$d/o-s10" --no-models --batch-size $bs "$d"/s10/coadd-*.fits
    done
    fit "cuda32-10k-b8192" cuda "$d/o-s10" --no-models --batch-size 8192 \
        --set backend.cuda.fp64=0 "$d"/s10/coadd-*.fits
    # one process, two and three fit streams (a backend instance each),
    # and the fit driver's work on the host's threads
    for ns in 2 3; do
        fit "cuda64-10k-b2048-streams$ns" cuda "$d/o-s10" --no-models --batch-size 2048 \
            --set run.streams=$ns "$d"/s10/coadd-*.fits
    done
    fit "cuda64-10k-b2048-dthreads" cuda "$d/o-s10" --no-models --batch-size 2048 \
        --set run.driver_threads=0 "$d"/s10/coadd-*.fits
    pack
fi

if has procs; then
    stamp procs
    # Several processes share the GPU, each with its own reader (what
    # `mpirun -n N rvfit fit` does, without MPI's coordination).
    for np in 2 4; do
        [ $(( $(date +%s) - t0 )) -gt "${RVFIT_GPU_DEADLINE:-400}" ] && break
        s0=$(date +%s%N)
        for r in $(seq 0 $((np - 1))); do
            files=$(ls "$d"/s10/coadd-*.fits | awk -v n=$np -v r=$r 'NR % n == r')
            timeout 120 "$rv" fit --templates "$d/lib" --output-dir "$d/o-p$np-$r" --overwrite \
                --no-models --backend cuda --threads $((16 / np)) --batch-size 2048 $files \
                > "$out/logs/procs$np-$r.log" 2>&1 &
        done
        wait
        ms=$(( ($(date +%s%N) - s0) / 1000000 ))
        echo "procs $np: 10000 spectra in $ms ms wall"
        grep -h "profile: [0-9]" "$out"/logs/procs$np-*.log
    done
    pack
fi

if has big; then
    stamp big
    # desi-50k: fifty names of the desi-1k file, one process, then two.
    mkdir -p "$d/s50"
    for i in $(seq -w 0 49); do ln -sf "$d/coadd-desi-1000.fits" "$d/s50/coadd-$i.fits"; done
    bb=${RVFIT_GPU_BIG_BATCH:-8192}
    FIT_TIMEOUT=170 fit cuda64-50k-b$bb cuda "$d/o-s50" --no-models --batch-size $bb "$d"/s50/coadd-*.fits
    # one process, two fit streams: what two processes gave, in one
    FIT_TIMEOUT=170 fit cuda64-50k-b$bb-streams2 cuda "$d/o-s50" --no-models --batch-size $bb \
        --set run.streams=2 "$d"/s50/coadd-*.fits
    # The same on NVIDIA's OpenCL (env phase) with RVFIT_GPU_BIG_OCL=1.
    if [ -n "${RVFIT_GPU_BIG_OCL:-}" ] && grep -q "platform.*NVIDIA" "$out/logs/plugins.log" 2>/dev/null; then
        FIT_TIMEOUT=170 fit opencl-50k-b$bb opencl "$d/o-s50o" --no-models --batch-size $bb "$d"/s50/coadd-*.fits
    fi
    if [ $(( $(date +%s) - t0 )) -le "${RVFIT_GPU_DEADLINE:-400}" ]; then
        s0=$(date +%s%N)
        for r in 0 1; do
            files=$(ls "$d"/s50/coadd-*.fits | awk -v r=$r 'NR % 2 == r')
            timeout 150 "$rv" fit --templates "$d/lib" --output-dir "$d/o-b$r" --overwrite \
                --no-models --backend cuda --threads 8 --batch-size $bb $files \
                > "$out/logs/big2-b$bb-$r.log" 2>&1 &
        done
        wait
        echo "big, 2 processes, batch $bb: 50000 spectra in $(( ($(date +%s%N) - s0) / 1000000 )) ms wall"
        grep -h "profile: [0-9]" "$out"/logs/big2-b$bb-*.log
    fi
    pack
fi

if has ncu; then
    stamp ncu
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    for p in ${RVFIT_GPU_NCU_PREC:-64 32}; do
        [ $(( $(date +%s) - t0 )) -gt "${RVFIT_GPU_DEADLINE:-400}" ] && { echo "ncu: past the deadline"; break; }
        fp=$([ $p = 64 ] && echo 1 || echo 0)
        timeout 150 "$ncu" --clock-control none --set basic --section MemoryWorkloadAnalysis \
            --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats \
            --section SchedulerStats --section WarpStateStats -k regex:rvk_ \
            --launch-skip 10 --launch-count 4 -o "$out/prof$p" -f \
            "$rv" fit --templates "$d/lib" --output-dir "$d/o-ncu" --overwrite --no-models \
            --backend cuda --set backend.cuda.fp64=$fp --batch-size 1000 \
            "$d/coadd-desi-1000.fits" > "$out/logs/ncu$p.log" 2>&1
        tail -5 "$out/logs/ncu$p.log"
        "$ncu" -i "$out/prof$p.ncu-rep" --page details > "$out/logs/ncu$p-details.txt" 2>&1
        grep -E "rvk_|Duration|Achieved Occupancy|Memory Throughput|Compute \(SM\)|Registers|Theoretical Occ|Block Size|Grid Size|DRAM Throughput|Shared Memory Config|Eligible Warps|No Eligible|Warp Cycles Per Issued|Block Limit" \
            "$out/logs/ncu$p-details.txt" | head -90
    done
    pack
fi
if has wg; then
    stamp wg
    for wg in ${RVFIT_GPU_WGS:-32 64 128 256}; do
        fit "cuda64-wg$wg" cuda "$d/o-wg" --no-models --set backend.cuda.wgsize=$wg \
            "$d/coadd-desi-1000.fits"
    done
    pack
fi
stamp done
pack
