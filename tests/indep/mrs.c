/* `rvfit-indep mrs`: stars observed by a LAMOST MRS-like spectrograph
 * (ind_mrs_arms: B ~4950-5350 A, R ~6300-6755 A, pixels uniform in ln
 * lambda, Gaussian LSF of R ~ 7500) on 1..--nnight-max nights each, with
 * --nexp-min..--nexp-max exposures a night, written as one med- file per
 * star and night (mrs_write.c), and the truth.
 *
 * Each star draws its parameters, systemic velocity and vsini once (as
 * `spectra`) and its orbit as `epochs` does (ind_orbit_draw: a
 * --binary-frac of single-lined binaries).  A night (file) draws its local
 * day (uniform over --span days from MJD 59000), the local time of the
 * first exposure (20:00-23:00 Beijing time), an exposure time (600, 900
 * or 1200 s; 3 minutes between exposures), the fibre (its LSF width
 * scale, 0.93-1.07: the reader's fixed R meets LSFs 7 % wider or
 * narrower) and its wavelength grid (the arms moved by -2..2 pixels).
 * Each exposure has its own S/N (log-uniform in [--snr-min, --snr-max]),
 * transparency (flux scale 0.5-1), sky residuals, calibration
 * distortion, cosmic rays (flagged in PIXMASK above 10 sigma, as in the
 * DESI mocks) and noise, and, in a third of exposures and arms, a run of
 * 2-5 dead pixels (FLUX 0, IVAR 0, PIXMASK 0).  The velocity of an
 * exposure is the orbit's at its LMJM, taken as the exposure's middle;
 * LMJM counts minutes of Beijing time (UTC + 8 h): MJD = LMJM / 1440 - 8/24.
 *
 * The truth file has HDU TRUTH (per star: DESIG, TARGETID = the OBSID of
 * the star's earliest file, which a joint fit reports for its designation,
 * and the columns of `epochs`' truth, NEXP counting all exposures),
 * EXPTRUTH (per exposure: TARGETID, EXPID = LMJM, DESIG, OBSID, FILE,
 * LMJM, MJD, VRAD, SNR, EXPTIME, the grid LL0_B/LL0_R (log10 lambda of
 * pixel 0) and DLL (log10 step), NBAD_B/NBAD_R (pixels of PIXMASK != 0 or
 * IVAR 0)) and COADDTRUTH (per file: FILE, OBSID, DESIG, TARGETID, MJD
 * the mean of its exposures', VRAD their S/N^2-weighted mean velocity,
 * NEXP).  Deterministic in the seeds, independent of the thread count. */
#include "mrs.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MJD0 59000
#define NIGHT_STREAM (1ULL << 41)
#define EXP_STREAM (1ULL << 42)
#define OBSID0 700000000LL
#define BLOCK 256 /* exposures observed before their files are written */

typedef struct {
    ind_draw d;
    ind_orbit o;                 /* o.nexp: nights                      */
    size_t f0;                   /* its files [f0, f0 + o.nexp)         */
    char desig[40];
} mrs_star;

typedef struct {
    size_t star, x0, nx;         /* exposures [x0, x0 + nx)             */
    long long day;               /* local day of the night's evening    */
    double exptime, dpix;
    int fiber;
    ind_fibre fib;
    ind_arm arms[IND_MRS_NARM];
    char name[64], planid[16];
} mrs_night;

typedef struct {
    size_t night;
    long long lmjm;
    double mjd, vrad, snr, fscale;
    double snr_arm[IND_MRS_NARM];
    int nbad[IND_MRS_NARM];
} mrs_exp;

typedef struct {
    const ind_mrs_args *a;
    mrs_star *st;
    mrs_night *nt;
    mrs_exp *x;
    size_t nstar, nnight, nx;
    ind_obsctx oc;
    ind_work *work;              /* per thread                          */
    float *pix;                  /* BLOCK exposures' pixels             */
    size_t x0;                   /* the block's first exposure          */
} mrs_ctx;

static double mrs_lmjm_mjd(long long lmjm)
{
    return (double)lmjm / 1440.0 - 8.0 / 24.0;
}

