/* lamost_meta.c — what the primary header of an LRS file says: the
 * TARGETID (OBSID, or derived: lamost_ids.c), position, the pipeline's
 * class, redshift and S/N (copied to the output), the log-lambda grid,
 * and the wavelength frame.
 *
 * Frame: LAMOST publishes vacuum wavelengths in the heliocentric frame
 * (the release documentation; VACUUM = T, HELIO_RV the correction that
 * was applied).  rvfit fits vacuum wavelengths, and like the sdss and
 * desi plugins takes the file's frame as the frame of VRAD: nothing is
 * re-applied.  A file that says otherwise is honoured: VACUUM = F is
 * refused (rvfit does not guess an air-to-vacuum convention for a survey
 * that never used air), HELIO = F shifts the wavelengths by HELIO_RV
 * (lamost_wave.c). */
#include <math.h>
#include <string.h>

#include "lamost_internal.h"

/* Logical keyword: 1, 0, or -1 when absent or not logical. */
static int lamost_key_bool(fitsfile *fp, const char *key)
{
    int v = 0, st = 0;
    if (rvfit_fits_read_key(fp, TLOGICAL, key, &v, &st)) {
        fits_clear_errmsg();
        return -1;
    }
    return v != 0;
}

void lamost_key_str(fitsfile *fp, const char *key, char *out, size_t size)
{
    char buf[FLEN_VALUE] = "";
    int st = 0;
    out[0] = '\0';
    if (fits_read_key(fp, TSTRING, key, buf, NULL, &st)) {
        fits_clear_errmsg();
        return;
    }
    size_t n = strnlen(buf, size - 1); /* longer: truncated */
    while (n && buf[n - 1] == ' ')
        n--;
    memcpy(out, buf, n);
    out[n] = '\0';
}

static int lamost_frame(fitsfile *fp, const char *path, lamost_meta *m,
                        rvfit_err *err)
{
    if (lamost_key_bool(fp, "VACUUM") == 0)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU PRIMARY: VACUUM"
                             " = F (air wavelengths); rvfit fits vacuum "
                             "wavelengths and LAMOST releases are in "
                             "vacuum: convert the file first", path);
    m->helio_rv = rvfit_fits_key_double(fp, "HELIO_RV");
    m->helio_done = lamost_key_bool(fp, "HELIO") != 0;
    if (!m->helio_done && !(fabs(m->helio_rv) < 1000.0))
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU PRIMARY: HELIO "
                             "= F (no heliocentric correction applied) but "
                             "no usable HELIO_RV to apply", path);
    return RVFIT_OK;
}

int lamost_read_meta(fitsfile *fp, const char *path, lamost_meta *m,
                     rvfit_err *err)
{
    static const char *const snr[5] = {"SNRU", "SNRG", "SNRR", "SNRI",
                                       "SNRZ"};
    int st = 0, type = 0;
    memset(m, 0, sizeof *m);
    if (fits_movabs_hdu(fp, 1, &type, &st))
        return rvfit_fits_error(err, st, path, "PRIMARY", "moving to HDU");
    int rc = lamost_read_ids(fp, path, m, err);
    if (!rc)
        rc = lamost_frame(fp, path, m, err);
    if (rc)
        return rc;
    m->ra = rvfit_fits_key_double(fp, "RA");
    m->dec = rvfit_fits_key_double(fp, "DEC");
    lamost_key_str(fp, "CLASS", m->cls, sizeof m->cls);
    lamost_key_str(fp, "SUBCLASS", m->subcls, sizeof m->subcls);
    m->z = rvfit_fits_key_double(fp, "Z");
    m->z_err = rvfit_fits_key_double(fp, "Z_ERR");
    for (int i = 0; i < 5; i++)
        m->snr[i] = rvfit_fits_key_double(fp, snr[i]);
    m->coeff0 = rvfit_fits_key_double(fp, "COEFF0");
    m->coeff1 = rvfit_fits_key_double(fp, "COEFF1");
    m->mjd = rvfit_fits_key_double(fp, "MJD");
    return RVFIT_OK;
}
