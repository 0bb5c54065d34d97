/* test_cpu_variants.c — the cpu backend's results do not depend on which of
 * its code paths runs.  The default build uses GCC vector extensions
 * (CPU_VEC) and x86-64-v4 and -v3 target clones (CPU_HOT; the best one
 * the CPU supports is what runs); plugins/cpu/CMakeLists.txt builds the
 * same sources as test doubles without the vectors (novec), without the
 * clones (noclones: the baseline x86-64 code), without either (scalar)
 * and without the v4 clone (nov4: the v3 clone on a CPU with AVX-512).  Every
 * harness case (backend_equiv.c: seeded random libraries, batches and
 * points, holes, cubic and ln-flux interpolation, failed Cholesky) goes
 * through chisq (-2 ln L and per-arm chisq), vscan and models (model and
 * continuum) on each build, and every output double and float must equal
 * the default build's bit for bit.  A 64-bit FNV-1a fingerprint of all
 * outputs of each build is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_equiv.c" /* the harness: see backend_equiv.h */
#include "testutil.h"

#define NB 5 /* default + 4 variants */
#define NVEL 41
#define MAX_VSCAN 64   /* base points of vscan per case */
#define MAX_MODELS 256 /* points of models per case     */

static const char *const build_name[NB] = {"default", "novec", "noclones",
                                           "scalar", "nov4"};

/* The outputs of one build on one case, one byte array. */
typedef struct outbuf {
    unsigned char *p;
    size_t n, cap;
} outbuf;

static void ob_add(outbuf *o, const void *src, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = 2 * (o->n + n);
        o->p = realloc(o->p, o->cap);
        if (!o->p) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    memcpy(o->p + o->n, src, n);
    o->n += n;
}

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* chisq of all n points, vscan of the first MAX_VSCAN on NVEL
 * velocities, models of the first MAX_MODELS: appended to o in that
 * order (doubles, then floats). */
static int run_build(be_backend *b, const be_problem *pr, size_t n,
                     const rvfit_point *pts, outbuf *o, rvfit_err *err)
{
    size_t na = (size_t)pr->batch.narm, npix = pr->batch.arm[0].npix;
    size_t nq = n < MAX_VSCAN ? n : MAX_VSCAN;
    size_t nm = n < MAX_MODELS ? n : MAX_MODELS;
    double *d = malloc((n * (1 + na) + nq * NVEL * 2) * sizeof(double));
    float *f = malloc(2 * na * nm * npix * sizeof(float));
    double *vel = d + n * (1 + na) + nq * NVEL;
    rvfit_chisq_out co = {d, d + n};
    float *mod[RVFIT_MAX_ARMS], *cont[RVFIT_MAX_ARMS];
    for (size_t a = 0; a < na; a++) {
        mod[a] = f + 2 * a * nm * npix;
        cont[a] = mod[a] + nm * npix;
    }
    for (size_t q = 0; q < nq; q++)
        for (size_t k = 0; k < NVEL; k++)
            vel[q * NVEL + k] =
                -400.0 + 20.0 * (double)k + 3.0 * (double)q + 0.37;
    int rc = be_load(b, pr, err);
    if (rc == RVFIT_OK)
        rc = b->ops->chisq(b->st, n, pts, NULL, &co, err);
    if (rc == RVFIT_OK)
        rc = b->ops->vscan(b->st, nq, pts, NULL, NVEL, vel, d + n * (1 + na), err);
    if (rc == RVFIT_OK)
        rc = b->ops->models(b->st, nm, pts, NULL, mod, cont, err);
    if (rc == RVFIT_OK) {
        ob_add(o, d, (n * (1 + na) + nq * NVEL) * sizeof(double));
        ob_add(o, f, 2 * na * nm * npix * sizeof(float));
    }
    free(d);
    free(f);
    return rc;
}

/* First differing byte of a and b, as the element (double or float) that
 * holds it; the doubles come first (ndbl bytes). */
static void report_diff(const char *who, size_t k, const outbuf *a,
                        const outbuf *b, size_t ndbl)
{
    size_t i = 0;
    while (i < a->n && a->p[i] == b->p[i])
        i++;
    if (i < ndbl) {
        double x, y;
        size_t e = i / sizeof(double);
        memcpy(&x, a->p + e * sizeof x, sizeof x);
        memcpy(&y, b->p + e * sizeof y, sizeof y);
        fprintf(stderr, "  case %zu: %s: double %zu: %a vs default %a\n", k,
                who, e, y, x);
    } else {
        float x, y;
        size_t e = (i - ndbl) / sizeof(float);
        memcpy(&x, a->p + ndbl + e * sizeof x, sizeof x);
        memcpy(&y, b->p + ndbl + e * sizeof y, sizeof y);
        fprintf(stderr, "  case %zu: %s: float %zu: %a vs default %a\n", k,
                who, e, (double)y, (double)x);
    }
}

