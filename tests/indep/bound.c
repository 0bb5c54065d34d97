/* `rvfit-indep bound COADD TRUTH --out FILE`: the Cramer-Rao bound of
 * VRAD, TEFF, LOGG, FEH and ALPHAFE of every star of a coadd this
 * generator wrote: the smallest standard deviation an unbiased estimate
 * can have given those pixels.
 *
 * The star is drawn again from the seeds the coadd records (and checked
 * against its truth table); its noiseless detector pixels (the very
 * ind_model_pixels that made the data, times the flux scale and the
 * calibration distortion) are differentiated by central differences in
 * each parameter; the information matrix sum_i w_i d_p d_q uses the
 * coadd's own IVAR (0 where MASK is set); per arm a multiplicative
 * continuum, npoly basis functions times the model, is marginalised (the
 * Schur complement of its block), as a fitter that fits such a continuum
 * must.  vsini is held at its true value: at DESI resolution a vsini of
 * a few km/s changes the pixels by O(vsini^2), so its information is
 * singular at 0, where most fitters put it.  Unflagged cosmic rays and
 * sky residuals are not noise of the Gaussian kind and do not enter. */
#include "bound.h"
#include "util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const PNAME[IND_NPAR] = {"VRAD", "TEFF", "LOGG", "FEH",
                                            "ALPHAFE"};
static const char *const PUNIT[IND_NPAR] = {"km/s", "K", "dex", "dex",
                                            "dex"};
/* central-difference steps: far inside the scales on which the pixels
 * change (the LSF's ~40 km/s; hundreds of K; tenths of a dex), far above
 * float rounding of the model */
static const double PSTEP[IND_NPAR] = {0.5, 10.0, 0.02, 0.02, 0.02};

static double *param_ref(ind_draw *d, int p)
{
    switch (p) {
    case 0: return &d->vrad;
    case 1: return &d->p.teff;
    case 2: return &d->p.logg;
    case 3: return &d->p.feh;
    default: return &d->p.alpha;
    }
}

void ind_basis(int kind, int npoly, double x, double *b)
{
    if (kind == IND_BASIS_LEGENDRE) {
        /* (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1} */
        b[0] = 1.0;
        if (npoly > 1)
            b[1] = x;
        for (int k = 1; k + 1 < npoly; k++)
            b[k + 1] = ((2 * k + 1) * x * b[k] - k * b[k - 1]) / (k + 1);
        return;
    }
    /* 1, x, x^2 and npoly - 3 Gaussians of width 1/(npoly - 3) centred
     * evenly on [-1, 1] (rvspecfit's continuum, as rvfit's configuration
     * reference describes its default) */
    double m[3] = {1.0, x, x * x};
    for (int k = 0; k < npoly && k < 3; k++)
        b[k] = m[k];
    int ng = npoly - 3;
    for (int k = 0; k < ng; k++) {
        double c = ng == 1 ? -1.0 : -1.0 + 2.0 * k / (ng - 1);
        double z = (x - c) * ng;
        b[3 + k] = fabs(z) < 6.0 ? exp(-0.5 * z * z) : 0.0;
    }
}

/* In-place Cholesky of the n x n symmetric a (lower triangle), after
 * scaling rows and columns by s[i] = 1/sqrt(a_ii); -1 unless positive
 * definite. */
static int chol(double *a, int n, double *s)
{
    for (int i = 0; i < n; i++) {
        if (!(a[i * n + i] > 0))
            return -1;
        s[i] = 1.0 / sqrt(a[i * n + i]);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i * n + j] *= s[i] * s[j];
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];
        for (int k = 0; k < j; k++)
            d -= a[j * n + k] * a[j * n + k];
        if (!(d > 1e-13))
            return -1;
        a[j * n + j] = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double v = a[i * n + j];
            for (int k = 0; k < j; k++)
                v -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = v / a[j * n + j];
        }
    }
    return 0;
}

/* Solve (L L^T) y = b for the factor of chol (scaled system): x = s y s. */
static void chol_solve(const double *l, const double *s, int n, double *b)
{
    for (int i = 0; i < n; i++)
        b[i] *= s[i];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            b[i] -= l[i * n + k] * b[k];
        b[i] /= l[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            b[i] -= l[k * n + i] * b[k];
        b[i] /= l[i * n + i];
    }
    for (int i = 0; i < n; i++)
        b[i] *= s[i];
}

