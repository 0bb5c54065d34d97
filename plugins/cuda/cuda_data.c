/* cuda_data.c — uploads of the resident data to every device: the template
 * library (float fluxes of every arm in one buffer, axes, holes) and the
 * spectra batch (sanitised flux/ivar, band matrices, template pixel
 * coordinates of the data pixels and continuum basis tables, in the
 * device's real type).  The host images are built once and copied to each
 * device; the layout is the OpenCL backend's (plugins/opencl/ocl_data.c),
 * which mirrors plugins/cpu/cpu_batch.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "rvfit/physics.h"

void cuda_free_library(cuda_state *st)
{
    for (int d = 0; d < st->ndev; d++) {
        cuda_dev *dv = &st->dev[d];
        if (cudaSetDevice(dv->ord) != cudaSuccess)
            continue;
        cuda_free(&dv->ax_n);
        cuda_free(&dv->ax_node);
        cuda_free(&dv->exists);
        cuda_free(&dv->lib_flux);
    }
    st->have_lib = 0;
}

void cuda_free_batch(cuda_state *st)
{
    for (int d = 0; d < st->ndev; d++) {
        cuda_dev *dv = &st->dev[d];
        if (cudaSetDevice(dv->ord) != cudaSuccess)
            continue;
        void **p[] = {&dv->ai, &dv->ad, &dv->pos, &dv->flux,
                      &dv->ivar, &dv->res, &dv->basis, &dv->nuse};
        for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
            cuda_free(p[i]);
    }
    st->have_batch = 0;
}

static int cuda_check_library(const rvfit_library *lib, rvfit_err *err)
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

/* Host images of the library: axis sizes, node table (reals), holes. */
typedef struct cuda_limg {
    int32_t nn[RVFIT_MAX_PARAMS];
    size_t na;     /* axes in the tables (>= 1) */
    void *nodes;   /* na * RVK_MAX_NODES reals */
    uint8_t *ex;   /* nmodel */
} cuda_limg;

static int cuda_limg_make(const cuda_state *st, const rvfit_library *lib,
                          cuda_limg *im)
{
    memset(im, 0, sizeof *im);
    im->na = lib->nparam > 0 ? (size_t)lib->nparam : 1;
    double *nodes = calloc(im->na * RVK_MAX_NODES, sizeof(double));
    im->ex = malloc(lib->nmodel);
    if (!nodes || !im->ex) {
        free(nodes);
        free(im->ex);
        return RVFIT_ERR_NOMEM;
    }
    for (int p = 0; p < lib->nparam; p++) {
        im->nn[p] = lib->axis[p].nnode;
        memcpy(nodes + p * RVK_MAX_NODES, lib->axis[p].node,
               (size_t)im->nn[p] * sizeof(double));
    }
    cuda_to_real(st, nodes, im->na * RVK_MAX_NODES, nodes);
    im->nodes = nodes;
    for (size_t m = 0; m < lib->nmodel; m++)
        im->ex[m] = lib->exists ? (lib->exists[m] != 0) : 1;
    return RVFIT_OK;
}

/* Library of one device: axes, holes and the fluxes of every arm. */
static int cuda_dev_library(cuda_state *st, cuda_dev *d,
                            const rvfit_library *lib, const cuda_limg *im,
                            size_t total, rvfit_err *err)
{
    int rc = cuda_use(d, err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ax_n, im->nn, im->na * sizeof(int32_t),
                         "axes", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ax_node, im->nodes,
                         im->na * RVK_MAX_NODES * st->rsz, "axis nodes", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->exists, im->ex, lib->nmodel, "holes", err);
    if (rc != RVFIT_OK)
        return rc;
    cudaError_t e = cudaMalloc(&d->lib_flux, total * sizeof(float));
    if (e != cudaSuccess)
        d->lib_flux = NULL;
    for (int a = 0; a < lib->narm && e == cudaSuccess; a++)
        e = cudaMemcpy((float *)d->lib_flux + st->lfoff[a], lib->arm[a].flux,
                       lib->nmodel * lib->arm[a].npix * sizeof(float),
                       cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        if (e == cudaErrorMemoryAllocation)
            cudaGetLastError();
        cuda_fail(err, d, "cudaMalloc/cudaMemcpy", e);
        rvfit_err_prefix(err, "library fluxes (%zu MiB)",
                         total * sizeof(float) >> 20);
        return RVFIT_ERR_DEVICE;
    }
    return RVFIT_OK;
}

