/* sdss_open.c — open one spec file or a list of them: check every file's
 * COADD table, read identifiers and SPALL values once, apply the
 * selection (TARGETID list, minimum S/N) and describe the single BOSS arm
 * (per-spectrum wavelengths, Gaussian LSF). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdss_internal.h"

/* COADD columns read for every spectrum, in sdss_open_coadd()'s order. */
static const char *const sdss_coadd_cols[5] = {"flux", "loglam", "ivar",
                                               "and_mask", "wdisp"};

int sdss_open_coadd(const char *path, fitsfile **fp, size_t *npix,
                    int cols[5], rvfit_err *err)
{
    int st = 0;
    int hc = rvfit_fits_open_reader(path, (void **)fp, err);
    if (hc)
        return hc;
    if (sdss_goto_hdu(*fp, "COADD"))
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD missing "
                             "(not a BOSS spec file?)", path);
    long nrow = 0;
    fits_get_num_rows(*fp, &nrow, &st);
    if (st)
        return rvfit_fits_error(err, st, path, "COADD", "reading rows");
    if (nrow < 2)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: %ld "
                             "rows, need at least 2 pixels", path, nrow);
    /* NAXIS2 is trusted for allocations: it must fit in the file */
    int rc = rvfit_fits_check_extent(*fp, path, "COADD", err);
    for (int c = 0; c < 5 && !rc; c++) {
        if (!(cols[c] = rvfit_fits_colnum(*fp, sdss_coadd_cols[c])))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: "
                                 "column %s missing", path,
                                 sdss_coadd_cols[c]);
        rc = rvfit_fits_check_col(*fp, cols[c], RVFIT_FITS_SCALAR, path,
                                  "COADD", NULL, err);
    }
    if (rc)
        return rc;
    *npix = (size_t)nrow;
    return RVFIT_OK;
}

static void sdss_close_fp(fitsfile *fp)
{
    if (fp) {
        int st = 0;
        fits_close_file(fp, &st);
        fits_clear_errmsg();
    }
}

/* Check file k and cache what the selection and the tables need. */
static int sdss_scan_file(sdss_handle *h, size_t k, rvfit_err *err)
{
    sdss_spec *S = &h->spec[k];
    fitsfile *fp = NULL;
    int cols[5];
    int rc = sdss_open_coadd(S->path, &fp, &S->npix, cols, err);
    if (!rc)
        rc = sdss_read_meta(h, k, fp, err);
    sdss_close_fp(fp);
    if (!rc && S->npix > h->npix)
        h->npix = S->npix;
    return rc;
}

static int sdss_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Pixel S/N of file k, used when the file has no SN_MEDIAN_ALL. */
static int sdss_file_snr(sdss_handle *h, size_t k, rvfit_err *err)
{
    size_t n = h->npix;
    double *w = malloc(n * sizeof *w);
    float *f = malloc(n * sizeof *f), *iv = malloc(n * sizeof *iv);
    float *l = malloc(n * sizeof *l);
    int rc = (w && f && iv && l) ? RVFIT_OK
                                 : rvfit_err_set(err, RVFIT_ERR_NOMEM,
                                                 "%s: S/N", h->spec[k].path);
    if (!rc)
        rc = sdss_read_one(h, k, w, f, iv, l, err);
    if (!rc)
        h->spec[k].snr = rvfit_pixel_snr(f, iv, n, NULL);
    free(w), free(f), free(iv), free(l);
    return rc;
}

