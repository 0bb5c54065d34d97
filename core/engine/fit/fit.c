/* fit.c — the batched fit driver: runs the stages of the table below in
 * lockstep for a batch, each timed and its backend points counted into
 * the profile, and leaves results, warning bits and models. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fit_internal.h"

const char *rvfit_stage_label(int stage)
{
    static const char *names[] = {"read",    "init",    "optimize",
                                  "vrefine", "clip",    "hessian",
                                  "diagnostics", "write", "wait"};
    _Static_assert(sizeof names / sizeof *names == RVFIT_NSTAGE,
                   "a label per stage");
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
    o->sb2 = (int)c->sb2;
    /* Below ~3 sigma the Gaussian noise itself would be clipped (one
     * pixel in 700 at 3), and the one-sided rejection would pull the
     * continuum down. */
    if (c->clip != 0 && !(c->clip >= 3))
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[fit] clip = %g: use 0 (off) or at least 3 "
                             "(sigma)", c->clip);
    o->clip = c->clip;
    o->starts = (int)c->starts;
    /* [run] threads is resolved by the run (rvfit_host.nthreads) */
    o->driver_threads = c->driver_threads ? (int)c->driver_threads : -1;
    if (strcasecmp(c->epochs, "single") && strcasecmp(c->epochs, "joint"))
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[fit] epochs '%s': use single or joint",
                             c->epochs);
    if (!strcasecmp(c->basis, "gauss"))
        o->model.basis = RVFIT_BASIS_GAUSS;
    else if (!strcasecmp(c->basis, "cheb"))
        o->model.basis = RVFIT_BASIS_CHEB;
    else if (!strcasecmp(c->basis, "bspline"))
        o->model.basis = RVFIT_BASIS_BSPLINE;
    else
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[fit] basis '%s': use gauss, cheb or bspline",
                             c->basis);
    /* 0: each basis's own size, chosen on the independent generator
     * (docs/benchmarks.md) */
    o->model.npoly = c->npoly ? (int)c->npoly
                     : o->model.basis == RVFIT_BASIS_BSPLINE ? 7 : 10;
    if (o->model.basis == RVFIT_BASIS_BSPLINE && o->model.npoly < 4)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[fit] basis bspline needs npoly >= 4 (a cubic "
                             "B-spline per interval), not %d", o->model.npoly);
    return RVFIT_OK;
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
    f->start = calloc((ns ? ns : 1) * RVFIT_MAX_STARTS, sizeof *f->start);
    f->fstart = malloc((ns ? ns : 1) * RVFIT_MAX_STARTS * sizeof *f->fstart);
    f->nstart = calloc(ns ? ns : 1, sizeof *f->nstart);
    if (!f->act || !f->best || !f->fbest || !f->verr || !f->vskew ||
        !f->vkurt || !f->npts || !f->start || !f->fstart || !f->nstart)
        return rvfit_err_set(f->err, RVFIT_ERR_NOMEM, "fit: out of memory");
    f->nact = 0;
    for (size_t s = 0; s < ns; s++) {
        f->best[s].spec = (uint32_t)s; /* the stages keep it (fit_group) */
        if (!(f->b->flags[s] & RVFIT_SPEC_BAD))
            f->act[f->nact++] = s;
    }
    f->xact = f->act;
    f->nxact = f->nact;
    return RVFIT_OK;
}

static void teardown(fit_ctx *f)
{
    rvfit_pool_destroy(f->pool);
    f->pool = NULL;
    fit_group_free(f);
    free(f->act);
    free(f->best);
    free(f->fbest);
    free(f->verr);
    free(f->vskew);
    free(f->vkurt);
    free(f->npts);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(f->clip_ivar[a]);
    free(f->start);
    free(f->fstart);
    free(f->nstart);
    rvfit_stencil_buf_free(&f->sbuf);
}

/* The stages, in order (architecture §4): each a few batched backend
 * calls for all spectra still being fitted. */
