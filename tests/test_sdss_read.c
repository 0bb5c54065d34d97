/* test_sdss_read.c — the SDSS plugin on the real BOSS star
 * spec-3586-55181-0500.fits: descriptor, the single LSF arm, exact
 * wavelengths, masks, LSF from WDISP, S/N, pass-through tables and
 * selection; a list mixing it with a shorter synthetic file (padding);
 * template arms and options; errors for broken inputs.
 * Truths were read independently from the file with astropy. */
#include <dlfcn.h>
#include <fitsio.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/plugin.h"
#include "rvfit/synth.h"
#include "testutil.h"

#define REAL "spec-3586-55181-0500.fits"
#define REAL_NPIX 4625
#define REAL_TID 3586551810500LL

static const rvfit_instrument_ops *load(void)
{
    return tu_plugin_ops("rvfit_instrument_sdss.so");
}

static int read_all(const rvfit_instrument_ops *ops, void *h,
                    const rvfit_file_info *I, rvfit_batch *b)
{
    rvfit_err err;
    int rc = rvfit_batch_alloc(b, I->narm, I->arm, I->nselect, &err);
    if (!rc)
        rc = ops->read(h, 0, I->nselect, b, &err);
    if (rc)
        fprintf(stderr, "read: %s\n", err.msg);
    return rc;
}

static void check_real_pixels(const rvfit_batch *b, size_t s)
{
    const rvfit_arm_batch *A = &b->arm[0];
    const double *w = A->wave + s * A->npix;
    /* exact COEFF0 + i*COEFF1 grid, not float32 loglam */
    CHECK_NEAR(w[0], 3561.229809, 1e-5);
    CHECK_NEAR(w[REAL_NPIX - 1], 10327.614058, 1e-5);
    CHECK_NEAR(w[2000] / w[0], pow(10.0, 0.2), 1e-13);
    size_t usable = 0;
    for (size_t i = 0; i < REAL_NPIX; i++)
        usable += A->ivar[s * A->npix + i] > 0;
    CHECK(usable == 4224); /* and_mask 0, ivar > 0, 3600-10400 A */
    CHECK(A->ivar[s * A->npix + 0] == 0.0f); /* 3561 A: below lam_min */
    CHECK_NEAR(A->flux[s * A->npix + 2000], 134.26282, 1e-4);
    CHECK_NEAR(A->ivar[s * A->npix + 2000], 0.19646184, 1e-7);
    /* lsf = wdisp * 1e-4 * ln(10) * lambda */
    CHECK_NEAR(A->lsf[s * A->npix + 2000], 1.4156176, 1e-5);
    CHECK_NEAR(A->lsf[s * A->npix + 4624], 2.0200773, 1e-5);
    /* WDISP = 0 at pixel 1949 takes its neighbour's 1.1153501 */
    CHECK_NEAR(A->lsf[s * A->npix + 1949],
               1.1153501 * 1e-4 * log(10.0) * w[1949], 1e-5);
    CHECK_NEAR(b->snr[s], 53.387203, 1e-4);
    CHECK(b->flags[s] == 0);
}

static void check_tables(const rvfit_instrument_ops *ops, void *h,
                         const rvfit_file_info *I)
{
    rvfit_err err;
    CHECK(I->ntable == 2);
    const rvfit_table_schema *rv = &I->table[0], *sp = &I->table[1];
    CHECK(!strcmp(rv->extname, "RVTAB") && !strcmp(sp->extname, "SPALL"));
    rvfit_table_rows r;
    if (!tu_read_row0(ops, h, 0, rv, &r)) {
        CHECK(tu_cell(rv, &r, "TARGETID") == (double)REAL_TID);
        CHECK(tu_cell(rv, &r, "FIBERID") == 500);
        CHECK(tu_cell(rv, &r, "MJD") == 55181);
        CHECK_NEAR(tu_cell(rv, &r, "TARGET_RA"), 6.7137386, 1e-7);
        CHECK_NEAR(tu_cell(rv, &r, "TARGET_DEC"), 0.012459214, 1e-9);
    }
    rvfit_rows_free(&r, rv);
    CHECK(sp->ncol == 18); /* every candidate is in a BOSS DR file */
    tu_read_row0(ops, h, 1, sp, &r);
    int cz = tu_find_col(sp, "Z"), cs = tu_find_col(sp, "SUBCLASS");
    int ct = tu_find_col(sp, "ELODIE_TEFF"), cc = tu_find_col(sp, "CLASS");
    CHECK(cz >= 0 && cs >= 0 && ct >= 0 && cc >= 0);
    if (cz >= 0 && cs >= 0 && ct >= 0 && cc >= 0) {
        CHECK_NEAR(((float *)r.data[cz])[0], -1.0124001e-4, 1e-10);
        CHECK_NEAR(((float *)r.data[ct])[0], 6537.0, 1e-3);
        CHECK(sp->cols[cs].repeat == 21 && sp->cols[cc].repeat == 6);
        CHECK(!strncmp((char *)r.data[cs], "G1V (95128)", 11) &&
              ((char *)r.data[cs])[11] == '\0');
        CHECK(!memcmp(r.data[cc], "STAR\0\0", 6));
    }
    rvfit_rows_free(&r, sp);
    CHECK(ops->read_rows(h, 2, 0, 1, &r, &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, "rows [0, 1) of table 2 (1 selected, 2 "
                                   "tables)"), "%s", err.msg);
    CHECK(ops->read_rows(h, 0, 1, 1, &r, &err) == RVFIT_ERR_INVALID);
}

