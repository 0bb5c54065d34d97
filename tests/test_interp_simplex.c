/* test_interp/simplex/sx_build.c — the simplex interpolator (rvfit/interp.h) on
 * an irregular grid: 6 x 5 x 4 nodes (plus a single-node axis) with 30% of
 * the models removed at random and a missing corner (TEFF index >= 4 and
 * LOGG index >= 3 removed).  Known answers:
 *   - for 10^5 random convex combinations of models present (points in
 *     the hull by construction) a containing simplex is found: no penalty,
 *     positive weights summing to 1 that reproduce theta and a flux linear
 *     in theta exactly;
 *   - the missing corner lies beyond the plane i_TEFF + i_LOGG = 7 that
 *     bounds every model present, so a point there is charged at least
 *     PENALTY_SCALE * (its distance to that plane)^2;
 *   - beyond the axes, on a model present: exactly today's per-axis
 *     penalty;
 *   - the triangulation stored in the library file reads back and gives
 *     the same stencils; fewer than 2 free axes are refused. */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/interp.h"
#include "rvfit/library_io.h"
#include "testutil.h"

#define NPIX 4
#define N0 6
#define N1 5
#define N2 4
#define NM (N0 * N1 * N2)
#define H 0.05 /* node spacing, every free axis */

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double node_of(int axis, int i)
{
    static const double lo[3] = {3.6, 1.0, -1.5};
    return lo[axis] + H * i;
}

/* Flux linear in theta (theta[3], the single-node axis, is 0). */
static double lin(const double *th, int j)
{
    return 1.0 + 0.5 * th[0] + 0.25 * th[1] + 0.125 * th[2] + 0.0625 * j;
}

static void model_theta(size_t m, double *th)
{
    th[0] = node_of(0, (int)(m / (N1 * N2)));
    th[1] = node_of(1, (int)(m / N2 % N1));
    th[2] = node_of(2, (int)(m % N2));
    th[3] = 0.0;
}

static void build(rvfit_library *lib, float *flux, uint8_t *ex)
{
    memset(lib, 0, sizeof *lib);
    const char *nm[4] = {"TEFF", "LOGG", "FEH", "ALPHAFE"};
    const int nn[4] = {N0, N1, N2, 1};
    lib->nparam = 4;
    for (int p = 0; p < 4; p++) {
        strcpy(lib->axis[p].name, nm[p]);
        lib->axis[p].nnode = nn[p];
        for (int i = 0; i < nn[p]; i++)
            lib->axis[p].node[i] = p < 3 ? node_of(p, i) : 0.0;
    }
    lib->axis[0].scale = RVFIT_SCALE_LOG10;
    lib->nmodel = NM;
    lib->exists = ex;
    tu_library_one_arm(lib, NPIX, flux);
    int removed = 0;
    for (size_t m = 0; m < NM; m++) {
        int i0 = (int)(m / (N1 * N2)), i1 = (int)(m / N2 % N1);
        /* the corner; 30% at random elsewhere, sparing the LOGG = 0 row so
         * that the points beyond TEFF below land on models */
        ex[m] = !(i0 >= 4 && i1 >= 3) && (i1 == 0 || urand() >= 0.3);
        removed += !ex[m];
        double th[4];
        model_theta(m, th);
        for (int j = 0; j < NPIX; j++)
            flux[m * NPIX + j] = ex[m] ? (float)lin(th, j) : 1.0f;
    }
    printf("irregular grid: %d of %d models removed\n", removed, NM);
}

/* A random point in the hull: a convex combination of 4 models present. */
static void hull_point(const rvfit_library *lib, double *th)
{
    double w[4], s = 0.0;
    memset(th, 0, 4 * sizeof *th);
    size_t m[4];
    for (int k = 0; k < 4; k++) {
        do
            m[k] = (size_t)(urand() * NM);
        while (m[k] >= NM || !lib->exists[m[k]]);
        w[k] = urand() + 1e-3;
        s += w[k];
    }
    for (int k = 0; k < 4; k++) {
        double t[4];
        model_theta(m[k], t);
        for (int p = 0; p < 3; p++)
            th[p] += w[k] / s * t[p];
    }
}

