/* test_fit_known.c — known answers of the fit driver (rvfit_fit_batch)
 * through an analytic backend: -2 ln L is a closed-form function of
 * (v, vsini, theta) chosen per spectrum, so the uncertainties, velocity
 * moments and warning bits have exact answers that owe nothing to the
 * code under test:
 *
 *  - theta part: a quadratic (theta - t0)^T C^-1 (theta - t0), so -ln L
 *    has Hessian C^-1 and the marginal errors are sqrt(C_ii) (not the
 *    conditional 1/sqrt((C^-1)_ii), which differs when axes correlate);
 *  - velocity part: a Gaussian, or a Gamma(k, s) density in v, whose
 *    moments about the mode are closed-form (skewness and kurtosis > 0);
 *  - vsini: a Gaussian;
 *  - the per-arm chi^2 and its continuum-only value are set directly;
 *  - a kink on an [Fe/H] node, as a piecewise multilinear template makes
 *    one: K |x| (x = [Fe/H] - node) adds no curvature inside a cell, so
 *    the errors are still sqrt(C_ii); with - A x^2 too, neither side is
 *    positive definite and the central difference across the node,
 *    C^-1 + (K/h - A) on the [Fe/H] diagonal, is the answer.
 *
 * Each RVS_WARN bit is then triggered by one constructed spectrum, next to
 * a clean control that must carry no bit. */
#include <string.h>

#include "anabe.h"
#include "rvfit/fit.h"
#include "rvfit/library.h"
#include "testutil.h"

#define NP 3    /* TEFF (log10 axis), LOGG, FEH */
#define NPIX 40 /* pixels of the one arm        */

typedef struct kcase {
    int vgamma;          /* 0: Gaussian in v; 1: Gamma density in v      */
    double v0, sv;       /* Gaussian centre and sigma, km/s              */
    double ga, gk, gs;   /* Gamma: origin, shape, scale (km/s)           */
    double t0[NP];       /* theta minimum, scaled coordinates            */
    double cinv[NP * NP];/* inverse covariance of theta                  */
    double vs0, svs;     /* vsini centre and sigma (svs 0: no vsini term)*/
    double dchi_c;       /* CHISQ_C_TOT - CHISQ_TOT                      */
    double kink, conc;   /* K |x| - A x^2, x = [Fe/H] - t0[2] (0: none)  */
} kcase;

typedef struct kstate {
    const kcase *cs;
    const rvfit_library *lib;
} kstate;

static double m2lnl_v(const kcase *c, double v)
{
    if (!c->vgamma)
        return pow((v - c->v0) / c->sv, 2);
    double x = (v - c->ga) / c->gs;
    if (x <= 0)
        return 1e4 + 100 * x * x; /* zero density, still sloped */
    return -2 * ((c->gk - 1) * log(x) - x);
}

static double m2lnl(const void *ctx, const rvfit_point *p)
{
    const kstate *s = ctx;
    const kcase *c = &s->cs[p->spec];
    double d[NP], q = 0, pen = 0;
    size_t corner[64];
    double w[64];
    rvfit_library_stencil(s->lib, p->theta, corner, w, &pen);
    for (int i = 0; i < NP; i++)
        d[i] = p->theta[i] - c->t0[i];
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < NP; j++)
            q += d[i] * c->cinv[i * NP + j] * d[j];
    double vs = c->svs > 0 ? pow((p->vsini - c->vs0) / c->svs, 2) : 0;
    double k = c->kink * fabs(d[2]) - c->conc * d[2] * d[2];
    return m2lnl_v(c, p->v) + q + vs + k + pen;
}

/* The arm's chisq; a continuum-only model is dchi_c worse. */
static double chisq(const void *ctx, const rvfit_point *p, double m)
{
    const kstate *s = ctx;
    return 500 + m +
           (p->flags & RVFIT_PT_CONTINUUM ? s->cs[p->spec].dchi_c : 0);
}

