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
