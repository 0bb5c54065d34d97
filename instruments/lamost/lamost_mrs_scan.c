/* lamost_mrs_scan.c — the spectra of a LAMOST medium-resolution (MRS)
 * med-LMJD-PLANID_spSS-FFF.fits file: one target on one night.
 *
 * Its primary header holds keywords only (OBSID, DESIG, RA/DEC, LMJD, MJD,
 * NEXP_B/NEXP_R, HELIO/HELIO_RV, VACUUM, ...).  Binary tables of one row
 * per pixel follow: the coadds COADD_B and COADD_R (FLUX, IVAR, LOGLAM,
 * ANDMASK, ORMASK; header SNR and LMJMLIST, the exposures' local Julian
 * minutes joined by '-') and one table per exposure and arm, B-<LMJM> and
 * R-<LMJM> (FLUX, IVAR, LOGLAM, PIXMASK; header LMJM, EXPTIME, SNR).
 * [instrument.lamost] mrs picks the spectra: the coadd, one per file, or
 * every exposure, the B and R tables of one LMJM being its two arms.
 * Tables of the other kind are not looked at.
 *
 * Epochs: LMJM counts minutes of LAMOST's local time, Beijing time (UTC +
 * 8 h), so an exposure's MJD (UTC) is LMJM / 1440 - 8/24; a coadd's is
 * the mean over the exposures its LMJMLIST names, else the primary
 * header's MJD, else its LMJD (each exposure once: the B and R lists
 * may differ).
 *
 * An exposure with one arm's table missing keeps the other arm: the
 * missing one reads as an arm of no usable pixel (lamost_mrs_read.c), and
 * the file's open logs one warning counting them.  A table that is there
 * but malformed (not a table, a column missing or not one number per row,
 * fewer than 2 rows) is an error naming the file and the HDU. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lamost_internal.h"

/* LAMOST's local time (Beijing) is UTC + 8 h. */
#define LAMOST_LOCAL_UTC_DAYS (8.0 / 24.0)
/* A Julian minute has at most 12 digits (MJD 10^8 / 1440 ...). */
#define LAMOST_LMJM_DIGITS 12

double lamost_lmjm_mjd(long long lmjm)
{
    return (double)lmjm / 1440.0 - LAMOST_LOCAL_UTC_DAYS;
}

/* An LMJM: 1-12 decimal digits and nothing else; -1 otherwise. */
static long long lamost_parse_lmjm(const char *s, size_t n)
{
    if (n == 0 || n > LAMOST_LMJM_DIGITS)
        return -1;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = 10 * v + (s[i] - '0');
    }
    return v;
}

/* Which MRS table an EXTNAME names: 1 with *arm and *lmjm (-1 for a
 * coadd), 0 for any other HDU. */
static int lamost_mrs_name(const char *name, int *arm, long long *lmjm)
{
    for (int a = 0; a < LAMOST_MRS_NARM; a++) {
        const char *t = lamost_mrs_arms[a].tag;
        size_t nt = strlen(t);
        if (!strncmp(name, "COADD_", 6) && !strcmp(name + 6, t)) {
            *arm = a, *lmjm = -1;
            return 1;
        }
        if (!strncmp(name, t, nt) && name[nt] == '-') {
            long long v = lamost_parse_lmjm(name + nt + 1,
                                            strlen(name + nt + 1));
            if (v >= 0) {
                *arm = a, *lmjm = v;
                return 1;
            }
        }
    }
    return 0;
}

/* EXTNAME of HDU k (1-based) into name ("" when absent); -1 when the HDU
 * cannot be reached. */
static int lamost_hdu_name(fitsfile *fp, int k, char *name, size_t n)
{
    int st = 0, type = 0;
    name[0] = '\0';
    if (fits_movabs_hdu(fp, k, &type, &st)) {
        fits_clear_errmsg();
        return -1;
    }
    lamost_key_str(fp, "EXTNAME", name, n);
    return 0;
}

int lamost_mrs_is(fitsfile *fp)
{
    int st = 0, nhdu = 0, arm = 0;
    long long lmjm = 0;
    char name[FLEN_VALUE];
    if (fits_get_num_hdus(fp, &nhdu, &st)) {
        fits_clear_errmsg();
        return 0;
    }
    for (int k = 2; k <= nhdu; k++)
        if (!lamost_hdu_name(fp, k, name, sizeof name) &&
            lamost_mrs_name(name, &arm, &lmjm))
            return 1;
    return 0;
}

void lamost_mrs_free(lamost_mrs *m)
{
    free(m->spec), free(m->sel);
    memset(m, 0, sizeof *m);
}

/* One MRS table found by the scan. */
typedef struct mrs_tab {
    long long lmjm;
    int arm, hdu;
} mrs_tab;

