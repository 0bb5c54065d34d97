/* rvfit/templates.h — template preparation from a grid in PHOENIX layout.
 *
 * Reads WAVE_PHOENIX-ACES-AGSS-COND-2011.fits and the model files under
 * PHOENIX-ACES-AGSS-COND-2011/Z* (directory given is the top "HiResFITS"
 * directory), discovers the parameter axes from the PHX* keywords (holes
 * allowed), and for each arm: converts to photon units (f*lambda),
 * convolves with a Gaussian of sigma0 Angstrom, integrates exactly over
 * each output pixel of a log-uniform grid padded by vmax km/s, and
 * normalises each model by its mean over the unpadded arm.
 * Output: a library (rvfit/library.h) saved atomically.
 * Thread-safety: reentrant; uses nthreads workers internally.
 */
#ifndef RVFIT_TEMPLATES_H
#define RVFIT_TEMPLATES_H

#include "rvfit/instrument.h"
#include "rvfit/library.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rvfit_templates_opts {
    double sigma0;        /* Gaussian pre-smoothing, Angstrom (0.4)       */
    double vmax;          /* padding, km/s (1000)                         */
    double teff_min, teff_max; /* optional cuts; 0 = none                  */
    int nthreads;
    /* The interpolator recorded in the library (rvfit/interp.h):
     * "multilinear", "cubic", "simplex" or "pca" (NULL = multilinear),
     * its cubic axes ("" = every axis of >= 3 nodes for cubic, none for
     * pca) and ln flux (1) or flux (0, -1). */
    const char *interpolator;
    const char *cubic;
    int log_flux;
    /* pca: components per arm (0 = the fewest reaching pca_rms; 0 too =
     * RVFIT_PCA_RMS) */
    int pca_k;
    double pca_rms;
    /* Holes filled before the interpolator is built
     * (rvfit_library_fill_holes): "none" (or NULL) or "quadratic"; the
     * counts go to *nfilled and *nleft when not NULL. */
    const char *fill_holes;
    size_t *nfilled, *nleft;
    /* simplex: "none" (or NULL) or "quadratic", the correction recorded
     * with the triangulation (rvfit_interp_simplex_correction). */
    const char *simplex_correction;
} rvfit_templates_opts;

RVFIT_EXPORT int rvfit_templates_build(const char *griddir, int narm,
                                       const rvfit_template_arm *arms,
                                       const char *instrument,
                                       const rvfit_templates_opts *o,
                                       const char *outdir, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
