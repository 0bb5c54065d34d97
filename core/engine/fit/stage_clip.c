/* stage_clip.c — after the velocity refinement: pixels far ABOVE the
 * best-fit model (cosmic rays the extraction did not flag, hot pixels,
 * sky-line residuals) get ivar 0, the batch is loaded again, the objects
 * that lost much chi^2 are re-optimised from where they were, and the
 * velocities whose model changed are refined again.  One unflagged cosmic
 * ray of a few hundred sigma otherwise carries most of an arm's chi^2 and
 * drags the velocity by several of its errors (docs/benchmarks.md, "Joint
 * fits").  Pixels below the model are never rejected: there the model
 * lacks absorption (template mismatch), and hiding it would hide the
 * mismatch from CHISQ_RED and the errors.  The stage follows the velocity
 * refinement because at the optimiser's velocity (stage 1's) a residual
 * offset leaves every line a positive and a negative wing: at R 7500 and
 * high S/N those pass 5 sigma, and rejecting one wing of each line held
 * the velocity where it was (LAMOST MRS coadds: 7 sigma off).
 *
 * Each pass: models of the candidate spectra (all, then those refined
 * again) in one backend call; pixels above clip * sigma and their two
 * neighbours rejected; reload; -2 ln L refreshed at the optimum of every
 * object that lost pixels; the optimiser rerun for those that lost more
 * than CLIP_REOPT in chi^2; their spectra and the others that lost pixels
 * refined again.  At most CLIP_PASSES passes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit_internal.h"
#include "rvfit/numeric.h"

#define CLIP_PASSES 3
/* chi^2 of the rejected pixels above which an object's parameters are
 * fitted again.  A pixel of residual r moves a parameter by about r times
 * the square root of its share of the parameter's information, rarely
 * above 1e-3: r = 10 moves it by 0.3 sigma at most.  On 212 independent-
 * generator exposures with cosmic rays, 100 gave the same parameters as
 * 25 (rms difference from the cosmic-free twin's fits 0.76 vs 0.76 sigma
 * in TEFF) for two thirds of the clip stage's points; 400 and never
 * re-optimising left 1.05 and 1.10 sigma. */
#define CLIP_REOPT 100.0
/* Models per re-optimisation: it starts at the optimum, so most finish in
 * 3-5 (212 exposures: p90 5, max 14), and the slowest would set the
 * number of backend calls of every pass; the best point so far is kept. */
#define CLIP_REOPT_ITER 8
/* Median of chi^2 with one degree of freedom: median(r^2) / this is the
 * robust variance of an arm's normalised residuals (1 for a good fit). */
#define CLIP_MED_CHI2 0.45493642311957

typedef struct clip_ctx {
    fit_ctx *f;
    size_t n;                       /* candidate spectra               */
    size_t *cand;                   /* [nspec]                          */
    float *const *model;            /* [narm][n * npix] their models:
                                       the caller's model rows (the
                                       diagnostics overwrite them) or
                                       own                              */
    float *own[RVFIT_MAX_ARMS];
    double *drop;                   /* [nspec] chi^2 rejected, by key   */
    unsigned char *hit;             /* [nspec] lost pixels, by key (2:
                                       re-optimised)                    */
    unsigned char *lost;            /* [nspec] lost pixels, by spectrum */
    size_t maxpix;                  /* pixels of the longest arm        */
    double *r, *r2;                 /* [threads * maxpix] scratch       */
    double *thr;                    /* [n * narm] rejection thresholds  */
    size_t *sub;                    /* [nspec] act subset               */
    rvfit_point *pts;               /* [nspec]                          */
    double *m;                      /* [nspec]                          */
} clip_ctx;

static void clip_free(clip_ctx *c)
{
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(c->own[a]);
    free(c->cand), free(c->drop), free(c->hit), free(c->lost);
    free(c->r), free(c->r2), free(c->thr), free(c->sub);
    free(c->pts), free(c->m);
}