/* Covariance with sigmas s[] and correlation r between LOGG and FEH. */
static void set_cov(kcase *c, const double *s, double r, double *cov)
{
    memset(cov, 0, NP * NP * sizeof *cov);
    for (int i = 0; i < NP; i++)
        cov[i * NP + i] = s[i] * s[i];
    cov[1 * NP + 2] = cov[2 * NP + 1] = r * s[1] * s[2];
    /* Closed-form inverse: TEFF is independent, the 2x2 block inverts
     * analytically. */
    memset(c->cinv, 0, sizeof c->cinv);
    c->cinv[0] = 1 / cov[0];
    double det = cov[4] * cov[8] - cov[5] * cov[7];
    c->cinv[4] = cov[8] / det, c->cinv[8] = cov[4] / det;
    c->cinv[5] = c->cinv[7] = -cov[5] / det;
}

enum { C_CLEAN, C_GAMMA, C_CHISQ, C_RV, C_RVERR, C_PARAM, C_VSINI, C_BAD,
       C_HESS, C_KINK, C_KINKNEG, C_WIDE, NCASE };

/* The finite-difference step on [Fe/H] (fit/stage_hessian.c: 0.25 of the node
 * spacing 0.5) and the node the kink cases sit on. */
#define FEH_H 0.125
#define FEH_NODE -0.5

static void make_cases(kcase *cs, double *cov)
{
    const double sig[NP] = {0.004, 0.15, 0.08};
    for (int i = 0; i < NCASE; i++) {
        kcase *c = &cs[i];
        memset(c, 0, sizeof *c);
        c->v0 = 37.3, c->sv = 2.0;
        c->t0[0] = log10(5230.0), c->t0[1] = 3.3, c->t0[2] = -0.7;
        c->vs0 = 40, c->svs = 5;
        c->dchi_c = 1000;
        set_cov(c, sig, 0.9, cov);
    }
    cs[C_GAMMA].vgamma = 1;
    cs[C_GAMMA].ga = -50, cs[C_GAMMA].gk = 9, cs[C_GAMMA].gs = 3;
    cs[C_CHISQ].dchi_c = 20;
    cs[C_RV].v0 = 998;
    cs[C_RVERR].sv = 200;
    cs[C_PARAM].t0[2] = 1.2; /* [Fe/H] minimum beyond the last node */
    cs[C_VSINI].vs0 = 150;
    /* No dependence on [Fe/H]: a flat direction, singular Hessian. */
    for (int i = 0; i < NP; i++)
        cs[C_HESS].cinv[i * NP + 2] = cs[C_HESS].cinv[2 * NP + i] = 0;
    /* Minimum pinned on the node by the kink; with A = 400 the one-sided
     * [Fe/H] curvature, 1/C_22 - A/2 in -ln L, is < 0 on both sides,
     * while K = 400 keeps the node the minimum over the whole axis. */
    cs[C_KINK].t0[2] = cs[C_KINKNEG].t0[2] = FEH_NODE;
    cs[C_KINK].kink = cs[C_KINKNEG].kink = 400;
    cs[C_KINKNEG].conc = 400;
    /* [Fe/H] constrained to 5 dex on a 2.5 dex grid. */
    const double wide[NP] = {0.004, 0.15, 5.0};
    double scratch[NP * NP];
    set_cov(&cs[C_WIDE], wide, 0.0, scratch);
}

/* Flat spectra with one masked pixel; C_BAD flagged by the reader. */
static void make_batch(rvfit_batch *b)
{
    tu_ana_batch(b, NCASE, NPIX);
    for (size_t s = 0; s < NCASE; s++) {
        b->arm[0].ivar[s * NPIX + 7] = 0;
        b->flags[s] = s == C_BAD ? RVFIT_SPEC_BAD : 0;
    }
}

/* Moments about the mode of Gamma(k, s): the mean lies s above the mode,
 * and shifting the central moments (k s^2, 2k s^3, (3k^2 + 6k) s^4) by it
 * gives E[y^2] = (k+1) s^2, E[y^3] = (5k+1) s^3, E[y^4] = (3k^2+20k+1) s^4. */
static void gamma_truth(double k, double s, double *sig, double *skew,
                        double *kurt)
{
    *sig = s * sqrt(k + 1);
    *skew = (5 * k + 1) / pow(k + 1, 1.5);
    *kurt = (3 * k * k + 20 * k + 1) / ((k + 1) * (k + 1)) - 3;
}

