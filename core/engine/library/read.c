/* read.c — reading a library file (docs/template-library.md): the
 * primary HDU, the axes, EXISTS and the arms, in this order, every field
 * validated and every failure naming the file, HDU and reason.  What an
 * interpolator kind keeps in the file is read by the kind (the arms'
 * images through a hook, its own HDUs after). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_private.h"

void rvfit_library_free(rvfit_library *lib)
{
    if (!lib)
        return;
    free(lib->exists);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(lib->arm[a].flux);
    memset(lib, 0, sizeof *lib);
}

/* INTERP, CUBAXES and LOGFLUX as written: what they mean is the
 * interpolator kinds' business.  Libraries written before INTERP carried
 * its kind mean MULTILIN, without LOGFLUX flux. */
static void lio_interp_keys(lio_rd *r)
{
    int fs = 0, lf = 0;
    snprintf(r->interp, sizeof r->interp, "MULTILIN");
    if (fits_read_key(r->f, TSTRING, "INTERP", r->interp, NULL, &fs))
        snprintf(r->interp, sizeof r->interp, "MULTILIN");
    fs = 0;
    r->cubaxes[0] = '\0';
    if (fits_read_key(r->f, TSTRING, "CUBAXES", r->cubaxes, NULL, &fs))
        r->cubaxes[0] = '\0';
    fs = 0;
    if (rvfit_fits_read_key(r->f, TLOGICAL, "LOGFLUX", &lf, &fs))
        lf = 0;
    fits_clear_errmsg();
    r->log_flux = lf != 0;
}

int lio_read_head(lio_rd *r, rvfit_library *lib)
{
    int v = 0, st, fs = 0;
    LONGLONG nm = 0;
    char *src = NULL;
    snprintf(r->hdu, sizeof r->hdu, "primary HDU");
    if (rvfit_fits_read_key(r->f, TINT, "RVFLIBV", &v, &fs)) {
        fits_clear_errmsg();
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: primary HDU: no"
                             " RVFLIBV keyword (not an rvfit library)",
                             r->path);
    }
    if (v != RVFIT_LIBRARY_VERSION)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: RVFLIBV = %d, "
                             "this rvfit reads version %d", r->path, v,
                             RVFIT_LIBRARY_VERSION);
    if ((st = lio_key(r, TINT, "NPARAM", &lib->nparam)) ||
        (st = lio_key(r, TINT, "NARM", &lib->narm)) ||
        (st = lio_key(r, TLONGLONG, "NMODEL", &nm)) ||
        (st = lio_key(r, TDOUBLE, "SIGMA0", &lib->sigma0)) ||
        (st = lio_key(r, TDOUBLE, "VMAX", &lib->vmax)))
        return st;
    char ins[FLEN_VALUE] = "";
    if ((st = lio_key(r, TSTRING, "INSTRUM", ins)))
        return st;
    snprintf(lib->instrument, sizeof lib->instrument, "%s", ins);
    if (fits_read_key_longstr(r->f, "SOURCE", &src, NULL, &fs))
        return lio_fail(r, fs, "keyword SOURCE");
    snprintf(lib->source, sizeof lib->source, "%s", src);
    fits_free_memory(src, &fs);
    if (nm < 1)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: NMODEL = %lld",
                             r->path, (long long)nm);
    lib->nmodel = (size_t)nm;
    lio_interp_keys(r);
    if (lib->nparam < 1 || lib->nparam > RVFIT_MAX_PARAMS || lib->narm < 1
        || lib->narm > RVFIT_MAX_ARMS)
        return lio_check_axes(lib, r->path, r->err);
    return RVFIT_OK;
}

static int lio_axis(lio_rd *r, int i, rvfit_library *lib)
{
    rvfit_axis *ax = &lib->axis[i];
    int st, fs = 0, idx = -1, nx = 0, anynul = 0;
    long n = 0;
    char scale[FLEN_VALUE] = "", unit[FLEN_VALUE] = "";
    if ((st = lio_goto(r, 2 + i, "AXIS_", ax->name)))
        return st;
    if ((st = lio_key(r, TINT, "AXINDEX", &idx)) ||
        (st = lio_key(r, TSTRING, "SCALE", scale)) ||
        (st = lio_key(r, TSTRING, "UNIT", unit)))
        return st;
    if (idx != i)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: AXINDEX = "
                             "%d, expected %d", r->path, r->hdu, idx, i);
    char axname[FLEN_VALUE] = "";
    if ((st = lio_key(r, TSTRING, "AXNAME", axname)))
        return st;
    if (strcmp(axname, ax->name) != 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: AXNAME "
                             "'%s' does not match the EXTNAME", r->path,
                             r->hdu, axname);
    if (strcmp(scale, "LOG10") == 0)
        ax->scale = RVFIT_SCALE_LOG10;
    else if (strcmp(scale, "LINEAR") == 0)
        ax->scale = RVFIT_SCALE_LINEAR;
    else
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: SCALE = "
                             "'%s' (expected LINEAR or LOG10)", r->path,
                             r->hdu, scale);
    snprintf(ax->unit, sizeof ax->unit, "%.15s", unit);
    fits_get_img_dim(r->f, &nx, &fs);
    if (!fs && nx == 1)
        fits_get_img_size(r->f, 1, &n, &fs);
    if (fs || nx != 1 || n < 1 || n > RVFIT_MAX_NODES)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: need a 1D "
                             "image of 1..%d nodes", r->path, r->hdu,
                             RVFIT_MAX_NODES);
    ax->nnode = (int)n;
    double nul = NAN;
    if (fits_read_img(r->f, TDOUBLE, 1, n, &nul, ax->node, &anynul, &fs))
        return lio_fail(r, fs, "reading nodes");
    return RVFIT_OK;
}

