/* tools_library.c — steps shared by the library builders of core/tools
 * (tools_library.h). */
#include "tools_library.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/interp.h"

static int tools_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int tools_axis(rvfit_axis *ax, const char *name, const char *unit,
               int scale, const double *v, size_t n, double *tmp,
               rvfit_err *err)
{
    memcpy(tmp, v, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, tools_dcmp);
    snprintf(ax->name, sizeof ax->name, "%s", name);
    snprintf(ax->unit, sizeof ax->unit, "%s", unit);
    ax->scale = scale;
    ax->nnode = 0;
    for (size_t i = 0; i < n; i++) {
        if (ax->nnode > 0 && fabs(tmp[i] - tmp[i - 1]) <=
                                 1e-6 * fmax(1.0, fabs(tmp[i])))
            continue;
        if (ax->nnode == RVFIT_MAX_NODES)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "axis %s has more "
                                 "than %d distinct values", name,
                                 RVFIT_MAX_NODES);
        ax->node[ax->nnode++] = scale == RVFIT_SCALE_LOG10 ? log10(tmp[i])
                                                           : tmp[i];
    }
    return RVFIT_OK;
}

int tools_axis_find(const rvfit_axis *ax, double x)
{
    if (ax->scale == RVFIT_SCALE_LOG10)
        x = log10(x);
    for (int k = 0; k < ax->nnode; k++)
        if (fabs(ax->node[k] - x) <= 1e-6 * fmax(1.0, fabs(x)))
            return k;
    return -1;
}

int tools_alloc_flux(rvfit_library *lib, rvfit_err *err)
{
    for (int a = 0; a < lib->narm; a++) {
        rvfit_lib_arm *la = &lib->arm[a];
        la->flux = malloc(lib->nmodel * la->npix * sizeof *la->flux);
        if (!la->flux)
            return rvfit_err_set(err, RVFIT_ERR_NOMEM, "templates: no memory"
                                 " for %zu x %zu pixels of arm %s",
                                 lib->nmodel, la->npix, la->name);
        for (size_t m = 0; m < lib->nmodel; m++)
            if (!lib->exists[m])
                for (size_t p = 0; p < la->npix; p++)
                    la->flux[m * la->npix + p] = 1.0f;
    }
    return RVFIT_OK;
}

int tools_library_finish(rvfit_library *lib, const rvfit_templates_opts *o,
                         const char *outdir, rvfit_err *err)
{
    const char *kname = o->interpolator ? o->interpolator : "multilinear";
    int st = rvfit_library_configure(lib, kname, o->cubic, o->log_flux, err);
    int fill = rvfit_fill_parse(o->fill_holes);
    if (!st && fill < 0)
        st = rvfit_err_set(err, RVFIT_ERR_CONFIG, "fill_holes = '%s': "
                           "expected none or quadratic", o->fill_holes);
    /* in the space interpolated (ln flux after configure, if asked) */
    if (!st)
        st = rvfit_library_fill_holes(lib, fill, o->nfilled, o->nleft, err);
    /* the simplex kind triangulates here and pca decomposes, both stored
     * in the file */
    rvfit_interpolator ip;
    memset(&ip, 0, sizeof ip);
    rvfit_interp_opts io = {
        .kind = kname,
        .pca_k = o->pca_k,
        .pca_rms = o->pca_rms,
        .simplex_correction = o->simplex_correction,
    };
    if (!st)
        st = rvfit_interp_build(&ip, lib, &io, err);
    if (!st)
        st = rvfit_library_save_interp(lib, &ip, outdir, err);
    rvfit_interp_close(&ip);
    return st;
}
