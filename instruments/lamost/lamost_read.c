/* lamost_read.c — the pixels of the file into the batch: vacuum
 * heliocentric wavelengths (lamost_wave.c), flux, ivar with every
 * unusable pixel at 0, and the Gaussian LSF sigma lambda / (R 2.3548) of
 * the configured resolution. */
#include <math.h>
#include <string.h>

#include "lamost_internal.h"

void lamost_usable(const lamost_opts *o, lamost_pix *p)
{
    for (size_t i = 0; i < p->npix; i++) {
        float f = p->flux[i], iv = p->ivar[i];
        int ok = isfinite(f) && isfinite(iv) && iv > 0.0f &&
                 p->andmask[i] == 0 && p->wave[i] >= o->lam_min &&
                 p->wave[i] <= o->lam_max;
        p->flux[i] = isfinite(f) ? f : 0.0f;
        p->ivar[i] = ok ? iv : 0.0f;
    }
}

static void lamost_fill(const lamost_handle *h, const lamost_pix *p,
                        rvfit_batch *b)
{
    rvfit_arm_batch *A = &b->arm[0];
    size_t n = p->npix;
    double k = 1.0 / (h->opts.resolution * LAMOST_FWHM_SIGMA);
    memcpy(A->wave, p->wave, n * sizeof *p->wave);
    memcpy(A->flux, p->flux, n * sizeof *p->flux);
    memcpy(A->ivar, p->ivar, n * sizeof *p->ivar);
    int usable = 0;
    for (size_t i = 0; i < n; i++) {
        A->lsf[i] = (float)(k * p->wave[i]);
        usable |= p->ivar[i] > 0.0f;
    }
    if (A->npix_own)
        A->npix_own[0] = n;
    b->snr[0] = rvfit_pixel_snr(p->flux, p->ivar, n, NULL);
    b->flags[0] = usable ? 0u : RVFIT_SPEC_BAD;
    b->index[0] = 0;
    b->nspec = 1;
}

int lamost_read(void *handle, size_t first, size_t count, rvfit_batch *b,
                rvfit_err *err)
{
    lamost_handle *h = handle;
    if (h->layout == LAMOST_MRS)
        return lamost_mrs_read(h, first, count, b, err);
    if (first > h->nsel || count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: read of spectra "
                             "[%zu, %zu) but %zu selected", h->path, first,
                             first + count, h->nsel);
    int rc = rvfit_batch_check_lsf(h->path, b, count, h->npix, err);
    if (rc || count == 0) {
        if (!rc)
            b->nspec = 0;
        return rc;
    }
    lamost_pix p;
    rc = lamost_load(h, &p, err);
    if (rc)
        return rc;
    lamost_usable(&h->opts, &p);
    lamost_fill(h, &p, b);
    lamost_pix_free(&p);
    return RVFIT_OK;
}
