/* joint_sb2.c — is an exposure a double-lined binary? ([fit] sb2 = 1)
 *
 * The two-velocity model of an exposure is the continuum times
 * (1 - r) t(v1) + r t(v2): two copies of the object's fitted template
 * (its theta and vsini), the primary at the exposure's VRAD (v1), the
 * secondary at v2, r the secondary's share of the light.  Its -2 ln L is
 * the single fit's formula (rvfit/physics.h: the continuum marginalised,
 * + ln det(S^T S)) with that model; Delta chi^2 = -2 ln L(single) - min
 * over v2 and r of -2 ln L(two).
 *
 * t(v) of a pixel is the backend's model divided by its continuum at
 * (theta, v, vsini) (the `models` call of each exposure at SB2_NV
 * velocities about v1: one backend call per chunk of exposures), so the
 * templates are exactly the fit's (rotation, Doppler shift, resolution
 * matrix); the continuum solve is the host's, in normal equations that
 * are quadratic in r: N(r) = (1-r)^2 A_pp + 2r(1-r) A_ps + r^2 A_ss and
 * b(r) = (1-r) c_p + r c_s (p, s: the two templates), so a pair costs
 * one weighted product per pixel and each r a small Cholesky
 * (rvfit_chol_eq_solve).  The search alternates: the secondary over the
 * grid with the primary at VRAD, the primary with that secondary, the
 * secondary again.  Components closer than SB2_MINSEP are not searched: a
 * second copy of the template there mostly reshapes the lines of the
 * first (it fits line-width and asymmetry mismatch), which is not a
 * companion. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "joint_internal.h"
#include "rvfit/linalg.h"
#include "rvfit/physics.h"
#include "rvfit/pool.h"

#define SB2_NV (2 * SB2_NSTEP + 1)
#define SB2_CHUNK_BYTES (64u << 20) /* models and continua per call */

static const double sb2_r[] = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5};
#define SB2_NR (int)(sizeof sb2_r / sizeof *sb2_r)

#define NPAIR (RVFIT_MAX_POLY * (RVFIT_MAX_POLY + 1) / 2)

/* One arm of one exposure: its usable pixels (m) with the weighted basis
 * products g[q][p] = w B_k B_l (q the packed pair k >= l) and
 * wfb[k][p] = w f B_k, the templates t[p][v] at the SB2_NV velocities,
 * and the sums over pixels: dd = sum w f^2, ad[v][q] = sum g t_v^2,
 * c[v][k] = sum wfb t_v, and ap[v][q] = sum g t_v t_x for the template x
 * of the current round. */
typedef struct sb2_arm {
    int np;
    size_t m;
    double *g, *wfb, *t;
    double dd;
    double ad[SB2_NV][NPAIR], c[SB2_NV][RVFIT_MAX_POLY];
    double ap[SB2_NV][NPAIR];
} sb2_arm;

typedef struct sb2_job {
    fit_ctx *f;
    const size_t *exp;      /* [n] batch rows of this chunk            */
    float *const *model;    /* [narm] n * SB2_NV rows of the batch arm */
    float *const *cont;
    rvfit_sb2 *out;         /* [nspec]                                 */
} sb2_job;

/* Per thread: the arms of the exposure at hand. */
typedef struct sb2_scratch {
    sb2_arm arm[RVFIT_MAX_ARMS];
    size_t cap;             /* pixels each arm's arrays hold            */
    double *B;              /* basis of one arm [np][npix]              */
} sb2_scratch;

static void *scratch_new(void *ctx)
{
    (void)ctx;
    return calloc(1, sizeof(sb2_scratch));
}

static void scratch_free(void *p)
{
    sb2_scratch *s = p;
    for (int a = 0; s && a < RVFIT_MAX_ARMS; a++)
        free(s->arm[a].g), free(s->arm[a].wfb), free(s->arm[a].t);
    if (s)
        free(s->B);
    free(s);
}

static int scratch_grow(sb2_scratch *s, size_t npix)
{
    if (npix <= s->cap)
        return 0;
    free(s->B);
    s->B = malloc(npix * RVFIT_MAX_POLY * sizeof *s->B);
    int ok = s->B != NULL;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        sb2_arm *A = &s->arm[a];
        free(A->g), free(A->wfb), free(A->t);
        A->g = malloc(npix * NPAIR * sizeof *A->g);
        A->wfb = malloc(npix * RVFIT_MAX_POLY * sizeof *A->wfb);
        A->t = malloc(npix * SB2_NV * sizeof *A->t);
        ok = ok && A->g && A->wfb && A->t;
    }
    s->cap = ok ? npix : 0;
    return ok ? 0 : -1;
}

