/* Closed-form checks of rvfit-indep's own physics: the Voigt profile, the
 * rotation kernel, the Gram-Charlier LSF and its resolution matrix, the
 * relativistic Doppler shift measured on output pixels, the S/N and inverse
 * variance of the simulated data, and the parameter response of the
 * model spectra. */
#include "mock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what, double got, double want)
{
    printf("%s %-58s got %.8g want %.8g\n", ok ? "ok  " : "FAIL", what, got,
           want);
    failures += !ok;
}

static void check_close(const char *what, double got, double want,
                        double tol)
{
    check(fabs(got - want) <= tol, what, got, want);
}

/* ---- Voigt ---------------------------------------------------------------- */

/* H(a, v) by direct quadrature of the convolution integral. */
static double voigt_quad(double a, double v)
{
    double s = 0.0, h = 1e-3;
    for (double t = -9.0; t <= 9.0; t += h)
        s += exp(-t * t) * a / (IND_PI * ((v - t) * (v - t) + a * a)) * h;
    return s;
}

static void test_voigt(void)
{
    double worst = 0.0;
    for (double v = -6.0; v <= 6.0; v += 0.01)
        worst = fmax(worst, fabs(ind_voigt_h(0.0, v) - exp(-v * v)));
    check(worst < 2e-4, "Voigt a=0 equals the Gaussian exp(-v^2)", worst, 0);
    double a = 40.0;
    worst = 0.0;
    for (double v = -200.0; v <= 200.0; v += 0.5) {
        double l = a / (IND_SQRTPI * (a * a + v * v));
        worst = fmax(worst, fabs(ind_voigt_h(a, v) / l - 1.0));
    }
    check(worst < 2e-3, "Voigt a=40 equals the Lorentzian (rel.)", worst, 0);
    worst = 0.0;
    static const double as[] = {0.05, 0.5, 2.0};
    for (int i = 0; i < 3; i++)
        for (double v = 0.0; v <= 5.0; v += 0.25) {
            double q = voigt_quad(as[i], v);
            worst = fmax(worst, fabs(ind_voigt_h(as[i], v) - q) / q);
        }
    check(worst < 1e-3, "Voigt equals the convolution integral (rel.)", worst,
          0);
    static const double an[] = {0.0, 1e-3, 0.01, 0.1, 1.0, 10.0};
    for (int i = 0; i < 6; i++) {
        double V = 400.0, h = 2e-3, s = 0.0;
        for (double v = -V + 0.5 * h; v < V; v += h)
            s += ind_voigt_h(an[i], v) * h;
        s = s / IND_SQRTPI + 2.0 * an[i] / (IND_PI * V); /* Lorentz tails */
        char what[96];
        snprintf(what, sizeof what, "Voigt H(a=%g) integrates to sqrt(pi)",
                 an[i]);
        check_close(what, s, 1.0, 3e-4);
    }
    double s = 0.0, h = 1e-4;
    for (double dl = -30.0; dl < 30.0; dl += h)
        s += ind_voigt_profile(dl + 0.5 * h, 0.05, 0.003) * h;
    s += 2.0 * 0.003 / (IND_PI * 30.0);
    check_close("Voigt profile (A^-1) has unit area", s, 1.0, 3e-4);
}

/* ---- rotation ----------------------------------------------------------- */

