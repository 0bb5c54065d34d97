/* interp_internal.h — the interpolator kinds' data and functions
 * (core-internal; the interface is rvfit/interp.h). */
#ifndef RVFIT_INTERP_INTERNAL_H
#define RVFIT_INTERP_INTERNAL_H

#include "rvfit/interp.h"

/* simplex (interp_simplex.c, interp_simplex_index.c) */
typedef struct sx_data {
    int d;                       /* free axes (more than one node)       */
    int ax[RVFIT_MAX_PARAMS];    /* their library axes                    */
    double h[RVFIT_MAX_PARAMS];  /* their mean node spacing (scaled)      */
    int ncell[RVFIT_MAX_PARAMS]; /* index cells per free axis             */
    size_t ns;                   /* simplices                             */
    uint32_t *vert;              /* [ns][d+1] model indices               */
    double *v0, *inv;            /* [ns][d] vertex 0, [ns][d][d] inverse  */
    size_t *cell_off;            /* [ncells+1] into cell_list             */
    uint32_t *cell_list;         /* simplices touching each cell          */
} sx_data;

/* Free axes, spacings; the triangulation by Qhull (stored == NULL) or
 * the stored one ([ns][d+1] model indices, checked); then sx_prepare. */
int sx_open(const rvfit_library *lib, const uint32_t *stored, size_t ns,
            int nvert, sx_data **out, rvfit_err *err);
void sx_free(sx_data *sd);
int sx_triangulate(const rvfit_library *lib, sx_data *sd, rvfit_err *err);
int sx_prepare(const rvfit_library *lib, sx_data *sd, rvfit_err *err);
int sx_index(const rvfit_library *lib, sx_data *sd, rvfit_err *err);
size_t sx_cell_of(const sx_data *sd, const double *u);
/* u coordinates (free axes, node spacings) of model m. */
void sx_model_u(const rvfit_library *lib, const sx_data *sd, size_t m,
                double *u);
int sx_stencil(const rvfit_library *lib, const sx_data *sd,
               const double *theta, uint32_t *idx, double *w, double *pen);

#endif
