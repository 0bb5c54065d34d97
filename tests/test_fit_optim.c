/* test_fit_optim.c — known optima of stage 2 (the Newton optimiser,
 * core/engine/fit/newton.c) through an analytic backend whose
 * -2 ln L is a closed-form function of (v, vsini, theta):
 *
 *  - CELL: a quadratic in theta with correlation 0.9 between LOGG and FEH,
 *    minimum inside a grid cell: found to rounding (a quadratic model is
 *    exact there);
 *  - KINK: the same plus S |FEH - node|, whose minimum sits on the node
 *    plane (the kink of multilinear interpolation): FEH exactly on the
 *    node, LOGG at its conditional optimum there;
 *  - EDGE: the quadratic's minimum beyond the last FEH node: FEH on the
 *    node, LOGG conditional;
 *  - ROT: -2 ln L rises linearly from vsini = 0 (as the discrete
 *    rotation kernel makes it on real spectra) but is lowest at 150 km/s;
 *  - SLOW: the same rise with no minimum beyond: vsini exactly 0.
 *
 * Points per spectrum are exact counts: a bound on the optimiser's keeps
 * a method that no longer converges (e.g. one that oscillates across a
 * kink until its iteration limit) from passing. */
#include <string.h>

#include "anabe.h"
#include "rvfit/fit.h"
#include "rvfit/library.h"
#include "testutil.h"

#define NP 3
#define NPIX 40
#define KINK_NODE (-0.5)
#define KINK_SLOPE 40.0

enum { C_CELL, C_KINK, C_EDGE, C_ROT, C_SLOW, NCASE };

typedef struct ocase {
    double t0[NP], cinv[NP * NP];
    double kink;        /* slope S of S |FEH - KINK_NODE|, or 0         */
    int vsini_kind;     /* 0: Gaussian at 40 +- 5; 1: rotator; 2: slow  */
} ocase;

/* Linear from 0 (slope 3 per km/s), and for the rotator a parabola with
 * its minimum -56 at 150 km/s, which is above 0 at vsini = 0. */
static double m2lnl_vsini(int kind, double vs)
{
    if (kind == 0)
        return pow((vs - 40) / 5, 2);
    double lin = 3 * vs, par = pow((vs - 150) / 20, 2) - 56;
    return kind == 1 && par < lin ? par : lin;
}

static double m2lnl(const void *ctx, const rvfit_point *p)
{
    const ocase *c = &((const ocase *)ctx)[p->spec];
    double d[NP], q = pow((p->v - 37.3) / 2.0, 2);
    for (int i = 0; i < NP; i++)
        d[i] = p->theta[i] - c->t0[i];
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < NP; j++)
            q += d[i] * c->cinv[i * NP + j] * d[j];
    return q + c->kink * fabs(p->theta[2] - KINK_NODE) +
           m2lnl_vsini(c->vsini_kind, p->vsini);
}

/* The arm's chisq; a continuum-only model is 1000 worse. */
static double chisq(const void *ctx, const rvfit_point *p, double m)
{
    (void)ctx;
    return 500 + m + (p->flags & RVFIT_PT_CONTINUUM ? 1000 : 0);
}

static void make_cases(ocase *cs)
{
    const double sig[NP] = {0.004, 0.15, 0.08}, r = 0.9;
    double det = 1 - r * r;
    for (int i = 0; i < NCASE; i++) {
        ocase *c = &cs[i];
        memset(c, 0, sizeof *c);
        c->t0[0] = log10(5230.0), c->t0[1] = 3.3, c->t0[2] = -0.7;
        c->cinv[0] = 1 / (sig[0] * sig[0]);
        c->cinv[4] = 1 / (sig[1] * sig[1] * det);
        c->cinv[8] = 1 / (sig[2] * sig[2] * det);
        c->cinv[5] = c->cinv[7] = -r / (sig[1] * sig[2] * det);
    }
    /* 0.1 node above the kink: the quadratic alone pulls FEH down with
     * slope 2 x 0.05 / 0.08^2 = 15.6 at the node, less than S. */
    cs[C_KINK].t0[2] = KINK_NODE + 0.05, cs[C_KINK].kink = KINK_SLOPE;
    cs[C_EDGE].t0[2] = 1.2;
    cs[C_ROT].vsini_kind = 1;
    cs[C_SLOW].vsini_kind = 2;
}

