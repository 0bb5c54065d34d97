/* sdss_read.c — pixels of one spec file into the batch: vacuum
 * wavelengths from loglam (snapped to the exact COEFF0/COEFF1 grid, since
 * loglam is stored as float32), flux, ivar with every unusable pixel at 0,
 * and the Gaussian LSF sigma from WDISP.  Spectra shorter than the batch
 * are padded with ivar 0 on wavelengths extrapolated on the same step, and
 * npix_own says how long they are, so that a spectrum's fit does not
 * depend on the other files of a list. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdss_internal.h"

#define SDSS_LN10 2.302585092994045684
/* loglam as float32 near 3.5-4.0 is good to ~5e-7 dex; a larger miss
 * means the file's grid is not COEFF0 + i*COEFF1. */
#define SDSS_SNAP_TOL 5e-6

typedef struct sdss_cols {
    float *flux, *ivar, *wdisp;
    double *loglam;
    int32_t *mask;
} sdss_cols;

static int sdss_read_cols(const char *path, size_t *n, sdss_cols *c,
                          size_t cap, rvfit_err *err)
{
    fitsfile *fp = NULL;
    int cols[5], st = 0;
    int rc = sdss_open_coadd(path, &fp, n, cols, err);
    if (!rc && *n > cap)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: %zu rows, "
                           "but %zu at open (file changed?)", path, *n, cap);
    if (!rc) {
        LONGLONG m = (LONGLONG)*n;
        fits_read_col(fp, TFLOAT, cols[0], 1, 1, m, NULL, c->flux, NULL, &st);
        fits_read_col(fp, TDOUBLE, cols[1], 1, 1, m, NULL, c->loglam, NULL,
                      &st);
        fits_read_col(fp, TFLOAT, cols[2], 1, 1, m, NULL, c->ivar, NULL, &st);
        fits_read_col(fp, TINT, cols[3], 1, 1, m, NULL, c->mask, NULL, &st);
        fits_read_col(fp, TFLOAT, cols[4], 1, 1, m, NULL, c->wdisp, NULL, &st);
        if (st)
            rc = rvfit_fits_error(err, st, path, "COADD", "reading pixels");
    }
    if (fp) {
        int s2 = 0;
        fits_close_file(fp, &s2);
        fits_clear_errmsg();
    }
    return rc;
}

/* Wavelengths of n file pixels and npix - n padded ones. */
static int sdss_wave(const sdss_spec *S, const double *ll, size_t n,
                     size_t npix, double *wave, rvfit_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(ll[i]) || (i && ll[i] <= ll[i - 1]))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: "
                                 "loglam[%zu] = %g is not finite and "
                                 "increasing", S->path, i, ll[i]);
    double step = (ll[n - 1] - ll[0]) / (double)(n - 1), base = ll[0];
    int snap = isfinite(S->coeff0) && S->coeff1 > 0 &&
               fabs(S->coeff1 - step) < 0.01 * S->coeff1;
    if (snap) {
        double off = nearbyint((ll[0] - S->coeff0) / S->coeff1);
        base = S->coeff0 + off * S->coeff1;
        step = S->coeff1;
        for (size_t i = 0; i < n && snap; i++)
            snap = fabs(ll[i] - (base + step * (double)i)) < SDSS_SNAP_TOL;
    }
    for (size_t i = 0; i < npix; i++) {
        double l;
        if (snap)
            l = base + step * (double)i;
        else if (i < n)
            l = ll[i];
        else
            l = ll[n - 1] + step * (double)(i - n + 1);
        wave[i] = pow(10.0, l);
        /* loglam of +-400 passes the loglam check but not this one */
        if (i < n && (!isfinite(wave[i]) || !(wave[i] > 0.0) ||
                      (i && wave[i] <= wave[i - 1])))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: "
                                 "wavelength %zu = 10^%g is not finite, "
                                 "positive and increasing", S->path, i,
                                 ll[i]);
    }
    return RVFIT_OK;
}

/* LSF sigma (A) from WDISP; an unusable WDISP takes the previous usable
 * one (the first usable one before it; 1 pixel when none), padded pixels
 * the last one.  WDISP is in pixels (about 1 for BOSS): beyond
 * SDSS_WDISP_MAX it is junk, not a resolution. */
