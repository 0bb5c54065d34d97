/* test_interp/simplex/sx_quad.c — the simplex's quadratic correction
 * (interp/simplex/sx_quad.c) on a grid of 7 x 6 x 5 x 2 nodes, full and with
 * 30% of the models removed at random and a missing corner.  Known
 * answers:
 *   - flux quadratic in theta (every cross term, no square on the two-node
 *     axis): on the full grid the corrected stencil reproduces it to
 *     float rounding at random points of the hull and on nodes, where
 *     the plain simplex is off by the curvature (about 1e-2), and with
 *     the holes too; weights sum to 1 and reproduce theta;
 *   - flux that is not quadratic: the template is continuous along random
 *     lines, plain and corrected (no jump where neighbouring simplices
 *     meet, which Qhull's split of cospherical cells gave before the
 *     triangulation's skew, nor where models enter or leave the ball);
 *   - the correction is stored (SXCORR) and read back with the same
 *     stencils; an unknown SXCORR and more than 4 free axes are refused. */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/interp.h"
#include "rvfit/library_io.h"
#include "testutil.h"

#define NPIX 4
#define NP 4
static const int NN[NP] = {7, 6, 5, 2};
#define NM (7 * 6 * 5 * 2)
#define H 0.05 /* node spacing, every axis */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static const double LO[NP] = {3.6, 1.0, -1.5, 0.0};

/* Node-index coordinates s_p = (theta_p - lo_p) / H. */
static void s_of(const double *th, double *s)
{
    for (int p = 0; p < NP; p++)
        s[p] = (th[p] - LO[p]) / H;
}

/* Quadratic in s with every cross term, no s_3^2 (two nodes). */
static double quad(const double *th, int j)
{
    double s[NP], f = 1.0 + 0.01 * j;
    s_of(th, s);
    for (int p = 0; p < NP; p++)
        f += 0.02 * (p + 1 + j) * s[p];
    for (int p = 0; p < NP; p++)
        for (int q = p; q < NP; q++)
            if (!(p == 3 && q == 3))
                f += 0.004 * ((p + 2 * q + j) % 5 - 2) * s[p] * s[q];
    return f;
}

/* Smooth, not quadratic. */
static double wavy(const double *th, int j)
{
    double s[NP];
    s_of(th, s);
    return 1.0 + 0.1 * sin(0.7 * s[0] + j) * cos(0.5 * s[1]) +
           0.05 * s[2] * s[2] * s[2] / 27.0 + 0.02 * s[3] * s[0];
}

static void model_theta(size_t m, double *th)
{
    size_t r = m;
    for (int p = NP - 1; p >= 0; p--) {
        th[p] = LO[p] + H * (double)(r % (size_t)NN[p]);
        r /= (size_t)NN[p];
    }
}

static void build(rvfit_library *lib, float *flux, uint8_t *ex,
                  double (*f)(const double *, int), int holes)
{
    memset(lib, 0, sizeof *lib);
    const char *nm[NP] = {"TEFF", "LOGG", "FEH", "ALPHAFE"};
    lib->nparam = NP;
    for (int p = 0; p < NP; p++) {
        strcpy(lib->axis[p].name, nm[p]);
        lib->axis[p].nnode = NN[p];
        for (int i = 0; i < NN[p]; i++)
            lib->axis[p].node[i] = LO[p] + H * i;
    }
    lib->axis[0].scale = RVFIT_SCALE_LOG10;
    lib->nmodel = NM;
    lib->exists = ex;
    tu_library_one_arm(lib, NPIX, flux);
    uint64_t keep = rng;
    rng = 0x2545F4914F6CDD1Dull; /* the same holes for every flux */
    for (size_t m = 0; m < NM; m++) {
        double th[NP], s[NP];
        model_theta(m, th);
        s_of(th, s);
        ex[m] = !holes || (!(s[0] >= 5 && s[1] >= 4) && urand() >= 0.3);
        for (int j = 0; j < NPIX; j++)
            flux[m * NPIX + j] = ex[m] ? (float)f(th, j) : 1.0f;
    }
    rng = keep;
}

/* A random point of the hull: a convex combination of 5 models. */
static void hull_point(const rvfit_library *lib, double *th)
{
    double w[5], s = 0.0, t[NP];
    size_t m[5];
    memset(th, 0, NP * sizeof *th);
    for (int k = 0; k < 5; k++) {
        do
            m[k] = (size_t)(urand() * NM);
        while (m[k] >= NM || !lib->exists[m[k]]);
        w[k] = urand() + 1e-3;
        s += w[k];
    }
    for (int k = 0; k < 5; k++) {
        model_theta(m[k], t);
        for (int p = 0; p < NP; p++)
            th[p] += w[k] / s * t[p];
    }
}

