/* backend_equiv.c — see backend_equiv.h.  Included by the equivalence
 * tests (one translation unit per test executable). */
#include "backend_equiv.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/physics.h"

double be_unif(uint64_t *rng)
{
    uint64_t x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (double)((x * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

int be_open(be_backend *b, const char *name, const rvfit_host *host,
            const rvfit_kv *opts, int nopt, rvfit_err *err)
{
    char path[4096];
    memset(b, 0, sizeof *b);
    const char *dir = getenv("RVFIT_PLUGIN_PATH");
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

static void be_axes(rvfit_library *lib, int nparam, uint64_t *rng)
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
    be_axes(lib, sh->nparam, rng);
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