int ind_info_marginal(size_t n, int np, const double *d, int nb,
                      const double *c, const double *w, double *info)
{
    if (np > IND_NPAR || nb > IND_MAXB)
        return -1;
    double cc[IND_MAXB * IND_MAXB] = {0}, cd[IND_MAXB * IND_NPAR] = {0};
    double s[IND_MAXB];
    for (size_t i = 0; i < n; i++) {
        if (!(w[i] > 0))
            continue;
        for (int p = 0; p < np; p++)
            for (int q = 0; q <= p; q++)
                info[p * np + q] += w[i] * d[p * n + i] * d[q * n + i];
        for (int j = 0; j < nb; j++) {
            double wc = w[i] * c[j * n + i];
            for (int k = 0; k <= j; k++)
                cc[j * nb + k] += wc * c[k * n + i];
            for (int p = 0; p < np; p++)
                cd[p * nb + j] += wc * d[p * n + i];
        }
    }
    if (chol(cc, nb, s))
        return -1;
    for (int p = 0; p < np; p++) {
        double y[IND_MAXB];
        memcpy(y, &cd[p * nb], nb * sizeof *y);
        chol_solve(cc, s, nb, y);
        for (int q = 0; q <= p; q++) {
            double v = 0.0;
            for (int j = 0; j < nb; j++)
                v += cd[q * nb + j] * y[j];
            info[p * np + q] -= v;
        }
    }
    for (int p = 0; p < np; p++)
        for (int q = p + 1; q < np; q++)
            info[p * np + q] = info[q * np + p];
    return 0;
}

int ind_info_invert(int np, const double *info, double *cov)
{
    double l[IND_NPAR * IND_NPAR], s[IND_NPAR];
    if (np > IND_NPAR)
        return -1;
    memcpy(l, info, (size_t)(np * np) * sizeof *l);
    if (chol(l, np, s))
        return -1;
    for (int p = 0; p < np; p++) {
        double e[IND_NPAR] = {0};
        e[p] = 1.0;
        chol_solve(l, s, np, e);
        for (int q = 0; q < np; q++)
            cov[q * np + p] = e[q];
    }
    return 0;
}

/* ---- the stars of a coadd ------------------------------------------------ */

typedef struct {
    const ind_bound_args *a;
    const ind_preset *ps;
    uint64_t seed;
    ind_mockopts o;
    ind_linelist ll;
    int have_ll;
    ind_obsctx c;
    ind_work *work;            /* per worker */
    double **buf;              /* per worker: derivatives, basis, weights */
    fitsfile *fp;              /* the coadd, read under io */
    pthread_mutex_t io;
    double *tv;                /* truth rows [star][8] */
    size_t nstar;
    double *out;               /* [item][1 + IND_NPAR]: SNR, bounds */
} bound_ctx;

enum { TV_TEFF, TV_LOGG, TV_FEH, TV_ALPHA, TV_VRAD, TV_VSINI, TV_SNR, TV_N };

static int read_ivar(bound_ctx *c, size_t star, int a, double *w,
                     ind_err *e)
{
    const ind_arm *arm = &ind_desi_arms()[a];
    size_t n = arm->n;
    float *iv = malloc(n * sizeof *iv);
    int32_t *mk = malloc(n * sizeof *mk);
    char name[32];
    int st = iv && mk ? 0 : MEMORY_ALLOCATION;
    pthread_mutex_lock(&c->io);
    LONGLONG first = (LONGLONG)(star * n) + 1;
    snprintf(name, sizeof name, "%s_IVAR", arm->name);
    fits_movnam_hdu(c->fp, IMAGE_HDU, name, 0, &st);
    fits_read_img(c->fp, TFLOAT, first, (LONGLONG)n, NULL, iv, NULL, &st);
    snprintf(name, sizeof name, "%s_MASK", arm->name);
    fits_movnam_hdu(c->fp, IMAGE_HDU, name, 0, &st);
    fits_read_img(c->fp, TINT, first, (LONGLONG)n, NULL, mk, NULL, &st);
    pthread_mutex_unlock(&c->io);
    for (size_t i = 0; i < n && !st; i++)
        w[i] = mk[i] == 0 && isfinite(iv[i]) && iv[i] > 0 ? iv[i] : 0.0;
    free(iv);
    free(mk);
    return st ? ind_fits_fail(e, st, c->a->coadd, "reading IVAR and MASK")
              : 0;
}

