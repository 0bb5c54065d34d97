/* cuda_util.c — CUDA error messages, buffer helpers and host<->device real
 * conversion (the device computes in double, or in float with fp64 = 0). */
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

cudaError_t cuda_grow(cuda_buf *b, size_t bytes)
{
    if (bytes == 0)
        bytes = 16;
    if (b->p && b->n >= bytes)
        return cudaSuccess;
    cuda_buf_free(b);
    cudaError_t e = cudaMalloc(&b->p, bytes);
    if (e != cudaSuccess) {
        b->p = NULL;
        if (e == cudaErrorMemoryAllocation)
            cudaGetLastError(); /* not sticky: clear it for the retry */
        return e;
    }
    b->n = bytes;
    return cudaSuccess;
}

cudaError_t cuda_grow_host(cuda_buf *b, size_t bytes)
{
    if (bytes == 0)
        bytes = 16;
    if (b->p && b->n >= bytes)
        return cudaSuccess;
    cuda_buf_free_host(b);
    cudaError_t e = cudaMallocHost(&b->p, bytes);
    if (e != cudaSuccess) {
        b->p = NULL;
        if (e == cudaErrorMemoryAllocation)
            cudaGetLastError();
        return e;
    }
    b->n = bytes;
    return cudaSuccess;
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
    if (e == cudaSuccess && bytes)
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

void cuda_to_real(const cuda_state *st, const double *src, size_t n,
                  void *dst)
{
    if (st->fp64) {
        if (dst != (const void *)src)
            memmove(dst, src, n * sizeof(double));
        return;
    }
    /* In place is safe: element i is read before bytes [4i, 4i+4) are
     * written, and those belong to doubles already read; byte copies keep
     * the compiler from reordering across the two types. */
    const char *in = (const char *)src;
    char *out = dst;
    for (size_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, in + i * sizeof v, sizeof v);
        float f = (float)v;
        memcpy(out + i * sizeof f, &f, sizeof f);
    }
}

double cuda_real_at(const cuda_state *st, const void *src, size_t i)
{
    return st->fp64 ? ((const double *)src)[i]
                    : (double)((const float *)src)[i];
}
