/* ocl_util.c — OpenCL error names and buffer helpers (host<->device real
 * conversion is rvk_to_real and friends, plugins/kernels/rvk_host.h). */
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"

const char *ocl_errstr(cl_int e)
{
    switch (e) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_BUILD_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
    E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
    E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_MEM_OBJECT)
    E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE)
    E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
    E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET)
    E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_OPERATION)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

int ocl_fail(rvfit_err *err, const char *what, cl_int e)
{
    return rvfit_err_set(err, RVFIT_ERR_DEVICE, "%s: %s (%d)", what,
                         ocl_errstr(e), (int)e);
}

void ocl_release(cl_mem *m)
{
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
}

int ocl_grow(ocl_state *st, cl_mem *buf, size_t *have, size_t bytes,
             rvfit_err *err)
{
    if (bytes == 0)
        bytes = 16; /* zero-sized buffers are invalid in OpenCL */
    if (*buf && *have >= bytes)
        return RVFIT_OK;
    ocl_release(buf);
    *have = 0;
    cl_int e;
    *buf = clCreateBuffer(st->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) {
        *buf = NULL;
        ocl_fail(err, "clCreateBuffer", e);
        rvfit_err_prefix(err, "%zu bytes of scratch", bytes);
        return RVFIT_ERR_DEVICE;
    }
    *have = bytes;
    return RVFIT_OK;
}

int ocl_upload(ocl_state *st, cl_mem *buf, const void *src, size_t bytes,
               rvfit_err *err)
{
    static const char one[16] = {0};
    ocl_release(buf);
    cl_int e;
    if (bytes == 0) {
        src = one;
        bytes = sizeof one;
    }
    *buf = clCreateBuffer(st->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          bytes, (void *)src, &e);
    if (e != CL_SUCCESS) {
        *buf = NULL;
        ocl_fail(err, "clCreateBuffer", e);
        rvfit_err_prefix(err, "upload of %zu bytes", bytes);
        return RVFIT_ERR_DEVICE;
    }
    return RVFIT_OK;
}

void *ocl_stage(ocl_state *st, size_t bytes)
{
    if (st->n_hbuf >= bytes && st->hbuf)
        return st->hbuf;
    void *p = realloc(st->hbuf, bytes ? bytes : 1);
    if (!p)
        return NULL;
    st->hbuf = p;
    st->n_hbuf = bytes;
    return p;
}