/* The drawn star must be the truth table's row. */
static int check_draw(const bound_ctx *c, size_t i, const ind_draw *d,
                      ind_err *e)
{
    const double *t = &c->tv[i * TV_N];
    double v[TV_N] = {d->p.teff, d->p.logg, d->p.feh, d->p.alpha, d->vrad,
                      d->vsini, d->snr};
    for (int k = 0; k < TV_N; k++)
        if (!(fabs(v[k] - t[k]) <= 1e-9 * (1.0 + fabs(t[k]))))
            return ind_fail(e, "%s: star %zu (TARGETID %zu) is not the one "
                            "these seeds draw: give the --snr-min, "
                            "--snr-max, --vmax and --vsini-max the coadd "
                            "was made with", c->a->truth, i, 1000000 + i);
    return 0;
}

/* Model pixels of draw d into out (all arms, concatenated, scaled by k). */
static int model(bound_ctx *c, const ind_draw *d, ind_work *w, double k,
                 double *out)
{
    if (ind_model_pixels(&c->c, d, w))
        return -1;
    const ind_arm *arms = ind_desi_arms();
    for (int a = 0; a < IND_NARM; a++) {
        for (size_t i = 0; i < arms[a].n; i++)
            out[i] = k * w->model[a][i];
        out += arms[a].n;
    }
    return 0;
}

static size_t total_pixels(void)
{
    size_t n = 0;
    for (int a = 0; a < IND_NARM; a++)
        n += ind_desi_arms()[a].n;
    return n;
}

/* Derivatives d[p][pixel] (distortion applied) and the model m. */
static int derivatives(bound_ctx *c, ind_draw *d, ind_work *w, double *m,
                       double *dv, double *tmp, ind_err *e)
{
    size_t n = total_pixels();
    if (ind_model_pixels(&c->c, d, w))
        return ind_fail(e, "vsini %.1f km/s too large", d->vsini);
    double k = ind_flux_scale(d, w);
    if (model(c, d, w, k, m))
        return -1;
    for (int p = 0; p < IND_NPAR; p++) {
        double *x = param_ref(d, p), x0 = *x, h = PSTEP[p] * c->a->step;
        *x = x0 + h;
        int rc = model(c, d, w, k, dv + p * n);
        *x = x0 - h;
        rc = rc || model(c, d, w, k, tmp);
        *x = x0;
        if (rc)
            return ind_fail(e, "vsini %.1f km/s too large", d->vsini);
        for (size_t i = 0; i < n; i++)
            dv[p * n + i] = (dv[p * n + i] - tmp[i]) / (2.0 * h);
    }
    /* the calibration distortion multiplies the data (and their IVAR
     * already) */
    const ind_arm *arms = ind_desi_arms();
    size_t off = 0;
    for (int a = 0; a < IND_NARM; a++) {
        size_t na = arms[a].n;
        for (size_t i = 0; i < na; i++) {
            double g = ind_distortion(d->dist[a],
                                      2.0 * (double)i / (double)(na - 1) - 1.0);
            for (int p = 0; p < IND_NPAR; p++)
                dv[p * n + off + i] *= g;
        }
        off += na;
    }
    return 0;
}

static int star_task(void *ctx, size_t item, int worker, ind_err *e)
{
    bound_ctx *c = ctx;
    size_t i = c->a->first + item, n = total_pixels();
    int nb = c->a->npoly;
    ind_draw d;
    ind_draw_star(c->seed, i, c->ps, &c->o, &d);
    if (check_draw(c, i, &d, e))
        return -1;
    double *m = c->buf[worker], *dv = m + n, *tmp = dv + IND_NPAR * n;
    double *bs = tmp + n, *w = bs + IND_MAXB * n, *da = w + n;
    ind_err de = {{0}};
    if (derivatives(c, &d, &c->work[worker], m, dv, tmp, &de))
        return ind_fail(e, "star %zu: %s", i, de.msg);
    double info[IND_NPAR * IND_NPAR] = {0}, cov[IND_NPAR * IND_NPAR];
    const ind_arm *arms = ind_desi_arms();
    size_t off = 0;
    for (int a = 0; a < IND_NARM; a++) {
        size_t na = arms[a].n;
        if (read_ivar(c, i, a, w, e))
            return -1;
        double l0 = ind_arm_lam(&arms[a], 0), l1 = ind_arm_lam(&arms[a], na - 1);
        for (size_t q = 0; q < na; q++) {
            double b[IND_MAXB], x = (2.0 * ind_arm_lam(&arms[a], q) - l0 - l1) /
                                    (l1 - l0);
            ind_basis(c->a->basis, nb, x, b);
            for (int j = 0; j < nb; j++)
                bs[j * na + q] = b[j] * m[off + q];
            for (int p = 0; p < IND_NPAR; p++)
                da[p * na + q] = dv[p * n + off + q];
        }
        if (ind_info_marginal(na, IND_NPAR, da, nb, bs, w, info))
            return ind_fail(e, "star %zu, arm %s: the continuum basis is "
                            "degenerate on the unmasked pixels", i,
                            arms[a].name);
        off += na;
    }
    if (ind_info_invert(IND_NPAR, info, cov))
        return ind_fail(e, "star %zu: information matrix not positive "
                        "definite", i);
    double *o = &c->out[item * (1 + IND_NPAR)];
    o[0] = d.snr;
    for (int p = 0; p < IND_NPAR; p++)
        o[1 + p] = sqrt(cov[p * IND_NPAR + p]);
    return 0;
}

