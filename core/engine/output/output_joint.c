/* output_joint.c — the outputs of joint fits (rvfit/output.h, "joint
 * outputs"): RVTAB one row per object, RVEPOCH one row per exposure, and
 * rvmod the models of every exposure.  The files are the same atomic
 * writers as the single outputs (commit, abort and keywords shared). */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_internal.h"
#include "rvfit/files.h"
#include "rvfit/fits.h"

/* RVTAB: the single fit's columns, then the object's. */
static void joint_columns(rvfit_output *o, const rvfit_library *lib,
                          const rvfit_file_info *info)
{
    char form[16];
    out_cols *c = &o->cols;
    out_rvtab_columns(c, lib, info);
    out_col_add(c, "NEPOCH", "J", "", "exposures fitted", OC_NEPOCH, 0);
    out_col_add(c, "VRAD_CHISQ", "D", "", "chi-square of the exposures' "
                "velocities about their weighted mean", OC_VRAD_CHISQ, 0);
    out_col_add(c, "VRAD_PVALUE", "D", "", "P(chi2 >= VRAD_CHISQ) for "
                "NEPOCH-1 dof: constant velocity", OC_VRAD_PVALUE, 0);
    out_col_add(c, "VRAD_SCATTER", "D", "km/s", "standard deviation of "
                "the exposures' velocities", OC_VRAD_SCATTER, 0);
    out_col_add(c, "TARGETID", "K", "", "the object's identifier",
                OC_TARGETID, 0);
    snprintf(form, sizeof form, "%dA", RVFIT_OBJKEY_LEN - 1);
    out_col_add(c, "OBJKEY", form, "", "the key that groups the object's "
                "spectra", OC_OBJKEY, 0);
}

/* RVEPOCH: identifiers, the exposure's velocity and its diagnostics. */
static void epoch_columns(rvfit_output *o, const rvfit_file_info *info,
                          size_t input_len, int sb2)
{
    char form[16], name[72], com[72];
    out_cols *c = &o->ecols;
    c->n = 0;
    out_col_add(c, "TARGETID", "K", "", "the object's identifier",
                OC_TARGETID, 0);
    snprintf(form, sizeof form, "%dA", RVFIT_OBJKEY_LEN - 1);
    out_col_add(c, "OBJKEY", form, "", "the object's key (as RVTAB)",
                OC_OBJKEY, 0);
    out_col_add(c, "EXPID", "K", "", "exposure identifier (-1: a coadd)",
                OC_EXPID, 0);
    out_col_add(c, "MJD", "D", "d", "epoch of the exposure (MJD)", OC_MJD,
                0);
    out_col_add(c, "VRAD", "D", "km/s", "radial velocity of the exposure",
                OC_VRAD, 0);
    out_col_add(c, "VRAD_ERR", "D", "km/s", "its uncertainty", OC_VRAD_ERR,
                0);
    out_col_add(c, "VRAD_SKEW", "D", "", "skewness of its posterior",
                OC_VRAD_SKEW, 0);
    out_col_add(c, "VRAD_KURT", "D", "", "excess kurtosis of its posterior",
                OC_VRAD_KURT, 0);
    for (int a = 0; a < info->narm; a++) {
        snprintf(name, sizeof name, "CHISQ_%s", info->arm[a].name);
        snprintf(com, sizeof com, "chi-square of arm %s", info->arm[a].name);
        out_col_add(c, name, "D", "", com, OC_CHISQ, a);
    }
    for (int a = 0; a < info->narm; a++) {
        snprintf(name, sizeof name, "SN_%s", info->arm[a].name);
        snprintf(com, sizeof com, "median S/N per pixel of arm %s",
                 info->arm[a].name);
        out_col_add(c, name, "D", "", com, OC_SN, a);
    }
    out_nclip_columns(c, info);
    out_col_add(c, "RVS_WARN", "J", "", "warning bits of the exposure",
                OC_WARN, 0);
    int w = input_len < 1 ? 1 : input_len > 4096 ? 4096 : (int)input_len;
    snprintf(form, sizeof form, "%dA", w);
    out_col_add(c, "INPUT", form, "", "input file of the spectrum",
                OC_INPUT, 0);
    out_col_add(c, "ROW", "K", "", "index of the spectrum in that file",
                OC_ROW, 0);
    if (!sb2)
        return;
    out_col_add(c, "SB2_DCHISQ", "D", "", "-2 ln L of one velocity minus "
                "that of two (two-velocity test)", OC_SB2_DCHISQ, 0);
    out_col_add(c, "SB2_VRAD2", "D", "km/s", "the second velocity of the "
                "best two-velocity model", OC_SB2_VRAD2, 0);
    out_col_add(c, "SB2_FRATIO", "D", "", "its light relative to the "
                "first's", OC_SB2_FRATIO, 0);
}

