/* test_interp_err.c — known answers of the template-interpolation error
 * term of the parameter errors (docs/output-format.md, "Interpolation
 * error"):
 *
 *  A. the error template (rvfit_interp_error_stencil) of a library whose
 *     flux is a known polynomial of the parameters equals interpolant minus
 *     true flux exactly: quadratic flux, multilinear interpolation, an
 *     uneven log10 TEFF axis, and an [alpha/Fe] axis of two nodes through
 *     the identity [alpha/H] = [Fe/H] + [alpha/Fe]; cubic flux along a
 *     Catmull-Rom (cubic) axis; zero on a node; no estimate for a two-node
 *     axis without that identity.
 *  B. through rvfit_fit_batch with a backend whose -2 ln L is a weighted
 *     distance between noise-free data and the interpolated template
 *     (chisq and chisq_st), flux quadratic in LOGG and in [Fe/H]: the
 *     reported <AXIS>_ERR_INTERP equals max(|sum_a G_ja|, |G_j.|) with
 *     G_ja = (H^-1 J^T W e_a)_j computed here from the library's vectors,
 *     and where the two axes' shifts add it equals the actual shift of
 *     the noise-free least-squares optimum from the truth (the error means
 *     what it says; the quadrature sum alone is 26-29 % short there);
 *     where they cancel, the quadrature floor lies above it; errors
 *     combine as sqrt(stat^2 + interp^2), and scale_errors scales only
 *     the first;
 *     for an optimum within h of a node, whose Hessian stencil (and with
 *     it the template) sits h from the node inside the cell, the term is
 *     the same expression with e taken there (fit/stage_hessian.c, fit/err_interp.c;
 *     the forward difference of B is then not at a minimum of -ln L).
 *  C. pca, whose backend holds a mean and components: on part B's
 *     library, which 4 components rebuild exactly, its fits and
 *     <AXIS>_ERR_INTERP equal multilinear's (the error templates turned
 *     into stencils over the components, rvfit_interp_to_vectors).
 */
#include <string.h>

#include "rvfit/fit.h"
#include "rvfit/interp.h"
#include "rvfit/library.h"
#include "rvfit/library_io.h"
#include "testutil.h"

/* ---- A: error templates of a polynomial library ---------------------- */

#define NPA 6
enum { AT, AG, AF, AA, NAX };
static const int nn_a[NAX] = {7, 5, 6, 2};

/* Flux of pixel p at scaled coordinates x: quadratic in each axis, an
 * [alpha/H] = [Fe/H] + [alpha/Fe] term, and (cubic != 0) a cubic [Fe/H]
 * term, (cubic == 2) a quartic one too. */
static double poly(const double *x, int p, int cubic)
{
    double u0 = (x[AT] - 3.7) / 0.04, u1 = x[AG] - 3, u2 = x[AF] + 0.75;
    double ah = x[AF] + x[AA], s = sin(1.7 * p + 0.3);
    double f = 1 + 0.02 * u0 * s + 0.03 * u1 + 0.04 * u2 * cos(p) +
               0.015 * u0 * u0 * cos(2.1 * p) - 0.01 * u1 * u1 * s +
               0.03 * u2 * u2 * (1 + s) + 0.05 * u0 * u1 + 0.2 * ah * ah * s;
    return f + (cubic ? 0.05 * u2 * u2 * u2 * cos(0.7 * p) : 0) +
           (cubic == 2 ? 0.04 * u2 * u2 * u2 * u2 * sin(0.9 * p + 1) : 0);
}

