/* test_lamost_mrs_read.c — the LAMOST plugin on MRS med- files this test
 * writes with CFITSIO from known arrays (the layout of
 * ../shared/reference/formats.md: keywords-only primary, COADD_B/COADD_R
 * and per-exposure B-<LMJM>/R-<LMJM> tables of one row per pixel):
 * detection, the two arms MRS_B and MRS_R, exact log-linear wavelengths
 * from the float32 LOGLAM (and a non-log-linear one as stored), flux, ivar
 * with ANDMASK / PIXMASK / NaN / negative and zero ivar at zero weight
 * (ORMASK not), the LSF lambda / (7500 2.3548), S/N; the coadd and the
 * exposures ([instrument.lamost] mrs), exposures in LMJM order whatever
 * the HDU order, one with its R table missing; the epochs (DESIG, OBSID,
 * LMJM, MJD = LMJM / 1440 - 8/24, a coadd's the mean of its LMJMLIST);
 * the LAMOST table's MRS columns; HELIO = F; selection; the template
 * arms and the new options; and clear errors for malformed files. */
#include <fitsio.h>
#include <string.h>

#include "rvfit/instrument_epochs.h"
#include "rvfit/plugin.h"
#include "testutil.h"

#define NB 2000
#define NR 1800
#define LLB 3.6950
#define LLR 3.8000
#define DLL 8.13e-6
#define OBSID 123456789LL
#define C_KMS 299792.458
#define FWHM_SIGMA 2.354820045030949382
#define DESIG "LAMOST J041615.64+451723.3"

static const long long LMJM[3] = {84420148, 84420163, 84420178};

/* Variants of the constructed file. */
enum {
    F_NO_COADD = 1, F_NO_EXP = 2, F_NO_IVAR = 4, F_VECTOR = 8,
    F_ONEROW = 16, F_BAD_WAVE = 32, F_ZERO_IVAR = 64, F_HELIO_F = 128,
    F_LINEAR = 256, F_NOT_TABLE = 512, F_DUP = 1024
};

/* Spectrum k (0 the coadd, 1..3 the exposures by LMJM), arm a, pixel i. */
static float flux_of(int k, int a, int i)
{
    return 100.0f + (float)i + 1000.0f * (float)a + 10000.0f * (float)k;
}

static float ivar_of(int i)
{
    return 0.25f + 0.01f * (float)(i % 50);
}

/* log10(lambda) as stored (float32); F_LINEAR: linear in lambda. */
static float loglam_of(int a, int i, int linear)
{
    if (linear)
        return (float)log10(4960.0 + 0.1 * i);
    return (float)((a ? LLR : LLB) + DLL * i);
}

/* By construction: mask at 5 (ANDMASK of a coadd) or 7 (PIXMASK of an
 * exposure), NaN flux at 9, ivar -1 at 11 and 0 at 12; ORMASK at 6. */
static int usable(int k, int i)
{
    return i != (k ? 7 : 5) && i != 9 && i != 11 && i != 12;
}

