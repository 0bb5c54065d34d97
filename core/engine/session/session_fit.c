/* session_fit.c — what a session does with its loaded batch: the
 * backend's -2 ln L at the caller's points, the fit of every spectrum and
 * its RVTAB columns (rvfit/session.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

#define SESS_CHUNK 4096 /* points per backend call */

static int need_loaded(const rvfit_session *s, rvfit_err *err)
{
    return s->loaded ? RVFIT_OK
                     : rvfit_err_set(err, RVFIT_ERR_INVALID,
                                     "session: no batch loaded");
}

/* Points [k0, k0+n) of the caller's arrays, parameters scaled. */
static int make_points(const rvfit_session *s, size_t k0, size_t n,
                       const uint32_t *spec, const double *param,
                       const double *v, const double *vsini, rvfit_point *p,
                       rvfit_err *err)
{
    int np = s->lib.nparam;
    for (size_t i = 0; i < n; i++) {
        size_t k = k0 + i;
        if (spec[k] >= s->nspec)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "point %zu: "
                                 "spectrum %u of %zu", k, spec[k], s->nspec);
        if (!isfinite(v[k]) || !isfinite(vsini[k]) || vsini[k] < 0)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "point %zu: v %g, "
                                 "vsini %g (finite, vsini >= 0)", k, v[k],
                                 vsini[k]);
        memset(&p[i], 0, sizeof p[i]);
        p[i].spec = spec[k];
        p[i].v = v[k];
        p[i].vsini = vsini[k];
        for (int j = 0; j < np; j++) {
            double x = param[k * (size_t)np + (size_t)j];
            p[i].theta[j] = rvfit_axis_scale(&s->lib.axis[j], x);
            if (!isfinite(p[i].theta[j]))
                return rvfit_err_set(err, RVFIT_ERR_INVALID, "point %zu: "
                                     "%s = %g", k, s->lib.axis[j].name, x);
        }
    }
    return RVFIT_OK;
}

int rvfit_session_chisq(rvfit_session *s, size_t n, const uint32_t *spec,
                        const double *param, const double *v,
                        const double *vsini, double *m2lnl, double *chisq,
                        rvfit_err *err)
{
    int rc = need_loaded(s, err);
    if (rc || n == 0)
        return rc;
    size_t cap = n < SESS_CHUNK ? n : SESS_CHUNK;
    rvfit_point *p = malloc(cap * sizeof *p);
    if (!p)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "session: %zu points",
                             cap);
    for (size_t k = 0; k < n && !rc; k += cap) {
        size_t m = n - k < cap ? n - k : cap;
        rc = make_points(s, k, m, spec, param, v, vsini, p, err);
        rvfit_chisq_out out = {m2lnl + k,
                               chisq ? chisq + k * (size_t)s->narm : NULL};
        const rvfit_stencils *st = NULL;
        if (!rc)
            rc = rvfit_stencil_table(&s->interp, m, p, &s->sbuf, &st, err);
        if (!rc &&
            (rc = s->be.ops->chisq(s->be.state, m, p, st, &out, err)))
            rvfit_err_prefix(err, "backend '%s': chisq(%zu points)",
                             s->be.name, m);
    }
    free(p);
    return rc;
}

/* Whether the clip stage rejected any pixel of the last fit (and so left
 * the backend's batch with them at ivar 0). */
static int clipped(const rvfit_session *s)
{
    for (size_t i = 0; i < s->nspec; i++)
        for (int a = 0; a < s->narm; a++)
            if (s->res[i].nclip[a])
                return 1;
    return 0;
}

int rvfit_session_fit(rvfit_session *s, int models, rvfit_err *err)
{
    int rc = need_loaded(s, err);
    if (rc)
        return rc;
    s->fitted = 0;
    free(s->res);
    s->res = calloc(s->nspec, sizeof *s->res);
    int ok = s->res != NULL;
    for (int a = 0; a < s->narm; a++) {
        free(s->models[a]);
        s->models[a] = NULL;
        if (models && ok) {
            s->models[a] = malloc(s->nspec * s->b.arm[a].npix *
                                  sizeof(float));
            ok = s->models[a] != NULL;
        }
    }
    if (!ok)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "session: results of "
                             "%zu spectra", s->nspec);
    rc = rvfit_fit_batch(&s->be, &s->lib, &s->b, &s->fo, s->res,
                         models ? s->models : NULL, &s->prof, &s->host, err);
    /* The clip stage leaves its rejections in the backend's batch: later
     * chisq calls evaluate the spectra as loaded. */
    if (rc == RVFIT_OK && clipped(s)) {
        rc = s->be.ops->load_batch(s->be.state, &s->b, &s->fo.model, err);
        if (rc)
            rvfit_err_prefix(err, "backend '%s': load_batch", s->be.name);
    }
    s->fitted = rc == RVFIT_OK;
    return rc;
}

int rvfit_session_ncol(const rvfit_session *s)
{
    return s->fitted ? s->cols.n : 0;
}

static int need_col(const rvfit_session *s, int c, rvfit_err *err)
{
    if (!s->fitted)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: no fit");
    if (c < 0 || c >= s->cols.n)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: column %d "
                             "of %d", c, s->cols.n);
    return RVFIT_OK;
}

int rvfit_session_col(const rvfit_session *s, int c, char *name, char *unit,
                      size_t n, char *type, rvfit_err *err)
{
    int rc = need_col(s, c, err);
    if (rc)
        return rc;
    const out_col *k = &s->cols.col[c];
    snprintf(name, n, "%s", k->name);
    snprintf(unit, n, "%s", k->qty);
    *type = k->form[0];
    return RVFIT_OK;
}

int rvfit_session_col_values(const rvfit_session *s, int c, double *out,
                             rvfit_err *err)
{
    int rc = need_col(s, c, err);
    for (size_t i = 0; i < s->nspec && !rc; i++)
        out[i] = out_value(&s->cols.col[c], &s->res[i]);
    return rc;
}

int rvfit_session_model(const rvfit_session *s, int a, float *out,
                        rvfit_err *err)
{
    if (!s->fitted || a < 0 || a >= s->narm || !s->models[a])
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: no models "
                             "of arm %d (fit with models first)", a);
    memcpy(out, s->models[a], s->nspec * s->b.arm[a].npix * sizeof *out);
    return RVFIT_OK;
}
