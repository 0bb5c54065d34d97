/* output_cols.c — the RVTAB column set and pass-through table columns:
 * names, TFORMs, units and descriptions in one place. */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_internal.h"

static void add(out_cols *c, const char *name, const char *form,
                const char *unit, const char *comment, int kind, int index)
{
    if (c->n >= OUT_MAX_COLS)
        return;
    out_col *k = &c->col[c->n++];
    /* Truncation is intended (FITS cards bound these anyway); the
     * precision says so to the compiler. */
#define OC_COPY(dst, src) snprintf(dst, sizeof dst, "%.*s", (int)sizeof dst - 1, src)
    OC_COPY(k->name, name);
    OC_COPY(k->form, form);
    /* "dex" is no FITS unit (astropy warns at every such column): the
     * column is dimensionless for FITS and says dex in its description,
     * where rvfit's Python reader finds it (docs/output-format.md). */
    int dex = !strcmp(unit, "dex");
    OC_COPY(k->qty, unit);
    OC_COPY(k->unit, dex ? "" : unit);
    if (dex)
        snprintf(k->comment, sizeof k->comment, "%.*s [dex]",
                 (int)sizeof k->comment - 7, comment);
    else
        OC_COPY(k->comment, comment);
#undef OC_COPY
    k->kind = kind;
    k->index = index;
}

void out_col_add(out_cols *c, const char *name, const char *form,
                 const char *unit, const char *comment, int kind, int index)
{
    add(c, name, form, unit, comment, kind, index);
}

void out_nclip_columns(out_cols *c, const rvfit_file_info *info)
{
    char name[72], com[72];
    for (int a = 0; a < info->narm; a++) {
        snprintf(name, sizeof name, "NCLIP_%s", info->arm[a].name);
        snprintf(com, sizeof com, "pixels of arm %s rejected above the model",
                 info->arm[a].name);
        add(c, name, "J", "", com, OC_NCLIP, a);
    }
}

void out_rvtab_columns(out_cols *c, const rvfit_library *lib,
                       const rvfit_file_info *info)
{
    char name[72], com[72]; /* out_col's sizes */
    c->n = 0;
    add(c, "VRAD", "D", "km/s", "radial velocity (barycentric)", OC_VRAD, 0);
    add(c, "VRAD_ERR", "D", "km/s", "radial velocity uncertainty",
        OC_VRAD_ERR, 0);
    add(c, "VRAD_SKEW", "D", "", "skewness of the velocity posterior",
        OC_VRAD_SKEW, 0);
    add(c, "VRAD_KURT", "D", "", "excess kurtosis of the velocity posterior",
        OC_VRAD_KURT, 0);
    add(c, "VSINI", "D", "km/s", "projected rotation velocity", OC_VSINI, 0);
    for (int i = 0; i < lib->nparam; i++) {
        const rvfit_axis *a = &lib->axis[i];
        snprintf(com, sizeof com, "best-fit %s", a->name);
        add(c, a->name, "D", a->unit, com, OC_PARAM, i);
        snprintf(name, sizeof name, "%s_ERR", a->name);
        snprintf(com, sizeof com, "uncertainty of %s (statistical + "
                 "interpolation)", a->name);
        add(c, name, "D", a->unit, com, OC_PARAM_ERR, i);
        snprintf(name, sizeof name, "%s_ERR_INTERP", a->name);
        snprintf(com, sizeof com, "template-interpolation part of %s_ERR",
                 a->name);
        add(c, name, "D", a->unit, com, OC_PARAM_ERR_INTERP, i);
    }
    add(c, "CHISQ_TOT", "D", "", "chi-square of the best fit, all arms",
        OC_CHISQ_TOT, 0);
    add(c, "CHISQ_C_TOT", "D", "", "chi-square of a continuum-only model",
        OC_CHISQ_C_TOT, 0);
    add(c, "CHISQ_RED", "D", "",
        "CHISQ_TOT / degrees of freedom (docs/output-format.md)",
        OC_CHISQ_RED, 0);
    add(c, "NPIX_TOT", "J", "", "pixels used in the fit", OC_NPIX_TOT, 0);
    for (int a = 0; a < info->narm; a++) {
        snprintf(name, sizeof name, "CHISQ_%s", info->arm[a].name);
        snprintf(com, sizeof com, "chi-square of arm %s", info->arm[a].name);
        add(c, name, "D", "", com, OC_CHISQ, a);
    }
    for (int a = 0; a < info->narm; a++) {
        snprintf(name, sizeof name, "CHISQ_C_%s", info->arm[a].name);
        snprintf(com, sizeof com, "continuum-only chi-square of arm %s",
                 info->arm[a].name);
        add(c, name, "D", "", com, OC_CHISQ_C, a);
    }
    for (int a = 0; a < info->narm; a++) {
        snprintf(name, sizeof name, "SN_%s", info->arm[a].name);
        snprintf(com, sizeof com, "median S/N per pixel of arm %s",
                 info->arm[a].name);
        add(c, name, "D", "", com, OC_SN, a);
    }
    out_nclip_columns(c, info);
    add(c, "RVS_WARN", "J", "", "warning bits (docs/output-format.md)",
        OC_WARN, 0);
    add(c, "SUCCESS", "L", "", "RVS_WARN == 0", OC_SUCCESS, 0);
}