#define SDSS_WDISP_MAX 1000.0f
static int sdss_wdisp_ok(float w)
{
    return isfinite(w) && w > 0.0f && w < SDSS_WDISP_MAX;
}

static int sdss_lsf(const sdss_spec *S, const float *wdisp,
                    const double *wave, size_t n, size_t npix, float *lsf,
                    rvfit_err *err)
{
    size_t f0 = 0;
    while (f0 < n && !sdss_wdisp_ok(wdisp[f0]))
        f0++;
    double last = f0 < n ? wdisp[f0] : 1.0;
    for (size_t i = 0; i < npix; i++) {
        if (i < n && sdss_wdisp_ok(wdisp[i]))
            last = wdisp[i];
        lsf[i] = (float)(last * SDSS_DLOGLAM * SDSS_LN10 * wave[i]);
        if (!isfinite(lsf[i])) /* a wavelength no float sigma can follow */
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: "
                                 "LSF sigma at pixel %zu (%g A) is not "
                                 "finite", S->path, i, wave[i]);
    }
    return RVFIT_OK;
}

static int sdss_cols_alloc(sdss_cols *c, size_t n)
{
    c->flux = malloc(n * sizeof *c->flux);
    c->ivar = malloc(n * sizeof *c->ivar);
    c->wdisp = malloc(n * sizeof *c->wdisp);
    c->loglam = malloc(n * sizeof *c->loglam);
    c->mask = malloc(n * sizeof *c->mask);
    return c->flux && c->ivar && c->wdisp && c->loglam && c->mask;
}

static void sdss_cols_free(sdss_cols *c)
{
    free(c->flux), free(c->ivar), free(c->wdisp), free(c->loglam);
    free(c->mask);
}

int sdss_read_one(sdss_handle *h, size_t k, double *wave, float *flux,
                  float *ivar, float *lsf, rvfit_err *err)
{
    const sdss_spec *S = &h->spec[k];
    size_t npix = h->npix, n = 0;
    sdss_cols c;
    int rc = sdss_cols_alloc(&c, npix)
                 ? sdss_read_cols(S->path, &n, &c, npix, err)
                 : rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: %zu pixels",
                                 S->path, npix);
    if (!rc)
        rc = sdss_wave(S, c.loglam, n, npix, wave, err);
    if (!rc)
        rc = sdss_lsf(S, c.wdisp, wave, n, npix, lsf, err);
    if (!rc) {
        for (size_t i = 0; i < npix; i++) {
            float f = i < n ? c.flux[i] : 0.0f;
            float iv = i < n ? c.ivar[i] : 0.0f;
            int ok = i < n && isfinite(f) && isfinite(iv) && iv > 0.0f &&
                     c.mask[i] == 0 && wave[i] >= h->opts.lam_min &&
                     wave[i] <= h->opts.lam_max;
            flux[i] = isfinite(f) ? f : 0.0f;
            ivar[i] = ok ? iv : 0.0f;
        }
    }
    sdss_cols_free(&c);
    return rc;
}

int sdss_read(void *handle, size_t first, size_t count, rvfit_batch *b,
              rvfit_err *err)
{
    sdss_handle *h = handle;
    if (first > h->nsel || count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: read of spectra "
                             "[%zu, %zu) but %zu selected", h->path, first,
                             first + count, h->nsel);
    int rc = rvfit_batch_check_lsf(h->path, b, count, h->npix, err);
    rvfit_arm_batch *A = &b->arm[0];
    size_t n = h->npix;
    for (size_t s = 0; s < count && !rc; s++) {
        size_t k = h->rows[first + s];
        rc = sdss_read_one(h, k, A->wave + s * n, A->flux + s * n,
                           A->ivar + s * n, A->lsf + s * n, err);
        if (rc)
            break;
        /* the file's own pixels; the rest pads it to the list's longest */
        if (A->npix_own)
            A->npix_own[s] = h->spec[k].npix;
        int usable = 0;
        for (size_t i = 0; i < n && !usable; i++)
            usable = A->ivar[s * n + i] > 0.0f;
        b->snr[s] =
            rvfit_pixel_snr(A->flux + s * n, A->ivar + s * n, n, NULL);
        b->flags[s] = usable ? 0u : RVFIT_SPEC_BAD;
        b->index[s] = k;
    }
    if (!rc)
        b->nspec = count;
    return rc;
}
