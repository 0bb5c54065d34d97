/* test_lamost_mrs_fit.c — LAMOST MRS med- files of the independent
 * generator (rvfit-indep mrs, seed 11: 10 stars on 1-3 nights of 2-3
 * exposures, S/N 8-40 per exposure, 40 % single-lined binaries with K1
 * 15-40 km/s and periods of 2-30 d) fitted by rvfit against the
 * generator's truth, with the library of the indep_mrs_lib fixture:
 *  - joint fit of the exposures (mrs = exposures, --epochs joint): one
 *    object per designation holding every exposure of its nights (NEPOCH
 *    = the truth's count), each RVEPOCH row one true exposure (OBJKEY,
 *    EXPID = LMJM, MJD), per-exposure VRAD pulls of robust width
 *    (IQR/1.349) in [0.7, 1.4] (measured 1.03 over 59 exposures, median
 *    -0.38) and none beyond 5; constant stars' VRAD_PVALUE above 1e-3 (7
 *    stars, smallest measured 0.09) and every binary whose true
 *    velocities scatter by chi^2 > 100 about their mean, at the fitted
 *    errors, flagged below 1e-4 (2 such, measured 1e-50 and 0; the third
 *    binary, chi^2 91, has 5e-13); at least one of each kind;
 *  - single fits of the coadds (mrs = coadd): one row per file, VRAD of
 *    the constant stars within 5 sigma of the truth (the S/N^2-weighted
 *    mean of the night's exposures; 15 files, largest 1.81 sigma).
 * The numbers are deterministic (seeded data, cpu backend). */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char dir[4096], lib[4200];

typedef struct {
    long n;
    char *key, *file;            /* 48 / 80 characters each             */
    double *v[6];
} cols;

static void cols_free(cols *c)
{
    free(c->key), free(c->file);
    for (int k = 0; k < 6; k++)
        free(c->v[k]);
}

/* String column skey (width 48) and numeric columns num[0..nn) of HDU
 * ext; 0 when all were read, with equal lengths. */
static int cols_read(const char *path, const char *ext, const char *skey,
                     const char *const *num, int nn, cols *c)
{
    long m = 0;
    memset(c, 0, sizeof *c);
    c->key = tu_read_strcol(path, ext, skey, 48, &c->n);
    int bad = !c->key;
    for (int k = 0; k < nn; k++) {
        c->v[k] = tu_read_col(path, ext, num[k], &m);
        bad |= !c->v[k] || m != c->n;
    }
    CHECK_MSG(!bad, "%s: HDU %s", path, ext);
    return bad;
}

