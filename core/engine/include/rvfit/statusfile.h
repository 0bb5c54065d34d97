/* rvfit/statusfile.h — the job status file ([output] status = FILE): one
 * line per input, "STATE<TAB>INPUT<TAB>DETAIL", in input order, with
 * STATE pending, done, failed or skipped and DETAIL the output written or
 * the reason.  The file is rewritten atomically (temporary + rename) at
 * most once a second while states change and always on close, so a user
 * or a workflow system can follow a job and see, after a crash, what is
 * left; a crash loses at most the last second of updates, and a rerun with
 * --skip-existing settles it.
 *
 * Ownership: the object copies the input names.  Thread-safety: none; one
 * writer (the process that coordinates the job).
 */
#ifndef RVFIT_STATUSFILE_H
#define RVFIT_STATUSFILE_H

#include <stddef.h>

#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rvfit_statusfile rvfit_statusfile;

/* Create (or replace) `path` listing the n inputs as pending. */
RVFIT_EXPORT int rvfit_statusfile_open(rvfit_statusfile **sf,
                                       const char *path, size_t n,
                                       char *const *inputs, rvfit_err *err);
/* Set input i's state ("done", "failed", "skipped") and detail (tabs and
 * newlines become spaces). */
RVFIT_EXPORT int rvfit_statusfile_set(rvfit_statusfile *sf, size_t i,
                                      const char *state, const char *detail,
                                      rvfit_err *err);
/* Write the final state and free sf (NULL is allowed). */
RVFIT_EXPORT int rvfit_statusfile_close(rvfit_statusfile *sf, rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
