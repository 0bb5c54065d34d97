/* desi_read.c — read ranges of selected spectra into a batch: flux, ivar
 * (0 for every unusable pixel), resolution band matrices, S/N and flags.
 * Reads go straight into the batch, one run of consecutive file rows at a
 * time, so memory does not grow with the file.  A range of many spectra
 * is cut into parts read by the host's threads, each with a CFITSIO
 * handle of its own on the file (CFITSIO's conversions and the copies out
 * of the page cache were the larger part of reading): the bytes that land
 * in the batch do not depend on the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "desi_internal.h"

/* Spectra per part of a parallel read: parts of a few spectra keep the
 * threads busy to the end, each still a few large CFITSIO reads. */
#define DESI_PART 8

static int desi_read_img(desi_handle *h, fitsfile *fp, int hdu,
                         const char *cam, const char *suffix, int datatype,
                         LONGLONG first, LONGLONG n, void *out,
                         rvfit_err *err)
{
    int st = 0, type = 0;
    fits_movabs_hdu(fp, hdu, &type, &st);
    fits_read_img(fp, datatype, first + 1, n, NULL, out, NULL, &st);
    if (st) {
        char name[48], what[96];
        snprintf(name, sizeof name, "%s_%s", cam, suffix);
        snprintf(what, sizeof what, "reading %lld values from element %lld",
                 (long long)n, (long long)first);
        return rvfit_fits_error(err, st, h->path, name, what);
    }
    return RVFIT_OK;
}

/* Non-finite flux: no pixel; non-finite or non-positive ivar, or a MASK
 * bit: no ivar.  On the bit patterns (finite: exponent not all ones;
 * positive and finite: 0 < bits < 0x7f800000 as a signed integer), as
 * isfinite and > 0 decide, without floating-point compares, so that the
 * loop vectorises. */
static void desi_clean(float *restrict flux, float *restrict ivar,
                       const uint32_t *restrict mask, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t f, v;
        memcpy(&f, &flux[i], sizeof f);
        memcpy(&v, &ivar[i], sizeof v);
        uint32_t fok = (f & 0x7fffffffu) < 0x7f800000u;
        uint32_t vok = fok & ((int32_t)v > 0) & ((int32_t)v < 0x7f800000) &
                       (mask[i] == 0);
        f &= 0u - fok;
        v &= 0u - vok;
        memcpy(&flux[i], &f, sizeof f);
        memcpy(&ivar[i], &v, sizeof v);
    }
}

/* Non-finite band-matrix elements become 0. */
static void desi_clean_res(float *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t r;
        memcpy(&r, &res[i], sizeof r);
        r &= 0u - (uint32_t)((r & 0x7fffffffu) < 0x7f800000u);
        memcpy(&res[i], &r, sizeof r);
    }
}

int desi_read_pixels(desi_handle *h, desi_worker *w, int c, size_t row0,
                     size_t n, float *flux, float *ivar, rvfit_err *err)
{
    desi_cam *C = &h->cam[c];
    size_t np = n * C->npix;
    if (np > w->mask_cap) {
        uint32_t *m = realloc(w->mask_buf, np * sizeof *m);
        if (!m)
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: HDU %s_MASK: "
                                 "%zu pixels", h->path, C->name, np);
        w->mask_buf = m;
        w->mask_cap = np;
    }
    LONGLONG first = (LONGLONG)(row0 * C->npix);
    int rc = desi_read_img(h, w->fp, C->hdu_flux, C->name, "FLUX", TFLOAT,
                           first, (LONGLONG)np, flux, err);
    if (!rc)
        rc = desi_read_img(h, w->fp, C->hdu_ivar, C->name, "IVAR", TFLOAT,
                           first, (LONGLONG)np, ivar, err);
    /* MASK is a bit set: unsigned 32-bit files (BZERO 2^31) read as TUINT,
     * plain int32 as TINT; both land as the same 32 bits. */
    if (!rc)
        rc = desi_read_img(h, w->fp, C->hdu_mask, C->name, "MASK",
                           C->mask_unsigned ? TUINT : TINT, first,
                           (LONGLONG)np, w->mask_buf, err);
    if (rc)
        return rc;
    desi_clean(flux, ivar, w->mask_buf, np);
    return RVFIT_OK;
}

