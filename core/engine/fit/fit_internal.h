/* fit_internal.h — state shared by the fit stages: the driver (fit.c)
 * runs the stages, which reach the backend only through fit_eval.c (and
 * fit_group.c for the points of an object).  The fit part's internal
 * header: the joint part (several exposures of an object) runs these
 * stages with its own last stage. */
#ifndef RVFIT_FIT_INTERNAL_H
#define RVFIT_FIT_INTERNAL_H

#include "rvfit/fit.h"
#include "rvfit/pool.h"

/* The spectra of each object of a batch (fit_group.c) and the scratch of
 * the expansion of an object's points. */
typedef struct fit_group {
    size_t nobj;
    size_t *obj;                  /* [nspec] object of each spectrum   */
    size_t *off, *mem;            /* usable spectra of object o:
                                     mem[off[o] .. off[o+1]-1]          */
    rvfit_point *pts;             /* expanded points, reused           */
    double *m;
    size_t cap_pts, cap_m;
    uint32_t *st_off, *st_idx;    /* expanded stencil tables, reused   */
    double *st_w, *st_pen;
    size_t cap_off, cap_idx, cap_w, cap_pen;
} fit_group;

typedef struct fit_ctx {
    rvfit_backend *be;
    const rvfit_library *lib;
    const rvfit_batch *b;
    const rvfit_fit_opts *o;
    rvfit_profile *prof;
    const rvfit_host *host;
    rvfit_err *err;
    /* The host's threads for the driver's per-item work between backend
     * calls (fit_for), or NULL: one thread.  A GPU waits for that work. */
    rvfit_pool *pool;
    int nfree;                    /* axes with more than one node      */
    int free_axis[RVFIT_MAX_PARAMS];
    double step[RVFIT_MAX_PARAMS];  /* mean node spacing, scaled units */
    double lo[RVFIT_MAX_PARAMS], hi[RVFIT_MAX_PARAMS];
    size_t nact;                  /* spectra being fitted              */
    size_t *act;                  /* their batch indices               */
    /* Objects of several spectra (rvfit_fit_joint): with grp set, the
     * stages that fit the stellar parameters (lattice, optimise,
     * hessian and its error terms) see one item per object: act[i] is
     * the first usable spectrum of object i, whose best[] holds the
     * object's theta and vsini and fbest[] its -2 ln L, and their points
     * go through fit_chisq_obj, which evaluates each for every usable
     * spectrum of the object at that spectrum's velocity and sums.  The
     * stages of the velocities (initial scan, vrefine, diagnostics) work
     * on the spectra, xact.  Without groups (grp NULL) xact == act. */
    size_t nxact;
    size_t *xact;
    const fit_group *grp;
    fit_group grp_store;
    rvfit_point *best;            /* [nspec] current best point        */
    double *fbest;                /* [nspec]                           */
    /* Starts of stage 2, the lowest nodes of stage 1's lattice
     * (stage_init.c): item i (act[i]) has nstart[i] of them,
     * start[i * RVFIT_MAX_STARTS + k] with -2 ln L fstart[...], lowest
     * first (also best[act[i]]); nstart NULL: one run from best[]
     * (fit_stage_optim_warm). */
    rvfit_point *start;
    double *fstart;
    int *nstart;
    double *verr, *vskew, *vkurt; /* [nspec] from velocity refinement  */
    uint64_t *npts;               /* [nspec] points asked for each     */
    const rvfit_interpolator *hs;       /* stencils from the core, or NULL   */
    rvfit_stencil_buf sbuf;       /* their buffers, reused per call    */
    int cur_stage;
    rvfit_result *res;            /* [nspec] the caller's results       */
    float *const *models;         /* [narm] best-fit models, or NULL   */
    /* The clip stage's batch: the caller's with the arms' ivar replaced
     * by copies (clip_ivar[a], owned; NULL: the arm is the caller's)
     * whose rejected pixels are 0.  b points here once a pixel is
     * rejected, so that every later stage counts the pixels used. */
    rvfit_batch clipb;
    float *clip_ivar[RVFIT_MAX_ARMS];
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
/* Best-fit models (continuum included) of n points into model[arm], and
 * the continuum alone into cont[arm] unless cont is NULL (laid out as the
 * backend's models: point q's pixels at q * npix of the batch arm). */
int fit_models(fit_ctx *f, size_t n, const rvfit_point *pts,
               float *const *model, float *const *cont);

/* The same for points that stand for objects (fit_group.c): point i
 * (spec = an object's act[] spectrum) is evaluated for every usable
 * spectrum of its object at that spectrum's best velocity and
 * m2lnl[i] is the sum; fit_chisq / fit_chisq_st without groups. */
int fit_chisq_obj(fit_ctx *f, size_t n, const rvfit_point *pts,
                  double *m2lnl);
int fit_chisq_obj_st(fit_ctx *f, size_t n, const rvfit_point *pts,
                     const rvfit_stencils *st, double *m2lnl);
/* Groups from object row ranges: object o is batch rows obj_off[o] ..
 * obj_off[o+1]-1 (obj_off[0] == 0, obj_off[nobj] == nspec); sets act,
 * xact and grp.  fit_group_free releases them (with f->act kept). */
int fit_group_setup(fit_ctx *f, size_t nobj, const size_t *obj_off);
void fit_group_free(fit_ctx *f);
/* Copy each object's theta and vsini (best[]) / its parameter errors and
 * BAD_HESSIAN (res[]) from act[] to the object's other spectra; nothing
 * without groups. */
void fit_group_sync(fit_ctx *f);
/* Usable spectra of the object spectrum s belongs to (1 without groups). */
size_t fit_group_size(const fit_ctx *f, size_t s);
/* The usable spectra of the object *s belongs to (without groups: *s
 * alone, *mem = s); their count.  The first is the object's act[]
 * spectrum. */
size_t fit_group_members(const fit_ctx *f, const size_t *s,
                         const size_t **mem);
void fit_group_sync_errors(fit_ctx *f);

/* fn(ctx, tid, i) for i = 0..n-1 on the driver's threads (tid <
 * fit_nthreads(f)), or on this one.  Each item may write only what
 * belongs to its index, so that results do not depend on the threads
 * (rvfit/pool.h). */
void fit_for(const fit_ctx *f, size_t n, rvfit_pool_fn fn, void *ctx);
int fit_nthreads(const fit_ctx *f);

/* Sets the out-of-memory error; returns its status. */
int fit_nomem(fit_ctx *f);

/* The driver (fit.c), in the order a fit uses it: fit_begin checks the
 * backend against the interpolator, allocates the state, makes act[]
 * every usable spectrum (xact == act) and the results of the others;
 * fit_run_stages runs a table of stages, timing each into its profile
 * entry (nothing when no spectrum is usable); fit_end leaves NaN models
 * for spectra not fitted, the points and prep warnings in the results,
 * frees the state and returns rc. */
typedef struct fit_stage {
    int id;                  /* enum rvfit_stage_id */
    int (*run)(fit_ctx *f);
} fit_stage;
#define FIT_NSTAGES 6
extern const fit_stage fit_stages[FIT_NSTAGES]; /* a single fit's */
int fit_begin(fit_ctx *f);
int fit_run_stages(fit_ctx *f, const fit_stage *st, size_t n);
int fit_end(fit_ctx *f, int rc);

/* The stages (stage_*.c), in the order fit.c runs them. */
int fit_stage_init(fit_ctx *f);
int fit_stage_optim(fit_ctx *f);
/* Stage 2 again for the objects sub[0..nr) (act[] spectra), each one run
 * warm from best[] (no lattice starts), at most max_iter models each
 * where it is the Newton method. */
int fit_stage_optim_warm(fit_ctx *f, size_t *sub, size_t nr, int max_iter);
int fit_stage_vrefine(fit_ctx *f);
int fit_stage_clip(fit_ctx *f);
int fit_stage_hessian(fit_ctx *f);
int fit_stage_diag(fit_ctx *f);

/* Stage 5's evaluations (stage_diag.c): chi^2 per arm at the optimum
 * and of the continuum alone into the results of the spectra xact, and
 * their models; the nx points px join the same chisq call (-2 ln L into
 * mx).  fit_stage_diag is this with no extra points, then
 * fit_result_finish for every spectrum. */
int fit_diag_eval(fit_ctx *f, size_t nx, const rvfit_point *px, double *mx);

/* The velocity posterior of a scan (stage_vrefine.c): m (-2 ln L) at
 * the n increasing, evenly spaced velocities v.  fit_vscan_mode: the
 * minimum of the cubic through the four points around index k (the
 * lowest), or of the parabola; fit_vscan_moments: sigma, skewness and
 * excess kurtosis of p ~ exp(-m/2) about vhat. */
double fit_vscan_mode(const double *v, const double *m, size_t n, size_t k);
void fit_vscan_moments(const double *v, const double *m, size_t n,
                       double vhat, double *sig, double *skew, double *kurt);

/* Results (fit_result.c): a spectrum not fitted, one fitted (from
 * f->best and the stages' velocity moments), and the warning bits of
 * rvfit_prep_batch's flags. */
void fit_result_bad(const fit_ctx *f, rvfit_result *r, size_t s);
void fit_result_finish(const fit_ctx *f, rvfit_result *r, size_t s);
uint32_t fit_result_prep_warn(uint32_t flags);
/* CHISQ_RED of r (chisq_tot, npix_tot set) for narm_used arms with
 * pixels and nvel fitted velocities, and its errors: statistical part
 * (param_err, vrad_err) scaled by sqrt(CHISQ_RED) with scale_errors, the
 * interpolation part (param_err_interp) added in quadrature. */
void fit_result_reduce(const fit_ctx *f, rvfit_result *r, int narm_used,
                       int nvel);

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
