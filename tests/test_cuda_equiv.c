/* test_cuda_equiv.c — the CUDA backend against the cpu reference on seeded
 * random problems of many shapes: -2 ln L, chisq per arm, models and vscan
 * within 1e-6 relative (scaled by max(|x|, 1)); counters and device name;
 * several devices (devices = all) when there are; small scratch budgets
 * (many chunks); the float kernels (fp64 = 0) with a looser tolerance.
 * Option errors are checked everywhere; the rest skips (exit 77, with the
 * reason) when no CUDA device is available.  RVFIT_BENCH=1 adds a
 * DESI-size throughput comparison. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_equiv.c" /* the harness: see backend_equiv.h */
#include "testutil.h"

/* Directory of the cuda plugin under test: $RVFIT_PLUGIN_PATH, or the
 * emulated build (test_cuda_emu.c includes this file with TCE_NO_MAIN). */
static char cuda_dir[4096];

static int open_cuda(be_backend *b, const rvfit_host *host,
                     const rvfit_kv *opts, int nopt, rvfit_err *err)
{
    char old[4096];
    const char *p = getenv("RVFIT_PLUGIN_PATH");
    snprintf(old, sizeof old, "%s", p ? p : ".");
    if (cuda_dir[0])
        setenv("RVFIT_PLUGIN_PATH", cuda_dir, 1);
    int rc = be_open(b, "cuda", host, opts, nopt, err);
    setenv("RVFIT_PLUGIN_PATH", old, 1);
    return rc;
}

#define TOL 1e-6
#define TOL_MODEL 2e-5 /* float outputs, relative to the row's max */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct shape_case {
    be_shape sh;
    size_t npts;
} shape_case;

static const shape_case cases[] = {
    /* narm npix npoly basis ndiag nparam holes vsini nspec wps | points */
    {{1, 40, 1, RVFIT_BASIS_GAUSS, 0, 1, 0.0, 0.0, 3, 0}, 1},
    {{2, 60, 3, RVFIT_BASIS_CHEB, 11, 2, 0.2, 35.0, 4, 1}, 64},
    {{3, 500, 10, RVFIT_BASIS_GAUSS, 11, 3, 0.15, 35.0, 6, 0}, 512},
    {{1, 500, 3, RVFIT_BASIS_GAUSS, 0, 2, 0.1, 35.0, 5, 1}, 4096},
    {{2, 3000, 10, RVFIT_BASIS_GAUSS, 11, 3, 0.1, 35.0, 4, 0}, 200},
    {{3, 3000, 1, RVFIT_BASIS_CHEB, 0, 2, 0.0, 0.0, 3, 0}, 100},
    {{2, 500, 10, RVFIT_BASIS_CHEB, 5, 3, 0.3, 300.0, 4, 1}, 300},
};

/* Models of the first n points: max |diff| / max(|row|) over rows. */
static double cmp_models(be_backend *cpu, be_backend *gpu, const be_problem *pr,
                         size_t n, const rvfit_point *pts)
{
    int na = pr->batch.narm;
    size_t np = pr->batch.arm[0].npix * n;
    float *buf = calloc(4 * (size_t)na * np, sizeof(float));
    float *m[2][RVFIT_MAX_ARMS], *c[2][RVFIT_MAX_ARMS];
    for (int a = 0; a < na; a++)
        for (int k = 0; k < 2; k++) {
            m[k][a] = buf + ((size_t)(4 * a + 2 * k)) * np;
            c[k][a] = m[k][a] + np;
        }
    rvfit_err err;
    int r1 = cpu->ops->models(cpu->st, n, pts, m[0], c[0], &err);
    int r2 = gpu->ops->models(gpu->st, n, pts, m[1], c[1], &err);
    CHECK_MSG(r1 == RVFIT_OK && r2 == RVFIT_OK, "models: %s", err.msg);
    double worst = 0.0;
    size_t npix = pr->batch.arm[0].npix;
    for (int a = 0; a < na; a++)
        for (size_t q = 0; q < n; q++)
            for (int w = 0; w < 2; w++) {
                const float *x = (w ? c[0][a] : m[0][a]) + q * npix;
                const float *y = (w ? c[1][a] : m[1][a]) + q * npix;
                double mx = 0.0, d = 0.0;
                for (size_t i = 0; i < npix; i++) {
                    mx = fmax(mx, fabs(x[i]));
                    d = fmax(d, fabs((double)x[i] - y[i]));
                }
                double rel = mx > 0 ? d / mx : d;
                worst = isnan(rel) ? INFINITY : fmax(worst, rel);
            }
    free(buf);
    return worst;
}

