/* lamost_mock.c — write synthetic LAMOST LRS spec files in either layout:
 * DR1-DR7 (primary float32 image [5][npix]: flux, ivar, wavelength,
 * andmask, ormask) or DR8+ (keywords-only primary, COADD table of one row
 * with FLUX, IVAR, WAVELENGTH, ANDMASK, ORMASK).  The primary header has
 * what the reader copies: OBSID = the star's TARGETID, RA/DEC, CLASS,
 * SUBCLASS, Z = true v/c, Z_ERR, SNRU-SNRZ, HELIO_RV (applied: HELIO = T),
 * VACUUM = T, COEFF0/COEFF1, DATA_V.  [instrument.lamost] mock_layout
 * picks the layout (dr7, dr8, or both: alternating, even stars DR7).
 *
 * `path` ending in ".fits" or ".fit": a single file, for exactly one star.
 * Any other path: a directory (created if needed) with one file per star,
 * spec-OBSID.fits.  Every file is written to a temporary name and renamed
 * into place (rvfit_fits_create / rvfit_fits_commit); the stars are
 * computed in blocks on worker threads by rvfit_mock_run
 * (lamost_mock_star.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lamost_mock.h"
#include "rvfit/files.h"

static void lamost_put_str(fitsfile *fp, const char *k, const char *v,
                           const char *c, int *st)
{
    fits_write_key(fp, TSTRING, k, (void *)v, c, st);
}

static void lamost_primary(fitsfile *fp, const rvfit_mock_star *m,
                           const lamost_mock_spec *o, size_t s, int layout,
                           int *st)
{
    static const char *const snr[5] = {"SNRU", "SNRG", "SNRR", "SNRI",
                                       "SNRZ"};
    long long obsid = (long long)m->targetid;
    /* a deterministic sky position per star, in a 5-degree field */
    double ra = 80.0 + 5.0 * fmod((double)s * 0.6180339887, 1.0);
    double dec = 25.0 + 5.0 * fmod((double)s * 0.7548776662, 1.0);
    double z = m->vrad / LAMOST_C_KMS, zerr = 1e-5;
    double helio = 10.0 * sin((double)s);
    int t = 1;
    lamost_put_str(fp, "TELESCOP", "LAMOST", NULL, st);
    lamost_put_str(fp, "ORIGIN", "rvfit lamost mock", "synthetic", st);
    lamost_put_str(fp, "DATA_V", layout == LAMOST_DR7 ? "LAMOST DR7"
                                                      : "LAMOST DR8",
                   "layout of this synthetic file", st);
    fits_write_key(fp, TLONGLONG, "OBSID", &obsid, "observation id", st);
    fits_write_key(fp, TDOUBLE, "RA", &ra, "[deg]", st);
    fits_write_key(fp, TDOUBLE, "DEC", &dec, "[deg]", st);
    /* the designation from the position, as the pipeline names stars:
     * the same star list position gives the same DESIG in every file */
    double h = ra / 15.0, ad = fabs(dec);
    int hh = (int)h, hm = (int)((h - hh) * 60), dd = (int)ad;
    int dm = (int)((ad - dd) * 60);
    double hs = ((h - hh) * 60 - hm) * 60, ds = ((ad - dd) * 60 - dm) * 60;
    char desig[48];
    snprintf(desig, sizeof desig, "LAMOST J%02d%02d%05.2f%c%02d%02d%04.1f",
             hh, hm, hs, dec < 0 ? '-' : '+', dd, dm, ds);
    lamost_put_str(fp, "DESIG", desig, "designation", st);
    rvfit_mock_key_loglam(fp, o->coeff0, LAMOST_DLOGLAM, st);
    fits_write_key(fp, TLOGICAL, "HELIO", &t, "heliocentric correction "
                   "applied", st);
    fits_write_key(fp, TDOUBLE, "HELIO_RV", &helio, "[km/s] heliocentric "
                   "correction", st);
    lamost_put_str(fp, "CLASS", "STAR", NULL, st);
    lamost_put_str(fp, "SUBCLASS", "MOCK", NULL, st);
    fits_write_key(fp, TDOUBLE, "Z", &z, "true v/c", st);
    fits_write_key(fp, TDOUBLE, "Z_ERR", &zerr, NULL, st);
    for (int b = 0; b < 5; b++) {
        float v = isfinite(o->snr[b]) ? o->snr[b] : 0.0f;
        fits_write_key(fp, TFLOAT, snr[b], &v, NULL, st);
    }
}

/* Rows in the order of the layouts: flux, ivar, wavelength (float32 as
 * the pipeline stores it), andmask, ormask (= andmask: one exposure). */
static int lamost_rows(const lamost_mock_spec *o, float *row[5])
{
    size_t n = o->npix;
    float *buf = malloc(5 * n * sizeof *buf);
    if (!buf)
        return MEMORY_ALLOCATION;
    for (int r = 0; r < 5; r++)
        row[r] = buf + (size_t)r * n;
    for (size_t i = 0; i < n; i++) {
        row[0][i] = o->flux[i];
        row[1][i] = o->ivar[i];
        row[2][i] = (float)pow(10.0, o->coeff0 + LAMOST_DLOGLAM * (double)i);
        row[3][i] = row[4][i] = (float)o->mask[i];
    }
    return 0;
}

