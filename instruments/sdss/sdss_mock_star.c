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

typedef struct sdss_scratch {
    double *fine, *pix, *edge, *tmp;
    size_t nfine;
} sdss_scratch;

static int sdss_signal(const rvfit_mock_job *job, size_t s, double f,
                       sdss_mock_spec *o, sdss_scratch *w, rvfit_err *err)
{
    const sdss_mock_ctx *c = job->ctx;
    size_t n = o->npix;
    for (size_t i = 0; i <= n; i++)
        w->edge[i] = pow(10.0, o->coeff0 + ((double)i - 0.5) * SDSS_DLOGLAM);
    double lnl0 = log(w->edge[0] - SDSS_MOCK_PAD);
    size_t nf = (size_t)ceil((log(w->edge[n] + SDSS_MOCK_PAD) - lnl0) /
                             SDSS_MOCK_DLNL) + 1;
    if (nf > w->nfine)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL, "mock star %zu: %zu "
                             "fine samples > %zu", s, nf, w->nfine);
    int rc = rvfit_mock_truth(job, s, NULL, lnl0, SDSS_MOCK_DLNL, nf,
                              w->fine, err);
    if (rc)
        return rc;
    sdss_pixelize(c->phi, o->coeff0, n, w->edge, f, lnl0, SDSS_MOCK_DLNL, nf,
                  w->fine, w->pix);
    memcpy(w->tmp, w->pix, n * sizeof *w->tmp);
    double scale = rvfit_mock_scale(w->tmp, n, SDSS_MOCK_LEVEL);
    for (size_t i = 0; i < n; i++)
        w->pix[i] *= scale;
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
                       sdss_mock_spec *o, sdss_scratch *w)
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
    int nbad = (int)(rvfit_rng_uniform(r) * 4.0);
    int ndead = (int)(rvfit_rng_uniform(r) * 3.0);
    for (int k = 0; k < nbad + ndead; k++) {
        size_t p = (size_t)(rvfit_rng_uniform(r) * (double)n);
        if (k < nbad) {
            o->flux[p] += (float)(30.0 * c * shape[p]);
            o->mask[p] |= SDSS_MOCK_BADBIT;
        } else {
            o->ivar[p] = 0.0f;
            o->wdisp[p] = 0.0f;
        }
    }
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
    o->coeff0 = SDSS_MOCK_LL0 +
                SDSS_DLOGLAM * floor(rvfit_rng_uniform(&r) * SDSS_MOCK_SHIFT);
    o->npix = SDSS_MOCK_NPIX -
              (size_t)(rvfit_rng_uniform(&r) * (SDSS_MOCK_TRIM + 1));
    double f = 1.0 + 0.03 * (2.0 * rvfit_rng_uniform(&r) - 1.0); /* per fibre */
    for (size_t i = 0; i < o->npix; i++)
        o->wdisp[i] = (float)sdss_mock_wdisp(
            o->coeff0 + SDSS_DLOGLAM * (double)i, f);
    int rc = sdss_signal(job, s, f, o, scratch, err);
    if (!rc)
        sdss_noise(&job->stars[s], &r, o, scratch);
    return rc;
}

static void sdss_scratch_free(void *arg)
{
    sdss_scratch *w = arg;
    free(w->fine), free(w->pix), free(w->edge), free(w->tmp);
    free(w);
}

static void *sdss_scratch_new(const rvfit_mock_job *job)
{
    (void)job;
    sdss_scratch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    double lo = pow(10.0, SDSS_MOCK_LL0 - SDSS_DLOGLAM) - SDSS_MOCK_PAD;
    double hi = pow(10.0, SDSS_MOCK_LL0 + SDSS_DLOGLAM *
                              (SDSS_MOCK_SHIFT + SDSS_MOCK_NPIX)) +
                SDSS_MOCK_PAD;
    w->nfine = (size_t)ceil(log(hi / lo) / SDSS_MOCK_DLNL) + 2;
    w->fine = malloc(w->nfine * sizeof *w->fine);
    w->pix = malloc(SDSS_MOCK_NPIX * sizeof *w->pix);
    w->edge = malloc((SDSS_MOCK_NPIX + 1) * sizeof *w->edge);
    w->tmp = malloc(2 * SDSS_MOCK_NPIX * sizeof *w->tmp);
    if (!w->fine || !w->pix || !w->edge || !w->tmp) {
        sdss_scratch_free(w);
        return NULL;
    }
    return w;
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
    job->scratch_free = sdss_scratch_free;
    job->star = sdss_mock_star;
}
