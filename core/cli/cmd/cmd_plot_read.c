/* cmd_plot_read.c — reading a fitted file for `rvfit plot` (cmd_plot_read.h):
 * the RVTAB HDU of rvtab_<stem>.fits into rvfit_result rows (the columns
 * of docs/output-format.md; the parameter axes are the column triples
 * NAME, NAME_ERR, NAME_ERR_INTERP, the arms the SN_<ARM> columns), and
 * the rvmod_<stem>.fits beside it for the models and CHISQ_V. */
#include <fitsio.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "cmd_plot_read.h"
#include "rvfit/fits.h"

static int fail(rvfit_err *err, int st, const char *path, const char *hdu,
                const char *what)
{
    rvfit_fits_error(err, st, path, hdu, what);
    return RVFIT_ERR_IO;
}

/* Column `name` (n rows) as doubles into out (stride doubles apart); NaN
 * for a null or a missing column when optional. */
static int col_d(fitsfile *f, const char *name, size_t n, double *out,
                 size_t stride, int optional, int *st)
{
    int c = rvfit_fits_colnum(f, name);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return *st = MEMORY_ALLOCATION;
    double nan = NAN;
    if (!c && !optional) {
        free(v);
        ffpmsg("a column of RVTAB is missing");
        return *st = COL_NOT_FOUND;
    }
    if (c)
        fits_read_col(f, TDOUBLE, c, 1, 1, (LONGLONG)n, &nan, v, NULL, st);
    for (size_t i = 0; i < n && !*st; i++)
        out[i * stride] = c ? v[i] : NAN;
    free(v);
    return *st;
}

/* Each row's field at offset off (a double) of res from column name. */
#define COL_RES(f, name, field, opt, st)                                   \
    col_d(f, name, pf->nrow,                                             \
          (double *)((char *)pf->res + offsetof(rvfit_result, field)),   \
          sizeof(rvfit_result) / sizeof(double), opt, st)

/* The parameter axes (NAME followed by NAME_ERR and NAME_ERR_INTERP) and
 * the arms (SN_<ARM>), with the axes' units (TUNITn; "dex" where the
 * description ends with "[dex]"). */
static void names(pl_file *pf, fitsfile *f, int ncol, int *st)
{
    rvfit_library *lib = pf->lib;
    for (int c = 1; c <= ncol && !*st; c++) {
        char key[16], name[FLEN_VALUE] = "", next[FLEN_VALUE] = "";
        snprintf(key, sizeof key, "TTYPE%d", c);
        fits_read_key(f, TSTRING, key, name, NULL, st);
        if (!strncmp(name, "SN_", 3) && pf->narm < RVFIT_MAX_ARMS) {
            snprintf(pf->arm[pf->narm++], 16, "%.15s", name + 3);
            continue;
        }
        snprintf(key, sizeof key, "TTYPE%d", c + 1);
        int s2 = 0;
        if (c == ncol || fits_read_key(f, TSTRING, key, next, NULL, &s2))
            continue;
        char want[FLEN_VALUE + 8];
        snprintf(want, sizeof want, "%s_ERR", name);
        if (strcmp(next, want) || strcmp(name, "VRAD") == 0 ||
            lib->nparam >= RVFIT_MAX_PARAMS)
            continue;
        rvfit_axis *a = &lib->axis[lib->nparam++];
        snprintf(a->name, sizeof a->name, "%.15s", name);
        char unit[FLEN_VALUE] = "", com[FLEN_VALUE] = "";
        snprintf(key, sizeof key, "TUNIT%d", c);
        s2 = 0;
        fits_read_key(f, TSTRING, key, unit, NULL, &s2);
        snprintf(key, sizeof key, "TCOMM%d", c);
        s2 = 0;
        fits_read_key(f, TSTRING, key, com, NULL, &s2);
        size_t lc = strlen(com);
        if (!unit[0] && lc >= 5 && !strcmp(com + lc - 5, "[dex]"))
            snprintf(unit, sizeof unit, "dex");
        snprintf(a->unit, sizeof a->unit, "%.15s", unit);
    }
    fits_clear_errmsg();
}

