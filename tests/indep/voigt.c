/* Voigt function by Humlicek's W4 rational approximation of the Faddeeva
 * function w(z) (J. Humlicek 1982, JQSRT 27, 437): relative accuracy ~1e-4
 * everywhere in the upper half plane, four regions in |x| + y. */
#include "indep.h"

#include <complex.h>
#include <math.h>

static double complex humlicek_w4(double x, double y)
{
    double complex t = y - I * x;
    double s = fabs(x) + y;
    if (s >= 15.0)
        return t * 0.5641896 / (0.5 + t * t);
    if (s >= 5.5) {
        double complex u = t * t;
        return t * (1.410474 + u * 0.5641896) / (0.75 + u * (3.0 + u));
    }
    if (y >= 0.195 * fabs(x) - 0.176) {
        double complex num = 16.4955 + t * (20.20933 + t * (11.96482 +
                             t * (3.778987 + t * 0.5642236)));
        double complex den = 16.4955 + t * (38.82363 + t * (39.27121 +
                             t * (21.69274 + t * (6.699398 + t))));
        return num / den;
    }
    double complex u = t * t;
    double complex num = t * (36183.31 - u * (3321.9905 - u * (1540.787 -
                         u * (219.0313 - u * (35.76683 - u * (1.320522 -
                         u * 0.56419))))));
    double complex den = 32066.6 - u * (24322.84 - u * (9022.228 -
                         u * (2186.181 - u * (364.2191 - u * (61.57037 -
                         u * (1.841439 - u))))));
    return cexp(u) - num / den;
}

double ind_voigt_h(double a, double v)
{
    return creal(humlicek_w4(v, a));
}

double ind_voigt_profile(double dl, double dld, double gl)
{
    return ind_voigt_h(gl / dld, dl / dld) / (IND_SQRTPI * dld);
}