static void poly_library(rvfit_library *L, float *flux, uint8_t *ex,
                         int cubic)
{
    static const char *names[NAX] = {"TEFF", "LOGG", "FEH", "ALPHAFE"};
    memset(L, 0, sizeof *L);
    L->nparam = NAX;
    L->nmodel = 1;
    for (int a = 0; a < NAX; a++) {
        rvfit_axis *ax = &L->axis[a];
        snprintf(ax->name, sizeof ax->name, "%s", names[a]);
        ax->scale = a == AT ? RVFIT_SCALE_LOG10 : RVFIT_SCALE_LINEAR;
        ax->nnode = nn_a[a];
        for (int k = 0; k < nn_a[a]; k++)
            ax->node[k] = a == AT   ? log10(4000.0 + 500.0 * k)
                          : a == AG ? 1.0 + k
                          : a == AF ? -2.0 + 0.5 * k
                                    : 0.4 * k;
        L->nmodel *= (size_t)nn_a[a];
    }
    L->exists = ex;
    L->narm = 1;
    snprintf(L->arm[0].name, sizeof L->arm[0].name, "B");
    L->arm[0].npix = NPA;
    L->arm[0].flux = flux;
    L->arm[0].lnl0 = 8.5;
    L->arm[0].dlnl = 1e-4;
    for (size_t m = 0; m < L->nmodel; m++) {
        double x[NAX];
        size_t r = m;
        for (int a = NAX - 1; a >= 0; a--) {
            x[a] = L->axis[a].node[r % (size_t)nn_a[a]];
            r /= (size_t)nn_a[a];
        }
        ex[m] = 1;
        for (int p = 0; p < NPA; p++)
            flux[m * NPA + p] = (float)poly(x, p, cubic);
    }
}

/* sum_e w_e * vector idx_e, pixel p. */
static double combo(const rvfit_library *L, const uint32_t *idx,
                    const double *w, int n, int p)
{
    double s = 0;
    for (int e = 0; e < n; e++)
        s += w[e] * L->arm[0].flux[idx[e] * L->arm[0].npix + (size_t)p];
    return s;
}

/* Largest |sum_a e_a - (interpolant - true)| over points of interior cells
 * (cubic) or all cells, and the largest |interpolant - true| itself. */
static void check_templates(const rvfit_interpolator *ip, int cubic,
                            const char *what)
{
    const rvfit_library *L = ip->lib;
    double worst = 0, size = 0;
    uint64_t seed = 12345;
    for (int it = 0; it < 400; it++) {
        double x[NAX];
        for (int a = 0; a < NAX; a++) {
            const rvfit_axis *ax = &L->axis[a];
            double lo = ax->node[0], hi = ax->node[ax->nnode - 1];
            if (cubic && a == AF) /* Catmull-Rom's interior cells */
                lo = ax->node[1], hi = ax->node[ax->nnode - 2];
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x[a] = lo + (hi - lo) * (double)(seed >> 11) * 0x1.0p-53;
        }
        uint32_t idx[RVFIT_MAX_STENCIL], ei[RVFIT_MAX_STENCIL];
        double w[RVFIT_MAX_STENCIL], ew[RVFIT_MAX_STENCIL], pen;
        int n = rvfit_interp_stencil(ip, x, idx, w, &pen);
        for (int p = 0; p < NPA; p++) {
            double est = 0;
            for (int a = 0; a < NAX; a++) {
                int ne = rvfit_interp_error_stencil(ip, x, a, ei, ew);
                est += combo(L, ei, ew, ne, p);
            }
            double act = combo(L, idx, w, n, p) - poly(x, p, cubic);
            worst = fmax(worst, fabs(est - act));
            size = fmax(size, fabs(act));
        }
    }
    printf("%s: interpolation error up to %.3g, template off by %.2g\n",
           what, size, worst);
    /* float storage of the flux: 6e-8 relative, amplified by the divided
     * differences */
    CHECK_MSG(size > 0.005 && worst < 2e-4 * size, "%s: template off by %g "
              "of an error %g", what, worst, size);
}

