/* write.c — writing a library file atomically (temp file + rename; docs/
 * template-library.md).  Layout: primary header (RVFLIBV, NPARAM, NARM,
 * NMODEL, SIGMA0, VMAX, INSTRUM, the interpolator's keys, NFILLED,
 * FLUXNORM, SOURCE), then NPARAM image HDUs AXIS_<NAME> (float64 scaled
 * nodes; SCALE, UNIT, AXINDEX), one HDU EXISTS (uint8 [nmodel]) and NARM
 * HDUs FLUX_<ARM> (float32 [nmodel][npix]; LNL0, DLNL, NPIX, optional
 * SIGMAV), in this order; the interpolator kind's HDUs and FILLED after
 * them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_private.h"
#include "rvfit/files.h"

/* The interpolator the library is built for: INTERP (its kind), CUBAXES
 * (cubic axes) and LOGFLUX (interpolate in ln flux; the FLUX_* images
 * always hold flux itself, or what the kind keeps there), then the
 * kind's own keys. */
static void lio_write_interp(fitsfile *f, const rvfit_library *lib,
                             const lio_write_hooks *h, int *fs)
{
    int lf = lib->log_flux != 0;
    char cub[RVFIT_MAX_PARAMS * 17 + 1] = "";
    for (int p = 0; p < lib->nparam; p++)
        if (lib->axis[p].interp == RVFIT_INTERP_CUBIC) {
            strcat(cub, cub[0] ? "," : "");
            strncat(cub, lib->axis[p].name, 16);
        }
    fits_write_key(f, TSTRING, "INTERP", (void *)h->interp,
                   "template interpolator (docs/template-library.md)", fs);
    if (cub[0])
        fits_write_key(f, TSTRING, "CUBAXES", cub, "axes interpolated "
                       "cubically", fs);
    fits_write_key(f, TLOGICAL, "LOGFLUX", &lf, "interpolate in ln flux",
                   fs);
    if (h->keys)
        h->keys(h->ctx, f, fs);
}

static void lio_write_primary(fitsfile *f, const rvfit_library *lib,
                              const lio_write_hooks *h, int *fs)
{
    int v = RVFIT_LIBRARY_VERSION, np = lib->nparam, na = lib->narm;
    LONGLONG nm = (LONGLONG)lib->nmodel;
    double s0 = lib->sigma0, vm = lib->vmax;
    fits_create_img(f, BYTE_IMG, 0, NULL, fs);
    fits_write_key(f, TINT, "RVFLIBV", &v, "rvfit template library version",
                   fs);
    fits_write_key(f, TINT, "NPARAM", &np, "number of parameter axes", fs);
    fits_write_key(f, TINT, "NARM", &na, "number of arms", fs);
    fits_write_key(f, TLONGLONG, "NMODEL", &nm, "models = product of nodes",
                   fs);
    fits_write_key_dbl(f, "SIGMA0", s0, -17, "[Angstrom] template LSF sigma"
                       " incl. pixel", fs);
    fits_write_key_dbl(f, "VMAX", vm, -17, "[km/s] padding of each arm", fs);
    fits_write_key(f, TSTRING, "INSTRUM", (void *)lib->instrument,
                   "instrument the arms were built for", fs);
    lio_write_interp(f, lib, h, fs);
    lio_fill_write_key(f, lib, fs);
    fits_write_key(f, TSTRING, "FLUXNORM", "ARMMEAN", "flux / mean over the"
                   " unpadded arm", fs);
    fits_write_key_longstr(f, "SOURCE", lib->source, "grid the library was "
                           "built from", fs);
}

