/* desi_open.c — open a DESI coadd or spectra file: find the HDUs by
 * EXTNAME, discover the cameras, check every shape, then hand over to the
 * selection and the pass-through tables. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "desi_internal.h"

/* The five images every camera X needs, as X_<suffix>. */
static const char *const desi_suffix[5] = {"WAVELENGTH", "FLUX", "IVAR",
                                           "MASK", "RESOLUTION"};

static int *desi_cam_slot(desi_cam *c, int k)
{
    int *slot[5] = {&c->hdu_wave, &c->hdu_flux, &c->hdu_ivar, &c->hdu_mask,
                    &c->hdu_res};
    return slot[k];
}

/* Record HDU n named `name` if it is one of X_<suffix>. */
static int desi_note_hdu(desi_handle *h, const char *name, int n,
                         rvfit_err *err)
{
    if (strcmp(name, "FIBERMAP") == 0 && !h->hdu_fibermap)
        h->hdu_fibermap = n;
    if (strcmp(name, "SCORES") == 0 && !h->hdu_scores)
        h->hdu_scores = n;
    const char *us = strchr(name, '_');
    if (!us || us == name || (size_t)(us - name) >= sizeof h->cam[0].name)
        return RVFIT_OK;
    for (int k = 0; k < 5; k++) {
        if (strcmp(us + 1, desi_suffix[k]) != 0)
            continue;
        size_t len = (size_t)(us - name);
        int c = 0;
        while (c < h->ncam && (strlen(h->cam[c].name) != len ||
                               strncmp(h->cam[c].name, name, len) != 0))
            c++;
        if (c == h->ncam) {
            if (h->ncam == RVFIT_MAX_ARMS)
                return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                                     "%s: more than %d cameras", h->path,
                                     RVFIT_MAX_ARMS);
            memcpy(h->cam[c].name, name, len);
            h->cam[c].name[len] = '\0';
            h->ncam++;
        }
        *desi_cam_slot(&h->cam[c], k) = n;
    }
    return RVFIT_OK;
}

/* A truncated file shows up as a last HDU whose data run past the end. */
static int desi_check_size(desi_handle *h, int last, rvfit_err *err)
{
    struct stat sb;
    LONGLONG head = 0, data = 0, end = 0;
    int st = 0, type = 0;
    if (stat(h->path, &sb) != 0)
        return RVFIT_OK; /* not a plain path (CFITSIO filter syntax) */
    char name[FLEN_VALUE];
    desi_hdu_name(h->fp, last, name, sizeof name);
    fits_movabs_hdu(h->fp, last, &type, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, NULL, "locating HDUs");
    int rc = rvfit_fits_check_extent(h->fp, h->path, name, err);
    if (rc)
        return rc;
    fits_get_hduaddrll(h->fp, &head, &data, &end, &st);
    /* less than a header block left over: a cut inside the next header */
    if (st == 0 && (LONGLONG)sb.st_size > end)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: file truncated or corrupt: %lld bytes "
                             "after HDU %s do not form a header",
                             h->path, (long long)sb.st_size - end, name);
    return RVFIT_OK;
}

/* Walk every HDU, noting FIBERMAP, SCORES and camera images. */
static int desi_scan(desi_handle *h, rvfit_err *err)
{
    int type = 0;
    for (int n = 1;; n++) {
        int st = 0;
        if (fits_movabs_hdu(h->fp, n, &type, &st)) {
            /* the end, or a header cut short: the size check tells */
            if (n > 1 && (st == END_OF_FILE || st == READ_ERROR)) {
                fits_clear_errmsg();
                int rc = desi_check_size(h, n - 1, err);
                if (rc || st == END_OF_FILE)
                    return rc;
            }
            char what[64];
            snprintf(what, sizeof what, "reading header of HDU #%d", n);
            return rvfit_fits_error(err, st, h->path, NULL, what);
        }
        char name[FLEN_VALUE] = "";
        if (fits_read_key(h->fp, TSTRING, "EXTNAME", name, NULL, &st)) {
            fits_clear_errmsg();
            continue;
        }
        int rc = desi_note_hdu(h, name, n, err);
        if (rc)
            return rc;
    }
}

