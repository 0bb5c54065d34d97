/* ascii_plugin.c — a minimal rvfit instrument plugin, built out of tree
 * (see docs/plugins.md): one spectrum per text file, lines
 * "lambda_vacuum_A flux ivar", '#' comments; one arm "ALL", no
 * resolution data (the templates are used as they are), no tables. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/plugin.h"

typedef struct ascii_handle {
    size_t n;
    double *wave;
    float *flux, *ivar;
    rvfit_file_info info;
} ascii_handle;

static void ascii_close(void *handle)
{
    ascii_handle *h = handle;
    if (h) {
        free(h->wave), free(h->flux), free(h->ivar);
        free(h);
    }
}

static int ascii_grow(ascii_handle *h, size_t cap)
{
    double *w = realloc(h->wave, cap * sizeof *w);
    if (w)
        h->wave = w;
    float *f = realloc(h->flux, cap * sizeof *f);
    if (f)
        h->flux = f;
    float *v = realloc(h->ivar, cap * sizeof *v);
    if (v)
        h->ivar = v;
    return w && f && v;
}

static int ascii_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                      const char *path, const rvfit_select *sel, void **handle,
                      rvfit_err *err)
{
    (void)opts, (void)nopt, (void)sel;
    *handle = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: %s", path,
                             strerror(errno));
    ascii_handle *h = calloc(1, sizeof *h);
    size_t cap = 0;
    char line[256];
    int rc = h ? RVFIT_OK : rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s", path);
    for (int ln = 1; !rc && fgets(line, sizeof line, f); ln++) {
        double w, fl, iv;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
            continue;
        if (sscanf(line, "%lf %lf %lf", &w, &fl, &iv) != 3) {
            rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s:%d: expected "
                               "'lambda flux ivar'", path, ln);
            break;
        }
        if (h->n == cap && !ascii_grow(h, cap = cap ? 2 * cap : 1024))
            rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s", path);
        if (!rc) {
            h->wave[h->n] = w;
            h->flux[h->n] = (float)fl;
            h->ivar[h->n++] = (float)(iv > 0 ? iv : 0);
        }
    }
    fclose(f);
    if (!rc && (!h || h->n < 2))
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: fewer than 2 pixels",
                           path);
    if (rc) {
        ascii_close(h);
        return rc;
    }
    h->info.narm = 1;
    snprintf(h->info.arm[0].name, sizeof h->info.arm[0].name, "ALL");
    h->info.arm[0].npix = h->n;
    h->info.arm[0].res_kind = RVFIT_RES_NONE;
    h->info.ntotal = h->info.nselect = 1;
    rvfit_log(host, RVFIT_LOG_INFO, "ascii", "%s: %zu pixels", path, h->n);
    *handle = h;
    return RVFIT_OK;
}

static void ascii_info(void *handle, rvfit_file_info *info)
{
    *info = ((ascii_handle *)handle)->info;
}

static int ascii_read(void *handle, size_t first, size_t count,
                      rvfit_batch *b, rvfit_err *err)
{
    ascii_handle *h = handle;
    if (first + count > 1 || b->arm[0].npix != h->n)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "ascii: bad read");
    memcpy(b->arm[0].wave, h->wave, h->n * sizeof *h->wave);
    memcpy(b->arm[0].flux, h->flux, count * h->n * sizeof *h->flux);
    memcpy(b->arm[0].ivar, h->ivar, count * h->n * sizeof *h->ivar);
    for (size_t s = 0; s < count; s++) {
        b->snr[s] = NAN; /* unknown */
        b->flags[s] = 0;
        b->index[s] = s;
    }
    b->nspec = count;
    return RVFIT_OK;
}

static int ascii_read_rows(void *handle, int t, size_t first, size_t count,
                           rvfit_table_rows *rows, rvfit_err *err)
{
    (void)handle, (void)t, (void)first, (void)count, (void)rows;
    return rvfit_err_set(err, RVFIT_ERR_INVALID, "ascii: no tables");
}

static int ascii_template_arms(const rvfit_kv *opts, int nopt, int *narm,
                               rvfit_template_arm *arms, rvfit_err *err)
{
    (void)opts, (void)nopt, (void)err;
    *narm = 1;
    memset(arms, 0, sizeof *arms);
    snprintf(arms[0].name, sizeof arms[0].name, "ALL");
    arms[0].lam_min = 4000, arms[0].lam_max = 9000, arms[0].step = 0.5;
    return RVFIT_OK;
}

static const rvfit_instrument_ops ascii_ops = {
    .size = sizeof(rvfit_instrument_ops),
    .version = RVFIT_INSTRUMENT_OPS_VERSION,
    .open = ascii_open,
    .info = ascii_info,
    .read = ascii_read,
    .read_rows = ascii_read_rows,
    .close = ascii_close,
    .template_arms = ascii_template_arms,
};

static const char *const ascii_keys[] = {NULL};

static const rvfit_plugin ascii_descriptor = {
    .abi_major = RVFIT_ABI_MAJOR,
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
    .kind = RVFIT_PLUGIN_INSTRUMENT,
    .name = "ascii",
    .version = "0.1.0",
    .description = "example: one spectrum per 'lambda flux ivar' text file",
    .config_keys = ascii_keys,
    .ops = &ascii_ops,
    .ext = NULL, /* a reader only: no 'mock' extension (optional) */
};

RVFIT_EXPORT const rvfit_plugin *rvfit_plugin_entry(void)
{
    return &ascii_descriptor;
}
