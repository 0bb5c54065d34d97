/* rvfit/interp.h — the interpolator part of the engine: template
 * interpolators, which turn a point theta (scaled coordinates) into a
 * stencil, indices into the library's stored vectors plus weights
 * (rvfit_stencils, at most RVFIT_MAX_STENCIL entries), that every
 * backend evaluates as a weighted sum of vectors; and template-library
 * files read and written together with the interpolator they record.
 *
 * Kinds are registered in the core (core/engine/interp), not loaded as
 * plugins: a kind is chosen when the library is built ([templates]
 * interpolator, recorded in the library file as INTERP), its data live in
 * that file, and backends never see the kind, only stencils
 * (docs/architecture.md).  The engine asks an interpolator what it needs
 * (rvfit_interp_kinks_on_nodes, ...) instead of testing its kind.
 *
 *   multilinear  regular grid, 2 nodes per axis, holes dropped
 *   cubic        regular grid, cubic Hermite on the axes in CUBAXES
 *                (rvfit_library_stencil)
 *   simplex      Delaunay triangulation (Qhull) of the models present, in
 *                scaled coordinates in node spacings, barycentric weights;
 *                stored in the library (HDU SIMPLEX)
 *   pca          per arm a mean and K principal components of the models
 *                (LAPACKE), each model's K coefficients interpolated over
 *                theta by the grid stencil (linear, or cubic on CUBAXES):
 *                the stencil runs over the K+1 vectors with a weight per
 *                arm; stored in the library (FLUX_<ARM> vectors,
 *                PCACOEF_<ARM>)
 * All interpolate in ln flux when the library says so (LOGFLUX).  For
 * the regular-grid kinds backends compute the stencil themselves on the
 * device from the library's axes unless host stencils are asked for
 * ([templates] host_stencils); the other kinds always use host ones.
 *
 * Ownership: an interpolator refers to (does not copy) its library;
 * rvfit_interp_close frees the kind's data, rvfit_library_free the
 * library.  Thread-safety: an open interpolator is read-only and the
 * stencil functions are reentrant.
 */
#ifndef RVFIT_INTERP_H
#define RVFIT_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/library.h"
#include "rvfit/library_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An interpolator kind (opaque; core/engine/interp). */
typedef struct rvfit_interp_kind rvfit_interp_kind;

typedef struct rvfit_interpolator {
    const rvfit_interp_kind *kind;
    int host_stencils;      /* 1: the core sends stencils                 */
    const rvfit_library *lib;
    void *data;             /* the kind's (simplex: its triangulation;
                               pca: its vectors and coefficients)          */
} rvfit_interpolator;

/* What to build and how (rvfit_interp_build). */
typedef struct rvfit_interp_opts {
    const char *kind;       /* [templates] interpolator name; NULL: the
                               grid kind the library's axes describe      */
    int host_stencils;      /* stencils from the core for grid kinds too  */
    int pca_k;              /* pca: components (0: the fewest that reach
                               pca_rms)                                    */
    double pca_rms;         /* pca: rms reconstruction error (<= 0:
                               RVFIT_PCA_RMS)                              */
    const char *simplex_correction; /* simplex: "none" (NULL) or
                               "quadratic"; refused for the other kinds   */
} rvfit_interp_opts;

/* Whether name is a kind ([templates] interpolator name or INTERP
 * keyword, case-insensitive). */
RVFIT_EXPORT int rvfit_interp_known(const char *name);
/* The [templates] interpolator name of ip's kind ("?" when none). */
RVFIT_EXPORT const char *rvfit_interp_name(const rvfit_interpolator *ip);
/* A few words on ip after its name, e.g. " (8 components)" ("" none). */
RVFIT_EXPORT void rvfit_interp_describe(const rvfit_interpolator *ip,
                                        char *buf, size_t n);

/* Build the interpolator o describes over lib (as loaded or built,
 * interpolation options applied): the simplex kind triangulates now with
 * Qhull, pca decomposes.  RVFIT_ERR_CONFIG for an unknown kind or
 * options it does not take. */
RVFIT_EXPORT int rvfit_interp_build(rvfit_interpolator *ip,
                                    const rvfit_library *lib,
                                    const rvfit_interp_opts *o,
                                    rvfit_err *err);
/* The same with the kind's defaults: kind NULL is the grid kind lib's
 * axes describe. */
