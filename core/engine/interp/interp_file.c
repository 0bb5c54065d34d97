/* library_open.c — a template library opened for fitting, the one way
 * every front end (CLI, session) does it: load, apply the run-time
 * interpolation options of the config, open the interpolator the file
 * records. */
#include "rvfit/config.h"
#include "rvfit/interp.h"
#include "rvfit/library_io.h"

int rvfit_library_open_fit(rvfit_library *lib, rvfit_interpolator *ip,
                           const char *path, const rvfit_config *c,
                           rvfit_err *err)
{
    int rc = rvfit_library_load(lib, path, err);
    if (rc)
        return rc;
    int kind = -1;
    rc = rvfit_library_configure(lib, NULL, c->cubic, c->log_flux, err);
    if (!rc)
        rc = rvfit_library_kind(path, &kind, err);
    /* The grid kinds follow the (possibly overridden) axes; the others
     * read their records from the file. */
    if (kind != RVFIT_IKIND_SIMPLEX && kind != RVFIT_IKIND_PCA)
        kind = -1;
    if (!rc)
        rc = rvfit_interp_open(ip, lib, kind, path, (int)c->host_stencils,
                               err);
    if (rc)
        rvfit_library_free(lib);
    return rc;
}
