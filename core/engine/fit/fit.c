/* fit.c — the batched fit driver: runs the stages in lockstep for a batch
 * and turns the optimum into results, warning bits and models. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fit_internal.h"
#include "rvfit/physics.h"

#define V_PENALTY 1.0e4 /* per (10 km/s)^2 outside [vmin, vmax] */

const char *rvfit_stage_label(int stage)
{
    static const char *names[] = {"read",    "init",    "optimize",
                                  "vrefine", "hessian", "diagnostics",
                                  "write",   "wait"};
    return stage >= 0 && stage < RVFIT_NSTAGE ? names[stage] : "?";
}

int rvfit_fit_opts_from_config(const rvfit_config *c, rvfit_fit_opts *o,
                               rvfit_err *err)
{
    memset(o, 0, sizeof *o);
    if (c->vmin >= c->vmax)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[fit] vmin (%g) must be below vmax (%g)",
                             c->vmin, c->vmax);
    o->vmin = c->vmin;
    o->vmax = c->vmax;
    o->ccf_vstep = c->ccf_vstep;
    o->vsini_max = c->vsini_max;
    o->fit_vsini = (int)c->fit_vsini;
    o->max_iter = (int)c->max_iter;
    o->scale_errors = (int)c->scale_errors;
    o->interp_errors = (int)c->interp_errors;
    o->model.npoly = (int)c->npoly;
    if (!strcasecmp(c->basis, "gauss"))
        o->model.basis = RVFIT_BASIS_GAUSS;
    else if (!strcasecmp(c->basis, "cheb"))
        o->model.basis = RVFIT_BASIS_CHEB;
    else
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[fit] basis '%s': use gauss or cheb", c->basis);
    return RVFIT_OK;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double core_penalty(const fit_ctx *f, const rvfit_point *p)
{
    double pen = 0, d = 0;
    if (p->v < f->o->vmin)
        d = (f->o->vmin - p->v) / 10.0;
    else if (p->v > f->o->vmax)
        d = (p->v - f->o->vmax) / 10.0;
    pen += V_PENALTY * d * d;
    if (p->vsini > f->o->vsini_max) {
        d = (p->vsini - f->o->vsini_max) / 10.0;
        pen += V_PENALTY * d * d;
    }
    return pen;
}

/* Attribute the backend's points and calls since (p0, c0) to the stage. */
static void count(fit_ctx *f, uint64_t p0, uint64_t c0)
{
    rvfit_counters c;
    f->be->ops->counters(f->be->state, &c);
    f->prof->points[f->cur_stage] += c.points - p0;
    f->prof->calls[f->cur_stage] += c.calls - c0;
}

/* A cancel (signal) ends the batch at its next backend call, not after
 * the batch: a batch can take minutes. */
static int cancelled(fit_ctx *f)
{
    if (!f->o->cancel || !*f->o->cancel)
        return RVFIT_OK;
    return rvfit_err_set(f->err, RVFIT_ERR_CANCELLED, "interrupted");
}

/* One chisq call, the core penalties added: with the stencils of sb (the
 * interpolator's, over its vectors), else with st (single-weight
 * stencils over the library's models), else with the backend's own
 * stencils from theta. */
static int chisq_call(fit_ctx *f, size_t n, const rvfit_point *pts,
                      const rvfit_stencil_buf *sb, const rvfit_stencils *st,
                      double *m2lnl, double *chisq_arm)
{
    if (cancelled(f))
        return RVFIT_ERR_CANCELLED;
    rvfit_counters c0;
    f->be->ops->counters(f->be->state, &c0);
    rvfit_chisq_out out = {m2lnl, chisq_arm};
    const rvfit_backend_ops *ops = f->be->ops;
    int rc = sb   ? rvfit_stencil_chisq(ops, f->be->state, n, pts, sb, &out,
                                        f->err)
             : st ? ops->chisq_st(f->be->state, n, pts, st, &out, f->err)
                  : ops->chisq(f->be->state, n, pts, &out, f->err);
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(f->err, "backend '%s': chisq(%zu points)",
                         f->be->name, n);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        m2lnl[i] += core_penalty(f, &pts[i]);
        if (!isfinite(m2lnl[i]))
            m2lnl[i] = RVFIT_M2LNL_FAIL;
        f->npts[pts[i].spec]++;
    }
    count(f, c0.points, c0.calls);
    return RVFIT_OK;
}

