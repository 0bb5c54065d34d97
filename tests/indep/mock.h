/* Stars, presets and the per-star observation of rvfit-indep.  Internal to
 * the generator (see indep.h for conventions). */
#ifndef INDEP_MOCK_H
#define INDEP_MOCK_H

#include "instrument.h"

typedef struct {
    const char *name;
    double t0, t1, tstep;   /* Teff grid */
    double g0, g1, gstep;   /* logg grid */
    double f0, f1, fstep;   /* [Fe/H] grid */
    double a0, a1, astep;   /* [alpha/Fe] grid */
    double dlnl;            /* template sampling */
} ind_preset;

const ind_preset *ind_preset_find(const char *name);

/* Ablation switches (all 0 = the full observation model) turn single
 * effects off to find which one limits a fitter. */
enum { IND_NO_COSMICS = 1, IND_NO_SKYRES = 2, IND_NO_DISTORTION = 4,
       IND_GAUSS_LSF = 8, IND_ON_NODES = 16, IND_NO_ROTATION = 32 };
typedef struct {
    double snr_min, snr_max, vmax, vsini_max;
    unsigned ablate;             /* IND_NO_* / IND_GAUSS_LSF / IND_ON_NODES */
} ind_mockopts;

/* Everything drawn for one star (stream (seed, star, 1)). */
typedef struct {
    ind_star p;
    double vrad, vsini, snr;
    double fmed;                 /* median R-arm flux, 1e-17 erg/s/cm^2/A */
    ind_fibre fib;               /* fibre LSF */
    double cosmic_rate;          /* mean cosmic-ray events per arm */
    double dist[IND_NARM][4];    /* calibration distortion (Legendre) */
    double skyres[IND_NARM];     /* sky-subtraction scale error */
    double ra, dec;
} ind_draw;

void ind_draw_star(uint64_t seed, size_t i, const ind_preset *ps,
                   const ind_mockopts *o, ind_draw *d);

typedef struct {
    const ind_linelist *ll;
    ind_hgrid g;                 /* observed-frame high-resolution grid */
    double rn2;                  /* read noise variance per pixel, e-^2 */
} ind_obsctx;

int ind_obsctx_make(ind_obsctx *c, const ind_linelist *ll, double vsini_max,
                    ind_err *e);
void ind_obsctx_free(ind_obsctx *c);

/* Scratch space of one worker: high-resolution arrays, then per-arm pixel
 * arrays, all in one allocation. */
typedef struct {
    double *hires;               /* 4 n: ind_hires_observed */
    double *spec, *cum;          /* n each */
    double *model[IND_NARM], *sky[IND_NARM], *skyl[IND_NARM],
           *resp[IND_NARM];
    double *all;                 /* all arm pixels together (medians) */
    double *scratch;             /* ind_arm_observe */
    double *buf;
} ind_work;
int ind_work_make(ind_work *w, const ind_obsctx *c, ind_err *e);
void ind_work_free(ind_work *w);

/* Caller-provided output buffers of one star (n = arm pixels). */
typedef struct {
    float *flux[IND_NARM], *ivar[IND_NARM], *res[IND_NARM];
    int32_t *mask[IND_NARM];
    double snr_med[IND_NARM], flux_med[IND_NARM], flux_int[IND_NARM];
    double snr_true;             /* median noiseless S/N, all arms */
} ind_obs;

#define IND_MASK_COSMIC 4        /* DESI SPECMASK bit 2 */

int ind_observe(const ind_obsctx *c, const ind_draw *d, uint64_t seed,
                size_t i, ind_obs *o, ind_work *w, ind_err *e);
/* The noiseless detector pixels of every arm (w->model, before the flux
 * scale) of the star d describes; -1 when its vsini is too large. */
int ind_model_pixels(const ind_obsctx *c, const ind_draw *d, ind_work *w);
/* The factor that brings the median R-arm pixel of w->model to d->fmed
 * (w->all is overwritten). */
double ind_flux_scale(const ind_draw *d, ind_work *w);
/* Calibration distortion 1 + sum c_k P_k(x) at x in [-1, 1]. */
double ind_distortion(const double *cf, double x);

/* Rest-frame spectrum source for ind_hires_observed. */
typedef void (*ind_source_fn)(void *ctx, const ind_hgrid *rest, double *flux,
                              double *work);
/* The spectrum seen at the observed-frame grid obs of a star moving at v
 * with rotation vsini: the source is evaluated on the grid shifted by the
 * relativistic Doppler factor and then rotationally broadened.
 * work: 4 * obs->n doubles. */
int ind_hires_observed(const ind_hgrid *obs, double v, double vsini,
                       ind_source_fn fn, void *ctx, double *out,
                       double *work);

double ind_median(double *x, size_t n); /* reorders x */

/* The subcommands. */
int ind_grid_write(const char *dir, const ind_preset *ps, uint64_t seed,
                   int nthreads, ind_err *e);
typedef struct {
    const char *out, *truth;
    size_t nstar;
    uint64_t seed, model_seed;
    const ind_preset *ps;
    ind_mockopts o;
    int nthreads;
} ind_coadd_args;
int ind_coadd_write(const ind_coadd_args *a, ind_err *e);
/* Prints recovered-vs-true statistics per S/N bin, and with a bound file
 * (ind_bound_write) rms((fit - true) / bound) per parameter.  With
 * check_absdv > 0
 * returns 1 unless the median |VRAD - true| of the stars with S/N >
 * check_snr is below check_absdv; -1 on error. */
int ind_score(const char *rvtab, const char *truth, const char *bound,
              double check_absdv, double check_snr, ind_err *e);

#endif
