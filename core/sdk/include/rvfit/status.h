/* rvfit/status.h — status codes and caller-owned error buffers.
 *
 * Every rvfit function that can fail returns an int status (RVFIT_OK == 0)
 * and writes a human-readable explanation into an rvfit_err owned by the
 * caller.  Context is added on the way up with rvfit_err_prefix(), giving
 * messages such as "backend 'opencl': open(device=0): clBuildProgram: ...".
 *
 * Thread-safety: the functions here touch only the buffer passed in; use one
 * rvfit_err per thread.
 */
#ifndef RVFIT_STATUS_H
#define RVFIT_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RVFIT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define RVFIT_EXPORT __attribute__((visibility("default")))
#else
#define RVFIT_PRINTF(a, b)
#define RVFIT_EXPORT
#endif

enum rvfit_status {
    RVFIT_OK = 0,
    RVFIT_ERR_INVALID = 1,     /* bad argument or inconsistent input       */
    RVFIT_ERR_IO = 2,          /* file missing, unreadable, unwritable     */
    RVFIT_ERR_FORMAT = 3,      /* file readable but not what we expect     */
    RVFIT_ERR_CONFIG = 4,      /* configuration or command-line problem    */
    RVFIT_ERR_NOMEM = 5,       /* allocation failed                        */
    RVFIT_ERR_PLUGIN = 6,      /* plugin could not be loaded or is broken  */
    RVFIT_ERR_UNAVAILABLE = 7, /* plugin fine, but its device is absent    */
    RVFIT_ERR_DEVICE = 8,      /* device runtime failed during work        */
    RVFIT_ERR_NUMERIC = 9,     /* non-finite or singular numbers           */
    RVFIT_ERR_INTERNAL = 10,   /* a bug in rvfit                           */
    RVFIT_ERR_CANCELLED = 11   /* stopped on request (signal)              */
};

#define RVFIT_ERR_LEN 2048

/* Caller-owned error buffer.  Empty string means "no detail". */
typedef struct rvfit_err {
    char msg[RVFIT_ERR_LEN];
} rvfit_err;

/* Short fixed text for a status code ("I/O error", ...).  Never NULL. */
RVFIT_EXPORT const char *rvfit_strerror(int status);

/* Format msg into e (e may be NULL) and return status unchanged, so that
 * `return rvfit_err_set(err, RVFIT_ERR_IO, "%s: ...", path);` reads well.
 * A message longer than the buffer loses its middle (marked "[... N
 * characters left out ...]"), never its end, where the reason is; the
 * same holds for rvfit_err_prefix. */
RVFIT_EXPORT int rvfit_err_set(rvfit_err *e, int status, const char *fmt, ...)
    RVFIT_PRINTF(3, 4);

/* Prepend "context: " to the message already in e (no-op for e == NULL). */
RVFIT_EXPORT void rvfit_err_prefix(rvfit_err *e, const char *fmt, ...)
    RVFIT_PRINTF(2, 3);

/* Clear e. */
RVFIT_EXPORT void rvfit_err_clear(rvfit_err *e);

#ifdef __cplusplus
}
#endif
#endif