/* The usable pixels of arm a of chunk exposure i into A (0: none). */
static int arm_pixels(const sb2_job *j, sb2_scratch *sc, size_t i, int a,
                      sb2_arm *A)
{
    const fit_ctx *f = j->f;
    const rvfit_arm_batch *R = &f->b->arm[a];
    size_t row = j->exp[i], N = R->npix, n = rvfit_arm_npix(R, row), m = 0;
    int np = f->o->model.npoly;
    A->np = np;
    A->m = 0;
    const double *wave = R->wave + (R->wave_per_spec ? row * N : 0);
    double *u = A->wfb; /* the template coordinate: not needed */
    rvfit_pixel_tables(f->o->model.basis, np, 0, 1, n, n, wave, N, u, sc->B);
    for (size_t p = 0; p < n; p++) {
        double w = R->ivar[row * N + p], fl = R->flux[row * N + p];
        int ok = w > 0 && isfinite(fl);
        for (int v = 0; ok && v < SB2_NV; v++) {
            size_t q = (i * SB2_NV + (size_t)v) * N + p;
            double c = j->cont[a][q], md = j->model[a][q];
            ok = c != 0 && isfinite(c) && isfinite(md);
            if (ok)
                A->t[m * SB2_NV + (size_t)v] = md / c;
        }
        if (!ok)
            continue;
        for (int k = 0, q = 0; k < np; k++) {
            double bk = sc->B[(size_t)k * N + p];
            A->wfb[(size_t)k * N + m] = w * fl * bk;
            for (int l = 0; l <= k; l++, q++)
                A->g[(size_t)q * N + m] = w * bk * sc->B[(size_t)l * N + p];
        }
        A->dd += w * fl * fl;
        m++;
    }
    A->m = m;
    return m > (size_t)np;
}

/* Sums over the pixels: the diagonal ones (x < 0) or ap against x. */
static void arm_sums(sb2_arm *A, size_t N, int x)
{
    int np = A->np, npair = np * (np + 1) / 2;
    for (int v = 0; v < SB2_NV; v++) {
        double *dst = x < 0 ? A->ad[v] : A->ap[v];
        for (int q = 0; q < npair; q++) {
            const double *g = A->g + (size_t)q * N;
            double s = 0;
            for (size_t p = 0; p < A->m; p++)
                s += g[p] * A->t[p * SB2_NV + (size_t)v] *
                     A->t[p * SB2_NV + (size_t)(x < 0 ? v : x)];
            dst[q] = s;
        }
        for (int k = 0; x < 0 && k < np; k++) {
            const double *b = A->wfb + (size_t)k * N;
            double s = 0;
            for (size_t p = 0; p < A->m; p++)
                s += b[p] * A->t[p * SB2_NV + (size_t)v];
            A->c[v][k] = s;
        }
    }
}

/* -2 ln L of one arm: the primary template pr with 1 - r of the light,
 * the secondary se with r; ap holds the pair sums of x (the round's fixed
 * template) with every v, so the pair is ap[pr == x ? se : pr]. */
static double arm_m2lnl(const sb2_arm *A, int x, int pr, int se, double r)
{
    int np = A->np;
    double N[RVFIT_MAX_POLY * RVFIT_MAX_POLY], b[RVFIT_MAX_POLY] = {0};
    double sol[RVFIT_MAX_POLY] = {0}, logdet = 0, p = 1 - r;
    const double *pair = r > 0 ? A->ap[pr == x ? se : pr] : A->ad[pr];
    for (int k = 0, q = 0; k < np; k++) {
        b[k] = p * A->c[pr][k] + r * A->c[se][k];
        for (int l = 0; l <= k; l++, q++)
            N[k * np + l] = N[l * np + k] = p * p * A->ad[pr][q] +
                                            2 * r * p * pair[q] +
                                            r * r * A->ad[se][q];
    }
    if (rvfit_chol_eq_solve(np, N, b, sol, &logdet))
        return NAN;
    double bx = 0;
    for (int k = 0; k < np; k++)
        bx += b[k] * sol[k];
    return A->dd - bx + logdet;
}

typedef struct sb2_best {
    double L;
    int pr, se, r;
} sb2_best;

/* One round: x fixed as the primary (vary_primary 0: the secondary
 * runs over the grid) or as the secondary (1: the primary runs). */
static void round_min(const sb2_arm *arms, int narm, int x, int vary_primary,
                      sb2_best *best)
{
    for (int v = 0; v < SB2_NV; v++) {
        if (abs(v - x) * SB2_STEP < SB2_MINSEP)
            continue;
        int pr = vary_primary ? v : x, se = vary_primary ? x : v;
        for (int r = 0; r < SB2_NR; r++) {
            double L = 0;
            for (int a = 0; a < narm; a++)
                if (arms[a].m > (size_t)arms[a].np)
                    L += arm_m2lnl(&arms[a], x, pr, se, sb2_r[r]);
            if (L < best->L)
                *best = (sb2_best){L, pr, se, r};
        }
    }
}

/* The primary at VRAD against a secondary anywhere, then the primary
 * moved against that secondary (a near-equal pair fitted by one template
 * puts VRAD between its components), then the secondary again. */