static void part_a(void)
{
    static float flux[7 * 5 * 6 * 2 * NPA];
    static uint8_t ex[7 * 5 * 6 * 2];
    rvfit_library L;
    rvfit_interpolator ip;
    rvfit_err err = {0};
    poly_library(&L, flux, ex, 0);
    CHECK(rvfit_interp_open(&ip, &L, NULL, 0, &err) == RVFIT_OK);
    check_templates(&ip, 0, "multilinear, quadratic flux");
    /* On a node of every axis: no error, no template. */
    double x[NAX] = {L.axis[AT].node[3], 2.0, -1.0, 0.4};
    uint32_t ei[RVFIT_MAX_STENCIL];
    double ew[RVFIT_MAX_STENCIL];
    for (int a = 0; a < NAX; a++)
        CHECK_MSG(rvfit_interp_error_stencil(&ip, x, a, ei, ew) == 0,
                  "axis %d: a template on a node", a);
    /* A two-node axis without the [alpha/H] identity has no estimate. */
    x[AA] = 0.2;
    CHECK(rvfit_interp_error_stencil(&ip, x, AA, ei, ew) > 0);
    snprintf(L.axis[AA].name, sizeof L.axis[AA].name, "XAXIS");
    CHECK(rvfit_interp_error_stencil(&ip, x, AA, ei, ew) == 0);
    rvfit_interp_close(&ip);

    poly_library(&L, flux, ex, 1);
    CHECK(rvfit_library_set_cubic(&L, "FEH", &err) == RVFIT_OK);
    CHECK(rvfit_interp_open(&ip, &L, NULL, 0, &err) == RVFIT_OK);
    CHECK(!strcmp(rvfit_interp_name(&ip), "cubic"));
    check_templates(&ip, 1, "cubic FEH, cubic flux");
    rvfit_interp_close(&ip);
    /* pca interpolates its coefficients as the grid does its models: the
     * same Catmull-Rom term along FEH (it had the linear one, which
     * vanishes for Catmull-Rom weights) */
    CHECK(rvfit_interp_open_pca(&ip, &L, 0, 1e-6, &err) == RVFIT_OK);
    check_templates(&ip, 1, "pca, cubic FEH coefficients, cubic flux");
    rvfit_interp_close(&ip);
    /* quartic flux: the f'''' term too (without it the template misses
     * the whole error at mid-cell) */
    poly_library(&L, flux, ex, 2);
    CHECK(rvfit_library_set_cubic(&L, "FEH", &err) == RVFIT_OK);
    CHECK(rvfit_interp_open(&ip, &L, NULL, 0, &err) == RVFIT_OK);
    check_templates(&ip, 2, "cubic FEH, quartic flux");
    rvfit_interp_close(&ip);
}

/* ---- B: the error term through the fit driver ------------------------ */

#define NPB 64
#define NG 5 /* LOGG 1..5   */
#define NF 6 /* FEH -2..0.5 */
#define W_IVAR 1e8

enum { S_MID, S_BAD, S_NEAR, NSPEC };
static const double truth_b[NSPEC][2] = {
    {2.37, -0.75}, {3.0, -0.5}, {2.92, -0.75}};

typedef struct bstate {
    const rvfit_library *lib;
    double data[NSPEC][NPB];
    uint64_t points, calls;
} bstate;

/* The LOGG curvature of a part-B library: its size and the phase of its
 * pixel pattern decide whether the shifts the two axes' terms cause add
 * (COHERENT) or cancel (FLOOR). */
typedef struct bcase {
    const char *name;
    double amp, phase;
} bcase;
static const bcase COHERENT = {"coherent", 0.3, 1.5};
static const bcase FLOOR = {"cancelling", 0.3, 3.0};

static double bflux(const bcase *bc, double g, double f, int p)
{
    double b1 = 0.05 * sin(0.31 * p), b2 = 0.05 * sin(0.31 * p + 0.6);
    double c = 0.18 * cos(0.47 * p) + 0.09;
    double cg = bc->amp * (0.06 * cos(0.47 * p + bc->phase) + 0.03);
    return 1 + b1 * (g - 3) + b2 * (f + 0.75) +
           0.5 * c * (f + 0.75) * (f + 0.75) + 0.5 * cg * (g - 3) * (g - 3);
}

static double m2lnl_b(const bstate *s, const rvfit_point *p,
                      const uint32_t *idx, const double *w, int n,
                      double pen)
{
    double q = pow((p->v - 12.0) / 2.0, 2) + pen;
    for (int k = 0; k < NPB; k++) {
        double t = combo(s->lib, idx, w, n, k);
        q += W_IVAR * pow(s->data[p->spec][k] - t, 2);
    }
    return q;
}

/* -2 ln L with the stencils of the table sc, or (sc NULL) the grid's
 * from theta. */