static void put_table(fitsfile *fp, const char *ext, int k, int a,
                      int flags, int *st)
{
    int n = a ? NR : NB, coadd = k == 0;
    if ((flags & F_ONEROW) && coadd && a == 1)
        n = 1;
    char *tt[5] = {"FLUX", "IVAR", "LOGLAM", coadd ? "ANDMASK" : "PIXMASK",
                   "ORMASK"};
    char *tf[5] = {(flags & F_VECTOR) && coadd && !a ? "2E" : "E", "E", "E",
                   "I", "I"};
    int ncol = coadd ? 5 : 4, skip_ivar = (flags & F_NO_IVAR) && k == 1;
    if (skip_ivar) /* IVAR left out */
        tt[1] = tt[2], tt[2] = tt[3], tf[2] = "I", ncol--;
    float f[NB], v[NB], l[NB];
    int m[NB], o[NB];
    for (int i = 0; i < n; i++) {
        f[i] = flux_of(k, a, i);
        v[i] = (flags & F_ZERO_IVAR) && k == 2 ? 0.0f : ivar_of(i);
        l[i] = loglam_of(a, i, (flags & F_LINEAR) && coadd && !a);
        m[i] = i == (coadd ? 5 : 7) ? 4 : 0;
        o[i] = i == 6 || i == 5 ? 1 : 0;
    }
    f[9] = NAN, v[11] = -1.0f, v[12] = 0.0f;
    if ((flags & F_BAD_WAVE) && coadd && !a)
        l[20] = l[19];
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)n, ncol, tt, tf, NULL, ext,
                    st);
    int c = 1;
    fits_write_col(fp, TFLOAT, c++, 1, 1, n, f, st);
    if (!skip_ivar)
        fits_write_col(fp, TFLOAT, c++, 1, 1, n, v, st);
    fits_write_col(fp, TFLOAT, c++, 1, 1, n, l, st);
    fits_write_col(fp, TINT, c++, 1, 1, n, m, st);
    if (coadd)
        fits_write_col(fp, TINT, c, 1, 1, n, o, st);
    double snr = 12.5 + a + 10 * k, exptime = 900;
    fits_write_key(fp, TDOUBLE, "SNR", &snr, NULL, st);
    if (coadd) {
        fits_write_key_longstr(fp, "LMJMLIST", a ? "84420148-84420163"
                               : "84420148-84420163-84420178", NULL, st);
    } else {
        long long lm = LMJM[k - 1];
        fits_write_key(fp, TLONGLONG, "LMJM", &lm, NULL, st);
        fits_write_key(fp, TDOUBLE, "EXPTIME", &exptime, NULL, st);
    }
}

static void put_primary(fitsfile *fp, int flags, int *st)
{
    long long obsid = OBSID, lmjd = 58625, mjd = 58624;
    double ra = 64.065, dec = 45.289, helio = -7.5;
    int t = 1, f = 0, fiber = 126, nb = 3, nr = 2;
    fits_create_img(fp, BYTE_IMG, 0, NULL, st);
    fits_write_key(fp, TLONGLONG, "OBSID", &obsid, NULL, st);
    fits_write_key(fp, TSTRING, "DESIG", DESIG, NULL, st);
    fits_write_key(fp, TDOUBLE, "RA", &ra, NULL, st);
    fits_write_key(fp, TDOUBLE, "DEC", &dec, NULL, st);
    fits_write_key(fp, TLONGLONG, "LMJD", &lmjd, NULL, st);
    fits_write_key(fp, TLONGLONG, "MJD", &mjd, NULL, st);
    fits_write_key(fp, TSTRING, "PLANID", "HD041619N453442B01", NULL, st);
    fits_write_key(fp, TINT, "FIBERID", &fiber, NULL, st);
    fits_write_key(fp, TINT, "NEXP_B", &nb, NULL, st);
    fits_write_key(fp, TINT, "NEXP_R", &nr, NULL, st);
    fits_write_key(fp, TDOUBLE, "HELIO_RV", &helio, NULL, st);
    fits_write_key(fp, TLOGICAL, "HELIO", flags & F_HELIO_F ? &f : &t, NULL,
                   st);
    fits_write_key(fp, TLOGICAL, "VACUUM", &t, NULL, st);
    fits_write_key(fp, TSTRING, "DATA_V", "LAMOST DR7", NULL, st);
}

/* The med- file: coadds, then the exposures out of LMJM order (the
 * second, the first, the third without its R table). */
