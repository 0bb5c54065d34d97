/* fill_holes.c — rvfit_library_fill_holes: estimates of the grid's
 * interior holes from the models around them, made when the library is
 * built so that every interpolator (the simplex's triangulation in
 * particular) spans one node spacing where it would otherwise bridge two
 * (docs/benchmarks.md, "Simplex on an irregular grid").
 *
 * The estimate is the value at the hole of the weighted least-squares
 * quadratic through the neighbours, in the coordinates u (node
 * spacings of each free axis) centred on the hole: with A the neighbours'
 * rows of basis values and W their weights, the constant term is g^T f
 * with g = W A (A^T W A)^-1 e_0, one weight vector per hole for every
 * pixel.  g reproduces any quadratic in u exactly, hence any quadratic in
 * the scaled parameters theta, whatever W.  W = (1 + |o|^2)^-2, o the
 * index offset: on the small synthetic grid with 37% of its models
 * removed (docs/benchmarks.md) it brings the filled models' median rms
 * error from 3.0e-3 (W = 1) to 2.5e-3, the simplex's there being 6.0e-3.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "library_internal.h"

#define FILL_LEVELS 3 /* neighbourhoods, growing (library_io.h)         */
#define FILL_REACH 2  /* largest index offset along an axis             */

typedef struct fill_geo {
    lib_axes fa;               /* free axes and spacings                 */
    qls_basis B;               /* the quadratic's basis                  */
    size_t cap;                /* (2 FILL_REACH + 1)^d neighbours at most */
} fill_geo;

/* Per-hole scratch: neighbours' model indices, offsets, basis rows and
 * weights. */
typedef struct fill_nb {
    size_t n;
    size_t *m;
    int *off;       /* [cap][d] index offsets                            */
    double *row;    /* [cap][nterm] basis values at u - u_hole            */
    double *w;      /* [cap] least-squares weights (1 + |o|^2)^-2         */
    double *g;      /* [cap] weights of the estimate                     */
} fill_nb;

int rvfit_fill_parse(const char *name)
{
    if (!name || !strcasecmp(name, "none") || !name[0])
        return RVFIT_FILL_NONE;
    if (!strcasecmp(name, "quadratic"))
        return RVFIT_FILL_QUADRATIC;
    return -1;
}

/* Offset o (free axes) belongs to neighbourhood level lv (1..3). */
static int fill_in_level(int d, const int *o, int lv)
{
    int mx = 0, s2 = 0;
    for (int k = 0; k < d; k++) {
        int a = abs(o[k]);
        mx = a > mx ? a : mx;
        s2 += a * a;
    }
    return mx <= 1 || (lv == 2 && s2 <= 4) || lv == 3;
}

/* The models (exists == 1) of level lv around hole mh (nodes n) into
 * nb. */
static void fill_neigh(const rvfit_library *lib, const fill_geo *G,
                       size_t mh, const int *n, int lv, fill_nb *nb)
{
    int d = G->fa.d, o[RVFIT_MAX_PARAMS], nn[RVFIT_MAX_PARAMS];
    double uh[RVFIT_MAX_PARAMS], u[RVFIT_MAX_PARAMS], du[RVFIT_MAX_PARAMS];
    lib_model_u(lib, &G->fa, mh, uh);
    nb->n = 0;
    for (size_t c = 0; c < G->cap; c++) {
        size_t r = c;
        int ok = 1;
        memcpy(nn, n, sizeof nn);
        for (int k = d - 1; k >= 0; k--) {
            o[k] = (int)(r % (2 * FILL_REACH + 1)) - FILL_REACH;
            r /= 2 * FILL_REACH + 1;
            int p = G->fa.ax[k];
            nn[p] = n[p] + o[k];
            ok &= nn[p] >= 0 && nn[p] < lib->axis[p].nnode;
        }
        int s2 = 0;
        for (int k = 0; k < d; k++)
            s2 += o[k] * o[k];
        if (!ok || !fill_in_level(d, o, lv))
            continue;
        size_t m = grid_ravel(lib, nn);
        if (lib->exists[m] != 1)
            continue;
        lib_model_u(lib, &G->fa, m, u);
        for (int k = 0; k < d; k++)
            du[k] = u[k] - uh[k];
        nb->m[nb->n] = m;
        nb->w[nb->n] = 1.0 / ((1.0 + s2) * (1.0 + s2));
        memcpy(nb->off + nb->n * (size_t)d, o, (size_t)d * sizeof *o);
        qls_terms(&G->B, du, nb->row + nb->n * (size_t)G->B.nterm);
        nb->n++;
    }
}

/* Every closed orthant around the hole holds a neighbour: then no
 * hyperplane through the hole has them all strictly on one side, so the
 * hole lies in their convex hull (signs per axis, so index offsets and u
 * agree). */
static int fill_surrounded(int d, const fill_nb *nb)
{
    for (unsigned s = 0; s < (1u << d); s++) {
        int found = 0;
        for (size_t i = 0; i < nb->n && !found; i++) {
            const int *o = nb->off + i * (size_t)d;
            int in = 1;
            for (int k = 0; k < d && in; k++)
                in = (s >> k & 1u) ? o[k] >= 0 : o[k] <= 0;
            found = in;
        }
        if (!found)
            return 0;
    }
    return 1;
}