static int b_chisq(void *st, size_t n, const rvfit_point *pts,
                   const rvfit_stencils *sc, rvfit_chisq_out *out,
                   rvfit_err *err)
{
    bstate *s = st;
    int rc = sc ? rvfit_stencils_check(s->lib, n, sc, err) : RVFIT_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t c[RVFIT_MAX_CORNERS];
        uint32_t idx[RVFIT_MAX_CORNERS];
        double w[RVFIT_MAX_CORNERS], pen = 0;
        if (sc) {
            uint32_t o = sc->off[i];
            out->m2lnl[i] = m2lnl_b(s, &pts[i], sc->idx + o, sc->w + o,
                                    (int)(sc->off[i + 1] - o), sc->pen[i]);
            continue;
        }
        int k = rvfit_library_stencil(s->lib, pts[i].theta, c, w, &pen);
        for (int e = 0; e < k; e++)
            idx[e] = (uint32_t)c[e];
        out->m2lnl[i] = m2lnl_b(s, &pts[i], idx, w, k, pen);
        /* chi^2 as a pipeline would see it: an excess over the noise,
         * so that CHISQ_RED is well above 1 */
        if (out->chisq)
            out->chisq[i] = 500 + out->m2lnl[i] +
                            (pts[i].flags & RVFIT_PT_CONTINUUM ? 1e4 : 0);
    }
    s->points += n, s->calls++;
    return rc;
}

static int b_vscan(void *st, size_t nq, const rvfit_point *base,
                   const rvfit_stencils *sc, size_t nvel, const double *vel,
                   double *m, rvfit_err *err)
{
    for (size_t q = 0; q < nq; q++)
        for (size_t k = 0; k < nvel; k++) {
            rvfit_point p = base[q];
            p.v = vel[q * nvel + k];
            rvfit_chisq_out out = {&m[q * nvel + k], NULL};
            if (!sc) {
                b_chisq(st, 1, &p, NULL, &out, err);
                continue;
            }
            uint32_t o = sc->off[q]; /* base q's stencil, at every v */
            m[q * nvel + k] = m2lnl_b(st, &p, sc->idx + o, sc->w + o,
                                      (int)(sc->off[q + 1] - o),
                                      sc->pen[q]);
        }
    return RVFIT_OK;
}

static int b_models(void *st, size_t n, const rvfit_point *pts,
                    const rvfit_stencils *sc, float *const *model,
                    float *const *cont, rvfit_err *err)
{
    (void)st, (void)n, (void)pts, (void)sc, (void)model, (void)cont;
    (void)err;
    return RVFIT_OK;
}

static void b_counters(void *st, rvfit_counters *c)
{
    bstate *s = st;
    c->points = s->points, c->calls = s->calls, c->seconds = 0;
}

static void b_library(const bcase *bc, rvfit_library *L, float *flux,
                      uint8_t *ex)
{
    memset(L, 0, sizeof *L);
    L->nparam = 2;
    snprintf(L->axis[0].name, sizeof L->axis[0].name, "LOGG");
    snprintf(L->axis[1].name, sizeof L->axis[1].name, "FEH");
    L->axis[0].nnode = NG, L->axis[1].nnode = NF;
    for (int k = 0; k < NG; k++)
        L->axis[0].node[k] = 1.0 + k;
    for (int k = 0; k < NF; k++)
        L->axis[1].node[k] = -2.0 + 0.5 * k;
    L->nmodel = NG * NF;
    L->exists = ex;
    L->narm = 1;
    snprintf(L->arm[0].name, sizeof L->arm[0].name, "B");
    L->arm[0].npix = NPB;
    L->arm[0].flux = flux;
    L->arm[0].lnl0 = 8.5;
    L->arm[0].dlnl = 1e-4;
    for (int i = 0; i < NG; i++)
        for (int k = 0; k < NF; k++) {
            ex[i * NF + k] = 1;
            for (int p = 0; p < NPB; p++)
                flux[(i * NF + k) * NPB + p] = (float)bflux(bc,
                    L->axis[0].node[i], L->axis[1].node[k], p);
        }
}

