/* ocl_plugin.c — descriptor of the OpenCL backend, device selection
 * (options platform/device: index or case-insensitive name substring, or
 * device = local: the device of the node-local MPI rank; device_type =
 * all, gpu (GPUs and accelerators) or cpu: which kinds may be chosen, all
 * unless set; the core asks for gpu in a fallback list),
 * open/close/device/counters.
 *
 * Listing: every open() logs the platforms and devices at debug level;
 * option `list = 1` logs them at info level and returns
 * RVFIT_ERR_UNAVAILABLE ("listing only") so that `rvfit plugins` can show
 * them without keeping a context. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"
#include "rvfit/plugin.h"

#define OCL_MAX_PLAT 16
#define OCL_MAX_DEV 64

static const char *const ocl_keys[] = {"platform", "device", "device_type",
                                       "list", "fp64", "wgsize",
                                       "scratch_mb", NULL};

/* Case-insensitive substring test. */
static int ocl_icontains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* Does selector `sel` (NULL = any, digits = index, else name substring)
 * pick item `idx` named `name`? */
static int ocl_pick(const char *sel, int idx, const char *name)
{
    if (!sel || !*sel)
        return 1;
    char *end;
    long v = strtol(sel, &end, 10);
    if (*end == '\0')
        return v == idx;
    return ocl_icontains(name, sel);
}

typedef struct ocl_devlist {
    int n;
    cl_platform_id plat[OCL_MAX_DEV];
    cl_device_id dev[OCL_MAX_DEV];
    int pidx[OCL_MAX_DEV], didx[OCL_MAX_DEV];
    char pname[OCL_MAX_DEV][128], dname[OCL_MAX_DEV][256];
    int gpu[OCL_MAX_DEV];
    int cpu[OCL_MAX_DEV]; /* CL_DEVICE_TYPE_CPU (PoCL's pthread device) */
} ocl_devlist;

enum { OCL_TYPE_ALL, OCL_TYPE_GPU, OCL_TYPE_CPU };

/* May device i be chosen under device_type t? */
static int ocl_type_ok(const ocl_devlist *L, int i, int t)
{
    return t == OCL_TYPE_ALL || (t == OCL_TYPE_CPU) == (L->cpu[i] != 0);
}

/* All (platform, device) pairs, logged at `level`. */
static int ocl_enumerate(const rvfit_host *host, int level, ocl_devlist *L,
                         rvfit_err *err)
{
    cl_platform_id plats[OCL_MAX_PLAT];
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(OCL_MAX_PLAT, plats, &np);
    L->n = 0;
    if (e != CL_SUCCESS || np == 0)
        return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                             "no OpenCL platform found (is an ICD such as "
                             "pocl-opencl-icd installed?)%s%s",
                             e != CL_SUCCESS ? ": " : "",
                             e != CL_SUCCESS ? ocl_errstr(e) : "");
    for (cl_uint p = 0; p < np && p < OCL_MAX_PLAT; p++) {
        char pn[128] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pn - 1, pn, NULL);
        cl_device_id devs[OCL_MAX_DEV];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, OCL_MAX_DEV, devs,
                           &nd) != CL_SUCCESS)
            nd = 0;
        rvfit_log(host, level, "opencl", "platform %u: %s (%u devices)", p, pn,
                  nd);
        for (cl_uint d = 0; d < nd && L->n < OCL_MAX_DEV; d++) {
            int i = L->n++;
            L->plat[i] = plats[p];
            L->dev[i] = devs[d];
            L->pidx[i] = (int)p;
            L->didx[i] = (int)d;
            snprintf(L->pname[i], sizeof L->pname[i], "%s", pn);
            L->dname[i][0] = '\0';
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof L->dname[i] - 1,
                            L->dname[i], NULL);
            cl_device_type ty = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof ty, &ty, NULL);
            L->gpu[i] = (ty & CL_DEVICE_TYPE_GPU) != 0;
            L->cpu[i] = (ty & CL_DEVICE_TYPE_CPU) != 0;
            cl_ulong mem = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem,
                            NULL);
            rvfit_log(host, level, "opencl", "  device %u: %s (%s, %llu MiB)",
                      d, L->dname[i],
                      L->gpu[i] ? "GPU" : L->cpu[i] ? "CPU" : "accelerator",
                      (unsigned long long)(mem >> 20));
        }
    }
    if (L->n == 0)
        return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                             "%u OpenCL platform(s) but no device", np);
    return RVFIT_OK;
}

/* device = local: of the devices of the chosen platform(s) and type, GPUs
 * when there are any, the one of this node-local rank (rank modulo
 * count). */
