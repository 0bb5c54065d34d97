/* Checks of `rvfit-indep bound`: the marginalised information against the
 * inverse of the full matrix (nuisance parameters included) and against
 * the scatter of least-squares estimates over noise draws; the continuum
 * bases' closed forms; and on a coadd the generator writes here, central
 * differences that have converged (halving every step moves no bound by
 * more than 1e-3) and a bound that falls as 1/(S/N). */
#include "bound.h"
#include "util.h"

#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what, double got, double want)
{
    printf("%s %-58s got %.8g want %.8g\n", ok ? "ok  " : "FAIL", what, got,
           want);
    failures += !ok;
}

/* Gauss-Jordan inverse with partial pivoting of the n x n a (n <= 16). */
static int invert(int n, const double *a, double *inv)
{
    double m[16][32];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 2 * n; j++)
            m[i][j] = j < n ? a[i * n + j] : (j - n == i);
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(m[r][c]) > fabs(m[p][c]))
                p = r;
        if (m[p][c] == 0.0)
            return -1;
        for (int j = 0; j < 2 * n; j++) {
            double t = m[c][j];
            m[c][j] = m[p][j];
            m[p][j] = t;
        }
        for (int r = 0; r < n; r++) {
            double f = m[r][c] / m[c][c];
            if (r != c)
                for (int j = 0; j < 2 * n; j++)
                    m[r][j] -= f * m[c][j];
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            inv[i * n + j] = m[i][n + j] / m[i][i];
    return 0;
}

/* A made-up problem: n pixels, np parameters, nb nuisance columns. */
enum { NPX = 300, NP = 3, NB = 4 };
static void problem(double *d, double *c, double *w)
{
    ind_rng r;
    ind_rng_seed(&r, 7, 0, 0);
    for (int i = 0; i < NPX; i++) {
        double x = -1.0 + 2.0 * i / (NPX - 1);
        w[i] = i % 17 == 3 ? 0.0 : 0.5 + ind_rng_uniform(&r);
        for (int p = 0; p < NP; p++)
            d[p * NPX + i] = sin((p + 1) * 3.1 * x) + 0.3 * ind_rng_normal(&r);
        double bb[NB];
        ind_basis(IND_BASIS_LEGENDRE, NB, x, bb);
        for (int j = 0; j < NB; j++)
            c[j * NPX + i] = bb[j] * (1.0 + 0.2 * x);
    }
}

static void test_marginal(void)
{
    static double d[NP * NPX], c[NB * NPX], w[NPX];
    problem(d, c, w);
    /* the full information of (theta, nuisance) and its inverse */
    int n = NP + NB;
    double full[(NP + NB) * (NP + NB)] = {0}, fi[(NP + NB) * (NP + NB)];
    for (int i = 0; i < NPX; i++)
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                double xa = a < NP ? d[a * NPX + i] : c[(a - NP) * NPX + i];
                double xb = b < NP ? d[b * NPX + i] : c[(b - NP) * NPX + i];
                full[a * n + b] += w[i] * xa * xb;
            }
    double info[NP * NP] = {0}, cov[NP * NP];
    int rc = ind_info_marginal(NPX, NP, d, NB, c, w, info) ||
             ind_info_invert(NP, info, cov) || invert(n, full, fi);
    check(rc == 0, "marginal information computed", rc, 0);
    double worst = 0.0;
    for (int p = 0; p < NP; p++)
        for (int q = 0; q < NP; q++)
            worst = fmax(worst, fabs(cov[p * NP + q] - fi[p * n + q]) /
                                    sqrt(fi[p * n + p] * fi[q * n + q]));
    check(worst < 1e-10, "Schur complement = block of the full inverse",
          worst, 0);

    /* least squares over noise draws: the estimates scatter as cov */
    enum { NDRAW = 4000 };
    double s2[NP] = {0};
    ind_rng r;
    ind_rng_seed(&r, 11, 0, 0);
    for (int k = 0; k < NDRAW; k++) {
        double rhs[NP + NB] = {0}, est[NP + NB];
        for (int i = 0; i < NPX; i++) {
            if (!(w[i] > 0))
                continue;
            double y = ind_rng_normal(&r) / sqrt(w[i]);
            for (int a = 0; a < n; a++)
                rhs[a] += w[i] * y *
                          (a < NP ? d[a * NPX + i] : c[(a - NP) * NPX + i]);
        }
        for (int a = 0; a < n; a++) {
            est[a] = 0.0;
            for (int b = 0; b < n; b++)
                est[a] += fi[a * n + b] * rhs[b];
        }
        for (int p = 0; p < NP; p++)
            s2[p] += est[p] * est[p] / NDRAW;
    }
    for (int p = 0; p < NP; p++) {
        char what[80];
        double ratio = sqrt(s2[p] / cov[p * NP + p]);
        snprintf(what, sizeof what, "parameter %d: scatter / bound over %d "
                 "draws", p, NDRAW);
        check(fabs(ratio - 1.0) < 0.04, what, ratio, 1.0);
    }
    /* a nuisance column equal to a derivative leaves no information */
    memcpy(c, d, NPX * sizeof *c);
    memset(info, 0, sizeof info);
    ind_info_marginal(NPX, NP, d, NB, c, w, info);
    check(fabs(info[0]) < 1e-9 * full[0], "degenerate nuisance: info 0",
          info[0], 0);
}

