/* ocl_data.c — uploads of the resident data: the template library (float
 * fluxes of every arm in one buffer, axes, holes) and the spectra batch
 * (sanitised flux/ivar, band matrices, template pixel coordinates of the
 * data pixels and continuum basis tables, in the device's real type).
 * Host-side preparation mirrors plugins/cpu/cpu_batch.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"
#include "rvfit/physics.h"

void ocl_free_library(ocl_state *st)
{
    ocl_release(&st->ax_n);
    ocl_release(&st->ax_node);
    ocl_release(&st->exists);
    ocl_release(&st->lib_flux);
    st->have_lib = 0;
}

void ocl_free_batch(ocl_state *st)
{
    ocl_release(&st->ai);
    ocl_release(&st->ad);
    ocl_release(&st->pos);
    ocl_release(&st->flux);
    ocl_release(&st->ivar);
    ocl_release(&st->res);
    ocl_release(&st->basis);
    ocl_release(&st->nuse);
    st->have_batch = 0;
}

static int ocl_check_library(const rvfit_library *lib, rvfit_err *err)
{
    if (lib->nparam < 0 || lib->nparam > RVFIT_MAX_PARAMS || lib->narm < 1 ||
        lib->narm > RVFIT_MAX_ARMS || lib->nmodel < 1)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "library: nparam %d, narm %d, nmodel %zu out of "
                             "range", lib->nparam, lib->narm, lib->nmodel);
    size_t nm = 1;
    for (int p = 0; p < lib->nparam; p++) {
        if (lib->axis[p].nnode < 1 || lib->axis[p].nnode > RVFIT_MAX_NODES)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "library: axis %s has %d nodes",
                                 lib->axis[p].name, lib->axis[p].nnode);
        nm *= (size_t)lib->axis[p].nnode;
    }
    if (nm != lib->nmodel || nm > 0x7fffffff)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "library: nmodel %zu != product of axis nodes "
                             "%zu (or too large)", lib->nmodel, nm);
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *la = &lib->arm[a];
        if (la->npix < 4 || la->npix > 0x7fffffff || !(la->dlnl > 0.0) ||
            !la->flux)
            return rvfit_err_set(err, RVFIT_ERR_INVALID,
                                 "library arm %s: npix %zu, dlnl %g",
                                 la->name, la->npix, la->dlnl);
    }
    return RVFIT_OK;
}

/* Axes (node table in reals) and holes. */
static int ocl_upload_axes(ocl_state *st, const rvfit_library *lib,
                           rvfit_err *err)
{
    int na = lib->nparam > 0 ? lib->nparam : 1;
    cl_int nn[RVFIT_MAX_PARAMS] = {0};
    double *nodes = calloc((size_t)na * RVK_MAX_NODES, sizeof(double));
    void *rn = malloc((size_t)na * RVK_MAX_NODES * sizeof(double));
    uint8_t *ex = malloc(lib->nmodel);
    int rc = RVFIT_ERR_NOMEM;
    if (nodes && rn && ex) {
        for (int p = 0; p < lib->nparam; p++) {
            nn[p] = lib->axis[p].nnode;
            memcpy(nodes + p * RVK_MAX_NODES, lib->axis[p].node,
                   (size_t)nn[p] * sizeof(double));
        }
        ocl_to_real(st, nodes, (size_t)na * RVK_MAX_NODES, rn);
        for (size_t m = 0; m < lib->nmodel; m++)
            ex[m] = lib->exists ? (lib->exists[m] != 0) : 1;
        rc = ocl_upload(st, &st->ax_n, nn, (size_t)na * sizeof(cl_int), err);
        if (rc == RVFIT_OK)
            rc = ocl_upload(st, &st->ax_node, rn,
                            (size_t)na * RVK_MAX_NODES * st->rsz, err);
        if (rc == RVFIT_OK)
            rc = ocl_upload(st, &st->exists, ex, lib->nmodel, err);
    } else {
        rvfit_err_set(err, rc, "library: out of memory");
    }
    free(nodes);
    free(rn);
    free(ex);
    return rc;
}

