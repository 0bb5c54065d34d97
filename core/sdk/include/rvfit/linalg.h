/* rvfit/linalg.h — the one CPU Cholesky of the project: factorisation,
 * triangular solves, the equilibrated solve with ln det of the continuum
 * normal equations (rvfit_marg_chisq and the cpu backend use it, so they
 * agree to the bit), and the SPD inverse of the fit's Hessian.  Device
 * code cannot call it: plugins/kernels keeps its own copy of the
 * equilibrated solve, with the same steps and threshold.
 *
 * Matrices are n x n, row-major, doubles; only the lower triangle is read
 * and the factor L is written over it (the strict upper triangle is left
 * alone).  n <= RVFIT_LINALG_MAX.  Sums run in increasing index order, so
 * results are reproducible to the bit.  Thread-safety: reentrant.
 */
#ifndef RVFIT_LINALG_H
#define RVFIT_LINALG_H

#include "rvfit/limits.h"
#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_LINALG_MAX 32
/* The equilibrated solve's pivot threshold is RVFIT_CHOL_MIN_PIVOT
 * (rvfit/limits.h): the equilibrated matrix has a unit diagonal, so a
 * smaller pivot means rank deficient to double precision. */

/* In-place Cholesky A = L L^T.  Fails (RVFIT_ERR_NUMERIC, a partly
 * overwritten) when a pivot before its square root is not > tiny or not
 * finite; RVFIT_ERR_INVALID for n outside 1..RVFIT_LINALG_MAX. */
RVFIT_EXPORT int rvfit_chol(int n, double *a, double tiny);

/* Solve L y = b (forward) and L^T x = y (backward) with the factor of
 * rvfit_chol; y may alias b, x may alias y. */
RVFIT_EXPORT void rvfit_chol_forward(int n, const double *l, const double *b,
                                     double *y);
RVFIT_EXPORT void rvfit_chol_backward(int n, const double *l,
                                      const double *y, double *x);

/* Equilibrated solve of the SPD system A x = b: with D = diag(A)^-1/2,
 * factor D A D (pivot threshold RVFIT_CHOL_MIN_PIVOT), solve, x = D y;
 * *logdet = ln det A.  a is overwritten; x may alias b; x and *logdet are
 * written only on success.  A row that is exactly 0 with its b (an
 * unknown no datum constrains: a continuum basis function without a
 * usable pixel, as B-splines beyond an instrument's wavelength cut) is
 * left out: x = 0 there, and ln det is that of the other rows (all rows
 * 0 is a failure: nothing to solve).
 * RVFIT_ERR_NUMERIC when another diagonal element is not > 0 or finite,
 * or the factorisation fails. */
RVFIT_EXPORT int rvfit_chol_eq_solve(int n, double *a, const double *b,
                                     double *x, double *logdet);

/* The same returning also q = b^T A^-1 b = |L^-1 D b|^2 (a sum of
 * squares, from the forward solve alone): the marginalised continuum's
 * chi^2 is f^T W f - q, without forming the continuum.  x may be NULL
 * (no backward solve); otherwise as rvfit_chol_eq_solve. */
RVFIT_EXPORT int rvfit_chol_eq_quad(int n, double *a, const double *b,
                                    double *x, double *logdet, double *q);

/* In-place inverse of the SPD matrix a (full n x n written; only the lower
 * triangle read), through its Cholesky factor with threshold 0.  On
 * failure (RVFIT_ERR_NUMERIC) a is left unchanged. */
RVFIT_EXPORT int rvfit_spd_inverse(int n, double *a);

#ifdef __cplusplus
}
#endif
#endif
