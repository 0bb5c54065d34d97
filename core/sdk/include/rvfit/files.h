/* rvfit/files.h — file-system helpers shared by the engine, the tools and
 * plugins: creating directories and naming the temporaries of atomic
 * writes (write to the temporary, rename onto the final name).
 *
 * Errors name the path and carry errno's text.  Thread-safety: reentrant.
 */
#ifndef RVFIT_FILES_H
#define RVFIT_FILES_H

#include <stddef.h>

#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mkdir -p: create `path` and its missing parents.  RVFIT_ERR_IO naming
 * the directory that could not be created and why. */
RVFIT_EXPORT int rvfit_mkdirs(const char *path, rvfit_err *err);

/* A temporary name beside `path` for an atomic write,
 * "<dir>/.<base>.tmp.<pid>": the same file system, so rename() onto path
 * is atomic, and hidden from directory listings.  Returns 0, or -1 when
 * buf (size bytes) is too small. */
RVFIT_EXPORT int rvfit_tmpname(char *buf, size_t size, const char *path);

#ifdef __cplusplus
}
#endif
#endif
