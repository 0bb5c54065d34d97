/* test_sdss_mock.c — the SDSS mock writer: analytic check of its LSF and
 * pixel integration (a narrow line's flux, centroid and width against the
 * WDISP it declares; a flat spectrum stays flat), the requested S/N, bad
 * pixels masked by the reader, TARGETID round trip, the .list layout,
 * determinism across thread counts, and its errors. */
#include <dirent.h>
#include <dlfcn.h>
#include <fitsio.h>
#include <string.h>

#include "rvfit/plugin.h"
#include "rvfit/synth.h"
#include "testutil.h"

#define LINE_LAM 6000.0
#define LINE_SIG 0.05 /* A, intrinsic */
#define LINE_AMP 4.0  /* peak over a continuum of 1 */

static const rvfit_instrument_ops *load(void)
{
    return tu_plugin_ops("rvfit_instrument_sdss.so");
}

/* Flat continuum plus one narrow Gaussian emission line. */
static int line_truth(void *ctx, size_t star, double lnl0, double dlnl,
                      size_t n, double *flux, rvfit_err *err)
{
    (void)ctx, (void)star, (void)err;
    for (size_t k = 0; k < n; k++) {
        double d = (exp(lnl0 + dlnl * (double)k) - LINE_LAM) / LINE_SIG;
        flux[k] = 1.0 + LINE_AMP * exp(-0.5 * d * d);
    }
    return RVFIT_OK;
}

typedef struct spec_cols {
    long n;
    float *ll, *model, *wdisp, *flux, *ivar;
    int *mask;
    double coeff0;
} spec_cols;

static int read_cols(const char *path, spec_cols *c)
{
    fitsfile *fp;
    int st = 0, cn;
    memset(c, 0, sizeof *c);
    fits_open_file(&fp, path, READONLY, &st);
    fits_read_key(fp, TDOUBLE, "COEFF0", &c->coeff0, NULL, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "COADD", 0, &st);
    fits_get_num_rows(fp, &c->n, &st);
    if (st)
        return st;
    c->ll = malloc(c->n * sizeof(float));
    c->model = malloc(c->n * sizeof(float));
    c->wdisp = malloc(c->n * sizeof(float));
    c->flux = malloc(c->n * sizeof(float));
    c->ivar = malloc(c->n * sizeof(float));
    c->mask = malloc(c->n * sizeof(int));
    const char *names[6] = {"loglam", "model", "wdisp", "flux", "ivar",
                            "and_mask"};
    void *dst[6] = {c->ll, c->model, c->wdisp, c->flux, c->ivar, c->mask};
    for (int k = 0; k < 6; k++) {
        fits_get_colnum(fp, CASEINSEN, (char *)names[k], &cn, &st);
        fits_read_col(fp, k == 5 ? TINT : TFLOAT, cn, 1, 1, c->n, NULL,
                      dst[k], NULL, &st);
    }
    fits_close_file(fp, &st);
    return st;
}

static void free_cols(spec_cols *c)
{
    free(c->ll), free(c->model), free(c->wdisp), free(c->flux);
    free(c->ivar), free(c->mask);
}