/* The fit needs what load_batch reads: a run keeps the flux and the
 * resolution data until the fit ends when clipping. */
static int clip_check(const fit_ctx *f)
{
    const rvfit_batch *b = f->b;
    for (int a = 0; a < b->narm; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        if (!A->flux || !A->ivar ||
            (A->res_kind == RVFIT_RES_BAND && !A->res) ||
            (A->res_kind == RVFIT_RES_LSF && !A->lsf))
            return rvfit_err_set(f->err, RVFIT_ERR_INTERNAL,
                                 "fit: [fit] clip needs arm %s's flux, ivar "
                                 "and resolution data during the fit", A->name);
    }
    return RVFIT_OK;
}

static int clip_alloc(clip_ctx *c)
{
    fit_ctx *f = c->f;
    const rvfit_batch *b = f->b;
    size_t ns = b->nspec ? b->nspec : 1, maxpix = 1;
    for (int a = 0; a < b->narm; a++) {
        if (!f->models && !(c->own[a] = malloc(ns * b->arm[a].npix *
                                               sizeof(float))))
            return fit_nomem(f);
        maxpix = b->arm[a].npix > maxpix ? b->arm[a].npix : maxpix;
    }
    c->model = f->models ? f->models : c->own;
    c->cand = malloc(ns * sizeof *c->cand);
    c->drop = malloc(ns * sizeof *c->drop);
    c->hit = malloc(ns);
    c->lost = malloc(ns);
    size_t nt = (size_t)fit_nthreads(f);
    c->maxpix = maxpix;
    c->r = malloc(nt * maxpix * sizeof *c->r);
    c->r2 = malloc(nt * maxpix * sizeof *c->r2);
    c->thr = malloc(ns * (size_t)b->narm * sizeof *c->thr);
    c->sub = malloc(ns * sizeof *c->sub);
    c->pts = malloc(ns * sizeof *c->pts);
    c->m = malloc(ns * sizeof *c->m);
    if (!c->cand || !c->drop || !c->hit || !c->lost || !c->r || !c->r2 ||
        !c->thr || !c->sub || !c->pts || !c->m)
        return fit_nomem(f);
    c->n = f->nxact;
    memcpy(c->cand, f->xact, f->nxact * sizeof *c->cand);
    return RVFIT_OK;
}

/* The arm's ivar that rejections write to: a copy of the caller's,
 * made at the first rejection in that arm. */
static float *own_ivar(fit_ctx *f, int a)
{
    if (f->clip_ivar[a])
        return f->clip_ivar[a];
    const rvfit_arm_batch *A = &f->b->arm[a];
    size_t bytes = f->b->nspec * A->npix * sizeof(float);
    float *v = malloc(bytes ? bytes : 1);
    if (!v)
        return NULL;
    memcpy(v, A->ivar, bytes);
    if (f->b != &f->clipb) {
        f->clipb = *f->b;
        f->b = &f->clipb;
    }
    f->clip_ivar[a] = v;
    f->clipb.arm[a].ivar = v;
    return v;
}

/* Normalised residuals r of spectrum s, arm a (its model mod; NaN where
 * not used); returns their number and the largest into *rmax. */
static size_t clip_resid(const clip_ctx *c, size_t s, int a, const float *mod,
                         double *r, double *rmax)
{
    const rvfit_arm_batch *A = &c->f->b->arm[a];
    size_t np = rvfit_arm_npix(A, s), off = s * A->npix;
    const float *fl = A->flux + off, *iv = A->ivar + off;
    *rmax = -INFINITY;
    for (size_t i = 0; i < np; i++) {
        r[i] = iv[i] > 0 && isfinite(mod[i])
                   ? (fl[i] - mod[i]) * sqrt((double)iv[i])
                   : NAN;
        *rmax = r[i] > *rmax ? r[i] : *rmax;
    }
    return np;
}

