/* mockkit_loglam.c — the parts of a mock writer for instruments that
 * sample a log10(lambda) grid (BOSS, LAMOST): per-thread scratch, the
 * star's grid, pixel edges and truth, flux level, pixel defects and the
 * grid's header keywords.  The
 * operation order is kept as the sdss plugin had it, so that its mock
 * files did not change when this code moved here. */
#include <fitsio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/mockkit.h"

void rvfit_mock_scratch_free(void *scratch)
{
    rvfit_mock_scratch *w = scratch;
    if (!w)
        return;
    free(w->fine), free(w->pix), free(w->edge), free(w->tmp);
    free(w);
}

rvfit_mock_scratch *rvfit_mock_scratch_new(const rvfit_mock_loglam *g)
{
    rvfit_mock_scratch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    double lo = pow(10.0, g->ll0 - g->dloglam) - g->pad;
    double hi = pow(10.0, g->ll0 + g->dloglam *
                              (double)(g->shift + g->npix)) + g->pad;
    w->nfine = (size_t)ceil(log(hi / lo) / g->dlnl) + 2;
    w->fine = malloc(w->nfine * sizeof *w->fine);
    w->pix = malloc(g->npix * sizeof *w->pix);
    w->edge = malloc((g->npix + 1) * sizeof *w->edge);
    w->tmp = malloc(2 * g->npix * sizeof *w->tmp);
    if (!w->fine || !w->pix || !w->edge || !w->tmp) {
        rvfit_mock_scratch_free(w);
        return NULL;
    }
    return w;
}

void rvfit_mock_loglam_draw(const rvfit_mock_loglam *g, rvfit_rng *r,
                            double *coeff0, size_t *npix)
{
    *coeff0 = g->ll0 + g->dloglam * floor(rvfit_rng_uniform(r) *
                                          (double)g->shift);
    *npix = g->npix - (size_t)(rvfit_rng_uniform(r) * (double)(g->trim + 1));
}

int rvfit_mock_loglam_truth(const rvfit_mock_job *job, size_t s,
                            const rvfit_mock_loglam *g, double coeff0,
                            size_t n, rvfit_mock_scratch *w, double *lnl0,
                            size_t *nf, rvfit_err *err)
{
    for (size_t i = 0; i <= n; i++)
        w->edge[i] = pow(10.0, coeff0 + ((double)i - 0.5) * g->dloglam);
    *lnl0 = log(w->edge[0] - g->pad);
    *nf = (size_t)ceil((log(w->edge[n] + g->pad) - *lnl0) / g->dlnl) + 1;
    if (*nf > w->nfine)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL, "mock star %zu: %zu "
                             "fine samples > %zu", s, *nf, w->nfine);
    return rvfit_mock_truth(job, s, NULL, *lnl0, g->dlnl, *nf, w->fine, err);
}

void rvfit_mock_loglam_level(const rvfit_mock_loglam *g, size_t n,
                             rvfit_mock_scratch *w)
{
    memcpy(w->tmp, w->pix, n * sizeof *w->tmp);
    double scale = rvfit_mock_scale(w->tmp, n, g->level);
    for (size_t i = 0; i < n; i++)
        w->pix[i] *= scale;
}

void rvfit_mock_defects(rvfit_rng *r, size_t n, double c,
                        const double *shape, int32_t badbit, float *flux,
                        float *ivar, int32_t *mask, float *dead)
{
    int nbad = (int)(rvfit_rng_uniform(r) * 4.0);
    int ndead = (int)(rvfit_rng_uniform(r) * 3.0);
    for (int k = 0; k < nbad + ndead; k++) {
        size_t p = (size_t)(rvfit_rng_uniform(r) * (double)n);
        if (k < nbad) {
            flux[p] += (float)(30.0 * c * shape[p]);
            mask[p] |= badbit;
        } else {
            ivar[p] = 0.0f;
            if (dead)
                dead[p] = 0.0f;
        }
    }
}

void rvfit_mock_key_loglam(void *fptr, double coeff0, double dloglam,
                           int *status)
{
    fitsfile *fp = fptr;
    int t = 1;
    fits_write_key_fixdbl(fp, "COEFF0", coeff0, 4,
                          "log10(lambda) of the first pixel", status);
    fits_write_key_fixdbl(fp, "COEFF1", dloglam, 4, "log10(lambda) step",
                          status);
    fits_write_key(fp, TLOGICAL, "VACUUM", &t, "vacuum wavelengths",
                   status);
}