static void test_basis(void)
{
    double b[10];
    ind_basis(IND_BASIS_LEGENDRE, 5, 0.5, b);
    /* P2(1/2) = -1/8, P3 = -7/16, P4 = -37/128 */
    check(fabs(b[2] + 0.125) + fabs(b[3] + 7.0 / 16) +
          fabs(b[4] + 37.0 / 128) < 1e-15, "Legendre P2..P4 at 1/2",
          b[4], -37.0 / 128);
    ind_basis(IND_BASIS_GAUSS, 10, -1.0 + 2.0 / 6, b);
    /* 7 Gaussians of sigma 1/7 at -1 + 2k/6: the second peaks here, the
     * first is exp(-0.5 (7/3)^2) */
    check(fabs(b[4] - 1.0) + fabs(b[3] - exp(-0.5 * 49.0 / 9)) < 1e-15 &&
          b[2] == b[1] * b[1], "Gaussian basis centres and widths", b[3],
          exp(-0.5 * 49.0 / 9));
    ind_basis(IND_BASIS_GAUSS, 10, 1.0, b);
    check(b[3] == 0.0, "Gaussian 6 sigma away is exactly 0", b[3], 0);
}

static int read_bounds(const char *path, double *v, int n)
{
    fitsfile *fp = NULL;
    int st = 0;
    static const char *col[IND_NPAR] = {"VRAD", "TEFF", "LOGG", "FEH",
                                        "ALPHAFE"};
    fits_open_table(&fp, path, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "BOUND", 0, &st);
    for (int p = 0; p < IND_NPAR; p++) {
        int cn = 0;
        fits_get_colnum(fp, CASEINSEN, (char *)col[p], &cn, &st);
        fits_read_col(fp, TDOUBLE, cn, 1, 1, n, NULL, v + p * n, NULL, &st);
    }
    fits_close_file(fp, &st);
    return st;
}

/* A copy of the coadd src whose IVAR are 4 times larger. */
static int ivar_times4(const char *src, const char *dst)
{
    fitsfile *in = NULL, *out = NULL;
    int st = 0;
    char name[1200];
    snprintf(name, sizeof name, "!%s", dst);
    fits_open_file(&in, src, READONLY, &st);
    fits_create_file(&out, name, &st);
    fits_copy_file(in, out, 1, 1, 1, &st);
    fits_close_file(in, &st);
    static const char *arm[3] = {"B_IVAR", "R_IVAR", "Z_IVAR"};
    for (int a = 0; a < 3 && !st; a++) {
        long ax[2] = {0, 0};
        int nd = 0;
        fits_movnam_hdu(out, IMAGE_HDU, (char *)arm[a], 0, &st);
        fits_get_img_dim(out, &nd, &st);
        fits_get_img_size(out, 2, ax, &st);
        size_t n = (size_t)ax[0] * (size_t)ax[1];
        float *v = malloc(n * sizeof *v);
        if (!v)
            st = MEMORY_ALLOCATION;
        fits_read_img(out, TFLOAT, 1, (LONGLONG)n, NULL, v, NULL, &st);
        for (size_t i = 0; i < n && !st; i++)
            v[i] *= 4.0f;
        fits_write_img(out, TFLOAT, 1, (LONGLONG)n, v, &st);
        free(v);
    }
    fits_close_file(out, &st);
    return st;
}

/* Two stars at S/N 20 and the same two at 80 (the star draws do not
 * depend on the S/N range's ends: only the S/N itself changes); the first
 * coadd again with 4 times its IVAR; the first with a flux scale as the
 * only continuum. */
