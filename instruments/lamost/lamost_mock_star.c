/* lamost_mock_star.c — one synthetic LRS spectrum: the truth on a fine
 * ln-lambda grid, spread by the Gaussian LSF of the configured resolution
 * (sigma = lambda / (R 2.3548), what the reader assumes) and integrated
 * over the log-lambda pixels, scaled, then noise with a sqrt(flux + sky)
 * shape at the requested median S/N and a few bad pixels.  Each star
 * draws from its own PRNG stream: the output depends on (seed, star)
 * only, never on the threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lamost_mock.h"

#define LAMOST_LN10 2.302585092994045684
#define LAMOST_STREAM_KEY 0x9e3779b97f4a7c15ull

int lamost_mock_layout(int mock_layout, size_t s)
{
    if (mock_layout)
        return mock_layout;
    return s % 2 ? LAMOST_DR8 : LAMOST_DR7;
}

typedef struct lamost_scratch {
    double *fine, *pix, *edge, *tmp;
    size_t nfine;
} lamost_scratch;

/* LSF + pixel integration of fine[k] at exp(lnl0 + k dlnl) into out[n]
 * (mean flux density per pixel); edge[n+1] pixel edges in A. */
static void lamost_pixelize(const lamost_mock_ctx *c, double ll0, size_t n,
                            const double *edge, double lnl0, size_t nf,
                            const double *fine, double *out)
{
    const double dl = LAMOST_DLOGLAM * LAMOST_LN10; /* pixel in ln(lam) */
    const double k = 1.0 / (c->opts.resolution * LAMOST_FWHM_SIGMA);
    const double lne0 = (ll0 - 0.5 * LAMOST_DLOGLAM) * LAMOST_LN10;
    const double span = 6.0 * k / dl + 1.0; /* 6 sigma, in pixels */
    memset(out, 0, n * sizeof *out);
    for (size_t j = 0; j < nf; j++) {
        double lnl = lnl0 + LAMOST_MOCK_DLNL * (double)j, lam = exp(lnl);
        double p = (lnl - lne0) / dl; /* pixel coordinate of lam */
        long lo = (long)floor(p - span), hi = (long)ceil(p + span);
        if (hi < 0 || lo >= (long)n)
            continue;
        lo = lo < 0 ? 0 : lo;
        hi = hi > (long)n ? (long)n : hi;
        double w = fine[j] * lam * LAMOST_MOCK_DLNL;
        rvfit_mock_spread(c->phi, edge, lo, hi - lo, lam, 1.0 / (k * lam), w,
                          out);
    }
    for (size_t i = 0; i < n; i++)
        out[i] /= edge[i + 1] - edge[i];
}

static int lamost_signal(const rvfit_mock_job *job, size_t s,
                         lamost_mock_spec *o, lamost_scratch *w,
                         rvfit_err *err)
{
    size_t n = o->npix;
    for (size_t i = 0; i <= n; i++)
        w->edge[i] = pow(10.0, o->coeff0 + ((double)i - 0.5) *
                                               LAMOST_DLOGLAM);
    double lnl0 = log(w->edge[0] - LAMOST_MOCK_PAD);
    size_t nf = (size_t)ceil((log(w->edge[n] + LAMOST_MOCK_PAD) - lnl0) /
                             LAMOST_MOCK_DLNL) + 1;
    if (nf > w->nfine)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL, "mock star %zu: %zu "
                             "fine samples > %zu", s, nf, w->nfine);
    int rc = rvfit_mock_truth(job, s, NULL, lnl0, LAMOST_MOCK_DLNL, nf,
                              w->fine, err);
    if (rc)
        return rc;
    lamost_pixelize(job->ctx, o->coeff0, n, w->edge, lnl0, nf, w->fine,
                    w->pix);
    memcpy(w->tmp, w->pix, n * sizeof *w->tmp);
    double scale = rvfit_mock_scale(w->tmp, n, LAMOST_MOCK_LEVEL);
    for (size_t i = 0; i < n; i++)
        w->pix[i] *= scale;
    return RVFIT_OK;
}

/* Median S/N of the pixels in the five SDSS-like band ranges LAMOST
 * quotes (SNRU ... SNRZ). */
