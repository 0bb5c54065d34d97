/* lamost_mrs_read.c — the pixels of MRS spectra (lamost_mrs_scan.c) into
 * a batch of two arms, MRS_B and MRS_R, and the selection.
 *
 * Per arm: wavelengths 10^LOGLAM (vacuum, heliocentric: HELIO = F shifts
 * them by HELIO_RV as for LRS files).  LOGLAM is stored as float32 (about
 * 1.2e-7 dex, 0.08 km/s, of rounding); when the stored values follow a
 * straight line in the pixel index to within SNAP_TOL, the line is used,
 * so that a log-linear grid is exact, otherwise the values as stored.
 * Flux and ivar as stored; unusable pixels get ivar 0: a mask bit set
 * (ANDMASK of a coadd: bad in every exposure; PIXMASK of an exposure;
 * ORMASK is not used), ivar <= 0, non-finite flux or ivar, and pixels
 * outside the arm's range (lamost_mrs_arms).  The LSF is a Gaussian of
 * FWHM lambda / R, R = [instrument.lamost] mrs_resolution.  A spectrum
 * shorter than the batch's arm is padded (npix_own); an arm whose table
 * the spectrum lacks is a log-linear grid over the arm's range with no
 * usable pixel; a spectrum with no usable pixel in either arm is flagged
 * RVFIT_SPEC_BAD and logged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lamost_internal.h"

/* 2.5e-7 dex: twice float32's rounding of log10(lambda) near 3.7 (its
 * spacing there is 2.4e-7), far below a pixel (8e-6 dex). */
#define LAMOST_MRS_SNAP_TOL 2.5e-7

void lamost_mrs_hdu_name(long long lmjm, int a, char *buf, size_t n)
{
    if (lmjm < 0)
        snprintf(buf, n, "COADD_%s", lamost_mrs_arms[a].tag);
    else
        snprintf(buf, n, "%s-%lld", lamost_mrs_arms[a].tag, lmjm);
}

int lamost_mrs_table(fitsfile *fp, const char *path, int hdu,
                     const char *name, size_t *npix, int cols[4],
                     rvfit_err *err)
{
    int coadd = !strncmp(name, "COADD_", 6), st = 0, type = 0;
    const char *const want[4] = {"FLUX", "IVAR", "LOGLAM",
                                 coadd ? "ANDMASK" : "PIXMASK"};
    if (fits_movabs_hdu(fp, hdu, &type, &st))
        return rvfit_fits_error(err, st, path, name, "moving to HDU");
    if (type != BINARY_TBL)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %s: not a "
                             "binary table", path, name);
    int rc = rvfit_fits_check_extent(fp, path, name, err);
    if (rc)
        return rc;
    long nrow = 0;
    if (fits_get_num_rows(fp, &nrow, &st))
        return rvfit_fits_error(err, st, path, name, "reading rows");
    if (nrow < 2)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %s: %ld rows; "
                             "an MRS table has one row per pixel (at least "
                             "2)", path, name, nrow);
    for (int c = 0; c < 4; c++) {
        if (!(cols[c] = rvfit_fits_colnum(fp, want[c])))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %s: column "
                                 "%s missing (an MRS %s table has FLUX, "
                                 "IVAR, LOGLAM and %s)", path, name, want[c],
                                 coadd ? "coadd" : "exposure", want[3]);
        rc = rvfit_fits_check_col(fp, cols[c], RVFIT_FITS_SCALAR, path, name,
                                  NULL, err);
        if (rc)
            return rc;
    }
    *npix = (size_t)nrow;
    return RVFIT_OK;
}

/* log10(lambda) on a straight line in i when it fits within the
 * rounding. */
static void lamost_mrs_snap(double *y, size_t n)
{
    double xm = 0.5 * (double)(n - 1), sy = 0.0, sxy = 0.0, sxx = 0.0;
    for (size_t i = 0; i < n; i++)
        sy += y[i];
    double a = sy / (double)n;
    for (size_t i = 0; i < n; i++) {
        double x = (double)i - xm;
        sxy += x * (y[i] - a), sxx += x * x;
    }
    double b = sxy / sxx, worst = 0.0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(y[i] - (a + b * ((double)i - xm))));
    if (worst <= LAMOST_MRS_SNAP_TOL) /* NaN compares false: kept */
        for (size_t i = 0; i < n; i++)
            y[i] = a + b * ((double)i - xm);
}

/* One arm's own pixels (n of them) read into w, f, v; unusable ones
 * zeroed in v. */
