/* emu/cuda_emu_kernels.cpp — TEST DOUBLE: the shared kernel source
 * (plugins/kernels/rvfit_kernels.c) compiled by the host C++ compiler
 * through its CUDA branch of rvfit_vendor.h, with the CUDA keywords and
 * built-in indices mapped onto the emulator (cuda_emu.h), and the launch
 * wrappers of cuda_launch.h queueing the kernels on emulated streams
 * (arguments and the pointers checked at launch generated from
 * rvfit_kargs.h).
 * Compiled twice like cuda_kernels.cu (CUDA_KSFX _d with RVK_FP64, _f). */
#include <math.h>
#include <stdlib.h>

#include "cuda_emu.h"
#include "cuda_launch.h"

#define __CUDACC__ 1
#define __global__
#define __device__
#define __shared__ static /* one block runs at a time */
#define __constant__
#define __launch_bounds__(...)
#define threadIdx (*emu_thread_idx())
#define blockIdx (*emu_block_idx())
#define blockDim (*emu_block_dim())
#define gridDim (*emu_grid_dim())
#define __syncthreads() emu_sync()

#include "rvfit_kernels.c"

/* The device pointers of an argument struct (IN and OUT arguments). */
#define EMU_PTR(kind, type, name) EMU_PTR_##kind(name)
#define EMU_PTR_VAL(name)
#define EMU_PTR_IN(name) a->name,
#define EMU_PTR_OUT(name) a->name,

/* Launch preconditions of the real runtime, made strict: the stream's
 * device is current and every device pointer is an allocation there. */
static int emu_launch_ok(void *stream, const void *const *ptrs, int n)
{
    int dev = emu_stream_device((cudaStream_t)stream);
    if (dev < 0 || dev != emu_current_device())
        return cudaErrorInvalidResourceHandle;
    for (int i = 0; i < n; i++)
        if (!emu_check_ptr(dev, ptrs[i]))
            return cudaErrorIllegalAddress;
    return cudaSuccess;
}

/* One queued launch: the arguments captured at launch, as <<<>>> does. */
template <class T> struct emu_job {
    T a;
    unsigned groups, wg;
    void (*kernel)(const T *a);
};

template <class T> static void emu_job_body(void *ctx)
{
    emu_job<T> *j = (emu_job<T> *)ctx;
    j->kernel(&j->a);
}

template <class T> static void emu_job_run(void *ctx)
{
    emu_job<T> *j = (emu_job<T> *)ctx;
    emu_run_blocks(j->groups, j->wg, emu_job_body<T>, ctx);
}

template <class T, size_t N>
static int emu_launch(const T *a, const void *const (&ptrs)[N],
                      void (*kernel)(const T *), unsigned groups,
                      unsigned wg, void *stream)
{
    int e = emu_launch_ok(stream, ptrs, (int)N);
    if (e != cudaSuccess)
        return e;
    emu_job<T> *j = (emu_job<T> *)malloc(sizeof *j);
    if (!j)
        return cudaErrorMemoryAllocation;
    j->a = *a;
    j->groups = groups;
    j->wg = wg;
    j->kernel = kernel;
    return emu_enqueue((cudaStream_t)stream, emu_job_run<T>, j);
}

static void emu_template(const cuda_tpl_args *a)
{
    rvk_template(CUDA_ARGS(RVK_TEMPLATE_ARGS));
}

static void emu_like(const cuda_like_args *a)
{
    rvk_like(CUDA_ARGS(RVK_LIKE_ARGS));
}

extern "C" int CUDA_SFX(cuda_launch_template)(const cuda_tpl_args *a,
                                               unsigned groups, unsigned wg,
                                               void *stream)
{
    const void *const p[] = {RVK_TEMPLATE_ARGS(EMU_PTR)};
    return emu_launch(a, p, emu_template, groups, wg, stream);
}

extern "C" int CUDA_SFX(cuda_launch_like)(const cuda_like_args *a,
                                           unsigned groups, unsigned wg,
                                           void *stream)
{
    const void *const p[] = {RVK_LIKE_ARGS(EMU_PTR)};
    return emu_launch(a, p, emu_like, groups, wg, stream);
}

extern "C" int CUDA_SFX(cuda_kernel_limit)(int *maxwg)
{
    *maxwg = RVK_WG_MAX;
    return cudaSuccess;
}
