/* rvfit/interp.h — template interpolators: the core interface that turns a
 * point theta (scaled coordinates) into a stencil, indices into the
 * library's stored vectors plus weights (rvfit_stencils, at most
 * RVFIT_MAX_STENCIL entries), that every backend evaluates as a weighted
 * sum of vectors.
 *
 * Kinds are registered in the core (interp.c), not loaded as plugins: a
 * kind is chosen when the library is built ([templates] interpolator,
 * recorded in the library file as INTERP), its data live in that file, and
 * backends never see the kind, only stencils (docs/architecture.md).
 *
 *   multilinear  regular grid, 2 nodes per axis, holes dropped
 *   cubic        regular grid, cubic Hermite on the axes in CUBAXES
 *                (rvfit_library_stencil)
 *   simplex      Delaunay triangulation (Qhull) of the models present, in
 *                scaled coordinates in node spacings, barycentric weights
 *                (interp_simplex.c); stored in the library (HDU SIMPLEX)
 *   pca          per arm a mean and K principal components of the models
 *                (LAPACKE), each model's K coefficients interpolated over
 *                theta by the grid stencil (linear, or cubic on CUBAXES):
 *                the stencil runs over the K+1 vectors with a weight per
 *                arm (rvfit_arm_stencils, backend ops 1.2); stored in the
 *                library (FLUX_<ARM> vectors, PCACOEF_<ARM>)
 * All interpolate in ln flux when the library says so (LOGFLUX).  For
 * the regular-grid kinds backends compute the stencil themselves on the
 * device from the library's axes unless host stencils are asked for
 * ([templates] host_stencils); the other kinds always use host ones.
 *
 * Ownership: rvfit_interp_open fills a caller-owned rvfit_interpolator that
 * refers to (does not copy) the library; rvfit_interp_close frees the
 * kind's data.  Thread-safety: an open interpolator is read-only and
 * rvfit_interp_stencil is reentrant.
 */
#ifndef RVFIT_INTERP_H
#define RVFIT_INTERP_H

#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/library.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rvfit_interp_kind {
    RVFIT_IKIND_MULTILINEAR = 0,
    RVFIT_IKIND_CUBIC = 1,
    RVFIT_IKIND_SIMPLEX = 2,
    RVFIT_IKIND_PCA = 3,
    RVFIT_IKIND_NKIND
};

typedef struct rvfit_interpolator {
    int kind;               /* enum rvfit_interp_kind                     */
    int host_stencils;      /* 1: the core sends stencils (chisq_st, ...) */
    const rvfit_library *lib;
    void *data;             /* the kind's (simplex: its triangulation;
                               pca: its vectors and coefficients)          */
} rvfit_interpolator;

/* Kind by its [templates] interpolator name ("multilinear", "cubic") or
 * its INTERP keyword ("MULTILIN", "CUBIC"), case-insensitive; -1 if
 * unknown. */
RVFIT_EXPORT int rvfit_interp_kind_parse(const char *name);
/* Config name and INTERP keyword of a kind ("?" when out of range). */
RVFIT_EXPORT const char *rvfit_interp_kind_name(int kind);
RVFIT_EXPORT const char *rvfit_interp_kind_fits(int kind);
/* The kind a loaded library's axes describe: cubic when any axis is. */
RVFIT_EXPORT int rvfit_interp_kind_of(const rvfit_library *lib);

/* Open the interpolator of kind `kind` over lib (as loaded by
 * rvfit_library_load, interpolation options applied; -1 = the grid kind
 * lib's axes describe).  For simplex, path names the library file whose
 * SIMPLEX HDU holds the triangulation (NULL: triangulate now, with
 * Qhull).  host_stencils forces stencils from the core for the
 * regular-grid kinds. */
RVFIT_EXPORT int rvfit_interp_open(rvfit_interpolator *ip,
                                   const rvfit_library *lib, int kind,
                                   const char *path, int host_stencils,
                                   rvfit_err *err);
RVFIT_EXPORT void rvfit_interp_close(rvfit_interpolator *ip);

/* Open a pca interpolator over lib by decomposing its models now: k
 * components per arm, or with k == 0 the fewest that bring the rms
 * reconstruction error of every arm (over its existing models and
 * pixels, in the interpolation space) to at most rms (default of
 * rvfit_interp_open: RVFIT_PCA_RMS).  RVFIT_ERR_CONFIG when k is out of
 * 1..min(models - 1, RVFIT_MAX_STENCIL - 1) or rms needs more. */
#define RVFIT_PCA_RMS 1e-3
RVFIT_EXPORT int rvfit_interp_open_pca(rvfit_interpolator *ip,
                                       const rvfit_library *lib, int k,
                                       double rms, rvfit_err *err);
/* pca: components per arm and the rms reconstruction error of arm `arm`
 * (-1 and NAN for another kind). */
RVFIT_EXPORT int rvfit_interp_pca_k(const rvfit_interpolator *ip);
RVFIT_EXPORT double rvfit_interp_pca_rms(const rvfit_interpolator *ip,
                                         int arm);

/* The library a backend loads (load_library) to evaluate this
 * interpolator's stencils: the library itself, or for pca its vectors
 * (one axis "PCA" of K+1 nodes; arm a's flux holds the mean, then the
 * components; valid while ip is open). */
