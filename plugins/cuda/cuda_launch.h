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

/* For the two files that compile the kernels (cuda_kernels.cu with nvcc,
 * emu/cuda_emu_kernels.cpp with the host C++ compiler), built with
 * CUDA_KSFX = _d or _f: the kernels are extern "C", so their names carry
 * the suffix to keep the two precisions apart; and the kernels' argument
 * lists unpacked from the structs above (expanded after rvfit_kernels.c,
 * which defines real, rvk_long, rvk_uint and rvk_uchar). */
#ifdef CUDA_KSFX
#define CUDA_CAT2(a, b) a##b
#define CUDA_CAT(a, b) CUDA_CAT2(a, b)
#define CUDA_SFX(name) CUDA_CAT(name, CUDA_KSFX)
#define rvk_template CUDA_SFX(rvk_template)
#define rvk_like CUDA_SFX(rvk_like)

#define CUDA_TPL_ARGS(a)                                                   \
    (a)->ntpl, (a)->nparam, (a)->narm, (a)->slot_len,                      \
        (const int *)(a)->ax_n, (const real *)(a)->ax_node,                \
        (const rvk_uchar *)(a)->exists, (const float *)(a)->lib_flux,      \
        (const rvk_long *)(a)->ai, (const real *)(a)->ad,                  \
        (const rvk_uint *)(a)->tflags, (const real *)(a)->tvsini,          \
        (const real *)(a)->ttheta, (real *)(a)->tr, (real *)(a)->tint,     \
        (a)->tint_len, (real *)(a)->tpen

#define CUDA_LIKE_ARGS(a)                                                  \
    (a)->np, (a)->nrep, (a)->narm, (a)->npoly, (a)->mode, (a)->slot_len,   \
        (const rvk_uint *)(a)->tspec, (const real *)(a)->tpen,             \
        (const real *)(a)->pv, (const real *)(a)->tr,                      \
        (const rvk_long *)(a)->ai, (const real *)(a)->ad,                  \
        (const real *)(a)->pos, (const float *)(a)->flux,                  \
        (const float *)(a)->ivar, (const float *)(a)->res,                 \
        (const real *)(a)->basis, (const int *)(a)->nuse,                  \
        (real *)(a)->scratch, (a)->scr_len, (real *)(a)->m2lnl,            \
        (real *)(a)->achi, (float *)(a)->mout, (float *)(a)->cout
#endif

#ifdef __cplusplus
}
#endif
#endif
