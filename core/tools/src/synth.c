/* synth.c — the analytic, line-rich stellar spectrum (rvfit_synth_flux)
 * and the observed-frame truth callback (rvfit_synth_truth).
 *
 * Model: F(lambda) = C(lambda) * exp(-sum_k tau_k(lambda)).
 * C is pi*B_lambda(Teff) times a smooth Balmer jump and a mild
 * metallicity-dependent blanketing term.  Each line k has a central optical
 * depth tau0_k (theta) and a Voigt-like profile: a Gaussian core (thermal +
 * micro + macro turbulence) plus Lorentzian damping wings with a Gaussian
 * taper.  Each line is evaluated inside a window that does NOT depend on
 * the parameters, so F is C-infinity in (Teff, logg, [Fe/H], [alpha/Fe]).
 *
 * Line strengths come from a toy LTE atmosphere: Saha ionisation with an
 * electron pressure Pe(Teff, logg), Boltzmann excitation, and a continuous
 * opacity from H- (proportional to Pe) plus hydrogen bound-free (n=3).  All
 * strengths are relative to the solar point, where the tabulated tau0 holds.
 * This gives the textbook behaviour: neutral metal lines strengthen toward
 * cool stars, ionised lines strengthen at low gravity, Balmer lines peak
 * near 9000 K, damping wings grow with gravity.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/numeric.h"
#include "rvfit/physics.h"
#include "rvfit/synth.h"

#define SYN_LN10 2.302585092994046
#define SYN_PI 3.141592653589793
#define SYN_NWEAK 4200          /* pseudo-random weak/medium lines       */
#define SYN_SEED 0x5eedc0ffee123457ull
#define SYN_LAM_LO 3400.0       /* weak lines drawn in this range (A)    */
#define SYN_LAM_HI 10200.0
#define SYN_WEAK_TAPER_KMS 25.0 /* damping-wing taper of weak lines      */
#define SYN_TAU_SAT 3.0        /* residual flux floor exp(-3) = 0.05     */
#define SYN_WINDOW 6.0          /* window = +-6 taper widths              */
#define SYN_TREF 5800.0         /* solar reference point of all strengths */
#define SYN_GREF 4.44
#define SYN_AMU_KMS2 0.0083145  /* k/amu in (km/s)^2 per K                */

enum { GRP_FE = 0, GRP_ALPHA = 1, GRP_OTHER = 2, GRP_H = 3 };

typedef struct syn_line {
    double lam;    /* vacuum Angstrom                                     */
    double tau;    /* central optical depth at the solar reference         */
    double chi;    /* excitation potential of the lower level, eV         */
    double ipot;   /* ionisation potential of the neutral, eV             */
    double mass;   /* amu, for the thermal width                          */
    double gam;    /* damping HWHM at the reference, Angstrom              */
    double taper;  /* taper width of the damping wings, Angstrom           */
    int group;
    int ion;       /* 0 neutral, 1 singly ionised                          */
} syn_line;

/* The real strong lines, vacuum wavelengths.  tau/gam are tuned so that
 * the solar-like spectrum looks plausible (Halpha core saturated with
 * ~10 A wings, Ca K wings of ~5 A, CaT and Mg b with visible wings). */
static const syn_line syn_strong[] = {
    /* lam      tau     chi   ipot  mass  gam   taper group     ion */
    {6564.61, 120.0, 10.20, 13.60, 1.0, 0.50, 50.0, GRP_H, 0},
    {4862.68, 60.0, 10.20, 13.60, 1.0, 0.55, 40.0, GRP_H, 0},
    {4341.68, 35.0, 10.20, 13.60, 1.0, 0.60, 35.0, GRP_H, 0},
    {4102.89, 22.0, 10.20, 13.60, 1.0, 0.65, 30.0, GRP_H, 0},
    {3971.20, 15.0, 10.20, 13.60, 1.0, 0.70, 25.0, GRP_H, 0},
    {3890.16, 10.0, 10.20, 13.60, 1.0, 0.75, 20.0, GRP_H, 0},
    {3934.78, 6000.0, 0.0, 6.11, 40.0, 0.10, 30.0, GRP_ALPHA, 1},
    {3969.59, 3000.0, 0.0, 6.11, 40.0, 0.10, 30.0, GRP_ALPHA, 1},
    {8500.36, 40.0, 1.70, 6.11, 40.0, 0.15, 12.0, GRP_ALPHA, 1},
    {8544.44, 300.0, 1.70, 6.11, 40.0, 0.15, 12.0, GRP_ALPHA, 1},
    {8664.52, 150.0, 1.70, 6.11, 40.0, 0.15, 12.0, GRP_ALPHA, 1},
    {5168.76, 80.0, 2.71, 7.65, 24.3, 0.12, 8.0, GRP_ALPHA, 0},
    {5174.13, 200.0, 2.71, 7.65, 24.3, 0.12, 8.0, GRP_ALPHA, 0},
    {5185.05, 300.0, 2.71, 7.65, 24.3, 0.12, 8.0, GRP_ALPHA, 0},
    {5891.58, 400.0, 0.0, 5.14, 23.0, 0.08, 6.0, GRP_OTHER, 0},
    {5897.56, 200.0, 0.0, 5.14, 23.0, 0.08, 6.0, GRP_OTHER, 0},
};
#define SYN_NSTRONG (sizeof syn_strong / sizeof syn_strong[0])