int cuda_load_library(void *state, const rvfit_library *lib, rvfit_err *err)
{
    cuda_state *st = state;
    /* Data pixel coordinates depend on the library: reload the batch. */
    cuda_free_batch(st);
    cuda_free_library(st);
    int rc = cuda_check_library(lib, err);
    if (rc != RVFIT_OK)
        return rc;
    size_t total = 0;
    for (int a = 0; a < lib->narm; a++) {
        st->lfoff[a] = total;
        total += lib->nmodel * lib->arm[a].npix;
    }
    cuda_limg im;
    if (cuda_limg_make(st, lib, &im) != RVFIT_OK)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "library: out of memory");
    for (int d = 0; d < st->ndev && rc == RVFIT_OK; d++)
        rc = cuda_dev_library(st, &st->dev[d], lib, &im, total, err);
    free(im.nodes);
    free(im.ex);
    if (rc != RVFIT_OK) {
        cuda_free_library(st);
        return rc;
    }
    st->meta = *lib;
    st->meta.exists = NULL;
    for (int a = 0; a < lib->narm; a++)
        st->meta.arm[a].flux = NULL;
    st->nparam = lib->nparam;
    st->nmodel = lib->nmodel;
    st->have_lib = 1;
    rvfit_log(st->host, RVFIT_LOG_DEBUG, "cuda",
              "library: %zu models, %d arms, %zu MiB on each of %d device(s)",
              lib->nmodel, lib->narm, total * sizeof(float) >> 20, st->ndev);
    return RVFIT_OK;
}

