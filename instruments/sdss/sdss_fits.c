/* sdss_fits.c — CFITSIO glue: status conversion, column and HDU lookup,
 * medians. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdss_internal.h"

int sdss_colnum(fitsfile *fp, const char *name)
{
    int st = 0, col = 0;
    /* names we look up contain no CFITSIO wildcards (* ? #) */
    if (fits_get_colnum(fp, CASEINSEN, (char *)name, &col, &st))
        col = 0;
    if (st)
        fits_clear_errmsg();
    return col;
}

int sdss_goto_hdu(fitsfile *fp, const char *extname)
{
    int st = 0;
    fits_movnam_hdu(fp, BINARY_TBL, (char *)extname, 0, &st);
    if (st)
        fits_clear_errmsg();
    return st;
}



double sdss_pixel_snr(const float *flux, const float *ivar, size_t n)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ivar[i] > 0.0f)
            v[k++] = (double)flux[i] * sqrt((double)ivar[i]);
    double m = rvfit_median(v, k);
    free(v);
    return m;
}
