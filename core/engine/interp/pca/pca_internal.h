/* pca_internal.h — the pca kind's data and functions (private to
 * core/engine/interp/pca): per arm a mean and k principal components of
 * the existing models (in the library's interpolation space: ln flux
 * when lib->log_flux), and each model's k coefficients; a point's
 * coefficients are those of the regular-grid stencil (lib's axes: linear
 * or cubic, holes dropped) applied to the models' coefficients, so its
 * template is the grid kinds' template of the reconstructed models.
 *
 *   pca_build.c    the decomposition (LAPACKE, BLAS; dlopen'ed)
 *   pca_data.c     allocation, the backend's view, reconstruction,
 *                  stencils
 *   pca_records.c  its records in the library file
 *   pca_kind.c     the kind's descriptor and the public pca functions */
#ifndef RVFIT_PCA_INTERNAL_H
#define RVFIT_PCA_INTERNAL_H

#include "interp/interp_internal.h"

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
 * BLAS products). */
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
/* A stencil over the models (midx, mw)[0..n) as one over the vectors,
 * exact for the reconstructed models: k+1 entries (index = vector),
 * weights w[e * narm + a]; returns the entry count (0 when n is 0). */
int pca_to_vectors(const pca_data *pd, const uint32_t *midx,
                   const double *mw, int n, uint32_t *idx, double *w);
/* The stencil of a point over the vectors: k+1 entries (index = vector),
 * weights w[e * narm + a]; returns the entry count (0: flat template). */
int pca_stencil(const rvfit_library *lib, const pca_data *pd,
                const double *theta, uint32_t *idx, double *w, double *pen);

/* The file (pca_records.c).  Reading: the primary key NPCA (*k); each
 * arm's vectors (FLUX_<ARM>, PCARMS) and coefficients (PCACOEF_<ARM>)
 * into the reading state, and the models rebuilt from them.  Writing:
 * NPCA and PCATARG, the vectors in the FLUX_<ARM> images, the
 * coefficients in PCACOEF_<ARM> images after them. */
typedef struct pca_read {
    int k;
    double target;
    float *vec[RVFIT_MAX_ARMS];
    double *coef[RVFIT_MAX_ARMS];
    double rms[RVFIT_MAX_ARMS];
} pca_read;
int pca_read_begin(lio_rd *r, void **state);
int pca_read_arm(void *state, lio_rd *r, int a, rvfit_library *lib);
int pca_read_end(lio_rd *r, const rvfit_library *lib, void *state,
                 void **data);
void pca_read_free(void *state);
void pca_write_hooks(const rvfit_interpolator *ip, lio_write_hooks *h);

#endif
