/* test_linalg.c — rvfit/linalg.h against an independent long-double LU
 * with partial pivoting: solutions, ln det and inverses of random SPD
 * matrices (badly scaled ones too, which the equilibration must absorb),
 * the pivot thresholds and the failure contracts. */
#include <string.h>

#include "rvfit/linalg.h"
#include "rvfit/numeric.h"
#include "testutil.h"

#define NMAX 12

/* LU with partial pivoting in long double: solves a x = b, returns
 * ln |det a|. */
static long double lu_solve(int n, const double *a, const double *b,
                            long double *x)
{
    long double m[NMAX][NMAX + 1], ld = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            m[i][j] = a[i * n + j];
        m[i][n] = b[i];
    }
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabsl(m[i][k]) > fabsl(m[p][k]))
                p = i;
        for (int j = 0; j <= n; j++) {
            long double t = m[k][j];
            m[k][j] = m[p][j];
            m[p][j] = t;
        }
        ld += logl(fabsl(m[k][k]));
        for (int i = k + 1; i < n; i++) {
            long double f = m[i][k] / m[k][k];
            for (int j = k; j <= n; j++)
                m[i][j] -= f * m[k][j];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        long double s = m[i][n];
        for (int j = i + 1; j < n; j++)
            s -= m[i][j] * x[j];
        x[i] = s / m[i][i];
    }
    return ld;
}

/* A = D (M M^T + 0.1 I) D with D spanning `range` decades; full matrix. */
static void random_spd(int n, double range, rvfit_rng *r, double *a)
{
    double m[NMAX * NMAX], d[NMAX];
    for (int i = 0; i < n * n; i++)
        m[i] = 2.0 * rvfit_rng_uniform(r) - 1.0;
    for (int i = 0; i < n; i++)
        d[i] = pow(10.0, range * (rvfit_rng_uniform(r) - 0.5));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = i == j ? 0.1 : 0.0;
            for (int k = 0; k < n; k++)
                s += m[i * n + k] * m[j * n + k];
            a[i * n + j] = d[i] * s * d[j];
        }
}

static void test_solves(void)
{
    rvfit_rng r;
    rvfit_rng_seed(&r, 2024, 1);
    const int sizes[] = {1, 2, 5, 8, 12};
    for (int t = 0; t < 5; t++) {
        int n = sizes[t];
        double a[NMAX * NMAX], w[NMAX * NMAX], b[NMAX], x[NMAX], y[NMAX];
        long double ref[NMAX];
        random_spd(n, 6.0, &r, a); /* diagonal over 6 decades */
        for (int i = 0; i < n; i++)
            b[i] = rvfit_rng_normal(&r);
        long double ld_ref = lu_solve(n, a, b, ref);
        double worst = 0.0, ld;
        memcpy(w, a, sizeof a);
        CHECK(rvfit_chol_eq_solve(n, w, b, x, &ld) == RVFIT_OK);
        for (int i = 0; i < n; i++)
            worst = fmax(worst, fabs((double)((x[i] - ref[i]) / ref[i])));
        CHECK_MSG(worst < 1e-9, "n=%d: equilibrated solve off by %.3g", n,
                  worst);
        CHECK_NEAR(ld, (double)ld_ref, 1e-9 * fmax(1.0, fabs(ld)));
        /* b^T A^-1 b (the chi-square's profile term), with and without
         * the solution, against b . x of the LU reference */
        long double q_ref = 0;
        for (int i = 0; i < n; i++)
            q_ref += (long double)b[i] * ref[i];
        double q = -1.0, q2 = -1.0, ld2;
        memcpy(w, a, sizeof a);
        CHECK(rvfit_chol_eq_quad(n, w, b, x, &ld2, &q) == RVFIT_OK);
        memcpy(w, a, sizeof a);
        CHECK(rvfit_chol_eq_quad(n, w, b, NULL, &ld2, &q2) == RVFIT_OK);
        CHECK_MSG(fabs(q - (double)q_ref) <= 1e-9 * fabs((double)q_ref) &&
                      q2 == q && ld2 == ld,
                  "n=%d: b^T A^-1 b %.17g, %.17g, LU %.17g", n, q, q2,
                  (double)q_ref);
        /* plain factorisation + the two triangular solves */
        memcpy(w, a, sizeof a);
        CHECK(rvfit_chol(n, w, 0.0) == RVFIT_OK);
        rvfit_chol_forward(n, w, b, y);
        rvfit_chol_backward(n, w, y, y);
        worst = 0.0;
        for (int i = 0; i < n; i++)
            worst = fmax(worst, fabs((double)((y[i] - ref[i]) / ref[i])));
        CHECK_MSG(worst < 1e-7, "n=%d: plain solve off by %.3g", n, worst);
    }
}

