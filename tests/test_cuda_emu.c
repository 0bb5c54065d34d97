/* test_cuda_emu.c — the cuda backend's host code, run here without a GPU:
 * the whole test_cuda_equiv suite against the emulated build
 * (build/plugins/cuda/emu/rvfit_backend_cuda.so: same cuda_*.c host code,
 * CUDA runtime emulated on the CPU by plugins/cuda/emu, shared kernels
 * compiled as C++; streams run only at synchronisation and check every
 * device pointer), plus what needs an emulated machine: three devices
 * sharing each call (per-device point counts logged at close), the
 * out-of-memory retry (halved budget, same numbers) and "no device".
 * Skips when this configuration did not build the emulated backend
 * (RVFIT_CUDA=OFF or RVFIT_CUDA_EMU=OFF, no C++ compiler); fails when it
 * was built and its module is missing. */
#define TCE_NO_MAIN
#include "test_cuda_equiv.c"

#include <unistd.h>

/* Captured log lines of the backend. */
typedef struct logcap {
    char line[64][512];
    int n;
} logcap;

static void cap_log(void *ctx, int level, const char *who, const char *msg)
{
    logcap *c = ctx;
    if (c->n < 64)
        snprintf(c->line[c->n++], sizeof c->line[0], "%s: %s", who, msg);
    if (level <= RVFIT_LOG_WARN)
        fprintf(stderr, "[%d] %s: %s\n", level, who, msg);
}

static int cap_find(const logcap *c, const char *s)
{
    for (int i = 0; i < c->n; i++)
        if (tu_contains(c->line[i], s))
            return i;
    return -1;
}

/* A host whose log lines (info and up) go to c. */
static rvfit_host cap_host(logcap *c)
{
    rvfit_host h = tu_host(RVFIT_LOG_INFO);
    h.log = cap_log;
    h.log_ctx = c;
    return h;
}

/* Three devices: the points of a call split contiguously over them. */
static void check_three(be_backend *cpu, uint64_t *rng)
{
    logcap lc = {.n = 0};
    rvfit_host h = cap_host(&lc);
    setenv("RVFIT_CUDA_EMU_DEVICES", "3", 1);
    rvfit_kv all = {"devices", "all", "test", 0};
    be_backend g;
    rvfit_err err;
    int rc = open_cuda(&g, &h, &all, 1, &err);
    CHECK_MSG(rc == RVFIT_OK, "3 devices: %s", err.msg);
    if (rc != RVFIT_OK)
        return;
    CHECK(!strcmp(g.ops->device(g.st),
                  "cuda: Emulated GPU 0, Emulated GPU 1, Emulated GPU 2"));
    be_result r = {0, 0, 0, 0};
    /* 64 pts + 16 + BE_NVSCAN (7) x 41 */
    be_run_case(&cuda_target, cpu, &g, &be_cases[1], rng, &r, BE_TOL);
    be_close(&g);
    /* chisq 64 = 21+21+22, models 16 = 5+5+6, vscan 7 slots x 41 =
     * (2+2+3) x 41: device 0 and 1 get 21+5+82 = 108, device 2 gets
     * 22+6+123 = 151. */
    CHECK_MSG(cap_find(&lc, "device 0 (Emulated GPU 0): 108 points") >= 0,
              "%s", lc.n ? lc.line[lc.n - 1] : "");
    CHECK(cap_find(&lc, "device 1 (Emulated GPU 1): 108 points") >= 0);
    CHECK(cap_find(&lc, "device 2 (Emulated GPU 2): 151 points") >= 0);
    /* devices = local: node-local rank 4 of 6 on three GPUs gets GPU 1 */
    rvfit_kv local = {"devices", "local", "test", 0};
    h.local_rank = 4;
    h.local_size = 6;
    rc = open_cuda(&g, &h, &local, 1, &err);
    CHECK_MSG(rc == RVFIT_OK && !strcmp(g.ops->device(g.st),
                                        "cuda: Emulated GPU 1"),
              "devices = local: %s", rc ? err.msg : g.ops->device(g.st));
    if (rc == RVFIT_OK)
        be_close(&g);
    setenv("RVFIT_CUDA_EMU_DEVICES", "1", 1);
}

/* 24 MiB devices that claim 8x more: the first chunk fails with
 * cudaErrorMemoryAllocation, the budget is halved (logged) until it fits,
 * and the numbers are unchanged. */
static void check_oom(be_backend *cpu, uint64_t *rng)
{
    logcap lc = {.n = 0};
    rvfit_host h = cap_host(&lc);
    setenv("RVFIT_CUDA_EMU_MEM_MB", "24", 1);
    setenv("RVFIT_CUDA_EMU_MEMINFO_X", "8", 1);
    be_backend g;
    rvfit_err err;
    int rc = open_cuda(&g, &h, NULL, 0, &err);
    CHECK_MSG(rc == RVFIT_OK, "oom open: %s", err.msg);
    if (rc == RVFIT_OK) {
        be_result r = {0, 0, 0, 0};
        printf("24 MiB device reporting 8x its free memory:\n");
        be_run_case(&cuda_target, cpu, &g, &be_cases[4], rng, &r, BE_TOL);
        be_close(&g);
        CHECK_MSG(cap_find(&lc, "budget halved") >= 0, "no halving logged");
    }
    unsetenv("RVFIT_CUDA_EMU_MEM_MB");
    unsetenv("RVFIT_CUDA_EMU_MEMINFO_X");
}

int main(void)
{
    const char *pp = tu_env("RVFIT_PLUGIN_PATH");
    snprintf(cuda_dir, sizeof cuda_dir, "%s/cuda/emu", pp);
    char so[4200];
    snprintf(so, sizeof so, "%s/rvfit_backend_cuda.so", cuda_dir);
    tu_need_plugin("rvfit_backend_cuda_emu");
    if (access(so, R_OK) != 0) {
        fprintf(stderr, "emulated cuda backend built but %s unreadable\n", so);
        return 1;
    }
    setenv("RVFIT_CUDA_EMU_DEVICES", "1", 1);
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    be_backend cpu, gpu;
    check_options(&host);
    rvfit_kv thr = {"threads", "2", "test", 0};
    int rc = be_open(&cpu, "cpu", &host, &thr, 1, &err);
    CHECK_MSG(rc == RVFIT_OK, "cpu open: %s", err.msg);
    int rc2 = open_cuda(&gpu, &host, NULL, 0, &err);
    CHECK_MSG(rc2 == RVFIT_OK, "emulated cuda open: %s", err.msg);
    if (rc != RVFIT_OK || rc2 != RVFIT_OK)
        return tu_finish("test_cuda_emu");
    be_equiv_suite(&cuda_target, &gpu, &cpu, &host);
    uint64_t rng = 12345;
    check_three(&cpu, &rng);
    check_oom(&cpu, &rng);
    setenv("RVFIT_CUDA_EMU_DEVICES", "0", 1);
    rc = open_cuda(&gpu, &host, NULL, 0, &err);
    CHECK_MSG(rc == RVFIT_ERR_UNAVAILABLE &&
                  tu_contains(err.msg, "no CUDA device (cudaGetDeviceCount: "
                                       "no CUDA-capable device"),
              "no device: rc %d: %s", rc, err.msg);
    be_close(&cpu);
    return tu_finish("test_cuda_emu");
}
