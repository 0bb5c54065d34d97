/* test_templates.c — template preparation from a tiny PHOENIX-layout grid:
 * axes, holes, arm grids, normalisation, a known line at the right pixel,
 * agreement with a brute-force Gaussian convolution + pixel average,
 * exactness on flat and linear photon spectra, and clear errors. */
#include <fitsio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rvfit/physics.h"
#include "rvfit/synth.h"
#include "rvfit/templates.h"
#include "rvfit/interp.h"
#include "rvfit/library_io.h"
#include "testutil.h"

static const rvfit_grid_spec tiny = {5000, 5500, 500, 4.0, 4.5, 0.5,
                                     -0.5, 0.0, 0.5, 0.0, 0.0, 0.0,
                                     6400, 6750, 1e-5, 0.125, 3};

static const rvfit_template_arm arms[2] = {{"R1", 6500, 6620, 0.4, 0.0},
                                           {"R2", 6450, 6500, 0.3, 0.0}};

static int file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* Brute force: photon flux, Gaussian convolution by a fine sum, pixel
 * average by a fine sum, for unpadded pixels of arm 0 of model params. */
static void brute(const double *par, const rvfit_lib_arm *ar, double sig,
                  size_t p0, size_t p1, double *out)
{
    double l0 = log(tiny.lam_min), dl = tiny.dlnl;
    size_t n = (size_t)floor(log(tiny.lam_max / tiny.lam_min) / dl) + 1;
    double *f = malloc(n * sizeof *f), *w = malloc(n * sizeof *w);
    rvfit_err e;
    rvfit_synth_flux(par[0], par[1], par[2], par[3], l0, dl, n, f, &e);
    for (size_t i = 0; i < n; i++) {
        w[i] = exp(l0 + i * dl);
        f[i] = (double)(float)f[i] * w[i]; /* files hold float32 */
    }
    const double h = 0.004; /* fine step, A */
    double a = exp(ar->lnl0 + (p0 - 0.5) * ar->dlnl) - 8 * sig;
    double b = exp(ar->lnl0 + (p1 + 0.5) * ar->dlnl) + 8 * sig;
    size_t m = (size_t)((b - a) / h) + 1, kg = (size_t)(8 * sig / h);
    double *g = malloc(m * sizeof *g), *c = calloc(m, sizeof *c);
    size_t j = 0;
    for (size_t k = 0; k < m; k++) {
        double x = a + k * h;
        while (w[j + 1] < x)
            j++;
        g[k] = f[j] + (f[j + 1] - f[j]) * (x - w[j]) / (w[j + 1] - w[j]);
    }
    double norm = 0, *gw = malloc((2 * kg + 1) * sizeof *gw);
    for (size_t q = 0; q <= 2 * kg; q++)
        norm += gw[q] = exp(-0.5 * pow(((double)q - kg) * h / sig, 2));
    for (size_t k = kg; k + kg < m; k++)
        for (size_t q = 0; q <= 2 * kg; q++)
            c[k] += g[k + q - kg] * gw[q] / norm;
    free(gw);
    for (size_t p = p0; p <= p1; p++) {
        double ea = exp(ar->lnl0 + (p - 0.5) * ar->dlnl);
        double eb = exp(ar->lnl0 + (p + 0.5) * ar->dlnl);
        double acc = 0, wt = 0;
        for (size_t k = kg; k + kg < m; k++) {
            double x = a + k * h;
            /* trapezoid weights of the clipped cell [x-h/2, x+h/2] */
            double lo = fmax(ea, x - 0.5 * h), hi = fmin(eb, x + 0.5 * h);
            if (hi > lo)
                acc += c[k] * (hi - lo), wt += hi - lo;
        }
        out[p - p0] = acc / wt;
    }
    free(g);
    free(c);
    free(w);
    free(f);
}

