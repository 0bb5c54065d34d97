/* sdss_mock_star.c — one synthetic BOSS spectrum: the truth on a fine
 * ln-lambda grid, spread by a Gaussian LSF of WDISP pixels and integrated
 * over the log-lambda pixels (light at lambda lands in pixel i with
 * probability Phi((E_i+1 - lambda)/s) - Phi((E_i - lambda)/s), the picture
 * the core's LSF band matrix uses), scaled, then noise with a
 * sqrt(flux + sky) shape at the requested median S/N and a few bad
 * pixels.  Each star draws from its own PRNG stream: the output depends
 * on (seed, star) only, never on the threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdss_mock.h"

/* ---- the instrument ---------------------------------------------------- */

/* 1.0-1.3 pixels: broadest at both ends of the range, as the BOSS
 * cameras are at the edges of their fields. */
double sdss_mock_wdisp(double ll, double f)
{
    double u = (ll - SDSS_MOCK_LL0) / (4.0170 - SDSS_MOCK_LL0);
    return f * (1.15 + 0.15 * cos(6.283185307179586477 * u));
}

/* LSF + pixel integration of fine[k] at exp(lnl0 + k dlnl) into out[n]
 * (mean flux density per pixel); edge[n+1] pixel edges in A. */
static void sdss_pixelize(const rvfit_phi_table *phi, double ll0, size_t n,
                          const double *edge, double f, double lnl0,
                          double dlnl, size_t nf, const double *fine,
                          double *out)
{
    memset(out, 0, n * sizeof *out);
    const double lne0 = (ll0 - 0.5 * SDSS_DLOGLAM) * 2.302585092994045684;
    const double inv_dl = 1.0 / (SDSS_DLOGLAM * 2.302585092994045684);
    for (size_t k = 0; k < nf; k++) {
        double lnl = lnl0 + dlnl * (double)k, lam = exp(lnl);
        double wd = sdss_mock_wdisp(lnl / 2.302585092994045684, f);
        double s = wd * SDSS_DLOGLAM * 2.302585092994045684 * lam;
        double p = (lnl - lne0) * inv_dl; /* pixel coordinate of lam */
        long lo = (long)floor(p - 6.0 * wd) , hi = (long)ceil(p + 6.0 * wd);
        if (hi < 0 || lo >= (long)n)
            continue;
        lo = lo < 0 ? 0 : lo;
        hi = hi > (long)n ? (long)n : hi;
        double w = fine[k] * lam * dlnl;
        rvfit_mock_spread(phi, edge, lo, hi - lo, lam, 1.0 / s, w, out);
    }
    for (size_t i = 0; i < n; i++)
        out[i] /= edge[i + 1] - edge[i];
}

/* The BOSS grid of the mocks (rvfit/mockkit.h). */
static const rvfit_mock_loglam sdss_grid = {
    .ll0 = SDSS_MOCK_LL0, .dloglam = SDSS_DLOGLAM, .shift = SDSS_MOCK_SHIFT,
    .npix = SDSS_MOCK_NPIX, .trim = SDSS_MOCK_TRIM, .dlnl = SDSS_MOCK_DLNL,
    .pad = SDSS_MOCK_PAD, .level = SDSS_MOCK_LEVEL};

static int sdss_signal(const rvfit_mock_job *job, size_t s, double f,
                       sdss_mock_spec *o, rvfit_mock_scratch *w,
                       rvfit_err *err)
{
    const sdss_mock_ctx *c = job->ctx;
    double lnl0;
    size_t nf;
    int rc = rvfit_mock_loglam_truth(job, s, &sdss_grid, o->coeff0, o->npix,
                                     w, &lnl0, &nf, err);
    if (rc)
        return rc;
    sdss_pixelize(c->phi, o->coeff0, o->npix, w->edge, f, lnl0,
                  SDSS_MOCK_DLNL, nf, w->fine, w->pix);
    rvfit_mock_loglam_level(&sdss_grid, o->npix, w);
    return RVFIT_OK;
}