static void test_rotation(void)
{
    static const double eps[] = {0.0, 0.6, 1.0};
    for (int i = 0; i < 3; i++) {
        double e = eps[i], s0 = 0.0, s2 = 0.0;
        int m = 200000;
        double dphi = IND_PI / m;
        for (int q = 0; q < m; q++) {
            double phi = -0.5 * IND_PI + (q + 0.5) * dphi, x = sin(phi);
            double g = ind_rot_kernel(x, e) * cos(phi) * dphi;
            s0 += g;
            s2 += g * x * x;
        }
        double m2 = ((1.0 - e) / 4.0 + 2.0 * e / 15.0) / (1.0 - e / 3.0);
        char what[96];
        snprintf(what, sizeof what, "rotation kernel eps=%.1f integrates to 1",
                 e);
        check_close(what, s0, 1.0, 1e-8);
        snprintf(what, sizeof what, "rotation kernel eps=%.1f second moment", e);
        check_close(what, s2, m2, 1e-8);
    }
    double w[512];
    int half;
    double dlnl = 3e-6;
    static const double vs[] = {0.5, 10.0, 60.0};
    for (int i = 0; i < 3; i++) {
        ind_rot_weights(vs[i], 0.6, dlnl, w, 255, &half);
        double s0 = 0.0, s1 = 0.0, s2 = 0.0;
        for (int j = -half; j <= half; j++) {
            s0 += w[j + half];
            s1 += j * w[j + half];
            s2 += (double)j * j * w[j + half];
        }
        /* a piecewise-linear signal sees sum_m m^2 hat(u - m) =
         * u^2 + f (1 - f), f = frac(u): integrate that against the kernel
         * independently of the weights' own quadrature */
        double r = vs[i] / IND_C_KMS / dlnl, want = 0.0;
        int nq = 2000000;
        for (int q = 0; q < nq; q++) {
            double x = -1.0 + (q + 0.5) * 2.0 / nq, u = r * x;
            double f = u - floor(u);
            want += ind_rot_kernel(x, 0.6) * (u * u + f * (1.0 - f)) * 2.0 / nq;
        }
        char what[96];
        snprintf(what, sizeof what, "rotation weights vsini=%g sum to 1", vs[i]);
        check_close(what, s0, 1.0, 1e-12);
        snprintf(what, sizeof what, "rotation weights vsini=%g symmetric", vs[i]);
        check_close(what, s1, 0.0, 1e-9);
        snprintf(what, sizeof what,
                 "rotation weights vsini=%g variance", vs[i]);
        check_close(what, s2, want, 1e-4 * want);
    }
    ind_rot_weights(0.0, 0.6, dlnl, w, 255, &half);
    check(w[half] == 1.0 && half == 1 && w[0] == 0.0 && w[2] == 0.0,
          "vsini = 0 gives the identity", w[half], 1.0);
}

/* ---- LSF and resolution matrix ------------------------------------------- */

static void test_lsf(void)
{
    double s = 0.7, h3 = 0.05, h4 = 0.04, m[5] = {0};
    double du = 1e-4;
    for (double u = -12.0 * s; u < 12.0 * s; u += du) {
        double x = u + 0.5 * du, l = ind_lsf(x, s, h3, h4) * du;
        for (int k = 0; k < 5; k++)
            m[k] += l * pow(x, k);
    }
    check_close("Gauss-Hermite LSF area", m[0], 1.0, 1e-9);
    check_close("Gauss-Hermite LSF mean", m[1], 0.0, 1e-9);
    check_close("Gauss-Hermite LSF variance = s^2", m[2], s * s, 1e-9);
    check_close("Gauss-Hermite LSF skewness = sqrt6 h3",
                m[3] / pow(s, 3), sqrt(6.0) * h3, 1e-7);
    check_close("Gauss-Hermite LSF excess kurtosis = sqrt24 h4",
                m[4] / pow(s, 4) - 3.0, sqrt(24.0) * h4, 1e-7);
    /* closed-form CDF against quadrature of the density */
    double c = 0.0, worst = 0.0;
    for (double y = -10.0; y < 3.0; y += 1e-4) {
        c += ind_lsf((y + 0.5e-4) * s, s, h3, h4) * 1e-4 * s;
        worst = fmax(worst, fabs(c - ind_lsf_cdf(y + 1e-4, h3, h4)));
    }
    check(worst < 1e-8, "LSF CDF in closed form equals quadrature", worst, 0);
    /* resolution row: source pixel i + d at u in [(-d-1/2), (-d+1/2)] dpix */
    double row[IND_NDIAG], dpix = 0.8, sum = 0.0;
    ind_lsf_row(s, h3, h4, dpix, row);
    worst = 0.0;
    for (int d = -5; d <= 5; d++) {
        double q = 0.0, lo = (-d - 0.5) * dpix, h = dpix / 20000.0;
        for (int k = 0; k < 20000; k++)
            q += ind_lsf(lo + (k + 0.5) * h, s, h3, h4) * h;
        worst = fmax(worst, fabs(q - row[d + 5]));
        sum += row[d + 5];
    }
    check(worst < 1e-9, "resolution row = LSF integrated over pixels", worst, 0);
    check_close("resolution row sums to 1", sum, 1.0, 1e-7);
}

