/* rvspecfit_import.c — rvfit_templates_from_rvspecfit: a library from
 * rvspecfit's specs_{setup}.h5 files (rvfit/rvspecfit.h,
 * docs/template-library.md "Importing rvspecfit templates").
 *
 * One file per arm, all open at once: their parameters must be the same
 * models (in any order); the first file's values make the axes.  Each
 * file's lam becomes the arm's grid as it is (rvs_make_interpol writes
 * exp(ln lambda0' + i dlnl), so nothing is resampled), each spectrum is
 * exponentiated and divided by its mean over the unpadded pixels. */
#include "rvfit/rvspecfit.h"

#ifdef RVFIT_HAVE_HDF5
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rvfit/library_io.h"
#include "rvfit/physics.h"
#include "rvspecfit_h5.h"
#include "rvspecfit_lsf.h"
#include "tools_library.h"

#define RVS_PAD_KMS 1000.0 /* rvs_make_interpol's padding (its deltav)   */
#define RVS_NAXIS 4

/* rvspecfit's default parameter names and the library axes they become,
 * in the library's order. */
static const struct {
    const char *rvs, *axis, *unit;
} rvs_axes[RVS_NAXIS] = {{"teff", "TEFF", "K"},
                         {"logg", "LOGG", "dex"},
                         {"feh", "FEH", "dex"},
                         {"alpha", "ALPHAFE", "dex"}};

typedef struct rvs_imp {
    int narm;
    rvs_file f[RVFIT_MAX_ARMS];
    char setup[RVFIT_MAX_ARMS][64];
    rvs_lsf lsf[RVFIT_MAX_ARMS];
    size_t *model_of[RVFIT_MAX_ARMS]; /* [nspec] library model index     */
    size_t p_lo[RVFIT_MAX_ARMS], p_hi[RVFIT_MAX_ARMS]; /* unpadded pixels */
    double step[RVFIT_MAX_ARMS];      /* pixel at mid-arm, Angstrom        */
    int axis_of[RVS_NAXIS];           /* library axis of rvs_axes[k], -1   */
    rvfit_library lib;
} rvs_imp;

static int axis_index(const char *name)
{
    for (int k = 0; k < RVS_NAXIS; k++)
        if (!strcasecmp(name, rvs_axes[k].rvs) ||
            !strcasecmp(name, rvs_axes[k].axis))
            return k;
    return -1;
}

/* Column of file f holding rvs_axes[k], -1 if none. */
static int file_col(const rvs_file *f, int k)
{
    for (int c = 0; c < f->npar; c++)
        if (axis_index(f->parname[c]) == k)
            return c;
    return -1;
}

/* The library's axes from the first file: its named parameters in the
 * library's order, log10 where rvspecfit interpolates in log10. */
static int imp_axes(rvs_imp *m, rvfit_err *err)
{
    const rvs_file *f = &m->f[0];
    int seen[RVS_NAXIS] = {0};
    for (int c = 0; c < f->npar; c++) {
        int k = axis_index(f->parname[c]);
        if (k < 0 || seen[k]++)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset "
                                 "'parnames': '%s' is %s", f->path,
                                 f->parname[c], k < 0 ? "not teff, logg, "
                                 "feh or alpha" : "there twice");
    }
    double *tmp = malloc(f->nspec * sizeof *tmp);
    if (!tmp)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
    int st = RVFIT_OK;
    rvfit_library *lib = &m->lib;
    for (int k = 0; k < RVS_NAXIS && !st; k++) {
        int c = file_col(f, k);
        m->axis_of[k] = c < 0 ? -1 : lib->nparam;
        if (c < 0)
            continue;
        const double *v = f->vec + (size_t)c * f->nspec;
        int lg = f->logpar[c];
        for (size_t j = 0; lg && j < f->nspec && !st; j++)
            if (!(v[j] > 0))
                st = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset "
                                   "'vec': %s = %g of model %zu, but "
                                   "rvspecfit takes its log10", f->path,
                                   f->parname[c], v[j], j);
        if (!st)
            st = tools_axis(&lib->axis[lib->nparam++], rvs_axes[k].axis,
                            rvs_axes[k].unit,
                            lg ? RVFIT_SCALE_LOG10 : RVFIT_SCALE_LINEAR, v,
                            f->nspec, tmp, err);
    }
    free(tmp);
    lib->nmodel = 1;
    for (int p = 0; p < lib->nparam; p++)
        lib->nmodel *= (size_t)lib->axis[p].nnode;
    if (!st && !(lib->exists = calloc(lib->nmodel, 1)))
        st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
    return st;
}

