/* sx_build.c — the simplex kind's triangulation: a Delaunay
 * triangulation (Qhull) of the models present, in scaled coordinates
 * measured in node spacings, checked and inverted per simplex, from Qhull
 * or as stored in the library file.
 *
 * Coordinates: u_p = (theta_p - node_p[0]) / h_p on the free axes (more
 * than one node), h_p the mean node spacing, the unit the out-of-grid
 * penalty already uses, so that a Delaunay "circle" weighs the axes as
 * the grid does.  Axes with a single node take part only in the penalty.
 *
 * Outside the hull (holes at the edge, a missing corner, or beyond the
 * axes) the point is clamped to the axes' box, with today's per-axis
 * penalty; if the clamped point is still outside every simplex, the
 * simplex whose smallest barycentric weight is largest is taken, its
 * negative weights are zeroed and the rest renormalised (a point on that
 * simplex's face), and the squared distance to that point, in node
 * spacings, is added to the penalty.  The fit's PARAM_WARN then follows
 * from the penalty as at the grid's edges. */
#include <libqhull_r/qhull_ra.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sx_internal.h"

/* A grid's cells, and the rectangles of its lattice in general (holes
 * expose the oblique ones), are cospherical: Qhull returns such a set as
 * one facet and "Qt" splits each facet on its own, so neighbouring
 * simplices can cut a shared rectangle along different diagonals and the
 * interpolant jumps there (by the curvature across it: 1e-2 on
 * test_interp_simplex_quad's flux).  Triangulating the points after a
 * small fixed linear map y = (I + SX_KUHN 11^T + SX_SKEW R) u, R dense
 * with irrational entries, breaks every such tie the same way wherever it
 * occurs (two orthogonal lattice vectors are not orthogonal after it), so
 * the simplices meet face to face.  The 11^T part shortens the cells' main
 * diagonals, as the Kuhn triangulation does (an R of 0.1 alone
 * gave test_e2e_interp's full-grid fit 1.5x multilinear's TEFF scatter, the
 * Kuhn one 1.04x).  Barycentric weights are affine invariant and are
 * computed in u. */
#define SX_SKEW 0.01
#define SX_KUHN (-0.05)

static void sx_skew(int d, double *u)
{
    double y[RVFIT_MAX_PARAMS];
    for (int k = 0; k < d; k++) {
        y[k] = u[k];
        for (int l = 0; l < d; l++) {
            double r = fmod((double)(7 * k + 3 * l + 1) * 0.6180339887498949,
                            1.0) - 0.5;
            y[k] += (SX_KUHN + SX_SKEW * r) * u[l];
        }
    }
    memcpy(u, y, (size_t)d * sizeof *u);
}

/* Delaunay triangulation of the existing models by Qhull; vertices
 * (model indices) into sd->vert, count into sd->ns.  Qhull's messages go
 * to a memory stream and into err on failure. */
int sx_triangulate(const rvfit_library *lib, sx_data *sd, rvfit_err *err)
{
    int d = sd->fa.d;
    size_t npt = 0;
    for (size_t m = 0; m < lib->nmodel; m++)
        npt += !lib->exists || lib->exists[m];
    coordT *pts = malloc((npt ? npt : 1) * (size_t)d * sizeof *pts);
    uint32_t *id = malloc((npt ? npt : 1) * sizeof *id);
    char *msg = NULL;
    size_t msglen = 0;
    FILE *ferr = open_memstream(&msg, &msglen);
    int rc = (!pts || !id || !ferr)
                 ? rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory")
                 : RVFIT_OK;
    for (size_t m = 0, i = 0; !rc && m < lib->nmodel; m++)
        if (!lib->exists || lib->exists[m]) {
            lib_model_u(lib, &sd->fa, m, pts + i * (size_t)d);
            sx_skew(d, pts + i * (size_t)d);
            id[i++] = (uint32_t)m;
        }
    if (!rc && npt < (size_t)d + 1)
        rc = rvfit_err_set(err, RVFIT_ERR_INVALID, "simplex: %zu models "
                           "cannot span %d dimensions", npt, d);
    qhT qh_qh, *qh = &qh_qh;
    if (!rc) {
        QHULL_LIB_CHECK
        qh_zero(qh, ferr);
        /* Qt: triangulated output (grid points are cospherical); Qbb:
         * scale the lifted coordinate; Qz: a point at infinity, which
         * keeps cospherical input stable. */
        char cmd[] = "qhull d Qt Qbb Qz";
        int ex = qh_new_qhull(qh, d, (int)npt, pts, False, cmd, NULL, ferr);
        if (ex) {
            fflush(ferr);
            rc = rvfit_err_set(err, RVFIT_ERR_INVALID, "simplex: Qhull "
                               "failed (%d): %.400s", ex, msg ? msg : "");
        }
        size_t ns = 0;
        facetT *facet;
        vertexT *vertex, **vertexp;
        FORALLfacets ns += !rc && !facet->upperdelaunay;
        sd->vert = rc ? NULL : malloc((ns ? ns : 1) * (size_t)(d + 1) *
                                      sizeof *sd->vert);
        if (!rc && !sd->vert)
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
        sd->ns = 0;
        FORALLfacets {
            if (rc || facet->upperdelaunay)
                continue;
            size_t k = 0;
            FOREACHvertex_(facet->vertices) {
                int pid = qh_pointid(qh, vertex->point);
                if (pid >= 0 && (size_t)pid < npt && k <= (size_t)d)
                    sd->vert[sd->ns * (size_t)(d + 1) + k++] = id[pid];
            }
            sd->ns += k == (size_t)d + 1; /* the point at infinity: drop */
        }
        qh_freeqhull(qh, !qh_ALL);
        int curlong, totlong;
        qh_memfreeshort(qh, &curlong, &totlong);
    }
    if (ferr)
        fclose(ferr);
    free(msg);
    free(pts);
    free(id);
    return rc;
}

