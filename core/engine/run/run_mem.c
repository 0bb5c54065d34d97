/* run_mem.c — the large arrays of batches, kept for the next batch.
 * A batch's flux, ivar and band matrices are hundreds of kB per spectrum
 * (its best-fit models, the fit's output, tens);
 * given back to the system after each batch, every new batch had its
 * pages mapped and zeroed again by the kernel, which cost about as much
 * as reading the file (docs/benchmarks.md, "Reading and preparation").
 * Arrays the run no longer needs wait here instead, and the reader (the
 * fit, for models) takes them for its next batch.  Memory stays bounded by the batches alive
 * (RUN_NBUF): what waits here is what they gave back, and once the reader
 * has read its last batch, nothing waits. */
#include <stdlib.h>

#include "run_internal.h"

/* Smaller arrays are left to malloc, which reuses them by itself. */
#define RUN_MEM_MIN ((size_t)1 << 20)

void run_mem_init(run_mem *m)
{
    pthread_mutex_init(&m->mu, NULL);
    m->n = 0;
    m->closed = 0;
}

void run_mem_close(run_mem *m)
{
    pthread_mutex_lock(&m->mu);
    m->closed = 1;
    for (size_t i = 0; i < m->n; i++)
        free(m->p[i]);
    m->n = 0;
    pthread_mutex_unlock(&m->mu);
}

void run_mem_destroy(run_mem *m)
{
    run_mem_close(m);
    pthread_mutex_destroy(&m->mu);
}

int run_mem_closed(run_mem *m)
{
    pthread_mutex_lock(&m->mu);
    int closed = m->closed;
    pthread_mutex_unlock(&m->mu);
    return closed;
}

void *run_mem_take(run_mem *m, size_t bytes)
{
    if (bytes < RUN_MEM_MIN)
        return NULL;
    void *p = NULL;
    pthread_mutex_lock(&m->mu);
    /* the smallest that holds it, wasting at most a quarter */
    size_t best = m->n;
    for (size_t i = 0; i < m->n; i++)
        if (m->size[i] >= bytes && m->size[i] - bytes <= bytes / 4 &&
            (best == m->n || m->size[i] < m->size[best]))
            best = i;
    if (best < m->n) {
        p = m->p[best];
        m->n--;
        m->p[best] = m->p[m->n];
        m->size[best] = m->size[m->n];
    }
    pthread_mutex_unlock(&m->mu);
    return p;
}

void *run_mem_get(run_mem *m, size_t bytes)
{
    void *p = run_mem_take(m, bytes);
    return p ? p : malloc(bytes ? bytes : 1);
}

void run_mem_put(run_mem *m, void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes < RUN_MEM_MIN) {
        free(p);
        return;
    }
    pthread_mutex_lock(&m->mu);
    if (m->closed) {
        /* no batch will take it */
    } else if (m->n < RUN_MEM_SLOTS) {
        m->p[m->n] = p;
        m->size[m->n++] = bytes;
        p = NULL;
    } else { /* full: keep the larger */
        size_t small = 0;
        for (size_t i = 1; i < m->n; i++)
            if (m->size[i] < m->size[small])
                small = i;
        if (m->size[small] < bytes) {
            void *q = m->p[small];
            m->p[small] = p;
            m->size[small] = bytes;
            p = q;
        }
    }
    pthread_mutex_unlock(&m->mu);
    free(p);
}

/* rvfit_prep_mem's callbacks */
static void *mem_get_cb(void *ctx, size_t bytes)
{
    return run_mem_get(ctx, bytes);
}

static void mem_put_cb(void *ctx, void *p, size_t bytes)
{
    run_mem_put(ctx, p, bytes);
}

rvfit_prep_mem run_mem_prep(run_mem *m)
{
    return (rvfit_prep_mem){mem_get_cb, mem_put_cb, m};
}