static void test_arm_rows(void)
{
    double w1 = 0.0;
    /* the DESI arms: every row (edges included) sums to 1; the centre row has
     * the moments of the LSF seen through pixel rounding (Sheppard): mean 0,
     * variance (s/dpix)^2 + 1/12, third moment -sqrt6 h3 (s/dpix)^3 (minus:
     * the row runs over source pixels, the LSF over detector - source) */
    const ind_arm *arms = ind_desi_arms();
    for (int a = 0; a < IND_NARM; a++) {
        size_t n = arms[a].n, i0 = n / 2;
        float *res = malloc(IND_NDIAG * n * sizeof *res);
        ind_fibre fb = {1.04, 0.02, 1.0};
        ind_arm_resolution(&arms[a], &fb, res);
        double wr = 0.0, r1 = 0.0, r2 = 0.0, r3 = 0.0;
        for (size_t i = 0; i < n; i++) {
            double rs = 0.0;
            for (int d = -5; d <= 5; d++) {
                long j = (long)i + d;
                if (j < 0 || j >= (long)n)
                    continue;
                double r = res[(size_t)(5 - d) * n + (size_t)j]; /* R[i][j] */
                rs += r;
                if (i == i0) {
                    r1 += d * r;
                    r2 += d * d * r;
                    r3 += d * d * d * r;
                }
            }
            wr = fmax(wr, fabs(rs - 1.0));
        }
        double sg, hh3, hh4;
        ind_arm_lsf(&arms[a], i0, &fb, &sg, &hh3, &hh4);
        double sp = sg / arms[a].step;
        char what[96];
        snprintf(what, sizeof what, "%s arm: all resolution rows sum to 1",
                 arms[a].name);
        check(wr < 2e-6, what, wr, 0);
        snprintf(what, sizeof what, "%s arm centre row: mean", arms[a].name);
        check_close(what, r1, 0.0, 1e-5);
        snprintf(what, sizeof what, "%s arm centre row: variance",
                 arms[a].name);
        check_close(what, r2, sp * sp + 1.0 / 12.0, 1e-4);
        snprintf(what, sizeof what, "%s arm centre row: third moment",
                 arms[a].name);
        check_close(what, r3, -sqrt(6.0) * hh3 * sp * sp * sp, 2e-4);
        w1 = fmax(w1, sg);
        free(res);
    }
    check(w1 > 0.6 && w1 < 0.9, "LSF sigma is DESI-like (A)", w1, 0.75);
}

/* ---- Doppler on output pixels --------------------------------------------- */

typedef struct { double lam0, sig, depth; } gline;

static void gauss_source(void *ctx, const ind_hgrid *rest, double *flux,
                         double *work)
{
    const gline *g = ctx;
    (void)work;
    for (size_t k = 0; k < rest->n; k++) {
        double q = (rest->lam[k] - g->lam0) / g->sig;
        flux[k] = 1.0 - g->depth * exp(-0.5 * q * q);
    }
}