static int mrs_tab_cmp(const void *a, const void *b)
{
    const mrs_tab *x = a, *y = b;
    if (x->lmjm != y->lmjm)
        return x->lmjm < y->lmjm ? -1 : 1;
    return (x->arm > y->arm) - (x->arm < y->arm);
}

/* The tables of the mode's kind (coadds or exposures), sorted by LMJM and
 * arm; a name twice is an error. */
static int lamost_mrs_tables(fitsfile *fp, const lamost_handle *h,
                             mrs_tab **out, size_t *n, rvfit_err *err)
{
    int st = 0, nhdu = 0;
    *out = NULL, *n = 0;
    if (fits_get_num_hdus(fp, &nhdu, &st))
        return rvfit_fits_error(err, st, h->path, "", "counting HDUs");
    mrs_tab *t = malloc((size_t)(nhdu > 0 ? nhdu : 1) * sizeof *t);
    if (!t)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: %d HDUs", h->path,
                             nhdu);
    int want_exp = h->opts.mrs == LAMOST_MRS_EXPOSURES;
    char name[FLEN_VALUE];
    for (int k = 2; k <= nhdu; k++) {
        mrs_tab x = {0, 0, k};
        if (lamost_hdu_name(fp, k, name, sizeof name) ||
            !lamost_mrs_name(name, &x.arm, &x.lmjm) ||
            (x.lmjm >= 0) != want_exp)
            continue;
        for (size_t i = 0; i < *n; i++)
            if (t[i].lmjm == x.lmjm && t[i].arm == x.arm) {
                int rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %s "
                                       "appears twice (HDUs %d and %d)",
                                       h->path, name, t[i].hdu, k);
                free(t);
                return rc;
            }
        t[(*n)++] = x;
    }
    qsort(t, *n, sizeof *t, mrs_tab_cmp);
    *out = t;
    return RVFIT_OK;
}

/* The exposures a coadd table's LMJMLIST names, added to lm[0 .. *n) (at
 * most LAMOST_MRS_MAXLIST, each once); a list that does not parse adds
 * nothing. */
#define LAMOST_MRS_MAXLIST 256
static void lamost_lmjmlist(fitsfile *fp, long long *lm, int *n)
{
    char *list = NULL;
    int st = 0;
    if (fits_read_key_longstr(fp, "LMJMLIST", &list, NULL, &st)) {
        fits_clear_errmsg();
        return;
    }
    long long v[LAMOST_MRS_MAXLIST];
    int c = 0, ok = 1;
    const char *p = list + strspn(list, " ");
    while (*p && ok) {
        size_t len = strcspn(p, "- ");
        long long x = lamost_parse_lmjm(p, len);
        ok = x >= 0 && c < LAMOST_MRS_MAXLIST;
        if (ok)
            v[c++] = x;
        p += len;
        p += strspn(p, " ");
        p += *p == '-';
    }
    for (int i = 0; ok && i < c; i++) {
        int seen = 0;
        for (int j = 0; j < *n && !seen; j++)
            seen = lm[j] == v[i];
        if (!seen && *n < LAMOST_MRS_MAXLIST)
            lm[(*n)++] = v[i];
    }
    fits_free_memory(list, &st);
}

/* Fill spectrum p's arm a from HDU hdu: checked, its length and keys. */
static int lamost_mrs_arm_keys(fitsfile *fp, const lamost_handle *h,
                               lamost_mrs_spec *p, int a, int hdu,
                               long long *lm, int *nlm, rvfit_err *err)
{
    char name[32];
    int cols[4];
    lamost_mrs_hdu_name(p->lmjm, a, name, sizeof name);
    int rc = lamost_mrs_table(fp, h->path, hdu, name, &p->npix[a], cols,
                              err);
    if (rc)
        return rc;
    p->hdu[a] = hdu;
    p->snr[a] = rvfit_fits_key_double(fp, "SNR");
    if (p->lmjm < 0) {
        lamost_lmjmlist(fp, lm, nlm);
        return RVFIT_OK;
    }
    if (!isfinite(p->exptime))
        p->exptime = rvfit_fits_key_double(fp, "EXPTIME");
    double k = rvfit_fits_key_double(fp, "LMJM");
    if (isfinite(k) && k != (double)p->lmjm)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %s: LMJM = %.0f "
                             "differs from the HDU's name", h->path, name,
                             k);
    return RVFIT_OK;
}

