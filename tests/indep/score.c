/* `rvfit-indep score RVTAB TRUTH`: recovered versus true parameters in S/N
 * bins, read with CFITSIO only (no rvfit code, no Python).  Bias = median of
 * (fit - truth); scatter = 1.4826 x median absolute deviation; pull width =
 * the same robust scatter of (fit - truth)/error, for VRAD in the first
 * table and for TEFF, LOGG, FEH and ALPHAFE in the second. */
#include "mock.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_VRAD, C_VERR, C_TEFF, C_TERR, C_LOGG, C_GERR, C_FEH, C_FERR, C_ALPHA,
       C_AERR, C_NCOL };
enum { T_VRAD, T_TEFF, T_LOGG, T_FEH, T_SNR, T_ALPHA, T_NCOL };

typedef struct {
    size_t n;
    long long *tid;
    double *col[C_NCOL];
    long *warn;
    double *tv[T_NCOL]; /* truth (matched rows), T_* order */
} table;

static int read_col(fitsfile *fp, const char *name, int type, size_t n,
                    void *out, int *st)
{
    int col = 0;
    fits_get_colnum(fp, CASEINSEN, (char *)name, &col, st);
    fits_read_col(fp, type, col, 1, 1, (LONGLONG)n, NULL, out, NULL, st);
    return *st;
}

static int read_rvtab(const char *path, table *t, ind_err *e)
{
    static const char *names[C_NCOL] = {"VRAD", "VRAD_ERR", "TEFF",
        "TEFF_ERR", "LOGG", "LOGG_ERR", "FEH", "FEH_ERR", "ALPHAFE",
        "ALPHAFE_ERR"};
    fitsfile *fp = NULL;
    int st = 0;
    long nrow = 0;
    fits_open_table(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "RVTAB", 0, &st);
    fits_get_num_rows(fp, &nrow, &st);
    if (st)
        return fits_close_file(fp, &(int){0}),
               ind_fits_fail(e, st, path, "reading HDU RVTAB");
    t->n = (size_t)nrow;
    t->tid = calloc(t->n + 1, sizeof *t->tid);
    t->warn = calloc(t->n + 1, sizeof *t->warn);
    for (int k = 0; k < C_NCOL; k++)
        t->col[k] = calloc(t->n + 1, sizeof(double));
    for (int k = 0; k < T_NCOL; k++)
        t->tv[k] = calloc(t->n + 1, sizeof(double));
    read_col(fp, "TARGETID", TLONGLONG, t->n, t->tid, &st);
    read_col(fp, "RVS_WARN", TLONG, t->n, t->warn, &st);
    for (int k = 0; k < C_NCOL; k++)
        read_col(fp, names[k], TDOUBLE, t->n, t->col[k], &st);
    fits_close_file(fp, &(int){0});
    return st ? ind_fits_fail(e, st, path, "reading RVTAB columns") : 0;
}

static int read_truth(const char *path, table *t, ind_err *e)
{
    static const char *names[T_NCOL] = {"VRAD", "TEFF", "LOGG", "FEH", "SNR",
                                        "ALPHAFE"};
    fitsfile *fp = NULL;
    int st = 0;
    long nrow = 0;
    fits_open_table(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "TRUTH", 0, &st);
    fits_get_num_rows(fp, &nrow, &st);
    size_t n = (size_t)(nrow > 0 ? nrow : 0);
    long long *tid = calloc(n + 1, sizeof *tid);
    double *v = calloc(T_NCOL * n + 1, sizeof *v);
    if (!st && (!tid || !v))
        st = MEMORY_ALLOCATION;
    read_col(fp, "TARGETID", TLONGLONG, n, tid, &st);
    for (int k = 0; k < T_NCOL; k++)
        read_col(fp, names[k], TDOUBLE, n, v + k * n, &st);
    fits_close_file(fp, &(int){0});
    int rc = st ? ind_fits_fail(e, st, path, "reading HDU TRUTH") : 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        size_t j = 0;
        while (j < n && tid[j] != t->tid[i])
            j++;
        if (j == n)
            rc = ind_fail(e, "%s: TARGETID %lld of the rvtab not in TRUTH",
                          path, t->tid[i]);
        for (int k = 0; k < T_NCOL && !rc; k++)
            t->tv[k][i] = v[k * n + j];
    }
    free(tid);
    free(v);
    return rc;
}

