/* cpu_plugin.c — descriptor and lifecycle of the cpu backend, the
 * double-precision reference evaluator ("cpu", rvfit_backend_cpu.so).
 * Option [backend.cpu] threads = N (default: the host's nthreads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "rvfit/plugin.h"

_Static_assert(CPU_LANES == 8, "cpu_lanes_sum assumes 8 lanes");

static int cpu_open(const rvfit_host *host, const rvfit_kv *opts, int nopt,
                    void **state, rvfit_err *err)
{
    long nth = host && host->nthreads >= 1 ? host->nthreads : 1;
    int rc = rvfit_kv_int(opts, nopt, "threads", 1, 1024, &nth, err);
    if (rc != RVFIT_OK)
        return rc;
    cpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "cpu: out of memory");
    st->host = host;
    rc = rvfit_pool_create((int)nth, &st->pool, err);
    if (rc != RVFIT_OK) {
        free(st);
        rvfit_err_prefix(err, "cpu");
        return rc;
    }
    st->nthreads = rvfit_pool_size(st->pool);
    if (st->nthreads < nth)
        rvfit_log(host, RVFIT_LOG_WARN, "cpu", "the system gave %d of the "
                  "%ld threads asked for", st->nthreads, nth);
    snprintf(st->device, sizeof st->device, "cpu (%d thread%s)", st->nthreads,
             st->nthreads == 1 ? "" : "s");
    rvfit_log(host, RVFIT_LOG_DEBUG, "cpu", "opened with %d threads",
              st->nthreads);
    *state = st;
    return RVFIT_OK;
}

static const char *cpu_device(void *state)
{
    return ((cpu_state *)state)->device;
}

static void cpu_counters(void *state, rvfit_counters *c)
{
    *c = ((cpu_state *)state)->cnt;
}

static void cpu_close(void *state)
{
    cpu_state *st = state;
    if (!st)
        return;
    rvfit_pool_destroy(st->pool);
    cpu_free_batch(st);
    cpu_free_arena(st);
    cpu_free_library(st);
    free(st);
}

static const rvfit_backend_ops cpu_ops = {
    .size = sizeof(rvfit_backend_ops),
    .version = RVFIT_BACKEND_OPS_VERSION,
    .caps = RVFIT_BACKEND_CAP_GRID | RVFIT_BACKEND_CAP_STENCILS |
            RVFIT_BACKEND_CAP_ARM_WEIGHTS | RVFIT_BACKEND_CAP_BSPLINE,
    .open = cpu_open,
    .device = cpu_device,
    .load_library = cpu_load_library,
    .load_batch = cpu_load_batch,
    .chisq = cpu_chisq,
    .vscan = cpu_vscan,
    .models = cpu_models,
    .counters = cpu_counters,
    .close = cpu_close,
    .update_data = cpu_update_data,
};

static const char *const cpu_keys[] = {"threads", NULL};

static const rvfit_plugin cpu_descriptor = {
    .abi_major = RVFIT_ABI_MAJOR,
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
    .kind = RVFIT_PLUGIN_BACKEND,
    .name = "cpu",
    .version = RVFIT_RELEASE,
    .description = "double-precision reference evaluator on CPU threads",
    .config_keys = cpu_keys,
    .ops = &cpu_ops,
};

RVFIT_EXPORT const rvfit_plugin *RVFIT_PLUGIN_ENTRY(void);
const rvfit_plugin *RVFIT_PLUGIN_ENTRY(void)
{
    return &cpu_descriptor;
}
