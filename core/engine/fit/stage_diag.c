/* stage_diag.c — stage 5 of the fit: chi^2 per arm at the optimum, the
 * continuum-only chi^2, the best-fit models, and every result finished
 * (errors scaled, warning bits; fit_result.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"

/* The backend wrote the model of point i (spectrum xact[i]) at row i of
 * each arm: move it to row xact[i] (xact increases, so moving from the
 * last row down never overwrites a row still to be moved) and give the
 * spectra not fitted here NaN. */
static void models_to_rows(const fit_ctx *f)
{
    const rvfit_batch *b = f->b;
    size_t n = f->nxact;
    for (int a = 0; a < b->narm; a++) {
        size_t np = b->arm[a].npix;
        float *M = f->models[a];
        for (size_t i = n; i-- > 0;)
            if (f->xact[i] != i)
                memcpy(M + f->xact[i] * np, M + i * np, np * sizeof *M);
        for (size_t s = 0, i = 0; s < b->nspec; s++) {
            if (i < n && f->xact[i] == s) {
                i++;
                continue;
            }
            for (size_t k = 0; k < np; k++)
                M[s * np + k] = NAN;
        }
    }
}

/* chi^2 per arm at the optimum and continuum-only chi^2 into the results,
 * the best-fit models into f->models (NaN for spectra not fitted); the
 * nx points px go into the same chisq call, their -2 ln L into mx. */
int fit_diag_eval(fit_ctx *f, size_t nx, const rvfit_point *px, double *mx)
{
    rvfit_result *res = f->res;
    float *const *models = f->models;
    size_t n = f->nxact, npt = 2 * n + nx;
    int na = f->b->narm;
    rvfit_point *p = calloc(npt ? npt : 1, sizeof *p);
    double *m = malloc((npt ? npt : 1) * sizeof *m);
    double *ca = malloc((npt ? npt : 1) * (size_t)na * sizeof *ca);
    int rc = (!p || !m || !ca) ? rvfit_err_set(f->err, RVFIT_ERR_NOMEM,
                                               "fit: out of memory")
                               : RVFIT_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        p[i] = f->best[f->xact[i]];
        p[n + i] = p[i];
        p[n + i].flags |= RVFIT_PT_CONTINUUM;
    }
    if (!rc && nx)
        memcpy(p + 2 * n, px, nx * sizeof *p);
    if (!rc)
        rc = fit_chisq(f, npt, p, m, ca);
    if (!rc && nx)
        memcpy(mx, m + 2 * n, nx * sizeof *mx);
    for (size_t i = 0; i < n && !rc; i++) {
        rvfit_result *r = &res[f->xact[i]];
        r->m2lnl = m[i];
        r->chisq_tot = r->chisq_c_tot = 0;
        for (int a = 0; a < na; a++) {
            r->chisq[a] = ca[i * (size_t)na + a];
            r->chisq_c[a] = ca[(n + i) * (size_t)na + a];
            r->chisq_tot += r->chisq[a];
            r->chisq_c_tot += r->chisq_c[a];
        }
    }
    if (!rc && models && n)
        rc = fit_models(f, n, p, models, NULL);
    if (!rc && models)
        models_to_rows(f);
    free(p);
    free(m);
    free(ca);
    return rc;
}


/* Result i of xact (its pixel counts are a pass over the spectrum):
 * each its own, so on the driver's threads. */
static void finish_one(void *ctx, int tid, size_t i)
{
    const fit_ctx *f = ctx;
    (void)tid;
    fit_result_finish(f, &f->res[f->xact[i]], f->xact[i]);
}

int fit_stage_diag(fit_ctx *f)
{
    int rc = fit_diag_eval(f, 0, NULL, NULL);
    if (!rc)
        fit_for(f, f->nxact, finish_one, f);
    return rc;
}