RVFIT_EXPORT int rvfit_interp_open(rvfit_interpolator *ip,
                                   const rvfit_library *lib,
                                   const char *kind, int host_stencils,
                                   rvfit_err *err);
RVFIT_EXPORT void rvfit_interp_close(rvfit_interpolator *ip);

/* What the fit asks of an interpolator.
 * kinks_on_nodes: its template's kinks lie on the grid's node planes (1)
 *   or on the faces of a triangulation (0); ip NULL: 1.
 * at_edge: theta lies at or beyond the edge of its domain inside the
 *   axes' box (a hull with holes or a missing corner), within 1e-3 node
 *   spacings (the axes' own edges are the fit's to check). */
RVFIT_EXPORT int rvfit_interp_kinks_on_nodes(const rvfit_interpolator *ip);
RVFIT_EXPORT int rvfit_interp_at_edge(const rvfit_interpolator *ip,
                                      const double *theta);

/* Open a pca interpolator over lib by decomposing its models now: k
 * components per arm, or with k == 0 the fewest that bring the rms
 * reconstruction error of every arm (over its existing models and
 * pixels, in the interpolation space) to at most rms.  RVFIT_ERR_CONFIG
 * when k is out of 1..min(models - 1, RVFIT_MAX_STENCIL - 1) or rms
 * needs more. */
#define RVFIT_PCA_RMS 1e-3
RVFIT_EXPORT int rvfit_interp_open_pca(rvfit_interpolator *ip,
                                       const rvfit_library *lib, int k,
                                       double rms, rvfit_err *err);
/* pca: components per arm and the rms reconstruction error of arm `arm`
 * (-1 and NAN for another kind). */
RVFIT_EXPORT int rvfit_interp_pca_k(const rvfit_interpolator *ip);
RVFIT_EXPORT double rvfit_interp_pca_rms(const rvfit_interpolator *ip,
                                         int arm);

/* The simplices of a simplex interpolator: [ns][nvert] model indices
 * (valid while ip is open); -1 for another kind. */
RVFIT_EXPORT int rvfit_interp_simplices(const rvfit_interpolator *ip,
                                        const uint32_t **vert, size_t *ns,
                                        int *nvert);
/* The simplex's quadratic correction: RVFIT_SXCORR_QUADRATIC subtracts
 * the barycentric interpolant's error on the local weighted least-squares
 * quadratic of the models within 2.5 node spacings, exact for flux
 * quadratic in theta; its stencils hold those models (RVFIT_MAX_STENCIL
 * at most).  Recorded in the library (SXCORR in HDU SIMPLEX) and applied
 * when it is opened. */
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
 * vectors, rvfit_interp_vec_stencil, up to rounding). */
RVFIT_EXPORT int rvfit_interp_stencil(const rvfit_interpolator *ip,
                                      const double *theta, uint32_t *idx,
                                      double *w, double *pen);
/* The stencil over the vectors the backend holds
 * (rvfit_interp_vectors), with rvfit_interp_nweights weights per entry
 * (w[e * nw + arm]). */
RVFIT_EXPORT int rvfit_interp_vec_stencil(const rvfit_interpolator *ip,
                                          const double *theta,
                                          uint32_t *idx, double *w,
                                          double *pen);
/* A stencil over the library's models (midx, mw)[0..n), e.g. a point's
 * rvfit_interp_stencil plus an error template, as a stencil over the
 * vectors the backend holds into idx/w (room for RVFIT_MAX_STENCIL
 * entries of rvfit_interp_nweights weights each): the same stencil for
 * the kinds whose backend holds the models (idx, w may be midx, mw), for
 * pca its K+1 vectors with per-arm weights, exact for the models it
 * rebuilds.  Returns the entry count. */
RVFIT_EXPORT int rvfit_interp_to_vectors(const rvfit_interpolator *ip,
                                         const uint32_t *midx,
                                         const double *mw, int n,
                                         uint32_t *idx, double *w);
/* The library a backend loads (load_library) to evaluate this
 * interpolator's stencils: the library itself, or for pca its vectors
 * (one axis "PCA" of K+1 nodes; arm a's flux holds the mean, then the
 * components; valid while ip is open). */
RVFIT_EXPORT const rvfit_library *
rvfit_interp_vectors(const rvfit_interpolator *ip);
/* Weights per stencil entry: 1, or the library's arm count (pca). */
RVFIT_EXPORT int rvfit_interp_nweights(const rvfit_interpolator *ip);

