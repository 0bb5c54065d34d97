/* `rvfit-indep score-epochs RVTAB TRUTH [SINGLE_RVTAB...]`: a joint fit
 * of `epochs` data against its truth, read with CFITSIO only.
 *
 *  - constancy test: VRAD_PVALUE of the constant stars with two or more
 *    exposures should be uniform: the Kolmogorov-Smirnov statistic
 *    against U(0, 1) and its asymptotic p-value (Stephens' correction
 *    (sqrt n + 0.12 + 0.11 / sqrt n) D), and the fractions below 0.001,
 *    0.01, 0.05;
 *  - per-exposure velocities (RVEPOCH): pulls (VRAD - true) / VRAD_ERR
 *    in bins of the exposure's true S/N: median, 1.4826 MAD width, rms
 *    of |pull| < 5 and the fraction beyond 5; beside them the same of the
 *    single fits of the same exposures, to tell what the joint model adds
 *    from what the fitter does with any exposure;
 *  - shared parameters: robust scatter (1.4826 MAD) of TEFF, LOGG, FEH
 *    about the truth, joint (one per star) against the single fits of
 *    the same stars' exposures (one per exposure; matched by TARGETID
 *    and EXPID, the single rvtab's FIBERMAP) in bins of the stars' median
 *    exposure S/N;
 *  - binaries: the fraction flagged (VRAD_PVALUE < 0.001) in bins of
 *    K1 / sigma, sigma the median VRAD_ERR of the star's exposures;
 *  - with [fit] sb2 = 1, SB2_DCHISQ of single-lined and double-lined
 *    stars' exposures (by S/N; by the components' separation). */
#include "mock.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAP 0.001
#define NSNR 3
static const double snr_edge[NSNR + 1] = {0, 5, 15, INFINITY};
static const char *const snr_name[NSNR] = {"<5", "5-15", ">15"};
#define NKB 7
static const double kb_edge[NKB + 1] = {0, 1, 2, 3, 5, 8, 16, INFINITY};

typedef struct {
    long n;
    long long *k1, *k2;   /* TARGETID, EXPID (or 0)                  */
    double *v[10];
} tab;

static void tab_free(tab *t)
{
    free(t->k1), free(t->k2);
    for (int i = 0; i < 10; i++)
        free(t->v[i]);
    memset(t, 0, sizeof *t);
}

/* Columns of HDU ext: id1, id2 (NULL: none) as integers, names[] as
 * doubles (a missing column gives NaN). */
static int tab_read(const char *path, const char *ext, const char *id1,
                    const char *id2, const char *const *names, int nn,
                    tab *t, ind_err *e)
{
    fitsfile *fp = NULL;
    int st = 0, col = 0;
    memset(t, 0, sizeof *t);
    fits_open_table(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, (char *)ext, 0, &st);
    fits_get_num_rows(fp, &t->n, &st);
    if (st) {
        if (fp)
            fits_close_file(fp, &(int){0});
        char what[96];
        snprintf(what, sizeof what, "reading HDU %s", ext);
        return ind_fits_fail(e, st, path, what);
    }
    size_t n = (size_t)t->n + 1;
    t->k1 = calloc(n, sizeof *t->k1);
    t->k2 = calloc(n, sizeof *t->k2);
    for (int i = 0; i < nn; i++)
        t->v[i] = calloc(n, sizeof(double));
    fits_get_colnum(fp, CASEINSEN, (char *)id1, &col, &st);
    fits_read_col(fp, TLONGLONG, col, 1, 1, t->n, NULL, t->k1, NULL, &st);
    if (id2) {
        fits_get_colnum(fp, CASEINSEN, (char *)id2, &col, &st);
        fits_read_col(fp, TLONGLONG, col, 1, 1, t->n, NULL, t->k2, NULL, &st);
    }
    for (int i = 0; i < nn && !st; i++) {
        double nan = NAN;
        int anynul = 0; /* CFITSIO sets it on a NaN: never NULL */
        if (fits_get_colnum(fp, CASEINSEN, (char *)names[i], &col, &st)) {
            st = 0;
            fits_clear_errmsg();
            for (long r = 0; r < t->n; r++)
                t->v[i][r] = NAN;
            continue;
        }
        fits_read_col(fp, TDOUBLE, col, 1, 1, t->n, &nan, t->v[i], &anynul,
                      &st);
    }
    fits_close_file(fp, &(int){0});
    if (st)
        return ind_fits_fail(e, st, path, "reading columns");
    return 0;
}

