/* output.c — streamed, atomic writers of rvtab_*.fits and rvmod_*.fits. */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output_internal.h"
#include "rvfit/files.h"
#include "rvfit/fits.h"

static int fits_fail(int status, rvfit_err *err, const char *path,
                     const char *what)
{
    rvfit_fits_error(err, status, path, NULL, what);
    return RVFIT_ERR_IO;
}

void out_write_primary(fitsfile *f, const rvfit_output_meta *m, size_t nrow,
                       int *st)
{
    char date[32];
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tmv);
    fits_create_img(f, BYTE_IMG, 0, NULL, st);
    fits_write_key_str(f, "RVFITVER", RVFIT_VERSION, "rvfit version", st);
    fits_write_key_str(f, "DATE", date, "UTC time of writing", st);
    long long nr = (long long)nrow;
    fits_write_key_lng(f, "NSPEC", nr, "spectra fitted", st);
#define KEY(k, v, c) \
    if (v) fits_write_key_longstr(f, k, v, c, st)
    KEY("INPUT", m->input, "input file");
    KEY("BACKEND", m->backend, "backend plugin");
    KEY("BKNDVER", m->backend_version, "backend plugin version");
    KEY("BKNDDEV", m->device, "device that evaluated the models");
    KEY("INSTRUM", m->instrument, "instrument plugin");
    KEY("INSTVER", m->instrument_version, "instrument plugin version");
    KEY("TEMPLIB", m->library, "template library");
    KEY("CMDLINE", m->cmdline, "command line");
#undef KEY
    fits_write_key_longwarn(f, st);
    if (m->config_text) {
        /* One COMMENT card per line keeps the INI text readable. */
        const char *p = m->config_text;
        fits_write_comment(f, "rvfit configuration (INI):", st);
        while (*p && *st == 0) {
            const char *e = strchr(p, '\n');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            char line[72];
            snprintf(line, sizeof line, "%.*s", (int)(len < 70 ? len : 70), p);
            if (len)
                fits_write_comment(f, line, st);
            p += len + (e ? 1 : 0);
        }
    }
}

static int create_table(fitsfile *f, const char *extname, size_t nrow,
                        int ncol, char **names, char **forms, char **units,
                        int *st)
{
    fits_create_tbl(f, BINARY_TBL, (LONGLONG)nrow, ncol, names, forms, units,
                    extname, st);
    return *st;
}

int out_make_table(fitsfile *f, const char *extname, size_t nrow,
                   const out_cols *c, int *st)
{
    char *names[OUT_MAX_COLS], *forms[OUT_MAX_COLS], *units[OUT_MAX_COLS];
    for (int i = 0; i < c->n; i++) {
        names[i] = (char *)c->col[i].name;
        forms[i] = (char *)c->col[i].form;
        units[i] = (char *)c->col[i].unit;
    }
    create_table(f, extname, nrow, c->n, names, forms, units, st);
    for (int i = 0; i < c->n && *st == 0; i++) {
        char key[16];
        snprintf(key, sizeof key, "TCOMM%d", i + 1);
        if (c->col[i].comment[0])
            fits_write_key_str(f, key, c->col[i].comment,
                               "column description", st);
    }
    return *st;
}

static int make_rvtab(rvfit_output *o, int *st)
{
    out_cols *c = &o->cols;
    const rvfit_table_schema *ids =
        o->id_table >= 0 ? &o->table[o->id_table] : NULL;
    int n = c->n + (ids ? ids->ncol : 0);
    char **names = calloc((size_t)n, sizeof *names);
    char **forms = calloc((size_t)n, sizeof *forms);
    char **units = calloc((size_t)n, sizeof *units);
    char (*idform)[16] = calloc((size_t)(ids ? ids->ncol : 1), 16);
    if (!names || !forms || !units || !idform) {
        free(names), free(forms), free(units), free(idform);
        return *st = MEMORY_ALLOCATION;
    }
    for (int i = 0; i < c->n; i++) {
        names[i] = c->col[i].name;
        forms[i] = c->col[i].form;
        units[i] = c->col[i].unit;
    }
    for (int i = 0; ids && i < ids->ncol; i++) {
        names[c->n + i] = (char *)ids->cols[i].name;
        forms[c->n + i] = (char *)out_tform(&ids->cols[i], idform[i], 16);
        units[c->n + i] = (char *)ids->cols[i].unit;
    }
    create_table(o->tab, "RVTAB", o->nrow, n, names, forms, units, st);
    for (int i = 0; i < n && *st == 0; i++) {
        char key[16];
        const char *com = i < c->n ? c->col[i].comment
                                   : ids->cols[i - c->n].comment;
        snprintf(key, sizeof key, "TCOMM%d", i + 1);
        if (com[0])
            fits_write_key_str(o->tab, key, com, "column description", st);
    }
    free(names), free(forms), free(units), free(idform);
    return *st;
}

static int make_passthrough(fitsfile *f, const rvfit_table_schema *s,
                            size_t nrow, int *st)
{
    int n = s->ncol;
    char **names = calloc((size_t)(n ? n : 1), sizeof *names);
    char **forms = calloc((size_t)(n ? n : 1), sizeof *forms);
    char **units = calloc((size_t)(n ? n : 1), sizeof *units);
    char (*fbuf)[16] = calloc((size_t)(n ? n : 1), 16);
    if (!names || !forms || !units || !fbuf) {
        free(names), free(forms), free(units), free(fbuf);
        return *st = MEMORY_ALLOCATION;
    }
    for (int i = 0; i < n; i++) {
        names[i] = (char *)s->cols[i].name;
        forms[i] = (char *)out_tform(&s->cols[i], fbuf[i], 16);
        units[i] = (char *)s->cols[i].unit;
    }
    create_table(f, s->extname, nrow, n, names, forms, units, st);
    free(names), free(forms), free(units), free(fbuf);
    return *st;
}

