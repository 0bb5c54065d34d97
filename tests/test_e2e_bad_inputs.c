/* test_e2e_bad_inputs.c — bad input through the CLI: each fatal case exits
 * non-zero with one clear message naming the file (and HDU) and leaves no
 * file at all in the output directory; per-star problems (NaN flux, dead
 * arms) give warning bits, not failures. */
#include <fitsio.h>
#include <string.h>

#include "testutil.h"

static const char *bin, *data;

/* Run `rvfit fit` on input; expect failure mentioning each needle. */
static void expect_fail(const char *name, const char *input,
                        const char *extra, const char *n1, const char *n2)
{
    char out[4096], cmd[16384];
    snprintf(out, sizeof out, "%s", tu_tmpdir(name));
    snprintf(cmd, sizeof cmd,
             "'%s' fit --templates '%s/lib' --output-dir '%s' %s '%s'", bin,
             data, out, extra, input);
    char *log = NULL;
    int rc = tu_run(cmd, &log);
    printf("--- %s: exit %d\n%s", name, rc, log ? log : "");
    CHECK_MSG(rc != 0, "%s: exit 0", name);
    CHECK_MSG(tu_contains(log, n1), "%s: log lacks '%s'", name, n1);
    if (n2)
        CHECK_MSG(tu_contains(log, n2), "%s: log lacks '%s'", name, n2);
    CHECK_MSG(tu_count_files(out, "") == 0, "%s: output directory %s not empty", name,
              out);
    free(log);
}

/* Copy src to dst with CFITSIO, leaving out the HDU named skip. */
static int copy_without(const char *src, const char *dst, const char *skip)
{
    fitsfile *in, *out;
    int st = 0, nhdu;
    char d[4200];
    snprintf(d, sizeof d, "!%s", dst);
    fits_open_file(&in, src, READONLY, &st);
    fits_create_file(&out, d, &st);
    fits_get_num_hdus(in, &nhdu, &st);
    for (int i = 1; i <= nhdu && !st; i++) {
        char ext[FLEN_VALUE] = "";
        int t;
        fits_movabs_hdu(in, i, &t, &st);
        int s2 = 0;
        fits_read_key(in, TSTRING, "EXTNAME", ext, NULL, &s2);
        if (strcmp(ext, skip))
            fits_copy_hdu(in, out, 0, &st);
    }
    int s3 = 0;
    fits_close_file(out, &s3);
    fits_close_file(in, &s3);
    return st;
}

/* Overwrite n pixels of row `row` of image HDU ext with value v. */
static int poke(const char *path, const char *ext, long row, long n, float v)
{
    fitsfile *f;
    int st = 0;
    float *buf = malloc((size_t)n * sizeof *buf);
    for (long i = 0; i < n; i++)
        buf[i] = (i % 2 && !isfinite(v)) ? -v : v;
    fits_open_file(&f, path, READWRITE, &st);
    fits_movnam_hdu(f, IMAGE_HDU, (char *)ext, 0, &st);
    long fp[2] = {1, row + 1};
    fits_write_pix(f, TFLOAT, fp, n, buf, &st);
    int s2 = 0;
    fits_close_file(f, &s2);
    free(buf);
    return st;
}