static void free_table(table *t)
{
    free(t->tid);
    free(t->warn);
    for (int k = 0; k < C_NCOL; k++)
        free(t->col[k]);
    for (int k = 0; k < T_NCOL; k++)
        free(t->tv[k]);
}

/* Median and 1.4826 MAD of the finite values of x[0..n) (x is reused). */
static void robust(double *x, size_t n, double *med, double *rs)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            x[m++] = x[i];
    if (m == 0) {
        *med = *rs = NAN;
        return;
    }
    double *c = malloc(m * sizeof *c);
    if (!c) {
        *med = *rs = NAN;
        return;
    }
    memcpy(c, x, m * sizeof *c);
    *med = ind_median(c, m);
    for (size_t i = 0; i < m; i++)
        c[i] = fabs(x[i] - *med);
    *rs = 1.4826 * ind_median(c, m);
    free(c);
}

typedef struct {
    size_t n;
    double dv_b, dv_s, pull, out5, absdv, warn;
    double b[3], s[3];       /* Teff, logg, [Fe/H] bias and scatter */
    double ppull[4];         /* pull widths of Teff, logg, [Fe/H], alpha */
} bin_stats;

/* Pull widths of the four parameters in the bin [lo, hi) of S/N. */
static void param_pulls(const table *t, double lo, double hi, double *x,
                        bin_stats *r)
{
    static const int fit[4] = {C_TEFF, C_LOGG, C_FEH, C_ALPHA};
    static const int tru[4] = {T_TEFF, T_LOGG, T_FEH, T_ALPHA};
    double dum;
    for (int p = 0; p < 4; p++) {
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->tv[T_SNR][i] >= lo && t->tv[T_SNR][i] < hi)
                x[k++] = (t->col[fit[p]][i] - t->tv[tru[p]][i]) /
                         t->col[fit[p] + 1][i];
        robust(x, k, &dum, &r->ppull[p]);
    }
}

static void bin_eval(const table *t, double lo, double hi, bin_stats *r)
{
    double *x = malloc((t->n + 1) * sizeof *x), dum;
    memset(r, 0, sizeof *r);
    if (!x)
        return;
    size_t m = 0, out = 0, warned = 0;
    for (size_t i = 0; i < t->n; i++) {
        double snr = t->tv[T_SNR][i];
        if (!(snr >= lo && snr < hi))
            continue;
        double d = t->col[C_VRAD][i] - t->tv[T_VRAD][i];
        x[m++] = d;
        out += fabs(d / t->col[C_VERR][i]) > 5.0;
        warned += t->warn[i] != 0;
    }
    r->n = m;
    if (m == 0) {
        free(x);
        return;
    }
    r->out5 = (double)out / (double)m;
    r->warn = (double)warned / (double)m;
    robust(x, m, &r->dv_b, &r->dv_s);
    static const int fit[4] = {C_VRAD, C_TEFF, C_LOGG, C_FEH};
    static const int err[4] = {C_VERR, C_TERR, C_GERR, C_FERR};
    for (int p = 0; p < 4; p++) {
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++) {
            double snr = t->tv[T_SNR][i];
            if (!(snr >= lo && snr < hi))
                continue;
            double d = t->col[fit[p]][i] - t->tv[p][i];
            x[k++] = p == 0 ? d / t->col[err[p]][i] : d;
        }
        if (p == 0)
            robust(x, k, &dum, &r->pull);
        else
            robust(x, k, &r->b[p - 1], &r->s[p - 1]);
    }
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->tv[T_SNR][i] >= lo && t->tv[T_SNR][i] < hi)
            x[k++] = fabs(t->col[C_VRAD][i] - t->tv[T_VRAD][i]);
    robust(x, k, &r->absdv, &dum);
    param_pulls(t, lo, hi, x, r);
    free(x);
}

