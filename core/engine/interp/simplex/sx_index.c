/* interp_simplex_index.c — the simplex interpolator's set-up: free axes
 * and spacings, the stored or computed triangulation, and the grid index
 * used for point location (one cell per node spacing of every free axis,
 * listing the simplices whose bounding box touches it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "library/grid_index.h"
#include "interp/interp_internal.h"

static int sx_clampi(long x, int lo, int hi)
{
    return x < lo ? lo : (x > hi ? hi : (int)x);
}

void sx_axes(const rvfit_library *lib, sx_data *sd)
{
    sd->d = 0;
    for (int p = 0; p < lib->nparam; p++) {
        const rvfit_axis *a = &lib->axis[p];
        if (a->nnode < 2)
            continue;
        sd->ax[sd->d] = p;
        sd->h[sd->d] = (a->node[a->nnode - 1] - a->node[0]) / (a->nnode - 1);
        sd->ncell[sd->d++] = a->nnode - 1;
    }
}

void sx_model_u(const rvfit_library *lib, const sx_data *sd, size_t m,
                double *u)
{
    int node[RVFIT_MAX_PARAMS];
    grid_unravel(lib, m, node);
    for (int k = 0; k < sd->d; k++) {
        const rvfit_axis *a = &lib->axis[sd->ax[k]];
        u[k] = (a->node[node[sd->ax[k]]] - a->node[0]) / sd->h[k];
    }
}

size_t sx_cell_of(const sx_data *sd, const double *u)
{
    size_t c = 0;
    for (int k = 0; k < sd->d; k++)
        c = c * (size_t)sd->ncell[k] +
            (size_t)sx_clampi((long)floor(u[k]), 0, sd->ncell[k] - 1);
    return c;
}

/* Visit (count or fill) every cell of simplex s's bounding box. */
static void sx_cells(const rvfit_library *lib, const sx_data *sd, size_t s,
                     size_t *cnt, uint32_t *list, size_t *fill)
{
    int d = sd->d, lo[RVFIT_MAX_PARAMS], hi[RVFIT_MAX_PARAMS];
    int at[RVFIT_MAX_PARAMS];
    for (int k = 0; k < d; k++)
        lo[k] = sd->ncell[k] - 1, hi[k] = 0;
    for (int v = 0; v <= d; v++) {
        double u[RVFIT_MAX_PARAMS];
        sx_model_u(lib, sd, sd->vert[s * (size_t)(d + 1) + (size_t)v], u);
        for (int k = 0; k < d; k++) {
            /* a vertex on a cell boundary touches the cells on both
             * sides: floor(u - eps) .. floor(u + eps) */
            int a = sx_clampi((long)floor(u[k] - 1e-9), 0, sd->ncell[k] - 1);
            int b = sx_clampi((long)floor(u[k] + 1e-9), 0, sd->ncell[k] - 1);
            lo[k] = a < lo[k] ? a : lo[k];
            hi[k] = b > hi[k] ? b : hi[k];
        }
    }
    memcpy(at, lo, sizeof at);
    for (;;) {
        size_t c = 0;
        for (int k = 0; k < d; k++)
            c = c * (size_t)sd->ncell[k] + (size_t)at[k];
        if (list)
            list[fill[c]++] = (uint32_t)s;
        else
            cnt[c]++;
        int k = d - 1;
        while (k >= 0 && at[k] == hi[k])
            at[k] = lo[k], k--;
        if (k < 0)
            break;
        at[k]++;
    }
}

int sx_index(const rvfit_library *lib, sx_data *sd, rvfit_err *err)
{
    size_t nc = 1;
    for (int k = 0; k < sd->d; k++)
        nc *= (size_t)sd->ncell[k];
    sd->cell_off = calloc(nc + 1, sizeof *sd->cell_off);
    size_t *fill = calloc(nc + 1, sizeof *fill);
    if (!sd->cell_off || !fill) {
        free(fill);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
    }
    for (size_t s = 0; s < sd->ns; s++)
        sx_cells(lib, sd, s, sd->cell_off + 1, NULL, NULL);
    for (size_t c = 0; c < nc; c++)
        sd->cell_off[c + 1] += sd->cell_off[c];
    sd->cell_list = malloc((sd->cell_off[nc] ? sd->cell_off[nc] : 1) *
                           sizeof *sd->cell_list);
    if (!sd->cell_list) {
        free(fill);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
    }
    memcpy(fill, sd->cell_off, nc * sizeof *fill);
    for (size_t s = 0; s < sd->ns; s++)
        sx_cells(lib, sd, s, NULL, sd->cell_list, fill);
    free(fill);
    return RVFIT_OK;
}

int sx_open(const rvfit_library *lib, const uint32_t *stored, size_t ns,
            int nvert, sx_data **out, rvfit_err *err)
{
    sx_data *sd = calloc(1, sizeof *sd);
    if (!sd)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
    sx_axes(lib, sd);
    int rc = RVFIT_OK;
    if (sd->d < 2)
        rc = rvfit_err_set(err, RVFIT_ERR_CONFIG, "simplex interpolation "
                           "needs at least 2 axes with several nodes (this "
                           "library has %d): use multilinear", sd->d);
    else if (!stored)
        rc = sx_triangulate(lib, sd, err);
    else if (nvert != sd->d + 1)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "HDU SIMPLEX: simplices "
                           "of %d vertices, the library's %d free axes need "
                           "%d", nvert, sd->d, sd->d + 1);
    else if (!(sd->vert = malloc((ns ? ns : 1) * (size_t)(sd->d + 1) * 4)))
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "simplex: no memory");
    for (size_t e = 0; stored && !rc && e < ns * (size_t)(sd->d + 1); e++) {
        if (stored[e] >= lib->nmodel ||
            (lib->exists && !lib->exists[stored[e]]))
            rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "simplex %zu: vertex "
                               "%u is not a model of the library",
                               e / (size_t)(sd->d + 1), stored[e]);
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
