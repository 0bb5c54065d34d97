/* pool.c — rvfit_pool: a small persistent pthread pool.  Work items are
 * claimed from an atomic counter; the calling thread works as thread 0,
 * so a pool of one thread starts no thread at all. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "rvfit/pool.h"

typedef struct pool_worker {
    struct rvfit_pool *pool;
    int tid;
} pool_worker;

struct rvfit_pool {
    int n;                 /* threads including the caller            */
    pthread_t *th;
    pool_worker *wk;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;     /* bumped for every run                    */
    int quit;
    int active;            /* workers still inside the current run    */
    rvfit_pool_fn fn;
    void *ctx;
    size_t nitems;
    atomic_size_t next;
};

static void pool_drain(struct rvfit_pool *p, int tid)
{
    for (;;) {
        size_t it = atomic_fetch_add(&p->next, 1);
        if (it >= p->nitems)
            break;
        p->fn(p->ctx, tid, it);
    }
}

static void *pool_main(void *arg)
{
    pool_worker *w = arg;
    struct rvfit_pool *p = w->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        pool_drain(p, w->tid);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int rvfit_pool_create(int nthreads, rvfit_pool **out, rvfit_err *err)
{
    int want = nthreads < 1 ? 1 : nthreads;
    struct rvfit_pool *p = calloc(1, sizeof *p);
    if (p) {
        p->th = calloc((size_t)want, sizeof *p->th);
        p->wk = calloc((size_t)want, sizeof *p->wk);
    }
    if (!p || !p->th || !p->wk) {
        if (p)
            free(p->th), free(p->wk);
        free(p);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "no memory for a pool "
                             "of %d threads", want);
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    p->n = 1;
    for (int t = 1; t < want; t++) {
        p->wk[t].pool = p;
        p->wk[t].tid = t;
        if (pthread_create(&p->th[t], NULL, pool_main, &p->wk[t]) != 0)
            break; /* fewer threads, same results */
        p->n = t + 1;
    }
    *out = p;
    return RVFIT_OK;
}

int rvfit_pool_size(const rvfit_pool *p)
{
    return p->n;
}

void rvfit_pool_run(rvfit_pool *p, size_t nitems, rvfit_pool_fn fn,
                    void *ctx)
{
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->nitems = nitems;
    atomic_store(&p->next, 0);
    p->active = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    pool_drain(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void rvfit_pool_destroy(rvfit_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int t = 1; t < p->n; t++)
        pthread_join(p->th[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p->wk);
    free(p);
}