/* Inside the cell of theta the interpolant is affine (the flux is a sum of
 * a LOGG and a FEH part): its slopes J[2][NPB] from the stored vectors,
 * and the error templates e[a] = 1/2 (x - x_k)(x_k+1 - x) f''_a with f''
 * the second divided difference of the stored vectors along axis a. */
static double d2(const float *v, int stride, int c, int p, double h)
{
    return (v[(c + 1) * stride * NPB + p] - 2 * v[c * stride * NPB + p] +
            v[(c - 1) * stride * NPB + p]) / (h * h);
}

static void cell_vectors(const rvfit_library *L, const double *th,
                         double J[2][NPB], double e[2][NPB])
{
    int g = (int)floor(th[0] - 1), f = (int)floor((th[1] + 2) / 0.5);
    g = g > NG - 2 ? NG - 2 : g, f = f > NF - 2 ? NF - 2 : f;
    const float *v = L->arm[0].flux;
    int c = f < 1 ? 1 : f, cg = g < 1 ? 1 : g; /* curvature windows */
    double xl = L->axis[1].node[f], xr = L->axis[1].node[f + 1];
    double gl = L->axis[0].node[g], gr = L->axis[0].node[g + 1];
    double t = (th[1] - xl) / 0.5, u = th[0] - gl;
    for (int p = 0; p < NPB; p++) {
        double t00 = v[(g * NF + f) * NPB + p];
        J[0][p] = v[((g + 1) * NF + f) * NPB + p] - t00;
        J[1][p] = (v[(g * NF + f + 1) * NPB + p] - t00) / 0.5;
        const float *row = v + (size_t)g * NF * NPB, *col = v + f * NPB;
        double ff = (1 - t) * d2(row, 1, c, p, 0.5) +
                    t * d2(row, 1, c + 1 > NF - 2 ? c : c + 1, p, 0.5);
        double fg = (1 - u) * d2(col, NF, cg, p, 1.0) +
                    u * d2(col, NF, cg + 1 > NG - 2 ? cg : cg + 1, p, 1.0);
        e[1][p] = 0.5 * (th[1] - xl) * (xr - th[1]) * ff;
        e[0][p] = 0.5 * (th[0] - gl) * (gr - th[0]) * fg;
    }
}

/* The interpolation error the fit should report for axis j from the
 * shifts G[j][a] = (H^-1 W J^T e_a)_j: the axes' terms are one error
 * vector (their signed sum), with their quadrature sum as a floor. */
static double expected_err(const double G[2][2], int j)
{
    return fmax(fabs(G[j][0] + G[j][1]), hypot(G[j][0], G[j][1]));
}

/* H = W J^T J (Hessian of -ln L), its inverse, and G = H^-1 W J^T e. */
static void solve2(double J[2][NPB], const double *r, double *hinv,
                   double *g)
{
    double H[4] = {0}, b[2] = {0};
    for (int p = 0; p < NPB; p++) {
        for (int j = 0; j < 2; j++) {
            b[j] += W_IVAR * J[j][p] * r[p];
            for (int l = 0; l < 2; l++)
                H[2 * j + l] += W_IVAR * J[j][p] * J[l][p];
        }
    }
    double det = H[0] * H[3] - H[1] * H[2];
    hinv[0] = H[3] / det, hinv[3] = H[0] / det;
    hinv[1] = hinv[2] = -H[1] / det;
    g[0] = hinv[0] * b[0] + hinv[1] * b[1];
    g[1] = hinv[2] * b[0] + hinv[3] * b[1];
}

