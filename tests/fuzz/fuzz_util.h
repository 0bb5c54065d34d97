/* fuzz_util.h — shared by the libFuzzer targets (tests/fuzz/fuzz_*.c):
 * each input goes to a per-process temporary file (the readers take
 * paths, and CFITSIO's disk driver is what production uses), a silent
 * host, and the checks every target makes of a failure: a non-empty
 * message that names the file.  A violated property aborts, which
 * libFuzzer reports as a crash with the input saved. */
#ifndef RVFIT_FUZZ_UTIL_H
#define RVFIT_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/host.h"
#include "rvfit/status.h"

/* Write data to $TMPDIR (or /tmp)/rvfit-fuzz-TAG-PID.EXT; path gets its
 * name.  0 on success. */
static inline int fz_write(const char *tag, const char *ext,
                           const uint8_t *data, size_t size, char *path,
                           size_t n)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, n, "%s/rvfit-fuzz-%s-%ld.%s", dir && dir[0] ? dir : "/tmp",
             tag, (long)getpid(), ext);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    return (fclose(f) != 0 || w != size) ? -1 : 0;
}

static inline void fz_log(void *ctx, int level, const char *who,
                          const char *msg)
{
    (void)ctx, (void)level, (void)who, (void)msg;
}

static inline rvfit_host fz_host(void)
{
    rvfit_host h;
    memset(&h, 0, sizeof h);
    h.size = sizeof h;
    h.log_level = RVFIT_LOG_DEBUG; /* format every message: UB shows */
    h.log = fz_log;
    h.nthreads = 1;
    h.nranks = 1;
    h.local_size = 1;
    return h;
}

/* A failure must say what and where: abort (a finding) when not. */
static inline void fz_check_error(const rvfit_err *err, const char *path)
{
    if (!err->msg[0] || !strstr(err->msg, path)) {
        fprintf(stderr, "fuzz: error message lacks the path %s: '%s'\n",
                path, err->msg);
        abort();
    }
}

/* A property of the output was violated. */
#define FZ_REQUIRE(cond, ...)                                              \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "fuzz: %s: ", #cond);                          \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            abort();                                                       \
        }                                                                  \
    } while (0)

#endif
