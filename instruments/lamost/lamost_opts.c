/* lamost_opts.c — [instrument.lamost] options and the template arms.
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
 * carry no per-pixel width, so this is the only knob.
 *
 * MRS (med- files, R ~ 7500): two arms, MRS_B and MRS_R, whose data cover
 * about 4950-5350 and 6300-6800 A; the template arms and the pixels the
 * reader offers are fixed a little wider, 4900-5400 and 6250-6850 A, so
 * that a fibre whose range differs by a few Angstrom keeps its pixels.
 * The pixels are about 5.6 km/s (log-linear, ~4150 and ~3730 of them), so
 * the templates follow the LRS recipe scaled to them: a Gaussian constant
 * in velocity of 3.6 km/s (0.65 pixel) and a 0.04 A step (2.3 km/s at
 * 5150 A), well inside the 17 km/s LSF sigma of R = 7500.  `arms` says
 * which arms `rvfit templates -i lamost` builds (lrs, mrs, or both for a
 * library that fits either kind of file); `mrs` which spectra of a med-
 * file are read: the coadd (one per file) or every exposure. */
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

/* The one arm, with its defaults. */
static const rvfit_template_arm lamost_arm = {
    .name = LAMOST_ARM, .lam_min = 3700.0, .lam_max = 9090.0, .step = 0.5,
    .sigma_kms = 45.0};

const lamost_mrs_arm lamost_mrs_arms[LAMOST_MRS_NARM] = {
    {"MRS_B", "B", 4900.0, 5400.0}, {"MRS_R", "R", 6250.0, 6850.0}};

/* The option's line, for messages: "FILE:LINE: " or "". */
static void lamost_where(const rvfit_kv *opts, int nopt, const char *key,
                         char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < nopt; i++)
        if (!strcmp(opts[i].key, key))
            snprintf(buf, n, "%s:%d: ", opts[i].file, opts[i].line);
}

/* arms = lrs | mrs | lrs, mrs (any order, blanks and commas between). */
static int lamost_parse_arms(const rvfit_kv *opts, int nopt, int *arms,
                             rvfit_err *err)
{
    const char *v = rvfit_kv_get(opts, nopt, "arms");
    if (!v)
        return RVFIT_OK;
    int bits = 0, bad = 0;
    for (const char *p = v; *p && !bad;) {
        size_t n = strcspn(p, ", \t");
        if (n == 3 && !strncasecmp(p, "lrs", 3))
            bits |= LAMOST_ARMS_LRS;
        else if (n == 3 && !strncasecmp(p, "mrs", 3))
            bits |= LAMOST_ARMS_MRS;
        else if (n)
            bad = 1;
        p += n;
        p += strspn(p, ", \t");
    }
    if (bad || !bits) {
        char at[300];
        lamost_where(opts, nopt, "arms", at, sizeof at);
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "%skey 'arms': '%s' is "
                             "not lrs, mrs or 'lrs, mrs'", at, v);
    }
    *arms = bits;
    return RVFIT_OK;
}

static int lamost_parse_mrs(const rvfit_kv *opts, int nopt, int *mrs,
                            rvfit_err *err)
{
    const char *v = rvfit_kv_get(opts, nopt, "mrs");
    if (!v)
        return RVFIT_OK;
    if (!strcasecmp(v, "coadd"))
        *mrs = LAMOST_MRS_COADD;
    else if (!strcasecmp(v, "exposures"))
        *mrs = LAMOST_MRS_EXPOSURES;
    else {
        char at[300];
        lamost_where(opts, nopt, "mrs", at, sizeof at);
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "%skey 'mrs': '%s' is "
                             "not coadd or exposures", at, v);
    }
    return RVFIT_OK;
}

int lamost_parse_opts(const rvfit_kv *opts, int nopt, lamost_opts *o,
                      rvfit_err *err)
{
    rvfit_template_arm a = lamost_arm;
    o->resolution = 1800.0;
    o->mock_layout = LAMOST_DR8;
    int rc = rvfit_kv_template_arm(opts, nopt, "instrument.lamost", &a, err);
    o->lam_min = a.lam_min;
    o->lam_max = a.lam_max;
    o->step = a.step;
    o->sigma_kms = a.sigma_kms;
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "resolution", 100.0, 100000.0,
                             &o->resolution, err);
    if (!rc)
        rc = lamost_parse_layout(opts, nopt, &o->mock_layout, err);
    o->arms = LAMOST_ARMS_LRS;
    o->mrs = LAMOST_MRS_COADD;
    o->mrs_resolution = 7500.0;
    o->mrs_step = 0.04;
    o->mrs_sigma_kms = 3.6;
    if (!rc)
        rc = lamost_parse_arms(opts, nopt, &o->arms, err);
    if (!rc)
        rc = lamost_parse_mrs(opts, nopt, &o->mrs, err);
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "mrs_resolution", 100.0, 100000.0,
                             &o->mrs_resolution, err);
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "mrs_step", 0.001, 1.0,
                             &o->mrs_step, err);
    if (!rc)
        rc = rvfit_kv_double(opts, nopt, "mrs_sigma_kms", 0.0, 100.0,
                             &o->mrs_sigma_kms, err);
    return rc;
}

int lamost_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                         rvfit_template_arm *arms, rvfit_err *err)
{
    lamost_opts o; /* resolution and layout checked too, as before */
    int rc = lamost_parse_opts(opts, nopt, &o, err);
    if (rc)
        return rc;
    int n = 0;
    if (o.arms & LAMOST_ARMS_LRS) {
        arms[n] = lamost_arm;
        arms[n].lam_min = o.lam_min;
        arms[n].lam_max = o.lam_max;
        arms[n].step = o.step;
        arms[n].sigma_kms = o.sigma_kms;
        n++;
    }
    for (int a = 0; (o.arms & LAMOST_ARMS_MRS) && a < LAMOST_MRS_NARM; a++) {
        rvfit_template_arm *t = &arms[n++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", lamost_mrs_arms[a].name);
        t->lam_min = lamost_mrs_arms[a].lam_min;
        t->lam_max = lamost_mrs_arms[a].lam_max;
        t->step = o.mrs_step;
        t->sigma_kms = o.mrs_sigma_kms;
    }
    *narm = n;
    return RVFIT_OK;
}
