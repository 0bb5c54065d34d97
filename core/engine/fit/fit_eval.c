/* fit_eval.c — the fit's backend calls, one place for all stages: the
 * core's penalties (velocity range, vsini) added to what the backend
 * returns, non-finite values replaced, points and calls counted into the
 * current stage and per spectrum, stencils from the core sent when the
 * interpolator needs them, and a cancel honoured before every call; and
 * the stages' other shared services (fit_nomem, fit_for). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"

#define V_PENALTY 1.0e4 /* per (10 km/s)^2 outside [vmin, vmax] */

int fit_nomem(fit_ctx *f)
{
    return rvfit_err_set(f->err, RVFIT_ERR_NOMEM, "fit: out of memory");
}

/* Fewer items than this run here: waking the threads costs more than
 * they save (the Newton method's last rounds carry a few slow runs). */
#define FIT_FOR_MIN 16

void fit_for(const fit_ctx *f, size_t n, rvfit_pool_fn fn, void *ctx)
{
    if (f->pool && n >= FIT_FOR_MIN) {
        rvfit_pool_run(f->pool, n, fn, ctx);
        return;
    }
    for (size_t i = 0; i < n; i++)
        fn(ctx, 0, i);
}

int fit_nthreads(const fit_ctx *f)
{
    return f->pool ? rvfit_pool_size(f->pool) : 1;
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

/* One chisq call, the core penalties added: with the stencil table st,
 * or the backend's own stencils from theta (st NULL). */
static int chisq_call(fit_ctx *f, size_t n, const rvfit_point *pts,
                      const rvfit_stencils *st, double *m2lnl,
                      double *chisq_arm)
{
    if (cancelled(f))
        return RVFIT_ERR_CANCELLED;
    rvfit_counters c0;
    f->be->ops->counters(f->be->state, &c0);
    rvfit_chisq_out out = {m2lnl, chisq_arm};
    int rc = f->be->ops->chisq(f->be->state, n, pts, st, &out, f->err);
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
    const rvfit_stencils *st;
    int rc = rvfit_stencil_table(f->hs, n, pts, &f->sbuf, &st, f->err);
    return rc ? rc : chisq_call(f, n, pts, st, m2lnl, chisq_arm);
}

int fit_chisq_st(fit_ctx *f, size_t n, const rvfit_point *pts,
                 const rvfit_stencils *st, double *m2lnl)
{
    return n ? chisq_call(f, n, pts, st, m2lnl, NULL) : RVFIT_OK;
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
    const rvfit_stencils *st;
    int rc = rvfit_stencil_table(f->hs, nq, base, &f->sbuf, &st, f->err);
    if (!rc)
        rc = f->be->ops->vscan(f->be->state, nq, base, st, nvel, vel, m2lnl,
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

int fit_models(fit_ctx *f, size_t n, const rvfit_point *pts,
               float *const *model, float *const *cont)
{
    if (n == 0)
        return RVFIT_OK;
    if (cancelled(f))
        return RVFIT_ERR_CANCELLED;
    rvfit_counters c0;
    f->be->ops->counters(f->be->state, &c0);
    const rvfit_stencils *st;
    int rc = rvfit_stencil_table(f->hs, n, pts, &f->sbuf, &st, f->err);
    if (!rc)
        rc = f->be->ops->models(f->be->state, n, pts, st, model, cont,
                                f->err);
    if (rc != RVFIT_OK) {
        rvfit_err_prefix(f->err, "backend '%s': models(%zu points)",
                         f->be->name, n);
        return rc;
    }
    count(f, c0.points, c0.calls);
    for (size_t i = 0; i < n; i++)
        f->npts[pts[i].spec]++;
    return RVFIT_OK;
}
