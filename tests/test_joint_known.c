/* test_joint_known.c — known answers of the joint fit (rvfit_fit_joint)
 * through the analytic backend (anabe.h): each spectrum's -2 ln L is a
 * closed-form sum of a Gaussian in v, a Gaussian in vsini and a
 * quadratic in theta with covariance C_k = C s_k^2 about its own centre
 * t0_k.  The exposures of an object then have, owing nothing to the code
 * under test:
 *   - shared theta: the precision-weighted mean of the t0_k, with
 *     covariance C / sum(1 / s_k^2) (errors its diagonal's roots);
 *   - shared vsini: the weighted mean of the vsini centres;
 *   - each exposure's VRAD and VRAD_ERR: its own Gaussian's centre and
 *     sigma (the velocity part is separable);
 *   - the constant velocity: the weighted mean of the centres, with error
 *     (sum 1/sigma^2)^-1/2; VRAD_CHISQ the chi^2 of the centres about it,
 *     VRAD_PVALUE its chi^2 tail (dof 2: exp(-chi^2/2));
 *   - an object of one usable spectrum gets the single fit's numbers,
 *     bitwise; one of none is a bad spectrum.
 * The joint fit also needs no more backend calls than the single fits of
 * the same spectra in one batch. */
#include <string.h>

#include "anabe.h"
#include "rvfit/joint.h"
#include "testutil.h"

#define NP TU_ANA_NP
#define NPIX 40
#define NSPEC 7 /* object A: rows 0-2, B: 3, C: 4-5 (5 bad), D: 6 (bad) */

typedef struct kcase {
    double v0, sv, vs0, svs, s; /* velocity, vsini and theta scale */
    double t0[NP];
} kcase;

static const double sig[NP] = {0.004, 0.15, 0.08}; /* C's diagonal roots */

static double m2lnl(const void *ctx, const rvfit_point *p)
{
    const kcase *c = &((const kcase *)ctx)[p->spec];
    double q = 0;
    for (int i = 0; i < NP; i++)
        q += pow((p->theta[i] - c->t0[i]) / (sig[i] * c->s), 2);
    return pow((p->v - c->v0) / c->sv, 2) +
           pow((p->vsini - c->vs0) / c->svs, 2) + q;
}

/* The arm's chisq; a continuum-only model is 1000 worse. */
static double chisq(const void *ctx, const rvfit_point *p, double m)
{
    (void)ctx;
    return 500 + m + (p->flags & RVFIT_PT_CONTINUUM ? 1000 : 0);
}

static void make_cases(kcase *cs)
{
    const double v0[NSPEC] = {31.0, 37.5, 33.2, -12.0, 80.0, 81.0, 5.0};
    const double sv[NSPEC] = {2.0, 3.0, 1.5, 2.5, 1.8, 1.8, 2.0};
    const double sc[NSPEC] = {1.0, 2.0, 1.5, 1.0, 1.2, 1.2, 1.0};
    for (int k = 0; k < NSPEC; k++) {
        kcase *c = &cs[k];
        c->v0 = v0[k], c->sv = sv[k], c->s = sc[k];
        c->vs0 = 30 + 5 * k, c->svs = 6 * sc[k];
        c->t0[0] = log10(5230.0 + 40 * k);
        c->t0[1] = 3.3 + 0.05 * k;
        c->t0[2] = -0.7 + 0.03 * k;
    }
}

/* Object A (rows 0-2): the weighted means and their errors. */
static void check_object_a(const kcase *cs, const rvfit_joint_result *J,
                           const rvfit_result *res)
{
    double w = 0, wt[NP] = {0}, wvs = 0, ws = 0, wv = 0, sw = 0;
    for (int k = 0; k < 3; k++) {
        double p = 1 / (cs[k].s * cs[k].s), q = 1 / pow(cs[k].svs, 2);
        w += p;
        for (int i = 0; i < NP; i++)
            wt[i] += p * cs[k].t0[i];
        wvs += q * cs[k].vs0, ws += q;
        wv += cs[k].v0 / pow(cs[k].sv, 2), sw += 1 / pow(cs[k].sv, 2);
    }
    const rvfit_result *r = &J->r;
    double teff = pow(10, wt[0] / w);
    double teff_err = teff * log(10.0) * sig[0] / sqrt(w);
    printf("A: teff %.3f (%.3f) +- %.4f (%.4f), logg %.5f (%.5f) +- %.5f, "
           "feh %.5f (%.5f), vsini %.3f (%.3f)\n", r->param[0], teff,
           r->param_err[0], teff_err, r->param[1], wt[1] / w,
           r->param_err[1], r->param[2], wt[2] / w, r->vsini, wvs / ws);
    CHECK_NEAR(r->param[0], teff, 0.5);
    CHECK_NEAR(r->param[1], wt[1] / w, 0.01);
    CHECK_NEAR(r->param[2], wt[2] / w, 0.01);
    CHECK_NEAR(r->vsini, wvs / ws, 0.3);
    /* central differences are exact on a quadratic: only rounding */
    CHECK_NEAR(r->param_err[0] / teff_err, 1, 1e-5);
    CHECK_NEAR(r->param_err[1] / (sig[1] / sqrt(w)), 1, 1e-5);
    CHECK_NEAR(r->param_err[2] / (sig[2] / sqrt(w)), 1, 1e-5);
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(res[k].vrad, cs[k].v0, 1e-3);
        CHECK_NEAR(res[k].vrad_err, cs[k].sv, 0.01 * cs[k].sv);
        CHECK_MSG(res[k].param[2] == r->param[2], "exposure %d: FEH %g, "
                  "the object's %g", k, res[k].param[2], r->param[2]);
    }
    double vbar = wv / sw, c2 = 0;
    for (int k = 0; k < 3; k++)
        c2 += pow((cs[k].v0 - vbar) / cs[k].sv, 2);
    printf("A: constant v %.4f (%.4f) +- %.4f (%.4f); chi2 %.4f (%.4f), "
           "p %.5f (%.5f), scatter %.4f, nepoch %d, warn %u\n", r->vrad,
           vbar, r->vrad_err, 1 / sqrt(sw), J->vrad_chisq, c2,
           J->vrad_pvalue, exp(-c2 / 2), J->vrad_scatter, J->nepoch,
           r->warn);
    CHECK_NEAR(r->vrad, vbar, 1e-3);
    CHECK_NEAR(r->vrad_err * sqrt(sw), 1, 1e-3);
    CHECK_NEAR(r->vrad_skew, 0, 1e-3);
    CHECK_NEAR(J->vrad_chisq, c2, 1e-3 * c2);
    CHECK_NEAR(J->vrad_pvalue, exp(-c2 / 2), 1e-3 * exp(-c2 / 2));
    double m = (cs[0].v0 + cs[1].v0 + cs[2].v0) / 3, ss = 0;
    for (int k = 0; k < 3; k++)
        ss += pow(cs[k].v0 - m, 2);
    CHECK_NEAR(J->vrad_scatter, sqrt(ss / 2), 1e-3);
    CHECK(J->nepoch == 3);
    CHECK_MSG(r->warn == 0, "object A: RVS_WARN %u", r->warn);
    /* sums over the exposures */
    CHECK_NEAR(r->chisq_tot, res[0].chisq_tot + res[1].chisq_tot +
                                 res[2].chisq_tot, 1e-9);
}

