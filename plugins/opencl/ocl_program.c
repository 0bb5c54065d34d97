/* ocl_program.c — builds the embedded shared kernel source for the chosen
 * device and fixes the launch geometry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"
#include "rvfit_kernels_src.h" /* generated: rvk_source[], RVK_SOURCE_LINES */

/* Build log of a failed build into err (truncated to the buffer). */
static int ocl_build_log(ocl_state *st, cl_int e, rvfit_err *err)
{
    size_t n = 0;
    clGetProgramBuildInfo(st->prog, st->dev, CL_PROGRAM_BUILD_LOG, 0, NULL,
                          &n);
    char *log = malloc(n + 1);
    if (log) {
        log[0] = '\0';
        clGetProgramBuildInfo(st->prog, st->dev, CL_PROGRAM_BUILD_LOG, n, log,
                              NULL);
        log[n] = '\0';
    }
    rvfit_err_set(err, RVFIT_ERR_DEVICE, "clBuildProgram: %s (%d): %s",
                  ocl_errstr(e), (int)e, log ? log : "(no log)");
    free(log);
    return RVFIT_ERR_DEVICE;
}

/* Kernel `name`, which must take nargs arguments (its rvfit_kargs.h
 * list: a mismatch means the program is not the one the host code was
 * built with). */
static int ocl_kernel(ocl_state *st, const char *name, cl_uint nargs,
                      cl_kernel *k, rvfit_err *err)
{
    cl_int e;
    *k = clCreateKernel(st->prog, name, &e);
    if (e != CL_SUCCESS) {
        *k = NULL;
        ocl_fail(err, "clCreateKernel", e);
        rvfit_err_prefix(err, "%s", name);
        return RVFIT_ERR_DEVICE;
    }
    cl_uint n = 0;
    e = clGetKernelInfo(*k, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL);
    if (e != CL_SUCCESS || n != nargs)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL,
                             "%s: %u arguments in the program, %u in "
                             "rvfit_kargs.h", name, (unsigned)n,
                             (unsigned)nargs);
    size_t kmax = 0;
    clGetKernelWorkGroupInfo(*k, st->dev, CL_KERNEL_WORK_GROUP_SIZE,
                             sizeof kmax, &kmax, NULL);
    while (kmax && st->wg > kmax)
        st->wg /= 2;
    return RVFIT_OK;
}

/* clBuildProgram with the standard options and `extra` appended. */
static cl_int ocl_build_with(ocl_state *st, const char *extra)
{
    char opts[128];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2%s%s",
             st->fp64 ? " -DRVK_FP64" : "", extra);
    rvfit_log(st->host, RVFIT_LOG_DEBUG, "opencl", "build options: %s", opts);
    return clBuildProgram(st->prog, 1, &st->dev, opts, NULL, NULL);
}

int ocl_build(ocl_state *st, rvfit_err *err)
{
    cl_int e;
    st->prog = clCreateProgramWithSource(st->ctx, RVK_SOURCE_LINES,
                                         (const char **)rvk_source, NULL, &e);
    if (e != CL_SUCCESS) {
        st->prog = NULL;
        return ocl_fail(err, "clCreateProgramWithSource", e);
    }
    /* No fast-math options: the results must match the cpu reference.
     * NVIDIA's compiler takes a register cap (cl_nv_compiler_options), the
     * OpenCL counterpart of the CUDA build's __launch_bounds__ for
     * rvk_like (RVFIT_CUDA_MINBLOCKS); rvk_template stays below it. */
    char ext[8192] = "";
    clGetDeviceInfo(st->dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    int nv = strstr(ext, "cl_nv_compiler_options") != NULL;
    e = ocl_build_with(st, nv ? " -cl-nv-maxrregcount " OCL_STR(OCL_NV_MAXRREG)
                              : "");
    if (e != CL_SUCCESS && nv) { /* the cap is an optimisation: never fatal */
        rvfit_log(st->host, RVFIT_LOG_WARN, "opencl",
                  "the build with -cl-nv-maxrregcount failed (%d); "
                  "building without it", (int)e);
        e = ocl_build_with(st, "");
    }
    if (e != CL_SUCCESS)
        return ocl_build_log(st, e, err);
    int rc = ocl_kernel(st, "rvk_template", RVK_NARGS(RVK_TEMPLATE_ARGS),
                        &st->k_tpl, err);
    if (rc == RVFIT_OK)
        rc = ocl_kernel(st, "rvk_like", RVK_NARGS(RVK_LIKE_ARGS),
                        &st->k_like, err);
    if (rc != RVFIT_OK)
        return rc;
    st->rsz = st->fp64 ? sizeof(double) : sizeof(float);
    cl_uint cu = 1;
    clGetDeviceInfo(st->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu,
                    NULL);
    st->maxgroups = rvk_maxgroups((size_t)cu);
    return RVFIT_OK;
}
