/* backend_equiv.c — see backend_equiv.h.  Included by the equivalence
 * tests (one translation unit per test executable): random problems, then
 * the suite every backend runs (be_equiv_suite). */
#include "backend_equiv.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rvfit/interp.h"
#include "rvfit/library_io.h"
#include "rvfit/physics.h"
#include "testutil.h"

double be_unif(uint64_t *rng)
{
    uint64_t x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (double)((x * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

/* be_open from directory dir (NULL: "."). */
static int be_open_in(be_backend *b, const char *dir, const char *name,
                      const rvfit_host *host, const rvfit_kv *opts, int nopt,
                      rvfit_err *err)
{
    char path[4096];
    memset(b, 0, sizeof *b);
    snprintf(path, sizeof path, "%s/rvfit_backend_%s.so", dir ? dir : ".",
             name);
    b->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!b->dl)
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN, "dlopen %s: %s", path,
                             dlerror());
    rvfit_plugin_entry_fn entry;
    void *sym = dlsym(b->dl, RVFIT_PLUGIN_ENTRY_NAME);
    memcpy(&entry, &sym, sizeof entry);
    const rvfit_plugin *pl = sym ? entry() : NULL;
    if (!pl || pl->kind != RVFIT_PLUGIN_BACKEND || strcmp(pl->name, name) ||
        pl->abi_major != RVFIT_ABI_MAJOR) {
        be_close(b);
        return rvfit_err_set(err, RVFIT_ERR_PLUGIN, "%s: bad descriptor",
                             path);
    }
    b->ops = pl->ops;
    int rc = b->ops->open(host, opts, nopt, &b->st, err);
    if (rc != RVFIT_OK) {
        b->st = NULL;
        be_close(b);
    }
    return rc;
}

int be_open(be_backend *b, const char *name, const rvfit_host *host,
            const rvfit_kv *opts, int nopt, rvfit_err *err)
{
    return be_open_in(b, getenv("RVFIT_PLUGIN_PATH"), name, host, opts, nopt,
                      err);
}

void be_close(be_backend *b)
{
    if (b->ops && b->st)
        b->ops->close(b->st);
    if (b->dl)
        dlclose(b->dl);
    memset(b, 0, sizeof *b);
}

double be_maxrel(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double s = fmax(fmax(fabs(a[i]), fabs(b[i])), 1.0);
        double d = fabs(a[i] - b[i]) / s;
        if (!(d <= m))
            m = isnan(d) ? INFINITY : d;
    }
    return m;
}

/* ---- library --------------------------------------------------------- */

#define BE_NLINE_PER_PIX 0.02

/* Absorption spectrum 1 - sum of Gaussian lines at ln lambda x; line l
 * has centre c[l], width wd[l], depth dp[l]. */
static double be_lines(double x, int nl, const double *c, const double *wd,
                       const double *dp)
{
    double f = 1.0;
    for (int l = 0; l < nl; l++) {
        double z = (x - c[l]) / wd[l];
        if (fabs(z) < 6.0)
            f -= dp[l] * exp(-0.5 * z * z);
    }
    return f;
}

typedef struct be_linelist {
    int n;
    double *c, *wd, *dp;
} be_linelist;

static int be_linelist_make(be_linelist *L, double x0, double x1, double w,
                            int n, uint64_t *rng)
{
    L->n = n;
    L->c = malloc(3 * (size_t)n * sizeof(double));
    if (!L->c)
        return -1;
    L->wd = L->c + n;
    L->dp = L->wd + n;
    for (int l = 0; l < n; l++) {
        L->c[l] = x0 + (x1 - x0) * be_unif(rng);
        L->wd[l] = w * (0.7 + 1.5 * be_unif(rng));
        L->dp[l] = 0.05 + 0.5 * be_unif(rng);
    }
    return 0;
}

static void be_axes(rvfit_library *lib, int nparam, unsigned cubic,
                    uint64_t *rng)
{
    static const int nn[3] = {6, 4, 3};
    static const double lo[3] = {3.6, 1.0, -2.0}, hi[3] = {3.85, 5.0, 0.5};
    static const char *names[3] = {"TEFF", "LOGG", "FEH"};
    lib->nparam = nparam;
    lib->nmodel = 1;
    for (int p = 0; p < nparam; p++) {
        rvfit_axis *ax = &lib->axis[p];
        snprintf(ax->name, sizeof ax->name, "%s", names[p]);
        ax->scale = p == 0 ? RVFIT_SCALE_LOG10 : RVFIT_SCALE_LINEAR;
        ax->nnode = nn[p];
        ax->interp = (cubic >> p) & 1u ? RVFIT_INTERP_CUBIC
                                       : RVFIT_INTERP_LINEAR;
        double h = (hi[p] - lo[p]) / (nn[p] - 1);
        for (int k = 0; k < nn[p]; k++) /* mildly irregular nodes */
            ax->node[k] = lo[p] + h * (k + (k > 0 && k < nn[p] - 1 ?
                                            0.3 * (be_unif(rng) - 0.5) : 0));
        lib->nmodel *= (size_t)nn[p];
    }
}

/* Model m of a library arm: the line list with depths modulated by the
 * node coordinates (smooth, so interpolation matters) and a continuum
 * slope. */
static void be_model_flux(const rvfit_library *lib, size_t m,
                          const be_linelist *L, double lnl0, double dlnl,
                          size_t npix, float *out, double *dp)
{
    double th[RVFIT_MAX_PARAMS] = {0};
    size_t r = m;
    for (int p = lib->nparam - 1; p >= 0; p--) {
        int n = lib->axis[p].nnode;
        th[p] = lib->axis[p].node[r % (size_t)n];
        r /= (size_t)n;
    }
    double mod = 1.0 + 2.0 * (th[0] - 3.7);
    for (int p = 1; p < lib->nparam; p++)
        mod += 0.1 * th[p];
    for (int l = 0; l < L->n; l++)
        dp[l] = L->dp[l] * fmax(0.1, mod * (1.0 + 0.3 * sin(3.0 * l + mod)));
    for (size_t j = 0; j < npix; j++) {
        double x = lnl0 + dlnl * (double)j;
        out[j] = (float)(be_lines(x, L->n, L->c, L->wd, dp) *
                         (1.0 + 0.1 * (x - lnl0)));
    }
}