/* Row of (a, b) in t (linear scan; the tables are small), -1 if none. */
static long tab_find(const tab *t, long long a, long long b)
{
    for (long r = 0; r < t->n; r++)
        if (t->k1[r] == a && t->k2[r] == b)
            return r;
    return -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and 1.4826 MAD of the finite x[0..n-1] (reordered). */
static double med(double *x, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            x[m++] = x[i];
    if (!m)
        return NAN;
    qsort(x, m, sizeof *x, cmp_d);
    return m % 2 ? x[m / 2] : 0.5 * (x[m / 2 - 1] + x[m / 2]);
}

static double rwidth(const double *x, size_t n)
{
    double *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return NAN;
    memcpy(a, x, n * sizeof *a);
    double m = med(a, n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            a[k++] = fabs(x[i] - m);
    double w = 1.4826 * med(a, k);
    free(a);
    return w;
}

/* Kolmogorov-Smirnov against U(0, 1): statistic and asymptotic p. */
static double ks_uniform(double *p, size_t n, double *d)
{
    qsort(p, n, sizeof *p, cmp_d);
    double dmax = 0;
    for (size_t i = 0; i < n; i++) {
        double lo = p[i] - (double)i / n, hi = (double)(i + 1) / n - p[i];
        dmax = fmax(dmax, fmax(lo, hi));
    }
    *d = dmax;
    double sn = sqrt((double)n), lam = (sn + 0.12 + 0.11 / sn) * dmax;
    if (lam < 0.2)
        return 1.0;
    double q = 0;
    for (int k = 1; k <= 100; k++)
        q += 2 * ((k % 2) ? 1 : -1) * exp(-2.0 * k * k * lam * lam);
    return fmin(fmax(q, 0), 1);
}

typedef struct {
    tab jt, je, tr, te;   /* joint RVTAB, RVEPOCH; TRUTH, EXPTRUTH      */
    int fail;
} score;

enum { J_NEP, J_P, J_TEFF, J_LOGG, J_FEH };
enum { E_VRAD, E_VERR, E_SB2 };
enum { T_TEFF, T_LOGG, T_FEH, T_SNR, T_NEXP, T_BIN, T_K1, T_SB2, T_LR };
enum { X_VRAD, X_SNR, X_VRAD2 };

static void constancy(score *s, const ind_epoch_checks *ck)
{
    size_t n = 0, below[3] = {0, 0, 0};
    double *p = malloc((size_t)(s->jt.n + 1) * sizeof *p);
    for (long r = 0; p && r < s->jt.n; r++) {
        long t = tab_find(&s->tr, s->jt.k1[r], 0);
        if (t < 0 || s->tr.v[T_BIN][t] != 0 || s->jt.v[J_NEP][r] < 2 ||
            !isfinite(s->jt.v[J_P][r]))
            continue;
        double q = s->jt.v[J_P][r];
        below[0] += q < 0.001, below[1] += q < 0.01, below[2] += q < 0.05;
        p[n++] = q;
    }
    double d = NAN, ks = n ? ks_uniform(p, n, &d) : NAN;
    double f = n ? (double)below[0] / n : NAN;
    printf("constant stars with >= 2 exposures: %zu\n", n);
    printf("VRAD_PVALUE: KS D %.4f, p %.4f; below 0.001: %zu (%.4f), "
           "below 0.01: %zu (%.4f), below 0.05: %zu (%.4f)\n", d, ks,
           below[0], f, below[1], n ? (double)below[1] / n : NAN, below[2],
           n ? (double)below[2] / n : NAN);
    if (ck && !(ks > ck->ks_p)) {
        printf("CHECK FAILED: KS p %.4f not above %.4f\n", ks, ck->ks_p);
        s->fail = 1;
    }
    if (ck && !(f >= ck->frac_lo && f <= ck->frac_hi)) {
        printf("CHECK FAILED: fraction below 0.001 %.4f not in [%g, %g]\n",
               f, ck->frac_lo, ck->frac_hi);
        s->fail = 1;
    }
    free(p);
}

/* The pulls of exposure (tid, expid) with velocity v and error err: into
 * pl[b] of its true S/N bin. */
static void pull_add(const score *s, long long tid, long long expid,
                     double v, double err, double **pl, size_t *n)
{
    long t = tab_find(&s->te, tid, expid);
    if (t < 0 || !(err > 0))
        return;
    double snr = s->te.v[X_SNR][t];
    for (int b = 0; b < NSNR; b++)
        if (snr >= snr_edge[b] && snr < snr_edge[b + 1] && pl[b])
            pl[b][n[b]++] = (v - s->te.v[X_VRAD][t]) / err;
}

/* One row of the pull table: n, median, width, rms of |pull| < 5, the
 * fraction beyond 5. */
static double pull_row(const double *pl, size_t n)
{
    double ss = 0, *a = malloc((n ? n : 1) * sizeof *a);
    size_t k = 0, out = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(pl[i]) < 5)
            ss += pl[i] * pl[i], k++;
        else
            out++;
    }
    double w = rwidth(pl, n), m = NAN;
    if (a) {
        memcpy(a, pl, n * sizeof *a);
        m = med(a, n);
    }
    free(a);
    printf(" %6zu %8.3f %8.3f %8.3f %8.4f", n, m, w,
           k ? sqrt(ss / k) : NAN, n ? (double)out / n : NAN);
    return w;
}

