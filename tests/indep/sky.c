/* Night-sky spectrum: a smooth continuum plus emission lines (Hg street
 * lamps, [O I] airglow, Na, and OH Meinel bands whose lines sit at fixed
 * pseudo-random positions inside the real band ranges).  Only its photon
 * noise and small subtraction residuals reach the data. */
#include "instrument.h"

#include <math.h>

typedef struct { double lam, flux; } sky_line; /* A, 1e-17 erg/s/cm^2 */

/* An unresolved line seen through each pixel's kernel (in a log arm the
 * kernel is per unit ln lambda: per Angstrom it is divided by lambda). */
static void add_line(const ind_arm *a, const ind_fibre *fib, double lam,
                     double flux, double *out)
{
    double x = a->logpix ? log(lam) : lam;
    for (size_t i = 0; i < a->n; i++) {
        double u = a->lo + a->step * (double)i - x;
        if (fabs(u) > a->reach * a->step)
            continue;
        double s, h3, h4, k;
        ind_arm_lsf(a, i, fib, &s, &h3, &h4);
        k = ind_pixel_kernel(u, s, h3, h4, a->step);
        if (a->logpix)
            k /= ind_arm_lam(a, i);
        out[i] += flux * k;
    }
}

void ind_sky_pixels(const ind_arm *a, const ind_fibre *fib, double *cont,
                    double *lines)
{
    static const sky_line fixed[] = {
        {4359.56, 8.0}, {5462.27, 10.0}, {5578.89, 120.0}, {5891.58, 15.0},
        {5897.56, 10.0}, {6302.05, 50.0}, {6365.54, 16.0}};
    static const struct { double lo, hi; int n; double fmax; } oh[] = {
        {6250, 6600, 20, 20}, {6820, 7020, 25, 60}, {7230, 7420, 25, 80},
        {7740, 8080, 35, 120}, {8280, 8550, 30, 150}, {8760, 9060, 35, 200},
        {9300, 9800, 40, 250}};
    for (size_t i = 0; i < a->n; i++) {
        cont[i] = 1.2 * pow(ind_arm_lam(a, i) / 5000.0, 0.7);
        lines[i] = 0.0;
    }
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        add_line(a, fib, fixed[k].lam, fixed[k].flux, lines);
    ind_rng r;
    ind_rng_seed(&r, 0x534b59ULL /* "SKY" */, 0, 0);
    for (size_t b = 0; b < sizeof oh / sizeof oh[0]; b++)
        for (int k = 0; k < oh[b].n; k++) {
            double lam = oh[b].lo + (oh[b].hi - oh[b].lo) * ind_rng_uniform(&r);
            double f = oh[b].fmax * pow(30.0, -ind_rng_uniform(&r));
            add_line(a, fib, lam, f, lines);
        }
}
