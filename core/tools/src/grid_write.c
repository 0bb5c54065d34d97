/* grid_write.c — presets and writer of a synthetic template grid in the
 * PHOENIX-ACES-AGSS-COND-2011 layout (reference/formats.md):
 *
 *   DIR/WAVE_PHOENIX-ACES-AGSS-COND-2011.fits          float64, vacuum A
 *   DIR/PHOENIX-ACES-AGSS-COND-2011/Z-1.0.Alpha=+0.40/
 *       lte05800-4.50-1.0.Alpha=+0.40.PHOENIX-ACES-AGSS-COND-2011-HiRes.fits
 *
 * Model files hold float32 flux in erg/s/cm^2/cm with PHXTEFF, PHXLOGG,
 * PHXM_H, PHXALPHA, PHXVER.  Models are independent items of
 * rvfit_parallel_for; CFITSIO calls are serialised by a mutex (CFITSIO
 * is not assumed reentrant).  Every file is written to a temporary name
 * and renamed.
 */
#include <fitsio.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/files.h"
#include "rvfit/fits.h"
#include "rvfit/numeric.h"
#include "rvfit/pool.h"
#include "rvfit/synth.h"

#define GW_WAVE "WAVE_PHOENIX-ACES-AGSS-COND-2011.fits"
#define GW_SUB "PHOENIX-ACES-AGSS-COND-2011"
#define GW_SUFFIX ".PHOENIX-ACES-AGSS-COND-2011-HiRes.fits"
#define GW_VERSION "rvfit-synth-1"

int rvfit_grid_preset(const char *name, rvfit_grid_spec *s, rvfit_err *err)
{
    memset(s, 0, sizeof *s);
    if (name && strcmp(name, "std") == 0) {
        *s = (rvfit_grid_spec){4000, 7000, 250, 1, 5, 0.5, -2, 0.5, 0.5,
                               0, 0.4, 0.4, 3400, 10200, 6e-6, 0.0, 1};
        return RVFIT_OK;
    }
    if (name && strcmp(name, "small") == 0) {
        *s = (rvfit_grid_spec){4000, 7000, 500, 1, 5, 1, -2, 0.5, 0.5,
                               0, 0.4, 0.4, 3450, 10000, 1e-5, 0.02, 7};
        return RVFIT_OK;
    }
    return rvfit_err_set(err, RVFIT_ERR_INVALID,
                         "unknown grid preset '%s' (known: std, small)",
                         name ? name : "(null)");
}

/* Number of nodes from x0 to x1 in steps of `step` (1 when step <= 0). */
static int gw_count(double x0, double x1, double step)
{
    if (!(step > 0.0))
        return 1;
    return (int)floor((x1 - x0) / step + 1e-6) + 1;
}

typedef struct gw_job {
    const char *dir;
    const rvfit_grid_spec *spec;
    int nt, ng, nz, na;
    size_t nmodel, nwave;
    const uint8_t *hole;
    double lnl0;
    pthread_mutex_t lock;      /* CFITSIO and the directories            */
} gw_job;

/* PHOENIX composition strings: Z "-0.0" for solar, "+0.5", "-1.0"; the
 * alpha part is empty for [alpha/Fe] = 0, else ".Alpha=+0.40". */
static void gw_zname(double feh, double alpha, char *z, size_t zs, char *a,
                     size_t as)
{
    double fz = floor(feh * 10.0 + 0.5) / 10.0;
    if (fz > 0.0)
        snprintf(z, zs, "+%.1f", fz);
    else
        snprintf(z, zs, "-%.1f", fabs(fz));
    if (fabs(alpha) < 1e-9)
        a[0] = '\0';
    else
        snprintf(a, as, ".Alpha=%+.2f", alpha);
}