static double line_centroid(double v, const ind_arm *arm, const ind_hgrid *g,
                            double *work, double want)
{
    gline src = {6000.0, 0.3, 0.5};
    size_t n = arm->n;
    double *hi = malloc(g->n * sizeof *hi), *cum = malloc(g->n * sizeof *cum);
    double *pix = malloc(n * sizeof *pix);
    double *scr = malloc(ind_arm_observe_scratch(arm) * sizeof *scr);
    ind_hires_observed(g, v, 5.0, gauss_source, &src, hi, work);
    ind_cumulate(g, hi, cum);
    ind_fibre fb = {1.0, 0.03, 1.0};
    ind_arm_observe(arm, &fb, g, hi, cum, pix, scr);
    double s0 = 0.0, s1 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double l = ind_arm_lam(arm, i);
        /* the pixel's width: constant in a linear arm, ~ lambda in a log
         * arm */
        double dl = ind_arm_lam_at(arm, (double)i + 0.5) -
                    ind_arm_lam_at(arm, (double)i - 0.5);
        if (fabs(l - want) < 12.0) {
            s0 += (1.0 - pix[i]) * dl;
            s1 += (1.0 - pix[i]) * l * dl;
        }
    }
    free(hi);
    free(cum);
    free(pix);
    free(scr);
    return s1 / s0;
}

/* The written matrix is the kernel the data were made with, and for a
 * spectrum smooth on the pixel scale R applied to pixel means reproduces the
 * detector output (up to the extra pixel box of that convention). */
static void test_matrix_vs_data(void)
{
    const ind_arm *arm = &ind_desi_arms()[1];
    size_t n = arm->n;
    float *res = malloc(IND_NDIAG * n * sizeof *res);
    ind_fibre fb = {0.95, -0.01, 1.0};
    ind_arm_resolution(arm, &fb, res);
    double worst = 0.0;
    for (size_t i = 5; i + 5 < n; i++) {
        double s, h3, h4;
        ind_arm_lsf(arm, i, &fb, &s, &h3, &h4);
        for (int d = -5; d <= 5; d++) {
            double k = arm->step * ind_pixel_kernel(-d * arm->step, s, h3, h4,
                                                    arm->step);
            worst = fmax(worst, fabs(res[(size_t)(5 - d) * n + i + d] - k));
        }
    }
    check(worst < 2e-7, "R[i][i+d] = dpix K_i(-d dpix), the data's kernel",
          worst, 0);
    ind_hgrid g;
    ind_err e;
    ind_hgrid_make(&g, arm->lo - 10.0, arm->lo + arm->step * n + 10.0, 3e-6,
                   &e);
    double *f = malloc(g.n * sizeof *f), *cum = malloc(g.n * sizeof *cum);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *c = malloc(n * sizeof *c);
    double *scr = malloc(ind_arm_observe_scratch(arm) * sizeof *scr);
    for (size_t k = 0; k < g.n; k++) {
        double q = (g.lam[k] - 6700.0) / 4.0;
        f[k] = (1.0 + 1e-4 * (g.lam[k] - 6700.0)) * (1.0 - 0.3 * exp(-0.5 * q * q));
    }
    ind_cumulate(&g, f, cum);
    ind_arm_observe(arm, &fb, &g, f, cum, a, scr);
    ind_arm_bin(arm, &g, f, cum, b);
    ind_arm_apply(arm, res, b, c);
    worst = 0.0;
    for (size_t i = 6; i + 6 < n; i++)
        worst = fmax(worst, fabs(a[i] - c[i]));
    check(worst < 1e-3, "smooth spectrum: detector output = R (pixel means)",
          worst, 0);
    free(res);
    free(f);
    free(cum);
    free(a);
    free(b);
    free(c);
    free(scr);
    ind_hgrid_free(&g);
}

/* Lines shifted by +450, -300, +37 km/s seen on arm (tag names it in the
 * report) over the grid lo-hi: centroid at the relativistic wavelength;
 * classical: the classical 1 + v/c must be rejected at +450. */
