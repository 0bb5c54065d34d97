/* DESI files of synthetic spectra (HDU names, dtypes and resolution
 * convention of ../shared/reference/desi-data-model.md and the real
 * files): a coadd (`rvfit-indep spectra`: one row per star, and the truth
 * table) or a per-exposure `spectra-` file (`rvfit-indep epochs`, one row
 * per exposure, FIBERMAP with EXPID, NIGHT and MJD).  Rows are made in
 * chunks on worker threads and written in order, so the files do not
 * depend on the thread count. */
#include "mock.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 32

typedef struct {
    const ind_file *a;
    const ind_obsctx *c;
    const ind_draw *draw;
    ind_work *work;          /* per worker */
    ind_obs slot[CHUNK];
    size_t base;             /* first star of the chunk being made */
    double *snr_arm;         /* [star][arm] MEDIAN_COADD_SNR */
    double *flux_med, *flux_int;
    float *buf;              /* backing store of the slots */
    int32_t *mbuf;
} coadd_ctx;

static int star_task(void *ctx, size_t item, int worker, ind_err *e)
{
    coadd_ctx *c = ctx;
    size_t i = c->base + item;
    ind_obs *o = &c->slot[item];
    if (ind_observe(c->c, &c->draw[i], c->a->seed, c->a->id[i].stream, o,
                    &c->work[worker], e))
        return -1;
    for (int a = 0; a < IND_NARM; a++) {
        c->snr_arm[3 * i + a] = o->snr_med[a];
        c->flux_med[3 * i + a] = o->flux_med[a];
        c->flux_int[3 * i + a] = o->flux_int[a];
    }
    return 0;
}

static int alloc_ctx(coadd_ctx *c, ind_err *e)
{
    const ind_arm *arms = ind_desi_arms();
    size_t n = c->a->n, npix = 0;
    for (int a = 0; a < IND_NARM; a++)
        npix += arms[a].n;
    c->work = calloc((size_t)c->a->nthreads, sizeof *c->work);
    c->snr_arm = calloc(3 * n, sizeof(double));
    c->flux_med = calloc(3 * n, sizeof(double));
    c->flux_int = calloc(3 * n, sizeof(double));
    c->buf = malloc(CHUNK * npix * (2 + IND_NDIAG) * sizeof(float));
    c->mbuf = malloc(CHUNK * npix * sizeof(int32_t));
    if (!c->work || !c->snr_arm || !c->flux_med || !c->flux_int || !c->buf ||
        !c->mbuf)
        return ind_fail(e, "%zu rows: out of memory", n);
    float *p = c->buf;
    int32_t *m = c->mbuf;
    for (int s = 0; s < CHUNK; s++)
        for (int a = 0; a < IND_NARM; a++) {
            size_t k = arms[a].n;
            c->slot[s].flux[a] = p;
            c->slot[s].ivar[a] = p + k;
            c->slot[s].res[a] = p + 2 * k;
            c->slot[s].mask[a] = m;
            p += (2 + IND_NDIAG) * k;
            m += k;
        }
    for (int w = 0; w < c->a->nthreads; w++)
        if (ind_work_make(&c->work[w], c->c, e))
            return -1;
    return 0;
}

static void free_ctx(coadd_ctx *c)
{
    if (c->work)
        for (int w = 0; w < c->a->nthreads; w++)
            ind_work_free(&c->work[w]);
    free(c->work);
    free(c->snr_arm);
    free(c->flux_med);
    free(c->flux_int);
    free(c->buf);
    free(c->mbuf);
}

