/* test_fits_keys.c — rvfit_fits_read_key: numbers, logicals and a
 * missing keyword as CFITSIO reads them, strings passed through, and
 * numeric reads of string values, long ones included, failing with
 * BAD_C2D instead of aborting the process (CFITSIO 4.2 converts a string
 * of ~30 or more characters through a fixed buffer; the library fuzzer
 * found it through RVFLIBV).  A whole library with such a value:
 * test_library_io. */
#include <fitsio.h>
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

int main(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/keys.fits", tu_tmpdir("fits_keys"));
    write_keys(path);
    test_keys(path);
    remove(path);
    return tu_finish("test_fits_keys");
}