static void test_inside(const rvfit_interpolator *ip)
{
    const rvfit_library *lib = ip->lib;
    long bad = 0, badflux = 0;
    double worst = 0.0;
    for (int i = 0; i < 100000; i++) {
        double th[4], pen = -1, w[RVFIT_MAX_STENCIL], sum = 0.0;
        double rec[3] = {0, 0, 0};
        uint32_t idx[RVFIT_MAX_STENCIL];
        hull_point(lib, th);
        int n = rvfit_interp_stencil(ip, th, idx, w, &pen);
        /* (a combination of models on a face of the box may land 1e-16
         * outside it: the per-axis penalty of that is ~1e-25) */
        int ok = pen >= 0.0 && pen < 1e-12 && n >= 1 && n <= 4;
        for (int k = 0; k < n; k++) {
            double t[4];
            ok = ok && w[k] > 0.0 && idx[k] < NM && lib->exists[idx[k]];
            model_theta(idx[k], t);
            for (int p = 0; p < 3; p++)
                rec[p] += w[k] * t[p];
            sum += w[k];
        }
        for (int p = 0; p < 3; p++)
            worst = fmax(worst, fabs(rec[p] - th[p]));
        ok = ok && fabs(sum - 1.0) < 1e-12;
        bad += !ok;
        for (int j = 0; j < NPIX; j++) {
            double f = 0.0;
            for (int k = 0; k < n; k++)
                f += w[k] * lib->arm[0].flux[idx[k] * NPIX + j];
            badflux += fabs(f - lin(th, j)) > 1e-6;
        }
    }
    printf("1e5 points in the hull: %ld without a containing simplex, "
           "largest |sum w theta_v - theta| %.2e, %ld fluxes off\n", bad,
           worst, badflux);
    CHECK(bad == 0);
    CHECK(worst < 1e-12);
    CHECK(badflux == 0);
}

static void test_outside(const rvfit_interpolator *ip)
{
    uint32_t idx[RVFIT_MAX_STENCIL];
    double w[RVFIT_MAX_STENCIL], pen;
    /* the missing corner: indices (5, 4, 1.5); plane i0 + i1 = 7 */
    double th[4] = {node_of(0, 5), node_of(1, 4), node_of(2, 1) + 0.5 * H,
                    0.0};
    int n = rvfit_interp_stencil(ip, th, idx, w, &pen);
    double dmin = (5 + 4 - 7) / sqrt(2.0);
    printf("missing corner: penalty %.1f (>= %.1f), %d vertices\n", pen,
           RVFIT_PENALTY_SCALE * dmin * dmin, n);
    CHECK(n >= 1 && pen >= RVFIT_PENALTY_SCALE * dmin * dmin * (1 - 1e-12));
    double pen2;
    th[0] = node_of(0, 4) + 0.6 * H; /* (4.6, 4): 1.6 beyond the plane */
    rvfit_interp_stencil(ip, th, idx, w, &pen2);
    CHECK(pen2 >= RVFIT_PENALTY_SCALE * 1.28 * (1 - 1e-12));
    /* beyond TEFF by half a spacing, on model (5, 0, 2) (LOGG row kept) */
    double tb[4] = {node_of(0, 5) + 0.5 * H, node_of(1, 0), node_of(2, 2),
                    0.0};
    n = rvfit_interp_stencil(ip, tb, idx, w, &pen);
    CHECK_MSG(fabs(pen - 0.25 * RVFIT_PENALTY_SCALE) < 1e-6, "pen %g", pen);
    double wm = 0.0; /* the clamped point is model (5, 0, 2) */
    for (int k = 0; k < n; k++)
        if (idx[k] == (5 * N1 + 0) * N2 + 2)
            wm = w[k];
    CHECK_MSG(fabs(wm - 1.0) < 1e-12, "weight of the model %.17g", wm);
    /* the single-node axis off its node: (d/1)^2 */
    tb[0] = node_of(0, 5);
    tb[3] = 0.1;
    rvfit_interp_stencil(ip, tb, idx, w, &pen);
    CHECK_NEAR(pen, 0.01 * RVFIT_PENALTY_SCALE, 1e-6);
}

