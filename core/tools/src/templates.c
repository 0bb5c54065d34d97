/* templates.c — rvfit_templates_build: PHOENIX-layout grid -> template
 * library (docs/template-library.md).
 *
 * Per arm and model: photon flux g = f*lambda on the input samples, taken
 * as piecewise linear in lambda; convolved with a Gaussian of sigma0 A and
 * averaged over each output pixel [a, b] EXACTLY:
 *     pixel = (S(b) - S(a)) / (b - a),
 *     S(e)  = integral g(mu) Phi((e - mu)/sigma0) dmu,
 * where S(e) is the exact cumulative integral of g below e - 8 sigma0 plus
 * closed forms of linear x Phi over the input segments within +-8 sigma0
 * (Phi(-8) ~ 6e-16).  Each model is then divided by its mean over the
 * unpadded arm pixels.  Models are independent items of
 * rvfit_parallel_for; CFITSIO reads are serialised by a mutex.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phoenix_read.h"
#include "rvfit/physics.h"
#include "rvfit/pool.h"
#include "rvfit/interp.h"
#include "rvfit/templates.h"
#include "tools_library.h"

#define TPL_NSIG 8.0          /* half width of the Gaussian window        */
#define TPL_TAB_PER_U 64      /* table nodes per unit of u                 */
#define TPL_TAB_N (2 * 8 * TPL_TAB_PER_U + 1)

/* F1(u) = int Phi, F2(u) = int u Phi and their derivatives on
 * u in [-8, 8]; cubic Hermite interpolation is accurate to ~1e-10, and
 * ~4x cheaper than erfc + exp per input sample. */
typedef struct tpl_tab {
    double f1[TPL_TAB_N], d1[TPL_TAB_N], f2[TPL_TAB_N], d2[TPL_TAB_N];
} tpl_tab;

/* Output grid of one arm and its input window. */
typedef struct tpl_arm {
    double *edge;     /* [npix+1] pixel edges, Angstrom                     */
    size_t npix, p_lo, p_hi; /* unpadded pixels p_lo..p_hi                  */
    size_t i0, i1;    /* input samples used                                 */
    double sigv;      /* > 0: Gaussian sigma constant in velocity (km/s)    */
} tpl_arm;

typedef struct tpl_job {
    const phx_grid *g;
    rvfit_library *lib;
    tpl_arm arm[RVFIT_MAX_ARMS];
    const size_t *model_of; /* [nfile] library model index of each file     */
    double sigma;
    const tpl_tab *tab;
    pthread_mutex_t lock;    /* CFITSIO                                    */
} tpl_job;

/* Antiderivatives of Phi(u) and u*Phi(u), exact. */
static void tpl_f12_exact(double u, double *f1, double *f2, double *cdf)
{
    *cdf = 0.5 * erfc(-u * 0.7071067811865476);
    double pdf = 0.3989422804014327 * exp(-0.5 * u * u);
    *f1 = u * *cdf + pdf;
    *f2 = 0.5 * ((u * u - 1.0) * *cdf + u * pdf);
}

static void tpl_tab_init(tpl_tab *t)
{
    for (int k = 0; k < TPL_TAB_N; k++) {
        double u = -8.0 + (double)k / TPL_TAB_PER_U, cdf;
        tpl_f12_exact(u, &t->f1[k], &t->f2[k], &cdf);
        t->d1[k] = cdf;
        t->d2[k] = u * cdf;
    }
}

static void tpl_f12(const tpl_tab *t, double u, double *f1, double *f2)
{
    double x = (u + 8.0) * TPL_TAB_PER_U;
    int k = (int)x;
    if (k < 0)
        k = 0;
    if (k > TPL_TAB_N - 2)
        k = TPL_TAB_N - 2;
    const double h = 1.0 / TPL_TAB_PER_U;
    double s = x - k, s2 = s * s, s3 = s2 * s;
    double h00 = 2 * s3 - 3 * s2 + 1, h10 = (s3 - 2 * s2 + s) * h;
    double h01 = -2 * s3 + 3 * s2, h11 = (s3 - s2) * h;
    *f1 = h00 * t->f1[k] + h10 * t->d1[k] + h01 * t->f1[k + 1] +
          h11 * t->d1[k + 1];
    *f2 = h00 * t->f2[k] + h10 * t->d2[k] + h01 * t->f2[k + 1] +
          h11 * t->d2[k + 1];
}

/* Exact integral of the piecewise-linear g from w[i0] to x (x inside the
 * input window).  cum[k] = integral from w[i0] to w[i0+k]. */