static void write_primary(fitsfile *fp, const ind_file *a, int *st)
{
    long seed = (long)a->seed, mseed = (long)a->model_seed;
    fits_create_img(fp, BYTE_IMG, 0, NULL, st);
    fits_write_key(fp, TSTRING, "SPGRP", a->exposures ? "exposures"
                                                      : "cumulative",
                   NULL, st);
    fits_write_key(fp, TSTRING, "SURVEY", "main", NULL, st);
    fits_write_key(fp, TSTRING, "PROGRAM", "dark", NULL, st);
    fits_write_key(fp, TSTRING, "GENERATR", "rvfit-indep",
                   a->exposures ? "independent synthetic DESI spectra"
                                : "independent synthetic DESI coadd", st);
    fits_write_key(fp, TLONG, "INDSEED", &seed, "star and noise seed", st);
    fits_write_key(fp, TLONG, "INDMSEED", &mseed, "model (line list) seed", st);
    fits_write_key(fp, TSTRING, "INDPRSET", (void *)a->ps->name,
                   "parameter ranges of this grid preset", st);
    long ab = (long)a->ablate;
    fits_write_key(fp, TLONG, "INDABLAT", &ab,
                   "effects switched off (bits, 0 = none)", st);
}

/* A coadd's FIBERMAP: one row per star. */
static void write_fibermap(fitsfile *fp, const coadd_ctx *c, int *st)
{
    char *tt[] = {"TARGETID", "PETAL_LOC", "FIBER", "COADD_FIBERSTATUS",
                  "TARGET_RA", "TARGET_DEC", "OBJTYPE", "BRICKID",
                  "DESI_TARGET", "MWS_TARGET", "REF_ID", "REF_CAT",
                  "COADD_NUMEXP"};
    char *tf[] = {"K", "I", "J", "J", "D", "D", "3A", "J", "K", "K", "K",
                  "2A", "I"};
    char *tu[] = {"", "", "", "", "deg", "deg", "", "", "", "", "", "", ""};
    size_t n = c->a->n;
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)n, 13, tt, tf, tu, "FIBERMAP", st);
    for (size_t i = 0; i < n && !*st; i++) {
        LONGLONG row = (LONGLONG)i + 1, tid = c->a->id[i].targetid;
        LONGLONG dt = 1LL << 61, mws = 1, ref = 4000000000000000LL + (LONGLONG)i;
        short petal = (short)((i / 500) % 10), nexp = 4;
        int fiber = (int)(i % 5000), zero = 0;
        char *tgt = "TGT", *cat = "G2";
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, st);
        fits_write_col(fp, TSHORT, 2, row, 1, 1, &petal, st);
        fits_write_col(fp, TINT, 3, row, 1, 1, &fiber, st);
        fits_write_col(fp, TINT, 4, row, 1, 1, &zero, st);
        fits_write_col(fp, TDOUBLE, 5, row, 1, 1, (void *)&c->draw[i].ra, st);
        fits_write_col(fp, TDOUBLE, 6, row, 1, 1, (void *)&c->draw[i].dec, st);
        fits_write_col(fp, TSTRING, 7, row, 1, 1, &tgt, st);
        fits_write_col(fp, TINT, 8, row, 1, 1, &zero, st);
        fits_write_col(fp, TLONGLONG, 9, row, 1, 1, &dt, st);
        fits_write_col(fp, TLONGLONG, 10, row, 1, 1, &mws, st);
        fits_write_col(fp, TLONGLONG, 11, row, 1, 1, &ref, st);
        fits_write_col(fp, TSTRING, 12, row, 1, 1, &cat, st);
        fits_write_col(fp, TSHORT, 13, row, 1, 1, &nexp, st);
    }
}

/* A spectra- file's FIBERMAP: one row per exposure, with the exposure's
 * FIBERSTATUS, EXPID, NIGHT, MJD and TILEID (the data model's columns
 * of per-exposure files). */