RVFIT_EXPORT const rvfit_library *
rvfit_interp_vectors(const rvfit_interpolator *ip);
/* Weights per stencil entry: 1, or the library's arm count (pca). */
RVFIT_EXPORT int rvfit_interp_nweights(const rvfit_interpolator *ip);

/* Load the library at path for fitting: the config's run-time options
 * ([templates] cubic, log_flux, host_stencils) applied and the
 * interpolator the file records opened in ip.  On success the caller
 * owns both (rvfit_interp_close, then rvfit_library_free); on failure
 * nothing is left to free. */
struct rvfit_config;
RVFIT_EXPORT int rvfit_library_open_fit(rvfit_library *lib,
                                        rvfit_interpolator *ip,
                                        const char *path,
                                        const struct rvfit_config *c,
                                        rvfit_err *err);
/* The simplices of a simplex interpolator: [ns][nvert] model indices
 * (valid while ip is open); -1 for another kind. */
RVFIT_EXPORT int rvfit_interp_simplices(const rvfit_interpolator *ip,
                                        const uint32_t **vert, size_t *ns,
                                        int *nvert);

/* The simplex's quadratic correction (interp_simplex_quad.c):
 * RVFIT_SXCORR_QUADRATIC subtracts the barycentric interpolant's error on
 * the local weighted least-squares quadratic of the models within 2.5
 * node spacings, exact for flux quadratic in theta; its stencils hold
 * those models (RVFIT_MAX_STENCIL at most).  Recorded in the library
 * (SXCORR in HDU SIMPLEX) and applied when it is opened. */
enum rvfit_sxcorr { RVFIT_SXCORR_NONE = 0, RVFIT_SXCORR_QUADRATIC = 1 };
/* "none" (or NULL, "") or "quadratic", case-insensitive; -1 otherwise. */
RVFIT_EXPORT int rvfit_simplex_correction_parse(const char *name);
/* Set the correction of an open simplex interpolator.  RVFIT_ERR_CONFIG
 * for another kind (unless RVFIT_SXCORR_NONE) and for the quadratic
 * correction with more than 4 axes of several nodes (its ball of models
 * would not fit a stencil). */
RVFIT_EXPORT int rvfit_interp_simplex_correction(rvfit_interpolator *ip,
                                                 int corr, rvfit_err *err);
/* The correction of a simplex interpolator (RVFIT_SXCORR_NONE for other
 * kinds). */
RVFIT_EXPORT int rvfit_interp_simplex_corr(const rvfit_interpolator *ip);

/* Stencil of one point over the library's models into idx/w (room for
 * RVFIT_MAX_STENCIL each): returns the entry count (0 = flat template)
 * and the out-of-domain penalty in *pen, the rules of
 * rvfit_library_stencil for the grid kinds.  For pca: the grid stencil
 * of its coefficients, i.e. over the models rvfit_library_load rebuilt
 * from the components (the same template as its stencil over the
 * vectors, rvfit_stencil_fill, up to rounding). */
RVFIT_EXPORT int rvfit_interp_stencil(const rvfit_interpolator *ip,
                                      const double *theta, uint32_t *idx,
                                      double *w, double *pen);

/* A reusable stencil table for batches of points (engine-side buffers
 * behind the views a backend gets: view when nw == 1, aview always). */
typedef struct rvfit_stencil_buf {
    rvfit_stencils view;       /* one weight per entry (nw == 1)         */
    rvfit_arm_stencils aview;  /* nw weights per entry                   */
    uint32_t nw;
    uint32_t *off, *idx;
    double *w, *pen;
    size_t cap_pts, cap_ent, cap_w;
} rvfit_stencil_buf;

/* Fill buf with the stencils of n points over the vectors of
 * rvfit_interp_vectors(ip) (RVFIT_PT_CONTINUUM points get an empty
 * one); grows the buffers as needed. */
RVFIT_EXPORT int rvfit_stencil_fill(const rvfit_interpolator *ip, size_t n,
                                    const rvfit_point *pts,
                                    rvfit_stencil_buf *buf, rvfit_err *err);
RVFIT_EXPORT void rvfit_stencil_buf_free(rvfit_stencil_buf *buf);

/* The backend's chisq, vscan and models with the stencils of buf: the
 * 1.1 entries (chisq_st, ...) for one weight per entry, the 1.2 ones
 * (chisq_sta, ...) otherwise. */
RVFIT_EXPORT int rvfit_stencil_chisq(const rvfit_backend_ops *ops,
                                     void *state, size_t n,
                                     const rvfit_point *pts,
                                     const rvfit_stencil_buf *buf,
                                     rvfit_chisq_out *out, rvfit_err *err);
RVFIT_EXPORT int rvfit_stencil_vscan(const rvfit_backend_ops *ops,
                                     void *state, size_t nq,
                                     const rvfit_point *base,
                                     const rvfit_stencil_buf *buf,
                                     size_t nvel, const double *vel,
                                     double *m2lnl, rvfit_err *err);
RVFIT_EXPORT int rvfit_stencil_models(const rvfit_backend_ops *ops,
                                      void *state, size_t n,
                                      const rvfit_point *pts,
                                      const rvfit_stencil_buf *buf,
                                      float *const *model,
                                      float *const *cont, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
