/* lamost_wave.c — the wavelengths of one LRS spectrum (and the checks and
 * heliocentric shift the MRS reader shares).
 *
 * The stored wavelengths are float32 (7 digits: 0.001 A at 9000 A, 0.04
 * km/s; float64 in DR2 files), but the pixels are on the exact grid 10^(COEFF0 + i*COEFF1);
 * when the stored row follows that grid to SNAP_TOL the grid is used, so
 * that a spectrum's pixels are exactly log-linear, otherwise the row as
 * stored (increasing and within 100 A - 10 um, or the file is refused).
 * Then, for a file whose header says the heliocentric correction was not
 * applied (HELIO = F), the wavelengths move to the heliocentric frame:
 * v_helio = v_obs + HELIO_RV, so lambda_helio = lambda_obs (1 +
 * HELIO_RV/c). */
#include <math.h>

#include "lamost_internal.h"

/* 1e-6 dex = 0.7 km/s: far above float32 rounding (5e-8 dex), far below a
 * pixel (1e-4 dex). */
#define LAMOST_SNAP_TOL 1e-6
/* Wavelengths outside 100 A - 10 um are not an LRS spectrum (3690-9100 A)
 * in Angstrom; a float64 row (DR2 files) could otherwise hold values whose
 * float32 LSF overflows. */
#define LAMOST_WAVE_MIN 100.0
#define LAMOST_WAVE_MAX 1e5

int lamost_wave_ok(const char *path, const char *hdu, const double *w,
                   size_t n, rvfit_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (!(w[i] >= LAMOST_WAVE_MIN && w[i] <= LAMOST_WAVE_MAX) ||
            (i && w[i] <= w[i - 1]))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: %s%s%s"
                                 "wavelength[%zu] = %g is not increasing and "
                                 "within %g-%g A", path, hdu ? "HDU " : "",
                                 hdu ? hdu : "", hdu ? ": " : "", i, w[i],
                                 LAMOST_WAVE_MIN, LAMOST_WAVE_MAX);
    return RVFIT_OK;
}

void lamost_wave_helio(const lamost_meta *m, double *w, size_t n)
{
    if (m->helio_done)
        return;
    double f = 1.0 + m->helio_rv / LAMOST_C_KMS;
    for (size_t i = 0; i < n; i++)
        w[i] *= f;
}

/* 1 when the row is COEFF0 + (k0 + i) COEFF1 for some integer k0. */
static int lamost_on_grid(const lamost_meta *m, const lamost_pix *p,
                          double *base)
{
    if (!isfinite(m->coeff0) || !(m->coeff1 > 0.0 && m->coeff1 < 0.1))
        return 0;
    double k0 = nearbyint((log10(p->wave[0]) - m->coeff0) / m->coeff1);
    *base = m->coeff0 + k0 * m->coeff1;
    for (size_t i = 0; i < p->npix; i++)
        if (fabs(log10(p->wave[i]) - (*base + m->coeff1 * (double)i)) >
            LAMOST_SNAP_TOL)
            return 0;
    return 1;
}

int lamost_wave(const lamost_meta *m, const char *path, lamost_pix *p,
                rvfit_err *err)
{
    int rc = lamost_wave_ok(path, NULL, p->wave, p->npix, err);
    if (rc)
        return rc;
    double base = 0.0;
    if (lamost_on_grid(m, p, &base))
        for (size_t i = 0; i < p->npix; i++)
            p->wave[i] = pow(10.0, base + m->coeff1 * (double)i);
    lamost_wave_helio(m, p->wave, p->npix);
    return RVFIT_OK;
}
