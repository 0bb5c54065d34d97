/* template.c — the library in memory on the host: the interpolated
 * template of a point on the grid (CPU reference), and the interpolation
 * options that change the library (cubic axes, ln flux).  The stencil
 * itself is the SDK's (library_stencil.c). */
#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "rvfit/library_io.h"

double rvfit_library_interp(const rvfit_library *lib, int arm,
                            const double *theta, double *out)
{
    size_t corner[RVFIT_MAX_CORNERS];
    double weight[RVFIT_MAX_CORNERS];
    double pen = 0.0;
    int nc = rvfit_library_stencil(lib, theta, corner, weight, &pen);
    const rvfit_lib_arm *la = &lib->arm[arm];
    size_t n = la->npix;
    if (nc == 0) {
        for (size_t j = 0; j < n; j++)
            out[j] = 1.0;
        return pen;
    }
    const float *f0 = la->flux + corner[0] * n;
    for (size_t j = 0; j < n; j++)
        out[j] = weight[0] * (double)f0[j];
    for (int k = 1; k < nc; k++) {
        const float *fk = la->flux + corner[k] * n;
        double wk = weight[k];
        for (size_t j = 0; j < n; j++)
            out[j] += wk * (double)fk[j];
    }
    if (lib->log_flux)
        for (size_t j = 0; j < n; j++)
            out[j] = exp(out[j]);
    return pen;
}

int rvfit_library_set_log_flux(rvfit_library *lib, rvfit_err *err)
{
    if (lib->log_flux)
        return RVFIT_OK;
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *la = &lib->arm[a];
        for (size_t m = 0; m < lib->nmodel; m++) {
            if (lib->exists && !lib->exists[m])
                continue;
            const float *f = la->flux + m * la->npix;
            for (size_t j = 0; j < la->npix; j++)
                if (!(f[j] > 0.0f) || !isfinite(f[j]))
                    return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                                         "library arm %s, model %zu, pixel "
                                         "%zu: flux %g cannot be "
                                         "interpolated in ln flux",
                                         la->name, m, j, (double)f[j]);
        }
    }
    for (int a = 0; a < lib->narm; a++) {
        rvfit_lib_arm *la = &lib->arm[a];
        for (size_t m = 0; m < lib->nmodel; m++) {
            float *f = la->flux + m * la->npix;
            if (lib->exists && !lib->exists[m])
                continue;
            for (size_t j = 0; j < la->npix; j++)
                f[j] = logf(f[j]);
        }
    }
    lib->log_flux = 1;
    return RVFIT_OK;
}

int rvfit_library_set_cubic(rvfit_library *lib, const char *axes,
                            rvfit_err *err)
{
    int cubic[RVFIT_MAX_PARAMS] = {0};
    const char *s = axes ? axes : "";
    if (!strcasecmp(s, "none"))
        s = "";
    while (*s) {
        while (*s == ',' || isspace((unsigned char)*s))
            s++;
        size_t len = strcspn(s, ", \t");
        if (len == 0)
            break;
        int found = -1;
        for (int p = 0; p < lib->nparam; p++)
            if (strlen(lib->axis[p].name) == len &&
                strncasecmp(lib->axis[p].name, s, len) == 0)
                found = p;
        if (found < 0) {
            char known[RVFIT_MAX_PARAMS * 18] = "";
            for (int p = 0; p < lib->nparam; p++) {
                strcat(known, p ? ", " : "");
                strncat(known, lib->axis[p].name, 16);
            }
            return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                 "cubic interpolation: the library has no "
                                 "axis '%.*s' (its axes: %s)", (int)len, s,
                                 known);
        }
        cubic[found] = 1;
        s += len;
    }
    long corners = 1;
    for (int p = 0; p < lib->nparam; p++)
        corners *= cubic[p] && lib->axis[p].nnode >= 3 ? 4 : 2;
    if (corners > RVFIT_MAX_CORNERS)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "cubic interpolation on these axes needs %ld "
                             "templates per point, more than %d: make fewer "
                             "axes cubic", corners, RVFIT_MAX_CORNERS);
    for (int p = 0; p < lib->nparam; p++)
        lib->axis[p].interp = cubic[p] ? RVFIT_INTERP_CUBIC
                                       : RVFIT_INTERP_LINEAR;
    return RVFIT_OK;
}