static void check_errors(const rvfit_result *r, const double *cov,
                         const char *what)
{
    /* Central differences are exact on a quadratic: only rounding. */
    double te = r->param[0] * log(10.0) * sqrt(cov[0]);
    CHECK_MSG(fabs(r->param_err[0] / te - 1) < 1e-6,
              "%s: TEFF_ERR %g, expected %g", what, r->param_err[0], te);
    CHECK_MSG(fabs(r->param_err[1] / sqrt(cov[4]) - 1) < 1e-6,
              "%s: LOGG_ERR %g, expected %g", what, r->param_err[1],
              sqrt(cov[4]));
    CHECK_MSG(fabs(r->param_err[2] / sqrt(cov[8]) - 1) < 1e-6,
              "%s: FEH_ERR %g, expected %g", what, r->param_err[2],
              sqrt(cov[8]));
}

static void check_results(const rvfit_result *res, const kcase *cs,
                          const double *cov)
{
    const rvfit_result *r = &res[C_CLEAN];
    printf("clean: v %.4f err %.4f skew %.4f kurt %.4f vsini %.3f "
           "Teff %.2f+-%.3f logg %.4f+-%.5f feh %.4f+-%.5f warn %u\n",
           r->vrad, r->vrad_err, r->vrad_skew, r->vrad_kurt, r->vsini,
           r->param[0], r->param_err[0], r->param[1], r->param_err[1],
           r->param[2], r->param_err[2], r->warn);
    CHECK_MSG(r->warn == 0, "clean case: RVS_WARN %u", r->warn);
    check_errors(r, cov, "clean");
    /* Gaussian posterior in v: sigma and zero skewness / excess kurtosis
     * (41-point scan over +-6 sigma: sums agree with the integrals to
     * well below the tolerances). */
    CHECK_NEAR(r->vrad, cs[C_CLEAN].v0, 0.01);
    CHECK_NEAR(r->vrad_err, cs[C_CLEAN].sv, 0.01 * cs[C_CLEAN].sv);
    CHECK_NEAR(r->vrad_skew, 0, 0.03);
    CHECK_NEAR(r->vrad_kurt, 0, 0.05);
    CHECK_NEAR(r->vsini, cs[C_CLEAN].vs0, 0.5);
    CHECK_NEAR(r->param[1], cs[C_CLEAN].t0[1], 0.02);
    CHECK_NEAR(r->param[2], cs[C_CLEAN].t0[2], 0.02);
    CHECK_NEAR(r->chisq_c_tot - r->chisq_tot, cs[C_CLEAN].dchi_c, 1e-6);

    /* Gamma posterior: moments about its mode, closed form.  VRAD is the
     * parabolic vertex of the scan, off the mode by a fraction of a step.
     * The moments come from the last scan only, which vrefine accepts once
     * it spans >= 3 sigma each side: the tails beyond are cut, which
     * lowers sigma by up to 1.3 % and the excess kurtosis by up to 0.11
     * (a Gaussian cut at +-3 sigma); here the scan spans +-5.3 sigma and
     * the kurtosis comes out 0.08 low.  The tolerances allow for that,
     * while a sign flip, a missing -3 or a wrong power cannot pass. */
    const kcase *g = &cs[C_GAMMA];
    double sig, skew, kurt, mode = g->ga + (g->gk - 1) * g->gs;
    gamma_truth(g->gk, g->gs, &sig, &skew, &kurt);
    r = &res[C_GAMMA];
    printf("gamma: v %.4f (mode %.4f) err %.4f (%.4f) skew %.4f (%.4f) "
           "kurt %.4f (%.4f) warn %u\n", r->vrad, mode, r->vrad_err, sig,
           r->vrad_skew, skew, r->vrad_kurt, kurt, r->warn);
    CHECK_NEAR(r->vrad, mode, 0.05 * sig);
    CHECK_NEAR(r->vrad_err, sig, 0.02 * sig);
    CHECK_NEAR(r->vrad_skew, skew, 0.05);
    CHECK_NEAR(r->vrad_kurt, kurt, 0.12);
    CHECK_MSG(r->warn == 0, "gamma case: RVS_WARN %u", r->warn);

    /* One bit per constructed case. */
    CHECK_MSG(res[C_CHISQ].warn == RVFIT_WARN_CHISQ, "CHISQ case: %u",
              res[C_CHISQ].warn);
    CHECK_MSG(res[C_RV].warn == RVFIT_WARN_RV, "RV case: %u (v %.2f)",
              res[C_RV].warn, res[C_RV].vrad);
    CHECK_MSG(res[C_RVERR].warn == RVFIT_WARN_RVERR,
              "RVERR case: %u (err %.1f)", res[C_RVERR].warn,
              res[C_RVERR].vrad_err);
    CHECK_MSG(res[C_PARAM].warn == RVFIT_WARN_PARAM,
              "PARAM case: %u (feh %.3f)", res[C_PARAM].warn,
              res[C_PARAM].param[2]);
    /* the out-of-grid penalty lets it overshoot the node a little */
    CHECK_NEAR(res[C_PARAM].param[2], 0.5, 0.01);
    CHECK_MSG(res[C_VSINI].warn == RVFIT_WARN_VSINI,
              "VSINI case: %u (vsini %.1f)", res[C_VSINI].warn,
              res[C_VSINI].vsini);
    CHECK_MSG(res[C_BAD].warn == RVFIT_WARN_BAD_SPECTRUM &&
                  isnan(res[C_BAD].vrad) && isnan(res[C_BAD].param_err[0]),
              "BAD case: %u", res[C_BAD].warn);
    r = &res[C_HESS];
    CHECK_MSG(r->warn & RVFIT_WARN_BAD_HESSIAN, "HESSIAN case: %u", r->warn);
    /* Not positive definite: the errors are those of H plus the precision
     * of a uniform distribution over each axis' range, 12 / range^2
     * (fit/stage_hessian.c): TEFF and LOGG a little under their conditional
     * errors (the [Fe/H] row of H is 0), the flat [Fe/H] range/sqrt(12)
     * of its 2.5 dex.  (Before: 1/sqrt(H_ii), NaN on the flat axis.) */
    const kcase *c = &cs[C_HESS];
    double p0 = 12 / pow(log10(7000.0 / 4000.0), 2), p1 = 12 / 16.0;
    double te = r->param[0] * log(10.0) / sqrt(c->cinv[0] + p0);
    double le = 1 / sqrt(c->cinv[4] + p1), fe = 2.5 / sqrt(12.0);
    CHECK_MSG(fabs(r->param_err[0] / te - 1) < 1e-6 &&
                  fabs(r->param_err[1] / le - 1) < 1e-6 &&
                  fabs(r->param_err[2] / fe - 1) < 1e-6,
              "HESSIAN case: errors %g %g %g, expected %g %g %g",
              r->param_err[0], r->param_err[1], r->param_err[2], te, le, fe);
}

