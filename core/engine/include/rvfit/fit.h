/* rvfit/fit.h — the batched fit driver (architecture §4) and its results.
 *
 * rvfit_fit_batch runs the five stages in lockstep for every spectrum of a
 * loaded batch: (1) initial scan over library nodes and velocities,
 * (2) batched Nelder-Mead over (v, vsini, theta), (3) velocity
 * refinement with vscan, (4) finite-difference Hessian for theta errors,
 * (5) diagnostics and best-fit models.  Every stage is one or a few
 * backend calls covering all still-active spectra.
 *
 * Units: velocities km/s; parameters physical (Teff in K, others dex).
 * Ownership: results and models are caller-allocated.
 * Thread-safety: one driver per backend handle.
 */
#ifndef RVFIT_FIT_H
#define RVFIT_FIT_H

#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/config.h"
#include "rvfit/interp.h"
#include "rvfit/library.h"
#include "rvfit/loader.h"
#include "rvfit/prep.h"
#include "rvfit/spectra.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RVS_WARN bits (rvspecfit conventions). */
#define RVFIT_WARN_CHISQ 1u       /* CHISQ_C_TOT - CHISQ_TOT < 50        */
#define RVFIT_WARN_RV 2u          /* VRAD within 5 km/s of the limits    */
#define RVFIT_WARN_RVERR 4u       /* VRAD_ERR > 100 km/s                 */
#define RVFIT_WARN_PARAM 8u       /* at the edge of the parameter space  */
#define RVFIT_WARN_VSINI 16u      /* VSINI > 100 km/s                    */
#define RVFIT_WARN_BAD_SPECTRUM 32u /* no usable arm                     */
#define RVFIT_WARN_BAD_HESSIAN 64u  /* Hessian not positive definite     */
#define RVFIT_WARN_DUPLICATE 128u   /* TARGETID already in this output   */
#define RVFIT_WARN_BAD_IVAR 256u    /* an arm's median S/N per pixel is
                                       above RVFIT_SNR_ABSURD: its inverse
                                       variances are not credible, nor the
                                       errors derived from them          */
#define RVFIT_WARN_ARM_OUTSIDE 512u /* an arm lies entirely outside the
                                       templates' wavelengths: not used  */
#define RVFIT_WARN_SB2 1024u        /* [fit] sb2: two velocities explain
                                       the spectrum clearly better
                                       (rvfit/joint.h)                   */

/* Points of the final velocity scan kept per spectrum (rvfit_result). */
#define RVFIT_VSCAN_MAX 25

typedef struct rvfit_result {
    double vrad, vrad_err, vrad_skew, vrad_kurt;
    double vsini;
    double param[RVFIT_MAX_PARAMS];     /* physical units                */
    double param_err[RVFIT_MAX_PARAMS]; /* sqrt(stat^2 + interp^2)    */
    double chisq_tot, chisq_c_tot;
    double chisq_red;                   /* chisq_tot / degrees of freedom */
    long npix_tot;
    double chisq[RVFIT_MAX_ARMS], chisq_c[RVFIT_MAX_ARMS];
    double sn[RVFIT_MAX_ARMS];
    long npix[RVFIT_MAX_ARMS];
    double m2lnl;                       /* at the optimum                */
    uint32_t warn;                      /* RVFIT_WARN_*                  */
    uint64_t npoints;                   /* backend points spent on it    */
    /* The template-interpolation part of param_err (physical units; NaN
     * when not computed: [fit] interp_errors = 0, a backend without
     * stencil ops, no inverse Hessian); param_err^2 = statistical^2 +
     * param_err_interp^2 (docs/output-format.md). */
    double param_err_interp[RVFIT_MAX_PARAMS];
    /* The final velocity scan of stage 3, from which VRAD and VRAD_ERR
     * come: vscan_n points (0: not fitted) at velocities vscan_v (km/s,
     * increasing) with -2 ln L vscan_m2lnl ([output] chisq_v = 1 writes
     * them to rvmod, HDU CHISQ_V; docs/output-format.md). */
    int vscan_n;
    double vscan_v[RVFIT_VSCAN_MAX];
    double vscan_m2lnl[RVFIT_VSCAN_MAX];
    /* Pixels per arm given ivar 0 by the clip stage ([fit] clip): far
     * above the model; npix[] no longer counts them. */
    long nclip[RVFIT_MAX_ARMS];
} rvfit_result;

