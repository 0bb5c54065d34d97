/* sx_internal.h — the simplex kind's data and functions (private to
 * core/engine/interp/simplex): a Delaunay triangulation (Qhull) of the
 * models present in the free axes' node-spacing coordinates
 * (library/library_internal.h, lib_axes), barycentric weights, point
 * location through a grid index, and the optional quadratic correction.
 *
 *   sx_build.c    the triangulation and the per-simplex inverses
 *   sx_index.c    the grid index of simplices per cell
 *   sx_stencil.c  point location and the barycentric stencil
 *   sx_quad.c     the quadratic correction of a stencil
 *   sx_kind.c     the kind's descriptor, its file record (HDU SIMPLEX)
 *                 and the public simplex functions of rvfit/interp.h */
#ifndef RVFIT_SX_INTERNAL_H
#define RVFIT_SX_INTERNAL_H

#include "interp/interp_internal.h"

#define SX_EPS 1e-10 /* barycentric tolerance, and singular simplices */

typedef struct sx_data {
    lib_axes fa;                 /* free axes, spacings, index cells      */
    size_t ns;                   /* simplices                             */
    uint32_t *vert;              /* [ns][d+1] model indices               */
    double *v0, *inv;            /* [ns][d] vertex 0, [ns][d][d] inverse  */
    size_t *cell_off;            /* [ncells+1] into cell_list             */
    uint32_t *cell_list;         /* simplices touching each cell          */
    int corr;                    /* enum rvfit_sxcorr                     */
} sx_data;

/* Free axes, spacings; the triangulation by Qhull (stored == NULL) or
 * the stored one ([ns][nvert] model indices, checked); then prepared. */
int sx_open(const rvfit_library *lib, const uint32_t *stored, size_t ns,
            int nvert, sx_data **out, rvfit_err *err);
void sx_free(sx_data *sd);
/* Delaunay triangulation of the existing models (sx_build.c). */
int sx_triangulate(const rvfit_library *lib, sx_data *sd, rvfit_err *err);
/* Per simplex vertex 0 and the inverse of its edge matrix, flat ones
 * dropped; then the index. */
int sx_prepare(const rvfit_library *lib, sx_data *sd, rvfit_err *err);
/* The grid index (sx_index.c) and the cell of u. */
int sx_index(const rvfit_library *lib, sx_data *sd, rvfit_err *err);
size_t sx_cell_of(const sx_data *sd, const double *u);
/* The barycentric stencil of theta (sx_stencil.c), corrected when
 * sd->corr says so. */
int sx_stencil(const rvfit_library *lib, const sx_data *sd,
               const double *theta, uint32_t *idx, double *w, double *pen);
/* The quadratic correction of the barycentric stencil idx/w (n vertices,
 * weights summing to 1) in place; returns the new entry count (n where
 * the local quadratic is rank-deficient). */
int sx_quad_correct(const rvfit_library *lib, const sx_data *sd,
                    uint32_t *idx, double *w, int n);

#endif
