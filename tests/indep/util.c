/* Threads and FITS-file plumbing (see util.h). */
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    size_t n;
    atomic_size_t next;
    ind_task_fn fn;
    void *ctx;
    pthread_mutex_t lock;
    size_t bad;          /* lowest failing item, n if none */
    ind_err err;
} pool;

typedef struct { pool *p; int worker; } worker_arg;

static void *worker_main(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            break;
        pthread_mutex_lock(&p->lock);
        int stop = i > p->bad;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            break;
        ind_err e = {{0}};
        if (p->fn(p->ctx, i, w->worker, &e)) {
            pthread_mutex_lock(&p->lock);
            if (i < p->bad) {
                p->bad = i;
                p->err = e;
            }
            pthread_mutex_unlock(&p->lock);
        }
    }
    return NULL;
}

int ind_parallel(size_t n, int nthreads, ind_task_fn fn, void *ctx,
                 ind_err *e)
{
    if (nthreads < 1)
        nthreads = 1;
    pool p = {.n = n, .fn = fn, .ctx = ctx, .bad = n};
    atomic_init(&p.next, 0);
    pthread_mutex_init(&p.lock, NULL);
    pthread_t tid[256];
    worker_arg arg[256];
    int nt = nthreads > 256 ? 256 : nthreads, started = 0;
    for (int t = 0; t < nt; t++) {
        arg[t] = (worker_arg){&p, t};
        if (t > 0 && pthread_create(&tid[t], NULL, worker_main, &arg[t]))
            break;
        started = t + 1;
    }
    worker_main(&arg[0]); /* the calling thread is worker 0 */
    for (int t = 1; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&p.lock);
    if (p.bad < n) {
        if (e)
            *e = p.err;
        return -1;
    }
    return 0;
}

int ind_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int ind_fits_fail(ind_err *e, int status, const char *path, const char *what)
{
    char txt[FLEN_STATUS] = "";
    fits_get_errstatus(status, txt);
    fits_clear_errmsg();
    return ind_fail(e, "%s: %s: %s (CFITSIO %d)", path, what, txt, status);
}

void ind_tmpname(char *buf, size_t n, const char *final, unsigned long tag)
{
    snprintf(buf, n, "%s.tmp-%ld-%lu", final, (long)getpid(), tag);
}

int ind_commit(const char *tmp, const char *final, ind_err *e)
{
    if (rename(tmp, final) != 0) {
        int err = errno;
        remove(tmp);
        return ind_fail(e, "%s: cannot rename from %s: %s", final, tmp,
                        strerror(err));
    }
    return 0;
}

int ind_mkdir(const char *path, ind_err *e)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        return ind_fail(e, "%s: exists and is not a directory", path);
    }
    return ind_fail(e, "%s: cannot create directory: %s", path,
                    strerror(errno));
}

fitsfile *ind_fits_create(const char *final, char *tmp, size_t n, int *st)
{
    char clobber[4300];
    fitsfile *fp = NULL;
    ind_tmpname(tmp, n, final, 0);
    snprintf(clobber, sizeof clobber, "!%s", tmp);
    fits_create_file(&fp, clobber, st);
    return fp;
}

int ind_fits_commit(fitsfile *fp, int st, const char *tmp,
                    const char *final, const char *what, ind_err *e)
{
    fits_close_file(fp, &st);
    if (st) {
        remove(tmp);
        return ind_fits_fail(e, st, final, what);
    }
    return ind_commit(tmp, final, e);
}
