/* test_desi_mock.c — the DESI mock writer: write synthetic coadds with an
 * analytic truth (flat continuum, one Gaussian absorption line per camera,
 * Doppler shifted), read them back through the plugin and check shapes,
 * resolution normalisation, line centroids, the pixel fluxes against the
 * closed-form LSF+pixel integral, S/N, masks, determinism across thread
 * counts, and atomic writing. */
#include <dirent.h>
#include <dlfcn.h>
#include <fitsio.h>
#include <string.h>
#include <time.h>

#include "rvfit/plugin.h"
#include "testutil.h"

#define C_KMS 299792.458
#define LINE_DEPTH 0.6
#define LINE_SIGMA 1.0 /* Angstrom, intrinsic */
#define FLUX_LEVEL 20.0 /* the writer's continuum level (median) */
static const double line_rest[3] = {4500.0, 6563.0, 8600.0};
static const double lam0[3] = {3600.0, 5760.0, 7520.0};
static const size_t npix[3] = {2751, 2326, 2881};

typedef struct mock_ctx {
    const rvfit_mock_star *stars;
    size_t fail_star; /* callback fails for this star (SIZE_MAX: never) */
} mock_ctx;

static double doppler(double v)
{
    double b = v / C_KMS;
    return sqrt((1.0 + b) / (1.0 - b));
}

static int truth(void *ctx, size_t star, double lnl0, double dlnl, size_t n,
                 double *flux, rvfit_err *err)
{
    const mock_ctx *c = ctx;
    if (star == c->fail_star)
        return rvfit_err_set(err, RVFIT_ERR_NUMERIC, "truth refused star "
                             "%zu", star);
    double d = doppler(c->stars[star].vrad);
    for (size_t k = 0; k < n; k++) {
        double lam = exp(lnl0 + dlnl * (double)k), f = 1.0;
        for (int l = 0; l < 3; l++) {
            double x = (lam - line_rest[l] * d) / LINE_SIGMA;
            f -= LINE_DEPTH * exp(-0.5 * x * x);
        }
        flux[k] = f;
    }
    return RVFIT_OK;
}

static const rvfit_instrument_ops *load(void)
{
    return tu_plugin_ops("rvfit_instrument_desi.so");
}

