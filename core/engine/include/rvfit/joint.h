/* rvfit/joint.h — several spectra of one star fitted together (`[fit]
 * epochs = joint`): one Teff, logg, [Fe/H], [alpha/Fe] and vsini per
 * object, one velocity and one continuum per spectrum (exposure) and
 * arm, and alongside the fit of one constant velocity, with the chi^2 of
 * the exposures' velocities about it and its p-value.
 *
 * rvfit_fit_joint runs the stages of rvfit_fit_batch (rvfit/fit.h) for
 * every object of a batch in lockstep: each point of the stages that fit
 * the stellar parameters stands for an object and is evaluated for each
 * of its spectra at that spectrum's own velocity in the same backend call
 * (the batch is (object, exposure, point)); the velocity stages work on
 * the spectra.  Its last stage adds the constant-velocity scan of each
 * object to the diagnostics' backend call.  An object of one spectrum
 * gets exactly the numbers rvfit_fit_batch gives that spectrum.
 *
 * Units: velocities km/s; parameters physical (K, dex).
 * Ownership: results and models are caller-allocated.
 * Thread-safety: one driver per backend handle.
 */
#ifndef RVFIT_JOINT_H
#define RVFIT_JOINT_H

#include <stddef.h>

#include "rvfit/fit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One object of a joint fit.  r holds: the joint parameters (vsini,
 * param, param_err, param_err_interp, their warning bits); VRAD,
 * VRAD_ERR, VRAD_SKEW and VRAD_KURT of the constant-velocity fit (the
 * posterior of one velocity shared by the exposures, the joint
 * parameters held); chi^2 per arm, CHISQ_TOT, CHISQ_C_TOT, NPIX_TOT and
 * m2lnl summed over its fitted spectra and CHISQ_RED over their degrees
 * of freedom (one velocity each); S/N per arm sqrt(sum SN^2) over them;
 * the points spent on them.  An object whose spectra are all unusable
 * has NaN values and RVFIT_WARN_BAD_SPECTRUM. */
typedef struct rvfit_joint_result {
    rvfit_result r;
    int nepoch;           /* spectra fitted (usable)                     */
    /* sum over the nepoch spectra of ((v_k - vbar) / err_k)^2, vbar the
     * error-weighted mean of their velocities v_k (VRAD of each with its
     * VRAD_ERR err_k); NaN for fewer than two */
    double vrad_chisq;
    double vrad_pvalue;   /* P(chi^2_{nepoch-1} >= vrad_chisq); NaN below 2 */
    double vrad_scatter;  /* sample standard deviation of the v_k, km/s;
                             NaN below 2                                */
} rvfit_joint_result;

/* The two-velocity test of one spectrum ([fit] sb2 = 1): the object's
 * template at the spectrum's VRAD plus a second copy at vrad2 carrying
 * a fraction fratio / (1 + fratio) of the light, against the single
 * template (docs/output-format.md, RVEPOCH SB2_*).  NaN when not
 * computed. */
typedef struct rvfit_sb2 {
    double dchisq;        /* -2 ln L(one velocity) - -2 ln L(two) >= 0  */
    double vrad2;         /* the secondary's velocity, km/s             */
    double fratio;        /* its light relative to the primary's        */
} rvfit_sb2;

/* Fit the objects of batch b (already preprocessed and loaded into the
 * backend): object o is batch rows obj_off[o] .. obj_off[o+1]-1
 * (obj_off[0] == 0, obj_off[nobj] == b->nspec, rows of an object
 * consecutive).  res[nspec] receives each spectrum's result (its own
 * velocity, VRAD_ERR, chi^2 and S/N per arm, the object's parameters),
 * jres[nobj] each object's; models, when not NULL, is [narm] arrays of
 * nspec*npix floats receiving each spectrum's best-fit model.  sb2, when
 * not NULL and o->sb2 is set, receives each spectrum's two-velocity test
 * ([nspec]; the batch's flux must still be there) and RVFIT_WARN_SB2 goes
 * into the spectra's and their objects' warning bits. */
RVFIT_EXPORT int rvfit_fit_joint(rvfit_backend *be, const rvfit_library *lib,
                                 const rvfit_batch *b, size_t nobj,
                                 const size_t *obj_off,
                                 const rvfit_fit_opts *o, rvfit_result *res,
                                 rvfit_joint_result *jres, rvfit_sb2 *sb2,
                                 float *const *models, rvfit_profile *prof,
                                 const rvfit_host *host, rvfit_err *err);

/* Upper tail P(X >= chi2) of the chi^2 distribution with dof > 0
 * degrees of freedom (closed forms through erfc and finite sums); NaN
 * for dof < 1 or a negative or NaN chi2.  Reentrant. */
RVFIT_EXPORT double rvfit_chi2_pvalue(double chi2, int dof);

/* The constant-velocity statistics of n velocities v with errors err
 * (entries with a non-finite or non-positive error are left out): the
 * chi^2 about their error-weighted mean, its p-value and the sample
 * standard deviation (NaN each below two usable); *nused receives the
 * count used.  Reentrant. */
RVFIT_EXPORT void rvfit_vrad_constancy(const double *v, const double *err,
                                       size_t n, double *chisq,
                                       double *pvalue, double *scatter,
                                       int *nused);

#ifdef __cplusplus
}
#endif
#endif