static void test_coadd(const char *dir)
{
    const ind_preset *ps = ind_preset_find("small");
    char co[3][1100], tr[2][1100], bd[5][1100];
    double snr[2] = {20.0, 80.0};
    ind_err e = {{0}};
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        snprintf(co[k], sizeof co[k], "%s/bound_coadd%d.fits", dir, k);
        snprintf(tr[k], sizeof tr[k], "%s/bound_truth%d.fits", dir, k);
        ind_coadd_args a = {co[k], tr[k], 2, 5, 1, ps,
                            {snr[k], snr[k], 500, 10, 0}, 2};
        rc = ind_coadd_write(&a, &e);
    }
    snprintf(co[2], sizeof co[2], "%s/bound_coadd2.fits", dir);
    if (!rc && ivar_times4(co[0], co[2]))
        rc = ind_fail(&e, "%s: cannot write", co[2]);
    /* steps 1 and 0.5 at S/N 20, S/N 80, IVAR x 4, npoly 1 */
    static const int src[5] = {0, 0, 1, 2, 0};
    for (int k = 0; k < 5 && !rc; k++) {
        int t = src[k] == 1;
        snprintf(bd[k], sizeof bd[k], "%s/bound%d.fits", dir, k);
        ind_bound_args b = {co[src[k]], tr[t], bd[k], 0, 0, k == 4 ? 1 : 10,
                            IND_BASIS_GAUSS, k == 1 ? 0.5 : 1.0,
                            {snr[t], snr[t], 500, 10, 0}, 2};
        rc = ind_bound_write(&b, &e);
    }
    check(rc == 0, e.msg[0] ? e.msg : "coadds and bounds written", rc, 0);
    if (rc)
        return;
    double v[5][2 * IND_NPAR];
    for (int k = 0; k < 5; k++)
        rc |= read_bounds(bd[k], v[k], 2);
    check(rc == 0, "bounds read back", rc, 0);
    double conv = 0.0, lo = 1e9, hi = 0.0, half = 0.0, shape = 1e9,
           mono = 1e9;
    for (int i = 0; i < 2 * IND_NPAR; i++) {
        conv = fmax(conv, fabs(v[1][i] / v[0][i] - 1.0));
        double s = v[0][i] / v[2][i]; /* 4x the S/N */
        lo = fmin(lo, s);
        hi = fmax(hi, s);
        half = fmax(half, fabs(v[3][i] / v[0][i] - 0.5));
        mono = fmin(mono, v[0][i] / v[4][i]);
        if (i / 2 == 1) /* TEFF (v[p * 2 + star]) */
            shape = fmin(shape, v[0][i] / v[4][i]);
    }
    check(conv < 1e-3, "half the difference steps: largest change", conv, 0);
    check(half < 1e-6, "IVAR x 4: bound / 2 (largest deviation)", half, 0);
    /* a little more than 4: at the longer exposure sky and read noise
     * weigh less against the star's own, so its lines count more */
    check(lo > 3.9 && hi < 4.6, "S/N x 4: bound / 4 (smallest ratio)", lo, 4);
    check(lo > 3.9 && hi < 4.6, "S/N x 4: bound / 4 (largest ratio)", hi, 4);
    /* more nuisance columns never add information; and the continuum's
     * shape trades against Teff's colour, so marginalising it must
     * matter (these stars: 6-8x) */
    check(mono > 1.0 - 1e-9, "npoly 10 / npoly 1: every bound >= (smallest)",
          mono, 1);
    check(shape > 1.5, "npoly 10 / npoly 1: TEFF bound (smallest ratio)",
          shape, 1.5);
    /* a coadd the seeds do not describe is refused */
    ind_bound_args b = {co[0], tr[0], bd[0], 0, 0, 10, IND_BASIS_GAUSS, 1.0,
                        {3, 60, 500, 10, 0}, 1};
    rc = ind_bound_write(&b, &e);
    check(rc != 0 && strstr(e.msg, "--snr-min"), "other S/N range refused",
          rc, -1);
    for (int k = 0; k < 3; k++)
        remove(co[k]);
    for (int k = 0; k < 2; k++)
        remove(tr[k]);
    for (int k = 0; k < 5; k++)
        remove(bd[k]);
}

int main(void)
{
    test_marginal();
    test_basis();
    const char *tmp = getenv("RVFIT_TEST_TMP");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/indep_bound", tmp ? tmp : "/tmp");
    ind_err e = {{0}};
    if (ind_mkdir(tmp ? tmp : "/tmp", &e) || ind_mkdir(dir, &e)) {
        printf("FAIL %s\n", e.msg);
        return 1;
    }
    test_coadd(dir);
    rmdir(dir);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
