/* error_stencil.c — the interpolation-error template of a point along one
 * axis: the leading term of (interpolant - true spectrum), written as a
 * stencil over the library's own vectors so that every backend evaluates
 * it (docs/output-format.md, "Interpolation error").
 *
 * Along a linear share the error of interpolating f between nodes is
 * +1/2 f''(x) sum_i w_i (x_i - x)^2 to leading order (for two nodes,
 * 1/2 f'' (x - x_k)(x_{k+1} - x)); along a cubic Hermite share with node
 * slopes from the quadratic through neighbours (Catmull-Rom) it is
 * -h^3 f''' t (1 - t)(2t - 1) / 6 + h^4 f'''' t (1 - t)(t^2 - t - 2) / 24
 * on evenly spaced nodes, f''' taken over the cell's 4 nodes (the second
 * term matters at mid-cell, where the first vanishes).  The derivatives
 * are divided differences of the library's nodes around each stencil
 * corner, weighted like the corners: the estimate is exact for flux
 * quadratic (quartic) along the axis and needs nothing but the library.
 * Its use is a covariance, where the sign drops out; the known-answer
 * test (test_interp_err) checks it anyway.
 */
#include <math.h>
#include <string.h>

#include "interp_internal.h"

/* order! f[x_j0 .. x_j0+order] along axis a with the other axes at n[]:
 * the divided-difference weights of the order-th derivative.  Returns
 * order + 1 entries, or 0 when a node of the window is a hole. */
static int deriv(const rvfit_library *L, int a, const int *n, int j0,
                 int order, uint32_t *idx, double *w)
{
    const double *x = L->axis[a].node;
    double fact = order == 4 ? 24.0 : order == 3 ? 6.0 : 2.0;
    int nn[RVFIT_MAX_PARAMS];
    memcpy(nn, n, (size_t)L->nparam * sizeof *nn);
    for (int i = 0; i <= order; i++) {
        nn[a] = j0 + i;
        size_t m = grid_ravel(L, nn);
        if (!L->exists[m])
            return 0;
        double p = 1.0;
        for (int k = 0; k <= order; k++)
            if (k != i)
                p *= x[j0 + i] - x[j0 + k];
        idx[i] = (uint32_t)m;
        w[i] = fact / p;
    }
    return order + 1;
}

/* The window of order+1 nodes nearest to centre c along a, inside the
 * axis, avoiding holes by moving one node either way. */
static int window(const rvfit_library *L, int a, const int *n, int c,
                  int order, uint32_t *idx, double *w)
{
    int top = L->axis[a].nnode - 1 - order;
    static const int shift[3] = {0, -1, 1};
    for (int s = 0; s < 3; s++) {
        int j0 = c + shift[s];
        j0 = j0 < 0 ? 0 : j0 > top ? top : j0;
        int k = deriv(L, a, n, j0, order, idx, w);
        if (k)
            return k;
    }
    return 0;
}

/* d2f/dx_a dx_b at corner n of a two-node axis a: the mixed difference
 * over a's two nodes and the nodes of b around n[b] (central inside,
 * one-sided at b's ends).  Returns 4 entries, 0 at a hole. */
static int mixed(const rvfit_library *L, int a, int b, const int *n,
                 uint32_t *idx, double *w)
{
    const double *xb = L->axis[b].node, *xa = L->axis[a].node;
    int lo = n[b] > 0 ? n[b] - 1 : 0;
    int hi = n[b] < L->axis[b].nnode - 1 ? n[b] + 1 : n[b];
    double den = (xa[1] - xa[0]) * (xb[hi] - xb[lo]);
    int nn[RVFIT_MAX_PARAMS];
    memcpy(nn, n, (size_t)L->nparam * sizeof *nn);
    for (int k = 0; k < 4; k++) {
        nn[a] = k & 1;
        nn[b] = k & 2 ? hi : lo;
        size_t m = grid_ravel(L, nn);
        if (!L->exists[m])
            return 0;
        idx[k] = (uint32_t)m;
        w[k] = ((k & 1) == ((k & 2) >> 1) ? 1.0 : -1.0) / den;
    }
    return 4;
}

/* The axis whose mixed difference stands in for the curvature of a
 * two-node axis a, or -1.  Only [alpha/Fe] has one: [alpha/H] =
 * [Fe/H] + [alpha/Fe] by definition, so a pixel whose flux depends on
 * the abundances as f = g([Fe/H]) + h([Fe/H] + [alpha/Fe]) has
 * d2f/dalpha2 = d2f/dalpha dFeH exactly; blends of both kinds and the
 * atmosphere's response to alpha break it only at second order. */
static int partner(const rvfit_library *L, int a)
{
    if (L->axis[a].nnode != 2 || strcmp(L->axis[a].name, "ALPHAFE"))
        return -1;
    for (int b = 0; b < L->nparam; b++)
        if (!strcmp(L->axis[b].name, "FEH") && L->axis[b].nnode >= 2)
            return b;
    return -1;
}

/* Add weight v to vector m in (idx, w)[0..*ne); -1 when full. */
static int put(uint32_t m, double v, uint32_t *idx, double *w, int *ne)
{
    for (int e = 0; e < *ne; e++)
        if (idx[e] == m) {
            w[e] += v;
            return 0;
        }
    if (*ne >= RVFIT_MAX_STENCIL)
        return -1;
    idx[*ne] = m, w[(*ne)++] = v;
    return 0;
}

