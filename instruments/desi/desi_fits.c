/* desi_fits.c — CFITSIO glue: HDU names, image shapes and column reads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "desi_internal.h"

void desi_hdu_name(fitsfile *fp, int n, char *buf, size_t len)
{
    int st = 0, type = 0, cur = 0;
    char name[FLEN_VALUE] = "";
    fits_get_hdu_num(fp, &cur);
    if (n == 1) {
        snprintf(buf, len, "PRIMARY");
        return;
    }
    if (fits_movabs_hdu(fp, n, &type, &st) == 0 &&
        fits_read_key(fp, TSTRING, "EXTNAME", name, NULL, &st) == 0)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "#%d", n);
    st = 0;
    fits_movabs_hdu(fp, cur, &type, &st);
    fits_clear_errmsg();
}

int desi_img_dims(desi_handle *h, int hdu, const char *name, int *naxis,
                  long naxes[3], int *bitpix_equiv, rvfit_err *err)
{
    int st = 0, type = 0;
    naxes[0] = naxes[1] = naxes[2] = 0;
    fits_movabs_hdu(h->fp, hdu, &type, &st);
    if (st == 0 && type != IMAGE_HDU)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: HDU %s: expected an image, found a table",
                             h->path, name);
    fits_get_img_dim(h->fp, naxis, &st);
    if (st == 0 && (*naxis < 1 || *naxis > 3))
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: HDU %s: %d axes, expected 1 to 3", h->path,
                             name, *naxis);
    fits_get_img_size(h->fp, 3, naxes, &st);
    fits_get_img_equivtype(h->fp, bitpix_equiv, &st);
    if (st)
        return rvfit_fits_error(err, st, h->path, name, "reading image shape");
    return RVFIT_OK;
}

int desi_read_col(desi_handle *h, const char *hdu, int col, int datatype,
                  size_t nrow, void *out, rvfit_err *err)
{
    int st = 0;
    if (nrow == 0)
        return RVFIT_OK;
    fits_read_col(h->fp, datatype, col, 1, 1, (LONGLONG)nrow, NULL, out,
                  NULL, &st);
    if (st) {
        char what[96];
        char cname[FLEN_VALUE] = "";
        char key[FLEN_KEYWORD];
        int s2 = 0;
        snprintf(key, sizeof key, "TTYPE%d", col);
        fits_read_key(h->fp, TSTRING, key, cname, NULL, &s2);
        snprintf(what, sizeof what, "reading column %.60s", cname);
        return rvfit_fits_error(err, st, h->path, hdu, what);
    }
    return RVFIT_OK;
}
