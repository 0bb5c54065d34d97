/* interp_lsq.c — the local weighted least-squares quadratic (interp_lsq.h). */
#include "lsq.h"

int qls_init(const rvfit_library *lib, const sx_data *sd, qls_basis *B)
{
    B->d = sd->d;
    B->nterm = 1 + sd->d;
    for (int k = 0; k < sd->d; k++) {
        B->sq[k] = lib->axis[sd->ax[k]].nnode >= 3;
        B->nterm += sd->d - k - 1 + B->sq[k];
    }
    return B->nterm <= RVFIT_LINALG_MAX;
}

void qls_terms(const qls_basis *B, const double *du, double *row)
{
    int d = B->d, t = 0;
    row[t++] = 1.0;
    for (int k = 0; k < d; k++)
        row[t++] = du[k];
    for (int k = 0; k < d; k++)
        for (int l = k; l < d; l++)
            if (l > k || B->sq[k])
                row[t++] = du[k] * du[l];
}

int qls_weights(const qls_basis *B, size_t n, const double *row,
                const double *w, const double *r, double *g)
{
    int t = B->nterm;
    double a[RVFIT_LINALG_MAX * RVFIT_LINALG_MAX] = {0};
    double z[RVFIT_LINALG_MAX], logdet;
    if (n < (size_t)t)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const double *ri = row + i * (size_t)t;
        for (int j = 0; j < t; j++)
            for (int k = 0; k <= j; k++)
                a[j * t + k] += w[i] * ri[j] * ri[k];
    }
    if (rvfit_chol_eq_solve(t, a, r, z, &logdet) != RVFIT_OK)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const double *ri = row + i * (size_t)t;
        double s = 0.0;
        for (int j = 0; j < t; j++)
            s += ri[j] * z[j];
        g[i] = w[i] * s;
    }
    return 1;
}
