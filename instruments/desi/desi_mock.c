/* desi_mock.c — write a synthetic DESI coadd that follows the data model
 * (PRIMARY, FIBERMAP, {B,R,Z}_{WAVELENGTH,FLUX,IVAR,MASK,RESOLUTION},
 * SCORES), atomically: a temporary file in the target directory is renamed
 * into place only when complete.  The numerics run in blocks of stars on
 * worker threads (desi_mock_star.c); all CFITSIO calls stay on this one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "desi_mock.h"

/* HDU numbers in the file we write. */
#define HDU_FIBERMAP 2
#define HDU_ARM(a, k) (3 + 5 * (a) + (k)) /* k: wave flux ivar mask res */
#define HDU_SCORES (3 + 5 * DESI_MOCK_NARM)

typedef struct desi_writer {
    const char *path; /* final name, for messages */
    char tmp[DESI_PATH_MAX + 16];
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

static void desi_write_block(desi_writer *w, const desi_mock_block *b)
{
    const desi_mock_arm *arms = desi_mock_arms();
    for (int a = 0; a < DESI_MOCK_NARM && w->st == 0; a++) {
        LONGLONG np = (LONGLONG)arms[a].npix, s0 = (LONGLONG)b->s0;
        LONGLONG ns = (LONGLONG)b->ns, nd = DESI_MOCK_NDIAG;
        fits_movabs_hdu(w->fp, HDU_ARM(a, 1), NULL, &w->st);
        fits_write_img(w->fp, TFLOAT, s0 * np + 1, ns * np, b->flux[a],
                       &w->st);
        fits_movabs_hdu(w->fp, HDU_ARM(a, 2), NULL, &w->st);
        fits_write_img(w->fp, TFLOAT, s0 * np + 1, ns * np, b->ivar[a],
                       &w->st);
        fits_movabs_hdu(w->fp, HDU_ARM(a, 3), NULL, &w->st);
        fits_write_img(w->fp, TINT, s0 * np + 1, ns * np, b->mask[a],
                       &w->st);
        fits_movabs_hdu(w->fp, HDU_ARM(a, 4), NULL, &w->st);
        fits_write_img(w->fp, TFLOAT, s0 * nd * np + 1, ns * nd * np,
                       b->res[a], &w->st);
    }
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

static void desi_block_free(desi_mock_block *b)
{
    for (int a = 0; a < DESI_MOCK_NARM; a++) {
        free(b->flux[a]);
        free(b->ivar[a]);
        free(b->mask[a]);
        free(b->res[a]);
    }
}

static int desi_block_alloc(desi_mock_block *b, size_t cap)
{
    const desi_mock_arm *arms = desi_mock_arms();
    int ok = 1;
    for (int a = 0; a < DESI_MOCK_NARM; a++) {
        size_t n = cap * arms[a].npix;
        ok &= (b->flux[a] = malloc(n * sizeof(float))) != NULL;
        ok &= (b->ivar[a] = malloc(n * sizeof(float))) != NULL;
        ok &= (b->mask[a] = malloc(n * sizeof(int32_t))) != NULL;
        ok &= (b->res[a] = malloc(n * DESI_MOCK_NDIAG * sizeof(float))) !=
              NULL;
    }
    return ok;
}

/* Compute and write every block; returns an rvfit status. */
static int desi_mock_blocks(desi_writer *w, desi_mock_block *b, size_t nstar,
                            int nthreads, rvfit_err *err)
{
    size_t cap = nstar < DESI_MOCK_BLOCK ? nstar : DESI_MOCK_BLOCK;
    if (!desi_block_alloc(b, cap))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: mock block of %zu "
                             "spectra", w->path, cap);
    for (size_t s0 = 0; s0 < nstar; s0 += cap) {
        b->s0 = s0;
        b->ns = nstar - s0 < cap ? nstar - s0 : cap;
        int rc = desi_mock_run_block(b, nthreads, err);
        if (rc) {
            rvfit_err_prefix(err, "%s", w->path);
            return rc;
        }
        desi_write_block(w, b);
        if (w->st)
            return rvfit_fits_error(err, w->st, w->path, NULL,
                                 "writing spectra");
    }
    return RVFIT_OK;
}

/* Temporary name next to the final one, so that rename() is atomic. */
static int desi_open_tmp(desi_writer *w, rvfit_err *err)
{
    if (strlen(w->path) >= DESI_PATH_MAX)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%.200s...: path too "
                             "long", w->path);
    snprintf(w->tmp, sizeof w->tmp, "%s.XXXXXX", w->path);
    int fd = mkstemp(w->tmp);
    if (fd < 0) {
        w->tmp[0] = '\0';
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot create a "
                             "temporary file next to it", w->path);
    }
    close(fd);
    unlink(w->tmp); /* CFITSIO refuses to overwrite; the name stays ours */
    if (fits_create_diskfile(&w->fp, w->tmp, &w->st)) {
        w->fp = NULL;
        return rvfit_fits_error(err, w->st, w->tmp, NULL, "creating file");
    }
    return RVFIT_OK;
}

static int desi_mock_fill(desi_writer *w, desi_mock_block *b, size_t nstar,
                          const rvfit_mock_star *stars, uint64_t seed,
                          int nthreads, rvfit_err *err)
{
    desi_write_primary(w, seed, nstar);
    desi_write_fibermap(w, nstar, stars, seed);
    desi_create_images(w, nstar);
    if (w->st)
        return rvfit_fits_error(err, w->st, w->path, NULL, "writing headers");
    int rc = desi_mock_blocks(w, b, nstar, nthreads, err);
    if (rc)
        return rc;
    desi_write_scores(w, nstar, stars, b->snr_med, b->flux_med);
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
    if (nstar == 0 || !stars || !truth)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: mock needs at "
                             "least one star and a truth function", path);
    desi_writer w = {.path = path};
    desi_mock_block b = {.stars = stars, .truth = truth, .ctx = ctx,
                         .seed = seed};
    b.phi = desi_phi_new();
    b.snr_med = malloc(nstar * DESI_MOCK_NARM * sizeof(float));
    b.flux_med = malloc(nstar * DESI_MOCK_NARM * sizeof(float));
    int rc = (b.phi && b.snr_med && b.flux_med)
                 ? RVFIT_OK
                 : rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: mock of %zu "
                                 "stars", path, nstar);
    if (!rc)
        rc = desi_open_tmp(&w, err);
    if (!rc)
        rc = desi_mock_fill(&w, &b, nstar, stars, seed,
                            host ? host->nthreads : 1, err);
    if (w.fp) {
        int st = 0;
        fits_close_file(w.fp, &st);
        if (st && !rc)
            rc = rvfit_fits_error(err, st, path, NULL, "closing file");
    }
    if (!rc && rename(w.tmp, path) != 0)
        rc = rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot rename %s into "
                           "place", path, w.tmp);
    if (rc && w.tmp[0])
        unlink(w.tmp);
    if (!rc)
        rvfit_log(host, RVFIT_LOG_INFO, DESI_WHO, "%s: wrote %zu mock "
                  "spectra (seed %llu)", path, nstar,
                  (unsigned long long)seed);
    desi_block_free(&b);
    desi_phi_free((desi_phi_table *)b.phi);
    free(b.snr_med);
    free(b.flux_med);
    return rc;
}