/* g = W A (A^T W A)^-1 e_0 into nb->g; 0 when A^T W A is singular or
 * sum |g| exceeds RVFIT_FILL_MAX_GAIN. */
static int fill_weights(const fill_geo *G, fill_nb *nb)
{
    double e0[RVFIT_LINALG_MAX] = {1.0}, gain = 0.0;
    if (!qls_weights(&G->B, nb->n, nb->row, nb->w, e0, nb->g))
        return 0;
    for (size_t i = 0; i < nb->n; i++)
        gain += fabs(nb->g[i]);
    return isfinite(gain) && gain <= RVFIT_FILL_MAX_GAIN;
}

/* Model mh = sum g_i model_i in every arm (buf: every arm's pixels); 0
 * (model untouched) when the result is not finite or, in flux, its mean
 * over an arm not positive. */
static int fill_apply(rvfit_library *lib, size_t mh, const fill_nb *nb,
                      double *buf)
{
    double *v = buf;
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *ar = &lib->arm[a];
        double sum = 0.0;
        for (size_t p = 0; p < ar->npix; p++) {
            double x = 0.0;
            for (size_t i = 0; i < nb->n; i++)
                x += nb->g[i] * ar->flux[nb->m[i] * ar->npix + p];
            v[p] = x;
            sum += x;
        }
        if (!isfinite(sum) || (!lib->log_flux && !(sum > 0.0)))
            return 0;
        v += ar->npix;
    }
    v = buf;
    for (int a = 0; a < lib->narm; a++) {
        rvfit_lib_arm *ar = &lib->arm[a];
        for (size_t p = 0; p < ar->npix; p++)
            ar->flux[mh * ar->npix + p] = (float)v[p];
        v += ar->npix;
    }
    return 1;
}

static int fill_geo_init(const rvfit_library *lib, fill_geo *G,
                         rvfit_err *err)
{
    memset(G, 0, sizeof *G);
    lib_axes_init(lib, &G->fa);
    int d = G->fa.d, fits = qls_init(lib, &G->fa, &G->B);
    G->cap = 1;
    for (int k = 0; k < d; k++)
        G->cap *= 2 * FILL_REACH + 1;
    if (d < 1 || !fits)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "fill_holes = "
                             "quadratic: %d free axes give %d terms (need "
                             "1..%d)", d, G->B.nterm, RVFIT_LINALG_MAX);
    return RVFIT_OK;
}

static int fill_hole(rvfit_library *lib, const fill_geo *G, size_t mh,
                     fill_nb *nb, double *buf)
{
    int n[RVFIT_MAX_PARAMS];
    grid_unravel(lib, mh, n);
    for (int lv = 1; lv <= FILL_LEVELS; lv++) {
        fill_neigh(lib, G, mh, n, lv, nb);
        if (fill_surrounded(G->fa.d, nb) && fill_weights(G, nb))
            return fill_apply(lib, mh, nb, buf);
    }
    return 0;
}

int rvfit_library_fill_holes(rvfit_library *lib, int method,
                             size_t *nfilled, size_t *nleft, rvfit_err *err)
{
    size_t filled = 0, left = 0, npix = 1;
    if (nfilled)
        *nfilled = 0;
    if (nleft)
        *nleft = 0;
    if (method == RVFIT_FILL_NONE || !lib->exists)
        return RVFIT_OK;
    if (method != RVFIT_FILL_QUADRATIC)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "fill_holes: unknown "
                             "method %d", method);
    if (memchr(lib->exists, 0, lib->nmodel) == NULL)
        return RVFIT_OK; /* a full grid: nothing to fill, any axes */
    fill_geo G;
    int rc = fill_geo_init(lib, &G, err);
    if (rc)
        return rc;
    for (int a = 0; a < lib->narm; a++)
        npix += lib->arm[a].npix;
    fill_nb nb = {0};
    nb.m = malloc(G.cap * sizeof *nb.m);
    nb.off = malloc(G.cap * (size_t)G.fa.d * sizeof *nb.off);
    nb.row = malloc(G.cap * (size_t)G.B.nterm * sizeof *nb.row);
    nb.g = malloc(G.cap * sizeof *nb.g);
    nb.w = malloc(G.cap * sizeof *nb.w);
    double *buf = malloc(npix * sizeof *buf);
    if (!nb.m || !nb.off || !nb.row || !nb.g || !nb.w || !buf)
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "fill_holes: no memory");
    /* Neighbours are the original models only (exists == 1), so the
     * result does not depend on the order holes are visited. */
    for (size_t m = 0; !rc && m < lib->nmodel; m++) {
        if (lib->exists[m])
            continue;
        if (fill_hole(lib, &G, m, &nb, buf))
            lib->exists[m] = RVFIT_MODEL_FILLED, filled++;
        else
            left++;
    }
    free(nb.m), free(nb.off), free(nb.row), free(nb.g), free(nb.w);
    free(buf);
    if (nfilled)
        *nfilled = filled;
    if (nleft)
        *nleft = left;
    return rc;
}
