/* test_cuda_equiv.c — the CUDA backend against the cpu reference: the
 * shared suite of backend_equiv.c (seeded random problems of many shapes;
 * -2 ln L, chisq per arm, models and vscan within 1e-6 relative, scaled by
 * max(|x|, 1); counters and device name; the float kernels, fp64 = 0, with
 * a looser tolerance) plus what is CUDA's own: several devices (devices =
 * all) when there are, small scratch budgets (many chunks).  Option errors
 * are checked wherever the plugin was built; the rest skips (exit 77, with
 * the reason) when no CUDA device is available.  The whole test skips when
 * this configuration did not build the plugin (-DRVFIT_CUDA=OFF, no
 * toolkit).  RVFIT_BENCH=1 adds a DESI-size throughput comparison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_equiv.c" /* the harness: see backend_equiv.h */
#include "testutil.h"

static void cuda_extra(const be_target *t, be_backend *cpu,
                       const rvfit_host *host, uint64_t *rng);

/* The cuda plugin under test: in $RVFIT_PLUGIN_PATH, or the emulated build
 * (test_cuda_emu.c includes this file with TCE_NO_MAIN and sets dir). */
static char cuda_dir[4096];
static const be_target cuda_target = {"cuda", cuda_dir, 16384, cuda_extra};

static int open_cuda(be_backend *b, const rvfit_host *host,
                     const rvfit_kv *opts, int nopt, rvfit_err *err)
{
    return be_target_open(&cuda_target, b, host, opts, nopt, err);
}

/* Option errors: reported as RVFIT_ERR_CONFIG with FILE:LINE whether or
 * not a device is present (options are parsed before the device count). */
static void check_options(const rvfit_host *host)
{
    static const struct {
        const char *key, *value, *says;
    } bad[] = {
        {"wgsize", "48", "power of two"},
        {"wgsize", "4", "power of two"},
        {"devices", "0,0", "named twice"},
        {"devices", "0,x", "test.ini:7"},
        {"devices", "", "key 'devices'"},
        {"devices", "1,", "not 'all'"},
        {"fp64", "2", "fp64"},
        {"scratch_mb", "0", "scratch_mb"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rvfit_kv kv = {bad[i].key, bad[i].value, "test.ini", 7};
        rvfit_err err;
        be_backend b;
        int rc = open_cuda(&b, host, &kv, 1, &err);
        CHECK_MSG(rc == RVFIT_ERR_CONFIG && tu_contains(err.msg, bad[i].says),
                  "%s = '%s': rc %d: %s", bad[i].key, bad[i].value, rc,
                  err.msg);
        if (rc == RVFIT_OK)
            be_close(&b);
    }
}

/* Selection: list declines; an absent ordinal is unavailable; "all" works
 * and, with several devices, splits the points over them. */
static void check_selection(be_backend *cpu, const rvfit_host *host,
                            uint64_t *rng)
{
    rvfit_err err;
    be_backend b;
    rvfit_kv list = {"list", "1", "test", 0};
    CHECK(open_cuda(&b, host, &list, 1, &err) == RVFIT_ERR_UNAVAILABLE);
    CHECK(tu_contains(err.msg, "listing only"));
    rvfit_kv far = {"devices", "0, 4095", "test", 0};
    CHECK(open_cuda(&b, host, &far, 1, &err) == RVFIT_ERR_UNAVAILABLE);
    CHECK(tu_contains(err.msg, "no CUDA device 4095"));
    rvfit_kv all = {"devices", "all", "test", 0};
    int rc = open_cuda(&b, host, &all, 1, &err);
    CHECK_MSG(rc == RVFIT_OK, "devices = all: %s", err.msg);
    if (rc != RVFIT_OK)
        return;
    const char *dev = b.ops->device(b.st);
    printf("devices = all: %s\n", dev);
    be_result r = {0, 0, 0, 0};
    be_run_case(&cuda_target, cpu, &b, &be_cases[2], rng, &r, BE_TOL);
    /* 64 points: few on each device */
    be_run_case(&cuda_target, cpu, &b, &be_cases[1], rng, &r, BE_TOL);
    be_close(&b);
}

/* A 1 MiB scratch budget: many chunks per call, same numbers. */
static void check_small_scratch(be_backend *cpu, const rvfit_host *host,
                                uint64_t *rng)
{
    rvfit_kv kv = {"scratch_mb", "1", "test", 0};
    rvfit_err err;
    be_backend b;
    int rc = open_cuda(&b, host, &kv, 1, &err);
    CHECK_MSG(rc == RVFIT_OK, "scratch_mb = 1: %s", err.msg);
    if (rc != RVFIT_OK)
        return;
    printf("scratch_mb = 1:\n");
    be_result r = {0, 0, 0, 0};
    be_run_case(&cuda_target, cpu, &b, &be_cases[4], rng, &r, BE_TOL);
    be_run_case(&cuda_target, cpu, &b, &be_cases[3], rng, &r, BE_TOL);
    be_close(&b);
}

/* Between the fp64 and float parts of the suite. */
static void cuda_extra(const be_target *t, be_backend *cpu,
                       const rvfit_host *host, uint64_t *rng)
{
    (void)t;
    check_selection(cpu, host, rng);
    check_small_scratch(cpu, host, rng);
}

#ifndef TCE_NO_MAIN
int main(void)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    be_backend cpu, gpu;
    tu_need_plugin("rvfit_backend_cuda");
    check_options(&host);
    int rc = open_cuda(&gpu, &host, NULL, 0, &err);
    if (rc == RVFIT_ERR_UNAVAILABLE) {
        /* The reason must be the documented one, not a generic failure. */
        CHECK_MSG(tu_contains(err.msg, "CUDA device"), "%s", err.msg);
        if (tu_failures)
            return tu_finish("test_cuda_equiv");
        printf("option checks: %d passed\n", tu_checks);
        tu_skip("cuda: %s", err.msg);
    }
    CHECK_MSG(rc == RVFIT_OK, "cuda open: %s", err.msg);
    rvfit_kv thr = {"threads", "2", "test", 0};
    int rc2 = be_open(&cpu, "cpu", &host, &thr, 1, &err);
    CHECK_MSG(rc2 == RVFIT_OK, "cpu open: %s", err.msg);
    if (rc != RVFIT_OK || rc2 != RVFIT_OK)
        return tu_finish("test_cuda_equiv");
    be_equiv_suite(&cuda_target, &gpu, &cpu, &host);
    be_close(&cpu);
    return tu_finish("test_cuda_equiv");
}
#endif