/* LOGG minimising the quadratic with FEH held at feh. */
static double logg_given(const ocase *c, double feh)
{
    return c->t0[1] - c->cinv[5] / c->cinv[4] * (feh - c->t0[2]);
}

static void check_case(const rvfit_result *r, const ocase *c, int which)
{
    printf("case %d: Teff %.4f logg %.6f feh %.6f vsini %.4f points %llu\n",
           which, r->param[0], r->param[1], r->param[2], r->vsini,
           (unsigned long long)r->npoints);
    double feh = which == C_KINK   ? KINK_NODE
                 : which == C_EDGE ? 0.5
                                   : c->t0[2];
    /* On a node or a bound: exactly there.  Inside a cell the quadratic
     * model is exact, so the optimum is found to rounding; with the kink
     * the method stops once its model predicts a decrease below 0.01 in
     * -2 ln L, i.e. within 0.1 sigma, so the other axes get 0.05 sigma. */
    double tl = which == C_KINK ? 0.05 * 0.15 : 1e-4;
    double tt = which == C_KINK ? 0.05 * 0.004 : 1e-6;
    CHECK_MSG(fabs(r->param[2] - feh) < 1e-6, "case %d: FEH %.9f, not %.9f",
              which, r->param[2], feh);
    CHECK_MSG(fabs(r->param[1] - logg_given(c, feh)) < tl,
              "case %d: LOGG %.6f, not %.6f", which, r->param[1],
              logg_given(c, feh));
    CHECK_MSG(fabs(log10(r->param[0]) - c->t0[0]) < tt,
              "case %d: TEFF %.3f, not %.3f", which, r->param[0],
              pow(10, c->t0[0]));
    double vs = c->vsini_kind == 1 ? 150 : c->vsini_kind == 2 ? 0 : 40;
    CHECK_MSG(fabs(r->vsini - vs) < (c->vsini_kind == 2 ? 1e-9 : 0.25),
              "case %d: vsini %.4f, not %g", which, r->vsini, vs);
}

int main(void)
{
    static uint8_t exists[TU_ANA_NMODEL];
    rvfit_library lib;
    tu_ana_library(&lib, exists);
    ocase cs[NCASE];
    make_cases(cs);
    tu_ana ana = {.m2lnl = m2lnl, .chisq = chisq, .ctx = cs};
    tu_ana_init(&ana);
    rvfit_batch b;
    tu_ana_batch(&b, NCASE, NPIX);
    rvfit_fit_opts o = {.vmin = -1000, .vmax = 1000, .ccf_vstep = 60,
                        .vsini_max = 500, .fit_vsini = 1, .max_iter = 400,
                        .model = {1, RVFIT_BASIS_CHEB}};
    rvfit_result res[NCASE];
    rvfit_profile prof;
    rvfit_err err = {0};
    int rc = tu_ana_fit(&ana, &lib, &b, &o, res, &prof, &err);
    CHECK_MSG(rc == RVFIT_OK, "fit: %s", err.msg);
    for (int c = 0; c < NCASE && rc == RVFIT_OK; c++)
        check_case(&res[c], &cs[c], c);
    /* About 30-60 points per case here; a method that fails to converge
     * spends its 40 models (over 200 points). */
    double per = (double)prof.points[RVFIT_ST_OPTIM] / NCASE;
    printf("optimize: %.1f points per spectrum\n", per);
    CHECK_MSG(per < 100, "optimize: %.1f points per spectrum", per);
    rvfit_batch_free(&b);
    return tu_finish("test_fit_optim");
}
