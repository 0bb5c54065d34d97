/* The emergent spectrum of one star on a uniform ln(lambda) grid.
 *
 * Every line adds opacity tau_i(lambda) = W0_i V(lambda - lambda_i), V the
 * area-normalised Voigt profile with a Doppler width from thermal motion,
 * microturbulence and macroturbulence, and Lorentz damping (radiative, van
 * der Waals ~ Pg^0.8 T^0.3, Stark ~ Pe^(2/3)).  The emergent flux is
 *   F = Fc [exp(-tau) + (1 - exp(-tau)) S],  S = sum tau_i S_i / tau,
 * a Schuster-Schwarzschild-like curve of growth whose saturated cores stop
 * at the source-function floor S.  W0_i scales from its solar value with
 * abundance, the Boltzmann factor 10^(-chi dtheta), the Saha ionisation
 * fraction and the continuum opacity (line-to-continuum ratio); molecules
 * scale with a dissociation slope in theta and a pressure exponent, and
 * their rotational population shifts with Teff.  Each line acts inside a
 * fixed window with a cosine taper, so the spectrum is smooth in the
 * parameters. */
#include "indep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ind_hgrid_make(ind_hgrid *g, double lam_lo, double lam_hi, double dlnl,
                   ind_err *e)
{
    if (!(lam_lo > 0 && lam_hi > lam_lo && dlnl > 0))
        return ind_fail(e, "bad wavelength grid %g-%g A step %g", lam_lo,
                        lam_hi, dlnl);
    g->lnl0 = log(lam_lo);
    g->dlnl = dlnl;
    g->n = (size_t)floor((log(lam_hi) - g->lnl0) / dlnl) + 1;
    g->lam = malloc(g->n * sizeof *g->lam);
    if (!g->lam)
        return ind_fail(e, "wavelength grid of %zu samples: out of memory",
                        g->n);
    for (size_t k = 0; k < g->n; k++)
        g->lam[k] = exp(g->lnl0 + (double)k * dlnl);
    return 0;
}

void ind_hgrid_free(ind_hgrid *g)
{
    free(g->lam);
    g->lam = NULL;
    g->n = 0;
}

/* Per-species quantities of one star. */
typedef struct {
    double logx;   /* log10 strength factor relative to the Sun */
    double b;      /* Doppler velocity, km/s */
    double floor;  /* source-function floor */
} sp_state;

typedef struct {
    sp_state sp[32];
    double dth, pv, ps, trat;
} star_state;

static double species_logx(const ind_species *p, const ind_star *s,
                           const ind_atmos *a, const ind_atmos *sun)
{
    double dth = a->theta - sun->theta;
    double comp = p->nmetal * s->feh + p->nalpha * s->alpha;
    if (p->kind == IND_MOL)
        return comp + p->dslope * dth + p->gexp * (s->logg - ind_sun.logg) -
               a->logkap;
    double f = ind_ion_fraction(s, a, p->ip, p->u, p->stage);
    double f0 = ind_ion_fraction(&ind_sun, sun, p->ip, p->u, p->stage);
    /* Hydrogen wings form deeper, where the pressure dependence of the
     * opacity ratio largely cancels against Stark broadening: half weight
     * keeps Balmer lines the Teff indicators they are. */
    double wk = p->kind == IND_HYD ? 0.5 : 1.0;
    return comp + log10(f / f0) - wk * a->logkap;
}

