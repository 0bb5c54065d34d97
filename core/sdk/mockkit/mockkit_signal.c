/* mockkit_signal.c — the per-star numerics of mock writers: the tabulated
 * normal CDF, the spreading of a fine sample over pixels through a
 * Gaussian LSF, the flux scale and Gaussian noise at a median S/N.  The
 * operation order is kept as the instruments had it, so that their mock
 * files did not change when this code moved here. */
#include <math.h>
#include <stdlib.h>

#include "rvfit/mockkit.h"

#define PHI_Z 9.0
#define PHI_N 128

struct rvfit_phi_table {
    size_t n;
    double *cdf; /* Phi at z_k = -Z + k/N */
    double *pdf; /* phi at z_k            */
};

rvfit_phi_table *rvfit_phi_new(void)
{
    rvfit_phi_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n = (size_t)(2.0 * PHI_Z * PHI_N) + 1;
    t->cdf = malloc(t->n * sizeof *t->cdf);
    t->pdf = malloc(t->n * sizeof *t->pdf);
    if (!t->cdf || !t->pdf) {
        rvfit_phi_free(t);
        return NULL;
    }
    for (size_t k = 0; k < t->n; k++) {
        double z = -PHI_Z + (double)k / PHI_N;
        t->cdf[k] = 0.5 * erfc(-z / sqrt(2.0));
        t->pdf[k] = exp(-0.5 * z * z) * 0.3989422804014327; /* 1/sqrt(2pi) */
    }
    return t;
}

void rvfit_phi_free(rvfit_phi_table *t)
{
    if (!t)
        return;
    free(t->cdf);
    free(t->pdf);
    free(t);
}

static inline double phi_in(const rvfit_phi_table *t, double z)
{
    double x = (z + PHI_Z) * PHI_N;
    if (x <= 0.0)
        return 0.0;
    if (x >= (double)(t->n - 1))
        return 1.0;
    size_t k = (size_t)x;
    double u = x - (double)k, hs = 1.0 / PHI_N;
    double u2 = u * u, u3 = u2 * u;
    return (2 * u3 - 3 * u2 + 1) * t->cdf[k] +
           (u3 - 2 * u2 + u) * hs * t->pdf[k] +
           (-2 * u3 + 3 * u2) * t->cdf[k + 1] +
           (u3 - u2) * hs * t->pdf[k + 1];
}

double rvfit_phi(const rvfit_phi_table *t, double z)
{
    return phi_in(t, z);
}

/* out[lo+m] += w (Phi(z[m+1]) - Phi(z[m])), m < n: the independent table
 * lookups first, then the dependent sums. */
static void spread_z(const rvfit_phi_table *t, const double *z, long lo,
                     long n, double w, double *out)
{
    double cdf[RVFIT_MOCK_SPAN + 1];
    for (long m = 0; m <= n; m++)
        cdf[m] = phi_in(t, z[m]);
    for (long m = 0; m < n; m++)
        out[lo + m] += w * (cdf[m + 1] - cdf[m]);
}

void rvfit_mock_spread(const rvfit_phi_table *t, const double *edge, long lo,
                       long n, double lam, double isig, double w, double *out)
{
    double z[RVFIT_MOCK_SPAN + 1];
    if (n > RVFIT_MOCK_SPAN)
        n = RVFIT_MOCK_SPAN;
    for (long m = 0; m <= n; m++)
        z[m] = (edge[lo + m] - lam) * isig;
    spread_z(t, z, lo, n, w, out);
}

void rvfit_mock_spread_uniform(const rvfit_phi_table *t, double e0,
                               double de, long lo, long n, double lam,
                               double isig, double w, double *out)
{
    double z[RVFIT_MOCK_SPAN + 1];
    if (n > RVFIT_MOCK_SPAN)
        n = RVFIT_MOCK_SPAN;
    double z0 = (e0 + de * (double)lo - lam) * isig, dz = de * isig;
    for (long m = 0; m <= n; m++)
        z[m] = z0 + dz * (double)m;
    spread_z(t, z, lo, n, w, out);
}

double rvfit_mock_scale(double *work, size_t n, double level)
{
    double med = rvfit_median(work, n);
    return med > 0.0 && isfinite(med) ? level / med : 1.0;
}

double rvfit_mock_noise(const double *F, const double *shape, size_t n,
                        double snr, rvfit_rng *rng, double *work,
                        float *flux, float *ivar)
{
    for (size_t i = 0; i < n; i++)
        work[i] = F[i] / shape[i];
    double c = rvfit_median(work, n) / snr;
    for (size_t i = 0; i < n; i++) {
        double sig = c * shape[i];
        flux[i] = (float)(F[i] + sig * rvfit_rng_normal(rng));
        ivar[i] = (float)(1.0 / (sig * sig));
    }
    return c;
}