/* Library model index of every spectrum of file a; the first file sets
 * EXISTS, the others must hold the same models. */
static int imp_models(rvs_imp *m, int a, uint8_t *seen, rvfit_err *err)
{
    const rvs_file *f = &m->f[a];
    rvfit_library *lib = &m->lib;
    int col[RVS_NAXIS];
    for (int k = 0; k < RVS_NAXIS; k++)
        if (((col[k] = file_col(f, k)) < 0) != (m->axis_of[k] < 0) ||
            f->npar != m->f[0].npar)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset "
                                 "'parnames': not the parameters of %s",
                                 f->path, m->f[0].path);
    if (f->nspec != m->f[0].nspec)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset 'vec': %zu"
                             " models, %s has %zu", f->path, f->nspec,
                             m->f[0].path, m->f[0].nspec);
    if (!(m->model_of[a] = malloc(f->nspec * sizeof(size_t))))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
    memset(seen, 0, lib->nmodel);
    for (size_t j = 0; j < f->nspec; j++) {
        size_t idx = 0;
        for (int k = 0; k < RVS_NAXIS; k++) {
            if (col[k] < 0)
                continue;
            const rvfit_axis *ax = &lib->axis[m->axis_of[k]];
            int i = tools_axis_find(ax, f->vec[(size_t)col[k] * f->nspec + j]);
            if (i < 0)
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset "
                                     "'vec': model %zu (%s = %g) is not a "
                                     "model of %s", f->path, j,
                                     f->parname[col[k]],
                                     f->vec[(size_t)col[k] * f->nspec + j],
                                     m->f[0].path);
            idx = idx * (size_t)ax->nnode + (size_t)i;
        }
        if (seen[idx] || (a > 0 && !lib->exists[idx]))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset 'vec':"
                                 " model %zu has %s", f->path, j,
                                 seen[idx] ? "the parameters of another"
                                           : "parameters not in the first "
                                             "file");
        seen[idx] = 1;
        lib->exists[idx] = 1;
        m->model_of[a][j] = idx;
    }
    return RVFIT_OK;
}

/* Arm a's grid: rvspecfit's lam, which must be uniform in ln lambda and
 * cover the centre of the instrument's arm beyond the padding. */