static int fit_b(bstate *s, const rvfit_fit_opts *o, rvfit_result *res)
{
    rvfit_backend_ops ops = {.size = sizeof ops,
                             .version = RVFIT_BACKEND_OPS_VERSION,
                             .caps = RVFIT_BACKEND_CAP_GRID |
                                     RVFIT_BACKEND_CAP_STENCILS,
                             .chisq = b_chisq, .vscan = b_vscan,
                             .models = b_models, .counters = b_counters};
    rvfit_backend be;
    memset(&be, 0, sizeof be);
    be.state = s, be.ops = &ops;
    snprintf(be.name, sizeof be.name, "stencil-analytic");
    rvfit_arm_info ai = {"B", NPB, RVFIT_RES_NONE, 0, 0};
    rvfit_batch b;
    rvfit_err err = {0};
    if (rvfit_batch_alloc(&b, 1, &ai, NSPEC, &err))
        return 1;
    b.nspec = NSPEC;
    for (size_t i = 0; i < NPB; i++)
        b.arm[0].wave[i] = 5000 + i;
    for (size_t k = 0; k < NSPEC; k++) {
        for (size_t i = 0; i < NPB; i++)
            b.arm[0].flux[k * NPB + i] = 1, b.arm[0].ivar[k * NPB + i] = 1;
        b.snr[k] = 100;
        b.flags[k] = k == S_BAD ? RVFIT_SPEC_BAD : 0;
        b.index[k] = k;
    }
    rvfit_profile prof;
    memset(&prof, 0, sizeof prof);
    rvfit_host host = tu_host(1);
    int rc = rvfit_fit_batch(&be, o->interp->lib, &b, o, res, NULL, &prof,
                             &host,
                             &err);
    CHECK_MSG(rc == RVFIT_OK, "fit: %s", err.msg);
    rvfit_batch_free(&b);
    return rc;
}

/* G[j][a] = (H^-1 W J^T e_a)_j at theta, and H^-1. */
static void shifts(const rvfit_library *L, const double *th, double G[2][2],
                   double *hinv)
{
    double J[2][NPB], e[2][NPB], g[2];
    cell_vectors(L, th, J, e);
    for (int a = 0; a < 2; a++) {
        solve2(J, e[a], hinv, g);
        G[0][a] = g[0], G[1][a] = g[1];
    }
}

static void check_mid(const bcase *bc, const rvfit_library *L,
                      const rvfit_result *r)
{
    const double *tr = truth_b[S_MID];
    double th[2] = {r->param[0], r->param[1]}, J[2][NPB], e[2][NPB];
    double hinv[4], G[2][2], r0[NPB], sh[2];
    /* The error the fit reports, from the vectors at its optimum. */
    shifts(L, th, G, hinv);
    /* The noise-free least-squares optimum: theta_true + H^-1 W J^T
     * (data - interpolant(theta_true)), exact for an affine interpolant. */
    cell_vectors(L, tr, J, e);
    for (int p = 0; p < NPB; p++) {
        double fl = bflux(bc, tr[0], tr[1], p);
        uint32_t idx[4];
        double w[4], pen;
        size_t c[4];
        int n = rvfit_library_stencil(L, tr, c, w, &pen);
        for (int k = 0; k < n; k++)
            idx[k] = (uint32_t)c[k];
        r0[p] = fl - combo(L, idx, w, n, p);
    }
    solve2(J, r0, hinv, sh);
    for (int j = 0; j < 2; j++) {
        double stat = sqrt(hinv[3 * j]), want = expected_err(G, j);
        printf("%s, %s: fit %.5f, true %.5f, shift of the noise-free optimum "
               "%+.5f; ERR_INTERP %.5f (expected %.5f; shifts from the LOGG "
               "and FEH terms %+.5f %+.5f), statistical %.5f, ERR %.5f\n",
               bc->name, j ? "FEH " : "LOGG", r->param[j], tr[j], sh[j],
               r->param_err_interp[j], want, G[j][0], G[j][1], stat,
               r->param_err[j]);
        /* float storage of the vectors: 1e-5 of the curvature */
        CHECK_MSG(fabs(r->param_err_interp[j] / want - 1) < 1e-4,
                  "axis %d: ERR_INTERP %g, expected %g", j,
                  r->param_err_interp[j], want);
        /* It says what the error is: the actual shift, to first order,
         * the two axes' terms adding with their signs.  Where they cancel,
         * the signed sum still predicts the shift (to 9 %: the second
         * order no longer small beside it) and the quadrature floor lies
         * well above both. */
        double sum = fabs(G[j][0] + G[j][1]), q = hypot(G[j][0], G[j][1]);
        if (bc == &COHERENT)
            CHECK_MSG(sum > 1.2 * q &&
                          fabs(fabs(sh[j]) / r->param_err_interp[j] - 1) <
                              0.03,
                      "%s, axis %d: shift %g vs ERR_INTERP %g", bc->name, j,
                      sh[j], r->param_err_interp[j]);
        else
            CHECK_MSG(q > 1.5 * sum && fabs(fabs(sh[j]) / sum - 1) < 0.15 &&
                          r->param_err_interp[j] > 1.5 * fabs(sh[j]),
                      "%s, axis %d: shift %g, ERR_INTERP %g", bc->name, j,
                      sh[j], r->param_err_interp[j]);
        CHECK_MSG(fabs(sh[j]) > 3 * stat, "axis %d: shift %g not above "
                  "the statistical error %g", j, sh[j], stat);
        CHECK_MSG(fabs(r->param_err[j] -
                       sqrt(stat * stat + pow(r->param_err_interp[j], 2))) <
                      1e-6 * r->param_err[j],
                  "axis %d: ERR %g is not sqrt(stat^2 + interp^2)", j,
                  r->param_err[j]);
    }
}

