/* options.c — rvfit_library_configure: the interpolation options of
 * [templates] (interpolator, cubic, log_flux) applied to a library,
 * when it is built (the kind given, recorded in the file) and at run time
 * (overrides).  What a kind allows of the cubic axes is its descriptor's
 * (cubaxes). */
#include <string.h>
#include <strings.h>

#include "interp_internal.h"

/* The cubic axes a kind takes from `cubic` (NULL or "" : not given). */
static int kind_cubic(rvfit_library *lib, const rvfit_interp_kind *k,
                      const char *cubic, rvfit_err *err)
{
    char all[RVFIT_MAX_PARAMS * 18] = "";
    for (int p = 0; p < lib->nparam; p++)
        if (lib->axis[p].nnode >= 3) {
            strcat(all, all[0] ? "," : "");
            strncat(all, lib->axis[p].name, 16);
        }
    int given = cubic && cubic[0] && strcasecmp(cubic, "none");
    if (k->cubaxes != INTERP_CUB_NONE && given)
        return rvfit_library_set_cubic(lib, cubic, err);
    if (k->cubaxes == INTERP_CUB_SOME && !all[0])
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "interpolator = %s: no "
                             "axis has 3 or more nodes", k->name);
    return rvfit_library_set_cubic(
        lib, k->cubaxes == INTERP_CUB_SOME ? all : "none", err);
}

int rvfit_library_configure(rvfit_library *lib, const char *kind,
                            const char *cubic, long log_flux, rvfit_err *err)
{
    int rc = RVFIT_OK;
    if (kind) {
        const rvfit_interp_kind *k = interp_kind_find(kind);
        if (!k)
            return rvfit_err_set(err, RVFIT_ERR_CONFIG, "[templates] "
                                 "interpolator '%s': use %s", kind,
                                 interp_kind_names());
        rc = kind_cubic(lib, k, cubic, err);
    } else if (cubic && cubic[0]) {
        rc = rvfit_library_set_cubic(lib, cubic, err);
    }
    if (rc)
        return rc;
    if (log_flux == 1)
        return rvfit_library_set_log_flux(lib, err);
    if (log_flux == 0 && lib->log_flux)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "[templates] log_flux = "
                             "0, but the library is built to interpolate in "
                             "ln flux (LOGFLUX): leave log_flux at -1 or "
                             "rebuild the library");
    return RVFIT_OK;
}
