/* sdss_tables.c — identifiers (primary header, SPALL/SPECOBJ, file name)
 * and the pass-through tables: RVTAB ids and a SPALL subset.  Values are
 * cached at open, so read_rows touches no file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdss_internal.h"

enum { SDSS_T_RVTAB = 0, SDSS_T_SPALL = 1 };

/* The SDSS pipeline's redshift and ELODIE template fit: what a user
 * compares rvfit with.  A column is passed through when at least one
 * input file has it; files without it give NaN, -1 or "". */
static const sdss_cand sdss_cand_tab[SDSS_NCAND] = {
    {"Z", RVFIT_COL_F32},           {"Z_ERR", RVFIT_COL_F32},
    {"ZWARNING", RVFIT_COL_I32},    {"CLASS", RVFIT_COL_STR},
    {"SUBCLASS", RVFIT_COL_STR},    {"SN_MEDIAN_ALL", RVFIT_COL_F32},
    {"ELODIE_FILENAME", RVFIT_COL_STR}, {"ELODIE_OBJECT", RVFIT_COL_STR},
    {"ELODIE_SPTYPE", RVFIT_COL_STR}, {"ELODIE_BV", RVFIT_COL_F32},
    {"ELODIE_TEFF", RVFIT_COL_F32}, {"ELODIE_LOGG", RVFIT_COL_F32},
    {"ELODIE_FEH", RVFIT_COL_F32},  {"ELODIE_Z", RVFIT_COL_F32},
    {"ELODIE_Z_ERR", RVFIT_COL_F32}, {"ELODIE_Z_MODELERR", RVFIT_COL_F32},
    {"ELODIE_RCHI2", RVFIT_COL_F32}, {"ELODIE_DOF", RVFIT_COL_I32},
};
#define SDSS_CAND_SNR 5 /* SN_MEDIAN_ALL */

const sdss_cand *sdss_cands(void)
{
    return sdss_cand_tab;
}

/* First element of column `name` in row 1 as double; NaN when absent. */
static double sdss_cell(fitsfile *fp, const char *name)
{
    int cn = rvfit_fits_colnum(fp, name), st = 0, any = 0;
    double v = NAN, nul = NAN;
    if (!cn)
        return NAN;
    if (fits_read_col(fp, TDOUBLE, cn, 1, 1, 1, &nul, &v, &any, &st)) {
        fits_clear_errmsg();
        v = NAN;
    }
    return v;
}

/* String column `name` of row 1 into out[SDSS_STR_MAX]; width or 0. */
static long sdss_cell_str(fitsfile *fp, const char *name, char *out)
{
    int cn = rvfit_fits_colnum(fp, name), st = 0, tc = 0;
    long rep = 0, w = 0;
    out[0] = '\0';
    if (!cn || fits_get_coltype(fp, cn, &tc, &rep, &w, &st) || tc != TSTRING) {
        fits_clear_errmsg();
        return 0;
    }
    char buf[1024] = "", *p = buf;
    if (rep >= (long)sizeof buf)
        return 0; /* no SPALL string is this long; not passed through */
    if (fits_read_col(fp, TSTRING, cn, 1, 1, 1, NULL, &p, NULL, &st)) {
        fits_clear_errmsg();
        return 0;
    }
    size_t len = strnlen(buf, SDSS_STR_MAX - 1); /* longer: truncated */
    memcpy(out, buf, len);
    out[len] = '\0';
    return rep < SDSS_STR_MAX - 1 ? rep : SDSS_STR_MAX - 1;
}

/* PLATE, MJD, FIBERID from spec-PLATE-MJD-FIBER.fits; 0 when it fits. */
static int sdss_ids_from_name(const char *path, double id[3])
{
    const char *base = strrchr(path, '/');
    long p, m, f;
    base = base ? base + 1 : path;
    if (sscanf(base, "spec-%ld-%ld-%ld", &p, &m, &f) != 3)
        return -1;
    id[0] = (double)p, id[1] = (double)m, id[2] = (double)f;
    return 0;
}

static void sdss_read_spall(sdss_handle *h, size_t k, fitsfile *fp,
                            double id[5])
{
    static const char *const idcol[5] = {"PLATE", "MJD", "FIBERID",
                                         "PLUG_RA", "PLUG_DEC"};
    for (int i = 0; i < 5; i++) {
        double v = sdss_cell(fp, idcol[i]);
        if (isfinite(v))
            id[i] = v;
    }
    for (int j = 0; j < SDSS_NCAND; j++) {
        const sdss_cand *c = &sdss_cand_tab[j];
        if (c->type == RVFIT_COL_STR) {
            char *dst = h->str + (k * SDSS_NCAND + (size_t)j) * SDSS_STR_MAX;
            long w = sdss_cell_str(fp, c->name, dst);
            if (w > h->width[j])
                h->width[j] = w;
        } else {
            double v = sdss_cell(fp, c->name);
            h->num[k * SDSS_NCAND + (size_t)j] = v;
            if (rvfit_fits_colnum(fp, c->name))
                h->width[j] = 1;
        }
    }
}

