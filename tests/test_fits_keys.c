/* test_fits_keys.c — rvfit_fits_read_key: numbers, logicals and a
 * missing keyword as CFITSIO reads them, strings passed through, and
 * numeric reads of string values, long ones included, failing with
 * BAD_C2D instead of aborting the process (CFITSIO 4.2 converts a string
 * of ~30 or more characters through a fixed buffer; the library fuzzer
 * found it through RVFLIBV).  A whole library with such a value:
 * test_library_io.
 * rvfit_fits_check_headers on a file the end cuts inside a header block
 * whose cards CFITSIO would still parse (an over-long TTYPE1 there made
 * CFITSIO 4.2 abort; the LAMOST fuzz run of 2026-11-28); on the real BOSS
 * file: test_sdss_read. */
#include <fitsio.h>
#include <stdio.h>
#include <string.h>

#include "rvfit/fits.h"
#include "testutil.h"

#define LONGSTR "I    1 / a string of more than thirty characters, quoted"

static void write_keys(const char *path)
{
    fitsfile *f;
    int st = 0, t = 1;
    long n = 5;
    double x = 2.5;
    remove(path);
    fits_create_file(&f, path, &st);
    fits_create_img(f, 8, 0, NULL, &st);
    fits_write_key(f, TLONG, "N1", &n, "a number", &st);
    fits_write_key(f, TDOUBLE, "X1", &x, "a real", &st);
    fits_write_key(f, TLOGICAL, "L1", &t, "a logical", &st);
    fits_write_key(f, TSTRING, "S1", LONGSTR, "a long string", &st);
    fits_write_key(f, TSTRING, "S2", "abc", "a short string", &st);
    fits_close_file(f, &st);
    CHECK_MSG(st == 0, "writing %s: status %d", path, st);
}

static void test_keys(const char *path)
{
    fitsfile *f;
    int st = 0;
    fits_open_file(&f, path, READONLY, &st);
    long long n = 0;
    double x = 0;
    int l = 0, i = 0;
    CHECK(rvfit_fits_read_key(f, TLONGLONG, "N1", &n, &st) == 0 && n == 5);
    CHECK(rvfit_fits_read_key(f, TDOUBLE, "X1", &x, &st) == 0 && x == 2.5);
    CHECK(rvfit_fits_read_key(f, TLOGICAL, "L1", &l, &st) == 0 && l == 1);
    const int types[] = {TINT, TLONGLONG, TDOUBLE, TLOGICAL};
    for (int k = 0; k < 4; k++) {
        const char *keys[] = {"S1", "S2"};
        for (int j = 0; j < 2; j++) {
            st = 0;
            CHECK_MSG(rvfit_fits_read_key(f, types[k], keys[j], &x, &st)
                          == BAD_C2D,
                      "type %d key %s: status %d", types[k], keys[j], st);
        }
    }
    char sv[FLEN_VALUE] = "";
    st = 0; /* strings pass through, long ones too */
    CHECK(rvfit_fits_read_key(f, TSTRING, "S1", sv, &st) == 0 &&
          !strcmp(sv, LONGSTR));
    CHECK(rvfit_fits_read_key(f, TSTRING, "S2", sv, &st) == 0 &&
          !strcmp(sv, "abc"));
    st = 0;
    CHECK(rvfit_fits_read_key(f, TINT, "NOSUCH", &i, &st) == KEY_NO_EXIST);
    st = 7; /* a failed earlier call: nothing is read */
    CHECK(rvfit_fits_read_key(f, TINT, "N1", &i, &st) == 7 && i == 0);
    fits_clear_errmsg();
    st = 0;
    fits_close_file(f, &st);
}

/* Card k of an 80-column block: text, blank-padded. */
static void card(char *blk, int k, const char *text)
{
    size_t n = strlen(text);
    memset(blk + 80 * k, ' ', 80);
    memcpy(blk + 80 * k, text, n < 80 ? n : 80);
}

/* A primary header and a table header whose TTYPE1 fills its 70 value
 * columns unquoted, written whole or cut `cut` bytes into the table's
 * block (0: whole). */
static void write_raw(const char *path, long cut)
{
    char blk[2 * 2880];
    memset(blk, ' ', sizeof blk);
    const char *prim[] = {"SIMPLE  =                    T",
                          "BITPIX  =                    8",
                          "NAXIS   =                    0",
                          "EXTEND  =                    T", "END"};
    for (int k = 0; k < 5; k++)
        card(blk, k, prim[k]);
    char ttype[81];
    memset(ttype, 'A', 80);
    memcpy(ttype, "TTYPE1  = ", 10);
    ttype[80] = '\0';
    const char *ext[] = {"XTENSION= 'BINTABLE'", "BITPIX  =                    8",
                         "NAXIS   =                    2",
                         "NAXIS1  =                    4",
                         "NAXIS2  =                    0",
                         "PCOUNT  =                    0",
                         "GCOUNT  =                    1",
                         "TFIELDS =                    1", ttype,
                         "TFORM1  = 'E       '", "END"};
    for (int k = 0; k < 11; k++)
        card(blk + 2880, k, ext[k]);
    FILE *f = fopen(path, "wb");
    size_t n = cut ? 2880 + (size_t)cut : sizeof blk;
    CHECK(f && fwrite(blk, 1, n, f) == n);
    if (f)
        fclose(f);
}

static void test_cut_header(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/cut.fits", dir);
    const long cuts[] = {0, 9 * 80 + 40, 9 * 80};
    for (int c = 0; c < 3; c++) {
        rvfit_err err = {0};
        write_raw(path, cuts[c]);
        int rc = rvfit_fits_check_headers(path, &err);
        printf("cut at %ld: %s\n", cuts[c], err.msg);
        CHECK_MSG(rc == RVFIT_ERR_FORMAT &&
                      strstr(err.msg, "cut.fits: HDU 2: header card 9 "
                                      "(TTYPE1)"),
                  "cut at %ld: rc %d, %s", cuts[c], rc, err.msg);
    }
    remove(path);
}

int main(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/keys.fits", tu_tmpdir("fits_keys"));
    write_keys(path);
    test_keys(path);
    remove(path);
    test_cut_header(tu_tmpdir("fits_keys"));
    return tu_finish("test_fits_keys");
}
