/* cuda_kernels.cu — the shared device code (plugins/kernels/rvfit_kernels.c)
 * compiled by nvcc, plus its C launch wrappers (cuda_launch.h).  CMake
 * compiles this file twice: with RVK_FP64 and CUDA_KSFX=_d, and without
 * RVK_FP64 and CUDA_KSFX=_f.  The kernels are extern "C", so they are
 * renamed with the suffix (cuda_launch.h) to keep the two objects' host
 * stubs apart. */
#include <cuda_runtime.h>

#include "cuda_launch.h"

#include "rvfit_kernels.c"

extern "C" int CUDA_SFX(cuda_launch_template)(const cuda_tpl_args *a,
                                               unsigned groups, unsigned wg,
                                               void *stream)
{
    rvk_template<<<groups, wg, 0, (cudaStream_t)stream>>>(
        CUDA_ARGS(RVK_TEMPLATE_ARGS));
    return (int)cudaGetLastError();
}

extern "C" int CUDA_SFX(cuda_launch_like)(const cuda_like_args *a,
                                           unsigned groups, unsigned wg,
                                           void *stream)
{
    rvk_like<<<groups, wg, 0, (cudaStream_t)stream>>>(
        CUDA_ARGS(RVK_LIKE_ARGS));
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