static void test_real(const rvfit_instrument_ops *ops, const char *path)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    void *h = NULL;
    int rc = ops->open(&host, NULL, 0, path, NULL, &h, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc)
        return;
    rvfit_file_info I;
    ops->info(h, &I);
    CHECK(I.narm == 1 && !strcmp(I.arm[0].name, "BOSS"));
    CHECK(I.arm[0].npix == REAL_NPIX);
    CHECK(I.arm[0].res_kind == RVFIT_RES_LSF && I.arm[0].wave_per_spec == 1);
    CHECK(I.ntotal == 1 && I.nselect == 1);
    rvfit_batch b;
    if (read_all(ops, h, &I, &b) == 0) {
        check_real_pixels(&b, 0);
        CHECK(b.index[0] == 0 && b.nspec == 1);
        rvfit_batch_free(&b);
    }
    check_tables(ops, h, &I);
    ops->close(h);
}

static size_t nsel_with(const rvfit_instrument_ops *ops, const char *path,
                        const rvfit_select *sel)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    void *h = NULL;
    if (ops->open(&host, NULL, 0, path, sel, &h, &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 999;
    }
    rvfit_file_info I;
    ops->info(h, &I);
    ops->close(h);
    return I.nselect;
}

static void test_select(const rvfit_instrument_ops *ops, const char *path)
{
    int64_t ids[2] = {5, REAL_TID};
    rvfit_select s = {0, 1, ids};
    CHECK(nsel_with(ops, path, &s) == 0);
    s.ntargetid = 2;
    CHECK(nsel_with(ops, path, &s) == 1);
    rvfit_select m = {60.0, 0, NULL}; /* SN_MEDIAN_ALL = 54.98 */
    CHECK(nsel_with(ops, path, &m) == 0);
    m.minsn = 50.0;
    CHECK(nsel_with(ops, path, &m) == 1);
}

