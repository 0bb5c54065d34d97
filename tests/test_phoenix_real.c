/* test_phoenix_real.c — the real PHOENIX-ACES-AGSS-COND-2011 HiRes files
 * of ../shared/data/phoenix (three models and the wavelength file; skips
 * with the reason when they are absent) through the template builder and
 * a fit.
 *
 *  - The files are what the reference says, read here with CFITSIO: the
 *    wavelength file float64 with UNIT = 'Angstrom', each model float32
 *    with BUNIT = 'erg/s/cm^2/cm' and an ABUNDANCES table in HDU 2, and
 *    its flux, integrated over lambda in cm, is sigma Teff^4 to within
 *    5% (Stefan-Boltzmann, cgs; measured 0.970-0.985: the files stop at
 *    5.5 um, where 1-2% of a 6000 K blackbody lies beyond; per Angstrom
 *    it would be 1e-8).
 *  - `rvfit templates --grid` for lamost (4800-6800 A) builds a library
 *    of the models present: axes TEFF {5800, 6000}, LOGG {4.0, 4.5}, FEH
 *    {-2, 0}, ALPHAFE {0}; 3 of the 8 nodes exist, at the files'
 *    parameters.  Multilinear interpolation drops the missing corners of
 *    a cell and renormalises (docs/template-library.md); simplex cannot
 *    triangulate three points in three dimensions.
 *  - Vacuum Angstrom: the template minima of H-alpha and Na D lie at the
 *    lines' vacuum wavelengths (NIST: 6564.61, 5891.58, 5897.56 A; in air
 *    1.6-1.8 A shorter).
 *  - The primary HDU, as photon flux: a library built with a constant
 *    0.4 A Gaussian (sigma_kms = 0) equals, at pixels spread over the
 *    arm, a brute-force convolution and pixel average of f*lambda of the
 *    file's primary image computed here (ratios to a reference pixel,
 *    which the per-model normalisation does not change).
 *  - A fit: LAMOST mock stars written by the plugin's mock writer, whose
 *    truth is a real model Doppler-shifted here (its photon flux averaged
 *    exactly over each truth sample; no code shared with the template
 *    builder): one per model at S/N 30-50 and 6000/4.0/0.0 again at S/N
 *    1000, fitted with the library: every |VRAD - true| < 4 VRAD_ERR.
 *    The stars sit on the corners of the 2x2x2 grid, so PARAM_WARN is
 *    expected (reported, not asserted). */
#include <fitsio.h>
#include <string.h>
#include <sys/stat.h>

#include "rvfit/library.h"
#include "rvfit/interp.h"
#include "rvfit/plugin.h"
#include "testutil.h"

#define NMODEL 3
#define NSTAR 4
#define C_KMS 299792.458
#define SIGMA_SB 5.670374419e-5 /* erg s^-1 cm^-2 K^-4 */
#define NWAVE 1569128L

static const char *const model_file[NMODEL] = {
    "Z-0.0/lte05800-4.50-0.0.PHOENIX-ACES-AGSS-COND-2011-HiRes.fits",
    "Z-0.0/lte06000-4.00-0.0.PHOENIX-ACES-AGSS-COND-2011-HiRes.fits",
    "Z-2.0/lte06000-4.00-2.0.PHOENIX-ACES-AGSS-COND-2011-HiRes.fits"};
static const double model_par[NMODEL][3] = {
    {5800, 4.5, 0.0}, {6000, 4.0, 0.0}, {6000, 4.0, -2.0}};
/* The model of each mock star: one per model, then 6000/4.0/0.0 again
 * almost without noise (S/N 1000). */
static const int star_model[NSTAR] = {0, 1, 2, 1};

static char grid[4200], dir[2048];
static double *wave; /* [NWAVE] the wavelength file, A */

/* Primary image of path into a malloc'ed double array of NWAVE values;
 * its BITPIX and string keyword `key` (may be NULL) returned. */