/* 'LAMOST JHHMMSS.ss+DDMMSS.s' from the position. */
static void desig_of(double ra, double dec, char *out, size_t n)
{
    double h = ra / 15.0, ad = fabs(dec);
    int hh = (int)h, hm = (int)((h - hh) * 60), dd = (int)ad;
    int dm = (int)((ad - dd) * 60);
    double hs = ((h - hh) * 60 - hm) * 60, ds = ((ad - dd) * 60 - dm) * 60;
    snprintf(out, n, "LAMOST J%02d%02d%05.2f%c%02d%02d%04.1f", hh, hm, hs,
             dec < 0 ? '-' : '+', dd, dm, ds);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Star s's nights (distinct local days, in order) and exposures. */
static void plan_star(mrs_ctx *c, size_t s)
{
    const ind_mrs_args *a = c->a;
    mrs_star *S = &c->st[s];
    long long day[64];
    int nn = S->o.nexp < 64 ? S->o.nexp : 64;
    ind_rng r;
    ind_rng_seed(&r, a->seed, s, 6);
    for (int k = 0; k < nn; k++)
        day[k] = MJD0 + (long long)(a->span * ind_rng_uniform(&r));
    qsort(day, (size_t)nn, sizeof *day, cmp_ll);
    for (int k = 1; k < nn; k++)
        day[k] = day[k] > day[k - 1] ? day[k] : day[k - 1] + 1;
    S->f0 = c->nnight;
    for (int k = 0; k < nn; k++) {
        size_t f = c->nnight++;
        mrs_night *N = &c->nt[f];
        ind_rng_seed(&r, a->seed, NIGHT_STREAM + f, 1);
        N->star = s, N->day = day[k], N->x0 = c->nx;
        long long start = 1200 + (long long)(180 * ind_rng_uniform(&r));
        N->nx = (size_t)(a->nexp_min + (int)((a->nexp_max - a->nexp_min + 1)
                                             * ind_rng_uniform(&r)));
        N->exptime = 600.0 + 300.0 * (int)(3 * ind_rng_uniform(&r));
        N->dpix = 4.0 * ind_rng_uniform(&r) - 2.0;
        N->fiber = 1 + (int)(250 * ind_rng_uniform(&r));
        N->fib = (ind_fibre){0.93 + 0.14 * ind_rng_uniform(&r), 0.0, 0.0};
        for (int q = 0; q < IND_MRS_NARM; q++) {
            N->arms[q] = ind_mrs_arms()[q];
            N->arms[q].lo += N->dpix * N->arms[q].step;
        }
        snprintf(N->planid, sizeof N->planid, "IND%05zu", f);
        snprintf(N->name, sizeof N->name, "med-%lld-%s_sp%02d-%03d.fits",
                 N->day, N->planid, 1 + (N->fiber - 1) / 16, N->fiber);
        for (size_t e = 0; e < N->nx; e++) {
            mrs_exp *x = &c->x[c->nx++];
            x->night = f;
            x->lmjm = N->day * 1440 + start +
                      (long long)e * ((long long)N->exptime / 60 + 3);
            x->mjd = mrs_lmjm_mjd(x->lmjm);
            x->vrad = S->o.binary
                          ? ind_kepler_rv(S->d.vrad, S->o.k1, S->o.period,
                                          S->o.ecc, S->o.omega, S->o.t0,
                                          x->mjd)
                          : S->d.vrad;
            x->snr = a->o.snr_min *
                     pow(a->o.snr_max / a->o.snr_min, ind_rng_uniform(&r));
            x->fscale = 0.5 + 0.5 * ind_rng_uniform(&r);
        }
    }
}

static int plan(mrs_ctx *c)
{
    const ind_mrs_args *a = c->a;
    ind_epochs_args ea = {0};
    ea.seed = a->seed, ea.nexp_min = 1, ea.nexp_max = a->nnight_max;
    ea.binary_frac = a->binary_frac, ea.k_min = a->k_min;
    ea.k_max = a->k_max, ea.p_min = a->p_min, ea.p_max = a->p_max;
    c->nstar = a->nstar;
    c->st = calloc(a->nstar, sizeof *c->st);
    size_t maxn = a->nstar * (size_t)a->nnight_max;
    c->nt = calloc(maxn, sizeof *c->nt);
    c->x = calloc(maxn * (size_t)a->nexp_max, sizeof *c->x);
    if (!c->st || !c->nt || !c->x)
        return -1;
    for (size_t s = 0; s < a->nstar; s++) {
        mrs_star *S = &c->st[s];
        ind_draw_star(a->seed, s, a->ps, &a->o, &S->d);
        ind_orbit_draw(&ea, s, &S->o);
        desig_of(S->d.ra, S->d.dec, S->desig, sizeof S->desig);
        plan_star(c, s);
    }
    return 0;
}

/* Exposure k's pixels in the block: flux, ivar, mask per arm. */
static void exp_bufs(const mrs_ctx *c, size_t k, ind_mrs_exposure *q)
{
    const ind_arm *arms = ind_mrs_arms();
    size_t n = arms[0].n + arms[1].n;
    float *p = c->pix + (k - c->x0) * 3 * n;
    for (int a = 0; a < IND_MRS_NARM; a++) {
        size_t m = arms[a].n;
        q->flux[a] = p, q->ivar[a] = p + m, q->mask[a] = (int32_t *)(p + 2 * m);
        p += 3 * m;
    }
}

/* A run of 2-5 dead pixels (FLUX 0, IVAR 0, not flagged) in a third of
 * exposures and arms; the pixels of no weight counted. */
static void dead_pixels(const mrs_ctx *c, size_t k, ind_mrs_exposure *q,
                        mrs_exp *x)
{
    ind_rng r;
    ind_rng_seed(&r, c->a->seed, EXP_STREAM + k, 7);
    for (int a = 0; a < IND_MRS_NARM; a++) {
        size_t n = ind_mrs_arms()[a].n;
        size_t j = (size_t)(ind_rng_uniform(&r) * (double)(n - 8));
        int len = 2 + (int)(4 * ind_rng_uniform(&r));
        if (ind_rng_uniform(&r) < 1.0 / 3.0)
            for (int i = 0; i < len; i++)
                q->flux[a][j + i] = q->ivar[a][j + i] = 0.0f,
                q->mask[a][j + i] = 0;
        x->nbad[a] = 0;
        for (size_t i = 0; i < n; i++)
            x->nbad[a] += q->mask[a][i] != 0 || !(q->ivar[a][i] > 0);
    }
}

static int exp_task(void *ctx, size_t item, int w, ind_err *e)
{
    mrs_ctx *c = ctx;
    size_t k = c->x0 + item;
    mrs_exp *x = &c->x[k];
    const mrs_night *N = &c->nt[x->night];
    const mrs_star *S = &c->st[N->star];
    ind_draw d;
    ind_draw_star(c->a->seed, EXP_STREAM + k, c->a->ps, &c->a->o, &d);
    d.p = S->d.p, d.vsini = S->d.vsini, d.vrad = x->vrad, d.snr = x->snr;
    d.fmed = S->d.fmed * x->fscale, d.fib = N->fib;
    d.ra = S->d.ra, d.dec = S->d.dec, d.lratio = 0;
    ind_obsctx oc = c->oc; /* the night's grid; the same fine grid */
    oc.arms = N->arms;
    ind_mrs_exposure q;
    exp_bufs(c, k, &q);
    ind_obs o;
    memset(&o, 0, sizeof o);
    for (int a = 0; a < IND_MRS_NARM; a++)
        o.flux[a] = q.flux[a], o.ivar[a] = q.ivar[a], o.mask[a] = q.mask[a];
    if (ind_observe(&oc, &d, c->a->seed, EXP_STREAM + k, &o, &c->work[w], e))
        return -1;
    for (int a = 0; a < IND_MRS_NARM; a++)
        x->snr_arm[a] = o.snr_med[a];
    x->snr = o.snr_true;
    dead_pixels(c, k, &q, x);
    return 0;
}

/* Night f's file from its exposures (in the current block). */
static int write_night(mrs_ctx *c, size_t f, ind_err *e)
{
    const mrs_night *N = &c->nt[f];
    const mrs_star *S = &c->st[N->star];
    ind_mrs_exposure q[64];
    if (N->nx > 64)
        return ind_fail(e, "%zu exposures in a night: at most 64", N->nx);
    for (size_t k = 0; k < N->nx; k++) {
        const mrs_exp *x = &c->x[N->x0 + k];
        exp_bufs(c, N->x0 + k, &q[k]);
        q[k].lmjm = x->lmjm;
        q[k].exptime = N->exptime;
        for (int a = 0; a < IND_MRS_NARM; a++)
            q[k].snr[a] = x->snr_arm[a];
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", c->a->outdir, N->name);
    /* the header's MJD: the UTC day of the first exposure */
    long long mjd = (long long)floor(c->x[N->x0].mjd);
    ind_mrs_file fl = {path, OBSID0 + (long long)f, N->day, mjd, N->fiber,
                       N->planid, S->desig, S->d.ra, S->d.dec,
                       30.0 * sin((double)f), N->arms, N->nx, q};
    return ind_mrs_file_write(&fl, e);
}

/* Observe the exposures of nights [f0, f1) and write their files. */
static int run_block(mrs_ctx *c, size_t f0, size_t f1, ind_err *e)
{
    c->x0 = c->nt[f0].x0;
    size_t n = c->nt[f1 - 1].x0 + c->nt[f1 - 1].nx - c->x0;
    int rc = ind_parallel(n, c->a->nthreads, exp_task, c, e);
    for (size_t f = f0; f < f1 && !rc; f++)
        rc = write_night(c, f, e);
    return rc;
}

static int run_all(mrs_ctx *c, ind_err *e)
{
    size_t f0 = 0;
    int rc = 0;
    while (f0 < c->nnight && !rc) {
        size_t f1 = f0 + 1, n = c->nt[f0].nx;
        while (f1 < c->nnight && n + c->nt[f1].nx <= BLOCK)
            n += c->nt[f1++].nx;
        rc = run_block(c, f0, f1, e);
        f0 = f1;
    }
    return rc;
}

/* ---- truth ------------------------------------------------------------- */

static long long star_tid(const mrs_ctx *c, size_t s)
{
    return OBSID0 + (long long)c->st[s].f0;
}

static void truth_stars(fitsfile *fp, const mrs_ctx *c, int *st)
{
    char *tt[] = {"TARGETID", "DESIG", "TEFF", "LOGG", "FEH", "ALPHAFE",
                  "VRAD", "VSINI", "SNR", "NEXP", "NNIGHT", "BINARY", "K1",
                  "PERIOD", "ECC", "OMEGA", "T0"};
    char *tf[] = {"K", "40A", "D", "D", "D", "D", "D", "D", "D", "J", "J",
                  "J", "D", "D", "D", "D", "D"};
    char *tu[] = {"", "", "K", "dex", "dex", "dex", "km/s", "km/s", "", "",
                  "", "", "km/s", "d", "", "rad", "d"};
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)c->nstar, 17, tt, tf, tu,
                    "TRUTH", st);
    for (size_t i = 0; i < c->nstar && !*st; i++) {
        const mrs_star *q = &c->st[i];
        double s2 = 0;
        int ne = 0, nn = q->o.nexp, bin = q->o.binary;
        for (int k = 0; k < nn; k++) {
            const mrs_night *N = &c->nt[q->f0 + (size_t)k];
            for (size_t j = 0; j < N->nx; j++, ne++)
                s2 += c->x[N->x0 + j].snr * c->x[N->x0 + j].snr;
        }
        LONGLONG row = (LONGLONG)i + 1, tid = star_tid(c, i);
        char *ds = (char *)q->desig;
        double v[7] = {q->d.p.teff, q->d.p.logg, q->d.p.feh, q->d.p.alpha,
                       q->d.vrad, q->d.vsini, sqrt(s2)};
        double o[5] = {q->o.k1, q->o.period, q->o.ecc, q->o.omega, q->o.t0};
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, st);
        fits_write_col(fp, TSTRING, 2, row, 1, 1, &ds, st);
        for (int k = 0; k < 7; k++)
            fits_write_col(fp, TDOUBLE, 3 + k, row, 1, 1, &v[k], st);
        fits_write_col(fp, TINT, 10, row, 1, 1, &ne, st);
        fits_write_col(fp, TINT, 11, row, 1, 1, &nn, st);
        fits_write_col(fp, TINT, 12, row, 1, 1, &bin, st);
        for (int k = 0; k < 5; k++)
            fits_write_col(fp, TDOUBLE, 13 + k, row, 1, 1, &o[k], st);
    }
}