static void test_grid(const char *tmp)
{
    char grid[4200], out[4200];
    snprintf(grid, sizeof grid, "%s/grid", tmp);
    snprintf(out, sizeof out, "%s/lib", tmp);
    rvfit_err e;
    int st = rvfit_grid_write(grid, &tiny, 2, &e);
    CHECK_MSG(st == RVFIT_OK, "grid_write: %s", e.msg);
    rvfit_templates_opts o = {.sigma0 = 0.4, .vmax = 500.0, .nthreads = 2};
    st = rvfit_templates_build(grid, 2, arms, "test", &o, out, &e);
    CHECK_MSG(st == RVFIT_OK, "templates_build: %s", e.msg);
    rvfit_library lib;
    st = rvfit_library_load(&lib, out, &e);
    CHECK_MSG(st == RVFIT_OK, "load: %s", e.msg);
    if (st)
        return;
    /* axes */
    CHECK(lib.nparam == 4 && lib.nmodel == 8 && lib.narm == 2);
    CHECK(strcmp(lib.axis[0].name, "TEFF") == 0);
    CHECK(lib.axis[0].scale == RVFIT_SCALE_LOG10 && lib.axis[0].nnode == 2);
    CHECK_NEAR(lib.axis[0].node[0], log10(5000.0), 1e-12);
    CHECK_NEAR(lib.axis[0].node[1], log10(5500.0), 1e-12);
    CHECK(lib.axis[1].nnode == 2 && lib.axis[1].node[1] == 4.5);
    CHECK(lib.axis[2].nnode == 2 && lib.axis[2].node[0] == -0.5);
    CHECK(lib.axis[3].nnode == 1 && lib.axis[3].node[0] == 0.0);
    CHECK(strcmp(lib.axis[3].name, "ALPHAFE") == 0);
    /* holes: exactly the model files that were not written */
    int nexist = 0;
    for (size_t m = 0; m < 8; m++) {
        int it = (int)(m / 4), ig = (int)(m / 2) % 2, iz = (int)m % 2;
        char path[4600];
        snprintf(path, sizeof path,
                 "%s/PHOENIX-ACES-AGSS-COND-2011/Z-%.1f/lte%05d-%.2f-%.1f"
                 ".PHOENIX-ACES-AGSS-COND-2011-HiRes.fits",
                 grid, iz ? 0.0 : 0.5, 5000 + 500 * it, 4.0 + 0.5 * ig,
                 iz ? 0.0 : 0.5);
        CHECK_MSG(lib.exists[m] == file_exists(path), "model %zu: %s", m,
                  path);
        nexist += lib.exists[m];
    }
    CHECK(nexist == 7);
    /* arm grids */
    for (int a = 0; a < 2; a++) {
        const rvfit_lib_arm *ar = &lib.arm[a];
        double mid = 0.5 * (arms[a].lam_min + arms[a].lam_max);
        CHECK(strcmp(ar->name, arms[a].name) == 0);
        CHECK_NEAR(ar->dlnl, log1p(arms[a].step / mid), 1e-15);
        CHECK_NEAR(ar->lnl0, log(arms[a].lam_min) - 500 / RVFIT_C_KMS,
                   1e-12);
        double last = ar->lnl0 + (ar->npix - 1) * ar->dlnl;
        CHECK(last >= log(arms[a].lam_max) + 500 / RVFIT_C_KMS - 1e-12);
        CHECK(last < log(arms[a].lam_max) + 500 / RVFIT_C_KMS + ar->dlnl);
    }
    CHECK_NEAR(lib.sigma0, sqrt(0.16 + 0.16 / 12), 1e-12);
    CHECK_NEAR(lib.vmax, 500.0, 0);
    /* normalisation and the Halpha line */
    const rvfit_lib_arm *ar = &lib.arm[0];
    size_t p0 = (size_t)ceil((log(6500.0) - ar->lnl0) / ar->dlnl - 1e-9);
    size_t p1 = (size_t)floor((log(6620.0) - ar->lnl0) / ar->dlnl + 1e-9);
    for (size_t m = 0; m < 8; m++) {
        if (!lib.exists[m])
            continue;
        const float *fl = ar->flux + m * ar->npix;
        double s = 0;
        for (size_t p = p0; p <= p1; p++)
            s += fl[p];
        CHECK_NEAR(s / (p1 - p0 + 1), 1.0, 2e-6);
        size_t pm = p0;
        for (size_t p = p0; p <= p1; p++)
            if (fl[p] < fl[pm])
                pm = p;
        double y0 = fl[pm - 1], y1 = fl[pm], y2 = fl[pm + 1];
        double x = pm + 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2);
        double lmin = exp(ar->lnl0 + x * ar->dlnl);
        CHECK_MSG(fabs(lmin - 6564.61) < 0.05,
                  "model %zu: Halpha minimum at %.3f A", m, lmin);
    }
    /* exactness against brute force (first existing model) */
    size_t mb = 0;
    while (!lib.exists[mb])
        mb++;
    double par[4] = {5000.0 + 500.0 * (double)(mb / 4),
                     4.0 + 0.5 * (double)((mb / 2) % 2),
                     -0.5 + 0.5 * (double)(mb % 2), 0.0};
    double *bf = malloc((p1 - p0 + 1) * sizeof *bf), s = 0, dmax = 0;
    brute(par, ar, 0.4, p0, p1, bf);
    for (size_t p = p0; p <= p1; p++)
        s += bf[p - p0];
    for (size_t p = p0; p <= p1; p++)
        dmax = fmax(dmax, fabs(ar->flux[mb * ar->npix + p] -
                               bf[p - p0] / (s / (p1 - p0 + 1))));
    printf("library vs brute force: max |diff| %.2e\n", dmax);
    CHECK(dmax < 1e-4);
    free(bf);
    rvfit_library_free(&lib);
}

