/* test_desi_bad.c — the DESI plugin on broken and degraded inputs, made
 * from the real tiles coadd with CFITSIO: missing path, non-FITS,
 * truncated, missing HDUs, mismatched shapes, NaN/inf/masked pixels,
 * dead arms, and the S/N fallback when SCORES is absent. */
#include <dlfcn.h>
#include <fitsio.h>
#include <limits.h>
#include <string.h>

#include "rvfit/plugin.h"
#include "testutil.h"

static const rvfit_instrument_ops *ops;
static char src[4096];
static const char *tmp;

static void load(void)
{
    ops = tu_plugin_ops("rvfit_instrument_desi.so");
}

/* Copy src to dst leaving out HDU `skip` (may be NULL). */
static void copy_except(const char *dst, const char *skip)
{
    fitsfile *in, *out;
    int st = 0, n = 0, type;
    remove(dst);
    fits_open_file(&in, src, READONLY, &st);
    fits_create_file(&out, dst, &st);
    fits_get_num_hdus(in, &n, &st);
    for (int k = 1; k <= n && !st; k++) {
        char name[FLEN_VALUE] = "";
        int s2 = 0;
        fits_movabs_hdu(in, k, &type, &st);
        fits_read_key(in, TSTRING, "EXTNAME", name, NULL, &s2);
        if (!skip || strcmp(name, skip) != 0)
            fits_copy_hdu(in, out, 0, &st);
    }
    fits_close_file(out, &st);
    fits_close_file(in, &st);
    if (st) {
        fits_report_error(stderr, st);
        exit(1);
    }
}

static void set_pix(const char *file, const char *hdu, int datatype,
                    long first, long n, void *v)
{
    fitsfile *f;
    int st = 0;
    fits_open_file(&f, file, READWRITE, &st);
    fits_movnam_hdu(f, IMAGE_HDU, (char *)hdu, 0, &st);
    fits_write_img(f, datatype, first + 1, n, v, &st);
    fits_close_file(f, &st);
    if (st) {
        fits_report_error(stderr, st);
        exit(1);
    }
}

/* open must fail with status `want` and a message naming file and what. */
static void expect_fail(const char *path, int want, const char *what)
{
    rvfit_host host = tu_host(RVFIT_LOG_ERROR);
    rvfit_err err = {{0}};
    rvfit_select sel = {0};
    void *h = (void *)&err;
    int rc = ops->open(&host, NULL, 0, path, &sel, &h, &err);
    CHECK_MSG(rc == want, "%s: status %d, want %d (%s)", path, rc, want,
              err.msg);
    CHECK(h == NULL);
    CHECK_MSG(tu_contains(err.msg, path), "'%s' lacks the path", err.msg);
    CHECK_MSG(tu_contains(err.msg, what), "'%s' lacks '%s'", err.msg, what);
    printf("  %s -> %s\n", what, err.msg);
}

static void test_broken_files(void)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/no-such-file.fits", tmp);
    expect_fail(p, RVFIT_ERR_IO, "No such file");

    snprintf(p, sizeof p, "%s/not-fits.fits", tmp);
    FILE *f = fopen(p, "w");
    fputs("SIMPLE? no, this is a text file and not FITS at all\n", f);
    fclose(f);
    expect_fail(p, RVFIT_ERR_FORMAT, "not a FITS file");

    /* cut inside the B_RESOLUTION data (HDU 8) */
    snprintf(p, sizeof p, "%s/truncated.fits", tmp);
    FILE *in = fopen(src, "rb"), *out = fopen(p, "wb");
    static char buf[300000];
    size_t n = fread(buf, 1, sizeof buf, in);
    fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
    expect_fail(p, RVFIT_ERR_FORMAT, "truncated");

    /* cut 1000 bytes into the header of HDU 9 (R_WAVELENGTH) */
    fitsfile *fs;
    int fst = 0, ftype;
    LONGLONG head = 0, dstart, dend;
    fits_open_file(&fs, src, READONLY, &fst);
    fits_movabs_hdu(fs, 9, &ftype, &fst);
    fits_get_hduaddrll(fs, &head, &dstart, &dend, &fst);
    fits_close_file(fs, &fst);
    CHECK(fst == 0 && head > 1000 && (size_t)head + 1000 <= n);
    snprintf(p, sizeof p, "%s/truncated-header.fits", tmp);
    out = fopen(p, "wb");
    fwrite(buf, 1, (size_t)head + 1000, out);
    fclose(out);
    expect_fail(p, RVFIT_ERR_FORMAT, "truncated");

    snprintf(p, sizeof p, "%s/no-bres.fits", tmp);
    copy_except(p, "B_RESOLUTION");
    expect_fail(p, RVFIT_ERR_FORMAT, "HDU B_RESOLUTION missing");

    snprintf(p, sizeof p, "%s/no-fibermap.fits", tmp);
    copy_except(p, "FIBERMAP");
    expect_fail(p, RVFIT_ERR_FORMAT, "HDU FIBERMAP missing");

    /* an R_IVAR of the wrong width */
    snprintf(p, sizeof p, "%s/bad-shape.fits", tmp);
    copy_except(p, "R_IVAR");
    fitsfile *fp;
    int st = 0;
    long ax[2] = {2000, 1};
    fits_open_file(&fp, p, READWRITE, &st);
    fits_create_img(fp, FLOAT_IMG, 2, ax, &st);
    fits_write_key(fp, TSTRING, "EXTNAME", "R_IVAR", NULL, &st);
    fits_close_file(fp, &st);
    CHECK(st == 0);
    expect_fail(p, RVFIT_ERR_FORMAT, "HDU R_IVAR: shape [1][2000]");
}