static void truth_exposures(fitsfile *fp, const mrs_ctx *c, int *st)
{
    char *tt[] = {"TARGETID", "EXPID", "DESIG", "OBSID", "FILE", "LMJM",
                  "MJD", "VRAD", "SNR", "EXPTIME", "LL0_B", "LL0_R", "DLL",
                  "NBAD_B", "NBAD_R"};
    char *tf[] = {"K", "K", "40A", "K", "64A", "K", "D", "D", "D", "D", "D",
                  "D", "D", "J", "J"};
    char *tu[] = {"", "", "", "", "", "min", "d", "km/s", "", "s", "", "",
                  "", "", ""};
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)c->nx, 15, tt, tf, tu,
                    "EXPTRUTH", st);
    for (size_t i = 0; i < c->nx && !*st; i++) {
        const mrs_exp *x = &c->x[i];
        const mrs_night *N = &c->nt[x->night];
        LONGLONG row = (LONGLONG)i + 1, tid = star_tid(c, N->star);
        LONGLONG obsid = OBSID0 + (LONGLONG)x->night, lmjm = x->lmjm;
        char *ds = c->st[N->star].desig, *fn = (char *)N->name;
        double v[7] = {x->mjd, x->vrad, x->snr, N->exptime,
                       N->arms[0].lo / IND_LN10, N->arms[1].lo / IND_LN10,
                       N->arms[0].step / IND_LN10};
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, st);
        fits_write_col(fp, TLONGLONG, 2, row, 1, 1, &lmjm, st);
        fits_write_col(fp, TSTRING, 3, row, 1, 1, &ds, st);
        fits_write_col(fp, TLONGLONG, 4, row, 1, 1, &obsid, st);
        fits_write_col(fp, TSTRING, 5, row, 1, 1, &fn, st);
        fits_write_col(fp, TLONGLONG, 6, row, 1, 1, &lmjm, st);
        for (int k = 0; k < 7; k++)
            fits_write_col(fp, TDOUBLE, 7 + k, row, 1, 1, &v[k], st);
        fits_write_col(fp, TINT, 14, row, 1, 1, (void *)&x->nbad[0], st);
        fits_write_col(fp, TINT, 15, row, 1, 1, (void *)&x->nbad[1], st);
    }
}

