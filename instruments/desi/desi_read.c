/* desi_read.c — read ranges of selected spectra into a batch: flux, ivar
 * (0 for every unusable pixel), resolution band matrices, S/N and flags.
 * Reads go straight into the batch, one run of consecutive file rows at a
 * time, so memory does not grow with the file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "desi_internal.h"

static int desi_read_img(desi_handle *h, int hdu, const char *cam,
                         const char *suffix, int datatype, LONGLONG first,
                         LONGLONG n, void *out, rvfit_err *err)
{
    int st = 0, type = 0;
    fits_movabs_hdu(h->fp, hdu, &type, &st);
    fits_read_img(h->fp, datatype, first + 1, n, NULL, out, NULL, &st);
    if (st) {
        char name[48], what[96];
        snprintf(name, sizeof name, "%s_%s", cam, suffix);
        snprintf(what, sizeof what, "reading %lld values from element %lld",
                 (long long)n, (long long)first);
        return rvfit_fits_error(err, st, h->path, name, what);
    }
    return RVFIT_OK;
}

int desi_read_pixels(desi_handle *h, int c, size_t row0, size_t n,
                     float *flux, float *ivar, rvfit_err *err)
{
    desi_cam *C = &h->cam[c];
    size_t np = n * C->npix;
    if (np > h->mask_cap) {
        uint32_t *m = realloc(h->mask_buf, np * sizeof *m);
        if (!m)
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: HDU %s_MASK: "
                                 "%zu pixels", h->path, C->name, np);
        h->mask_buf = m;
        h->mask_cap = np;
    }
    LONGLONG first = (LONGLONG)(row0 * C->npix);
    int rc = desi_read_img(h, C->hdu_flux, C->name, "FLUX", TFLOAT, first,
                           (LONGLONG)np, flux, err);
    if (!rc)
        rc = desi_read_img(h, C->hdu_ivar, C->name, "IVAR", TFLOAT, first,
                           (LONGLONG)np, ivar, err);
    /* MASK is a bit set: unsigned 32-bit files (BZERO 2^31) read as TUINT,
     * plain int32 as TINT; both land as the same 32 bits. */
    if (!rc)
        rc = desi_read_img(h, C->hdu_mask, C->name, "MASK",
                           C->mask_unsigned ? TUINT : TINT, first,
                           (LONGLONG)np, h->mask_buf, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < np; i++) {
        if (!isfinite(flux[i])) {
            flux[i] = 0.0f;
            ivar[i] = 0.0f;
        } else if (!isfinite(ivar[i]) || !(ivar[i] > 0.0f) ||
                   h->mask_buf[i] != 0) {
            ivar[i] = 0.0f;
        }
    }
    return RVFIT_OK;
}

/* Camera c of batch spectra [bi, bi+n) from file rows [row0, row0+n). */
static int desi_read_run(desi_handle *h, int c, size_t row0, size_t n,
                         rvfit_batch *b, size_t bi, rvfit_err *err)
{
    desi_cam *C = &h->cam[c];
    rvfit_arm_batch *A = &b->arm[c];
    size_t nd = (size_t)C->ndiag;
    int rc = desi_read_pixels(h, c, row0, n, A->flux + bi * C->npix,
                              A->ivar + bi * C->npix, err);
    if (rc)
        return rc;
    float *res = A->res + bi * nd * C->npix;
    rc = desi_read_img(h, C->hdu_res, C->name, "RESOLUTION", TFLOAT,
                       (LONGLONG)(row0 * nd * C->npix),
                       (LONGLONG)(n * nd * C->npix), res, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n * nd * C->npix; i++)
        if (!isfinite(res[i]))
            res[i] = 0.0f;
    return RVFIT_OK;
}

static int desi_check_batch(const desi_handle *h, const rvfit_batch *b,
                            size_t count, rvfit_err *err)
{
    if (count > b->cap || b->narm != h->ncam)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: batch of %zu spectra / %d arms for %zu "
                             "spectra / %d arms",
                             h->path, b->cap, b->narm, count, h->ncam);
    for (int c = 0; c < h->ncam; c++) {
        const rvfit_arm_batch *A = &b->arm[c];
        if (A->npix != h->cam[c].npix || A->ndiag != h->cam[c].ndiag ||
            A->res_kind != RVFIT_RES_BAND || A->wave_per_spec || !A->res)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "%s: batch arm %d (%s) does not match "
                                 "camera %s (%zu pixels, %d diagonals)",
                                 h->path, c, A->name, h->cam[c].name,
                                 h->cam[c].npix, h->cam[c].ndiag);
    }
    return RVFIT_OK;
}

/* S/N per arm (SCORES when known, else from pixels) and the BAD flag. */
static void desi_finish_spec(desi_handle *h, rvfit_batch *b, size_t s,
                             size_t sel)
{
    int usable = 0;
    for (int c = 0; c < h->ncam; c++) {
        const rvfit_arm_batch *A = &b->arm[c];
        const float *fl = A->flux + s * A->npix;
        const float *iv = A->ivar + s * A->npix;
        int any = 0;
        for (size_t i = 0; i < A->npix && !any; i++)
            any = iv[i] > 0.0f;
        usable |= any;
        double v = h->snr[sel * (size_t)h->ncam + (size_t)c];
        if (!isfinite(v))
            v = rvfit_pixel_snr(fl, iv, A->npix, NULL);
        b->snr[s * (size_t)b->narm + (size_t)c] = v;
    }
    b->flags[s] = usable ? 0u : RVFIT_SPEC_BAD;
    b->index[s] = h->rows[sel];
}

int desi_read(void *handle, size_t first, size_t count, rvfit_batch *b,
              rvfit_err *err)
{
    desi_handle *h = handle;
    if (first > h->nsel || count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: read of spectra [%zu, %zu) but %zu "
                             "selected",
                             h->path, first, first + count, h->nsel);
    int rc = desi_check_batch(h, b, count, err);
    if (rc)
        return rc;
    for (int c = 0; c < h->ncam; c++)
        memcpy(b->arm[c].wave, h->cam[c].wave,
               h->cam[c].npix * sizeof(double));
    size_t i = 0;
    while (i < count && !rc) {
        /* a run of consecutive file rows is one contiguous read */
        size_t n = 1, r0 = h->rows[first + i];
        while (i + n < count && h->rows[first + i + n] == r0 + n)
            n++;
        for (int c = 0; c < h->ncam && !rc; c++)
            rc = desi_read_run(h, c, r0, n, b, i, err);
        i += n;
    }
    if (rc)
        return rc;
    for (size_t s = 0; s < count; s++)
        desi_finish_spec(h, b, s, first + s);
    b->nspec = count;
    return RVFIT_OK;
}
