/* lamost_open.c — open one LRS spec file or MRS med- file: find its kind
 * and layout, read the primary header once (and an MRS file's list of
 * tables, lamost_mrs_scan.c), apply the selection (TARGETID list, minimum
 * S/N) and describe the arms (LRS; or MRS_B and MRS_R), each with own
 * wavelengths and a Gaussian LSF.  The pixels are read again by read(): a
 * handle holds a few hundred bytes (and an MRS file's table list), so the
 * core may keep many files open while it fills a batch across them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lamost_internal.h"

int lamost_load(const lamost_handle *h, lamost_pix *p, rvfit_err *err)
{
    fitsfile *fp = NULL;
    int layout = 0;
    size_t n = 0;
    memset(p, 0, sizeof *p);
    int rc = lamost_open_file(h->path, &fp, &layout, &n, err);
    if (!rc && (layout != h->layout || n != h->npix))
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: layout or length "
                           "changed since open (file rewritten?)", h->path);
    if (!rc && !lamost_pix_alloc(p, n))
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: %zu pixels", h->path,
                           n);
    if (!rc)
        rc = lamost_read_pixels(fp, h->path, layout, p, err);
    lamost_close_file(fp);
    if (!rc)
        rc = lamost_wave(&h->meta, h->path, p, err);
    if (rc)
        lamost_pix_free(p);
    return rc;
}

/* Median pixel S/N over the usable pixels (the batch's snr), NaN when
 * none is usable. */
static int lamost_pixel_snr(const lamost_handle *h, double *snr,
                            rvfit_err *err)
{
    lamost_pix p;
    int rc = lamost_load(h, &p, err);
    if (rc)
        return rc;
    lamost_usable(&h->opts, &p);
    *snr = rvfit_pixel_snr(p.flux, p.ivar, p.npix, NULL);
    lamost_pix_free(&p);
    return RVFIT_OK;
}

static int lamost_select(lamost_handle *h, const rvfit_select *sel,
                         rvfit_err *err)
{
    int keep = 1;
    const char *why = "";
    if (sel && sel->ntargetid) {
        keep = 0;
        for (size_t i = 0; i < sel->ntargetid && !keep; i++)
            keep = sel->targetid[i] == h->meta.targetid;
        why = keep ? "" : "targetid";
    }
    if (keep && sel && sel->minsn > 0) {
        double snr = NAN;
        int rc = lamost_pixel_snr(h, &snr, err);
        if (rc)
            return rc;
        keep = snr >= sel->minsn;
        why = keep ? "" : "minsn";
    }
    h->nsel = keep ? 1 : 0;
    if (!keep) /* debug: a survey run drops many files, one line each */
        rvfit_log(h->host, RVFIT_LOG_DEBUG, LAMOST_WHO, "%s: TARGETID %lld "
                  "not selected (%s)", h->path, (long long)h->meta.targetid,
                  why);
    return RVFIT_OK;
}

static void lamost_fill_info(lamost_handle *h)
{
    rvfit_file_info *I = &h->info;
    int mrs = h->layout == LAMOST_MRS;
    memset(I, 0, sizeof *I);
    I->narm = mrs ? LAMOST_MRS_NARM : 1;
    for (int a = 0; a < I->narm; a++) {
        snprintf(I->arm[a].name, sizeof I->arm[a].name, "%s",
                 mrs ? lamost_mrs_arms[a].name : LAMOST_ARM);
        I->arm[a].npix = mrs ? h->mrs.npix[a] : h->npix;
        I->arm[a].res_kind = RVFIT_RES_LSF;
        I->arm[a].ndiag = 0;
        I->arm[a].wave_per_spec = 1;
    }
    I->ntotal = mrs ? h->mrs.nspec : 1;
    I->nselect = h->nsel;
    I->ntable = LAMOST_NTABLE;
    I->table = h->schema;
}

static int lamost_open_all(lamost_handle *h, const rvfit_select *sel,
                           rvfit_err *err)
{
    fitsfile *fp = NULL;
    int rc = lamost_open_file(h->path, &fp, &h->layout, &h->npix, err);
    if (!rc)
        rc = lamost_read_meta(fp, h->path, &h->meta, err);
    if (!rc && h->layout == LAMOST_MRS)
        rc = lamost_mrs_scan(fp, h, err);
    lamost_close_file(fp);
    /* an early-release file: a warning, once per open, not an error */
    if (!rc && h->meta.derived)
        rvfit_log(h->host, RVFIT_LOG_WARN, LAMOST_WHO, "%s: HDU PRIMARY: %s",
                  h->path, h->meta.why);
    if (!rc)
        rc = h->layout == LAMOST_MRS ? lamost_mrs_select(h, sel, err)
                                     : lamost_select(h, sel, err);
    if (!rc) {
        lamost_tables_init(h);
        lamost_fill_info(h);
    }
    return rc;
}

int lamost_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                const char *path, const rvfit_select *sel, void **handle,
                rvfit_err *err)
{
    *handle = NULL;
    lamost_opts o;
    int rc = lamost_parse_opts(opts, nopt, &o, err);
    if (rc)
        return rc;
    if (strlen(path) >= LAMOST_PATH_MAX)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%.200s...: path too "
                             "long", path);
    lamost_handle *h = calloc(1, sizeof *h);
    if (!h)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: handle", path);
    h->host = host;
    h->opts = o;
    snprintf(h->path, sizeof h->path, "%s", path);
    rc = lamost_open_all(h, sel, err);
    if (rc) {
        lamost_close(h);
        return rc;
    }
    *handle = h;
    return RVFIT_OK;
}

void lamost_info(void *handle, rvfit_file_info *info)
{
    lamost_handle *h = handle;
    *info = h->info;
}

void lamost_close(void *handle)
{
    lamost_handle *h = handle;
    if (h)
        lamost_mrs_free(&h->mrs);
    free(h);
}