static int lio_exists(lio_rd *r, rvfit_library *lib)
{
    int st, fs = 0, anynul = 0;
    if ((st = lio_goto(r, 2 + lib->nparam, "EXISTS", NULL)) ||
        (st = lio_dims(r, 1, (long)lib->nmodel, 0)))
        return st;
    lib->exists = malloc(lib->nmodel);
    if (!lib->exists)
        return rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: no memory",
                             r->path);
    unsigned char nul = 0;
    if (fits_read_img(r->f, TBYTE, 1, (LONGLONG)lib->nmodel, &nul,
                      lib->exists, &anynul, &fs))
        return lio_fail(r, fs, "reading data");
    for (size_t m = 0; m < lib->nmodel; m++)
        if (lib->exists[m] > 1)
            return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: value "
                                 "%d at model %zu (expected 0 or 1)",
                                 r->path, r->hdu, lib->exists[m], m);
    return RVFIT_OK;
}

static int lio_arm(lio_rd *r, int a, rvfit_library *lib, lio_arm_fn arm_fn,
                   void *ctx)
{
    rvfit_lib_arm *ar = &lib->arm[a];
    int st, fs = 0, anynul = 0;
    LONGLONG np = 0;
    char nm[FLEN_VALUE] = "";
    if ((st = lio_goto(r, lio_arm_hdu(lib, a), "FLUX_", ar->name)) ||
        (st = lio_key(r, TSTRING, "ARMNAME", nm)) ||
        (st = lio_key(r, TDOUBLE, "LNL0", &ar->lnl0)) ||
        (st = lio_key(r, TDOUBLE, "DLNL", &ar->dlnl)) ||
        (st = lio_key(r, TLONGLONG, "NPIX", &np)))
        return st;
    int ks = 0; /* SIGMAV is optional: absent means constant sigma0 */
    if (rvfit_fits_read_key(r->f, TDOUBLE, "SIGMAV", &ar->sigma_kms, &ks)) {
        ar->sigma_kms = 0.0;
        fits_clear_errmsg();
    }
    if (strcmp(nm, ar->name) != 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: ARMNAME '%s'"
                             " does not match the EXTNAME", r->path, r->hdu,
                             nm);
    if (np < 2 || !isfinite(ar->lnl0) || !(ar->dlnl > 0.0))
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: bad grid "
                             "(LNL0 %g, DLNL %g, NPIX %lld)", r->path,
                             r->hdu, ar->lnl0, ar->dlnl, (long long)np);
    ar->npix = (size_t)np;
    if (arm_fn) { /* the kind's records: models rebuilt */
        char hdu[sizeof r->hdu];
        snprintf(hdu, sizeof hdu, "%s", r->hdu);
        st = arm_fn(ctx, r, a, lib);
        snprintf(r->hdu, sizeof r->hdu, "%s", hdu);
        return st ? st : lio_check_models(r, lib, ar, r->log_flux);
    }
    if ((st = lio_dims(r, 2, (long)np, (long)lib->nmodel)))
        return st;
    size_t tot = ar->npix * lib->nmodel;
    ar->flux = malloc(tot * sizeof *ar->flux);
    if (!ar->flux)
        return rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: %s: no memory "
                             "for %zu values", r->path, r->hdu, tot);
    float nul = NAN;
    if (fits_read_img(r->f, TFLOAT, 1, (LONGLONG)tot, &nul, ar->flux,
                      &anynul, &fs))
        return lio_fail(r, fs, "reading data");
    return lio_check_models(r, lib, ar, 0);
}

int lio_read_body(lio_rd *r, rvfit_library *lib, lio_arm_fn arm_fn,
                  void *ctx)
{
    int st = RVFIT_OK;
    for (int i = 0; !st && i < lib->nparam; i++)
        st = lio_axis(r, i, lib);
    if (!st)
        st = lio_check_axes(lib, r->path, r->err);
    if (!st)
        st = lio_exists(r, lib);
    for (int a = 0; !st && a < lib->narm; a++)
        st = lio_arm(r, a, lib, arm_fn, ctx);
    if (!st)
        st = lio_check_arms(lib, r->path, r->err);
    if (!st)
        st = lio_fill_read(r, lib);
    return st;
}