static int sb2_item(void *ctx, void *scratch, size_t i, rvfit_err *err)
{
    sb2_job *j = ctx;
    fit_ctx *f = j->f;
    sb2_scratch *sc = scratch;
    const rvfit_batch *b = f->b;
    size_t npmax = 0;
    for (int a = 0; a < b->narm; a++)
        npmax = b->arm[a].npix > npmax ? b->arm[a].npix : npmax;
    rvfit_sb2 *o = &j->out[j->exp[i]];
    *o = (rvfit_sb2){NAN, NAN, NAN};
    if (scratch_grow(sc, npmax))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "sb2: out of memory");
    int used = 0, x0 = SB2_NV / 2;
    double L0 = 0;
    for (int a = 0; a < b->narm; a++) {
        sb2_arm *A = &sc->arm[a];
        A->dd = 0;
        if (!arm_pixels(j, sc, i, a, A)) {
            A->m = 0;
            continue;
        }
        arm_sums(A, b->arm[a].npix, -1);
        arm_sums(A, b->arm[a].npix, x0);
        L0 += arm_m2lnl(A, x0, x0, x0, 0);
        used++;
    }
    if (!used || !isfinite(L0))
        return RVFIT_OK;
    sb2_best best = {INFINITY, x0, x0, 0};
    round_min(sc->arm, b->narm, x0, 0, &best);
    for (int round = 0; round < 2 && isfinite(best.L); round++) {
        int x = round == 0 ? best.se : best.pr;
        for (int a = 0; a < b->narm; a++)
            if (sc->arm[a].m > (size_t)sc->arm[a].np)
                arm_sums(&sc->arm[a], b->arm[a].npix, x);
        round_min(sc->arm, b->narm, x, round == 0, &best);
    }
    if (!isfinite(best.L))
        return RVFIT_OK;
    double v1 = f->best[j->exp[i]].v;
    o->dchisq = fmax(L0 - best.L, 0);
    o->vrad2 = v1 + (best.se - x0) * SB2_STEP;
    o->fratio = sb2_r[best.r] / (1 - sb2_r[best.r]);
    return RVFIT_OK;
}

/* Exposures [e0, e0 + n) of xact: their models at the SB2_NV velocities
 * in one backend call, then the host's sums on the fit's threads. */
static int sb2_chunk(fit_ctx *f, size_t e0, size_t n, rvfit_sb2 *out)
{
    const rvfit_batch *b = f->b;
    size_t np = n * SB2_NV;
    rvfit_point *p = malloc(np * sizeof *p);
    float *model[RVFIT_MAX_ARMS] = {0}, *cont[RVFIT_MAX_ARMS] = {0};
    int rc = p ? RVFIT_OK : fit_nomem(f);
    for (int a = 0; a < b->narm && !rc; a++) {
        model[a] = malloc(np * b->arm[a].npix * sizeof(float));
        cont[a] = malloc(np * b->arm[a].npix * sizeof(float));
        if (!model[a] || !cont[a])
            rc = fit_nomem(f);
    }
    for (size_t i = 0; i < n && !rc; i++)
        for (int v = 0; v < SB2_NV; v++) {
            rvfit_point *q = &p[i * SB2_NV + (size_t)v];
            *q = f->best[f->xact[e0 + i]];
            q->v += (v - SB2_NV / 2) * SB2_STEP;
        }
    if (!rc)
        rc = fit_models(f, np, p, model, cont);
    sb2_job job = {f, f->xact + e0, model, cont, out};
    rvfit_parallel_job pj = {&job, scratch_new, scratch_free, sb2_item};
    if (!rc)
        rc = rvfit_parallel_for(&pj, n, f->host->nthreads, f->err);
    for (int a = 0; a < b->narm; a++)
        free(model[a]), free(cont[a]);
    free(p);
    return rc;
}

int joint_sb2(fit_ctx *f, rvfit_sb2 *out)
{
    size_t per = 0;
    for (int a = 0; a < f->b->narm; a++)
        per += 2 * SB2_NV * f->b->arm[a].npix * sizeof(float);
    size_t chunk = per ? SB2_CHUNK_BYTES / per : 1;
    chunk = chunk ? chunk : 1;
    for (size_t s = 0; s < f->b->nspec; s++)
        out[s] = (rvfit_sb2){NAN, NAN, NAN};
    int rc = RVFIT_OK;
    for (size_t e = 0; e < f->nxact && !rc; e += chunk)
        rc = sb2_chunk(f, e, f->nxact - e < chunk ? f->nxact - e : chunk,
                       out);
    for (size_t i = 0; i < f->nxact && !rc; i++) {
        size_t s = f->xact[i];
        if (out[s].dchisq > SB2_WARN)
            f->res[s].warn |= RVFIT_WARN_SB2;
    }
    return rc;
}
