/* One star through the spectrograph: the fibre's LSF and pixel
 * integration (described by its resolution matrix), flux scale, sky, an
 * exposure time set for the
 * requested S/N, photon + read noise, sky-subtraction residuals,
 * calibration distortion and cosmic rays. */
#include "mock.h"

#include <math.h>
#include <string.h>

typedef struct { const ind_linelist *ll; const ind_star *s; } star_src;

static void star_source(void *ctx, const ind_hgrid *rest, double *flux,
                        double *work)
{
    const star_src *q = ctx;
    ind_spectrum(q->ll, q->s, rest, flux, work);
}

int ind_model_pixels(const ind_obsctx *c, const ind_draw *d, ind_work *w)
{
    star_src q = {c->ll, &d->p};
    if (ind_hires_observed(&c->g, d->vrad, d->vsini, star_source, &q,
                           w->spec, w->hires))
        return -1;
    if (d->lratio > 0) { /* a twin companion: its light added */
        if (ind_hires_observed(&c->g, d->vrad2, d->vsini, star_source, &q,
                               w->cum, w->hires))
            return -1;
        for (size_t k = 0; k < c->g.n; k++)
            w->spec[k] += d->lratio * w->cum[k];
    }
    ind_cumulate(&c->g, w->spec, w->cum);
    for (int a = 0; a < c->narm; a++)
        ind_arm_observe(&c->arms[a], &d->fib, &c->g, w->spec, w->cum,
                        w->model[a], w->scratch);
    return 0;
}

/* Resolution matrix, sky and response on the pixels of every arm. */
static void arm_models(const ind_obsctx *c, const ind_draw *d, ind_obs *o,
                       ind_work *w)
{
    for (int a = 0; a < c->narm; a++) {
        const ind_arm *arm = &c->arms[a];
        if (o->res[a])
            ind_arm_resolution(arm, &d->fib, o->res[a]);
        ind_sky_pixels(arm, &d->fib, w->sky[a], w->skyl[a]);
        for (size_t i = 0; i < arm->n; i++) {
            w->sky[a][i] += w->skyl[a][i];
            w->resp[a][i] = ind_arm_response(arm, ind_arm_lam(arm, i));
        }
    }
}

static double pixel_var(const ind_obsctx *c, const ind_work *w, int a,
                        size_t i, double t)
{
    double at = w->resp[a][i] * t;
    double counts = (fmax(w->model[a][i], 0.0) + w->sky[a][i]) * at;
    return (counts + c->rn2) / (at * at);
}

static double snr_median(const ind_obsctx *c, ind_work *w, double t)
{
    const ind_arm *arms = c->arms;
    size_t m = 0;
    for (int a = 0; a < c->narm; a++)
        for (size_t i = 0; i < arms[a].n; i++)
            w->all[m++] = w->model[a][i] / sqrt(pixel_var(c, w, a, i, t));
    return ind_median(w->all, m);
}

/* The median S/N grows monotonically with exposure: bisect in ln t. */
static double solve_exposure(const ind_obsctx *c, ind_work *w, double snr)
{
    double lo = log(1e-9), hi = log(1e12);
    for (int it = 0; it < 60; it++) {
        double mid = 0.5 * (lo + hi);
        if (snr_median(c, w, exp(mid)) < snr)
            lo = mid;
        else
            hi = mid;
    }
    return exp(0.5 * (lo + hi));
}

double ind_distortion(const double *cf, double x)
{
    double p2 = 0.5 * (3.0 * x * x - 1.0), p3 = 0.5 * x * (5.0 * x * x - 3.0);
    return 1.0 + cf[0] + cf[1] * x + cf[2] * p2 + cf[3] * p3;
}

/* Cosmic-ray hits of 1-3 pixels, amplitude log-uniform in 3-300 sigma.  The
 * coadd's outlier rejection flags (MASK bit COSMIC) the hits it can see:
 * those above 10 sigma, less 3 % it misses; fainter ones stay in the data
 * unflagged. */