static void lio_write_hdus(fitsfile *f, const rvfit_library *lib,
                           const lio_write_hooks *h, int *fs)
{
    char ext[32];
    for (int i = 0; i < lib->nparam && !*fs; i++) {
        const rvfit_axis *ax = &lib->axis[i];
        long n = ax->nnode;
        fits_create_img(f, DOUBLE_IMG, 1, &n, fs);
        snprintf(ext, sizeof ext, "AXIS_%s", ax->name);
        fits_write_key(f, TSTRING, "EXTNAME", ext, NULL, fs);
        fits_write_key(f, TSTRING, "AXNAME", (void *)ax->name, "parameter",
                       fs);
        fits_write_key(f, TINT, "AXINDEX", &i, "position in theta", fs);
        fits_write_key(f, TSTRING, "SCALE",
                       ax->scale == RVFIT_SCALE_LOG10 ? "LOG10" : "LINEAR",
                       "nodes are log10(value) or value", fs);
        fits_write_key(f, TSTRING, "UNIT", (void *)ax->unit,
                       "unit of the physical value", fs);
        fits_write_img(f, TDOUBLE, 1, n, (void *)ax->node, fs);
    }
    long nm = (long)lib->nmodel;
    fits_create_img(f, BYTE_IMG, 1, &nm, fs);
    fits_write_key(f, TSTRING, "EXTNAME", "EXISTS", NULL, fs);
    lio_fill_write_exists(f, lib, fs);
    for (int a = 0; a < lib->narm && !*fs; a++) {
        const rvfit_lib_arm *ar = &lib->arm[a];
        long rows = h->arm_rows ? h->arm_rows(h->ctx) : 0;
        long naxes[2] = {(long)ar->npix, rows > 0 ? rows : nm};
        LONGLONG np = (LONGLONG)ar->npix;
        double l0 = ar->lnl0, dl = ar->dlnl;
        fits_create_img(f, FLOAT_IMG, 2, naxes, fs);
        snprintf(ext, sizeof ext, "FLUX_%s", ar->name);
        fits_write_key(f, TSTRING, "EXTNAME", ext, NULL, fs);
        fits_write_key(f, TSTRING, "ARMNAME", (void *)ar->name, "arm", fs);
        /* 17 significant digits: doubles survive the round trip. */
        fits_write_key_dbl(f, "LNL0", l0, -17, "ln(lambda/A) of pixel 0 "
                           "centre", fs);
        fits_write_key_dbl(f, "DLNL", dl, -17, "step in ln(lambda)", fs);
        fits_write_key(f, TLONGLONG, "NPIX", &np, "pixels per model", fs);
        if (ar->sigma_kms > 0.0)
            fits_write_key_dbl(f, "SIGMAV", ar->sigma_kms, -17,
                               "[km/s] template smoothing, constant in v", fs);
        if (rows > 0) { /* the kind's rows, in their own space */
            h->arm(h->ctx, f, a, (long)ar->npix, fs);
            continue;
        }
        if (!lib->log_flux) {
            fits_write_img(f, TFLOAT, 1, np * nm, ar->flux, fs);
            continue;
        }
        /* In memory ln flux (LOGFLUX): the file keeps flux. */
        float *row = malloc(ar->npix * sizeof *row);
        if (!row) {
            *fs = MEMORY_ALLOCATION;
            return;
        }
        for (long m = 0; m < nm && !*fs; m++) {
            const float *src = ar->flux + (size_t)m * ar->npix;
            int ex = !lib->exists || lib->exists[m];
            for (size_t j = 0; j < ar->npix; j++)
                row[j] = ex ? expf(src[j]) : src[j];
            fits_write_img(f, TFLOAT, 1 + m * np, np, row, fs);
        }
        free(row);
    }
}

int lio_save(const rvfit_library *lib, const char *dir,
             const lio_write_hooks *h, rvfit_err *err)
{
    char path[4096], tmp[4200], bang[4300];
    int file_given = 0;
    if (lio_path(dir, 1, path, sizeof path, &file_given) != 0 ||
        rvfit_tmpname(tmp, sizeof tmp, path) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: path too long", dir);
    if (lio_check_axes(lib, path, err) || lio_check_arms(lib, path, err))
        return RVFIT_ERR_INVALID;
    if (!lib->exists)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: no EXISTS array",
                             path);
    for (int a = 0; a < lib->narm; a++)
        if (!lib->arm[a].flux)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: arm %s has no "
                                 "flux", path, lib->arm[a].name);
    int st = file_given ? RVFIT_OK : rvfit_mkdirs(dir, err);
    if (st)
        return st;
    snprintf(bang, sizeof bang, "!%s", tmp);
    fitsfile *f = NULL;
    int fs = 0;
    fits_create_file(&f, bang, &fs);
    if (!fs)
        lio_write_primary(f, lib, h, &fs);
    if (!fs)
        lio_write_hdus(f, lib, h, &fs);
    if (!fs && h->hdus)
        h->hdus(h->ctx, lib, f, &fs);
    lio_fill_write_hdu(f, lib, &fs);
    return rvfit_fits_commit(f, fs, tmp, path, err);
}

