/* session_batch.c — spectra from the caller's arrays into a batch, then
 * the backend's -2 ln L at given points, or the whole fit and its RVTAB
 * columns (rvfit/session.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"


static void arm_free(sess_arm *A)
{
    free(A->wave), free(A->flux), free(A->ivar), free(A->res);
    memset(A, 0, sizeof *A);
}

void sess_batch_clear(rvfit_session *s)
{
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        arm_free(&s->st[a]);
        free(s->models[a]);
        s->models[a] = NULL;
    }
    if (s->have_b)
        rvfit_batch_free(&s->b);
    free(s->res);
    s->res = NULL;
    s->have_b = s->loaded = s->fitted = 0;
    s->nspec = 0;
    s->narm = 0;
}

int rvfit_session_batch_new(rvfit_session *s, size_t nspec, int narm,
                            rvfit_err *err)
{
    sess_batch_clear(s);
    if (!s->have_lib)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "session: no library open");
    if (nspec == 0 || nspec > UINT32_MAX || narm < 1 ||
        narm > RVFIT_MAX_ARMS)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: a batch of "
                             "%zu spectra in %d arms (1..%d arms, at least "
                             "one spectrum)", nspec, narm, RVFIT_MAX_ARMS);
    s->nspec = nspec;
    s->narm = narm;
    return RVFIT_OK;
}

/* Wavelengths finite and increasing in every row. */
static int check_wave(const char *arm, const double *w, size_t rows,
                      size_t npix, rvfit_err *err)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < npix; i++) {
            double x = w[r * npix + i];
            if (!isfinite(x) || (i && !(x > w[r * npix + i - 1])))
                return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s: "
                                     "spectrum %zu: wavelength %zu (%g) is "
                                     "not finite and increasing", arm,
                                     rows > 1 ? r : 0, i, x);
        }
    return RVFIT_OK;
}

/* The arm's arguments, before anything is copied. */
static int check_arm(const rvfit_session *s, int a, const char *name,
                     size_t npix, int res_kind, int ndiag, const void *res,
                     rvfit_err *err)
{
    if (a < 0 || a >= s->narm)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: arm %d of a "
                             "%d-arm batch", a, s->narm);
    if (!name || rvfit_library_arm(&s->lib, name) < 0)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm '%s' is not in "
                             "the library %s", name ? name : "(null)",
                             s->cfg.templates);
    if (npix < 2)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s: %zu pixels "
                             "(at least 2)", name, npix);
    int band = res_kind == RVFIT_RES_BAND, lsf = res_kind == RVFIT_RES_LSF;
    if (!band && !lsf && res_kind != RVFIT_RES_NONE)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s: resolution "
                             "kind %d", name, res_kind);
    if ((band || lsf) && !res)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s: no resolution "
                             "data", name);
    if (band && (ndiag < 1 || ndiag % 2 == 0))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s: band matrix "
                             "with %d diagonals (odd, >= 1)", name, ndiag);
    return RVFIT_OK;
}

static void *copy_of(const void *p, size_t bytes)
{
    void *q = malloc(bytes ? bytes : 1);
    if (q)
        memcpy(q, p, bytes);
    return q;
}

/* Unusable pixels become ivar 0 (flux 0 where not finite), as the
 * instrument readers do; non-finite band elements become 0. */
static int clean_arm(sess_arm *A, size_t nspec, rvfit_err *err)
{
    size_t np = nspec * A->info.npix;
    for (size_t i = 0; i < np; i++) {
        if (!isfinite(A->flux[i]))
            A->flux[i] = A->ivar[i] = 0.0f;
        else if (!isfinite(A->ivar[i]) || !(A->ivar[i] > 0.0f))
            A->ivar[i] = 0.0f;
    }
    if (A->info.res_kind == RVFIT_RES_BAND)
        for (size_t i = 0; i < np * (size_t)A->info.ndiag; i++)
            if (!isfinite(A->res[i]))
                A->res[i] = 0.0f;
    if (A->info.res_kind == RVFIT_RES_LSF)
        for (size_t i = 0; i < np; i++)
            if (!(A->res[i] >= 0.0f) || !isfinite(A->res[i]))
                return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s: "
                                     "spectrum %zu: LSF sigma %g at pixel "
                                     "%zu (must be finite, >= 0 A)",
                                     A->info.name,
                                     i / A->info.npix, A->res[i],
                                     i % A->info.npix);
    return RVFIT_OK;
}