/* The residual above which pixels of spectrum s, arm a are rejected, or
 * INFINITY when none is; r and r2 are scratch of maxpix. */
static double clip_threshold(const clip_ctx *c, size_t s, int a,
                             const float *mod, double *r, double *r2)
{
    const fit_ctx *f = c->f;
    double rmax;
    size_t np = clip_resid(c, s, a, mod, r, &rmax), n = 0;
    /* the threshold is at least clip: an arm with no pixel above it (most
     * arms without cosmic rays) needs no robust scale, the costly part */
    if (!(rmax > f->o->clip))
        return INFINITY;
    for (size_t i = 0; i < np; i++)
        if (!isnan(r[i]))
            r2[n++] = r[i] * r[i];
    if (n < 3)
        return INFINITY;
    double scale = sqrt(rvfit_median(r2, n) / CLIP_MED_CHI2);
    double t = f->o->clip * fmax(1.0, scale);
    return rmax > t ? t : INFINITY;
}

/* Candidate i's thresholds, one per arm: independent of the others, so
 * on the driver's threads. */
static void clip_thresholds(void *ctx, int tid, size_t i)
{
    clip_ctx *c = ctx;
    const rvfit_batch *b = c->f->b;
    double *r = c->r + (size_t)tid * c->maxpix;
    double *r2 = c->r2 + (size_t)tid * c->maxpix;
    for (int a = 0; a < b->narm; a++)
        c->thr[i * (size_t)b->narm + (size_t)a] = clip_threshold(
            c, c->cand[i], a, c->model[a] + i * b->arm[a].npix, r, r2);
}

/* Rejects the pixels of spectrum s, arm a (its model mod) above t and
 * their neighbours, judged on the residuals before this call; returns
 * the number rejected (-1: no memory) and adds their chi^2 to *drop. */
static long clip_arm(clip_ctx *c, size_t s, int a, const float *mod,
                     double t, double *drop)
{
    fit_ctx *f = c->f;
    double *r = c->r, rmax;
    size_t np = clip_resid(c, s, a, mod, r, &rmax);
    size_t off = s * f->b->arm[a].npix;
    long k = 0;
    float *w = NULL; /* this spectrum's ivar in the clip batch */
    for (size_t i = 0; i < np; i++) {
        if (!(r[i] > t))
            continue;
        if (!w) {
            float *v = own_ivar(f, a);
            if (!v)
                return -1;
            w = v + off;
        }
        for (size_t j = i ? i - 1 : 0; j <= i + 1 && j < np; j++)
            if (!isnan(r[j]) && w[j] > 0) {
                *drop += r[j] * r[j];
                w[j] = 0;
                k++;
            }
    }
    return k;
}

/* The models of the candidates and their rejections; the number of
 * spectra that lost pixels.  drop and hit are set by the object's key
 * (its first usable spectrum).  The thresholds (residuals and their
 * median: the costly part) on the driver's threads, the rejections, few,
 * here. */
static int clip_mark(clip_ctx *c, size_t *nhit)
{
    fit_ctx *f = c->f;
    const rvfit_batch *b = f->b;
    for (size_t i = 0; i < c->n; i++)
        c->pts[i] = f->best[c->cand[i]];
    int rc = fit_models(f, c->n, c->pts, c->model, NULL);
    *nhit = 0;
    if (rc)
        return rc;
    fit_for(f, c->n, clip_thresholds, c);
    for (size_t i = 0; i < c->n; i++) {
        size_t s = c->cand[i];
        const size_t *mem;
        fit_group_members(f, &c->cand[i], &mem);
        double d = 0;
        long got = 0;
        for (int a = 0; a < b->narm && got >= 0; a++) {
            double t = c->thr[i * (size_t)b->narm + (size_t)a];
            long k = t < INFINITY
                         ? clip_arm(c, s, a, c->model[a] + i * b->arm[a].npix,
                                    t, &d)
                         : 0;
            if (k > 0)
                f->res[s].nclip[a] += k, got += k;
            else if (k < 0)
                got = -1;
        }
        if (got < 0)
            return fit_nomem(f);
        if (got) {
            c->hit[mem[0]] = 1, c->drop[mem[0]] += d, c->lost[s] = 1;
            ++*nhit;
        }
    }
    return rc;
}