static int lamost_mrs_pixels(fitsfile *fp, const lamost_handle *h, int hdu,
                             const char *name, int a, size_t n, double *w,
                             float *f, float *v, rvfit_err *err)
{
    size_t nt = 0;
    int cols[4], st = 0;
    int rc = lamost_mrs_table(fp, h->path, hdu, name, &nt, cols, err);
    if (!rc && nt != n)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %s: %zu rows, "
                           "%zu at open (file changed?)", h->path, name, nt,
                           n);
    int32_t *mask = rc ? NULL : malloc(n * sizeof *mask);
    if (!rc && !mask)
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: HDU %s", h->path,
                           name);
    if (rc)
        return rc;
    LONGLONG m = (LONGLONG)n;
    fits_read_col(fp, TFLOAT, cols[0], 1, 1, m, NULL, f, NULL, &st);
    fits_read_col(fp, TFLOAT, cols[1], 1, 1, m, NULL, v, NULL, &st);
    fits_read_col(fp, TDOUBLE, cols[2], 1, 1, m, NULL, w, NULL, &st);
    fits_read_col(fp, TINT, cols[3], 1, 1, m, NULL, mask, NULL, &st);
    if (st)
        rc = rvfit_fits_error(err, st, h->path, name, "reading pixels");
    if (!rc) {
        lamost_mrs_snap(w, n);
        for (size_t i = 0; i < n; i++)
            w[i] = pow(10.0, w[i]);
        rc = lamost_wave_ok(h->path, name, w, n, err);
    }
    if (!rc) {
        lamost_wave_helio(&h->meta, w, n);
        const lamost_mrs_arm *A = &lamost_mrs_arms[a];
        for (size_t i = 0; i < n; i++) {
            int ok = isfinite(f[i]) && isfinite(v[i]) && v[i] > 0.0f &&
                     mask[i] == 0 && w[i] >= A->lam_min &&
                     w[i] <= A->lam_max;
            f[i] = isfinite(f[i]) ? f[i] : 0.0f;
            v[i] = ok ? v[i] : 0.0f;
        }
    }
    free(mask);
    return rc;
}

/* Arm a of spectrum p into row arrays of N pixels (padded beyond its own,
 * *nown); *usable when a pixel has ivar > 0. */
static int lamost_mrs_arm_read(fitsfile *fp, const lamost_handle *h,
                               const lamost_mrs_spec *p, int a, size_t N,
                               double *w, float *f, float *v, float *lsf,
                               size_t *nown, rvfit_err *err)
{
    const lamost_mrs_arm *A = &lamost_mrs_arms[a];
    size_t n = p->hdu[a] ? p->npix[a] : N;
    char name[32];
    lamost_mrs_hdu_name(p->lmjm, a, name, sizeof name);
    int rc = RVFIT_OK;
    if (p->hdu[a]) {
        rc = lamost_mrs_pixels(fp, h, p->hdu[a], name, a, n, w, f, v, err);
    } else { /* no table: the arm's range, nothing usable */
        for (size_t i = 0; i < n; i++) {
            w[i] = A->lam_min * pow(A->lam_max / A->lam_min,
                                    (double)i / (double)(n - 1));
            f[i] = v[i] = 0.0f;
        }
    }
    if (rc)
        return rc;
    double k = 1.0 / (h->opts.mrs_resolution * LAMOST_FWHM_SIGMA);
    for (size_t i = 0; i < N; i++) {
        if (i >= n) { /* padding: the last step continued, no weight */
            w[i] = w[i - 1] + (w[n - 1] - w[n - 2]);
            f[i] = v[i] = 0.0f;
        }
        lsf[i] = (float)(k * w[i < n ? i : n - 1]);
    }
    *nown = n;
    return RVFIT_OK;
}

static int lamost_mrs_check_batch(const lamost_handle *h,
                                  const rvfit_batch *b, size_t count,
                                  rvfit_err *err)
{
    int ok = count <= b->cap && b->narm == LAMOST_MRS_NARM;
    for (int a = 0; ok && a < LAMOST_MRS_NARM; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        ok = A->npix == h->mrs.npix[a] && A->wave_per_spec &&
             A->res_kind == RVFIT_RES_LSF && A->lsf;
    }
    return ok ? RVFIT_OK
              : rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: batch (%zu "
                              "spectra, %d arms) does not fit %zu spectra "
                              "of the two LSF arms MRS_B (%zu pixels) and "
                              "MRS_R (%zu) with own wavelengths", h->path,
                              b->cap, b->narm, count, h->mrs.npix[0],
                              h->mrs.npix[1]);
}

/* Spectrum k into row s of b; a spectrum of no usable pixel is logged
 * when `say`. */
