/* `rvfit-indep grid`: a template grid in the PHOENIX-ACES-AGSS-COND-2011
 * distribution layout (see ../shared/reference/formats.md): one wavelength
 * file and one float32 model file per node, flux in erg/s/cm^2/cm. */
#include "mock.h"
#include "util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define PHX "PHOENIX-ACES-AGSS-COND-2011"

typedef struct {
    const char *dir;
    const ind_preset *ps;
    const ind_linelist *ll;
    ind_hgrid g;
    int nt, ng, nf, na;
    double **flux, **work;   /* per worker */
    float **out;
    pthread_mutex_t io;      /* CFITSIO may not be reentrant */
} grid_ctx;

/* PHOENIX spells solar metallicity "-0.0" and omits alpha = 0. */
static void comp_names(double feh, double alpha, char *z, size_t nz, char *a,
                       size_t na)
{
    if (fabs(feh) < 1e-9)
        snprintf(z, nz, "-0.0");
    else
        snprintf(z, nz, "%+.1f", feh);
    if (fabs(alpha) < 1e-9)
        a[0] = '\0';
    else
        snprintf(a, na, ".Alpha=%+.2f", alpha);
}

static void node(const grid_ctx *c, size_t item, ind_star *s)
{
    size_t it = item % (size_t)c->nt, r = item / (size_t)c->nt;
    size_t ig = r % (size_t)c->ng;
    r /= (size_t)c->ng;
    size_t jf = r % (size_t)c->nf, ja = r / (size_t)c->nf;
    s->teff = c->ps->t0 + (double)it * c->ps->tstep;
    s->logg = c->ps->g0 + (double)ig * c->ps->gstep;
    s->feh = c->ps->f0 + (double)jf * c->ps->fstep;
    s->alpha = c->ps->a0 + (double)ja * c->ps->astep;
}

static int write_model(const char *path, const ind_star *s, const float *f,
                       size_t n, ind_err *e)
{
    fitsfile *fp = NULL;
    int st = 0;
    long nax = (long)n;
    ind_atmos a;
    ind_atmos_make(s, &a);
    double teff = s->teff, logg = s->logg, feh = s->feh, alpha = s->alpha;
    char clobber[4300];
    snprintf(clobber, sizeof clobber, "!%s", path);
    fits_create_file(&fp, clobber, &st);
    fits_create_img(fp, FLOAT_IMG, 1, &nax, &st);
    fits_write_key(fp, TDOUBLE, "PHXTEFF", &teff, "[K] effective temperature", &st);
    fits_write_key(fp, TDOUBLE, "PHXLOGG", &logg, "[cgs] log (surface gravity)", &st);
    fits_write_key(fp, TDOUBLE, "PHXM_H", &feh, "[M/H] metallicity", &st);
    fits_write_key(fp, TDOUBLE, "PHXALPHA", &alpha, "[alpha/M]", &st);
    fits_write_key(fp, TDOUBLE, "PHXXI_L", &a.xi, "[km/s] microturbulence", &st);
    fits_write_key(fp, TSTRING, "PHXVER", "rvfit-indep", "independent generator", &st);
    fits_write_key(fp, TSTRING, "BUNIT", "erg/s/cm^2/cm", NULL, &st);
    fits_write_img(fp, TFLOAT, 1, (LONGLONG)n, (void *)f, &st);
    fits_close_file(fp, &st);
    if (st) {
        remove(path);
        return ind_fits_fail(e, st, path, "writing model");
    }
    return 0;
}

static int model_task(void *ctx, size_t item, int w, ind_err *e)
{
    grid_ctx *c = ctx;
    ind_star s;
    node(c, item, &s);
    ind_spectrum(c->ll, &s, &c->g, c->flux[w], c->work[w]);
    for (size_t k = 0; k < c->g.n; k++)
        c->out[w][k] = (float)c->flux[w][k];
    char z[16], a[32], path[4096], tmp[4200];
    comp_names(s.feh, s.alpha, z, sizeof z, a, sizeof a);
    snprintf(path, sizeof path, "%s/" PHX "/Z%s%s/lte%05d-%.2f%s%s." PHX
             "-HiRes.fits", c->dir, z, a, (int)lround(s.teff), s.logg, z, a);
    ind_tmpname(tmp, sizeof tmp, path, item);
    pthread_mutex_lock(&c->io);
    int rc = write_model(tmp, &s, c->out[w], c->g.n, e);
    pthread_mutex_unlock(&c->io);
    return rc ? rc : ind_commit(tmp, path, e);
}

