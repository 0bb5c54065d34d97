/* desi_lsf.c — the mock instrument: a Gaussian LSF whose width varies
 * along each camera, its pixel-integrated band matrix (DESI layout), and
 * the LSF convolution + pixel integration of a fine truth spectrum (the
 * normal CDF and the spreading are the SDK's, rvfit/mockkit.h).
 * Both use the same light-spreading picture: light at wavelength l lands
 * in pixel i with probability Phi((e_i+1 - l)/s(l)) - Phi((e_i - l)/s(l)),
 * e_i the pixel edges, so the matrix and the fluxes agree. */
#include <math.h>
#include <stdlib.h>

#include "desi_internal.h"

double desi_lsf_sigma(const desi_mock_arm *A, double f, double lam)
{
    double span = A->dlam * (double)(A->npix - 1);
    double u = (lam - A->lam0) / span;
    return f * (A->sig0 + (A->sig1 - A->sig0) * u);
}

void desi_res_matrix(const rvfit_phi_table *t, const desi_mock_arm *A,
                     double f, float *res)
{
    const int h = DESI_MOCK_NDIAG / 2;
    double col[DESI_MOCK_NDIAG];
    for (size_t j = 0; j < A->npix; j++) {
        double lam = A->lam0 + A->dlam * (double)j;
        double s = desi_lsf_sigma(A, f, lam), sum = 0.0;
        for (int d = -h; d <= h; d++) {
            /* row i = j + d, edges at lam + (d -+ 1/2) dlam */
            col[d + h] = rvfit_phi(t, (d + 0.5) * A->dlam / s) -
                         rvfit_phi(t, (d - 0.5) * A->dlam / s);
            sum += col[d + h];
        }
        for (int k = 0; k < DESI_MOCK_NDIAG; k++) /* k = h - (j - i) */
            res[(size_t)k * A->npix + j] = (float)(col[k] / sum);
    }
}

void desi_pixelize(const rvfit_phi_table *t, const desi_mock_arm *A, double f,
                   double lnl0, double dlnl, size_t n, const double *fine,
                   double *out)
{
    const double e0 = A->lam0 - 0.5 * A->dlam; /* left edge of pixel 0 */
    const double inv = 1.0 / A->dlam;
    const long np = (long)A->npix;
    for (long i = 0; i < np; i++)
        out[i] = 0.0;
    const double step = exp(dlnl);
    double lam = 0.0;
    for (size_t k = 0; k < n; k++) {
        /* exact every 256 samples, a multiplication in between */
        lam = (k & 255) ? lam * step : exp(lnl0 + dlnl * (double)k);
        double s = desi_lsf_sigma(A, f, lam), w = 6.0 * s;
        double xl = (lam - w - e0) * inv, xh = (lam + w - e0) * inv;
        long lo = (long)xl - (xl < 0.0), hi = (long)xh + 1;
        if (hi < 0 || lo > np)
            continue;
        if (lo < 0)
            lo = 0;
        if (hi > np)
            hi = np;
        /* trapezoid on the uniform ln-lambda grid: dlambda = lambda dlnl;
         * the kernel vanishes at the fine grid's ends */
        double weight = fine[k] * lam * dlnl * inv;
        rvfit_mock_spread_uniform(t, e0, A->dlam, lo, hi - lo, lam, 1.0 / s,
                                  weight, out);
    }
}
