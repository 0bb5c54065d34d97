/* desi_arms.c — DESI wavelength coverage: template arms (rvspecfit's
 * desi_b/r/z setup) and the real pixel grids and LSF widths the mock
 * writer uses. */
#include <string.h>

#include "desi_internal.h"

/* Template coverage (vacuum Angstrom) and step, as rvspecfit prepares its
 * DESI templates; smoothing 0 = the constant sigma0 in Angstrom (DESI
 * pixels are a constant 0.8 A). */
static const rvfit_template_arm desi_tarms[3] = {
    {"B", 3500.0, 5900.0, 0.4, 0.0},
    {"R", 5660.0, 7720.0, 0.4, 0.0},
    {"Z", 7420.0, 9924.0, 0.4, 0.0},
};

/* Real coadd grids (0.8 Angstrom linear).  LSF sigma in Angstrom at the
 * blue/red end of each camera, close to the DESI spectrographs' (the B
 * camera broadens to the red, R sharpens); sky is the relative background
 * level used to shape the noise. */
static const desi_mock_arm desi_marms[DESI_MOCK_NARM] = {
    {"B", 3600.0, 2751, 0.8, 0.65, 0.75, 0.3},
    {"R", 5760.0, 2326, 0.8, 0.70, 0.62, 0.5},
    {"Z", 7520.0, 2881, 0.8, 0.75, 0.70, 1.0},
};

const desi_mock_arm *desi_mock_arms(void)
{
    return desi_marms;
}

int desi_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                       rvfit_template_arm *arms, rvfit_err *err)
{
    (void)opts;
    (void)nopt;
    (void)err;
    *narm = 3;
    memcpy(arms, desi_tarms, sizeof desi_tarms);
    return RVFIT_OK;
}
