/* library_interp.c — the CPU reference of regular-grid interpolation:
 * axis scaling, arm lookup, the multilinear stencil of a point (holes,
 * clamping and the out-of-grid penalty) and the interpolated template.
 * Loading and saving libraries is library_io.c's job.
 */
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

/* Locate x on axis a: lower node index *i0 and fraction *fr in [0,1] of
 * the enclosing cell, after clamping.  Returns the penalty term
 * (d/h)^2, d = distance outside the axis range, h = mean node spacing
 * (1 for a single-node axis, whose weight is always 1 on its node). */
static double axis_locate(const rvfit_axis *a, double x, int *i0, double *fr)
{
    int n = a->nnode;
    *i0 = 0;
    *fr = 0.0;
    if (n <= 1) {
        double d = n == 1 ? x - a->node[0] : 0.0;
        return d * d;
    }
    double lo = a->node[0], hi = a->node[n - 1];
    double h = (hi - lo) / (n - 1);
    double d = 0.0;
    if (x < lo) {
        d = (lo - x) / h;
        x = lo;
    } else if (x > hi) {
        d = (x - hi) / h;
        x = hi;
    } else if (!(x == x)) { /* NaN: treat as the first node, far away */
        x = lo;
        d = 1e3;
    }
    /* Largest i <= n-2 with node[i] <= x (binary search). */
    int l = 0, r = n - 2;
    while (l < r) {
        int mid = (l + r + 1) / 2;
        if (a->node[mid] <= x)
            l = mid;
        else
            r = mid - 1;
    }
    *i0 = l;
    *fr = (x - a->node[l]) / (a->node[l + 1] - a->node[l]);
    if (*fr < 0.0)
        *fr = 0.0;
    if (*fr > 1.0)
        *fr = 1.0;
    return d * d;
}

int rvfit_library_stencil(const rvfit_library *lib, const double *theta,
                          size_t *corner, double *weight, double *penalty)
{
    int np = lib->nparam;
    int i0[RVFIT_MAX_PARAMS];
    double fr[RVFIT_MAX_PARAMS];
    double pen = 0.0;
    for (int p = 0; p < np; p++)
        pen += axis_locate(&lib->axis[p], theta[p], &i0[p], &fr[p]);
    pen *= RVFIT_PENALTY_SCALE;

    /* Corner c: bit p set = upper node on axis p.  Zero-weight corners
     * (upper side of a zero fraction) are skipped. */
    int nc = 0;
    double sum = 0.0;
    for (unsigned c = 0; c < (1u << np); c++) {
        double wt = 1.0;
        size_t idx = 0;
        for (int p = 0; p < np; p++) {
            int up = (int)((c >> p) & 1u);
            if (up && fr[p] == 0.0) {
                wt = 0.0;
                break;
            }
            wt *= up ? fr[p] : 1.0 - fr[p];
            idx = idx * (size_t)lib->axis[p].nnode + (size_t)(i0[p] + up);
        }
        if (wt == 0.0 || (lib->exists && !lib->exists[idx]))
            continue;
        corner[nc] = idx;
        weight[nc] = wt;
        sum += wt;
        nc++;
    }
    if (nc == 0 || !(sum > 0.0)) {
        *penalty = pen + RVFIT_PENALTY_HOLE;
        return 0;
    }
    for (int k = 0; k < nc; k++)
        weight[k] /= sum;
    *penalty = pen;
    return nc;
}

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
    return pen;
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

int rvfit_batch_arm_check(const rvfit_library *lib, const rvfit_arm_batch *ba,
                          int *lib_arm, rvfit_err *err)
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
    return RVFIT_OK;
}