static void doppler_on(const ind_arm *arm, const char *tag, double lo,
                       double hi, int classical)
{
    ind_hgrid g;
    ind_err e;
    if (ind_hgrid_make(&g, lo, hi, 3e-6, &e)) {
        check(0, e.msg, 0, 0);
        return;
    }
    double *work = malloc(4 * g.n * sizeof *work);
    static const double vs[] = {450.0, -300.0, 37.0};
    for (int k = 0; k < 3; k++) {
        double b = vs[k] / IND_C_KMS;
        double rel = 6000.0 * sqrt((1.0 + b) / (1.0 - b));
        double cls = 6000.0 * (1.0 + b);
        double c = line_centroid(vs[k], arm, &g, work, rel);
        char what[96];
        snprintf(what, sizeof what, "%sv=%+.0f km/s: centroid on pixels (A)",
                 tag, vs[k]);
        check_close(what, c, rel, 5e-4);
        if (k == 0 && classical) {
            check(fabs(c - cls) > 4e-3,
                  "v=+450: classical 1+v/c is rejected (|diff| A)",
                  fabs(c - cls), 6000.0 * b * b / 2);
        }
    }
    free(work);
    ind_hgrid_free(&g);
}

static void test_doppler(void)
{
    /* an arm around 6000 A with a skewed LSF (h3 != 0: its mean is still 0,
     * so the centroid must follow the relativistic formula exactly); the
     * width hardly varies along this short arm, since a width gradient
     * shifts centroids by d(sigma^2)/d(lambda) */
    ind_arm arm = {"T", 5950.0, 0.8, 126, 0.68, 0.002, 0.0, 0.02, 0.03,
                   0.05, -0.02, 6000.0, 1000.0, 0, 5.5, 20};
    doppler_on(&arm, "", 5930.0, 6070.0, 1);
}

/* The same on an arm of pixels uniform in ln lambda with a Gaussian LSF
 * of R = 7500, as the MRS arms (ind_mrs_arms): the kernel acts in ln
 * lambda there. */
static void test_doppler_log(void)
{
    double dln = 8.13e-6 * IND_LN10;
    ind_arm arm = {"L", log(5950.0), dln, 898, 1.0 / (7500 * 2.3548), 0.0,
                   0.0, 0, 0, 0, 0, 6000.0, 1000.0, 1, 20.0, 8};
    doppler_on(&arm, "log arm, ", 5900.0, 6100.0, 0);
}

/* ---- S/N and inverse variance of whole stars -------------------------------- */

typedef struct {
    float *buf;
    int32_t *mbuf;
    ind_obs o;
} obs_buf;

static void obs_alloc(obs_buf *b)
{
    const ind_arm *arms = ind_desi_arms();
    size_t np = 0;
    for (int a = 0; a < IND_NARM; a++)
        np += arms[a].n;
    b->buf = malloc(np * (2 + IND_NDIAG) * sizeof(float));
    b->mbuf = malloc(np * sizeof(int32_t));
    float *p = b->buf;
    int32_t *m = b->mbuf;
    for (int a = 0; a < IND_NARM; a++) {
        b->o.flux[a] = p;
        b->o.ivar[a] = p + arms[a].n;
        b->o.res[a] = p + 2 * arms[a].n;
        b->o.mask[a] = m;
        p += (2 + IND_NDIAG) * arms[a].n;
        m += arms[a].n;
    }
}

