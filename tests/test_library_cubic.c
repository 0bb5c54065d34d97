/* test_library_cubic.c — the interpolation options: cubic along chosen
 * axes (rvfit_library_set_cubic, rvfit_library_stencil), exact for a flux
 * quadratic in each parameter on unevenly spaced axes, end cells included,
 * where linear interpolation is not; a single corner on a node; weights
 * summing to 1; slopes continuous across a node (C1) where linear ones
 * jump; the documented fallbacks around holes; the configuration errors;
 * and interpolation in ln flux (rvfit_library_set_log_flux): nodes exact,
 * geometric means between them, non-positive flux refused by name.
 * The library is built in memory. */
#include <math.h>
#include <string.h>

#include "rvfit/library.h"
#include "rvfit/library_io.h"
#include "testutil.h"

#define NPIX 3
#define NA 5
#define NB 4
static const double nodes_a[NA] = {3.55, 3.6, 3.68, 3.71, 3.8}; /* uneven */
static const double nodes_b[NB] = {0.0, 1.0, 2.5, 3.0};

/* Quadratic in each of a and b (a*b and a^2 b^2 terms too). */
static double quad(double a, double b, int j)
{
    double x = a - 3.65;
    return 1.0 + 2.0 * x + 30.0 * x * x - 0.3 * b * b + 0.8 * x * b +
           5.0 * x * x * b * b + 0.1 * j;
}

/* Positive everywhere on the grid: for ln flux. */
static double pos(double a, double b, int j)
{
    return 3.0 + quad(a, b, j);
}

/* Smooth but not polynomial: for the slope-continuity check. */
static double wavy(double a, double b, int j)
{
    return 2.0 + sin(40.0 * a) + cos(1.3 * b) + 0.1 * j;
}

static void build(rvfit_library *lib, float *flux, uint8_t *exists,
                  double (*f)(double, double, int))
{
    memset(lib, 0, sizeof *lib);
    lib->nparam = 2;
    strcpy(lib->axis[0].name, "TEFF");
    lib->axis[0].scale = RVFIT_SCALE_LOG10;
    lib->axis[0].nnode = NA;
    memcpy(lib->axis[0].node, nodes_a, sizeof nodes_a);
    strcpy(lib->axis[1].name, "FEH");
    lib->axis[1].nnode = NB;
    memcpy(lib->axis[1].node, nodes_b, sizeof nodes_b);
    lib->nmodel = NA * NB;
    lib->exists = exists;
    lib->narm = 1;
    strcpy(lib->arm[0].name, "B");
    lib->arm[0].npix = NPIX;
    lib->arm[0].flux = flux;
    lib->arm[0].lnl0 = 8.0;
    lib->arm[0].dlnl = 1e-4;
    for (int i = 0; i < NA; i++)
        for (int k = 0; k < NB; k++) {
            int m = i * NB + k;
            exists[m] = 1;
            for (int j = 0; j < NPIX; j++)
                flux[m * NPIX + j] = (float)f(nodes_a[i], nodes_b[k], j);
        }
}

/* Largest |interpolated - quad| over a lattice of points in every cell. */
static double max_err(const rvfit_library *lib)
{
    double worst = 0.0, out[NPIX];
    for (int u = 0; u <= 40; u++)
        for (int v = 0; v <= 30; v++) {
            double th[2] = {nodes_a[0] + (nodes_a[NA - 1] - nodes_a[0]) *
                                             u / 40.0,
                            nodes_b[0] + (nodes_b[NB - 1] - nodes_b[0]) *
                                             v / 30.0};
            rvfit_library_interp(lib, 0, th, out);
            for (int j = 0; j < NPIX; j++)
                worst = fmax(worst, fabs(out[j] - quad(th[0], th[1], j)));
        }
    return worst;
}

static double at(const rvfit_library *lib, double a, double b)
{
    double th[2] = {a, b}, out[NPIX];
    rvfit_library_interp(lib, 0, th, out);
    return out[0];
}