static int read_truth_rows(bound_ctx *c, ind_err *e)
{
    static const char *names[TV_N] = {"TEFF", "LOGG", "FEH", "ALPHAFE",
                                      "VRAD", "VSINI", "SNR"};
    fitsfile *fp = NULL;
    int st = 0;
    long nrow = 0;
    fits_open_table(&fp, c->a->truth, READONLY, &st);
    fits_movnam_hdu(fp, BINARY_TBL, "TRUTH", 0, &st);
    fits_get_num_rows(fp, &nrow, &st);
    c->nstar = st ? 0 : (size_t)nrow;
    c->tv = malloc((c->nstar * TV_N + 1) * sizeof *c->tv);
    double *col = malloc((c->nstar + 1) * sizeof *col);
    if (!st && (!c->tv || !col))
        st = MEMORY_ALLOCATION;
    for (int k = 0; k < TV_N && !st; k++) {
        int cn = 0;
        fits_get_colnum(fp, CASEINSEN, (char *)names[k], &cn, &st);
        fits_read_col(fp, TDOUBLE, cn, 1, 1, (LONGLONG)c->nstar, NULL, col,
                      NULL, &st);
        for (size_t i = 0; i < c->nstar && !st; i++)
            c->tv[i * TV_N + k] = col[i];
    }
    free(col);
    if (fp)
        fits_close_file(fp, &(int){0});
    return st ? ind_fits_fail(e, st, c->a->truth, "reading HDU TRUTH") : 0;
}

/* The seeds and preset the coadd records in its primary header. */
static int open_coadd(bound_ctx *c, ind_err *e)
{
    int st = 0;
    long seed = 0, mseed = 0, ab = 0;
    char preset[FLEN_VALUE] = "", gen[FLEN_VALUE] = "";
    fits_open_file(&c->fp, c->a->coadd, READONLY, &st);
    fits_read_key(c->fp, TSTRING, "GENERATR", gen, NULL, &st);
    fits_read_key(c->fp, TLONG, "INDSEED", &seed, NULL, &st);
    fits_read_key(c->fp, TLONG, "INDMSEED", &mseed, NULL, &st);
    fits_read_key(c->fp, TSTRING, "INDPRSET", preset, NULL, &st);
    fits_read_key(c->fp, TLONG, "INDABLAT", &ab, NULL, &st);
    if (st)
        return ind_fits_fail(e, st, c->a->coadd, "reading the primary "
                             "header's GENERATR, INDSEED, INDMSEED, "
                             "INDPRSET, INDABLAT (a coadd of rvfit-indep "
                             "spectra?)");
    if (strcmp(gen, "rvfit-indep"))
        return ind_fail(e, "%s: GENERATR = '%s', not rvfit-indep",
                        c->a->coadd, gen);
    c->ps = ind_preset_find(preset);
    if (!c->ps)
        return ind_fail(e, "%s: INDPRSET = '%s' is no preset", c->a->coadd,
                        preset);
    c->seed = (uint64_t)seed;
    c->o = c->a->o;
    c->o.ablate = (unsigned)ab;
    if (ind_linelist_build((uint64_t)mseed, &c->ll, e))
        return -1;
    c->have_ll = 1;
    return ind_obsctx_make(&c->c, &c->ll, c->o.vsini_max, e);
}