static double tpl_cum(const double *w, const double *g, const double *cum,
                      size_t i0, size_t i1, double x, size_t *hint)
{
    size_t j = *hint; /* w[j] <= x < w[j+1]; edges increase: move forward */
    if (j < i0)
        j = i0;
    while (j + 1 < i1 && w[j + 1] <= x)
        j++;
    *hint = j;
    double t = x - w[j];
    double slope = (g[j + 1] - g[j]) / (w[j + 1] - w[j]);
    return cum[j - i0] + t * (g[j] + 0.5 * slope * t);
}

/* S(e) of the file comment. */
static double tpl_S(const tpl_tab *tab, const double *w, const double *g,
                    const double *cum, size_t i0, size_t i1, double e,
                    double sig, size_t *hint)
{
    if (sig <= 0.0)
        return tpl_cum(w, g, cum, i0, i1, e, hint);
    double lo = e - TPL_NSIG * sig, hi = e + TPL_NSIG * sig;
    double s = tpl_cum(w, g, cum, i0, i1, lo, hint);
    size_t j = *hint; /* w[j] <= lo < w[j+1] */
    double gp = g[j] + (g[j + 1] - g[j]) * (lo - w[j]) / (w[j + 1] - w[j]);
    double up = TPL_NSIG, f1p, f2p, acc = 0.0;
    tpl_f12(tab, up, &f1p, &f2p);
    for (size_t k = j + 1;; k++) {
        double mu = k <= i1 && w[k] < hi ? w[k] : hi;
        double gq = mu == hi ? g[k - 1] + (g[k] - g[k - 1]) * (hi - w[k - 1])
                                              / (w[k] - w[k - 1])
                             : g[k];
        double uq = (e - mu) / sig, f1q, f2q;
        tpl_f12(tab, uq, &f1q, &f2q);
        if (up > uq) {
            double b = (gq - gp) / (uq - up), a = gp - b * up;
            acc += a * (f1p - f1q) + b * (f2p - f2q);
        }
        if (mu == hi)
            break;
        up = uq, gp = gq, f1p = f1q, f2p = f2q;
    }
    return s + sig * acc;
}

/* Rebin one model into arm a; out[npix] normalised to unit mean over the
 * unpadded pixels.  gbuf/cum are scratch of the input length. */
static int tpl_rebin(const tpl_job *j, const tpl_arm *ar, const double *f,
                     double *gbuf, double *cum, float *out)
{
    const double *w = j->g->wave;
    size_t i0 = ar->i0, i1 = ar->i1;
    for (size_t i = i0; i <= i1; i++)
        gbuf[i] = f[i] * w[i]; /* photon units */
    cum[0] = 0.0;
    for (size_t i = i0 + 1; i <= i1; i++)
        cum[i - i0] = cum[i - 1 - i0] +
                      0.5 * (gbuf[i] + gbuf[i - 1]) * (w[i] - w[i - 1]);
    size_t hint = i0;
    /* Velocity-constant smoothing uses sigma(lambda) at each edge: the
     * Gaussian varies by < 1e-3 over its own width, so this is exact to
     * that order. */
#define TPL_SIG(e) (ar->sigv > 0.0 ? (e) * ar->sigv / RVFIT_C_KMS : j->sigma)
    double sprev = tpl_S(j->tab, w, gbuf, cum, i0, i1, ar->edge[0],
                         TPL_SIG(ar->edge[0]), &hint);
    double sum = 0.0;
    double *val = malloc(ar->npix * sizeof *val);
    if (!val)
        return RVFIT_ERR_NOMEM;
    for (size_t p = 0; p < ar->npix; p++) {
        double s = tpl_S(j->tab, w, gbuf, cum, i0, i1, ar->edge[p + 1],
                         TPL_SIG(ar->edge[p + 1]), &hint);
        val[p] = (s - sprev) / (ar->edge[p + 1] - ar->edge[p]);
        sprev = s;
        if (p >= ar->p_lo && p <= ar->p_hi)
            sum += val[p];
    }
    double mean = sum / (double)(ar->p_hi - ar->p_lo + 1);
    int st = (mean > 0.0 && isfinite(mean)) ? RVFIT_OK : RVFIT_ERR_NUMERIC;
    for (size_t p = 0; p < ar->npix && !st; p++)
        out[p] = (float)(val[p] / mean);
    free(val);
    return st;
#undef TPL_SIG
}