int main(void)
{
    rvfit_library lib;
    float flux[NA * NB * NPIX];
    uint8_t exists[NA * NB];
    rvfit_err err;
    size_t corner[RVFIT_MAX_CORNERS];
    double w[RVFIT_MAX_CORNERS], pen;

    /* exactness: cubic reproduces the quadratic, linear does not */
    build(&lib, flux, exists, quad);
    double e_lin = max_err(&lib);
    CHECK(rvfit_library_set_cubic(&lib, "teff, FEH", &err) == RVFIT_OK);
    CHECK(lib.axis[0].interp == RVFIT_INTERP_CUBIC &&
          lib.axis[1].interp == RVFIT_INTERP_CUBIC);
    double e_cub = max_err(&lib);
    printf("quadratic flux: max error linear %.3g, cubic %.3g\n", e_lin,
           e_cub);
    CHECK_MSG(e_cub < 2e-5, "cubic error %g", e_cub);
    CHECK_MSG(e_lin > 1e-2, "linear error %g", e_lin);

    /* an interior cell uses 4 x 4 nodes, an end cell 3, a node 1 */
    double ti[2] = {3.64, 1.7}, te[2] = {3.57, 2.8}, tn[2] = {3.68, 1.0};
    int nc = rvfit_library_stencil(&lib, ti, corner, w, &pen);
    CHECK(nc == 16 && pen == 0.0);
    double s = 0.0;
    for (int k = 0; k < nc; k++)
        s += w[k];
    CHECK_NEAR(s, 1.0, 1e-12);
    CHECK(rvfit_library_stencil(&lib, te, corner, w, &pen) == 9);
    nc = rvfit_library_stencil(&lib, tn, corner, w, &pen);
    CHECK(nc == 1 && w[0] == 1.0 && corner[0] == 2 * NB + 1);

    /* slopes across the interior node a = 3.68: continuous when cubic */
    build(&lib, flux, exists, wavy);
    const double h = 1e-7, a0 = nodes_a[2], b0 = 1.7;
    double jump_lin = fabs((at(&lib, a0 + h, b0) - at(&lib, a0, b0)) -
                           (at(&lib, a0, b0) - at(&lib, a0 - h, b0))) / h;
    rvfit_library_set_cubic(&lib, "TEFF,FEH", &err);
    double jump_cub = fabs((at(&lib, a0 + h, b0) - at(&lib, a0, b0)) -
                           (at(&lib, a0, b0) - at(&lib, a0 - h, b0))) / h;
    printf("slope jump at a node: linear %.3g, cubic %.3g\n", jump_lin,
           jump_cub);
    CHECK(jump_lin > 1.0);
    CHECK_MSG(jump_cub < 1e-3, "cubic slope jump %g", jump_cub);

    /* holes: node (a0, b1) missing.  A point in cell a[1..2] needs it only
     * through the TEFF cubic share, so TEFF falls back to linear and FEH
     * stays cubic (2 x 4 corners); a point whose linear cell holds it gets
     * the renormalised linear stencil without it. */
    build(&lib, flux, exists, quad);
    rvfit_library_set_cubic(&lib, "TEFF,FEH", &err);
    exists[0 * NB + 1] = 0;
    double th1[2] = {3.64, 1.7};
    nc = rvfit_library_stencil(&lib, th1, corner, w, &pen);
    CHECK_MSG(nc == 8, "fallback: %d corners", nc);
    for (int k = 0; k < nc; k++)
        CHECK(corner[k] != 1);
    double th2[2] = {3.57, 0.5};
    nc = rvfit_library_stencil(&lib, th2, corner, w, &pen);
    CHECK(nc == 3);
    s = 0.0;
    for (int k = 0; k < nc; k++) {
        CHECK(corner[k] != 1 && w[k] > 0.0);
        s += w[k];
    }
    CHECK_NEAR(s, 1.0, 1e-12);

    /* configuration errors, library unchanged */
    build(&lib, flux, exists, quad);
    CHECK(rvfit_library_set_cubic(&lib, "TEFF, LOGG", &err) ==
          RVFIT_ERR_CONFIG);
    CHECK(tu_contains(err.msg, "LOGG") && tu_contains(err.msg, "FEH"));
    CHECK(lib.axis[0].interp == RVFIT_INTERP_LINEAR);
    CHECK(rvfit_library_set_cubic(&lib, "", &err) == RVFIT_OK);
    lib.nparam = 5;
    for (int p = 2; p < 5; p++) {
        snprintf(lib.axis[p].name, sizeof lib.axis[p].name, "X%d", p);
        lib.axis[p].nnode = 3;
    }
    CHECK(rvfit_library_set_cubic(&lib, "TEFF FEH X2 X3 X4", &err) ==
          RVFIT_ERR_CONFIG);
    CHECK(tu_contains(err.msg, "1024"));
    CHECK(lib.axis[0].interp == RVFIT_INTERP_LINEAR);
    CHECK(rvfit_library_set_cubic(&lib, "TEFF FEH X2", &err) ==
          RVFIT_OK);

    /* ln flux: exact on nodes, geometric mean halfway (linear axes) */
    build(&lib, flux, exists, pos);
    double tmid[2] = {0.5 * (nodes_a[1] + nodes_a[2]), nodes_b[2]}, o[NPIX];
    double f1 = flux[(1 * NB + 2) * NPIX], f2 = flux[(2 * NB + 2) * NPIX];
    CHECK(rvfit_library_set_log_flux(&lib, &err) == RVFIT_OK);
    CHECK(lib.log_flux == 1);
    CHECK(rvfit_library_set_log_flux(&lib, &err) == RVFIT_OK); /* no-op */
    rvfit_library_interp(&lib, 0, tmid, o);
    CHECK_NEAR(o[0], sqrt(f1 * f2), 1e-6 * o[0]);
    rvfit_library_interp(&lib, 0, tn, o);
    CHECK_NEAR(o[1], pos(tn[0], tn[1], 1), 1e-6);
    build(&lib, flux, exists, pos);
    flux[(3 * NB + 1) * NPIX + 2] = -0.5f;
    CHECK(rvfit_library_set_log_flux(&lib, &err) == RVFIT_ERR_FORMAT);
    CHECK(tu_contains(err.msg, "arm B, model 13, pixel 2"));
    CHECK(lib.log_flux == 0 && flux[0] == (float)pos(nodes_a[0], 0, 0));
    exists[3 * NB + 1] = 0; /* a hole's flux is never used */
    CHECK(rvfit_library_set_log_flux(&lib, &err) == RVFIT_OK);
    return tu_finish("test_library_cubic");
}