/* vscan of nq base points on nvel velocities each. */
static double cmp_vscan(be_backend *cpu, be_backend *gpu, size_t nq,
                        const rvfit_point *base, size_t nvel)
{
    double *vel = malloc(nq * nvel * sizeof(double));
    double *r = malloc(2 * nq * nvel * sizeof(double));
    for (size_t q = 0; q < nq; q++)
        for (size_t k = 0; k < nvel; k++)
            vel[q * nvel + k] = -400.0 + 800.0 * (double)k / (double)(nvel - 1) +
                                3.0 * (double)q;
    rvfit_err err;
    int r1 = cpu->ops->vscan(cpu->st, nq, base, nvel, vel, r, &err);
    int r2 = gpu->ops->vscan(gpu->st, nq, base, nvel, vel, r + nq * nvel, &err);
    CHECK_MSG(r1 == RVFIT_OK && r2 == RVFIT_OK, "vscan: %s", err.msg);
    double d = be_maxrel(r, r + nq * nvel, nq * nvel);
    free(vel);
    free(r);
    return d;
}

typedef struct result {
    double m2lnl, chisq, models, vscan;
} result;

/* One shape: chisq (all points), models (first 16), vscan (nq x 41). */
static void run_case(be_backend *cpu, be_backend *gpu, const shape_case *sc,
                     uint64_t *rng, result *res, double tol)
{
    be_problem pr;
    rvfit_err err;
    int rc = be_problem_make(&pr, &sc->sh, rng, &err);
    CHECK_MSG(rc == RVFIT_OK, "problem: %s", err.msg);
    if (rc != RVFIT_OK)
        return;
    rc = be_load(cpu, &pr, &err);
    CHECK_MSG(rc == RVFIT_OK, "cpu load: %s", err.msg);
    rc = rc ? rc : be_load(gpu, &pr, &err);
    CHECK_MSG(rc == RVFIT_OK, "cuda load: %s", err.msg);
    size_t n = sc->npts, na = (size_t)sc->sh.narm;
    rvfit_point *pts = malloc(n * sizeof *pts);
    double *out = malloc(2 * n * (1 + na) * sizeof(double));
    be_points(&pr, n, rng, pts);
    rvfit_chisq_out o1 = {out, out + n}, o2 = {out + n * (1 + na),
                                               out + n * (2 + na)};
    double t0 = now();
    int r1 = rc ? rc : cpu->ops->chisq(cpu->st, n, pts, &o1, &err);
    double t1 = now();
    int r2 = r1 ? r1 : gpu->ops->chisq(gpu->st, n, pts, &o2, &err);
    double t2 = now();
    CHECK_MSG(r1 == RVFIT_OK && r2 == RVFIT_OK, "chisq: %s", err.msg);
    if (r1 == RVFIT_OK && r2 == RVFIT_OK) {
        double d1 = be_maxrel(o1.m2lnl, o2.m2lnl, n);
        double d2 = be_maxrel(o1.chisq, o2.chisq, n * na);
        size_t nm = n < 16 ? n : 16, nq = n < 7 ? n : 7;
        double d3 = cmp_models(cpu, gpu, &pr, nm, pts);
        double d4 = cmp_vscan(cpu, gpu, nq, pts, 41);
        printf("  %zu arm x %4zu px npoly %2d ndiag %2d nparam %d vsini<=%3.0f "
               "n %4zu: m2lnl %.1e chisq %.1e models %.1e vscan %.1e "
               "(cpu %.3f s, cuda %.3f s)\n",
               na, sc->sh.npix, sc->sh.npoly, sc->sh.ndiag, sc->sh.nparam,
               sc->sh.vsini_max, n, d1, d2, d3, d4, t1 - t0, t2 - t1);
        CHECK_MSG(d1 <= tol, "m2lnl rel diff %.3g", d1);
        CHECK_MSG(d2 <= tol, "chisq rel diff %.3g", d2);
        CHECK_MSG(d3 <= (tol > TOL ? tol : TOL_MODEL), "models %.3g", d3);
        CHECK_MSG(d4 <= tol, "vscan rel diff %.3g", d4);
        res->m2lnl = fmax(res->m2lnl, d1);
        res->chisq = fmax(res->chisq, d2);
        res->models = fmax(res->models, d3);
        res->vscan = fmax(res->vscan, d4);
        /* Known cases from the harness: skipped arm, failed Cholesky. */
        for (size_t q = 0; q < n; q++) {
            if (pts[q].spec == 1 && sc->sh.ndiag > 0)
                CHECK_MSG(o2.m2lnl[q] == 1e30, "%.17g %.17g", o2.m2lnl[q],
                          o1.m2lnl[q]);
            if (pts[q].spec == 0)
                CHECK(o2.chisq[q * na] == 0.0);
        }
    }
    free(pts);
    free(out);
    be_problem_free(&pr);
}

