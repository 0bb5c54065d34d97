/* stage_hessian.c — stage 4 of the fit: parameter uncertainties from a finite-
 * difference Hessian of -ln L over the free library axes, all spectra and
 * all stencil points in one backend call, plus the template-interpolation
 * part (err_interp.c), kept apart so that scale_errors scales only the
 * statistical part (fit.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"
#include "quad.h"
#include "library/library_internal.h"
#include "rvfit/linalg.h"

_Static_assert(RVFIT_MAX_PARAMS <= RVFIT_LINALG_MAX, "too many parameters");

#define H_STEP 0.25 /* finite-difference step, in node spacings */

/* Stencil: centre, +-h_i, and +-(h_i, h_j) for i < j.  Exact for a
 * quadratic -ln L, and symmetric: the one-sided corner (+h_i, +h_j) alone
 * would also be exact for a quadratic, but on the piecewise multilinear
 * surface its cross terms broke positive definiteness for ~30 % of the
 * desi-1k stars; the four corners of a full central design cost 2d(d-1)
 * points against d(d-1) here. */
static int stencil_size(int d) { return 1 + 2 * d + d * (d - 1); }

/* Where the interpolant's kinks lie on node planes (every kind but
 * simplex), -ln L has a kink at each node: a central difference across
 * it adds (slope jump)/h to the curvature, and desi-1k's [Fe/H] pulls at
 * S/N >= 15 were 1.7-2.7 for optima within h of a node against 0.89
 * beyond.  So the stencil stays inside one cell: a centre within h of a
 * node moves to h from it, on its own side (into the grid at the ends,
 * upward when exactly on an inner node). */
static double off_node(const rvfit_axis *ax, double t, double h)
{
    int k = grid_cell(ax, t);
    double lo = ax->node[k], hi = ax->node[k + 1];
    if (t - lo < h) /* also below the axis, and on an inner node */
        return lo + h;
    return hi - t < h ? hi - h : t; /* also at or above the top */
}

static int kinks_on_nodes(const fit_ctx *f)
{
    return rvfit_interp_kinks_on_nodes(f->o->interp);
}

/* Centre of the stencil: the optimum, moved so that every stencil point
 * stays on the grid (the penalty outside would fake curvature) and, with
 * kinks set, inside one cell. */
static void stencil_centre(const fit_ctx *f, const rvfit_point *best,
                           int kinks, double *c, double *h)
{
    for (int j = 0; j < f->nfree; j++) {
        int a = f->free_axis[j];
        h[j] = H_STEP * f->step[a];
        double t = best->theta[a];
        if (kinks)
            t = off_node(&f->lib->axis[a], t, h[j]);
        t = t < f->lo[a] + h[j] ? f->lo[a] + h[j] : t;
        t = t > f->hi[a] - h[j] ? f->hi[a] - h[j] : t;
        c[j] = t;
    }
}

static void make_points(const fit_ctx *f, size_t i, int kinks,
                        rvfit_point *p, double *c, double *h)
{
    int d = f->nfree;
    const rvfit_point *best = &f->best[f->act[i]];
    stencil_centre(f, best, kinks, c, h);
    int k = 0;
    for (int s = 0; s < stencil_size(d); s++) {
        p[s] = *best;
        for (int j = 0; j < d; j++)
            p[s].theta[f->free_axis[j]] = c[j];
    }
    k = 1;
    for (int j = 0; j < d; j++, k += 2) {
        p[k].theta[f->free_axis[j]] += h[j];
        p[k + 1].theta[f->free_axis[j]] -= h[j];
    }
    for (int j = 0; j < d; j++)
        for (int l = j + 1; l < d; l++)
            for (int sg = 1; sg >= -1; sg -= 2, k++) {
                p[k].theta[f->free_axis[j]] += sg * h[j];
                p[k].theta[f->free_axis[l]] += sg * h[l];
            }
}

/* Hessian of -ln L = m2lnl/2 from the stencil values. */
static void hessian(int d, const double *m, const double *h, double *H)
{
    for (int j = 0; j < d; j++)
        H[j * d + j] = 0.5 * (m[1 + 2 * j] - 2 * m[0] + m[2 + 2 * j]) /
                       (h[j] * h[j]);
    int k = 1 + 2 * d;
    for (int j = 0; j < d; j++)
        for (int l = j + 1; l < d; l++, k += 2) {
            /* f(++) + f(--) - f(+j) - f(-j) - f(+l) - f(-l) + 2 f(0)
             * = 2 H_jl h_j h_l exactly for a quadratic f = m/2. */
            double s2 = m[k] + m[k + 1] - m[1 + 2 * j] - m[2 + 2 * j] -
                        m[1 + 2 * l] - m[2 + 2 * l] + 2 * m[0];
            H[j * d + l] = H[l * d + j] = 0.25 * s2 / (h[j] * h[l]);
        }
}