/* pl[NSNR] = all of pl[0..NSNR-1] (room for them: one per exposure). */
static void pool(double **pl, size_t *n)
{
    n[NSNR] = 0;
    for (int b = 0; b < NSNR && pl[NSNR]; b++)
        if (pl[b]) {
            memcpy(pl[NSNR] + n[NSNR], pl[b], n[b] * sizeof(double));
            n[NSNR] += n[b];
        }
}

/* Per-exposure VRAD pulls of the single fits (RVTAB rows matched to
 * their exposures by the FIBERMAP's TARGETID and EXPID) into pl, n. */
static int single_pulls(const score *s, char *const *single, int nsingle,
                        double **pl, size_t *n, ind_err *e)
{
    static const char *const cols[] = {"VRAD", "VRAD_ERR"};
    int rc = 0;
    for (int f = 0; f < nsingle && !rc; f++) {
        tab sr, sf;
        rc = tab_read(single[f], "RVTAB", "TARGETID", NULL, cols, 2, &sr, e);
        if (!rc)
            rc = tab_read(single[f], "FIBERMAP", "TARGETID", "EXPID", NULL,
                          0, &sf, e);
        for (long r = 0; !rc && r < sr.n && r < sf.n; r++)
            pull_add(s, sf.k1[r], sf.k2[r], sr.v[0][r], sr.v[1][r], pl, n);
        tab_free(&sr), tab_free(&sf);
    }
    return rc;
}

/* Per-exposure VRAD pulls of the joint fit (RVEPOCH) and, alongside, of
 * the single fits of the same exposures (ps, ns). */