static void fatal_cases(const char *real, const char *tmp /* < 2048 */)
{
    char p[4200], cmd[9000];
    expect_fail("bad_missing", "/nonexistent/coadd-x.fits", "",
                "/nonexistent/coadd-x.fits", NULL);
    snprintf(p, sizeof p, "%s/notfits.fits", tmp);
    FILE *f = fopen(p, "w");
    fputs("this is not a FITS file\n", f);
    fclose(f);
    expect_fail("bad_notfits", p, "", "notfits.fits", NULL);
    snprintf(p, sizeof p, "%s/truncated.fits", tmp);
    snprintf(cmd, sizeof cmd, "head -c 300000 '%s' > '%s'", real, p);
    CHECK(system(cmd) == 0);
    expect_fail("bad_truncated", p, "", "truncated.fits", "truncated");
    snprintf(p, sizeof p, "%s/nores.fits", tmp);
    CHECK(copy_without(real, p, "B_RESOLUTION") == 0);
    expect_fail("bad_nores", p, "", "nores.fits", "B_RESOLUTION");
    snprintf(p, sizeof p, "%s/nofibermap.fits", tmp);
    CHECK(copy_without(real, p, "FIBERMAP") == 0);
    expect_fail("bad_nofibermap", p, "", "nofibermap.fits", "FIBERMAP");
    /* Unknown INI key: file and line. */
    snprintf(p, sizeof p, "%s/bad.ini", tmp);
    f = fopen(p, "w");
    fputs("[fit]\nnpoly = 8\nvelocity_max = 3\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "-c '%s'", p);
    expect_fail("bad_ini", real, cmd, "bad.ini:3", "velocity_max");
    /* An output directory nobody can write (not even root). */
    char log_cmd[9000];
    snprintf(log_cmd, sizeof log_cmd,
             "'%s' fit --templates '%s/lib' --output-dir /proc '%s'", bin,
             data, real);
    char *log = NULL;
    int rc = tu_run(log_cmd, &log);
    printf("--- bad_outdir: exit %d\n%s", rc, log ? log : "");
    /* refused at the directory's lock file, before any output */
    CHECK(rc != 0 && tu_contains(log, "output directory /proc: cannot "
                                      "create the lock file"));
    free(log);
}

/* Per-star problems on a copy of the synthetic coadd: star 0 has NaN/inf
 * flux in part of B, star 1 has its R arm dead, star 2 has every arm
 * dead. */
static void per_star_cases(const char *tmp)
{
    char src[4096], p[4200], cmd[16384], out[4096];
    snprintf(src, sizeof src, "%s/coadd-mock.fits", data);
    snprintf(p, sizeof p, "%s/coadd-damaged.fits", tmp);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, p);
    CHECK(system(cmd) == 0);
    CHECK(poke(p, "B_FLUX", 0, 400, NAN) == 0);
    CHECK(poke(p, "B_FLUX", 0, 200, INFINITY) == 0);
    CHECK(poke(p, "R_IVAR", 1, 2326, 0) == 0);
    CHECK(poke(p, "B_IVAR", 2, 2751, 0) == 0);
    CHECK(poke(p, "R_IVAR", 2, 2326, 0) == 0);
    CHECK(poke(p, "Z_IVAR", 2, 2881, 0) == 0);
    snprintf(out, sizeof out, "%s", tu_tmpdir("bad_perstar"));
    snprintf(cmd, sizeof cmd,
             "'%s' fit --templates '%s/lib' --output-dir '%s' --targetid "
             "1000000,1000001,1000002,1000003 '%s'",
             bin, data, out, p);
    char *log = NULL;
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "per-star problems must not fail the file:\n%s", log);
    free(log);
    char tab[4200];
    snprintf(tab, sizeof tab, "%s/rvtab_coadd-damaged.fits", out);
    long n;
    double *warn = tu_read_col(tab, "RVTAB", "RVS_WARN", &n);
    double *v = tu_read_col(tab, "RVTAB", "VRAD", &n);
    double *npr = tu_read_col(tab, "RVTAB", "CHISQ_R", &n);
    double *truth = tu_read_col(src, "FIBERMAP", "TARGETID", &n);
    CHECK(warn && v && npr && n >= 4);
    if (warn && v && npr) {
        printf("per-star: warn %g %g %g %g, VRAD %g %g %g %g\n", warn[0],
               warn[1], warn[2], warn[3], v[0], v[1], v[2], v[3]);
        CHECK(isfinite(v[0]) && isfinite(v[1]) && isfinite(v[3]));
        CHECK(((long)warn[0] & 32) == 0 && ((long)warn[1] & 32) == 0);
        CHECK(((long)warn[2] & 32) == 32 && !isfinite(v[2]));
        CHECK(npr[1] == 0); /* the dead arm contributes nothing */
    }
    free(warn), free(v), free(npr), free(truth);
}

int main(void)
{
    bin = tu_env("RVFIT_BIN");
    data = tu_env("RVFIT_TEST_DATA");
    char real[4096];
    snprintf(real, sizeof real, "%s/desi/coadd-4-80613-thru20210324.fits",
             tu_shared_data());
    const char *tmp0 = tu_tmpdir("bad_inputs");
    char tmp[2048];
    snprintf(tmp, sizeof tmp, "%s", tmp0);
    fatal_cases(real, tmp);
    per_star_cases(tmp);
    return tu_finish("test_e2e_bad_inputs");
}