static int ocl_select_local(const ocl_devlist *L, const char *psel, int t,
                            const rvfit_host *h, rvfit_err *err)
{
    for (int gpu = 1; gpu >= 0; gpu--) {
        int n = 0;
        for (int i = 0; i < L->n; i++)
            n += L->gpu[i] >= gpu && ocl_type_ok(L, i, t) &&
                 ocl_pick(psel, L->pidx[i], L->pname[i]);
        for (int i = 0, k = 0; n > 0 && i < L->n; i++)
            if (L->gpu[i] >= gpu && ocl_type_ok(L, i, t) &&
                ocl_pick(psel, L->pidx[i], L->pname[i]) &&
                k++ == h->local_rank % n) {
                rvfit_log(h, RVFIT_LOG_INFO, "opencl", "node-local rank %d "
                          "of %d: device %d of %d", h->local_rank,
                          h->local_size, k - 1, n);
                return i;
            }
    }
    rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                  "no OpenCL device on platform '%s'", psel ? psel : "*");
    return -1;
}

/* Why nothing matched: name the devices left out by device_type. */
static void ocl_none(const ocl_devlist *L, const char *psel, const char *dsel,
                     int t, rvfit_err *err)
{
    int left_out = 0, first = 0;
    for (int i = L->n - 1; i >= 0; i--)
        if (!ocl_type_ok(L, i, t))
            left_out++, first = i;
    if (left_out && t == OCL_TYPE_GPU)
        rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                      "no OpenCL GPU or accelerator; its %d CPU device%s "
                      "(e.g. %s / %s) %s left out (device_type = gpu; in a "
                      "fallback list the cpu backend is faster on a CPU: "
                      "[backend.opencl] device_type = cpu or all uses them)",
                      left_out, left_out == 1 ? "" : "s", L->pname[first],
                      L->dname[first], left_out == 1 ? "is" : "are");
    else if (!dsel || strcmp(dsel, "local"))
        rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE,
                      "no OpenCL device matches platform '%s' device '%s'%s",
                      psel ? psel : "*", dsel ? dsel : "*",
                      t == OCL_TYPE_CPU ? " device_type 'cpu'" : "");
}

/* Index into L of the selected device: the first match, GPUs first when
 * no device was named. */
static int ocl_select(const ocl_devlist *L, const char *psel, const char *dsel,
                      int t, const rvfit_host *h, rvfit_err *err)
{
    int i = -1;
    if (dsel && !strcmp(dsel, "local"))
        i = ocl_select_local(L, psel, t, h, err);
    for (int pass = dsel ? 1 : 0; i < 0 && pass < 2; pass++)
        for (int k = 0; i < 0 && k < L->n; k++)
            if ((pass == 1 || L->gpu[k]) && ocl_type_ok(L, k, t) &&
                ocl_pick(psel, L->pidx[k], L->pname[k]) &&
                ocl_pick(dsel, L->didx[k], L->dname[k]))
                i = k;
    if (i < 0)
        ocl_none(L, psel, dsel, t, err);
    return i;
}

/* device_type: all (unset), gpu or cpu. */
static int ocl_device_type(const rvfit_kv *opts, int nopt, int *t,
                           rvfit_err *err)
{
    const char *v = rvfit_kv_get(opts, nopt, "device_type");
    *t = OCL_TYPE_ALL;
    if (!v || !strcmp(v, "all"))
        return RVFIT_OK;
    if (!strcmp(v, "gpu"))
        *t = OCL_TYPE_GPU;
    else if (!strcmp(v, "cpu"))
        *t = OCL_TYPE_CPU;
    else
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "[backend.opencl] device_type = %s: use all, "
                             "gpu (GPUs and accelerators) or cpu", v);
    return RVFIT_OK;
}

static int ocl_options(ocl_state *st, const rvfit_kv *opts, int nopt,
                       long *fp64, rvfit_err *err)
{
    /* The kernels take any power of two (rvfit_kernels.c). */
    st->wg_auto = rvfit_kv_get(opts, nopt, "wgsize") == NULL;
    return rvk_options(opts, nopt, OCL_WG_DEFAULT, 1, OCL_SCRATCH_MB, &st->wg,
                       &st->scratch_bytes, fp64, err);
}

static void ocl_close(void *state);