static int tpl_model(tpl_job *j, size_t fi, double *f, double *gbuf,
                     double *cum, rvfit_err *e)
{
    const char *path = j->g->file[fi].path;
    pthread_mutex_lock(&j->lock);
    int st = phx_flux(path, j->g->nwave, f, e);
    pthread_mutex_unlock(&j->lock);
    size_t m = j->model_of[fi];
    for (int a = 0; !st && a < j->lib->narm; a++) {
        rvfit_lib_arm *la = &j->lib->arm[a];
        st = tpl_rebin(j, &j->arm[a], f, gbuf, cum, la->flux + m * la->npix);
        if (st)
            rvfit_err_set(e, st, "%s: arm %s: %s", path, la->name,
                          st == RVFIT_ERR_NOMEM ? "no memory"
                                                : "mean flux not positive");
    }
    return st;
}

/* Per-thread buffers of the input length: flux, photon flux, cumulative
 * integral. */
typedef struct tpl_scratch {
    double *f, *g, *cum;
} tpl_scratch;

static void tpl_scratch_free(void *arg)
{
    tpl_scratch *w = arg;
    free(w->f), free(w->g), free(w->cum);
    free(w);
}

static void *tpl_scratch_new(void *ctx)
{
    const tpl_job *j = ctx;
    size_t n = j->g->nwave;
    tpl_scratch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->f = malloc(n * sizeof *w->f);
    w->g = malloc(n * sizeof *w->g);
    w->cum = malloc(n * sizeof *w->cum);
    if (!w->f || !w->g || !w->cum) {
        tpl_scratch_free(w);
        return NULL;
    }
    return w;
}

static int tpl_item(void *ctx, void *scratch, size_t fi, rvfit_err *e)
{
    tpl_scratch *w = scratch;
    return tpl_model(ctx, fi, w->f, w->g, w->cum, e);
}

/* ---- axes from the file keywords ---------------------------------- */

/* Axes, EXISTS and the file -> model map. */
static int tpl_space(const phx_grid *g, rvfit_library *lib,
                     size_t *model_of, rvfit_err *err)
{
    static const char *const nm[4] = {"TEFF", "LOGG", "FEH", "ALPHAFE"};
    static const char *const un[4] = {"K", "dex", "dex", "dex"};
    size_t n = g->nfile;
    double *v = malloc(2 * n * sizeof *v);
    if (!v)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "templates: no memory");
    int st = RVFIT_OK;
    lib->nparam = 4;
    for (int p = 0; p < 4 && !st; p++) {
        for (size_t i = 0; i < n; i++) {
            const phx_file *fl = &g->file[i];
            v[i] = p == 0 ? fl->teff : p == 1 ? fl->logg
                                     : p == 2 ? fl->feh : fl->alpha;
        }
        st = tools_axis(&lib->axis[p], nm[p], un[p],
                        p == 0 ? RVFIT_SCALE_LOG10 : RVFIT_SCALE_LINEAR, v,
                        n, v + n, err);
    }
    free(v);
    if (st)
        return st;
    lib->nmodel = 1;
    for (int p = 0; p < 4; p++)
        lib->nmodel *= (size_t)lib->axis[p].nnode;
    lib->exists = calloc(lib->nmodel, 1);
    if (!lib->exists)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "templates: no memory");
    for (size_t i = 0; i < n; i++) {
        const phx_file *fl = &g->file[i];
        double x[4] = {fl->teff, fl->logg, fl->feh, fl->alpha};
        size_t m = 0;
        for (int p = 0; p < 4; p++)
            m = m * (size_t)lib->axis[p].nnode +
                (size_t)tools_axis_find(&lib->axis[p], x[p]);
        if (lib->exists[m])
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: same parameters"
                                 " (%g, %g, %g, %g) as another file",
                                 fl->path, x[0], x[1], x[2], x[3]);
        lib->exists[m] = 1;
        model_of[i] = m;
    }
    return RVFIT_OK;
}

/* ---- arms ---------------------------------------------------------- */

/* Output grid of arm `t` (library arm la, scratch ar) and the input
 * window it needs: input must reach 8 sigma beyond the outer edges. */
