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
    int corr;                    /* enum rvfit_sxcorr                     */
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
/* The free axes of lib and their mean node spacings into sd (d, ax, h,
 * ncell); the rest of sd is left alone. */
void sx_axes(const rvfit_library *lib, sx_data *sd);
/* u coordinates (free axes, node spacings) of model m. */
void sx_model_u(const rvfit_library *lib, const sx_data *sd, size_t m,
                double *u);
int sx_stencil(const rvfit_library *lib, const sx_data *sd,
               const double *theta, uint32_t *idx, double *w, double *pen);
/* The quadratic correction of the barycentric stencil idx/w (n vertices,
 * weights summing to 1) in place; returns the new entry count (n where
 * the local quadratic is rank-deficient). */
int sx_quad_correct(const rvfit_library *lib, const sx_data *sd,
                    uint32_t *idx, double *w, int n);

/* pca (interp_pca.c, interp_pca_build.c, library_io_pca.c): per arm a
 * mean and k principal components of the existing models (in the
 * library's interpolation space: ln flux when lib->log_flux), and each
 * model's k coefficients; a point's coefficients are those of the
 * regular-grid stencil (lib's axes: linear or cubic, holes dropped)
 * applied to the models' coefficients, so its template is the grid
 * kinds' template of the reconstructed models. */
typedef struct pca_data {
    int k;                          /* components per arm (1..255)       */
    int narm;
    int log_flux;                   /* space of vec: 1 = ln flux         */
    double rms[RVFIT_MAX_ARMS];     /* rms reconstruction error per arm  */
    double target;                  /* rms asked for (0: k was given)    */
    float *vec[RVFIT_MAX_ARMS];     /* [k+1][npix]: mean, components     */
    double *coef[RVFIT_MAX_ARMS];   /* [nmodel][k], 0 for holes          */
    rvfit_library view;             /* the vectors as backends load them */
    uint8_t *view_exists;           /* [k+1] of 1                         */
} pca_data;

/* Decompose lib (existing models, every arm): k components, or with k
 * == 0 the fewest (at most RVFIT_MAX_STENCIL - 1) that reach rms in
 * every arm (LAPACKE symmetric eigen-solver on the models' Gram matrix,
 * BLAS products; interp_pca_build.c). */
int pca_build(const rvfit_library *lib, int k, double rms, pca_data **out,
              rvfit_err *err);
/* An empty pca_data for k components over lib (vec, coef allocated). */
int pca_alloc(const rvfit_library *lib, int k, pca_data **out,
              rvfit_err *err);
/* The backend view (one axis "PCA" of k+1 nodes; arm a's flux holds the
 * k+1 vectors) and checks; call once vec and coef are filled. */
int pca_finish(const rvfit_library *lib, pca_data *pd, rvfit_err *err);
void pca_free(pca_data *pd);
/* Model m of arm a reconstructed, in the interpolation space, into
 * out[npix] (mean + sum of coefficients times components, in double). */
void pca_reconstruct(const float *vec, const double *coef, int k,
                     size_t npix, size_t m, float *out);
/* The stencil of a point over the vectors: k+1 entries (index = vector),
 * weights w[e * narm + a]; returns the entry count (0: flat template). */
int pca_stencil(const rvfit_library *lib, const pca_data *pd,
                const double *theta, uint32_t *idx, double *w, double *pen);

#endif
