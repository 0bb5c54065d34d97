/* ocl_internal.h — shared state of the OpenCL backend plugin (not
 * installed).  The device code is plugins/kernels/rvfit_kernels.c, shared
 * with the CUDA backend; its metadata layouts are rvfit_klayout.h and the
 * host images of the resident data are built by rvk_host.h. */
#ifndef OCL_INTERNAL_H
#define OCL_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/library.h"
#include "rvk_host.h"

/* Default device memory for per-call template slots (MiB, option
 * scratch_mb): bounds how many points one launch covers. */
#ifndef OCL_SCRATCH_MB
#define OCL_SCRATCH_MB 256
#endif
/* Default work-group size (option wgsize) on CPU devices (chosen on
 * PoCL) and on GPUs (as CUDA_WG_DEFAULT, for the same reason: work-group
 * local memory, not threads, limits the groups per compute unit); both
 * are capped by the kernel's CL_KERNEL_WORK_GROUP_SIZE. */
#ifndef OCL_WG_DEFAULT
#define OCL_WG_DEFAULT 64
#endif
#ifndef OCL_WG_GPU
#define OCL_WG_GPU 256
#endif
/* Register cap for NVIDIA's OpenCL compiler (-cl-nv-maxrregcount): 64, 4
 * blocks of 256 per SM, what the CUDA build's rvk_like measured best with
 * on an H200 (docs/cuda.md, RVFIT_CUDA_MINBLOCKS). */
#define OCL_NV_MAXRREG 64
#define OCL_STR_(x) #x
#define OCL_STR(x) OCL_STR_(x)

typedef struct ocl_state {
    const rvfit_host *host;
    cl_platform_id platform;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k_tpl, k_like;
    int fp64;          /* device code uses double                        */
    size_t rsz;        /* sizeof(real) on the device                     */
    size_t wg;         /* work-group size                                */
    int wg_auto;       /* wgsize not set: chosen by device type          */
    size_t maxgroups;  /* groups per launch (persistent-style loops)     */
    size_t scratch_bytes;
    char device[512];
    rvfit_counters cnt;

    /* library (resident): geometry, then the device arrays */
    rvk_lib lib;
    cl_mem ax_n, ax_node, exists, lib_flux;

    /* batch (resident): geometry, then the device arrays */
    rvk_batch bat;
    rvk_batch_img img;       /* its host images, kept for the next load */
    cl_mem ai, ad, pos, flux, ivar, res, basis, bplan, nuse, fwf;

    /* per-call buffers, grown on demand (ocl_grow) */
    cl_mem b_tflags, b_tvsini, b_ttheta, b_tspec, b_tpen, b_pv, b_tr;
    cl_mem b_tint, b_scr, b_m2lnl, b_achi, b_mout, b_cout;
    size_t n_tflags, n_tvsini, n_ttheta, n_tspec, n_tpen, n_pv, n_tr;
    size_t n_tint, n_scr, n_m2lnl, n_achi, n_mout, n_cout;
    /* stencils from the core of the current chunk (backend ops 1.1) */
    cl_mem b_soff, b_sidx, b_sw, b_spen;
    size_t n_soff, n_sidx, n_sw, n_spen;
    int use_st;
    int st_nw;               /* weights per entry uploaded (kernel st_nw) */
    void *hbuf;              /* host staging buffer                   */
    size_t n_hbuf;
} ocl_state;

/* ocl_util.c */
const char *ocl_errstr(cl_int e);
/* RVFIT_ERR_DEVICE with "what: CL_ERROR_NAME (code)". */
int ocl_fail(rvfit_err *err, const char *what, cl_int e);
/* Make *buf at least `bytes` (contents not kept). */
int ocl_grow(ocl_state *st, cl_mem *buf, size_t *have, size_t bytes,
             rvfit_err *err);
/* Buffer initialised from host memory (read-only on the device). */
int ocl_upload(ocl_state *st, cl_mem *buf, const void *src, size_t bytes,
               rvfit_err *err);
/* Host staging area of at least `bytes`. */
void *ocl_stage(ocl_state *st, size_t bytes);
void ocl_release(cl_mem *m);

/* ocl_program.c */
int ocl_build(ocl_state *st, rvfit_err *err);

/* ocl_data.c */
int ocl_load_library(void *state, const rvfit_library *lib, rvfit_err *err);
int ocl_load_batch(void *state, const rvfit_batch *batch,
                   const rvfit_model_opts *mo, rvfit_err *err);
int ocl_update_data(void *state, const rvfit_batch *bt, rvfit_err *err);
void ocl_free_library(ocl_state *st);
void ocl_free_batch(ocl_state *st);

/* ocl_eval.c */
/* backend ops 2.0: the stencil table sn from the core, or NULL (the
 * regular grid's stencils from theta). */
int ocl_chisq(void *state, size_t n, const rvfit_point *pts,
              const rvfit_stencils *sn, rvfit_chisq_out *out,
              rvfit_err *err);
int ocl_vscan(void *state, size_t nq, const rvfit_point *base,
              const rvfit_stencils *sn, size_t nvel, const double *vel,
              double *m2lnl, rvfit_err *err);
int ocl_models(void *state, size_t n, const rvfit_point *pts,
               const rvfit_stencils *sn, float *const *model,
               float *const *cont, rvfit_err *err);
void ocl_free_call_buffers(ocl_state *st);

#endif
