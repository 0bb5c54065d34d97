/* cpu_eval.c — the batched entry points chisq, vscan and models: validate
 * the points, cut the work into items for the pool, and sum arms in one
 * fixed order so that chisq(v) and vscan at the same v agree bitwise. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct cpu_job {
    cpu_state *st;
    const rvfit_point *pts;
    const rvfit_stencils *stn; /* NULL: stencils from theta */
    rvfit_chisq_out *out;
    size_t nvel, nchunk;
    const double *vel;
    double *m2lnl;
    float *const *model;
    float *const *cont;
} cpu_job;

static int cpu_arm_usable(const cpu_state *st, int a, size_t s)
{
    return st->arm[a].nuse[s] >= st->mo.npoly + 1;
}

static int cpu_check_v(double v)
{
    return isfinite(v) && fabs(v) < 0.5 * RVFIT_C_KMS;
}

static int cpu_check(const cpu_state *st, size_t n, const rvfit_point *pts,
                     const rvfit_stencils *stn, const char *what,
                     rvfit_err *err)
{
    if (!st->have_batch)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: no batch loaded", what);
    if (stn && rvfit_stencils_check(&st->lib, n, stn, err) != RVFIT_OK) {
        rvfit_err_prefix(err, "%s", what);
        return RVFIT_ERR_INVALID;
    }
    for (size_t q = 0; q < n; q++) {
        const rvfit_point *p = &pts[q];
        if (p->spec >= st->nspec)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "%s: point %zu: spectrum %u not in the batch "
                                 "of %zu", what, q, p->spec, st->nspec);
        if (!cpu_check_v(p->v) || !isfinite(p->vsini))
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "%s: point %zu: v = %g, vsini = %g", what, q,
                                 p->v, p->vsini);
    }
    return RVFIT_OK;
}

static void cpu_job_stencil(const cpu_job *job, size_t q, cpu_stencil *sc)
{
    if (job->stn)
        cpu_stencil_given(&job->pts[q], job->stn, q, sc);
    else
        cpu_stencil_of(job->st, &job->pts[q], sc);
}

static void cpu_chisq_task(void *ctx, int tid, size_t q)
{
    cpu_job *job = ctx;
    const cpu_state *st = job->st;
    cpu_scratch *w = &st->scr[tid];
    const rvfit_point *p = &job->pts[q];
    double *carm = job->out->chisq ? job->out->chisq + q * st->narm : NULL;
    cpu_stencil sc;
    cpu_job_stencil(job, q, &sc);
    double delta = rvfit_dlnl_doppler(p->v), tot = 0.0;
    int fail = 0;
    for (int a = 0; a < st->narm; a++) {
        if (carm)
            carm[a] = 0.0;
        if (!cpu_arm_usable(st, a, p->spec))
            continue;
        cpu_range r;
        cpu_tmpl tp;
        double chi, ld;
        cpu_range_of(st, a, p->spec, 0, &r);
        cpu_stencil_arm(job->stn, q, st->arm[a].lib_arm, &sc);
        cpu_template(st, a, p->spec, &sc, p->vsini, delta, delta, 1, &r, w,
                     &tp);
        cpu_model_pixels(st, a, p->spec, &tp, delta, &r, w);
        if (cpu_solve(st, a, p->spec, &r, w, &chi, &ld, NULL) != 0) {
            fail = 1;
            chi = CPU_FAIL;
        } else {
            tot += chi + ld;
        }
        if (carm)
            carm[a] = chi;
    }
    job->out->m2lnl[q] = fail ? CPU_FAIL : tot + sc.penalty;
}

/* Item = (base point, chunk of CPU_VCHUNK velocities): the template is
 * interpolated and rotated once for the whole chunk. */
static void cpu_vscan_task(void *ctx, int tid, size_t item)
{
    cpu_job *job = ctx;
    const cpu_state *st = job->st;
    cpu_scratch *w = &st->scr[tid];
    size_t q = item / job->nchunk, k0 = (item % job->nchunk) * CPU_VCHUNK;
    size_t nk = job->nvel - k0 < CPU_VCHUNK ? job->nvel - k0 : CPU_VCHUNK;
    const rvfit_point *p = &job->pts[q];
    const double *vel = job->vel + q * job->nvel + k0;
    double delta[CPU_VCHUNK], dmin = INFINITY, dmax = -INFINITY;
    for (size_t k = 0; k < nk; k++) {
        delta[k] = rvfit_dlnl_doppler(vel[k]);
        dmin = fmin(dmin, delta[k]);
        dmax = fmax(dmax, delta[k]);
        w->vacc[k] = 0.0;
        w->vfail[k] = 0;
    }
    cpu_stencil sc;
    cpu_job_stencil(job, q, &sc);
    for (int a = 0; a < st->narm; a++) {
        if (!cpu_arm_usable(st, a, p->spec))
            continue;
        cpu_range r;
        cpu_tmpl tp;
        cpu_range_of(st, a, p->spec, 0, &r);
        cpu_stencil_arm(job->stn, q, st->arm[a].lib_arm, &sc);
        cpu_template(st, a, p->spec, &sc, p->vsini, dmin, dmax, (int)nk, &r,
                     w, &tp);
        for (size_t k = 0; k < nk; k++) {
            double chi, ld;
            cpu_model_pixels(st, a, p->spec, &tp, delta[k], &r, w);
            if (cpu_solve(st, a, p->spec, &r, w, &chi, &ld, NULL) != 0)
                w->vfail[k] = 1;
            else
                w->vacc[k] += chi + ld;
        }
    }
    double *out = job->m2lnl + q * job->nvel + k0;
    for (size_t k = 0; k < nk; k++)
        out[k] = w->vfail[k] ? CPU_FAIL : w->vacc[k] + sc.penalty;
}

