/* test_lamost_read.c — the LAMOST LRS plugin on files this test writes
 * with CFITSIO from known arrays, in both layouts (DR1-DR7 primary image
 * of 5 rows, DR8+ COADD table): exact log-linear wavelengths from the
 * float32 row, flux, ivar with andmask / NaN / negative-ivar pixels at
 * zero weight, the Gaussian LSF lambda / (R 2.3548), S/N, OBSID as
 * TARGETID and the header values in the output tables; the wavelength
 * frame (HELIO = F shifts by HELIO_RV, VACUUM = F is refused); selection;
 * template arms and options; errors for broken files; and the mock
 * writer's files of both layouts read back. */
#include <dlfcn.h>
#include <fitsio.h>
#include <string.h>

#include "rvfit/plugin.h"
#include "rvfit/synth.h"
#include "testutil.h"

#define NPIX 64
#define COEFF0 3.6
#define OBSID 123456789012LL
#define C_KMS 299792.458
#define FWHM_SIGMA 2.354820045030949382

/* Variants of the constructed file. */
enum {
    F_NO_COEFF = 1, F_HELIO_F = 2, F_VACUUM_F = 4, F_NO_OBSID = 8,
    F_BAD_WAVE = 16, F_ROWS4 = 32, F_NO_ANDMASK = 64
};

static double wave_of(int i)
{
    return pow(10.0, COEFF0 + 1e-4 * i);
}

/* Pixel i's usability by construction: andmask at 5, NaN flux at 9,
 * negative ivar at 11; ormask alone (pixel 6) does not mask. */
static int usable(int i)
{
    return i != 5 && i != 9 && i != 11;
}

static void make_rows(float row[5][NPIX], int flags)
{
    for (int i = 0; i < NPIX; i++) {
        row[0][i] = 100.0f + (float)i;
        row[1][i] = 0.25f + 0.01f * (float)i;
        row[2][i] = (float)wave_of(i);
        row[3][i] = i == 5 ? 4.0f : 0.0f;
        row[4][i] = i == 5 || i == 6 ? 1.0f : 0.0f;
    }
    row[0][9] = NAN;
    row[1][11] = -1.0f;
    if (flags & F_BAD_WAVE)
        row[2][20] = row[2][19];
}

static void header(fitsfile *fp, int flags, int *st)
{
    long long obsid = OBSID;
    double ra = 12.5, dec = -3.25, z = 1e-4, zerr = 2e-5, helio = -7.5;
    double c0 = COEFF0, c1 = 1e-4;
    int t = 1, f = 0;
    if (!(flags & F_NO_OBSID))
        fits_write_key(fp, TLONGLONG, "OBSID", &obsid, NULL, st);
    fits_write_key(fp, TDOUBLE, "RA", &ra, NULL, st);
    fits_write_key(fp, TDOUBLE, "DEC", &dec, NULL, st);
    fits_write_key(fp, TSTRING, "CLASS", "STAR", NULL, st);
    fits_write_key(fp, TSTRING, "SUBCLASS", "G5", NULL, st);
    fits_write_key(fp, TDOUBLE, "Z", &z, NULL, st);
    fits_write_key(fp, TDOUBLE, "Z_ERR", &zerr, NULL, st);
    const char *snr[5] = {"SNRU", "SNRG", "SNRR", "SNRI", "SNRZ"};
    for (int b = 0; b < 5; b++) {
        double v = 1.5 + b;
        fits_write_key(fp, TDOUBLE, snr[b], &v, NULL, st);
    }
    fits_write_key(fp, TDOUBLE, "HELIO_RV", &helio, NULL, st);
    fits_write_key(fp, TLOGICAL, "HELIO", flags & F_HELIO_F ? &f : &t, NULL,
                   st);
    fits_write_key(fp, TLOGICAL, "VACUUM", flags & F_VACUUM_F ? &f : &t,
                   NULL, st);
    if (!(flags & F_NO_COEFF)) {
        fits_write_key(fp, TDOUBLE, "COEFF0", &c0, NULL, st);
        fits_write_key(fp, TDOUBLE, "COEFF1", &c1, NULL, st);
    }
}