static int tpl_arm_grid(const rvfit_template_arm *t, double vmax,
                        double sig, const phx_grid *g,
                        rvfit_lib_arm *la, tpl_arm *ar, rvfit_err *err)
{
    if (!(t->lam_min > 0.0 && t->lam_max > t->lam_min && t->step > 0.0))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %.16s: bad range "
                             "%g-%g A or step %g", t->name, t->lam_min,
                             t->lam_max, t->step);
    snprintf(la->name, sizeof la->name, "%.15s", t->name);
    double mid = 0.5 * (t->lam_min + t->lam_max);
    double pad = vmax / RVFIT_C_KMS;
    la->dlnl = log1p(t->step / mid);
    la->lnl0 = log(t->lam_min) - pad;
    double last = log(t->lam_max) + pad;
    la->npix = (size_t)ceil((last - la->lnl0) / la->dlnl - 1e-9) + 1;
    ar->npix = la->npix;
    ar->p_lo = (size_t)ceil(pad / la->dlnl - 1e-9);
    ar->p_hi = (size_t)floor((log(t->lam_max) - la->lnl0) / la->dlnl + 1e-9);
    ar->edge = malloc((ar->npix + 1) * sizeof *ar->edge);
    if (!ar->edge)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "templates: no memory");
    for (size_t p = 0; p <= ar->npix; p++)
        ar->edge[p] = exp(la->lnl0 + ((double)p - 0.5) * la->dlnl);
    ar->sigv = t->sigma_kms > 0.0 ? t->sigma_kms : 0.0;
    la->sigma_kms = ar->sigv;
    if (ar->sigv > 0.0)
        sig = ar->edge[ar->npix] * ar->sigv / RVFIT_C_KMS;
    double need_lo = ar->edge[0] - (TPL_NSIG + 1.0) * sig;
    double need_hi = ar->edge[ar->npix] + (TPL_NSIG + 1.0) * sig;
    const double *w = g->wave;
    if (w[0] > need_lo || w[g->nwave - 1] < need_hi)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s needs %.2f-%.2f"
                             " A (with %g km/s padding and the Gaussian), the"
                             " grid covers %.2f-%.2f A", la->name, need_lo,
                             need_hi, vmax, w[0], w[g->nwave - 1]);
    size_t i0 = 0, i1 = g->nwave - 1;
    while (i0 + 1 < g->nwave && w[i0 + 1] <= need_lo)
        i0++;
    while (i1 > 0 && w[i1 - 1] >= need_hi)
        i1--;
    ar->i0 = i0;
    ar->i1 = i1;
    return RVFIT_OK;
}

static int tpl_run(tpl_job *j, int nthreads, rvfit_err *err)
{
    const rvfit_parallel_job job = {j, tpl_scratch_new, tpl_scratch_free,
                                    tpl_item};
    pthread_mutex_init(&j->lock, NULL);
    int st = rvfit_parallel_for(&job, j->g->nfile, nthreads, err);
    pthread_mutex_destroy(&j->lock);
    return st;
}

int rvfit_templates_build(const char *griddir, int narm,
                          const rvfit_template_arm *arms,
                          const char *instrument,
                          const rvfit_templates_opts *o, const char *outdir,
                          rvfit_err *err)
{
    if (narm < 1 || narm > RVFIT_MAX_ARMS || !arms || !o || !griddir ||
        !outdir)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "templates: need 1..%d"
                             " arms, options, grid and output directories",
                             RVFIT_MAX_ARMS);
    if (!(o->sigma0 >= 0.0) || !(o->vmax >= 0.0))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "templates: bad sigma0 "
                             "%g or vmax %g", o->sigma0, o->vmax);
    phx_grid g;
    rvfit_library lib;
    tpl_job j;
    memset(&lib, 0, sizeof lib);
    memset(&j, 0, sizeof j);
    int st = phx_scan(griddir, o->teff_min, o->teff_max, &g, err);
    if (st) {
        rvfit_err_prefix(err, "templates");
        return st;
    }
    size_t *model_of = malloc(g.nfile * sizeof *model_of);
    st = model_of ? tpl_space(&g, &lib, model_of, err)
                  : rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
    lib.narm = narm;
    double maxstep = 0.0;
    for (int a = 0; !st && a < narm; a++) {
        st = tpl_arm_grid(&arms[a], o->vmax, o->sigma0, &g, &lib.arm[a],
                          &j.arm[a], err);
        maxstep = fmax(maxstep, arms[a].step);
    }
    if (!st)
        st = tools_alloc_flux(&lib, err);
    if (!st) {
        lib.sigma0 = sqrt(o->sigma0 * o->sigma0 + maxstep * maxstep / 12.0);
        lib.vmax = o->vmax;
        snprintf(lib.instrument, sizeof lib.instrument, "%s",
                 instrument ? instrument : "");
        snprintf(lib.source, sizeof lib.source, "%s", griddir);
        j.g = &g;
        j.lib = &lib;
        j.model_of = model_of;
        j.sigma = o->sigma0;
        tpl_tab *tab = malloc(sizeof *tab);
        if (tab) {
            tpl_tab_init(tab);
            j.tab = tab;
            st = tpl_run(&j, o->nthreads, err);
        } else {
            st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
        }
        free(tab);
    }
    if (!st)
        st = tools_library_finish(&lib, o, outdir, err);
    for (int a = 0; a < narm; a++)
        free(j.arm[a].edge);
    free(model_of);
    rvfit_library_free(&lib);
    phx_free(&g);
    if (st)
        rvfit_err_prefix(err, "templates from %s", griddir);
    return st;
}
