/* cuda_kernels.cu — the shared device code (plugins/kernels/rvfit_kernels.c)
 * compiled by nvcc, plus its C launch wrappers (cuda_launch.h).  CMake
 * compiles this file twice: with RVK_FP64 and CUDA_KSFX=_d, and without
 * RVK_FP64 and CUDA_KSFX=_f.  The kernels are extern "C", so they are
 * renamed with the suffix to keep the two objects' host stubs apart. */
#include <cuda_runtime.h>

#include "cuda_launch.h"

#define CUDA_CAT2(a, b) a##b
#define CUDA_CAT(a, b) CUDA_CAT2(a, b)
#define CUDA_SFX(name) CUDA_CAT(name, CUDA_KSFX)

#define rvk_template CUDA_SFX(rvk_template)
#define rvk_like CUDA_SFX(rvk_like)
#include "rvfit_kernels.c"

extern "C" int CUDA_SFX(cuda_launch_template)(const cuda_tpl_args *a,
                                               unsigned groups, unsigned wg,
                                               void *stream)
{
    rvk_template<<<groups, wg, 0, (cudaStream_t)stream>>>(
        a->ntpl, a->nparam, a->narm, a->slot_len, (const int *)a->ax_n,
        (const real *)a->ax_node, (const rvk_uchar *)a->exists,
        (const float *)a->lib_flux, (const rvk_long *)a->ai,
        (const real *)a->ad, (const rvk_uint *)a->tflags,
        (const real *)a->tvsini, (const real *)a->ttheta, (real *)a->tr,
        (real *)a->tint, a->tint_len, (real *)a->tpen);
    return (int)cudaGetLastError();
}

extern "C" int CUDA_SFX(cuda_launch_like)(const cuda_like_args *a,
                                           unsigned groups, unsigned wg,
                                           void *stream)
{
    rvk_like<<<groups, wg, 0, (cudaStream_t)stream>>>(
        a->np, a->nrep, a->narm, a->npoly, a->mode, a->slot_len,
        (const rvk_uint *)a->tspec, (const real *)a->tpen,
        (const real *)a->pv, (const real *)a->tr, (const rvk_long *)a->ai,
        (const real *)a->ad, (const real *)a->pos, (const float *)a->flux,
        (const float *)a->ivar, (const float *)a->res,
        (const real *)a->basis, (const int *)a->nuse, (real *)a->scratch,
        a->scr_len, (real *)a->m2lnl, (real *)a->achi, (float *)a->mout,
        (float *)a->cout);
    return (int)cudaGetLastError();
}

extern "C" int CUDA_SFX(cuda_kernel_limit)(int *maxwg)
{
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, rvk_template);
    int m = e == cudaSuccess ? fa.maxThreadsPerBlock : 0;
    if (e == cudaSuccess)
        e = cudaFuncGetAttributes(&fa, rvk_like);
    if (e == cudaSuccess && fa.maxThreadsPerBlock < m)
        m = fa.maxThreadsPerBlock;
    *maxwg = m;
    return (int)e;
}