/* LOGG 0.08 below the node 3: the stencil centre is 3 - h = 2.75 (h =
 * 0.25 node spacings of 1), FEH mid-cell stays at the optimum. */
static void check_near(const rvfit_library *L, const rvfit_result *r)
{
    double th[2] = {2.75, r->param[1]}, hinv[4], G[2][2];
    CHECK_MSG(r->param[0] > 2.75 && r->param[0] < 3.0 &&
                  fabs(r->param[1] + 0.75) < 0.125,
              "near-node case: fit %g %g", r->param[0], r->param[1]);
    shifts(L, th, G, hinv);
    for (int j = 0; j < 2; j++) {
        double want = expected_err(G, j);
        printf("near node, %s: ERR_INTERP %.5f (expected %.5f)\n",
               j ? "FEH " : "LOGG", r->param_err_interp[j], want);
        CHECK_MSG(fabs(r->param_err_interp[j] / want - 1) < 1e-4,
                  "near node, axis %d: ERR_INTERP %g, expected %g", j,
                  r->param_err_interp[j], want);
    }
}

static void part_b(const bcase *bc)
{
    static float flux[NG * NF * NPB];
    static uint8_t ex[NG * NF];
    rvfit_library L;
    b_library(bc, &L, flux, ex);
    bstate s = {.lib = &L};
    for (int k = 0; k < NSPEC; k++)
        for (int p = 0; p < NPB; p++)
            s.data[k][p] = bflux(bc, truth_b[k][0], truth_b[k][1], p);
    rvfit_interpolator ip;
    rvfit_err err = {0};
    CHECK(rvfit_interp_open(&ip, &L, NULL, 0, &err) == RVFIT_OK);
    rvfit_fit_opts o = {.vmin = -1000, .vmax = 1000, .ccf_vstep = 20,
                        .vsini_max = 500, .fit_vsini = 0, .max_iter = 4000,
                        .model = {1, RVFIT_BASIS_CHEB}, .interp = &ip,
                        .interp_errors = 1};
    rvfit_result res[NSPEC], res0[NSPEC], res1[NSPEC];
    if (fit_b(&s, &o, res))
        return;
    check_mid(bc, &L, &res[S_MID]);
    check_near(&L, &res[S_NEAR]);
    CHECK(isnan(res[S_BAD].param_err_interp[0]));
    /* Off: NaN, and the statistical error alone. */
    o.interp_errors = 0;
    fit_b(&s, &o, res0);
    CHECK(isnan(res0[S_MID].param_err_interp[1]));
    double stat = sqrt(pow(res[S_MID].param_err[1], 2) -
                       pow(res[S_MID].param_err_interp[1], 2));
    CHECK_NEAR(res0[S_MID].param_err[1], stat, 1e-6 * stat);
    /* scale_errors: sqrt(CHISQ_RED) times the statistical part only. */
    o.interp_errors = 1, o.scale_errors = 1;
    fit_b(&s, &o, res1);
    for (int j = 0; j < 2; j++) {
        const rvfit_result *a = &res[S_MID], *b = &res1[S_MID];
        double k = sqrt(b->chisq_red), e = a->param_err_interp[j];
        double st = sqrt(a->param_err[j] * a->param_err[j] - e * e);
        CHECK_MSG(fabs(b->param_err[j] - sqrt(k * k * st * st + e * e)) <
                      1e-9 * b->param_err[j] && fabs(k - 1) > 0.01,
                  "axis %d: scaled ERR %g, k %g", j, b->param_err[j], k);
        CHECK(b->param_err_interp[j] == e);
    }
    rvfit_interp_close(&ip);
}

