/* test_lamost_mrs_mock.c — LAMOST MRS med- files written by the
 * independent generator (rvfit-indep mrs: no rvfit code) read by the
 * lamost plugin and compared with the generator's truth, not with the
 * reader: per exposure the object key (DESIG), OBSID, EXPID (= LMJM) and
 * MJD, the wavelengths against the grid the data were made on (LL0_B,
 * LL0_R, DLL: exact where the file stores float32), the pixels of no
 * weight against the generator's count of masked and dead ones, the flux
 * against the FLUX column as CFITSIO reads it, and the S/N against the
 * table's SNR; per file the coadd (one spectrum, MJD the mean of its
 * exposures'). 3 stars on 1-2 nights of 2-3 exposures. */
#include <fitsio.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/instrument_epochs.h"
#include "rvfit/plugin.h"
#include "testutil.h"

#define MAXX 64

/* The truth of one exposure (EXPTRUTH) or coadd (COADDTRUTH). */
typedef struct {
    char desig[48], file[80];
    long long obsid, lmjm;
    double mjd, ll0[2], dll;
    long nbad[2];
} truth_row;

/* HDU ext of the truth file into t (at most MAXX rows): *n rows. */
static int read_truth(const char *path, const char *ext, truth_row *t,
                      long *n)
{
    static const char *const num[] = {"OBSID", "MJD", "LMJM", "LL0_B",
                                      "LL0_R", "DLL", "NBAD_B", "NBAD_R"};
    int exp = !strcmp(ext, "EXPTRUTH"), nnum = exp ? 8 : 2, bad = 0;
    long m = 0;
    char *ds = tu_read_strcol(path, ext, "DESIG", 48, n);
    char *fn = tu_read_strcol(path, ext, "FILE", 80, &m);
    double *v[8] = {NULL};
    for (int k = 0; k < nnum; k++) {
        v[k] = tu_read_col(path, ext, num[k], &m);
        bad |= !v[k] || m != *n;
    }
    bad |= !ds || !fn || *n > MAXX;
    for (long r = 0; !bad && r < *n; r++) {
        truth_row *q = &t[r];
        memset(q, 0, sizeof *q);
        memcpy(q->desig, ds + 48 * r, sizeof q->desig);
        memcpy(q->file, fn + 80 * r, sizeof q->file);
        q->obsid = (long long)v[0][r], q->mjd = v[1][r];
        if (exp) {
            q->lmjm = (long long)v[2][r], q->ll0[0] = v[3][r];
            q->ll0[1] = v[4][r], q->dll = v[5][r];
            q->nbad[0] = (long)v[6][r], q->nbad[1] = (long)v[7][r];
        }
    }
    free(ds), free(fn);
    for (int k = 0; k < nnum; k++)
        free(v[k]);
    CHECK_MSG(!bad, "%s: HDU %s unreadable", path, ext);
    return bad;
}

static const rvfit_instrument_ops *ops;
static const rvfit_instrument_epochs_ops *eops;
static rvfit_host host;

static void *open_mode(const char *path, int exposures, rvfit_file_info *I)
{
    rvfit_kv kv = {"mrs", "exposures", "t.ini", 1};
    rvfit_err err;
    void *h = NULL;
    int rc = ops->open(&host, &kv, exposures, path, NULL, &h, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc)
        ops->info(h, I);
    return rc ? NULL : h;
}

/* Arm a of spectrum s against exposure truth x. */
static void check_arm(const char *path, const rvfit_batch *b, size_t s,
                      int a, const truth_row *x)
{
    const rvfit_arm_batch *A = &b->arm[a];
    size_t N = A->npix, n = rvfit_arm_npix(A, s);
    const double *w = A->wave + s * N;
    const float *v = A->ivar + s * N, *f = A->flux + s * N;
    char ext[32];
    snprintf(ext, sizeof ext, "%s-%lld", a ? "R" : "B", x->lmjm);
    long nc = 0;
    double *col = tu_read_col(path, ext, "FLUX", &nc);
    CHECK(col && nc == (long)n);
    if (!col || nc != (long)n) {
        free(col);
        return;
    }
    double worst = 0;
    long zero = 0, same = 1;
    for (size_t i = 0; i < n; i++) {
        double want = pow(10.0, x->ll0[a] + x->dll * (double)i);
        worst = fmax(worst, fabs(w[i] / want - 1.0));
        zero += !(v[i] > 0);
        if (v[i] > 0)
            same &= f[i] == (float)col[i];
    }
    CHECK_MSG(worst < 2e-8, "%s %s: wavelengths off by %.3g", path, ext,
              worst);
    CHECK_MSG(zero == x->nbad[a], "%s %s: %ld pixels of no weight, the "
              "generator made %ld", path, ext, zero, x->nbad[a]);
    CHECK_MSG(same, "%s %s: flux differs from the file's", path, ext);
    free(col);
}

