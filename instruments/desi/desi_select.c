/* desi_select.c — plugin options and target selection at open: object
 * type, fibre status, TARGETID list and a minimum S/N. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "desi_internal.h"

/* Copy s[0..n) without surrounding blanks into out (size len). */
static void desi_trim(const char *s, size_t n, char *out, size_t len)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= len)
        n = len - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

int desi_parse_opts(const rvfit_kv *opts, int nopt, desi_opts *o,
                    rvfit_err *err)
{
    memset(o, 0, sizeof *o);
    o->fiberstatus_mask = -1;
    int rc = rvfit_kv_int(opts, nopt, "fiberstatus_mask", -1, LONG_MAX,
                          &o->fiberstatus_mask, err);
    if (rc)
        return rc;
    const char *v = rvfit_kv_get(opts, nopt, "objtypes");
    while (v && *v) {
        const char *end = strchr(v, ',');
        size_t n = end ? (size_t)(end - v) : strlen(v);
        char word[16];
        desi_trim(v, n, word, sizeof word);
        if (word[0]) {
            if (o->nobjtype == (int)(sizeof o->objtype / sizeof o->objtype[0]))
                return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                     "instrument.desi: key 'objtypes': more "
                                     "than 16 values");
            snprintf(o->objtype[o->nobjtype++], sizeof o->objtype[0], "%s",
                     word);
        }
        v = end ? end + 1 : NULL;
    }
    return RVFIT_OK;
}

static int desi_objtype_ok(const desi_opts *o, const char *t)
{
    if (o->nobjtype == 0)
        return strcasecmp(t, "SKY") != 0 && strcasecmp(t, "BAD") != 0;
    for (int i = 0; i < o->nobjtype; i++)
        if (strcasecmp(t, o->objtype[i]) == 0)
            return 1;
    return 0;
}

static int desi_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* FIBERMAP columns the selection needs; each may be absent (NULL). */
typedef struct desi_selcols {
    int64_t *targetid;
    int64_t *status;
    char **objtype;
    char *objbuf;
} desi_selcols;

static void desi_selcols_free(desi_selcols *s)
{
    free(s->targetid);
    free(s->status);
    free(s->objtype);
    free(s->objbuf);
}

static int desi_read_selcols(desi_handle *h, desi_selcols *s, rvfit_err *err)
{
    int st = 0, type = 0, rc = RVFIT_OK;
    size_t n = h->ntotal ? h->ntotal : 1;
    fits_movabs_hdu(h->fp, h->hdu_fibermap, &type, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, "FIBERMAP", "moving to HDU");
    int ctid = rvfit_fits_colnum(h->fp, "TARGETID");
    int cstat = rvfit_fits_colnum(h->fp, "COADD_FIBERSTATUS");
    if (!cstat) /* spectra files: one row per exposure */
        cstat = rvfit_fits_colnum(h->fp, "FIBERSTATUS");
    int cobj = rvfit_fits_colnum(h->fp, "OBJTYPE");
    /* check every column's type before reading it */
    int cols[3] = {ctid, cstat, cobj};
    long wobj = 1;
    for (int k = 0; k < 3 && !rc; k++)
        if (cols[k])
            rc = rvfit_fits_check_col(h->fp, cols[k],
                                      k == 2 ? RVFIT_FITS_STRING
                                             : RVFIT_FITS_SCALAR,
                                      h->path, "FIBERMAP",
                                      k == 2 ? &wobj : NULL, err);
    if (rc)
        return rc;
    if (ctid && !(s->targetid = malloc(n * sizeof *s->targetid)))
        return RVFIT_ERR_NOMEM;
    if (cstat && !(s->status = malloc(n * sizeof *s->status)))
        return RVFIT_ERR_NOMEM;
    if (ctid)
        rc = desi_read_col(h, "FIBERMAP", ctid, TLONGLONG, h->ntotal,
                           s->targetid, err);
    if (!rc && cstat)
        rc = desi_read_col(h, "FIBERMAP", cstat, TLONGLONG, h->ntotal,
                           s->status, err);
    if (!rc && cobj) {
        size_t wl = (size_t)wobj + 1;
        s->objtype = malloc(n * sizeof *s->objtype);
        s->objbuf = calloc(n, wl);
        if (!s->objtype || !s->objbuf)
            return RVFIT_ERR_NOMEM;
        for (size_t i = 0; i < n; i++)
            s->objtype[i] = s->objbuf + i * wl;
        if (h->ntotal)
            fits_read_col(h->fp, TSTRING, cobj, 1, 1, (LONGLONG)h->ntotal,
                          NULL, s->objtype, NULL, &st);
        if (st)
            rc = rvfit_fits_error(err, st, h->path, "FIBERMAP",
                               "reading column OBJTYPE");
    }
    return rc;
}

