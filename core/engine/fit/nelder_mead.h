/* nelder_mead.h — batched Nelder-Mead (core-internal).
 *
 * n independent problems of dimension D advance in lockstep: each step asks
 * the caller to evaluate a set of (problem, x) pairs in ONE call, so a
 * backend sees all spectra's trial points together.  Converged problems
 * drop out.  Adaptive coefficients of Gao & Han (2012) for dimension D.
 */
#ifndef RVFIT_OPTIM_H
#define RVFIT_OPTIM_H

#include <stddef.h>

#define NM_MAX_DIM 12

/* Evaluate f at m points: problem[k] and x[k*D ... k*D+D-1] -> f[k]. */
typedef int (*nm_eval_fn)(void *ctx, size_t m, const size_t *problem,
                          const double *x, double *f);

typedef struct nm_opts {
    int max_iter;   /* iterations per problem                         */
    double ftol;    /* stop when f_worst - f_best < ftol ...          */
    double xtol;    /* ... or the simplex is smaller than xtol         */
} nm_opts;

/* x0[n*D]: starting points; step[n*D]: initial simplex offsets.  On
 * return x0 holds the best points and fbest[n] their values; iters[n]
 * (may be NULL) the iterations used.  Returns the first non-zero status
 * of eval. */
int nm_minimize(size_t n, int D, double *x0, const double *step,
                const nm_opts *o, nm_eval_fn eval, void *ctx, double *fbest,
                int *iters);

#endif
