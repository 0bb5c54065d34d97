#include "testutil.h"

#include <dirent.h>
#include <dlfcn.h>

#include "rvfit/loader.h"

#include <stdarg.h>
#include <errno.h>
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

const char *tu_shared_data(void)
{
    const char *d = tu_env("RVFIT_SHARED_DATA");
    struct stat sb;
    if (stat(d, &sb) != 0 || !S_ISDIR(sb.st_mode))
        tu_skip("the real files of ../shared/data are not next to this "
                "checkout (%s: %s)", d, strerror(errno));
    return d;
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
    h.nranks = h.local_size = 1;
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

char *tu_read_strcol(const char *path, const char *ext, const char *col,
                     size_t width, long *n)
{
    fitsfile *f;
    int st = 0, cn;
    char *v = NULL, **p = NULL;
    *n = 0;
    if (fits_open_file(&f, path, READONLY, &st)) {
        fprintf(stderr, "tu_read_strcol: cannot open %s (%d)\n", path, st);
        return NULL;
    }
    fits_movnam_hdu(f, BINARY_TBL, (char *)ext, 0, &st);
    fits_get_colnum(f, CASEINSEN, (char *)col, &cn, &st);
    fits_get_num_rows(f, n, &st);
    if (!st) {
        v = calloc((size_t)(*n ? *n : 1), width);
        p = malloc((size_t)(*n ? *n : 1) * sizeof *p);
        for (long r = 0; v && p && r < *n; r++)
            p[r] = v + (size_t)r * width;
        if (!v || !p)
            st = MEMORY_ALLOCATION;
    }
    long w = 0;
    if (!st)
        fits_get_coltype(f, cn, NULL, &w, NULL, &st);
    if (!st && (size_t)w >= width) /* would not fit with its NUL */
        st = BAD_TFORM;
    if (!st && *n)
        fits_read_col(f, TSTRING, cn, 1, 1, *n, NULL, p, NULL, &st);
    if (st) {
        fprintf(stderr, "tu_read_strcol: %s[%s] %s: status %d\n", path, ext,
                col, st);
        free(v);
        v = NULL;
    }
    free(p);
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
    if (output) { /* the previous output, reused by most callers */
        free(*output);
        *output = NULL;
    }
    char full[40000];
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

/* Instrument NAME through the core loader, into *h (path: its file). */
static void tu_load_instrument(const char *name, rvfit_plugin_handle *h,
                               char *path, size_t n)
{
    rvfit_err err;
    int stage;
    snprintf(path, n, "%s/rvfit_instrument_%s.so",
             tu_env("RVFIT_PLUGIN_PATH"), name);
    if (rvfit_plugin_load_file(path, RVFIT_PLUGIN_INSTRUMENT, name, h,
                               &stage, &err)) {
        fprintf(stderr, "cannot load %s: %s\n", path, err.msg);
        exit(1);
    }
}

/* Table m of handle h (NULL: err says why); the plugin stays mapped after
 * the handle is released (as tu_plugin_ops keeps its module). */
static const void *tu_keep(const char *path, rvfit_plugin_handle *h,
                           const void *m, const rvfit_err *err)
{
    if (!m) {
        fprintf(stderr, "%s: %s\n", path, err->msg);
        exit(1);
    }
    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "%s: %s\n", path, dlerror());
        exit(1);
    }
    rvfit_plugin_unload(h);
    return m;
}

const rvfit_instrument_mock_ops *tu_mock_ops(const char *name)
{
    char path[4096];
    rvfit_plugin_handle h;
    rvfit_err err;
    tu_load_instrument(name, &h, path, sizeof path);
    return tu_keep(path, &h, rvfit_instrument_mock(&h, &err), &err);
}

const rvfit_instrument_epochs_ops *tu_epochs_ops(const char *name)
{
    char path[4096];
    rvfit_plugin_handle h;
    rvfit_err err;
    tu_load_instrument(name, &h, path, sizeof path);
    return tu_keep(path, &h,
                   rvfit_plugin_ext(&h, RVFIT_EXT_EPOCHS,
                                    RVFIT_EPOCHS_EXT_VERSION,
                                    sizeof(rvfit_instrument_epochs_ops),
                                    &err),
                   &err);
}

/* Column c of the current HDU as nrow*repeat int64, double or strings. */
typedef struct tu_colv {
    int kind; /* 0 int, 1 float, 2 string */
    long long *i;
    double *d;
    char **s;
    long n;
} tu_colv;