/* Context, queue and program on device i of L. */
static int ocl_setup(ocl_state *st, const ocl_devlist *L, int i, long fp64,
                     rvfit_err *err)
{
    st->platform = L->plat[i];
    st->dev = L->dev[i];
    cl_device_fp_config fc = 0;
    clGetDeviceInfo(st->dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fc, &fc, NULL);
    if (fp64 == 1 && fc == 0)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "fp64 = 1 but %s has no double precision",
                             L->dname[i]);
    st->fp64 = fp64 == 0 ? 0 : fc != 0;
    if (st->wg_auto && L->gpu[i])
        st->wg = OCL_WG_GPU;
    snprintf(st->device, sizeof st->device, "opencl: %s / %s", L->pname[i],
             L->dname[i]);
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     (cl_context_properties)st->platform, 0};
    st->ctx = clCreateContext(props, 1, &st->dev, NULL, NULL, &e);
    if (e != CL_SUCCESS)
        return ocl_fail(err, "clCreateContext", e);
    st->q = clCreateCommandQueue(st->ctx, st->dev, 0, &e);
    if (e != CL_SUCCESS)
        return ocl_fail(err, "clCreateCommandQueue", e);
    return ocl_build(st, err);
}

static int ocl_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                    void **state, rvfit_err *err)
{
    *state = NULL;
    long list = 0, fp64 = -1;
    int type = OCL_TYPE_ALL;
    int rc = rvfit_kv_int(opts, nopt, "list", 0, 1, &list, err);
    if (rc == RVFIT_OK)
        rc = ocl_device_type(opts, nopt, &type, err);
    if (rc != RVFIT_OK)
        return rc;
    ocl_devlist *L = malloc(sizeof *L);
    ocl_state *st = calloc(1, sizeof *st);
    if (!L || !st) {
        free(L);
        free(st);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "opencl: out of memory");
    }
    st->host = host;
    rc = ocl_options(st, opts, nopt, &fp64, err);
    if (rc == RVFIT_OK)
        rc = ocl_enumerate(host, list ? RVFIT_LOG_INFO : RVFIT_LOG_DEBUG, L,
                           err);
    if (rc == RVFIT_OK && list)
        rc = rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "listing only");
    int i = -1;
    if (rc == RVFIT_OK) {
        i = ocl_select(L, rvfit_kv_get(opts, nopt, "platform"),
                       rvfit_kv_get(opts, nopt, "device"), type, host, err);
        rc = i < 0 ? RVFIT_ERR_UNAVAILABLE : RVFIT_OK;
    }
    if (rc == RVFIT_OK)
        rc = ocl_setup(st, L, i, fp64, err);
    free(L);
    if (rc != RVFIT_OK) {
        ocl_close(st);
        return rc;
    }
    rvfit_log(host, RVFIT_LOG_INFO, "opencl", "%s, %s, work-group %zu",
              st->device,
              st->fp64 ? "double precision (cl_khr_fp64)"
                       : "single precision with compensated sums (no fp64)",
              st->wg);
    *state = st;
    return RVFIT_OK;
}

static const char *ocl_device(void *state)
{
    return ((ocl_state *)state)->device;
}

static void ocl_counters(void *state, rvfit_counters *c)
{
    *c = ((ocl_state *)state)->cnt;
}

static void ocl_close(void *state)
{
    ocl_state *st = state;
    if (!st)
        return;
    ocl_free_call_buffers(st);
    ocl_free_batch(st);
    ocl_free_library(st);
    rvk_batch_img_free(&st->img);
    if (st->k_tpl)
        clReleaseKernel(st->k_tpl);
    if (st->k_like)
        clReleaseKernel(st->k_like);
    if (st->prog)
        clReleaseProgram(st->prog);
    if (st->q)
        clReleaseCommandQueue(st->q);
    if (st->ctx)
        clReleaseContext(st->ctx);
    free(st->hbuf);
    free(st);
}

static const rvfit_backend_ops ocl_ops = {
    .size = sizeof(rvfit_backend_ops),
    .version = RVFIT_BACKEND_OPS_VERSION,
    .caps = RVFIT_BACKEND_CAP_GRID | RVFIT_BACKEND_CAP_STENCILS |
            RVFIT_BACKEND_CAP_ARM_WEIGHTS | RVFIT_BACKEND_CAP_BSPLINE,
    .open = ocl_open,
    .device = ocl_device,
    .load_library = ocl_load_library,
    .load_batch = ocl_load_batch,
    .chisq = ocl_chisq,
    .vscan = ocl_vscan,
    .models = ocl_models,
    .counters = ocl_counters,
    .close = ocl_close,
    .update_data = ocl_update_data,
};

static const rvfit_plugin ocl_plugin = {
    .abi_major = RVFIT_ABI_MAJOR,
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
    .kind = RVFIT_PLUGIN_BACKEND,
    .name = "opencl",
    .version = RVFIT_RELEASE,
    .description = "OpenCL evaluator (shared rvfit kernels; PoCL, GPUs)",
    .config_keys = ocl_keys,
    .ops = &ocl_ops,
};

RVFIT_EXPORT const rvfit_plugin *RVFIT_PLUGIN_ENTRY(void)
{
    return &ocl_plugin;
}