/* Inverse of the d x d matrix a (row-major) into inv by Gauss-Jordan with
 * partial pivoting; returns |det| (0 when singular). */
static double sx_invert(int d, double *a, double *inv)
{
    double det = 1.0;
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++)
            inv[i * d + j] = i == j;
    for (int c = 0; c < d; c++) {
        int piv = c;
        for (int r = c + 1; r < d; r++)
            if (fabs(a[r * d + c]) > fabs(a[piv * d + c]))
                piv = r;
        if (!(fabs(a[piv * d + c]) > SX_EPS))
            return 0.0;
        for (int j = 0; j < d && piv != c; j++) {
            double t = a[c * d + j];
            a[c * d + j] = a[piv * d + j], a[piv * d + j] = t;
            t = inv[c * d + j];
            inv[c * d + j] = inv[piv * d + j], inv[piv * d + j] = t;
        }
        double p = a[c * d + c];
        det *= fabs(p);
        for (int j = 0; j < d; j++)
            a[c * d + j] /= p, inv[c * d + j] /= p;
        for (int r = 0; r < d; r++) {
            double f = a[r * d + c];
            for (int j = 0; r != c && j < d; j++)
                a[r * d + j] -= f * a[c * d + j],
                    inv[r * d + j] -= f * inv[c * d + j];
        }
    }
    return det;
}

/* Per simplex: vertex 0 and the inverse of [v1-v0 ... vd-v0], flat ones
 * dropped; then the grid index (cells of one node spacing, each listing
 * the simplices whose bounding box touches it). */
int sx_prepare(const rvfit_library *lib, sx_data *sd, rvfit_err *err)
{
    int d = sd->fa.d;
    size_t dd = (size_t)d * (size_t)d, keep = 0;
    sd->v0 = malloc((sd->ns ? sd->ns : 1) * (size_t)d * sizeof *sd->v0);
    sd->inv = malloc((sd->ns ? sd->ns : 1) * dd * sizeof *sd->inv);
    if (!sd->v0 || !sd->inv)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
    for (size_t s = 0; s < sd->ns; s++) {
        double u[RVFIT_MAX_PARAMS + 1][RVFIT_MAX_PARAMS], t[64];
        for (int k = 0; k <= d; k++)
            lib_model_u(lib, &sd->fa, sd->vert[s * (size_t)(d + 1) + k], u[k]);
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++)
                t[i * d + j] = u[j + 1][i] - u[0][i];
        if (!(sx_invert(d, t, sd->inv + keep * dd) > SX_EPS))
            continue;
        memmove(sd->vert + keep * (size_t)(d + 1),
                sd->vert + s * (size_t)(d + 1), (size_t)(d + 1) * 4);
        memcpy(sd->v0 + keep * (size_t)d, u[0], (size_t)d * sizeof(double));
        keep++;
    }
    sd->ns = keep;
    if (keep == 0)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "simplex: the models "
                             "present span no %d-dimensional simplex", d);
    return sx_index(lib, sd, err);
}

int sx_open(const rvfit_library *lib, const uint32_t *stored, size_t ns,
            int nvert, sx_data **out, rvfit_err *err)
{
    sx_data *sd = calloc(1, sizeof *sd);
    if (!sd)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
    lib_axes_init(lib, &sd->fa);
    int rc = RVFIT_OK;
    if (sd->fa.d < 2)
        rc = rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex interpolation "
                           "needs at least 2 axes with several nodes (this "
                           "library has %d): use multilinear", sd->fa.d);
    else if (!stored)
        rc = sx_triangulate(lib, sd, err);
    else if (nvert != sd->fa.d + 1)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "HDU SIMPLEX: simplices "
                           "of %d vertices, the library's %d free axes need "
                           "%d", nvert, sd->fa.d, sd->fa.d + 1);
    else if (!(sd->vert = malloc((ns ? ns : 1) * (size_t)(sd->fa.d + 1) * 4)))
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
    for (size_t e = 0; stored && !rc && e < ns * (size_t)(sd->fa.d + 1); e++) {
        if (stored[e] >= lib->nmodel ||
            (lib->exists && !lib->exists[stored[e]]))
            rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "simplex %zu: vertex "
                               "%u is not a model of the library",
                               e / (size_t)(sd->fa.d + 1), stored[e]);
        sd->vert[e] = stored[e];
    }
    if (stored && !rc)
        sd->ns = ns;
    if (!rc)
        rc = sx_prepare(lib, sd, err);
    if (rc) {
        sx_free(sd);
        return rc;
    }
    *out = sd;
    return RVFIT_OK;
}

void sx_free(sx_data *sd)
{
    if (!sd)
        return;
    free(sd->vert);
    free(sd->v0);
    free(sd->inv);
    free(sd->cell_off);
    free(sd->cell_list);
    free(sd);
}