static void tu_colv_free(tu_colv *v)
{
    free(v->i);
    free(v->d);
    if (v->s)
        free(v->s[0]);
    free(v->s);
    memset(v, 0, sizeof *v);
}

static int tu_colv_read(fitsfile *f, int c, long nrow, tu_colv *v)
{
    int st = 0, type = 0, any = 0;
    long rep = 0, w = 0;
    memset(v, 0, sizeof *v);
    fits_get_eqcoltype(f, c, &type, &rep, &w, &st);
    if (st)
        return -1;
    if (type == TSTRING) {
        v->kind = 2;
        v->n = nrow;
        v->s = calloc((size_t)(nrow ? nrow : 1), sizeof *v->s);
        char *buf = calloc((size_t)(nrow ? nrow : 1), (size_t)w + 1);
        if (!v->s || !buf) {
            free(buf);
            return -1;
        }
        for (long r = 0; r < nrow; r++)
            v->s[r] = buf + r * (w + 1);
        if (nrow)
            fits_read_col(f, TSTRING, c, 1, 1, nrow, NULL, v->s, &any, &st);
        return st ? -1 : 0;
    }
    v->n = nrow * rep;
    if (type == TLOGICAL) { /* as 0/1 integers */
        char *l = malloc((size_t)(v->n ? v->n : 1));
        v->i = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->i);
        if (l && v->i && v->n)
            fits_read_col(f, TLOGICAL, c, 1, 1, v->n, NULL, l, &any, &st);
        for (long k = 0; l && v->i && k < v->n; k++)
            v->i[k] = l[k];
        free(l);
        return (st || !v->i) ? -1 : 0;
    }
    int isf = type == TFLOAT || type == TDOUBLE;
    v->kind = isf ? 1 : 0;
    if (isf) {
        double nan = NAN;
        v->d = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->d);
        if (v->d && v->n)
            fits_read_col(f, TDOUBLE, c, 1, 1, v->n, &nan, v->d, &any, &st);
    } else {
        v->i = malloc((size_t)(v->n ? v->n : 1) * sizeof *v->i);
        if (v->i && v->n)
            fits_read_col(f, TLONGLONG, c, 1, 1, v->n, NULL, v->i, &any, &st);
    }
    return (st || (!v->d && !v->i)) ? -1 : 0;
}

static int tu_val_differ(const tu_colv *a, const tu_colv *b, long k)
{
    if (a->kind == 2)
        return strcmp(a->s[k], b->s[k]) != 0;
    if (a->kind == 0)
        return a->i[k] != b->i[k];
    if (isnan(a->d[k]) || isnan(b->d[k]))
        return isnan(a->d[k]) != isnan(b->d[k]);
    return memcmp(&a->d[k], &b->d[k], sizeof(double)) != 0;
}

long tu_table_diff(const char *pa, const char *pb, const char *ext, char *why,
                   size_t nwhy)
{
    fitsfile *f[2] = {NULL, NULL};
    const char *p[2] = {pa, pb};
    int st = 0, nc[2] = {0, 0};
    long nr[2] = {0, 0}, ndiff = 0;
    snprintf(why, nwhy, "identical");
    for (int i = 0; i < 2 && !st; i++) {
        fits_open_file(&f[i], p[i], READONLY, &st);
        fits_movnam_hdu(f[i], BINARY_TBL, (char *)ext, 0, &st);
        fits_get_num_cols(f[i], &nc[i], &st);
        fits_get_num_rows(f[i], &nr[i], &st);
    }
    if (st || nc[0] != nc[1] || nr[0] != nr[1]) {
        snprintf(why, nwhy, "%s: cannot compare (status %d, %d/%d columns, "
                 "%ld/%ld rows)", ext, st, nc[0], nc[1], nr[0], nr[1]);
        ndiff = -1;
    }
    for (int c = 1; ndiff >= 0 && c <= nc[0]; c++) {
        tu_colv va, vb;
        char name[80] = "", tmpl[16];
        int cn = 0, s2 = 0;
        snprintf(tmpl, sizeof tmpl, "%d", c);
        fits_get_colname(f[0], CASESEN, tmpl, name, &cn, &s2);
        if (tu_colv_read(f[0], c, nr[0], &va) ||
            tu_colv_read(f[1], c, nr[1], &vb) || va.n != vb.n ||
            va.kind != vb.kind) {
            snprintf(why, nwhy, "%s: column %s unreadable or different",
                     ext, name);
            ndiff = -1;
        }
        for (long k = 0; ndiff >= 0 && k < va.n; k++)
            if (tu_val_differ(&va, &vb, k) && ndiff++ == 0)
                snprintf(why, nwhy, "%s: column %s value %ld differs "
                         "(%.17g vs %.17g)", ext, name, k,
                         va.kind == 1 ? va.d[k] : (double)(va.i ? va.i[k] : 0),
                         vb.kind == 1 ? vb.d[k] : (double)(vb.i ? vb.i[k] : 0));
        tu_colv_free(&va);
        tu_colv_free(&vb);
    }
    for (int i = 0; i < 2; i++)
        if (f[i]) {
            int s3 = 0;
            fits_close_file(f[i], &s3);
        }
    return ndiff;
}