const fit_stage fit_stages[FIT_NSTAGES] = {
    {RVFIT_ST_INIT, fit_stage_init},       /* stage_init.c    */
    {RVFIT_ST_OPTIM, fit_stage_optim},     /* stage_optim.c   */
    {RVFIT_ST_VREFINE, fit_stage_vrefine}, /* stage_vrefine.c */
    {RVFIT_ST_CLIP, fit_stage_clip},       /* stage_clip.c    */
    {RVFIT_ST_HESSIAN, fit_stage_hessian}, /* stage_hessian.c */
    {RVFIT_ST_DIAG, fit_stage_diag},       /* stage_diag.c    */
};

int fit_run_stages(fit_ctx *f, const fit_stage *st, size_t n)
{
    int rc = RVFIT_OK;
    if (f->nact == 0)
        return rc;
    for (size_t k = 0; k < n && !rc; k++) {
        double t0 = rvfit_now();
        f->cur_stage = st[k].id;
        rc = st[k].run(f);
        f->prof->seconds[st[k].id] += rvfit_now() - t0;
    }
    return rc;
}

/* NaN models for the spectra not fitted (bad, or all when none was). */
static void models_unfitted(const fit_ctx *f)
{
    const rvfit_batch *b = f->b;
    for (size_t s = 0; s < b->nspec; s++)
        if (f->nact == 0 || (b->flags[s] & RVFIT_SPEC_BAD))
            for (int a = 0; a < b->narm; a++)
                for (size_t i = 0; i < b->arm[a].npix; i++)
                    f->models[a][s * b->arm[a].npix + i] = NAN;
}

int fit_begin(fit_ctx *f)
{
    if (f->o->interp && f->o->interp->host_stencils)
        f->hs = f->o->interp;
    int rc = rvfit_interp_backend_check(f->hs, f->be->ops->caps,
                                        f->be->name, f->err);
    if (!rc && f->o->model.basis == RVFIT_BASIS_BSPLINE &&
        !(f->be->ops->caps & RVFIT_BACKEND_CAP_BSPLINE))
        rc = rvfit_err_set(f->err, RVFIT_ERR_CONFIG,
                           "backend '%s' does not declare "
                           "RVFIT_BACKEND_CAP_BSPLINE (its caps 0x%x): it was "
                           "built before [fit] basis = bspline existed; "
                           "rebuild it, or set [fit] basis = gauss",
                           f->be->name, (unsigned)f->be->ops->caps);
    if (!rc)
        rc = setup(f);
    /* a pool per batch: its threads start in microseconds, a batch takes
     * milliseconds at least */
    int nt = f->o->driver_threads < 0 ? f->host->nthreads
                                      : f->o->driver_threads;
    if (!rc && nt > 1 && f->nact > 1)
        rc = rvfit_pool_create(nt, &f->pool, f->err);
    for (size_t s = 0; s < f->b->nspec && rc == RVFIT_OK; s++) {
        memset(&f->res[s], 0, sizeof f->res[s]);
        if (f->b->flags[s] & RVFIT_SPEC_BAD)
            fit_result_bad(f, &f->res[s], s);
    }
    return rc;
}

int fit_end(fit_ctx *f, int rc)
{
    const rvfit_batch *b = f->b;
    if (rc == RVFIT_OK && f->models)
        models_unfitted(f);
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK && f->npts; s++)
        f->res[s].npoints = f->npts[s];
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK; s++)
        f->res[s].warn |= fit_result_prep_warn(b->flags[s]);
    f->prof->spectra += b->nspec;
    teardown(f);
    return rc;
}

int rvfit_fit_batch(rvfit_backend *be, const rvfit_library *lib,
                    const rvfit_batch *b, const rvfit_fit_opts *o,
                    rvfit_result *res, float *const *models,
                    rvfit_profile *prof, const rvfit_host *host,
                    rvfit_err *err)
{
    fit_ctx f = {.be = be, .lib = lib, .b = b, .o = o, .prof = prof,
                 .host = host, .err = err, .res = res, .models = models};
    int rc = fit_begin(&f);
    if (!rc)
        rc = fit_run_stages(&f, fit_stages, FIT_NSTAGES);
    return fit_end(&f, rc);
}