/* Check the five HDUs of camera c and read its wavelength grid. */
static int desi_check_cam(desi_handle *h, desi_cam *c, long *nspec,
                          rvfit_err *err)
{
    for (int k = 0; k < 5; k++)
        if (*desi_cam_slot(c, k) == 0)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                                 "%s: camera %s: HDU %s_%s missing", h->path,
                                 c->name, c->name, desi_suffix[k]);
    char hn[5][48];
    int naxis[5], bp[5];
    long ax[5][3];
    for (int k = 0; k < 5; k++) {
        snprintf(hn[k], sizeof hn[k], "%s_%s", c->name, desi_suffix[k]);
        int rc = desi_img_dims(h, *desi_cam_slot(c, k), hn[k], &naxis[k],
                               ax[k], &bp[k], err);
        if (rc)
            return rc;
    }
    long nw = ax[0][0];
    if (naxis[0] != 1 || nw < 2)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: HDU %s: expected a 1-d grid of >= 2 "
                             "pixels, found %d axes (%ld)",
                             h->path, hn[0], naxis[0], nw);
    if (*nspec < 0)
        *nspec = naxis[1] == 2 ? ax[1][1] : 1;
    for (int k = 1; k < 4; k++)
        if (naxis[k] > 2 || ax[k][0] != nw ||
            (naxis[k] == 2 ? ax[k][1] : 1) != *nspec)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                                 "%s: HDU %s: shape [%ld][%ld] does not "
                                 "match [%ld spectra][%ld pixels] (%s)",
                                 h->path, hn[k], naxis[k] == 2 ? ax[k][1] : 1,
                                 ax[k][0], *nspec, nw, hn[0]);
    long nr = naxis[4] == 3 ? ax[4][2] : 1;
    if (ax[4][0] != nw || nr != *nspec || naxis[4] < 2 ||
        ax[4][1] % 2 == 0)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: HDU %s: shape [%ld][%ld][%ld] is not "
                             "[%ld spectra][odd ndiag][%ld pixels]",
                             h->path, hn[4], nr, ax[4][1], ax[4][0], *nspec,
                             nw);
    c->npix = (size_t)nw;
    c->ndiag = (int)ax[4][1];
    c->mask_unsigned = bp[3] == ULONG_IMG;
    c->wave = malloc(c->npix * sizeof *c->wave);
    if (!c->wave)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: HDU %s", h->path,
                             hn[0]);
    int st = 0, type = 0;
    fits_movabs_hdu(h->fp, c->hdu_wave, &type, &st);
    fits_read_img(h->fp, TDOUBLE, 1, (LONGLONG)nw, NULL, c->wave, NULL, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, hn[0], "reading wavelengths");
    for (size_t i = 0; i < c->npix; i++)
        if (!isfinite(c->wave[i]) || !(c->wave[i] > 0.0) ||
            (i && c->wave[i] <= c->wave[i - 1]))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                                 "%s: HDU %s: wavelength %zu (%g) is not "
                                 "finite, positive and increasing",
                                 h->path, hn[0], i, c->wave[i]);
    return RVFIT_OK;
}

static int desi_cmp_cam(const void *a, const void *b)
{
    const desi_cam *x = a, *y = b;
    return (x->wave[0] > y->wave[0]) - (x->wave[0] < y->wave[0]);
}