/* Write a one-file-per-teff grid by hand: photon flux f*lambda =
 * 1 + slope*(lambda - 6500). */
static void write_manual(const char *dir, double slope, long nbad)
{
    char p[4600];
    double l0 = log(6300.0), dl = 2e-5;
    long n = 20000;
    double *w = malloc(n * sizeof *w);
    float *f = malloc(n * sizeof *f);
    for (long i = 0; i < n; i++) {
        w[i] = exp(l0 + i * dl);
        f[i] = (float)(1e15 * (1.0 + slope * (w[i] - 6500.0)) / w[i]);
    }
    fitsfile *ff;
    int fs = 0;
    snprintf(p, sizeof p, "mkdir -p '%s/PHOENIX-ACES-AGSS-COND-2011/Z-0.0'",
             dir);
    CHECK(system(p) == 0);
    snprintf(p, sizeof p, "!%s/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits", dir);
    fits_create_file(&ff, p, &fs);
    fits_create_img(ff, DOUBLE_IMG, 1, &n, &fs);
    fits_write_img(ff, TDOUBLE, 1, n, w, &fs);
    fits_close_file(ff, &fs);
    for (int t = 0; t < 2; t++) {
        double te = 5000 + 1000 * t, g = 4.5, z = 0, a = 0;
        long nn = t == 1 && nbad ? nbad : n;
        snprintf(p, sizeof p, "!%s/PHOENIX-ACES-AGSS-COND-2011/Z-0.0/lte%05d"
                 "-4.50-0.0.PHOENIX-ACES-AGSS-COND-2011-HiRes.fits", dir,
                 (int)te);
        fits_create_file(&ff, p, &fs);
        fits_create_img(ff, FLOAT_IMG, 1, &nn, &fs);
        fits_write_key(ff, TDOUBLE, "PHXTEFF", &te, NULL, &fs);
        fits_write_key(ff, TDOUBLE, "PHXLOGG", &g, NULL, &fs);
        fits_write_key(ff, TDOUBLE, "PHXM_H", &z, NULL, &fs);
        fits_write_key(ff, TDOUBLE, "PHXALPHA", &a, NULL, &fs);
        fits_write_img(ff, TFLOAT, 1, nn, f, &fs);
        fits_close_file(ff, &fs);
    }
    CHECK(fs == 0);
    free(w);
    free(f);
}