/* Noise with sqrt(flux + sky) shape (sky rising to the red, as BOSS's
 * OH lines do), scaled to the requested median S/N; then 0-3 corrupted
 * pixels flagged in and_mask (ivar kept) and 0-2 dead ones (ivar 0,
 * wdisp 0, as in real files). */
/* The core's generator mixes the stream index with its own constant; this
 * factor (the old sdss constant times the inverse of the core's, mod 2^64)
 * keeps every star's stream, and so every synthetic BOSS file, identical
 * to what this plugin wrote before the generator moved into the core. */
#define SDSS_STREAM_KEY 0x5d23a1915a57f665ull

static void sdss_noise(const rvfit_mock_star *st, rvfit_rng *r,
                       sdss_mock_spec *o, rvfit_mock_scratch *w)
{
    size_t n = o->npix;
    double *shape = w->tmp, *ratio = w->tmp + n;
    for (size_t i = 0; i < n; i++) {
        double u = (double)i / (double)(n - 1);
        o->sky[i] = (float)(SDSS_MOCK_LEVEL * (0.2 + 0.8 * u * u));
        shape[i] = sqrt(fmax(w->pix[i], 0.0) + o->sky[i]);
        o->model[i] = (float)w->pix[i];
        o->mask[i] = 0;
    }
    double c = rvfit_mock_noise(w->pix, shape, n, st->snr, r, ratio, o->flux,
                                o->ivar);
    rvfit_mock_defects(r, n, c, shape, SDSS_MOCK_BADBIT, o->flux, o->ivar,
                       o->mask, o->wdisp);
    o->snr = (float)rvfit_pixel_snr(o->flux, o->ivar, n, ratio);
}

static int sdss_mock_star(const rvfit_mock_job *job, void *scratch, size_t s,
                          void *const *out, rvfit_err *err)
{
    sdss_mock_spec *o = out[SDSS_BUF_SPEC];
    o->flux = out[SDSS_BUF_FLUX];
    o->ivar = out[SDSS_BUF_IVAR];
    o->wdisp = out[SDSS_BUF_WDISP];
    o->sky = out[SDSS_BUF_SKY];
    o->model = out[SDSS_BUF_MODEL];
    o->mask = out[SDSS_BUF_MASK];
    rvfit_rng r;
    rvfit_rng_seed(&r, job->seed, ((uint64_t)s + 1) * SDSS_STREAM_KEY);
    rvfit_mock_loglam_draw(&sdss_grid, &r, &o->coeff0, &o->npix);
    double f = 1.0 + 0.03 * (2.0 * rvfit_rng_uniform(&r) - 1.0); /* per fibre */
    for (size_t i = 0; i < o->npix; i++)
        o->wdisp[i] = (float)sdss_mock_wdisp(
            o->coeff0 + SDSS_DLOGLAM * (double)i, f);
    int rc = sdss_signal(job, s, f, o, scratch, err);
    if (!rc)
        sdss_noise(&job->stars[s], &r, o, scratch);
    return rc;
}

static void *sdss_scratch_new(const rvfit_mock_job *job)
{
    (void)job;
    return rvfit_mock_scratch_new(&sdss_grid);
}

void sdss_mock_job_init(rvfit_mock_job *job)
{
    job->block = SDSS_MOCK_BLOCK;
    job->nbuf = SDSS_NBUF;
    job->bytes[SDSS_BUF_SPEC] = sizeof(sdss_mock_spec);
    for (int k = SDSS_BUF_FLUX; k < SDSS_BUF_MASK; k++)
        job->bytes[k] = SDSS_MOCK_NPIX * sizeof(float);
    job->bytes[SDSS_BUF_MASK] = SDSS_MOCK_NPIX * sizeof(int32_t);
    job->scratch_new = sdss_scratch_new;
    job->scratch_free = rvfit_mock_scratch_free;
    job->star = sdss_mock_star;
}
