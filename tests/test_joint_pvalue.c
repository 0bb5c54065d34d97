/* test_joint_pvalue.c — the constancy statistics of joint fits
 * (rvfit_chi2_pvalue, rvfit_vrad_constancy) against values that owe
 * nothing to them: the critical values of the chi^2 distribution from
 * the standard tables (Abramowitz & Stegun table 26.8: the chi^2 that
 * leaves 5 %, 1 % and 0.1 % in the upper tail), the closed forms for one
 * and two degrees of freedom (erfc(sqrt(x/2)), exp(-x/2)), and a small
 * set of velocities worked by hand. */
#include <math.h>
#include <string.h>

#include "rvfit/joint.h"
#include "testutil.h"

int main(void)
{
    static const struct { int dof; double chi2, p; } tab[] = {
        {1, 3.841459, 0.05}, {1, 6.634897, 0.01}, {1, 10.82757, 0.001},
        {2, 5.991465, 0.05}, {3, 7.814728, 0.05}, {3, 16.26624, 0.001},
        {4, 9.487729, 0.05}, {5, 11.07050, 0.05}, {5, 20.51501, 0.001},
        {7, 14.06714, 0.05}, {7, 24.32189, 0.001}, {10, 18.30704, 0.05},
        {10, 23.20925, 0.01}, {10, 29.58830, 0.001}, {20, 31.41043, 0.05},
        {30, 59.70306, 0.001}, {100, 124.3421, 0.05},
    };
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
        double p = rvfit_chi2_pvalue(tab[i].chi2, tab[i].dof);
        CHECK_MSG(fabs(p / tab[i].p - 1) < 2e-5, "dof %d, chi2 %g: p %.8g, "
                  "table %g", tab[i].dof, tab[i].chi2, p, tab[i].p);
    }
    for (double x = 0.01; x < 200; x *= 1.7) {
        CHECK_NEAR(rvfit_chi2_pvalue(x, 1) / erfc(sqrt(x / 2)), 1, 1e-12);
        CHECK_NEAR(rvfit_chi2_pvalue(x, 2) / exp(-x / 2), 1, 1e-12);
    }
    /* a far tail keeps its relative precision; large chi^2 and dof */
    CHECK_NEAR(rvfit_chi2_pvalue(80, 2) / exp(-40.0), 1, 1e-12);
    double big = rvfit_chi2_pvalue(2500, 2000);
    CHECK_MSG(big > 0 && big < 1e-9, "chi2 2500, dof 2000: p %g", big);
    CHECK_NEAR(rvfit_chi2_pvalue(2000, 2001), 0.5, 0.01); /* ~ the median */
    CHECK(rvfit_chi2_pvalue(0, 3) == 1.0);
    CHECK(isnan(rvfit_chi2_pvalue(1, 0)) && isnan(rvfit_chi2_pvalue(-1, 2)) &&
          isnan(rvfit_chi2_pvalue(NAN, 2)));
    CHECK(rvfit_chi2_pvalue(INFINITY, 4) == 0.0);

    /* v = 1, 3 (errors 1): mean 2, chi^2 2, p erfc(1), scatter sqrt 2 */
    double c, p, s;
    int n;
    const double v2[] = {1, 3}, e2[] = {1, 1};
    rvfit_vrad_constancy(v2, e2, 2, &c, &p, &s, &n);
    CHECK(n == 2);
    CHECK_NEAR(c, 2, 1e-12);
    CHECK_NEAR(p, erfc(1.0), 1e-12);
    CHECK_NEAR(s, sqrt(2.0), 1e-12);
    /* weights: v = 0 +- 1, 10 +- 3, and an unusable entry (NaN error):
     * weighted mean (10/9) / (1 + 1/9) = 1, chi^2 1 + 81/9 = 10 (dof 1),
     * scatter of 0 and 10 */
    const double v3[] = {0, 10, 5}, e3[] = {1, 3, NAN};
    rvfit_vrad_constancy(v3, e3, 3, &c, &p, &s, &n);
    CHECK(n == 2);
    CHECK_NEAR(c, 10, 1e-12);
    CHECK_NEAR(p, erfc(sqrt(5.0)), 1e-15);
    CHECK_NEAR(s, sqrt(50.0), 1e-12);
    /* fewer than two: nothing to say */
    rvfit_vrad_constancy(v3, e3, 1, &c, &p, &s, &n);
    CHECK(n == 1 && isnan(c) && isnan(p) && isnan(s));
    return tu_finish("test_joint_pvalue");
}