static int alloc_workers(bound_ctx *c, size_t count, ind_err *e)
{
    int nt = c->a->nthreads;
    size_t n = total_pixels();
    c->work = calloc((size_t)nt, sizeof *c->work);
    c->buf = calloc((size_t)nt, sizeof *c->buf);
    c->out = malloc(count * (1 + IND_NPAR) * sizeof *c->out);
    if (!c->work || !c->buf || !c->out)
        return ind_fail(e, "out of memory");
    for (int t = 0; t < nt; t++) {
        c->buf[t] = malloc((3 + 2 * IND_NPAR + IND_MAXB) * n * sizeof(double));
        if (!c->buf[t] || ind_work_make(&c->work[t], &c->c, e))
            return c->buf[t] ? -1 : ind_fail(e, "out of memory");
    }
    return 0;
}

static void free_ctx(bound_ctx *c)
{
    for (int t = 0; t < c->a->nthreads; t++) {
        if (c->work)
            ind_work_free(&c->work[t]);
        if (c->buf)
            free(c->buf[t]);
    }
    free(c->work);
    free(c->buf);
    free(c->out);
    free(c->tv);
    ind_obsctx_free(&c->c);
    if (c->have_ll)
        ind_linelist_free(&c->ll);
    if (c->fp)
        fits_close_file(c->fp, &(int){0});
    pthread_mutex_destroy(&c->io);
}

static int write_bound(const bound_ctx *c, size_t count, ind_err *e)
{
    char tmp[4200], clobber[4300];
    ind_tmpname(tmp, sizeof tmp, c->a->out, 0);
    snprintf(clobber, sizeof clobber, "!%s", tmp);
    char *tt[2 + IND_NPAR] = {"TARGETID", "SNR"}, *tf[2 + IND_NPAR] = {"K"};
    char *tu[2 + IND_NPAR] = {"", ""};
    for (int k = 1; k < 2 + IND_NPAR; k++)
        tf[k] = "D";
    for (int p = 0; p < IND_NPAR; p++) {
        tt[2 + p] = (char *)PNAME[p];
        tu[2 + p] = (char *)PUNIT[p];
    }
    fitsfile *fp = NULL;
    int st = 0;
    long npoly = c->a->npoly;
    fits_create_file(&fp, clobber, &st);
    fits_create_img(fp, BYTE_IMG, 0, NULL, &st);
    fits_write_key(fp, TSTRING, "GENERATR", "rvfit-indep", NULL, &st);
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)count, 2 + IND_NPAR, tt, tf,
                    tu, "BOUND", &st);
    fits_write_key(fp, TLONG, "NPOLY", &npoly, "continuum terms per arm",
                   &st);
    fits_write_key(fp, TSTRING, "BASIS", c->a->basis ? "legendre" : "gauss",
                   "continuum basis, marginalised", &st);
    fits_write_key(fp, TSTRING, "VSINI", "true", "vsini held at the truth",
                   &st);
    for (size_t i = 0; i < count && !st; i++) {
        LONGLONG row = (LONGLONG)i + 1;
        LONGLONG tid = 1000000 + (LONGLONG)(c->a->first + i);
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, &st);
        for (int k = 0; k < 1 + IND_NPAR; k++)
            fits_write_col(fp, TDOUBLE, 2 + k, row, 1, 1,
                           (void *)&c->out[i * (1 + IND_NPAR) + k], &st);
    }
    fits_close_file(fp, &st);
    if (st) {
        remove(tmp);
        return ind_fits_fail(e, st, c->a->out, "writing the bounds");
    }
    return ind_commit(tmp, c->a->out, e);
}

int ind_bound_write(const ind_bound_args *a, ind_err *e)
{
    if (a->npoly < 1 || a->npoly > IND_MAXB || !(a->step > 0))
        return ind_fail(e, "bound: --npoly must be 1..%d and --step > 0",
                        IND_MAXB);
    bound_ctx c = {.a = a};
    pthread_mutex_init(&c.io, NULL);
    int rc = open_coadd(&c, e);
    if (!rc)
        rc = read_truth_rows(&c, e);
    size_t count = a->count ? a->count : c.nstar - a->first;
    if (!rc && (a->first >= c.nstar || count > c.nstar - a->first))
        rc = ind_fail(e, "bound: stars %zu..%zu asked, %s has %zu", a->first,
                      a->first + count - 1, a->truth, c.nstar);
    if (!rc)
        rc = alloc_workers(&c, count, e);
    if (!rc)
        rc = ind_parallel(count, a->nthreads, star_task, &c, e);
    if (!rc)
        rc = write_bound(&c, count, e);
    free_ctx(&c);
    return rc;
}
