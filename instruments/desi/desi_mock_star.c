/* desi_mock_star.c — one synthetic DESI spectrum: truth on a fine log grid
 * -> LSF convolution and pixel integration -> flux scale -> noise with a
 * sqrt(flux + sky) shape normalised to the requested median S/N -> a few
 * cosmic-ray hits (masked).  Each star draws from its own PRNG stream, so
 * the output depends on (seed, star) only, never on the thread layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desi_mock.h"

/* Per-thread scratch. */
typedef struct desi_scratch {
    double *fine;                  /* truth on the fine grid             */
    double *pix[DESI_MOCK_NARM];   /* noiseless pixel fluxes             */
    double *tmp;                   /* median work space                  */
} desi_scratch;

static size_t desi_fine_n(const desi_mock_arm *A, double *lnl0)
{
    double last = A->lam0 + A->dlam * (double)(A->npix - 1);
    *lnl0 = log(A->lam0 - DESI_MOCK_PAD);
    return (size_t)ceil((log(last + DESI_MOCK_PAD) - *lnl0) /
                        DESI_MOCK_DLNL) + 1;
}

/* Noiseless pixel fluxes of star s in every camera, scaled so that their
 * median is DESI_MOCK_FLUX_LEVEL. */
static int desi_star_signal(const rvfit_mock_job *job, size_t s,
                            double fibre, desi_scratch *w, rvfit_err *err)
{
    const desi_mock_ctx *c = job->ctx;
    const desi_mock_arm *arms = desi_mock_arms();
    size_t ntot = 0;
    for (int a = 0; a < DESI_MOCK_NARM; a++) {
        double lnl0;
        size_t n = desi_fine_n(&arms[a], &lnl0);
        char part[32];
        snprintf(part, sizeof part, "camera %s", arms[a].name);
        int rc = rvfit_mock_truth(job, s, part, lnl0, DESI_MOCK_DLNL, n,
                                  w->fine, err);
        if (rc)
            return rc;
        desi_pixelize(c->phi, &arms[a], fibre, lnl0, DESI_MOCK_DLNL, n,
                      w->fine, w->pix[a]);
        memcpy(w->tmp + ntot, w->pix[a], arms[a].npix * sizeof(double));
        ntot += arms[a].npix;
    }
    double scale = rvfit_mock_scale(w->tmp, ntot, DESI_MOCK_FLUX_LEVEL);
    for (int a = 0; a < DESI_MOCK_NARM; a++)
        for (size_t i = 0; i < arms[a].npix; i++)
            w->pix[a][i] *= scale;
    return RVFIT_OK;
}

/* Throughput falls off over the last ~20 pixels of a camera, as on the
 * real CCDs: the noise rises there. */
static double desi_edge_taper(size_t i, size_t npix)
{
    double d = (double)(i < npix - 1 - i ? i : npix - 1 - i);
    return 1.0 - 0.6 * exp(-d / 8.0);
}