static void lamost_write_dr7(fitsfile *fp, float *const row[5], size_t n,
                             int *st)
{
    long nax[2] = {(long)n, 5};
    fits_create_img(fp, FLOAT_IMG, 2, nax, st);
    fits_write_img(fp, TFLOAT, 1, (LONGLONG)(5 * n), row[0], st);
}

static void lamost_write_dr8(fitsfile *fp, float *const row[5], size_t n,
                             int *st)
{
    char *names[] = {"FLUX", "IVAR", "WAVELENGTH", "ANDMASK", "ORMASK"};
    char form[32], *forms[5];
    snprintf(form, sizeof form, "%zuE", n);
    for (int c = 0; c < 5; c++)
        forms[c] = form;
    fits_create_tbl(fp, BINARY_TBL, 1, 5, names, forms, NULL, "COADD", st);
    for (int c = 0; c < 5; c++)
        fits_write_col(fp, TFLOAT, c + 1, 1, 1, (LONGLONG)n, row[c], st);
}

/* One spec file for star s at `path`, atomically. */
static int lamost_write_spec(const char *path, const rvfit_mock_star *m,
                             const lamost_mock_spec *o, size_t s,
                             int layout, rvfit_err *err)
{
    char tmp[2 * LAMOST_PATH_MAX + 64];
    fitsfile *fp = NULL;
    float *row[5] = {NULL};
    int rc = rvfit_fits_create(path, tmp, sizeof tmp, &fp, err), st = 0;
    if (rc)
        return rc;
    st = lamost_rows(o, row);
    if (layout == LAMOST_DR7) {
        lamost_write_dr7(fp, row, o->npix, &st);
        lamost_primary(fp, m, o, s, layout, &st);
    } else {
        fits_create_img(fp, BYTE_IMG, 0, NULL, &st);
        lamost_primary(fp, m, o, s, layout, &st);
        lamost_write_dr8(fp, row, o->npix, &st);
    }
    free(row[0]);
    return rvfit_fits_commit(fp, st, tmp, path, err);
}

static void lamost_spec_name(const lamost_mock_ctx *c,
                             const rvfit_mock_star *m, char *out, size_t len)
{
    if (!c->is_dir)
        snprintf(out, len, "%s", c->path);
    else
        snprintf(out, len, "%s/spec-%lld.fits", c->path,
                 (long long)m->targetid);
}

/* rvfit_mock_each: the spec file of star s. */
static int lamost_flush_one(const rvfit_mock_job *job, size_t s,
                            const void *spec, rvfit_err *err)
{
    const lamost_mock_ctx *c = job->ctx;
    const rvfit_mock_star *m = &job->stars[s];
    char name[2 * LAMOST_PATH_MAX];
    lamost_spec_name(c, m, name, sizeof name);
    return lamost_write_spec(name, m, spec, s,
                             lamost_mock_layout(c->opts.mock_layout, s), err);
}

/* rvfit_mock_job.flush: one spec file per star of the block. */
static int lamost_flush(const rvfit_mock_job *job, size_t s0, size_t ns,
                        void *const *buf, rvfit_err *err)
{
    return rvfit_mock_each(job, s0, ns, buf, lamost_flush_one, err);
}

static int lamost_has_suffix(const char *s, const char *sfx)
{
    size_t n = strlen(s), m = strlen(sfx);
    return n >= m && strcmp(s + n - m, sfx) == 0;
}

static int lamost_dest(const char *path, size_t nstar,
                       const rvfit_mock_star *stars, lamost_mock_ctx *c,
                       rvfit_err *err)
{
    if (strlen(path) >= LAMOST_PATH_MAX - 64)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%.200s...: path too "
                             "long", path);
    c->path = path;
    c->is_dir = !lamost_has_suffix(path, ".fits") &&
                !lamost_has_suffix(path, ".fit");
    for (size_t s = 0; s < nstar; s++)
        if (stars[s].targetid < 0)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "mock star %zu: "
                                 "TARGETID %lld cannot be an OBSID", s,
                                 (long long)stars[s].targetid);
    if (!c->is_dir && nstar != 1)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "%s: a LAMOST spec file holds one spectrum; "
                             "for %zu stars give a directory (a path not "
                             "ending in .fits)", path, nstar);
    int rc = c->is_dir ? rvfit_mkdirs(path, err) : RVFIT_OK;
    if (rc)
        rvfit_err_prefix(err, "%s", path);
    return rc;
}

int lamost_write_mock(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                      const char *path, size_t nstar,
                      const rvfit_mock_star *stars, rvfit_truth_fn truth,
                      void *ctx, uint64_t seed, rvfit_err *err)
{
    rvfit_mock_job job;
    lamost_mock_ctx c;
    memset(&c, 0, sizeof c);
    int rc = lamost_parse_opts(opts, nopt, &c.opts, err);
    if (!rc)
        rc = rvfit_mock_begin(&job, host, path, nstar, stars, truth, ctx,
                              seed, err);
    if (!rc)
        rc = lamost_dest(path, nstar, stars, &c, err);
    if (rc)
        return rc;
    job.ctx = &c;
    job.flush = lamost_flush;
    lamost_mock_job_init(&job);
    rc = rvfit_mock_run_phi(&job, &c.phi, path, err);
    if (!rc && host)
        rvfit_log(host, RVFIT_LOG_INFO, LAMOST_WHO, "%s: wrote %zu mock LRS "
                  "spectra (seed %llu)", path, nstar,
                  (unsigned long long)seed);
    return rc;
}