/* Flat photon flux stays flat; a linear one equals its value at each
 * pixel's centre in lambda (exact for a Gaussian and a box). */
static void test_exact(const char *tmp)
{
    const double slope[2] = {0.0, 1.0 / 300.0};
    for (int k = 0; k < 2; k++) {
        char grid[4200], out[4200];
        snprintf(grid, sizeof grid, "%s/manual%d", tmp, k);
        snprintf(out, sizeof out, "%s/manual%d/lib", tmp, k);
        write_manual(grid, slope[k], 0);
        rvfit_template_arm arm = {"X", 6450, 6600, 0.5, 0.0};
        rvfit_templates_opts o = {.sigma0 = 0.6, .vmax = 1000.0, .nthreads = 1};
        rvfit_err e;
        rvfit_library lib;
        int st = rvfit_templates_build(grid, 1, &arm, "test", &o, out, &e);
        CHECK_MSG(st == RVFIT_OK, "%s", e.msg);
        if (st || rvfit_library_load(&lib, out, &e) != RVFIT_OK)
            continue;
        CHECK(lib.nmodel == 2 && lib.axis[0].nnode == 2);
        CHECK(lib.axis[1].nnode == 1 && lib.axis[2].nnode == 1);
        const rvfit_lib_arm *ar = &lib.arm[0];
        size_t p0 = (size_t)ceil((log(6450.0) - ar->lnl0) / ar->dlnl - 1e-9);
        size_t p1 = (size_t)floor((log(6600.0) - ar->lnl0) / ar->dlnl + 1e-9);
        double *v = malloc(ar->npix * sizeof *v), mean = 0, dmax = 0;
        for (size_t p = 0; p < ar->npix; p++) {
            double a = exp(ar->lnl0 + (p - 0.5) * ar->dlnl);
            double b = exp(ar->lnl0 + (p + 0.5) * ar->dlnl);
            v[p] = 1.0 + slope[k] * (0.5 * (a + b) - 6500.0);
            if (p >= p0 && p <= p1)
                mean += v[p] / (double)(p1 - p0 + 1);
        }
        for (size_t p = 0; p < ar->npix; p++)
            dmax = fmax(dmax, fabs(ar->flux[p] - v[p] / mean));
        printf("slope %g: max |library - exact| %.2e over %zu px\n",
               slope[k], dmax, ar->npix);
        CHECK(dmax < 2e-6); /* float32 input and output */
        free(v);
        rvfit_library_free(&lib);
    }
}

/* String keyword key = value in the primary header of grid file `name`. */
static void set_unit(const char *grid, const char *name, const char *key,
                     const char *value)
{
    char p[4600];
    fitsfile *ff;
    int fs = 0;
    snprintf(p, sizeof p, "%s/%s", grid, name);
    fits_open_file(&ff, p, READWRITE, &fs);
    fits_update_key(ff, TSTRING, key, (void *)value, NULL, &fs);
    fits_close_file(ff, &fs);
    CHECK_MSG(fs == 0, "%s: CFITSIO %d", p, fs);
}

/* Units: wavelengths in Angstrom, flux per unit wavelength (the photon
 * conversion multiplies by lambda); absent keywords accepted. */