/* One harness case on every build; returns the bytes compared. */
static size_t run_case(size_t k, be_backend *b, uint64_t *rng, uint64_t *fp)
{
    be_problem pr;
    rvfit_err err;
    int rc = be_problem_make(&pr, &be_cases[k].sh, rng, &err);
    CHECK_MSG(rc == RVFIT_OK, "case %zu: problem: %s", k, err.msg);
    if (rc != RVFIT_OK)
        return 0;
    size_t n = be_cases[k].npts, na = (size_t)pr.batch.narm;
    rvfit_point *pts = malloc(n * sizeof *pts);
    be_points(&pr, n, rng, pts);
    size_t nq = n < MAX_VSCAN ? n : MAX_VSCAN;
    size_t ndbl = (n * (1 + na) + nq * NVEL) * sizeof(double);
    outbuf o[NB];
    memset(o, 0, sizeof o);
    for (int j = 0; j < NB; j++) {
        rc = run_build(&b[j], &pr, n, pts, &o[j], &err);
        CHECK_MSG(rc == RVFIT_OK, "case %zu: %s: %s", k, build_name[j],
                  err.msg);
        fp[j] = fnv1a(fp[j], o[j].p, o[j].n);
        if (j > 0 && rc == RVFIT_OK && o[0].n) {
            int same = o[j].n == o[0].n && !memcmp(o[j].p, o[0].p, o[0].n);
            CHECK_MSG(same, "case %zu: %s differs from the default build",
                      k, build_name[j]);
            if (!same && o[j].n == o[0].n)
                report_diff(build_name[j], k, &o[0], &o[j], ndbl);
        }
    }
    size_t bytes = o[0].n;
    for (int j = 0; j < NB; j++)
        free(o[j].p);
    free(pts);
    be_problem_free(&pr);
    return bytes;
}

/* Which clone of the default build does this CPU run? */
static const char *clone_in_use(void)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4"))
        return "x86-64-v4 (nov4 runs the x86-64-v3 clone)";
    return __builtin_cpu_supports("x86-64-v3")
               ? "x86-64-v3 (nov4 too)"
               : "none: every build runs baseline code";
#else
    return "none: no clones on this platform";
#endif
}

int main(void)
{
    static const char *const target[NB] = {
        "rvfit_backend_cpu", "rvfit_backend_cpu_novec",
        "rvfit_backend_cpu_noclones", "rvfit_backend_cpu_scalar",
        "rvfit_backend_cpu_nov4"};
    for (int j = 0; j < NB; j++)
        tu_need_plugin(target[j]);
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    const char *pp = tu_env("RVFIT_PLUGIN_PATH");
    rvfit_kv thr = {"threads", "2", "test", 0};
    be_backend b[NB];
    char dir[NB][4200];
    int opened = 0;
    for (int j = 0; j < NB; j++) {
        snprintf(dir[j], sizeof dir[j], j ? "%s/cpu/%s" : "%s", pp,
                 build_name[j]);
        be_target t = {"cpu", dir[j], 0, NULL};
        rvfit_err err;
        int rc = be_target_open(&t, &b[j], &host, &thr, 1, &err);
        CHECK_MSG(rc == RVFIT_OK, "%s (%s): %s", build_name[j], dir[j],
                  err.msg);
        opened += rc == RVFIT_OK;
    }
    if (opened < NB)
        return tu_finish("test_cpu_variants");
    printf("clone in use: %s\n", clone_in_use());
    uint64_t rng = 0x2545f4914f6cdd1dull, fp[NB];
    for (int j = 0; j < NB; j++)
        fp[j] = 0xcbf29ce484222325ull;
    size_t bytes = 0;
    for (size_t k = 0; k < BE_NCASES; k++)
        bytes += run_case(k, b, &rng, fp);
    CHECK(bytes > 0);
    for (int j = 0; j < NB; j++) {
        printf("%-9s %-40s fingerprint %016llx\n", build_name[j],
               b[j].ops->device(b[j].st), (unsigned long long)fp[j]);
        CHECK_MSG(fp[j] == fp[0], "%s: fingerprint differs", build_name[j]);
        be_close(&b[j]);
    }
    printf("%zu output bytes per build over %d cases\n", bytes, BE_NCASES);
    return tu_finish("test_cpu_variants");
}
