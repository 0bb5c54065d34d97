/* desi_mock.c — write a synthetic DESI coadd that follows the data model
 * (PRIMARY, FIBERMAP, {B,R,Z}_{WAVELENGTH,FLUX,IVAR,MASK,RESOLUTION},
 * SCORES), atomically (rvfit_fits_create / rvfit_fits_commit).  The
 * numerics run in blocks of stars on worker threads (rvfit_mock_run,
 * desi_mock_star.c); all CFITSIO calls stay on this one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "desi_mock.h"

/* HDU numbers in the file we write. */
#define HDU_FIBERMAP 2
#define HDU_ARM(a, k) (3 + 5 * (a) + (k)) /* k: wave flux ivar mask res */
#define HDU_SCORES (3 + 5 * DESI_MOCK_NARM)

typedef struct desi_writer {
    const char *path; /* final name, for messages */
    char tmp[DESI_PATH_MAX + 64];
    fitsfile *fp;
    int st; /* CFITSIO status, chained */
} desi_writer;

static void desi_key_str(desi_writer *w, const char *k, const char *v,
                         const char *c)
{
    fits_write_key(w->fp, TSTRING, k, (void *)v, c, &w->st);
}

static void desi_write_primary(desi_writer *w, uint64_t seed, size_t nstar)
{
    long tile = 80000 + (long)(seed % 20000);
    long long s = (long long)(seed & 0x7fffffffffffffffull);
    long long n = (long long)nstar;
    fits_create_img(w->fp, BYTE_IMG, 0, NULL, &w->st);
    desi_key_str(w, "SPGRP", "cumulative", "Spectral grouping");
    fits_write_key(w->fp, TLONG, "SPGRPVAL", &tile, "Tile ID", &w->st);
    desi_key_str(w, "SURVEY", "main", "Survey");
    desi_key_str(w, "PROGRAM", "bright", "Program");
    fits_write_key(w->fp, TLONG, "TILEID", &tile, "Tile ID", &w->st);
    desi_key_str(w, "ORIGIN", "rvfit desi mock", "Synthetic coadd");
    fits_write_key(w->fp, TLONGLONG, "MOCKSEED", &s, "PRNG seed", &w->st);
    fits_write_key(w->fp, TLONGLONG, "MOCKNSPC", &n, "spectra", &w->st);
    desi_key_str(w, "DEPNAM00", "rvfit", NULL);
    desi_key_str(w, "DEPVER00", "1.0.0", NULL);
}

static void desi_write_fibermap(desi_writer *w, size_t n,
                                const rvfit_mock_star *stars, uint64_t seed)
{
    char *names[] = {"TARGETID", "PETAL_LOC", "FIBER", "TARGET_RA",
                     "TARGET_DEC", "OBJTYPE", "COADD_FIBERSTATUS", "REF_ID",
                     "REF_CAT", "DESI_TARGET", "MWS_TARGET", "BRICKID"};
    char *forms[] = {"K", "I", "J", "D", "D", "3A", "J", "K", "2A", "K", "K",
                     "J"};
    char *units[] = {"", "", "", "deg", "deg", "", "", "", "", "", "", ""};
    /* BRICKID: real coadds carry it and rvspecfit reads it. */
    fits_create_tbl(w->fp, BINARY_TBL, (LONGLONG)n, 12, names, forms, units,
                    "FIBERMAP", &w->st);
    rvfit_rng rng;
    rvfit_rng_seed(&rng, seed, 0); /* stream 0: positions; stars use 1.. */
    for (size_t i = 0; i < n && w->st == 0; i++) {
        LONGLONG row = (LONGLONG)i + 1;
        long long tid = stars[i].targetid, refid = 4000000000000LL + tid;
        long long desi_t = 1LL << 61, mws_t = 1LL; /* MWS_ANY; MWS_BROAD */
        int fiber = (int)(i % 5000), status = 0;
        short petal = (short)(fiber / 500);
        double ra = 150.0 + 1.6 * (rvfit_rng_uniform(&rng) - 0.5);
        double dec = 30.0 + 1.6 * (rvfit_rng_uniform(&rng) - 0.5);
        char *obj = "TGT", *cat = "G2";
        fits_write_col(w->fp, TLONGLONG, 1, row, 1, 1, &tid, &w->st);
        fits_write_col(w->fp, TSHORT, 2, row, 1, 1, &petal, &w->st);
        fits_write_col(w->fp, TINT, 3, row, 1, 1, &fiber, &w->st);
        fits_write_col(w->fp, TDOUBLE, 4, row, 1, 1, &ra, &w->st);
        fits_write_col(w->fp, TDOUBLE, 5, row, 1, 1, &dec, &w->st);
        fits_write_col(w->fp, TSTRING, 6, row, 1, 1, &obj, &w->st);
        fits_write_col(w->fp, TINT, 7, row, 1, 1, &status, &w->st);
        fits_write_col(w->fp, TLONGLONG, 8, row, 1, 1, &refid, &w->st);
        fits_write_col(w->fp, TSTRING, 9, row, 1, 1, &cat, &w->st);
        fits_write_col(w->fp, TLONGLONG, 10, row, 1, 1, &desi_t, &w->st);
        fits_write_col(w->fp, TLONGLONG, 11, row, 1, 1, &mws_t, &w->st);
        /* A 0.25-degree brick index of the position (not the Legacy
         * Surveys numbering; only its presence and type matter). */
        int brick = (int)((dec + 90.0) * 4.0) * 1440 + (int)(ra * 4.0);
        fits_write_col(w->fp, TINT, 12, row, 1, 1, &brick, &w->st);
    }
}