/* Noise, ivar, cosmics and the S/N summary of camera a of star s. */
static void desi_star_noise(const rvfit_mock_job *job, size_t s, int a,
                            rvfit_rng *rng, desi_scratch *w,
                            void *const *out)
{
    const desi_mock_ctx *mc = job->ctx;
    const desi_mock_arm *A = &desi_mock_arms()[a];
    const double *F = w->pix[a];
    size_t np = A->npix;
    float *fl = out[DESI_BUF(a, 0)], *iv = out[DESI_BUF(a, 1)];
    int32_t *mk = out[DESI_BUF(a, 2)];
    double *shape = w->tmp, *ratio = w->tmp + np;
    double sky = A->sky * DESI_MOCK_FLUX_LEVEL;
    for (size_t i = 0; i < np; i++) {
        shape[i] = sqrt(fmax(F[i], 0.0) + sky) / desi_edge_taper(i, np);
        mk[i] = 0;
    }
    double c = rvfit_mock_noise(F, shape, np, job->stars[s].snr, rng, ratio,
                                fl, iv);
    int nhit = (int)(rvfit_rng_uniform(rng) * 4.0); /* 0..3 cosmics */
    for (int k = 0; k < nhit; k++) {
        size_t p = (size_t)(rvfit_rng_uniform(rng) * (double)np);
        size_t len = 1 + (size_t)(rvfit_rng_uniform(rng) * 3.0);
        double amp = (5.0 + 20.0 * rvfit_rng_uniform(rng)) * c * shape[p];
        for (size_t i = p; i < p + len && i < np; i++) {
            fl[i] += (float)amp;
            iv[i] = 0.0f;
            mk[i] |= DESI_MASK_COSMIC;
        }
    }
    size_t k = s * DESI_MOCK_NARM + (size_t)a, n = 0;
    mc->snr_med[k] = (float)rvfit_pixel_snr(fl, iv, np, ratio);
    for (size_t i = 0; i < np; i++)
        if (iv[i] > 0.0f)
            ratio[n++] = fl[i];
    mc->flux_med[k] = (float)rvfit_median(ratio, n);
}

static int desi_mock_star(const rvfit_mock_job *job, void *scratch, size_t s,
                          void *const *out, rvfit_err *err)
{
    const desi_mock_ctx *c = job->ctx;
    rvfit_rng rng;
    rvfit_rng_seed(&rng, job->seed, (uint64_t)s + 1);
    /* per-fibre LSF width: a few per cent either way */
    double fibre = 1.0 + 0.03 * (2.0 * rvfit_rng_uniform(&rng) - 1.0);
    int rc = desi_star_signal(job, s, fibre, scratch, err);
    if (rc)
        return rc;
    for (int a = 0; a < DESI_MOCK_NARM; a++) {
        desi_star_noise(job, s, a, &rng, scratch, out);
        desi_res_matrix(c->phi, &desi_mock_arms()[a], fibre,
                        out[DESI_BUF(a, 3)]);
    }
    return RVFIT_OK;
}

static void desi_scratch_free(void *arg)
{
    desi_scratch *w = arg;
    for (int a = 0; a < DESI_MOCK_NARM; a++)
        free(w->pix[a]);
    free(w->fine);
    free(w->tmp);
    free(w);
}

static void *desi_scratch_new(const rvfit_mock_job *job)
{
    (void)job;
    desi_scratch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    const desi_mock_arm *arms = desi_mock_arms();
    size_t nfine = 0, ntot = 0;
    int ok = 1;
    for (int a = 0; a < DESI_MOCK_NARM; a++) {
        double l0;
        size_t n = desi_fine_n(&arms[a], &l0);
        nfine = n > nfine ? n : nfine;
        ntot += arms[a].npix;
        ok &= (w->pix[a] = malloc(arms[a].npix * sizeof(double))) != NULL;
    }
    w->fine = malloc(nfine * sizeof(double));
    w->tmp = malloc(2 * ntot * sizeof(double));
    if (!ok || !w->fine || !w->tmp) {
        desi_scratch_free(w);
        return NULL;
    }
    return w;
}

void desi_mock_job_init(rvfit_mock_job *job)
{
    const desi_mock_arm *arms = desi_mock_arms();
    job->block = DESI_MOCK_BLOCK;
    job->nbuf = DESI_NBUF;
    for (int a = 0; a < DESI_MOCK_NARM; a++) {
        size_t np = arms[a].npix;
        job->bytes[DESI_BUF(a, 0)] = np * sizeof(float);
        job->bytes[DESI_BUF(a, 1)] = np * sizeof(float);
        job->bytes[DESI_BUF(a, 2)] = np * sizeof(int32_t);
        job->bytes[DESI_BUF(a, 3)] = np * DESI_MOCK_NDIAG * sizeof(float);
    }
    job->scratch_new = desi_scratch_new;
    job->scratch_free = desi_scratch_free;
    job->star = desi_mock_star;
}