static const struct { const char *name; double lo, hi; } bins[] = {
    {"S/N<5", 0, 5}, {"5-15", 5, 15}, {">15", 15, INFINITY},
    {"all", -INFINITY, INFINITY}};
#define NBIN (sizeof bins / sizeof bins[0])

/* The bounds of the rvtab's stars (NaN where the file has none), in the
 * order VRAD, TEFF, LOGG, FEH, ALPHAFE. */
static int read_bound(const char *path, const table *t, double *bd,
                      ind_err *e)
{
    static const char *names[5] = {"VRAD", "TEFF", "LOGG", "FEH", "ALPHAFE"};
    fitsfile *fp = NULL;
    int st = 0;
    long nrow = 0;
    fits_open_table(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "BOUND", 0, &st);
    fits_get_num_rows(fp, &nrow, &st);
    size_t n = st ? 0 : (size_t)nrow;
    long long *tid = calloc(n + 1, sizeof *tid);
    double *v = calloc(5 * n + 1, sizeof *v);
    if (!st && (!tid || !v))
        st = MEMORY_ALLOCATION;
    read_col(fp, "TARGETID", TLONGLONG, n, tid, &st);
    for (int k = 0; k < 5; k++)
        read_col(fp, names[k], TDOUBLE, n, v + k * n, &st);
    if (fp)
        fits_close_file(fp, &(int){0});
    for (size_t i = 0; i < t->n && !st; i++) {
        size_t j = 0;
        while (j < n && tid[j] != t->tid[i])
            j++;
        for (int k = 0; k < 5; k++)
            bd[k * t->n + i] = j < n ? v[k * n + j] : NAN;
    }
    free(tid);
    free(v);
    return st ? ind_fits_fail(e, st, path, "reading HDU BOUND") : 0;
}

/* rms and median of (fit - true) / bound per parameter and S/N bin. */
static void print_bound(const table *t, const double *bd)
{
    static const int fit[5] = {C_VRAD, C_TEFF, C_LOGG, C_FEH, C_ALPHA};
    static const int tru[5] = {T_VRAD, T_TEFF, T_LOGG, T_FEH, T_ALPHA};
    double *x = malloc((t->n + 1) * sizeof *x), med, dum;
    if (!x)
        return;
    printf("\n%-6s %4s %7s %7s %7s %7s %7s   (rms of (fit - true) / "
           "Cramer-Rao bound; median in brackets)\n", "bin", "n", "VRAD",
           "TEFF", "LOGG", "FEH", "ALPHAFE");
    for (size_t b = 0; b < NBIN; b++) {
        double rms[5], mid[5];
        size_t nb = 0;
        for (int p = 0; p < 5; p++) {
            size_t k = 0;
            double ss = 0.0;
            for (size_t i = 0; i < t->n; i++) {
                double snr = t->tv[T_SNR][i];
                double r = (t->col[fit[p]][i] - t->tv[tru[p]][i]) /
                           bd[p * t->n + i];
                if (snr >= bins[b].lo && snr < bins[b].hi && isfinite(r)) {
                    x[k++] = r;
                    ss += r * r;
                }
            }
            rms[p] = k ? sqrt(ss / (double)k) : NAN;
            robust(x, k, &med, &dum);
            mid[p] = med;
            nb = k > nb ? k : nb;
        }
        printf("%-6s %4zu", bins[b].name, nb);
        for (int p = 0; p < 5; p++)
            printf(" %5.2f(%+.2f)", rms[p], mid[p]);
        printf("\n");
    }
    free(x);
}

/* Stars whose TEFF, LOGG or FEH lies further than lim[] from the truth
 * (lim[k] <= 0: not checked), each printed; returns their number. */