static double *read_image(const char *path, int *bitpix, const char *key,
                          char *val)
{
    fitsfile *fp = NULL;
    int st = 0, naxis = 0;
    long n = 0;
    double *v = malloc(NWAVE * sizeof *v);
    fits_open_file(&fp, path, READONLY, &st);
    fits_get_img_equivtype(fp, bitpix, &st);
    fits_get_img_dim(fp, &naxis, &st);
    fits_get_img_size(fp, 1, &n, &st);
    if (!st && naxis == 1 && n == NWAVE)
        fits_read_img(fp, TDOUBLE, 1, NWAVE, NULL, v, NULL, &st);
    else if (!st)
        st = -1;
    if (key && !st && fits_read_key(fp, TSTRING, key, val, NULL, &st))
        val[0] = '\0';
    int cs = 0;
    fits_close_file(fp, &cs);
    CHECK_MSG(st == 0, "%s: CFITSIO %d, %d axes of %ld", path, st, naxis, n);
    if (st) {
        free(v);
        return NULL;
    }
    return v;
}

static void model_path(char *out, size_t n, int m)
{
    snprintf(out, n, "%s/PHOENIX-ACES-AGSS-COND-2011/%s", grid,
             model_file[m]);
}

static int has_abundances(const char *path)
{
    fitsfile *fp = NULL;
    int st = 0, cs = 0;
    fits_open_file(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "ABUNDANCES", 0, &st);
    fits_close_file(fp, &cs);
    fits_clear_errmsg();
    return st == 0;
}

/* The files as the reference describes them. */
static void check_files(double *flux[NMODEL])
{
    char p[4600], unit[FLEN_VALUE] = "";
    int bitpix = 0;
    snprintf(p, sizeof p, "%s/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits", grid);
    wave = read_image(p, &bitpix, "UNIT", unit);
    CHECK(wave && bitpix == DOUBLE_IMG && !strcmp(unit, "Angstrom"));
    if (wave)
        CHECK_MSG(wave[0] >= 499.0 && wave[0] <= 501.0 &&
                      wave[NWAVE - 1] >= 54900 && wave[NWAVE - 1] <= 55001,
                  "%g - %g A", wave[0], wave[NWAVE - 1]);
    for (int m = 0; m < NMODEL; m++) {
        model_path(p, sizeof p, m);
        flux[m] = read_image(p, &bitpix, "BUNIT", unit);
        CHECK_MSG(bitpix == FLOAT_IMG && !strcmp(unit, "erg/s/cm^2/cm") &&
                      has_abundances(p), "%s: BITPIX %d, BUNIT '%s'",
                  model_file[m], bitpix, unit);
        if (!flux[m] || !wave)
            continue;
        double sum = 0; /* trapezoid, lambda in cm */
        for (long i = 1; i < NWAVE; i++)
            sum += 0.5 * (flux[m][i] + flux[m][i - 1]) *
                   (wave[i] - wave[i - 1]) * 1e-8;
        double t = model_par[m][0], ratio = sum / (SIGMA_SB * pow(t, 4));
        printf("%s: integral F dlambda / (sigma T^4) = %.4f\n",
               model_file[m] + 6, ratio);
        CHECK_MSG(ratio > 0.95 && ratio < 1.01, "%.4f", ratio);
    }
}

/* Library model index of file m: ((t*2 + g)*2 + z), t, g, z the node
 * indices on TEFF, LOGG, FEH (ALPHAFE has one node). */
static size_t lib_index(int m)
{
    int t = model_par[m][0] > 5900, g = model_par[m][1] > 4.2;
    int z = model_par[m][2] > -1;
    return (size_t)((t * 2 + g) * 2 + z);
}

/* Library of the models present: axes, nodes, which exist. */
static void check_library(const rvfit_library *L)
{
    static const double nodes[4][2] = {{5800, 6000}, {4.0, 4.5},
                                       {-2.0, 0.0}, {0.0, 0.0}};
    static const int nnode[4] = {2, 2, 2, 1};
    CHECK(L->nparam == 4 && L->nmodel == 8 && L->narm == 1);
    for (int a = 0; a < 4 && L->nparam == 4; a++) {
        const rvfit_axis *x = &L->axis[a];
        CHECK_MSG(x->nnode == nnode[a], "axis %s: %d nodes", x->name,
                  x->nnode);
        for (int k = 0; k < x->nnode && x->nnode == nnode[a]; k++)
            CHECK_NEAR(rvfit_axis_unscale(x, x->node[k]), nodes[a][k],
                       1e-9);
    }
    int want[8] = {0}, same = 1;
    for (int m = 0; m < NMODEL; m++)
        want[lib_index(m)] = 1;
    for (size_t i = 0; i < L->nmodel && L->nmodel == 8; i++)
        same &= (L->exists[i] != 0) == want[i];
    CHECK_MSG(same, "EXISTS differs from the files present");
}

