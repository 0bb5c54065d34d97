/* physics_tables.c — the per-pixel tables every backend precomputes when a
 * batch is loaded (rvfit_pixel_tables in rvfit/physics.h): template pixel
 * coordinates of the observed pixels and the continuum basis on them, and
 * the pixel range where each basis row lives (rvfit_row_support).  One
 * implementation, so that the cpu reference and the GPU backends start
 * from bit-identical tables. */
#include <math.h>

#include "rvfit/physics.h"

/* The continuum coordinate x of pixel i: the spectrum's own extent
 * [wave[0], wave[nown-1]] mapped to [-1, 1]. */
static double pixel_x(size_t n, size_t nown, const double *wave, size_t i)
{
    double lf = wave[0], ll = wave[(nown >= 1 && nown <= n ? nown : n) - 1];
    return ll > lf ? (2.0 * wave[i] - (lf + ll)) / (ll - lf) : 0.0;
}

void rvfit_pixel_tables(int kind, int npoly, double lnl0, double dlnl,
                        size_t n, size_t nown, const double *wave, size_t ld,
                        double *u, double *B)
{
    double b[RVFIT_MAX_POLY];
    for (size_t i = 0; i < n; i++) {
        u[i] = (log(wave[i]) - lnl0) / dlnl;
        if (npoly < 1)
            continue;
        rvfit_basis(kind, npoly, pixel_x(n, nown, wave, i), b);
        for (int k = 0; k < npoly; k++)
            B[(size_t)k * ld + i] = b[k];
    }
}

void rvfit_pixel_cells(int npoly, size_t n, size_t nown, const double *wave,
                       int *cell, double *y)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = 0.0;
        cell[i] = rvfit_bspline_cell(npoly, pixel_x(n, nown, wave, i), &y[i]);
    }
}

void rvfit_row_support(const double *row, size_t n, size_t *lo, size_t *hi)
{
    size_t l = 0, h = n;
    while (l < h && row[l] == 0.0)
        l++;
    while (h > l && row[h - 1] == 0.0)
        h--;
    *lo = l, *hi = h;
}
