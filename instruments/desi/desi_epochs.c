/* desi_epochs.c — the 'epochs' extension (rvfit/instrument_epochs.h):
 * each selected spectrum's object (TARGETID), exposure and MJD.
 *
 * A `spectra-` file has one row per exposure, and its FIBERMAP carries
 * EXPID and MJD per row.  A coadd row combines several exposures: it is
 * one epoch with EXPID -1 and the mean MJD of its exposures in
 * EXP_FIBERMAP (NaN when the file has none).  Unassigned fibres have
 * negative TARGETIDs: they belong to no object. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "desi_internal.h"

/* Scalar column `name` of the current HDU (nrow rows) as datatype into
 * *out (allocated), or *out = NULL when the HDU has no such column. */
static int desi_col_opt(desi_handle *h, const char *hdu, const char *name,
                        int datatype, size_t nrow, void **out, rvfit_err *err)
{
    *out = NULL;
    int cn = rvfit_fits_colnum(h->fp, name);
    if (!cn)
        return RVFIT_OK;
    int rc = rvfit_fits_check_col(h->fp, cn, RVFIT_FITS_SCALAR, h->path, hdu,
                                  NULL, err);
    if (rc)
        return rc;
    size_t esz = datatype == TDOUBLE ? sizeof(double) : sizeof(int64_t);
    *out = malloc((nrow ? nrow : 1) * esz);
    if (!*out)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: HDU %s: column %s",
                             h->path, hdu, name);
    return desi_read_col(h, hdu, cn, datatype, nrow, *out, err);
}

/* Mean MJD of the exposures of TARGETID tid in EXP_FIBERMAP (etid, emjd,
 * ne rows); NaN without one. */
static double desi_mean_mjd(const int64_t *etid, const double *emjd,
                            size_t ne, int64_t tid)
{
    double s = 0;
    size_t n = 0;
    for (size_t i = 0; i < ne; i++)
        if (etid[i] == tid && isfinite(emjd[i]))
            s += emjd[i], n++;
    return n ? s / (double)n : NAN;
}

/* A coadd's EXP_FIBERMAP TARGETID and MJD columns (both NULL when the
 * file has no such HDU or columns). */
static int desi_exp_fibermap(desi_handle *h, int64_t **etid, double **emjd,
                             size_t *ne, rvfit_err *err)
{
    int st = 0;
    long nrow = 0;
    *etid = NULL, *emjd = NULL, *ne = 0;
    if (fits_movnam_hdu(h->fp, BINARY_TBL, "EXP_FIBERMAP", 0, &st)) {
        fits_clear_errmsg();
        return RVFIT_OK;
    }
    fits_get_num_rows(h->fp, &nrow, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, "EXP_FIBERMAP",
                                "reading rows");
    int rc = desi_col_opt(h, "EXP_FIBERMAP", "TARGETID", TLONGLONG,
                          (size_t)nrow, (void **)etid, err);
    if (!rc)
        rc = desi_col_opt(h, "EXP_FIBERMAP", "MJD", TDOUBLE, (size_t)nrow,
                          (void **)emjd, err);
    if (!rc && (!*etid || !*emjd)) {
        free(*etid), free(*emjd);
        *etid = NULL, *emjd = NULL;
    }
    *ne = *etid ? (size_t)nrow : 0;
    return rc;
}

static void desi_fill_epoch(rvfit_epoch *e, int64_t tid, int64_t expid,
                            double mjd)
{
    memset(e, 0, sizeof *e);
    e->targetid = tid;
    e->expid = expid;
    e->mjd = mjd;
    if (tid < 0)
        snprintf(e->why, sizeof e->why, "negative TARGETID");
    else
        snprintf(e->key, sizeof e->key, "%lld", (long long)tid);
}

int desi_epochs(void *handle, size_t first, size_t count, rvfit_epoch *out,
                rvfit_err *err)
{
    desi_handle *h = handle;
    if (first > h->nsel || count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: epochs [%zu, %zu) "
                             "of %zu selected", h->path, first,
                             first + count, h->nsel);
    int st = 0, type = 0;
    if (fits_movabs_hdu(h->fp, h->hdu_fibermap, &type, &st))
        return rvfit_fits_error(err, st, h->path, "FIBERMAP",
                                "moving to HDU");
    int64_t *tid = NULL, *expid = NULL, *etid = NULL;
    double *mjd = NULL, *emjd = NULL;
    size_t ne = 0;
    int rc = desi_col_opt(h, "FIBERMAP", "TARGETID", TLONGLONG, h->ntotal,
                          (void **)&tid, err);
    if (!rc && !tid)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU FIBERMAP: no "
                           "TARGETID column (the object of each spectrum)",
                           h->path);
    if (!rc)
        rc = desi_col_opt(h, "FIBERMAP", "EXPID", TLONGLONG, h->ntotal,
                          (void **)&expid, err);
    if (!rc)
        rc = desi_col_opt(h, "FIBERMAP", "MJD", TDOUBLE, h->ntotal,
                          (void **)&mjd, err);
    int per_exposure = expid && mjd;
    if (!rc && !per_exposure)
        rc = desi_exp_fibermap(h, &etid, &emjd, &ne, err);
    for (size_t i = 0; i < count && !rc; i++) {
        size_t r = h->rows[first + i];
        if (per_exposure)
            desi_fill_epoch(&out[i], tid[r], expid[r], mjd[r]);
        else
            desi_fill_epoch(&out[i], tid[r], -1,
                            etid ? desi_mean_mjd(etid, emjd, ne, tid[r])
                                 : NAN);
    }
    free(tid), free(expid), free(mjd), free(etid), free(emjd);
    return rc;
}
