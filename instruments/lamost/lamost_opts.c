/* lamost_opts.c — [instrument.lamost] options and the template arms.
 *
 * LRS covers 3690-9100 A on a log-lambda grid of 1e-4 dex (69 km/s), as
 * BOSS does, so the template choices are the sdss plugin's
 * (instruments/sdss/sdss_opts.c says why): a 0.5 A step at the centre
 * and a 45 km/s Gaussian, constant in velocity like the pixels.  The
 * default range stays 10 A inside the published one, where fibres whose
 * grid starts a few pixels late still have data.  lam_min/lam_max also
 * bound the pixels the fit uses (the reader gives those outside ivar 0),
 * so a library built with the same options covers the data it is fitted
 * to.  The reader still offers every pixel of the file, so the continuum
 * basis spans the whole arm, not the cut (docs/lamost.md).
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

/* Where the entry of key whose value is v came from: "FILE:LINE". */
static const char *lamost_where(const rvfit_kv *opts, int nopt,
                                const char *key, const char *v, char *buf,
                                size_t n)
{
    for (int i = 0; i < nopt; i++)
        if (!strcmp(opts[i].key, key) && opts[i].value == v)
            return rvfit_kv_where(opts[i].file, opts[i].line, buf, n);
    return rvfit_kv_where(NULL, 0, buf, n);
}

/* Key `key` as one of names[0..n) (any case): *out = vals[i]; absent: *out
 * kept; otherwise RVFIT_ERR_CONFIG "FILE:LINE: key 'K': 'V' is not
 * WHAT". */
static int lamost_parse_choice(const rvfit_kv *opts, int nopt,
                               const char *key, const char *const *names,
                               const int *vals, int n, const char *what,
                               int *out, rvfit_err *err)
{
    const char *v = rvfit_kv_get(opts, nopt, key);
    if (!v)
        return RVFIT_OK;
    for (int i = 0; i < n; i++)
        if (!strcasecmp(v, names[i])) {
            *out = vals[i];
            return RVFIT_OK;
        }
    char at[300];
    return rvfit_err_set(err, RVFIT_ERR_CONFIG, "%s: key '%s': '%s' is not "
                         "%s", lamost_where(opts, nopt, key, v, at,
                                            sizeof at), key, v, what);
}

static int lamost_parse_layout(const rvfit_kv *opts, int nopt, int *layout,
                               rvfit_err *err)
{
    static const char *const names[3] = {"dr7", "dr8", "both"};
    static const int vals[3] = {LAMOST_DR7, LAMOST_DR8, 0};
    return lamost_parse_choice(opts, nopt, "mock_layout", names, vals, 3,
                               "dr7, dr8 or both", layout, err);
}

/* The one arm, with its defaults. */
static const rvfit_template_arm lamost_arm = {
    .name = LAMOST_ARM, .lam_min = 3700.0, .lam_max = 9090.0, .step = 0.5,
    .sigma_kms = 45.0};

const lamost_mrs_arm lamost_mrs_arms[LAMOST_MRS_NARM] = {
    {"MRS_B", "B", 4900.0, 5400.0}, {"MRS_R", "R", 6250.0, 6850.0}};

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
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "%s: key 'arms': '%s' "
                             "is not lrs, mrs or 'lrs, mrs'",
                             lamost_where(opts, nopt, "arms", v, at,
                                          sizeof at), v);
    }
    *arms = bits;
    return RVFIT_OK;
}

static int lamost_parse_mrs(const rvfit_kv *opts, int nopt, int *mrs,
                            rvfit_err *err)
{
    static const char *const names[2] = {"coadd", "exposures"};
    static const int vals[2] = {LAMOST_MRS_COADD, LAMOST_MRS_EXPOSURES};
    return lamost_parse_choice(opts, nopt, "mrs", names, vals, 2,
                               "coadd or exposures", mrs, err);
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