/* Cameras, FIBERMAP and SCORES must agree on the number of spectra. */
static int desi_check_layout(desi_handle *h, rvfit_err *err)
{
    if (h->ncam == 0)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: no camera HDUs (X_WAVELENGTH, X_FLUX, "
                             "X_IVAR, X_MASK, X_RESOLUTION)",
                             h->path);
    if (!h->hdu_fibermap)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: HDU FIBERMAP missing", h->path);
    long nspec = -1;
    for (int c = 0; c < h->ncam; c++) {
        int rc = desi_check_cam(h, &h->cam[c], &nspec, err);
        if (rc)
            return rc;
    }
    qsort(h->cam, (size_t)h->ncam, sizeof h->cam[0], desi_cmp_cam);
    h->ntotal = (size_t)nspec;
    int st = 0, type = 0;
    long nrow = 0;
    fits_movabs_hdu(h->fp, h->hdu_fibermap, &type, &st);
    if (st == 0 && type != BINARY_TBL)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: HDU FIBERMAP is not a binary table",
                             h->path);
    fits_get_num_rows(h->fp, &nrow, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, "FIBERMAP", "reading rows");
    if ((size_t)nrow != h->ntotal)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: HDU FIBERMAP has %ld rows but the images "
                             "hold %zu spectra",
                             h->path, nrow, h->ntotal);
    if (h->hdu_scores) {
        fits_movabs_hdu(h->fp, h->hdu_scores, &type, &st);
        fits_get_num_rows(h->fp, &nrow, &st);
        if (st == 0 && (type != BINARY_TBL || (size_t)nrow != h->ntotal)) {
            rvfit_log(h->host, RVFIT_LOG_WARN, DESI_WHO,
                      "%s: HDU SCORES ignored: %ld rows for %zu spectra",
                      h->path, nrow, h->ntotal);
            h->hdu_scores = 0;
        }
        if (st)
            return rvfit_fits_error(err, st, h->path, "SCORES", "reading rows");
    }
    return RVFIT_OK;
}

static void desi_fill_info(desi_handle *h)
{
    rvfit_file_info *I = &h->info;
    memset(I, 0, sizeof *I);
    I->narm = h->ncam;
    for (int c = 0; c < h->ncam; c++) {
        snprintf(I->arm[c].name, sizeof I->arm[c].name, "%s",
                 h->cam[c].name);
        I->arm[c].npix = h->cam[c].npix;
        I->arm[c].res_kind = RVFIT_RES_BAND;
        I->arm[c].ndiag = h->cam[c].ndiag;
        I->arm[c].wave_per_spec = 0;
    }
    I->ntotal = h->ntotal;
    I->nselect = h->nsel;
    I->ntable = h->hdu_scores ? 3 : 2; /* SCORES only when present */
    I->table = h->schema;
}

static int desi_open_file(desi_handle *h, const char *path, rvfit_err *err)
{
    struct stat sb;
    size_t len = strlen(path);
    if (len >= sizeof h->path)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%.200s...: path too "
                             "long", path);
    memcpy(h->path, path, len + 1);
    if (stat(path, &sb) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: %s", path,
                             strerror(errno));
    return rvfit_fits_open_reader(path, (void **)&h->fp, err);
}

int desi_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
              const char *path, const rvfit_select *sel, void **handle,
              rvfit_err *err)
{
    *handle = NULL;
    desi_opts o;
    int rc = desi_parse_opts(opts, nopt, &o, err);
    if (rc)
        return rc;
    desi_handle *h = calloc(1, sizeof *h);
    if (!h)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: handle", path);
    h->host = host;
    rc = desi_open_file(h, path, err);
    h->wk[0].fp = h->fp;
    if (!rc)
        rc = desi_scan(h, err);
    if (!rc)
        rc = desi_check_layout(h, err);
    if (!rc)
        rc = desi_select(h, &o, sel, err);
    if (!rc)
        rc = desi_tables_init(h, err);
    if (rc) {
        desi_close(h);
        return rc;
    }
    desi_fill_info(h);
    *handle = h;
    return RVFIT_OK;
}

void desi_info(void *handle, rvfit_file_info *info)
{
    desi_handle *h = handle;
    *info = h->info;
}

void desi_close(void *handle)
{
    desi_handle *h = handle;
    if (!h)
        return;
    if (h->fp) {
        int st = 0;
        fits_close_file(h->fp, &st);
        fits_clear_errmsg();
    }
    for (int c = 0; c < RVFIT_MAX_ARMS; c++)
        free(h->cam[c].wave);
    desi_tables_free(h);
    free(h->rows);
    free(h->snr);
    desi_workers_free(h);
    free(h);
}