/* Sub-pixel minimum of arm flux f near lambda (parabola through the
 * lowest pixel within 3 A and its neighbours). */
static double line_min(const rvfit_lib_arm *ar, const float *f, double lam)
{
    long c = lround((log(lam) - ar->lnl0) / ar->dlnl);
    long w = lround(3.0 / lam / ar->dlnl), best = c;
    for (long p = c - w; p <= c + w; p++)
        if (f[p] < f[best])
            best = p;
    double y0 = f[best - 1], y1 = f[best], y2 = f[best + 1];
    double d = 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2);
    return exp(ar->lnl0 + ((double)best + d) * ar->dlnl);
}

static void check_lines(const rvfit_library *L)
{
    static const struct { const char *name; double vac, air; } line[3] = {
        {"H-alpha", 6564.61, 6562.80}, {"Na D2", 5891.58, 5889.95},
        {"Na D1", 5897.56, 5895.92}};
    const rvfit_lib_arm *ar = &L->arm[0];
    const float *f = ar->flux + lib_index(1) * ar->npix; /* 6000/4.0/0 */
    for (int i = 0; i < 3; i++) {
        double lm = line_min(ar, f, line[i].vac);
        printf("%-8s template minimum %.3f A (vacuum %.2f, air %.2f)\n",
               line[i].name, lm, line[i].vac, line[i].air);
        CHECK_MSG(fabs(lm - line[i].vac) < 0.3, "%s at %.3f A",
                  line[i].name, lm);
    }
}

