/* cpu_pool.c — a small persistent pthread pool.  Work items are claimed
 * from an atomic counter; each item's result depends only on the item, so
 * the outcome is bit-identical for any thread count.  The calling thread
 * works as thread 0. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_internal.h"

typedef struct cpu_worker {
    struct cpu_pool *pool;
    int tid;
} cpu_worker;

struct cpu_pool {
    int n;                 /* threads including the caller            */
    int nstarted;
    pthread_t *th;
    cpu_worker *wk;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;     /* bumped for every job                    */
    int quit;
    int active;            /* workers still inside the current job    */
    cpu_task_fn fn;
    void *ctx;
    size_t nitems;
    atomic_size_t next;
};

static void cpu_pool_drain(struct cpu_pool *p, int tid)
{
    for (;;) {
        size_t it = atomic_fetch_add(&p->next, 1);
        if (it >= p->nitems)
            break;
        p->fn(p->ctx, tid, it);
    }
}

static void *cpu_pool_main(void *arg)
{
    cpu_worker *w = arg;
    struct cpu_pool *p = w->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        cpu_pool_drain(p, w->tid);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int cpu_pool_create(int nthreads, cpu_pool **out)
{
    struct cpu_pool *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->n = nthreads < 1 ? 1 : nthreads;
    p->th = calloc((size_t)p->n, sizeof *p->th);
    p->wk = calloc((size_t)p->n, sizeof *p->wk);
    if (!p->th || !p->wk) {
        free(p->th);
        free(p->wk);
        free(p);
        return -1;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    for (int t = 1; t < p->n; t++) {
        p->wk[t].pool = p;
        p->wk[t].tid = t;
        if (pthread_create(&p->th[t], NULL, cpu_pool_main, &p->wk[t]) != 0) {
            cpu_pool_destroy(p);
            return -1;
        }
        p->nstarted = t;
    }
    *out = p;
    return 0;
}

void cpu_pool_run(cpu_pool *p, size_t nitems, cpu_task_fn fn, void *ctx)
{
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->nitems = nitems;
    atomic_store(&p->next, 0);
    p->active = p->nstarted;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    cpu_pool_drain(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void cpu_pool_destroy(cpu_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int t = 1; t <= p->nstarted; t++)
        pthread_join(p->th[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p->wk);
    free(p);
}
