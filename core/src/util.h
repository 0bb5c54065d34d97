/* util.h — private helpers shared by the core's file writers and
 * synthetic-data code (not installed, not exported).
 *
 * CFITSIO keeps a process-global error stack: rvfit_i_fits_err converts
 * its status and last message once, at our boundary.
 */
#ifndef RVFIT_UTIL_H
#define RVFIT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/status.h"

#if defined(__GNUC__)
#define RVFIT_HIDDEN __attribute__((visibility("hidden")))
#else
#define RVFIT_HIDDEN
#endif

/* mkdir -p; returns RVFIT_ERR_IO with the path and strerror on failure. */
RVFIT_HIDDEN int rvfit_i_mkdirs(const char *path, rvfit_err *err);

/* Fill err with "<what>: <CFITSIO text> (status N)[: <last message>]"
 * and return rvfit_status `code`.  Clears CFITSIO's message stack. */
RVFIT_HIDDEN int rvfit_i_fits_err(rvfit_err *err, int code, int fstatus,
                                  const char *what);

/* A temporary name beside `path` for atomic writes: "<dir>/.<base>.tmp.<pid>"
 * (same file system, so rename() is atomic).  0 on success, -1 if the
 * buffer is too small. */
RVFIT_HIDDEN int rvfit_i_tmpname(char *buf, size_t size, const char *path);

/* Finish an atomic write: close f (may be NULL) and, if fstatus and the
 * close are clean, rename tmp to path; otherwise remove tmp.  Errors name
 * path. */
RVFIT_HIDDEN int rvfit_i_fits_commit(void *f, int fstatus, const char *tmp,
                                     const char *path, rvfit_err *err);

/* splitmix64 step: a tiny, well-mixed generator for seeding and draws. */
RVFIT_HIDDEN uint64_t rvfit_i_splitmix(uint64_t *state);
/* Uniform double in [0, 1) with 53 random bits. */
RVFIT_HIDDEN double rvfit_i_uniform(uint64_t *state);

#endif