static int cuda_check_arm(const cuda_state *st, const rvfit_arm_batch *ba,
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
typedef struct cuda_img {
    int64_t ai[RVFIT_MAX_ARMS * RVK_AI_N];
    double ad[RVFIT_MAX_ARMS * RVK_AD_N];
    size_t npos, ndata, nres, nbas;
    double *pos, *basis;
    float *flux, *ivar, *res;
    int32_t *nuse;
} cuda_img;

/* Template coordinates and basis of one wavelength row (cpu_wave_row). */
static void cuda_wave_row(const rvfit_lib_arm *la, const rvfit_model_opts *mo,
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
static void cuda_fill_arm(cuda_state *st, const rvfit_batch *bt, int a, int la,
                          const rvfit_model_opts *mo, cuda_img *im)
{
    const rvfit_arm_batch *ba = &bt->arm[a];
    const rvfit_lib_arm *L = &st->meta.arm[la];
    int64_t *ai = im->ai + a * RVK_AI_N;
    size_t n = ba->npix, ns = st->nspec, nw = ba->wave_per_spec ? ns : 1;
    for (size_t w = 0; w < nw; w++)
        cuda_wave_row(L, mo, n, ba->wave + w * n,
                      im->pos + ai[RVK_AI_POFF] + w * n,
                      im->basis + ai[RVK_AI_BOFF] + w * (size_t)mo->npoly * n);
    for (size_t s = 0; s < ns; s++) {
        int32_t nuse = 0;
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
static int cuda_layout(cuda_state *st, const rvfit_batch *bt, int *lam,
                       cuda_img *im, rvfit_err *err)
{
    size_t ns = bt->nspec, np = (size_t)st->npoly, tr = 0;
    st->npix_sum = st->npix_max = st->lnpix_max = 0;
    for (int a = 0; a < bt->narm; a++) {
        const rvfit_arm_batch *ba = &bt->arm[a];
        int rc = cuda_check_arm(st, ba, &lam[a], err);
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

/* The batch image on one device (pos, basis and ad already in reals). */
static int cuda_dev_batch(const cuda_state *st, cuda_dev *d,
                          const cuda_img *im, const void *ad, rvfit_err *err)
{
    size_t r = st->rsz, narm = (size_t)st->narm;
    int rc = cuda_use(d, err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ai, im->ai, narm * RVK_AI_N * sizeof(int64_t),
                         "arm table", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ad, ad, narm * RVK_AD_N * r, "arm reals", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->pos, im->pos, im->npos * r, "pixel coords",
                         err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->basis, im->basis, im->nbas * r, "basis", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->flux, im->flux, im->ndata * sizeof(float),
                         "flux", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ivar, im->ivar, im->ndata * sizeof(float),
                         "ivar", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->res, im->res, im->nres * sizeof(float),
                         "resolution", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->nuse, im->nuse,
                         st->nspec * narm * sizeof(int32_t), "pixel counts",
                         err);
    return rc;
}

static int cuda_check_opts(const rvfit_batch *bt, const rvfit_model_opts *mo,
                           rvfit_err *err)
{
    if (mo->npoly < 1 || mo->npoly > RVFIT_MAX_POLY ||
        (mo->basis != RVFIT_BASIS_GAUSS && mo->basis != RVFIT_BASIS_CHEB))
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "load_batch: npoly %d or basis %d invalid",
                             mo->npoly, mo->basis);
    if (bt->narm < 1 || bt->narm > RVFIT_MAX_ARMS)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "load_batch: narm %d",
                             bt->narm);
    return RVFIT_OK;
}

static void cuda_set_budgets(cuda_state *st);

int cuda_load_batch(void *state, const rvfit_batch *bt,
                    const rvfit_model_opts *mo, rvfit_err *err)
{
    cuda_state *st = state;
    cuda_free_batch(st);
    if (!st->have_lib)
        return rvfit_err_set(err, RVFIT_ERR_INVALID,
                             "load_batch: no library loaded");
    int rc = cuda_check_opts(bt, mo, err);
    if (rc != RVFIT_OK)
        return rc;
    st->npoly = mo->npoly;
    st->nspec = bt->nspec;
    st->narm = bt->narm;
    cuda_img im;
    memset(&im, 0, sizeof im);
    int lam[RVFIT_MAX_ARMS];
    rc = cuda_layout(st, bt, lam, &im, err);
    if (rc != RVFIT_OK)
        return rc;
    double ad[RVFIT_MAX_ARMS * RVK_AD_N];
    im.pos = malloc((im.npos + 1) * sizeof(double));
    im.basis = malloc((im.nbas + 1) * sizeof(double));
    im.flux = malloc((im.ndata + 1) * sizeof(float));
    im.ivar = malloc((im.ndata + 1) * sizeof(float));
    im.res = malloc((im.nres + 1) * sizeof(float));
    im.nuse = malloc((st->nspec * (size_t)bt->narm + 1) * sizeof(int32_t));
    if (im.pos && im.basis && im.flux && im.ivar && im.res && im.nuse) {
        for (int a = 0; a < bt->narm; a++)
            cuda_fill_arm(st, bt, a, lam[a], mo, &im);
        cuda_to_real(st, im.pos, im.npos, im.pos);
        cuda_to_real(st, im.basis, im.nbas, im.basis);
        cuda_to_real(st, im.ad, (size_t)bt->narm * RVK_AD_N, ad);
        for (int d = 0; d < st->ndev && rc == RVFIT_OK; d++)
            rc = cuda_dev_batch(st, &st->dev[d], &im, ad, err);
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
        cuda_free_batch(st);
        return rc;
    }
    st->have_batch = 1;
    cuda_set_budgets(st);
    return RVFIT_OK;
}

/* Per-call scratch budget of every device: the scratch_mb option, lowered
 * to what cudaMemGetInfo reports free (less a reserve) once the resident
 * data is in place, so chunks are never sized beyond the device. */
static void cuda_set_budgets(cuda_state *st)
{
    cuda_free_call_buffers(st);
    size_t reserve = (size_t)CUDA_RESERVE_MB << 20;
    for (int k = 0; k < st->ndev; k++) {
        cuda_dev *d = &st->dev[k];
        size_t fr = 0, tot = 0;
        if (cudaSetDevice(d->ord) != cudaSuccess ||
            cudaMemGetInfo(&fr, &tot) != cudaSuccess)
            fr = st->scratch_bytes; /* the first allocation will tell */
        size_t avail = fr > 2 * reserve ? fr - reserve : fr / 2;
        d->budget = st->scratch_bytes < avail ? st->scratch_bytes : avail;
        rvfit_log(st->host, RVFIT_LOG_DEBUG, "cuda",
                  "device %d (%s): %zu MiB free of %zu, scratch budget %zu MiB",
                  d->ord, d->name, fr >> 20, tot >> 20, d->budget >> 20);
    }
}
