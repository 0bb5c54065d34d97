/* sdss_fits.c — CFITSIO glue: HDU lookup by name. */

#include "sdss_internal.h"

int sdss_goto_hdu(fitsfile *fp, const char *extname)
{
    int st = 0;
    fits_movnam_hdu(fp, BINARY_TBL, (char *)extname, 0, &st);
    if (st)
        fits_clear_errmsg();
    return st;
}
