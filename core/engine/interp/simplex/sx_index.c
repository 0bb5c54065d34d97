/* sx_index.c — the simplex kind's grid index for point location: one
 * cell per node spacing of every free axis, listing the simplices whose
 * bounding box touches it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sx_internal.h"

static int sx_clampi(long x, int lo, int hi)
{
    return x < lo ? lo : (x > hi ? hi : (int)x);
}

size_t sx_cell_of(const sx_data *sd, const double *u)
{
    size_t c = 0;
    for (int k = 0; k < sd->fa.d; k++)
        c = c * (size_t)sd->fa.ncell[k] +
            (size_t)sx_clampi((long)floor(u[k]), 0, sd->fa.ncell[k] - 1);
    return c;
}

/* Visit (count or fill) every cell of simplex s's bounding box. */
static void sx_cells(const rvfit_library *lib, const sx_data *sd, size_t s,
                     size_t *cnt, uint32_t *list, size_t *fill)
{
    int d = sd->fa.d, lo[RVFIT_MAX_PARAMS], hi[RVFIT_MAX_PARAMS];
    int at[RVFIT_MAX_PARAMS];
    for (int k = 0; k < d; k++)
        lo[k] = sd->fa.ncell[k] - 1, hi[k] = 0;
    for (int v = 0; v <= d; v++) {
        double u[RVFIT_MAX_PARAMS];
        lib_model_u(lib, &sd->fa, sd->vert[s * (size_t)(d + 1) + (size_t)v], u);
        for (int k = 0; k < d; k++) {
            /* a vertex on a cell boundary touches the cells on both
             * sides: floor(u - eps) .. floor(u + eps) */
            int a = sx_clampi((long)floor(u[k] - 1e-9), 0, sd->fa.ncell[k] - 1);
            int b = sx_clampi((long)floor(u[k] + 1e-9), 0, sd->fa.ncell[k] - 1);
            lo[k] = a < lo[k] ? a : lo[k];
            hi[k] = b > hi[k] ? b : hi[k];
        }
    }
    memcpy(at, lo, sizeof at);
    for (;;) {
        size_t c = 0;
        for (int k = 0; k < d; k++)
            c = c * (size_t)sd->fa.ncell[k] + (size_t)at[k];
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
    for (int k = 0; k < sd->fa.d; k++)
        nc *= (size_t)sd->fa.ncell[k];
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