/* layout 7: primary image; 8: COADD table. */
static void write_lrs(const char *path, int layout, int flags)
{
    float row[5][NPIX];
    fitsfile *fp;
    int st = 0;
    make_rows(row, flags);
    remove(path);
    fits_create_file(&fp, path, &st);
    if (layout == 7) {
        long nax[2] = {NPIX, flags & F_ROWS4 ? 4 : 5};
        fits_create_img(fp, FLOAT_IMG, 2, nax, &st);
        fits_write_img(fp, TFLOAT, 1, NPIX * nax[1], row[0], &st);
        header(fp, flags, &st);
    } else {
        char *names[] = {"FLUX", "IVAR", "WAVELENGTH", "ORMASK", "ANDMASK"};
        char *forms[] = {"64E", "64E", "64E", "64E", "64E"};
        int ncol = flags & F_NO_ANDMASK ? 4 : 5;
        fits_create_img(fp, BYTE_IMG, 0, NULL, &st);
        header(fp, flags, &st);
        fits_create_tbl(fp, BINARY_TBL, 1, ncol, names, forms, NULL, "COADD",
                        &st);
        for (int c = 0; c < ncol; c++) /* ORMASK before ANDMASK on purpose */
            fits_write_col(fp, TFLOAT, c + 1, 1, 1, NPIX,
                           row[c < 3 ? c : 7 - c], &st);
    }
    fits_close_file(fp, &st);
    CHECK_MSG(st == 0, "writing %s: CFITSIO %d", path, st);
}

static const rvfit_instrument_ops *ops;

static void *open_ok(const char *path, const rvfit_kv *kv, int nkv,
                     const rvfit_select *sel, rvfit_file_info *I)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    void *h = NULL;
    int rc = ops->open(&host, kv, nkv, path, sel, &h, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc)
        return NULL;
    ops->info(h, I);
    return h;
}