static void test_file(rvfit_library *lib, const rvfit_interpolator *ip)
{
    rvfit_err e;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/lib", tu_tmpdir("interp_simplex"));
    int rc = rvfit_library_save_interp(lib, ip, dir, &e);
    CHECK_MSG(rc == RVFIT_OK, "save: %s", e.msg);
    rvfit_library b;
    rvfit_interpolator ib;
    rc = rvfit_library_open(&b, &ib, dir, &e);
    CHECK_MSG(rc == RVFIT_OK, "open stored: %s", e.msg);
    if (rc)
        return;
    CHECK(ib.host_stencils == 1 && !strcmp(rvfit_interp_name(&ib), "simplex"));
    const uint32_t *v1, *v2;
    size_t n1, n2;
    int k1, k2;
    rvfit_interp_simplices(ip, &v1, &n1, &k1);
    rvfit_interp_simplices(&ib, &v2, &n2, &k2);
    printf("triangulation: %zu simplices of %d vertices, read back %zu\n",
           n1, k1, n2);
    CHECK(n1 == n2 && k1 == k2 && memcmp(v1, v2, n1 * (size_t)k1 * 4) == 0);
    for (int i = 0; i < 1000; i++) {
        double th[4], p1, p2, w1[16], w2[16];
        uint32_t i1[16], i2[16];
        hull_point(lib, th);
        th[1] += 0.2 * (urand() - 0.5); /* some outside */
        int c1 = rvfit_interp_stencil(ip, th, i1, w1, &p1);
        int c2 = rvfit_interp_stencil(&ib, th, i2, w2, &p2);
        CHECK(c1 == c2 && p1 == p2 && memcmp(i1, i2, 4 * (size_t)c1) == 0 &&
              memcmp(w1, w2, sizeof(double) * (size_t)c1) == 0);
    }
    rvfit_interp_close(&ib);
    rvfit_library_free(&b);
    /* a stored vertex that is a hole is refused, naming it */
    char file[8192];
    snprintf(file, sizeof file, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    unsigned hole = 0;
    while (lib->exists[hole])
        hole++;
    fitsfile *f;
    int fs = 0;
    fits_open_file(&f, file, READWRITE, &fs);
    fits_movnam_hdu(f, IMAGE_HDU, "SIMPLEX", 0, &fs);
    fits_write_img(f, TUINT, 3, 1, &hole, &fs);
    fits_close_file(f, &fs);
    CHECK(fs == 0);
    CHECK(rvfit_library_open(&b, &ib, dir, &e) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(e.msg, "not a model"), "%s", e.msg);
}

int main(void)
{
    static float flux[NM * NPIX];
    static uint8_t ex[NM];
    rvfit_library lib;
    rvfit_interpolator ip;
    rvfit_err e;
    build(&lib, flux, ex);
    int rc = rvfit_interp_open(&ip, &lib, "simplex", 0, &e);
    CHECK_MSG(rc == RVFIT_OK, "open: %s", e.msg);
    if (rc)
        return tu_finish("test_interp_simplex");
    test_inside(&ip);
    test_outside(&ip);
    test_file(&lib, &ip);
    rvfit_interp_close(&ip);
    /* cubic axes do not apply */
    lib.axis[0].interp = RVFIT_INTERP_CUBIC;
    CHECK(rvfit_interp_open(&ip, &lib, "simplex", 0, &e) ==
          RVFIT_ERR_CONFIG);
    lib.axis[0].interp = RVFIT_INTERP_LINEAR;
    /* one free axis: no triangulation */
    lib.axis[1].nnode = lib.axis[2].nnode = 1;
    lib.nmodel = N0;
    CHECK(rvfit_interp_open(&ip, &lib, "simplex", 0, &e) ==
          RVFIT_ERR_CONFIG);
    CHECK(tu_contains(e.msg, "multilinear"));
    return tu_finish("test_interp_simplex");
}