/* The five images of each camera; pixel data are written per block. */
static void desi_create_images(desi_writer *w, size_t n)
{
    static const char *const sfx[5] = {"WAVELENGTH", "FLUX", "IVAR", "MASK",
                                       "RESOLUTION"};
    static const char *const unit[5] = {
        "Angstrom", "10**-17 erg/(s cm2 Angstrom)",
        "10**+34 (s2 cm4 Angstrom2) / erg2", "", ""};
    const desi_mock_arm *arms = desi_mock_arms();
    for (int a = 0; a < DESI_MOCK_NARM && w->st == 0; a++) {
        const desi_mock_arm *A = &arms[a];
        for (int k = 0; k < 5; k++) {
            long ax[3] = {(long)A->npix, (long)n, (long)n};
            int naxis = k == 0 ? 1 : 2, bitpix = FLOAT_IMG;
            if (k == 0)
                bitpix = DOUBLE_IMG;
            if (k == 3)
                bitpix = LONG_IMG;
            if (k == 4) {
                ax[1] = DESI_MOCK_NDIAG;
                naxis = 3;
            }
            char name[32];
            snprintf(name, sizeof name, "%s_%s", A->name, sfx[k]);
            fits_create_img(w->fp, bitpix, naxis, ax, &w->st);
            desi_key_str(w, "EXTNAME", name, NULL);
            if (unit[k][0])
                desi_key_str(w, "BUNIT", unit[k], NULL);
        }
        double *wave = malloc(A->npix * sizeof *wave);
        if (!wave) {
            w->st = MEMORY_ALLOCATION;
            return;
        }
        for (size_t i = 0; i < A->npix; i++)
            wave[i] = A->lam0 + A->dlam * (double)i;
        fits_movabs_hdu(w->fp, HDU_ARM(a, 0), NULL, &w->st);
        fits_write_img(w->fp, TDOUBLE, 1, (LONGLONG)A->npix, wave, &w->st);
        free(wave);
    }
}

/* rvfit_mock_job.flush: the block's rows of every camera image. */
static int desi_write_block(const rvfit_mock_job *job, size_t s0, size_t ns,
                            void *const *buf, rvfit_err *err)
{
    desi_writer *w = ((const desi_mock_ctx *)job->ctx)->writer;
    const desi_mock_arm *arms = desi_mock_arms();
    static const int dtype[4] = {TFLOAT, TFLOAT, TINT, TFLOAT};
    for (int a = 0; a < DESI_MOCK_NARM && w->st == 0; a++) {
        for (int k = 0; k < 4; k++) {
            LONGLONG n = (LONGLONG)arms[a].npix * (k == 3 ? DESI_MOCK_NDIAG
                                                          : 1);
            fits_movabs_hdu(w->fp, HDU_ARM(a, k + 1), NULL, &w->st);
            fits_write_img(w->fp, dtype[k], (LONGLONG)s0 * n + 1,
                           (LONGLONG)ns * n, buf[DESI_BUF(a, k)], &w->st);
        }
    }
    if (w->st)
        return rvfit_fits_error(err, w->st, w->path, NULL,
                                "writing spectra");
    return RVFIT_OK;
}