/* Counters count exactly the points evaluated; device is CUDA's. */
static void check_counters(be_backend *gpu, uint64_t *rng)
{
    const char *dev = gpu->ops->device(gpu->st);
    printf("  device: %s\n", dev);
    CHECK(strncmp(dev, "cuda: ", 6) == 0 && strlen(dev) > 6);
    be_shape sh = {2, 100, 3, RVFIT_BASIS_GAUSS, 5, 2, 0.0, 10.0, 3, 0};
    be_problem pr;
    rvfit_err err;
    CHECK(be_problem_make(&pr, &sh, rng, &err) == RVFIT_OK);
    CHECK(be_load(gpu, &pr, &err) == RVFIT_OK);
    rvfit_counters c0, c1;
    gpu->ops->counters(gpu->st, &c0);
    rvfit_point pts[7];
    double m2[7 * 5], vel[5 * 3] = {0};
    float mbuf[2][7 * 100];
    float *mo[2] = {mbuf[0], mbuf[1]};
    be_points(&pr, 7, rng, pts);
    rvfit_chisq_out o = {m2, NULL};
    CHECK(gpu->ops->chisq(gpu->st, 7, pts, &o, &err) == RVFIT_OK);
    CHECK(gpu->ops->vscan(gpu->st, 3, pts, 5, vel, m2, &err) == RVFIT_OK);
    CHECK(gpu->ops->models(gpu->st, 2, pts, mo, NULL, &err) == RVFIT_OK);
    CHECK(gpu->ops->vscan(gpu->st, 3, pts, 0, vel, m2, &err) == RVFIT_OK);
    pts[0].spec = 99; /* invalid: no points counted */
    CHECK(gpu->ops->chisq(gpu->st, 1, pts, &o, &err) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(err.msg, "spectrum 99"));
    pts[0].spec = 0;
    pts[0].v = 2e5; /* beyond c/2 */
    CHECK(gpu->ops->chisq(gpu->st, 1, pts, &o, &err) == RVFIT_ERR_INVALID);
    gpu->ops->counters(gpu->st, &c1);
    CHECK_MSG(c1.points - c0.points == 7 + 15 + 2, "points %llu",
              (unsigned long long)(c1.points - c0.points));
    CHECK(c1.calls - c0.calls == 4);
    CHECK(c1.seconds > c0.seconds);
    be_problem_free(&pr);
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
    result r = {0, 0, 0, 0};
    run_case(cpu, &b, &cases[2], rng, &r, TOL);
    run_case(cpu, &b, &cases[1], rng, &r, TOL); /* 64 points, few each */
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
    result r = {0, 0, 0, 0};
    run_case(cpu, &b, &cases[4], rng, &r, TOL);
    run_case(cpu, &b, &cases[3], rng, &r, TOL);
    be_close(&b);
}

