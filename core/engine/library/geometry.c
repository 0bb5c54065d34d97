/* geometry.c — the free axes of a grid in node spacings and the local
 * weighted least-squares quadratic over them (library_internal.h). */
#include "library_internal.h"

void lib_axes_init(const rvfit_library *lib, lib_axes *fa)
{
    fa->d = 0;
    for (int p = 0; p < lib->nparam; p++) {
        const rvfit_axis *a = &lib->axis[p];
        if (a->nnode < 2)
            continue;
        fa->ax[fa->d] = p;
        fa->h[fa->d] = (a->node[a->nnode - 1] - a->node[0]) / (a->nnode - 1);
        fa->ncell[fa->d++] = a->nnode - 1;
    }
}

void lib_model_u(const rvfit_library *lib, const lib_axes *fa, size_t m,
                 double *u)
{
    int node[RVFIT_MAX_PARAMS];
    grid_unravel(lib, m, node);
    for (int k = 0; k < fa->d; k++) {
        const rvfit_axis *a = &lib->axis[fa->ax[k]];
        u[k] = (a->node[node[fa->ax[k]]] - a->node[0]) / fa->h[k];
    }
}

int qls_init(const rvfit_library *lib, const lib_axes *fa, qls_basis *B)
{
    B->d = fa->d;
    B->nterm = 1 + fa->d;
    for (int k = 0; k < fa->d; k++) {
        B->sq[k] = lib->axis[fa->ax[k]].nnode >= 3;
        B->nterm += fa->d - k - 1 + B->sq[k];
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
