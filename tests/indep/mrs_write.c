/* The med- file of one target on one night, as ../shared/reference/
 * formats.md describes LAMOST DR7 MRS files: a keywords-only primary HDU
 * (OBSID, DESIG, RA/DEC, LMJD, MJD, PLANID, FIBERID, N_EXTEN, NEXP_B/R,
 * COMBIN_B/R, HELIO = T with HELIO_RV, VACUUM = T, DATA_V); binary tables
 * COADD_B and COADD_R of one row per pixel (FLUX, IVAR, LOGLAM as float32,
 * ANDMASK and ORMASK as int16; header SNR and LMJMLIST) and one table per
 * exposure and arm, B-<LMJM> and R-<LMJM> (FLUX, IVAR, LOGLAM, PIXMASK;
 * header LMJM, EXPTIME, SNR).  The coadd is the inverse-variance
 * weighted mean of the exposures' pixels that are neither masked nor of
 * zero ivar (all exposures of a file share its grid); ANDMASK is the AND
 * of the exposures' masks, ORMASK their OR. */
#include "mrs.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_primary(fitsfile *fp, const ind_mrs_file *f, int *st)
{
    long long next = 2 + 2 * (long long)f->nexp, nexp = (long long)f->nexp;
    int t = 1, one = 1;
    fits_create_img(fp, BYTE_IMG, 0, NULL, st);
    fits_write_key(fp, TSTRING, "TELESCOP", "LAMOST", NULL, st);
    fits_write_key(fp, TSTRING, "ORIGIN", "rvfit-indep", "synthetic", st);
    fits_write_key(fp, TSTRING, "DATA_V", "rvfit-indep MRS mock", NULL, st);
    fits_write_key(fp, TLONGLONG, "OBSID", (void *)&f->obsid, NULL, st);
    fits_write_key(fp, TSTRING, "DESIG", (void *)f->desig, NULL, st);
    fits_write_key(fp, TDOUBLE, "RA", (void *)&f->ra, "[deg]", st);
    fits_write_key(fp, TDOUBLE, "DEC", (void *)&f->dec, "[deg]", st);
    fits_write_key(fp, TLONGLONG, "LMJD", (void *)&f->lmjd, "local MJD",
                   st);
    fits_write_key(fp, TLONGLONG, "MJD", (void *)&f->mjd, NULL, st);
    fits_write_key(fp, TSTRING, "PLANID", (void *)f->planid, NULL, st);
    fits_write_key(fp, TINT, "FIBERID", (void *)&f->fiber, NULL, st);
    fits_write_key(fp, TLONGLONG, "N_EXTEN", &next, NULL, st);
    fits_write_key(fp, TLONGLONG, "NEXP_B", &nexp, NULL, st);
    fits_write_key(fp, TLONGLONG, "NEXP_R", &nexp, NULL, st);
    fits_write_key(fp, TINT, "COMBIN_B", &one, NULL, st);
    fits_write_key(fp, TINT, "COMBIN_R", &one, NULL, st);
    fits_write_key(fp, TLOGICAL, "HELIO", &t, NULL, st);
    fits_write_key(fp, TDOUBLE, "HELIO_RV", (void *)&f->helio_rv,
                   "[km/s] applied", st);
    fits_write_key(fp, TLOGICAL, "VACUUM", &t, NULL, st);
}

/* Median of flux * sqrt(ivar) over the pixels of ivar > 0 (0: none). */
static double snr_of(const float *f, const float *v, size_t n, double *w)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0)
            w[m++] = f[i] * sqrt((double)v[i]);
    return m ? ind_median(w, m) : 0.0;
}

/* One table of one row per pixel; masks[0] (and masks[1]) int16 columns
 * named mname[0] (mname[1]). */
static void put_table(fitsfile *fp, const char *ext, const ind_arm *arm,
                      const float *flux, const float *ivar,
                      int32_t *const *masks, const char *const *mname,
                      int nmask, float *ll, int *st)
{
    char *tt[5] = {"FLUX", "IVAR", "LOGLAM", (char *)mname[0],
                   nmask > 1 ? (char *)mname[1] : NULL};
    char *tf[5] = {"E", "E", "E", "I", "I"};
    char *tu[5] = {"1e-17 erg/s/cm2/A", "", "log10(A)", "", ""};
    LONGLONG n = (LONGLONG)arm->n;
    for (size_t i = 0; i < arm->n; i++)
        ll[i] = (float)((arm->lo + arm->step * (double)i) / IND_LN10);
    fits_create_tbl(fp, BINARY_TBL, n, 3 + nmask, tt, tf, tu, ext, st);
    fits_write_col(fp, TFLOAT, 1, 1, 1, n, (void *)flux, st);
    fits_write_col(fp, TFLOAT, 2, 1, 1, n, (void *)ivar, st);
    fits_write_col(fp, TFLOAT, 3, 1, 1, n, ll, st);
    for (int k = 0; k < nmask; k++)
        fits_write_col(fp, TINT, 4 + k, 1, 1, n, masks[k], st);
}

