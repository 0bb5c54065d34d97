/* cuda_plugin.c — descriptor of the CUDA backend, options, device
 * selection and open/close/device/counters.
 *
 * Options ([backend.cuda]): devices = 0 | 0,1,2 | all | local (default 0;
 * local: device node-local-rank modulo the device count, one per rank);
 * wgsize (block size, power of two in [8, 256], default 64); scratch_mb
 * (cap on per-call device scratch, default 1024; free memory lowers it);
 * fp64 = -1 auto | 0 | 1 (auto: double, which every CUDA GPU has); list = 1
 * logs the devices at info level and declines with RVFIT_ERR_UNAVAILABLE
 * ("listing only"). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "rvfit/plugin.h"

static const char *const cuda_keys[] = {"devices", "list", "fp64", "wgsize",
                                        "scratch_mb", NULL};

/* The entry of key in opts (for FILE:LINE in messages), or NULL. */
static const rvfit_kv *cuda_kv(const rvfit_kv *opts, int nopt, const char *key)
{
    for (int i = nopt - 1; i >= 0; i--)
        if (opts[i].key && !strcmp(opts[i].key, key))
            return &opts[i];
    return NULL;
}

/* devices = "all" | "local" | comma-separated ordinals: into ord[] (*n of
 * them); *all is 1 for "all", 2 for "local" (resolved once the device
 * count is known). */
static int cuda_parse_devices(const rvfit_kv *kv, int *ord, int *n, int *all,
                              rvfit_err *err)
{
    *n = 1;
    ord[0] = 0;
    *all = 0;
    if (!kv)
        return RVFIT_OK;
    const char *s = kv->value ? kv->value : "";
    while (isspace((unsigned char)*s))
        s++;
    for (int k = 1; k <= 2; k++) {
        const char *word = k == 1 ? "all" : "local";
        size_t len = strlen(word);
        const char *t = s + len;
        if (strncmp(s, word, len))
            continue;
        while (isspace((unsigned char)*t))
            t++;
        if (*t == '\0') {
            *all = k;
            return RVFIT_OK;
        }
    }
    *n = 0;
    for (;;) {
        char *end;
        while (isspace((unsigned char)*s))
            s++;
        long v = isdigit((unsigned char)*s) ? strtol(s, &end, 10) : -1;
        if (v < 0 || v > 4096 || *n >= CUDA_MAX_DEV)
            break;
        for (int i = 0; i < *n; i++)
            if (ord[i] == (int)v)
                return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                                     "%s:%d: key 'devices': device %ld named "
                                     "twice", kv->file, kv->line, v);
        ord[(*n)++] = (int)v;
        for (s = end; isspace((unsigned char)*s); s++)
            ;
        if (*s == '\0')
            return RVFIT_OK;
        if (*s++ != ',')
            break;
    }
    return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                         "%s:%d: key 'devices': '%s' is not 'all', 'local' "
                         "or a list of up to %d device numbers such as 0,1",
                         kv->file, kv->line, kv->value ? kv->value : "",
                         CUDA_MAX_DEV);
}

static int cuda_options(cuda_state *st, const rvfit_kv *opts, int nopt,
                        long *fp64, long *list, rvfit_err *err)
{
    /* The kernels' reductions need a power of two of at least RVK_PC. */
    int rc = rvk_options(opts, nopt, CUDA_WG_DEFAULT, RVK_PC, CUDA_SCRATCH_MB,
                         &st->wg, &st->scratch_bytes, fp64, err);
    return rc == RVFIT_OK ? rvfit_kv_int(opts, nopt, "list", 0, 1, list, err)
                          : rc;
}