/* Per arm [nexp][npix] wavelengths and models. */
static void make_models(rvfit_output *o, int *st)
{
    for (int a = 0; a < o->narm && *st == 0; a++) {
        char ext[80];
        long shape[2] = {(long)o->arm[a].npix, (long)o->nexp};
        snprintf(ext, sizeof ext, "%s_WAVELENGTH", o->arm[a].name);
        fits_create_img(o->mod, DOUBLE_IMG, 2, shape, st);
        fits_write_key_str(o->mod, "EXTNAME", ext, NULL, st);
        fits_write_key_str(o->mod, "BUNIT", "Angstrom", NULL, st);
        snprintf(ext, sizeof ext, "%s_MODEL", o->arm[a].name);
        fits_create_img(o->mod, FLOAT_IMG, 2, shape, st);
        fits_write_key_str(o->mod, "EXTNAME", ext, NULL, st);
        fits_write_key_str(o->mod, "COMMENT", "best-fit model incl. "
                           "continuum, rows align with RVEPOCH", NULL, st);
    }
}

static int open_fail(rvfit_output *o, int st, const char *path,
                     rvfit_err *err)
{
    rvfit_fits_error(err, st, path, NULL, "writing headers");
    rvfit_output_abort(o);
    return RVFIT_ERR_IO;
}

int rvfit_output_open_joint(rvfit_output **out, const char *tab_path,
                            const char *mod_path, const rvfit_library *lib,
                            int narm, const rvfit_arm_info *arm, size_t nobj,
                            size_t nexp, size_t input_len, int sb2,
                            const rvfit_output_meta *meta, rvfit_err *err)
{
    rvfit_output *o = calloc(1, sizeof *o);
    if (!o)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "output: out of memory");
    rvfit_file_info info = {.narm = narm};
    memcpy(info.arm, arm, (size_t)narm * sizeof *arm);
    o->joint = 1;
    o->nrow = nobj;
    o->nexp = nexp;
    o->narm = narm;
    o->id_table = -1;
    memcpy(o->arm, arm, (size_t)narm * sizeof *arm);
    joint_columns(o, lib, &info);
    epoch_columns(o, &info, input_len, sb2);
    snprintf(o->tab_final, sizeof o->tab_final, "%s", tab_path);
    int rc = rvfit_fits_create(tab_path, o->tab_tmp, sizeof o->tab_tmp,
                               &o->tab, err);
    if (rc) {
        free(o);
        return rc;
    }
    int st = 0;
    out_write_primary(o->tab, meta, nexp, &st);
    fits_write_key_lng(o->tab, "NOBJ", (long long)nobj, "objects fitted",
                       &st);
    out_make_table(o->tab, "RVTAB", nobj, &o->cols, &st);
    out_make_table(o->tab, "RVEPOCH", nexp, &o->ecols, &st);
    if (st)
        return open_fail(o, st, o->tab_final, err);
    if (mod_path) {
        snprintf(o->mod_final, sizeof o->mod_final, "%s", mod_path);
        rc = rvfit_fits_create(mod_path, o->mod_tmp, sizeof o->mod_tmp,
                               &o->mod, err);
        if (rc) {
            rvfit_output_abort(o);
            return rc;
        }
        out_write_primary(o->mod, meta, nexp, &st);
        fits_write_key_lng(o->mod, "NOBJ", (long long)nobj,
                           "objects fitted", &st);
        make_models(o, &st);
        if (st)
            return open_fail(o, st, o->mod_final, err);
    }
    *out = o;
    return RVFIT_OK;
}