static int lamost_mrs_one(fitsfile *fp, const lamost_handle *h, size_t k,
                          rvfit_batch *b, size_t s, int say, rvfit_err *err)
{
    const lamost_mrs_spec *p = &h->mrs.spec[k];
    int usable = 0;
    for (int a = 0; a < LAMOST_MRS_NARM; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        size_t N = A->npix, nown = 0, o = s * N;
        int rc = lamost_mrs_arm_read(fp, h, p, a, N, A->wave + o,
                                     A->flux + o, A->ivar + o, A->lsf + o,
                                     &nown, err);
        if (rc)
            return rc;
        if (A->npix_own)
            A->npix_own[s] = nown;
        b->snr[s * LAMOST_MRS_NARM + a] =
            rvfit_pixel_snr(A->flux + o, A->ivar + o, nown, NULL);
        for (size_t i = 0; i < nown && !usable; i++)
            usable = A->ivar[o + i] > 0.0f;
    }
    b->flags[s] = usable ? 0u : RVFIT_SPEC_BAD;
    b->index[s] = k;
    if (!usable && say) {
        char name[32];
        lamost_mrs_hdu_name(p->lmjm, p->hdu[0] ? 0 : 1, name, sizeof name);
        rvfit_log(h->host, RVFIT_LOG_WARN, LAMOST_WHO, "%s: HDU %s: spectrum "
                  "%zu: no usable pixel in either arm (ivar > 0, mask 0, "
                  "inside the arm's range): not fitted (BAD_SPECTRUM)",
                  h->path, name, k);
    }
    return RVFIT_OK;
}

/* Spectra sel[first .. first+count) of h into b. */
static int lamost_mrs_fill(const lamost_handle *h, const size_t *sel,
                           size_t count, rvfit_batch *b, rvfit_err *err)
{
    fitsfile *fp = NULL;
    int rc = rvfit_fits_open_reader(h->path, (void **)&fp, err);
    for (size_t s = 0; s < count && !rc; s++)
        rc = lamost_mrs_one(fp, h, sel[s], b, s, 1, err);
    lamost_close_file(fp);
    if (!rc)
        b->nspec = count;
    return rc;
}

int lamost_mrs_read(lamost_handle *h, size_t first, size_t count,
                    rvfit_batch *b, rvfit_err *err)
{
    if (first > h->nsel || count > h->nsel - first)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: read of spectra "
                             "[%zu, %zu) but %zu selected", h->path, first,
                             first + count, h->nsel);
    int rc = lamost_mrs_check_batch(h, b, count, err);
    if (rc || count == 0) {
        if (!rc)
            b->nspec = 0;
        return rc;
    }
    return lamost_mrs_fill(h, h->mrs.sel + first, count, b, err);
}

/* Keep spectrum k when either arm's median S/N reaches minsn. */
static int lamost_mrs_snr_keep(const lamost_handle *h, fitsfile *fp,
                               rvfit_batch *b, size_t k, double minsn,
                               int *keep, rvfit_err *err)
{
    int rc = lamost_mrs_one(fp, h, k, b, 0, 0, err);
    *keep = 0;
    for (int a = 0; !rc && a < LAMOST_MRS_NARM; a++)
        *keep |= b->snr[a] >= minsn;
    return rc;
}

int lamost_mrs_select(lamost_handle *h, const rvfit_select *sel,
                      rvfit_err *err)
{
    lamost_mrs *m = &h->mrs;
    int keep_all = 1;
    if (sel && sel->ntargetid) {
        keep_all = 0;
        for (size_t i = 0; i < sel->ntargetid && !keep_all; i++)
            keep_all = sel->targetid[i] == h->meta.targetid;
    }
    m->nsel = keep_all ? m->nspec : 0;
    h->nsel = m->nsel;
    if (!m->nsel || !sel || !(sel->minsn > 0))
        return RVFIT_OK;
    rvfit_arm_info ai[LAMOST_MRS_NARM];
    for (int a = 0; a < LAMOST_MRS_NARM; a++)
        ai[a] = (rvfit_arm_info){.npix = m->npix[a], .res_kind =
                                 RVFIT_RES_LSF, .wave_per_spec = 1};
    rvfit_batch b;
    int rc = rvfit_batch_alloc(&b, LAMOST_MRS_NARM, ai, 1, err);
    fitsfile *fp = NULL;
    if (!rc)
        rc = rvfit_fits_open_reader(h->path, (void **)&fp, err);
    size_t n = 0;
    for (size_t k = 0; k < m->nspec && !rc; k++) {
        int keep = 0;
        rc = lamost_mrs_snr_keep(h, fp, &b, k, sel->minsn, &keep, err);
        if (!rc && keep)
            m->sel[n++] = k;
    }
    lamost_close_file(fp);
    rvfit_batch_free(&b);
    if (!rc && n < m->nspec) /* debug: survey runs drop many, see LRS */
        rvfit_log(h->host, RVFIT_LOG_DEBUG, LAMOST_WHO, "%s: %zu of %zu "
                  "spectra below minsn %g", h->path, m->nspec - n, m->nspec,
                  sel->minsn);
    m->nsel = rc ? 0 : n;
    h->nsel = m->nsel;
    return rc;
}