/* Open p, read its one spectrum into *b. */
static void *open_read(const char *p, rvfit_batch *b, double minsn,
                       size_t *nsel)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err = {{0}};
    rvfit_select sel = {0};
    sel.minsn = minsn;
    void *h = NULL;
    int rc = ops->open(&host, NULL, 0, p, &sel, &h, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s", err.msg);
    if (rc)
        exit(1);
    rvfit_file_info I;
    ops->info(h, &I);
    *nsel = I.nselect;
    CHECK(rvfit_batch_alloc(b, I.narm, I.arm, 1, &err) == RVFIT_OK);
    if (I.nselect)
        CHECK(ops->read(h, 0, 1, b, &err) == RVFIT_OK);
    return h;
}

static size_t ngood(const rvfit_arm_batch *A)
{
    size_t n = 0;
    for (size_t i = 0; i < A->npix; i++)
        n += A->ivar[i] > 0.0f;
    return n;
}

static void test_bad_pixels(void)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/badpix.fits", tmp);
    copy_except(p, NULL);
    float nan = NAN, inf = INFINITY, neg = -1.0f;
    unsigned int cosmic = 4;
    int high = INT_MIN;
    set_pix(p, "B_FLUX", TFLOAT, 10, 1, &nan);
    set_pix(p, "B_FLUX", TFLOAT, 11, 1, &inf);
    set_pix(p, "R_IVAR", TFLOAT, 20, 1, &nan);
    set_pix(p, "R_IVAR", TFLOAT, 21, 1, &neg);
    set_pix(p, "Z_MASK", TUINT, 30, 1, &cosmic);
    set_pix(p, "Z_MASK", TINT, 31, 1, &high); /* sign bit of int32 */
    rvfit_batch b;
    size_t ns;
    void *h = open_read(p, &b, 0, &ns);
    const rvfit_arm_batch *B = &b.arm[0], *R = &b.arm[1], *Z = &b.arm[2];
    CHECK(B->flux[10] == 0.0f && B->ivar[10] == 0.0f);
    CHECK(B->flux[11] == 0.0f && B->ivar[11] == 0.0f);
    CHECK(R->ivar[20] == 0.0f && R->ivar[21] == 0.0f && R->flux[20] != 0.0f);
    CHECK(Z->ivar[30] == 0.0f && Z->ivar[31] == 0.0f);
    CHECK(ngood(B) == B->npix - 2 && ngood(R) == R->npix - 2 &&
          ngood(Z) == Z->npix - 2);
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < b.arm[a].npix; i++)
            CHECK(isfinite(b.arm[a].flux[i]) && isfinite(b.arm[a].ivar[i]));
    CHECK(b.flags[0] == 0);
    rvfit_batch_free(&b);
    ops->close(h);
}

static void fill_file(const char *p, const char *hdu, int datatype,
                      long n, void *v)
{
    set_pix(p, hdu, datatype, 0, n, v);
}