int fit_chisq(fit_ctx *f, size_t n, const rvfit_point *pts, double *m2lnl,
              double *chisq_arm)
{
    if (n == 0)
        return RVFIT_OK;
    int rc = f->hs ? rvfit_stencil_fill(f->hs, n, pts, &f->sbuf, f->err)
                   : RVFIT_OK;
    return rc ? rc : chisq_call(f, n, pts, f->hs ? &f->sbuf : NULL, NULL,
                                m2lnl, chisq_arm);
}

int fit_chisq_st(fit_ctx *f, size_t n, const rvfit_point *pts,
                 const rvfit_stencils *st, double *m2lnl)
{
    return n ? chisq_call(f, n, pts, NULL, st, m2lnl, NULL) : RVFIT_OK;
}

int fit_vscan(fit_ctx *f, size_t nq, const rvfit_point *base, size_t nvel,
              const double *vel, double *m2lnl)
{
    if (nq == 0)
        return RVFIT_OK;
    if (cancelled(f))
        return RVFIT_ERR_CANCELLED;
    rvfit_counters c0;
    f->be->ops->counters(f->be->state, &c0);
    int rc = f->hs ? rvfit_stencil_fill(f->hs, nq, base, &f->sbuf, f->err)
                   : RVFIT_OK;
    if (!rc && f->hs)
        rc = rvfit_stencil_vscan(f->be->ops, f->be->state, nq, base,
                                 &f->sbuf, nvel, vel, m2lnl, f->err);
    else if (!rc)
        rc = f->be->ops->vscan(f->be->state, nq, base, nvel, vel, m2lnl,
                               f->err);
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(f->err, "backend '%s': vscan(%zu x %zu)",
                         f->be->name, nq, nvel);
        return rc;
    }
    for (size_t q = 0; q < nq; q++)
        for (size_t k = 0; k < nvel; k++) {
            rvfit_point p = base[q];
            p.v = vel[q * nvel + k];
            double *m = &m2lnl[q * nvel + k];
            *m += core_penalty(f, &p);
            if (!isfinite(*m))
                *m = RVFIT_M2LNL_FAIL;
        }
    for (size_t q = 0; q < nq; q++)
        f->npts[base[q].spec] += nvel;
    count(f, c0.points, c0.calls);
    return RVFIT_OK;
}

double fit_parabola_min(const double *x, const double *y, size_t n,
                        size_t k)
{
    if (k == 0 || k + 1 >= n)
        return x[k];
    double y0 = y[k - 1], y1 = y[k], y2 = y[k + 1];
    double den = y0 - 2 * y1 + y2;
    if (!(den > 0))
        return x[k];
    double h = x[k + 1] - x[k];
    double t = 0.5 * (y0 - y2) / den;
    t = t < -1 ? -1 : t > 1 ? 1 : t;
    return x[k] + t * h;
}

static int setup(fit_ctx *f)
{
    const rvfit_library *L = f->lib;
    f->nfree = 0;
    for (int i = 0; i < L->nparam; i++) {
        const rvfit_axis *a = &L->axis[i];
        f->lo[i] = a->node[0];
        f->hi[i] = a->node[a->nnode - 1];
        f->step[i] = a->nnode > 1 ? (f->hi[i] - f->lo[i]) / (a->nnode - 1)
                                  : 1.0;
        if (a->nnode > 1)
            f->free_axis[f->nfree++] = i;
    }
    size_t ns = f->b->nspec;
    f->act = malloc((ns ? ns : 1) * sizeof *f->act);
    f->best = calloc(ns ? ns : 1, sizeof *f->best);
    f->fbest = malloc((ns ? ns : 1) * sizeof *f->fbest);
    f->verr = calloc(ns ? ns : 1, sizeof(double));
    f->vskew = calloc(ns ? ns : 1, sizeof(double));
    f->vkurt = calloc(ns ? ns : 1, sizeof(double));
    f->npts = calloc(ns ? ns : 1, sizeof *f->npts);
    if (!f->act || !f->best || !f->fbest || !f->verr || !f->vskew ||
        !f->vkurt || !f->npts)
        return rvfit_err_set(f->err, RVFIT_ERR_NOMEM, "fit: out of memory");
    f->nact = 0;
    for (size_t s = 0; s < ns; s++)
        if (!(f->b->flags[s] & RVFIT_SPEC_BAD))
            f->act[f->nact++] = s;
    return RVFIT_OK;
}