/* Write a primary-image FITS file atomically.  Called with the lock held. */
static int gw_write_image(const char *path, int bitpix, int dtype, size_t n,
                          const void *data, const double *par,
                          rvfit_err *err)
{
    char tmp[4200];
    fitsfile *f = NULL;
    int fs = 0, st = rvfit_fits_create(path, tmp, sizeof tmp, &f, err);
    if (st)
        return st;
    long naxes[1] = {(long)n};
    fits_create_img(f, bitpix, 1, naxes, &fs);
    if (par) {
        double t = par[0], g = par[1], z = par[2], a = par[3];
        fits_write_key(f, TDOUBLE, "PHXTEFF", &t, "[K] effective temperature",
                       &fs);
        fits_write_key(f, TDOUBLE, "PHXLOGG", &g, "[cm/s^2] log (surface "
                       "gravity)", &fs);
        fits_write_key(f, TDOUBLE, "PHXM_H", &z, "[M/H] metallicity", &fs);
        fits_write_key(f, TDOUBLE, "PHXALPHA", &a, "[alpha/M] alpha "
                       "enhancement", &fs);
        fits_write_key(f, TSTRING, "PHXVER", GW_VERSION,
                       "rvfit analytic spectrum, not PHOENIX", &fs);
        fits_write_key(f, TSTRING, "BUNIT", "erg/s/cm^2/cm", "flux unit",
                       &fs);
    } else {
        fits_write_key(f, TSTRING, "BUNIT", "Angstrom", "vacuum wavelength",
                       &fs);
    }
    fits_write_img(f, dtype, 1, (LONGLONG)n, (void *)data, &fs);
    return rvfit_fits_commit(f, fs, tmp, path, err);
}

/* Parameters of model m (last axis fastest: teff, logg, feh, alpha). */
static void gw_params(const gw_job *j, size_t m, double *p)
{
    const rvfit_grid_spec *s = j->spec;
    size_t ia = m % (size_t)j->na, iz = (m / (size_t)j->na) % (size_t)j->nz;
    size_t ig = (m / ((size_t)j->na * j->nz)) % (size_t)j->ng;
    size_t it = m / ((size_t)j->na * j->nz * j->ng);
    p[0] = s->teff0 + (double)it * s->teff_step;
    p[1] = s->logg0 + (double)ig * s->logg_step;
    p[2] = s->feh0 + (double)iz * s->feh_step;
    p[3] = s->alpha0 + (double)ia * s->alpha_step;
    /* Print-exact node values (no 0.49999999 from accumulated steps). */
    p[1] = floor(p[1] * 100.0 + 0.5) / 100.0;
    p[2] = floor(p[2] * 100.0 + 0.5) / 100.0;
    p[3] = floor(p[3] * 100.0 + 0.5) / 100.0;
}

static int gw_one(gw_job *j, size_t m, double *flux, float *f32,
                  rvfit_err *err)
{
    double p[4];
    gw_params(j, m, p);
    int st = rvfit_synth_flux(p[0], p[1], p[2], p[3], j->lnl0,
                              j->spec->dlnl, j->nwave, flux, err);
    if (st)
        return st;
    for (size_t i = 0; i < j->nwave; i++)
        f32[i] = (float)flux[i];
    char z[16], a[24], sub[4200], path[4400];
    gw_zname(p[2], p[3], z, sizeof z, a, sizeof a);
    snprintf(sub, sizeof sub, "%s/%s/Z%s%s", j->dir, GW_SUB, z, a);
    snprintf(path, sizeof path, "%s/lte%05d-%.2f%s%s%s", sub,
             (int)floor(p[0] + 0.5), p[1], z, a, GW_SUFFIX);
    pthread_mutex_lock(&j->lock);
    st = rvfit_mkdirs(sub, err);
    if (!st)
        st = gw_write_image(path, FLOAT_IMG, TFLOAT, j->nwave, f32, p, err);
    pthread_mutex_unlock(&j->lock);
    return st;
}

/* Per-thread buffers of one model. */
typedef struct gw_scratch {
    double *flux;
    float *f32;
} gw_scratch;

static void gw_scratch_free(void *arg)
{
    gw_scratch *w = arg;
    free(w->flux), free(w->f32);
    free(w);
}

static void *gw_scratch_new(void *ctx)
{
    const gw_job *j = ctx;
    gw_scratch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->flux = malloc(j->nwave * sizeof *w->flux);
    w->f32 = malloc(j->nwave * sizeof *w->f32);
    if (!w->flux || !w->f32) {
        gw_scratch_free(w);
        return NULL;
    }
    return w;
}

