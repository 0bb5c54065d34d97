/* test_library_interp.c — regular-grid interpolation (rvfit/library.h):
 * exact at nodes, exact for a flux linear in theta, weights summing to 1,
 * hole renormalisation, out-of-grid penalty and clamping, all-hole cells,
 * axis scaling and arm lookup.  The library is built in memory. */
#include <math.h>
#include <string.h>

#include "rvfit/library.h"
#include "rvfit/library_io.h"
#include "testutil.h"

#define NPIX 5
static const double nodes_a[] = {3.5, 3.75, 4.25, 4.5}; /* uneven */
static const double nodes_b[] = {1.0, 2.0, 3.0};

/* Flux linear in theta; dyadic so that float storage is exact. */
static double lin(double a, double b, int j)
{
    return 1.0 + 0.5 * a + 0.25 * b + 0.125 * j;
}

static void build(rvfit_library *lib, float *flux, uint8_t *exists)
{
    memset(lib, 0, sizeof *lib);
    lib->nparam = 3;
    strcpy(lib->axis[0].name, "TEFF");
    lib->axis[0].scale = RVFIT_SCALE_LOG10;
    lib->axis[0].nnode = 4;
    memcpy(lib->axis[0].node, nodes_a, sizeof nodes_a);
    strcpy(lib->axis[1].name, "LOGG");
    lib->axis[1].nnode = 3;
    memcpy(lib->axis[1].node, nodes_b, sizeof nodes_b);
    strcpy(lib->axis[2].name, "ALPHAFE"); /* a single-node axis */
    lib->axis[2].nnode = 1;
    lib->axis[2].node[0] = 0.0;
    lib->nmodel = 12;
    lib->exists = exists;
    lib->narm = 2;
    strcpy(lib->arm[0].name, "B");
    strcpy(lib->arm[1].name, "R");
    for (int a = 0; a < 2; a++) {
        lib->arm[a].npix = NPIX;
        lib->arm[a].flux = flux;
        lib->arm[a].lnl0 = 8.0 + a;
        lib->arm[a].dlnl = 1e-4;
    }
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) {
            int m = i * 3 + k; /* row-major, last axis fastest */
            exists[m] = 1;
            for (int j = 0; j < NPIX; j++)
                flux[m * NPIX + j] = (float)lin(nodes_a[i], nodes_b[k], j);
        }
}

static double wsum(int nc, const double *w)
{
    double s = 0;
    for (int k = 0; k < nc; k++)
        s += w[k];
    return s;
}

