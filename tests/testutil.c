#include "testutil.h"

#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

int tu_failures = 0;
int tu_checks = 0;

int tu_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, tu_checks - tu_failures,
           tu_failures);
    return tu_failures ? 1 : 0;
}

void tu_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("SKIPPED: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    exit(77);
}

const char *tu_env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "environment variable %s not set (run via ctest)\n",
                name);
        exit(2);
    }
    return v;
}

const char *tu_tmpdir(const char *name)
{
    static char buf[2048];
    const char *base = tu_env("RVFIT_TEST_TMP");
    char cmd[16384];
    mkdir(base, 0777);
    snprintf(buf, sizeof buf, "%s/%s", base, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot create %s\n", buf);
        exit(2);
    }
    return buf;
}

static void tu_log(void *ctx, int level, const char *who, const char *msg)
{
    (void)ctx;
    static const char *names[] = {"error", "warn", "info", "debug"};
    fprintf(stderr, "[%s] %s: %s\n", names[level & 3], who, msg);
}

rvfit_host tu_host(int level)
{
    rvfit_host h;
    memset(&h, 0, sizeof h);
    h.size = sizeof h;
    h.log_level = level;
    h.log = tu_log;
    h.nthreads = 2;
    return h;
}

int tu_contains(const char *hay, const char *needle)
{
    return hay && needle && strstr(hay, needle) != NULL;
}