static void star_prepare(const ind_star *s, star_state *st)
{
    ind_atmos a, sun;
    ind_atmos_make(s, &a);
    ind_atmos_make(&ind_sun, &sun);
    size_t nsp;
    const ind_species *tab = ind_species_table(&nsp);
    double nt2 = a.xi * a.xi + a.zeta * a.zeta;
    for (size_t i = 0; i < nsp && i < 32; i++) {
        st->sp[i].logx = species_logx(&tab[i], s, &a, &sun);
        /* 2kT/m in (km/s)^2 with m in amu */
        st->sp[i].b = sqrt(0.0166289 * s->teff / tab[i].mass + nt2);
        st->sp[i].floor = tab[i].kind == IND_HYD ? a.shyd : a.smetal;
    }
    st->dth = a.theta - sun.theta;
    st->trat = s->teff / ind_sun.teff;
    st->pv = pow(10.0, 0.8 * (a.logpg - sun.logpg)) * pow(st->trat, 0.3);
    st->ps = pow(10.0, (2.0 / 3.0) * (a.logpe - sun.logpe));
}

/* Window taper: 1 over the inner 75 %, a cosine to 0 at the edge. */
static double taper(double x)
{
    return x < 0.75 ? 1.0 : 0.5 * (1.0 + cos(IND_PI * (x - 0.75) / 0.25));
}

static void add_line(const ind_line *l, const star_state *st,
                     const ind_hgrid *g, double *tau, double *taus)
{
    const sp_state *sp = &st->sp[l->species];
    double lw = l->logw0 + sp->logx - st->dth * l->chi;
    if (l->rotj0 > 0) {
        double jj = (double)l->rotj * (l->rotj + 1.0) /
                    ((double)l->rotj0 * l->rotj0);
        lw += -jj * (1.0 / st->trat - 1.0) / IND_LN10 - log10(st->trat);
    }
    double w0 = pow(10.0, lw);
    if (w0 < 1e-9)
        return; /* below 1e-7 of a pixel's depth: no visible step */
    double lo = log(l->lam - l->half), hi = log(l->lam + l->half);
    double k0 = ceil((lo - g->lnl0) / g->dlnl);
    double k1 = floor((hi - g->lnl0) / g->dlnl);
    if (k1 < 0 || k0 > (double)g->n - 1)
        return;
    size_t a = k0 < 0 ? 0 : (size_t)k0;
    size_t b = k1 > (double)g->n - 1 ? g->n - 1 : (size_t)k1;
    double dld = l->lam * sp->b / IND_C_KMS;
    double gl = l->grad + l->gvdw * st->pv + l->gstark * st->ps;
    double av = gl / dld, norm = w0 / (IND_SQRTPI * dld);
    for (size_t k = a; k <= b; k++) {
        double dl = g->lam[k] - l->lam;
        double p = norm * ind_voigt_h(av, dl / dld) *
                   taper(fabs(dl) / l->half);
        tau[k] += p;
        taus[k] += p * sp->floor;
    }
}

static void spectrum(const ind_linelist *ll, const ind_star *s,
                     const ind_hgrid *g, double *flux, double *work,
                     int with_continuum)
{
    star_state st;
    star_prepare(s, &st);
    double *tau = work, *taus = work + g->n;
    memset(work, 0, 2 * g->n * sizeof *work);
    for (size_t i = 0; i < ll->n; i++)
        add_line(&ll->line[i], &st, g, tau, taus);
    ind_atmos a;
    ind_atmos_make(s, &a);
    for (size_t k = 0; k < g->n; k++) {
        double t = tau[k];
        /* (1 - S) (1 - e^-t) = (t - tS) (1 - e^-t)/t, safe as t -> 0 */
        double q = t > 1e-12 ? -expm1(-t) / t : 1.0;
        double r = 1.0 - (t - taus[k]) * q;
        flux[k] = with_continuum ? r * ind_continuum(s, &a, g->lam[k]) : r;
    }
}

void ind_spectrum(const ind_linelist *ll, const ind_star *s,
                  const ind_hgrid *g, double *flux, double *work)
{
    spectrum(ll, s, g, flux, work, 1);
}

void ind_spectrum_norm(const ind_linelist *ll, const ind_star *s,
                       const ind_hgrid *g, double *flux, double *work)
{
    spectrum(ll, s, g, flux, work, 0);
}