/* Cell of x on axis a: lower node k and fraction t. */
static int cell(const rvfit_axis *ax, double x, double *t)
{
    int k = grid_cell(ax, x);
    double h = ax->node[k + 1] - ax->node[k];
    *t = (x - ax->node[k]) / h;
    *t = *t < 0 ? 0 : *t > 1 ? 1 : *t;
    return k;
}

/* Leading-order shape factor of axis a at theta for the corners ci/cw:
 * 1/2 sum_i w_i (x_ia - theta_a)^2 on a linear share, the Catmull-Rom
 * factor of f''' on a cubic one (*cubic set, *k the cell) and in *s4 that
 * of f'''' (0 on a linear share or an axis of 4 nodes). */
static double shape_of(const rvfit_interpolator *ip, const double *theta,
                       int a, const uint32_t *ci, const double *cw, int nc,
                       int *cubic, int *k, double *s4)
{
    const rvfit_library *L = ip->lib;
    const rvfit_axis *ax = &L->axis[a];
    int n[RVFIT_MAX_PARAMS], lo = ax->nnode, hi = -1;
    double var = 0, t;
    for (int i = 0; i < nc; i++) {
        grid_unravel(L, ci[i], n);
        lo = n[a] < lo ? n[a] : lo;
        hi = n[a] > hi ? n[a] : hi;
        var += cw[i] * pow(ax->node[n[a]] - theta[a], 2);
    }
    /* cubic axes: the cubic kind's, and pca's coefficients (the kinds
     * whose stencil is the grid's; the others have none) */
    *cubic = ax->interp == RVFIT_INTERP_CUBIC && hi - lo >= 2 &&
             ax->nnode >= 4;
    *k = cell(ax, theta[a], &t);
    *s4 = 0;
    if (!*cubic)
        return 0.5 * var;
    double h = ax->node[*k + 1] - ax->node[*k];
    /* The f'''' term vanishes nowhere inside the cell and is the whole
     * error at mid-cell, where the f''' one changes sign: exact for flux
     * quartic along the axis with f''' from the cell's 4 nodes. */
    if (ax->nnode >= 5)
        *s4 = h * h * h * h * t * (1 - t) * (t * t - t - 2) / 24;
    return -h * h * h * t * (1 - t) * (2 * t - 1) / 6;
}

/* Whether corners m1 and m2 sit on the same nodes of every axis but a. */
static int same_others(const rvfit_library *L, int a, uint32_t m1,
                       uint32_t m2)
{
    int n1[RVFIT_MAX_PARAMS], n2[RVFIT_MAX_PARAMS];
    grid_unravel(L, m1, n1);
    grid_unravel(L, m2, n2);
    for (int x = 0; x < L->nparam; x++)
        if (x != a && n1[x] != n2[x])
            return 0;
    return 1;
}

int rvfit_interp_error_stencil(const rvfit_interpolator *ip,
                               const double *theta, int a, uint32_t *idx,
                               double *w)
{
    const rvfit_library *L = ip->lib;
    uint32_t ci[RVFIT_MAX_STENCIL];
    double cw[RVFIT_MAX_STENCIL], pen = 0;
    int nc = rvfit_interp_stencil(ip, theta, ci, cw, &pen);
    int b = partner(L, a), cubic, k;
    if (nc <= 0 || (L->axis[a].nnode < 3 && b < 0))
        return 0; /* two nodes hold no curvature */
    double s4, shape = shape_of(ip, theta, a, ci, cw, nc, &cubic, &k, &s4);
    if ((shape == 0 && s4 == 0) || !isfinite(shape) || !isfinite(s4))
        return 0;
    /* The curvature along a is taken on the line of nodes through the
     * heaviest corner only: it varies slowly across the other axes, and
     * 4 entries instead of 4 x 2^(d-1) keep the extra points as cheap as
     * the fit's own. */
    int top = 0;
    for (int i = 1; i < nc; i++)
        top = cw[i] > cw[top] ? i : top;
    int ne = 0, n[RVFIT_MAX_PARAMS];
    double wsum = 0, wline = 0;
    for (int i = 0; i < nc; i++) {
        uint32_t di[5];
        double dw[5];
        if (!same_others(L, a, ci[i], ci[top]))
            continue;
        wline += cw[i];
        grid_unravel(L, ci[i], n);
        int nd = b >= 0  ? mixed(L, a, b, n, di, dw)
                 : cubic ? window(L, a, n, k - 1, 3, di, dw)
                         : window(L, a, n, n[a] - 1, 2, di, dw);
        if (!nd)
            continue; /* a hole: the other node carries the estimate */
        wsum += cw[i];
        for (int e = 0; e < nd; e++)
            if (put(di[e], cw[i] * shape * dw[e], idx, w, &ne))
                return 0;
        /* with a hole among 5 nodes the f''' term stands alone */
        nd = s4 != 0 ? window(L, a, n, k - 1, 4, di, dw) : 0;
        for (int e = 0; e < nd; e++)
            if (put(di[e], cw[i] * s4 * dw[e], idx, w, &ne))
                return 0;
    }
    if (!(wsum > 0.5 * wline))
        return 0; /* too few nodes with a curvature to trust */
    for (int e = 0; e < ne; e++)
        w[e] /= wsum;
    return ne;
}
