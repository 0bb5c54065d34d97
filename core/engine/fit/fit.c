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

/* The stages, in order (architecture §4): each a few batched backend
 * calls for all spectra still being fitted. */
static const struct {
    int id; /* enum rvfit_stage_id */
    int (*run)(fit_ctx *f);
} stages[] = {
    {RVFIT_ST_INIT, fit_stage_init},       /* stage_init.c    */
    {RVFIT_ST_OPTIM, fit_stage_optim},     /* stage_optim.c   */
    {RVFIT_ST_VREFINE, fit_stage_vrefine}, /* stage_vrefine.c */
    {RVFIT_ST_HESSIAN, fit_stage_hessian}, /* stage_hessian.c */
    {RVFIT_ST_DIAG, fit_stage_diag},       /* stage_diag.c    */
};

static int run_stages(fit_ctx *f)
{
    int rc = RVFIT_OK;
    for (size_t k = 0; k < sizeof stages / sizeof *stages && !rc; k++) {
        double t0 = rvfit_now();
        f->cur_stage = stages[k].id;
        rc = stages[k].run(f);
        f->prof->seconds[stages[k].id] += rvfit_now() - t0;
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

int rvfit_fit_batch(rvfit_backend *be, const rvfit_library *lib,
                    const rvfit_batch *b, const rvfit_fit_opts *o,
                    rvfit_result *res, float *const *models,
                    rvfit_profile *prof, const rvfit_host *host,
                    rvfit_err *err)
{
    fit_ctx f = {.be = be, .lib = lib, .b = b, .o = o, .prof = prof,
                 .host = host, .err = err, .res = res, .models = models};
    if (o->interp && o->interp->host_stencils)
        f.hs = o->interp;
    int rc = rvfit_interp_backend_check(f.hs, be->ops->caps, be->name, err);
    if (!rc)
        rc = setup(&f);
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK; s++) {
        memset(&res[s], 0, sizeof res[s]);
        if (b->flags[s] & RVFIT_SPEC_BAD)
            fit_result_bad(&f, &res[s], s);
    }
    if (rc == RVFIT_OK && f.nact > 0)
        rc = run_stages(&f);
    if (rc == RVFIT_OK && models)
        models_unfitted(&f);
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK && f.npts; s++)
        res[s].npoints = f.npts[s];
    for (size_t s = 0; s < b->nspec && rc == RVFIT_OK; s++)
        res[s].warn |= fit_result_prep_warn(b->flags[s]);
    prof->spectra += b->nspec;
    teardown(&f);
    return rc;
}