/* The coadd of arm a into the scratch arrays; its SNR. */
static double coadd(const ind_mrs_file *f, int a, float *flux, float *ivar,
                    int32_t *and, int32_t *or, double *w)
{
    size_t n = f->arms[a].n;
    for (size_t i = 0; i < n; i++) {
        double sw = 0.0, swf = 0.0;
        int32_t ma = ~0, mo = 0;
        for (size_t k = 0; k < f->nexp; k++) {
            const ind_mrs_exposure *x = &f->x[k];
            ma &= x->mask[a][i], mo |= x->mask[a][i];
            if (x->mask[a][i] || !(x->ivar[a][i] > 0))
                continue;
            sw += x->ivar[a][i];
            swf += x->ivar[a][i] * (double)x->flux[a][i];
        }
        flux[i] = sw > 0 ? (float)(swf / sw) : 0.0f;
        ivar[i] = (float)sw;
        and[i] = ma, or[i] = mo;
    }
    return snr_of(flux, ivar, n, w);
}

/* Scratch for one arm's table: n pixels of each. */
typedef struct {
    float *fl, *iv, *ll;
    int32_t *mk[2];
    double *w;
} scratch;

static void put_coadds(fitsfile *fp, const ind_mrs_file *f, scratch *b,
                       int *st)
{
    static const char *const mn[2] = {"ANDMASK", "ORMASK"};
    char list[2048] = "";
    size_t m = 0;
    for (size_t k = 0; k < f->nexp && m + 24 < sizeof list; k++)
        m += (size_t)snprintf(list + m, sizeof list - m, "%s%lld",
                              k ? "-" : "", f->x[k].lmjm);
    for (int a = 0; a < IND_MRS_NARM && !*st; a++) {
        char ext[16];
        snprintf(ext, sizeof ext, "COADD_%s", f->arms[a].name);
        double snr = coadd(f, a, b->fl, b->iv, b->mk[0], b->mk[1], b->w);
        put_table(fp, ext, &f->arms[a], b->fl, b->iv, b->mk, mn, 2, b->ll,
                  st);
        fits_write_key(fp, TDOUBLE, "SNR", &snr, "median S/N per pixel", st);
        fits_write_key_longstr(fp, "LMJMLIST", list, "exposures' LMJM", st);
    }
}

static void put_exposures(fitsfile *fp, const ind_mrs_file *f, float *ll,
                          int *st)
{
    static const char *const mn[1] = {"PIXMASK"};
    for (size_t k = 0; k < f->nexp && !*st; k++) {
        const ind_mrs_exposure *x = &f->x[k];
        for (int a = 0; a < IND_MRS_NARM; a++) {
            char ext[40];
            snprintf(ext, sizeof ext, "%s-%lld", f->arms[a].name, x->lmjm);
            put_table(fp, ext, &f->arms[a], x->flux[a], x->ivar[a],
                      &x->mask[a], mn, 1, ll, st);
            long long lmjm = x->lmjm;
            fits_write_key(fp, TLONGLONG, "LMJM", &lmjm,
                           "local modified Julian minute", st);
            fits_write_key(fp, TDOUBLE, "EXPTIME", (void *)&x->exptime,
                           "[s]", st);
            fits_write_key(fp, TDOUBLE, "SNR", (void *)&x->snr[a], NULL,
                           st);
        }
    }
}

int ind_mrs_file_write(const ind_mrs_file *f, ind_err *e)
{
    size_t n = f->arms[0].n > f->arms[1].n ? f->arms[0].n : f->arms[1].n;
    scratch b = {malloc(3 * n * sizeof(float)), NULL, NULL,
                 {malloc(2 * n * sizeof(int32_t)), NULL},
                 malloc(n * sizeof(double))};
    if (!b.fl || !b.mk[0] || !b.w) {
        free(b.fl), free(b.mk[0]), free(b.w);
        return ind_fail(e, "%s: out of memory", f->path);
    }
    b.iv = b.fl + n, b.ll = b.iv + n, b.mk[1] = b.mk[0] + n;
    char tmp[4200];
    int st = 0;
    fitsfile *fp = ind_fits_create(f->path, tmp, sizeof tmp, &st);
    put_primary(fp, f, &st);
    put_coadds(fp, f, &b, &st);
    put_exposures(fp, f, b.ll, &st);
    free(b.fl), free(b.mk[0]), free(b.w);
    return ind_fits_commit(fp, st, tmp, f->path, "writing MRS file", e);
}