static int be_library(be_problem *pr, be_linelist *L, uint64_t *rng)
{
    const be_shape *sh = &pr->sh;
    rvfit_library *lib = &pr->lib;
    be_axes(lib, sh->nparam, sh->cubic, rng);
    lib->exists = malloc(lib->nmodel);
    if (!lib->exists)
        return -1;
    for (size_t m = 0; m < lib->nmodel; m++)
        lib->exists[m] = be_unif(rng) >= sh->hole_frac;
    lib->narm = sh->narm;
    lib->vmax = 800.0;
    double pad = lib->vmax / RVFIT_C_KMS * 1.01;
    for (int a = 0; a < sh->narm; a++) {
        rvfit_lib_arm *la = &lib->arm[a];
        double dlnl_d = 1.5e-4, x0 = log(4000.0 + 2000.0 * a);
        double x1 = x0 + dlnl_d * (double)(sh->npix - 1);
        snprintf(la->name, sizeof la->name, "%c", "BRZ"[a]);
        la->dlnl = dlnl_d / 2.5;
        la->lnl0 = x0 - pad;
        la->npix = (size_t)((x1 - x0 + 2 * pad) / la->dlnl) + 1;
        int nl = (int)(BE_NLINE_PER_PIX * (double)sh->npix) + 2;
        if (be_linelist_make(&L[a], la->lnl0, x1 + pad, 2.0 * la->dlnl * 1.5,
                             nl, rng))
            return -1;
        la->flux = malloc(lib->nmodel * la->npix * sizeof(float));
        double *dp = malloc((size_t)nl * sizeof(double));
        if (!la->flux || !dp) {
            free(dp);
            return -1;
        }
        for (size_t m = 0; m < lib->nmodel; m++)
            be_model_flux(lib, m, &L[a], la->lnl0, la->dlnl, la->npix,
                          la->flux + m * la->npix, dp);
        free(dp);
    }
    rvfit_err e;
    for (int a = 0; a < sh->narm && sh->log_flux; a++) /* ln needs > 0 */
        for (size_t k = 0; k < lib->nmodel * lib->arm[a].npix; k++)
            lib->arm[a].flux[k] = fmaxf(lib->arm[a].flux[k], 0.02f);
    if (sh->log_flux && rvfit_library_set_log_flux(lib, &e) != RVFIT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    return 0;
}

/* ---- batch ------------------------------------------------------------ */

static void be_band(rvfit_arm_batch *A, size_t s, uint64_t *rng)
{
    int nd = A->ndiag, h = nd / 2;
    size_t n = A->npix;
    float *res = A->res + s * (size_t)nd * n;
    double sig = 0.8 + 0.8 * be_unif(rng);
    for (size_t j = 0; j < n; j++) {
        double sj = sig * (1.0 + 0.2 * sin(6.0 * (double)j / (double)n));
        double norm = 0.0;
        for (int k = 0; k < nd; k++) {
            double z = (double)(h - k) / sj;
            norm += exp(-0.5 * z * z);
        }
        for (int k = 0; k < nd; k++) {
            double z = (double)(h - k) / sj;
            res[(size_t)k * n + j] = (float)(exp(-0.5 * z * z) / norm);
        }
    }
}

/* Spectrum s of arm a: lines shifted by a random velocity times a random
 * continuum, noise, masked pixels. */
static void be_spectrum(be_problem *pr, int a, size_t s, const be_linelist *L,
                        uint64_t *rng)
{
    rvfit_arm_batch *A = &pr->batch.arm[a];
    size_t n = A->npix;
    const double *w = A->wave + (A->wave_per_spec ? s * n : 0);
    double v = 600.0 * (be_unif(rng) - 0.5);
    double dl = rvfit_dlnl_doppler(v), c1 = be_unif(rng) - 0.5;
    double lvl = 10.0 + 90.0 * be_unif(rng), snr = 3.0 + 50.0 * be_unif(rng);
    float *f = A->flux + s * n, *iv = A->ivar + s * n;
    for (size_t i = 0; i < n; i++) {
        double x = log(w[i]) + dl, u = 2.0 * (double)i / (double)(n - 1) - 1.0;
        double cont = lvl * (1.0 + 0.3 * c1 * u + 0.1 * u * u);
        double sig = cont / snr;
        double g = sqrt(-2.0 * log(1.0 - be_unif(rng))) *
                   cos(6.283185307179586 * be_unif(rng));
        f[i] = (float)(cont * be_lines(x, L->n, L->c, L->wd, L->dp) + sig * g);
        iv[i] = be_unif(rng) < 0.05 ? 0.0f : (float)(1.0 / (sig * sig));
    }
    if (s == 0 && a == 0) /* too few usable pixels: the arm is skipped */
        for (size_t i = (size_t)pr->mo.npoly; i < n; i++)
            iv[i] = 0.0f;
    if (s == 2 % pr->batch.nspec && n > 10) { /* sanitised by backends */
        f[n / 2] = NAN;
        iv[n / 3] = INFINITY;
    }
    if (A->res_kind == RVFIT_RES_BAND) {
        be_band(A, s, rng);
        /* Spectrum 1, arm 0: a zero model -> Cholesky fails -> 1e30. */
        if (s == 1 && a == 0)
            memset(A->res + s * (size_t)A->ndiag * n, 0,
                   (size_t)A->ndiag * n * sizeof(float));
    }
}

static int be_batch(be_problem *pr, const be_linelist *L, uint64_t *rng,
                    rvfit_err *err)
{
    const be_shape *sh = &pr->sh;
    rvfit_arm_info info[RVFIT_MAX_ARMS];
    memset(info, 0, sizeof info);
    for (int a = 0; a < sh->narm; a++) {
        snprintf(info[a].name, sizeof info[a].name, "%c", "BRZ"[a]);
        info[a].npix = sh->npix;
        info[a].res_kind = sh->ndiag ? RVFIT_RES_BAND : RVFIT_RES_NONE;
        info[a].ndiag = sh->ndiag;
        info[a].wave_per_spec = sh->wave_per_spec;
    }
    int rc = rvfit_batch_alloc(&pr->batch, sh->narm, info, sh->nspec, err);
    if (rc != RVFIT_OK)
        return rc;
    pr->batch.nspec = sh->nspec;
    for (int a = 0; a < sh->narm; a++) {
        rvfit_arm_batch *A = &pr->batch.arm[a];
        double x0 = log(4000.0 + 2000.0 * a);
        size_t nw = sh->wave_per_spec ? sh->nspec : 1;
        for (size_t s = 0; s < nw; s++)
            for (size_t i = 0; i < sh->npix; i++)
                A->wave[s * sh->npix + i] =
                    exp(x0 + 1.5e-4 * (double)i) * (1.0 + 2e-5 * (double)s);
        for (size_t s = 0; s < sh->nspec; s++)
            be_spectrum(pr, a, s, &L[a], rng);
    }
    return RVFIT_OK;
}

int be_problem_make(be_problem *pr, const be_shape *sh, uint64_t *rng,
                    rvfit_err *err)
{
    memset(pr, 0, sizeof *pr);
    pr->sh = *sh;
    pr->mo.npoly = sh->npoly;
    pr->mo.basis = sh->basis;
    be_linelist L[RVFIT_MAX_ARMS];
    memset(L, 0, sizeof L);
    int rc = be_library(pr, L, rng) ? rvfit_err_set(err, RVFIT_ERR_NOMEM,
                                                    "library: out of memory")
                                    : be_batch(pr, L, rng, err);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(L[a].c);
    if (rc != RVFIT_OK)
        be_problem_free(pr);
    return rc;
}

void be_problem_free(be_problem *pr)
{
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(pr->lib.arm[a].flux);
    free(pr->lib.exists);
    if (pr->batch.cap)
        rvfit_batch_free(&pr->batch);
    memset(pr, 0, sizeof *pr);
}

void be_points(const be_problem *pr, size_t n, uint64_t *rng,
               rvfit_point *pts)
{
    const rvfit_library *lib = &pr->lib;
    for (size_t q = 0; q < n; q++) {
        rvfit_point *p = &pts[q];
        memset(p, 0, sizeof *p);
        p->spec = (uint32_t)(be_unif(rng) * (double)pr->batch.nspec);
        for (int k = 0; k < lib->nparam; k++) {
            const rvfit_axis *ax = &lib->axis[k];
            double lo = ax->node[0], hi = ax->node[ax->nnode - 1];
            if (be_unif(rng) < 0.05) /* exactly on a node */
                p->theta[k] = ax->node[(int)(be_unif(rng) * ax->nnode)];
            else
                p->theta[k] = lo + (hi - lo) * (1.2 * be_unif(rng) - 0.1);
        }
        double u = be_unif(rng);
        p->v = u < 0.05 ? (u < 0.025 ? -1 : 1) * (3000 + 2000 * be_unif(rng))
                        : 1000.0 * (be_unif(rng) - 0.5);
        p->vsini = be_unif(rng) < 0.33 ? 0.0
                                       : pr->sh.vsini_max * be_unif(rng);
        p->flags = be_unif(rng) < 0.03 ? RVFIT_PT_CONTINUUM : 0u;
    }
}

int be_load(be_backend *b, const be_problem *pr, rvfit_err *err)
{
    int rc = b->ops->load_library(b->st, &pr->lib, err);
    if (rc == RVFIT_OK)
        rc = b->ops->load_batch(b->st, &pr->batch, &pr->mo, err);
    return rc;
}

/* ---- the suite -------------------------------------------------------- */

const be_case be_cases[BE_NCASES] = {
    /* narm npix npoly basis ndiag nparam holes vsini nspec wps cubic
     * log_flux | points */
    {{1, 40, 1, RVFIT_BASIS_GAUSS, 0, 1, 0.0, 0.0, 3, 0, 0, 0}, 1},
    {{2, 60, 3, RVFIT_BASIS_CHEB, 11, 2, 0.2, 35.0, 4, 1, 0, 0}, 64},
    {{3, 500, 10, RVFIT_BASIS_GAUSS, 11, 3, 0.15, 35.0, 6, 0, 0, 0}, 512},
    {{1, 500, 3, RVFIT_BASIS_GAUSS, 0, 2, 0.1, 35.0, 5, 1, 0, 0}, 4096},
    {{2, 3000, 10, RVFIT_BASIS_GAUSS, 11, 3, 0.1, 35.0, 4, 0, 0, 0}, 200},
    {{3, 3000, 1, RVFIT_BASIS_CHEB, 0, 2, 0.0, 0.0, 3, 0, 0, 0}, 100},
    {{2, 500, 10, RVFIT_BASIS_CHEB, 5, 3, 0.3, 300.0, 4, 1, 0, 0}, 300},
    /* cubic interpolation: all axes (holes force the fallbacks) in ln
     * flux, one axis in flux; linear in ln flux */
    {{2, 500, 10, RVFIT_BASIS_GAUSS, 11, 3, 0.15, 35.0, 4, 0, 7, 1}, 512},
    {{1, 800, 5, RVFIT_BASIS_CHEB, 0, 2, 0.0, 0.0, 3, 1, 2, 0}, 256},
    {{2, 600, 8, RVFIT_BASIS_GAUSS, 11, 3, 0.1, 35.0, 4, 1, 0, 1}, 256},
    /* B-splines: DESI-size arms, and per-spectrum wavelengths */
    {{3, 3000, 10, RVFIT_BASIS_BSPLINE, 11, 3, 0.1, 35.0, 4, 0, 0, 0}, 200},
    {{2, 500, 7, RVFIT_BASIS_BSPLINE, 5, 2, 0.2, 35.0, 4, 1, 0, 0}, 256},
};

static double be_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int be_target_open(const be_target *t, be_backend *b, const rvfit_host *host,
                   const rvfit_kv *opts, int nopt, rvfit_err *err)
{
    const char *dir = t->dir && *t->dir ? t->dir : getenv("RVFIT_PLUGIN_PATH");
    return be_open_in(b, dir, t->name, host, opts, nopt, err);
}

/* Models of the first n points: max |diff| / max(|row|) over rows. */
static double be_cmp_models(be_backend *cpu, be_backend *gpu,
                            const be_problem *pr, size_t n,
                            const rvfit_point *pts)
{
    int na = pr->batch.narm;
    size_t np = pr->batch.arm[0].npix * n;
    float *buf = calloc(4 * (size_t)na * np, sizeof(float));
    float *m[2][RVFIT_MAX_ARMS], *c[2][RVFIT_MAX_ARMS];
    for (int a = 0; a < na; a++)
        for (int k = 0; k < 2; k++) {
            m[k][a] = buf + ((size_t)(4 * a + 2 * k)) * np;
            c[k][a] = m[k][a] + np;
        }
    rvfit_err err;
    int r1 = cpu->ops->models(cpu->st, n, pts, NULL, m[0], c[0], &err);
    int r2 = gpu->ops->models(gpu->st, n, pts, NULL, m[1], c[1], &err);
    CHECK_MSG(r1 == RVFIT_OK && r2 == RVFIT_OK, "models: %s", err.msg);
    double worst = 0.0;
    size_t npix = pr->batch.arm[0].npix;
    for (int a = 0; a < na; a++)
        for (size_t q = 0; q < n; q++)
            for (int w = 0; w < 2; w++) {
                const float *x = (w ? c[0][a] : m[0][a]) + q * npix;
                const float *y = (w ? c[1][a] : m[1][a]) + q * npix;
                double mx = 0.0, d = 0.0;
                for (size_t i = 0; i < npix; i++) {
                    mx = fmax(mx, fabs(x[i]));
                    d = fmax(d, fabs((double)x[i] - y[i]));
                }
                double rel = mx > 0 ? d / mx : d;
                worst = isnan(rel) ? INFINITY : fmax(worst, rel);
            }
    free(buf);
    return worst;
}

/* vscan of nq base points on nvel velocities each. */
static double be_cmp_vscan(be_backend *cpu, be_backend *gpu, size_t nq,
                           const rvfit_point *base, size_t nvel)
{
    double *vel = malloc(nq * nvel * sizeof(double));
    double *r = malloc(2 * nq * nvel * sizeof(double));
    for (size_t q = 0; q < nq; q++)
        for (size_t k = 0; k < nvel; k++)
            vel[q * nvel + k] = -400.0 +
                                800.0 * (double)k / (double)(nvel - 1) +
                                3.0 * (double)q;
    rvfit_err err;
    int r1 = cpu->ops->vscan(cpu->st, nq, base, NULL, nvel, vel, r, &err);
    int r2 = gpu->ops->vscan(gpu->st, nq, base, NULL, nvel, vel, r + nq * nvel, &err);
    CHECK_MSG(r1 == RVFIT_OK && r2 == RVFIT_OK, "vscan: %s", err.msg);
    double d = be_maxrel(r, r + nq * nvel, nq * nvel);
    free(vel);
    free(r);
    return d;
}

/* Compare chisq outputs o1 (cpu) and o2 (gpu) of n points, then models and
 * vscan on the first points; print and check against tol. */
static void be_compare(const be_target *t, be_backend *cpu, be_backend *gpu,
                       const be_problem *pr, size_t n, const rvfit_point *pts,
                       const rvfit_chisq_out *o1, const rvfit_chisq_out *o2,
                       const double secs[2], be_result *res, double tol)
{
    const be_shape *sh = &pr->sh;
    size_t na = (size_t)sh->narm;
    double d1 = be_maxrel(o1->m2lnl, o2->m2lnl, n);
    double d2 = be_maxrel(o1->chisq, o2->chisq, n * na);
    size_t nm = n < 16 ? n : 16, nq = n < BE_NVSCAN ? n : BE_NVSCAN;
    double d3 = be_cmp_models(cpu, gpu, pr, nm, pts);
    double d4 = be_cmp_vscan(cpu, gpu, nq, pts, 41);
    printf("  %zu arm x %4zu px npoly %2d ndiag %2d nparam %d cubic %u "
           "lnf %d vsini<=%3.0f n %4zu: m2lnl %.1e chisq %.1e models %.1e "
           "vscan %.1e (cpu %.3f s, %s %.3f s)\n",
           na, sh->npix, sh->npoly, sh->ndiag, sh->nparam, sh->cubic,
           sh->log_flux,
           sh->vsini_max, n,
           d1, d2, d3, d4, secs[0], t->name, secs[1]);
    CHECK_MSG(d1 <= tol, "m2lnl rel diff %.3g", d1);
    CHECK_MSG(d2 <= tol, "chisq rel diff %.3g", d2);
    CHECK_MSG(d3 <= (tol > BE_TOL ? tol : BE_TOL_MODEL), "models %.3g", d3);
    CHECK_MSG(d4 <= tol, "vscan rel diff %.3g", d4);
    res->m2lnl = fmax(res->m2lnl, d1);
    res->chisq = fmax(res->chisq, d2);
    res->models = fmax(res->models, d3);
    res->vscan = fmax(res->vscan, d4);
    /* Known cases from the harness: skipped arm, failed Cholesky. */
    for (size_t q = 0; q < n; q++) {
        if (pts[q].spec == 1 && sh->ndiag > 0)
            CHECK_MSG(o2->m2lnl[q] == 1e30, "%.17g %.17g", o2->m2lnl[q],
                      o1->m2lnl[q]);
        if (pts[q].spec == 0)
            CHECK(o2->chisq[q * na] == 0.0);
    }
}

/* The problem of case sc into pr; 0 (a failed check) when it cannot be
 * made. */
static int be_case_problem(const be_case *sc, uint64_t *rng, be_problem *pr)
{
    rvfit_err err;
    int rc = be_problem_make(pr, &sc->sh, rng, &err);
    CHECK_MSG(rc == RVFIT_OK, "problem: %s", err.msg);
    return rc == RVFIT_OK;
}

void be_run_case(const be_target *t, be_backend *cpu, be_backend *gpu,
                 const be_case *sc, uint64_t *rng, be_result *res, double tol)
{
    be_problem pr;
    rvfit_err err;
    if (!be_case_problem(sc, rng, &pr))
        return;
    int rc = be_load(cpu, &pr, &err);
    CHECK_MSG(rc == RVFIT_OK, "cpu load: %s", err.msg);
    rc = rc ? rc : be_load(gpu, &pr, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s load: %s", t->name, err.msg);
    size_t n = sc->npts, na = (size_t)sc->sh.narm;
    rvfit_point *pts = malloc(n * sizeof *pts);
    double *out = malloc(2 * n * (1 + na) * sizeof(double));
    be_points(&pr, n, rng, pts);
    rvfit_chisq_out o1 = {out, out + n}, o2 = {out + n * (1 + na),
                                               out + n * (2 + na)};
    double t0 = be_now();
    int r1 = rc ? rc : cpu->ops->chisq(cpu->st, n, pts, NULL, &o1, &err);
    double t1 = be_now();
    int r2 = r1 ? r1 : gpu->ops->chisq(gpu->st, n, pts, NULL, &o2, &err);
    double secs[2] = {t1 - t0, be_now() - t1};
    CHECK_MSG(r1 == RVFIT_OK && r2 == RVFIT_OK, "chisq: %s", err.msg);
    if (r1 == RVFIT_OK && r2 == RVFIT_OK)
        be_compare(t, cpu, gpu, &pr, n, pts, &o1, &o2, secs, res, tol);
    free(pts);
    free(out);
    be_problem_free(&pr);
}

/* Clip pixels (ivar 0) of spectrum 2 and scale spectrum 3's flux in
 * every arm of pr's batch, in place. */
static void be_clip_some(be_problem *pr)
{
    for (int a = 0; a < pr->batch.narm; a++) {
        rvfit_arm_batch *A = &pr->batch.arm[a];
        for (size_t i = 0; i < A->npix; i++) {
            if (i % 5 == 0)
                A->ivar[2 * A->npix + i] = 0.0f;
            A->flux[3 * A->npix + i] *= 1.1f;
        }
    }
}

/* update_data (ops 2.1): new flux and ivar of the resident batch give what
 * a fresh load of the changed batch gives on the cpu reference, band
 * matrices and pixel tables kept; another geometry is refused and leaves
 * the resident batch as it was. */
static void be_check_update(const be_target *t, be_backend *cpu,
                            be_backend *gpu, uint64_t *rng, double tol)
{
    const be_case *sc = &be_cases[11]; /* bands, per-spectrum waves */
    be_problem pr;
    rvfit_err err;
    if (!be_case_problem(sc, rng, &pr))
        return;
    size_t n = sc->npts, na = (size_t)sc->sh.narm;
    rvfit_point *pts = malloc(n * sizeof *pts);
    double *out = malloc(3 * n * (1 + na) * sizeof(double));
    be_points(&pr, n, rng, pts);
    /* three results of n m2lnl then n * na chisq each */
    rvfit_chisq_out o[3];
    for (int k = 0; k < 3; k++)
        o[k] = (rvfit_chisq_out){out + k * n * (1 + na),
                                 out + k * n * (1 + na) + n};
    rvfit_chisq_out o0 = o[0], o1 = o[1], o2 = o[2];
    int rc = be_load(gpu, &pr, &err);
    rc = rc ? rc : gpu->ops->chisq(gpu->st, n, pts, NULL, &o0, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s before the update: %s", t->name, err.msg);
    be_clip_some(&pr);
    rc = rc ? rc : gpu->ops->update_data(gpu->st, &pr.batch, &err);
    CHECK_MSG(rc == RVFIT_OK, "%s update_data: %s", t->name, err.msg);
    rc = rc ? rc : be_load(cpu, &pr, &err);
    double secs[2] = {0, 0};
    rc = rc ? rc : cpu->ops->chisq(cpu->st, n, pts, NULL, &o1, &err);
    rc = rc ? rc : gpu->ops->chisq(gpu->st, n, pts, NULL, &o2, &err);
    CHECK_MSG(rc == RVFIT_OK, "after the update: %s", err.msg);
    if (rc == RVFIT_OK) {
        printf("update_data (ivar and flux changed):\n");
        be_result r = {0, 0, 0, 0};
        be_compare(t, cpu, gpu, &pr, n, pts, &o1, &o2, secs, &r, tol);
        /* the change reached the device: spectra 2 and 3 moved */
        double moved = 0;
        for (size_t q = 0; q < n; q++)
            if (pts[q].spec >= 2 && o0.m2lnl[q] < 1e29)
                moved = fmax(moved, fabs(o2.m2lnl[q] - o0.m2lnl[q]) /
                                        fmax(1.0, fabs(o0.m2lnl[q])));
        CHECK_MSG(moved > 1e-3, "update_data changed nothing (%.3g)", moved);
        /* another geometry: refused, the resident batch still answers */
        pr.batch.nspec--;
        int r2 = gpu->ops->update_data(gpu->st, &pr.batch, &err);
        pr.batch.nspec++;
        CHECK_MSG(r2 == RVFIT_ERR_INVALID && strstr(err.msg, "resident"),
                  "geometry change: %d %s", r2, err.msg);
        r2 = gpu->ops->chisq(gpu->st, n, pts, NULL, &o0, &err);
        CHECK_MSG(r2 == RVFIT_OK && be_maxrel(o0.m2lnl, o2.m2lnl, n) == 0,
                  "after the refusal: %s", err.msg);
    }
    free(pts);
    free(out);
    be_problem_free(&pr);
}

/* Counters count exactly the points evaluated (none for a rejected call);
 * the device string names the backend. */
static void be_check_counters(const be_target *t, be_backend *gpu,
                              uint64_t *rng)
{
    const char *dev = gpu->ops->device(gpu->st);
    size_t len = strlen(t->name);
    printf("  device: %s\n", dev);
    CHECK(strncmp(dev, t->name, len) == 0 && strncmp(dev + len, ": ", 2) == 0 &&
          strlen(dev) > len + 2);
    be_shape sh = {2, 100, 3, RVFIT_BASIS_GAUSS, 5, 2, 0.0, 10.0, 3, 0, 0, 0};
    be_problem pr;
    rvfit_err err;
    CHECK(be_problem_make(&pr, &sh, rng, &err) == RVFIT_OK);
    CHECK(be_load(gpu, &pr, &err) == RVFIT_OK);
    rvfit_counters c0, c1;
    gpu->ops->counters(gpu->st, &c0);
    rvfit_point pts[7];
    double m2[7 * 5], vel[5 * 3] = {0};
    float mbuf[2][7 * 100];
    float *mo[2] = {mbuf[0], mbuf[1]};
    be_points(&pr, 7, rng, pts);
    rvfit_chisq_out o = {m2, NULL};
    CHECK(gpu->ops->chisq(gpu->st, 7, pts, NULL, &o, &err) == RVFIT_OK);
    CHECK(gpu->ops->vscan(gpu->st, 3, pts, NULL, 5, vel, m2, &err) == RVFIT_OK);
    CHECK(gpu->ops->models(gpu->st, 2, pts, NULL, mo, NULL, &err) == RVFIT_OK);
    CHECK(gpu->ops->vscan(gpu->st, 3, pts, NULL, 0, vel, m2, &err) == RVFIT_OK);
    pts[0].spec = 99; /* invalid: no points counted */
    CHECK(gpu->ops->chisq(gpu->st, 1, pts, NULL, &o, &err) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(err.msg, "spectrum 99"));
    pts[0].spec = 0;
    pts[0].v = 2e5; /* beyond c/2 */
    CHECK(gpu->ops->chisq(gpu->st, 1, pts, NULL, &o, &err) == RVFIT_ERR_INVALID);
    gpu->ops->counters(gpu->st, &c1);
    CHECK_MSG(c1.points - c0.points == 7 + 15 + 2, "points %llu",
              (unsigned long long)(c1.points - c0.points));
    CHECK(c1.calls - c0.calls == 4);
    CHECK(c1.seconds > c0.seconds);
    be_problem_free(&pr);
}

/* Stencils for n points: the library's own (scattered == 0), or a
 * simplex-like one per point (nparam + 1 random existing models, random
 * positive weights summing to 1, a random penalty; every 9th empty).
 * Arrays sized n + 1 and n * RVFIT_MAX_STENCIL by the caller. */
static void be_make_stencils(const rvfit_library *lib, size_t n,
                             const rvfit_point *pts, int scattered,
                             uint64_t *rng, uint32_t *off, uint32_t *idx,
                             double *w, double *pen)
{
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t e = off[i];
        int k = 0;
        if (!scattered) {
            size_t c[RVFIT_MAX_CORNERS];
            k = rvfit_library_stencil(lib, pts[i].theta, c, w + e, &pen[i]);
            for (int j = 0; j < k; j++)
                idx[e + (uint32_t)j] = (uint32_t)c[j];
        } else if (i % 9 != 4) {
            double sum = 0.0;
            for (k = 0; k <= lib->nparam; k++) {
                size_t m;
                do
                    m = (size_t)(be_unif(rng) * (double)lib->nmodel);
                while (m >= lib->nmodel || !lib->exists[m]);
                idx[e + (uint32_t)k] = (uint32_t)m;
                w[e + (uint32_t)k] = 0.05 + be_unif(rng);
                sum += w[e + (uint32_t)k];
            }
            for (int j = 0; j < k; j++)
                w[e + (uint32_t)j] /= sum;
            pen[i] = 10.0 * be_unif(rng);
        } else {
            pen[i] = 0.0;
        }
        off[i + 1] = e + (uint32_t)k;
    }
}

/* Backend ops 1.1 on a problem with holes, cubic axes and ln flux: the
 * library's own stencils sent from the core give what the device computes
 * itself, and cpu and backend agree on chisq, vscan and models with tables
 * for scattered (simplex-like) stencils. */
static void be_check_stencils(const be_target *t, be_backend *cpu,
                              be_backend *gpu, uint64_t *rng, double tol)
{
    enum { N = 96, NV = 9 };
    be_problem pr;
    rvfit_err err;
    int rc = be_problem_make(&pr, &be_cases[7].sh, rng, &err);
    if (!rc)
        rc = be_load(cpu, &pr, &err);
    if (!rc)
        rc = be_load(gpu, &pr, &err);
    CHECK_MSG(rc == RVFIT_OK, "stencils: %s", err.msg);
    if (rc)
        return;
    size_t na = (size_t)pr.sh.narm, np = pr.batch.arm[0].npix;
    static rvfit_point pts[N];
    static uint32_t off[N + 1], idx[N * RVFIT_MAX_STENCIL];
    static double w[N * RVFIT_MAX_STENCIL], pen[N], m[4][N], c[4][N * 3];
    static double vel[N * NV], sv[2][N * NV];
    static float mb[2][2][3][16 * 600];
    be_points(&pr, N, rng, pts);
    for (size_t k = 0; k < N * NV; k++)
        vel[k] = -300.0 + 11.0 * (double)k / N;
    rvfit_stencils sn = {off, idx, w, pen, 1, 0};
    rvfit_chisq_out o[4] = {{m[0], c[0]}, {m[1], c[1]}, {m[2], c[2]},
                            {m[3], c[3]}};
    for (int sc = 0; sc < 2; sc++) {
        be_make_stencils(&pr.lib, N, pts, sc, rng, off, idx, w, pen);
        int r = cpu->ops->chisq(cpu->st, N, pts, &sn, &o[0], &err);
        r = r ? r : gpu->ops->chisq(gpu->st, N, pts, &sn, &o[1], &err);
        r = r ? r : gpu->ops->chisq(gpu->st, N, pts, NULL, &o[2], &err);
        r = r ? r : cpu->ops->vscan(cpu->st, N, pts, &sn, NV, vel, sv[0],
                                       &err);
        r = r ? r : gpu->ops->vscan(gpu->st, N, pts, &sn, NV, vel, sv[1],
                                       &err);
        float *mp[2][RVFIT_MAX_ARMS], *cp[2][RVFIT_MAX_ARMS];
        for (int b = 0; b < 2; b++)
            for (size_t a = 0; a < na; a++)
                mp[b][a] = mb[b][0][a], cp[b][a] = mb[b][1][a];
        r = r ? r : cpu->ops->models(cpu->st, 16, pts, &sn, mp[0], cp[0],
                                        &err);
        r = r ? r : gpu->ops->models(gpu->st, 16, pts, &sn, mp[1], cp[1],
                                        &err);
        CHECK_MSG(r == RVFIT_OK, "stencils: %s", err.msg);
        if (r)
            break;
        double d1 = be_maxrel(m[0], m[1], N);
        double d2 = be_maxrel(c[0], c[1], N * na);
        double d3 = be_maxrel(sv[0], sv[1], N * NV), d4 = 0.0;
        for (size_t a = 0; a < na; a++)
            for (size_t i = 0; i < 16 * np; i++) {
                double mx = fmax(fabs(mb[0][0][a][i]), 1e-3);
                d4 = fmax(d4, fabs(mb[0][0][a][i] - mb[1][0][a][i]) / mx);
            }
        printf("  stencils from the core (%s): m2lnl %.1e chisq %.1e vscan "
               "%.1e models %.1e", sc ? "scattered" : "library's", d1, d2, d3,
               d4);
        CHECK_MSG(d1 <= tol && d2 <= tol && d3 <= tol, "%s stencils",
                  sc ? "scattered" : "library's");
        CHECK_MSG(d4 <= (tol > BE_TOL ? tol : BE_TOL_MODEL), "models %.3g",
                  d4);
        if (!sc) { /* the device's own stencils, same points */
            double d5 = be_maxrel(m[1], m[2], N);
            printf(", %s own stencil %.1e", t->name, d5);
            CHECK_MSG(d5 <= tol, "own vs core stencils %.3g", d5);
        }
        printf("\n");
    }
    off[1] = off[0] + RVFIT_MAX_STENCIL + 1; /* too long: refused */
    CHECK(gpu->ops->chisq(gpu->st, 1, pts, &sn, &o[1], &err) ==
          RVFIT_ERR_INVALID);
    be_problem_free(&pr);
}

/* Backend ops 1.2: stencils with a weight per library arm (what the pca
 * interpolator sends).  The batch lists the library's arms in reverse
 * order, so that a backend that weighs batch arm a by library arm a's
 * weights fails.  Scattered stencils with independent random weights per
 * arm: cpu and backend agree on chisq (a weight per arm), vscan (a weight per arm) and models (a weight per arm);
 * with every arm given the same weights, chisq (a weight per arm) equals chisq (table). */
static void be_check_arm_stencils(const be_target *t, be_backend *cpu,
                                  be_backend *gpu, uint64_t *rng, double tol)
{
    enum { N = 64, NV = 7, NA = 2 };
    be_problem pr;
    rvfit_err err;
    int rc = be_problem_make(&pr, &be_cases[7].sh, rng, &err);
    if (!rc) {
        rvfit_arm_batch tmp = pr.batch.arm[0];
        pr.batch.arm[0] = pr.batch.arm[1];
        pr.batch.arm[1] = tmp;
        rc = be_load(cpu, &pr, &err);
    }
    if (!rc)
        rc = be_load(gpu, &pr, &err);
    CHECK_MSG(rc == RVFIT_OK && pr.lib.narm == NA, "arm stencils: %s",
              err.msg);
    if (rc || pr.lib.narm != NA)
        return;
    size_t np = pr.batch.arm[0].npix;
    static rvfit_point pts[N];
    static uint32_t off[N + 1], idx[N * RVFIT_MAX_STENCIL];
    static double w[N * RVFIT_MAX_STENCIL], wa[N * RVFIT_MAX_STENCIL * NA];
    static double pen[N], m[3][N], c[3][N * NA], vel[N * NV], sv[2][N * NV];
    static float mb[2][2][NA][16 * 600];
    be_points(&pr, N, rng, pts);
    for (size_t k = 0; k < N * NV; k++)
        vel[k] = -250.0 + 9.0 * (double)k / N;
    be_make_stencils(&pr.lib, N, pts, 1, rng, off, idx, w, pen);
    for (uint32_t e = 0; e < off[N]; e++) /* the same in both arms */
        wa[e * NA] = wa[e * NA + 1] = w[e];
    rvfit_stencils sn = {off, idx, w, pen, 1, 0};
    rvfit_stencils sa = {off, idx, wa, pen, NA, 0};
    rvfit_chisq_out o[3] = {{m[0], c[0]}, {m[1], c[1]}, {m[2], c[2]}};
    int r = gpu->ops->chisq(gpu->st, N, pts, &sn, &o[0], &err);
    r = r ? r : gpu->ops->chisq(gpu->st, N, pts, &sa, &o[1], &err);
    CHECK_MSG(r == RVFIT_OK, "arm stencils: %s", err.msg);
    CHECK_MSG(memcmp(m[0], m[1], sizeof m[0]) == 0,
              "equal arm weights differ from shared ones on %s", t->name);
    for (size_t i = 0; i < N; i++) /* independent weights per arm */
        for (uint32_t e = off[i]; e < off[i + 1]; e++)
            wa[e * NA + 1] = (0.1 + be_unif(rng)) /
                             (double)(off[i + 1] - off[i]) * 1.6;
    r = r ? r : cpu->ops->chisq(cpu->st, N, pts, &sa, &o[1], &err);
    r = r ? r : gpu->ops->chisq(gpu->st, N, pts, &sa, &o[2], &err);
    r = r ? r : cpu->ops->vscan(cpu->st, N, pts, &sa, NV, vel, sv[0],
                                    &err);
    r = r ? r : gpu->ops->vscan(gpu->st, N, pts, &sa, NV, vel, sv[1],
                                    &err);
    float *mp[2][NA], *cp[2][NA];
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < NA; a++)
            mp[b][a] = mb[b][0][a], cp[b][a] = mb[b][1][a];
    r = r ? r : cpu->ops->models(cpu->st, 16, pts, &sa, mp[0], cp[0],
                                     &err);
    r = r ? r : gpu->ops->models(gpu->st, 16, pts, &sa, mp[1], cp[1],
                                     &err);
    CHECK_MSG(r == RVFIT_OK, "arm stencils: %s", err.msg);
    if (!r) {
        double d1 = be_maxrel(m[1], m[2], N), d2 = be_maxrel(c[1], c[2],
                                                            N * NA);
        double d3 = be_maxrel(sv[0], sv[1], N * NV), d4 = 0.0, d5;
        for (int a = 0; a < NA; a++)
            for (size_t i = 0; i < 16 * np; i++) {
                double mx = fmax(fabs(mb[0][0][a][i]), 1e-3);
                d4 = fmax(d4, fabs(mb[0][0][a][i] - mb[1][0][a][i]) / mx);
            }
        d5 = be_maxrel(m[0], m[1], N); /* arm 1's weights changed it */
        printf("  stencils per arm: m2lnl %.1e chisq %.1e vscan %.1e models "
               "%.1e (changed by arm weights: %.1e)\n", d1, d2, d3, d4, d5);
        CHECK_MSG(d1 <= tol && d2 <= tol && d3 <= tol, "arm stencils");
        CHECK_MSG(d4 <= (tol > BE_TOL ? tol : BE_TOL_MODEL), "models %.3g",
                  d4);
        CHECK_MSG(d5 > 1e-3, "arm weights changed nothing: %.3g", d5);
    }
    sa.nw = 3; /* neither 1 nor the library's arms: refused */
    CHECK(gpu->ops->chisq(gpu->st, 1, pts, &sa, &o[1], &err) ==
          RVFIT_ERR_INVALID);
    be_problem_free(&pr);
}

/* Every interpolator whose stencils the core sends, with its real
 * stencils: simplex (Delaunay over the models present; be_cases[9]:
 * holes, ln flux) through the 1.1 entries, pca (8 components, their
 * coefficients cubic on every axis; be_cases[7]: holes, ln flux) through
 * the 1.2 entries over its component view, and simplex with the
 * quadratic correction (long stencils, weights of both signs).  cpu and
 * backend agree on chisq, vscan and models. */
static void be_check_kinds(const be_target *t, be_backend *cpu,
                           be_backend *gpu, uint64_t *rng, double tol)
{
    enum { N = 48, NV = 5 };
    static const char *const kind[3] = {"simplex", "pca", "simplex"};
    static const int icase[3] = {9, 7, 9}, corr[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++) {
        const char *kn = corr[k] ? "simplex + quadratic" : kind[k];
        be_problem pr;
        rvfit_interpolator ip;
        rvfit_stencil_buf sb;
        memset(&sb, 0, sizeof sb);
        rvfit_err err;
        int rc = be_problem_make(&pr, &be_cases[icase[k]].sh, rng, &err);
        if (rc)
            break;
        rc = !strcmp(kind[k], "pca")
                 ? rvfit_interp_open_pca(&ip, &pr.lib, 8, 0.0, &err)
                 : rvfit_interp_open(&ip, &pr.lib, kind[k], 0, &err);
        if (!rc && corr[k]) /* stencils of ~80 models, weights of both signs */
            rc = rvfit_interp_simplex_correction(&ip, RVFIT_SXCORR_QUADRATIC,
                                                 &err);
        const rvfit_library *v = rc ? NULL : rvfit_interp_vectors(&ip);
        for (int b = 0; b < 2 && !rc; b++) {
            be_backend *be = b ? gpu : cpu;
            rc = be->ops->load_library(be->st, v, &err);
            if (!rc)
                rc = be->ops->load_batch(be->st, &pr.batch, &pr.mo, &err);
        }
        static rvfit_point pts[N];
        static double m[2][N], c[2][N * 3], vel[N * NV], sv[2][N * NV];
        static float mb[2][3][8 * 600];
        be_points(&pr, N, rng, pts);
        for (size_t q = 0; q < N * NV; q++)
            vel[q] = -200.0 + 7.0 * (double)q / N;
        if (!rc)
            rc = rvfit_stencil_fill(&ip, N, pts, &sb, &err);
        float *mp[2][RVFIT_MAX_ARMS];
        for (int b = 0; b < 2; b++)
            for (int a = 0; a < pr.sh.narm; a++)
                mp[b][a] = mb[b][a];
        for (int b = 0; b < 2 && !rc; b++) {
            be_backend *be = b ? gpu : cpu;
            rvfit_chisq_out o = {m[b], c[b]};
            rc = be->ops->chisq( be->st, N, pts, &sb.view, &o, &err);
            if (!rc)
                rc = be->ops->vscan( be->st, N, pts, &sb.view, NV,
                                         vel, sv[b], &err);
            if (!rc)
                rc = be->ops->models( be->st, 8, pts, &sb.view,
                                          mp[b], NULL, &err);
        }
        CHECK_MSG(rc == RVFIT_OK, "%s: %s", kn,
                  err.msg);
        if (!rc) {
            size_t na = (size_t)pr.sh.narm, np = pr.batch.arm[0].npix;
            double d1 = be_maxrel(m[0], m[1], N);
            double d2 = be_maxrel(c[0], c[1], N * na);
            double d3 = be_maxrel(sv[0], sv[1], N * NV), d4 = 0.0;
            for (size_t a = 0; a < na; a++)
                for (size_t i = 0; i < 8 * np; i++) {
                    double mx = fmax(fabs(mb[0][a][i]), 1e-3);
                    d4 = fmax(d4, fabs(mb[0][a][i] - mb[1][a][i]) / mx);
                }
            printf("  %s interpolator (%u weights per entry, %.1f entries "
                   "per point): m2lnl %.1e chisq %.1e vscan %.1e models "
                   "%.1e\n", kn, sb.nw, (double)sb.off[N] / N, d1, d2, d3,
                   d4);
            CHECK_MSG(d1 <= tol && d2 <= tol && d3 <= tol, "%s",
                      kn);
            CHECK_MSG(d4 <= (tol > BE_TOL ? tol : BE_TOL_MODEL),
                      "%s models %.3g", kn, d4);
        }
        rvfit_stencil_buf_free(&sb);
        if (v)
            rvfit_interp_close(&ip);
        be_problem_free(&pr);
    }
}

/* DESI-like throughput: 3 arms x ~2700 px, npoly 10, ndiag 11; 2048
 * points on the cpu, t->bench_points on the backend. */
static void be_bench(const be_target *t, be_backend *cpu, be_backend *gpu,
                     uint64_t *rng)
{
    be_shape sh = {3, 2700, 10, RVFIT_BASIS_GAUSS, 11, 3, 0.0, 10.0, 16, 0,
                   0, 0};
    be_problem pr;
    rvfit_err err;
    if (be_problem_make(&pr, &sh, rng, &err) != RVFIT_OK)
        return;
    be_load(cpu, &pr, &err);
    be_load(gpu, &pr, &err);
    size_t n = t->bench_points > 2048 ? t->bench_points : 2048;
    rvfit_point *pts = malloc(n * sizeof *pts);
    double *m2 = malloc(n * sizeof(double));
    be_points(&pr, n, rng, pts);
    rvfit_chisq_out o = {m2, NULL};
    be_backend *b[2] = {cpu, gpu};
    for (int k = 0; k < 2; k++) {
        size_t nk = k ? t->bench_points : 2048;
        b[k]->ops->chisq(b[k]->st, 64, pts, NULL, &o, &err); /* warm-up */
        double t0 = be_now();
        b[k]->ops->chisq(b[k]->st, nk, pts, NULL, &o, &err);
        double dt = be_now() - t0;
        printf("  bench %-40s %8.0f points/s\n", b[k]->ops->device(b[k]->st),
               (double)nk / dt);
    }
    free(pts);
    free(m2);
    be_problem_free(&pr);
}

void be_equiv_suite(const be_target *t, be_backend *gpu, be_backend *cpu,
                    const rvfit_host *host)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    be_result res = {0, 0, 0, 0};
    printf("fp64 device code:\n");
    for (size_t k = 0; k < BE_NCASES; k++)
        be_run_case(t, cpu, gpu, &be_cases[k], &rng, &res, BE_TOL);
    printf("max rel diff: m2lnl %.2e chisq %.2e models %.2e vscan %.2e\n",
           res.m2lnl, res.chisq, res.models, res.vscan);
    be_check_counters(t, gpu, &rng);
    be_check_stencils(t, cpu, gpu, &rng, BE_TOL);
    be_check_arm_stencils(t, cpu, gpu, &rng, BE_TOL);
    be_check_kinds(t, cpu, gpu, &rng, BE_TOL);
    be_check_update(t, cpu, gpu, &rng, BE_TOL);
    if (getenv("RVFIT_BENCH"))
        be_bench(t, cpu, gpu, &rng);
    be_close(gpu);
    if (t->extra)
        t->extra(t, cpu, host, &rng);

    /* The float device code (devices without fp64), forced: looser. */
    rvfit_kv f32 = {"fp64", "0", "test", 0};
    rvfit_err err;
    int rc = be_target_open(t, gpu, host, &f32, 1, &err);
    CHECK_MSG(rc == RVFIT_OK, "fp64 = 0: %s", err.msg);
    if (rc != RVFIT_OK)
        return;
    be_result rf = {0, 0, 0, 0};
    printf("float device code (fp64 = 0):\n");
    be_run_case(t, cpu, gpu, &be_cases[2], &rng, &rf, BE_TOL_FLOAT);
    be_check_stencils(t, cpu, gpu, &rng, BE_TOL_FLOAT);
    be_check_arm_stencils(t, cpu, gpu, &rng, BE_TOL_FLOAT);
    be_check_kinds(t, cpu, gpu, &rng, BE_TOL_FLOAT);
    be_check_update(t, cpu, gpu, &rng, BE_TOL_FLOAT);
    if (getenv("RVFIT_BENCH"))
        be_bench(t, cpu, gpu, &rng);
    be_close(gpu);
}
