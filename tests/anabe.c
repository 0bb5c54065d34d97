/* anabe.c — the analytic backend of tests/anabe.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anabe.h"
#include "testutil.h"

static double point_m2lnl(const tu_ana *a, const rvfit_point *p)
{
    return a->m2lnl(a->ctx, p);
}

static int ana_chisq(void *st, size_t n, const rvfit_point *pts,
                     const rvfit_stencils *sc, rvfit_chisq_out *out,
                     rvfit_err *err)
{
    tu_ana *a = st;
    (void)sc, (void)err; /* theta only: it declares RVFIT_BACKEND_CAP_GRID */
    for (size_t i = 0; i < n; i++) {
        out->m2lnl[i] = point_m2lnl(a, &pts[i]);
        if (out->chisq)
            out->chisq[i] = a->chisq ? a->chisq(a->ctx, &pts[i],
                                                out->m2lnl[i])
                                     : 500 + out->m2lnl[i];
    }
    a->points += n, a->calls++;
    return RVFIT_OK;
}

static int ana_vscan(void *st, size_t nq, const rvfit_point *base,
                     const rvfit_stencils *sc, size_t nvel, const double *vel,
                     double *m, rvfit_err *err)
{
    tu_ana *a = st;
    (void)sc, (void)err;
    for (size_t q = 0; q < nq; q++)
        for (size_t k = 0; k < nvel; k++) {
            rvfit_point p = base[q];
            p.v = vel[q * nvel + k];
            m[q * nvel + k] = point_m2lnl(a, &p);
        }
    a->points += nq * nvel, a->calls++;
    return RVFIT_OK;
}

/* The fit driver's models are not under test here. */
static int ana_models(void *st, size_t n, const rvfit_point *pts,
                      const rvfit_stencils *sc, float *const *model,
                      float *const *cont, rvfit_err *err)
{
    (void)st, (void)n, (void)pts, (void)sc, (void)model, (void)cont;
    (void)err;
    return RVFIT_OK;
}

static void ana_counters(void *st, rvfit_counters *c)
{
    tu_ana *a = st;
    c->points = a->points, c->calls = a->calls, c->seconds = 0;
}

void tu_ana_init(tu_ana *a)
{
    a->points = a->calls = 0;
    memset(&a->ops, 0, sizeof a->ops);
    a->ops.size = sizeof a->ops;
    a->ops.version = RVFIT_BACKEND_OPS_VERSION;
    a->ops.caps = RVFIT_BACKEND_CAP_GRID;
    a->ops.chisq = ana_chisq;
    a->ops.vscan = ana_vscan;
    a->ops.models = ana_models;
    a->ops.counters = ana_counters;
    memset(&a->be, 0, sizeof a->be);
    a->be.state = a, a->be.ops = &a->ops;
    snprintf(a->be.name, sizeof a->be.name, "analytic");
}

void tu_ana_library(rvfit_library *L, uint8_t *exists)
{
    memset(L, 0, sizeof *L);
    L->nparam = TU_ANA_NP;
    const char *names[TU_ANA_NP] = {"TEFF", "LOGG", "FEH"};
    const int nn[TU_ANA_NP] = {7, 5, 6};
    for (int i = 0; i < TU_ANA_NP; i++) {
        rvfit_axis *ax = &L->axis[i];
        snprintf(ax->name, sizeof ax->name, "%s", names[i]);
        ax->scale = i == 0 ? RVFIT_SCALE_LOG10 : RVFIT_SCALE_LINEAR;
        ax->nnode = nn[i];
        for (int k = 0; k < nn[i]; k++)
            ax->node[k] = i == 0   ? log10(4000.0 + 500.0 * k)
                          : i == 1 ? 1.0 + k
                                   : -2.0 + 0.5 * k;
    }
    L->nmodel = TU_ANA_NMODEL;
    memset(exists, 1, TU_ANA_NMODEL);
    L->exists = exists;
}

int tu_ana_fit(tu_ana *a, const rvfit_library *L, const rvfit_batch *b,
               const rvfit_fit_opts *o, rvfit_result *res,
               rvfit_profile *prof, rvfit_err *err)
{
    memset(prof, 0, sizeof *prof);
    rvfit_host host = tu_host(1);
    return rvfit_fit_batch(&a->be, L, b, o, res, NULL, prof, &host, err);
}

void tu_ana_batch(rvfit_batch *b, size_t nspec, size_t npix)
{
    rvfit_arm_info ai = {"B", npix, RVFIT_RES_NONE, 0, 0};
    rvfit_err e = {0};
    if (rvfit_batch_alloc(b, 1, &ai, nspec, &e)) {
        fprintf(stderr, "batch: %s\n", e.msg);
        exit(1);
    }
    b->nspec = nspec;
    for (size_t i = 0; i < npix; i++)
        b->arm[0].wave[i] = 5000 + (double)i;
    for (size_t s = 0; s < nspec; s++) {
        for (size_t i = 0; i < npix; i++)
            b->arm[0].flux[s * npix + i] = 1,
            b->arm[0].ivar[s * npix + i] = 1;
        b->snr[s] = 30;
        b->flags[s] = 0;
        b->index[s] = s;
    }
}