/* After the reload, for every object that lost pixels: -2 ln L at its
 * optimum anew, and the optimiser where the pixels carried more than
 * CLIP_REOPT; then the velocity refinement of every spectrum of the
 * objects re-optimised and of the other spectra that lost pixels (the
 * model of the rest is unchanged).  Those spectra are the next pass's
 * candidates. */
static int clip_refit(clip_ctx *c)
{
    fit_ctx *f = c->f;
    size_t nh = 0, nr = 0;
    for (size_t i = 0; i < f->nact; i++)
        if (c->hit[f->act[i]])
            c->pts[nh] = f->best[f->act[i]], c->sub[nh++] = f->act[i];
    int rc = nh ? fit_chisq_obj(f, nh, c->pts, c->m) : RVFIT_OK;
    for (size_t i = 0; i < nh && !rc; i++) {
        size_t k = c->sub[i];
        f->fbest[k] = c->m[i];
        c->hit[k] = c->drop[k] > CLIP_REOPT ? 2 : 1;
        if (c->hit[k] == 2)
            c->sub[nr++] = k;
    }
    if (!rc && nr)
        rc = fit_stage_optim_warm(f, c->sub, nr, CLIP_REOPT_ITER);
    c->n = 0;
    for (size_t i = 0; i < f->nact && !rc; i++) {
        const size_t *mem;
        size_t nm = fit_group_members(f, &f->act[i], &mem);
        for (size_t j = 0; j < nm && c->hit[f->act[i]]; j++)
            if (c->hit[f->act[i]] == 2 || c->lost[mem[j]])
                c->cand[c->n++] = mem[j];
    }
    if (!rc && c->n) {
        size_t *xact = f->xact, nxact = f->nxact;
        f->xact = c->cand, f->nxact = c->n;
        rc = fit_stage_vrefine(f);
        f->xact = xact, f->nxact = nxact;
    }
    return rc;
}

/* The clipped ivar into the backend: only the data when it can take them
 * alone (ops 2.1; a table the loader did not fill, as tests build, may
 * lack the entry), else the whole batch again. */
static int clip_reload(fit_ctx *f)
{
    const rvfit_backend_ops *o = f->be->ops;
    int rc = o->update_data ? o->update_data(f->be->state, f->b, f->err)
                            : RVFIT_ERR_UNAVAILABLE;
    if (rc != RVFIT_ERR_UNAVAILABLE)
        return rc;
    rvfit_err_clear(f->err);
    return o->load_batch(f->be->state, f->b, &f->o->model, f->err);
}

int fit_stage_clip(fit_ctx *f)
{
    if (!(f->o->clip > 0))
        return RVFIT_OK;
    clip_ctx c = {.f = f};
    int rc = clip_check(f);
    if (!rc)
        rc = clip_alloc(&c);
    for (int pass = 0; pass < CLIP_PASSES && !rc && c.n; pass++) {
        size_t nhit;
        memset(c.hit, 0, f->b->nspec);
        memset(c.lost, 0, f->b->nspec);
        memset(c.drop, 0, f->b->nspec * sizeof *c.drop);
        rc = clip_mark(&c, &nhit);
        if (rc || nhit == 0)
            break;
        double t0 = rvfit_now();
        rc = clip_reload(f);
        f->prof->reload_seconds += rvfit_now() - t0;
        if (rc)
            rvfit_err_prefix(f->err, "backend '%s': reload (clip)",
                             f->be->name);
        if (!rc)
            rc = clip_refit(&c);
    }
    clip_free(&c);
    return rc;
}