static int sdss_select(sdss_handle *h, const rvfit_select *sel,
                       rvfit_err *err)
{
    int64_t *ids = NULL;
    size_t nid = sel ? sel->ntargetid : 0;
    long drop_id = 0, drop_sn = 0;
    h->rows = malloc((h->nfile ? h->nfile : 1) * sizeof *h->rows);
    if (nid && (ids = malloc(nid * sizeof *ids)) != NULL) {
        memcpy(ids, sel->targetid, nid * sizeof *ids);
        qsort(ids, nid, sizeof *ids, sdss_cmp_i64);
    }
    if (!h->rows || (nid && !ids)) {
        free(ids);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: selection", h->path);
    }
    int rc = RVFIT_OK;
    for (size_t k = 0; k < h->nfile && !rc; k++) {
        if (nid && !bsearch(&h->spec[k].targetid, ids, nid, sizeof *ids,
                            sdss_cmp_i64)) {
            drop_id++;
            continue;
        }
        if (sel && sel->minsn > 0) {
            if (!isfinite(h->spec[k].snr))
                rc = sdss_file_snr(h, k, err);
            if (rc || !(h->spec[k].snr >= sel->minsn)) {
                drop_sn++;
                continue;
            }
        }
        h->rows[h->nsel++] = k;
    }
    free(ids);
    if (!rc)
        rvfit_log(h->host, RVFIT_LOG_INFO, SDSS_WHO,
                  "%s: selected %zu of %zu spectra (dropped: %ld targetid, "
                  "%ld minsn)", h->path, h->nsel, h->nfile, drop_id, drop_sn);
    return rc;
}

static void sdss_fill_info(sdss_handle *h)
{
    rvfit_file_info *I = &h->info;
    memset(I, 0, sizeof *I);
    I->narm = 1;
    snprintf(I->arm[0].name, sizeof I->arm[0].name, "%s", SDSS_ARM);
    I->arm[0].npix = h->npix;
    I->arm[0].res_kind = RVFIT_RES_LSF;
    I->arm[0].ndiag = 0;
    I->arm[0].wave_per_spec = 1;
    I->ntotal = h->nfile;
    I->nselect = h->nsel;
    I->ntable = SDSS_NTABLE;
    I->table = h->schema;
}

static int sdss_open_all(sdss_handle *h, const rvfit_select *sel,
                         rvfit_err *err)
{
    int rc = sdss_list_files(h, err);
    if (!rc) {
        h->num = malloc(h->nfile * SDSS_NCAND * sizeof *h->num);
        h->str = calloc(h->nfile * SDSS_NCAND, SDSS_STR_MAX);
        if (!h->num || !h->str)
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: %zu spectra",
                               h->path, h->nfile);
    }
    for (size_t k = 0; k < h->nfile && !rc; k++) {
        rc = sdss_scan_file(h, k, err);
        if (rc && h->is_list)
            rvfit_err_prefix(err, "list %s, entry %zu", h->path, k + 1);
    }
    if (!rc)
        rc = sdss_select(h, sel, err);
    if (!rc) {
        sdss_tables_init(h);
        sdss_fill_info(h);
    }
    return rc;
}

int sdss_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
              const char *path, const rvfit_select *sel, void **handle,
              rvfit_err *err)
{
    *handle = NULL;
    sdss_opts o;
    int rc = sdss_parse_opts(opts, nopt, &o, err);
    if (rc)
        return rc;
    if (strlen(path) >= SDSS_PATH_MAX)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%.200s...: path too "
                             "long", path);
    sdss_handle *h = calloc(1, sizeof *h);
    if (!h)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: handle", path);
    h->host = host;
    h->opts = o;
    snprintf(h->path, sizeof h->path, "%s", path);
    rc = sdss_open_all(h, sel, err);
    if (rc) {
        sdss_close(h);
        return rc;
    }
    *handle = h;
    return RVFIT_OK;
}

void sdss_info(void *handle, rvfit_file_info *info)
{
    sdss_handle *h = handle;
    *info = h->info;
}

void sdss_close(void *handle)
{
    sdss_handle *h = handle;
    if (!h)
        return;
    for (size_t k = 0; k < h->nfile; k++)
        free(h->spec[k].path);
    free(h->spec);
    free(h->rows);
    free(h->num);
    free(h->str);
    free(h);
}
