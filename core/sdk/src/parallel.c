/* parallel.c — rvfit_parallel_for: a shared counter hands out items, the
 * first failure is kept and stops further items. */
#include <pthread.h>

#include "rvfit/numeric.h"

#define PAR_MAX_THREADS 64

typedef struct par_state {
    const rvfit_parallel_job *job;
    size_t n, next;
    pthread_mutex_t lock;
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
}

static void *par_worker(void *arg)
{
    par_state *p = arg;
    const rvfit_parallel_job *job = p->job;
    rvfit_err e;
    e.msg[0] = '\0';
    void *scratch = job->scratch_new(job->ctx);
    if (!scratch) {
        par_fail(p, rvfit_err_set(&e, RVFIT_ERR_NOMEM, "no memory for the "
                                  "scratch of a worker thread"), &e);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next++;
        int stop = p->rc != RVFIT_OK || i >= p->n;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            break;
        int rc = job->item(job->ctx, scratch, i, &e);
        if (rc)
            par_fail(p, rc, &e);
    }
    job->scratch_free(scratch);
    return NULL;
}

int rvfit_parallel_for(const rvfit_parallel_job *job, size_t n, int nthreads,
                       rvfit_err *err)
{
    par_state p = {.job = job, .n = n, .rc = RVFIT_OK};
    pthread_t tid[PAR_MAX_THREADS];
    int nt = nthreads < 1 ? 1 : nthreads > PAR_MAX_THREADS ? PAR_MAX_THREADS
                                                           : nthreads;
    if ((size_t)nt > n)
        nt = n ? (int)n : 1;
    pthread_mutex_init(&p.lock, NULL);
    int started = 0;
    for (int t = 1; t < nt; t++) {
        if (pthread_create(&tid[t], NULL, par_worker, &p) != 0)
            break; /* fewer threads, same results */
        started = t;
    }
    par_worker(&p);
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&p.lock);
    if (p.rc)
        return rvfit_err_set(err, p.rc, "%s", p.err.msg);
    return RVFIT_OK;
}
