/* sdss_mock.c — write synthetic BOSS spec files: PRIMARY (COEFF0/COEFF1,
 * VACUUM, PLATEID/MJD/FIBERID, PLUG_RA/DEC), COADD (flux, loglam, ivar,
 * and_mask, or_mask, wdisp, sky, model) and SPALL (identifiers, CLASS,
 * Z = true v/c, SN_MEDIAN_ALL, ELODIE_* = the true parameters).
 *
 * `path` ending in ".list": one file per star, spec-PLATE-MJD-FIBER.fits,
 * in the directory `path` without ".list" (created if needed), plus the
 * list itself, whose entries are relative to the list's directory.  Any
 * other path: a single spec file, for exactly one star.  A star's
 * PLATE/MJD/FIBERID decode its TARGETID (TARGETID / 10^9, TARGETID / 10^4
 * mod 10^5, TARGETID mod 10^4), so the reader's TARGETID is the star's.
 * Every file is written to a temporary name and renamed into place
 * (rvfit_fits_create / rvfit_fits_commit); the stars are computed in
 * blocks on worker threads by rvfit_mock_run (sdss_mock_star.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/files.h"
#include "sdss_mock.h"

typedef struct sdss_ids {
    int plate, mjd, fiber;
} sdss_ids;

static int sdss_decode(int64_t tid, sdss_ids *id)
{
    if (tid < 0 || tid / 1000000000LL > 9000000LL)
        return -1;
    id->plate = (int)(tid / 1000000000LL);
    id->mjd = (int)((tid / 10000LL) % 100000LL);
    id->fiber = (int)(tid % 10000LL);
    return 0;
}

static void sdss_primary(fitsfile *fp, const sdss_ids *id, double ra,
                         double dec, const sdss_mock_spec *o, uint64_t seed,
                         int *st)
{
    double zero = 0.0;
    long long s = (long long)(seed & 0x7fffffffffffffffull);
    fits_create_img(fp, BYTE_IMG, 0, NULL, st);
    fits_write_key(fp, TSTRING, "TELESCOP", "SDSS 2.5-M", NULL, st);
    fits_write_key(fp, TSTRING, "ORIGIN", "rvfit sdss mock", "synthetic",
                   st);
    fits_write_key(fp, TINT, "PLATEID", (void *)&id->plate, NULL, st);
    fits_write_key(fp, TINT, "MJD", (void *)&id->mjd, NULL, st);
    fits_write_key(fp, TINT, "FIBERID", (void *)&id->fiber, NULL, st);
    fits_write_key(fp, TDOUBLE, "PLUG_RA", &ra, "[deg]", st);
    fits_write_key(fp, TDOUBLE, "PLUG_DEC", &dec, "[deg]", st);
    rvfit_mock_key_loglam(fp, o->coeff0, SDSS_DLOGLAM, st);
    fits_write_key(fp, TDOUBLE, "HELIO_RV", &zero, "[km/s] already applied",
                   st);
    fits_write_key(fp, TLONGLONG, "MOCKSEED", &s, "PRNG seed", st);
}

static void sdss_coadd(fitsfile *fp, const sdss_mock_spec *o, int *st)
{
    char *names[] = {"flux", "loglam", "ivar", "and_mask", "or_mask",
                     "wdisp", "sky", "model"};
    char *forms[] = {"E", "E", "E", "J", "J", "E", "E", "E"};
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)o->npix, 8, names, forms, NULL,
                    "COADD", st);
    float *ll = malloc(o->npix * sizeof *ll);
    if (!ll) {
        *st = MEMORY_ALLOCATION;
        return;
    }
    for (size_t i = 0; i < o->npix; i++) /* float32, as the pipeline */
        ll[i] = (float)(o->coeff0 + SDSS_DLOGLAM * (double)i);
    LONGLONG n = (LONGLONG)o->npix;
    fits_write_col(fp, TFLOAT, 1, 1, 1, n, o->flux, st);
    fits_write_col(fp, TFLOAT, 2, 1, 1, n, ll, st);
    fits_write_col(fp, TFLOAT, 3, 1, 1, n, o->ivar, st);
    fits_write_col(fp, TINT, 4, 1, 1, n, o->mask, st);
    fits_write_col(fp, TINT, 5, 1, 1, n, o->mask, st);
    fits_write_col(fp, TFLOAT, 6, 1, 1, n, o->wdisp, st);
    fits_write_col(fp, TFLOAT, 7, 1, 1, n, o->sky, st);
    fits_write_col(fp, TFLOAT, 8, 1, 1, n, o->model, st);
    free(ll);
}