static void teardown(fit_ctx *f)
{
    free(f->act);
    free(f->best);
    free(f->fbest);
    free(f->verr);
    free(f->vskew);
    free(f->vkurt);
    free(f->npts);
    rvfit_stencil_buf_free(&f->sbuf);
}

static void fill_bad(const fit_ctx *f, rvfit_result *r, size_t s)
{
    memset(r, 0, sizeof *r);
    r->vrad = r->vrad_err = r->vrad_skew = r->vrad_kurt = NAN;
    r->vsini = r->chisq_tot = r->chisq_c_tot = r->chisq_red = r->m2lnl = NAN;
    for (int i = 0; i < RVFIT_MAX_PARAMS; i++)
        r->param[i] = r->param_err[i] = r->param_err_interp[i] = NAN;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        r->chisq[a] = r->chisq_c[a] = NAN;
        r->sn[a] = a < f->b->narm ? f->b->snr[s * (size_t)f->b->narm + a]
                                  : NAN;
    }
    r->warn = RVFIT_WARN_BAD_SPECTRUM;
}

/* Stage 5: chi^2 per arm at the optimum, continuum-only chi^2, models. */
static int stage_diag(fit_ctx *f, rvfit_result *res, float *const *models)
{
    size_t n = f->nact;
    int na = f->b->narm;
    rvfit_point *p = malloc(2 * (n ? n : 1) * sizeof *p);
    double *m = malloc(2 * (n ? n : 1) * sizeof *m);
    double *ca = malloc(2 * (n ? n : 1) * (size_t)na * sizeof *ca);
    int rc = (!p || !m || !ca) ? rvfit_err_set(f->err, RVFIT_ERR_NOMEM,
                                               "fit: out of memory")
                               : RVFIT_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        p[i] = f->best[f->act[i]];
        p[n + i] = p[i];
        p[n + i].flags |= RVFIT_PT_CONTINUUM;
    }
    if (!rc)
        rc = fit_chisq(f, 2 * n, p, m, ca);
    for (size_t i = 0; i < n && !rc; i++) {
        rvfit_result *r = &res[f->act[i]];
        r->m2lnl = m[i];
        r->chisq_tot = r->chisq_c_tot = 0;
        for (int a = 0; a < na; a++) {
            r->chisq[a] = ca[i * (size_t)na + a];
            r->chisq_c[a] = ca[(n + i) * (size_t)na + a];
            r->chisq_tot += r->chisq[a];
            r->chisq_c_tot += r->chisq_c[a];
        }
    }
    if (!rc && models && n) {
        float *mp[RVFIT_MAX_ARMS];
        float *tmp[RVFIT_MAX_ARMS] = {0};
        for (int a = 0; a < na && !rc; a++) {
            tmp[a] = malloc(n * f->b->arm[a].npix * sizeof(float));
            mp[a] = tmp[a];
            if (!tmp[a])
                rc = rvfit_err_set(f->err, RVFIT_ERR_NOMEM, "models");
        }
        rvfit_counters c0;
        f->be->ops->counters(f->be->state, &c0);
        if (!rc && f->hs)
            rc = rvfit_stencil_fill(f->hs, n, p, &f->sbuf, f->err);
        if (!rc)
            rc = f->hs ? rvfit_stencil_models(f->be->ops, f->be->state, n,
                                              p, &f->sbuf, mp, NULL, f->err)
                       : f->be->ops->models(f->be->state, n, p, mp, NULL,
                                            f->err);
        if (!rc)
            count(f, c0.points, c0.calls);
        for (size_t i = 0; i < n && !rc; i++)
            f->npts[p[i].spec]++;
        for (int a = 0; a < na && !rc; a++) {
            size_t np = f->b->arm[a].npix;
            for (size_t s = 0; s < f->b->nspec; s++)
                for (size_t i = 0; i < np; i++)
                    models[a][s * np + i] = NAN;
            for (size_t i = 0; i < n; i++)
                memcpy(models[a] + f->act[i] * np, tmp[a] + i * np,
                       np * sizeof(float));
        }
        for (int a = 0; a < na; a++)
            free(tmp[a]);
    }
    free(p);
    free(m);
    free(ca);
    return rc;
}