int sdss_read_meta(sdss_handle *h, size_t k, fitsfile *fp, rvfit_err *err)
{
    sdss_spec *S = &h->spec[k];
    int st = 0, type = 0;
    for (int j = 0; j < SDSS_NCAND; j++)
        h->num[k * SDSS_NCAND + (size_t)j] = NAN;
    if (fits_movabs_hdu(fp, 1, &type, &st))
        return rvfit_fits_error(err, st, S->path, "PRIMARY", "moving to HDU");
    S->coeff0 = rvfit_fits_key_double(fp, "COEFF0");
    S->coeff1 = rvfit_fits_key_double(fp, "COEFF1");
    double id[5] = {rvfit_fits_key_double(fp, "PLATEID"),
                    rvfit_fits_key_double(fp, "MJD"),
                    rvfit_fits_key_double(fp, "FIBERID"),
                    rvfit_fits_key_double(fp, "PLUG_RA"),
                    rvfit_fits_key_double(fp, "PLUG_DEC")};
    if (sdss_goto_hdu(fp, "SPALL") == 0 || sdss_goto_hdu(fp, "SPECOBJ") == 0)
        sdss_read_spall(h, k, fp, id);
    double fn[3];
    if (!(isfinite(id[0]) && isfinite(id[1]) && isfinite(id[2])) &&
        sdss_ids_from_name(S->path, fn) == 0)
        memcpy(id, fn, sizeof fn);
    if (!(isfinite(id[0]) && isfinite(id[1]) && isfinite(id[2])) ||
        id[0] < 0 || id[0] > 9e6 || id[1] < 0 || id[1] >= 1e5 || id[2] < 0 ||
        id[2] >= 1e4)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT,
                             "%s: no usable PLATE/MJD/FIBERID (HDU SPALL or "
                             "SPECOBJ, primary PLATEID/MJD/FIBERID, or a "
                             "spec-PLATE-MJD-FIBER name)", S->path);
    S->plate = (int32_t)id[0];
    S->mjd = (int32_t)id[1];
    S->fiber = (int32_t)id[2];
    S->ra = id[3];
    S->dec = id[4];
    S->targetid = SDSS_TARGETID(S->plate, S->mjd, S->fiber);
    S->snr = h->num[k * SDSS_NCAND + SDSS_CAND_SNR];
    return RVFIT_OK;
}

void sdss_tables_init(sdss_handle *h)
{
    rvfit_column *r = h->rvtab_cols;
    rvfit_column_set(&r[0], "TARGETID", RVFIT_COL_I64, 1, "",
                     "PLATE*10^9 + MJD*10^4 + FIBERID");
    rvfit_column_set(&r[1], "PLATE", RVFIT_COL_I32, 1, "", "");
    rvfit_column_set(&r[2], "MJD", RVFIT_COL_I32, 1, "d", "");
    rvfit_column_set(&r[3], "FIBERID", RVFIT_COL_I32, 1, "", "");
    rvfit_column_set(&r[4], "TARGET_RA", RVFIT_COL_F64, 1, "deg",
                     "PLUG_RA");
    rvfit_column_set(&r[5], "TARGET_DEC", RVFIT_COL_F64, 1, "deg",
                     "PLUG_DEC");
    int n = 0;
    for (int j = 0; j < SDSS_NCAND; j++) {
        if (h->width[j] <= 0)
            continue;
        const sdss_cand *c = &sdss_cand_tab[j];
        rvfit_column_set(&h->spall_cols[n], c->name, c->type,
                         c->type == RVFIT_COL_STR ? h->width[j] : 1, "",
                         "");
        h->spall_src[n++] = j;
    }
    snprintf(h->schema[0].extname, RVFIT_NAME_LEN, "RVTAB");
    h->schema[0].ncol = 6;
    h->schema[0].cols = h->rvtab_cols;
    snprintf(h->schema[1].extname, RVFIT_NAME_LEN, "SPALL");
    h->schema[1].ncol = n;
    h->schema[1].cols = h->spall_cols;
}

static void sdss_rvtab_row(const sdss_spec *S, void **data, size_t i)
{
    ((int64_t *)data[0])[i] = S->targetid;
    ((int32_t *)data[1])[i] = S->plate;
    ((int32_t *)data[2])[i] = S->mjd;
    ((int32_t *)data[3])[i] = S->fiber;
    ((double *)data[4])[i] = S->ra;
    ((double *)data[5])[i] = S->dec;
}

static void sdss_spall_row(const sdss_handle *h, size_t k, void **data,
                           size_t i)
{
    for (int c = 0; c < h->schema[1].ncol; c++) {
        int j = h->spall_src[c];
        double v = h->num[k * SDSS_NCAND + (size_t)j];
        switch (h->spall_cols[c].type) {
        case RVFIT_COL_F32: ((float *)data[c])[i] = (float)v; break;
        case RVFIT_COL_I32:
            ((int32_t *)data[c])[i] = isfinite(v) ? (int32_t)v : -1;
            break;
        default: {
            size_t w = (size_t)h->spall_cols[c].repeat;
            char *dst = (char *)data[c] + i * w;
            memset(dst, 0, w);
            memcpy(dst, h->str + (k * SDSS_NCAND + (size_t)j) * SDSS_STR_MAX,
                   strnlen(h->str + (k * SDSS_NCAND + (size_t)j) *
                                        SDSS_STR_MAX, w));
        }
        }
    }
}

int sdss_read_rows(void *handle, int t, size_t first, size_t count,
                   rvfit_table_rows *rows, rvfit_err *err)
{
    sdss_handle *h = handle;
    int rc = rvfit_rows_check(h->path, t, SDSS_NTABLE, first, count,
                              h->nsel, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < count; i++) {
        size_t k = h->rows[first + i];
        if (t == SDSS_T_RVTAB)
            sdss_rvtab_row(&h->spec[k], rows->data, i);
        else
            sdss_spall_row(h, k, rows->data, i);
    }
    rows->nrow = count;
    return RVFIT_OK;
}