static void cosmics(const ind_arm *arm, ind_rng *r, double rate,
                    const double *sig, double *extra, int32_t *mask)
{
    unsigned nev = ind_rng_poisson(r, rate);
    for (unsigned k = 0; k < nev; k++) {
        size_t j = (size_t)(ind_rng_uniform(r) * (double)arm->n);
        int width = 1 + (int)(3.0 * ind_rng_uniform(r));
        double amp = 3.0 * pow(100.0, ind_rng_uniform(r));
        int flag = amp >= 10.0 && ind_rng_uniform(r) >= 0.03;
        for (int q = 0; q < width && j + (size_t)q < arm->n; q++) {
            /* the charge spreads unevenly over the pixels of one hit */
            extra[j + q] += amp * (0.5 + ind_rng_uniform(r)) * sig[j + q];
            if (flag)
                mask[j + q] |= IND_MASK_COSMIC;
        }
    }
}

/* Noise, residuals, distortion and cosmics of one arm; its SCORES. */
static void arm_output(const ind_obsctx *c, const ind_draw *d, int a,
                       double t, ind_rng *r, ind_rng *rcr, ind_obs *o,
                       ind_work *w)
{
    const ind_arm *arm = &c->arms[a];
    size_t n = arm->n;
    double *sig = w->all, *extra = w->all + n;
    for (size_t i = 0; i < n; i++) {
        sig[i] = sqrt(pixel_var(c, w, a, i, t));
        extra[i] = sig[i] * ind_rng_normal(r) + d->skyres[a] * w->skyl[a][i];
        o->mask[a][i] = 0;
    }
    cosmics(arm, rcr, d->cosmic_rate, sig, extra, o->mask[a]);
    for (size_t i = 0; i < n; i++) {
        double g = ind_distortion(d->dist[a], 2.0 * (double)i / (double)(n - 1) - 1.0);
        o->flux[a][i] = (float)(g * (w->model[a][i] + extra[i]));
        o->ivar[a][i] = (float)(1.0 / (g * g * sig[i] * sig[i]));
    }
    size_t m = 0;
    double integ = 0.0;
    for (size_t i = 0; i < n; i++)
        if (!o->mask[a][i]) {
            w->all[m++] = o->flux[a][i] * sqrt((double)o->ivar[a][i]);
            integ += o->flux[a][i] * arm->step;
        }
    o->snr_med[a] = m ? ind_median(w->all, m) : 0.0;
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (!o->mask[a][i])
            w->all[m++] = o->flux[a][i];
    o->flux_med[a] = m ? ind_median(w->all, m) : 0.0;
    o->flux_int[a] = integ;
}

double ind_flux_scale(const ind_draw *d, ind_work *w)
{
    memcpy(w->all, w->model[1], w->n1 * sizeof(double));
    return d->fmed / ind_median(w->all, w->n1);
}

int ind_observe(const ind_obsctx *c, const ind_draw *d, uint64_t seed,
                size_t i, ind_obs *o, ind_work *w, ind_err *e)
{
    if (ind_model_pixels(c, d, w))
        return ind_fail(e, "star %zu: vsini %.1f km/s too large", i,
                        d->vsini);
    arm_models(c, d, o, w);
    double k = ind_flux_scale(d, w);
    for (int a = 0; a < c->narm; a++)
        for (size_t j = 0; j < c->arms[a].n; j++)
            w->model[a][j] *= k;
    double t = solve_exposure(c, w, d->snr);
    o->snr_true = snr_median(c, w, t);
    /* noise and cosmics draw from separate streams, so switching cosmics
     * off (--ablate) leaves the noise of a star unchanged */
    ind_rng r, rcr;
    ind_rng_seed(&r, seed, i, 2);
    ind_rng_seed(&rcr, seed, i, 3);
    for (int a = 0; a < c->narm; a++)
        arm_output(c, d, a, t, &r, &rcr, o, w);
    return 0;
}