static void write_mrs(const char *path, int flags)
{
    fitsfile *fp;
    int st = 0;
    remove(path);
    fits_create_file(&fp, path, &st);
    put_primary(fp, flags, &st);
    if (!(flags & F_NO_COADD)) {
        put_table(fp, "COADD_B", 0, 0, flags, &st);
        if (flags & F_NOT_TABLE) {
            long nax = 4;
            fits_create_img(fp, FLOAT_IMG, 1, &nax, &st);
            fits_write_key(fp, TSTRING, "EXTNAME", "COADD_R", NULL, &st);
        } else {
            put_table(fp, "COADD_R", 0, 1, flags, &st);
        }
    }
    static const int order[5][2] = {{2, 0}, {2, 1}, {1, 0}, {1, 1}, {3, 0}};
    for (int q = 0; q < 5 && !(flags & F_NO_EXP); q++) {
        int k = order[q][0], a = order[q][1];
        char ext[32];
        snprintf(ext, sizeof ext, "%s-%lld", a ? "R" : "B", LMJM[k - 1]);
        put_table(fp, ext, k, a, flags, &st);
    }
    if (flags & F_DUP)
        put_table(fp, "B-84420148", 1, 0, 0, &st);
    fits_close_file(fp, &st);
    CHECK_MSG(st == 0, "writing %s: CFITSIO %d", path, st);
}

static const rvfit_instrument_ops *ops;
static const rvfit_instrument_epochs_ops *eops;

/* A host that keeps the last warning. */
static char last_warn[1024];
static void keep_log(void *ctx, int level, const char *who, const char *msg)
{
    (void)ctx, (void)who;
    if (level <= RVFIT_LOG_WARN)
        snprintf(last_warn, sizeof last_warn, "%s", msg);
}

/* The host outlives the handles (the plugin keeps a pointer to it). */
static rvfit_host host;

static int open_h(const char *path, int exposures, const rvfit_select *sel,
                  void **h, rvfit_file_info *I, rvfit_err *err)
{
    rvfit_kv kv = {"mrs", "exposures", "t.ini", 3};
    *h = NULL;
    int rc = ops->open(&host, &kv, exposures, path, sel, h, err);
    CHECK(rc == 0 || *h == NULL);
    if (!rc)
        ops->info(*h, I);
    return rc;
}

