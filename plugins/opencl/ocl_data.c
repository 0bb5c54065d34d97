/* ocl_data.c — uploads of the resident data: the template library (float
 * fluxes of every arm in one buffer, axes, holes) and the spectra batch.
 * The host images (layouts, sanitised data, pixel tables in the device's
 * real type) are built by plugins/kernels/rvk_host.c, shared with the CUDA
 * backend; only the OpenCL buffers are made here. */
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"

void ocl_free_library(ocl_state *st)
{
    ocl_release(&st->ax_n);
    ocl_release(&st->ax_node);
    ocl_release(&st->exists);
    ocl_release(&st->lib_flux);
    st->lib.have = 0;
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
    ocl_release(&st->bplan);
    ocl_release(&st->fwf);
    st->bat.have = 0;
}

/* Axes (node table in reals), holes and the fluxes of every arm. */
static int ocl_upload_library(ocl_state *st, const rvfit_library *lib,
                              const rvk_lib_img *im, rvfit_err *err)
{
    int rc = ocl_upload(st, &st->ax_n, im->nn,
                        RVK_NN_N(im->na) * sizeof(int32_t), err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->ax_node, im->nodes,
                        im->na * RVFIT_MAX_NODES * st->rsz, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->exists, im->ex, lib->nmodel, err);
    if (rc != RVFIT_OK)
        return rc;
    size_t total = st->lib.nflux;
    cl_int e;
    st->lib_flux = clCreateBuffer(st->ctx, CL_MEM_READ_ONLY,
                                  total * sizeof(float), NULL, &e);
    for (int a = 0; a < lib->narm && e == CL_SUCCESS; a++)
        e = clEnqueueWriteBuffer(st->q, st->lib_flux, CL_TRUE,
                                 st->lib.lfoff[a] * sizeof(float),
                                 lib->nmodel * lib->arm[a].npix * sizeof(float),
                                 lib->arm[a].flux, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        ocl_fail(err, "clEnqueueWriteBuffer", e);
        rvfit_err_prefix(err, "library fluxes (%zu MiB)",
                         total * sizeof(float) >> 20);
        return RVFIT_ERR_DEVICE;
    }
    return RVFIT_OK;
}

int ocl_load_library(void *state, const rvfit_library *lib, rvfit_err *err)
{
    ocl_state *st = state;
    /* Data pixel coordinates depend on the library: reload the batch. */
    ocl_free_batch(st);
    ocl_free_library(st);
    rvk_lib_img im;
    int rc = rvk_lib_prepare(lib, st->fp64, &st->lib, &im, err);
    if (rc != RVFIT_OK)
        return rc;
    rc = ocl_upload_library(st, lib, &im, err);
    rvk_lib_img_free(&im);
    if (rc != RVFIT_OK) {
        ocl_free_library(st);
        return rc;
    }
    st->lib.have = 1;
    rvfit_log(st->host, RVFIT_LOG_DEBUG, "opencl",
              "library: %zu models, %d arms, %zu MiB on the device",
              lib->nmodel, lib->narm, st->lib.nflux * sizeof(float) >> 20);
    return RVFIT_OK;
}

/* The band matrices of every arm, straight from the batch, into one
 * buffer (arm a at ai[RVK_AI_ROFF]). */
static int ocl_upload_res(ocl_state *st, const rvk_batch_img *im,
                          rvfit_err *err)
{
    ocl_release(&st->res);
    cl_int e;
    size_t total = im->nres ? im->nres * sizeof(float) : 16;
    st->res = clCreateBuffer(st->ctx, CL_MEM_READ_ONLY, total, NULL, &e);
    for (int a = 0; a < st->bat.narm && e == CL_SUCCESS; a++) {
        size_t n = rvk_res_bytes(im, &st->bat, a);
        size_t off = (size_t)im->ai[a * RVK_AI_N + RVK_AI_ROFF] * sizeof(float);
        if (n)
            e = clEnqueueWriteBuffer(st->q, st->res, CL_TRUE, off, n,
                                     im->res[a], 0, NULL, NULL);
    }
    if (e == CL_SUCCESS)
        return RVFIT_OK;
    ocl_release(&st->res);
    ocl_fail(err, "clCreateBuffer/clEnqueueWriteBuffer", e);
    rvfit_err_prefix(err, "resolution (%zu MiB)", total >> 20);
    return RVFIT_ERR_DEVICE;
}

