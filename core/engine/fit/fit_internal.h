/* fit_internal.h — state shared by the fit stages (private to the fit
 * part): the driver (fit.c) runs the stages, which reach the backend only
 * through fit_eval.c. */
#ifndef RVFIT_FIT_INTERNAL_H
#define RVFIT_FIT_INTERNAL_H

#include "rvfit/fit.h"

typedef struct fit_ctx {
    rvfit_backend *be;
    const rvfit_library *lib;
    const rvfit_batch *b;
    const rvfit_fit_opts *o;
    rvfit_profile *prof;
    const rvfit_host *host;
    rvfit_err *err;
    int nfree;                    /* axes with more than one node      */
    int free_axis[RVFIT_MAX_PARAMS];
    double step[RVFIT_MAX_PARAMS];  /* mean node spacing, scaled units */
    double lo[RVFIT_MAX_PARAMS], hi[RVFIT_MAX_PARAMS];
    size_t nact;                  /* spectra being fitted              */
    size_t *act;                  /* their batch indices               */
    rvfit_point *best;            /* [nspec] current best point        */
    double *fbest;                /* [nspec]                           */
    double *verr, *vskew, *vkurt; /* [nspec] from velocity refinement  */
    uint64_t *npts;               /* [nspec] points asked for each     */
    const rvfit_interpolator *hs;       /* stencils from the core, or NULL   */
    rvfit_stencil_buf sbuf;       /* their buffers, reused per call    */
    int cur_stage;
    rvfit_result *res;            /* [nspec] the caller's results       */
    float *const *models;         /* [narm] best-fit models, or NULL   */
} fit_ctx;

/* Backend calls (fit_eval.c) with the core-side penalties (velocity
 * range, vsini) and accounting of points into the current stage. */
int fit_chisq(fit_ctx *f, size_t n, const rvfit_point *pts, double *m2lnl,
              double *chisq_arm);
/* The same with the stencils st (backend ops 1.1), no per-arm chi^2. */
int fit_chisq_st(fit_ctx *f, size_t n, const rvfit_point *pts,
                 const rvfit_stencils *st, double *m2lnl);
int fit_vscan(fit_ctx *f, size_t nq, const rvfit_point *base, size_t nvel,
              const double *vel, double *m2lnl);
/* Best-fit models (continuum included) of n points into model[arm]. */
int fit_models(fit_ctx *f, size_t n, const rvfit_point *pts,
               float *const *model);

/* Sets the out-of-memory error; returns its status. */
int fit_nomem(fit_ctx *f);

/* The stages (stage_*.c), in the order fit.c runs them. */
int fit_stage_init(fit_ctx *f);
int fit_stage_optim(fit_ctx *f);
int fit_stage_vrefine(fit_ctx *f);
int fit_stage_hessian(fit_ctx *f);
int fit_stage_diag(fit_ctx *f);

/* Results (fit_result.c): a spectrum not fitted, one fitted (from
 * f->best and the stages' velocity moments), and the warning bits of
 * rvfit_prep_batch's flags. */
void fit_result_bad(const fit_ctx *f, rvfit_result *r, size_t s);
void fit_result_finish(const fit_ctx *f, rvfit_result *r, size_t s);
uint32_t fit_result_prep_warn(uint32_t flags);

/* The template-interpolation part of the parameter covariance
 * (err_interp.c): for the nact spectra, given the Hessian stencil of
 * stage_hessian.c — its centres c and steps h [nact*nfree], its -2 ln L
 * values m0 [nact*ns], and the inverse Hessians hinv [nact*nfree^2] of
 * -ln L (ok[i] = 0: none) — the variance of each free axis in scaled
 * units^2 into var [nact*nfree], NaN where not computed. */
int fit_interp_var(fit_ctx *f, const double *c, const double *h,
                   const double *m0, int ns, const double *hinv,
                   const int *ok, double *var);

/* Adds to var [nact*nfree] (scaled units^2; a NaN there counts as 0)
 * the variance of the smooth minimum of a fit held on an inner node by
 * the interpolant's kink (err_pin.c), from the Hessian stencil's steps h,
 * inverse Hessians hinv and Hessian diagonals diag of the spectra with
 * have[i]. */
int fit_pin_var(fit_ctx *f, const double *h, const double *hinv,
                const double *diag, const int *have, double *var);

#endif
