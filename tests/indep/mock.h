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
    double lam_lo, lam_hi;  /* grid range, vacuum A */
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
    /* a double-lined binary (epochs): a twin of the star at vrad2 giving
     * lratio times its light; lratio 0: none */
    double vrad2, lratio;
} ind_draw;

void ind_draw_star(uint64_t seed, size_t i, const ind_preset *ps,
                   const ind_mockopts *o, ind_draw *d);

typedef struct {
    const ind_linelist *ll;
    ind_hgrid g;                 /* observed-frame high-resolution grid */
    double rn2;                  /* read noise variance per pixel, e-^2 */
    const ind_arm *arms;         /* the spectrograph's arms             */
    int narm;
} ind_obsctx;

/* The DESI-like spectrograph. */
int ind_obsctx_make(ind_obsctx *c, const ind_linelist *ll, double vsini_max,
                    ind_err *e);
/* Any arms (narm <= IND_NARM); the high-resolution grid covers each log
 * arm `margin` pixels beyond its kernels' reach, for copies of the arms
 * moved by up to that much (ind_mrs). */
int ind_obsctx_make_arms(ind_obsctx *c, const ind_linelist *ll,
                         double vsini_max, const ind_arm *arms, int narm,
                         double margin, ind_err *e);
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
    size_t n1;                   /* pixels of arm 1 (ind_flux_scale)    */
} ind_work;
int ind_work_make(ind_work *w, const ind_obsctx *c, ind_err *e);
void ind_work_free(ind_work *w);

/* Caller-provided output buffers of one star (n = arm pixels); res[a]
 * NULL: no resolution matrix (an arm described by its LSF alone). */
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
/* The factor that brings the median pixel of arm 1 (R) of w->model to
 * d->fmed (w->all is overwritten). */
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

/* What names one row of a DESI file, and its noise stream: the noise,
 * cosmics and (for exposures) draws of row i come from streams keyed by
 * (seed, stream). */
typedef struct {
    int64_t targetid, expid;     /* expid -1: a coadd row               */
    double mjd;
    int night, tileid;
    uint64_t stream;
} ind_rowid;

/* One DESI file of n rows (draw[i], id[i]): a coadd (exposures 0, the
 * FIBERMAP of the coadds) or a per-exposure spectra- file (exposures 1:
 * FIBERSTATUS, NIGHT, EXPID, MJD, TILEID per row). */
typedef struct {
    const char *out;
    size_t n;
    const ind_draw *draw;
    const ind_rowid *id;
    int exposures;
    uint64_t seed, model_seed;   /* noise seed; recorded in the header  */
    const ind_preset *ps;
    unsigned ablate;
    int nthreads;
} ind_file;
int ind_file_write(const ind_file *f, const ind_obsctx *c, ind_err *e);

/* `epochs` (epochs.c): nstar stars of nexp_min..nexp_max exposures each
 * over nfile spectra- files in outdir, a binary_frac of them single-lined
 * binaries (K1 log-uniform in [k_min, k_max] km/s, period log-uniform in
 * [p_min, p_max] d, eccentricity uniform in [0, 0.6]), epochs uniform
 * over span days; the truth file has TRUTH (stars) and EXPTRUTH. */
typedef struct {
    const char *outdir, *truth;
    size_t nstar;
    uint64_t seed, model_seed;
    const ind_preset *ps;
    ind_mockopts o;
    int nexp_min, nexp_max, nfile;
    double binary_frac, k_min, k_max, p_min, p_max, span;
    int nthreads;
    double sb2_frac;             /* of the binaries: double-lined       */
} ind_epochs_args;
int ind_epochs_write(const ind_epochs_args *a, ind_err *e);
/* Star s's number of epochs (in [nexp_min, nexp_max]) and orbit, from the
 * stream (seed, s, 4): a binary_frac of stars are binaries (K1
 * log-uniform in [k_min, k_max] km/s, period log-uniform in [p_min,
 * p_max] d, e uniform in [0, 0.6], omega uniform, periastron t0 within a
 * period of MJD 59000), a sb2_frac of those double-lined twins. */
typedef struct {
    int nexp, binary, sb2;
    double k1, period, ecc, omega, t0; /* km/s, d, -, rad, MJD */
    double qm, lratio;                 /* SB2: mass and light ratio  */
} ind_orbit;
void ind_orbit_draw(const ind_epochs_args *a, size_t s, ind_orbit *o);
/* Radial velocity (km/s) at MJD t of a Keplerian orbit: systemic gamma,
 * semi-amplitude k, period (d), eccentricity, argument of periastron
 * omega (rad), time of periastron t0 (MJD). */
double ind_kepler_rv(double gamma, double k, double period, double ecc,
                     double omega, double t0, double t);
/* `score-epochs` (score_epochs.c): the joint rvtab against the epochs
 * truth, optionally the single fits of the same spectra (nsingle rvtabs);
 * with checks set (ck != NULL) returns 1 when one fails. */
typedef struct {
    double ks_p;                 /* KS p-value of VRAD_PVALUE must exceed */
    double frac_lo, frac_hi;     /* fraction below 0.001 in [lo, hi]      */
    double pull_lo, pull_hi;     /* per-exposure pull widths per S/N bin
                                    and of all bins together ...          */
    int joint_better;            /* bits TEFF, LOGG, FEH: joint scatter
                                    below single's                        */
    double complete_k;           /* completeness at K1/sigma >= this ...  */
    double complete_min;         /* ... at least this (0: not checked)    */
    double pull_min_n;           /* ... where they hold this many         */
} ind_epoch_checks;
/* --joint-better[=LIST]: bit p for TEFF, LOGG, FEH (p = 0, 1, 2) as
 * named, comma-separated; all three for NULL; 0 when a name is none of
 * them. */
int ind_joint_mask(const char *list);
int ind_score_epochs(const char *rvtab, const char *truth,
                     char *const *single, int nsingle,
                     const ind_epoch_checks *ck, ind_err *e);
/* Prints recovered-vs-true statistics per S/N bin, and with a bound file
 * (ind_bound_write) rms((fit - true) / bound) per parameter.  With
 * check_absdv > 0
 * returns 1 unless the median |VRAD - true| of the stars with S/N >
 * check_snr is below check_absdv; with check_par[k] > 0 (k: TEFF, LOGG,
 * FEH) returns 1 when any star's |fit - true| of that parameter exceeds
 * it (each such star printed); -1 on error. */
int ind_score(const char *rvtab, const char *truth, const char *bound,
              double check_absdv, double check_snr, const double *check_par,
              ind_err *e);

#endif
