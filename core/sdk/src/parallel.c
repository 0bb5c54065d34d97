/* parallel.c — rvfit_parallel_for on a pool made for the call: each
 * thread makes its scratch on its first item, the first failure is kept
 * and stops further items. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "rvfit/pool.h"

#define PAR_MAX_THREADS 64

typedef struct par_state {
    const rvfit_parallel_job *job;
    void *scratch[PAR_MAX_THREADS]; /* by thread id                     */
    atomic_int failed;              /* stops items not yet started      */
    pthread_mutex_t lock;           /* rc, err                          */
    int rc;
    rvfit_err err;
} par_state;

static void par_fail(par_state *p, int rc, const rvfit_err *e)
{
    pthread_mutex_lock(&p->lock);
    if (p->rc == RVFIT_OK) {
        p->rc = rc;
        p->err = *e;
    }
    pthread_mutex_unlock(&p->lock);
    atomic_store(&p->failed, 1);
}

static void par_item(void *ctx, int tid, size_t i)
{
    par_state *p = ctx;
    const rvfit_parallel_job *job = p->job;
    if (atomic_load(&p->failed))
        return;
    rvfit_err e;
    e.msg[0] = '\0';
    if (job->scratch_new && !p->scratch[tid]) {
        p->scratch[tid] = job->scratch_new(job->ctx);
        if (!p->scratch[tid]) {
            par_fail(p, rvfit_err_set(&e, RVFIT_ERR_NOMEM, "no memory for "
                                      "the scratch of a worker thread"), &e);
            return;
        }
    }
    int rc = job->item(job->ctx, p->scratch[tid], i, &e);
    if (rc)
        par_fail(p, rc, &e);
}

int rvfit_parallel_for(const rvfit_parallel_job *job, size_t n, int nthreads,
                       rvfit_err *err)
{
    int nt = nthreads < 1 ? 1 : nthreads > PAR_MAX_THREADS ? PAR_MAX_THREADS
                                                           : nthreads;
    if ((size_t)nt > n)
        nt = n ? (int)n : 1;
    par_state *p = calloc(1, sizeof *p);
    rvfit_pool *pool = NULL;
    if (!p || rvfit_pool_create(nt, &pool, err) != RVFIT_OK) {
        free(p);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory for %d "
                             "worker threads", nt);
    }
    p->job = job;
    atomic_init(&p->failed, 0);
    pthread_mutex_init(&p->lock, NULL);
    rvfit_pool_run(pool, n, par_item, p);
    rvfit_pool_destroy(pool);
    for (int t = 0; t < nt; t++)
        if (p->scratch[t] && job->scratch_free)
            job->scratch_free(p->scratch[t]);
    pthread_mutex_destroy(&p->lock);
    int rc = p->rc;
    if (rc)
        rvfit_err_set(err, rc, "%s", p->err.msg);
    free(p);
    return rc;
}
