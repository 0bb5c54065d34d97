/* lamost_opts.c — [instrument.lamost] options and the template arm.
 *
 * LRS covers 3690-9100 A on a log-lambda grid of 1e-4 dex (69 km/s), as
 * BOSS does, so the template choices are the sdss plugin's
 * (instruments/sdss/sdss_opts.c says why): a 0.5 A step at the centre
 * and a 45 km/s Gaussian, constant in velocity like the pixels.  The
 * default range stays 10 A inside the published one, where fibres whose
 * grid starts a few pixels late still have data.  lam_min/lam_max also
 * bound the pixels the reader offers, so a library built with the same
 * options covers the data it is fitted to.
 *
 * resolution: LAMOST quotes R ~ 1800 at 5500 A; the LSF is taken as a
 * Gaussian of FWHM lambda/R at every wavelength (sigma = lambda / (R
 * 2.3548) A), before the pixel integration the core applies.  The files
 * carry no per-pixel width, so this is the only knob. */
#include <string.h>
#include <strings.h>

#include "lamost_internal.h"

static int lamost_parse_layout(const rvfit_kv *opts, int nopt, int *layout,
                               rvfit_err *err)
{
    const char *v = rvfit_kv_get(opts, nopt, "mock_layout");
    if (!v)
        return RVFIT_OK;
    if (!strcasecmp(v, "dr7"))
        *layout = LAMOST_DR7;
    else if (!strcasecmp(v, "dr8"))
        *layout = LAMOST_DR8;
    else if (!strcasecmp(v, "both"))
        *layout = 0;
    else {
        for (int i = 0; i < nopt; i++)
            if (!strcmp(opts[i].key, "mock_layout"))
                return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                     "%s:%d: key 'mock_layout': '%s' is "
                                     "not dr7, dr8 or both", opts[i].file,
                                     opts[i].line, v);
    }
    return RVFIT_OK;
}

int lamost_parse_opts(const rvfit_kv *opts, int nopt, lamost_opts *o,
                      rvfit_err *err)
{
    o->lam_min = 3700.0;
    o->lam_max = 9090.0;
    o->step = 0.5;
    o->sigma_kms = 45.0;
    o->resolution = 1800.0;
    o->mock_layout = LAMOST_DR8;
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
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "resolution", 100.0, 100000.0,
                             &o->resolution, err);
    if (!rc)
        rc = lamost_parse_layout(opts, nopt, &o->mock_layout, err);
    if (!rc && !(o->lam_max > o->lam_min + 100.0))
        rc = rvfit_err_set(err, RVFIT_ERR_CONFIG,
                           "instrument.lamost: lam_max (%g) must exceed "
                           "lam_min (%g) by more than 100 A",
                           o->lam_max, o->lam_min);
    return rc;
}

int lamost_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                         rvfit_template_arm *arms, rvfit_err *err)
{
    lamost_opts o;
    int rc = lamost_parse_opts(opts, nopt, &o, err);
    if (rc)
        return rc;
    memset(&arms[0], 0, sizeof arms[0]);
    snprintf(arms[0].name, sizeof arms[0].name, "%s", LAMOST_ARM);
    arms[0].lam_min = o.lam_min;
    arms[0].lam_max = o.lam_max;
    arms[0].step = o.step;
    arms[0].sigma_kms = o.sigma_kms;
    *narm = 1;
    return RVFIT_OK;
}