/* A one-star synthetic file: shorter than the real one. */
static void write_short(const char *path)
{
    const rvfit_instrument_mock_ops *mk = tu_mock_ops("sdss");
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    rvfit_mock_star st = {1234567890123LL, 5500, 4.0, -0.5, 0.2, 50, 3, 20};
    int rc = mk->write_mock(&host, NULL, 0, path, 1, &st, rvfit_synth_truth,
                            &st, 3, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
}

static void test_list(const rvfit_instrument_ops *ops, const char *dir,
                      const char *real)
{
    char list[4200], mock[4200];
    snprintf(mock, sizeof mock, "%s/short.fits", dir);
    snprintf(list, sizeof list, "%s/mixed.txt", dir);
    write_short(mock);
    FILE *f = fopen(list, "w");
    fprintf(f, "# a real star and a mock\n%s\n\n  short.fits  \n", real);
    fclose(f);
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    void *h = NULL;
    int rc = ops->open(&host, NULL, 0, list, NULL, &h, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc)
        return;
    rvfit_file_info I;
    ops->info(h, &I);
    CHECK(I.ntotal == 2 && I.nselect == 2 && I.arm[0].npix == REAL_NPIX);
    rvfit_batch b;
    if (read_all(ops, h, &I, &b) == 0) {
        check_real_pixels(&b, 0);
        const rvfit_arm_batch *A = &b.arm[0];
        const double *w = A->wave + REAL_NPIX;
        size_t last = 0;
        double maxdev = 0;
        for (size_t i = 0; i < REAL_NPIX; i++) {
            if (A->ivar[REAL_NPIX + i] > 0)
                last = i;
            if (i)
                maxdev = fmax(maxdev, fabs(log10(w[i] / w[i - 1]) - 1e-4));
        }
        /* the mock has <= 4600 pixels; padding is unusable, on the grid */
        CHECK(last < 4600 && last > 4500);
        CHECK(maxdev < 1e-11);
        CHECK(A->lsf[REAL_NPIX + REAL_NPIX - 1] > 0);
        CHECK(b.index[1] == 1 && b.flags[1] == 0);
        rvfit_batch_free(&b);
    }
    rvfit_table_rows r;
    CHECK(rvfit_rows_alloc(&r, &I.table[0], 2, &err) == 0);
    CHECK(ops->read_rows(h, 0, 0, 2, &r, &err) == 0);
    CHECK(((int64_t *)r.data[0])[0] == REAL_TID);
    CHECK(((int64_t *)r.data[0])[1] == 1234567890123LL);
    rvfit_rows_free(&r, &I.table[0]);
    ops->close(h);
}

static int open_err(const rvfit_instrument_ops *ops, const char *path,
                    rvfit_err *err)
{
    rvfit_host host = tu_host(RVFIT_LOG_ERROR + 0);
    void *h = NULL;
    int rc = ops->open(&host, NULL, 0, path, NULL, &h, err);
    if (!rc)
        ops->close(h);
    CHECK(h == NULL || rc == 0);
    return rc;
}

/* Spec-like FITS: COADD with the first ncol of the five columns. */
static void write_broken(const char *path, int coadd, int ncol)
{
    char *names[] = {"flux", "loglam", "ivar", "and_mask", "wdisp"};
    char *forms[] = {"E", "E", "E", "J", "E"};
    fitsfile *fp;
    int st = 0;
    remove(path);
    fits_create_file(&fp, path, &st);
    fits_create_img(fp, BYTE_IMG, 0, NULL, &st);
    fits_create_tbl(fp, BINARY_TBL, 10, ncol, names, forms, NULL,
                    coadd ? "COADD" : "SPALL", &st);
    fits_close_file(fp, &st);
    CHECK(st == 0);
}

static void test_errors(const rvfit_instrument_ops *ops, const char *dir,
                        const char *real)
{
    char p[4200];
    rvfit_err err;
    snprintf(p, sizeof p, "%s/junk.fits", dir);
    FILE *f = fopen(p, "wb");
    for (int i = 0; i < 3000; i++)
        fputc(i & 255, f);
    fclose(f);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "junk.fits") &&
                  tu_contains(err.msg, "not a FITS file"), "%s", err.msg);
    snprintf(p, sizeof p, "%s/nocoadd.fits", dir);
    write_broken(p, 0, 5);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "nocoadd.fits: HDU COADD missing"), "%s",
              err.msg);
    snprintf(p, sizeof p, "%s/nowdisp.fits", dir);
    write_broken(p, 1, 4);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "nowdisp.fits: HDU COADD: column wdisp "
                                   "missing"), "%s", err.msg);
    snprintf(p, sizeof p, "%s/bad.list", dir);
    f = fopen(p, "w");
    fprintf(f, "%s\nnope-0-0-0.fits\n", real);
    fclose(f);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_IO);
    CHECK_MSG(tu_contains(err.msg, "bad.list:2: list entry "
                                   "'nope-0-0-0.fits'"), "%s", err.msg);
    /* a list whose entry is broken names the list and the file */
    f = fopen(p, "w");
    fprintf(f, "%s\nnowdisp.fits\n", real);
    fclose(f);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "bad.list, entry 2") &&
                  tu_contains(err.msg, "column wdisp missing"), "%s", err.msg);
    f = fopen(p, "w");
    fprintf(f, "# nothing\n");
    fclose(f);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK(open_err(ops, dir, &err) == RVFIT_ERR_IO);
    snprintf(p, sizeof p, "%s/absent.fits", dir);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_IO);
    CHECK(tu_contains(err.msg, "absent.fits"));
}

/* Copy the real file to dir/name and patch a card of COADD (HDU 2). */
static void corrupt_copy(const char *real, const char *dir, const char *name,
                         const char *key, const char *value, char *p,
                         size_t np)
{
    char cmd[9000];
    snprintf(p, np, "%s/%s", dir, name);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod u+w '%s'", real, p, p);
    CHECK(system(cmd) == 0);
    CHECK(tu_patch_card(p, 2, key, value) == 0);
}