int ocl_load_library(void *state, const rvfit_library *lib, rvfit_err *err)
{
    ocl_state *st = state;
    /* Data pixel coordinates depend on the library: reload the batch. */
    ocl_free_batch(st);
    ocl_free_library(st);
    int rc = ocl_check_library(lib, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload_axes(st, lib, err);
    if (rc != RVFIT_OK)
        return rc;
    size_t total = 0;
    for (int a = 0; a < lib->narm; a++) {
        st->lfoff[a] = total;
        total += lib->nmodel * lib->arm[a].npix;
    }
    cl_int e;
    st->lib_flux = clCreateBuffer(st->ctx, CL_MEM_READ_ONLY,
                                  total * sizeof(float), NULL, &e);
    for (int a = 0; a < lib->narm && e == CL_SUCCESS; a++)
        e = clEnqueueWriteBuffer(st->q, st->lib_flux, CL_TRUE,
                                 st->lfoff[a] * sizeof(float),
                                 lib->nmodel * lib->arm[a].npix * sizeof(float),
                                 lib->arm[a].flux, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        ocl_free_library(st);
        ocl_fail(err, "clEnqueueWriteBuffer", e);
        rvfit_err_prefix(err, "library fluxes (%zu MiB)",
                         total * sizeof(float) >> 20);
        return RVFIT_ERR_DEVICE;
    }
    st->meta = *lib;
    st->meta.exists = NULL;
    for (int a = 0; a < lib->narm; a++)
        st->meta.arm[a].flux = NULL;
    st->nparam = lib->nparam;
    st->nmodel = lib->nmodel;
    st->have_lib = 1;
    rvfit_log(st->host, RVFIT_LOG_DEBUG, "opencl",
              "library: %zu models, %d arms, %zu MiB on the device",
              lib->nmodel, lib->narm, total * sizeof(float) >> 20);
    return RVFIT_OK;
}

static int ocl_check_arm(const ocl_state *st, const rvfit_arm_batch *ba,
                         int *la, rvfit_err *err)
{
    *la = rvfit_library_arm(&st->meta, ba->name);
    if (*la < 0)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "batch arm '%.16s' is not in the library",
                             ba->name);
    if (ba->res_kind == RVFIT_RES_LSF)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "arm %.16s: LSF resolution must be converted to a "
                             "band matrix by the core", ba->name);
    if (ba->res_kind == RVFIT_RES_BAND &&
        (ba->ndiag < 1 || ba->ndiag % 2 == 0 || !ba->res))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "arm %.16s: band matrix with ndiag %d", ba->name,
                             ba->ndiag);
    if (ba->npix < 2 || ba->npix > 0x7fffffff || !ba->wave || !ba->flux ||
        !ba->ivar)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "arm %.16s: npix %zu or missing arrays", ba->name,
                             ba->npix);
    return RVFIT_OK;
}

/* Host images of the batch arrays, concatenated over arms. */
typedef struct ocl_img {
    int64_t ai[RVFIT_MAX_ARMS * RVK_AI_N];
    double ad[RVFIT_MAX_ARMS * RVK_AD_N];
    size_t npos, ndata, nres, nbas;
    double *pos, *basis;
    float *flux, *ivar, *res;
    cl_int *nuse;
} ocl_img;

/* Template coordinates and basis of one wavelength row (cpu_wave_row). */
static void ocl_wave_row(const rvfit_lib_arm *la, const rvfit_model_opts *mo,
                         size_t n, const double *wave, double *u, double *B)
{
    double lf = wave[0], ll = wave[n - 1];
    double b[RVFIT_MAX_POLY];
    for (size_t i = 0; i < n; i++) {
        u[i] = (log(wave[i]) - la->lnl0) / la->dlnl;
        double x = ll > lf ? (2.0 * wave[i] - (lf + ll)) / (ll - lf) : 0.0;
        rvfit_basis(mo->basis, mo->npoly, x, b);
        for (int k = 0; k < mo->npoly; k++)
            B[(size_t)k * n + i] = b[k];
    }
}

/* Fill arm a of the image (arrays already sized). */
static void ocl_fill_arm(ocl_state *st, const rvfit_batch *bt, int a, int la,
                         const rvfit_model_opts *mo, ocl_img *im)
{
    const rvfit_arm_batch *ba = &bt->arm[a];
    const rvfit_lib_arm *L = &st->meta.arm[la];
    int64_t *ai = im->ai + a * RVK_AI_N;
    size_t n = ba->npix, ns = st->nspec, nw = ba->wave_per_spec ? ns : 1;
    for (size_t w = 0; w < nw; w++)
        ocl_wave_row(L, mo, n, ba->wave + w * n,
                     im->pos + ai[RVK_AI_POFF] + w * n,
                     im->basis + ai[RVK_AI_BOFF] + w * (size_t)mo->npoly * n);
    for (size_t s = 0; s < ns; s++) {
        cl_int nuse = 0;
        for (size_t i = 0; i < n; i++) {
            float f = ba->flux[s * n + i], iv = ba->ivar[s * n + i];
            int ok = iv > 0.0f && isfinite(iv) && isfinite(f);
            im->flux[ai[RVK_AI_DOFF] + s * n + i] = ok ? f : 0.0f;
            im->ivar[ai[RVK_AI_DOFF] + s * n + i] = ok ? iv : 0.0f;
            nuse += ok;
        }
        im->nuse[s * (size_t)bt->narm + (size_t)a] = nuse;
    }
    if (ai[RVK_AI_NDIAG] > 0)
        memcpy(im->res + ai[RVK_AI_ROFF], ba->res,
               ns * (size_t)ba->ndiag * n * sizeof(float));
    im->ad[a * RVK_AD_N + RVK_AD_INVDLNL] = 1.0 / L->dlnl;
}