static double tmpl(const rvfit_library *lib, const uint32_t *idx,
                   const double *w, int n, int j)
{
    double f = 0.0;
    for (int k = 0; k < n; k++)
        f += w[k] * lib->arm[0].flux[idx[k] * NPIX + j];
    return f;
}

/* Worst |template - quad| over npt points (plain: the same without the
 * correction); counts of points corrected, of points off by more than
 * float rounding (2e-6) and of bad weight sums. */
static void run_points(const rvfit_interpolator *ip,
                       const rvfit_interpolator *plain, int npt, int nodes,
                       double *worst, double *worst_plain, int *ncorr,
                       int *noff, int *badsum)
{
    *worst = *worst_plain = 0.0;
    *ncorr = *noff = *badsum = 0;
    for (int i = 0; i < npt; i++) {
        double th[NP], w[RVFIT_MAX_STENCIL], pen, sum = 0.0, rec[NP] = {0};
        uint32_t idx[RVFIT_MAX_STENCIL];
        hull_point(ip->lib, th);
        if (nodes) /* snap two axes to nodes: faces, edges of cells */
            for (int p = 0; p < 2; p++)
                th[p] = LO[p] + H * round((th[p] - LO[p]) / H);
        int n = rvfit_interp_stencil(ip, th, idx, w, &pen);
        if (pen > 0.0) { /* snapped out of the hull */
            i--;
            continue;
        }
        for (int k = 0; k < n; k++) {
            double t[NP];
            model_theta(idx[k], t);
            for (int p = 0; p < NP; p++)
                rec[p] += w[k] * t[p];
            sum += w[k];
        }
        double dth = 0.0;
        for (int p = 0; p < NP; p++)
            dth = fmax(dth, fabs(rec[p] - th[p]) / H);
        *badsum += fabs(sum - 1.0) > 1e-9 || dth > 1e-9;
        *ncorr += n > NP + 1;
        double er = 0.0;
        for (int j = 0; j < NPIX; j++)
            er = fmax(er, fabs(tmpl(ip->lib, idx, w, n, j) - quad(th, j)));
        *worst = fmax(*worst, er);
        *noff += er > 2e-6;
        n = rvfit_interp_stencil(plain, th, idx, w, &pen);
        for (int j = 0; j < NPIX; j++)
            *worst_plain = fmax(*worst_plain, fabs(tmpl(ip->lib, idx, w, n,
                                                        j) - quad(th, j)));
    }
}

/* Exact everywhere, faces and nodes included, with holes too (a point
 * where they left the quadratic without full rank would keep the plain
 * stencil and count as off). */
static void test_quadratic(const rvfit_interpolator *ip,
                           const rvfit_interpolator *plain, int holes)
{
    double worst, wp;
    int nc, off, bs, nodes;
    for (nodes = 0; nodes <= 1; nodes++) {
        int npt = nodes ? 5000 : 20000;
        run_points(ip, plain, npt, nodes, &worst, &wp, &nc, &off, &bs);
        printf("quadratic flux, %s, %d hull points%s: %d corrected, %d off "
               "by > 2e-6, worst %.2e (plain simplex %.2e), %d bad weight "
               "sums\n", holes ? "holes" : "full grid", npt,
               nodes ? " on nodes of TEFF and LOGG" : "", nc, off, worst,
               wp, bs);
        CHECK(nc == npt);
        CHECK(off == 0);
        CHECK(worst < 2e-6);
        CHECK(wp > 1e-3);
        CHECK(bs == 0);
    }
}

/* Along 100 random lines, steps of 5e-4 node spacings: the largest change
 * of the template between neighbouring points, against the slope bound
 * (|grad| <= 0.2 per node spacing: 1e-4 per step; the jumps of a
 * non-conforming triangulation were 1e-4 to 1e-2). */
static void test_continuity(const rvfit_interpolator *ip, const char *what)
{
    double jump = 0.0;
    for (int l = 0; l < 100; l++) {
        double a[NP], b[NP], prev = NAN;
        hull_point(ip->lib, a);
        hull_point(ip->lib, b);
        double len = 0.0;
        for (int p = 0; p < NP; p++)
            len += (b[p] - a[p]) * (b[p] - a[p]) / (H * H);
        int nstep = (int)(sqrt(len) / 5e-4) + 1;
        for (int i = 0; i <= nstep && i < 20000; i++) {
            double th[NP], w[RVFIT_MAX_STENCIL], pen;
            uint32_t idx[RVFIT_MAX_STENCIL];
            for (int p = 0; p < NP; p++)
                th[p] = a[p] + (b[p] - a[p]) * i / nstep;
            int n = rvfit_interp_stencil(ip, th, idx, w, &pen);
            double f = tmpl(ip->lib, idx, w, n, 0);
            if (i)
                jump = fmax(jump, fabs(f - prev));
            prev = f;
        }
    }
    printf("non-quadratic flux, %s: largest change between points 5e-4 "
           "node spacings apart %.2e\n", what, jump);
    CHECK(jump < 3e-4);
}

