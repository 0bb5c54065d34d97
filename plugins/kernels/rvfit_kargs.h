/* rvfit_kargs.h — the argument lists of the two kernels, written once.
 *
 * Each list is an X-macro: RVK_TEMPLATE_ARGS(X) and RVK_LIKE_ARGS(X)
 * expand X(kind, type, name) once per argument, in kernel order.  Every
 * positional use is generated from them, so an argument cannot be
 * swapped, dropped or typed differently in one place only:
 *   - the kernels' parameter lists (RVK_PARAMS, rvfit_kernels.c);
 *   - the OpenCL argument structs and clSetKernelArg sequence
 *     (plugins/opencl/ocl_eval.c);
 *   - the CUDA argument structs and their unpacking at the launch
 *     (plugins/cuda/cuda_launch.h, cuda_kernels.cu);
 *   - the emulator's launch and pointer checks
 *     (plugins/cuda/emu/cuda_emu_kernels.cpp).
 * Host code fills the structs by field name.
 *
 * kind: VAL  a scalar passed by value;
 *       IN   a global array the kernel only reads;
 *       OUT  a global array the kernel writes (results and scratch).
 * type: int, long (64-bit), uint, uchar, float, or real (the device's
 *       floating type, double with RVK_FP64).  RVK_T_<type> is the device
 *       type, RVK_H_<type> the host type of a VAL (exact width; the host
 *       includes <stdint.h>).
 * Only macros, and no variadic ones (OpenCL C has none: NVIDIA's compiler
 * refuses them; PoCL let them pass): valid host C, OpenCL C and CUDA
 * (inlined into the OpenCL source by rvfit_embed.cmake).  Comma-separated
 * uses take LIST_FIRST(X, X1), the same list whose first argument goes
 * to X1, so that no generator has to drop a leading comma.
 */
#ifndef RVFIT_KARGS_H
#define RVFIT_KARGS_H

/* rvk_template: one work-group per template slot (see rvfit_kernels.c). */
#define RVK_TEMPLATE_ARGS(X) RVK_TEMPLATE_ARGS_FIRST(X, X)
#define RVK_TEMPLATE_ARGS_FIRST(X, X1)                                     \
    X1(VAL, int, ntpl)     /* template slots of the launch              */ \
    X(VAL, int, nparam)    /* library axes                              */ \
    X(VAL, int, narm)      /* batch arms                                */ \
    X(VAL, long, slot_len) /* reals per template slot (all arms)        */ \
    X(VAL, long, tint_len) /* reals of one group's share of tint        */ \
    X(IN, int, ax_n)       /* axis table, RVK_NN_*                      */ \
    X(IN, real, ax_node)   /* nodes, RVFIT_MAX_NODES per axis           */ \
    X(IN, uchar, exists)   /* [nmodel] 1: the model exists              */ \
    X(IN, float, lib_flux) /* library fluxes, arm blocks (RVK_AI_LFOFF) */ \
    X(IN, long, ai)        /* [narm][RVK_AI_N] arm metadata             */ \
    X(IN, real, ad)        /* [narm][RVK_AD_N] arm reals                */ \
    X(IN, uint, tflags)    /* [ntpl] RVFIT_PT_* of each slot            */ \
    X(IN, real, tvsini)    /* [ntpl] vsini, km/s                        */ \
    X(IN, real, ttheta)    /* [ntpl][max(nparam, 1)] scaled coordinates */ \
    X(VAL, int, use_st)    /* 1: stencils from the core (st_*), theta   */ \
                           /*    unused; 0: stencils from ttheta        */ \
    X(IN, uint, st_off)    /* [ntpl+1] slot t: entries st_off[t]..      */ \
    X(IN, uint, st_idx)    /* library vector of each entry              */ \
    X(IN, real, st_w)      /* weights of each entry: st_nw per entry    */ \
    X(VAL, int, st_nw)     /* 1: shared by the arms; narm: batch arm a  */ \
                           /*    weighs entry e by st_w[e*narm + a]     */ \
    X(IN, real, st_pen)    /* [ntpl] penalty of each slot               */ \
    X(OUT, real, tr)       /* [ntpl][slot_len] rotated templates        */ \
    X(OUT, real, tpen)     /* [ntpl] stencil penalty                    */ \
    X(OUT, real, tint)     /* [groups][tint_len] scratch                */