/* Field by field: every science output equal, bitwise. */
static void check_same(const rvfit_result *a, const rvfit_result *b,
                       const char *what)
{
    rvfit_result x = *a, y = *b;
    x.npoints = y.npoints = 0; /* joint vrefine probes the optimum too */
    CHECK_MSG(!memcmp(&x, &y, sizeof x), "%s: result differs from the "
              "single fit's (v %.17g / %.17g, feh %.17g / %.17g)", what,
              a->vrad, b->vrad, a->param[2], b->param[2]);
}

int main(void)
{
    rvfit_library L;
    uint8_t exists[TU_ANA_NMODEL];
    tu_ana_library(&L, exists);
    kcase cs[NSPEC];
    make_cases(cs);
    tu_ana a = {.m2lnl = m2lnl, .chisq = chisq, .ctx = cs};
    tu_ana_init(&a);
    rvfit_batch b;
    tu_ana_batch(&b, NSPEC, NPIX);
    b.flags[5] = b.flags[6] = RVFIT_SPEC_BAD;
    rvfit_fit_opts o;
    memset(&o, 0, sizeof o);
    o.vmin = -1000, o.vmax = 1000, o.ccf_vstep = 10, o.vsini_max = 500;
    o.fit_vsini = 1, o.max_iter = 400;
    o.model.npoly = 1, o.model.basis = RVFIT_BASIS_GAUSS;

    rvfit_result single[NSPEC], res[NSPEC];
    rvfit_joint_result J[4];
    rvfit_profile prof;
    rvfit_err err;
    rvfit_err_clear(&err);
    int rc = tu_ana_fit(&a, &L, &b, &o, single, &prof, &err);
    CHECK_MSG(rc == 0, "single fit: %s", err.msg);
    uint64_t calls_single = a.calls;

    const size_t off[5] = {0, 3, 4, 6, 7};
    rvfit_host host = tu_host(1);
    memset(&prof, 0, sizeof prof);
    a.calls = 0;
    rc = rvfit_fit_joint(&a.be, &L, &b, 4, off, &o, res, J, NULL, NULL,
                         &prof, &host, &err);
    CHECK_MSG(rc == 0, "joint fit: %s", err.msg);
    printf("backend calls: joint %llu, single %llu\n",
           (unsigned long long)a.calls, (unsigned long long)calls_single);
    CHECK(a.calls <= calls_single);
    if (rc == 0) {
        check_object_a(cs, &J[0], res);
        check_same(&J[1].r, &single[3], "one exposure (B)");
        check_same(&res[3], &single[3], "its exposure row");
        CHECK(J[1].nepoch == 1 && isnan(J[1].vrad_chisq) &&
              isnan(J[1].vrad_pvalue) && isnan(J[1].vrad_scatter));
        check_same(&J[2].r, &single[4], "one usable of two (C)");
        CHECK(J[2].nepoch == 1);
        CHECK(res[5].warn == RVFIT_WARN_BAD_SPECTRUM);
        CHECK_MSG(J[3].nepoch == 0 &&
                      J[3].r.warn == RVFIT_WARN_BAD_SPECTRUM &&
                      isnan(J[3].r.vrad) && isnan(J[3].r.param[0]),
                  "object D (no usable spectrum): nepoch %d warn %u",
                  J[3].nepoch, J[3].r.warn);
    }
    rvfit_batch_free(&b);
    return tu_finish("test_joint_known");
}
