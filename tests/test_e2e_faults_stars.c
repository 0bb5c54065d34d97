/* test_e2e_faults_stars.c — per-star problems get a warning bit and a log
 * line naming file and star instead of passing silently (issue 15).  From
 * one synthetic DESI coadd of 6 stars (`rvfit mock`), edited here:
 *  - dup.fits: row 5's TARGETID set to row 2's -> both rows written, row 5
 *    (and only it) flagged RVFIT_WARN_DUPLICATE, the log names the file and
 *    the TARGETID;
 *  - ivar.fits: star 3's IVAR = 1e38 in every arm -> RVFIT_WARN_BAD_IVAR on
 *    that star only, the log names it;
 *  - farb.fits: the B arm's wavelengths moved 30,000 A to the red, beyond
 *    the templates -> every star RVFIT_WARN_ARM_OUTSIDE, the log names the
 *    file and arm B, and the velocities (from R and Z) still agree with the
 *    unedited file's within 3 sigma;
 *  - the unedited file: none of these bits. */
#include <fitsio.h>
#include <string.h>

#include "rvfit/fit.h"
#include "testutil.h"

#define NSTAR 6

static char bin[4096], lib[4096], dir[4096];

static int fit(const char *in, char **log)
{
    char cmd[20000];
    snprintf(cmd, sizeof cmd, "'%s' fit --templates '%s' -o '%s/out' "
             "--log-level warn '%s/%s'", bin, lib, dir, dir, in);
    return tu_run(cmd, log);
}

static double *col(const char *stem, const char *name)
{
    char p[4300];
    long n = 0;
    snprintf(p, sizeof p, "%s/out/rvtab_%s.fits", dir, stem);
    double *v = tu_read_col(p, "RVTAB", name, &n);
    if (v && n != NSTAR) {
        free(v);
        return NULL;
    }
    return v;
}

/* Copy base.fits to name, open it read-write. */
static fitsfile *edit(const char *name)
{
    char cmd[20000], p[4300];
    snprintf(cmd, sizeof cmd, "cp '%s/base.fits' '%s/%s'", dir, dir, name);
    if (tu_run(cmd, NULL) != 0)
        return NULL;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    fitsfile *f = NULL;
    int st = 0;
    fits_open_file(&f, p, READWRITE, &st);
    return st ? NULL : f;
}

static void duplicates(void)
{
    fitsfile *f = edit("dup.fits");
    int st = 0, c = 0;
    long long id[NSTAR];
    CHECK(f != NULL);
    if (!f)
        return;
    fits_movnam_hdu(f, BINARY_TBL, "FIBERMAP", 0, &st);
    fits_get_colnum(f, CASEINSEN, "TARGETID", &c, &st);
    fits_read_col(f, TLONGLONG, c, 1, 1, NSTAR, NULL, id, NULL, &st);
    fits_write_col(f, TLONGLONG, c, 5, 1, 1, &id[1], &st);
    fits_close_file(f, &st);
    CHECK(st == 0);
    char *log = NULL, want[128];
    CHECK(fit("dup.fits", &log) == 0);
    snprintf(want, sizeof want, "TARGETID %lld): the TARGETID of row 2 "
             "again", id[1]);
    CHECK_MSG(tu_contains(log, "dup.fits: row 5 (") && tu_contains(log, want),
              "want '%s' in\n%s", want, log);
    double *w = col("dup", "RVS_WARN"), *t = col("dup", "TARGETID");
    CHECK(w && t);
    for (int i = 0; w && t && i < NSTAR; i++) {
        int dup = ((unsigned)w[i] & RVFIT_WARN_DUPLICATE) != 0;
        CHECK_MSG(dup == (i == 4), "row %d: RVS_WARN %g", i + 1, w[i]);
    }
    if (t)
        CHECK(t[4] == t[1] && (long long)t[1] == id[1]);
    free(w), free(t), free(log);
}

