/* run_queue.c — a bounded blocking FIFO of pointers between the reader,
 * fit and writer threads of a run. */
#include "run_internal.h"

void rq_init(run_queue *q)
{
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    q->head = q->n = 0;
}

void rq_destroy(run_queue *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

void rq_push(run_queue *q, void *p)
{
    pthread_mutex_lock(&q->mu);
    while (q->n == RUN_NBUF)
        pthread_cond_wait(&q->cv, &q->mu);
    q->item[(q->head + q->n) % RUN_NBUF] = p;
    q->n++;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void *rq_pop(run_queue *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->n == 0)
        pthread_cond_wait(&q->cv, &q->mu);
    void *p = q->item[q->head];
    q->head = (q->head + 1) % RUN_NBUF;
    q->n--;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return p;
}

run_batch *rq_pop_seq(run_queue *q, size_t seq)
{
    pthread_mutex_lock(&q->mu);
    for (;;) {
        for (size_t k = 0; k < q->n; k++) {
            size_t at = (q->head + k) % RUN_NBUF;
            run_batch *rb = q->item[at];
            if (rb->seq != seq)
                continue;
            /* close the gap: the items after it move up one */
            for (size_t j = k; j + 1 < q->n; j++)
                q->item[(q->head + j) % RUN_NBUF] =
                    q->item[(q->head + j + 1) % RUN_NBUF];
            q->n--;
            pthread_cond_broadcast(&q->cv);
            pthread_mutex_unlock(&q->mu);
            return rb;
        }
        pthread_cond_wait(&q->cv, &q->mu);
    }
}