/* Camera c of batch spectra [bi, bi+n) from file rows [row0, row0+n). */
static int desi_read_run(desi_handle *h, desi_worker *w, int c, size_t row0,
                         size_t n, rvfit_batch *b, size_t bi, rvfit_err *err)
{
    desi_cam *C = &h->cam[c];
    rvfit_arm_batch *A = &b->arm[c];
    size_t nd = (size_t)C->ndiag;
    int rc = desi_read_pixels(h, w, c, row0, n, A->flux + bi * C->npix,
                              A->ivar + bi * C->npix, err);
    if (rc)
        return rc;
    float *res = A->res + bi * nd * C->npix;
    rc = desi_read_img(h, w->fp, C->hdu_res, C->name, "RESOLUTION", TFLOAT,
                       (LONGLONG)(row0 * nd * C->npix),
                       (LONGLONG)(n * nd * C->npix), res, err);
    if (rc)
        return rc;
    desi_clean_res(res, n * nd * C->npix);
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

/* Selected spectra [first+i0, first+i1) into batch rows [i0, i1) with
 * worker w's handle: a run of consecutive file rows is one read per
 * image. */
static int desi_read_part(desi_handle *h, desi_worker *w, size_t first,
                          size_t i0, size_t i1, rvfit_batch *b,
                          rvfit_err *err)
{
    int rc = RVFIT_OK;
    size_t i = i0;
    while (i < i1 && !rc) {
        size_t n = 1, r0 = h->rows[first + i];
        while (i + n < i1 && h->rows[first + i + n] == r0 + n)
            n++;
        for (int c = 0; c < h->ncam && !rc; c++)
            rc = desi_read_run(h, w, c, r0, n, b, i, err);
        i += n;
    }
    for (size_t s = i0; s < i1 && !rc; s++)
        desi_finish_spec(h, b, s, first + s);
    return rc;
}

/* A parallel read: part k is spectra [k DESI_PART, (k+1) DESI_PART);
 * the error of the first part that failed is reported, as a serial read
 * would. */
typedef struct desi_job {
    desi_handle *h;
    size_t first, count;
    rvfit_batch *b;
    int *rc;          /* [nparts] */
    rvfit_err *err;   /* [nparts] */
} desi_job;

static void desi_job_part(void *ctx, int tid, size_t k)
{
    desi_job *J = ctx;
    desi_handle *h = J->h;
    desi_worker *w = &h->wk[tid];
    int st = 0;
    if (!w->fp && fits_open_diskfile(&w->fp, h->path, READONLY, &st)) {
        w->fp = NULL;
        J->rc[k] = rvfit_fits_error(&J->err[k], st, h->path, NULL,
                                    "opening it again to read in parallel");
        return;
    }
    size_t i0 = k * DESI_PART, i1 = i0 + DESI_PART;
    J->rc[k] = desi_read_part(h, w, J->first, i0,
                              i1 < J->count ? i1 : J->count, J->b, &J->err[k]);
}

/* The reading threads of h (at most nt), made once; 1 when reading is
 * serial. */
static int desi_threads(desi_handle *h, size_t count)
{
    int nt = h->host ? h->host->nthreads : 1;
    nt = nt < DESI_MAX_WORKERS ? nt : DESI_MAX_WORKERS;
    if (nt < 2 || count < 2 * DESI_PART || !fits_is_reentrant())
        return 1;
    if (!h->pool) {
        rvfit_err e;
        if (rvfit_pool_create(nt, &h->pool, &e) != RVFIT_OK)
            return 1;
    }
    return rvfit_pool_size(h->pool);
}

static int desi_read_parallel(desi_handle *h, size_t first, size_t count,
                              rvfit_batch *b, rvfit_err *err)
{
    size_t np = (count + DESI_PART - 1) / DESI_PART;
    desi_job J = {h, first, count, b, calloc(np, sizeof *J.rc),
                  malloc(np * sizeof *J.err)};
    if (!J.rc || !J.err) {
        free(J.rc), free(J.err);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: read of %zu spectra",
                             h->path, count);
    }
    rvfit_pool_run(h->pool, np, desi_job_part, &J);
    int rc = RVFIT_OK;
    for (size_t k = 0; k < np && !rc; k++)
        if ((rc = J.rc[k]) != RVFIT_OK)
            *err = J.err[k];
    free(J.rc), free(J.err);
    return rc;
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
    if (desi_threads(h, count) > 1)
        rc = desi_read_parallel(h, first, count, b, err);
    else
        rc = desi_read_part(h, &h->wk[0], first, 0, count, b, err);
    if (rc)
        return rc;
    b->nspec = count;
    return RVFIT_OK;
}

void desi_workers_free(desi_handle *h)
{
    rvfit_pool_destroy(h->pool);
    h->pool = NULL;
    for (int t = 0; t < DESI_MAX_WORKERS; t++) {
        desi_worker *w = &h->wk[t];
        if (t > 0 && w->fp) {
            int st = 0;
            fits_close_file(w->fp, &st);
        }
        free(w->mask_buf);
        memset(w, 0, sizeof *w);
    }
    fits_clear_errmsg();
}
