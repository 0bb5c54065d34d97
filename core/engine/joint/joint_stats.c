/* joint_stats.c — is the velocity constant? The chi^2 of an object's
 * exposure velocities about their weighted mean, and its p-value.
 *
 * For integer degrees of freedom the chi^2 upper tail has closed forms
 * (Abramowitz & Stegun 26.4.4, 26.4.5): with x = chi^2 / 2,
 *   even dof:  Q = sum_{j < dof/2} e^-x x^j / j!
 *   odd dof:   Q = erfc(sqrt x) + sum_{1 <= j <= (dof-1)/2}
 *                  e^-x x^(j - 1/2) / Gamma(j + 1/2).
 * Every term is positive (no cancellation, so small p-values keep their
 * relative precision) and is formed in logarithms, so large chi^2 and dof
 * neither overflow nor lose the sum. */
#include <math.h>

#include "rvfit/joint.h"

double rvfit_chi2_pvalue(double chi2, int dof)
{
    if (dof < 1 || !(chi2 >= 0))
        return NAN;
    if (isinf(chi2))
        return 0.0;
    double x = 0.5 * chi2, lx = x > 0 ? log(x) : -INFINITY, q;
    if (dof % 2 == 0) {
        q = exp(-x); /* j = 0 */
        for (int j = 1; j < dof / 2; j++)
            q += exp((double)j * lx - lgamma(j + 1.0) - x);
    } else {
        q = erfc(sqrt(x));
        for (int j = 1; j <= (dof - 1) / 2 && x > 0; j++)
            q += exp((j - 0.5) * lx - lgamma(j + 0.5) - x);
    }
    return q > 1 ? 1.0 : q;
}

void rvfit_vrad_constancy(const double *v, const double *err, size_t n,
                          double *chisq, double *pvalue, double *scatter,
                          int *nused)
{
    double sw = 0, swv = 0, sv = 0;
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(v[i]) && isfinite(err[i]) && err[i] > 0))
            continue;
        double w = 1 / (err[i] * err[i]);
        sw += w, swv += w * v[i], sv += v[i];
        k++;
    }
    *nused = k;
    *chisq = *pvalue = *scatter = NAN;
    if (k < 2)
        return;
    double vbar = swv / sw, mean = sv / k, c = 0, ss = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(v[i]) && isfinite(err[i]) && err[i] > 0))
            continue;
        double d = (v[i] - vbar) / err[i];
        c += d * d;
        ss += (v[i] - mean) * (v[i] - mean);
    }
    *chisq = c;
    *pvalue = rvfit_chi2_pvalue(c, k - 1);
    *scatter = sqrt(ss / (k - 1));
}