static void *open_ok(const char *path, int exposures, rvfit_file_info *I)
{
    rvfit_err err;
    void *h = NULL;
    int rc = open_h(path, exposures, NULL, &h, I, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc ? NULL : h;
}

static int read_all(void *h, const rvfit_file_info *I, rvfit_batch *b,
                    rvfit_err *err)
{
    int rc = rvfit_batch_alloc(b, I->narm, I->arm, I->nselect, err);
    if (!rc && (rc = ops->read(h, 0, I->nselect, b, err)) != 0)
        rvfit_batch_free(b);
    return rc;
}

/* Spectrum s of b is file spectrum k (0 coadd; 1.. exposures). */
static void check_spec(const rvfit_batch *b, size_t s, int k, double vshift,
                       int has_r)
{
    double maxw = 0, maxl = 0;
    for (int a = 0; a < 2; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        size_t N = A->npix, n = rvfit_arm_npix(A, s);
        const double *w = A->wave + s * N;
        const float *f = A->flux + s * N, *v = A->ivar + s * N;
        if (a == 1 && !has_r) {
            int any = 0;
            for (size_t i = 0; i < n; i++)
                any |= v[i] > 0;
            CHECK_MSG(!any && n == N && w[0] == 6250.0 &&
                      fabs(w[n - 1] - 6850.0) < 1e-9, "missing R arm: %zu "
                      "pixels %g-%g", n, w[0], w[n - 1]);
            continue;
        }
        CHECK_MSG(n == (size_t)(a ? NR : NB), "spectrum %zu arm %d: %zu "
                  "pixels", s, a, n);
        for (size_t i = 0; i < n; i++) {
            double want = pow(10.0, (a ? LLR : LLB) + DLL * (double)i) *
                          (1.0 + vshift / C_KMS);
            maxw = fmax(maxw, fabs(w[i] / want - 1.0));
            maxl = fmax(maxl, fabs(A->lsf[s * N + i] /
                                   (w[i] / (7500.0 * FWHM_SIGMA)) - 1.0));
            if (usable(k, (int)i)) {
                CHECK(f[i] == flux_of(k, a, (int)i));
                CHECK(v[i] == ivar_of((int)i));
            } else {
                CHECK_MSG(v[i] == 0.0f, "spectrum %zu arm %d pixel %zu", s,
                          a, i);
            }
        }
        CHECK(f[9] == 0.0f);
        for (size_t i = n; i < N; i++) /* padding: no weight */
            CHECK(v[i] == 0.0f && f[i] == 0.0f && w[i] > w[i - 1]);
    }
    /* the straight line through the float32 values (whose rounding is
     * up to 2.7e-7), not the values */
    CHECK_MSG(maxw < 2e-8, "spectrum %zu: wavelengths off by %.3g", s, maxw);
    CHECK_MSG(maxl < 1e-6, "LSF off by %.3g", maxl);
    CHECK(b->flags[s] == 0);
}

static double mjd_of(long long lmjm)
{
    return (double)lmjm / 1440.0 - 8.0 / 24.0;
}

/* Epochs of the n selected spectra: key, targetid, expid, mjd. */
static void check_epochs(void *h, size_t n, const long long *expid,
                         const double *mjd)
{
    rvfit_epoch e[4];
    rvfit_err err;
    CHECK(n <= 4);
    int rc = eops->epochs(h, 0, n, e, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    for (size_t i = 0; !rc && i < n; i++) {
        CHECK_MSG(!strcmp(e[i].key, DESIG), "key '%s'", e[i].key);
        CHECK(e[i].targetid == OBSID);
        CHECK_MSG(e[i].expid == expid[i], "expid %lld, want %lld",
                  (long long)e[i].expid, expid[i]);
        CHECK_MSG(fabs(e[i].mjd - mjd[i]) < 1e-9, "mjd %.9f, want %.9f",
                  e[i].mjd, mjd[i]);
    }
    CHECK(eops->epochs(h, 0, n + 1, e, &err) == RVFIT_ERR_INVALID);
}

/* The LAMOST table's MRS columns of row i. */
static void check_rows(void *h, const rvfit_file_info *I, size_t n,
                       const long long *lmjm, const double *snrb,
                       const double *exptime)
{
    const rvfit_table_schema *lm = &I->table[1];
    rvfit_table_rows r;
    rvfit_err err;
    CHECK(!strcmp(lm->extname, "LAMOST") && lm->ncol == 23);
    if (rvfit_rows_alloc(&r, lm, n, &err))
        return;
    CHECK(ops->read_rows(h, 1, 0, n, &r, &err) == 0 && r.nrow == n);
    int cl = tu_find_col(lm, "LMJM"), ce = tu_find_col(lm, "EXPTIME");
    int cb = tu_find_col(lm, "SNR_B"), cn = tu_find_col(lm, "NEXP_R");
    int cd = tu_find_col(lm, "DESIG"), co = tu_find_col(lm, "OBSID");
    CHECK(cl >= 0 && ce >= 0 && cb >= 0 && cn >= 0 && cd >= 0 && co >= 0);
    for (size_t i = 0; i < n && cl >= 0 && ce >= 0 && cb >= 0 && cn >= 0 &&
                       cd >= 0 && co >= 0; i++) {
        CHECK(((int64_t *)r.data[cl])[i] == lmjm[i]);
        float x = ((float *)r.data[ce])[i];
        CHECK(isnan(exptime[i]) ? isnan(x) : x == (float)exptime[i]);
        CHECK(((float *)r.data[cb])[i] == (float)snrb[i]);
        CHECK(((int32_t *)r.data[cn])[i] == 2);
        CHECK(!strncmp((char *)r.data[cd] + 32 * i, DESIG, strlen(DESIG)));
        CHECK(((int64_t *)r.data[co])[i] == OBSID);
    }
    rvfit_rows_free(&r, lm);
}

static void test_coadd(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/med-58625-HD041619N453442B01_sp07-126.fits",
             dir);
    write_mrs(p, 0);
    rvfit_file_info I;
    void *h = open_ok(p, 0, &I);
    if (!h)
        return;
    CHECK(I.narm == 2 && !strcmp(I.arm[0].name, "MRS_B") &&
          !strcmp(I.arm[1].name, "MRS_R"));
    CHECK(I.arm[0].npix == NB && I.arm[1].npix == NR &&
          I.arm[0].res_kind == RVFIT_RES_LSF && I.arm[1].wave_per_spec);
    CHECK(I.ntotal == 1 && I.nselect == 1);
    rvfit_batch b;
    rvfit_err err;
    if (read_all(h, &I, &b, &err) == 0) {
        check_spec(&b, 0, 0, 0.0, 1);
        CHECK(b.index[0] == 0);
        rvfit_batch_free(&b);
    } else {
        CHECK_MSG(0, "%s", err.msg);
    }
    long long expid = OBSID;
    double mjd = (mjd_of(LMJM[0]) + mjd_of(LMJM[1]) + mjd_of(LMJM[2])) / 3;
    check_epochs(h, 1, &expid, &mjd);
    long long lm = -1;
    double snrb = 12.5, ex = NAN;
    check_rows(h, &I, 1, &lm, &snrb, &ex);
    ops->close(h);
}

static void test_exposures(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/med-58625-HD041619N453442B01_sp07-126.fits",
             dir);
    rvfit_file_info I;
    last_warn[0] = '\0';
    void *h = open_ok(p, 1, &I);
    if (!h)
        return;
    /* one warning at open for the exposure without its R table */
    CHECK_MSG(tu_contains(last_warn, "1 of 3 exposures lack one arm") &&
                  tu_contains(last_warn, "HDU B-84420178 without "
                              "R-84420178"), "%s", last_warn);
    CHECK(I.narm == 2 && I.ntotal == 3 && I.nselect == 3);
    CHECK(I.arm[0].npix == NB && I.arm[1].npix == NR);
    rvfit_batch b;
    rvfit_err err;
    if (read_all(h, &I, &b, &err) == 0) {
        for (size_t s = 0; s < 3; s++) {
            check_spec(&b, s, (int)s + 1, 0.0, s < 2);
            CHECK(b.index[s] == s);
        }
        CHECK(isnan(b.snr[2 * 2 + 1]) && b.snr[2 * 2] > 0);
        rvfit_batch_free(&b);
    } else {
        CHECK_MSG(0, "%s", err.msg);
    }
    double mjd[3];
    for (int k = 0; k < 3; k++)
        mjd[k] = mjd_of(LMJM[k]);
    check_epochs(h, 3, LMJM, mjd);
    double snrb[3] = {22.5, 32.5, 42.5}, ex[3] = {900, 900, 900};
    check_rows(h, &I, 3, LMJM, snrb, ex);
    ops->close(h);
}