static void absurd_ivar(void)
{
    fitsfile *f = edit("ivar.fits");
    CHECK(f != NULL);
    if (!f)
        return;
    int st = 0;
    for (int a = 0; a < 3; a++) {
        char ext[32];
        long ax[2] = {0, 0};
        int naxis = 0;
        snprintf(ext, sizeof ext, "%c_IVAR", "BRZ"[a]);
        fits_movnam_hdu(f, IMAGE_HDU, ext, 0, &st);
        fits_get_img_dim(f, &naxis, &st);
        fits_get_img_size(f, 2, ax, &st);
        float *v = malloc((size_t)ax[0] * sizeof *v);
        for (long i = 0; v && i < ax[0]; i++)
            v[i] = 1e38f;
        long fp[2] = {1, 3}; /* star 3 */
        if (v)
            fits_write_pix(f, TFLOAT, fp, ax[0], v, &st);
        free(v);
    }
    fits_close_file(f, &st);
    CHECK(st == 0);
    char *log = NULL;
    CHECK(fit("ivar.fits", &log) == 0);
    CHECK_MSG(tu_contains(log, "ivar.fits: row 3 (TARGETID ") &&
                  tu_contains(log, "inverse variances (IVAR) are not "
                                   "credible"), "%s", log);
    double *w = col("ivar", "RVS_WARN");
    CHECK(w != NULL);
    for (int i = 0; w && i < NSTAR; i++) {
        int bad = ((unsigned)w[i] & RVFIT_WARN_BAD_IVAR) != 0;
        CHECK_MSG(bad == (i == 2), "row %d: RVS_WARN %g", i + 1, w[i]);
    }
    free(w), free(log);
}

static void arm_outside(void)
{
    fitsfile *f = edit("farb.fits");
    CHECK(f != NULL);
    if (!f)
        return;
    int st = 0;
    long n = 0;
    fits_movnam_hdu(f, IMAGE_HDU, "B_WAVELENGTH", 0, &st);
    fits_get_img_size(f, 1, &n, &st);
    double *wv = malloc((size_t)(n ? n : 1) * sizeof *wv);
    if (wv) {
        fits_read_img(f, TDOUBLE, 1, n, NULL, wv, NULL, &st);
        for (long i = 0; i < n; i++)
            wv[i] += 30000.0;
        fits_write_img(f, TDOUBLE, 1, n, wv, &st);
    }
    free(wv);
    fits_close_file(f, &st);
    CHECK(st == 0);
    char *log = NULL;
    CHECK(fit("farb.fits", &log) == 0);
    CHECK_MSG(tu_contains(log, "farb.fits: row 1 (TARGETID ") &&
                  tu_contains(log, "arm B (") &&
                  tu_contains(log, "lies entirely outside the templates"),
              "%s", log);
    double *w = col("farb", "RVS_WARN"), *v = col("farb", "VRAD");
    double *e = col("farb", "VRAD_ERR"), *v0 = col("base", "VRAD");
    double *e0 = col("base", "VRAD_ERR");
    CHECK(w && v && e && v0 && e0);
    for (int i = 0; w && v && e && v0 && e0 && i < NSTAR; i++) {
        CHECK_MSG((unsigned)w[i] & RVFIT_WARN_ARM_OUTSIDE, "row %d: %g",
                  i + 1, w[i]);
        double s = sqrt(e[i] * e[i] + e0[i] * e0[i]);
        CHECK_MSG(fabs(v[i] - v0[i]) < 3 * s + 1e-6, "row %d: VRAD %g vs "
                  "%g (R, Z only vs all arms; sigma %g)", i + 1, v[i], v0[i],
                  s);
    }
    free(w), free(v), free(e), free(v0), free(e0), free(log);
}

static void control(void)
{
    char *log = NULL;
    CHECK(fit("base.fits", &log) == 0);
    CHECK_MSG(!tu_contains(log, "again") && !tu_contains(log, "outside") &&
                  !tu_contains(log, "not credible"), "%s", log);
    double *w = col("base", "RVS_WARN");
    CHECK(w != NULL);
    unsigned bits = RVFIT_WARN_DUPLICATE | RVFIT_WARN_BAD_IVAR |
                    RVFIT_WARN_ARM_OUTSIDE;
    for (int i = 0; w && i < NSTAR; i++)
        CHECK_MSG(!((unsigned)w[i] & bits), "row %d: %g", i + 1, w[i]);
    free(w), free(log);
}

int main(void)
{
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    snprintf(lib, sizeof lib, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("faults_stars"));
    char cmd[20000];
    snprintf(cmd, sizeof cmd, "'%s' mock spectra -i desi -n %d --seed 7 "
             "--snr-min 20 --snr-max 40 --out '%s/base.fits' --truth "
             "'%s/truth.fits'", bin, NSTAR, dir, dir);
    if (tu_run(cmd, NULL) != 0)
        tu_skip("rvfit mock failed");
    control();
    duplicates();
    absurd_ivar();
    arm_outside();
    return tu_finish("test_e2e_faults_stars");
}