static void lamost_band_snr(lamost_mock_spec *o, double *work)
{
    static const double edge[6] = {3000, 4000, 5500, 7000, 8500, 10000};
    for (int b = 0; b < 5; b++) {
        size_t i0 = o->npix, i1 = 0;
        for (size_t i = 0; i < o->npix; i++) {
            double lam = pow(10.0, o->coeff0 + LAMOST_DLOGLAM * (double)i);
            if (lam >= edge[b] && lam < edge[b + 1]) {
                i0 = i < i0 ? i : i0;
                i1 = i + 1;
            }
        }
        o->snr[b] = i1 > i0 ? (float)rvfit_pixel_snr(o->flux + i0,
                                                     o->ivar + i0, i1 - i0,
                                                     work)
                            : NAN;
    }
}

/* Noise with sqrt(flux + sky) shape, scaled to the requested median S/N;
 * then 0-3 corrupted pixels flagged in andmask (ivar kept, so only the
 * mask removes them) and 0-2 dead ones (ivar 0). */
static void lamost_noise(const rvfit_mock_star *st, rvfit_rng *r,
                         lamost_mock_spec *o, lamost_scratch *w)
{
    size_t n = o->npix;
    double *shape = w->tmp, *ratio = w->tmp + n;
    for (size_t i = 0; i < n; i++) {
        double u = (double)i / (double)(n - 1);
        double sky = LAMOST_MOCK_LEVEL * (0.2 + 0.8 * u * u);
        shape[i] = sqrt(fmax(w->pix[i], 0.0) + sky);
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
            o->mask[p] |= LAMOST_MOCK_BADBIT;
        } else {
            o->ivar[p] = 0.0f;
        }
    }
    lamost_band_snr(o, ratio);
}

static int lamost_mock_star(const rvfit_mock_job *job, void *scratch,
                            size_t s, void *const *out, rvfit_err *err)
{
    lamost_mock_spec *o = out[LAMOST_BUF_SPEC];
    o->flux = out[LAMOST_BUF_FLUX];
    o->ivar = out[LAMOST_BUF_IVAR];
    o->mask = out[LAMOST_BUF_MASK];
    rvfit_rng r;
    rvfit_rng_seed(&r, job->seed, ((uint64_t)s + 1) * LAMOST_STREAM_KEY);
    o->coeff0 = LAMOST_MOCK_LL0 + LAMOST_DLOGLAM *
                floor(rvfit_rng_uniform(&r) * LAMOST_MOCK_SHIFT);
    o->npix = LAMOST_MOCK_NPIX -
              (size_t)(rvfit_rng_uniform(&r) * (LAMOST_MOCK_TRIM + 1));
    int rc = lamost_signal(job, s, o, scratch, err);
    if (!rc)
        lamost_noise(&job->stars[s], &r, o, scratch);
    return rc;
}

static void lamost_scratch_free(void *arg)
{
    lamost_scratch *w = arg;
    free(w->fine), free(w->pix), free(w->edge), free(w->tmp);
    free(w);
}

static void *lamost_scratch_new(const rvfit_mock_job *job)
{
    (void)job;
    lamost_scratch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    double lo = pow(10.0, LAMOST_MOCK_LL0 - LAMOST_DLOGLAM) - LAMOST_MOCK_PAD;
    double hi = pow(10.0, LAMOST_MOCK_LL0 + LAMOST_DLOGLAM *
                              (LAMOST_MOCK_SHIFT + LAMOST_MOCK_NPIX)) +
                LAMOST_MOCK_PAD;
    w->nfine = (size_t)ceil(log(hi / lo) / LAMOST_MOCK_DLNL) + 2;
    w->fine = malloc(w->nfine * sizeof *w->fine);
    w->pix = malloc(LAMOST_MOCK_NPIX * sizeof *w->pix);
    w->edge = malloc((LAMOST_MOCK_NPIX + 1) * sizeof *w->edge);
    w->tmp = malloc(2 * LAMOST_MOCK_NPIX * sizeof *w->tmp);
    if (!w->fine || !w->pix || !w->edge || !w->tmp) {
        lamost_scratch_free(w);
        return NULL;
    }
    return w;
}

void lamost_mock_job_init(rvfit_mock_job *job)
{
    job->block = LAMOST_MOCK_BLOCK;
    job->nbuf = LAMOST_NBUF;
    job->bytes[LAMOST_BUF_SPEC] = sizeof(lamost_mock_spec);
    job->bytes[LAMOST_BUF_FLUX] = LAMOST_MOCK_NPIX * sizeof(float);
    job->bytes[LAMOST_BUF_IVAR] = LAMOST_MOCK_NPIX * sizeof(float);
    job->bytes[LAMOST_BUF_MASK] = LAMOST_MOCK_NPIX * sizeof(int32_t);
    job->scratch_new = lamost_scratch_new;
    job->scratch_free = lamost_scratch_free;
    job->star = lamost_mock_star;
}
