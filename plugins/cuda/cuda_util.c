/* cuda_util.c — CUDA error messages and buffer helpers (host<->device real
 * conversion is rvk_to_real and friends, plugins/kernels/rvk_host.h). */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

int cuda_fail(rvfit_err *err, const cuda_dev *d, const char *what,
              cudaError_t e)
{
    if (d)
        return rvfit_err_set(err, RVFIT_ERR_DEVICE,
                             "device %d (%s): %s: %s: %s", d->ord, d->name,
                             what, cudaGetErrorName(e), cudaGetErrorString(e));
    return rvfit_err_set(err, RVFIT_ERR_DEVICE, "%s: %s: %s", what,
                         cudaGetErrorName(e), cudaGetErrorString(e));
}

int cuda_use(const cuda_dev *d, rvfit_err *err)
{
    cudaError_t e = cudaSetDevice(d->ord);
    return e == cudaSuccess ? RVFIT_OK : cuda_fail(err, d, "cudaSetDevice", e);
}

/* Grow b in device memory, or in pinned host memory when pinned != 0. */
static cudaError_t cuda_grow_in(cuda_buf *b, size_t bytes, int pinned)
{
    if (bytes == 0)
        bytes = 16;
    if (b->p && b->n >= bytes)
        return cudaSuccess;
    if (pinned)
        cuda_buf_free_host(b);
    else
        cuda_buf_free(b);
    cudaError_t e = pinned ? cudaMallocHost(&b->p, bytes)
                           : cudaMalloc(&b->p, bytes);
    if (e != cudaSuccess) {
        b->p = NULL;
        if (e == cudaErrorMemoryAllocation)
            cudaGetLastError(); /* not sticky: clear it for the retry */
        return e;
    }
    b->n = bytes;
    return cudaSuccess;
}

cudaError_t cuda_grow(cuda_buf *b, size_t bytes)
{
    return cuda_grow_in(b, bytes, 0);
}

cudaError_t cuda_grow_host(cuda_buf *b, size_t bytes)
{
    return cuda_grow_in(b, bytes, 1);
}

void cuda_buf_free(cuda_buf *b)
{
    if (b->p)
        cudaFree(b->p);
    b->p = NULL;
    b->n = 0;
}

void cuda_buf_free_host(cuda_buf *b)
{
    if (b->p)
        cudaFreeHost(b->p);
    b->p = NULL;
    b->n = 0;
}

void cuda_free(void **p)
{
    if (*p)
        cudaFree(*p);
    *p = NULL;
}

int cuda_upload(const cuda_dev *d, void **dst, const void *src, size_t bytes,
                const char *what, rvfit_err *err)
{
    cuda_free(dst);
    /* Empty arrays still get a valid pointer (kernels may receive it). */
    size_t n = bytes ? bytes : 16;
    cudaError_t e = cudaMalloc(dst, n);
    if (e == cudaSuccess && bytes && src)
        e = cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        if (e == cudaErrorMemoryAllocation)
            cudaGetLastError();
        cuda_free(dst);
        cuda_fail(err, d, "cudaMalloc/cudaMemcpy", e);
        rvfit_err_prefix(err, "upload of %s (%zu bytes)", what, bytes);
        return RVFIT_ERR_DEVICE;
    }
    return RVFIT_OK;
}
