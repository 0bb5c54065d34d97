/* sx_quad.c — the simplex's quadratic correction
 * ([templates] simplex_correction = quadratic).  The barycentric
 * interpolant is exact only for flux linear in theta; this subtracts the
 * error it makes on q, the weighted least-squares quadratic through the
 * models near the point:
 *     t(x) = sum_i lam_i f_i - [sum_i lam_i q(v_i) - q(x)],
 * exact wherever the flux is quadratic in theta.  q is linear in the
 * models (library/geometry.c), so the correction is a weighted sum of them and
 * the stencil grows from the d + 1 vertices to the models within
 * SXQ_REACH node spacings (about 80 for three free axes and a two-node
 * one, 65 for three), still a plain stencil for every backend.
 *
 * The constant and linear parts of the bracket vanish (sum lam_i = 1,
 * sum lam_i v_i = x), so only q's quadratic coefficients enter.  The
 * weights (1 - r^2 / R^2)^2, r the distance in node spacings, vanish at
 * the ball's edge, so the template stays continuous as models enter and
 * leave it; the reach of 2.5 keeps three nodes of every axis in the ball
 * at the grid's edges, so the quadratic has full rank there too (with 2,
 * 2.5x fewer models, a point within 0.2 spacings of an edge has models
 * on two of its nodes only: the square dropped there is neither exact
 * nor continuous).  Where the quadratic has not full rank (holes), the
 * point keeps the plain barycentric stencil.
 * Measured against multilinear in docs/benchmarks.md ("A quadratic
 * correction for simplex"). */
#include <math.h>
#include <string.h>

#include "sx_internal.h"

#define SXQ_REACH 2.5 /* radius of the ball of models, node spacings     */
#define SXQ_AXMAX 16  /* nodes of one axis within the reach, at most     */

typedef struct sxq_ball {
    size_t n;
    uint32_t m[RVFIT_MAX_STENCIL];
    double w[RVFIT_MAX_STENCIL];
    double du[RVFIT_MAX_STENCIL][RVFIT_MAX_PARAMS];
    double row[RVFIT_MAX_STENCIL * RVFIT_LINALG_MAX];
    double g[RVFIT_MAX_STENCIL];
} sxq_ball;

/* Nodes of free axis k within the reach of x (index, offset in node
 * spacings); their count, -1 when more than SXQ_AXMAX. */
static int sxq_axis(const rvfit_axis *ax, double h, double x, int *j,
                    double *o)
{
    int n = 0;
    for (int i = 0; i < ax->nnode; i++) {
        double off = (ax->node[i] - ax->node[0]) / h - x;
        if (fabs(off) >= SXQ_REACH)
            continue;
        if (n == SXQ_AXMAX)
            return -1;
        j[n] = i, o[n++] = off;
    }
    return n;
}

/* The models within the reach of x into b (offsets, weights); 0 when more
 * than cap. */
static int sxq_gather(const rvfit_library *lib, const sx_data *sd,
                      const double *x, size_t cap, sxq_ball *b)
{
    int d = sd->fa.d, cnt[RVFIT_MAX_PARAMS], at[RVFIT_MAX_PARAMS] = {0};
    int j[RVFIT_MAX_PARAMS][SXQ_AXMAX], node[RVFIT_MAX_PARAMS] = {0};
    double o[RVFIT_MAX_PARAMS][SXQ_AXMAX];
    for (int k = 0; k < d; k++) {
        cnt[k] = sxq_axis(&lib->axis[sd->fa.ax[k]], sd->fa.h[k], x[k], j[k], o[k]);
        if (cnt[k] <= 0)
            return 0;
    }
    b->n = 0;
    for (;;) {
        double r2 = 0.0, du[RVFIT_MAX_PARAMS];
        for (int k = 0; k < d; k++) {
            du[k] = o[k][at[k]];
            node[sd->fa.ax[k]] = j[k][at[k]];
            r2 += du[k] * du[k];
        }
        size_t m = grid_ravel(lib, node);
        if (r2 < SXQ_REACH * SXQ_REACH && (!lib->exists || lib->exists[m])) {
            if (b->n == cap)
                return 0;
            double f = 1.0 - r2 / (SXQ_REACH * SXQ_REACH);
            b->m[b->n] = (uint32_t)m;
            memcpy(b->du[b->n], du, sizeof du);
            b->w[b->n++] = f * f;
        }
        int k = d - 1;
        while (k >= 0 && ++at[k] == cnt[k])
            at[k--] = 0;
        if (k < 0)
            return 1;
    }
}

int sx_quad_correct(const rvfit_library *lib, const sx_data *sd,
                    uint32_t *idx, double *w, int n)
{
    qls_basis B;
    sxq_ball b;
    double x[RVFIT_MAX_PARAMS] = {0}, v[RVFIT_MAX_PARAMS + 1][RVFIT_MAX_PARAMS];
    double r[RVFIT_LINALG_MAX] = {0}, row[RVFIT_LINALG_MAX];
    int d = sd->fa.d;
    for (int i = 0; i < n; i++) {
        lib_model_u(lib, &sd->fa, idx[i], v[i]);
        for (int k = 0; k < d; k++)
            x[k] += w[i] * v[i][k];
    }
    if (!qls_init(lib, &sd->fa, &B) ||
        !sxq_gather(lib, sd, x, (size_t)(RVFIT_MAX_STENCIL - n), &b))
        return n;
    for (size_t e = 0; e < b.n; e++)
        qls_terms(&B, b.du[e], b.row + e * (size_t)B.nterm);
    /* the bracket's quadratic part: sum_i lam_i terms(v_i - x) */
    for (int i = 0; i < n; i++) {
        double du[RVFIT_MAX_PARAMS];
        for (int k = 0; k < d; k++)
            du[k] = v[i][k] - x[k];
        qls_terms(&B, du, row);
        for (int t = 1 + d; t < B.nterm; t++)
            r[t] += w[i] * row[t];
    }
    if (!qls_weights(&B, b.n, b.row, b.w, r, b.g))
        return n;
    for (size_t e = 0; e < b.n; e++)
        if (!isfinite(b.g[e]))
            return n;
    int nv = n;
    for (size_t e = 0; e < b.n; e++) {
        int i = 0;
        while (i < nv && idx[i] != b.m[e])
            i++;
        if (i < nv) {
            w[i] -= b.g[e];
        } else {
            idx[n] = b.m[e];
            w[n++] = -b.g[e];
        }
    }
    return n;
}