/* DESI-like throughput: 3 arms x ~2700 px, npoly 10, ndiag 11. */
static void bench(be_backend *cpu, be_backend *gpu, uint64_t *rng)
{
    be_shape sh = {3, 2700, 10, RVFIT_BASIS_GAUSS, 11, 3, 0.0, 10.0, 16, 0};
    be_problem pr;
    rvfit_err err;
    if (be_problem_make(&pr, &sh, rng, &err) != RVFIT_OK)
        return;
    be_load(cpu, &pr, &err);
    be_load(gpu, &pr, &err);
    size_t n = 16384;
    rvfit_point *pts = malloc(n * sizeof *pts);
    double *m2 = malloc(n * sizeof(double));
    be_points(&pr, n, rng, pts);
    rvfit_chisq_out o = {m2, NULL};
    be_backend *b[2] = {cpu, gpu};
    for (int k = 0; k < 2; k++) {
        size_t nk = k ? n : 2048;
        b[k]->ops->chisq(b[k]->st, 64, pts, &o, &err); /* warm-up */
        double t0 = now();
        b[k]->ops->chisq(b[k]->st, nk, pts, &o, &err);
        double dt = now() - t0;
        printf("  bench %-40s %8.0f points/s\n", b[k]->ops->device(b[k]->st),
               (double)nk / dt);
    }
    free(pts);
    free(m2);
    be_problem_free(&pr);
}

/* Everything after the option checks, on an opened plugin (which it
 * closes); `extra` opens more instances (selection, scratch, float). */
static void equiv_suite(be_backend *gpu, be_backend *cpu,
                        const rvfit_host *host, int extra)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    result res = {0, 0, 0, 0};
    printf("fp64 device code:\n");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        run_case(cpu, gpu, &cases[k], &rng, &res, TOL);
    printf("max rel diff: m2lnl %.2e chisq %.2e models %.2e vscan %.2e\n",
           res.m2lnl, res.chisq, res.models, res.vscan);
    check_counters(gpu, &rng);
    if (getenv("RVFIT_BENCH"))
        bench(cpu, gpu, &rng);
    be_close(gpu);
    if (!extra)
        return;
    check_selection(cpu, host, &rng);
    check_small_scratch(cpu, host, &rng);

    /* The float kernels (fp64 = 0): looser, as on OpenCL devices. */
    rvfit_kv f32 = {"fp64", "0", "test", 0};
    rvfit_err err;
    int rc = open_cuda(gpu, host, &f32, 1, &err);
    CHECK_MSG(rc == RVFIT_OK, "fp64 = 0: %s", err.msg);
    if (rc == RVFIT_OK) {
        result rf = {0, 0, 0, 0};
        printf("float device code (fp64 = 0):\n");
        run_case(cpu, gpu, &cases[2], &rng, &rf, 1e-3);
        if (getenv("RVFIT_BENCH"))
            bench(cpu, gpu, &rng);
        be_close(gpu);
    }
}

#ifndef TCE_NO_MAIN
int main(void)
{
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_err err;
    be_backend cpu, gpu;
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
    equiv_suite(&gpu, &cpu, &host, 1);
    be_close(&cpu);
    return tu_finish("test_cuda_equiv");
}
#endif
