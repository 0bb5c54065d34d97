/* cuda_launch.h — the C interface between the host code (cuda_*.c) and the
 * kernels compiled by nvcc (cuda_kernels.cu, built twice: suffix _d for
 * double device code, _f for float).  The argument structs are generated
 * from the kernels' argument lists (plugins/kernels/rvfit_kargs.h):
 * scalars in their device widths, pointers to device arrays as void *
 * (const for IN arrays) because the element type of `real` arrays depends
 * on the precision.  Every function returns a cudaError_t as int
 * (0 = cudaSuccess). */
#ifndef CUDA_LAUNCH_H
#define CUDA_LAUNCH_H

#include <stdint.h>

#include "rvfit_kargs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUDA_FIELD(kind, type, name) CUDA_FIELD_##kind(type, name);
#define CUDA_FIELD_VAL(type, name) RVK_H_##type name
#define CUDA_FIELD_IN(type, name) const void *name
#define CUDA_FIELD_OUT(type, name) void *name

/* Arguments of rvk_template (RVK_TEMPLATE_ARGS), filled by field name. */
typedef struct cuda_tpl_args {
    RVK_TEMPLATE_ARGS(CUDA_FIELD)
} cuda_tpl_args;

/* Arguments of rvk_like (RVK_LIKE_ARGS), filled by field name. */
typedef struct cuda_like_args {
    RVK_LIKE_ARGS(CUDA_FIELD)
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
 * the suffix to keep the two precisions apart; and CUDA_ARGS(LIST), the
 * kernel's argument list unpacked from the struct pointed to by `a`
 * (expanded after rvfit_kernels.c, which defines the device types). */
#ifdef CUDA_KSFX
#define CUDA_CAT2(a, b) a##b
#define CUDA_CAT(a, b) CUDA_CAT2(a, b)
#define CUDA_SFX(name) CUDA_CAT(name, CUDA_KSFX)
#define rvk_template CUDA_SFX(rvk_template)
#define rvk_like CUDA_SFX(rvk_like)

#define CUDA_ARGS(LIST) LIST##_FIRST(CUDA_ARG, CUDA_ARG1)
#define CUDA_ARG(kind, type, name) , CUDA_ARG1(kind, type, name)
#define CUDA_ARG1(kind, type, name) CUDA_ARG_##kind(RVK_T_##type, a->name)
#define CUDA_ARG_VAL(t, x) (t)(x)
#define CUDA_ARG_IN(t, x) (const t *)(x)
#define CUDA_ARG_OUT(t, x) (t *)(x)
#endif

#ifdef __cplusplus
}
#endif
#endif