static void sdss_spall(fitsfile *fp, const sdss_ids *id, double ra,
                       double dec, const rvfit_mock_star *m,
                       const sdss_mock_spec *o, int *st)
{
    char *names[] = {"PLATE", "MJD", "FIBERID", "PLUG_RA", "PLUG_DEC",
                     "CLASS", "SUBCLASS", "Z", "Z_ERR", "ZWARNING",
                     "SN_MEDIAN_ALL", "ELODIE_TEFF", "ELODIE_LOGG",
                     "ELODIE_FEH"};
    char *forms[] = {"J", "J", "J", "D", "D", "6A", "21A", "E", "E", "J",
                     "E", "E", "E", "E"};
    fits_create_tbl(fp, BINARY_TBL, 1, 14, names, forms, NULL, "SPALL", st);
    char *cls = "STAR", *sub = "MOCK";
    float z = (float)(m->vrad / 299792.458), zerr = 0.0f;
    float snr = o->snr, teff = (float)m->teff, logg = (float)m->logg;
    float feh = (float)m->feh;
    int zwarn = 0;
    fits_write_col(fp, TINT, 1, 1, 1, 1, (void *)&id->plate, st);
    fits_write_col(fp, TINT, 2, 1, 1, 1, (void *)&id->mjd, st);
    fits_write_col(fp, TINT, 3, 1, 1, 1, (void *)&id->fiber, st);
    fits_write_col(fp, TDOUBLE, 4, 1, 1, 1, &ra, st);
    fits_write_col(fp, TDOUBLE, 5, 1, 1, 1, &dec, st);
    fits_write_col(fp, TSTRING, 6, 1, 1, 1, &cls, st);
    fits_write_col(fp, TSTRING, 7, 1, 1, 1, &sub, st);
    fits_write_col(fp, TFLOAT, 8, 1, 1, 1, &z, st);
    fits_write_col(fp, TFLOAT, 9, 1, 1, 1, &zerr, st);
    fits_write_col(fp, TINT, 10, 1, 1, 1, &zwarn, st);
    fits_write_col(fp, TFLOAT, 11, 1, 1, 1, &snr, st);
    fits_write_col(fp, TFLOAT, 12, 1, 1, 1, &teff, st);
    fits_write_col(fp, TFLOAT, 13, 1, 1, 1, &logg, st);
    fits_write_col(fp, TFLOAT, 14, 1, 1, 1, &feh, st);
}

/* One spec file for star s at `path`, atomically. */
static int sdss_write_spec(const char *path, const rvfit_mock_star *m,
                           const sdss_mock_spec *o, size_t s, uint64_t seed,
                           rvfit_err *err)
{
    sdss_ids id;
    if (sdss_decode(m->targetid, &id))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "mock star %zu: "
                             "TARGETID %lld does not decode into PLATE/MJD/"
                             "FIBERID", s, (long long)m->targetid);
    char tmp[2 * SDSS_PATH_MAX + 64];
    fitsfile *fp = NULL;
    int rc = rvfit_fits_create(path, tmp, sizeof tmp, &fp, err), st = 0;
    if (rc)
        return rc;
    /* a deterministic sky position per star, in a 3-degree field */
    double ra = 150.0 + 3.0 * fmod((double)s * 0.6180339887, 1.0);
    double dec = 2.0 + 3.0 * fmod((double)s * 0.7548776662, 1.0);
    sdss_primary(fp, &id, ra, dec, o, seed, &st);
    sdss_coadd(fp, o, &st);
    sdss_spall(fp, &id, ra, dec, m, o, &st);
    return rvfit_fits_commit(fp, st, tmp, path, err);
}

/* Where the files go: dir (no trailing '/'), and the list's own
 * directory prefix to strip from entries. */
struct sdss_dest {
    int is_list;
    char dir[SDSS_PATH_MAX];  /* directory of the spec files (list)     */
    char rel[SDSS_PATH_MAX];  /* dir as seen from the list's directory  */
};
typedef struct sdss_dest sdss_dest;