/* An error wider than the grid: capped at the rms distance from the fit
 * to a truth uniform over the axis' range (fit/stage_hessian.c), while a
 * well-constrained axis keeps its closed-form error. */
static void check_wide(const rvfit_result *r)
{
    double cap = sqrt(6.25 / 12 + pow(r->param[2] + 0.75, 2));
    printf("wide: feh %.4f+-%.4f (cap %.4f), logg err %.5f\n", r->param[2],
           r->param_err[2], cap, r->param_err[1]);
    CHECK_MSG(fabs(r->param_err[2] / cap - 1) < 1e-9,
              "WIDE case: FEH_ERR %g, cap %g", r->param_err[2], cap);
    CHECK_MSG(fabs(r->param_err[1] / 0.15 - 1) < 1e-6,
              "WIDE case: LOGG_ERR %g", r->param_err[1]);
}

/* A fit held on the [Fe/H] node by the kink K |x| of -2 ln L (slope jump
 * s = K of -ln L) could come from any smooth minimum within s C_22 / 2 of
 * it: ERR_INTERP = s C_b2 / sqrt(12) on every axis b (C the covariance),
 * LOGG capped at the grid's rms distance.  No term where the kink does
 * not hold the fit: the retry across the node (its Hessian has the kink
 * already), a fit beside the node (WIDE), away from it (CLEAN). */
