/* rvfit/physics.h — the definitions every backend must reproduce exactly.
 *
 * These are the scalar double-precision reference formulas (architecture
 * §3).  The cpu backend calls them; GPU kernels re-implement them and are
 * tested against the cpu backend.  All functions are pure and thread-safe.
 *
 * Model of arm a, pixel i (observed vacuum wavelength lambda_i):
 *   T   = interpolated library template (rvfit/library.h), arm grid
 *   T_r = T convolved with the rotation kernel (rvfit_vsini_kernel)
 *   t_i = T_r evaluated at ln(lambda_i) + rvfit_dlnl_doppler(v) with Keys
 *         cubic convolution (a = -1/2) on the uniform ln-lambda grid
 *   m_i = sum_j R[i][j] t_j   (band matrix; identity when res_kind NONE)
 *   S_ik = B_k(x_i) m_i / sigma_i,  D_i = f_i / sigma_i, over ivar_i > 0
 *   a = (S^T S)^-1 S^T D (Cholesky)
 *   -2 ln L = |D - S a|^2 + ln det(S^T S) + penalty
 * summed over arms.  x_i maps [lambda_first, lambda_last] of the arm to
 * [-1, 1].  A continuum-only evaluation uses t_i = 1.
 */
#ifndef RVFIT_PHYSICS_H
#define RVFIT_PHYSICS_H

#include <stddef.h>

#include "rvfit/limits.h" /* RVFIT_C_KMS, RVFIT_MAX_POLY, RVFIT_VSINI_* */
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rvfit_basis_kind {
    RVFIT_BASIS_GAUSS = 0, /* 1, x, x^2, npoly-3 Gaussians (rvspecfit)   */
    RVFIT_BASIS_CHEB = 1,  /* Chebyshev T_0 .. T_{npoly-1}                */
    RVFIT_BASIS_BSPLINE = 2 /* clamped cubic B-splines, npoly >= 4        */
};

/* Shift in ln(lambda) to add to an observed ln(lambda) to get the
 * rest-frame (template) ln(lambda) for velocity v in km/s:
 * 0.5*ln((1-beta)/(1+beta)). */
RVFIT_EXPORT double rvfit_dlnl_doppler(double v_kms);

/* Gaussians of the GAUSS basis are exactly 0 at |x - c_k| >= CUT s: the
 * step there is exp(-18) = 1.5e-8 of the peak, far below any data's
 * noise, and the zeros let a backend skip the pixels where a basis
 * function, or the product of two, vanishes (plugins/cpu/cpu_normal.c)
 * without changing a single bit of its sums. */
#define RVFIT_GAUSS_CUT 6.0

/* Continuum basis at x in [-1,1]: writes npoly values into b.
 * GAUSS: b = {1, x, x^2, g_0..g_{n-4}} with g_k = exp(-0.5((x-c_k)/s)^2)
 * for |x - c_k| < RVFIT_GAUSS_CUT s and 0 beyond,
 * c_k = -1 + 2k/(npoly-4) (c_0 = -1 when npoly-3 == 1), s = 1/(npoly-3).
 * BSPLINE: the npoly clamped cubic B-splines on npoly - 3 equal intervals
 * of [-1, 1] (knots -1 four times, the interior ones, 1 four times); at
 * most four are non-zero at any x, the rest exactly 0, and all are 0
 * outside [-1, 1] (padding pixels), so a backend may sum each product
 * over the intervals where both factors live.  Needs npoly >= 4 (leaves
 * b untouched otherwise; rvfit_batch_opts_check refuses it).
 * npoly in 1..RVFIT_MAX_POLY. */
RVFIT_EXPORT void rvfit_basis(int kind, int npoly, double x, double *b);