/* A string column's n values (each NUL-terminated) into rows r0... */
static void put_strings(fitsfile *f, int col, LONGLONG r0, size_t n,
                        const char *const *v, int *st)
{
    fits_write_col(f, TSTRING, col, r0, 1, (LONGLONG)n, (void *)v, st);
}

/* A numeric column's value (out_value: counts and RVS_WARN too) into *k
 * (integer forms) or *d. */
static void out_number(const out_col *col, const rvfit_result *r, double *d,
                       long long *k)
{
    double v = out_value(col, r);
    if (col->form[0] == 'J' || col->form[0] == 'K')
        *k = (long long)v;
    else
        *d = v;
}

/* One column of RVTAB for the batch's objects. */
static void rvtab_col(rvfit_output *o, int c, LONGLONG r0,
                      const rvfit_joint_rows *r, double *d, long long *k,
                      const char **s, char *l, int *st)
{
    const out_col *col = &o->cols.col[c];
    size_t n = r->nobj;
    for (size_t i = 0; i < n; i++) {
        const rvfit_joint_result *J = &r->jres[i];
        const rvfit_joint_id *id = &r->id[r->obj_off[i]];
        switch (col->kind) {
        case OC_NEPOCH: k[i] = J->nepoch; break;
        case OC_VRAD_CHISQ: d[i] = J->vrad_chisq; break;
        case OC_VRAD_PVALUE: d[i] = J->vrad_pvalue; break;
        case OC_VRAD_SCATTER: d[i] = J->vrad_scatter; break;
        case OC_TARGETID: k[i] = id->targetid; break;
        case OC_OBJKEY: s[i] = id->key; break;
        case OC_SUCCESS: l[i] = J->r.warn == 0; break;
        default: out_number(col, &J->r, &d[i], &k[i]);
        }
    }
    if (col->kind == OC_OBJKEY)
        put_strings(o->tab, c + 1, r0, n, s, st);
    else if (col->kind == OC_SUCCESS)
        fits_write_col(o->tab, TLOGICAL, c + 1, r0, 1, (LONGLONG)n, l, st);
    else if (col->form[0] == 'J' || col->form[0] == 'K')
        fits_write_col(o->tab, TLONGLONG, c + 1, r0, 1, (LONGLONG)n, k, st);
    else
        fits_write_col(o->tab, TDOUBLE, c + 1, r0, 1, (LONGLONG)n, d, st);
}

/* One column of RVEPOCH for the batch's exposures. */
static void epoch_col(rvfit_output *o, int c, LONGLONG r0,
                      const rvfit_joint_rows *r, double *d, long long *k,
                      const char **s, int *st)
{
    const out_col *col = &o->ecols.col[c];
    size_t n = r->b->nspec;
    for (size_t i = 0; i < n; i++) {
        const rvfit_joint_id *id = &r->id[i];
        switch (col->kind) {
        case OC_TARGETID: k[i] = id->targetid; break;
        case OC_OBJKEY: s[i] = id->key; break;
        case OC_EXPID: k[i] = id->expid; break;
        case OC_MJD: d[i] = id->mjd; break;
        case OC_INPUT: s[i] = id->input; break;
        case OC_ROW: k[i] = id->row; break;
        case OC_SB2_DCHISQ: d[i] = r->sb2 ? r->sb2[i].dchisq : NAN; break;
        case OC_SB2_VRAD2: d[i] = r->sb2 ? r->sb2[i].vrad2 : NAN; break;
        case OC_SB2_FRATIO: d[i] = r->sb2 ? r->sb2[i].fratio : NAN; break;
        default: out_number(col, &r->res[i], &d[i], &k[i]);
        }
    }
    if (col->kind == OC_OBJKEY || col->kind == OC_INPUT)
        put_strings(o->tab, c + 1, r0, n, s, st);
    else if (col->form[0] == 'J' || col->form[0] == 'K')
        fits_write_col(o->tab, TLONGLONG, c + 1, r0, 1, (LONGLONG)n, k, st);
    else
        fits_write_col(o->tab, TDOUBLE, c + 1, r0, 1, (LONGLONG)n, d, st);
}