static void pulls(score *s, double **ps, size_t *ns,
                  const ind_epoch_checks *ck)
{
    size_t cap = (size_t)s->je.n + 1, n[NSNR + 1] = {0};
    double *pl[NSNR + 1];
    for (int b = 0; b <= NSNR; b++)
        pl[b] = malloc(cap * sizeof(double));
    for (long r = 0; r < s->je.n; r++)
        pull_add(s, s->je.k1[r], s->je.k2[r], s->je.v[E_VRAD][r],
                 s->je.v[E_VERR][r], pl, n);
    pool(pl, n), pool(ps, ns);
    printf("\nper-exposure VRAD pulls against EXPTRUTH: joint (RVEPOCH) | "
           "single fits of the same exposures\n");
    printf("%-6s %6s %8s %8s %8s %8s | %6s %8s %8s %8s %8s\n", "S/N", "n",
           "median", "width", "rms<5", ">5sig", "n", "median", "width",
           "rms<5", ">5sig");
    for (int b = 0; b <= NSNR; b++) {
        printf("%-6s", b < NSNR ? snr_name[b] : "all");
        double w = pull_row(pl[b], n[b]);
        printf(" |");
        pull_row(ps[b], ns[b]);
        printf("\n");
        if (ck && n[b] >= ck->pull_min_n &&
            !(w >= ck->pull_lo && w <= ck->pull_hi)) {
            printf("CHECK FAILED: pull width %.3f in bin %s not in "
                   "[%g, %g]\n", w, b < NSNR ? snr_name[b] : "all",
                   ck->pull_lo, ck->pull_hi);
            s->fail = 1;
        }
        free(pl[b]);
    }
}

/* The median exposure S/N and VRAD_ERR of star tid (truth, RVEPOCH). */
static void star_exposures(const score *s, long long tid, double *snr,
                           double *verr)
{
    double a[256], b[256];
    size_t na = 0, nb = 0;
    for (long r = 0; r < s->te.n && na < 256; r++)
        if (s->te.k1[r] == tid)
            a[na++] = s->te.v[X_SNR][r];
    for (long r = 0; r < s->je.n && nb < 256; r++)
        if (s->je.k1[r] == tid)
            b[nb++] = s->je.v[E_VERR][r];
    *snr = med(a, na);
    *verr = med(b, nb);
}

static void binaries(score *s, const ind_epoch_checks *ck)
{
    size_t n[NKB] = {0}, hit[NKB] = {0};
    for (long r = 0; r < s->jt.n; r++) {
        long t = tab_find(&s->tr, s->jt.k1[r], 0);
        if (t < 0 || s->tr.v[T_BIN][t] != 1 || s->jt.v[J_NEP][r] < 2)
            continue;
        double snr, verr;
        star_exposures(s, s->jt.k1[r], &snr, &verr);
        double x = s->tr.v[T_K1][t] / verr;
        for (int b = 0; b < NKB; b++)
            if (x >= kb_edge[b] && x < kb_edge[b + 1]) {
                n[b]++;
                hit[b] += s->jt.v[J_P][r] < FAP;
            }
    }
    printf("\nbinaries flagged (VRAD_PVALUE < %g) against K1 / median "
           "VRAD_ERR\n", FAP);
    printf("%-10s %6s %8s %8s\n", "K1/sigma", "n", "flagged", "fraction");
    size_t nk = 0, hk = 0;
    for (int b = 0; b < NKB; b++) {
        char lab[32];
        snprintf(lab, sizeof lab, isinf(kb_edge[b + 1]) ? ">=%g" : "%g-%g",
                 kb_edge[b], kb_edge[b + 1]);
        printf("%-10s %6zu %8zu %8.3f\n", lab, n[b], hit[b],
               n[b] ? (double)hit[b] / n[b] : NAN);
        if (ck && kb_edge[b] >= ck->complete_k)
            nk += n[b], hk += hit[b];
    }
    if (ck && ck->complete_min > 0 && nk &&
        (double)hk / nk < ck->complete_min) {
        printf("CHECK FAILED: completeness %.3f at K1/sigma >= %g below "
               "%g\n", (double)hk / nk, ck->complete_k, ck->complete_min);
        s->fail = 1;
    }
}