/* At or beyond the simplex interpolator's hull (holes at the edge of the
 * domain, a missing corner: inside the axes' box, yet an edge): theta or
 * a point 1e-3 node spacings from it along a free axis is charged the
 * out-of-hull penalty, as the axes' edges count within 1e-3 spacings. */
static int at_hull_edge(const fit_ctx *f, const double *theta)
{
    uint32_t idx[RVFIT_MAX_STENCIL];
    double w[RVFIT_MAX_STENCIL], pen = 0.0, t[RVFIT_MAX_PARAMS];
    memcpy(t, theta, (size_t)f->lib->nparam * sizeof *t);
    rvfit_interp_stencil(f->hs, t, idx, w, &pen);
    for (int i = 0; pen == 0.0 && i < f->lib->nparam; i++)
        for (int sg = -1; pen == 0.0 && sg <= 1 && f->lib->axis[i].nnode > 1;
             sg += 2) {
            t[i] = theta[i] + sg * 1e-3 * f->step[i];
            rvfit_interp_stencil(f->hs, t, idx, w, &pen);
            t[i] = theta[i];
        }
    return pen > 0.0;
}

/* Reduced chi^2 over dof = pixels used - fitted quantities: npoly
 * continuum coefficients per arm with pixels, the velocity, vsini when
 * fitted and the free library axes.  With scale_errors the statistical
 * errors are multiplied by sqrt(chi^2/dof), as for a likelihood whose
 * noise is underestimated by that factor; the interpolation part is not
 * noise and is added after (docs/output-format.md). */
static void reduced_chisq(const fit_ctx *f, rvfit_result *r, int narm_used)
{
    long dof = r->npix_tot - (long)f->o->model.npoly * narm_used -
               (1 + (f->o->fit_vsini ? 1 : 0) + f->nfree);
    r->chisq_red = dof > 0 ? r->chisq_tot / (double)dof : NAN;
    double k = f->o->scale_errors && r->chisq_red > 0 ? sqrt(r->chisq_red)
                                                      : 1.0;
    r->vrad_err *= k;
    for (int i = 0; i < f->lib->nparam; i++) {
        double s = r->param_err[i] * k, e = r->param_err_interp[i];
        r->param_err[i] = isfinite(e) ? sqrt(s * s + e * e) : s;
    }
}

static void finish_result(const fit_ctx *f, rvfit_result *r, size_t s)
{
    const rvfit_point *p = &f->best[s];
    const rvfit_batch *b = f->b;
    r->vrad = p->v;
    r->vrad_err = f->verr[s];
    r->vrad_skew = f->vskew[s];
    r->vrad_kurt = f->vkurt[s];
    r->vsini = p->vsini;
    r->npix_tot = 0;
    int narm_used = 0;
    for (int a = 0; a < b->narm; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        long np = 0;
        for (size_t i = 0; i < A->npix; i++)
            np += A->ivar[s * A->npix + i] > 0;
        r->npix[a] = np;
        r->npix_tot += np;
        narm_used += np > 0;
        r->sn[a] = b->snr[s * (size_t)b->narm + a];
    }
    for (int i = 0; i < f->lib->nparam; i++) {
        const rvfit_axis *ax = &f->lib->axis[i];
        r->param[i] = rvfit_axis_unscale(ax, p->theta[i]);
        if (ax->nnode > 1 &&
            (p->theta[i] <= f->lo[i] + 1e-3 * f->step[i] ||
             p->theta[i] >= f->hi[i] - 1e-3 * f->step[i]))
            r->warn |= RVFIT_WARN_PARAM;
    }
    reduced_chisq(f, r, narm_used);
    if (f->hs && f->hs->kind == RVFIT_IKIND_SIMPLEX &&
        at_hull_edge(f, p->theta))
        r->warn |= RVFIT_WARN_PARAM;
    if (r->chisq_c_tot - r->chisq_tot < 50)
        r->warn |= RVFIT_WARN_CHISQ;
    if (r->vrad < f->o->vmin + 5 || r->vrad > f->o->vmax - 5)
        r->warn |= RVFIT_WARN_RV;
    if (!(r->vrad_err <= 100))
        r->warn |= RVFIT_WARN_RVERR;
    if (r->vsini > 100)
        r->warn |= RVFIT_WARN_VSINI;
}

