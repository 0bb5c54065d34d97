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
#include "sdss_internal.h"

/* The one arm, with its defaults. */
static const rvfit_template_arm sdss_arm = {
    .name = SDSS_ARM, .lam_min = 3600.0, .lam_max = 10400.0, .step = 0.5,
    .sigma_kms = 45.0};

int sdss_parse_opts(const rvfit_kv *opts, int nopt, sdss_opts *o,
                    rvfit_err *err)
{
    rvfit_template_arm a = sdss_arm;
    int rc = rvfit_kv_template_arm(opts, nopt, "instrument.sdss", &a, err);
    o->lam_min = a.lam_min;
    o->lam_max = a.lam_max;
    o->step = a.step;
    o->sigma_kms = a.sigma_kms;
    return rc;
}

int sdss_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                       rvfit_template_arm *arms, rvfit_err *err)
{
    arms[0] = sdss_arm;
    int rc = rvfit_kv_template_arm(opts, nopt, "instrument.sdss", &arms[0],
                                   err);
    if (!rc)
        *narm = 1;
    return rc;
}