/* The two-velocity test ([fit] sb2 = 1; RVEPOCH SB2_DCHISQ): per exposure,
 * the median Delta chi^2 and the fraction above 100 (RVS_WARN SB2), for
 * the exposures of single-lined stars (constant or SB1) by S/N and of
 * double-lined ones by |VRAD2 - VRAD|. */
#define NSEP 5
static void sb2(const score *s)
{
    static const double sep_edge[NSEP + 1] = {0, 25, 50, 100, 200, INFINITY};
    size_t cap = (size_t)s->je.n + 1, n[NSNR + NSEP] = {0},
           hit[NSNR + NSEP] = {0};
    double *d[NSNR + NSEP];
    int any = 0;
    for (int b = 0; b < NSNR + NSEP; b++)
        d[b] = malloc(cap * sizeof(double));
    for (long r = 0; r < s->je.n; r++) {
        long x = tab_find(&s->te, s->je.k1[r], s->je.k2[r]);
        long t = tab_find(&s->tr, s->je.k1[r], 0);
        double q = s->je.v[E_SB2][r];
        if (x < 0 || t < 0 || !isfinite(q))
            continue;
        any = 1;
        double key = s->tr.v[T_SB2][t] == 1
                         ? fabs(s->te.v[X_VRAD2][x] - s->te.v[X_VRAD][x])
                         : s->te.v[X_SNR][x];
        const double *edge = s->tr.v[T_SB2][t] == 1 ? sep_edge : snr_edge;
        int off = s->tr.v[T_SB2][t] == 1 ? NSNR : 0,
            nb = s->tr.v[T_SB2][t] == 1 ? NSEP : NSNR;
        for (int b = 0; b < nb; b++)
            if (key >= edge[b] && key < edge[b + 1] && d[off + b]) {
                d[off + b][n[off + b]++] = q;
                hit[off + b] += q > 100;
            }
    }
    if (any) {
        printf("\ntwo-velocity test: SB2_DCHISQ per exposure (median, "
               "fraction > 100)\n");
        for (int b = 0; b < NSNR + NSEP; b++) {
            char lab[48];
            if (b < NSNR)
                snprintf(lab, sizeof lab, "single-lined, S/N %s",
                         snr_name[b]);
            else
                snprintf(lab, sizeof lab, "SB2, |dv| %g-%g km/s",
                         sep_edge[b - NSNR], sep_edge[b - NSNR + 1]);
            printf("%-30s %6zu %10.4g %8.3f\n", lab, n[b],
                   n[b] ? med(d[b], n[b]) : NAN,
                   n[b] ? (double)hit[b] / n[b] : NAN);
        }
    }
    for (int b = 0; b < NSNR + NSEP; b++)
        free(d[b]);
}

/* The shared parameters the joint fit is scored on, bit p in checks. */
static const char *const shared_names[] = {"TEFF", "LOGG", "FEH"};

int ind_joint_mask(const char *list)
{
    if (!list)
        return 7;
    int m = 0;
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, ",");
        int hit = 0;
        for (int p = 0; p < 3; p++)
            if (n == strlen(shared_names[p]) &&
                !strncmp(s, shared_names[p], n))
                m |= 1 << p, hit = 1;
        if (!hit)
            return 0;
        s += n + (s[n] == ',');
    }
    return m;
}

/* Scatter of the joint parameters (one per star) against the single fits
 * of the same stars' exposures (one per exposure).  With single fits, only
 * the stars they include count (the single fits may cover some files). */