static int sdss_dest_init(const char *path, size_t nstar, sdss_dest *d,
                          rvfit_err *err)
{
    size_t n = strlen(path);
    memset(d, 0, sizeof *d);
    if (n >= SDSS_PATH_MAX - 64)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%.200s...: path too "
                             "long", path);
    d->is_list = n > 5 && strcmp(path + n - 5, ".list") == 0;
    if (!d->is_list) {
        if (nstar != 1)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "%s: a BOSS spec file holds one spectrum; "
                                 "for %zu stars give a path ending in .list "
                                 "(one spec file per star in a directory "
                                 "beside it)", path, nstar);
        return RVFIT_OK;
    }
    snprintf(d->dir, sizeof d->dir, "%.*s", (int)(n - 5), path);
    const char *slash = strrchr(d->dir, '/');
    snprintf(d->rel, sizeof d->rel, "%s", slash ? slash + 1 : d->dir);
    int rc = rvfit_mkdirs(d->dir, err);
    if (rc)
        rvfit_err_prefix(err, "%s", path);
    return rc;
}

static void sdss_spec_name(const sdss_dest *d, const char *path,
                           const rvfit_mock_star *m, int relative, char *out,
                           size_t len)
{
    sdss_ids id = {0, 0, 0};
    sdss_decode(m->targetid, &id);
    if (!d->is_list)
        snprintf(out, len, "%s", path);
    else
        snprintf(out, len, "%s/spec-%04d-%05d-%04d.fits",
                 relative ? d->rel : d->dir, id.plate, id.mjd, id.fiber);
}

static int sdss_write_list(const char *path, const sdss_dest *d,
                           size_t nstar, const rvfit_mock_star *stars,
                           rvfit_err *err)
{
    char tmp[2 * SDSS_PATH_MAX + 64], name[2 * SDSS_PATH_MAX];
    FILE *f = rvfit_tmpname(tmp, sizeof tmp, path) == 0 ? fopen(tmp, "w")
                                                        : NULL;
    if (!f)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot write: %s", path,
                             strerror(errno));
    fprintf(f, "# rvfit sdss mock: %zu spec files\n", nstar);
    for (size_t s = 0; s < nstar; s++) {
        sdss_spec_name(d, path, &stars[s], 1, name, sizeof name);
        fprintf(f, "%s\n", name);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (!bad && rename(tmp, path) == 0)
        return RVFIT_OK;
    int e = errno;
    remove(tmp);
    return rvfit_err_set(err, RVFIT_ERR_IO, "%s: cannot write the list: %s",
                         path, strerror(e));
}

/* rvfit_mock_each: the spec file of star s. */
static int sdss_flush_one(const rvfit_mock_job *job, size_t s,
                          const void *spec, rvfit_err *err)
{
    const sdss_mock_ctx *c = job->ctx;
    const rvfit_mock_star *m = &job->stars[s];
    char name[2 * SDSS_PATH_MAX];
    sdss_spec_name(c->dest, c->path, m, 0, name, sizeof name);
    return sdss_write_spec(name, m, spec, s, job->seed, err);
}

/* rvfit_mock_job.flush: one spec file per star of the block. */
static int sdss_flush(const rvfit_mock_job *job, size_t s0, size_t ns,
                      void *const *buf, rvfit_err *err)
{
    return rvfit_mock_each(job, s0, ns, buf, sdss_flush_one, err);
}

int sdss_write_mock(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                    const char *path, size_t nstar,
                    const rvfit_mock_star *stars, rvfit_truth_fn truth,
                    void *ctx, uint64_t seed, rvfit_err *err)
{
    (void)opts;
    (void)nopt;
    rvfit_mock_job job;
    sdss_dest d;
    int rc = rvfit_mock_begin(&job, host, path, nstar, stars, truth, ctx,
                              seed, err);
    if (!rc)
        rc = sdss_dest_init(path, nstar, &d, err);
    if (rc)
        return rc;
    sdss_mock_ctx c = {.dest = &d, .path = path};
    job.ctx = &c;
    job.flush = sdss_flush;
    sdss_mock_job_init(&job);
    rc = rvfit_mock_run_phi(&job, &c.phi, path, err);
    if (!rc && d.is_list)
        rc = sdss_write_list(path, &d, nstar, stars, err);
    if (!rc && host)
        rvfit_log(host, RVFIT_LOG_INFO, SDSS_WHO, "%s: wrote %zu mock BOSS "
                  "spectra (seed %llu)", path, nstar,
                  (unsigned long long)seed);
    return rc;
}
