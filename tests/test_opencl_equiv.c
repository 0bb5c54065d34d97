/* test_opencl_equiv.c — the OpenCL backend against the cpu reference:
 * the shared suite of backend_equiv.c (seeded random problems of many
 * shapes; -2 ln L, chisq per arm, models and vscan within 1e-6 relative,
 * scaled by max(|x|, 1); counters and device name; the float device code
 * with a looser tolerance) plus the OpenCL options (list, platform/device
 * selectors, wgsize).  Skips (exit 77, with the reason) when this
 * configuration did not build the plugin (-DRVFIT_OPENCL=OFF, no OpenCL
 * SDK) or no OpenCL device is available; a built plugin that fails to load
 * is a failure.  RVFIT_BENCH=1 adds a DESI-size throughput comparison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_equiv.c" /* the harness: see backend_equiv.h */
#include "testutil.h"

/* Options: list = 1 lists and declines; platform/device selectors;
 * wgsize (a bad value, and a small group against the cpu). */
static void check_selection(const be_target *t, be_backend *cpu,
                            const rvfit_host *host, uint64_t *rng)
{
    rvfit_err err;
    be_backend b;
    rvfit_kv list = {"list", "1", "test", 0};
    CHECK(be_target_open(t, &b, host, &list, 1, &err) ==
          RVFIT_ERR_UNAVAILABLE);
    CHECK(tu_contains(err.msg, "listing only"));
    rvfit_kv sel[2] = {{"platform", "0", "test", 0},
                       {"device", "no-such-device-xyz", "test", 0}};
    CHECK(be_target_open(t, &b, host, sel, 2, &err) ==
          RVFIT_ERR_UNAVAILABLE);
    CHECK(tu_contains(err.msg, "no-such-device-xyz"));
    rvfit_kv idx[2] = {{"platform", "0", "test", 0},
                       {"device", "0", "test", 0}};
    int rc = be_target_open(t, &b, host, idx, 2, &err);
    CHECK_MSG(rc == RVFIT_OK, "platform 0 device 0: %s", err.msg);
    if (rc == RVFIT_OK)
        be_close(&b);
    rvfit_kv bad = {"wgsize", "48", "test", 0};
    CHECK(be_target_open(t, &b, host, &bad, 1, &err) == RVFIT_ERR_CONFIG);
    /* Work-groups smaller than the RVK_PC normal-equation sums of one
     * pass: each work-item reduces several (they used to stay unset). */
    rvfit_kv small = {"wgsize", "4", "test", 0};
    rc = be_target_open(t, &b, host, &small, 1, &err);
    CHECK_MSG(rc == RVFIT_OK, "wgsize 4: %s", err.msg);
    if (rc == RVFIT_OK) {
        be_result res = {0, 0, 0, 0};
        printf("wgsize 4:\n");
        be_run_case(t, cpu, &b, &be_cases[1], rng, &res, BE_TOL);
        be_close(&b);
    }
    /* device = local on platform 0: rank r of the node takes device r mod
     * the platform's devices (PoCL: one), and says so. */
    rvfit_host h = *host;
    h.local_rank = 5;
    h.local_size = 8;
    rvfit_kv loc[2] = {{"platform", "0", "test", 0},
                       {"device", "local", "test", 0}};
    rc = be_target_open(t, &b, &h, loc, 2, &err);
    CHECK_MSG(rc == RVFIT_OK, "device = local: %s", err.msg);
    if (rc == RVFIT_OK)
        be_close(&b);
}

static const be_target ocl_target = {"opencl", NULL, 2048, check_selection};

int main(void)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    be_backend cpu, ocl;
    tu_need_plugin("rvfit_backend_opencl");
    int rc = be_target_open(&ocl_target, &ocl, &host, NULL, 0, &err);
    if (rc == RVFIT_ERR_UNAVAILABLE)
        tu_skip("opencl backend unavailable: %s", err.msg);
    CHECK_MSG(rc == RVFIT_OK, "opencl open: %s", err.msg);
    rvfit_kv thr = {"threads", "2", "test", 0};
    int rc2 = be_open(&cpu, "cpu", &host, &thr, 1, &err);
    CHECK_MSG(rc2 == RVFIT_OK, "cpu open: %s", err.msg);
    if (rc != RVFIT_OK || rc2 != RVFIT_OK)
        return tu_finish("test_opencl_equiv");
    be_equiv_suite(&ocl_target, &ocl, &cpu, &host);
    be_close(&cpu);
    return tu_finish("test_opencl_equiv");
}