/* HELIO = F shifts by HELIO_RV; LOGLAM not on a line is used as stored. */
static void test_frame(const char *dir)
{
    char p[4200];
    rvfit_file_info I;
    rvfit_batch b;
    rvfit_err err;
    snprintf(p, sizeof p, "%s/helio.fits", dir);
    write_mrs(p, F_HELIO_F);
    void *h = open_ok(p, 1, &I);
    if (h && read_all(h, &I, &b, &err) == 0) {
        check_spec(&b, 0, 1, -7.5, 1);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
    snprintf(p, sizeof p, "%s/linear.fits", dir);
    write_mrs(p, F_LINEAR);
    h = open_ok(p, 0, &I);
    if (h && read_all(h, &I, &b, &err) == 0) {
        int same = 1;
        for (int i = 0; i < NB; i++)
            same &= b.arm[0].wave[i] ==
                    pow(10.0, (double)loglam_of(0, i, 1));
        CHECK(same);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
}

/* Selection: the file's OBSID, and either arm's median S/N. */
static void test_select(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/med-58625-HD041619N453442B01_sp07-126.fits",
             dir);
    int64_t ids[2] = {5, OBSID};
    rvfit_select s = {0, 1, ids};
    rvfit_file_info I;
    rvfit_err err;
    void *h = NULL;
    if (!open_h(p, 1, &s, &h, &I, &err)) {
        CHECK(I.nselect == 0 && I.ntotal == 3);
        ops->close(h);
    }
    s.ntargetid = 2;
    if (!open_h(p, 1, &s, &h, &I, &err)) {
        CHECK(I.nselect == 3);
        ops->close(h);
    }
    /* a cut just above exposure 2's B arm: exposure 1 falls below in
     * both arms, exposure 2 passes by its R arm (fluxes 1000 higher),
     * exposure 3 (B only) by its B arm */
    double cut = NAN;
    if (!open_h(p, 1, NULL, &h, &I, &err)) {
        rvfit_batch b;
        if (read_all(h, &I, &b, &err) == 0) {
            cut = b.snr[1 * 2 + 0] + 1.0;
            CHECK(b.snr[0] < cut && b.snr[1] < cut && b.snr[3] > cut &&
                  b.snr[4] > cut);
            rvfit_batch_free(&b);
        }
        ops->close(h);
    }
    rvfit_select m = {cut, 0, NULL};
    if (!open_h(p, 1, &m, &h, &I, &err)) {
        CHECK_MSG(I.nselect == 2, "%zu selected at minsn %g", I.nselect,
                  m.minsn);
        long long want[2] = {LMJM[1], LMJM[2]};
        double mjd[2] = {mjd_of(LMJM[1]), mjd_of(LMJM[2])};
        if (I.nselect == 2)
            check_epochs(h, 2, want, mjd);
        ops->close(h);
    }
}

/* A malformed file: open (or, when at_read, read) fails with code and a
 * message naming the file and saying msg. */
static void expect(const char *dir, const char *name, int flags,
                   int exposures, int at_read, const char *msg)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    write_mrs(p, flags);
    rvfit_file_info I;
    rvfit_err err;
    void *h = NULL;
    int rc = open_h(p, exposures, NULL, &h, &I, &err);
    if (at_read && !rc) {
        rvfit_batch b;
        rc = read_all(h, &I, &b, &err);
        if (!rc)
            rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
    CHECK_MSG(rc == RVFIT_ERR_FORMAT, "%s: %d", name, rc);
    CHECK_MSG(tu_contains(err.msg, name) && tu_contains(err.msg, msg),
              "%s: '%s' lacks '%s'", name, err.msg, msg);
}

static void test_errors(const char *dir)
{
    expect(dir, "nocoadd.fits", F_NO_COADD, 0, 0,
           "no HDU COADD_B or COADD_R");
    expect(dir, "noexp.fits", F_NO_EXP, 1, 0, "no HDU B-<LMJM> or R-<LMJM>");
    expect(dir, "noivar.fits", F_NO_IVAR, 1, 0,
           "HDU B-84420148: column IVAR missing");
    expect(dir, "vector.fits", F_VECTOR, 0, 0, "HDU COADD_B: column FLUX");
    expect(dir, "onerow.fits", F_ONEROW, 0, 0,
           "HDU COADD_R: 1 rows; an MRS table has one row per pixel");
    expect(dir, "notable.fits", F_NOT_TABLE, 0, 0,
           "HDU COADD_R: not a binary table");
    expect(dir, "dup.fits", F_DUP, 1, 0, "HDU B-84420148 appears twice");
    expect(dir, "badwave.fits", F_BAD_WAVE, 0, 1,
           "HDU COADD_B: wavelength[20]");
    /* tables of the mode not read are not looked at */
    char p[4200];
    rvfit_file_info I;
    snprintf(p, sizeof p, "%s/noivar.fits", dir);
    void *h = open_ok(p, 0, &I);
    if (h)
        ops->close(h);
    /* an exposure of zero ivar everywhere: flagged, logged, not an
     * error */
    snprintf(p, sizeof p, "%s/zero.fits", dir);
    write_mrs(p, F_ZERO_IVAR);
    h = open_ok(p, 1, &I);
    rvfit_batch b;
    rvfit_err err;
    last_warn[0] = '\0';
    if (h && read_all(h, &I, &b, &err) == 0) {
        CHECK(b.flags[0] == 0 && b.flags[1] == RVFIT_SPEC_BAD &&
              b.flags[2] == 0);
        CHECK_MSG(tu_contains(last_warn, "zero.fits: HDU B-84420163: "
                              "spectrum 1: no usable pixel in either arm"),
                  "%s", last_warn);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
}

static int arms_of(const char *arms, rvfit_template_arm *t, rvfit_err *err)
{
    rvfit_kv kv = {"arms", arms, "t.ini", 4};
    int narm = -1;
    int rc = ops->template_arms(&kv, arms ? 1 : 0, &narm, t, err);
    return rc ? -1 : narm;
}

static void test_options(void)
{
    rvfit_template_arm t[RVFIT_MAX_ARMS];
    rvfit_err err;
    CHECK(arms_of(NULL, t, &err) == 1 && !strcmp(t[0].name, "LRS"));
    CHECK(arms_of("mrs", t, &err) == 2);
    CHECK(!strcmp(t[0].name, "MRS_B") && t[0].lam_min == 4900.0 &&
          t[0].lam_max == 5400.0 && t[0].step == 0.04 &&
          t[0].sigma_kms == 3.6);
    CHECK(!strcmp(t[1].name, "MRS_R") && t[1].lam_min == 6250.0 &&
          t[1].lam_max == 6850.0);
    CHECK(arms_of("MRS, lrs", t, &err) == 3 && !strcmp(t[0].name, "LRS") &&
          !strcmp(t[2].name, "MRS_R"));
    CHECK(arms_of("hrs", t, &err) == -1);
    CHECK_MSG(tu_contains(err.msg, "t.ini:4: key 'arms': 'hrs' is not lrs, "
                          "mrs or 'lrs, mrs'"), "%s", err.msg);
    rvfit_kv kv[3] = {{"mrs", "single", "t.ini", 5},
                      {"mrs_resolution", "50", "t.ini", 6},
                      {"mrs_step", "0.02", "t.ini", 7}};
    int narm = 0;
    CHECK(ops->template_arms(kv, 1, &narm, t, &err) == RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "t.ini:5: key 'mrs': 'single' is not "
                          "coadd or exposures"), "%s", err.msg);
    CHECK(ops->template_arms(kv + 1, 1, &narm, t, &err) == RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "mrs_resolution"), "%s", err.msg);
    rvfit_kv two[2] = {{"arms", "mrs", "t.ini", 8}, kv[2]};
    CHECK(ops->template_arms(two, 2, &narm, t, &err) == 0 && narm == 2 &&
          t[1].step == 0.02);
}

