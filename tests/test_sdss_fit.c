/* test_sdss_fit.c — end to end with the CLI: the synthetic 'small' grid,
 * a library built for sdss, then (1) the real BOSS G1V star fitted, VRAD
 * against the SDSS pipeline's cz = -30.4 +- 3.2 km/s, and (2)
 * injection-recovery on 200 synthetic BOSS spectra (S/N 3-60, one input
 * list): error-weighted mean of VRAD - true within 3 standard errors of
 * 0, robust (IQR) std of the pulls in [0.85, 1.15], < 1% beyond 5 sigma.
 * The small grid stops at 10000 A, so [instrument.sdss] lam_max = 9900
 * bounds both the library and the pixels fitted.
 *
 * Templates are interpolated in ln flux, cubically in Teff and [Fe/H]
 * ([templates] log_flux, cubic): at BOSS resolution linear interpolation
 * in flux between the 0.5 dex [Fe/H] nodes distorts blends and moved
 * noise-free off-node stars by -0.11 km/s on average (-0.003 with these
 * settings), enough to fail the 3-standard-error test on this set. */
#include <fitsio.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#define NSTAR 200
#define SDSS_CZ -30.4

static char dir[2048];

static int run(const char *fmt, ...) RVFIT_PRINTF(1, 2);
static int run(const char *fmt, ...)
{
    char cmd[16384], args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s >> '%s/log.txt' 2>&1",
             tu_env("RVFIT_BIN"), args, dir);
    int rc = system(cmd);
    CHECK_MSG(rc == 0, "failed (see %s/log.txt): %s", dir, cmd);
    return rc;
}

/* Column `name` of HDU `hdu` of `path` as doubles (n rows). */
static double *read_col(const char *path, const char *hdu, const char *name,
                        long *n)
{
    fitsfile *fp;
    int st = 0, cn = 0;
    fits_open_file(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, (char *)hdu, 0, &st);
    fits_get_num_rows(fp, n, &st);
    fits_get_colnum(fp, CASEINSEN, (char *)name, &cn, &st);
    double *v = st ? NULL : malloc((size_t)(*n ? *n : 1) * sizeof *v);
    if (v)
        fits_read_col(fp, TDOUBLE, cn, 1, 1, *n, NULL, v, NULL, &st);
    int s2 = 0;
    fits_close_file(fp, &s2);
    if (st) {
        fprintf(stderr, "%s: %s.%s: CFITSIO %d\n", path, hdu, name, st);
        free(v);
        return NULL;
    }
    return v;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *s, size_t n, double q)
{
    double x = q * (double)(n - 1);
    size_t i = (size_t)x;
    return i + 1 < n ? s[i] + (x - (double)i) * (s[i + 1] - s[i]) : s[n - 1];
}

static void test_real(const char *data)
{
    char real[4096], tab[4096];
    snprintf(real, sizeof real, "%s/sdss/spec-3586-55181-0500.fits", data);
    if (run("fit -t %s/lib -i sdss -c %s/sdss.ini -b cpu -j 2 --overwrite "
            "-o %s/out %s", dir, dir, dir, real))
        return;
    snprintf(tab, sizeof tab, "%s/out/rvtab_spec-3586-55181-0500.fits", dir);
    long n = 0;
    double *v = read_col(tab, "RVTAB", "VRAD", &n);
    double *e = read_col(tab, "RVTAB", "VRAD_ERR", &n);
    double *id = read_col(tab, "RVTAB", "TARGETID", &n);
    CHECK(v && e && id && n == 1);
    if (v && e && id && n == 1) {
        printf("real BOSS star: VRAD = %.2f +- %.2f km/s (SDSS cz %.1f +- "
               "3.2)\n", v[0], e[0], SDSS_CZ);
        CHECK_NEAR(v[0], SDSS_CZ, 15.0);
        CHECK(e[0] > 0.1 && e[0] < 10.0);
        CHECK(id[0] == 3586551810500.0);
    }
    free(v), free(e), free(id);
}

static void test_recovery(void)
{
    char tab[4096], truth[4096];
    if (run("mock spectra -i sdss -n 200 --seed 1 --snr-min 3 --snr-max 60 "
            "-j 2 --out %s/inj.list --truth %s/truth.fits", dir, dir) ||
        run("fit -t %s/lib -i sdss -c %s/sdss.ini -b cpu -j 2 --overwrite "
            "-o %s/out %s/inj.list", dir, dir, dir, dir))
        return;
    snprintf(tab, sizeof tab, "%s/out/rvtab_inj.list.fits", dir);
    snprintf(truth, sizeof truth, "%s/truth.fits", dir);
    long n = 0, nt = 0;
    double *v = read_col(tab, "RVTAB", "VRAD", &n);
    double *e = read_col(tab, "RVTAB", "VRAD_ERR", &n);
    double *id = read_col(tab, "RVTAB", "TARGETID", &n);
    double *tv = read_col(truth, "TRUTH", "VRAD", &nt);
    double *tid = read_col(truth, "TRUTH", "TARGETID", &nt);
    CHECK(v && e && id && tv && tid && n == NSTAR && nt == NSTAR);
    if (!(v && e && id && tv && tid && n == NSTAR && nt == NSTAR))
        return;
    double sw = 0, swd = 0, pull[NSTAR];
    size_t out5 = 0, m = 0;
    for (long i = 0; i < n; i++) {
        long j = 0;
        while (j < nt && tid[j] != id[i]) /* list order = truth order */
            j++;
        CHECK(j == i);
        if (j == nt || !(e[i] > 0) || !isfinite(v[i]))
            continue;
        double d = v[i] - tv[j], w = 1.0 / (e[i] * e[i]);
        sw += w, swd += w * d;
        pull[m++] = d / e[i];
        out5 += fabs(d / e[i]) > 5.0;
    }
    CHECK(m == NSTAR);
    qsort(pull, m, sizeof *pull, cmp_d);
    double wmean = swd / sw, werr = 1.0 / sqrt(sw);
    double rstd = (quantile(pull, m, 0.75) - quantile(pull, m, 0.25)) / 1.349;
    printf("injection-recovery, %zu BOSS mocks: weighted mean dV = %.3f +- "
           "%.3f km/s, robust pull std %.3f, %zu beyond 5 sigma\n", m,
           wmean, werr, rstd, out5);
    CHECK_MSG(fabs(wmean) < 3.0 * werr, "bias %.3f +- %.3f", wmean, werr);
    CHECK(rstd >= 0.85 && rstd <= 1.15);
    CHECK((double)out5 < 0.01 * (double)m);
    free(v), free(e), free(id), free(tv), free(tid);
}

int main(void)
{
    const char *data = tu_shared_data();
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("sdss_fit"));
    char ini[4096];
    snprintf(ini, sizeof ini, "%s/out", dir);
    mkdir(ini, 0777);
    snprintf(ini, sizeof ini, "%s/sdss.ini", dir);
    FILE *f = fopen(ini, "w");
    fprintf(f, "[instrument.sdss]\nlam_max = 9900\n[templates]\n"
               "cubic = TEFF, FEH\nlog_flux = 1\n");
    fclose(f);
    if (run("mock grid --preset small -j 2 --out %s/grid", dir) ||
        run("templates --grid %s/grid -i sdss -c %s/sdss.ini -j 2 --out "
            "%s/lib", dir, dir, dir))
        return tu_finish("test_sdss_fit");
    test_real(data);
    test_recovery();
    return tu_finish("test_sdss_fit");
}