/* Exposure rows' wavelengths and models, each row its own pixels and NaN
 * beyond (the output is as wide as the widest input). */
static void write_models(rvfit_output *o, size_t first,
                         const rvfit_joint_rows *r, int *st)
{
    const rvfit_batch *b = r->b;
    size_t n = b->nspec;
    for (int a = 0; a < o->narm && *st == 0; a++) {
        const rvfit_arm_batch *A = &b->arm[a];
        size_t np = o->arm[a].npix, bn = A->npix;
        float *m = malloc((n ? n : 1) * np * sizeof *m);
        double *w = malloc((n ? n : 1) * np * sizeof *w);
        if (!m || !w) {
            free(m), free(w);
            *st = MEMORY_ALLOCATION;
            return;
        }
        for (size_t s = 0; s < n; s++) {
            size_t own = rvfit_arm_npix(A, s);
            own = own < np ? own : np;
            const double *wv = A->wave + (A->wave_per_spec ? s * bn : 0);
            for (size_t i = 0; i < np; i++) {
                m[s * np + i] = i < own ? r->models[a][s * bn + i] : NAN;
                w[s * np + i] = i < own ? wv[i] : NAN;
            }
        }
        char ext[80];
        long fp[2] = {1, (long)first + 1};
        snprintf(ext, sizeof ext, "%s_WAVELENGTH", o->arm[a].name);
        fits_movnam_hdu(o->mod, IMAGE_HDU, ext, 0, st);
        fits_write_pixnull(o->mod, TDOUBLE, fp, (LONGLONG)(n * np), w, NULL,
                           st);
        snprintf(ext, sizeof ext, "%s_MODEL", o->arm[a].name);
        fits_movnam_hdu(o->mod, IMAGE_HDU, ext, 0, st);
        fits_write_pixnull(o->mod, TFLOAT, fp, (LONGLONG)(n * np), m, NULL,
                           st);
        free(m), free(w);
    }
}

int rvfit_output_write_joint(rvfit_output *o, size_t first_obj,
                             size_t first_exp, const rvfit_joint_rows *r,
                             rvfit_err *err)
{
    size_t ne = r->b->nspec, mx = r->nobj > ne ? r->nobj : ne;
    if (!o->joint || first_obj + r->nobj > o->nrow ||
        first_exp + ne > o->nexp || r->b->narm != o->narm)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL,
                             "%s: objects %zu.. and exposures %zu.. beyond "
                             "the %zu and %zu announced", o->tab_final,
                             first_obj, first_exp, o->nrow, o->nexp);
    double *d = malloc((mx ? mx : 1) * sizeof *d);
    long long *k = malloc((mx ? mx : 1) * sizeof *k);
    const char **s = malloc((mx ? mx : 1) * sizeof *s);
    char *l = malloc(mx ? mx : 1);
    int st = d && k && s && l ? 0 : MEMORY_ALLOCATION;
    fits_movnam_hdu(o->tab, BINARY_TBL, "RVTAB", 0, &st);
    for (int c = 0; c < o->cols.n && !st; c++)
        rvtab_col(o, c, (LONGLONG)first_obj + 1, r, d, k, s, l, &st);
    fits_movnam_hdu(o->tab, BINARY_TBL, "RVEPOCH", 0, &st);
    for (int c = 0; c < o->ecols.n && !st; c++)
        epoch_col(o, c, (LONGLONG)first_exp + 1, r, d, k, s, &st);
    free(d), free(k), free(s), free(l);
    if (st) {
        rvfit_fits_error(err, st, o->tab_final, NULL, "writing rows");
        return RVFIT_ERR_IO;
    }
    if (o->mod && r->models) {
        write_models(o, first_exp, r, &st);
        if (st) {
            rvfit_fits_error(err, st, o->mod_final, NULL, "writing models");
            return RVFIT_ERR_IO;
        }
    }
    return RVFIT_OK;
}
