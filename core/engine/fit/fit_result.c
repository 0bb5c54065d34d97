/* fit_result.c — a spectrum's result from the optimum the stages found:
 * values in physical units, reduced chi^2 and the errors it scales, and
 * the RVS_WARN bits (rvfit/fit.h; docs/output-format.md). */
#include <math.h>
#include <string.h>

#include "fit_internal.h"

void fit_result_bad(const fit_ctx *f, rvfit_result *r, size_t s)
{
    memset(r, 0, sizeof *r);
    r->vrad = r->vrad_err = r->vrad_skew = r->vrad_kurt = NAN;
    r->vsini = r->chisq_tot = r->chisq_c_tot = r->chisq_red = r->m2lnl = NAN;
    for (int i = 0; i < RVFIT_MAX_PARAMS; i++)
        r->param[i] = r->param_err[i] = r->param_err_interp[i] = NAN;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        r->chisq[a] = r->chisq_c[a] = NAN;
        r->sn[a] = a < f->b->narm ? f->b->snr[s * (size_t)f->b->narm + a]
                                  : NAN;
    }
    r->warn = RVFIT_WARN_BAD_SPECTRUM;
}

/* Reduced chi^2 over dof = pixels used - fitted quantities: npoly
 * continuum coefficients per arm with pixels, the velocities (one per
 * spectrum), vsini when fitted and the free library axes.  With
 * scale_errors the statistical errors are multiplied by sqrt(chi^2/dof),
 * as for a likelihood whose noise is underestimated by that factor; the
 * interpolation part is not noise and is added after
 * (docs/output-format.md). */
void fit_result_reduce(const fit_ctx *f, rvfit_result *r, int narm_used,
                       int nvel)
{
    long dof = r->npix_tot - (long)f->o->model.npoly * narm_used -
               (nvel + (f->o->fit_vsini ? 1 : 0) + f->nfree);
    r->chisq_red = dof > 0 ? r->chisq_tot / (double)dof : NAN;
    double k = f->o->scale_errors && r->chisq_red > 0 ? sqrt(r->chisq_red)
                                                      : 1.0;
    r->vrad_err *= k;
    for (int i = 0; i < f->lib->nparam; i++) {
        double s = r->param_err[i] * k, e = r->param_err_interp[i];
        r->param_err[i] = isfinite(e) ? sqrt(s * s + e * e) : s;
    }
}

void fit_result_finish(const fit_ctx *f, rvfit_result *r, size_t s)
{
    const rvfit_point *p = &f->best[s];
    const rvfit_batch *b = f->b;
    r->vrad = p->v;
    r->vrad_err = f->verr[s];
    r->vrad_skew = f->vskew[s];
    r->vrad_kurt = f->vkurt[s];
    r->vsini = p->vsini;
    r->npix_tot = 0;
    int narm_used = 0;
    for (int a = 0; a < b->narm; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        long np = 0;
        for (size_t i = 0; i < A->npix; i++)
            np += A->ivar[s * A->npix + i] > 0;
        r->npix[a] = np;
        r->npix_tot += np;
        narm_used += np > 0;
        r->sn[a] = b->snr[s * (size_t)b->narm + a];
    }
    for (int i = 0; i < f->lib->nparam; i++) {
        const rvfit_axis *ax = &f->lib->axis[i];
        r->param[i] = rvfit_axis_unscale(ax, p->theta[i]);
        if (ax->nnode > 1 &&
            (p->theta[i] <= f->lo[i] + 1e-3 * f->step[i] ||
             p->theta[i] >= f->hi[i] - 1e-3 * f->step[i]))
            r->warn |= RVFIT_WARN_PARAM;
    }
    fit_result_reduce(f, r, narm_used, 1);
    if (f->hs && rvfit_interp_at_edge(f->hs, p->theta))
        r->warn |= RVFIT_WARN_PARAM; /* a hull's edge inside the box */
    if (r->chisq_c_tot - r->chisq_tot < 50)
        r->warn |= RVFIT_WARN_CHISQ;
    if (r->vrad < f->o->vmin + 5 || r->vrad > f->o->vmax - 5)
        r->warn |= RVFIT_WARN_RV;
    if (!(r->vrad_err <= 100))
        r->warn |= RVFIT_WARN_RVERR;
    if (r->vsini > 100)
        r->warn |= RVFIT_WARN_VSINI;
}

/* The warnings rvfit_prep_batch left in a spectrum's flags. */
uint32_t fit_result_prep_warn(uint32_t flags)
{
    uint32_t w = 0;
    if (flags & RVFIT_SPEC_BAD_IVAR)
        w |= RVFIT_WARN_BAD_IVAR;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        if (flags & RVFIT_SPEC_ARM_OUTSIDE(a))
            w |= RVFIT_WARN_ARM_OUTSIDE;
    return w;
}