static void check_pinning(const rvfit_result *r0, const rvfit_result *r,
                          const double *cov)
{
    const rvfit_result *k = &r[C_KINK];
    double s = 400, fe = s * cov[8] / sqrt(12.0);
    double lg = fmin(s * cov[5] / sqrt(12.0),
                     sqrt(16 / 12.0 + pow(k->param[1] - 3, 2)));
    printf("pinned: ERR_INTERP %g %g %g (expected 0 %g %g)\n",
           k->param_err_interp[0], k->param_err_interp[1],
           k->param_err_interp[2], lg, fe);
    CHECK_MSG(!(k->param_err_interp[0] > 1e-9) && /* TEFF: C_02 = 0 */
                  fabs(k->param_err_interp[1] / lg - 1) < 1e-6 &&
                  fabs(k->param_err_interp[2] / fe - 1) < 1e-6,
              "KINK case: ERR_INTERP %g %g %g", k->param_err_interp[0],
              k->param_err_interp[1], k->param_err_interp[2]);
    CHECK_MSG(fabs(k->param_err[2] - hypot(r0[C_KINK].param_err[2], fe)) <
                  1e-9,
              "KINK case: FEH_ERR %g", k->param_err[2]);
    const int none[3] = {C_KINKNEG, C_WIDE, C_CLEAN};
    for (int c = 0; c < 3; c++)
        for (int a = 0; a < NP; a++)
            CHECK_MSG(isnan(r[none[c]].param_err_interp[a]),
                      "case %d axis %d: ERR_INTERP %g", none[c], a,
                      r[none[c]].param_err_interp[a]);
}

/* Marginal [Fe/H] error of C^-1 with delta added to its [Fe/H] diagonal
 * (TEFF is independent; the LOGG-FEH block inverts in closed form). */
static double feh_err_shifted(const double *cinv, double delta)
{
    double a = cinv[4], b = cinv[5], d = cinv[8] + delta;
    return sqrt(a / (a * d - b * b));
}

static void check_kinks(const rvfit_result *res, const kcase *cs,
                        const double *cov)
{
    const rvfit_result *r = &res[C_KINK];
    printf("kink: feh %.6f+-%.5f warn %u; across: feh %.6f+-%.5f warn %u\n",
           r->param[2], r->param_err[2], r->warn, res[C_KINKNEG].param[2],
           res[C_KINKNEG].param_err[2], res[C_KINKNEG].warn);
    CHECK_NEAR(r->param[2], FEH_NODE, 1e-3);
    CHECK_MSG(r->warn == 0, "KINK case: RVS_WARN %u", r->warn);
    /* across the node it would be feh_err_shifted(cinv, K/h): 5x less */
    check_errors(r, cov, "kink");
    r = &res[C_KINKNEG];
    const kcase *c = &cs[C_KINKNEG];
    double e = feh_err_shifted(c->cinv, c->kink / FEH_H - c->conc);
    CHECK_NEAR(r->param[2], FEH_NODE, 1e-3);
    CHECK_MSG(r->warn == 0, "KINKNEG case: RVS_WARN %u", r->warn);
    CHECK_MSG(fabs(r->param_err[2] / e - 1) < 1e-6,
              "KINKNEG case: FEH_ERR %g, expected %g", r->param_err[2], e);
}

/* scale_errors: CHISQ_RED = CHISQ_TOT / (pixels with ivar > 0 - npoly
 * continuum terms per arm - v - vsini - 3 free axes), and every error is
 * the unscaled one times sqrt(CHISQ_RED), nothing else changes. */