/* Log every device at `level`; *count receives their number. */
static int cuda_enumerate(const rvfit_host *host, int level, int *count,
                          rvfit_err *err)
{
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *count = 0;
        return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                             "no CUDA device (cudaGetDeviceCount: %s)",
                             cudaGetErrorString(e));
    }
    if (*count <= 0)
        return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                             "no CUDA device (cudaGetDeviceCount: 0 devices)");
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    rvfit_log(host, level, "cuda", "%d device(s), driver %d, runtime %d",
              *count, drv, rt);
    for (int i = 0; i < *count; i++) {
        struct cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess)
            continue;
        rvfit_log(host, level, "cuda",
                  "  device %d: %s (sm_%d%d, %d SMs, %zu MiB)", i, p.name,
                  p.major, p.minor, p.multiProcessorCount,
                  p.totalGlobalMem >> 20);
    }
    return RVFIT_OK;
}

/* Errors that mean "this build or driver cannot use the device" rather
 * than a failure during work: the backend is unavailable, not broken. */
static int cuda_unusable(cudaError_t e)
{
    return e == cudaErrorNoKernelImageForDevice ||
           e == cudaErrorInvalidDeviceFunction ||
           e == cudaErrorUnsupportedPtxVersion ||
           e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice;
}

/* Stream, launch geometry and kernel check on device d. */
static int cuda_setup_dev(cuda_state *st, cuda_dev *d, rvfit_err *err)
{
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, d->ord);
    if (e == cudaSuccess) {
        snprintf(d->name, sizeof d->name, "%s", p.name);
        e = cudaSetDevice(d->ord);
    }
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    int maxwg = 0;
    if (e == cudaSuccess)
        e = (cudaError_t)(st->fp64 ? cuda_kernel_limit_d(&maxwg)
                                   : cuda_kernel_limit_f(&maxwg));
    if (e != cudaSuccess) {
        cudaGetLastError();
        int rc = cuda_fail(err, d, "setup", e);
        if (!cuda_unusable(e))
            return rc;
        rvfit_err_prefix(err, "cuda device %d (sm_%d%d) not usable by this "
                         "build", d->ord, p.major, p.minor);
        return RVFIT_ERR_UNAVAILABLE;
    }
    while (maxwg > 0 && st->wg > (size_t)maxwg && st->wg > RVK_PC)
        st->wg /= 2;
    d->maxgroups = rvk_maxgroups((size_t)p.multiProcessorCount);
    d->budget = st->scratch_bytes;
    int ratio = 0;
    if (cudaDeviceGetAttribute(&ratio,
                               cudaDevAttrSingleToDoublePrecisionPerfRatio,
                               d->ord) != cudaSuccess)
        ratio = 0;
    if (!st->fp64 || ratio <= 4)
        return RVFIT_OK;
    rvfit_log(st->host, RVFIT_LOG_INFO, "cuda",
              "device %d (%s): double precision runs at 1/%d of the float "
              "rate; fp64 = 0 trades ~1e-5 relative accuracy for speed",
              d->ord, d->name, ratio);
    return RVFIT_OK;
}

static void cuda_close(void *state);

/* The devices named (ord[0..n-1] or all of them), each one set up; the
 * device string. */
static int cuda_select(cuda_state *st, int *ord, int n, int all, int count,
                       rvfit_err *err)
{
    int rc = RVFIT_OK;
    if (all == 2 && count > 0) { /* one device per rank on a node */
        ord[0] = st->host->local_rank % count;
        n = 1;
        rvfit_log(st->host, RVFIT_LOG_INFO, "cuda", "node-local rank %d of "
                  "%d: device %d of %d", st->host->local_rank,
                  st->host->local_size, ord[0], count);
    } else if (all == 1) {
        for (n = 0; n < count && n < CUDA_MAX_DEV; n++)
            ord[n] = n;
    }
    for (int i = 0; i < n; i++)
        if (ord[i] >= count)
            return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                                 "no CUDA device %d (%d present)", ord[i],
                                 count);
    size_t len = (size_t)snprintf(st->device, sizeof st->device, "cuda: ");
    for (int i = 0; i < n && rc == RVFIT_OK; i++) {
        cuda_dev *d = &st->dev[i];
        d->ord = ord[i];
        st->ndev = i + 1; /* so that close releases what setup made */
        rc = cuda_setup_dev(st, d, err);
        if (rc == RVFIT_OK && len < sizeof st->device)
            len += (size_t)snprintf(st->device + len, sizeof st->device - len,
                                    "%s%s", i ? ", " : "", d->name);
    }
    return rc;
}