/* Per-pixel tables of one row of n observed wavelengths (n >= 1) against a
 * library arm whose grid is ln lambda_j = lnl0 + j dlnl, as every backend
 * precomputes them (physics_tables.c):
 *   u[i] = (ln wave[i] - lnl0) / dlnl  (template pixel coordinate),
 *   B[k*ld + i] = B_k(x_i) for k < npoly (rvfit_basis, npoly in
 *   1..RVFIT_MAX_POLY), where x maps the spectrum's own extent
 *   [wave[0], wave[nown-1]] linearly to [-1, 1] (x = 0 when
 *   wave[nown-1] <= wave[0]); padded pixels nown..n-1 (rvfit_arm_batch
 *   npix_own) continue the map beyond 1.  1 <= nown <= n.
 * ld >= n is the row stride of B; B[k*ld + i] for i >= n is not written.
 * npoly = 0 writes u alone (B may be NULL; added after 3.0). */
RVFIT_EXPORT void rvfit_pixel_tables(int kind, int npoly, double lnl0,
                                     double dlnl, size_t n, size_t nown,
                                     const double *wave, size_t ld,
                                     double *u, double *B);

/* The B-spline interval of each pixel of such a row, with the pixel's
 * coordinate in it (added after 3.0): cell[i] = j in
 * 0..npoly-4, y[i] in [-1, 1] across the interval, for the same x as
 * rvfit_pixel_tables; cell[i] = -1 (y[i] = 0) where every B-spline is 0.
 * Within interval j the rows j..j+3 are the cubics of rvfit_bspline_cheb,
 * so a backend may form B-spline normal equations from the 7 weighted
 * moments of T_0..T_6(y) per interval.  npoly in 4..RVFIT_MAX_POLY. */
RVFIT_EXPORT void rvfit_pixel_cells(int npoly, size_t n, size_t nown,
                                    const double *wave, int *cell,
                                    double *y);

/* rvfit_pixel_cells for one x: the interval, or -1; *y as above (left
 * untouched for -1 or npoly outside 4..RVFIT_MAX_POLY). */
RVFIT_EXPORT int rvfit_bspline_cell(int npoly, double x, double *y);

/* The four B-splines j..j+3 that live on interval j, in Chebyshev
 * polynomials of its coordinate y: B_{j+r} = sum_p D[4r+p] T_p(y) for y
 * in [-1, 1] (exact to rounding: a cubic through 4 Chebyshev nodes). */
RVFIT_EXPORT void rvfit_bspline_cheb(int npoly, int j, double D[16]);

/* The pixels [*lo, *hi) of a table row of n values (a row of B above)
 * outside of which it is exactly 0, so that a backend may sum its
 * products there only; *lo == *hi when the row is 0 everywhere. */
RVFIT_EXPORT void rvfit_row_support(const double *row, size_t n,
                                    size_t *lo, size_t *hi);

/* Keys cubic-convolution weights (a = -1/2) for fractional offset
 * t in [0,1): value = w0 f[k-1] + w1 f[k] + w2 f[k+1] + w3 f[k+2]. */
RVFIT_EXPORT void rvfit_cubic_weights(double t, double w[4]);

/* Rotation kernel for half width `half` (template pixels, = vsini/c/dlnl):
 * weights w[0..2h] for offsets -h..h, h = ceil(half), normalised to sum 1,
 * each weight the exact integral of K(x/half) against the hat function of
 * a piecewise-linear signal (K from architecture §3, eps = 0.6).
 * Returns h (0 and w[0] = 1 when half < RVFIT_VSINI_MIN_HALF).  Requires
 * half <= RVFIT_MAX_VSINI_HALF; w has room for 2*RVFIT_MAX_VSINI_HALF+1. */
RVFIT_EXPORT int rvfit_vsini_kernel(double half, double *w);

/* Marginalised -2 ln L of one arm from the weighted data (reference, used by
 * the cpu backend and the known-answer tests).  For n pixels with model
 * m[i], data f[i], inverse variance w[i] (0 = skip) and basis values
 * basis[i*npoly + k], fills *chisq = |D - S a|^2, *logdet = ln det(S^T S)
 * and coef[0..npoly-1] = a (coef may be NULL).  Returns RVFIT_ERR_NUMERIC
 * when S^T S is not positive definite (too few usable pixels). */
RVFIT_EXPORT int rvfit_marg_chisq(int n, int npoly, const double *m,
                                  const float *f, const float *w,
                                  const double *basis, double *chisq,
                                  double *logdet, double *coef);

#ifdef __cplusplus
}
#endif
#endif