static void check_scaled(const rvfit_result *r0, const rvfit_result *r1,
                         int npoly)
{
    for (int s = 0; s < NCASE; s++) {
        if (s == C_BAD) {
            CHECK(isnan(r1[s].chisq_red));
            continue;
        }
        double dof = (NPIX - 1) - npoly - (1 + 1 + NP);
        double red = r0[s].chisq_tot / dof, k = sqrt(red);
        CHECK_MSG(r0[s].npix_tot == NPIX - 1, "case %d: NPIX_TOT %ld", s,
                  r0[s].npix_tot);
        CHECK_MSG(fabs(r0[s].chisq_red / red - 1) < 1e-12,
                  "case %d: CHISQ_RED %g, expected %g", s, r0[s].chisq_red,
                  red);
        CHECK(r1[s].chisq_red == r0[s].chisq_red && red > 4);
        CHECK_MSG(fabs(r1[s].vrad_err / (k * r0[s].vrad_err) - 1) < 1e-12,
                  "case %d: scaled VRAD_ERR %g vs %g x %g", s,
                  r1[s].vrad_err, r0[s].vrad_err, k);
        for (int i = 0; i < NP; i++)
            if (!isnan(r0[s].param_err[i]))
                CHECK_MSG(fabs(r1[s].param_err[i] /
                                   (k * r0[s].param_err[i]) - 1) < 1e-12,
                          "case %d axis %d: scaled error %g vs %g x %g", s,
                          i, r1[s].param_err[i], r0[s].param_err[i], k);
        CHECK(r1[s].vrad == r0[s].vrad && r1[s].param[0] == r0[s].param[0]);
        CHECK(r1[s].vrad_skew == r0[s].vrad_skew);
    }
}

int main(void)
{
    static uint8_t exists[TU_ANA_NMODEL];
    rvfit_library lib;
    tu_ana_library(&lib, exists);
    kcase cs[NCASE];
    double cov[NP * NP];
    make_cases(cs, cov);
    kstate st = {cs, &lib};
    tu_ana ana = {.m2lnl = m2lnl, .chisq = chisq, .ctx = &st};
    tu_ana_init(&ana);
    rvfit_batch b;
    make_batch(&b);
    rvfit_fit_opts o = {.vmin = -1000, .vmax = 1000, .ccf_vstep = 20,
                        .vsini_max = 500, .fit_vsini = 1, .max_iter = 2000,
                        .model = {1, RVFIT_BASIS_CHEB}};
    rvfit_result res[NCASE], res1[NCASE];
    rvfit_profile prof;
    rvfit_err err = {0};
    int rc = tu_ana_fit(&ana, &lib, &b, &o, res, &prof, &err);
    CHECK_MSG(rc == RVFIT_OK, "fit: %s", err.msg);
    if (rc == RVFIT_OK) {
        check_results(res, cs, cov), check_kinks(res, cs, cov);
        check_wide(&res[C_WIDE]);
    }
    o.scale_errors = 1;
    ana.points = ana.calls = 0;
    rc = tu_ana_fit(&ana, &lib, &b, &o, res1, &prof, &err);
    CHECK_MSG(rc == RVFIT_OK, "fit with scale_errors: %s", err.msg);
    if (rc == RVFIT_OK)
        check_scaled(res, res1, o.model.npoly);
    /* interp_errors: no templates here (no stencil tables), only the pinning
     * part of the interpolation term (fit/err_pin.c). */
    o.scale_errors = 0, o.interp_errors = 1;
    rc = tu_ana_fit(&ana, &lib, &b, &o, res1, &prof, &err);
    CHECK_MSG(rc == RVFIT_OK, "fit with interp_errors: %s", err.msg);
    if (rc == RVFIT_OK)
        check_pinning(res, res1, cov);
    /* a backend without RVFIT_BACKEND_CAP_BSPLINE (this one) is refused
     * the B-spline basis before any point is evaluated */
    o.interp_errors = 0, o.model.npoly = 8, o.model.basis = RVFIT_BASIS_BSPLINE;
    ana.points = 0;
    rc = tu_ana_fit(&ana, &lib, &b, &o, res1, &prof, &err);
    CHECK_MSG(rc == RVFIT_ERR_CONFIG && ana.points == 0 &&
                  strstr(err.msg, "RVFIT_BACKEND_CAP_BSPLINE"),
              "bspline on a backend without the cap: rc %d, %s", rc, err.msg);
    rvfit_batch_free(&b);
    return tu_finish("test_fit_known");
}
