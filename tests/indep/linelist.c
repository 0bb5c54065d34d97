/* The line list of a model universe: hydrogen (Balmer, Paschen), the strong
 * lines a DESI stellar spectrum is known by (Ca II H&K and triplet, Mg b,
 * Na D, Ca I 4227), a few thousand weak atomic lines at pseudo-random
 * positions and molecular bands made of many closely spaced lines piling up
 * at a band head.  Strengths are given for the Sun (ind_sun) and scaled per
 * star by spectrum.c.  Wavelengths are vacuum. */
#include "indep.h"

#include <math.h>
#include <stdlib.h>

enum { SP_H, SP_FE1, SP_FE2, SP_TI1, SP_TI2, SP_CA1, SP_CA2, SP_MG1, SP_SI1,
       SP_CR1, SP_NI1, SP_NA1, SP_MN1, SP_V1, SP_CO1, SP_SC2, SP_BA2,
       SP_CH, SP_CN, SP_MGH, SP_CAH, SP_TIO, SP_COUNT };

static const ind_species SPECIES[SP_COUNT] = {
    [SP_H] = {"H", 1.008, IND_HYD, 0, 0, 13.598, 0.5, 0, 0, 0},
    [SP_FE1] = {"Fe I", 55.85, IND_ATOM, 1, 0, 7.902, 1.6, 0, 0, 0},
    [SP_FE2] = {"Fe II", 55.85, IND_ATOM, 1, 0, 7.902, 1.6, 1, 0, 0},
    [SP_TI1] = {"Ti I", 47.87, IND_ATOM, 1, 1, 6.828, 1.8, 0, 0, 0},
    [SP_TI2] = {"Ti II", 47.87, IND_ATOM, 1, 1, 6.828, 1.8, 1, 0, 0},
    [SP_CA1] = {"Ca I", 40.08, IND_ATOM, 1, 1, 6.113, 2.0, 0, 0, 0},
    [SP_CA2] = {"Ca II", 40.08, IND_ATOM, 1, 1, 6.113, 2.0, 1, 0, 0},
    [SP_MG1] = {"Mg I", 24.31, IND_ATOM, 1, 1, 7.646, 2.0, 0, 0, 0},
    [SP_SI1] = {"Si I", 28.09, IND_ATOM, 1, 1, 8.152, 0.6, 0, 0, 0},
    [SP_CR1] = {"Cr I", 52.00, IND_ATOM, 1, 0, 6.767, 0.9, 0, 0, 0},
    [SP_NI1] = {"Ni I", 58.69, IND_ATOM, 1, 0, 7.640, 0.9, 0, 0, 0},
    [SP_NA1] = {"Na I", 22.99, IND_ATOM, 1, 0, 5.139, 0.5, 0, 0, 0},
    [SP_MN1] = {"Mn I", 54.94, IND_ATOM, 1, 0, 7.434, 1.1, 0, 0, 0},
    [SP_V1] = {"V I", 50.94, IND_ATOM, 1, 0, 6.746, 0.8, 0, 0, 0},
    [SP_CO1] = {"Co I", 58.93, IND_ATOM, 1, 0, 7.881, 0.9, 0, 0, 0},
    [SP_SC2] = {"Sc II", 44.96, IND_ATOM, 1, 0, 6.561, 1.5, 1, 0, 0},
    [SP_BA2] = {"Ba II", 137.3, IND_ATOM, 1, 0, 5.212, 0.9, 1, 0, 0},
    [SP_CH] = {"CH", 13.02, IND_MOL, 1, 0, 0, 0, 0, 3.5, 0.0},
    [SP_CN] = {"CN", 26.02, IND_MOL, 2, 0, 0, 0, 0, 7.0, -0.2},
    [SP_MGH] = {"MgH", 25.31, IND_MOL, 1, 1, 0, 0, 0, 4.0, 0.4},
    [SP_CAH] = {"CaH", 41.09, IND_MOL, 1, 1, 0, 0, 0, 4.0, 0.4},
    [SP_TIO] = {"TiO", 63.87, IND_MOL, 2, 2, 0, 0, 0, 9.0, 0.1},
};

