/* quad.h — dense helpers of the Newton optimiser (core-internal).
 * All functions are reentrant; n <= FQ_MAX, matrices row-major n x n. */
#ifndef RVFIT_FIT_QUAD_H
#define RVFIT_FIT_QUAD_H

#include "rvfit/limits.h"

#define FQ_MAX (1 + RVFIT_MAX_PARAMS) /* vsini and the library axes */

/* Slope g and curvature h at 0 of the parabola through (0, fc), (a, fa)
 * and (b, fb); a, b distinct and non-zero. */
void fq_axis(double a, double b, double fa, double fb, double fc, double *g,
             double *h);

/* BFGS update of the Hessian H with step s and gradient change y; skipped
 * when s.y is not positive. */
void fq_bfgs(int n, double *H, const double *s, const double *y);

/* Symmetrise H and raise its eigenvalues to at least 1e-3 of its largest
 * diagonal element (and of 1). */
void fq_make_pd(int n, double *H);

/* Replace symmetric H by its positive semi-definite part (negative
 * eigenvalues set to 0) plus diag(p). */
void fq_psd_plus(int n, double *H, const double *p);

/* Minimise g.d + d.H.d/2 over l <= d <= u (l <= 0 <= u, H positive
 * definite) by an active set; act[j] = -1 / +1 where d[j] ends on l[j] /
 * u[j], else 0.  Returns 0, or -1 if a factorisation failed. */
int fq_boxqp(int n, const double *H, const double *g, const double *l,
             const double *u, double *d, int *act);

/* Decrease -(g.d + d.H.d/2) that the model predicts for the step d. */
double fq_decrease(int n, const double *H, const double *g, const double *d);

/* Parabolic refinement of the minimum of y on a uniform grid x at index
 * k (0 < k < n-1); returns the abscissa. */
double fit_parabola_min(const double *x, const double *y, size_t n,
                        size_t k);

#endif
