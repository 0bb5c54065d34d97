/* phoenix_read.c — find and read the files of a PHOENIX-layout grid.
 *
 * Only the primary HDU of each file is read: a real model file also has
 * an ABUNDANCES table in HDU 2, which is not needed.  Units: the real
 * wavelength file says UNIT = 'Angstrom' (the synthetic grids BUNIT),
 * the real models BUNIT = 'erg/s/cm^2/cm'.  The templates multiply the
 * flux by lambda (photon counts) and normalise each model, so any flux
 * per unit wavelength will do, and wavelengths must be Angstrom: a unit
 * keyword that says otherwise is refused rather than converted.  Files
 * without one are taken to follow the PHOENIX convention. */
#include "phoenix_read.h"
#include "rvfit/fits.h"

#include <ctype.h>
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

/* Keyword `key` lower-cased, blanks around it removed, into out (n
 * bytes); 0 when absent. */
static int phx_unit_key(fitsfile *f, const char *key, char *out, size_t n)
{
    char v[FLEN_VALUE] = "";
    int fs = 0;
    if (fits_read_key(f, TSTRING, key, v, NULL, &fs)) {
        fits_clear_errmsg();
        return 0;
    }
    const char *c = v;
    while (*c == ' ')
        c++;
    size_t k = 0;
    for (; *c && k + 1 < n; c++)
        out[k++] = (char)tolower((unsigned char)*c);
    while (k && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
    return 1;
}

static const char *const phx_len_units[] = {"cm", "a", "aa", "angstrom",
                                            "angstroms", "nm", "um", "m",
                                            NULL};

static int phx_is_one_of(const char *u, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(u, *list))
            return 1;
    return 0;
}

/* 1 when flux unit u is per unit wavelength: the text after its last
 * '/' is a length ("erg/s/cm^2/cm"), or its last factor (after a blank
 * or '.') is a length to the power -1 ("erg s-1 cm-2 cm-1"). */
static int phx_per_wavelength(const char *u)
{
    static const char *const inv[] = {"^-1", "**-1", "-1", NULL};
    char t[FLEN_VALUE];
    const char *s = strrchr(u, '/');
    if (s)
        return phx_is_one_of(s + 1, phx_len_units);
    size_t b = strlen(u);
    while (b && u[b - 1] != ' ' && u[b - 1] != '.')
        b--;
    snprintf(t, sizeof t, "%s", u + b);
    size_t n = strlen(t);
    for (int i = 0; inv[i]; i++) {
        size_t m = strlen(inv[i]);
        if (n > m && !strcmp(t + n - m, inv[i])) {
            t[n - m] = '\0';
            return phx_is_one_of(t, phx_len_units);
        }
    }
    return 0;
}

/* UNIT or BUNIT of the wavelength file, when present: Angstrom. */
static int phx_wave_unit(fitsfile *f, const char *path, rvfit_err *err)
{
    static const char *const ok[] = {"angstrom", "angstroms", "a", "aa",
                                     NULL};
    static const char *const key[2] = {"UNIT", "BUNIT"};
    char u[FLEN_VALUE];
    for (int k = 0; k < 2; k++)
        if (phx_unit_key(f, key[k], u, sizeof u) && !phx_is_one_of(u, ok))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: %s = '%s': "
                                 "wavelengths must be in Angstrom", path,
                                 key[k], u);
    return RVFIT_OK;
}

/* BUNIT of a model, when present: a flux per unit wavelength. */
static int phx_flux_unit(fitsfile *f, const char *path, rvfit_err *err)
{
    char u[FLEN_VALUE];
    if (phx_unit_key(f, "BUNIT", u, sizeof u) && !phx_per_wavelength(u))
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: BUNIT = '%s': the "
                             "flux must be per unit wavelength (e.g. "
                             "erg/s/cm^2/cm), as PHOENIX's is", path, u);
    return RVFIT_OK;
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
    int rc = n < 2 ? rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: primary HDU "
                                   "is not a 1-D wavelength array", path)
                   : phx_wave_unit(f, path, err);
    if (rc) {
        fits_close_file(f, &fs);
        fits_clear_errmsg();
        return rc;
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
    int rc = phx_flux_unit(f, m->path, err), cs = 0;
    fits_close_file(f, &cs);
    fits_clear_errmsg();
    if (rc)
        return rc;
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