/* Stages of the profile.  READ (reading and preparing input) and WRITE
 * overlap the fit when a run reads ahead; WAIT is the time the fit spent
 * waiting for input. */
enum rvfit_stage_id {
    RVFIT_ST_READ = 0, RVFIT_ST_INIT, RVFIT_ST_OPTIM, RVFIT_ST_VREFINE,
    RVFIT_ST_CLIP,
    RVFIT_ST_HESSIAN, RVFIT_ST_DIAG, RVFIT_ST_WRITE, RVFIT_ST_WAIT,
    RVFIT_NSTAGE
};

/* Per-stage profile, accumulated across batches. */
typedef struct rvfit_profile {
    double seconds[RVFIT_NSTAGE];
    uint64_t points[RVFIT_NSTAGE];
    uint64_t calls[RVFIT_NSTAGE];
    uint64_t spectra;
    /* Seconds of load_batch inside the fit (the clip stage's reloads),
     * part of seconds[RVFIT_ST_CLIP]: host work of the backend, not of
     * the driver. */
    double reload_seconds;
} rvfit_profile;

RVFIT_EXPORT const char *rvfit_stage_label(int stage);

/* Fitting options derived from the config. */
typedef struct rvfit_fit_opts {
    double vmin, vmax, ccf_vstep, vsini_max;
    int fit_vsini;
    int max_iter;
    int scale_errors;   /* statistical errors times sqrt(chisq_red)     */
    rvfit_model_opts model;
    /* The library's interpolator: the core sends its stencils when
     * host_stencils is set (otherwise the backend computes them from
     * theta), and the interpolation-error term of the parameter errors
     * needs it (NULL: no such term). */
    const rvfit_interpolator *interp;
    /* Non-zero (read before every backend call) stops rvfit_fit_batch
     * with RVFIT_ERR_CANCELLED; may be NULL.  rvfit_run sets its own. */
    const volatile int *cancel;
    /* Non-zero: add the template-interpolation error to the parameter
     * errors (param_err_interp; needs interp and backend ops 1.1). */
    int interp_errors;
    /* Non-zero: joint fits test each spectrum for a second velocity
     * (rvfit_fit_joint, rvfit_sb2). */
    int sb2;
    /* Pixels more than clip sigma above the best-fit model get ivar 0
     * and their spectra are re-optimised (0: none).  The backend's
     * resident batch then has those pixels at ivar 0 when the fit
     * returns, and the batch's flux and resolution data must still be
     * there when the fit starts (the clip stage reloads it). */
    double clip;
    /* Optimiser starts per spectrum (object), 1 .. RVFIT_MAX_STARTS
     * (rvfit/config.h): the lowest nodes of stage 1's lattice, each
     * optimised, the lowest result kept; 0 means RVFIT_STARTS. */
    int starts;
    /* Threads for the driver's own per-spectrum work between backend
     * calls (a pool per batch): 0 or 1 the calling thread alone, -1 as
     * rvfit_host.nthreads.  The results do not depend on it.  Added
     * last. */
    int driver_threads;
} rvfit_fit_opts;

RVFIT_EXPORT int rvfit_fit_opts_from_config(const rvfit_config *c,
                                            rvfit_fit_opts *o,
                                            rvfit_err *err);

/* Fit every spectrum of batch b (already preprocessed and loaded into the
 * backend).  res[nspec]; models, when not NULL, is [narm] arrays of
 * nspec*npix floats receiving the best-fit models. */
RVFIT_EXPORT int rvfit_fit_batch(rvfit_backend *be, const rvfit_library *lib,
                                 const rvfit_batch *b,
                                 const rvfit_fit_opts *o, rvfit_result *res,
                                 float *const *models, rvfit_profile *prof,
                                 const rvfit_host *host, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