/* Ionisation potentials and masses of the pseudo-random line groups
 * (Fe-peak ~ Fe; alpha ~ mix of Mg, Si, Ca, Ti; other ~ mix). */
static const double syn_grp_ipot[3] = {7.90, 7.20, 6.50};
static const double syn_grp_mass[3] = {56.0, 33.0, 45.0};

/* Atmosphere quantities at one parameter point. */
typedef struct syn_atm {
    double teff, theta, logpe, kappa, feh, alpha;
    double sigv;   /* Gaussian sigma (km/s) of a line of mass 1 minus the
                      mass-independent part: sig^2 = kT/m + turb^2         */
    double turb2;  /* micro + macro turbulence squared, (km/s)^2          */
    double damp;   /* damping-width factor relative to the reference       */
} syn_atm;

/* The pseudo-random line list: deterministic (fixed seed), density rising
 * to the blue (uniform in 1/lambda), log-uniform strengths. */
static void syn_make_lines(syn_line *ln)
{
    uint64_t s = SYN_SEED;
    const double a = 1.0 / SYN_LAM_HI, b = 1.0 / SYN_LAM_LO;
    for (size_t k = 0; k < SYN_NWEAK; k++) {
        syn_line *l = &ln[k];
        double u = rvfit_splitmix_uniform(&s);
        l->lam = 1.0 / (a + (b - a) * u);
        double g = rvfit_splitmix_uniform(&s);
        l->group = g < 0.55 ? GRP_FE : (g < 0.80 ? GRP_ALPHA : GRP_OTHER);
        l->ion = rvfit_splitmix_uniform(&s) < 0.25;
        l->chi = l->ion ? 2.0 + 4.0 * rvfit_splitmix_uniform(&s)
                        : 5.0 * rvfit_splitmix_uniform(&s);
        l->tau = pow(10.0, -2.3 + 3.1 * rvfit_splitmix_uniform(&s));
        l->ipot = syn_grp_ipot[l->group];
        l->mass = syn_grp_mass[l->group];
        /* Damping HWHM ~ 0.6 km/s; taper in velocity. */
        l->gam = l->lam * 0.6 / RVFIT_C_KMS;
        l->taper = l->lam * SYN_WEAK_TAPER_KMS / RVFIT_C_KMS;
    }
    memcpy(ln + SYN_NWEAK, syn_strong, sizeof syn_strong);
}

/* log10 of the electron pressure (dyn/cm^2): rises with gravity and,
 * steeply, with temperature (hydrogen starts supplying electrons). */
static double syn_logpe(double teff, double logg)
{
    return 1.3 + 0.5 * (logg - SYN_GREF) + 6.0 * log10(teff / SYN_TREF);
}

/* log10(N_II / N_I) from Saha (partition functions folded into the
 * constant). */
static double syn_saha(double teff, double theta, double logpe, double ipot)
{
    return -0.1762 + 2.5 * log10(teff) - theta * ipot - logpe;
}

static double syn_exp10(double x) { return exp(SYN_LN10 * x); }

/* Continuous opacity per hydrogen atom (arbitrary units): H- plus H
 * bound-free from n=3, the two equal near 9500 K. */
static double syn_kappa(double teff, double theta, double logpe)
{
    double fh = 1.0 / (1.0 + syn_exp10(syn_saha(teff, theta, logpe, 13.6)));
    double hm = syn_exp10(logpe + 0.754 * theta) * pow(theta, 2.5);
    /* Constant chosen so that both terms match at Teff 9500, logg 4. */
    const double t9 = 5040.0 / 9500.0;
    double pe9 = 1.3 + 0.5 * (4.0 - SYN_GREF) + 6.0 * log10(9500.0 / SYN_TREF);
    double c2 = syn_exp10(pe9 + 0.754 * t9 + 12.09 * t9) * pow(t9, 2.5);
    return fh * (hm + c2 * syn_exp10(-12.09 * theta));
}