/* The spectra from the sorted tables t[0..n-1]: one per LMJM. */
static int lamost_mrs_specs(fitsfile *fp, lamost_handle *h,
                            const mrs_tab *t, size_t n, rvfit_err *err)
{
    lamost_mrs *m = &h->mrs;
    m->spec = calloc(n ? n : 1, sizeof *m->spec);
    m->sel = calloc(n ? n : 1, sizeof *m->sel);
    if (!m->spec || !m->sel)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: %zu tables",
                             h->path, n);
    long long lm[LAMOST_MRS_MAXLIST];
    int nlm = 0, rc = RVFIT_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!i || t[i].lmjm != t[i - 1].lmjm) {
            lamost_mrs_spec *p = &m->spec[m->nspec++];
            p->lmjm = t[i].lmjm;
            p->exptime = NAN;
            p->snr[0] = p->snr[1] = NAN;
            p->mjd = p->lmjm >= 0 ? lamost_lmjm_mjd(p->lmjm) : NAN;
        }
        rc = lamost_mrs_arm_keys(fp, h, &m->spec[m->nspec - 1], t[i].arm,
                                 t[i].hdu, lm, &nlm, err);
    }
    double lsum = 0.0;
    for (int i = 0; i < nlm; i++)
        lsum += lamost_lmjm_mjd(lm[i]);
    if (!rc && m->nspec && m->spec[0].lmjm < 0) /* the coadd's epoch */
        m->spec[0].mjd = nlm                       ? lsum / nlm
                         : isfinite(h->meta.mjd)   ? h->meta.mjd
                         : h->meta.lmjd >= 0       ? (double)h->meta.lmjd
                                                   : NAN;
    return rc;
}

/* The arms' lengths in the batch; one warning for spectra missing an
 * arm. */
static void lamost_mrs_sizes(lamost_handle *h)
{
    lamost_mrs *m = &h->mrs;
    size_t miss = 0, first = 0;
    for (int a = 0; a < LAMOST_MRS_NARM; a++)
        m->npix[a] = 0;
    for (size_t i = 0; i < m->nspec; i++) {
        const lamost_mrs_spec *p = &m->spec[i];
        for (int a = 0; a < LAMOST_MRS_NARM; a++)
            if (p->npix[a] > m->npix[a])
                m->npix[a] = p->npix[a];
        if (!p->hdu[0] || !p->hdu[1])
            first = miss++ ? first : i;
    }
    for (int a = 0; a < LAMOST_MRS_NARM; a++)
        if (!m->npix[a]) /* no table of this arm at all */
            m->npix[a] = LAMOST_MRS_EMPTY_NPIX;
    if (!miss)
        return;
    const lamost_mrs_spec *p = &m->spec[first];
    char have[32], lack[32];
    int a = p->hdu[0] ? 0 : 1;
    lamost_mrs_hdu_name(p->lmjm, a, have, sizeof have);
    lamost_mrs_hdu_name(p->lmjm, 1 - a, lack, sizeof lack);
    rvfit_log(h->host, RVFIT_LOG_WARN, LAMOST_WHO, "%s: %zu of %zu %s lack "
              "one arm (e.g. HDU %s without %s): that arm has no usable "
              "pixel", h->path, miss, m->nspec,
              p->lmjm < 0 ? "coadds" : "exposures", have, lack);
}

static void lamost_mrs_nexp(fitsfile *fp, lamost_mrs *m)
{
    static const char *const key[LAMOST_MRS_NARM] = {"NEXP_B", "NEXP_R"};
    int st = 0, type = 0;
    fits_movabs_hdu(fp, 1, &type, &st);
    for (int a = 0; a < LAMOST_MRS_NARM; a++) {
        double v = st ? NAN : rvfit_fits_key_double(fp, key[a]);
        m->nexp[a] = v >= 0 && v < 1e6 && v == floor(v) ? (int32_t)v : -1;
    }
    fits_clear_errmsg();
}

int lamost_mrs_scan(fitsfile *fp, lamost_handle *h, rvfit_err *err)
{
    mrs_tab *t = NULL;
    size_t n = 0;
    lamost_mrs_nexp(fp, &h->mrs);
    int rc = lamost_mrs_tables(fp, h, &t, &n, err);
    if (!rc && n == 0)
        rc = h->opts.mrs == LAMOST_MRS_EXPOSURES
                 ? rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: no HDU B-<LMJM> "
                                 "or R-<LMJM> (the per-exposure tables of a "
                                 "LAMOST MRS file)", h->path)
                 : rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: no HDU COADD_B "
                                 "or COADD_R (the coadds of a LAMOST MRS "
                                 "file); [instrument.lamost] mrs = "
                                 "exposures reads its B-<LMJM>/R-<LMJM> "
                                 "tables", h->path);
    if (!rc)
        rc = lamost_mrs_specs(fp, h, t, n, err);
    free(t);
    if (rc)
        return rc;
    lamost_mrs_sizes(h);
    for (size_t i = 0; i < h->mrs.nspec; i++)
        h->mrs.sel[i] = i;
    h->mrs.nsel = h->mrs.nspec;
    return RVFIT_OK;
}