static void test_line(const rvfit_instrument_mock_ops *mk, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/line.fits", dir);
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    rvfit_mock_star st = {3586551810500LL, 5000, 4, 0, 0, 0, 0, 100};
    int rc = mk->write_mock(&host, NULL, 0, path, 1, &st, line_truth, NULL,
                            1, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    spec_cols c;
    if (rc || read_cols(path, &c)) {
        CHECK(0);
        return;
    }
    /* median continuum scaled to 50; far from the line it stays flat */
    double maxdev = 0, flux = 0, m1 = 0, m2 = 0;
    for (long i = 0; i < c.n; i++) {
        double lam = pow(10.0, c.coeff0 + 1e-4 * (double)i);
        double dl = lam * (pow(10.0, 0.5e-4) - pow(10.0, -0.5e-4));
        if (fabs(lam - LINE_LAM) > 30.0 && i > 30 && i < c.n - 30)
            maxdev = fmax(maxdev, fabs(c.model[i] - 50.0));
        double e = (c.model[i] - 50.0) * dl;
        if (fabs(lam - LINE_LAM) < 30.0)
            flux += e, m1 += e * lam, m2 += e * lam * lam;
    }
    CHECK_NEAR(maxdev, 0.0, 5e-4);
    m1 /= flux;
    double sd = sqrt(m2 / flux - m1 * m1);
    CHECK_NEAR(flux, 50.0 * LINE_AMP * LINE_SIG * sqrt(6.283185307179586), 1e-3 * flux);
    CHECK_NEAR(m1, LINE_LAM, 0.01);
    /* width: intrinsic, the declared LSF and the pixel box */
    long p = (long)floor((log10(LINE_LAM) - c.coeff0) / 1e-4 + 0.5);
    double lsf = c.wdisp[p] * 1e-4 * log(10.0) * LINE_LAM;
    double pix = LINE_LAM * 1e-4 * log(10.0);
    double want = sqrt(LINE_SIG * LINE_SIG + lsf * lsf + pix * pix / 12.0);
    CHECK_NEAR(sd, want, 0.01 * want);
    CHECK(c.wdisp[p] > 0.95 && c.wdisp[p] < 1.35);
    free_cols(&c);
}

static size_t write_list(const rvfit_instrument_mock_ops *mk, const char *list,
                         rvfit_mock_star *st, size_t n, int nthreads)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    host.nthreads = nthreads;
    rvfit_err err;
    int rc = mk->write_mock(&host, NULL, 0, list, n, st, rvfit_synth_truth,
                            st, 11, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc ? 0 : n;
}

/* Read every spectrum of `list` through the plugin into b. */
static int read_list(const rvfit_instrument_ops *ops, const char *list,
                     rvfit_batch *b, void **h)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    rvfit_file_info I;
    int rc = ops->open(&host, NULL, 0, list, NULL, h, &err);
    if (!rc) {
        ops->info(*h, &I);
        rc = rvfit_batch_alloc(b, 1, I.arm, I.nselect, &err);
    }
    if (!rc)
        rc = ops->read(*h, 0, I.nselect, b, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

static void test_list(const rvfit_instrument_ops *ops,
                      const rvfit_instrument_mock_ops *mk, const char *dir)
{
    enum { N = 6 };
    rvfit_grid_spec g;
    rvfit_err err;
    rvfit_grid_preset("small", &g, &err);
    rvfit_mock_star st[N];
    rvfit_mock_stars(&g, N, 5, 300, 10, 5, 50, st);
    const double snr[N] = {5, 10, 20, 30, 40, 50};
    for (int i = 0; i < N; i++)
        st[i].snr = snr[i];
    char a[4200], b2[4200], spec[4300];
    snprintf(a, sizeof a, "%s/a.list", dir);
    snprintf(b2, sizeof b2, "%s/b.list", dir);
    write_list(mk, a, st, N, 1);
    write_list(mk, b2, st, N, 2);
    rvfit_batch A, B;
    void *ha = NULL, *hb = NULL;
    if (read_list(ops, a, &A, &ha) || read_list(ops, b2, &B, &hb))
        return;
    size_t np = A.arm[0].npix;
    CHECK(np <= 4600 && np >= 4580);
    CHECK(!memcmp(A.arm[0].flux, B.arm[0].flux, N * np * sizeof(float)));
    CHECK(!memcmp(A.arm[0].ivar, B.arm[0].ivar, N * np * sizeof(float)));
    rvfit_table_rows r;
    rvfit_file_info I;
    ops->info(ha, &I);
    CHECK(rvfit_rows_alloc(&r, &I.table[0], N, &err) == 0);
    CHECK(ops->read_rows(ha, 0, 0, N, &r, &err) == 0);
    long flagged = 0; /* and_mask set with ivar > 0: the reader's job */
    for (int i = 0; i < N; i++) {
        CHECK(((int64_t *)r.data[0])[i] == st[i].targetid);
        /* noise moves the median a little at low S/N */
        CHECK_MSG(fabs(A.snr[i] / snr[i] - 1.0) < (snr[i] < 10 ? 0.08 : 0.04),
                  "S/N %g for %g",
                  A.snr[i], snr[i]);
        /* reader: and_mask, ivar 0 and the 3600-10400 A bound */
        spec_cols c;
        snprintf(spec, sizeof spec, "%s/a/spec-0000-00100-%04d.fits", dir,
                 i);
        if (read_cols(spec, &c)) {
            CHECK(0);
            continue;
        }
        long bad = 0, zero = 0;
        for (long p = 0; p < c.n; p++) {
            double lam = pow(10.0, c.coeff0 + 1e-4 * p);
            bad += c.mask[p] != 0 || !(c.ivar[p] > 0) || lam < 3600.0 ||
                   lam > 10400.0;
            zero += A.arm[0].ivar[i * np + (size_t)p] == 0.0f;
        }
        CHECK_MSG(zero == bad, "%ld unusable, %ld bad of %ld", zero, bad,
                  c.n);
        for (size_t q = (size_t)c.n; q < np; q++) /* padding */
            zero += A.arm[0].ivar[i * np + q] == 0.0f;
        CHECK(zero == bad + (long)np - c.n);
        for (long q = 0; q < c.n; q++)
            flagged += c.mask[q] != 0 && c.ivar[q] > 0;
        CHECK(c.coeff0 >= 3.5563 - 1e-9 && c.coeff0 <= 3.5572 + 1e-9);
        free_cols(&c);
    }
    CHECK(flagged > 0);
    rvfit_rows_free(&r, &I.table[0]);
    rvfit_batch_free(&A);
    rvfit_batch_free(&B);
    ops->close(ha);
    ops->close(hb);
    /* only the spec files: no temporary left behind */
    char sub[4300];
    snprintf(sub, sizeof sub, "%s/a", dir);
    DIR *d = opendir(sub);
    int nfile = 0, other = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            nfile++, other += strncmp(e->d_name, "spec-", 5) != 0;
    if (d)
        closedir(d);
    CHECK(nfile == N && other == 0);
}

static void test_errors(const rvfit_instrument_mock_ops *mk, const char *dir)
{
    char p[4200];
    rvfit_host host = tu_host(RVFIT_LOG_ERROR);
    rvfit_err err;
    rvfit_mock_star st[2] = {{1, 5000, 4, 0, 0, 0, 0, 10},
                             {2, 5000, 4, 0, 0, 0, 0, 10}};
    snprintf(p, sizeof p, "%s/two.fits", dir);
    CHECK(mk->write_mock(&host, NULL, 0, p, 2, st, rvfit_synth_truth, st, 1,
                         &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, ".list"), "%s", err.msg);
    st[0].targetid = -5;
    CHECK(mk->write_mock(&host, NULL, 0, p, 1, st, rvfit_synth_truth, st, 1,
                         &err) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(err.msg, "TARGETID -5"));
    st[0].targetid = 1;
    st[0].snr = 0;
    CHECK(mk->write_mock(&host, NULL, 0, p, 1, st, rvfit_synth_truth, st, 1,
                         &err) == RVFIT_ERR_INVALID);
    FILE *f = fopen(p, "rb");
    CHECK(f == NULL); /* nothing left where it failed */
    if (f)
        fclose(f);
}

int main(void)
{
    const rvfit_instrument_ops *ops = load();
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("sdss_mock"));
    const rvfit_instrument_mock_ops *mk = tu_mock_ops("sdss");
    test_line(mk, dir);
    test_list(ops, mk, dir);
    test_errors(mk, dir);
    return tu_finish("test_sdss_mock");
}
