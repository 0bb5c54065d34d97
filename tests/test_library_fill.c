/* test_library_fill.c — rvfit_library_fill_holes ([templates] fill_holes
 * = quadratic) and the FILLED record of the library file.  Known answers:
 *   - grid 6 x 5 x 4 x 2 (TEFF on log10 of unevenly spaced values, ALPHAFE
 *     two nodes, so no square term there) with 30% of the models removed
 *     at random and a missing corner: a flux quadratic in theta (every
 *     product and square, a different one per pixel and arm) is reproduced
 *     at each filled node to float rounding, and a linear one too;
 *   - no hole of the corner (outside the hull of the models) is filled,
 *     nor any hole whose closed orthants are not all occupied;
 *   - a hole surrounded by its 4 axis neighbours only (too few for a 2-D
 *     quadratic) stays a hole, as does every hole of that grid;
 *   - saving and loading keeps which models were filled (FILLED HDU,
 *     NFILLED), EXISTS in the file stays 0/1, an unfilled library has no
 *     FILLED HDU and loads without filled models; fill none changes
 *     nothing. */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/interp.h"
#include "testutil.h"

#define NPIX 5
#define NA 2
static const int NN[4] = {6, 5, 4, 2};
#define NM (6 * 5 * 4 * 2)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static void unravel(size_t m, int *n)
{
    for (int p = 3; p >= 0; p--) {
        n[p] = (int)(m % (size_t)NN[p]);
        m /= (size_t)NN[p];
    }
}

/* Coefficients of pixel j of arm a: c[0] + c[1..4].theta +
 * sum_{k<=l} c[..] theta_k theta_l (quad = 0: linear only). */
static double truth(const double *th, int a, int j, int quad)
{
    double c = 1.0 + 0.1 * a + 0.05 * j, v = c;
    for (int k = 0; k < 4; k++)
        v += (0.3 + 0.07 * (k + j + a)) * (th[k] - 0.5);
    for (int k = 0; quad && k < 4; k++)
        for (int l = k; l < 4; l++)
            v += (0.02 * ((k * 4 + l + j + a) % 7) - 0.06) * (th[k] - 0.5) *
                 (th[l] - 0.5);
    return v;
}

static void build(rvfit_library *lib, uint8_t *ex, float *flux[NA],
                  int quad)
{
    static const double teff[6] = {3500, 3900, 4500, 5000, 5800, 6500};
    memset(lib, 0, sizeof *lib);
    const char *nm[4] = {"TEFF", "LOGG", "FEH", "ALPHAFE"};
    lib->nparam = 4;
    for (int p = 0; p < 4; p++) {
        strcpy(lib->axis[p].name, nm[p]);
        lib->axis[p].nnode = NN[p];
        for (int i = 0; i < NN[p]; i++)
            lib->axis[p].node[i] = p == 0 ? log10(teff[i])
                                   : p == 1 ? 1.0 + 0.5 * i
                                   : p == 2 ? -1.5 + 0.5 * i : 0.4 * i;
    }
    lib->axis[0].scale = RVFIT_SCALE_LOG10;
    lib->nmodel = NM;
    lib->exists = ex;
    lib->narm = NA;
    for (int a = 0; a < NA; a++) {
        rvfit_lib_arm *ar = &lib->arm[a];
        snprintf(ar->name, sizeof ar->name, "A%d", a);
        ar->lnl0 = log(5000.0 + 1000.0 * a);
        ar->dlnl = 1e-4;
        ar->npix = NPIX;
        ar->flux = flux[a];
    }
    for (size_t m = 0; m < NM; m++) {
        int n[4];
        unravel(m, n);
        double th[4];
        for (int p = 0; p < 4; p++)
            th[p] = lib->axis[p].node[n[p]];
        for (int a = 0; a < NA; a++)
            for (int j = 0; j < NPIX; j++)
                flux[a][m * NPIX + j] =
                    ex[m] ? (float)truth(th, a, j, quad) : 1.0f;
    }
}

/* 30% removed at random, the corner TEFF index >= 4, LOGG index <= 1. */
static void holes(uint8_t *ex)
{
    for (size_t m = 0; m < NM; m++) {
        int n[4];
        unravel(m, n);
        ex[m] = !(n[0] >= 4 && n[1] <= 1) && urand() >= 0.3;
    }
}

/* Worst |filled - truth| over every filled model and pixel. */
static double worst_filled(const rvfit_library *lib, int quad, size_t *nf)
{
    double worst = 0.0;
    *nf = 0;
    for (size_t m = 0; m < NM; m++) {
        if (lib->exists[m] != RVFIT_MODEL_FILLED)
            continue;
        int n[4];
        unravel(m, n);
        double th[4];
        for (int p = 0; p < 4; p++)
            th[p] = lib->axis[p].node[n[p]];
        (*nf)++;
        for (int a = 0; a < NA; a++)
            for (int j = 0; j < NPIX; j++)
                worst = fmax(worst, fabs(lib->arm[a].flux[m * NPIX + j] -
                                         truth(th, a, j, quad)));
    }
    return worst;
}