/* The interpolation-error template of point theta (scaled coordinates)
 * along library axis a: a stencil over the library's models (room for
 * RVFIT_MAX_STENCIL entries in idx, w) whose weighted sum estimates
 * interpolant minus true spectrum to leading order, from divided
 * differences of the library's own nodes (second along a linear share,
 * third and fourth along a cubic one; error_stencil.c).  Returns the
 * entry count, 0 when there is no estimate: a point on a node, an axis of
 * two nodes, holes all around.  Reentrant. */
RVFIT_EXPORT int rvfit_interp_error_stencil(const rvfit_interpolator *ip,
                                            const double *theta, int a,
                                            uint32_t *idx, double *w);

/* A reusable stencil table for batches of points (engine-side buffers
 * behind the view a backend gets). */
typedef struct rvfit_stencil_buf {
    rvfit_stencils view;       /* what the backend gets (nw weights)     */
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

/* The stencil table a backend call for these n points takes: filled in
 * buf and *st = &buf->view when ip needs stencils from the core
 * (host_stencils), else *st = NULL (the backend computes the grid's from
 * theta; also for ip NULL). */
RVFIT_EXPORT int rvfit_stencil_table(const rvfit_interpolator *ip, size_t n,
                                     const rvfit_point *pts,
                                     rvfit_stencil_buf *buf,
                                     const rvfit_stencils **st,
                                     rvfit_err *err);
/* Whether a backend of capabilities caps (rvfit_backend_ops.caps) can
 * evaluate ip's stencils: RVFIT_ERR_CONFIG naming backend, the kind and
 * what is missing otherwise. */
RVFIT_EXPORT int rvfit_interp_backend_check(const rvfit_interpolator *ip,
                                            uint32_t caps,
                                            const char *backend,
                                            rvfit_err *err);

/* ---- library files with their interpolator (docs/template-library.md).
 * path: a directory holding rvfit_library.fits, or the file. */

/* The library's models (a pca library's rebuilt from its components),
 * the file's interpolation options applied (CUBAXES, LOGFLUX). */
RVFIT_EXPORT int rvfit_library_load(rvfit_library *lib, const char *path,
                                    rvfit_err *err);
/* The library and the interpolator it records, in one reading of the
 * file.  On success the caller owns both (rvfit_interp_close, then
 * rvfit_library_free); on failure nothing is left to free. */
RVFIT_EXPORT int rvfit_library_open(rvfit_library *lib,
                                    rvfit_interpolator *ip,
                                    const char *path, rvfit_err *err);
/* The same for fitting: the config's run-time options ([templates] cubic,
 * log_flux, host_stencils) applied before the interpolator is opened; a
 * grid kind follows the axes then. */
struct rvfit_config;
RVFIT_EXPORT int rvfit_library_open_fit(rvfit_library *lib,
                                        rvfit_interpolator *ip,
                                        const char *path,
                                        const struct rvfit_config *c,
                                        rvfit_err *err);
/* Write atomically (temp file + rename) to DIR/rvfit_library.fits with
 * the interpolator ip recorded (INTERP = its kind, and its records); ip
 * NULL (rvfit_library_save): the grid kind lib's axes describe. */
RVFIT_EXPORT int rvfit_library_save_interp(const rvfit_library *lib,
                                           const rvfit_interpolator *ip,
                                           const char *dir, rvfit_err *err);
RVFIT_EXPORT int rvfit_library_save(const rvfit_library *lib,
                                    const char *dir, rvfit_err *err);

/* Apply interpolation options: kind (NULL = keep the library's; else a
 * kind name: multilinear and simplex make every axis linear, cubic makes
 * the axes in `cubic` cubic ("" = every axis of >= 3 nodes), pca its
 * coefficients cubic on the axes in `cubic` ("" = none)), else `cubic`
 * when not "" replaces the cubic axes ("none" = all linear); log_flux 1
 * switches to ln flux, 0 insists on flux (RVFIT_ERR_CONFIG if the
 * library is ln flux), -1 keeps it.  Used by `rvfit templates` (kind
 * given: recorded in the file) and at run time (kind NULL: overrides).
 * Call before sharing lib. */
RVFIT_EXPORT int rvfit_library_configure(rvfit_library *lib,
                                         const char *kind, const char *cubic,
                                         long log_flux, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