static void test_units(const char *tmp)
{
    static const char *const wave = "WAVE_PHOENIX-ACES-AGSS-COND-2011.fits";
    static const char *const model = "PHOENIX-ACES-AGSS-COND-2011/Z-0.0/"
        "lte06000-4.50-0.0.PHOENIX-ACES-AGSS-COND-2011-HiRes.fits";
    static const struct { const char *file, *key, *value, *msg; } c[] = {
        {"w", "UNIT", "Angstrom", NULL},
        {"m", "BUNIT", "erg/s/cm^2/cm", NULL},
        {"m", "BUNIT", " erg s-1 cm-2 Angstrom-1", NULL},
        {"m", "BUNIT", "W m**-2 nm**-1", NULL},
        {"w", "UNIT", "nm", "UNIT = 'nm': wavelengths must be in Angstrom"},
        {"w", "BUNIT", "micron", "BUNIT = 'micron'"},
        {"m", "BUNIT", "erg/s/cm^2/Hz", "BUNIT = 'erg/s/cm^2/hz': the flux "
                                        "must be per unit wavelength"},
        {"m", "BUNIT", "erg s-1 cm-2", "BUNIT = 'erg s-1 cm-2'"},
    };
    rvfit_template_arm arm = {"X", 6450, 6600, 0.5, 0.0};
    rvfit_templates_opts o = {.sigma0 = 0.6, .vmax = 1000.0, .nthreads = 1};
    char grid[4200], out[4300];
    snprintf(grid, sizeof grid, "%s/units", tmp);
    snprintf(out, sizeof out, "%s/lib", grid);
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        write_manual(grid, 0.0, 0);
        set_unit(grid, c[i].file[0] == 'w' ? wave : model, c[i].key,
                 c[i].value);
        rvfit_err e;
        int st = rvfit_templates_build(grid, 1, &arm, "t", &o, out, &e);
        if (c[i].msg)
            CHECK_MSG(st == RVFIT_ERR_FORMAT && tu_contains(e.msg, c[i].msg)
                          && tu_contains(e.msg, c[i].file[0] == 'w'
                                                    ? "WAVE_PHOENIX"
                                                    : "lte06000"),
                      "%s = '%s': %d %s", c[i].key, c[i].value, st, e.msg);
        else
            CHECK_MSG(st == RVFIT_OK, "%s = '%s': %s", c[i].key, c[i].value,
                      e.msg);
    }
}