static int gw_item(void *ctx, void *scratch, size_t m, rvfit_err *err)
{
    gw_job *j = ctx;
    gw_scratch *w = scratch;
    return j->hole[m] ? RVFIT_OK : gw_one(j, m, w->flux, w->f32, err);
}

/* Pick round(hole_fraction * nmodel) holes by a seeded partial shuffle. */
static void gw_holes(const rvfit_grid_spec *s, size_t nmodel, uint8_t *hole)
{
    size_t nh = (size_t)floor(s->hole_fraction * (double)nmodel + 0.5);
    size_t *idx = malloc(nmodel * sizeof *idx);
    memset(hole, 0, nmodel);
    if (!idx || nh == 0) {
        free(idx);
        return;
    }
    uint64_t st = s->seed ^ 0x686f6c6573ull; /* "holes" */
    for (size_t i = 0; i < nmodel; i++)
        idx[i] = i;
    for (size_t i = 0; i < nh && i < nmodel; i++) {
        size_t k = i + (size_t)(rvfit_splitmix_uniform(&st) * (double)(nmodel - i));
        size_t t = idx[i];
        idx[i] = idx[k];
        idx[k] = t;
        hole[idx[i]] = 1;
    }
    free(idx);
}

static int gw_check(const rvfit_grid_spec *s, rvfit_err *err)
{
    if (!(s->teff0 >= 2000.0 && s->teff1 >= s->teff0 && s->logg1 >= s->logg0
          && s->feh1 >= s->feh0 && s->alpha1 >= s->alpha0))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "grid: bad parameter ranges");
    if (!(s->lam_min > 0.0 && s->lam_max > s->lam_min && s->dlnl > 0.0 &&
          s->dlnl <= 1e-3))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "grid: bad wavelength range %g-%g A or dlnl %g",
                             s->lam_min, s->lam_max, s->dlnl);
    if (!(s->hole_fraction >= 0.0 && s->hole_fraction < 1.0))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "grid: hole_fraction %g not in [0, 1)",
                             s->hole_fraction);
    return RVFIT_OK;
}

static int gw_wave(gw_job *j, rvfit_err *err)
{
    double *w = malloc(j->nwave * sizeof *w);
    if (!w)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "grid: no memory");
    for (size_t i = 0; i < j->nwave; i++)
        w[i] = exp(j->lnl0 + (double)i * j->spec->dlnl);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", j->dir, GW_WAVE);
    int st = gw_write_image(path, DOUBLE_IMG, TDOUBLE, j->nwave, w, NULL,
                            err);
    free(w);
    return st;
}

int rvfit_grid_write(const char *dir, const rvfit_grid_spec *spec,
                     int nthreads, rvfit_err *err)
{
    int st = gw_check(spec, err);
    if (st)
        return st;
    gw_job j;
    memset(&j, 0, sizeof j);
    j.dir = dir;
    j.spec = spec;
    j.nt = gw_count(spec->teff0, spec->teff1, spec->teff_step);
    j.ng = gw_count(spec->logg0, spec->logg1, spec->logg_step);
    j.nz = gw_count(spec->feh0, spec->feh1, spec->feh_step);
    j.na = gw_count(spec->alpha0, spec->alpha1, spec->alpha_step);
    j.nmodel = (size_t)j.nt * j.ng * j.nz * j.na;
    j.lnl0 = log(spec->lam_min);
    j.nwave = (size_t)floor(log(spec->lam_max / spec->lam_min) / spec->dlnl)
              + 1;
    uint8_t *hole = malloc(j.nmodel);
    if (!hole)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "grid: no memory");
    gw_holes(spec, j.nmodel, hole);
    j.hole = hole;
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/%s", dir, GW_SUB);
    st = rvfit_mkdirs(sub, err);
    if (!st)
        st = gw_wave(&j, err);
    if (st) {
        free(hole);
        rvfit_err_prefix(err, "grid %s", dir);
        return st;
    }
    const rvfit_parallel_job job = {&j, gw_scratch_new, gw_scratch_free,
                                    gw_item};
    pthread_mutex_init(&j.lock, NULL);
    st = rvfit_parallel_for(&job, j.nmodel, nthreads, err);
    pthread_mutex_destroy(&j.lock);
    free(hole);
    if (st)
        rvfit_err_prefix(err, "grid %s", dir);
    return st;
}