static void write_exp_fibermap(fitsfile *fp, const coadd_ctx *c, int *st)
{
    char *tt[] = {"TARGETID", "PETAL_LOC", "FIBER", "FIBERSTATUS",
                  "TARGET_RA", "TARGET_DEC", "OBJTYPE", "DESI_TARGET",
                  "MWS_TARGET", "NIGHT", "EXPID", "MJD", "TILEID"};
    char *tf[] = {"K", "I", "J", "J", "D", "D", "3A", "K", "K", "J", "J",
                  "D", "J"};
    char *tu[] = {"", "", "", "", "deg", "deg", "", "", "", "", "", "d", ""};
    size_t n = c->a->n;
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)n, 13, tt, tf, tu, "FIBERMAP",
                    st);
    for (size_t i = 0; i < n && !*st; i++) {
        const ind_rowid *id = &c->a->id[i];
        LONGLONG row = (LONGLONG)i + 1, tid = id->targetid;
        LONGLONG dt = 1LL << 61, mws = 1;
        short petal = (short)((i / 500) % 10);
        int fiber = (int)(i % 5000), zero = 0, night = id->night;
        int expid = (int)id->expid, tile = id->tileid;
        char *tgt = "TGT";
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, st);
        fits_write_col(fp, TSHORT, 2, row, 1, 1, &petal, st);
        fits_write_col(fp, TINT, 3, row, 1, 1, &fiber, st);
        fits_write_col(fp, TINT, 4, row, 1, 1, &zero, st);
        fits_write_col(fp, TDOUBLE, 5, row, 1, 1, (void *)&c->draw[i].ra, st);
        fits_write_col(fp, TDOUBLE, 6, row, 1, 1, (void *)&c->draw[i].dec, st);
        fits_write_col(fp, TSTRING, 7, row, 1, 1, &tgt, st);
        fits_write_col(fp, TLONGLONG, 8, row, 1, 1, &dt, st);
        fits_write_col(fp, TLONGLONG, 9, row, 1, 1, &mws, st);
        fits_write_col(fp, TINT, 10, row, 1, 1, &night, st);
        fits_write_col(fp, TINT, 11, row, 1, 1, &expid, st);
        fits_write_col(fp, TDOUBLE, 12, row, 1, 1, (void *)&id->mjd, st);
        fits_write_col(fp, TINT, 13, row, 1, 1, &tile, st);
    }
}

/* The five HDUs of each arm; the images are filled chunk by chunk. */
static void write_arm_layout(fitsfile *fp, const ind_arm *arm, size_t nstar,
                             int *st)
{
    char name[32];
    long n = (long)arm->n;
    double *lam = malloc(arm->n * sizeof *lam);
    if (!lam) {
        *st = MEMORY_ALLOCATION;
        return;
    }
    for (size_t i = 0; i < arm->n; i++)
        lam[i] = ind_arm_lam(arm, i);
    fits_create_img(fp, DOUBLE_IMG, 1, &n, st);
    snprintf(name, sizeof name, "%s_WAVELENGTH", arm->name);
    fits_write_key(fp, TSTRING, "EXTNAME", name, NULL, st);
    fits_write_key(fp, TSTRING, "BUNIT", "Angstrom", NULL, st);
    fits_write_img(fp, TDOUBLE, 1, n, lam, st);
    free(lam);
    static const struct { const char *sfx, *unit; int bitpix, ndim; } h[] = {
        {"FLUX", "10**-17 erg/(s cm2 Angstrom)", FLOAT_IMG, 2},
        {"IVAR", "10**+34 (s2 cm4 Angstrom2) / erg2", FLOAT_IMG, 2},
        {"MASK", NULL, LONG_IMG, 2},
        {"RESOLUTION", NULL, FLOAT_IMG, 3}};
    for (int k = 0; k < 4; k++) {
        long ax[3] = {n, h[k].ndim == 3 ? IND_NDIAG : (long)nstar,
                      (long)nstar};
        fits_create_img(fp, h[k].bitpix, h[k].ndim, ax, st);
        snprintf(name, sizeof name, "%s_%s", arm->name, h[k].sfx);
        fits_write_key(fp, TSTRING, "EXTNAME", name, NULL, st);
        if (h[k].unit)
            fits_write_key(fp, TSTRING, "BUNIT", (void *)h[k].unit, NULL, st);
    }
}