/* rvk_like: one work-group per point; point p uses slot p / nrep. */
#define RVK_LIKE_ARGS(X) RVK_LIKE_ARGS_FIRST(X, X)
#define RVK_LIKE_ARGS_FIRST(X, X1)                                         \
    X1(VAL, int, npt)      /* points of the launch                      */ \
    X(VAL, int, nrep)      /* points per template slot                  */ \
    X(VAL, int, narm)      /* batch arms                                */ \
    X(VAL, int, npoly)     /* continuum terms per arm                   */ \
    X(VAL, int, mode)      /* 0: likelihood; 1: also models             */ \
    X(VAL, long, slot_len) /* reals per template slot                   */ \
    X(VAL, long, scr_len)  /* reals of one scratch row (>= max npix)    */ \
    X(IN, uint, tspec)     /* [slots] spectrum of each slot             */ \
    X(IN, real, tpen)      /* [slots] stencil penalty (rvk_template)    */ \
    X(IN, real, pv)        /* [npt] radial velocity, km/s               */ \
    X(IN, real, tr)        /* [slots][slot_len] from rvk_template       */ \
    X(IN, long, ai)        /* [narm][RVK_AI_N] arm metadata             */ \
    X(IN, real, ad)        /* [narm][RVK_AD_N] arm reals                */ \
    X(IN, real, pos)       /* template pixel coordinate of data pixels  */ \
    X(IN, float, flux)     /* sanitised flux (RVK_AI_DOFF)              */ \
    X(IN, float, ivar)     /* sanitised ivar, 0 = unusable              */ \
    X(IN, float, res)      /* band matrices (RVK_AI_ROFF)               */ \
    X(IN, real, basis)     /* continuum basis [nbrow][npix] per table   */ \
    X(IN, int, bplan)      /* normal-sum plans, RVK_PLAN_N per table    */ \
    X(IN, int, nuse)       /* [nspec][narm] usable pixels               */ \
    X(IN, real, fwf)       /* [nspec][narm] sum w f^2, usable pixels    */ \
    X(OUT, real, m2lnl)    /* [npt] -2 ln L + penalty                   */ \
    X(OUT, real, achi)     /* [npt][narm] chisq per arm                 */ \
    X(OUT, float, mout)    /* mode 1: models, arm blocks [npt][npix]    */ \
    X(OUT, float, cout)    /* mode 1: continua, same layout             */ \
    X(OUT, real, scratch)  /* [groups][2][scr_len] shifted/model rows   */

/* Types of the lists' type names: device (RVK_T_) and host (RVK_H_,
 * scalars only). */
#define RVK_T_int int
#define RVK_T_long rvk_long
#define RVK_T_uint rvk_uint
#define RVK_T_uchar rvk_uchar
#define RVK_T_float float
#define RVK_T_real real
#define RVK_H_int int32_t
#define RVK_H_long int64_t

/* The kernel parameter list of LIST: KERNEL void k(RVK_PARAMS(LIST)). */
#define RVK_PARAMS(LIST) LIST##_FIRST(RVK_PARAM, RVK_PARAM1)
#define RVK_PARAM(kind, type, name) , RVK_PARAM1(kind, type, name)
#define RVK_PARAM1(kind, type, name) RVK_PARAM_##kind(RVK_T_##type, name)
#define RVK_PARAM_VAL(t, name) t name
#define RVK_PARAM_IN(t, name) GLOBAL const t *name
#define RVK_PARAM_OUT(t, name) GLOBAL t *name

/* Number of arguments of LIST (an integer constant expression). */
#define RVK_NARGS(LIST) (0 LIST(RVK_NARGS_ONE))
#define RVK_NARGS_ONE(kind, type, name) +1

#endif
