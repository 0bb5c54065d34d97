/* library_model.c — the parts of the template library every backend
 * shares: arm lookup, axis scaling, the templates' own smoothing, and the
 * checks of what a backend is given (library, batch, model options).
 * The stencil of a point is library_stencil.c's job. */
#include <math.h>
#include <string.h>

#include "rvfit/backend.h"
#include "rvfit/library.h"
#include "rvfit/physics.h"

int rvfit_library_arm(const rvfit_library *lib, const char *name)
{
    for (int a = 0; a < lib->narm; a++)
        if (strncmp(lib->arm[a].name, name, sizeof lib->arm[a].name) == 0)
            return a;
    return -1;
}

double rvfit_axis_scale(const rvfit_axis *a, double physical)
{
    return a->scale == RVFIT_SCALE_LOG10 ? log10(physical) : physical;
}

double rvfit_axis_unscale(const rvfit_axis *a, double scaled)
{
    return a->scale == RVFIT_SCALE_LOG10 ? pow(10.0, scaled) : scaled;
}

double rvfit_library_sigma(const rvfit_library *lib, int arm, double lambda)
{
    if (arm < 0 || arm >= lib->narm || !(lib->arm[arm].sigma_kms > 0.0))
        return lib->sigma0;
    const rvfit_lib_arm *A = &lib->arm[arm];
    double sv = lambda * A->sigma_kms / RVFIT_C_KMS;
    double box = lambda * A->dlnl; /* the template pixel, Angstrom */
    return sqrt(sv * sv + box * box / 12.0);
}

int rvfit_library_check(const rvfit_library *lib, rvfit_err *err)
{
    if (lib->nparam < 0 || lib->nparam > RVFIT_MAX_PARAMS || lib->narm < 1 ||
        lib->narm > RVFIT_MAX_ARMS || lib->nmodel < 1)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "library: nparam %d, narm %d, nmodel %zu out of "
                             "range", lib->nparam, lib->narm, lib->nmodel);
    size_t nm = 1;
    for (int p = 0; p < lib->nparam; p++) {
        if (lib->axis[p].nnode < 1 || lib->axis[p].nnode > RVFIT_MAX_NODES)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "library: axis %s has %d nodes",
                                 lib->axis[p].name, lib->axis[p].nnode);
        nm *= (size_t)lib->axis[p].nnode;
    }
    if (nm != lib->nmodel)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "library: nmodel %zu != product of axis nodes %zu",
                             lib->nmodel, nm);
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *la = &lib->arm[a];
        if (la->npix < 4 || !(la->dlnl > 0.0) || !la->flux)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "library arm %s: npix %zu, dlnl %g",
                                 la->name, la->npix, la->dlnl);
    }
    return RVFIT_OK;
}

int rvfit_batch_opts_check(const rvfit_batch *batch,
                           const rvfit_model_opts *mo, rvfit_err *err)
{
    if (mo->npoly < 1 || mo->npoly > RVFIT_MAX_POLY ||
        (mo->basis != RVFIT_BASIS_GAUSS && mo->basis != RVFIT_BASIS_CHEB &&
         mo->basis != RVFIT_BASIS_BSPLINE) ||
        (mo->basis == RVFIT_BASIS_BSPLINE && mo->npoly < 4))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "load_batch: npoly %d or basis %d invalid",
                             mo->npoly, mo->basis);
    if (batch->narm < 1 || batch->narm > RVFIT_MAX_ARMS)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "load_batch: narm %d",
                             batch->narm);
    return RVFIT_OK;
}

int rvfit_batch_arm_check(const rvfit_library *lib, const rvfit_arm_batch *ba,
                          size_t nspec, int *lib_arm, rvfit_err *err)
{
    *lib_arm = rvfit_library_arm(lib, ba->name);
    if (*lib_arm < 0)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "batch arm '%.16s' is not in the library",
                             ba->name);
    if (ba->res_kind == RVFIT_RES_LSF)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "arm %.16s: LSF resolution must be converted to a "
                             "band matrix by the core", ba->name);
    if (ba->res_kind == RVFIT_RES_BAND &&
        (ba->ndiag < 1 || ba->ndiag % 2 == 0 || !ba->res))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "arm %.16s: band matrix with ndiag %d", ba->name,
                             ba->ndiag);
    if (ba->npix < 2 || !ba->wave || !ba->flux || !ba->ivar)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "arm %.16s: npix %zu or missing arrays", ba->name,
                             ba->npix);
    for (size_t s = 0; s < nspec; s++) {
        size_t n = rvfit_arm_npix(ba, s);
        if (n < 2 || n > ba->npix)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "arm %.16s: spectrum %zu has %zu own pixels "
                                 "of %zu", ba->name, s, n, ba->npix);
    }
    return RVFIT_OK;
}

int rvfit_batch_update_check(const rvfit_batch *batch, int have,
                             size_t nspec, int narm, const size_t *npix,
                             rvfit_err *err)
{
    int same = have && batch->nspec == nspec && batch->narm == narm;
    for (int a = 0; same && a < narm; a++)
        same = batch->arm[a].npix == npix[a] && batch->arm[a].flux &&
               batch->arm[a].ivar;
    if (!same)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "update_data: the batch is not the resident one "
                             "(spectra, arms or pixels differ, or no batch is "
                             "loaded): load_batch it");
    return RVFIT_OK;
}

int rvfit_stencils_check(const rvfit_library *lib, size_t n,
                         const rvfit_stencils *st, rvfit_err *err)
{
    if (!st || !st->off || !st->pen || (n && st->off[0] != 0))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "stencils: missing arrays or off[0] != 0");
    if (st->nw != 1 && st->nw != (uint32_t)lib->narm)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "stencils: %u weights "
                             "per entry (1 or the library's %d arms)",
                             st->nw, lib->narm);
    if (st->off[n] > 0 && (!st->idx || !st->w))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "stencils: missing idx or w");
    for (size_t i = 0; i < n; i++) {
        uint32_t e0 = st->off[i], e1 = st->off[i + 1];
        if (e1 < e0 || e1 - e0 > RVFIT_MAX_STENCIL || !isfinite(st->pen[i]))
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "stencil %zu: %ld entries (at most %d), "
                                 "penalty %g", i, (long)e1 - (long)e0,
                                 RVFIT_MAX_STENCIL, st->pen[i]);
        for (uint32_t e = e0; e < e1; e++) {
            if (st->idx[e] >= lib->nmodel)
                return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                     "stencil %zu: vector %u (of %zu)", i,
                                     st->idx[e], lib->nmodel);
            for (uint32_t a = 0; a < st->nw; a++)
                if (!isfinite(st->w[(size_t)e * st->nw + a]))
                    return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                         "stencil %zu: vector %u, arm %u: "
                                         "weight %g", i, st->idx[e], a,
                                         st->w[(size_t)e * st->nw + a]);
        }
    }
    return RVFIT_OK;
}