static int shared(score *s, char *const *single, int nsingle,
                  const ind_epoch_checks *ck, ind_err *e)
{
    const char *const *pn = shared_names;
    size_t cap = (size_t)(s->jt.n + s->je.n + 1);
    double *dj[3][NSNR + 1], *ds[3][NSNR + 1];
    size_t nj[NSNR + 1] = {0}, ns[NSNR + 1] = {0};
    for (int p = 0; p < 3; p++)
        for (int b = 0; b <= NSNR; b++)
            dj[p][b] = malloc(cap * sizeof(double)),
            ds[p][b] = malloc(cap * sizeof(double));
    char *seen = calloc((size_t)s->jt.n + 1, 1);
    int rc = seen ? 0 : ind_fail(e, "score-epochs: out of memory");
    for (int f = 0; f < nsingle && !rc; f++) {
        tab sr, sf;
        rc = tab_read(single[f], "RVTAB", "TARGETID", NULL, shared_names, 3,
                      &sr, e);
        if (!rc)
            rc = tab_read(single[f], "FIBERMAP", "TARGETID", "EXPID", NULL,
                          0, &sf, e);
        for (long r = 0; !rc && r < sr.n && r < sf.n; r++) {
            long t = tab_find(&s->tr, sr.k1[r], 0),
                 j = tab_find(&s->jt, sr.k1[r], 0);
            if (t < 0 || j < 0)
                continue;
            seen[j] = 1;
            double snr, verr;
            star_exposures(s, sr.k1[r], &snr, &verr);
            for (int b = 0; b < NSNR; b++)
                if (snr >= snr_edge[b] && snr < snr_edge[b + 1]) {
                    for (int p = 0; p < 3; p++)
                        ds[p][b][ns[b]] = sr.v[p][r] - s->tr.v[p][t],
                        ds[p][NSNR][ns[NSNR]] = ds[p][b][ns[b]];
                    ns[b]++, ns[NSNR]++;
                }
        }
        tab_free(&sr), tab_free(&sf);
    }
    for (long r = 0; !rc && r < s->jt.n; r++) {
        long t = tab_find(&s->tr, s->jt.k1[r], 0);
        if (t < 0 || (nsingle && !seen[r]))
            continue;
        double snr, verr;
        star_exposures(s, s->jt.k1[r], &snr, &verr);
        for (int b = 0; b < NSNR; b++)
            if (snr >= snr_edge[b] && snr < snr_edge[b + 1]) {
                for (int p = 0; p < 3; p++)
                    dj[p][b][nj[b]] = s->jt.v[J_TEFF + p][r] - s->tr.v[p][t],
                    dj[p][NSNR][nj[NSNR]] = dj[p][b][nj[b]];
                nj[b]++, nj[NSNR]++;
            }
    }
    printf("\nshared parameters: robust scatter about the truth, joint (one "
           "per star) / single (one per exposure), by the star's median "
           "exposure S/N\n");
    printf("%-6s %6s %6s", "S/N", "stars", "exps");
    for (int p = 0; p < 3; p++)
        printf(" %10s %10s", pn[p], "single");
    printf("\n");
    for (int b = 0; !rc && b <= NSNR; b++) {
        printf("%-6s %6zu %6zu", b < NSNR ? snr_name[b] : "all", nj[b],
               ns[b]);
        for (int p = 0; p < 3; p++) {
            double wj = rwidth(dj[p][b], nj[b]), ws = rwidth(ds[p][b], ns[b]);
            printf(" %10.4g %10.4g", wj, ws);
            if (ck && (ck->joint_better >> p & 1) && b == NSNR && ns[b] &&
                !(wj < ws)) {
                printf("\nCHECK FAILED: joint %s scatter %.4g not below the "
                       "single fits' %.4g\n", pn[p], wj, ws);
                s->fail = 1;
            }
        }
        printf("\n");
    }
    for (int p = 0; p < 3; p++)
        for (int b = 0; b <= NSNR; b++)
            free(dj[p][b]), free(ds[p][b]);
    free(seen);
    return rc;
}

/* The OBJKEY column of HDU ext (n rows of at most 47 characters) into
 * keys[n * 48]; 0 when read. */