static int cuda_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                     void **state, rvfit_err *err)
{
    *state = NULL;
    long fp64 = -1, list = 0;
    cuda_state *st = calloc(1, sizeof *st);
    if (!st)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "cuda: out of memory");
    st->host = host;
    int count = 0, ord[CUDA_MAX_DEV], n = 0, all = 0;
    /* Configuration errors are reported whether or not there is a GPU. */
    int rc = cuda_options(st, opts, nopt, &fp64, &list, err);
    if (rc == RVFIT_OK)
        rc = cuda_parse_devices(cuda_kv(opts, nopt, "devices"), ord, &n, &all,
                                err);
    if (rc == RVFIT_OK)
        rc = cuda_enumerate(host, list ? RVFIT_LOG_INFO : RVFIT_LOG_DEBUG,
                            &count, err);
    if (rc == RVFIT_OK && list)
        rc = rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "listing only");
    /* Every CUDA GPU has double precision: auto means double. */
    st->fp64 = fp64 != 0;
    st->rsz = st->fp64 ? sizeof(double) : sizeof(float);
    if (rc == RVFIT_OK)
        rc = cuda_select(st, ord, n, all, count, err);
    if (rc != RVFIT_OK) {
        cuda_close(st);
        return rc;
    }
    rvfit_log(host, RVFIT_LOG_INFO, "cuda", "%s, %s, block %zu", st->device,
              st->fp64 ? "double precision"
                       : "single precision with compensated sums (fp64 = 0)",
              st->wg);
    *state = st;
    return RVFIT_OK;
}

static const char *cuda_device(void *state)
{
    return ((cuda_state *)state)->device;
}

static void cuda_counters(void *state, rvfit_counters *c)
{
    *c = ((cuda_state *)state)->cnt;
}

static void cuda_close(void *state)
{
    cuda_state *st = state;
    if (!st)
        return;
    for (int k = 0; k < st->ndev && st->cnt.calls; k++)
        rvfit_log(st->host, RVFIT_LOG_INFO, "cuda",
                  "device %d (%s): %llu points", st->dev[k].ord,
                  st->dev[k].name, (unsigned long long)st->dev[k].points);
    cuda_free_call_buffers(st);
    cuda_free_batch(st);
    cuda_free_library(st);
    rvk_batch_img_free(&st->img);
    for (int k = 0; k < st->ndev; k++)
        if (st->dev[k].stream && cudaSetDevice(st->dev[k].ord) == cudaSuccess)
            cudaStreamDestroy(st->dev[k].stream);
    free(st);
}

static const rvfit_backend_ops cuda_ops = {
    .size = sizeof(rvfit_backend_ops),
    .version = RVFIT_BACKEND_OPS_VERSION,
    .caps = RVFIT_BACKEND_CAP_GRID | RVFIT_BACKEND_CAP_STENCILS |
            RVFIT_BACKEND_CAP_ARM_WEIGHTS | RVFIT_BACKEND_CAP_BSPLINE,
    .open = cuda_open,
    .device = cuda_device,
    .load_library = cuda_load_library,
    .load_batch = cuda_load_batch,
    .chisq = cuda_chisq,
    .vscan = cuda_vscan,
    .models = cuda_models,
    .counters = cuda_counters,
    .close = cuda_close,
    .update_data = cuda_update_data,
};

static const rvfit_plugin cuda_plugin = {
    .abi_major = RVFIT_ABI_MAJOR,
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
    .kind = RVFIT_PLUGIN_BACKEND,
    .name = "cuda",
    .version = RVFIT_RELEASE,
    .description = "CUDA evaluator (shared rvfit kernels, several GPUs)",
    .config_keys = cuda_keys,
    .ops = &cuda_ops,
};

RVFIT_EXPORT const rvfit_plugin *RVFIT_PLUGIN_ENTRY(void)
{
    return &cuda_plugin;
}
