/* fits_io.c — the library file's FITS access shared by the reader, the
 * writer and the interpolator kinds' records: the path, opening with the
 * header checks, moving between HDUs with their layout checked, keys,
 * image sizes, and errors that name the file, HDU and reason. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "file_private.h"
#include "rvfit/files.h"

/* "DIR" -> "DIR/rvfit_library.fits"; a path ending in .fits is kept. */
int lio_path(const char *in, int for_save, char *out, size_t size,
                    int *file_given)
{
    size_t n = strlen(in);
    struct stat sb;
    int is_file = n > 5 && strcmp(in + n - 5, ".fits") == 0;
    if (!for_save && stat(in, &sb) == 0)
        is_file = !S_ISDIR(sb.st_mode);
    int w = is_file ? snprintf(out, size, "%s", in)
                    : snprintf(out, size, "%s/%s", in, RVFIT_LIBRARY_FILE);
    *file_given = is_file;
    return (w < 0 || (size_t)w >= size) ? -1 : 0;
}

int lio_fail(lio_rd *r, int fs, const char *what)
{
    char ctx[200];
    snprintf(ctx, sizeof ctx, "%s: %s", r->hdu, what);
    rvfit_fits_error(r->err, fs, r->path, NULL, ctx);
    return RVFIT_ERR_FORMAT;
}

/* An image extension has PCOUNT = 0 and GCOUNT = 1; CFITSIO accepts
 * other values and then reads the pixels shifted (PCOUNT = -1: one pixel
 * off, no error).  Its data must also lie within the file. */
static int lio_layout(lio_rd *r)
{
    LONGLONG pc = 0, gc = 1;
    int fs = 0;
    if (rvfit_fits_read_key(r->f, TLONGLONG, "PCOUNT", &pc, &fs) == 0 &&
        rvfit_fits_read_key(r->f, TLONGLONG, "GCOUNT", &gc, &fs) == 0 &&
        (pc != 0 || gc != 1))
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: PCOUNT = "
                             "%lld, GCOUNT = %lld (an image extension needs "
                             "0 and 1)", r->path, r->hdu, (long long)pc,
                             (long long)gc);
    if (fs)
        return lio_fail(r, fs, "keyword PCOUNT or GCOUNT");
    return rvfit_fits_check_extent(r->f, r->path, r->hdu, r->err);
}

/* Move to HDU number `num` (1-based) and check its EXTNAME starts with
 * `prefix`; the rest of the name goes to `suffix`. */
int lio_goto(lio_rd *r, int num, const char *prefix, char *suffix)
{
    int fs = 0, type = 0;
    char ext[FLEN_VALUE] = "";
    snprintf(r->hdu, sizeof r->hdu, "HDU %d", num);
    if (fits_movabs_hdu(r->f, num, &type, &fs))
        return lio_fail(r, fs, prefix[0] ? "missing (file truncated?)"
                                          : "cannot read");
    if (fits_read_key(r->f, TSTRING, "EXTNAME", ext, NULL, &fs)) {
        fits_clear_errmsg();
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: no EXTNAME"
                             " (expected %s*)", r->path, r->hdu, prefix);
    }
    snprintf(r->hdu, sizeof r->hdu, "HDU %d (%.24s)", num, ext);
    size_t pl = strlen(prefix);
    if (type != IMAGE_HDU || strncmp(ext, prefix, pl) != 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: expected an"
                             " image HDU named %s*", r->path, r->hdu,
                             prefix);
    if (suffix)
        snprintf(suffix, 16, "%.15s", ext + pl);
    return lio_layout(r);
}

/* Check the image dimensions of the current HDU. */
int lio_dims(lio_rd *r, int naxis, long n1, long n2)
{
    int fs = 0, nx = 0;
    long ax[3] = {0, 0, 0};
    fits_get_img_dim(r->f, &nx, &fs);
    if (!fs && nx == naxis)
        fits_get_img_size(r->f, naxis, ax, &fs);
    if (fs)
        return lio_fail(r, fs, "image size");
    if (nx != naxis || ax[0] != n1 || (naxis > 1 && ax[1] != n2))
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: image is "
                             "%dD %ldx%ld, expected %dD %ldx%ld", r->path,
                             r->hdu, nx, ax[0], ax[1], naxis, n1,
                             naxis > 1 ? n2 : 0L);
    return RVFIT_OK;
}

int lio_key(lio_rd *r, int type, const char *key, void *val)
{
    int fs = 0;
    if (rvfit_fits_read_key(r->f, type, key, val, &fs)) {
        char w[64];
        snprintf(w, sizeof w, "keyword %s", key);
        return lio_fail(r, fs, w);
    }
    return RVFIT_OK;
}

int lio_check_models(lio_rd *r, const rvfit_library *lib,
                     const rvfit_lib_arm *ar, int log_space)
{
    for (size_t m = 0; m < lib->nmodel; m++) {
        if (!lib->exists[m])
            continue;
        const float *row = ar->flux + m * ar->npix;
        double sum = 0.0;
        for (size_t p = 0; p < ar->npix; p++) {
            if (!isfinite(row[p]))
                return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: "
                                     "non-finite flux at model %zu pixel "
                                     "%zu", r->path, r->hdu, m, p);
            sum += row[p];
        }
        /* flux is normalised to a mean of 1 over the arm (FLUXNORM) */
        if (!log_space && !(sum > 0.0))
            return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: model "
                                 "%zu: mean flux %g is not positive",
                                 r->path, r->hdu, m, sum / (double)ar->npix);
    }
    return RVFIT_OK;
}

int lio_open(lio_rd *r, const char *path, rvfit_err *err)
{
    int file_given = 0, fs = 0;
    memset(r, 0, sizeof *r);
    r->err = err;
    if (lio_path(path, 0, r->path, sizeof r->path, &file_given) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: path too long", path);
    struct stat sb;
    if (stat(r->path, &sb) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "template library %s not "
                             "found", r->path);
    int st = rvfit_fits_check_headers(r->path, err);
    if (st)
        return st;
    if (fits_open_file(&r->f, r->path, READONLY, &fs)) {
        /* The file exists: anything but "cannot open" means not FITS. */
        int rc = rvfit_fits_error(err, fs, r->path, NULL, "cannot open");
        r->f = NULL;
        return fs == FILE_NOT_OPENED ? rc : RVFIT_ERR_FORMAT;
    }
    snprintf(r->hdu, sizeof r->hdu, "primary HDU");
    return RVFIT_OK;
}

void lio_close(lio_rd *r)
{
    int fs = 0;
    if (r->f)
        fits_close_file(r->f, &fs);
    r->f = NULL;
}
