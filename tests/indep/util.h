/* Threads and FITS-file plumbing of rvfit-indep (internal). */
#ifndef INDEP_UTIL_H
#define INDEP_UTIL_H

#include "indep.h"

#include <fitsio.h>

/* Run fn(ctx, item, worker) for item = 0..n-1 on nthreads workers (worker
 * in 0..nthreads-1).  Items are independent, so results never depend on
 * the thread count.  On failure the error of the lowest failing item is
 * reported. */
typedef int (*ind_task_fn)(void *ctx, size_t item, int worker, ind_err *e);
int ind_parallel(size_t n, int nthreads, ind_task_fn fn, void *ctx,
                 ind_err *e);
int ind_default_threads(void);

/* CFITSIO status as an error naming the file and what was being done. */
int ind_fits_fail(ind_err *e, int status, const char *path, const char *what);
/* Atomic writes: write to a temporary name beside the final one, then
 * rename.  tag keeps concurrent writers apart. */
void ind_tmpname(char *buf, size_t n, const char *final, unsigned long tag);
int ind_commit(const char *tmp, const char *final, ind_err *e);
/* The two ends of an atomic FITS write: create the temporary for `final`
 * (name into tmp[n]) with the chained CFITSIO status *st; then close it
 * and rename it into place, or remove it and report `what` failed. */
fitsfile *ind_fits_create(const char *final, char *tmp, size_t n, int *st);
int ind_fits_commit(fitsfile *fp, int st, const char *tmp,
                    const char *final, const char *what, ind_err *e);
/* mkdir -p for one level; an existing directory is fine. */
int ind_mkdir(const char *path, ind_err *e);

#endif