static void test_file(rvfit_library *lib, const rvfit_interpolator *ip)
{
    rvfit_err e;
    char dir[4096], file[8192];
    snprintf(dir, sizeof dir, "%s/lib", tu_tmpdir("interp_simplex_quad"));
    CHECK(rvfit_library_save_interp(lib, ip, dir, &e) == RVFIT_OK);
    rvfit_library b;
    rvfit_interpolator ib;
    int rc = rvfit_library_open(&b, &ib, dir, &e);
    CHECK_MSG(rc == RVFIT_OK, "open stored: %s", e.msg);
    if (rc)
        return;
    CHECK(rvfit_interp_simplex_corr(&ib) == RVFIT_SXCORR_QUADRATIC);
    int same = 0;
    for (int i = 0; i < 200; i++) {
        double th[NP], p1, p2, w1[RVFIT_MAX_STENCIL], w2[RVFIT_MAX_STENCIL];
        uint32_t i1[RVFIT_MAX_STENCIL], i2[RVFIT_MAX_STENCIL];
        hull_point(lib, th);
        int c1 = rvfit_interp_stencil(ip, th, i1, w1, &p1);
        int c2 = rvfit_interp_stencil(&ib, th, i2, w2, &p2);
        same += c1 == c2 && c1 > NP + 1 && p1 == p2 &&
                memcmp(i1, i2, 4 * (size_t)c1) == 0 &&
                memcmp(w1, w2, sizeof(double) * (size_t)c1) == 0;
    }
    printf("read back: %d of 200 corrected stencils identical\n", same);
    CHECK(same >= 190);
    rvfit_interp_close(&ib);
    rvfit_library_free(&b);
    snprintf(file, sizeof file, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    fitsfile *f;
    int fs = 0;
    fits_open_file(&f, file, READWRITE, &fs);
    fits_movnam_hdu(f, IMAGE_HDU, "SIMPLEX", 0, &fs);
    fits_update_key(f, TSTRING, "SXCORR", "CUBIC", NULL, &fs);
    fits_close_file(f, &fs);
    CHECK(fs == 0);
    CHECK(rvfit_library_open(&b, &ib, dir, &e) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(e.msg, "SXCORR = 'CUBIC'") &&
                  tu_contains(e.msg, file),
              "%s", e.msg);
}

/* The corrected and the plain simplex interpolators over lib. */
static int open_pair(const rvfit_library *lib, rvfit_interpolator *ip,
                     rvfit_interpolator *plain)
{
    rvfit_err e;
    int rc = rvfit_interp_open(ip, lib, "simplex", 0, &e);
    if (!rc)
        rc = rvfit_interp_simplex_correction(ip, RVFIT_SXCORR_QUADRATIC,
                                             &e);
    if (!rc)
        rc = rvfit_interp_open(plain, lib, "simplex", 0, &e);
    CHECK_MSG(rc == RVFIT_OK, "open: %s", e.msg);
    return rc;
}

int main(void)
{
    static float flux[NM * NPIX];
    static uint8_t ex[NM];
    rvfit_library lib;
    rvfit_interpolator ip, plain;
    rvfit_err e;
    build(&lib, flux, ex, quad, 0);
    if (open_pair(&lib, &ip, &plain))
        return tu_finish("test_interp_simplex_quad");
    test_quadratic(&ip, &plain, 0);
    rvfit_interp_close(&ip);
    rvfit_interp_close(&plain);
    build(&lib, flux, ex, quad, 1);
    if (open_pair(&lib, &ip, &plain))
        return tu_finish("test_interp_simplex_quad");
    test_quadratic(&ip, &plain, 1);
    test_file(&lib, &ip);
    build(&lib, flux, ex, wavy, 1); /* same holes, same triangulation */
    test_continuity(&plain, "plain");
    test_continuity(&ip, "corrected");
    rvfit_interp_close(&plain);
    rvfit_interp_close(&ip);
    /* the correction belongs to simplex; at most 4 free axes */
    CHECK(rvfit_interp_open(&ip, &lib, "multilinear", 0, &e) == RVFIT_OK);
    CHECK(rvfit_interp_simplex_correction(&ip, RVFIT_SXCORR_QUADRATIC, &e) ==
          RVFIT_ERR_CONFIG);
    rvfit_interp_close(&ip);
    CHECK(rvfit_simplex_correction_parse("Quadratic") ==
              RVFIT_SXCORR_QUADRATIC &&
          rvfit_simplex_correction_parse("cubic") < 0);
    return tu_finish("test_interp_simplex_quad");
}