static double phi(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

/* LSF sigma from a main-diagonal value R = 2 Phi(0.4/s) - 1 (bisection). */
static double sigma_from_diag(double r)
{
    double lo = 0.1, hi = 3.0;
    for (int i = 0; i < 100; i++) {
        double s = 0.5 * (lo + hi);
        if (2.0 * phi(0.4 / s) - 1.0 > r)
            lo = s;
        else
            hi = s;
    }
    return 0.5 * (lo + hi);
}

/* Solve the 4x4 system a x = b in place (Gauss, partial pivoting). */
static void solve4(double a[4][4], double b[4])
{
    for (int c = 0; c < 4; c++) {
        int p = c;
        for (int r = c + 1; r < 4; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        for (int k = 0; k < 4; k++) {
            double t = a[c][k];
            a[c][k] = a[p][k];
            a[p][k] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int r = c + 1; r < 4; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 4; k++)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int c = 3; c >= 0; c--) {
        for (int k = c + 1; k < 4; k++)
            b[c] -= a[c][k] * b[k];
        b[c] /= a[c][c];
    }
}

/* Weighted Gauss-Newton fit of C (1 - A g((x-c)/w)) around pixel c0;
 * returns the centre in pixels.  Masked pixels (ivar 0) drop out. */
static double fit_centre(const float *f, const float *iv, size_t n, double c0)
{
    double p[4] = {FLUX_LEVEL, 0.5, c0, 1.6}; /* C, A, c, w (pixels) */
    for (int it = 0; it < 30; it++) {
        double a[4][4] = {{0}}, b[4] = {0};
        for (long i = (long)c0 - 14; i <= (long)c0 + 14; i++) {
            if (i < 0 || (size_t)i >= n || !(iv[i] > 0))
                continue;
            double x = ((double)i - p[2]) / p[3], g = exp(-0.5 * x * x);
            double m = p[0] * (1.0 - p[1] * g);
            double J[4] = {1.0 - p[1] * g, -p[0] * g,
                           -p[0] * p[1] * g * x / p[3],
                           -p[0] * p[1] * g * x * x / p[3]};
            double w = iv[i], r = f[i] - m;
            for (int j = 0; j < 4; j++) {
                b[j] += w * J[j] * r;
                for (int k = 0; k < 4; k++)
                    a[j][k] += w * J[j] * J[k];
            }
        }
        solve4(a, b);
        for (int j = 0; j < 4; j++)
            p[j] += b[j];
    }
    return p[2];
}

static double median_snr(const float *f, const float *iv, size_t n)
{
    double *v = malloc(n * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (iv[i] > 0)
            v[k++] = f[i] * sqrt(iv[i]);
    for (size_t i = 1; i < k; i++) /* insertion sort: small n */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    double m = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    free(v);
    return m;
}

/* Pixels near the line of the S/N 1e6 star against the closed form: a
 * Gaussian line convolved with the Gaussian LSF (sigma taken from the
 * resolution matrix) and averaged over each 0.8 A pixel. */
static void check_analytic(const rvfit_arm_batch *A, size_t s, int a,
                           double v)
{
    double c = line_rest[a] * doppler(v);
    size_t j = (size_t)((c - lam0[a]) / 0.8 + 0.5);
    const float *res = A->res + s * 11 * A->npix;
    double sig = sigma_from_diag(res[5 * A->npix + j]);
    double st = sqrt(sig * sig + LINE_SIGMA * LINE_SIGMA);
    double worst = 0.0, worst_flat = 0.0;
    for (size_t i = j - 12; i <= j + 12; i++) {
        double e0 = A->wave[i] - 0.4, e1 = A->wave[i] + 0.4;
        double line = LINE_DEPTH * LINE_SIGMA * 2.5066282746310002 / 0.8 *
                      (phi((e1 - c) / st) - phi((e0 - c) / st));
        double want = FLUX_LEVEL * (1.0 - line);
        double got = A->flux[s * A->npix + i];
        if (A->ivar[s * A->npix + i] > 0)
            worst = fmax(worst, fabs(got - want) / FLUX_LEVEL);
    }
    for (size_t i = 0; i < A->npix; i++) /* continuum far from the line */
        if (fabs(A->wave[i] - c) > 15.0 && A->ivar[s * A->npix + i] > 0)
            worst_flat = fmax(worst_flat,
                              fabs(A->flux[s * A->npix + i] / FLUX_LEVEL -
                                   1.0));
    CHECK_MSG(worst < 1e-4, "arm %d: line pixels off by %.2e (sigma %.4f)",
              a, worst, sig);
    CHECK_MSG(worst_flat < 1e-4, "arm %d: continuum off by %.2e", a,
              worst_flat);
    printf("  analytic arm %d: sigma_LSF %.4f A, max |err| %.2e (line) "
           "%.2e (continuum)\n", a, sig, worst, worst_flat);
}

#define NSTAR 4
static const rvfit_mock_star stars[NSTAR] = {
    {1001, 5000, 4.5, -0.5, 0.2, 0.0, 0.0, 30.0},
    {1002, 5500, 4.0, 0.0, 0.0, 123.4, 0.0, 500.0},
    {1003, 6000, 3.5, -1.0, 0.3, -250.0, 0.0, 2000.0},
    {1004, 6500, 4.2, -2.0, 0.4, 57.0, 0.0, 1e6},
};

static void check_spectrum(const rvfit_batch *b, size_t s)
{
    for (int a = 0; a < 3; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        const float *f = A->flux + s * A->npix, *iv = A->ivar + s * A->npix;
        const float *res = A->res + s * 11 * A->npix;
        double worst = 0.0;
        for (size_t j = 0; j < A->npix; j++) {
            double sum = 0.0;
            for (int k = 0; k < 11; k++)
                sum += res[(size_t)k * A->npix + j];
            worst = fmax(worst, fabs(sum - 1.0));
        }
        CHECK_MSG(worst < 2e-6, "column sums off by %g", worst);
        double want = (line_rest[a] * doppler(stars[s].vrad) - lam0[a]) / 0.8;
        double got = fit_centre(f, iv, A->npix, want);
        double tol = stars[s].snr >= 500 ? 0.05 : 0.3;
        CHECK_MSG(fabs(got - want) < tol, "star %zu arm %d: centre %.4f px, "
                  "want %.4f", s, a, got, want);
        double sn_file = b->snr[s * 3 + (size_t)a];
        double sn_pix = median_snr(f, iv, A->npix);
        CHECK_MSG(fabs(sn_file / stars[s].snr - 1.0) < 0.1 &&
                      fabs(sn_pix / stars[s].snr - 1.0) < 0.1,
                  "star %zu arm %d: S/N %g / %g, want %g", s, a, sn_file,
                  sn_pix, stars[s].snr);
        printf("  star %zu arm %s: centre %+.4f px, S/N %.4g (want %.4g)\n",
               s, A->name, got - want, sn_pix, stars[s].snr);
    }
}

/* Every MASK != 0 pixel (COSMIC) has ivar 0 in the batch; a few exist. */
static void check_masks(const char *path, const rvfit_batch *b)
{
    fitsfile *fp;
    int st = 0;
    static const char *hdu[3] = {"B_MASK", "R_MASK", "Z_MASK"};
    long nmask = 0, nbad = 0, maxper = 0;
    fits_open_file(&fp, path, READONLY, &st);
    for (int a = 0; a < 3; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        size_t n = NSTAR * A->npix;
        int *m = malloc(n * sizeof *m);
        fits_movnam_hdu(fp, IMAGE_HDU, (char *)hdu[a], 0, &st);
        fits_read_img(fp, TINT, 1, (LONGLONG)n, NULL, m, NULL, &st);
        for (size_t s = 0; s < NSTAR; s++) {
            long per = 0;
            for (size_t i = 0; i < A->npix; i++) {
                size_t k = s * A->npix + i;
                per += m[k] != 0;
                nbad += (m[k] != 0 && (m[k] != 4 || A->ivar[k] != 0.0f)) ||
                        (m[k] == 0 && !(A->ivar[k] > 0.0f));
            }
            nmask += per;
            maxper = per > maxper ? per : maxper;
        }
        free(m);
    }
    fits_close_file(fp, &st);
    CHECK(st == 0);
    CHECK_MSG(nmask >= 1 && maxper <= 9 && nbad == 0,
              "%ld masked, at most %ld per arm, %ld inconsistent", nmask,
              maxper, nbad);
}

static int write_mock(const rvfit_instrument_mock_ops *mk, const char *path,
                      int nthreads, size_t n, const rvfit_mock_star *st,
                      size_t fail, rvfit_err *err)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    host.nthreads = nthreads;
    mock_ctx ctx = {st, fail};
    return mk->write_mock(&host, NULL, 0, path, n, st, truth, &ctx, 42,
                          err);
}

static void check_read_back(const rvfit_instrument_ops *ops,
                            const char *path)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err = {{0}};
    rvfit_select sel = {0};
    void *h = NULL;
    int rc = ops->open(&host, NULL, 0, path, &sel, &h, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s", err.msg);
    if (rc)
        return;
    rvfit_file_info I;
    ops->info(h, &I);
    CHECK(I.narm == 3 && I.ntotal == NSTAR && I.nselect == NSTAR);
    for (int a = 0; a < 3 && a < I.narm; a++)
        CHECK(I.arm[a].npix == npix[a] && I.arm[a].ndiag == 11);
    CHECK(I.ntable == 3 && I.table[0].ncol == 6 && I.table[1].ncol == 12 &&
          I.table[2].ncol == 7);
    rvfit_batch b;
    CHECK(rvfit_batch_alloc(&b, I.narm, I.arm, NSTAR, &err) == RVFIT_OK);
    rc = ops->read(h, 0, NSTAR, &b, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s", err.msg);
    for (int a = 0; a < 3 && !rc; a++) {
        CHECK_NEAR(b.arm[a].wave[0], lam0[a], 1e-9);
        CHECK_NEAR(b.arm[a].wave[npix[a] - 1],
                   lam0[a] + 0.8 * (double)(npix[a] - 1), 1e-9);
    }
    for (size_t s = 0; s < NSTAR && !rc; s++) {
        CHECK(b.flags[s] == 0 && b.index[s] == s);
        check_spectrum(&b, s);
    }
    for (int a = 0; a < 3 && !rc; a++)
        check_analytic(&b.arm[a], 3, a, stars[3].vrad);
    if (!rc)
        check_masks(path, &b);
    rvfit_table_rows r;
    CHECK(rvfit_rows_alloc(&r, &I.table[0], NSTAR, &err) == RVFIT_OK);
    CHECK(ops->read_rows(h, 0, 0, NSTAR, &r, &err) == RVFIT_OK);
    CHECK(((int64_t *)r.data[0])[2] == 1003);
    CHECK(!memcmp((char *)r.data[5] + 2, "G2", 2));
    rvfit_rows_free(&r, &I.table[0]);
    rvfit_batch_free(&b);
    ops->close(h);
}

/* A selection with gaps (TARGETIDs 1001, 1003, 1004 -> rows 0, 2, 3) read
 * in two batches gives the same pixels as the full read of those rows. */
static void check_sparse(const rvfit_instrument_ops *ops, const char *path)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err = {{0}};
    int64_t ids[3] = {1004, 1001, 1003};
    rvfit_select sel = {0};
    sel.ntargetid = 3;
    sel.targetid = ids;
    void *hs = NULL, *hf = NULL;
    rvfit_select all = {0};
    CHECK(ops->open(&host, NULL, 0, path, &sel, &hs, &err) == RVFIT_OK);
    CHECK(ops->open(&host, NULL, 0, path, &all, &hf, &err) == RVFIT_OK);
    if (!hs || !hf)
        return;
    rvfit_file_info I;
    ops->info(hs, &I);
    CHECK(I.nselect == 3 && I.ntotal == NSTAR);
    rvfit_batch full, part;
    CHECK(rvfit_batch_alloc(&full, I.narm, I.arm, NSTAR, &err) == RVFIT_OK);
    CHECK(rvfit_batch_alloc(&part, I.narm, I.arm, 2, &err) == RVFIT_OK);
    CHECK(ops->read(hf, 0, NSTAR, &full, &err) == RVFIT_OK);
    static const size_t rows[3] = {0, 2, 3};
    for (size_t first = 0; first < 3; first += 2) {
        size_t n = first == 0 ? 2 : 1;
        CHECK(ops->read(hs, first, n, &part, &err) == RVFIT_OK);
        CHECK(part.nspec == n);
        for (size_t s = 0; s < n; s++) {
            size_t r = rows[first + s];
            CHECK(part.index[s] == r);
            CHECK(part.snr[s * 3 + 1] == full.snr[r * 3 + 1]);
            for (int a = 0; a < 3; a++) {
                const rvfit_arm_batch *P = &part.arm[a], *F = &full.arm[a];
                CHECK(!memcmp(P->flux + s * P->npix, F->flux + r * F->npix,
                              P->npix * sizeof(float)));
                CHECK(!memcmp(P->ivar + s * P->npix, F->ivar + r * F->npix,
                              P->npix * sizeof(float)));
                CHECK(!memcmp(P->res + s * 11 * P->npix,
                              F->res + r * 11 * F->npix,
                              11 * P->npix * sizeof(float)));
            }
        }
        rvfit_table_rows t;
        CHECK(rvfit_rows_alloc(&t, &I.table[2], n, &err) == RVFIT_OK);
        CHECK(ops->read_rows(hs, 2, first, n, &t, &err) == RVFIT_OK);
        CHECK(((int64_t *)t.data[0])[n - 1] ==
              1001 + (int64_t)rows[first + n - 1]);
        rvfit_rows_free(&t, &I.table[2]);
    }
    rvfit_batch_free(&full);
    rvfit_batch_free(&part);
    ops->close(hs);
    ops->close(hf);
}

/* Image HDU `hdu` of two files holds the same bytes. */
static int same_image(const char *p1, const char *p2, const char *hdu,
                      size_t n)
{
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    fitsfile *f1, *f2;
    int st = 0;
    fits_open_file(&f1, p1, READONLY, &st);
    fits_open_file(&f2, p2, READONLY, &st);
    fits_movnam_hdu(f1, IMAGE_HDU, (char *)hdu, 0, &st);
    fits_movnam_hdu(f2, IMAGE_HDU, (char *)hdu, 0, &st);
    fits_read_img(f1, TFLOAT, 1, (LONGLONG)n, NULL, a, NULL, &st);
    fits_read_img(f2, TFLOAT, 1, (LONGLONG)n, NULL, b, NULL, &st);
    fits_close_file(f1, &st);
    fits_close_file(f2, &st);
    int same = st == 0 && memcmp(a, b, n * sizeof *a) == 0;
    free(a);
    free(b);
    return same;
}

static int leftovers(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".fits.") != NULL;
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    const rvfit_instrument_ops *ops = load();
    const rvfit_instrument_mock_ops *mk = tu_mock_ops("desi");
    const char *dir = tu_tmpdir("desi_mock");
    char p1[4096], p2[4096], p3[4096];
    snprintf(p1, sizeof p1, "%s/mock2.fits", dir);
    snprintf(p2, sizeof p2, "%s/mock1.fits", dir);
    snprintf(p3, sizeof p3, "%s/fail.fits", dir);
    rvfit_err err = {{0}};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = write_mock(mk, p1, 2, NSTAR, stars, SIZE_MAX, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK_MSG(rc == RVFIT_OK, "%s", err.msg);
    printf("  %d stars written in %.3f s on 2 threads\n", NSTAR,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
    if (rc == RVFIT_OK) {
        check_read_back(ops, p1);
        check_sparse(ops, p1);
    }

    /* the same seed on one thread gives the same bytes */
    CHECK(write_mock(mk, p2, 1, NSTAR, stars, SIZE_MAX, &err) == RVFIT_OK);
    CHECK(same_image(p1, p2, "B_FLUX", NSTAR * npix[0]));
    CHECK(same_image(p1, p2, "Z_IVAR", NSTAR * npix[2]));
    CHECK(same_image(p1, p2, "R_RESOLUTION", NSTAR * 11 * npix[1]));

    /* a failing truth: error passed up, nothing left behind */
    rc = write_mock(mk, p3, 2, NSTAR, stars, 2, &err);
    CHECK(rc == RVFIT_ERR_NUMERIC);
    CHECK_MSG(tu_contains(err.msg, "truth refused star 2") &&
                  tu_contains(err.msg, p3), "%s", err.msg);
    FILE *f = fopen(p3, "r");
    CHECK(f == NULL);
    if (f)
        fclose(f);
    CHECK(leftovers(dir) == 0);
    rvfit_mock_star bad = stars[0];
    bad.snr = 0.0;
    CHECK(write_mock(mk, p3, 1, 1, &bad, SIZE_MAX, &err) ==
          RVFIT_ERR_INVALID);
    CHECK(leftovers(dir) == 0);
    return tu_finish("test_desi_mock");
}