/* Variance of a uniform distribution over free axis a's range of
 * nodes (scaled units^2): what the grid alone says of a parameter. */
static double grid_var(const fit_ctx *f, int a)
{
    return pow(f->hi[a] - f->lo[a], 2) / 12;
}

/* Errors of spectrum i in physical units: statistical from the inverse
 * Hessian hinv (or 1/sqrt(diag) without one, have = 0), interpolation
 * from var; BAD_HESSIAN unless ok. */
static void write_errors(const fit_ctx *f, size_t i, rvfit_result *res,
                         const double *hinv, const double *diag, int ok,
                         int have, const double *var)
{
    int d = f->nfree;
    rvfit_result *r = &res[f->act[i]];
    const rvfit_point *best = &f->best[f->act[i]];
    if (!ok)
        r->warn |= RVFIT_WARN_BAD_HESSIAN;
    for (int a = 0; a < f->lib->nparam; a++)
        r->param_err[a] = r->param_err_interp[a] = NAN;
    for (int j = 0; j < d; j++) {
        int a = f->free_axis[j];
        const rvfit_axis *ax = &f->lib->axis[a];
        /* d value / d scaled coordinate */
        double dv = ax->scale == RVFIT_SCALE_LOG10
                        ? rvfit_axis_unscale(ax, best->theta[a]) * log(10.0)
                        : 1.0;
        double st = have ? hinv[j * d + j]
                         : (diag[j] > 0 ? 1 / diag[j] : NAN);
        /* Neither part exceeds what the grid alone says: the rms
         * distance from the fit to a truth placed uniformly over the
         * axis' range (range/sqrt(12) at its middle, range/sqrt(3) at an
         * end).  A first-order shift along a direction that -ln L hardly
         * constrains can come out at 1e5 K or 300 dex, which says no
         * more than that. */
        double mid = 0.5 * (f->hi[a] + f->lo[a]);
        double r2 = grid_var(f, a) + pow(best->theta[a] - mid, 2);
        r->param_err[a] = dv * sqrt(st > r2 ? r2 : st); /* NaN stays */
        r->param_err_interp[a] = dv * sqrt(var[j] > r2 ? r2 : var[j]);
    }
}

/* Inverse Hessian of spectrum's stencil values m into H (diagonal of
 * the Hessian into diag); 1 when positive definite. */
static int invert(int d, const double *m, const double *h, double *H,
                  double *diag)
{
    hessian(d, m, h, H);
    for (int j = 0; j < d; j++)
        diag[j] = H[j * d + j];
    return rvfit_spd_inverse(d, H) == RVFIT_OK;
}

/* A cell-side stencil whose Hessian is not positive definite (an optimum
 * pinned on a node, seen from one side on a slope: 14 of desi-1k's 1,000
 * stars) gets a second try centred on the optimum itself, across the
 * node, as before the cell-side rule; kept when that one is.  One backend
 * call for the few, in place of the rows of the first (p, m are scratch
 * of n * ns entries). */
static int retry_across(fit_ctx *f, int *ok, rvfit_point *p, double *m,
                        double *c, double *h, double *hinv, double *diag)
{
    int d = f->nfree, ns = stencil_size(d), dd = d * d;
    size_t n = f->nact, nr = 0;
    size_t *who = malloc(n * sizeof *who);
    double *cc = malloc(n * (size_t)d * sizeof *cc);
    double *hh = malloc(n * (size_t)d * sizeof *hh);
    double *m2 = malloc(n * (size_t)ns * sizeof *m2);
    int rc = who && cc && hh && m2 ? RVFIT_OK : fit_nomem(f);
    for (size_t i = 0; i < n && !rc; i++) {
        double *ci = cc + nr * (size_t)d, *hi = hh + nr * (size_t)d;
        if (ok[i])
            continue;
        make_points(f, i, 0, p + nr * (size_t)ns, ci, hi);
        /* the same stencil: nothing new to try */
        if (memcmp(ci, c + i * (size_t)d, (size_t)d * sizeof *ci))
            who[nr++] = i;
    }
    if (!rc && nr)
        rc = fit_chisq_obj(f, nr * (size_t)ns, p, m2);
    for (size_t r = 0; r < nr && !rc; r++) {
        size_t i = who[r];
        double H[RVFIT_MAX_PARAMS * RVFIT_MAX_PARAMS], dg[RVFIT_MAX_PARAMS];
        const double *mi = m2 + r * (size_t)ns;
        if (!invert(d, mi, hh + r * (size_t)d, H, dg))
            continue;
        ok[i] = 1;
        memcpy(c + i * (size_t)d, cc + r * (size_t)d, (size_t)d * sizeof *c);
        memcpy(h + i * (size_t)d, hh + r * (size_t)d, (size_t)d * sizeof *h);
        memcpy(m + i * (size_t)ns, mi, (size_t)ns * sizeof *mi);
        memcpy(hinv + i * (size_t)dd, H, (size_t)dd * sizeof *H);
        memcpy(diag + i * (size_t)d, dg, (size_t)d * sizeof *dg);
    }
    free(who), free(cc), free(hh), free(m2);
    return rc;
}