static void syn_atmos(double teff, double logg, double feh, double alpha,
                      syn_atm *a)
{
    a->teff = teff;
    a->theta = 5040.0 / teff;
    a->logpe = syn_logpe(teff, logg);
    a->kappa = syn_kappa(teff, a->theta, a->logpe);
    a->feh = feh;
    a->alpha = alpha;
    a->sigv = SYN_AMU_KMS2 * teff;
    double xi = 2.0 - 0.2 * logg;          /* microturbulence, km/s  */
    double zeta = 3.0 * teff / SYN_TREF;   /* macroturbulence, km/s  */
    a->turb2 = 0.5 * xi * xi + zeta * zeta;
    a->damp = syn_exp10(0.3 * (logg - SYN_GREF)) * pow(teff / SYN_TREF, 0.3);
}

/* Line-opacity factor (population of the lower level over continuous
 * opacity), not yet normalised to the reference. */
static double syn_strength(const syn_line *l, const syn_atm *a)
{
    double r = syn_exp10(syn_saha(a->teff, a->theta, a->logpe, l->ipot));
    double frac = l->ion ? r / (1.0 + r) : 1.0 / (1.0 + r);
    double ab = 0.0; /* [X/H] */
    if (l->group == GRP_FE || l->group == GRP_OTHER)
        ab = a->feh;
    else if (l->group == GRP_ALPHA)
        ab = a->feh + a->alpha;
    return frac * syn_exp10(ab - a->theta * l->chi) / a->kappa;
}

/* Add one line's optical depth to tau[] on the log grid.  Profile in
 * Angstrom offsets d: exp(-d^2/2s^2) + sqrt(2/pi) g s/(d^2+g^2+2s^2)
 * * exp(-(d/W)^2), which has Voigt-like asymptotics (a/(sqrt(pi) v^2)). */
static void syn_add_line(const syn_line *l, double tau0, double sig,
                         double gam, double lnl0, double dlnl, size_t n,
                         double *tau)
{
    double w = l->taper;
    double lnc = log(l->lam);
    double half = SYN_WINDOW * w / l->lam; /* window in ln lambda */
    double k0 = ceil((lnc - half - lnl0) / dlnl);
    double k1 = floor((lnc + half - lnl0) / dlnl);
    if (k1 < 0.0 || k0 > (double)n - 1.0)
        return;
    size_t i0 = k0 < 0.0 ? 0 : (size_t)k0;
    size_t i1 = k1 > (double)n - 1.0 ? n - 1 : (size_t)k1;
    double isg2 = 0.5 / (sig * sig), iw2 = 1.0 / (w * w);
    double cl = 0.7978845608028654 * gam * sig; /* sqrt(2/pi) g s */
    double den0 = gam * gam + 2.0 * sig * sig;
    double gcut = 64.0 * sig * sig; /* Gaussian below 1e-14 beyond 8 s */
    for (size_t i = i0; i <= i1; i++) {
        double d = l->lam * expm1(lnl0 + (double)i * dlnl - lnc);
        double d2 = d * d;
        double p = cl / (d2 + den0) * exp(-d2 * iw2);
        if (d2 < gcut)
            p += exp(-d2 * isg2);
        tau[i] += tau0 * p;
    }
}

/* Continuum: pi*B_lambda(T) (erg/s/cm^2/cm), a smooth Balmer jump whose
 * depth follows the n=2 population, and mild blanketing in the blue. */
static void syn_continuum(const syn_atm *a, double bjump, double lnl0,
                          double dlnl, size_t n, double *c)
{
    const double c1 = 3.7417718e-5;  /* 2 pi h c^2, erg cm^2/s */
    const double c2 = 1.4387769;     /* h c / k, cm K           */
    double y = syn_exp10(a->feh) * pow(SYN_TREF / a->teff, 2.0);
    double blank = 0.3 * y / (1.0 + y);
    for (size_t i = 0; i < n; i++) {
        double lam = exp(lnl0 + (double)i * dlnl); /* Angstrom */
        double lcm = lam * 1e-8;
        double l2 = lcm * lcm;
        double b = c1 / (l2 * l2 * lcm) / expm1(c2 / (lcm * a->teff));
        double edge = 1.0 / (1.0 + exp((lam - 3647.0) / 15.0));
        double x = 4000.0 / lam, x2 = x * x;
        c[i] = b * (1.0 - bjump * edge) * exp(-blank * x2 * x2);
    }
}