static int imp_grid(rvs_imp *m, int a, const rvfit_template_arm *arm,
                    rvfit_err *err)
{
    const rvs_file *f = &m->f[a];
    rvfit_lib_arm *la = &m->lib.arm[a];
    size_t n = f->nlam;
    if (f->log_step == 0)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset 'lam': "
                             "linear in wavelength (rvs_make_interpol "
                             "--no-log); library arms are uniform in ln "
                             "lambda", f->path);
    double l0 = log(f->lam[0]);
    double dl = (log(f->lam[n - 1]) - l0) / (double)(n - 1);
    for (size_t i = 0; i < n; i++) {
        double off = (log(f->lam[i]) - l0) / dl - (double)i;
        if (fabs(off) > 1e-3)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset 'lam':"
                                 " not uniform in ln lambda (pixel %zu is "
                                 "%.3g pixels off)", f->path, i, off);
    }
    snprintf(la->name, sizeof la->name, "%s", arm->name);
    la->lnl0 = l0;
    la->dlnl = dl;
    la->npix = n;
    double pad = log1p(RVS_PAD_KMS / RVFIT_C_KMS);
    size_t np = (size_t)ceil(pad / dl - 1e-6);
    if (2 * np + 4 > n)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset 'lam': %zu"
                             " pixels, not more than rvspecfit's %g km/s "
                             "padding", f->path, n, RVS_PAD_KMS);
    m->p_lo[a] = np;
    m->p_hi[a] = n - 1 - np;
    double lo = f->lam[0] * exp(pad), hi = f->lam[n - 1] * exp(-pad);
    double mid = 0.5 * (arm->lam_min + arm->lam_max);
    if (!(mid >= lo && mid <= hi))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: dataset 'lam': "
                             "%.1f-%.1f A does not reach the centre %.1f A "
                             "of arm %s: another arm's setup?", f->path, lo,
                             hi, mid, arm->name);
    m->step[a] = 0.5 * (lo + hi) * expm1(dl);
    return RVFIT_OK;
}

/* Every spectrum of arm a: flux (exp of ln flux), unit mean over the
 * unpadded pixels. */
static int imp_flux(rvs_imp *m, int a, rvfit_err *err)
{
    rvs_file *f = &m->f[a];
    rvfit_lib_arm *la = &m->lib.arm[a];
    float *row = malloc(f->nlam * sizeof *row);
    double *val = malloc(f->nlam * sizeof *val);
    int st = row && val ? RVFIT_OK
                        : rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
    for (size_t j = 0; j < f->nspec && !st; j++) {
        if ((st = rvs_row(f, j, row, err)))
            break;
        double sum = 0;
        for (size_t p = 0; p < f->nlam; p++) {
            val[p] = f->log_spec ? exp((double)row[p]) : (double)row[p];
            if (p >= m->p_lo[a] && p <= m->p_hi[a])
                sum += val[p];
        }
        double mean = sum / (double)(m->p_hi[a] - m->p_lo[a] + 1);
        if (!(mean > 0) || !isfinite(mean)) {
            st = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset 'specs':"
                               " spectrum %zu has mean flux %g", f->path, j,
                               mean);
            break;
        }
        float *out = la->flux + m->model_of[a][j] * la->npix;
        for (size_t p = 0; p < f->nlam; p++)
            out[p] = (float)(val[p] / mean);
    }
    free(row);
    free(val);
    return st;
}

/* SIGMA0 and per-arm SIGMAV from the files' LSFs (or sigma0 > 0 given):
 * arms smoothed in Angstrom share the library's one SIGMA0. */
static int imp_lsf(rvs_imp *m, double sigma0, rvfit_err *err)
{
    double sa = sigma0 > 0 ? sigma0 : -1, step = 0;
    int ia = -1;
    for (int a = 0; a < m->narm; a++) {
        const rvs_lsf *l = &m->lsf[a];
        const char *p = m->f[a].path;
        step = fmax(step, m->step[a]);
        if (l->air)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset "
                                 "'cmdline': made with --air (air "
                                 "wavelengths); rvfit libraries are in "
                                 "vacuum", p);
        if (sigma0 > 0)
            continue;
        if (l->kind == RVS_LSF_UNKNOWN)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: dataset "
                                 "'cmdline': the templates' resolution is "
                                 "unknown (%s); give --sigma0, the Gaussian"
                                 " sigma in Angstrom they were smoothed "
                                 "with", p, l->how);
        if (l->kind == RVS_LSF_KMS) {
            m->lib.arm[a].sigma_kms = l->sigma;
            continue;
        }
        if (sa > 0 && fabs(l->sigma - sa) > 1e-3 * sa)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s (sigma %.4g A)"
                                 " and %s (sigma %.4g A) are smoothed "
                                 "differently in Angstrom, and a library has"
                                 " one SIGMA0 for such arms: give --sigma0 "
                                 "to use one for all", m->f[ia].path, sa, p,
                                 l->sigma);
        sa = l->sigma, ia = a;
    }
    sa = sa > 0 ? sa : 0;
    /* pixel response included, as rvfit_templates_build records it */
    m->lib.sigma0 = sqrt(sa * sa + step * step / 12.0);
    return RVFIT_OK;
}

