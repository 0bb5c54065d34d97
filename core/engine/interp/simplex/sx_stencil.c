/* sx_stencil.c — the simplex kind's stencil: the simplex that holds a
 * point (grid index first), its barycentric weights, and the point
 * clamped onto the nearest face outside the hull, with the penalty
 * (sx_build.c says how). */
#include <math.h>
#include <string.h>

#include "sx_internal.h"

/* Barycentric weights of u in simplex s into lam[0..d]; returns the
 * smallest. */
static double sx_bary(const sx_data *sd, size_t s, const double *u,
                      double *lam)
{
    int d = sd->fa.d;
    const double *inv = sd->inv + s * (size_t)d * (size_t)d;
    const double *v0 = sd->v0 + s * (size_t)d;
    double sum = 0.0, mn;
    for (int i = 0; i < d; i++) {
        double l = 0.0;
        for (int j = 0; j < d; j++)
            l += inv[i * d + j] * (u[j] - v0[j]);
        lam[i + 1] = l;
        sum += l;
    }
    lam[0] = 1.0 - sum;
    mn = lam[0];
    for (int i = 1; i <= d; i++)
        mn = lam[i] < mn ? lam[i] : mn;
    return mn;
}

/* The simplex containing u (grid index first), or the one whose smallest
 * weight is largest when none does (*inside = 0). */
static size_t sx_find(const sx_data *sd, const double *u, double *lam,
                      int *inside)
{
    size_t c = sx_cell_of(sd, u), best = 0;
    double bl = -INFINITY, l[RVFIT_MAX_PARAMS + 1];
    for (size_t e = sd->cell_off[c]; e < sd->cell_off[c + 1]; e++) {
        size_t s = sd->cell_list[e];
        double mn = sx_bary(sd, s, u, l);
        if (mn > bl)
            bl = mn, best = s, memcpy(lam, l, sizeof l);
        if (mn >= -SX_EPS) {
            *inside = 1;
            return s;
        }
    }
    for (size_t s = 0; s < sd->ns; s++) {
        double mn = sx_bary(sd, s, u, l);
        if (mn > bl)
            bl = mn, best = s, memcpy(lam, l, sizeof l);
    }
    *inside = bl >= -SX_EPS;
    return best;
}

int sx_stencil(const rvfit_library *lib, const sx_data *sd,
               const double *theta, uint32_t *idx, double *w, double *pen)
{
    double u[RVFIT_MAX_PARAMS], p = 0.0;
    for (int a = 0, k = 0; a < lib->nparam; a++) {
        const rvfit_axis *ax = &lib->axis[a];
        double x = theta[a], hi = ax->node[ax->nnode - 1], dist = 0.0;
        double h = ax->nnode > 1 ? sd->fa.h[k] : 1.0;
        if (!(x == x))
            x = ax->node[0], dist = RVFIT_NAN_DISTANCE;
        else if (x < ax->node[0])
            dist = (ax->node[0] - x) / h, x = ax->node[0];
        else if (x > hi)
            dist = (x - hi) / h, x = hi;
        p += dist * dist;
        if (ax->nnode > 1)
            u[k++] = (x - ax->node[0]) / h;
    }
    double lam[RVFIT_MAX_PARAMS + 1];
    int inside = 0, d = sd->fa.d, n = 0;
    size_t s = sx_find(sd, u, lam, &inside);
    if (!inside) { /* onto the nearest simplex's face */
        double sum = 0.0, y[RVFIT_MAX_PARAMS] = {0};
        for (int i = 0; i <= d; i++)
            sum += lam[i] = lam[i] > 0.0 ? lam[i] : 0.0;
        for (int i = 0; i <= d; i++) {
            double v[RVFIT_MAX_PARAMS];
            lam[i] /= sum;
            lib_model_u(lib, &sd->fa, sd->vert[s * (size_t)(d + 1) + i], v);
            for (int k = 0; k < d; k++)
                y[k] += lam[i] * v[k];
        }
        for (int k = 0; k < d; k++)
            p += (u[k] - y[k]) * (u[k] - y[k]);
    }
    double sum = 0.0;
    for (int i = 0; i <= d; i++)
        sum += lam[i] > 0.0 ? lam[i] : 0.0;
    for (int i = 0; i <= d; i++)
        if (lam[i] > 0.0) {
            lam[i] /= sum;
            idx[n] = sd->vert[s * (size_t)(d + 1) + i];
            w[n++] = lam[i];
        }
    *pen = p * RVFIT_PENALTY_SCALE;
    return sd->corr == RVFIT_SXCORR_QUADRATIC
               ? sx_quad_correct(lib, sd, idx, w, n)
               : n;
}