/* The last index lo with x[lo] <= u (0 if none, n - 2 at most). */
static long find_le(const double *x, long n, double u)
{
    long lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        long mid = (lo + hi) / 2;
        if (x[mid] <= u)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Photon flux g = f lambda of model flux f, convolved with a Gaussian of
 * sigma s (A) at e: trapezoid over the file's samples within 8 s. */
static double conv_at(const double *f, double e, double s)
{
    long lo = find_le(wave, NWAVE, e - 8 * s);
    double sum = 0, prev = 0;
    for (long i = lo; i < NWAVE && wave[i] <= e + 8 * s; i++) {
        double u = (wave[i] - e) / s;
        double v = f[i] * wave[i] * exp(-0.5 * u * u);
        if (i > lo)
            sum += 0.5 * (v + prev) * (wave[i] - wave[i - 1]);
        prev = v;
    }
    return sum / (s * 2.5066282746310002); /* sqrt(2 pi) */
}

/* Pixel p's value: the convolution averaged over [a, b] (Simpson). */
static double brute_pixel(const rvfit_lib_arm *ar, const double *f, long p)
{
    double a = exp(ar->lnl0 + (p - 0.5) * ar->dlnl);
    double b = exp(ar->lnl0 + (p + 0.5) * ar->dlnl), h = (b - a) / 32;
    double sum = 0;
    for (int k = 0; k <= 32; k++)
        sum += (k == 0 || k == 32 ? 1 : k % 2 ? 4 : 2) *
               conv_at(f, a + k * h, 0.4);
    return sum * h / 3 / (b - a);
}

static void check_brute(double *flux[NMODEL])
{
    rvfit_library L;
    rvfit_err err;
    char p[4400];
    snprintf(p, sizeof p, "%s/lib0", dir);
    if (rvfit_library_load(&L, p, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    const rvfit_lib_arm *ar = &L.arm[0];
    static const double lam[5] = {4850, 5300, 5800, 6300, 6750};
    long p0 = lround((log(5500.0) - ar->lnl0) / ar->dlnl);
    double worst = 0;
    for (int m = 0; m < NMODEL && L.nmodel == 8; m++) {
        const float *t = ar->flux + lib_index(m) * ar->npix;
        double r0 = flux[m] ? brute_pixel(ar, flux[m], p0) : NAN;
        for (int k = 0; k < 5 && flux[m]; k++) {
            long pk = lround((log(lam[k]) - ar->lnl0) / ar->dlnl);
            double want = brute_pixel(ar, flux[m], pk) / r0;
            double got = (double)t[pk] / t[p0];
            worst = fmax(worst, fabs(got / want - 1));
        }
    }
    printf("library (0.4 A Gaussian) against brute force: largest "
           "relative difference %.2e\n", worst);
    CHECK_MSG(worst < 1e-4, "%.3g", worst);
    rvfit_library_free(&L);
}

/* ---- the mock stars ------------------------------------------------ */

typedef struct truth_ctx {
    double *x;               /* [NWAVE] ln lambda of the samples      */
    double *g[NMODEL];       /* photon flux f lambda at the samples   */
    double *cum[NMODEL];     /* its integral over x from sample 0     */
    const rvfit_mock_star *star;
} truth_ctx;

/* Integral of model m's photon flux (linear in x between samples) up to
 * x = u. */
static double cum_at(const truth_ctx *c, int m, double u)
{
    long lo = find_le(c->x, NWAVE, u);
    double t = u - c->x[lo], dx = c->x[lo + 1] - c->x[lo];
    double gu = c->g[m][lo] + (c->g[m][lo + 1] - c->g[m][lo]) * t / dx;
    return c->cum[m][lo] + 0.5 * t * (c->g[m][lo] + gu);
}

/* rvfit_truth_fn: star s is model star_model[s], shifted by ln(1+z) = atanh(v/c),
 * each sample the mean over its interval of width dlnl. */
static int truth(void *ctx, size_t s, double lnl0, double dlnl, size_t n,
                 double *flux, rvfit_err *err)
{
    const truth_ctx *c = ctx;
    int m = star_model[s];
    double shift = atanh(c->star[s].vrad / C_KMS);
    double lo = lnl0 - shift - dlnl, hi = lnl0 + (double)n * dlnl - shift;
    if (lo < c->x[0] || hi > c->x[NWAVE - 1])
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "truth outside the "
                             "PHOENIX range");
    for (size_t k = 0; k < n; k++) {
        double u = lnl0 + (double)k * dlnl - shift;
        flux[k] = (cum_at(c, m, u + 0.5 * dlnl) -
                   cum_at(c, m, u - 0.5 * dlnl)) / dlnl;
    }
    return RVFIT_OK;
}

static int truth_init(truth_ctx *c, double *flux[NMODEL])
{
    c->x = malloc(NWAVE * sizeof *c->x);
    for (long i = 0; c->x && i < NWAVE; i++)
        c->x[i] = log(wave[i]);
    int ok = c->x != NULL;
    for (int m = 0; m < NMODEL; m++) {
        c->g[m] = malloc(NWAVE * sizeof *c->g[m]);
        c->cum[m] = malloc(NWAVE * sizeof *c->cum[m]);
        ok &= c->g[m] && c->cum[m] && flux[m];
        for (long i = 0; ok && i < NWAVE; i++) {
            c->g[m][i] = flux[m][i] * wave[i];
            c->cum[m][i] = i ? c->cum[m][i - 1] + 0.5 * (c->x[i] -
                               c->x[i - 1]) * (c->g[m][i] + c->g[m][i - 1])
                             : 0.0;
        }
    }
    return ok;
}

static void truth_free(truth_ctx *c)
{
    free(c->x);
    for (int m = 0; m < NMODEL; m++)
        free(c->g[m]), free(c->cum[m]);
}

static double rvtab_value(long tid, const char *col)
{
    char p[4400];
    long n = 0;
    snprintf(p, sizeof p, "%s/out/rvtab_spec-%ld.fits", dir, tid);
    double *v = tu_read_col(p, "RVTAB", col, &n), x = NAN;
    if (v && n == 1)
        x = v[0];
    free(v);
    return x;
}

/* Three LAMOST mocks of the real models, fitted with the library. */
static void check_fit(double *flux[NMODEL], const char *ini)
{
    rvfit_mock_star st[NSTAR];
    static const double vrad[NSTAR] = {63.2, -41.7, 12.4, 25.0};
    static const double snr[NSTAR] = {40, 30, 50, 1000};
    for (int k = 0; k < NSTAR; k++) {
        int m = star_model[k];
        st[k] = (rvfit_mock_star){k + 1, model_par[m][0], model_par[m][1],
                                  model_par[m][2], 0.0, vrad[k], 0.0,
                                  snr[k]};
    }
    truth_ctx c = {.star = st};
    char p[4400], *log = NULL;
    rvfit_err err;
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_kv kv[1] = {{"mock_layout", "dr8", "t.ini", 1}};
    snprintf(p, sizeof p, "%s/stars", dir);
    int rc = truth_init(&c, flux) ? 0 : -1;
    if (!rc)
        rc = tu_mock_ops("lamost")->write_mock(&host, kv, 1, p, NSTAR, st,
                                               truth, &c, 3, &err);
    truth_free(&c);
    CHECK_MSG(rc == 0, "mock: %s", rc > 0 ? err.msg : "no memory");
    if (rc || tu_rvfit(&log, "fit -t %s/lib -i lamost -c %s -b cpu -j 2 -o "
                       "%s/out %s/spec-1.fits %s/spec-2.fits "
                       "%s/spec-3.fits %s/spec-4.fits", dir, ini, dir, p, p,
                       p, p)) {
        free(log);
        return;
    }
    free(log);
    for (int k = 0; k < NSTAR; k++) {
        double v = rvtab_value(k + 1, "VRAD");
        double e = rvtab_value(k + 1, "VRAD_ERR");
        printf("star %d (%.27s, S/N %g): VRAD %.3f +- %.3f, true %.1f "
               "(%.2f sigma); TEFF %.0f LOGG %.2f FEH %.2f RVS_WARN %.0f\n",
               k + 1, model_file[star_model[k]] + 6, snr[k], v, e, vrad[k],
               (v - vrad[k]) / e, rvtab_value(k + 1, "TEFF"),
               rvtab_value(k + 1, "LOGG"), rvtab_value(k + 1, "FEH"),
               rvtab_value(k + 1, "RVS_WARN"));
        CHECK_MSG(e > 0 && fabs(v - vrad[k]) < 4 * e, "star %d: VRAD %g "
                  "+- %g, true %g", k + 1, v, e, vrad[k]);
    }
}

/* The libraries: lib (the lamost defaults: 45 km/s), lib0 (0.4 A),
 * and simplex refused. */
static int build(const char *ini, const char *ini0)
{
    char *log = NULL, cmd[16384], ini_s[4300];
    int rc = tu_rvfit(&log, "templates --grid %s -i lamost -c %s -j 2 "
                      "--out %s/lib", grid, ini, dir) ||
             tu_rvfit(&log, "templates --grid %s -i lamost -c %s -j 2 "
                      "--out %s/lib0", grid, ini0, dir);
    snprintf(ini_s, sizeof ini_s, "%s/simplex.ini", dir);
    FILE *f = fopen(ini_s, "w");
    fprintf(f, "[instrument.lamost]\nlam_min = 4800\nlam_max = 6800\n"
               "[templates]\ninterpolator = simplex\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' templates --grid '%s' -i lamost -c "
             "'%s' --out '%s/libs'", tu_env("RVFIT_BIN"), grid, ini_s, dir);
    int src = tu_run(cmd, &log);
    CHECK_MSG(src != 0 && tu_contains(log, "3 models cannot span 3 "
                                           "dimensions"), "%s", log);
    free(log);
    return rc;
}

static void write_ini(const char *path, const char *extra)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "[instrument.lamost]\nlam_min = 4800\nlam_max = 6800\n%s",
            extra);
    fclose(f);
}