/* Printable ASCII only (FITS keywords); anything else becomes '?'. */
static void ascii(char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e)
            *s = '?';
}

/* SOURCE: "rvspecfit <git_rev>, revision <rev or none>: B=desi_b, ...;
 * teff=TEFF (log10), ...; <dir>" (truncated at 255 characters, the
 * directory last). */
static void imp_source(rvs_imp *m, const char *dir)
{
    char setups[160] = "", pars[128] = "";
    size_t k = 0;
    for (int a = 0; a < m->narm; a++)
        k += (size_t)snprintf(setups + k, k < sizeof setups ? sizeof setups - k
                                                          : 0,
                              "%s%s=%s", a ? ", " : "", m->lib.arm[a].name,
                              m->setup[a]);
    k = 0;
    const rvs_file *f = &m->f[0];
    for (int c = 0; c < f->npar && k < sizeof pars; c++) {
        int i = m->axis_of[axis_index(f->parname[c])];
        const rvfit_axis *ax = &m->lib.axis[i];
        k += (size_t)snprintf(pars + k, sizeof pars - k, "%s%s=%s%s",
                              c ? ", " : "", f->parname[c], ax->name,
                              ax->scale == RVFIT_SCALE_LOG10 ? " (log10)"
                                                             : "");
    }
    int mixed = 0;
    for (int a = 1; a < m->narm; a++)
        mixed |= strcmp(m->f[a].git_rev, f->git_rev) ||
                 strcmp(m->f[a].revision, f->revision);
    snprintf(m->lib.source, sizeof m->lib.source, "rvspecfit %s, revision "
             "%s%s: %s; %s; %s", f->git_rev[0] ? f->git_rev : "?",
             f->revision[0] ? f->revision : "none",
             mixed ? " (first setup; others differ)" : "", setups, pars,
             dir);
    ascii(m->lib.source);
}

static void imp_info(const rvs_imp *m, const rvfit_rvspecfit_opts *o,
                     const char *kind)
{
    rvfit_rvspecfit_info *in = o->info;
    if (!in)
        return;
    memset(in, 0, sizeof *in);
    in->nspec = m->f[0].nspec;
    in->nmodel = m->lib.nmodel;
    snprintf(in->kind, sizeof in->kind, "%s", kind);
    snprintf(in->source, sizeof in->source, "%s", m->lib.source);
    for (int a = 0; a < m->narm; a++) {
        const rvs_file *f = &m->f[a];
        const rvfit_lib_arm *la = &m->lib.arm[a];
        const rvs_lsf *l = &m->lsf[a];
        char lsf[96];
        if (la->sigma_kms > 0)
            snprintf(lsf, sizeof lsf, "sigma %.4g km/s", la->sigma_kms);
        else
            snprintf(lsf, sizeof lsf, "sigma %.4g A", o->sigma0 > 0
                                                        ? o->sigma0
                                                        : l->sigma);
        snprintf(in->arm[a], sizeof in->arm[a], "%s <- %s: %zu pixels "
                 "%.1f-%.1f A, dlnl %.4g, %s; LSF %s (%s)", la->name,
                 m->setup[a], f->nlam, f->lam[0], f->lam[f->nlam - 1],
                 la->dlnl, f->log_spec ? "ln flux" : "flux", lsf,
                 o->sigma0 > 0 ? "--sigma0" : l->how);
    }
}

