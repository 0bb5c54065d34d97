/* rvfit/pool.h — the project's one worker pool: a persistent set of
 * threads that runs independent work items, and rvfit_parallel_for, a
 * one-shot loop with per-thread scratch and error propagation built on it.
 *
 * Determinism: items are claimed in index order by whichever thread is
 * free.  When an item's result depends on its index only (not on the
 * thread, nor on other items' timing), the outcome is bit-identical for
 * any thread count.  Items that need a serial resource (CFITSIO, an
 * output file) lock a mutex the caller owns around that part.
 *
 * Ownership: a pool belongs to its creator.  Thread-safety: one
 * rvfit_pool_run at a time per pool, and never from inside one of its own
 * items; the item function runs concurrently on every thread.
 */
#ifndef RVFIT_POOL_H
#define RVFIT_POOL_H

#include <stddef.h>

#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rvfit_pool rvfit_pool;

/* Work item `item` on thread `tid`, 0 <= tid < rvfit_pool_size (0 is the
 * thread that called rvfit_pool_run): per-thread buffers indexed by tid
 * need no locking. */
typedef void (*rvfit_pool_fn)(void *ctx, int tid, size_t item);

/* A pool of nthreads threads, the caller's included (< 1 means 1).  When
 * the system refuses a thread the pool keeps the ones it has (results do
 * not depend on the count; see rvfit_pool_size).  RVFIT_ERR_NOMEM only. */
RVFIT_EXPORT int rvfit_pool_create(int nthreads, rvfit_pool **out,
                                   rvfit_err *err);
/* Threads of the pool, the caller's included. */
RVFIT_EXPORT int rvfit_pool_size(const rvfit_pool *p);
/* fn(ctx, tid, i) for i = 0..nitems-1 on every thread; returns when all
 * items are done. */
RVFIT_EXPORT void rvfit_pool_run(rvfit_pool *p, size_t nitems,
                                 rvfit_pool_fn fn, void *ctx);
/* Stop and join the threads; p may be NULL. */
RVFIT_EXPORT void rvfit_pool_destroy(rvfit_pool *p);

/* Independent work items 0..n-1 on up to nthreads threads of a pool made
 * for this call (the caller's included; < 1 means 1, at most 64, never
 * more than n).  Each thread gets its own scratch from scratch_new(ctx)
 * on its first item (NULL = out of memory, reported as such) and
 * scratch_free releases it at the end; without scratch_new, items get a
 * NULL scratch.  After the first failing item no
 * new items start; its status is returned and its message is in err. */
typedef struct rvfit_parallel_job {
    void *ctx;
    void *(*scratch_new)(void *ctx);
    void (*scratch_free)(void *scratch);
    int (*item)(void *ctx, void *scratch, size_t i, rvfit_err *err);
} rvfit_parallel_job;

RVFIT_EXPORT int rvfit_parallel_for(const rvfit_parallel_job *job, size_t n,
                                    int nthreads, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