const ind_species *ind_species_table(size_t *n)
{
    *n = SP_COUNT;
    return SPECIES;
}

/* Lorentz HWHM (A) of a damping rate gamma (1/s): gamma lambda^2/(4 pi c). */
static double rate_to_hwhm(double rate, double lam)
{
    return rate * lam * lam / (4.0 * IND_PI * 2.99792458e18);
}

typedef struct { ind_line *v; size_t n, cap; } vec;

static int push(vec *l, const ind_line *x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        ind_line *p = realloc(l->v, cap * sizeof *p);
        if (!p)
            return -1;
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = *x;
    return 0;
}

/* A strong line given by its solar equivalent width: in the damping part of
 * the curve of growth EW ~ 2 (1 - S) sqrt(W0 gamma), which fixes W0. */
static ind_line strong(int sp, double lam, double chi, double ew,
                       double gam, double half, double floor_sun)
{
    double d = ew / (2.0 * (1.0 - floor_sun));
    ind_line l = {0};
    l.lam = lam;
    l.logw0 = (float)log10(d * d / gam);
    l.chi = (float)chi;
    l.grad = (float)(0.2 * gam);
    l.gvdw = (float)(0.8 * gam);
    l.half = (float)half;
    l.species = sp;
    return l;
}

static int add_metals_strong(vec *l)
{
    static const struct { int sp; double lam, chi, ew, gam, half; } t[] = {
        {SP_CA2, 3934.777, 0.00, 20.0, 0.080, 150.0},  /* Ca II K */
        {SP_CA2, 3969.591, 0.00, 15.0, 0.080, 120.0},  /* Ca II H */
        {SP_CA1, 4227.918, 0.00, 1.50, 0.010, 25.0},
        {SP_MG1, 5168.761, 2.71, 0.90, 0.012, 25.0},   /* Mg b4 */
        {SP_MG1, 5174.125, 2.71, 1.26, 0.012, 25.0},   /* Mg b2 */
        {SP_MG1, 5185.048, 2.72, 1.58, 0.012, 25.0},   /* Mg b1 */
        {SP_NA1, 5891.583, 0.00, 0.75, 0.008, 25.0},   /* Na D2 */
        {SP_NA1, 5897.558, 0.00, 0.56, 0.008, 25.0},   /* Na D1 */
        {SP_CA2, 8500.36, 1.69, 1.30, 0.020, 60.0},    /* Ca triplet */
        {SP_CA2, 8544.44, 1.70, 3.70, 0.020, 60.0},
        {SP_CA2, 8664.52, 1.69, 2.60, 0.020, 60.0},
    };
    double s_sun = 0.12; /* metal floor at the Sun, see atmos.c */
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        ind_line x = strong(t[i].sp, t[i].lam, t[i].chi, t[i].ew, t[i].gam,
                            t[i].half, s_sun);
        if (push(l, &x))
            return -1;
    }
    return 0;
}

/* Balmer lines at their vacuum wavelengths (NIST), Paschen lines from the
 * Rydberg formula with the hydrogen reduced mass.  Damping at the Sun is
 * split 10 % radiative, 60 % Stark (scales with Pe), 30 % resonance
 * (scales with Pg).  chi is an effective excitation: 0.35 x the energy of
 * the lower level, which tempers the Boltzmann factor the way the deeper
 * formation of hydrogen wings does in real atmospheres. */