/* The warnings rvfit_prep_batch left in a spectrum's flags. */
static uint32_t prep_warn(uint32_t flags)
{
    uint32_t w = 0;
    if (flags & RVFIT_SPEC_BAD_IVAR)
        w |= RVFIT_WARN_BAD_IVAR;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        if (flags & RVFIT_SPEC_ARM_OUTSIDE(a))
            w |= RVFIT_WARN_ARM_OUTSIDE;
    return w;
}

typedef int (*stage_fn)(fit_ctx *);

static int timed(fit_ctx *f, int stage, stage_fn fn)
{
    double t0 = now();
    f->cur_stage = stage;
    int rc = fn(f);
    f->prof->seconds[stage] += now() - t0;
    return rc;
}

int rvfit_fit_batch(rvfit_backend *be, const rvfit_library *lib,
                    const rvfit_batch *b, const rvfit_fit_opts *o,
                    rvfit_result *res, float *const *models,
                    rvfit_profile *prof, const rvfit_host *host,
                    rvfit_err *err)
{
    fit_ctx f = {.be = be, .lib = lib, .b = b, .o = o, .prof = prof,
                 .host = host, .err = err};
    if (o->interp && o->interp->host_stencils)
        f.hs = o->interp;
    int rc = setup(&f);
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK; s++) {
        memset(&res[s], 0, sizeof res[s]);
        if (b->flags[s] & RVFIT_SPEC_BAD)
            fill_bad(&f, &res[s], s);
    }
    if (rc == RVFIT_OK && f.nact > 0) {
        rc = timed(&f, RVFIT_ST_INIT, fit_stage_init);
        if (!rc)
            rc = timed(&f, RVFIT_ST_OPTIM, fit_stage_optim);
        if (!rc)
            rc = timed(&f, RVFIT_ST_VREFINE, fit_stage_vrefine);
        if (!rc) {
            double t0 = now();
            f.cur_stage = RVFIT_ST_HESSIAN;
            rc = fit_stage_hessian(&f, res);
            prof->seconds[RVFIT_ST_HESSIAN] += now() - t0;
        }
        if (!rc) {
            double t0 = now();
            f.cur_stage = RVFIT_ST_DIAG;
            rc = stage_diag(&f, res, models);
            for (size_t i = 0; i < f.nact && !rc; i++)
                finish_result(&f, &res[f.act[i]], f.act[i]);
            prof->seconds[RVFIT_ST_DIAG] += now() - t0;
        }
    }
    if (rc == RVFIT_OK && models && f.nact == 0)
        for (int a = 0; a < b->narm; a++)
            for (size_t i = 0; i < b->nspec * b->arm[a].npix; i++)
                models[a][i] = NAN;
    if (rc == RVFIT_OK && models)
        for (size_t s = 0; s < b->nspec; s++)
            if (b->flags[s] & RVFIT_SPEC_BAD)
                for (int a = 0; a < b->narm; a++)
                    for (size_t i = 0; i < b->arm[a].npix; i++)
                        models[a][s * b->arm[a].npix + i] = NAN;
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK && f.npts; s++)
        res[s].npoints = f.npts[s];
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK; s++)
        res[s].warn |= prep_warn(b->flags[s]);
    prof->spectra += b->nspec;
    teardown(&f);
    return rc;
}
