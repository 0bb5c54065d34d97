/* cuda_data.c — uploads of the resident data to every device: the template
 * library (float fluxes of every arm in one buffer, axes, holes) and the
 * spectra batch.  The host images (layouts, sanitised data, pixel tables in
 * the device's real type) are built once by plugins/kernels/rvk_host.c,
 * shared with the OpenCL backend, and copied to each device here. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

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
    st->lib.have = 0;
}

void cuda_free_batch(cuda_state *st)
{
    for (int d = 0; d < st->ndev; d++) {
        cuda_dev *dv = &st->dev[d];
        if (cudaSetDevice(dv->ord) != cudaSuccess)
            continue;
        void **p[] = {&dv->ai, &dv->ad, &dv->pos, &dv->flux,
                      &dv->ivar, &dv->res, &dv->basis, &dv->bplan,
                      &dv->nuse, &dv->fwf};
        for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
            cuda_free(p[i]);
    }
    st->bat.have = 0;
}

/* Library of one device: axes, holes and the fluxes of every arm. */
static int cuda_dev_library(cuda_state *st, cuda_dev *d,
                            const rvfit_library *lib, const rvk_lib_img *im,
                            rvfit_err *err)
{
    size_t total = st->lib.nflux;
    int rc = cuda_use(d, err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ax_n, im->nn,
                         RVK_NN_N(im->na) * sizeof(int32_t), "axes", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ax_node, im->nodes,
                         im->na * RVFIT_MAX_NODES * st->rsz, "axis nodes", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->exists, im->ex, lib->nmodel, "holes", err);
    if (rc != RVFIT_OK)
        return rc;
    cudaError_t e = cudaMalloc(&d->lib_flux, total * sizeof(float));
    if (e != cudaSuccess)
        d->lib_flux = NULL;
    for (int a = 0; a < lib->narm && e == cudaSuccess; a++)
        e = cudaMemcpy((float *)d->lib_flux + st->lib.lfoff[a],
                       lib->arm[a].flux,
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
    rvk_lib_img im;
    int rc = rvk_lib_prepare(lib, st->fp64, &st->lib, &im, err);
    if (rc != RVFIT_OK)
        return rc;
    for (int d = 0; d < st->ndev && rc == RVFIT_OK; d++)
        rc = cuda_dev_library(st, &st->dev[d], lib, &im, err);
    rvk_lib_img_free(&im);
    if (rc != RVFIT_OK) {
        cuda_free_library(st);
        return rc;
    }
    st->lib.have = 1;
    rvfit_log(st->host, RVFIT_LOG_DEBUG, "cuda",
              "library: %zu models, %d arms, %zu MiB on each of %d device(s)",
              lib->nmodel, lib->narm, st->lib.nflux * sizeof(float) >> 20,
              st->ndev);
    return RVFIT_OK;
}

/* Copy bytes from host src into the existing device buffer dst. */
static int cuda_copy_in(const cuda_dev *d, void *dst, const void *src,
                        size_t bytes, const char *what, rvfit_err *err)
{
    cudaError_t e = bytes ? cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)
                          : cudaSuccess;
    if (e == cudaSuccess)
        return RVFIT_OK;
    cuda_fail(err, d, "cudaMemcpy", e);
    rvfit_err_prefix(err, "upload of %s (%zu bytes)", what, bytes);
    return RVFIT_ERR_DEVICE;
}

/* Arm a's band matrices, straight from the batch, into the device's
 * resolution buffer (already allocated). */
static int cuda_upload_res(const cuda_dev *d, const cuda_state *st,
                           const rvk_batch_img *im, int a, rvfit_err *err)
{
    size_t off = (size_t)im->ai[a * RVK_AI_N + RVK_AI_ROFF] * sizeof(float);
    return cuda_copy_in(d, (char *)d->res + off, im->res[a],
                        rvk_res_bytes(im, &st->bat, a), "resolution", err);
}

/* The batch images on one device (pos, basis and ad already in reals). */
static int cuda_dev_batch(const cuda_state *st, cuda_dev *d,
                          const rvk_batch_img *im, rvfit_err *err)
{
    size_t r = st->rsz, narm = (size_t)st->bat.narm;
    int rc = cuda_use(d, err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ai, im->ai, narm * RVK_AI_N * sizeof(int64_t),
                         "arm table", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ad, im->ad, narm * RVK_AD_N * r, "arm reals",
                         err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->pos, im->pos, im->npos * r, "pixel coords",
                         err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->basis, im->basis, im->nbas * r, "basis", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->bplan, im->bplan, im->nplan * sizeof(int32_t),
                         "basis supports", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->flux, im->flux, im->ndata * sizeof(float),
                         "flux", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->ivar, im->ivar, im->ndata * sizeof(float),
                         "ivar", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->res, NULL, im->nres * sizeof(float),
                         "resolution", err);
    for (int a = 0; a < st->bat.narm && rc == RVFIT_OK; a++)
        rc = cuda_upload_res(d, st, im, a, err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->nuse, im->nuse, im->nnuse * sizeof(int32_t),
                         "pixel counts", err);
    if (rc == RVFIT_OK)
        rc = cuda_upload(d, &d->fwf, im->fwf, im->nnuse * r, "data norms",
                         err);
    return rc;
}

int cuda_update_data(void *state, const rvfit_batch *bt, rvfit_err *err)
{
    cuda_state *st = state;
    const rvk_batch_img *im = &st->img;
    int rc = rvk_batch_update(&st->bat, bt, st->fp64, &st->img, err);
    if (rc != RVFIT_OK)
        return rc;
    for (int k = 0; k < st->ndev && rc == RVFIT_OK; k++) {
        cuda_dev *d = &st->dev[k];
        rc = cuda_use(d, err);
        if (rc == RVFIT_OK)
            rc = cuda_copy_in(d, d->flux, im->flux, im->ndata * sizeof(float),
                              "flux", err);
        if (rc == RVFIT_OK)
            rc = cuda_copy_in(d, d->ivar, im->ivar, im->ndata * sizeof(float),
                              "ivar", err);
        if (rc == RVFIT_OK)
            rc = cuda_copy_in(d, d->nuse, im->nuse,
                              im->nnuse * sizeof(int32_t), "pixel counts", err);
        if (rc == RVFIT_OK)
            rc = cuda_copy_in(d, d->fwf, im->fwf, im->nnuse * st->rsz,
                              "data norms", err);
    }
    if (rc != RVFIT_OK) /* devices may disagree now: no batch at all */
        cuda_free_batch(st);
    return rc;
}

static void cuda_set_budgets(cuda_state *st);

int cuda_load_batch(void *state, const rvfit_batch *bt,
                    const rvfit_model_opts *mo, rvfit_err *err)
{
    cuda_state *st = state;
    cuda_free_batch(st);
    rvk_batch_img *im = &st->img;
    int rc = rvk_batch_prepare(&st->lib, bt, mo, st->fp64, st->host->nthreads,
                               &st->bat, im, err);
    for (int d = 0; d < st->ndev && rc == RVFIT_OK; d++)
        rc = cuda_dev_batch(st, &st->dev[d], im, err);
    if (rc != RVFIT_OK) {
        cuda_free_batch(st);
        return rc;
    }
    st->bat.have = 1;
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