static int write_wave(const char *dir, const ind_hgrid *g, ind_err *e)
{
    char path[4096], tmp[4200], clobber[4300];
    snprintf(path, sizeof path, "%s/WAVE_" PHX ".fits", dir);
    ind_tmpname(tmp, sizeof tmp, path, 0);
    snprintf(clobber, sizeof clobber, "!%s", tmp);
    fitsfile *fp = NULL;
    int st = 0;
    long nax = (long)g->n;
    fits_create_file(&fp, clobber, &st);
    fits_create_img(fp, DOUBLE_IMG, 1, &nax, &st);
    fits_write_key(fp, TSTRING, "BUNIT", "Angstrom", "vacuum wavelength", &st);
    fits_write_key(fp, TSTRING, "ORIGIN", "rvfit-indep", NULL, &st);
    fits_write_img(fp, TDOUBLE, 1, (LONGLONG)g->n, g->lam, &st);
    fits_close_file(fp, &st);
    if (st) {
        remove(tmp);
        return ind_fits_fail(e, st, path, "writing wavelengths");
    }
    return ind_commit(tmp, path, e);
}

static int make_dirs(const grid_ctx *c, ind_err *e)
{
    char path[4096], z[16], a[32];
    if (ind_mkdir(c->dir, e))
        return -1;
    snprintf(path, sizeof path, "%s/" PHX, c->dir);
    if (ind_mkdir(path, e))
        return -1;
    for (int jf = 0; jf < c->nf; jf++)
        for (int ja = 0; ja < c->na; ja++) {
            comp_names(c->ps->f0 + jf * c->ps->fstep,
                       c->ps->a0 + ja * c->ps->astep, z, sizeof z, a, sizeof a);
            snprintf(path, sizeof path, "%s/" PHX "/Z%s%s", c->dir, z, a);
            if (ind_mkdir(path, e))
                return -1;
        }
    return 0;
}

static int nodes(double lo, double hi, double step)
{
    return (int)lround((hi - lo) / step) + 1;
}

static void free_buffers(grid_ctx *c, int nth)
{
    for (int w = 0; w < nth; w++) {
        if (c->flux)
            free(c->flux[w]);
        if (c->work)
            free(c->work[w]);
        if (c->out)
            free(c->out[w]);
    }
    free(c->flux);
    free(c->work);
    free(c->out);
}

static int alloc_buffers(grid_ctx *c, int nth, ind_err *e)
{
    c->flux = calloc((size_t)nth, sizeof *c->flux);
    c->work = calloc((size_t)nth, sizeof *c->work);
    c->out = calloc((size_t)nth, sizeof *c->out);
    if (!c->flux || !c->work || !c->out)
        return ind_fail(e, "grid buffers: out of memory");
    for (int w = 0; w < nth; w++) {
        c->flux[w] = malloc(c->g.n * sizeof(double));
        c->work[w] = malloc(2 * c->g.n * sizeof(double));
        c->out[w] = malloc(c->g.n * sizeof(float));
        if (!c->flux[w] || !c->work[w] || !c->out[w])
            return ind_fail(e, "grid buffers: out of memory");
    }
    return 0;
}

int ind_grid_write(const char *dir, const ind_preset *ps, uint64_t seed,
                   int nthreads, ind_err *e)
{
    ind_linelist ll;
    if (ind_linelist_build(seed, &ll, e))
        return -1;
    grid_ctx c = {.dir = dir, .ps = ps, .ll = &ll};
    c.nt = nodes(ps->t0, ps->t1, ps->tstep);
    c.ng = nodes(ps->g0, ps->g1, ps->gstep);
    c.nf = nodes(ps->f0, ps->f1, ps->fstep);
    c.na = nodes(ps->a0, ps->a1, ps->astep);
    pthread_mutex_init(&c.io, NULL);
    int rc = ind_hgrid_make(&c.g, ps->lam_lo, ps->lam_hi, ps->dlnl, e);
    if (!rc)
        rc = alloc_buffers(&c, nthreads, e);
    if (!rc)
        rc = make_dirs(&c, e);
    if (!rc)
        rc = write_wave(dir, &c.g, e);
    if (!rc)
        rc = ind_parallel((size_t)c.nt * c.ng * c.nf * c.na, nthreads,
                          model_task, &c, e);
    free_buffers(&c, nthreads);
    ind_hgrid_free(&c.g);
    ind_linelist_free(&ll);
    pthread_mutex_destroy(&c.io);
    return rc;
}