/* The value of column c for one result, as a double (integers and the
 * SUCCESS logical exactly). */
double out_value(const out_col *c, const rvfit_result *r)
{
    switch (c->kind) {
    case OC_VRAD: return r->vrad;
    case OC_VRAD_ERR: return r->vrad_err;
    case OC_VRAD_SKEW: return r->vrad_skew;
    case OC_VRAD_KURT: return r->vrad_kurt;
    case OC_VSINI: return r->vsini;
    case OC_PARAM: return r->param[c->index];
    case OC_PARAM_ERR: return r->param_err[c->index];
    case OC_PARAM_ERR_INTERP: return r->param_err_interp[c->index];
    case OC_CHISQ_TOT: return r->chisq_tot;
    case OC_CHISQ_C_TOT: return r->chisq_c_tot;
    case OC_CHISQ_RED: return r->chisq_red;
    case OC_CHISQ: return r->chisq[c->index];
    case OC_CHISQ_C: return r->chisq_c[c->index];
    case OC_SN: return r->sn[c->index];
    case OC_NPIX_TOT: return (double)r->npix_tot;
    case OC_NCLIP: return (double)r->nclip[c->index];
    case OC_WARN: return (double)r->warn;
    case OC_SUCCESS: return r->warn == 0;
    default: return NAN;
    }
}

const char *out_tform(const rvfit_column *col, char *buf, size_t n)
{
    static const char letters[] = {0, 'B', 'I', 'J', 'K', 'E', 'D', 'A'};
    int t = col->type >= 1 && col->type <= 7 ? col->type : 7;
    snprintf(buf, n, "%ld%c", col->repeat > 0 ? col->repeat : 1, letters[t]);
    return buf;
}

int out_fits_type(int type)
{
    switch (type) {
    case RVFIT_COL_U8: return TBYTE;
    case RVFIT_COL_I16: return TSHORT;
    case RVFIT_COL_I32: return TINT;
    case RVFIT_COL_I64: return TLONGLONG;
    case RVFIT_COL_F32: return TFLOAT;
    case RVFIT_COL_F64: return TDOUBLE;
    default: return TSTRING;
    }
}

rvfit_table_schema *out_schemas_copy(const rvfit_table_schema *s, int n)
{
    rvfit_table_schema *c = calloc((size_t)(n > 0 ? n : 1), sizeof *c);
    for (int t = 0; c && t < n; t++) {
        c[t] = s[t];
        rvfit_column *cols = malloc((size_t)(s[t].ncol > 0 ? s[t].ncol : 1) *
                                    sizeof *cols);
        if (!cols) {
            out_schemas_free(c, t);
            return NULL;
        }
        if (s[t].ncol > 0)
            memcpy(cols, s[t].cols, (size_t)s[t].ncol * sizeof *cols);
        c[t].cols = cols;
    }
    return c;
}

void out_schemas_free(rvfit_table_schema *s, int n)
{
    for (int t = 0; s && t < n; t++)
        free((void *)s[t].cols);
    free(s);
}
