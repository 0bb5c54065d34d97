/* test_e2e_invariance.c — results must not depend on the batch size, the
 * number of threads (the backend's and the fit driver's), read-ahead or
 * where interpolation stencils are computed: each spectrum's optimizer
 * path depends only on its own values,
 * the backend evaluates every point independently, and the core's
 * stencils (rvfit/interp.h) are the ones the backend computes itself, so
 * fitting 24 stars with (batch 512, 2 threads for the backend and the
 * driver, read-ahead, stencils from the backend) and (batch 5, 1 thread,
 * no read-ahead, stencils from the core) must give the same outputs to
 * the last bit. */
#include <string.h>

#include "testutil.h"

static const char *const colnames[] = {"VRAD", "VRAD_ERR", "VSINI", "TEFF",
                                       "LOGG", "FEH", "CHISQ_TOT",
                                       "RVS_WARN"};

static void fit(const char *bin, const char *data, const char *out,
                const char *ids, const char *opts)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "'%s' fit --templates '%s/lib' --output-dir '%s' --targetid %s "
             "%s '%s/coadd-mock.fits'",
             bin, data, out, ids, opts, data);
    char *log = NULL;
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "%s: exit %d\n%s", opts, rc, log);
    free(log);
}

int main(void)
{
    const char *bin = tu_env("RVFIT_BIN"), *data = tu_env("RVFIT_TEST_DATA");
    char ids[512] = "", a[4096], b[4096], ta[4200], tb[4200];
    for (int i = 0; i < 24; i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d",
                 i ? "," : "", 1000100 + i);
    snprintf(a, sizeof a, "%s", tu_tmpdir("inv_a"));
    snprintf(b, sizeof b, "%s", tu_tmpdir("inv_b"));
    fit(bin, data, a, ids, "--batch-size 512 --threads 2 --set "
                           "run.driver_threads=2");
    fit(bin, data, b, ids, "--batch-size 5 --threads 1 --set "
                           "run.readahead=0 --set templates.host_stencils=1");
    snprintf(ta, sizeof ta, "%s/rvtab_coadd-mock.fits", a);
    snprintf(tb, sizeof tb, "%s/rvtab_coadd-mock.fits", b);
    for (size_t c = 0; c < sizeof colnames / sizeof *colnames; c++) {
        long n1 = 0, n2 = 0;
        double *x = tu_read_col(ta, "RVTAB", colnames[c], &n1);
        double *y = tu_read_col(tb, "RVTAB", colnames[c], &n2);
        CHECK(x && y && n1 == 24 && n2 == 24);
        double worst = 0;
        for (long i = 0; x && y && i < n1 && i < n2; i++) {
            double d = fabs(x[i] - y[i]) / fmax(1.0, fabs(x[i]));
            worst = d > worst ? d : worst;
        }
        printf("%-10s max relative difference %.3g\n", colnames[c], worst);
        CHECK_MSG(worst == 0, "%s differs by %.3g", colnames[c], worst);
        free(x), free(y);
    }
    char why[1024];
    long d = tu_outputs_diff(a, b, "coadd-mock", why, sizeof why);
    CHECK_MSG(d == 0, "%ld differences: %s", d, why);
    return tu_finish("test_e2e_invariance");
}
