/* cmd_compare_truth.c — `rvfit mock compare`: recovered vs true values of
 * a synthetic run, so a user can see what the fit did without other
 * tools. */
#include <fitsio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"

static double *column(fitsfile *f, const char *ext, const char *name,
                      long *n, int *st)
{
    int cn;
    fits_movnam_hdu(f, BINARY_TBL, (char *)ext, 0, st);
    fits_get_colnum(f, CASEINSEN, (char *)name, &cn, st);
    fits_get_num_rows(f, n, st);
    if (*st)
        return NULL;
    double *v = malloc((size_t)(*n ? *n : 1) * sizeof *v), nan = NAN;
    int any;
    fits_read_col(f, TDOUBLE, cn, 1, 1, *n, &nan, v, &any, st);
    return v;
}

int cmd_compare_truth(const char *rvtab, const char *truth, int nshow)
{
    fitsfile *ft = NULL, *fr = NULL;
    int st = 0;
    long n, m;
    fits_open_file(&ft, rvtab, READONLY, &st);
    fits_open_file(&fr, truth, READONLY, &st);
    if (st) {
        fprintf(stderr, "rvfit: error: cannot open %s or %s (CFITSIO %d)\n",
                rvtab, truth, st);
        return 1;
    }
    double *id = column(ft, "RVTAB", "TARGETID", &n, &st);
    double *v = column(ft, "RVTAB", "VRAD", &n, &st);
    double *ve = column(ft, "RVTAB", "VRAD_ERR", &n, &st);
    double *te = column(ft, "RVTAB", "TEFF", &n, &st);
    double *w = column(ft, "RVTAB", "RVS_WARN", &n, &st);
    double *tid = column(fr, "TRUTH", "TARGETID", &m, &st);
    double *tv = column(fr, "TRUTH", "VRAD", &m, &st);
    double *tt = column(fr, "TRUTH", "TEFF", &m, &st);
    double *sn = column(fr, "TRUTH", "SNR", &m, &st);
    int rc = st ? 1 : 0;
    if (rc)
        fprintf(stderr, "rvfit: error: %s / %s: missing RVTAB or TRUTH "
                        "columns (CFITSIO %d)\n", rvtab, truth, st);
    double sum2 = 0;
    long used = 0;
    if (!rc)
        printf("%-10s %6s %10s %10s %8s %7s %7s %5s\n", "TARGETID", "S/N",
               "VRAD_TRUE", "VRAD", "ERR", "TEFF_T", "TEFF", "WARN");
    for (long i = 0; !rc && i < n; i++) {
        long j = 0;
        while (j < m && tid[j] != id[i])
            j++;
        if (j == m)
            continue;
        if (i < nshow)
            printf("%-10.0f %6.1f %10.2f %10.2f %8.2f %7.0f %7.0f %5.0f\n",
                   id[i], sn[j], tv[j], v[i], ve[i], tt[j], te[i], w[i]);
        if (isfinite(v[i]) && ve[i] > 0) {
            double p = (v[i] - tv[j]) / ve[i];
            sum2 += p * p;
            used++;
        }
    }
    if (!rc)
        printf("%ld stars; rms of (VRAD - true)/VRAD_ERR = %.2f\n", used,
               used ? sqrt(sum2 / (double)used) : NAN);
    free(id), free(v), free(ve), free(te), free(w), free(tid), free(tv);
    free(tt), free(sn);
    st = 0;
    fits_close_file(ft, &st);
    fits_close_file(fr, &st);
    return rc;
}
