/* Atmosphere proxies: a handful of smooth functions of (Teff, logg, [Fe/H],
 * [alpha/Fe]) standing in for a model atmosphere at optical depth ~1.  They
 * follow the textbook scalings (Gray, "The Observation and Analysis of
 * Stellar Photospheres"): Pe rises steeply with Teff and as g^(1/2); Pg as
 * g^(2/3); the H- continuum opacity per H atom goes as
 * Pe theta^(5/2) 10^(0.754 theta).  Values are relative to the Sun, so line
 * strengths can be given for the Sun and scaled. */
#include "indep.h"

#include <math.h>

const ind_star ind_sun = {5772.0, 4.44, 0.0, 0.0};

#define THETA_SUN (5040.0 / 5772.0)
#define LOGPE_SUN 1.45
#define LOGPG_SUN 4.90

/* Electron donors: metals (mostly Mg, Si, Fe: partly alpha) dominate in
 * cool atmospheres, hydrogen in hot ones; a smooth switch near 6200 K. */
static double electron_metal_weight(double teff)
{
    return 1.0 / (1.0 + exp((teff - 6200.0) / 500.0));
}

void ind_atmos_make(const ind_star *s, ind_atmos *a)
{
    double th = 5040.0 / s->teff, dth = th - THETA_SUN;
    double mel = s->feh + 0.6 * s->alpha;
    a->theta = th;
    a->logpe = LOGPE_SUN + 0.40 * (s->logg - 4.44) - 3.6 * dth +
               0.35 * electron_metal_weight(s->teff) * mel;
    /* metal-poor atmospheres are more transparent: higher pressure at tau~1 */
    a->logpg = LOGPG_SUN + 0.67 * (s->logg - 4.44) + 1.2 * dth - 0.15 * mel;
    a->logkap = (a->logpe - LOGPE_SUN) + 2.5 * log10(th / THETA_SUN) +
                0.754 * dth;
    double dt = (s->teff - 5772.0) / 1000.0;
    a->xi = 1.1 + 0.25 * (4.5 - s->logg) + 0.25 * dt;
    a->zeta = 3.6 + 0.35 * (4.5 - s->logg) + 0.4 * dt;
    double tt = (s->teff / 5772.0) * (s->teff / 5772.0);
    a->smetal = 0.06 + 0.06 * tt;
    a->shyd = 0.12 + 0.05 * tt;
}

double ind_ion_fraction(const ind_star *s, const ind_atmos *a, double ip,
                        double u, int stage)
{
    /* Saha: log N1/N0 = log(2 U1/U0) + 2.5 log T - theta I - log Pe - 0.1762 */
    double lr = log10(2.0 * u) + 2.5 * log10(s->teff) - a->theta * ip -
                a->logpe - 0.1762;
    double f1 = 1.0 / (1.0 + pow(10.0, -lr));
    return stage ? f1 : 1.0 - f1;
}

/* pi B_lambda(T) in erg/s/cm^2/cm, lambda in A. */
static double planck_flux(double lam, double t)
{
    const double h = 6.62607015e-27, c = 2.99792458e10, k = 1.380649e-16;
    double l = lam * 1e-8;
    double x = h * c / (l * k * t);
    return IND_PI * 2.0 * h * c * c / (l * l * l * l * l) / expm1(x);
}

double ind_continuum(const ind_star *s, const ind_atmos *a, double lam)
{
    /* Balmer jump at the series limit (3647 A vacuum), smoothed over ~12 A
     * (the merging high series members); deepest for hot, low-g stars. */
    double d = 0.18 + 0.12 * tanh((s->teff - 6000.0) / 900.0) +
               0.04 * (4.0 - s->logg);
    d = 0.02 + log1p(exp((d - 0.02) / 0.02)) * 0.02; /* softplus: d > 0.02 */
    double jump = 1.0 / (1.0 + exp((lam - 3647.0) / 12.0));
    /* unresolved metal-line haze in the blue */
    double q = 3800.0 / lam;
    double haze = 0.12 * pow(10.0, s->feh) * (a->theta / THETA_SUN) *
                  (a->theta / THETA_SUN) * q * q * q * q;
    return planck_flux(lam, s->teff) * pow(10.0, -d * jump) * exp(-haze);
}