static int add_hydrogen(vec *l)
{
    static const double balmer[10] = {6564.61, 4862.68, 4341.68, 4102.89,
        3971.19, 3890.15, 3836.47, 3798.98, 3771.70, 3751.22};
    static const double ew[10] = {3.0, 3.5, 2.8, 2.5, 2.0, 1.6, 1.3, 1.1,
                                  0.9, 0.8};
    static const double half[10] = {150, 120, 100, 80, 60, 50, 45, 40, 35, 30};
    double s_sun = 0.17;
    for (int i = 0; i < 10; i++) {
        double gam = 0.10 + 0.05 * i;
        ind_line x = strong(SP_H, balmer[i], 0.35 * 10.199, ew[i], gam,
                            half[i], s_sun);
        x.grad = (float)(0.1 * gam);
        x.gstark = (float)(0.6 * gam);
        x.gvdw = (float)(0.3 * gam);
        if (push(l, &x))
            return -1;
    }
    const double rh = 109677.583; /* cm^-1 */
    for (int n = 9; n <= 17; n++) {
        double lam = 1e8 / (rh * (1.0 / 9.0 - 1.0 / (n * n)));
        double gam = 0.30 + 0.05 * (n - 9);
        ind_line x = strong(SP_H, lam, 0.35 * 12.088, 0.6 * 81.0 / (n * n),
                            gam, 40.0, s_sun);
        x.grad = (float)(0.1 * gam);
        x.gstark = (float)(0.6 * gam);
        x.gvdw = (float)(0.3 * gam);
        if (push(l, &x))
            return -1;
    }
    return 0;
}

/* Species of the weak lines with their share of the list. */
static int pick_species(double u, int *ion)
{
    static const struct { int sp; double w; } t[] = {
        {SP_FE1, .40}, {SP_FE2, .07}, {SP_TI1, .07}, {SP_TI2, .05},
        {SP_CA1, .05}, {SP_CR1, .06}, {SP_NI1, .07}, {SP_MG1, .03},
        {SP_SI1, .05}, {SP_MN1, .03}, {SP_V1, .03}, {SP_CO1, .03},
        {SP_SC2, .03}, {SP_NA1, .01}, {SP_BA2, .02}};
    double acc = 0;
    size_t n = sizeof t / sizeof t[0];
    for (size_t i = 0; i < n; i++) {
        acc += t[i].w;
        if (u < acc || i == n - 1) {
            *ion = SPECIES[t[i].sp].stage;
            return t[i].sp;
        }
    }
    return SP_FE1;
}

#define NWEAK 3500
#define WEAK_LO 3400.0
#define WEAK_HI 10050.0

static int add_weak(vec *l, ind_rng *r)
{
    /* density ~ lambda^-2.5 (more lines in the blue): inverse CDF of
     * lambda^-1.5 */
    double a = pow(WEAK_LO, -1.5), b = pow(WEAK_HI, -1.5);
    for (int i = 0; i < NWEAK; i++) {
        ind_line x = {0};
        x.lam = pow(a - ind_rng_uniform(r) * (a - b), -1.0 / 1.5);
        int ion;
        x.species = pick_species(ind_rng_uniform(r), &ion);
        x.chi = (float)(ion ? 1.5 + 3.0 * ind_rng_uniform(r)
                            : 5.0 * ind_rng_uniform(r));
        double lw = -3.3 + 2.8 * pow(ind_rng_uniform(r), 1.6) +
                    0.4 * log10(5000.0 / x.lam);
        x.logw0 = (float)lw;
        x.grad = (float)rate_to_hwhm(pow(10.0, 7.6 + 0.8 * ind_rng_uniform(r)),
                                     x.lam);
        x.gvdw = (float)rate_to_hwhm(pow(10.0, 8.4 + 0.7 * ind_rng_uniform(r)),
                                     x.lam);
        x.half = lw < -1.5 ? 1.5f : 3.0f;
        if (push(l, &x))
            return -1;
    }
    return 0;
}

/* One molecular band: two branches of lines whose spacing grows as j^2 away
 * from the head (a Fortrat parabola seen from one side), with a thermal
 * rotational population (2j+1) exp(-j(j+1)/J0^2) at the Sun; dir = +1 for a
 * band degraded to the red, -1 to the blue.  logb: log10 of the summed W0
 * of the band at the Sun. */