/* SCORES MEDIAN_COADD_SNR_<cam> of every row into snr[row*ncam + c]. */
static int desi_read_scores_snr(desi_handle *h, double *snr, rvfit_err *err)
{
    for (size_t i = 0; i < h->ntotal * (size_t)h->ncam; i++)
        snr[i] = NAN;
    if (!h->hdu_scores || h->ntotal == 0)
        return RVFIT_OK;
    int st = 0, type = 0;
    fits_movabs_hdu(h->fp, h->hdu_scores, &type, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, "SCORES", "moving to HDU");
    double *col = malloc(h->ntotal * sizeof *col);
    if (!col)
        return RVFIT_ERR_NOMEM;
    int rc = RVFIT_OK;
    for (int c = 0; c < h->ncam && !rc; c++) {
        char name[40];
        snprintf(name, sizeof name, "MEDIAN_COADD_SNR_%s", h->cam[c].name);
        int cn = rvfit_fits_colnum(h->fp, name);
        if (!cn)
            continue;
        rc = rvfit_fits_check_col(h->fp, cn, RVFIT_FITS_SCALAR, h->path,
                                  "SCORES", NULL, err);
        if (!rc)
            rc = desi_read_col(h, "SCORES", cn, TDOUBLE, h->ntotal, col,
                               err);
        for (size_t i = 0; i < h->ntotal && !rc; i++)
            snr[i * (size_t)h->ncam + (size_t)c] = col[i];
    }
    free(col);
    return rc;
}

/* Max over arms of the S/N of file row r, computing missing values from
 * the pixels (stored back into snr). */
static int desi_row_maxsnr(desi_handle *h, size_t r, double *snr, float *fl,
                           float *iv, double *out, rvfit_err *err)
{
    double best = -INFINITY;
    for (int c = 0; c < h->ncam; c++) {
        double *v = &snr[r * (size_t)h->ncam + (size_t)c];
        if (!isfinite(*v)) {
            int rc = desi_read_pixels(h, &h->wk[0], c, r, 1, fl, iv, err);
            if (rc)
                return rc;
            *v = rvfit_pixel_snr(fl, iv, h->cam[c].npix, NULL);
        }
        if (isfinite(*v) && *v > best)
            best = *v;
    }
    *out = best;
    return RVFIT_OK;
}

enum { DROP_OBJTYPE, DROP_STATUS, DROP_TARGETID, DROP_SNR, DROP_N };

static int desi_pass(desi_handle *h, const desi_opts *o,
                     const rvfit_select *sel, const desi_selcols *s,
                     const int64_t *ids, size_t r, long *drop)
{
    if (s->objtype) {
        char t[32];
        desi_trim(s->objtype[r], strlen(s->objtype[r]), t, sizeof t);
        if (!desi_objtype_ok(o, t))
            return drop[DROP_OBJTYPE]++, 0;
    }
    if (s->status && (s->status[r] & (int64_t)o->fiberstatus_mask) != 0)
        return drop[DROP_STATUS]++, 0;
    if (sel && sel->ntargetid > 0 &&
        !bsearch(&s->targetid[r], ids, sel->ntargetid, sizeof *ids,
                 desi_cmp_i64))
        return drop[DROP_TARGETID]++, 0;
    (void)h;
    return 1;
}