static int read_all(void *h, const rvfit_file_info *I, rvfit_batch *b)
{
    rvfit_err err;
    int rc = rvfit_batch_alloc(b, I->narm, I->arm, 1, &err);
    if (!rc && (rc = ops->read(h, 0, I->nselect, b, &err)) != 0)
        rvfit_batch_free(b);
    if (rc)
        fprintf(stderr, "read: %s\n", err.msg);
    return rc;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of flux*sqrt(ivar) over the usable pixels, from the arrays the
 * file was written from (61 of them: an odd count, one middle value). */
static double expected_snr(void)
{
    double v[NPIX];
    int n = 0;
    for (int i = 0; i < NPIX; i++)
        if (usable(i))
            v[n++] = (100.0 + i) * sqrt((double)(0.25f + 0.01f * (float)i));
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static void check_pixels(const rvfit_batch *b, double res, double vshift)
{
    const rvfit_arm_batch *A = &b->arm[0];
    double maxw = 0, maxl = 0;
    for (int i = 0; i < NPIX; i++) {
        double w = wave_of(i) * (1.0 + vshift / C_KMS);
        maxw = fmax(maxw, fabs(A->wave[i] / w - 1.0));
        maxl = fmax(maxl, fabs(A->lsf[i] / (w / (res * FWHM_SIGMA)) - 1.0));
        if (usable(i)) {
            CHECK(A->flux[i] == 100.0f + (float)i);
            CHECK(A->ivar[i] == 0.25f + 0.01f * (float)i);
        } else {
            CHECK(A->ivar[i] == 0.0f);
        }
    }
    CHECK(A->flux[9] == 0.0f); /* NaN flux: no NaN reaches the fit */
    /* exact grid, not float32 (whose error is ~3e-8) */
    CHECK_MSG(maxw < 1e-12, "wavelengths off by %.3g", maxw);
    CHECK_MSG(maxl < 1e-6, "LSF off by %.3g", maxl);
    CHECK_NEAR(b->snr[0], expected_snr(), 1e-4);
    CHECK(b->flags[0] == 0 && b->index[0] == 0 && b->nspec == 1);
    CHECK(A->npix_own == NULL || A->npix_own[0] == NPIX);
}

static void check_tables(void *h, const rvfit_file_info *I)
{
    rvfit_err err;
    CHECK(I->ntable == 2);
    const rvfit_table_schema *rv = &I->table[0], *lm = &I->table[1];
    CHECK(!strcmp(rv->extname, "RVTAB") && !strcmp(lm->extname, "LAMOST"));
    rvfit_table_rows r;
    if (!tu_read_row0(ops, h, 0, rv, &r)) {
        CHECK(tu_cell(rv, &r, "TARGETID") == (double)OBSID);
        CHECK(tu_cell(rv, &r, "TARGET_RA") == 12.5);
        CHECK(tu_cell(rv, &r, "TARGET_DEC") == -3.25);
        const rvfit_column *ra = &rv->cols[tu_find_col(rv, "TARGET_RA")];
        CHECK(ra->type == RVFIT_COL_F64 && ra->repeat == 1 &&
              !strcmp(ra->unit, "deg") && !strcmp(ra->comment, "RA"));
    }
    rvfit_rows_free(&r, rv);
    tu_read_row0(ops, h, 1, lm, &r);
    int cc = tu_find_col(lm, "CLASS"), cs = tu_find_col(lm, "SUBCLASS");
    int cz = tu_find_col(lm, "Z"), ce = tu_find_col(lm, "Z_ERR");
    int cg = tu_find_col(lm, "SNRG"), cz2 = tu_find_col(lm, "SNRZ");
    int ch = tu_find_col(lm, "HELIO_RV");
    CHECK(cc >= 0 && cs >= 0 && cz >= 0 && ce >= 0 && cg >= 0 && cz2 >= 0 &&
          ch >= 0);
    if (cc >= 0 && cs >= 0 && cz >= 0 && ce >= 0 && cg >= 0 && cz2 >= 0 &&
        ch >= 0) {
        CHECK(!strncmp((char *)r.data[cc], "STAR", 4) &&
              ((char *)r.data[cc])[4] == '\0');
        CHECK(!strncmp((char *)r.data[cs], "G5", 2) &&
              ((char *)r.data[cs])[2] == '\0');
        CHECK(((double *)r.data[cz])[0] == 1e-4);
        CHECK(((double *)r.data[ce])[0] == 2e-5);
        CHECK(((float *)r.data[cg])[0] == 2.5f);
        CHECK(((float *)r.data[cz2])[0] == 5.5f);
        CHECK(((double *)r.data[ch])[0] == -7.5);
    }
    rvfit_rows_free(&r, lm);
    CHECK(ops->read_rows(h, 2, 0, 1, &r, &err) == RVFIT_ERR_INVALID);
}

/* A batch of another shape is refused, naming both. */
static void check_bad_batch(void *h, const rvfit_file_info *I)
{
    rvfit_arm_info arm = I->arm[0];
    arm.npix = NPIX + 1;
    rvfit_batch b;
    rvfit_err err;
    if (rvfit_batch_alloc(&b, 1, &arm, 1, &err))
        return;
    CHECK(ops->read(h, 0, 1, &b, &err) == RVFIT_ERR_INVALID);
    char want[128];
    snprintf(want, sizeof want, "%d pixels, res kind 2) does not fit 1 "
             "spectra of one LSF arm of %d pixels", NPIX + 1, NPIX);
    CHECK_MSG(tu_contains(err.msg, want), "%s", err.msg);
    rvfit_batch_free(&b);
}

/* Both layouts of the same arrays read the same. */
static void test_layouts(const char *dir)
{
    char p[4200];
    for (int layout = 7; layout <= 8; layout++) {
        snprintf(p, sizeof p, "%s/dr%d.fits", dir, layout);
        write_lrs(p, layout, 0);
        rvfit_file_info I;
        void *h = open_ok(p, NULL, 0, NULL, &I);
        if (!h)
            continue;
        CHECK(I.narm == 1 && !strcmp(I.arm[0].name, "LRS"));
        CHECK(I.arm[0].npix == NPIX && I.arm[0].res_kind == RVFIT_RES_LSF &&
              I.arm[0].wave_per_spec == 1);
        CHECK(I.ntotal == 1 && I.nselect == 1);
        rvfit_batch b;
        if (read_all(h, &I, &b) == 0) {
            check_pixels(&b, 1800.0, 0.0);
            rvfit_batch_free(&b);
        }
        check_tables(h, &I);
        check_bad_batch(h, &I);
        ops->close(h);
    }
}

/* Options: resolution scales the LSF, lam_max bounds the pixels. */
static void test_options(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/dr8.fits", dir);
    rvfit_kv kv[2] = {{"resolution", "3000", "t.ini", 2},
                      {"lam_max", "3990", "t.ini", 3}};
    rvfit_file_info I;
    rvfit_batch b;
    void *h = open_ok(p, kv, 1, NULL, &I);
    if (h && read_all(h, &I, &b) == 0) {
        check_pixels(&b, 3000.0, 0.0);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
    h = open_ok(p, kv + 1, 1, NULL, &I);
    if (h && read_all(h, &I, &b) == 0) {
        int n = 0, last = -1;
        for (int i = 0; i < NPIX; i++)
            if (b.arm[0].ivar[i] > 0)
                n++, last = i;
        /* 10^(3.6 + 1e-4 i) <= 3990 A for i <= 9; 5 and 9 are masked */
        CHECK_MSG(n == 8 && last == 8, "%d usable, last %d", n, last);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
}

/* The frame: HELIO = F moves to heliocentric by HELIO_RV; without
 * COEFF0/COEFF1 the stored float32 row is used as it is. */
static void test_frame(const char *dir)
{
    char p[4200];
    rvfit_file_info I;
    rvfit_batch b;
    snprintf(p, sizeof p, "%s/helio.fits", dir);
    write_lrs(p, 7, F_HELIO_F);
    void *h = open_ok(p, NULL, 0, NULL, &I);
    if (h && read_all(h, &I, &b) == 0) {
        check_pixels(&b, 1800.0, -7.5);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
    snprintf(p, sizeof p, "%s/nocoeff.fits", dir);
    write_lrs(p, 8, F_NO_COEFF);
    h = open_ok(p, NULL, 0, NULL, &I);
    if (h && read_all(h, &I, &b) == 0) {
        int same = 1;
        for (int i = 0; i < NPIX; i++)
            same &= b.arm[0].wave[i] == (double)(float)wave_of(i);
        CHECK(same);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
}

static size_t nsel_with(const char *path, const rvfit_select *sel)
{
    rvfit_file_info I;
    void *h = open_ok(path, NULL, 0, sel, &I);
    if (!h)
        return 999;
    if (I.nselect == 0) { /* nothing to read */
        rvfit_batch b;
        rvfit_err err;
        if (rvfit_batch_alloc(&b, I.narm, I.arm, 1, &err) == 0) {
            CHECK(ops->read(h, 0, 1, &b, &err) == RVFIT_ERR_INVALID);
            rvfit_batch_free(&b);
        }
    }
    ops->close(h);
    return I.nselect;
}

static void test_select(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/dr7.fits", dir);
    int64_t ids[2] = {5, OBSID};
    rvfit_select s = {0, 1, ids};
    CHECK(nsel_with(p, &s) == 0);
    s.ntargetid = 2;
    CHECK(nsel_with(p, &s) == 1);
    rvfit_select m = {expected_snr() + 0.01, 0, NULL};
    CHECK(nsel_with(p, &m) == 0);
    m.minsn = expected_snr() - 0.01;
    CHECK(nsel_with(p, &m) == 1);
}

static int open_err(const char *path, rvfit_err *err)
{
    rvfit_host host = tu_host(RVFIT_LOG_ERROR + 0);
    void *h = NULL;
    int rc = ops->open(&host, NULL, 0, path, NULL, &h, err);
    if (!rc)
        ops->close(h);
    CHECK(h == NULL || rc == 0);
    return rc;
}

static void expect(const char *dir, const char *name, int layout, int flags,
                   int code, const char *msg)
{
    char p[4200];
    rvfit_err err;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    write_lrs(p, layout, flags);
    int rc = open_err(p, &err);
    CHECK_MSG(rc == code, "%s: %d, not %d", name, rc, code);
    CHECK_MSG(rc == 0 || (tu_contains(err.msg, name) &&
                          tu_contains(err.msg, msg)), "%s", err.msg);
}

static void test_errors(const char *dir)
{
    char p[4200];
    rvfit_err err;
    snprintf(p, sizeof p, "%s/junk.fits", dir);
    FILE *f = fopen(p, "wb");
    for (int i = 0; i < 3000; i++)
        fputc(i & 255, f);
    fclose(f);
    CHECK(open_err(p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "junk.fits") &&
                  tu_contains(err.msg, "not a FITS file"), "%s", err.msg);
    expect(dir, "rows4.fits", 7, F_ROWS4, RVFIT_ERR_FORMAT, "(64 x 4)");
    expect(dir, "noandmask.fits", 8, F_NO_ANDMASK, RVFIT_ERR_FORMAT,
           "HDU COADD: column ANDMASK missing");
    expect(dir, "noobsid.fits", 8, F_NO_OBSID, RVFIT_ERR_FORMAT,
           "no OBSID keyword, and no TARGETID can be derived");
    expect(dir, "air.fits", 7, F_VACUUM_F, RVFIT_ERR_FORMAT, "VACUUM = F");
    /* keywords only, no table */
    snprintf(p, sizeof p, "%s/empty.fits", dir);
    fitsfile *fp;
    int st = 0;
    remove(p);
    fits_create_file(&fp, p, &st);
    fits_create_img(fp, BYTE_IMG, 0, NULL, &st);
    fits_close_file(fp, &st);
    CHECK(open_err(p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "HDU COADD missing"), "%s", err.msg);
    /* a broken wavelength row is found when the pixels are read */
    snprintf(p, sizeof p, "%s/badwave.fits", dir);
    write_lrs(p, 7, F_BAD_WAVE | F_NO_COEFF);
    rvfit_file_info I;
    rvfit_batch b;
    void *h = open_ok(p, NULL, 0, NULL, &I);
    if (h && rvfit_batch_alloc(&b, I.narm, I.arm, 1, &err) == 0) {
        CHECK(ops->read(h, 0, 1, &b, &err) == RVFIT_ERR_FORMAT);
        CHECK_MSG(tu_contains(err.msg, "badwave.fits: wavelength[20]"), "%s",
                  err.msg);
        rvfit_batch_free(&b);
    }
    if (h)
        ops->close(h);
    snprintf(p, sizeof p, "%s/absent.fits", dir);
    CHECK(open_err(p, &err) == RVFIT_ERR_IO);
    CHECK(tu_contains(err.msg, "absent.fits"));
}

static void test_arms(void)
{
    rvfit_template_arm arms[RVFIT_MAX_ARMS];
    rvfit_err err;
    int narm = 0;
    CHECK(ops->template_arms(NULL, 0, &narm, arms, &err) == 0);
    CHECK(narm == 1 && !strcmp(arms[0].name, "LRS"));
    CHECK(arms[0].lam_min == 3700.0 && arms[0].lam_max == 9090.0);
    CHECK(arms[0].step == 0.5 && arms[0].sigma_kms == 45.0);
    rvfit_kv kv[2] = {{"lam_min", "4000", "t.ini", 3},
                      {"sigma_kms", "30", "t.ini", 4}};
    CHECK(ops->template_arms(kv, 2, &narm, arms, &err) == 0);
    CHECK(arms[0].lam_min == 4000.0 && arms[0].sigma_kms == 30.0);
    rvfit_kv bad[1] = {{"resolution", "50", "t.ini", 7}};
    CHECK(ops->template_arms(bad, 1, &narm, arms, &err) == RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "t.ini:7"), "%s", err.msg);
    rvfit_kv lay[1] = {{"mock_layout", "dr9", "t.ini", 8}};
    CHECK(ops->template_arms(lay, 1, &narm, arms, &err) == RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "t.ini:8") &&
                  tu_contains(err.msg, "mock_layout"), "%s", err.msg);
}

/* Mock files: layout per option, ids and Z from the stars, andmask'ed
 * pixels (read from the file independently) at zero weight. */
static void check_mock_file(const char *path, const rvfit_mock_star *st,
                            int layout)
{
    CHECK(tu_read_key(path, 1, "NAXIS") == (layout == 7 ? 2 : 0));
    fitsfile *fp;
    int s = 0;
    long npix = 0;
    float mask[4000];
    fits_open_file(&fp, path, READONLY, &s);
    if (layout == 7) {
        fits_read_key(fp, TLONG, "NAXIS1", &npix, NULL, &s);
        fits_read_img(fp, TFLOAT, 3 * npix + 1, npix, NULL, mask, NULL, &s);
    } else {
        int cn = 0, tc = 0;
        long w = 0;
        fits_movnam_hdu(fp, BINARY_TBL, "COADD", 0, &s);
        fits_get_colnum(fp, CASEINSEN, "ANDMASK", &cn, &s);
        fits_get_coltype(fp, cn, &tc, &npix, &w, &s);
        fits_read_col(fp, TFLOAT, cn, 1, 1, npix, NULL, mask, NULL, &s);
    }
    fits_close_file(fp, &s);
    CHECK_MSG(s == 0 && npix > 3800 && npix <= 4000, "%s: %d, %ld pixels",
              path, s, npix);
    rvfit_file_info I;
    rvfit_batch b;
    rvfit_err err;
    void *h = open_ok(path, NULL, 0, NULL, &I);
    if (!h)
        return;
    CHECK(I.arm[0].npix == (size_t)npix);
    if (s == 0 && read_all(h, &I, &b) == 0) {
        long usable_n = 0, masked_ok = 1;
        for (long i = 0; i < npix; i++) {
            usable_n += b.arm[0].ivar[i] > 0;
            if (mask[i] != 0.0f)
                masked_ok &= b.arm[0].ivar[i] == 0.0f;
        }
        CHECK(masked_ok && usable_n > npix - 40);
        CHECK(b.flags[0] == 0);
        rvfit_batch_free(&b);
    }
    rvfit_table_rows r;
    if (rvfit_rows_alloc(&r, &I.table[1], 1, &err) == 0) {
        CHECK(ops->read_rows(h, 1, 0, 1, &r, &err) == 0);
        CHECK_NEAR(((double *)r.data[2])[0], st->vrad / C_KMS, 1e-15);
        rvfit_rows_free(&r, &I.table[1]);
    }
    if (rvfit_rows_alloc(&r, &I.table[0], 1, &err) == 0) {
        CHECK(ops->read_rows(h, 0, 0, 1, &r, &err) == 0);
        CHECK(((int64_t *)r.data[0])[0] == st->targetid);
        rvfit_rows_free(&r, &I.table[0]);
    }
    ops->close(h);
}

static void test_mock(const char *dir)
{
    const rvfit_instrument_mock_ops *mk = tu_mock_ops("lamost");
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    rvfit_mock_star st[2] = {{4400000001LL, 5500, 4.0, -0.5, 0.2, 50, 3, 30},
                             {4400000002LL, 6200, 4.3, 0.0, 0.0, -80, 5, 20}};
    rvfit_kv both[1] = {{"mock_layout", "both", "t.ini", 1}};
    char p[4400], mdir[4200];
    snprintf(mdir, sizeof mdir, "%s/mock", dir);
    int rc = mk->write_mock(&host, both, 1, mdir, 2, st, rvfit_synth_truth,
                            st, 7, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    for (int k = 0; k < 2 && rc == 0; k++) {
        snprintf(p, sizeof p, "%s/spec-%lld.fits", mdir,
                 (long long)st[k].targetid);
        check_mock_file(p, &st[k], k == 0 ? 7 : 8);
    }
    snprintf(p, sizeof p, "%s/one.fits", dir);
    CHECK(mk->write_mock(&host, NULL, 0, p, 2, st, rvfit_synth_truth, st, 7,
                         &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, "one.fits: a LAMOST spec file holds one "
                                   "spectrum"), "%s", err.msg);
    rvfit_kv dr7[1] = {{"mock_layout", "dr7", "t.ini", 1}};
    rc = mk->write_mock(&host, dr7, 1, p, 1, st + 1, rvfit_synth_truth,
                        st + 1, 7, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc == 0)
        check_mock_file(p, &st[1], 7);
}

int main(void)
{
    tu_need_plugin("rvfit_instrument_lamost");
    ops = tu_plugin_ops("rvfit_instrument_lamost.so");
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("lamost_read"));
    test_layouts(dir);
    test_options(dir);
    test_frame(dir);
    test_select(dir);
    test_errors(dir);
    test_arms();
    test_mock(dir);
    return tu_finish("test_lamost_read");
}