static void test_snr(void)
{
    ind_linelist ll;
    ind_obsctx c;
    ind_work w;
    ind_err e;
    if (ind_linelist_build(1, &ll, &e) || ind_obsctx_make(&c, &ll, 10.0, &e) ||
        ind_work_make(&w, &c, &e)) {
        check(0, e.msg, 0, 0);
        return;
    }
    const ind_arm *arms = ind_desi_arms();
    ind_mockopts mo = {3, 60, 500, 10, 0};
    obs_buf b1, b2;
    obs_alloc(&b1);
    obs_alloc(&b2);
    static const double want[] = {4.0, 12.0, 45.0};
    size_t np = 0;
    for (int a = 0; a < IND_NARM; a++)
        np += arms[a].n;
    double *x = malloc(np * sizeof *x), *y = malloc(3 * np * sizeof *y);
    size_t q = 0;
    for (int k = 0; k < 3; k++) {
        ind_draw d;
        ind_draw_star(5, (size_t)k, ind_preset_find("small"), &mo, &d);
        d.snr = want[k];
        ind_observe(&c, &d, 5, (size_t)k, &b1.o, &w, &e);
        ind_observe(&c, &d, 6, (size_t)k, &b2.o, &w, &e); /* other noise */
        size_t m = 0;
        for (int a = 0; a < IND_NARM; a++)
            for (size_t i = 0; i < arms[a].n; i++) {
                if (b1.o.mask[a][i] || b2.o.mask[a][i])
                    continue;
                double iv = b1.o.ivar[a][i], df = b1.o.flux[a][i] -
                                                  b2.o.flux[a][i];
                x[m++] = b1.o.flux[a][i] * sqrt(iv);
                y[q++] = df * df * iv / 2.0; /* chi^2_1 if ivar is true */
            }
        char what[96];
        snprintf(what, sizeof what, "S/N %.0f: noiseless median S/N", want[k]);
        check_close(what, b1.o.snr_true, want[k], 1e-3 * want[k]);
        snprintf(what, sizeof what, "S/N %.0f: median flux*sqrt(ivar)", want[k]);
        double med = ind_median(x, m);
        check_close(what, med, want[k], 0.04 * want[k]);
    }
    /* the median of chi^2_1 is 0.454936; its sampling error over ~24000
     * pixels is ~1.5 % */
    check_close("IVAR is the true inverse variance (3 stars)",
                ind_median(y, q) / 0.454936, 1.0, 0.05);
    free(x);
    free(y);
    free(b1.buf);
    free(b1.mbuf);
    free(b2.buf);
    free(b2.mbuf);
    ind_work_free(&w);
    ind_obsctx_free(&c);
    ind_linelist_free(&ll);
}

/* ---- the model spectra respond to the parameters -------------------------- */

static double ew(const ind_hgrid *g, const double *f, double a, double b)
{
    double s = 0.0;
    for (size_t k = 1; k < g->n; k++)
        if (g->lam[k] >= a && g->lam[k] <= b)
            s += (1.0 - f[k]) * (g->lam[k] - g->lam[k - 1]);
    return s;
}

static double ew_at(const ind_linelist *ll, const ind_hgrid *g, double *f,
                    double *w, ind_star s, double a, double b)
{
    ind_spectrum_norm(ll, &s, g, f, w);
    return ew(g, f, a, b);
}