static int desi_select_rows(desi_handle *h, const desi_opts *o,
                            const rvfit_select *sel, const desi_selcols *s,
                            const int64_t *ids, double *snr, long *drop,
                            rvfit_err *err)
{
    size_t maxpix = 0;
    for (int c = 0; c < h->ncam; c++)
        if (h->cam[c].npix > maxpix)
            maxpix = h->cam[c].npix;
    float *fl = malloc(maxpix * sizeof *fl);
    float *iv = malloc(maxpix * sizeof *iv);
    int rc = (fl && iv) ? RVFIT_OK : RVFIT_ERR_NOMEM;
    for (size_t r = 0; r < h->ntotal && !rc; r++) {
        if (!desi_pass(h, o, sel, s, ids, r, drop))
            continue;
        if (sel && sel->minsn > 0) {
            double m;
            rc = desi_row_maxsnr(h, r, snr, fl, iv, &m, err);
            if (rc || !(m >= sel->minsn)) {
                drop[DROP_SNR]++;
                continue;
            }
        }
        h->rows[h->nsel++] = r;
    }
    free(fl);
    free(iv);
    return rc;
}

int desi_select(desi_handle *h, const desi_opts *o, const rvfit_select *sel,
                rvfit_err *err)
{
    desi_selcols s = {0};
    int64_t *ids = NULL;
    long drop[DROP_N] = {0};
    size_t n = h->ntotal ? h->ntotal : 1;
    double *snr = malloc(n * (size_t)h->ncam * sizeof *snr);
    h->rows = malloc(n * sizeof *h->rows);
    int rc = (snr && h->rows) ? RVFIT_OK : RVFIT_ERR_NOMEM;
    if (!rc)
        rc = desi_read_selcols(h, &s, err);
    if (!rc)
        rc = desi_read_scores_snr(h, snr, err);
    if (!rc && sel && sel->ntargetid > 0) {
        if (!s.targetid)
            rc = rvfit_err_set(err, RVFIT_ERR_FORMAT,
                               "%s: HDU FIBERMAP: no TARGETID column to "
                               "select on", h->path);
        else if (!(ids = malloc(sel->ntargetid * sizeof *ids)))
            rc = RVFIT_ERR_NOMEM;
        else {
            memcpy(ids, sel->targetid, sel->ntargetid * sizeof *ids);
            qsort(ids, sel->ntargetid, sizeof *ids, desi_cmp_i64);
        }
    }
    if (!rc)
        rc = desi_select_rows(h, o, sel, &s, ids, snr, drop, err);
    if (rc == RVFIT_ERR_NOMEM)
        rvfit_err_set(err, rc, "%s: selection of %zu spectra", h->path,
                      h->ntotal);
    if (!rc) {
        /* Keep the S/N of the selected rows only; NaN = compute at read. */
        for (size_t i = 0; i < h->nsel; i++)
            for (int c = 0; c < h->ncam; c++)
                snr[i * (size_t)h->ncam + (size_t)c] =
                    snr[h->rows[i] * (size_t)h->ncam + (size_t)c];
        h->snr = snr;
        snr = NULL;
        rvfit_log(h->host, RVFIT_LOG_INFO, DESI_WHO,
                  "%s: selected %zu of %zu spectra (dropped: %ld objtype, "
                  "%ld fiberstatus, %ld targetid, %ld minsn)",
                  h->path, h->nsel, h->ntotal, drop[DROP_OBJTYPE],
                  drop[DROP_STATUS], drop[DROP_TARGETID], drop[DROP_SNR]);
    }
    free(snr);
    free(ids);
    desi_selcols_free(&s);
    return rc;
}