static void cpu_models_task(void *ctx, int tid, size_t q)
{
    cpu_job *job = ctx;
    const cpu_state *st = job->st;
    cpu_scratch *w = &st->scr[tid];
    const rvfit_point *p = &job->pts[q];
    cpu_stencil sc;
    cpu_job_stencil(job, q, &sc);
    double delta = rvfit_dlnl_doppler(p->v);
    for (int a = 0; a < st->narm; a++) {
        size_t n = st->arm[a].npix;
        float *mo = job->model[a] + q * n;
        float *co = job->cont && job->cont[a] ? job->cont[a] + q * n : NULL;
        cpu_range r;
        cpu_tmpl tp;
        double chi, ld, coef[RVFIT_MAX_POLY];
        cpu_range_of(st, a, p->spec, 1, &r);
        int ok = cpu_arm_usable(st, a, p->spec);
        if (ok) {
            cpu_stencil_arm(job->stn, q, st->arm[a].lib_arm, &sc);
            cpu_template(st, a, p->spec, &sc, p->vsini, delta, delta, 1, &r, w,
                         &tp);
            cpu_model_pixels(st, a, p->spec, &tp, delta, &r, w);
            ok = cpu_solve(st, a, p->spec, &r, w, &chi, &ld, coef) == 0;
        }
        if (!ok) { /* skipped arm or failed solve: no model */
            memset(mo, 0, n * sizeof(float));
            if (co)
                memset(co, 0, n * sizeof(float));
            continue;
        }
        cpu_continuum(st, a, p->spec, coef, w);
        for (size_t i = 0; i < n; i++)
            mo[i] = (float)(w->cont[i] * w->m[i]);
        if (co)
            for (size_t i = 0; i < n; i++)
                co[i] = (float)w->cont[i];
    }
}

static void cpu_account(cpu_state *st, uint64_t npts, double t0)
{
    st->cnt.points += npts;
    st->cnt.calls++;
    st->cnt.seconds += rvfit_now() - t0;
}

int cpu_chisq(void *state, size_t n, const rvfit_point *pts,
              const rvfit_stencils *stn, rvfit_chisq_out *out,
              rvfit_err *err)
{
    cpu_state *st = state;
    double t0 = rvfit_now();
    int rc = cpu_check(st, n, pts, stn, "chisq", err);
    if (rc != RVFIT_OK)
        return rc;
    cpu_job job = {.st = st, .pts = pts, .stn = stn, .out = out};
    rvfit_pool_run(st->pool, n, cpu_chisq_task, &job);
    cpu_account(st, n, t0);
    return RVFIT_OK;
}

int cpu_vscan(void *state, size_t nq, const rvfit_point *base,
              const rvfit_stencils *stn, size_t nvel,
              const double *vel, double *m2lnl, rvfit_err *err)
{
    cpu_state *st = state;
    double t0 = rvfit_now();
    int rc = cpu_check(st, nq, base, stn, "vscan", err);
    if (rc != RVFIT_OK)
        return rc;
    for (size_t k = 0; k < nq * nvel; k++)
        if (!cpu_check_v(vel[k]))
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "vscan: velocity %zu of base point %zu is %g",
                                 k % nvel, k / nvel, vel[k]);
    cpu_job job = {.st = st, .pts = base, .stn = stn, .nvel = nvel,
                   .vel = vel, .m2lnl = m2lnl};
    job.nchunk = (nvel + CPU_VCHUNK - 1) / CPU_VCHUNK;
    rvfit_pool_run(st->pool, nq * job.nchunk, cpu_vscan_task, &job);
    cpu_account(st, nq * nvel, t0);
    return RVFIT_OK;
}

int cpu_models(void *state, size_t n, const rvfit_point *pts,
               const rvfit_stencils *stn, float *const *model,
               float *const *cont, rvfit_err *err)
{
    cpu_state *st = state;
    double t0 = rvfit_now();
    int rc = cpu_check(st, n, pts, stn, "models", err);
    if (rc != RVFIT_OK)
        return rc;
    for (int a = 0; a < st->narm; a++)
        if (!model || !model[a])
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "models: no output array for arm %.16s",
                                 st->arm[a].name);
    cpu_job job = {.st = st, .pts = pts, .stn = stn, .model = model,
                   .cont = cont};
    rvfit_pool_run(st->pool, n, cpu_models_task, &job);
    cpu_account(st, n, t0);
    return RVFIT_OK;
}