/* Every closed orthant around node n holds a model within two nodes
 * along each axis (the widest neighbourhood the fill looks at). */
static int surrounded(const uint8_t *ex0, const int *n)
{
    for (int s = 0; s < 16; s++) {
        int found = 0;
        for (size_t m = 0; m < NM && !found; m++) {
            int k[4], in = ex0[m];
            unravel(m, k);
            for (int p = 0; p < 4 && in; p++) {
                int o = k[p] - n[p];
                in = abs(o) <= 2 && ((s >> p & 1) ? o >= 0 : o <= 0);
            }
            found = in;
        }
        if (!found)
            return 0;
    }
    return 1;
}

static void test_known(int quad, uint8_t *ex0, size_t *nfilled_out)
{
    uint8_t ex[NM];
    float f0[NM * NPIX], f1[NM * NPIX], *flux[NA] = {f0, f1};
    memcpy(ex, ex0, NM);
    rvfit_library lib;
    build(&lib, ex, flux, quad);
    size_t nf = 0, nl = 0, holes0 = 0, counted;
    for (size_t m = 0; m < NM; m++)
        holes0 += !ex0[m];
    rvfit_err e;
    rvfit_err_clear(&e);
    int rc = rvfit_library_fill_holes(&lib, RVFIT_FILL_QUADRATIC, &nf, &nl,
                                      &e);
    CHECK_MSG(rc == RVFIT_OK, "fill: %s", e.msg);
    CHECK(nf + nl == holes0);
    double worst = worst_filled(&lib, quad, &counted);
    CHECK(counted == nf);
    CHECK_MSG(nf >= holes0 / 3, "%zu of %zu holes filled", nf, holes0);
    printf("%s: %zu of %zu holes filled, worst error %.2g\n",
           quad ? "quadratic" : "linear", nf, holes0, worst);
    /* flux ~ 1, float rounding ~6e-8 amplified by sum |g| <= 3 */
    CHECK_MSG(worst < 1e-6, "%s: worst error %.3g at %zu filled nodes",
              quad ? "quadratic" : "linear", worst, nf);
    int corner = 0, unsurrounded = 0;
    for (size_t m = 0; m < NM; m++) {
        int n[4];
        unravel(m, n);
        corner += n[0] >= 4 && n[1] <= 1 && ex[m];
        if (ex0[m] || !ex[m])
            continue;
        unsurrounded += !surrounded(ex0, n);
    }
    CHECK_MSG(corner == 0, "%d corner holes filled", corner);
    CHECK_MSG(unsurrounded == 0, "%d holes filled with an empty orthant",
              unsurrounded);
    /* every original model untouched */
    int moved = 0;
    for (size_t m = 0; m < NM; m++)
        moved += ex0[m] && ex[m] != 1;
    CHECK(moved == 0);
    *nfilled_out = nf;
}

/* 5 x 5 grid, only the 4 axis neighbours of the centre exist: the centre
 * is surrounded but a 2-D quadratic has 6 terms. */
static void test_too_few(void)
{
    uint8_t ex[25] = {0};
    float f[25 * NPIX];
    for (size_t i = 0; i < 25 * NPIX; i++)
        f[i] = 1.0f;
    ex[7] = ex[11] = ex[13] = ex[17] = 1;
    rvfit_library lib;
    memset(&lib, 0, sizeof lib);
    lib.nparam = 2;
    strcpy(lib.axis[0].name, "LOGG");
    strcpy(lib.axis[1].name, "FEH");
    for (int p = 0; p < 2; p++) {
        lib.axis[p].nnode = 5;
        for (int i = 0; i < 5; i++)
            lib.axis[p].node[i] = 0.5 * i;
    }
    lib.nmodel = 25;
    lib.exists = ex;
    lib.narm = 1;
    strcpy(lib.arm[0].name, "B");
    lib.arm[0].npix = NPIX;
    lib.arm[0].dlnl = 1e-4;
    lib.arm[0].flux = f;
    size_t nf = 99, nl = 0;
    rvfit_err e;
    CHECK(rvfit_library_fill_holes(&lib, RVFIT_FILL_QUADRATIC, &nf, &nl,
                                   &e) == RVFIT_OK);
    CHECK_MSG(nf == 0 && nl == 21, "filled %zu, left %zu", nf, nl);
    CHECK(ex[12] == 0);
}

