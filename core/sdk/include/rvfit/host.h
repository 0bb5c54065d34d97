/* rvfit/host.h — services the host (core) offers to plugins, and logging.
 *
 * Plugins never print: they log through the host they were opened with.
 * The host object is owned by the core and outlives every plugin handle.
 * rvfit_log() may be called from any thread (the host serialises output).
 */
#ifndef RVFIT_HOST_H
#define RVFIT_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rvfit_log_level {
    RVFIT_LOG_ERROR = 0,
    RVFIT_LOG_WARN = 1,
    RVFIT_LOG_INFO = 2,
    RVFIT_LOG_DEBUG = 3
};

typedef void (*rvfit_log_fn)(void *ctx, int level, const char *who,
                             const char *msg);

typedef struct rvfit_host {
    uint32_t size;     /* sizeof(rvfit_host) as compiled by the core */
    int log_level;     /* messages above this level are dropped early */
    rvfit_log_fn log;  /* never NULL */
    void *log_ctx;
    int nthreads;      /* worker threads the user allows (>= 1) */
    /* Where this process stands in a job of several (MPI ranks); 0, 1, 0,
     * 1 for a single process.  GPU backends pick the device of the
     * node-local rank (option devices = local). */
    int rank, nranks;
    int local_rank, local_size;
} rvfit_host;

/* A single key = value pair from the INI file or the command line.
 * Strings are owned by the core's config object and outlive the plugin. */
typedef struct rvfit_kv {
    const char *key;
    const char *value;
    const char *file; /* where it came from: the INI file, or for a
                         command-line option "option --set"           */
    int line;         /* line in file; 0 for an option                */
} rvfit_kv;

/* Where a key came from, for messages: "FILE:LINE", or file alone when
 * line <= 0 ("option --set").  Writes buf (n bytes) and returns it. */
RVFIT_EXPORT const char *rvfit_kv_where(const char *file, int line,
                                        char *buf, size_t n);

/* Log through host h as `who` (e.g. "cpu", "desi"); printf-style. */
RVFIT_EXPORT void rvfit_log(const rvfit_host *h, int level, const char *who,
                            const char *fmt, ...) RVFIT_PRINTF(4, 5);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for durations only,
 * the one clock every timing in the core and the plugins reads.
 * Thread-safe. */
RVFIT_EXPORT double rvfit_now(void);

/* Look up key in kv[0..n-1]; returns value or NULL. */
RVFIT_EXPORT const char *rvfit_kv_get(const rvfit_kv *kv, int n,
                                      const char *key);

/* Parse helpers for plugin options: on a malformed value they return
 * RVFIT_ERR_CONFIG with "FILE:LINE: key 'K': ..." (rvfit_kv_where) in err.  When the key is
 * absent *out keeps its default and RVFIT_OK is returned. */
RVFIT_EXPORT int rvfit_kv_int(const rvfit_kv *kv, int n, const char *key,
                              long lo, long hi, long *out, rvfit_err *err);
RVFIT_EXPORT int rvfit_kv_double(const rvfit_kv *kv, int n, const char *key,
                                 double lo, double hi, double *out,
                                 rvfit_err *err);

#ifdef __cplusplus
}
#endif
#endif
