/* interp_lsq.h — the local weighted least-squares quadratic over a
 * library's free axes (core-internal), in the simplex's coordinates u
 * (node spacings): one implementation for the hole filling
 * (library_fill.c) and the simplex's quadratic correction
 * (interp_simplex_quad.c).
 *
 * With A the rows of basis values of n models at offsets du from a point
 * and W their weights, any linear functional r^T c of the fitted
 * coefficients c = (A^T W A)^-1 A^T W f is a weighted sum of the models,
 * sum_i g_i f_i with g = W A (A^T W A)^-1 r: one weight vector for every
 * pixel.  It reproduces the functional exactly for any f quadratic in u
 * (hence in theta), whatever W.  Reentrant. */
#ifndef RVFIT_INTERP_LSQ_H
#define RVFIT_INTERP_LSQ_H

#include <stddef.h>

#include "interp/interp_internal.h"
#include "rvfit/linalg.h"

typedef struct qls_basis {
    int d;                     /* free axes                               */
    int sq[RVFIT_MAX_PARAMS];  /* free axis k has a square term           */
    int nterm;                 /* 1 + d + d(d-1)/2 + squares              */
} qls_basis;

/* The basis over sd's free axes: 1, du_k, du_k du_l (k < l), and du_k^2
 * where the axis has at least 3 nodes (on two a square is a line).
 * Returns 0 when nterm exceeds RVFIT_LINALG_MAX. */
int qls_init(const rvfit_library *lib, const sx_data *sd, qls_basis *B);
/* Basis values at du into row[nterm]. */
void qls_terms(const qls_basis *B, const double *du, double *row);
/* g[i] = w[i] row_i^T (A^T W A)^-1 r for the n rows (row: [n][nterm]);
 * 0 when n < nterm or A^T W A is singular (equilibrated Cholesky), 1
 * otherwise. */
int qls_weights(const qls_basis *B, size_t n, const double *row,
                const double *w, const double *r, double *g);

#endif