static void write_chunk(fitsfile *fp, const coadd_ctx *c, size_t count,
                        int *st)
{
    const ind_arm *arms = ind_desi_arms();
    char name[32];
    for (int a = 0; a < IND_NARM; a++) {
        LONGLONG n = (LONGLONG)arms[a].n;
        static const char *sfx[4] = {"FLUX", "IVAR", "MASK", "RESOLUTION"};
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "%s_%s", arms[a].name, sfx[k]);
            fits_movnam_hdu(fp, IMAGE_HDU, name, 0, st);
            for (size_t s = 0; s < count && !*st; s++) {
                const ind_obs *o = &c->slot[s];
                LONGLONG star = (LONGLONG)(c->base + s);
                if (k == 0)
                    fits_write_img(fp, TFLOAT, star * n + 1, n, o->flux[a], st);
                else if (k == 1)
                    fits_write_img(fp, TFLOAT, star * n + 1, n, o->ivar[a], st);
                else if (k == 2)
                    fits_write_img(fp, TINT, star * n + 1, n, o->mask[a], st);
                else
                    fits_write_img(fp, TFLOAT, star * IND_NDIAG * n + 1,
                                   IND_NDIAG * n, o->res[a], st);
            }
        }
    }
}

static void write_scores(fitsfile *fp, const coadd_ctx *c, int *st)
{
    char *tt[10] = {"TARGETID"}, *tf[10] = {"K"}, *tu[10] = {""};
    char names[9][32];
    static const char *kind[3] = {"INTEG_COADD_FLUX", "MEDIAN_COADD_FLUX",
                                  "MEDIAN_COADD_SNR"};
    for (int a = 0; a < IND_NARM; a++)
        for (int k = 0; k < 3; k++) {
            snprintf(names[3 * a + k], 32, "%s_%s", kind[k],
                     ind_desi_arms()[a].name);
            tt[1 + 3 * a + k] = names[3 * a + k];
            tf[1 + 3 * a + k] = "E";
            tu[1 + 3 * a + k] = "";
        }
    int nh = 0;
    fits_get_num_hdus(fp, &nh, st);
    fits_movabs_hdu(fp, nh, NULL, st);
    size_t n = c->a->n;
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)n, 10, tt, tf, tu, "SCORES", st);
    for (size_t i = 0; i < n && !*st; i++) {
        LONGLONG row = (LONGLONG)i + 1, tid = c->a->id[i].targetid;
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, st);
        for (int a = 0; a < IND_NARM; a++) {
            double v[3] = {c->flux_int[3 * i + a], c->flux_med[3 * i + a],
                           c->snr_arm[3 * i + a]};
            for (int k = 0; k < 3; k++)
                fits_write_col(fp, TDOUBLE, 2 + 3 * a + k, row, 1, 1, &v[k], st);
        }
    }
}

static int write_truth(const char *path, const ind_draw *draw, size_t n,
                       ind_err *e)
{
    char tmp[4200], clobber[4300];
    ind_tmpname(tmp, sizeof tmp, path, 0);
    snprintf(clobber, sizeof clobber, "!%s", tmp);
    char *tt[] = {"TARGETID", "TEFF", "LOGG", "FEH", "ALPHAFE", "VRAD",
                  "VSINI", "SNR"};
    char *tf[] = {"K", "D", "D", "D", "D", "D", "D", "D"};
    char *tu[] = {"", "K", "dex", "dex", "dex", "km/s", "km/s", ""};
    fitsfile *fp = NULL;
    int st = 0;
    fits_create_file(&fp, clobber, &st);
    fits_create_img(fp, BYTE_IMG, 0, NULL, &st);
    fits_write_key(fp, TSTRING, "GENERATR", "rvfit-indep", NULL, &st);
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)n, 8, tt, tf, tu, "TRUTH",
                    &st);
    for (size_t i = 0; i < n && !st; i++) {
        const ind_draw *d = &draw[i];
        LONGLONG row = (LONGLONG)i + 1, tid = 1000000 + (LONGLONG)i;
        double v[7] = {d->p.teff, d->p.logg, d->p.feh, d->p.alpha, d->vrad,
                       d->vsini, d->snr};
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, &st);
        for (int k = 0; k < 7; k++)
            fits_write_col(fp, TDOUBLE, 2 + k, row, 1, 1, &v[k], &st);
    }
    fits_close_file(fp, &st);
    if (st) {
        remove(tmp);
        return ind_fits_fail(e, st, path, "writing truth table");
    }
    return ind_commit(tmp, path, e);
}