static int add_band(vec *l, ind_rng *r, int sp, double head, int dir,
                    double extent, int j0, double logb)
{
    int nj = 3 * j0;
    double c = extent / ((double)(nj + 2) * (nj + 2) + 10.0), sum = 0.0;
    for (int j = 1; j <= nj; j++)
        sum += 2.0 * (2 * j + 1) * exp(-(double)j * (j + 1) / (j0 * j0));
    for (int br = 0; br < 2; br++)
        for (int j = 1; j <= nj; j++) {
            double pos = br ? (j + 2.0) * (j + 2.0) + 10.0 : (double)j * j;
            pos += 0.3 * (ind_rng_uniform(r) - 0.5) * (2 * j + 1);
            double sj = (2 * j + 1) * exp(-(double)j * (j + 1) / (j0 * j0));
            ind_line x = {0};
            x.lam = head + dir * c * pos;
            x.logw0 = (float)(logb + log10(sj / sum));
            x.grad = (float)rate_to_hwhm(1e8, x.lam);
            x.gvdw = (float)rate_to_hwhm(pow(10.0, 8.5), x.lam);
            x.half = 0.8f;
            x.rotj = (float)j;
            x.rotj0 = (float)j0;
            x.species = sp;
            if (push(l, &x))
                return -1;
        }
    return 0;
}

static int add_molecules(vec *l, ind_rng *r)
{
    static const struct { int sp; double head; int dir; double ext;
                          int j0; double b; } t[] = {
        {SP_CH, 4325.0, -1, 35.0, 15, 15.0},   /* G band */
        {SP_CN, 3883.5, -1, 30.0, 25, 8.0},    /* CN violet */
        {SP_CN, 4216.0, -1, 30.0, 25, 3.0},
        {SP_CN, 7875.0, +1, 100.0, 30, 1.0},   /* CN red */
        {SP_CN, 9150.0, +1, 100.0, 30, 0.5},
        {SP_MGH, 5211.0, -1, 60.0, 20, 2.0},
        {SP_MGH, 4780.0, -1, 40.0, 20, 1.0},
        {SP_CAH, 6385.0, +1, 60.0, 20, 0.3},
        {SP_CAH, 6830.0, +1, 60.0, 20, 0.3},
        {SP_TIO, 4955.0, +1, 100.0, 40, 0.002},
        {SP_TIO, 5168.0, +1, 100.0, 40, 0.002},
        {SP_TIO, 5450.0, +1, 100.0, 40, 0.002},
        {SP_TIO, 5850.0, +1, 100.0, 40, 0.002},
        {SP_TIO, 6160.0, +1, 100.0, 40, 0.002},
        {SP_TIO, 6652.0, +1, 100.0, 40, 0.002},
        {SP_TIO, 7055.0, +1, 100.0, 40, 0.003},
        {SP_TIO, 7590.0, +1, 100.0, 40, 0.002},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (add_band(l, r, t[i].sp, t[i].head, t[i].dir, t[i].ext, t[i].j0,
                     log10(t[i].b)))
            return -1;
    return 0;
}

static int by_lambda(const void *a, const void *b)
{
    double x = ((const ind_line *)a)->lam, y = ((const ind_line *)b)->lam;
    return (x > y) - (x < y);
}

int ind_linelist_build(uint64_t seed, ind_linelist *ll, ind_err *e)
{
    vec l = {0};
    ind_rng r;
    ind_rng_seed(&r, seed, 0x4c494e45ULL /* "LINE" */, 0);
    if (add_hydrogen(&l) || add_metals_strong(&l) || add_weak(&l, &r) ||
        add_molecules(&l, &r)) {
        free(l.v);
        return ind_fail(e, "line list: out of memory");
    }
    qsort(l.v, l.n, sizeof *l.v, by_lambda);
    ll->line = l.v;
    ll->n = l.n;
    return 0;
}

void ind_linelist_free(ind_linelist *ll)
{
    free(ll->line);
    ll->line = NULL;
    ll->n = 0;
}