static double *tu_read_image(fitsfile *f, long *n, long *ax0, long *ax1,
                             int *st)
{
    int naxis = 0, bitpix = 0, any = 0;
    long ax[2] = {1, 1};
    fits_get_img_param(f, 2, &bitpix, &naxis, ax, st);
    if (*st)
        return NULL;
    *ax0 = ax[0];
    *ax1 = naxis > 1 ? ax[1] : 1;
    *n = *ax0 * *ax1;
    double *v = malloc((size_t)(*n ? *n : 1) * sizeof *v), nan = NAN;
    if (v && *n)
        fits_read_img(f, TDOUBLE, 1, *n, &nan, v, &any, st);
    return v;
}

long tu_image_diff(const char *pa, const char *pb, const char *ext, char *why,
                   size_t nwhy)
{
    fitsfile *f[2] = {NULL, NULL};
    const char *p[2] = {pa, pb};
    double *v[2] = {NULL, NULL};
    long n[2] = {0, 0}, a0[2], a1[2], ndiff = 0;
    int st = 0;
    snprintf(why, nwhy, "identical");
    for (int i = 0; i < 2 && !st; i++) {
        fits_open_file(&f[i], p[i], READONLY, &st);
        fits_movnam_hdu(f[i], IMAGE_HDU, (char *)ext, 0, &st);
        v[i] = tu_read_image(f[i], &n[i], &a0[i], &a1[i], &st);
    }
    if (st || !v[0] || !v[1] || a0[0] != a0[1] || a1[0] != a1[1]) {
        snprintf(why, nwhy, "%s: cannot compare (status %d)", ext, st);
        ndiff = -1;
    }
    for (long k = 0; ndiff >= 0 && k < n[0]; k++) {
        double x = v[0][k], y = v[1][k];
        int d = (isnan(x) || isnan(y)) ? isnan(x) != isnan(y)
                                       : memcmp(&x, &y, sizeof x) != 0;
        if (d && ndiff++ == 0)
            snprintf(why, nwhy, "%s: pixel %ld differs (%.17g vs %.17g)",
                     ext, k, x, y);
    }
    for (int i = 0; i < 2; i++) {
        free(v[i]);
        if (f[i]) {
            int s2 = 0;
            fits_close_file(f[i], &s2);
        }
    }
    return ndiff;
}

/* Every extension of file a compared with the same one of file b. */
static long tu_file_diff(const char *a, const char *b, char *why,
                         size_t nwhy)
{
    fitsfile *f = NULL;
    int st = 0, nh = 0;
    if (fits_open_file(&f, a, READONLY, &st)) {
        snprintf(why, nwhy, "%s: cannot open", a);
        return -1;
    }
    fits_get_num_hdus(f, &nh, &st);
    long total = 0;
    for (int h = 2; h <= nh && total >= 0 && !st; h++) {
        int type = 0;
        char ext[80] = "";
        fits_movabs_hdu(f, h, &type, &st);
        fits_read_key(f, TSTRING, "EXTNAME", ext, NULL, &st);
        char w[512];
        long d = type == IMAGE_HDU ? tu_image_diff(a, b, ext, w, sizeof w)
                                   : tu_table_diff(a, b, ext, w, sizeof w);
        if (d != 0 && total == 0)
            snprintf(why, nwhy, "%s vs %s: %s", a, b, w);
        total = d < 0 ? -1 : total + d;
    }
    int s2 = 0;
    fits_close_file(f, &s2);
    return st ? -1 : total;
}

