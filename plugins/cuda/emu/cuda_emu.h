/* emu/cuda_emu.h — TEST DOUBLE internals shared by the emulated runtime
 * (cuda_emu_rt.c) and the emulated kernels (cuda_emu_kernels.cpp). */
#ifndef CUDA_EMU_H
#define CUDA_EMU_H

#include <stddef.h>

#include "cuda_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct emu_idx {
    unsigned x;
} emu_idx;

/* Queue fn(ctx) on stream s; it runs at cudaStreamSynchronize, as late as
 * a real GPU may run it.  ctx is owned (freed) by the queue. */
cudaError_t emu_enqueue(cudaStream_t s, void (*fn)(void *), void *ctx);
/* The current device (cudaSetDevice). */
int emu_current_device(void);
/* The device of stream s (-1 for an unknown stream). */
int emu_stream_device(cudaStream_t s);
/* Is [p, p+1) inside an allocation of device dev?  (NULL is not.) */
int emu_check_ptr(int dev, const void *p);
/* Run body(ctx) as `groups` blocks of `wg` threads (cooperative fibers;
 * emu_sync() is the block barrier). */
void emu_run_blocks(unsigned groups, unsigned wg, void (*body)(void *),
                    void *ctx);
void emu_sync(void);
emu_idx *emu_thread_idx(void);
emu_idx *emu_block_idx(void);
emu_idx *emu_block_dim(void);
emu_idx *emu_grid_dim(void);

#ifdef __cplusplus
}
#endif
#endif