static void test_inverse(void)
{
    rvfit_rng r;
    rvfit_rng_seed(&r, 7, 2);
    for (int n = 1; n <= 8; n++) {
        double a[NMAX * NMAX], inv[NMAX * NMAX];
        random_spd(n, 0.0, &r, a);
        memcpy(inv, a, sizeof a);
        CHECK(rvfit_spd_inverse(n, inv) == RVFIT_OK);
        double worst = 0.0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < n; k++)
                    s += a[i * n + k] * inv[k * n + j];
                worst = fmax(worst, fabs(s - (i == j)));
                worst = fmax(worst, fabs(inv[i * n + j] - inv[j * n + i]) /
                                        fabs(inv[i * n + i]));
            }
        CHECK_MSG(worst < 1e-9, "n=%d: A A^-1 - I up to %.3g", n, worst);
    }
}

static void test_failures(void)
{
    /* Equilibrated pivot 1 - c^2 ~ 2e-15: below RVFIT_EQ_PIVOT_MIN, yet a
     * plain factorisation with threshold 0 goes through. */
    double c = 1.0 - 1e-15, a[4] = {1.0, c, c, 1.0}, b[2] = {1, 2}, x[2];
    double w[4], ld = -1.0;
    memcpy(w, a, sizeof a);
    CHECK(rvfit_chol_eq_solve(2, w, b, x, &ld) == RVFIT_ERR_NUMERIC);
    CHECK(ld == -1.0); /* untouched on failure */
    memcpy(w, a, sizeof a);
    CHECK(rvfit_chol(2, w, 0.0) == RVFIT_OK);
    memcpy(w, a, sizeof a);
    CHECK(rvfit_chol(2, w, 1e-14) == RVFIT_ERR_NUMERIC);
    /* rank one: the second pivot is exactly 0 */
    double s[9] = {1, 2, 3, 2, 4, 6, 3, 6, 9}, keep[9];
    memcpy(keep, s, sizeof s);
    CHECK(rvfit_spd_inverse(3, s) == RVFIT_ERR_NUMERIC);
    CHECK(memcmp(s, keep, sizeof s) == 0); /* left unchanged */
    double neg[4] = {-1, 0, 0, 1}, nan2[4] = {NAN, 0, 0, 1};
    CHECK(rvfit_chol_eq_solve(2, neg, b, x, &ld) == RVFIT_ERR_NUMERIC);
    CHECK(rvfit_chol_eq_solve(2, nan2, b, x, &ld) == RVFIT_ERR_NUMERIC);
    double inf2[4] = {INFINITY, 0, 0, 1};
    CHECK(rvfit_chol(2, inf2, 0.0) == RVFIT_ERR_NUMERIC);
    CHECK(rvfit_chol(0, w, 0.0) == RVFIT_ERR_INVALID);
    CHECK(rvfit_chol(RVFIT_LINALG_MAX + 1, w, 0.0) == RVFIT_ERR_INVALID);
    CHECK(rvfit_spd_inverse(RVFIT_LINALG_MAX + 1, w) == RVFIT_ERR_INVALID);
}

int main(void)
{
    test_solves();
    test_inverse();
    test_failures();
    return tu_finish("test_linalg");
}