/* A Hessian that is not positive definite on either side of the node
 * (an optimum pinned on a node or at the grid's edge, -ln L flat or
 * concave along some direction) tells nothing along those directions but
 * what the grid itself does.  The errors come from its positive
 * semi-definite part (a concave direction carries no information) plus
 * the precision of a uniform distribution over each axis' range,
 * 12 / range^2; the star keeps BAD_HESSIAN.  Before, the conditional
 * 1/sqrt(H_jj) alone: on the independent generator's 400 stars its 30
 * such stars had pulls up to 280.  1 when the inverse exists. */
static int bounded(const fit_ctx *f, const double *m, const double *h,
                   double *H)
{
    int d = f->nfree;
    double prior[RVFIT_MAX_PARAMS];
    hessian(d, m, h, H);
    for (int j = 0; j < d; j++)
        prior[j] = 1 / grid_var(f, f->free_axis[j]);
    fq_psd_plus(d, H, prior);
    return rvfit_spd_inverse(d, H) == RVFIT_OK;
}

int fit_stage_hessian(fit_ctx *f)
{
    int d = f->nfree, ns = stencil_size(d), dd = d * d;
    size_t n = f->nact;
    if (d == 0)
        return RVFIT_OK;
    rvfit_point *p = calloc(n * (size_t)ns, sizeof *p);
    double *m = malloc(n * (size_t)ns * sizeof *m);
    double *h = malloc(n * (size_t)d * sizeof *h);
    double *c = malloc(n * (size_t)d * sizeof *c);
    double *var = malloc(n * (size_t)d * sizeof *var);
    double *hinv = malloc(n * (size_t)dd * sizeof *hinv);
    double *diag = malloc(n * (size_t)d * sizeof *diag);
    int *ok = malloc(n * sizeof *ok), *have = malloc(n * sizeof *have);
    int rc = p && m && h && c && var && hinv && diag && ok && have
                 ? RVFIT_OK
                 : rvfit_err_set(f->err, RVFIT_ERR_NOMEM,
                                 "fit: out of memory");
    for (size_t i = 0; i < n && !rc; i++)
        make_points(f, i, kinks_on_nodes(f), p + i * (size_t)ns,
                    c + i * (size_t)d, h + i * (size_t)d);
    if (!rc)
        rc = fit_chisq_obj(f, n * (size_t)ns, p, m);
    for (size_t i = 0; i < n && !rc; i++)
        ok[i] = invert(d, m + i * (size_t)ns, h + i * (size_t)d,
                       hinv + i * (size_t)dd, diag + i * (size_t)d);
    if (!rc && kinks_on_nodes(f))
        rc = retry_across(f, ok, p, m, c, h, hinv, diag);
    for (size_t i = 0; i < n && !rc; i++)
        have[i] = ok[i] || bounded(f, m + i * (size_t)ns, h + i * (size_t)d,
                                   hinv + i * (size_t)dd);
    if (!rc)
        rc = fit_interp_var(f, c, h, m, ns, hinv, have, var);
    if (!rc && f->o->interp_errors && kinks_on_nodes(f))
        rc = fit_pin_var(f, h, hinv, diag, have, var);

    for (size_t i = 0; i < n && !rc; i++)
        write_errors(f, i, f->res, hinv + i * (size_t)dd, diag + i * (size_t)d,
                     ok[i], have[i], var + i * (size_t)d);
    if (!rc)
        fit_group_sync_errors(f);
    free(p), free(m), free(h), free(c), free(var), free(hinv), free(diag);
    free(ok), free(have);
    return rc;
}