static int write_file(const char *tmp, coadd_ctx *c, ind_err *e)
{
    char clobber[4300];
    snprintf(clobber, sizeof clobber, "!%s", tmp);
    fitsfile *fp = NULL;
    int st = 0;
    fits_create_file(&fp, clobber, &st);
    write_primary(fp, c->a, &st);
    if (c->a->exposures)
        write_exp_fibermap(fp, c, &st);
    else
        write_fibermap(fp, c, &st);
    for (int a = 0; a < IND_NARM && !st; a++)
        write_arm_layout(fp, &ind_desi_arms()[a], c->a->n, &st);
    int rc = 0;
    for (c->base = 0; c->base < c->a->n && !st && !rc; c->base += CHUNK) {
        size_t count = c->a->n - c->base;
        count = count > CHUNK ? CHUNK : count;
        rc = ind_parallel(count, c->a->nthreads, star_task, c, e);
        if (!rc)
            write_chunk(fp, c, count, &st);
    }
    if (!rc)
        write_scores(fp, c, &st);
    int cst = 0;
    fits_close_file(fp, &cst);
    if (!st)
        st = cst;
    if (rc || st) {
        remove(tmp);
        return rc ? rc : ind_fits_fail(e, st, c->a->out, "writing spectra");
    }
    return 0;
}

int ind_file_write(const ind_file *f, const ind_obsctx *oc, ind_err *e)
{
    coadd_ctx c = {.a = f, .c = oc, .draw = f->draw};
    char tmp[4200];
    ind_tmpname(tmp, sizeof tmp, f->out, 0);
    int rc = alloc_ctx(&c, e);
    if (!rc)
        rc = write_file(tmp, &c, e);
    if (!rc)
        rc = ind_commit(tmp, f->out, e);
    free_ctx(&c);
    return rc;
}

int ind_coadd_write(const ind_coadd_args *a, ind_err *e)
{
    if (a->nstar == 0)
        return ind_fail(e, "--nstar must be at least 1");
    ind_linelist ll;
    if (ind_linelist_build(a->model_seed, &ll, e))
        return -1;
    ind_obsctx oc;
    int rc = ind_obsctx_make(&oc, &ll, a->o.vsini_max, e);
    if (rc) {
        ind_linelist_free(&ll);
        return rc;
    }
    ind_draw *draw = calloc(a->nstar, sizeof *draw);
    ind_rowid *id = calloc(a->nstar, sizeof *id);
    if (!draw || !id)
        rc = ind_fail(e, "%zu stars: out of memory", a->nstar);
    for (size_t i = 0; i < a->nstar && !rc; i++) {
        ind_draw_star(a->seed, i, a->ps, &a->o, &draw[i]);
        id[i] = (ind_rowid){1000000 + (int64_t)i, -1, 0, 0, 0, i};
    }
    ind_file f = {a->out, a->nstar, draw, id, 0, a->seed, a->model_seed,
                  a->ps, a->o.ablate, a->nthreads};
    if (!rc)
        rc = ind_file_write(&f, &oc, e);
    if (!rc)
        rc = write_truth(a->truth, draw, a->nstar, e);
    free(draw), free(id);
    ind_obsctx_free(&oc);
    ind_linelist_free(&ll);
    return rc;
}
