/* rvfit-indep: a synthetic-data generator written independently of rvfit.
 *
 * It shares no code with rvfit (no rvfit header, no rvfit library: only
 * CFITSIO, libm and pthreads), so that a convention error made by rvfit's own
 * generator and fitter alike cannot cancel in a test built on these data.
 * Everything here is internal to the generator (prefix ind_); nothing is
 * installed.  Units: wavelengths in vacuum Angstrom, velocities in km/s,
 * model flux in erg/s/cm^2/cm (PHOENIX), observed flux in 1e-17
 * erg/s/cm^2/A (DESI).  All functions are thread-safe: state lives in the
 * arguments, never in globals.  Functions returning int give 0 on success and
 * -1 on failure with the reason in the caller's ind_err.
 */
#ifndef INDEP_H
#define INDEP_H

#include <stddef.h>
#include <stdint.h>

#define IND_C_KMS 299792.458
#define IND_SQRTPI 1.7724538509055159
#define IND_PI 3.14159265358979323846
#define IND_SQRT2 1.41421356237309504880
#define IND_LN10 2.30258509299404568402

typedef struct { char msg[1024]; } ind_err;
int ind_fail(ind_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- random numbers (xoshiro256**, seeded by splitmix64) ---------------- */
typedef struct { uint64_t s[4]; } ind_rng;
/* One independent stream per (a, b, c), e.g. (seed, star, purpose). */
void ind_rng_seed(ind_rng *r, uint64_t a, uint64_t b, uint64_t c);
double ind_rng_uniform(ind_rng *r);            /* [0, 1) */
double ind_rng_normal(ind_rng *r);
unsigned ind_rng_poisson(ind_rng *r, double mean);

/* ---- Voigt profile ------------------------------------------------------ */
/* H(a, v) = Re w(v + i a), Humlicek's (1982) W4 rational approximation;
 * a >= 0.  H(0, v) = exp(-v^2); integral over v is sqrt(pi). */
double ind_voigt_h(double a, double v);
/* Area-normalised Voigt profile (1/A) at offset dl (A) for Doppler width
 * dld (A, the 1/e half width) and Lorentzian half width at half maximum gl. */
double ind_voigt_profile(double dl, double dld, double gl);

/* ---- stellar parameters and atmosphere proxies -------------------------- */
typedef struct { double teff, logg, feh, alpha; } ind_star;

typedef struct {
    double theta;   /* 5040 / Teff */
    double logpe;   /* log10 electron pressure (cgs) */
    double logpg;   /* log10 gas pressure (cgs) */
    double logkap;  /* log10 continuum opacity relative to the Sun */
    double xi;      /* microturbulence, km/s */
    double zeta;    /* macroturbulence, km/s (folded into the opacity) */
    double smetal;  /* line source-function floor, metals and molecules */
    double shyd;    /* line source-function floor, hydrogen */
} ind_atmos;

extern const ind_star ind_sun;
void ind_atmos_make(const ind_star *s, ind_atmos *a);
/* Fraction of an element in ionisation stage 0 or 1 (Saha, two stages);
 * ip in eV, u = U1/U0 the partition-function ratio. */
double ind_ion_fraction(const ind_star *s, const ind_atmos *a, double ip,
                        double u, int stage);
/* Continuum surface flux pi*B_lambda(Teff) with Balmer jump and blue
 * line haze, erg/s/cm^2/cm, at vacuum wavelength lam (A). */
double ind_continuum(const ind_star *s, const ind_atmos *a, double lam);

/* ---- line list ---------------------------------------------------------- */
enum { IND_ATOM, IND_HYD, IND_MOL };
typedef struct {
    const char *name;
    double mass;    /* amu */
    int kind;       /* IND_ATOM, IND_HYD, IND_MOL */
    int nmetal;     /* metal atoms: strength scales as 10^(nmetal [Fe/H]) */
    int nalpha;     /* alpha atoms among them: 10^(nalpha [alpha/Fe]) */
    double ip, u;   /* ionisation potential (eV), U1/U0 (atoms, H) */
    int stage;      /* 0 neutral, 1 singly ionised */
    double dslope;  /* molecules: dex per unit theta (dissociation) */
    double gexp;    /* molecules: dex per dex of g (pressure) */
} ind_species;

typedef struct {
    double lam;             /* vacuum A */
    float logw0;            /* log10 opacity area W0 (A) at the Sun */
    float chi;              /* excitation (eV): Boltzmann slope */
    float grad, gvdw, gstark; /* Lorentz HWHM (A) at the Sun by mechanism */
    float half;             /* fixed window half width (A) */
    float rotj, rotj0;      /* molecules: rotational level, band J0 */
    int species;            /* index into ind_species_table() */
} ind_line;

typedef struct { ind_line *line; size_t n; } ind_linelist;

const ind_species *ind_species_table(size_t *n);
/* The line list of one model universe: the same seed always gives the same
 * list, which both the grid and the spectra must share. */
int ind_linelist_build(uint64_t seed, ind_linelist *ll, ind_err *e);
void ind_linelist_free(ind_linelist *ll);

/* ---- high-resolution spectrum -------------------------------------------- */
/* A uniform grid in ln(lambda): lam[k] = exp(lnl0 + k dlnl). */
typedef struct { double lnl0, dlnl; size_t n; double *lam; } ind_hgrid;
int ind_hgrid_make(ind_hgrid *g, double lam_lo, double lam_hi, double dlnl,
                   ind_err *e);
void ind_hgrid_free(ind_hgrid *g);
/* Emergent flux (erg/s/cm^2/cm) of star s at the grid's wavelengths.
 * work: 2 * g->n doubles. */
void ind_spectrum(const ind_linelist *ll, const ind_star *s,
                  const ind_hgrid *g, double *flux, double *work);
/* The same with the continuum divided out (for checks). */
void ind_spectrum_norm(const ind_linelist *ll, const ind_star *s,
                       const ind_hgrid *g, double *flux, double *work);

/* ---- observation --------------------------------------------------------- */
/* ln(lambda_obs / lambda_emit) for radial velocity v: atanh(v/c). */
double ind_doppler_lnshift(double v);
/* Rotation kernel (Gray, linear limb darkening eps) for a piecewise-linear
 * signal on a grid of step dlnl: w[0..2*half], half <= maxhalf. */
int ind_rot_weights(double vsini, double eps, double dlnl, double *w,
                    int maxhalf, int *half);
double ind_rot_kernel(double x, double eps);   /* on [-1, 1], area 1 */
void ind_convolve(const double *in, double *out, size_t n, const double *w,
                  int half);
/* Mean of the piecewise-linear signal f over [a, b] (A); cum is the
 * running trapezoid integral of f (from ind_cumulate). */
void ind_cumulate(const ind_hgrid *g, const double *f, double *cum);
double ind_bin_mean(const ind_hgrid *g, const double *f, const double *cum,
                    double a, double b);

/* Gram-Charlier (Gauss-Hermite with probabilists' polynomials) LSF:
 * L(u) = phi(y)/s [1 + h3 He3(y)/sqrt6 + h4 He4(y)/sqrt24], y = u/s,
 * u = lambda_detector - lambda_source.  Area 1, mean 0, variance s^2,
 * skewness sqrt6 h3, excess kurtosis sqrt24 h4, exactly. */
double ind_lsf(double u, double s, double h3, double h4);
double ind_lsf_cdf(double y, double h3, double h4);
#define IND_NDIAG 11
/* Row of the resolution matrix for one output pixel of width dpix:
 * row[d + 5] = weight of source pixel i + d = integral of L over that
 * pixel.  Sums to 1 up to the tail beyond 5.5 pixels. */
void ind_lsf_row(double s, double h3, double h4, double dpix,
                 double row[IND_NDIAG]);

#endif