/* Offsets of every arm; returns RVFIT_OK or the arm check failure. */
static int ocl_layout(ocl_state *st, const rvfit_batch *bt, int *lam,
                      ocl_img *im, rvfit_err *err)
{
    size_t ns = bt->nspec, np = (size_t)st->npoly, tr = 0;
    st->npix_sum = st->npix_max = st->lnpix_max = 0;
    for (int a = 0; a < bt->narm; a++) {
        const rvfit_arm_batch *ba = &bt->arm[a];
        int rc = ocl_check_arm(st, ba, &lam[a], err);
        if (rc != RVFIT_OK)
            return rc;
        size_t n = ba->npix, nw = ba->wave_per_spec ? ns : 1;
        size_t nl = st->meta.arm[lam[a]].npix;
        int nd = ba->res_kind == RVFIT_RES_BAND ? ba->ndiag : 0;
        int64_t *ai = im->ai + a * RVK_AI_N;
        ai[RVK_AI_NPIX] = (int64_t)n;
        ai[RVK_AI_PERSPEC] = ba->wave_per_spec ? 1 : 0;
        ai[RVK_AI_NDIAG] = nd;
        ai[RVK_AI_DOFF] = (int64_t)im->ndata;
        ai[RVK_AI_ROFF] = (int64_t)im->nres;
        ai[RVK_AI_BOFF] = (int64_t)im->nbas;
        ai[RVK_AI_POFF] = (int64_t)im->npos;
        ai[RVK_AI_LNPIX] = (int64_t)nl;
        ai[RVK_AI_LFOFF] = (int64_t)st->lfoff[lam[a]];
        ai[RVK_AI_TROFF] = (int64_t)tr;
        im->ndata += ns * n;
        im->nres += ns * (size_t)nd * n;
        im->nbas += nw * np * n;
        im->npos += nw * n;
        tr += nl;
        st->npix[a] = n;
        st->npix_sum += n;
        if (n > st->npix_max)
            st->npix_max = n;
        if (nl > st->lnpix_max)
            st->lnpix_max = nl;
    }
    st->slot_len = tr;
    return RVFIT_OK;
}

static int ocl_upload_img(ocl_state *st, const ocl_img *im, int narm,
                          size_t ns, rvfit_err *err)
{
    size_t r = st->rsz;
    void *ad = ocl_stage(st, sizeof im->ad);
    if (!ad)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    ocl_to_real(st, im->ad, (size_t)narm * RVK_AD_N, ad);
    int rc = ocl_upload(st, &st->ai, im->ai,
                        (size_t)narm * RVK_AI_N * sizeof(int64_t), err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->ad, ad, (size_t)narm * RVK_AD_N * r, err);
    /* pos and basis were converted in place (ocl_to_real is safe when
     * dst == src for the float case: it reads before it writes). */
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->pos, im->pos, im->npos * r, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->basis, im->basis, im->nbas * r, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->flux, im->flux, im->ndata * sizeof(float), err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->ivar, im->ivar, im->ndata * sizeof(float), err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->res, im->res, im->nres * sizeof(float), err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->nuse, im->nuse,
                        ns * (size_t)narm * sizeof(cl_int), err);
    return rc;
}

int ocl_load_batch(void *state, const rvfit_batch *bt,
                   const rvfit_model_opts *mo, rvfit_err *err)
{
    ocl_state *st = state;
    ocl_free_batch(st);
    if (!st->have_lib)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "load_batch: no library loaded");
    if (mo->npoly < 1 || mo->npoly > RVFIT_MAX_POLY ||
        (mo->basis != RVFIT_BASIS_GAUSS && mo->basis != RVFIT_BASIS_CHEB))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "load_batch: npoly %d or basis %d invalid",
                             mo->npoly, mo->basis);
    if (bt->narm < 1 || bt->narm > RVFIT_MAX_ARMS)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "load_batch: narm %d",
                             bt->narm);
    st->npoly = mo->npoly;
    st->nspec = bt->nspec;
    st->narm = bt->narm;
    ocl_img im;
    memset(&im, 0, sizeof im);
    int lam[RVFIT_MAX_ARMS];
    int rc = ocl_layout(st, bt, lam, &im, err);
    if (rc != RVFIT_OK)
        return rc;
    im.pos = malloc((im.npos + 1) * sizeof(double));
    im.basis = malloc((im.nbas + 1) * sizeof(double));
    im.flux = malloc((im.ndata + 1) * sizeof(float));
    im.ivar = malloc((im.ndata + 1) * sizeof(float));
    im.res = malloc((im.nres + 1) * sizeof(float));
    im.nuse = malloc((st->nspec * (size_t)bt->narm + 1) * sizeof(cl_int));
    if (im.pos && im.basis && im.flux && im.ivar && im.res && im.nuse) {
        for (int a = 0; a < bt->narm; a++)
            ocl_fill_arm(st, bt, a, lam[a], mo, &im);
        ocl_to_real(st, im.pos, im.npos, im.pos);
        ocl_to_real(st, im.basis, im.nbas, im.basis);
        rc = ocl_upload_img(st, &im, bt->narm, st->nspec, err);
    } else {
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "batch: out of memory");
    }
    free(im.pos);
    free(im.basis);
    free(im.flux);
    free(im.ivar);
    free(im.res);
    free(im.nuse);
    if (rc != RVFIT_OK) {
        ocl_free_batch(st);
        return rc;
    }
    st->have_batch = 1;
    return RVFIT_OK;
}