static size_t check_params(const table *t, const double *lim)
{
    static const int fit[3] = {C_TEFF, C_LOGG, C_FEH};
    static const int tru[3] = {T_TEFF, T_LOGG, T_FEH};
    static const char *name[3] = {"TEFF", "LOGG", "FEH"};
    size_t bad = 0;
    for (size_t i = 0; i < t->n; i++) {
        int out = 0;
        for (int k = 0; k < 3; k++)
            out |= lim[k] > 0 &&
                   !(fabs(t->col[fit[k]][i] - t->tv[tru[k]][i]) <= lim[k]);
        if (!out)
            continue;
        printf("check: TARGETID %lld outside the limits:", t->tid[i]);
        for (int k = 0; k < 3; k++)
            printf(" %s %g (true %g)", name[k], t->col[fit[k]][i],
                   t->tv[tru[k]][i]);
        printf("\n");
        bad++;
    }
    return bad;
}

/* Prints the tables; returns 1 when --check failed, -1 on error. */
int ind_score(const char *rvtab, const char *truth, const char *bound,
              double check_absdv, double check_snr, const double *check_par,
              ind_err *e)
{
    table t = {0};
    double *bd = NULL;
    int rc = read_rvtab(rvtab, &t, e);
    if (!rc)
        rc = read_truth(truth, &t, e);
    if (!rc && bound) {
        bd = malloc((5 * t.n + 1) * sizeof *bd);
        rc = bd ? read_bound(bound, &t, bd, e) : ind_fail(e, "out of memory");
    }
    if (rc) {
        free(bd);
        free_table(&t);
        return -1;
    }
    printf("%-6s %4s %7s %7s %5s %6s %7s %6s %6s %6s %6s %6s %5s\n", "bin",
           "n", "dV med", "dV rsd", "pull", ">5sig", "dTeff", "sTeff",
           "dlogg", "slogg", "dFeH", "sFeH", "warn");
    for (size_t b = 0; b < NBIN; b++) {
        bin_stats r;
        bin_eval(&t, bins[b].lo, bins[b].hi, &r);
        printf("%-6s %4zu %7.2f %7.2f %5.2f %6.3f %7.0f %6.0f %6.2f %6.2f "
               "%6.2f %6.2f %5.2f\n", bins[b].name, r.n, r.dv_b, r.dv_s,
               r.pull, r.out5, r.b[0], r.s[0], r.b[1], r.s[1], r.b[2],
               r.s[2], r.warn);
    }
    printf("\n%-6s %4s %7s %7s %7s %7s   (pull widths of the parameters)\n",
           "bin", "n", "TEFF", "LOGG", "FEH", "ALPHAFE");
    for (size_t b = 0; b < NBIN; b++) {
        bin_stats r;
        bin_eval(&t, bins[b].lo, bins[b].hi, &r);
        printf("%-6s %4zu %7.2f %7.2f %7.2f %7.2f\n", bins[b].name, r.n,
               r.ppull[0], r.ppull[1], r.ppull[2], r.ppull[3]);
    }
    /* inverse-variance weighted mean of VRAD - true: a velocity zero point
     * shared by all stars shows here first */
    double sw = 0.0, swd = 0.0;
    for (size_t i = 0; i < t.n; i++) {
        double d = t.col[C_VRAD][i] - t.tv[T_VRAD][i], e2 = t.col[C_VERR][i];
        if (isfinite(d) && e2 > 0) {
            sw += 1.0 / (e2 * e2);
            swd += d / (e2 * e2);
        }
    }
    if (sw > 0)
        printf("weighted mean dV = %.3f +- %.3f km/s\n", swd / sw,
               1.0 / sqrt(sw));
    if (bd)
        print_bound(&t, bd);
    free(bd);
    if (check_absdv > 0) {
        bin_stats r;
        bin_eval(&t, check_snr, INFINITY, &r);
        printf("check: median |VRAD - true| at S/N > %g = %.3f km/s over %zu "
               "stars (limit %g)\n", check_snr, r.absdv, r.n, check_absdv);
        rc = !(r.n > 0 && r.absdv < check_absdv);
    }
    if (check_par[0] > 0 || check_par[1] > 0 || check_par[2] > 0) {
        size_t bad = check_params(&t, check_par);
        printf("check: %zu of %zu stars with |TEFF - true| > %g, |LOGG - "
               "true| > %g or |FEH - true| > %g\n", bad, t.n, check_par[0],
               check_par[1], check_par[2]);
        rc |= bad > 0;
    }
    free_table(&t);
    return rc;
}
