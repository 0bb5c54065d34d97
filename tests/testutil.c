#include "testutil.h"

#include <dlfcn.h>

#include "rvfit/loader.h"

#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

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

/* Is `name` one of the comma-separated items of list? */
static int tu_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list ? list : ""; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

void tu_need_plugin(const char *target)
{
    const char *built = tu_env("RVFIT_PLUGINS_BUILT");
    const char *doubles = getenv("RVFIT_TEST_PLUGINS");
    if (!tu_listed(built, target) && !tu_listed(doubles, target))
        tu_skip("%s was not built in this configuration (built: %s; for "
                "tests: %s)", target, built, doubles ? doubles : "");
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

#include <fitsio.h>

double *tu_read_col(const char *path, const char *ext, const char *col,
                    long *n)
{
    fitsfile *f;
    int st = 0, cn, anynul;
    double *v = NULL;
    *n = 0;
    if (fits_open_file(&f, path, READONLY, &st)) {
        fprintf(stderr, "tu_read_col: cannot open %s (%d)\n", path, st);
        return NULL;
    }
    fits_movnam_hdu(f, BINARY_TBL, (char *)ext, 0, &st);
    fits_get_colnum(f, CASEINSEN, (char *)col, &cn, &st);
    fits_get_num_rows(f, n, &st);
    if (!st) {
        v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
        double nan = NAN;
        fits_read_col(f, TDOUBLE, cn, 1, 1, *n, &nan, v, &anynul, &st);
    }
    if (st) {
        fprintf(stderr, "tu_read_col: %s[%s] %s: status %d\n", path, ext, col,
                st);
        free(v);
        v = NULL;
    }
    int st2 = 0;
    fits_close_file(f, &st2);
    return v;
}

long long tu_read_key(const char *path, int hdu, const char *key)
{
    fitsfile *f;
    int st = 0;
    long long v = -1;
    if (fits_open_file(&f, path, READONLY, &st))
        return -1;
    fits_movabs_hdu(f, hdu, NULL, &st);
    if (fits_read_key(f, TLONGLONG, (char *)key, &v, NULL, &st))
        v = -1;
    st = 0;
    fits_close_file(f, &st);
    return v;
}

int tu_run(const char *cmd, char **output)
{
    char full[8192];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += r;
        if (len + 1 >= cap) {
            char *g = realloc(buf, cap *= 2);
            if (!g) {
                free(buf);
                buf = NULL;
            } else {
                buf = g;
            }
        }
    }
    if (buf)
        buf[len] = '\0';
    int status = pclose(p);
    if (output)
        *output = buf;
    else
        free(buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *x, long n, double q)
{
    double *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    long m = 0;
    for (long i = 0; i < n; i++)
        if (isfinite(x[i]))
            s[m++] = x[i];
    double r = NAN;
    if (m > 0) {
        qsort(s, (size_t)m, sizeof *s, cmp_d);
        double pos = q * (double)(m - 1);
        long k = (long)pos;
        double t = pos - (double)k;
        r = k + 1 < m ? s[k] * (1 - t) + s[k + 1] * t : s[k];
    }
    free(s);
    return r;
}

double tu_median(const double *x, long n) { return quantile(x, n, 0.5); }

double tu_rstd(const double *x, long n)
{
    return (quantile(x, n, 0.75) - quantile(x, n, 0.25)) / 1.349;
}

const void *tu_plugin_ops(const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tu_env("RVFIT_PLUGIN_PATH"), file);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *sym = dl ? dlsym(dl, RVFIT_PLUGIN_ENTRY_NAME) : NULL;
    if (!sym) {
        fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
        exit(1);
    }
    rvfit_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    return entry()->ops;
}

const rvfit_instrument_mock_ops *tu_mock_ops(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rvfit_instrument_%s.so",
             tu_env("RVFIT_PLUGIN_PATH"), name);
    rvfit_plugin_handle h;
    rvfit_err err;
    int stage;
    if (rvfit_plugin_load_file(path, RVFIT_PLUGIN_INSTRUMENT, name, &h,
                               &stage, &err)) {
        fprintf(stderr, "cannot load %s: %s\n", path, err.msg);
        exit(1);
    }
    const rvfit_instrument_mock_ops *m = rvfit_instrument_mock(&h, &err);
    if (!m) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        exit(1);
    }
    /* The table lives in the plugin: take one more reference so that it
     * stays mapped after the handle is released (as tu_plugin_ops keeps
     * its module). */
    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "%s: %s\n", path, dlerror());
        exit(1);
    }
    rvfit_plugin_unload(&h);
    return m;
}