static int objkeys(fitsfile *fp, const char *ext, long n, char *keys)
{
    int st = 0, col = 0;
    char **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    if (!p)
        return -1;
    for (long r = 0; r < n; r++)
        p[r] = keys + 48 * r;
    fits_movnam_hdu(fp, BINARY_TBL, (char *)ext, 0, &st);
    fits_get_colnum(fp, CASEINSEN, "OBJKEY", &col, &st);
    if (n)
        fits_read_col(fp, TSTRING, col, 1, 1, n, NULL, p, NULL, &st);
    free(p);
    fits_clear_errmsg();
    return st ? -1 : 0;
}

/* RVEPOCH's TARGETID is the object's (as RVTAB), matched by OBJKEY: an
 * instrument whose exposures carry identifiers of their own (LAMOST: the
 * OBSID of each file) may write those there.  Left as read when the file
 * has no OBJKEY columns. */
static void epochs_to_objects(const char *rvtab, const tab *jt, tab *je)
{
    fitsfile *fp = NULL;
    int st = 0;
    char *kt = malloc((size_t)(jt->n + 1) * 48);
    char *ke = malloc((size_t)(je->n + 1) * 48);
    fits_open_table(&fp, rvtab, READONLY, &st);
    if (!st && kt && ke && !objkeys(fp, "RVTAB", jt->n, kt) &&
        !objkeys(fp, "RVEPOCH", je->n, ke))
        for (long r = 0, t = 0; r < je->n; r++) {
            /* rows of one object are consecutive, in RVTAB's order */
            for (long q = 0; q < jt->n && strcmp(kt + 48 * t, ke + 48 * r);
                 q++)
                t = (t + 1) % jt->n;
            if (!strcmp(kt + 48 * t, ke + 48 * r))
                je->k1[r] = jt->k1[t];
        }
    if (fp)
        fits_close_file(fp, &(int){0});
    fits_clear_errmsg();
    free(kt), free(ke);
}

int ind_score_epochs(const char *rvtab, const char *truth,
                     char *const *single, int nsingle,
                     const ind_epoch_checks *ck, ind_err *e)
{
    static const char *const jc[] = {"NEPOCH", "VRAD_PVALUE", "TEFF", "LOGG",
                                     "FEH"};
    static const char *const ec[] = {"VRAD", "VRAD_ERR", "SB2_DCHISQ"};
    static const char *const tc[] = {"TEFF", "LOGG", "FEH", "SNR", "NEXP",
                                     "BINARY", "K1", "SB2", "LRATIO"};
    static const char *const xc[] = {"VRAD", "SNR", "VRAD2"};
    score s;
    memset(&s, 0, sizeof s);
    int rc = tab_read(rvtab, "RVTAB", "TARGETID", NULL, jc, 5, &s.jt, e);
    if (!rc)
        rc = tab_read(rvtab, "RVEPOCH", "TARGETID", "EXPID", ec, 3, &s.je, e);
    if (!rc)
        epochs_to_objects(rvtab, &s.jt, &s.je);
    if (!rc)
        rc = tab_read(truth, "TRUTH", "TARGETID", NULL, tc, 9, &s.tr, e);
    if (!rc)
        rc = tab_read(truth, "EXPTRUTH", "TARGETID", "EXPID", xc, 3, &s.te,
                      e);
    double *ps[NSNR + 1];
    size_t ns[NSNR + 1] = {0};
    for (int b = 0; b <= NSNR; b++)
        ps[b] = malloc((size_t)(s.te.n + 1) * sizeof(double));
    if (!rc)
        rc = single_pulls(&s, single, nsingle, ps, ns, e);
    if (!rc) {
        constancy(&s, ck);
        pulls(&s, ps, ns, ck);
        rc = shared(&s, single, nsingle, ck, e);
    }
    for (int b = 0; b <= NSNR; b++)
        free(ps[b]);
    if (!rc) {
        binaries(&s, ck);
        sb2(&s);
    }
    tab_free(&s.jt), tab_free(&s.je), tab_free(&s.tr), tab_free(&s.te);
    return rc ? -1 : s.fail;
}