static void desi_write_scores(desi_writer *w, size_t n,
                              const rvfit_mock_star *stars,
                              const float *snr, const float *flux)
{
    char *names[] = {"TARGETID", "MEDIAN_COADD_FLUX_B", "MEDIAN_COADD_SNR_B",
                     "MEDIAN_COADD_FLUX_R", "MEDIAN_COADD_SNR_R",
                     "MEDIAN_COADD_FLUX_Z", "MEDIAN_COADD_SNR_Z"};
    char *forms[] = {"K", "E", "E", "E", "E", "E", "E"};
    fits_movabs_hdu(w->fp, HDU_SCORES - 1, NULL, &w->st);
    fits_create_tbl(w->fp, BINARY_TBL, (LONGLONG)n, 7, names, forms, NULL,
                    "SCORES", &w->st);
    for (size_t i = 0; i < n && w->st == 0; i++) {
        LONGLONG row = (LONGLONG)i + 1;
        long long tid = stars[i].targetid;
        fits_write_col(w->fp, TLONGLONG, 1, row, 1, 1, &tid, &w->st);
        for (int a = 0; a < DESI_MOCK_NARM; a++) {
            size_t k = i * DESI_MOCK_NARM + (size_t)a;
            fits_write_col(w->fp, TFLOAT, 2 + 2 * a, row, 1, 1,
                           (void *)&flux[k], &w->st);
            fits_write_col(w->fp, TFLOAT, 3 + 2 * a, row, 1, 1,
                           (void *)&snr[k], &w->st);
        }
    }
}

static int desi_mock_fill(desi_writer *w, rvfit_mock_job *job,
                          rvfit_err *err)
{
    const desi_mock_ctx *c = job->ctx;
    desi_write_primary(w, job->seed, job->nstar);
    desi_write_fibermap(w, job->nstar, job->stars, job->seed);
    desi_create_images(w, job->nstar);
    if (w->st)
        return rvfit_fits_error(err, w->st, w->path, NULL, "writing headers");
    int rc = rvfit_mock_run(job, err);
    if (rc) {
        rvfit_err_prefix(err, "%s", w->path);
        return rc;
    }
    desi_write_scores(w, job->nstar, job->stars, c->snr_med, c->flux_med);
    if (w->st)
        return rvfit_fits_error(err, w->st, w->path, "SCORES", "writing");
    return RVFIT_OK;
}

int desi_write_mock(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                    const char *path, size_t nstar,
                    const rvfit_mock_star *stars, rvfit_truth_fn truth,
                    void *ctx, uint64_t seed, rvfit_err *err)
{
    (void)opts;
    (void)nopt;
    rvfit_mock_job job;
    int rc = rvfit_mock_begin(&job, host, path, nstar, stars, truth, ctx,
                              seed, err);
    if (rc)
        return rc;
    desi_writer w = {.path = path};
    desi_mock_ctx c = {.writer = &w};
    job.ctx = &c;
    job.flush = desi_write_block;
    desi_mock_job_init(&job);
    rvfit_phi_table *phi = rvfit_phi_new();
    c.phi = phi;
    c.snr_med = malloc(nstar * DESI_MOCK_NARM * sizeof(float));
    c.flux_med = malloc(nstar * DESI_MOCK_NARM * sizeof(float));
    if (!phi || !c.snr_med || !c.flux_med)
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: mock of %zu stars",
                           path, nstar);
    if (!rc)
        rc = rvfit_fits_create(path, w.tmp, sizeof w.tmp, &w.fp, err);
    if (!rc)
        rc = desi_mock_fill(&w, &job, err);
    if (rc)
        rvfit_fits_discard(w.fp, w.tmp);
    else
        rc = rvfit_fits_commit(w.fp, 0, w.tmp, path, err);
    if (!rc)
        rvfit_log(host, RVFIT_LOG_INFO, DESI_WHO, "%s: wrote %zu mock "
                  "spectra (seed %llu)", path, nstar,
                  (unsigned long long)seed);
    rvfit_phi_free(phi);
    free(c.snr_med);
    free(c.flux_med);
    return rc;
}