static void test_errors(const char *tmp)
{
    rvfit_template_arm arm = {"X", 6450, 6600, 0.5, 0.0};
    rvfit_templates_opts o = {.sigma0 = 0.6, .vmax = 1000.0, .nthreads = 1};
    rvfit_err e;
    char grid[4200], out[4300], p[4600];
    snprintf(grid, sizeof grid, "%s/bad", tmp);
    snprintf(out, sizeof out, "%s/lib", grid);
    /* inconsistent file sizes */
    write_manual(grid, 0.0, 1234);
    int st = rvfit_templates_build(grid, 1, &arm, "t", &o, out, &e);
    printf("sizes: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_FORMAT && tu_contains(e.msg, "inconsistent") &&
          tu_contains(e.msg, "lte06000"));
    /* a file that is not FITS */
    write_manual(grid, 0.0, 0);
    snprintf(p, sizeof p, "%s/PHOENIX-ACES-AGSS-COND-2011/Z-0.0/lte07000-"
             "4.50-0.0.PHOENIX-ACES-AGSS-COND-2011-HiRes.fits", grid);
    FILE *f = fopen(p, "w");
    fputs("not FITS\n", f);
    fclose(f);
    st = rvfit_templates_build(grid, 1, &arm, "t", &o, out, &e);
    printf("not FITS: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_FORMAT && tu_contains(e.msg, "lte07000"));
    remove(p);
    /* arm outside the grid */
    rvfit_template_arm wide = {"W", 6310, 6600, 0.5, 0.0};
    st = rvfit_templates_build(grid, 1, &wide, "t", &o, out, &e);
    printf("coverage: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_INVALID && tu_contains(e.msg, "arm W"));
    /* missing wavelength file, then no models */
    snprintf(p, sizeof p, "%s/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits", grid);
    remove(p);
    st = rvfit_templates_build(grid, 1, &arm, "t", &o, out, &e);
    printf("no wave: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_IO && tu_contains(e.msg, "WAVE_PHOENIX"));
    write_manual(grid, 0.0, 0);
    snprintf(p, sizeof p, "rm -f '%s'/PHOENIX-ACES-AGSS-COND-2011/Z-0.0/*",
             grid);
    CHECK(system(p) == 0);
    st = rvfit_templates_build(grid, 1, &arm, "t", &o, out, &e);
    printf("no models: %s\n", e.msg);
    CHECK(st == RVFIT_ERR_IO && tu_contains(e.msg, "no model files"));
}

/* pca from the build: recorded (INTERP, NPCA), the loaded models are the
 * multilinear library's to the rms error the file records (at most
 * pca_rms), pca_components is obeyed and refused beyond the models. */
static void test_pca(const char *grid, const char *tmp)
{
    char out[4200], ref[4200];
    snprintf(out, sizeof out, "%s/libpca", tmp);
    snprintf(ref, sizeof ref, "%s/libml", tmp);
    rvfit_err e;
    rvfit_templates_opts o = {.sigma0 = 0.4, .vmax = 500.0, .nthreads = 2};
    CHECK(rvfit_templates_build(grid, 2, arms, "test", &o, ref, &e) ==
          RVFIT_OK);
    o.interpolator = "pca";
    o.pca_rms = 2e-3;
    int st = rvfit_templates_build(grid, 2, arms, "test", &o, out, &e);
    CHECK_MSG(st == RVFIT_OK, "pca build: %s", e.msg);
    rvfit_library lp, lm;
    rvfit_interpolator ip;
    if (rvfit_library_open(&lp, &ip, out, &e) ||
        rvfit_library_load(&lm, ref, &e)) {
        CHECK_MSG(0, "load: %s", e.msg);
        return;
    }
    CHECK(!strcmp(rvfit_interp_name(&ip), "pca"));
    int k = rvfit_interp_pca_k(&ip);
    for (int a = 0; a < lp.narm; a++) {
        double ss = 0.0, rec = rvfit_interp_pca_rms(&ip, a);
        size_t n = 0;
        for (size_t i = 0; i < lp.nmodel * lp.arm[a].npix; i++)
            if (lp.exists[i / lp.arm[a].npix]) {
                double d = lp.arm[a].flux[i] - lm.arm[a].flux[i];
                ss += d * d;
                n++;
            }
        printf("pca build: arm %s, %d components, rms %.3g (recorded %.3g)\n",
               lp.arm[a].name, k, sqrt(ss / (double)n), rec);
        CHECK(rec <= 2e-3 && fabs(sqrt(ss / (double)n) - rec) <= 0.05 * rec +
                                                                1e-6);
    }
    rvfit_interp_close(&ip);
    rvfit_library_free(&lp);
    o.pca_k = 1;
    CHECK(rvfit_templates_build(grid, 2, arms, "test", &o, out, &e) ==
          RVFIT_OK);
    char file[4300];
    snprintf(file, sizeof file, "%s/%s", out, RVFIT_LIBRARY_FILE);
    CHECK(tu_read_key(file, 1, "NPCA") == 1);
    o.pca_k = (int)lm.nmodel;
    CHECK(rvfit_templates_build(grid, 2, arms, "test", &o, out, &e) ==
          RVFIT_ERR_CONFIG);
    rvfit_library_free(&lm);
}

/* [templates] fill_holes through the build: the counts it reports are
 * the library's filled models and remaining holes; an unknown method is
 * refused. */
static void test_fill(const char *grid, const char *tmp)
{
    char out[4200];
    snprintf(out, sizeof out, "%s/libfill", tmp);
    rvfit_err e;
    size_t nf = 99, nl = 99;
    rvfit_templates_opts o = {.sigma0 = 0.4, .vmax = 500.0, .nthreads = 2,
                              .interpolator = "simplex",
                              .fill_holes = "quadratic", .nfilled = &nf,
                              .nleft = &nl};
    int st = rvfit_templates_build(grid, 2, arms, "test", &o, out, &e);
    CHECK_MSG(st == RVFIT_OK, "fill build: %s", e.msg);
    rvfit_library lib;
    if (!st && rvfit_library_load(&lib, out, &e) == RVFIT_OK) {
        size_t holes = 0, filled = 0;
        for (size_t m = 0; m < lib.nmodel; m++)
            holes += !lib.exists[m],
                filled += lib.exists[m] == RVFIT_MODEL_FILLED;
        CHECK_MSG(holes == nl && filled == nf && holes > 0,
                  "%zu holes, %zu filled; reported %zu, %zu", holes, filled,
                  nl, nf);
        rvfit_library_free(&lib);
    }
    o.fill_holes = "cubic";
    st = rvfit_templates_build(grid, 2, arms, "test", &o, out, &e);
    CHECK(st == RVFIT_ERR_CONFIG && tu_contains(e.msg, "fill_holes"));
}

/* The interpolator recorded by the build ([templates] interpolator): on
 * test_grid's grid (2 nodes on 3 axes, holes) simplex stores a
 * triangulation of the models present that reads back; cubic has no axis
 * of 3 nodes and is refused; multilinear in ln flux is recorded. */
static void test_interpolator(const char *tmp)
{
    char grid[4200], out[4200];
    snprintf(grid, sizeof grid, "%s/grid", tmp);
    snprintf(out, sizeof out, "%s/libsx", tmp);
    rvfit_err e;
    rvfit_templates_opts o = {.sigma0 = 0.4, .vmax = 500.0, .nthreads = 2,
                              .interpolator = "simplex"};
    int st = rvfit_templates_build(grid, 2, arms, "test", &o, out, &e);
    CHECK_MSG(st == RVFIT_OK, "simplex build: %s", e.msg);
    rvfit_library lib;
    rvfit_interpolator ip;
    if (rvfit_library_open(&lib, &ip, out, &e) != RVFIT_OK) {
        CHECK_MSG(0, "open: %s", e.msg);
        return;
    }
    const uint32_t *vert = NULL;
    size_t ns = 0;
    int nv = 0;
    CHECK(!strcmp(rvfit_interp_name(&ip), "simplex"));
    CHECK(rvfit_interp_simplices(&ip, &vert, &ns, &nv) == 0 && nv == 4);
    CHECK(ns >= 1 && vert);
    for (size_t i = 0; vert && i < ns * 4; i++)
        CHECK(vert[i] < lib.nmodel && lib.exists[vert[i]]);
    rvfit_interp_close(&ip);
    rvfit_library_free(&lib);
    o.interpolator = "cubic";
    st = rvfit_templates_build(grid, 2, arms, "test", &o, out, &e);
    CHECK(st == RVFIT_ERR_CONFIG && tu_contains(e.msg, "3 or more nodes"));
    o.interpolator = "multilinear";
    o.log_flux = 1;
    CHECK(rvfit_templates_build(grid, 2, arms, "test", &o, out, &e) ==
          RVFIT_OK);
    CHECK(rvfit_library_open(&lib, &ip, out, &e) == RVFIT_OK &&
          lib.log_flux == 1 && !strcmp(rvfit_interp_name(&ip), "multilinear"));
    rvfit_interp_close(&ip);
    rvfit_library_free(&lib);
    test_pca(grid, tmp);
    test_fill(grid, tmp);
}

int main(void)
{
    const char *tmp = tu_tmpdir("templates");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tmp);
    test_grid(dir);
    test_interpolator(dir);
    test_exact(dir);
    test_units(dir);
    test_errors(dir);
    return tu_finish("test_templates");
}
