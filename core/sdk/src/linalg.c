/* linalg.c — Cholesky factorisation, triangular solves, the equilibrated
 * solve and the SPD inverse of rvfit/linalg.h.  The operation order is
 * part of the contract: the cpu backend's results depend on it bit for
 * bit. */
#include <math.h>
#include <string.h>

#include "rvfit/linalg.h"

int rvfit_chol(int n, double *a, double tiny)
{
    if (n < 1 || n > RVFIT_LINALG_MAX)
        return RVFIT_ERR_INVALID;
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];
        for (int k = 0; k < j; k++)
            d -= a[j * n + k] * a[j * n + k];
        if (!(d > tiny) || !isfinite(d))
            return RVFIT_ERR_NUMERIC;
        d = sqrt(d);
        a[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = a[i * n + j];
            for (int k = 0; k < j; k++)
                s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / d;
        }
    }
    return RVFIT_OK;
}

void rvfit_chol_forward(int n, const double *l, const double *b, double *y)
{
    for (int k = 0; k < n; k++) {
        double s = b[k];
        for (int j = 0; j < k; j++)
            s -= l[k * n + j] * y[j];
        y[k] = s / l[k * n + k];
    }
}

void rvfit_chol_backward(int n, const double *l, const double *y, double *x)
{
    for (int k = n - 1; k >= 0; k--) {
        double s = y[k];
        for (int j = k + 1; j < n; j++)
            s -= l[j * n + k] * x[j];
        x[k] = s / l[k * n + k];
    }
}

/* Row k of the lower triangle a (with b[k]) is exactly 0: an unknown no
 * datum constrains (a basis function without a usable pixel). */
static int rvfit_chol_dead_row(int n, const double *a, const double *b,
                               int k)
{
    if (b[k] != 0.0)
        return 0;
    for (int l = 0; l < n; l++)
        if ((l <= k ? a[k * n + l] : a[l * n + k]) != 0.0)
            return 0;
    return 1;
}

int rvfit_chol_eq_quad(int n, double *a, const double *b, double *x,
                       double *logdet, double *q)
{
    double sc[RVFIT_LINALG_MAX];
    if (n < 1 || n > RVFIT_LINALG_MAX)
        return RVFIT_ERR_INVALID;
    /* Equilibrate to a unit diagonal: det(A) = det(DAD) / prod(D^2). */
    double ld = 0.0;
    int nlive = 0;
    for (int k = 0; k < n; k++) {
        double d = a[k * n + k];
        if (d == 0.0 && rvfit_chol_dead_row(n, a, b, k)) {
            sc[k] = 1.0; /* left out: a unit row, x_k = 0 */
            continue;
        }
        if (!(d > 0.0) || !isfinite(d))
            return RVFIT_ERR_NUMERIC;
        sc[k] = 1.0 / sqrt(d);
        ld += log(d);
        nlive++;
    }
    if (nlive == 0) /* nothing constrained (a model of zeros): no fit */
        return RVFIT_ERR_NUMERIC;
    for (int k = 0; k < n; k++)
        for (int l = 0; l <= k; l++)
            a[k * n + l] *= sc[k] * sc[l];
    for (int k = 0; k < n; k++)
        if (a[k * n + k] == 0.0)
            a[k * n + k] = 1.0;
    int rc = rvfit_chol(n, a, RVFIT_CHOL_MIN_PIVOT);
    if (rc)
        return rc;
    for (int k = 0; k < n; k++)
        ld += 2.0 * log(a[k * n + k]);
    /* Solve L L^T y = D b, then x = D y; b^T A^-1 b = |L^-1 D b|^2. */
    double y[RVFIT_LINALG_MAX], qq = 0.0;
    for (int k = 0; k < n; k++)
        y[k] = b[k] * sc[k];
    rvfit_chol_forward(n, a, y, y);
    for (int k = 0; k < n; k++)
        qq += y[k] * y[k];
    if (x) {
        rvfit_chol_backward(n, a, y, y);
        for (int k = 0; k < n; k++)
            x[k] = y[k] * sc[k];
    }
    *logdet = ld;
    if (q)
        *q = qq;
    return RVFIT_OK;
}

int rvfit_chol_eq_solve(int n, double *a, const double *b, double *x,
                        double *logdet)
{
    return rvfit_chol_eq_quad(n, a, b, x, logdet, NULL);
}

int rvfit_spd_inverse(int n, double *a)
{
    double l[RVFIT_LINALG_MAX * RVFIT_LINALG_MAX];
    if (n < 1 || n > RVFIT_LINALG_MAX)
        return RVFIT_ERR_INVALID;
    memcpy(l, a, sizeof(double) * (size_t)(n * n));
    int rc = rvfit_chol(n, l, 0.0);
    if (rc)
        return rc;
    /* inv = L^-T L^-1, column by column */
    for (int c = 0; c < n; c++) {
        double e[RVFIT_LINALG_MAX], x[RVFIT_LINALG_MAX];
        for (int i = 0; i < n; i++)
            e[i] = i == c;
        rvfit_chol_forward(n, l, e, e);
        rvfit_chol_backward(n, l, e, x);
        for (int i = 0; i < n; i++)
            a[i * n + c] = x[i];
    }
    return RVFIT_OK;
}
