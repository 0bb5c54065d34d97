/* phoenix_read.c — find and read the files of a PHOENIX-layout grid. */
#include "phoenix_read.h"
#include "rvfit/fits.h"

#include <dirent.h>
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PHX_WAVE "WAVE_PHOENIX-ACES-AGSS-COND-2011.fits"
#define PHX_SUB "PHOENIX-ACES-AGSS-COND-2011"

void phx_free(phx_grid *g)
{
    for (size_t i = 0; i < g->nfile; i++)
        free(g->file[i].path);
    free(g->file);
    free(g->wave);
    memset(g, 0, sizeof *g);
}

/* Length of the 1-D primary image of an open file, or -1. */
static long phx_len(fitsfile *f, int *fs)
{
    int nx = 0;
    long n = 0;
    fits_get_img_dim(f, &nx, fs);
    if (*fs || nx != 1)
        return -1;
    fits_get_img_size(f, 1, &n, fs);
    return *fs ? -1 : n;
}

static int phx_wave(const char *dir, phx_grid *g, rvfit_err *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, PHX_WAVE);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "PHOENIX grid %s: missing "
                             "wavelength file %s", dir, path);
    fitsfile *f = NULL;
    int fs = 0, anynul = 0;
    if (fits_open_file(&f, path, READONLY, &fs))
        return rvfit_fits_error(err, fs, path, NULL, "reading");
    long n = phx_len(f, &fs);
    if (n < 2) {
        fits_close_file(f, &fs);
        fits_clear_errmsg();
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: primary HDU is not"
                             " a 1-D wavelength array", path);
    }
    g->nwave = (size_t)n;
    g->wave = malloc(g->nwave * sizeof *g->wave);
    if (!g->wave) {
        fits_close_file(f, &fs);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: no memory", path);
    }
    double nul = NAN;
    fits_read_img(f, TDOUBLE, 1, n, &nul, g->wave, &anynul, &fs);
    int cs = 0;
    fits_close_file(f, &cs);
    if (fs)
        return rvfit_fits_error(err, fs, path, NULL, "reading");
    for (size_t i = 0; i < g->nwave; i++)
        if (!(g->wave[i] > 0.0) || (i && !(g->wave[i] > g->wave[i - 1])))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: wavelengths not"
                                 " positive and increasing at sample %zu",
                                 path, i);
    return RVFIT_OK;
}

/* Read the PHX* keywords and check the size of one model file. */
static int phx_header(phx_file *m, size_t nwave, rvfit_err *err)
{
    fitsfile *f = NULL;
    int fs = 0;
    if (fits_open_file(&f, m->path, READONLY, &fs)) {
        rvfit_fits_error(err, fs, m->path, NULL, "cannot open");
        rvfit_err_prefix(err, "not a readable FITS model file");
        return RVFIT_ERR_FORMAT;
    }
    const char *key[4] = {"PHXTEFF", "PHXLOGG", "PHXM_H", "PHXALPHA"};
    double *val[4] = {&m->teff, &m->logg, &m->feh, &m->alpha};
    for (int k = 0; k < 4 && !fs; k++)
        if (rvfit_fits_read_key(f, TDOUBLE, key[k], val[k], &fs)) {
            int cs = 0;
            fits_close_file(f, &cs);
            char w[64];
            snprintf(w, sizeof w, "keyword %s", key[k]);
            return rvfit_fits_error(err, fs, m->path, NULL, w);
        }
    long n = phx_len(f, &fs);
    int cs = 0;
    fits_close_file(f, &cs);
    fits_clear_errmsg();
    if (n != (long)nwave)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: %ld flux samples, "
                             "but the wavelength file has %zu (inconsistent "
                             "file sizes)", m->path, n, nwave);
    if (!isfinite(m->teff) || !(m->teff > 0.0) || !isfinite(m->logg) ||
        !isfinite(m->feh) || !isfinite(m->alpha))
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: bad PHX* keyword "
                             "values", m->path);
    return RVFIT_OK;
}

static int phx_cmp(const void *a, const void *b)
{
    return strcmp(((const phx_file *)a)->path,
                  ((const phx_file *)b)->path);
}