static void test_dead_arms(void)
{
    static float zeros[3000], nans[3000];
    static unsigned int masks[3000];
    for (int i = 0; i < 3000; i++) {
        nans[i] = NAN;
        masks[i] = 1u << 8; /* NODATA */
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/dead-r.fits", tmp);
    copy_except(p, NULL);
    fill_file(p, "R_IVAR", TFLOAT, 2326, zeros);
    rvfit_batch b;
    size_t ns;
    void *h = open_read(p, &b, 0, &ns);
    CHECK(ngood(&b.arm[1]) == 0 && ngood(&b.arm[0]) == 2751 &&
          ngood(&b.arm[2]) == 2881);
    CHECK(b.flags[0] == 0);
    rvfit_batch_free(&b);
    ops->close(h);

    /* every arm dead, each for a different reason */
    fill_file(p, "B_MASK", TUINT, 2751, masks);
    fill_file(p, "Z_FLUX", TFLOAT, 2881, nans);
    h = open_read(p, &b, 0, &ns);
    CHECK(ngood(&b.arm[0]) == 0 && ngood(&b.arm[1]) == 0 &&
          ngood(&b.arm[2]) == 0);
    CHECK(b.flags[0] == RVFIT_SPEC_BAD);
    CHECK(b.arm[2].flux[100] == 0.0f);
    rvfit_batch_free(&b);
    ops->close(h);
}

/* Set keyword key of HDU ext of file to the string v (CFITSIO rereads the
 * header at the next open). */
static void set_key(const char *file, const char *ext, const char *key,
                    const char *v)
{
    fitsfile *f;
    int st = 0;
    fits_open_file(&f, file, READWRITE, &st);
    fits_movnam_hdu(f, ANY_HDU, (char *)ext, 0, &st);
    fits_update_key(f, TSTRING, key, (void *)v, NULL, &st);
    fits_close_file(f, &st);
    if (st) {
        fits_report_error(stderr, st);
        exit(1);
    }
}

/* Column number of `col` in HDU ext of the source file. */
static int src_colnum(const char *ext, const char *col)
{
    fitsfile *f;
    int st = 0, cn = 0;
    fits_open_file(&f, src, READONLY, &st);
    fits_movnam_hdu(f, BINARY_TBL, (char *)ext, 0, &st);
    fits_get_colnum(f, CASEINSEN, (char *)col, &cn, &st);
    fits_close_file(f, &st);
    CHECK(st == 0 && cn > 0);
    return cn;
}

/* Columns whose TFORM says another type than the reader needs: the
 * string OBJTYPE stored as 3 bytes ('3A' -> '3B', same row width; once a
 * heap overflow), a scalar TARGETID stored as 2 ints, and a SCORES S/N
 * column stored as characters. */
static void test_column_types(void)
{
    char p[4096], key[16];
    snprintf(p, sizeof p, "%s/objtype-numeric.fits", tmp);
    copy_except(p, NULL);
    snprintf(key, sizeof key, "TFORM%d", src_colnum("FIBERMAP", "OBJTYPE"));
    set_key(p, "FIBERMAP", key, "3B");
    expect_fail(p, RVFIT_ERR_FORMAT,
                "HDU FIBERMAP: column OBJTYPE: TFORM15 '3B' is not a string");

    snprintf(p, sizeof p, "%s/targetid-vector.fits", tmp);
    copy_except(p, NULL);
    snprintf(key, sizeof key, "TFORM%d", src_colnum("FIBERMAP", "TARGETID"));
    set_key(p, "FIBERMAP", key, "2J");
    expect_fail(p, RVFIT_ERR_FORMAT, "column TARGETID: TFORM1 '2J' is not "
                "a one-number-per-row column");

    snprintf(p, sizeof p, "%s/scores-string.fits", tmp);
    copy_except(p, NULL);
    int cn = src_colnum("SCORES", "MEDIAN_COADD_SNR_B");
    snprintf(key, sizeof key, "TFORM%d", cn);
    set_key(p, "SCORES", key, "4A"); /* E: 4 bytes */
    char want[96];
    snprintf(want, sizeof want, "HDU SCORES: column MEDIAN_COADD_SNR_B: "
             "TFORM%d '4A'", cn);
    expect_fail(p, RVFIT_ERR_FORMAT, want);
}

/* Wavelengths <= 0 pass a "finite and increasing" check but make ln
 * lambda NaN: the whole B grid shifted by -10000 A, and a grid that
 * starts at zero. */
static void test_bad_wavelengths(void)
{
    static double w[3000];
    char p[4096];
    snprintf(p, sizeof p, "%s/negative-wave.fits", tmp);
    copy_except(p, NULL);
    for (int i = 0; i < 2751; i++)
        w[i] = 3600.0 + 0.8 * i - 10000.0;
    fill_file(p, "B_WAVELENGTH", TDOUBLE, 2751, w);
    expect_fail(p, RVFIT_ERR_FORMAT, "HDU B_WAVELENGTH: wavelength 0 "
                "(-6400) is not finite, positive and increasing");
    for (int i = 0; i < 2751; i++)
        w[i] = 0.8 * i;
    fill_file(p, "B_WAVELENGTH", TDOUBLE, 2751, w);
    expect_fail(p, RVFIT_ERR_FORMAT, "wavelength 0 (0) is not finite, "
                "positive");
}

/* Without SCORES the S/N is the median of flux*sqrt(ivar) over good
 * pixels (values computed independently from the file). */
static void test_snr_fallback(void)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/no-scores.fits", tmp);
    copy_except(p, "SCORES");
    rvfit_batch b;
    size_t ns;
    void *h = open_read(p, &b, 0, &ns);
    CHECK_NEAR(b.snr[0], 3.200162, 2e-6);
    CHECK_NEAR(b.snr[1], 6.196829, 2e-6);
    CHECK_NEAR(b.snr[2], 6.036578, 2e-6);
    rvfit_file_info I;
    ops->info(h, &I);
    CHECK(I.ntable == 2);
    rvfit_batch_free(&b);
    ops->close(h);
    h = open_read(p, &b, 6.1, &ns);
    CHECK(ns == 1);
    rvfit_batch_free(&b);
    ops->close(h);
    h = open_read(p, &b, 6.3, &ns);
    CHECK(ns == 0);
    rvfit_batch_free(&b);
    ops->close(h);
}

int main(void)
{
    load();
    snprintf(src, sizeof src, "%s/desi/coadd-4-80613-thru20210324.fits",
             tu_shared_data());
    tmp = tu_tmpdir("desi_bad");
    test_broken_files();
    test_bad_pixels();
    test_dead_arms();
    test_snr_fallback();
    test_column_types();
    test_bad_wavelengths();
    return tu_finish("test_desi_bad");
}