/* One file's exposures: epochs and pixels against EXPTRUTH. */
static void check_exposures(const char *path, const truth_row *xs, long nx)
{
    rvfit_file_info I;
    void *h = open_mode(path, 1, &I);
    if (!h)
        return;
    const truth_row *x[MAXX];
    size_t n = 0;
    const char *base = strrchr(path, '/') + 1;
    for (long r = 0; r < nx; r++)
        if (!strcmp(xs[r].file, base))
            x[n++] = &xs[r]; /* the truth lists them in LMJM order */
    CHECK_MSG(I.nselect == n && n > 0, "%s: %zu spectra, truth %zu", path,
              I.nselect, n);
    rvfit_epoch e[MAXX];
    rvfit_err err;
    rvfit_batch b;
    if (I.nselect != n || eops->epochs(h, 0, n, e, &err) ||
        rvfit_batch_alloc(&b, I.narm, I.arm, n, &err)) {
        ops->close(h);
        return;
    }
    for (size_t s = 0; s < n; s++) {
        CHECK(!strcmp(e[s].key, x[s]->desig));
        CHECK(e[s].targetid == x[s]->obsid && e[s].expid == x[s]->lmjm);
        CHECK_MSG(fabs(e[s].mjd - x[s]->mjd) < 1e-9, "%s: MJD %.9f, "
                  "truth %.9f", path, e[s].mjd, x[s]->mjd);
    }
    if (ops->read(h, 0, n, &b, &err) == 0) {
        for (size_t s = 0; s < n; s++) {
            check_arm(path, &b, s, 0, x[s]);
            check_arm(path, &b, s, 1, x[s]);
            CHECK(b.flags[s] == 0);
        }
    } else {
        CHECK_MSG(0, "%s", err.msg);
    }
    rvfit_batch_free(&b);
    ops->close(h);
}

/* One file's coadd against COADDTRUTH row c and the grid of exposure x. */
static void check_coadd(const char *path, const truth_row *c,
                        const truth_row *x)
{
    rvfit_file_info I;
    void *h = open_mode(path, 0, &I);
    if (!h)
        return;
    rvfit_epoch e;
    rvfit_err err;
    rvfit_batch b;
    CHECK(I.nselect == 1 && I.ntotal == 1);
    if (I.nselect == 1 && !eops->epochs(h, 0, 1, &e, &err)) {
        CHECK(!strcmp(e.key, c->desig) && e.expid == c->obsid);
        CHECK_MSG(fabs(e.mjd - c->mjd) < 1e-9, "%s: coadd MJD %.9f, truth "
                  "%.9f", path, e.mjd, c->mjd);
    }
    if (I.nselect == 1 && !rvfit_batch_alloc(&b, I.narm, I.arm, 1, &err)) {
        if (!ops->read(h, 0, 1, &b, &err)) {
            for (int a = 0; a < 2; a++) {
                double worst = 0;
                size_t usable = 0, n = rvfit_arm_npix(&b.arm[a], 0);
                for (size_t i = 0; i < n; i++) {
                    worst = fmax(worst, fabs(b.arm[a].wave[i] /
                                 pow(10.0, x->ll0[a] + x->dll * (double)i) -
                                 1.0));
                    usable += b.arm[a].ivar[i] > 0;
                }
                CHECK_MSG(worst < 2e-8 && usable + 20 > n, "%s coadd arm %d: "
                          "wavelengths off by %.3g, %zu of %zu usable", path,
                          a, worst, usable, n);
            }
        }
        rvfit_batch_free(&b);
    }
    ops->close(h);
}

int main(void)
{
    tu_need_plugin("rvfit_instrument_lamost");
    const char *ind = getenv("RVFIT_INDEP_BIN");
    if (!ind || access(ind, X_OK))
        tu_skip("rvfit-indep not built (%s)", ind ? ind : "unset");
    const char *dir = tu_tmpdir("lamost_mrs_mock");
    char cmd[8192], truth[4200];
    snprintf(truth, sizeof truth, "%s/truth.fits", dir);
    snprintf(cmd, sizeof cmd, "'%s' mrs --out '%s/m' --truth '%s' --nstar 3 "
             "--seed 5 --nnight-max 2 --nexp-min 2 --nexp-max 3 --threads 2",
             ind, dir, truth);
    char *log = NULL;
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "%s: %s", cmd, log ? log : "");
    free(log);
    if (rc)
        return tu_finish("test_lamost_mrs_mock");
    host = tu_host(RVFIT_LOG_WARN);
    ops = tu_plugin_ops("rvfit_instrument_lamost.so");
    eops = tu_epochs_ops("lamost");
    truth_row xs[MAXX], cs[MAXX];
    long nx = 0, nc = 0;
    if (read_truth(truth, "EXPTRUTH", xs, &nx) ||
        read_truth(truth, "COADDTRUTH", cs, &nc))
        return tu_finish("test_lamost_mrs_mock");
    printf("%ld files, %ld exposures\n", nc, nx);
    for (long c = 0; c < nc; c++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/m/%s", dir, cs[c].file);
        check_exposures(path, xs, nx);
        for (long r = 0; r < nx; r++)
            if (!strcmp(xs[r].file, cs[c].file)) {
                check_coadd(path, &cs[c], &xs[r]);
                break;
            }
    }
    return tu_finish("test_lamost_mrs_mock");
}