/* Integer columns: RVS_WARN, NPIX_TOT, TARGETID (optional). */
static void ints(pl_file *pf, fitsfile *f, int *st)
{
    size_t n = pf->nrow;
    long long *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        *st = MEMORY_ALLOCATION;
        return;
    }
    const char *cols[] = {"RVS_WARN", "NPIX_TOT", "TARGETID"};
    for (int k = 0; k < 3 && !*st; k++) {
        int c = rvfit_fits_colnum(f, cols[k]);
        if (!c && k < 2) {
            ffpmsg("a column of RVTAB is missing");
            *st = COL_NOT_FOUND;
        }
        if (!c || *st)
            continue;
        fits_read_col(f, TLONGLONG, c, 1, 1, (LONGLONG)n, NULL, v, NULL,
                      st);
        if (k == 2 && !*st && !(pf->tid = malloc(n * sizeof *pf->tid)))
            *st = MEMORY_ALLOCATION;
        for (size_t i = 0; i < n && !*st; i++) {
            if (k == 0)
                pf->res[i].warn = (uint32_t)v[i];
            else if (k == 1)
                pf->res[i].npix_tot = (long)v[i];
            else
                pf->tid[i] = (int64_t)v[i];
        }
    }
    free(v);
}

static void read_rvtab(pl_file *pf, fitsfile *f, int *st)
{
    int ncol = 0;
    fits_get_num_cols(f, &ncol, st);
    names(pf, f, ncol, st);
    COL_RES(f, "VRAD", vrad, 0, st);
    COL_RES(f, "VRAD_ERR", vrad_err, 0, st);
    COL_RES(f, "VSINI", vsini, 1, st);
    COL_RES(f, "CHISQ_RED", chisq_red, 1, st);
    COL_RES(f, "CHISQ_TOT", chisq_tot, 1, st);
    for (int p = 0; p < pf->lib->nparam && !*st; p++) {
        char name[40];
        size_t s = sizeof(rvfit_result) / sizeof(double);
        double *par = (double *)((char *)pf->res +
                                 offsetof(rvfit_result, param)) + p;
        double *perr = (double *)((char *)pf->res +
                                  offsetof(rvfit_result, param_err)) + p;
        col_d(f, pf->lib->axis[p].name, pf->nrow, par, s, 0, st);
        snprintf(name, sizeof name, "%s_ERR", pf->lib->axis[p].name);
        col_d(f, name, pf->nrow, perr, s, 0, st);
    }
    for (int a = 0; a < pf->narm && !*st; a++) {
        char name[40];
        size_t s = sizeof(rvfit_result) / sizeof(double);
        snprintf(name, sizeof name, "SN_%s", pf->arm[a]);
        col_d(f, name, pf->nrow, (double *)((char *)pf->res +
              offsetof(rvfit_result, sn)) + a, s, 1, st);
        snprintf(name, sizeof name, "CHISQ_%s", pf->arm[a]);
        col_d(f, name, pf->nrow, (double *)((char *)pf->res +
              offsetof(rvfit_result, chisq)) + a, s, 1, st);
    }
    ints(pf, f, st);
}

/* HDU CHISQ_V of the rvmod, when there: each row's final scan. */
static int read_scans(pl_file *pf, rvfit_err *err)
{
    fitsfile *m = pf->mod;
    int st = 0;
    if (fits_movnam_hdu(m, BINARY_TBL, "CHISQ_V", 0, &st)) {
        fits_clear_errmsg();
        return RVFIT_OK;
    }
    size_t n = pf->nrow, k = RVFIT_VSCAN_MAX;
    long nr = 0;
    fits_get_num_rows(m, &nr, &st);
    double *v = malloc((n ? n : 1) * k * sizeof *v);
    double *q = malloc((n ? n : 1) * k * sizeof *q);
    int *nv = malloc((n ? n : 1) * sizeof *nv);
    if (!v || !q || !nv)
        st = MEMORY_ALLOCATION;
    else if (!st && (size_t)nr != n)
        st = BAD_ROW_NUM;
    int cv = rvfit_fits_colnum(m, "V"), cq = rvfit_fits_colnum(m, "M2LNL"),
        cn = rvfit_fits_colnum(m, "NV");
    if (!st && (!cv || !cq || !cn))
        st = COL_NOT_FOUND;
    double nan = NAN;
    fits_read_col(m, TDOUBLE, cv, 1, 1, (LONGLONG)(n * k), &nan, v, NULL,
                  &st);
    fits_read_col(m, TDOUBLE, cq, 1, 1, (LONGLONG)(n * k), &nan, q, NULL,
                  &st);
    fits_read_col(m, TINT, cn, 1, 1, (LONGLONG)n, NULL, nv, NULL, &st);
    for (size_t i = 0; i < n && !st; i++) {
        rvfit_result *r = &pf->res[i];
        r->vscan_n = nv[i] >= 0 && nv[i] <= (int)k ? nv[i] : 0;
        memcpy(r->vscan_v, v + i * k, k * sizeof *v);
        memcpy(r->vscan_m2lnl, q + i * k, k * sizeof *q);
    }
    free(v), free(q), free(nv);
    pf->has_scan = !st;
    return st ? fail(err, st, pf->rvmod, "CHISQ_V", "reading the scans")
              : RVFIT_OK;
}