static void truth_coadds(fitsfile *fp, const mrs_ctx *c, int *st)
{
    char *tt[] = {"FILE", "OBSID", "DESIG", "TARGETID", "MJD", "VRAD",
                  "NEXP"};
    char *tf[] = {"64A", "K", "40A", "K", "D", "D", "J"};
    char *tu[] = {"", "", "", "", "d", "km/s", ""};
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)c->nnight, 7, tt, tf, tu,
                    "COADDTRUTH", st);
    for (size_t f = 0; f < c->nnight && !*st; f++) {
        const mrs_night *N = &c->nt[f];
        double sm = 0, sw = 0, swv = 0;
        for (size_t j = 0; j < N->nx; j++) {
            const mrs_exp *x = &c->x[N->x0 + j];
            sm += x->mjd, sw += x->snr * x->snr;
            swv += x->snr * x->snr * x->vrad;
        }
        LONGLONG row = (LONGLONG)f + 1, obsid = OBSID0 + (LONGLONG)f;
        LONGLONG tid = star_tid(c, N->star);
        char *fn = (char *)N->name, *ds = c->st[N->star].desig;
        double v[2] = {sm / (double)N->nx, swv / sw};
        int ne = (int)N->nx;
        fits_write_col(fp, TSTRING, 1, row, 1, 1, &fn, st);
        fits_write_col(fp, TLONGLONG, 2, row, 1, 1, &obsid, st);
        fits_write_col(fp, TSTRING, 3, row, 1, 1, &ds, st);
        fits_write_col(fp, TLONGLONG, 4, row, 1, 1, &tid, st);
        fits_write_col(fp, TDOUBLE, 5, row, 1, 1, &v[0], st);
        fits_write_col(fp, TDOUBLE, 6, row, 1, 1, &v[1], st);
        fits_write_col(fp, TINT, 7, row, 1, 1, &ne, st);
    }
}

