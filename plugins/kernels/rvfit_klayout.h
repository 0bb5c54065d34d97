/* rvfit_klayout.h — limits and metadata layouts shared by the host code of
 * the GPU backends and rvfit_kernels.c.  Only macros, so that the same
 * text is valid host C, OpenCL C and CUDA.
 *
 * Per-arm metadata travels as one rvk_long array (RVK_AI_N entries per
 * batch arm) and one real array (RVK_AD_N per batch arm) instead of
 * structs, so that host and device never disagree on struct layout.
 */
#ifndef RVFIT_KLAYOUT_H
#define RVFIT_KLAYOUT_H

#define RVK_MAX_PARAMS 8          /* == RVFIT_MAX_PARAMS */
#define RVK_MAX_NODES 256         /* == RVFIT_MAX_NODES */
#define RVK_MAX_CORNERS 256       /* == 1 << RVK_MAX_PARAMS */
#define RVK_MAX_POLY 32           /* == RVFIT_MAX_POLY */
#define RVK_MAX_HALF 512          /* == RVFIT_MAX_VSINI_HALF */
#define RVK_MAX_SUMS (RVK_MAX_POLY * (RVK_MAX_POLY + 1) / 2 + RVK_MAX_POLY)
#define RVK_WG_MAX 256            /* largest work-group the kernels accept */
#define RVK_PC 8                  /* normal-equation sums per pixel pass */

#define RVK_C_KMS 299792.458      /* == RVFIT_C_KMS */
#define RVK_EPS 0.6               /* == RVFIT_VSINI_EPS */
#define RVK_PENALTY_SCALE 1.0e4   /* == RVFIT_PENALTY_SCALE */
#define RVK_PENALTY_HOLE 1.0e6    /* == RVFIT_PENALTY_HOLE */
#define RVK_FAIL 1.0e30           /* -2 ln L when a Cholesky fails */

#define RVK_PT_CONTINUUM 0x1u     /* == RVFIT_PT_CONTINUUM */

/* Integer metadata of batch arm a: ai[a * RVK_AI_N + field]. */
#define RVK_AI_NPIX 0      /* observed pixels per spectrum              */
#define RVK_AI_PERSPEC 1   /* 1: pos and basis are per spectrum         */
#define RVK_AI_NDIAG 2     /* band diagonals, 0 = no resolution matrix  */
#define RVK_AI_DOFF 3      /* offset of spectrum 0 in flux/ivar          */
#define RVK_AI_ROFF 4      /* offset of spectrum 0 in res                */
#define RVK_AI_BOFF 5      /* offset in basis ([npoly][npix] per table) */
#define RVK_AI_POFF 6      /* offset in pos ((ln lambda - lnl0) / dlnl)  */
#define RVK_AI_LNPIX 7     /* template pixels of the matching lib arm   */
#define RVK_AI_LFOFF 8     /* offset of model 0 of that arm in lib flux */
#define RVK_AI_TROFF 9     /* offset of this arm in a template slot     */
#define RVK_AI_N 10

/* Real metadata of batch arm a: ad[a * RVK_AD_N + field]. */
#define RVK_AD_INVDLNL 0   /* 1 / template step in ln lambda             */
#define RVK_AD_N 2

#endif