/* The rvmod beside rvtab `path`: DIR/rvtab_S.fits -> DIR/rvmod_S.fits. */
static int sibling(pl_file *pf, const char *path, rvfit_err *err)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t lb = strlen(base);
    if (strncmp(base, "rvtab_", 6) || lb < 12 ||
        strcmp(base + lb - 5, ".fits"))
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "%s: not an rvtab file "
                             "(rvtab_NAME.fits, as `rvfit fit` names them)",
                             path);
    snprintf(pf->stem, sizeof pf->stem, "%.*s", (int)(lb - 11), base + 6);
    snprintf(pf->rvmod, sizeof pf->rvmod, "%.*srvmod_%s",
             (int)(base - path), path, base + 6);
    return RVFIT_OK;
}

static void header(pl_file *pf, fitsfile *f, int *st)
{
    char *in = NULL;
    int s2 = 0;
    if (!fits_read_key_longstr(f, "INPUT", &in, NULL, &s2) && in)
        snprintf(pf->input, sizeof pf->input, "%s", in);
    if (in)
        fits_free_memory(in, &s2);
    s2 = 0;
    fits_read_key(f, TSTRING, "INSTRUM", pf->instrument, NULL, &s2);
    fits_clear_errmsg();
    (void)st;
}

int pl_open(pl_file *pf, const char *path, rvfit_err *err)
{
    memset(pf, 0, sizeof *pf);
    snprintf(pf->rvtab, sizeof pf->rvtab, "%s", path);
    int rc = sibling(pf, path, err);
    if (rc)
        return rc;
    fitsfile *f = NULL;
    if ((rc = rvfit_fits_open_reader(path, (void **)&f, err)))
        return rc;
    int st = 0;
    long nr = 0;
    header(pf, f, &st);
    fits_movnam_hdu(f, BINARY_TBL, "RVTAB", 0, &st);
    fits_get_num_rows(f, &nr, &st);
    pf->nrow = nr > 0 ? (size_t)nr : 0;
    pf->res = calloc(pf->nrow ? pf->nrow : 1, sizeof *pf->res);
    pf->lib = calloc(1, sizeof *pf->lib);
    if (!pf->res || !pf->lib)
        st = st ? st : MEMORY_ALLOCATION;
    if (!st)
        read_rvtab(pf, f, &st);
    if (st)
        rc = fail(err, st, path, "RVTAB", "reading");
    int s2 = 0;
    fits_close_file(f, &s2);
    if (!rc)
        rc = rvfit_fits_open_reader(pf->rvmod, &pf->mod, err);
    if (!rc)
        rc = read_scans(pf, err);
    if (rc)
        pl_close(pf);
    return rc;
}

int pl_model(pl_file *pf, const char *arm, size_t row, float *out,
             size_t npix, rvfit_err *err)
{
    char ext[64];
    snprintf(ext, sizeof ext, "%s_MODEL", arm);
    int st = 0, naxis = 0;
    long ax[2] = {0, 0};
    float nan = NAN;
    fits_movnam_hdu(pf->mod, IMAGE_HDU, ext, 0, &st);
    fits_get_img_dim(pf->mod, &naxis, &st);
    fits_get_img_size(pf->mod, 2, ax, &st);
    if (!st && (naxis != 2 || (size_t)ax[0] != npix ||
                (size_t)ax[1] != pf->nrow))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: HDU %s is %ld x "
                             "%ld, the input's arm has %zu pixels and the "
                             "rvtab %zu rows", pf->rvmod, ext, ax[0], ax[1],
                             npix, pf->nrow);
    long fp[2] = {1, (long)row + 1};
    fits_read_pix(pf->mod, TFLOAT, fp, (LONGLONG)npix, &nan, out, NULL,
                  &st);
    return st ? fail(err, st, pf->rvmod, ext, "reading a model") : RVFIT_OK;
}

void pl_close(pl_file *pf)
{
    int st = 0;
    if (pf->mod)
        fits_close_file(pf->mod, &st);
    free(pf->tid);
    free(pf->res);
    free(pf->lib);
    memset(pf, 0, sizeof *pf);
}
