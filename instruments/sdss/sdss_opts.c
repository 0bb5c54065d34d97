/* sdss_opts.c — [instrument.sdss] options and the template arm.
 *
 * BOSS covers 3600-10400 A in one log-lambda grid (69 km/s pixels, about
 * 0.8 A at 3600 A and 2.4 A at 10400 A).  The template step of 0.5 A at
 * the centre (7000 A) is 21 km/s, a third of a pixel.  The resolution
 * matrix acts on templates sampled at the data pixels, so the templates
 * must be smooth on the pixel scale at every wavelength: a Gaussian of
 * 45 km/s (0.65 pixel), constant in velocity like the pixels (a constant
 * sigma in Angstrom aliases in the red, where pixels reach 2.3 A, and is
 * measured to shift lines by several km/s there).  lam_min/lam_max
 * also bound the pixels the reader offers, so a library built with the
 * same options always covers the data it is fitted to. */
#include <string.h>

#include "sdss_internal.h"

int sdss_parse_opts(const rvfit_kv *opts, int nopt, sdss_opts *o,
                    rvfit_err *err)
{
    o->lam_min = 3600.0;
    o->lam_max = 10400.0;
    o->step = 0.5;
    o->sigma_kms = 45.0;
    int rc = rvfit_kv_double(opts, nopt, "lam_min", 1000.0, 30000.0,
                             &o->lam_min, err);
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "lam_max", 1000.0, 30000.0,
                             &o->lam_max, err);
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "step", 0.01, 10.0, &o->step, err);
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "sigma_kms", 0.0, 500.0,
                             &o->sigma_kms, err);
    if (!rc && !(o->lam_max > o->lam_min + 100.0))
        rc = rvfit_err_set(err, RVFIT_ERR_CONFIG,
                           "instrument.sdss: lam_max (%g) must exceed "
                           "lam_min (%g) by more than 100 A",
                           o->lam_max, o->lam_min);
    return rc;
}

int sdss_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                       rvfit_template_arm *arms, rvfit_err *err)
{
    sdss_opts o;
    int rc = sdss_parse_opts(opts, nopt, &o, err);
    if (rc)
        return rc;
    memset(&arms[0], 0, sizeof arms[0]);
    snprintf(arms[0].name, sizeof arms[0].name, "%s", SDSS_ARM);
    arms[0].lam_min = o.lam_min;
    arms[0].lam_max = o.lam_max;
    arms[0].step = o.step;
    arms[0].sigma_kms = o.sigma_kms;
    *narm = 1;
    return RVFIT_OK;
}
