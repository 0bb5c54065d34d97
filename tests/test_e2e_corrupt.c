/* test_e2e_corrupt.c — corrupt inputs through the CLI (issue 15): each
 * exits non-zero with a message naming what is wrong and writes nothing:
 * an empty --targetid list or @file (once: every star fitted), and a DESI
 * file whose B grid is negative (once: ln lambda NaN, stars silently
 * marked failed, exit 0). */
#include <fitsio.h>
#include <string.h>

#include "testutil.h"

static const char *bin, *data;

/* rvfit fit EXTRA INPUT must exit with `want` and log `needle`. */
static void expect_fail(const char *name, const char *extra,
                        const char *input, int want, const char *needle)
{
    char out[4096], cmd[16384];
    snprintf(out, sizeof out, "%s", tu_tmpdir(name));
    snprintf(cmd, sizeof cmd,
             "'%s' fit --templates '%s/lib' --output-dir '%s' %s '%s'", bin,
             data, out, extra, input);
    char *log = NULL;
    int rc = tu_run(cmd, &log);
    printf("--- %s: exit %d\n%s", name, rc, log ? log : "");
    CHECK_MSG(rc == want, "%s: exit %d, want %d", name, rc, want);
    CHECK_MSG(log && tu_contains(log, needle), "%s: log lacks '%s'", name,
              needle);
    CHECK_MSG(tu_count_files(out, "") == 0, "%s: %s not empty", name, out);
    free(log);
}

static void test_targetids(const char *tmp, const char *mock)
{
    char p[4200], extra[4400];
    expect_fail("tid_empty", "--targetid ''", mock, 2,
                "--targetid '': no TARGETID given");
    expect_fail("tid_commas", "--targetid ' , ,'", mock, 2,
                "no TARGETID given");
    snprintf(p, sizeof p, "%s/empty-ids.txt", tmp);
    FILE *f = fopen(p, "w");
    fclose(f);
    snprintf(extra, sizeof extra, "--targetid '@%s'", p);
    expect_fail("tid_file_empty", extra, mock, 2, "the file lists no "
                "TARGETID");
    f = fopen(p, "w");
    fputs("  \n\n\t\n", f);
    fclose(f);
    expect_fail("tid_file_blank", extra, mock, 2, "empty-ids.txt: the file "
                "lists no TARGETID");
}

/* The real coadd with its B grid moved below zero (still increasing). */
static void test_negative_wave(const char *tmp, const char *real)
{
    char p[4200], cmd[13000];
    snprintf(p, sizeof p, "%s/negwave.fits", tmp);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod u+w '%s'", real, p, p);
    CHECK(system(cmd) == 0);
    fitsfile *f;
    int st = 0;
    long n = 0;
    fits_open_file(&f, p, READWRITE, &st);
    fits_movnam_hdu(f, IMAGE_HDU, "B_WAVELENGTH", 0, &st);
    fits_get_img_size(f, 1, &n, &st);
    double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    fits_read_img(f, TDOUBLE, 1, n, NULL, w, NULL, &st);
    for (long i = 0; i < n; i++)
        w[i] -= 10000.0;
    fits_write_img(f, TDOUBLE, 1, n, w, &st);
    fits_close_file(f, &st);
    free(w);
    CHECK(st == 0 && n > 2);
    expect_fail("neg_wave", "", p, 1, "negwave.fits: HDU B_WAVELENGTH: "
                "wavelength 0 (-6400) is not finite, positive and "
                "increasing");
}

int main(void)
{
    bin = tu_env("RVFIT_BIN");
    data = tu_env("RVFIT_TEST_DATA");
    char real[4096], mock[4096], tmp[2048];
    snprintf(real, sizeof real, "%s/desi/coadd-4-80613-thru20210324.fits",
             tu_shared_data());
    snprintf(mock, sizeof mock, "%s/coadd-mock.fits", data);
    snprintf(tmp, sizeof tmp, "%s", tu_tmpdir("e2e_corrupt"));
    test_targetids(tmp, mock);
    test_negative_wave(tmp, real);
    return tu_finish("test_e2e_corrupt");
}