long tu_outputs_diff(const char *da, const char *db, const char *stem,
                     char *why, size_t nwhy)
{
    char a[4200], b[4200];
    snprintf(why, nwhy, "identical");
    snprintf(a, sizeof a, "%s/rvtab_%s.fits", da, stem);
    snprintf(b, sizeof b, "%s/rvtab_%s.fits", db, stem);
    long d = tu_file_diff(a, b, why, nwhy);
    if (d != 0)
        return d;
    snprintf(a, sizeof a, "%s/rvmod_%s.fits", da, stem);
    snprintf(b, sizeof b, "%s/rvmod_%s.fits", db, stem);
    return tu_file_diff(a, b, why, nwhy);
}

int tu_count_files(const char *dir, const char *s)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, s) != NULL && strcmp(e->d_name, ".") &&
             strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

int tu_rvfit(char **log, const char *fmt, ...)
{
    char cmd[16384], args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s", tu_env("RVFIT_BIN"), args);
    int rc = tu_run(cmd, log);
    CHECK_MSG(rc == 0, "failed: %s\n%s", cmd, log && *log ? *log : "");
    return rc;
}

long tu_backend_calls(const char *log)
{
    const char *p = log ? strstr(log, " points in ") : NULL, *q = NULL;
    while (p && (q = strstr(p + 1, " points in ")))
        p = q;
    return p ? atol(p + 11) : -1;
}

int tu_find_col(const rvfit_table_schema *s, const char *name)
{
    for (int c = 0; c < s->ncol; c++)
        if (!strcmp(s->cols[c].name, name))
            return c;
    return -1;
}

int tu_read_row0(const rvfit_instrument_ops *ops, void *h, int t,
                 const rvfit_table_schema *s, rvfit_table_rows *r)
{
    rvfit_err err;
    int rc = rvfit_rows_alloc(r, s, 1, &err);
    if (!rc)
        rc = ops->read_rows(h, t, 0, 1, r, &err);
    CHECK_MSG(rc == 0, "table %d (%s): %s", t, s->extname, err.msg);
    return rc;
}

double tu_cell(const rvfit_table_schema *s, const rvfit_table_rows *r,
               const char *name)
{
    int c = tu_find_col(s, name);
    if (c < 0 || !r->data || r->nrow < 1)
        return NAN;
    const void *v = r->data[c];
    switch (s->cols[c].type) {
    case RVFIT_COL_U8: return *(const uint8_t *)v;
    case RVFIT_COL_I16: return *(const int16_t *)v;
    case RVFIT_COL_I32: return *(const int32_t *)v;
    case RVFIT_COL_I64: return (double)*(const int64_t *)v;
    case RVFIT_COL_F32: return *(const float *)v;
    case RVFIT_COL_F64: return *(const double *)v;
    default: return NAN;
    }
}

int tu_patch_card(const char *path, int hdu, const char *key,
                  const char *value)
{
    char text[81];
    snprintf(text, sizeof text, "%-8s= %-70s", key, value);
    return tu_patch_card_text(path, hdu, key, text);
}

int tu_patch_card_text(const char *path, int hdu, const char *key,
                       const char *text)
{
    fitsfile *f;
    int st = 0;
    LONGLONG head = 0, data = 0, end = 0;
    if (fits_open_file(&f, path, READONLY, &st))
        return -1;
    fits_movabs_hdu(f, hdu, NULL, &st);
    fits_get_hduaddrll(f, &head, &data, &end, &st);
    int s2 = 0;
    fits_close_file(f, &s2);
    FILE *fp = st ? NULL : fopen(path, "r+b");
    if (!fp)
        return -1;
    char card[81], want[9];
    snprintf(want, sizeof want, "%-8s", key);
    int rc = -1;
    for (LONGLONG at = head; at < data && rc; at += 80) {
        if (fseek(fp, (long)at, SEEK_SET) || fread(card, 1, 80, fp) != 80)
            break;
        if (memcmp(card, want, 8) != 0 || card[8] != '=')
            continue;
        snprintf(card, sizeof card, "%-80s", text);
        rc = fseek(fp, (long)at, SEEK_SET) || fwrite(card, 1, 80, fp) != 80
                 ? -1
                 : 0;
    }
    if (fclose(fp))
        rc = -1;
    return rc;
}

void tu_library_one_arm(rvfit_library *lib, size_t npix, float *flux)
{
    lib->narm = 1;
    strcpy(lib->arm[0].name, "B");
    lib->arm[0].lnl0 = log(5000.0);
    lib->arm[0].dlnl = 1e-4;
    lib->arm[0].npix = npix;
    lib->arm[0].flux = flux;
    lib->sigma0 = 0.5;
    lib->vmax = 100;
    strcpy(lib->instrument, "desi");
}