/* HDU CHISQ_V: per row the final velocity scan, NV points of V and
 * M2LNL, NaN beyond. */
static void make_chisq_v(rvfit_output *o, int *st)
{
    char form[16];
    snprintf(form, sizeof form, "%dD", RVFIT_VSCAN_MAX);
    char *names[] = {"V", "M2LNL", "NV"};
    char *forms[] = {form, form, "J"};
    char *units[] = {"km/s", "", ""};
    static const char *const com[] = {
        "velocities of the final scan (increasing; NaN beyond NV)",
        "-2 ln L at V, continuum marginalised (NaN beyond NV)",
        "points of the scan (0: not fitted)"};
    create_table(o->mod, "CHISQ_V", o->nrow, 3, names, forms, units, st);
    for (int i = 0; i < 3 && *st == 0; i++) {
        char key[16];
        snprintf(key, sizeof key, "TCOMM%d", i + 1);
        fits_write_key_str(o->mod, key, com[i], "column description", st);
    }
}

static int make_models(rvfit_output *o, int *st)
{
    for (int a = 0; a < o->narm && *st == 0; a++) {
        char ext[80];
        long npix = (long)o->arm[a].npix;
        long shape2[2] = {npix, (long)o->nrow};
        snprintf(ext, sizeof ext, "%s_WAVELENGTH", o->arm[a].name);
        if (!o->arm[a].wave_per_spec) {
            fits_create_img(o->mod, DOUBLE_IMG, 1, &npix, st);
            fits_write_key_str(o->mod, "EXTNAME", ext, NULL, st);
            fits_write_key_str(o->mod, "BUNIT", "Angstrom", NULL, st);
        } else {
            o->wave_per_spec[a] = 1;
            fits_create_img(o->mod, DOUBLE_IMG, 2, shape2, st);
            fits_write_key_str(o->mod, "EXTNAME", ext, NULL, st);
            fits_write_key_str(o->mod, "BUNIT", "Angstrom", NULL, st);
        }
        snprintf(ext, sizeof ext, "%s_MODEL", o->arm[a].name);
        fits_create_img(o->mod, FLOAT_IMG, 2, shape2, st);
        fits_write_key_str(o->mod, "EXTNAME", ext, NULL, st);
        fits_write_key_str(o->mod, "COMMENT",
                           "best-fit model incl. continuum, rows align "
                           "with RVTAB", NULL, st);
    }
    for (int t = 0; t < o->ntable && *st == 0; t++)
        if (!strcmp(o->table[t].extname, "FIBERMAP"))
            make_passthrough(o->mod, &o->table[t], o->nrow, st);
    if (o->chisq_v && *st == 0)
        make_chisq_v(o, st);
    return *st;
}

int rvfit_output_open(rvfit_output **out, const char *tab_path,
                      const char *mod_path, const rvfit_library *lib,
                      const rvfit_file_info *info, size_t nrow,
                      const rvfit_output_meta *meta, rvfit_err *err)
{
    rvfit_output *o = calloc(1, sizeof *o);
    if (!o)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "output: out of memory");
    o->nrow = nrow;
    o->chisq_v = meta->chisq_v;
    o->narm = info->narm;
    memcpy(o->arm, info->arm, sizeof o->arm);
    o->ntable = info->ntable;
    o->table = out_schemas_copy(info->table, info->ntable);
    o->id_table = -1;
    if (!o->table) {
        free(o);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "output: out of memory");
    }
    for (int t = 0; t < info->ntable; t++)
        if (!strcmp(info->table[t].extname, "RVTAB"))
            o->id_table = t;
    out_rvtab_columns(&o->cols, lib, info);
    snprintf(o->tab_final, sizeof o->tab_final, "%s", tab_path);
    int rc = rvfit_fits_create(tab_path, o->tab_tmp, sizeof o->tab_tmp,
                               &o->tab, err);
    if (rc) {
        out_schemas_free(o->table, o->ntable);
        free(o);
        return rc;
    }
    int st = 0;
    out_write_primary(o->tab, meta, nrow, &st);
    make_rvtab(o, &st);
    for (int t = 0; t < o->ntable && !st; t++)
        if (t != o->id_table)
            make_passthrough(o->tab, &o->table[t], nrow, &st);
    if (st) {
        rc = fits_fail(st, err, o->tab_final, "writing headers");
        rvfit_output_abort(o);
        return rc;
    }
    if (mod_path) {
        snprintf(o->mod_final, sizeof o->mod_final, "%s", mod_path);
        rc = rvfit_fits_create(mod_path, o->mod_tmp, sizeof o->mod_tmp,
                               &o->mod, err);
        if (rc) {
            rvfit_output_abort(o);
            return rc;
        }
        out_write_primary(o->mod, meta, nrow, &st);
        make_models(o, &st);
        if (st) {
            rc = fits_fail(st, err, o->mod_final, "writing headers");
            rvfit_output_abort(o);
            return rc;
        }
    }
    *out = o;
    return RVFIT_OK;
}