int rvfit_synth_flux(double teff, double logg, double feh, double alphafe,
                     double lnl0, double dlnl, size_t n, double *flux,
                     rvfit_err *err)
{
    if (!(teff >= 2000.0 && teff <= 20000.0) || !isfinite(logg) ||
        !isfinite(feh) || !isfinite(alphafe))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "synth: parameters out of range (teff %g, "
                             "logg %g, feh %g, alpha %g)",
                             teff, logg, feh, alphafe);
    if (!(dlnl > 0.0) || !isfinite(lnl0) || n == 0 || !flux)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "synth: bad grid (lnl0 %g, dlnl %g, n %zu)",
                             lnl0, dlnl, n);
    size_t nl = SYN_NWEAK + SYN_NSTRONG;
    syn_line *ln = malloc(nl * sizeof *ln);
    double *tau = calloc(n, sizeof *tau);
    if (!ln || !tau) {
        free(ln);
        free(tau);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM,
                             "synth: no memory for %zu pixels", n);
    }
    syn_make_lines(ln);
    syn_atm at, ref;
    syn_atmos(teff, logg, feh, alphafe, &at);
    syn_atmos(SYN_TREF, SYN_GREF, 0.0, 0.0, &ref);
    double hrel = 1.0;
    for (size_t k = 0; k < nl; k++) {
        const syn_line *l = &ln[k];
        double rel = syn_strength(l, &at) / syn_strength(l, &ref);
        if (l->group == GRP_H)
            rel = pow(rel, 0.5); /* tame the Balmer Teff sensitivity */
        if (l->group == GRP_H && k == SYN_NWEAK)
            hrel = rel; /* Halpha: drives the Balmer jump */
        double sigv = sqrt(at.sigv / l->mass + at.turb2);
        double sig = l->lam * sigv / RVFIT_C_KMS;
        syn_add_line(l, l->tau * rel, sig, l->gam * at.damp, lnl0, dlnl, n,
                     tau);
    }
    double xb = 0.05 * hrel;
    syn_continuum(&at, xb / (1.0 + xb), lnl0, dlnl, n, flux);
    /* Soft saturation: weak lines see tau, saturated cores bottom out at
     * exp(-SYN_TAU_SAT) of the continuum like a real source function. */
    for (size_t i = 0; i < n; i++)
        flux[i] *= exp(-SYN_TAU_SAT * -expm1(-tau[i] / SYN_TAU_SAT));
    free(tau);
    free(ln);
    return RVFIT_OK;
}

/* ---- observed-frame truth: rotation + Doppler --------------------- */

int rvfit_synth_truth(void *ctx, size_t star, double lnl0, double dlnl,
                      size_t n, double *flux, rvfit_err *err)
{
    const rvfit_mock_star *st = (const rvfit_mock_star *)ctx + star;
    if (!(dlnl > 0.0) || n == 0)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "synth truth: bad grid (dlnl %g, n %zu)", dlnl,
                             n);
    if (!(fabs(st->vrad) < 0.5 * RVFIT_C_KMS) || !(st->vsini >= 0.0))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "synth truth: star %zu (TARGETID %lld): bad "
                             "vrad %g or vsini %g",
                             star, (long long)st->targetid, st->vrad,
                             st->vsini);
    /* Fine rest-frame grid whose nodes land exactly on the requested
     * points after the Doppler shift: no interpolation error. */
    size_t m = (size_t)ceil(dlnl / 6e-6 - 1e-9);
    double df = dlnl / (double)m;
    double half = st->vsini / RVFIT_C_KMS / df;
    if (half > RVFIT_MAX_VSINI_HALF)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "synth truth: star %zu: vsini %g km/s too large "
                             "for this sampling", star, st->vsini);
    size_t H = half > 1e-6 ? (size_t)ceil(half) : 0;
    size_t pad = H + 2, nf = (n - 1) * m + 1 + 2 * pad;
    /* lambda_obs = lambda_rest * sqrt((1+b)/(1-b)): ln shift atanh(b). */
    double shift = atanh(st->vrad / RVFIT_C_KMS);
    double *fine = malloc(nf * sizeof *fine);
    double *w = malloc((2 * RVFIT_MAX_VSINI_HALF + 1) * sizeof *w);
    if (!fine || !w) {
        free(fine);
        free(w);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM,
                             "synth truth: no memory for %zu pixels", nf);
    }
    int st_ = rvfit_synth_flux(st->teff, st->logg, st->feh, st->alphafe,
                               lnl0 - shift - (double)pad * df, df, nf, fine,
                               err);
    if (st_ != RVFIT_OK) {
        rvfit_err_prefix(err, "star %zu (TARGETID %lld)", star,
                         (long long)st->targetid);
        goto out;
    }
    if (H == 0) {
        for (size_t k = 0; k < n; k++)
            flux[k] = fine[pad + k * m];
        goto out;
    }
    /* The exact hat-integrated kernel stays normalised for any width,
     * including widths far below one fine pixel. */
    H = (size_t)rvfit_vsini_kernel(half, w);
    /* Rotation is a convolution in ln lambda; only the output nodes are
     * needed. */
    for (size_t k = 0; k < n; k++) {
        size_t c = pad + k * m;
        double acc = 0.0;
        for (size_t j = 0; j <= 2 * H; j++)
            acc += w[j] * fine[c + j - H];
        flux[k] = acc;
    }
out:
    free(w);
    free(fine);
    return st_;
}
