/* err_pin.c — the pinning part of the interpolation error: an optimum
 * held on a grid node by the kink of the multilinear interpolant
 * (docs/output-format.md, "Interpolation error").
 *
 * Along an axis a, -ln L of a piecewise-linear interpolant has a slope
 * jump s at every node (the residual times the jump of the template's
 * derivative there).  In the profile over the other axes, -ln L =
 * (x - x*)^2 / (2 C_aa) + (s/2) |x - node| (C = H^-1, the covariance):
 * whenever the smooth minimum x* lies within s C_aa / 2 of the node, the
 * fit lands on the node, to rounding, and no longer says where in that
 * basin x* is.  Taken as uniform over the basin, that adds
 * (s C_aa)^2 / 12 to the variance of a, and (s C_ba)^2 / 12 to that of
 * every other axis b, which follows x* through the profile by
 * C_ba / C_aa.
 *
 * For a fit on an inner node, three points across it, less the curvature
 * inside one cell (H_aa, the Hessian stencil's, stage_hessian.c), give the
 * one-sided slopes g+ and g- there; the fit is held when g+ > 0 > g-, and
 * s = g+ - g-.  A fit whose Hessian came from across the node (the retry)
 * has s = 0 by construction.  On the independent generator, where more
 * than half of the S/N > 15 fits sit on an [Fe/H] node, pull widths at
 * S/N >= 5 went from 0.97-1.54 to 0.81-1.15 (docs/benchmarks.md, "Issue
 * 14: the error model completed").  Cost: 3 points per star and axis on
 * a node; the centre is evaluated on the node itself rather than taken
 * from the optimum (up to 1e-3 spacings off it) so that the three points
 * share one line.
 */
#include <math.h>
#include <stdlib.h>

#include "fit_internal.h"
#include "library/library_internal.h"

#define PIN_PTS 3   /* node, node + h, node - h                  */
#define PIN_TOL 1e-3 /* "on the node", in node spacings          */

/* The inner node x sits on (within tol) on axis ax, or -1. */
static int on_node(const rvfit_axis *ax, double x, double tol)
{
    int k = grid_cell(ax, x);
    for (int n = k; n <= k + 1; n++)
        if (n > 0 && n < ax->nnode - 1 && fabs(x - ax->node[n]) < tol)
            return n;
    return -1;
}

/* Points node + {0, h, -h} along free axis j for spectrum i. */
static void add_points(const fit_ctx *f, size_t i, int j, int node,
                       double h, rvfit_point *p)
{
    int a = f->free_axis[j];
    double x = f->lib->axis[a].node[node];
    for (int k = 0; k < PIN_PTS; k++) {
        p[k] = f->best[f->act[i]];
        p[k].theta[a] = x + (k == 1 ? h : k == 2 ? -h : 0);
    }
}

/* The slope jump s of -ln L = m / 2 at the node from its points m and
 * the in-cell curvature hjj: the one-sided slopes are the secants less
 * that curvature; 0 unless both point to the node. */
static double slope_jump(const double *m, double h, double hjj)
{
    double up = (m[1] - m[0]) / (2 * h) - 0.5 * hjj * h;
    double down = (m[0] - m[2]) / (2 * h) + 0.5 * hjj * h;
    return up > 0 && down < 0 ? up - down : 0;
}

int fit_pin_var(fit_ctx *f, const double *h, const double *hinv,
                const double *diag, const int *have, double *var)
{
    int d = f->nfree;
    size_t n = f->nact, np = 0;
    rvfit_point *p = malloc(n * (size_t)d * PIN_PTS * sizeof *p);
    size_t *who = malloc(n * (size_t)d * sizeof *who);
    double *m = malloc(n * (size_t)d * PIN_PTS * sizeof *m);
    if (!p || !who || !m) {
        free(p), free(who), free(m);
        return fit_nomem(f);
    }
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < d && have[i]; j++) {
            const rvfit_axis *ax = &f->lib->axis[f->free_axis[j]];
            double hj = h[i * (size_t)d + j];
            double x = f->best[f->act[i]].theta[f->free_axis[j]];
            int node = on_node(ax, x, PIN_TOL * f->step[f->free_axis[j]]);
            if (node < 0)
                continue;
            add_points(f, i, j, node, hj, p + np * PIN_PTS);
            who[np++] = i * (size_t)d + (size_t)j;
        }
    int rc = np ? fit_chisq_obj(f, np * PIN_PTS, p, m) : RVFIT_OK;
    for (size_t q = 0; q < np && !rc; q++) {
        size_t i = who[q] / (size_t)d;
        int j = (int)(who[q] % (size_t)d);
        double s = slope_jump(m + q * PIN_PTS, h[who[q]], diag[who[q]]);
        /* every axis b follows x* through the profile: C_bj s u; a NaN
         * there (no template term) counts as 0 */
        const double *C = hinv + i * (size_t)d * d;
        for (int b = 0; b < d && s > 0; b++) {
            double *v = &var[i * (size_t)d + (size_t)b];
            *v = (isnan(*v) ? 0 : *v) + pow(s * C[b * d + j], 2) / 12;
        }
    }
    free(p), free(who), free(m);
    return rc;
}