/* ---- C: pca, whose backend holds components --------------------------- */

/* The part-B library's flux spans 5 pixel patterns, so a pca of it with
 * 4 components rebuilds every model to float rounding, and the pca
 * interpolator's template is multilinear's.  Its error templates, over
 * the models, reach the backend turned into stencils over the mean and
 * components (rvfit_interp_to_vectors): the fit must report the
 * interpolation term multilinear reports, which part B checked against
 * the shift it predicts (before, pca had none: NaN). */
static void part_c(void)
{
    static float flux[NG * NF * NPB];
    static uint8_t ex[NG * NF];
    rvfit_library L;
    b_library(&COHERENT, &L, flux, ex);
    rvfit_interpolator ml, pca;
    rvfit_err err = {0};
    CHECK(rvfit_interp_open(&ml, &L, NULL, 0, &err) == RVFIT_OK);
    CHECK_MSG(rvfit_interp_open_pca(&pca, &L, 4, 0, &err) == RVFIT_OK,
              "pca: %s", err.msg);
    if (rvfit_interp_pca_k(&pca) != 4)
        return;
    printf("pca of the part-B library: rms %.2g\n",
           rvfit_interp_pca_rms(&pca, 0));
    CHECK(rvfit_interp_pca_rms(&pca, 0) < 1e-6);
    bstate s_ml = {.lib = &L}, s_pca = {.lib = rvfit_interp_vectors(&pca)};
    for (int k = 0; k < NSPEC; k++)
        for (int p = 0; p < NPB; p++)
            s_ml.data[k][p] = s_pca.data[k][p] =
                bflux(&COHERENT, truth_b[k][0], truth_b[k][1], p);
    rvfit_fit_opts o = {.vmin = -1000, .vmax = 1000, .ccf_vstep = 20,
                        .vsini_max = 500, .fit_vsini = 0, .max_iter = 4000,
                        .model = {1, RVFIT_BASIS_CHEB}, .interp = &ml,
                        .interp_errors = 1};
    rvfit_result rm[NSPEC], rp[NSPEC];
    int rc = fit_b(&s_ml, &o, rm);
    o.interp = &pca;
    rc = rc ? rc : fit_b(&s_pca, &o, rp);
    for (int i = 0; i < NSPEC && !rc; i++) {
        if (i == S_BAD)
            continue;
        for (int j = 0; j < 2; j++) {
            printf("pca vs multilinear, spectrum %d axis %d: %.6f / %.6f, "
                   "ERR_INTERP %.6g / %.6g\n", i, j, rp[i].param[j],
                   rm[i].param[j], rp[i].param_err_interp[j],
                   rm[i].param_err_interp[j]);
            CHECK_MSG(fabs(rp[i].param[j] - rm[i].param[j]) < 1e-5,
                      "spectrum %d axis %d: %g vs %g", i, j, rp[i].param[j],
                      rm[i].param[j]);
            CHECK_MSG(fabs(rp[i].param_err_interp[j] /
                           rm[i].param_err_interp[j] - 1) < 1e-3,
                      "spectrum %d axis %d: pca ERR_INTERP %g, multilinear "
                      "%g", i, j, rp[i].param_err_interp[j],
                      rm[i].param_err_interp[j]);
        }
    }
    rvfit_interp_close(&pca);
    rvfit_interp_close(&ml);
}

int main(void)
{
    part_a();
    part_b(&COHERENT);
    part_b(&FLOOR);
    part_c();
    return tu_finish("test_interp_err");
}