static void test_roundtrip(uint8_t *ex0)
{
    uint8_t ex[NM];
    float f0[NM * NPIX], f1[NM * NPIX], *flux[NA] = {f0, f1};
    memcpy(ex, ex0, NM);
    rvfit_library lib, back;
    build(&lib, ex, flux, 1);
    rvfit_err e;
    rvfit_err_clear(&e);
    char dir[512], dir0[512], file[600];
    snprintf(dir0, sizeof dir0, "%s/nofill", tu_tmpdir("library_fill"));
    snprintf(dir, sizeof dir, "%s/fill", tu_tmpdir("library_fill"));
    /* without filling: no FILLED HDU, no filled model after loading */
    CHECK(rvfit_library_save(&lib, dir0, &e) == RVFIT_OK);
    int rc = rvfit_library_load(&back, dir0, &e);
    CHECK_MSG(rc == RVFIT_OK, "load: %s", e.msg);
    CHECK(rc || memcmp(back.exists, ex0, NM) == 0);
    if (!rc)
        rvfit_library_free(&back);
    snprintf(file, sizeof file, "%s/%s", dir0, RVFIT_LIBRARY_FILE);
    fitsfile *f = NULL;
    int fs = 0;
    fits_open_file(&f, file, READONLY, &fs);
    CHECK(fits_movnam_hdu(f, IMAGE_HDU, "FILLED", 0, &fs) != 0);
    fs = 0;
    fits_close_file(f, &fs);
    fits_clear_errmsg();

    size_t nf = 0;
    CHECK(rvfit_library_fill_holes(&lib, RVFIT_FILL_QUADRATIC, &nf, NULL,
                                   &e) == RVFIT_OK);
    CHECK(nf > 0);
    rc = rvfit_library_save(&lib, dir, &e);
    CHECK_MSG(rc == RVFIT_OK, "save: %s", e.msg);
    rc = rvfit_library_load(&back, dir, &e);
    CHECK_MSG(rc == RVFIT_OK, "load: %s", e.msg);
    if (rc)
        return;
    CHECK(memcmp(back.exists, ex, NM) == 0);
    for (int a = 0; a < NA; a++)
        CHECK(memcmp(back.arm[a].flux, flux[a], sizeof f0) == 0);
    rvfit_library_free(&back);
    /* the file: EXISTS 0/1 with filled models as models, NFILLED */
    snprintf(file, sizeof file, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    uint8_t fex[NM], ffl[NM];
    long nkey = 0;
    int anynul = 0;
    fs = 0;
    fits_open_file(&f, file, READONLY, &fs);
    fits_read_key(f, TLONG, "NFILLED", &nkey, NULL, &fs);
    fits_movnam_hdu(f, IMAGE_HDU, "EXISTS", 0, &fs);
    fits_read_img(f, TBYTE, 1, NM, NULL, fex, &anynul, &fs);
    fits_movnam_hdu(f, IMAGE_HDU, "FILLED", 0, &fs);
    fits_read_img(f, TBYTE, 1, NM, NULL, ffl, &anynul, &fs);
    CHECK(fs == 0);
    fs = 0;
    fits_close_file(f, &fs);
    CHECK(nkey == (long)nf);
    int bad = 0;
    for (size_t m = 0; m < NM; m++)
        bad += fex[m] != (ex[m] != 0) ||
               ffl[m] != (ex[m] == RVFIT_MODEL_FILLED);
    CHECK_MSG(bad == 0, "%d models recorded wrongly", bad);
}

static void test_none(uint8_t *ex0)
{
    uint8_t ex[NM];
    float f0[NM * NPIX], f1[NM * NPIX], *flux[NA] = {f0, f1};
    memcpy(ex, ex0, NM);
    rvfit_library lib;
    build(&lib, ex, flux, 1);
    size_t nf = 7, nl = 7;
    rvfit_err e;
    CHECK(rvfit_library_fill_holes(&lib, RVFIT_FILL_NONE, &nf, &nl, &e) ==
          RVFIT_OK);
    CHECK(nf == 0 && nl == 0 && memcmp(ex, ex0, NM) == 0);
    CHECK(rvfit_library_fill_holes(&lib, 9, &nf, &nl, &e) ==
          RVFIT_ERR_CONFIG);
    CHECK(rvfit_fill_parse("none") == RVFIT_FILL_NONE);
    CHECK(rvfit_fill_parse("Quadratic") == RVFIT_FILL_QUADRATIC);
    CHECK(rvfit_fill_parse("cubic") == -1);
}

int main(void)
{
    uint8_t ex0[NM];
    holes(ex0);
    size_t nq = 0, nl = 0;
    test_known(1, ex0, &nq);
    test_known(0, ex0, &nl);
    CHECK(nq == nl); /* the rule depends on the geometry, not the flux */
    test_too_few();
    test_roundtrip(ex0);
    test_none(ex0);
    return tu_finish("test_library_fill");
}
