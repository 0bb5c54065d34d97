/* filled.c — which models of a library were filled at build time
 * (rvfit_library_fill_holes) in the library file: EXISTS keeps 0/1 (a
 * filled model is a model, so readers that know nothing of filling load
 * the library as it is), the primary key NFILLED counts them and the last
 * HDU, FILLED (uint8 [nmodel], 1 = filled), says which.  A file without
 * FILLED has none. */
#include <stdlib.h>
#include <string.h>

#include "file_private.h"

size_t rvfit_library_nfilled(const rvfit_library *lib)
{
    size_t n = 0;
    for (size_t m = 0; lib->exists && m < lib->nmodel; m++)
        n += lib->exists[m] == RVFIT_MODEL_FILLED;
    return n;
}

void lio_fill_write_key(fitsfile *f, const rvfit_library *lib, int *fs)
{
    long n = (long)rvfit_library_nfilled(lib);
    if (n > 0)
        fits_write_key(f, TLONG, "NFILLED", &n, "models filled from their "
                       "neighbours (HDU FILLED)", fs);
}

void lio_fill_write_exists(fitsfile *f, const rvfit_library *lib, int *fs)
{
    size_t nm = lib->nmodel;
    uint8_t *ex = malloc(nm ? nm : 1);
    if (!ex) {
        *fs = MEMORY_ALLOCATION;
        return;
    }
    for (size_t m = 0; m < nm; m++)
        ex[m] = lib->exists[m] != 0;
    fits_write_img(f, TBYTE, 1, (LONGLONG)nm, ex, fs);
    free(ex);
}

void lio_fill_write_hdu(fitsfile *f, const rvfit_library *lib, int *fs)
{
    if (*fs || rvfit_library_nfilled(lib) == 0)
        return;
    long nm = (long)lib->nmodel;
    uint8_t *fl = malloc((size_t)nm);
    if (!fl) {
        *fs = MEMORY_ALLOCATION;
        return;
    }
    for (long m = 0; m < nm; m++)
        fl[m] = lib->exists[m] == RVFIT_MODEL_FILLED;
    fits_create_img(f, BYTE_IMG, 1, &nm, fs);
    fits_write_key(f, TSTRING, "EXTNAME", "FILLED", NULL, fs);
    fits_write_comment(f, "1: the model is a hole of the grid filled from "
                       "its neighbours ([templates] fill_holes)", fs);
    fits_write_img(f, TBYTE, 1, (LONGLONG)nm, fl, fs);
    free(fl);
}

int lio_fill_read(lio_rd *r, rvfit_library *lib)
{
    int fs = 0, anynul = 0;
    if (fits_movnam_hdu(r->f, IMAGE_HDU, "FILLED", 0, &fs)) {
        fits_clear_errmsg();
        return RVFIT_OK; /* none filled */
    }
    snprintf(r->hdu, sizeof r->hdu, "HDU FILLED");
    int st = lio_dims(r, 1, (long)lib->nmodel, 0);
    uint8_t *fl = st ? NULL : malloc(lib->nmodel ? lib->nmodel : 1);
    if (!st && !fl)
        st = rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: no memory",
                           r->path);
    unsigned char nul = 0;
    if (!st && fits_read_img(r->f, TBYTE, 1, (LONGLONG)lib->nmodel, &nul,
                             fl, &anynul, &fs))
        st = lio_fail(r, fs, "reading data");
    for (size_t m = 0; !st && m < lib->nmodel; m++) {
        if (fl[m] > 1 || (fl[m] && lib->exists[m] != 1))
            st = rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: value %d "
                               "at model %zu (expected 0, or 1 for a model "
                               "that EXISTS)", r->path, r->hdu, fl[m], m);
        else if (fl[m])
            lib->exists[m] = RVFIT_MODEL_FILLED;
    }
    free(fl);
    return st;
}