static void test_response(void)
{
    ind_linelist ll;
    ind_hgrid g;
    ind_err e;
    if (ind_linelist_build(1, &ll, &e) ||
        ind_hgrid_make(&g, 3450, 10000, 1e-5, &e)) {
        check(0, e.msg, 0, 0);
        return;
    }
    double *f = malloc(g.n * sizeof *f), *f2 = malloc(g.n * sizeof *f2);
    double *w = malloc(2 * g.n * sizeof *w);
    ind_star s = {5000, 3.0, -0.5, 0.2};
    double h5 = ew_at(&ll, &g, f, w, s, 6544, 6584);
    s.teff = 6500;
    double h6 = ew_at(&ll, &g, f, w, s, 6544, 6584);
    check(h6 > 1.5 * h5, "H alpha EW grows with Teff (5000 -> 6500 K)", h6, h5);
    s.teff = 4100;
    double t4 = ew_at(&ll, &g, f, w, s, 7055, 7155);
    s.teff = 5000;
    double t5 = ew_at(&ll, &g, f, w, s, 7055, 7155);
    check(t4 > 3.0 * t5, "TiO band grows toward cool Teff (5000 -> 4100 K)",
          t4, t5);
    double m0 = ew_at(&ll, &g, f, w, s, 5000, 5100);
    s.feh = 0.0;
    double m1 = ew_at(&ll, &g, f, w, s, 5000, 5100);
    check(m1 > 1.3 * m0, "metal lines grow with [Fe/H] (-0.5 -> 0)", m1, m0);
    double a0 = ew_at(&ll, &g, f, w, s, 5160, 5195);
    s.alpha = 0.4;
    double a1 = ew_at(&ll, &g, f, w, s, 5160, 5195);
    check(a1 > 1.1 * a0, "Mg b grows with [alpha/Fe] (0.2 -> 0.4)", a1, a0);
    s.logg = 4.8;
    double n1 = ew_at(&ll, &g, f, w, s, 5880, 5910);
    s.logg = 2.0;
    double n0 = ew_at(&ll, &g, f, w, s, 5880, 5910);
    check(n1 > 1.2 * n0, "Na D wings grow with gravity (2.0 -> 4.8)", n1, n0);
    /* smooth in the parameters: a 0.5 K step moves no pixel by > 1e-3 */
    ind_star p = {5321.0, 3.3, -0.7, 0.1}, q = p;
    q.teff += 0.5;
    ind_spectrum_norm(&ll, &p, &g, f, w);
    ind_spectrum_norm(&ll, &q, &g, f2, w);
    double dmax = 0.0;
    for (size_t k = 0; k < g.n; k++)
        dmax = fmax(dmax, fabs(f[k] - f2[k]));
    check(dmax < 1e-3 && dmax > 0, "spectrum is smooth in Teff (0.5 K step)",
          dmax, 0);
    free(f);
    free(f2);
    free(w);
    ind_hgrid_free(&g);
    ind_linelist_free(&ll);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_median(void)
{
    ind_rng r;
    ind_rng_seed(&r, 3, 0, 0);
    int bad = 0;
    for (size_t n = 1; n < 60; n++) {
        double x[64], y[64];
        for (size_t i = 0; i < n; i++)
            x[i] = y[i] = floor(10.0 * ind_rng_uniform(&r)); /* with ties */
        qsort(y, n, sizeof *y, cmp);
        double want = n % 2 ? y[n / 2] : 0.5 * (y[n / 2 - 1] + y[n / 2]);
        bad += ind_median(x, n) != want;
    }
    check(bad == 0, "median equals the sorted median (n = 1..59)", bad, 0);
}

/* Keplerian velocities (epochs): a circular orbit is a sinusoid; at
 * periastron (true anomaly 0) v = gamma + K (1 + e) cos(omega), at
 * apastron (pi) gamma - K (1 - e) cos(omega); the time average over a
 * period is gamma for any eccentricity (the star's mean motion along the
 * line of sight vanishes). */
static void test_kepler(void)
{
    double g = 12.5, k = 30.0, p = 17.3, t0 = 59001.2, w = 0.7;
    for (int i = 0; i < 10; i++) {
        double t = t0 + 3.1 * i;
        check_close("circular orbit", ind_kepler_rv(g, k, p, 0, w, t0, t),
                    g + k * cos(2 * IND_PI * (t - t0) / p + w), 1e-12);
    }
    for (double e = 0.1; e < 0.95; e += 0.2) {
        check_close("periastron", ind_kepler_rv(g, k, p, e, w, t0, t0 + p),
                    g + k * (1 + e) * cos(w), 1e-9);
        check_close("apastron", ind_kepler_rv(g, k, p, e, w, t0, t0 + p / 2),
                    g - k * (1 - e) * cos(w), 1e-9);
        double s = 0;
        int n = 200000;
        for (int i = 0; i < n; i++)
            s += ind_kepler_rv(g, k, p, e, w, t0, t0 + p * (i + 0.5) / n);
        check_close("mean over a period", s / n, g, 1e-6);
    }
}

int main(void)
{
    test_kepler();
    test_voigt();
    test_rotation();
    test_lsf();
    test_arm_rows();
    test_matrix_vs_data();
    test_doppler();
    test_doppler_log();
    test_median();
    test_response();
    test_snr();
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