static int phx_is_model(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "lte", 3) == 0 && n > 8 &&
           strcmp(name + n - 5, ".fits") == 0;
}

/* Append the model files of one Z* folder to g->file. */
static int phx_folder(const char *zdir, phx_grid *g, size_t *cap,
                      rvfit_err *err)
{
    DIR *d = opendir(zdir);
    if (!d)
        return RVFIT_OK; /* a plain file named Z*: not ours */
    struct dirent *e;
    int st = RVFIT_OK;
    while (!st && (e = readdir(d)) != NULL) {
        if (!phx_is_model(e->d_name))
            continue;
        if (g->nfile == *cap) {
            size_t nc = *cap ? 2 * *cap : 256;
            phx_file *nf = realloc(g->file, nc * sizeof *nf);
            if (!nf) {
                st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
                break;
            }
            g->file = nf;
            *cap = nc;
        }
        size_t len = strlen(zdir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p) {
            st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
            break;
        }
        snprintf(p, len, "%s/%s", zdir, e->d_name);
        memset(&g->file[g->nfile], 0, sizeof g->file[0]);
        g->file[g->nfile++].path = p;
    }
    closedir(d);
    return st;
}

static int phx_list(const char *dir, phx_grid *g, rvfit_err *err)
{
    char sub[4200], z[4600];
    snprintf(sub, sizeof sub, "%s/%s", dir, PHX_SUB);
    DIR *d = opendir(sub);
    if (!d)
        return rvfit_err_set(err, RVFIT_ERR_IO, "PHOENIX grid %s: no folder "
                             "%s", dir, sub);
    struct dirent *e;
    size_t cap = 0;
    int st = RVFIT_OK;
    while (!st && (e = readdir(d)) != NULL) {
        if (e->d_name[0] != 'Z')
            continue;
        snprintf(z, sizeof z, "%s/%s", sub, e->d_name);
        st = phx_folder(z, g, &cap, err);
    }
    closedir(d);
    if (!st && g->nfile == 0)
        st = rvfit_err_set(err, RVFIT_ERR_IO, "PHOENIX grid %s: no model "
                           "files (lte*.fits) under %s/Z*/", dir, sub);
    if (!st)
        qsort(g->file, g->nfile, sizeof *g->file, phx_cmp);
    return st;
}

int phx_scan(const char *dir, double teff_min, double teff_max,
                     phx_grid *g, rvfit_err *err)
{
    memset(g, 0, sizeof *g);
    int st = phx_wave(dir, g, err);
    if (!st)
        st = phx_list(dir, g, err);
    size_t keep = 0;
    for (size_t i = 0; !st && i < g->nfile; i++) {
        st = phx_header(&g->file[i], g->nwave, err);
        double t = g->file[i].teff;
        if (st || (teff_min > 0.0 && t < teff_min) ||
            (teff_max > 0.0 && t > teff_max)) {
            free(g->file[i].path);
            g->file[i].path = NULL;
            continue;
        }
        phx_file m = g->file[i];
        g->file[i].path = NULL; /* moved: the slot no longer owns it */
        g->file[keep++] = m;
    }
    if (st) {
        phx_free(g); /* frees kept and not yet visited paths */
        return st;
    }
    g->nfile = keep;
    if (keep == 0) {
        phx_free(g);
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "PHOENIX grid %s: no "
                             "model inside the Teff cuts %g-%g K", dir,
                             teff_min, teff_max);
    }
    return RVFIT_OK;
}

int phx_flux(const char *path, size_t nwave, double *flux,
                     rvfit_err *err)
{
    fitsfile *f = NULL;
    int fs = 0, anynul = 0, cs = 0;
    double nul = NAN;
    if (fits_open_file(&f, path, READONLY, &fs))
        return rvfit_fits_error(err, fs, path, NULL, "reading");
    fits_read_img(f, TDOUBLE, 1, (LONGLONG)nwave, &nul, flux, &anynul, &fs);
    fits_close_file(f, &cs);
    if (fs)
        return rvfit_fits_error(err, fs, path, NULL, "reading");
    for (size_t i = 0; i < nwave; i++)
        if (!isfinite(flux[i]))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: non-finite flux"
                                 " at sample %zu", path, i);
    return RVFIT_OK;
}