/* Open every arm's file and check it against the first. */
static int imp_open(rvs_imp *m, const char *dir, int narm,
                    const rvfit_template_arm *arms, const char *instrument,
                    const rvfit_rvspecfit_opts *o, rvfit_err *err)
{
    int st = RVFIT_OK;
    uint8_t *seen = NULL;
    m->narm = m->lib.narm = narm;
    for (int a = 0; a < narm && !st; a++) {
        if (o->setup[a] && o->setup[a][0])
            snprintf(m->setup[a], sizeof m->setup[a], "%s", o->setup[a]);
        else
            snprintf(m->setup[a], sizeof m->setup[a], "%s_%s", instrument,
                     arms[a].name);
        for (char *c = m->setup[a]; !(o->setup[a] && o->setup[a][0]) && *c;
             c++)
            *c = (char)tolower((unsigned char)*c);
        char path[4096];
        snprintf(path, sizeof path, "%s/specs_%s.h5", dir, m->setup[a]);
        st = rvs_open(path, &m->f[a], err);
        if (!st && a == 0)
            st = imp_axes(m, err);
        if (!st && a == 0 && !(seen = malloc(m->lib.nmodel)))
            st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
        if (!st)
            st = imp_models(m, a, seen, err);
        if (!st)
            st = imp_grid(m, a, &arms[a], err);
        if (!st)
            rvs_lsf_parse(m->f[a].cmdline, &m->lsf[a]);
    }
    free(seen);
    return st;
}

int rvfit_rvspecfit_available(void)
{
    return 1;
}

int rvfit_templates_from_rvspecfit(const char *dir, int narm,
                                   const rvfit_template_arm *arms,
                                   const char *instrument,
                                   const rvfit_rvspecfit_opts *o,
                                   const char *outdir, rvfit_err *err)
{
    if (!dir || !arms || !o || !outdir || !instrument || narm < 1 ||
        narm > RVFIT_MAX_ARMS)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "templates from "
                             "rvspecfit: need a directory, 1..%d arms, "
                             "options and an output directory",
                             RVFIT_MAX_ARMS);
    rvs_imp *m = calloc(1, sizeof *m);
    if (!m)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory");
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        m->f[a].fid = m->f[a].did = -1;
    int st = imp_open(m, dir, narm, arms, instrument, o, err);
    if (!st)
        st = imp_lsf(m, o->sigma0, err);
    if (!st)
        st = tools_alloc_flux(&m->lib, err);
    for (int a = 0; a < narm && !st; a++)
        st = imp_flux(m, a, err);
    rvfit_templates_opts b = o->build;
    size_t nholes = m->lib.nmodel - m->f[0].nspec;
    if (!b.interpolator)
        b.interpolator = nholes ? "simplex" : "multilinear";
    if (b.log_flux < 0)
        b.log_flux = 1;
    if (!st) {
        m->lib.vmax = RVS_PAD_KMS;
        snprintf(m->lib.instrument, sizeof m->lib.instrument, "%s",
                 instrument);
        imp_source(m, dir);
        imp_info(m, o, b.interpolator);
        st = tools_library_finish(&m->lib, &b, outdir, err);
    }
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        rvs_close(&m->f[a]);
        free(m->model_of[a]);
    }
    rvfit_library_free(&m->lib);
    free(m);
    if (st)
        rvfit_err_prefix(err, "templates from rvspecfit %s", dir);
    return st;
}
#else
int rvfit_rvspecfit_available(void)
{
    return 0;
}

int rvfit_templates_from_rvspecfit(const char *dir, int narm,
                                   const rvfit_template_arm *arms,
                                   const char *instrument,
                                   const rvfit_rvspecfit_opts *o,
                                   const char *outdir, rvfit_err *err)
{
    (void)narm, (void)arms, (void)instrument, (void)o, (void)outdir;
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "templates from "
                         "rvspecfit %s: unavailable, rvfit was built without"
                         " HDF5 (install libhdf5-dev and rebuild)",
                         dir ? dir : "");
}
#endif