static int ocl_upload_batch(ocl_state *st, const rvk_batch_img *im,
                            rvfit_err *err)
{
    size_t r = st->rsz, narm = (size_t)st->bat.narm;
    int rc = ocl_upload(st, &st->ai, im->ai,
                        narm * RVK_AI_N * sizeof(int64_t), err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->ad, im->ad, narm * RVK_AD_N * r, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->pos, im->pos, im->npos * r, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->basis, im->basis, im->nbas * r, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->bplan, im->bplan, im->nplan * sizeof(int32_t),
                        err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->flux, im->flux, im->ndata * sizeof(float),
                        err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->ivar, im->ivar, im->ndata * sizeof(float),
                        err);
    if (rc == RVFIT_OK)
        rc = ocl_upload_res(st, im, err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->nuse, im->nuse, im->nnuse * sizeof(int32_t),
                        err);
    if (rc == RVFIT_OK)
        rc = ocl_upload(st, &st->fwf, im->fwf, im->nnuse * r, err);
    return rc;
}

int ocl_load_batch(void *state, const rvfit_batch *bt,
                   const rvfit_model_opts *mo, rvfit_err *err)
{
    ocl_state *st = state;
    ocl_free_batch(st);
    rvk_batch_img *im = &st->img;
    int rc = rvk_batch_prepare(&st->lib, bt, mo, st->fp64, st->host->nthreads,
                               &st->bat, im, err);
    if (rc != RVFIT_OK)
        return rc;
    rc = ocl_upload_batch(st, im, err);
    if (rc != RVFIT_OK) {
        ocl_free_batch(st);
        return rc;
    }
    st->bat.have = 1;
    return RVFIT_OK;
}

/* Copy bytes from host src into the existing buffer b (blocking). */
static int ocl_copy_in(ocl_state *st, cl_mem b, const void *src, size_t bytes,
                       const char *what, rvfit_err *err)
{
    cl_int e = bytes ? clEnqueueWriteBuffer(st->q, b, CL_TRUE, 0, bytes, src, 0,
                                            NULL, NULL)
                     : CL_SUCCESS;
    if (e == CL_SUCCESS)
        return RVFIT_OK;
    ocl_fail(err, "clEnqueueWriteBuffer", e);
    rvfit_err_prefix(err, "update of %s (%zu bytes)", what, bytes);
    return RVFIT_ERR_DEVICE;
}

int ocl_update_data(void *state, const rvfit_batch *bt, rvfit_err *err)
{
    ocl_state *st = state;
    const rvk_batch_img *im = &st->img;
    int rc = rvk_batch_update(&st->bat, bt, st->fp64, &st->img, err);
    if (rc != RVFIT_OK)
        return rc;
    rc = ocl_copy_in(st, st->flux, im->flux, im->ndata * sizeof(float), "flux",
                     err);
    if (rc == RVFIT_OK)
        rc = ocl_copy_in(st, st->ivar, im->ivar, im->ndata * sizeof(float),
                         "ivar", err);
    if (rc == RVFIT_OK)
        rc = ocl_copy_in(st, st->nuse, im->nuse, im->nnuse * sizeof(int32_t),
                         "pixel counts", err);
    if (rc == RVFIT_OK)
        rc = ocl_copy_in(st, st->fwf, im->fwf, im->nnuse * st->rsz,
                         "data norms", err);
    if (rc != RVFIT_OK)
        ocl_free_batch(st);
    return rc;
}
