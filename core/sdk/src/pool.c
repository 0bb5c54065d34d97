/* pool.c — rvfit_pool: a small persistent pthread pool.  Work items are
 * claimed from an atomic counter; the calling thread works as thread 0,
 * so a pool of one thread starts no thread at all.  A run ends when its
 * items are done: the caller waits for the workers that took part, not
 * for those still asleep when the items ran out (on a machine busy with
 * other work a woken thread may wait milliseconds for a core, longer
 * than a small run takes). */
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
    int open;              /* the current run takes workers           */
    int inside;            /* workers inside the current run          */
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
        /* a run not seen yet that still takes workers */
        while (!p->quit && (p->gen == seen || !p->open))
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        p->inside++;
        pthread_mutex_unlock(&p->mu);
        pool_drain(p, w->tid);
        pthread_mutex_lock(&p->mu);
        if (--p->inside == 0)
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
    p->open = 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    pool_drain(p, 0);
    /* Every item is claimed now; a worker's items are done when it
     * leaves.  Closing the run in the same hold of the lock keeps out
     * workers that wake later: they sleep on until the next run (and
     * none is left inside to claim that run's items with this one's
     * function). */
    pthread_mutex_lock(&p->mu);
    while (p->inside > 0)
        pthread_cond_wait(&p->done, &p->mu);
    p->open = 0;
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
