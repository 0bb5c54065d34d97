/* cuda_launch.h — the C interface between the host code (cuda_*.c) and the
 * kernels compiled by nvcc (cuda_kernels.cu, built twice: suffix _d for
 * double device code, _f for float).  Pointers to device `real` arrays are
 * void * because their element type depends on the precision.  Every
 * function returns a cudaError_t as int (0 = cudaSuccess). */
#ifndef CUDA_LAUNCH_H
#define CUDA_LAUNCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* Arguments of rvk_template, in kernel order. */
typedef struct cuda_tpl_args {
    int ntpl, nparam, narm;
    long long slot_len;
    const void *ax_n, *ax_node, *exists, *lib_flux, *ai, *ad;
    const void *tflags, *tvsini, *ttheta;
    void *tr, *tint;
    long long tint_len;
    void *tpen;
} cuda_tpl_args;

/* Arguments of rvk_like, in kernel order. */
typedef struct cuda_like_args {
    int np, nrep, narm, npoly, mode;
    long long slot_len;
    const void *tspec, *tpen, *pv, *tr, *ai, *ad, *pos, *flux, *ivar, *res;
    const void *basis, *nuse;
    void *scratch;
    long long scr_len;
    void *m2lnl, *achi, *mout, *cout;
} cuda_like_args;

/* Launch on `stream` (a cudaStream_t) with `groups` blocks of `wg`
 * threads; returns the launch error (cudaGetLastError after <<<>>>). */
int cuda_launch_template_d(const cuda_tpl_args *a, unsigned groups,
                           unsigned wg, void *stream);
int cuda_launch_like_d(const cuda_like_args *a, unsigned groups, unsigned wg,
                       void *stream);
int cuda_launch_template_f(const cuda_tpl_args *a, unsigned groups,
                           unsigned wg, void *stream);
int cuda_launch_like_f(const cuda_like_args *a, unsigned groups, unsigned wg,
                       void *stream);

/* Largest block size both kernels of one precision accept on the current
 * device (cudaFuncGetAttributes), into *maxwg. */
int cuda_kernel_limit_d(int *maxwg);
int cuda_kernel_limit_f(int *maxwg);

#ifdef __cplusplus
}
#endif
#endif
