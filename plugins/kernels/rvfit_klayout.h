/* rvfit_klayout.h — limits and metadata layouts shared by the host code of
 * the GPU backends and rvfit_kernels.c.  Only macros, so that the same
 * text is valid host C, OpenCL C and CUDA.
 *
 * The model's sizes and constants are the core's own (rvfit/limits.h,
 * included here and inlined into the OpenCL source by rvfit_embed.cmake);
 * only what the kernels add is defined below.  The few values the kernels
 * take from core enums or headers that are not pure macros are restated
 * here and checked against the originals by _Static_asserts in rvk_host.c.
 *
 * Per-arm metadata travels as one rvk_long array (RVK_AI_N entries per
 * batch arm) and one real array (RVK_AD_N per batch arm) instead of
 * structs, so that host and device never disagree on struct layout.
 */
#ifndef RVFIT_KLAYOUT_H
#define RVFIT_KLAYOUT_H

#include "rvfit/limits.h"

/* Normal-equation sums: pairs k >= l of npoly terms, then the right-hand
 * side (rvk_like's local sums; term indices in the plans, below). */
#define RVK_MAX_SUMS                                                     \
    (RVFIT_MAX_POLY * (RVFIT_MAX_POLY + 1) / 2 + RVFIT_MAX_POLY)
#define RVK_WG_MAX 256            /* largest work-group the kernels accept */
#define RVK_PC 8                  /* normal-equation sums per pixel pass */

/* Checked against the core in rvk_host.c. */
#define RVK_PT_CONTINUUM 0x1u     /* RVFIT_PT_CONTINUUM (rvfit/backend.h) */
#define RVK_INTERP_CUBIC 1        /* RVFIT_INTERP_CUBIC (rvfit/library.h) */

/* Axis table (int ax_n[RVK_NN_N(nparam)]) of a library with nparam axes
 * (at least one entry per part, even for nparam == 0). */
#define RVK_NN_NNODE(np, p) (p)          /* nodes on axis p             */
#define RVK_NN_INTERP(np, p) ((np) + (p)) /* axis p's enum rvfit_interp */
#define RVK_NN_LOGFLUX(np) (2 * (np))    /* 1: library holds ln flux   */
#define RVK_NN_N(np) (2 * (np) + 1)

/* Integer metadata of batch arm a: ai[a * RVK_AI_N + field]. */
#define RVK_AI_NPIX 0      /* observed pixels per spectrum              */
#define RVK_AI_PERSPEC 1   /* 1: pos and basis are per spectrum         */
#define RVK_AI_NDIAG 2     /* band diagonals, 0 = no resolution matrix  */
#define RVK_AI_DOFF 3      /* offset of spectrum 0 in flux/ivar          */
#define RVK_AI_ROFF 4      /* offset of spectrum 0 in res                */
#define RVK_AI_BOFF 5      /* offset in basis ([nbrow][npix] per table) */
#define RVK_AI_POFF 6      /* offset in pos ((ln lambda - lnl0) / dlnl)  */
#define RVK_AI_LNPIX 7     /* template pixels of the matching lib arm   */
#define RVK_AI_LFOFF 8     /* offset of model 0 of that arm in lib flux */
#define RVK_AI_TROFF 9     /* offset of this arm in a template slot     */
/* Rows of each basis table: npoly, or for the Chebyshev basis 2 npoly - 1
 * (T_0 .. T_{2 npoly - 2}), whose weighted moments give the normal
 * matrix: T_k T_l = (T_{k+l} + T_{|k-l|}) / 2. */
#define RVK_AI_NBROW 10
/* Offset in bplan of the arm's normal-sum plans, RVK_PLAN_N ints per
 * basis table (below). */
#define RVK_AI_PLOFF 11
#define RVK_AI_N 12

/* Plan of the normal sums of one basis table (rvk_host.c builds it,
 * rvk_normal_sums follows it).  Rows of the basis are exactly 0 outside
 * a pixel range (B-splines live on 4 of npoly - 3 intervals, Gaussians
 * end at RVFIT_GAUSS_CUT widths), so a sum is taken only where both its
 * rows live: the sums that live anywhere, sorted by where they live, in
 * passes of RVK_PC, each pass over the pixels where any of its sums
 * lives.  Ints: [0] live sums, [1] passes, then per live sum j
 * RVK_PLAN_SUM(j) + 0..2 = its index in sums[] (pair k >= l at k(k+1)/2
 * + l, right-hand side k at npair + k), k, l (-1: right-hand side), then
 * per pass p RVK_PLAN_PASS(p) + 0..1 = its pixels [lo, hi). */
#define RVK_MAX_PASS ((RVK_MAX_SUMS + RVK_PC - 1) / RVK_PC)
#define RVK_PLAN_SUM(j) (2 + 3 * (j))
#define RVK_PLAN_PASS(p) (2 + 3 * RVK_MAX_SUMS + 2 * (p))
#define RVK_PLAN_N (2 + 3 * RVK_MAX_SUMS + 2 * RVK_MAX_PASS)

/* Real metadata of batch arm a: ad[a * RVK_AD_N + field]. */
#define RVK_AD_INVDLNL 0   /* 1 / template step in ln lambda             */
#define RVK_AD_N 2

#endif