static int write_truth(const mrs_ctx *c, ind_err *e)
{
    char tmp[4200];
    int s = 0;
    fitsfile *fp = ind_fits_create(c->a->truth, tmp, sizeof tmp, &s);
    fits_create_img(fp, BYTE_IMG, 0, NULL, &s);
    fits_write_key(fp, TSTRING, "GENERATR", "rvfit-indep mrs", NULL, &s);
    truth_stars(fp, c, &s);
    truth_exposures(fp, c, &s);
    truth_coadds(fp, c, &s);
    return ind_fits_commit(fp, s, tmp, c->a->truth, "writing truth table",
                           e);
}

static void ctx_free(mrs_ctx *c, ind_linelist *ll)
{
    for (int t = 0; c->work && t < c->a->nthreads; t++)
        ind_work_free(&c->work[t]);
    free(c->work), free(c->pix);
    free(c->st), free(c->nt), free(c->x);
    ind_obsctx_free(&c->oc);
    ind_linelist_free(ll);
}

static int ctx_make(mrs_ctx *c, ind_linelist *ll, ind_err *e)
{
    const ind_arm *arms = ind_mrs_arms();
    if (ind_linelist_build(c->a->model_seed, ll, e))
        return -1;
    /* the nights move the arms by up to 2 pixels */
    if (ind_obsctx_make_arms(&c->oc, ll, c->a->o.vsini_max, arms,
                             IND_MRS_NARM, 3.0, e))
        return -1;
    c->work = calloc((size_t)c->a->nthreads, sizeof *c->work);
    c->pix = malloc((size_t)(BLOCK + 64) * 3 * (arms[0].n + arms[1].n) *
                    sizeof(float));
    if (!c->work || !c->pix)
        return ind_fail(e, "mrs: out of memory");
    for (int t = 0; t < c->a->nthreads; t++)
        if (ind_work_make(&c->work[t], &c->oc, e))
            return -1;
    return plan(c) ? ind_fail(e, "mrs: %zu stars: out of memory",
                              c->a->nstar)
                   : 0;
}

int ind_mrs_write(const ind_mrs_args *a, ind_err *e)
{
    if (a->nstar == 0 || a->nnight_max < 1 || a->nnight_max > 64 ||
        a->nexp_min < 1 || a->nexp_max < a->nexp_min || a->nexp_max > 64 ||
        !(a->k_min > 0 && a->k_max >= a->k_min) ||
        !(a->p_min > 0 && a->p_max >= a->p_min) || !(a->span >= 1) ||
        a->nthreads < 1)
        return ind_fail(e, "mrs: bad --nstar/--nnight-max (1-64)/"
                        "--nexp-min/--nexp-max (1-64)/--k-min/--k-max/"
                        "--p-min/--p-max/--span");
    if (ind_mkdir(a->outdir, e))
        return -1;
    mrs_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    ind_linelist ll = {0};
    int rc = ctx_make(&c, &ll, e);
    if (!rc)
        rc = run_all(&c, e);
    if (!rc)
        rc = write_truth(&c, e);
    ctx_free(&c, &ll);
    return rc;
}