int main(void)
{
    const char *sd = tu_shared_data();
    snprintf(grid, sizeof grid, "%s/phoenix/HiResFITS", sd);
    struct stat sb;
    if (stat(grid, &sb) != 0)
        tu_skip("no real PHOENIX models in %s", grid);
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("phoenix_real"));
    char ini[4200], ini0[4200];
    snprintf(ini, sizeof ini, "%s/lamost.ini", dir);
    snprintf(ini0, sizeof ini0, "%s/lamost0.ini", dir);
    write_ini(ini, "");
    write_ini(ini0, "sigma_kms = 0\n");
    double *flux[NMODEL] = {NULL};
    check_files(flux);
    rvfit_library L;
    rvfit_err err;
    char p[4400];
    snprintf(p, sizeof p, "%s/lib", dir);
    if (wave && !build(ini, ini0)) {
        if (rvfit_library_load(&L, p, &err) == 0) {
            check_library(&L);
            if (L.nmodel == 8)
                check_lines(&L);
            rvfit_library_free(&L);
        } else {
            CHECK_MSG(0, "%s", err.msg);
        }
        check_brute(flux);
        check_fit(flux, ini);
    }
    free(wave);
    for (int m = 0; m < NMODEL; m++)
        free(flux[m]);
    return tu_finish("test_phoenix_real");
}