static long find(const cols *c, const char *key, double id, int k)
{
    for (long r = 0; r < c->n; r++)
        if (!strcmp(c->key + 48 * r, key) && (k < 0 || c->v[k][r] == id))
            return r;
    return -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Pulls of every exposure; returns 0 when all matched. */
static void check_exposures(const cols *ep, const cols *xt)
{
    double *pull = malloc((size_t)(ep->n + 1) * sizeof *pull);
    long n = 0;
    for (long r = 0; r < ep->n; r++) {
        long t = find(xt, ep->key + 48 * r, ep->v[0][r], 0);
        CHECK_MSG(t >= 0, "RVEPOCH row %ld (%s, EXPID %.0f) is no exposure "
                  "of the truth", r, ep->key + 48 * r, ep->v[0][r]);
        if (t < 0)
            continue;
        CHECK_NEAR(ep->v[1][r], xt->v[1][t], 1e-9); /* MJD */
        pull[n] = (ep->v[2][r] - xt->v[2][t]) / ep->v[3][r];
        CHECK_MSG(fabs(pull[n]) < 5, "%s, EXPID %.0f: VRAD %.3f +- %.3f, "
                  "true %.3f", ep->key + 48 * r, ep->v[0][r], ep->v[2][r],
                  ep->v[3][r], xt->v[2][t]);
        n++;
    }
    CHECK(n == xt->n && n == ep->n);
    double w = tu_rstd(pull, n);
    qsort(pull, (size_t)n, sizeof *pull, cmp_d);
    printf("MRS joint: %ld exposures, VRAD pull median %.3f, robust width "
           "%.3f\n", n, n ? pull[n / 2] : NAN, w);
    CHECK_MSG(w >= 0.7 && w <= 1.4, "pull width %.3f", w);
    free(pull);
}

/* chi^2 of star key's true exposure velocities about their weighted mean,
 * at the fitted errors. */
static double true_chi2(const cols *ep, const cols *xt, const char *key)
{
    double sw = 0, swv = 0, s = 0;
    for (int pass = 0; pass < 2; pass++)
        for (long r = 0; r < ep->n; r++) {
            long t = find(xt, key, ep->v[0][r], 0);
            if (strcmp(ep->key + 48 * r, key) || t < 0)
                continue;
            double w = 1.0 / (ep->v[3][r] * ep->v[3][r]);
            double d = xt->v[2][t] - (pass ? swv / sw : 0);
            if (pass)
                s += w * d * d;
            else
                sw += w, swv += w * xt->v[2][t];
        }
    return s;
}

static void check_objects(const cols *ob, const cols *ep, const cols *st,
                          const cols *xt)
{
    int nconst = 0, nclear = 0;
    CHECK_MSG(ob->n == st->n, "%ld objects, %ld stars", ob->n, st->n);
    for (long r = 0; r < ob->n; r++) {
        const char *key = ob->key + 48 * r;
        long s = find(st, key, 0, -1);
        CHECK_MSG(s >= 0, "object %s is no star of the truth", key);
        if (s < 0)
            continue;
        CHECK_MSG(ob->v[0][r] == st->v[0][s], "%s: NEPOCH %.0f, %.0f "
                  "exposures", key, ob->v[0][r], st->v[0][s]);
        double p = ob->v[1][r], c2 = true_chi2(ep, xt, key);
        printf("MRS joint: %s %s, %.0f exposures, true chi2 %.1f: "
               "VRAD_PVALUE %.3g\n", key, st->v[1][s] ? "binary" : "constant",
               ob->v[0][r], c2, p);
        if (!st->v[1][s]) {
            nconst++;
            CHECK(p > 1e-3);
        } else if (c2 > 100) {
            nclear++;
            CHECK(p < 1e-4);
        }
    }
    CHECK_MSG(nconst > 0 && nclear > 0, "%d constant stars, %d clear "
              "binaries", nconst, nclear);
}

static void check_joint(const char *truth)
{
    static const char *const on[] = {"NEPOCH", "VRAD_PVALUE"};
    static const char *const en[] = {"EXPID", "MJD", "VRAD", "VRAD_ERR"};
    static const char *const sn[] = {"NEXP", "BINARY"};
    static const char *const xn[] = {"EXPID", "MJD", "VRAD"};
    char *log = NULL, tab[4400];
    if (tu_rvfit(&log, "fit -t %s -i lamost --set instrument.lamost.mrs="
                 "exposures -b cpu -j 2 --no-models --epochs joint -o "
                 "%s/joint %s/m/med-*.fits", lib, dir, dir)) {
        free(log);
        return;
    }
    free(log);
    snprintf(tab, sizeof tab, "%s/joint/rvtab_joint.fits", dir);
    cols ob, ep, st, xt;
    if (!cols_read(tab, "RVTAB", "OBJKEY", on, 2, &ob) &&
        !cols_read(tab, "RVEPOCH", "OBJKEY", en, 4, &ep) &&
        !cols_read(truth, "TRUTH", "DESIG", sn, 2, &st) &&
        !cols_read(truth, "EXPTRUTH", "DESIG", xn, 3, &xt)) {
        check_exposures(&ep, &xt);
        check_objects(&ob, &ep, &st, &xt);
    }
    cols_free(&ob), cols_free(&ep), cols_free(&st), cols_free(&xt);
}

/* The coadds fitted one by one: constant stars' VRAD against the truth. */
static void check_coadds(const char *truth)
{
    static const char *const cn[] = {"VRAD"};
    static const char *const sn[] = {"BINARY"};
    char *log = NULL;
    if (tu_rvfit(&log, "fit -t %s -i lamost -b cpu -j 2 --no-models -o "
                 "%s/coadd %s/m/med-*.fits", lib, dir, dir)) {
        free(log);
        return;
    }
    free(log);
    cols ct, st;
    long nf = 0, n = 0;
    double worst = 0;
    char *file = tu_read_strcol(truth, "COADDTRUTH", "FILE", 80, &nf);
    if (file && !cols_read(truth, "COADDTRUTH", "DESIG", cn, 1, &ct) &&
        !cols_read(truth, "TRUTH", "DESIG", sn, 1, &st)) {
        for (long f = 0; f < nf; f++) {
            long s = find(&st, ct.key + 48 * f, 0, -1);
            if (s < 0 || st.v[0][s])
                continue;
            char out[4500], stem[80];
            snprintf(stem, sizeof stem, "%.*s", (int)strlen(file + 80 * f) - 5,
                     file + 80 * f);
            snprintf(out, sizeof out, "%s/coadd/rvtab_%s.fits", dir, stem);
            long m = 0, m2 = 0;
            double *v = tu_read_col(out, "RVTAB", "VRAD", &m);
            double *e = tu_read_col(out, "RVTAB", "VRAD_ERR", &m2);
            CHECK_MSG(v && e && m == 1, "%s: %ld rows", out, m);
            if (v && e && m == 1) {
                CHECK_MSG(fabs(v[0] - ct.v[0][f]) < 5 * e[0], "%s: VRAD "
                          "%.3f +- %.3f, true %.3f", out, v[0], e[0],
                          ct.v[0][f]);
                worst = fmax(worst, fabs(v[0] - ct.v[0][f]) / e[0]);
                n++;
            }
            free(v), free(e);
        }
    }
    printf("MRS coadds: %ld of constant stars, largest |VRAD - true| / "
           "VRAD_ERR %.2f\n", n, worst);
    CHECK(n > 0);
    free(file);
    cols_free(&ct), cols_free(&st);
}

int main(void)
{
    tu_need_plugin("rvfit_instrument_lamost");
    const char *ind = getenv("RVFIT_INDEP_BIN");
    if (!ind || access(ind, X_OK))
        tu_skip("rvfit-indep not built (%s)", ind ? ind : "unset");
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("lamost_mrs_fit"));
    snprintf(lib, sizeof lib, "%s/indep_mrs_lib/lib",
             tu_env("RVFIT_TEST_TMP"));
    char cmd[8600], truth[4200], *log = NULL;
    snprintf(truth, sizeof truth, "%s/truth.fits", dir);
    snprintf(cmd, sizeof cmd, "'%s' mrs --out '%s/m' --truth '%s' --nstar "
             "10 --seed 11 --nnight-max 3 --nexp-min 2 --nexp-max 3 "
             "--snr-min 8 --snr-max 40 --vmax 200 --binary-frac 0.4 "
             "--k-min 15 --k-max 40 --p-min 2 --p-max 30 --threads 2", ind,
             dir, truth);
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "%s: %s", cmd, log ? log : "");
    free(log);
    if (!rc) {
        check_joint(truth);
        check_coadds(truth);
    }
    return tu_finish("test_lamost_mrs_fit");
}