int main(void)
{
    rvfit_library lib;
    float flux[12 * NPIX];
    uint8_t exists[12];
    build(&lib, flux, exists);
    size_t corner[RVFIT_MAX_CORNERS];
    double w[RVFIT_MAX_CORNERS], pen, out[NPIX];

    /* exact at a node: one corner, the right model index */
    double th[3] = {4.25, 2.0, 0.0};
    int nc = rvfit_library_stencil(&lib, th, corner, w, &pen);
    CHECK(nc == 1 && corner[0] == 2 * 3 + 1 && w[0] == 1.0 && pen == 0.0);
    CHECK(rvfit_library_interp(&lib, 1, th, out) == 0.0);
    for (int j = 0; j < NPIX; j++)
        CHECK(out[j] == lin(4.25, 2.0, j));

    /* linear flux reproduced exactly anywhere inside */
    for (int r = 0; r < 50; r++) {
        double t[3] = {3.5 + 0.02 * r, 1.0 + 0.0397 * r, 0.0};
        nc = rvfit_library_stencil(&lib, t, corner, w, &pen);
        CHECK(nc >= 1 && nc <= 4);
        CHECK_NEAR(wsum(nc, w), 1.0, 1e-15);
        CHECK(pen == 0.0);
        rvfit_library_interp(&lib, 0, t, out);
        for (int j = 0; j < NPIX; j++)
            CHECK_NEAR(out[j], lin(t[0], t[1], j), 1e-13);
    }

    /* a cell interior point: weights are the bilinear products */
    double tc[3] = {3.8, 1.25, 0.0}; /* fa = 0.1, fb = 0.25 */
    nc = rvfit_library_stencil(&lib, tc, corner, w, &pen);
    CHECK(nc == 4);
    double wa[4] = {0}; /* by model index 3,4,6,7 */
    for (int k = 0; k < nc; k++) {
        if (corner[k] == 3) wa[0] = w[k];
        if (corner[k] == 4) wa[1] = w[k];
        if (corner[k] == 6) wa[2] = w[k];
        if (corner[k] == 7) wa[3] = w[k];
    }
    CHECK_NEAR(wa[0], 0.9 * 0.75, 1e-14);
    CHECK_NEAR(wa[1], 0.9 * 0.25, 1e-14);
    CHECK_NEAR(wa[2], 0.1 * 0.75, 1e-14);
    CHECK_NEAR(wa[3], 0.1 * 0.25, 1e-14);

    /* hole at model 4: the rest renormalised by 1 - 0.225 */
    exists[4] = 0;
    nc = rvfit_library_stencil(&lib, tc, corner, w, &pen);
    CHECK(nc == 3 && pen == 0.0);
    CHECK_NEAR(wsum(nc, w), 1.0, 1e-15);
    for (int k = 0; k < nc; k++) {
        CHECK(corner[k] != 4);
        if (corner[k] == 3)
            CHECK_NEAR(w[k], 0.675 / 0.775, 1e-14);
        if (corner[k] == 7)
            CHECK_NEAR(w[k], 0.025 / 0.775, 1e-14);
    }
    /* all four corners holes: flat template and the hole penalty */
    exists[3] = exists[6] = exists[7] = 0;
    nc = rvfit_library_stencil(&lib, tc, corner, w, &pen);
    CHECK(nc == 0 && pen == RVFIT_PENALTY_HOLE);
    CHECK(rvfit_library_interp(&lib, 0, tc, out) == RVFIT_PENALTY_HOLE);
    for (int j = 0; j < NPIX; j++)
        CHECK(out[j] == 1.0);
    memset(exists, 1, sizeof exists);

    /* outside: clamped template, penalty 1e4 sum (d/h)^2 */
    double h_a = (4.5 - 3.5) / 3, h_b = 1.0;
    double to[3] = {4.6, 0.7, 0.0}, tin[3] = {4.5, 1.0, 0.0}, oi[NPIX];
    pen = rvfit_library_interp(&lib, 0, to, out);
    rvfit_library_interp(&lib, 0, tin, oi);
    CHECK_NEAR(pen, RVFIT_PENALTY_SCALE * (pow(0.1 / h_a, 2) +
                                           pow(0.3 / h_b, 2)), 1e-8);
    for (int j = 0; j < NPIX; j++)
        CHECK(out[j] == oi[j]);
    /* quadratic: doubling the distance quadruples the penalty */
    double to2[3] = {4.7, 1.5, 0.0}, p1, p2;
    rvfit_library_stencil(&lib, to2, corner, w, &p2);
    to2[0] = 4.6;
    rvfit_library_stencil(&lib, to2, corner, w, &p1);
    CHECK_NEAR(p2 / p1, 4.0, 1e-9);
    /* single-node axis: weight 1 on its node, h = 1 */
    double ts[3] = {4.0, 2.5, 0.2};
    nc = rvfit_library_stencil(&lib, ts, corner, w, &pen);
    CHECK(nc == 4);
    CHECK_NEAR(pen, RVFIT_PENALTY_SCALE * 0.04, 1e-9);
    /* NaN theta: finite penalty, never NaN */
    double tn[3] = {NAN, 2.0, 0.0};
    nc = rvfit_library_stencil(&lib, tn, corner, w, &pen);
    CHECK(nc >= 1 && isfinite(pen) && pen > 0);

    /* axis scaling and arm lookup */
    CHECK_NEAR(rvfit_axis_scale(&lib.axis[0], 5000.0), log10(5000.0), 1e-15);
    CHECK_NEAR(rvfit_axis_unscale(&lib.axis[0], log10(5000.0)), 5000.0, 1e-9);
    CHECK(rvfit_axis_scale(&lib.axis[1], 2.5) == 2.5);
    CHECK(rvfit_axis_unscale(&lib.axis[1], 2.5) == 2.5);
    CHECK(rvfit_library_arm(&lib, "R") == 1);
    CHECK(rvfit_library_arm(&lib, "B") == 0);
    CHECK(rvfit_library_arm(&lib, "Z") == -1);
    return tu_finish("test_library_interp");
}
