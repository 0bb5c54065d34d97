/* cuda_internal.h — shared state of the CUDA backend plugin (not
 * installed).  Host-side structure, data layout and semantics mirror the
 * OpenCL backend (plugins/opencl); the device code is the shared
 * plugins/kernels/rvfit_kernels.c, reached through cuda_launch.h; the host
 * images of the resident data are built by rvk_host.h (shared with it).
 *
 * Several devices: the library and the batch are resident on each; every
 * call's template slots are split into contiguous parts, one per device,
 * and the devices work concurrently (one stream each, pinned staging
 * buffers, asynchronous copies) before the results are gathered. */
#ifndef CUDA_INTERNAL_H
#define CUDA_INTERNAL_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_launch.h"
#include "rvfit/backend.h"
#include "rvfit/library.h"
#include "rvk_host.h"

/* Most devices one handle drives (option devices). */
#ifndef CUDA_MAX_DEV
#define CUDA_MAX_DEV 16
#endif
/* Default cap on per-call device scratch, MiB (option scratch_mb); the
 * free memory reported by cudaMemGetInfo lowers it further. */
#ifndef CUDA_SCRATCH_MB
#define CUDA_SCRATCH_MB 1024
#endif
/* Default block size (option wgsize).  rvk_like's shared memory per
 * block does not grow with the block, so on a GPU it limits how many
 * blocks an SM holds: 256 threads gave 2.9x the backend throughput of 64
 * on an H200 (desi-1k, docs/benchmarks.md "GPU"). */
#ifndef CUDA_WG_DEFAULT
#define CUDA_WG_DEFAULT 256
#endif
/* Device memory left untouched by per-call scratch (MiB): other
 * processes, the runtime's own allocations, fragmentation. */
#ifndef CUDA_RESERVE_MB
#define CUDA_RESERVE_MB 256
#endif

/* A device or pinned host allocation that only grows. */
typedef struct cuda_buf {
    void *p;
    size_t n; /* bytes */
} cuda_buf;

/* One device with its own copy of the resident data. */
typedef struct cuda_dev {
    int ord;                 /* CUDA device ordinal                   */
    char name[256];
    cudaStream_t stream;
    size_t maxgroups;        /* blocks per launch (persistent loops)  */
    size_t budget;           /* per-call scratch bytes, halved on OOM */
    uint64_t points;         /* points evaluated here since open      */
    /* resident library */
    void *ax_n, *ax_node, *exists, *lib_flux;
    /* resident batch */
    void *ai, *ad, *pos, *flux, *ivar, *res, *basis, *bplan, *nuse, *fwf;
    /* per call: inputs, template slots, scratch, outputs */
    cuda_buf d_in, d_tr, d_tint, d_tpen, d_scr, d_out;
    cuda_buf h_in, h_out;    /* pinned                                 */
    /* the chunk in flight (cuda_eval.c) */
    size_t s0, ns;           /* slots [s0, s0+ns) of the call          */
} cuda_dev;

typedef struct cuda_state {
    const rvfit_host *host;
    int ndev;
    cuda_dev dev[CUDA_MAX_DEV];
    int fp64;                /* double device code                     */
    size_t rsz;              /* sizeof(real) on the device             */
    size_t wg;               /* block size                             */
    size_t scratch_bytes;    /* option scratch_mb                      */
    char device[1024];
    rvfit_counters cnt;

    rvk_lib lib;             /* resident on every device               */
    rvk_batch bat;           /* resident on every device               */
    rvk_batch_img img;       /* its host images, kept for the next load */
} cuda_state;

/* cuda_util.c */
/* RVFIT_ERR_DEVICE with "device N (name): what: cudaErrorName: string". */
int cuda_fail(rvfit_err *err, const cuda_dev *d, const char *what,
              cudaError_t e);
/* Make the device the current one; fails like cuda_fail. */
int cuda_use(const cuda_dev *d, rvfit_err *err);
/* Grow device buffer b to at least `bytes` (contents not kept);
 * cudaErrorMemoryAllocation is returned as is (and cleared) so that the
 * caller can shrink its chunk; other errors too, for cuda_fail. */
cudaError_t cuda_grow(cuda_buf *b, size_t bytes);
/* The same for pinned host memory. */
cudaError_t cuda_grow_host(cuda_buf *b, size_t bytes);
void cuda_buf_free(cuda_buf *b);
void cuda_buf_free_host(cuda_buf *b);
/* Device copy of host memory in *dst (freed first); with src NULL only
 * the allocation (the caller copies the parts). */
int cuda_upload(const cuda_dev *d, void **dst, const void *src, size_t bytes,
                const char *what, rvfit_err *err);
void cuda_free(void **p);

/* cuda_data.c */
int cuda_load_library(void *state, const rvfit_library *lib, rvfit_err *err);
int cuda_load_batch(void *state, const rvfit_batch *batch,
                    const rvfit_model_opts *mo, rvfit_err *err);
int cuda_update_data(void *state, const rvfit_batch *bt, rvfit_err *err);
void cuda_free_library(cuda_state *st);
void cuda_free_batch(cuda_state *st);

/* cuda_eval.c */
/* backend ops 2.0: the stencil table sn from the core, or NULL (the
 * regular grid's stencils from theta). */
int cuda_chisq(void *state, size_t n, const rvfit_point *pts,
               const rvfit_stencils *sn, rvfit_chisq_out *out,
               rvfit_err *err);
int cuda_vscan(void *state, size_t nq, const rvfit_point *base,
               const rvfit_stencils *sn, size_t nvel, const double *vel,
               double *m2lnl, rvfit_err *err);
int cuda_models(void *state, size_t n, const rvfit_point *pts,
                const rvfit_stencils *sn, float *const *model,
                float *const *cont, rvfit_err *err);
void cuda_free_call_buffers(cuda_state *st);

#endif