/* Cut file p short `keep` bytes into the header of HDU hdu (1 = primary),
 * found as the hdu-th 2880-byte block that starts a header. */
static int truncate_in_header(const char *p, int hdu, long keep)
{
    FILE *f = fopen(p, "rb");
    char head[10] = "";
    long at = -1;
    for (long b = 0, seen = 0; f && at < 0; b += 2880) {
        if (fseek(f, b, SEEK_SET) || fread(head, 1, 9, f) != 9)
            break;
        if ((!memcmp(head, "SIMPLE  =", 9) || !memcmp(head, "XTENSION=", 9))
            && ++seen == hdu)
            at = b;
    }
    if (f)
        fclose(f);
    return at < 0 ? -1 : truncate(p, (off_t)(at + keep));
}

/* Headers that lie: a COADD claiming 1e8 rows in a 1.7 MB file (once a
 * 32 GiB allocation or a hang), a numeric column stored as text, and
 * header bytes CFITSIO must not see. */
static void test_corrupt(const rvfit_instrument_ops *ops, const char *dir,
                         const char *real)
{
    char p[4200];
    rvfit_err err;
    corrupt_copy(real, dir, "naxis2.fits", "NAXIS2", "           100000000",
                 p, sizeof p);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "naxis2.fits: HDU COADD: file truncated "
                                   "(data end at byte "), "%s", err.msg);
    printf("  %s\n", err.msg);
    corrupt_copy(real, dir, "loglam-text.fits", "TFORM2", "'4A      '", p,
                 sizeof p);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "loglam-text.fits: HDU COADD: column "
                                   "loglam: TFORM2 '4A' is not"), "%s",
              err.msg);
    printf("  %s\n", err.msg);
    /* an unquoted TTYPE filling its 70 columns: CFITSIO 4.2 aborted the
     * process ("buffer overflow detected") while moving to COADD */
    char v70[71];
    memset(v70, 'A', 70);
    v70[70] = '\0';
    corrupt_copy(real, dir, "ttype70.fits", "TTYPE5", v70, p, sizeof p);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "ttype70.fits: HDU 2: header card 17 "
                                   "(TTYPE5): a value of 70 characters is "
                                   "not a number (at most 28)"),
              "%s", err.msg);
    printf("  %s\n", err.msg);
    /* the same card in a header the end of the file cuts short: CFITSIO
     * parses what there is (the LAMOST fuzz run's ffgtbp abort) */
    CHECK(truncate_in_header(p, 2, 18 * 80 + 40) == 0);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "ttype70.fits: HDU 2: header card 17 "
                                   "(TTYPE5)"), "%s", err.msg);
    printf("  %s\n", err.msg);
    /* a WDISP of 1e30 pixels is junk: the previous WDISP is used (the LSF
     * sigma was an infinite float, NaN in the band matrix) */
    snprintf(p, sizeof p, "%s/wdisp-huge.fits", dir);
    char cmd[13000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod u+w '%s'", real, p, p);
    CHECK(system(cmd) == 0);
    fitsfile *fp;
    int st = 0, cn = 0;
    float big = 1e30f;
    fits_open_file(&fp, p, READWRITE, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "COADD", 0, &st);
    fits_get_colnum(fp, CASEINSEN, "wdisp", &cn, &st);
    fits_write_col(fp, TFLOAT, cn, 101, 1, 1, &big, &st);
    fits_close_file(fp, &st);
    CHECK(st == 0);
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    void *h = NULL;
    CHECK(ops->open(&host, NULL, 0, p, NULL, &h, &err) == RVFIT_OK);
    if (h) {
        rvfit_file_info I;
        rvfit_batch b;
        ops->info(h, &I);
        if (read_all(ops, h, &I, &b) == 0) {
            const rvfit_arm_batch *A = &b.arm[0];
            CHECK(isfinite(A->lsf[100]));
            /* sigma / lambda is WDISP * 1e-4 ln 10: that of pixel 99 */
            CHECK_NEAR(A->lsf[100] / A->wave[100], A->lsf[99] / A->wave[99],
                       1e-7 * A->lsf[99] / A->wave[99]);
            rvfit_batch_free(&b);
        }
        ops->close(h);
    }
    /* a second BITPIX of 0.5 in the primary header (the first one counts,
     * as for CFITSIO) must not stop the scan before the bad TTYPE5 of
     * COADD (the long LAMOST fuzz run got a CFITSIO abort past it) */
    corrupt_copy(real, dir, "bitpix2.fits", "TTYPE5", v70, p, sizeof p);
    CHECK(tu_patch_card(p, 1, "EXPTIME", "                 0.5") == 0);
    FILE *pf = fopen(p, "r+b");
    char card[81] = "";
    for (long at = 0; pf && at < 2880 * 4; at += 80) {
        if (fseek(pf, at, SEEK_SET) || fread(card, 1, 80, pf) != 80)
            break;
        if (!memcmp(card, "EXPTIME =", 9)) {
            fseek(pf, at, SEEK_SET);
            fwrite("BITPIX  ", 1, 8, pf);
            break;
        }
    }
    if (pf)
        fclose(pf);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "bitpix2.fits: HDU 2: header card 17 "
                                   "(TTYPE5)"), "%s", err.msg);
    printf("  %s\n", err.msg);
    /* a column name must be a string */
    corrupt_copy(real, dir, "ttype-bare.fits", "TTYPE5", "wdisp", p,
                 sizeof p);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "ttype-bare.fits: HDU 2: TTYPE5 is not a "
                                   "quoted string"), "%s", err.msg);
    printf("  %s\n", err.msg);
    /* a header byte outside ASCII text */
    corrupt_copy(real, dir, "latin1.fits", "TTYPE1", "'\xe9lux'", p,
                 sizeof p);
    CHECK(open_err(ops, p, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "latin1.fits: HDU 2: header card") &&
                  tu_contains(err.msg, "byte 0xe9 in column 12 is not "
                                       "ASCII text"), "%s", err.msg);
    printf("  %s\n", err.msg);
}

