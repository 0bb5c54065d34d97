/* lamost_fits.c — the two LRS layouts: find which one a file has (or that
 * it is an MRS med- file, lamost_mrs_scan.c), and read its pixels.
 *
 * DR1-DR7: the primary image is float32 [5][npix] (NAXIS2 = 5 rows of
 * NAXIS1 pixels): flux, ivar, wavelength, andmask, ormask.  DR8 and later:
 * the primary HDU holds keywords only and the binary table COADD one row
 * of vector columns FLUX, IVAR, WAVELENGTH, ANDMASK, ORMASK.  ormask (bad
 * in at least one exposure) is not used: andmask says the coadd is bad. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lamost_internal.h"

#define LAMOST_NROW 5
static const char *const lamost_cols[4] = {"FLUX", "IVAR", "WAVELENGTH",
                                           "ANDMASK"};

void lamost_close_file(fitsfile *fp)
{
    if (fp) {
        int st = 0;
        fits_close_file(fp, &st);
        fits_clear_errmsg();
    }
}

/* The COADD table: one row, the four columns of equal length; *npix. */
static int lamost_check_coadd(fitsfile *fp, const char *path, size_t *npix,
                              int cols[4], rvfit_err *err)
{
    long nrow = 0;
    int st = 0;
    fits_get_num_rows(fp, &nrow, &st);
    if (st)
        return rvfit_fits_error(err, st, path, "COADD", "reading rows");
    if (nrow != 1)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: %ld "
                             "rows, a LAMOST LRS file has 1", path, nrow);
    long rep0 = 0;
    for (int c = 0; c < 4; c++) {
        int tc = 0;
        long rep = 0, w = 0;
        if (!(cols[c] = rvfit_fits_colnum(fp, lamost_cols[c])))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: "
                                 "column %s missing", path, lamost_cols[c]);
        if (fits_get_coltype(fp, cols[c], &tc, &rep, &w, &st))
            return rvfit_fits_error(err, st, path, "COADD", lamost_cols[c]);
        if (c == 0)
            rep0 = rep;
        if (rep != rep0 || rep < 2)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: "
                                 "column %s has %ld elements, FLUX %ld (need "
                                 "equal lengths of at least 2)", path,
                                 lamost_cols[c], rep, rep0);
    }
    *npix = (size_t)rep0;
    return RVFIT_OK;
}

/* DR1-DR7 when the primary HDU is an image of 5 rows. */
static int lamost_primary_shape(fitsfile *fp, const char *path, int *is_img,
                                size_t *npix, rvfit_err *err)
{
    int st = 0, naxis = 0;
    long nax[3] = {0, 0, 0};
    fits_get_img_dim(fp, &naxis, &st);
    if (!st && naxis > 0)
        fits_get_img_size(fp, naxis < 3 ? naxis : 3, nax, &st);
    if (st)
        return rvfit_fits_error(err, st, path, "PRIMARY", "image size");
    *is_img = naxis > 0;
    if (!*is_img)
        return RVFIT_OK;
    if (naxis != 2 || nax[1] != LAMOST_NROW || nax[0] < 2)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU PRIMARY: image "
                             "of %d axes (%ld x %ld); a DR1-DR7 LAMOST LRS "
                             "file has %d rows (flux, ivar, wavelength, "
                             "andmask, ormask) of npix >= 2 pixels", path,
                             naxis, nax[0], nax[1], LAMOST_NROW);
    *npix = (size_t)nax[0];
    return RVFIT_OK;
}

int lamost_open_file(const char *path, fitsfile **fp, int *layout,
                     size_t *npix, rvfit_err *err)
{
    int st = 0, is_img = 0;
    int hc = rvfit_fits_open_reader(path, (void **)fp, err);
    if (hc)
        return hc;
    int rc = lamost_primary_shape(*fp, path, &is_img, npix, err);
    if (rc || is_img) {
        *layout = LAMOST_DR7;
        return rc;
    }
    *layout = LAMOST_DR8;
    fits_movnam_hdu(*fp, BINARY_TBL, (char *)"COADD", 0, &st);
    if (st) {
        fits_clear_errmsg();
        if (lamost_mrs_is(*fp)) {
            *layout = LAMOST_MRS;
            *npix = 0;
            return RVFIT_OK;
        }
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: neither a DR1-DR7 "
                             "LAMOST LRS file (primary image of %d rows), a "
                             "DR8+ one (HDU COADD missing) nor an MRS file "
                             "(no HDU COADD_B, COADD_R, B-<LMJM> or "
                             "R-<LMJM>)", path, LAMOST_NROW);
    }
    int cols[4];
    return lamost_check_coadd(*fp, path, npix, cols, err);
}

int lamost_pix_alloc(lamost_pix *p, size_t npix)
{
    p->npix = npix;
    p->flux = malloc(npix * sizeof *p->flux);
    p->ivar = malloc(npix * sizeof *p->ivar);
    p->wave = malloc(npix * sizeof *p->wave);
    p->andmask = malloc(npix * sizeof *p->andmask);
    return p->flux && p->ivar && p->wave && p->andmask;
}

void lamost_pix_free(lamost_pix *p)
{
    free(p->flux), free(p->ivar), free(p->wave), free(p->andmask);
    memset(p, 0, sizeof *p);
}

static int lamost_read_image(fitsfile *fp, const char *path, lamost_pix *p,
                             rvfit_err *err)
{
    int st = 0, type = 0;
    LONGLONG n = (LONGLONG)p->npix;
    fits_movabs_hdu(fp, 1, &type, &st);
    fits_read_img(fp, TFLOAT, 1, n, NULL, p->flux, NULL, &st);
    fits_read_img(fp, TFLOAT, n + 1, n, NULL, p->ivar, NULL, &st);
    fits_read_img(fp, TDOUBLE, 2 * n + 1, n, NULL, p->wave, NULL, &st);
    fits_read_img(fp, TINT, 3 * n + 1, n, NULL, p->andmask, NULL, &st);
    return st ? rvfit_fits_error(err, st, path, "PRIMARY", "reading pixels")
              : RVFIT_OK;
}

static int lamost_read_table(fitsfile *fp, const char *path, lamost_pix *p,
                             rvfit_err *err)
{
    int st = 0, cols[4];
    size_t n = 0;
    fits_movnam_hdu(fp, BINARY_TBL, (char *)"COADD", 0, &st);
    if (st)
        return rvfit_fits_error(err, st, path, "COADD", "moving to HDU");
    int rc = lamost_check_coadd(fp, path, &n, cols, err);
    if (!rc && n != p->npix)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU COADD: %zu "
                           "pixels, but %zu at open (file changed?)", path,
                           n, p->npix);
    if (rc)
        return rc;
    LONGLONG m = (LONGLONG)n;
    fits_read_col(fp, TFLOAT, cols[0], 1, 1, m, NULL, p->flux, NULL, &st);
    fits_read_col(fp, TFLOAT, cols[1], 1, 1, m, NULL, p->ivar, NULL, &st);
    fits_read_col(fp, TDOUBLE, cols[2], 1, 1, m, NULL, p->wave, NULL, &st);
    fits_read_col(fp, TINT, cols[3], 1, 1, m, NULL, p->andmask, NULL, &st);
    return st ? rvfit_fits_error(err, st, path, "COADD", "reading pixels")
              : RVFIT_OK;
}

int lamost_read_pixels(fitsfile *fp, const char *path, int layout,
                       lamost_pix *p, rvfit_err *err)
{
    return layout == LAMOST_DR7 ? lamost_read_image(fp, path, p, err)
                                : lamost_read_table(fp, path, p, err);
}