/* mrs_resolution scales the LSF. */
static void test_resolution(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/med-58625-HD041619N453442B01_sp07-126.fits",
             dir);
    rvfit_kv kv = {"mrs_resolution", "5000", "t.ini", 3};
    rvfit_err err;
    void *h = NULL;
    if (ops->open(&host, &kv, 1, p, NULL, &h, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    rvfit_file_info I;
    rvfit_batch b;
    ops->info(h, &I);
    if (read_all(h, &I, &b, &err) == 0) {
        const rvfit_arm_batch *A = &b.arm[1];
        CHECK_NEAR(A->lsf[3] / (A->wave[3] / (5000.0 * FWHM_SIGMA)), 1.0,
                   1e-6);
        rvfit_batch_free(&b);
    }
    ops->close(h);
}

int main(void)
{
    tu_need_plugin("rvfit_instrument_lamost");
    const char *dir = tu_tmpdir("lamost_mrs_read");
    host = tu_host(RVFIT_LOG_WARN);
    host.log = keep_log;
    ops = tu_plugin_ops("rvfit_instrument_lamost.so");
    eops = tu_epochs_ops("lamost");
    test_coadd(dir);
    test_exposures(dir);
    test_frame(dir);
    test_select(dir);
    test_errors(dir);
    test_options();
    test_resolution(dir);
    return tu_finish("test_lamost_mrs_read");
}
