/* check.c — the structural checks of a library, before it is written
 * and after its headers are read: counts, axis names and nodes, arm names
 * and grids. */
#include <math.h>
#include <string.h>

#include "file_private.h"

/* A name usable in an EXTNAME and as a C string: 1..15 of [A-Za-z0-9_]. */
static int lio_name_ok(const char *s)
{
    size_t n = strnlen(s, 16);
    if (n == 0 || n >= 16)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

/* Axis names become output columns (TEFF, TEFF_ERR, ...): only the
 * parameters rvfit knows, so that no name collides with another column. */
static int lio_axis_known(const char *s)
{
    static const char *const known[] = {"TEFF", "LOGG", "FEH", "ALPHAFE"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(s, known[i]) == 0)
            return 1;
    return 0;
}

/* Structural checks shared by save (before writing) and load (after
 * reading the headers): counts, axis names and nodes. */
int lio_check_axes(const rvfit_library *lib, const char *file,
                          rvfit_err *err)
{
    if (lib->nparam < 1 || lib->nparam > RVFIT_MAX_PARAMS)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: NPARAM = %d not in "
                             "1..%d", file, lib->nparam, RVFIT_MAX_PARAMS);
    if (lib->narm < 1 || lib->narm > RVFIT_MAX_ARMS)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: NARM = %d not in "
                             "1..%d", file, lib->narm, RVFIT_MAX_ARMS);
    size_t prod = 1;
    for (int i = 0; i < lib->nparam; i++) {
        const rvfit_axis *ax = &lib->axis[i];
        if (!lio_name_ok(ax->name))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %d: bad "
                                 "name '%.16s'", file, i, ax->name);
        if (!lio_axis_known(ax->name))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %d: "
                                 "unknown parameter '%s' (known: TEFF, "
                                 "LOGG, FEH, ALPHAFE)", file, i, ax->name);
        if (ax->nnode < 1 || ax->nnode > RVFIT_MAX_NODES)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s: %d "
                                 "nodes, need 1..%d", file, ax->name,
                                 ax->nnode, RVFIT_MAX_NODES);
        for (int k = 0; k < ax->nnode; k++)
            if (!isfinite(ax->node[k]) ||
                (k > 0 && !(ax->node[k] > ax->node[k - 1])))
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s: "
                                     "nodes not finite and increasing at "
                                     "%d", file, ax->name, k);
        if (ax->scale != RVFIT_SCALE_LINEAR && ax->scale != RVFIT_SCALE_LOG10)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s: "
                                 "unknown scale %d", file, ax->name,
                                 ax->scale);
        for (int j = 0; j < i; j++)
            if (strcmp(lib->axis[j].name, ax->name) == 0)
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s "
                                     "appears twice", file, ax->name);
        prod *= (size_t)ax->nnode;
    }
    if (prod != lib->nmodel)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: NMODEL = %zu but "
                             "the axes give %zu", file, lib->nmodel, prod);
    if (!(lib->sigma0 >= 0.0) || !(lib->vmax >= 0.0))
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: bad SIGMA0 %g or "
                             "VMAX %g", file, lib->sigma0, lib->vmax);
    return RVFIT_OK;
}

/* Arm names unique and usable; grids sane. */
int lio_check_arms(const rvfit_library *lib, const char *file,
                          rvfit_err *err)
{
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *ar = &lib->arm[a];
        if (!lio_name_ok(ar->name))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: arm %d: bad "
                                 "name '%.16s'", file, a, ar->name);
        if (!isfinite(ar->lnl0) || !(ar->dlnl > 0.0 && ar->dlnl < 0.1) ||
            ar->npix < 2)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: arm %s: bad "
                                 "grid (LNL0 %g, DLNL %g, NPIX %zu)", file,
                                 ar->name, ar->lnl0, ar->dlnl, ar->npix);
        for (int j = 0; j < a; j++)
            if (strcmp(lib->arm[j].name, ar->name) == 0)
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: arm %s "
                                     "appears twice", file, ar->name);
    }
    return RVFIT_OK;
}
