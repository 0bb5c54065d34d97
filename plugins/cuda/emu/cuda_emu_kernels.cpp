/* emu/cuda_emu_kernels.cpp — TEST DOUBLE: the shared kernel source
 * (plugins/kernels/rvfit_kernels.c) compiled by the host C++ compiler
 * through its CUDA branch of rvfit_vendor.h, with the CUDA keywords and
 * built-in indices mapped onto the emulator (cuda_emu.h), and the launch
 * wrappers of cuda_launch.h queueing the kernels on emulated streams.
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
#define threadIdx (*emu_thread_idx())
#define blockIdx (*emu_block_idx())
#define blockDim (*emu_block_dim())
#define gridDim (*emu_grid_dim())
#define __syncthreads() emu_sync()

#include "rvfit_kernels.c"

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

typedef struct emu_tpl {
    cuda_tpl_args a;
    unsigned groups, wg;
} emu_tpl;

static void emu_tpl_body(void *ctx)
{
    const cuda_tpl_args *a = &((emu_tpl *)ctx)->a;
    rvk_template(CUDA_TPL_ARGS(a));
}

static void emu_tpl_run(void *ctx)
{
    emu_tpl *t = (emu_tpl *)ctx;
    emu_run_blocks(t->groups, t->wg, emu_tpl_body, ctx);
}

extern "C" int CUDA_SFX(cuda_launch_template)(const cuda_tpl_args *a,
                                               unsigned groups, unsigned wg,
                                               void *stream)
{
    const void *p[] = {a->ax_n, a->ax_node, a->exists, a->lib_flux, a->ai,
                       a->ad, a->tflags, a->tvsini, a->ttheta, a->tr,
                       a->tint, a->tpen};
    int e = emu_launch_ok(stream, p, (int)(sizeof p / sizeof p[0]));
    if (e != cudaSuccess)
        return e;
    emu_tpl *t = (emu_tpl *)malloc(sizeof *t);
    if (!t)
        return cudaErrorMemoryAllocation;
    t->a = *a; /* arguments are captured at launch, as <<<>>> does */
    t->groups = groups;
    t->wg = wg;
    return emu_enqueue((cudaStream_t)stream, emu_tpl_run, t);
}

typedef struct emu_like {
    cuda_like_args a;
    unsigned groups, wg;
} emu_like;

static void emu_like_body(void *ctx)
{
    const cuda_like_args *a = &((emu_like *)ctx)->a;
    rvk_like(CUDA_LIKE_ARGS(a));
}

static void emu_like_run(void *ctx)
{
    emu_like *t = (emu_like *)ctx;
    emu_run_blocks(t->groups, t->wg, emu_like_body, ctx);
}

extern "C" int CUDA_SFX(cuda_launch_like)(const cuda_like_args *a,
                                           unsigned groups, unsigned wg,
                                           void *stream)
{
    const void *p[] = {a->tspec, a->tpen, a->pv, a->tr, a->ai, a->ad,
                       a->pos, a->flux, a->ivar, a->res, a->basis, a->nuse,
                       a->scratch, a->m2lnl, a->achi, a->mout, a->cout};
    int e = emu_launch_ok(stream, p, (int)(sizeof p / sizeof p[0]));
    if (e != cudaSuccess)
        return e;
    emu_like *t = (emu_like *)malloc(sizeof *t);
    if (!t)
        return cudaErrorMemoryAllocation;
    t->a = *a;
    t->groups = groups;
    t->wg = wg;
    return emu_enqueue((cudaStream_t)stream, emu_like_run, t);
}

extern "C" int CUDA_SFX(cuda_kernel_limit)(int *maxwg)
{
    *maxwg = RVK_WG_MAX;
    return cudaSuccess;
}