int rvfit_session_batch_arm(rvfit_session *s, int a, const char *name,
                            size_t npix, int wave_per_spec,
                            const double *wave, const float *flux,
                            const float *ivar, int res_kind, int ndiag,
                            const float *res, rvfit_err *err)
{
    int rc = check_arm(s, a, name, npix, res_kind, ndiag, res, err);
    if (rc)
        return rc;
    size_t ns = s->nspec, rows = wave_per_spec ? ns : 1;
    if (!wave || !flux || !ivar)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "arm %s: wavelength, "
                             "flux and ivar are required", name);
    if ((rc = check_wave(name, wave, rows, npix, err)))
        return rc;
    sess_arm *A = &s->st[a];
    arm_free(A);
    snprintf(A->info.name, sizeof A->info.name, "%s", name);
    A->info.npix = npix;
    A->info.res_kind = res_kind;
    A->info.ndiag = res_kind == RVFIT_RES_BAND ? ndiag : 0;
    A->info.wave_per_spec = wave_per_spec != 0;
    size_t nres = res_kind == RVFIT_RES_BAND  ? ns * npix * (size_t)ndiag
                  : res_kind == RVFIT_RES_LSF ? ns * npix
                                              : 0;
    A->wave = copy_of(wave, rows * npix * sizeof *wave);
    A->flux = copy_of(flux, ns * npix * sizeof *flux);
    A->ivar = copy_of(ivar, ns * npix * sizeof *ivar);
    A->res = nres ? copy_of(res, nres * sizeof *res) : NULL;
    if (!A->wave || !A->flux || !A->ivar || (nres && !A->res)) {
        arm_free(A);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "arm %s: %zu spectra of "
                             "%zu pixels", name, ns, npix);
    }
    if ((rc = clean_arm(A, ns, err)))
        arm_free(A);
    return rc;
}

/* The staged arms into the batch, with S/N, flags and indices. */
static void fill_batch(rvfit_session *s, const double *snr)
{
    rvfit_batch *b = &s->b;
    for (int a = 0; a < s->narm; a++) {
        sess_arm *S = &s->st[a];
        rvfit_arm_batch *A = &b->arm[a];
        size_t np = s->nspec * A->npix;
        memcpy(A->wave, S->wave,
               (A->wave_per_spec ? np : A->npix) * sizeof *A->wave);
        memcpy(A->flux, S->flux, np * sizeof *A->flux);
        memcpy(A->ivar, S->ivar, np * sizeof *A->ivar);
        if (A->res_kind == RVFIT_RES_BAND)
            memcpy(A->res, S->res, np * (size_t)A->ndiag * sizeof *A->res);
        if (A->res_kind == RVFIT_RES_LSF)
            memcpy(A->lsf, S->res, np * sizeof *A->lsf);
    }
    for (size_t i = 0; i < s->nspec; i++) {
        int usable = 0;
        for (int a = 0; a < s->narm; a++) {
            const rvfit_arm_batch *A = &b->arm[a];
            const float *fl = A->flux + i * A->npix;
            const float *iv = A->ivar + i * A->npix;
            for (size_t p = 0; p < A->npix && !usable; p++)
                usable = iv[p] > 0.0f;
            double v = snr ? snr[i * (size_t)s->narm + (size_t)a] : NAN;
            b->snr[i * (size_t)s->narm + (size_t)a] =
                isfinite(v) ? v : rvfit_pixel_snr(fl, iv, A->npix, NULL);
        }
        b->flags[i] = usable ? 0u : RVFIT_SPEC_BAD;
        b->index[i] = i;
    }
    b->nspec = s->nspec;
}

static int alloc_batch(rvfit_session *s, rvfit_err *err)
{
    rvfit_file_info fi;
    memset(&fi, 0, sizeof fi);
    fi.narm = s->narm;
    for (int a = 0; a < s->narm; a++) {
        if (!s->st[a].flux)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: arm %d "
                                 "of the batch not given", a);
        fi.arm[a] = s->st[a].info;
    }
    int rc = rvfit_batch_alloc(&s->b, s->narm, fi.arm, s->nspec, err);
    if (rc)
        return rc;
    s->have_b = 1;
    out_rvtab_columns(&s->cols, &s->lib, &fi);
    return RVFIT_OK;
}

int rvfit_session_batch_load(rvfit_session *s, const double *snr,
                             rvfit_err *err)
{
    if (!s->have_be || s->have_b || s->nspec == 0)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "session: %s",
                             !s->have_be  ? "no backend open"
                             : s->have_b ? "batch already loaded"
                                         : "no batch started");
    int rc = rvfit_fit_opts_from_config(&s->cfg, &s->fo, err);
    s->fo.interp = &s->interp; /* stencils, interpolation errors */
    if (!rc)
        rc = alloc_batch(s, err);
    if (rc)
        return rc;
    fill_batch(s, snr);
    for (int a = 0; a < s->narm; a++)
        arm_free(&s->st[a]);
    if ((rc = rvfit_prep_batch(&s->b, &s->lib, err)))
        return rc;
    rc = s->be.ops->load_batch(s->be.state, &s->b, &s->fo.model, err);
    if (rc)
        rvfit_err_prefix(err, "backend '%s': load_batch", s->be.name);
    s->loaded = rc == RVFIT_OK;
    return rc;
}