static void test_arms(const rvfit_instrument_ops *ops, const char *real)
{
    rvfit_template_arm arms[RVFIT_MAX_ARMS];
    rvfit_err err;
    int narm = 0;
    CHECK(ops->template_arms(NULL, 0, &narm, arms, &err) == 0);
    CHECK(narm == 1 && !strcmp(arms[0].name, "BOSS"));
    CHECK(arms[0].lam_min == 3600.0 && arms[0].lam_max == 10400.0);
    CHECK(arms[0].step == 0.5);
    rvfit_kv kv[2] = {{"lam_max", "9900", "t.ini", 3},
                      {"step", "0.3", "t.ini", 4}};
    CHECK(ops->template_arms(kv, 2, &narm, arms, &err) == 0);
    CHECK(arms[0].lam_max == 9900.0 && arms[0].step == 0.3);
    /* the same option bounds the pixels the reader offers */
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    void *h = NULL;
    CHECK(ops->open(&host, kv, 1, real, NULL, &h, &err) == 0);
    if (h) {
        rvfit_file_info I;
        rvfit_batch b;
        ops->info(h, &I);
        if (read_all(ops, h, &I, &b) == 0) {
            size_t usable = 0;
            for (size_t i = 0; i < REAL_NPIX; i++)
                usable += b.arm[0].ivar[i] > 0;
            CHECK(usable == 4053);
            CHECK_NEAR(b.snr[0], 54.146564, 1e-4);
            rvfit_batch_free(&b);
        }
        ops->close(h);
    }
    rvfit_kv bad[2] = {{"lam_min", "9000", "t.ini", 7},
                       {"lam_max", "8000", "t.ini", 8}};
    CHECK(ops->template_arms(bad, 2, &narm, arms, &err) == RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "instrument.sdss: lam_max (8000) must "
                                   "exceed lam_min (9000)"), "%s", err.msg);
    rvfit_kv nan[1] = {{"step", "fast", "t.ini", 9}};
    CHECK(ops->template_arms(nan, 1, &narm, arms, &err) == RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "t.ini:9"), "%s", err.msg);
}

int main(void)
{
    const rvfit_instrument_ops *ops = load();
    char real[2048];
    snprintf(real, sizeof real, "%s/sdss/%s", tu_shared_data(),
             REAL);
    FILE *f = fopen(real, "rb");
    if (!f)
        tu_skip("%s not found", real);
    fclose(f);
    const char *tmp = tu_tmpdir("sdss_read");
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", tmp);
    test_real(ops, real);
    test_select(ops, real);
    test_list(ops, dir, real);
    test_errors(ops, dir, real);
    test_arms(ops, real);
    test_corrupt(ops, dir, real);
    return tu_finish("test_sdss_read");
}
