/* test_cpu_backend.c — the cpu backend plugin against known answers:
 * band-matrix models computed by hand, a Gaussian line shifted by
 * +123.4 km/s recovered by vscan, closed-form chisq/logdet, the
 * continuum-only flag, the rotation kernel, agreement with
 * rvfit_marg_chisq, bitwise thread-count independence, counters, and a
 * DESI-size throughput measurement.  Libraries and batches are built in
 * memory. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "rvfit/plugin.h"
#include "rvfit/physics.h"
#include "testutil.h"

static const rvfit_backend_ops *OPS;
static rvfit_host HOST;

static uint64_t rng_state = 987654321;
static double urand(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) * 0x1p-53;
}

static void load_plugin(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rvfit_backend_cpu.so",
             tu_env("RVFIT_PLUGIN_PATH"));
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(1);
    }
    rvfit_plugin_entry_fn entry;
    void *sym = dlsym(dl, RVFIT_PLUGIN_ENTRY_NAME);
    CHECK(sym != NULL);
    if (!sym)
        exit(1);
    memcpy(&entry, &sym, sizeof entry);
    const rvfit_plugin *d = entry();
    CHECK(strcmp(d->name, "cpu") == 0);
    CHECK(d->kind == RVFIT_PLUGIN_BACKEND && d->abi_major == RVFIT_ABI_MAJOR);
    CHECK(strcmp(d->config_keys[0], "threads") == 0 && !d->config_keys[1]);
    OPS = d->ops;
    CHECK(OPS->size == sizeof(rvfit_backend_ops));
}

static void *be_open(int threads)
{
    char val[16];
    snprintf(val, sizeof val, "%d", threads);
    rvfit_kv kv = {"threads", val, "test", 1};
    rvfit_err err = {{0}};
    void *st = NULL;
    int rc = OPS->open(&HOST, &kv, 1, &st, &err);
    CHECK_MSG(rc == RVFIT_OK, "open: %s", err.msg);
    return st;
}

static void must(int rc, const rvfit_err *err, const char *what)
{
    CHECK_MSG(rc == RVFIT_OK, "%s: %s", what, err->msg);
    if (rc != RVFIT_OK)
        exit(1);
}

/* ---- a library of Gaussian absorption lines ------------------------ */
#define LT_N 1800      /* template pixels per arm            */
#define LT_DL 1e-5     /* template step in ln lambda         */
#define LD_N 600       /* data pixels per arm                */
#define LD_OFF 300     /* data pixel 0 = template pixel 300  */
#define LD_STEP 2      /* data step = 2 template pixels      */
static const double ARM_L0[2] = {5000.0, 6500.0};

static double line_depth(int i0, int i1) { return 0.3 + 0.1 * i0 + 0.05 * i1; }

/* Rest-frame template of arm a, model (i0, i1), at ln lambda y. */
static double line_tmpl(int a, double depth, double y)
{
    double l0 = log(ARM_L0[a]), s = 3e-5;
    double c1 = l0 + 900 * LT_DL, c2 = l0 + 1150 * LT_DL;
    return 1 - depth * exp(-0.5 * pow((y - c1) / s, 2)) -
           0.5 * depth * exp(-0.5 * pow((y - c2) / s, 2));
}

static void line_library(rvfit_library *lib, float *flux[2], uint8_t *ex)
{
    memset(lib, 0, sizeof *lib);
    lib->nparam = 2;
    strcpy(lib->axis[0].name, "P0");
    lib->axis[0].nnode = 3;
    for (int k = 0; k < 3; k++)
        lib->axis[0].node[k] = k;
    strcpy(lib->axis[1].name, "P1");
    lib->axis[1].nnode = 2;
    lib->axis[1].node[1] = 1;
    lib->nmodel = 6;
    memset(ex, 1, 6);
    lib->exists = ex;
    lib->narm = 2;
    for (int a = 0; a < 2; a++) {
        rvfit_lib_arm *la = &lib->arm[a];
        strcpy(la->name, a ? "R" : "B");
        la->lnl0 = log(ARM_L0[a]);
        la->dlnl = LT_DL;
        la->npix = LT_N;
        la->flux = flux[a];
        for (int m = 0; m < 6; m++)
            for (int j = 0; j < LT_N; j++)
                flux[a][m * LT_N + j] = (float)line_tmpl(
                    a, line_depth(m / 2, m % 2), la->lnl0 + j * LT_DL);
    }
}

static double cont_of(double x) { return 2.0 + 0.3 * x - 0.1 * x * x; }

/* s0: model (1,0) shifted to +123.4 km/s times a quadratic continuum;
 * s1: model (1,0) rotated by vsini 40 (discrete kernel, v = 0) x 2.5. */
static void line_batch(rvfit_batch *b, const rvfit_library *lib)
{
    rvfit_arm_info info[2];
    memset(info, 0, sizeof info);
    for (int a = 0; a < 2; a++) {
        strcpy(info[a].name, a ? "R" : "B");
        info[a].npix = LD_N;
        info[a].res_kind = RVFIT_RES_NONE;
    }
    rvfit_err err = {{0}};
    must(rvfit_batch_alloc(b, 2, info, 2, &err), &err, "batch_alloc");
    b->nspec = 2;
    double delta = rvfit_dlnl_doppler(123.4), depth = line_depth(1, 0);
    static double wk[2 * RVFIT_MAX_VSINI_HALF + 1];
    int h = rvfit_vsini_kernel(40.0 / RVFIT_C_KMS / LT_DL, wk);
    for (int a = 0; a < 2; a++) {
        rvfit_arm_batch *A = &b->arm[a];
        const float *T = lib->arm[a].flux + 2 * LT_N; /* model (1,0) */
        for (int i = 0; i < LD_N; i++)
            A->wave[i] = exp(lib->arm[a].lnl0 + (LD_OFF + LD_STEP * i) * LT_DL);
        for (int i = 0; i < LD_N; i++) {
            double x = -1 + 2.0 * (A->wave[i] - A->wave[0]) /
                                (A->wave[LD_N - 1] - A->wave[0]);
            A->flux[i] = (float)(cont_of(x) *
                                 line_tmpl(a, depth, log(A->wave[i]) + delta));
            double r = 0;
            for (int d = -h; d <= h; d++)
                r += wk[d + h] * T[LD_OFF + LD_STEP * i + d];
            A->flux[LD_N + i] = (float)(2.5 * r);
            A->ivar[i] = A->ivar[LD_N + i] = 1e4f;
        }
    }
}

static double parabola_min(const double *c, double v1, double step)
{
    return v1 + 0.5 * step * (c[0] - c[2]) / (c[0] - 2 * c[1] + c[2]);
}

static void test_line(void *st, uint64_t *npts)
{
    enum { NV = 601 };
    rvfit_point p;
    memset(&p, 0, sizeof p);
    p.theta[0] = 1.0;
    double vel[NV], m2[NV];
    for (int k = 0; k < NV; k++)
        vel[k] = -300.0 + k;
    rvfit_err err = {{0}};
    must(OPS->vscan(st, 1, &p, NULL, NV, vel, m2, &err), &err, "vscan");
    *npts += NV;
    int kb = 0;
    for (int k = 1; k < NV; k++)
        if (m2[k] < m2[kb])
            kb = k;
    CHECK_NEAR(vel[kb], 123.0, 0);
    double vhat = parabola_min(m2 + kb - 1, vel[kb], 1.0);
    CHECK_MSG(fabs(vhat - 123.4) < 0.05, "vhat %.4f", vhat);
    printf("line shift: vscan minimum %.0f, parabolic %.4f (true 123.4)\n",
           vel[kb], vhat);
    /* chisq at the truth: tiny (interpolation error only), and vscan at a
     * grid velocity equals chisq there bitwise */
    rvfit_point q[2] = {p, p};
    q[0].v = 123.4;
    q[1].v = vel[kb];
    double mm[2], ca[4];
    rvfit_chisq_out out = {mm, ca};
    must(OPS->chisq(st, 2, q, NULL, &out, &err), &err, "chisq");
    *npts += 2;
    CHECK_MSG(ca[0] < 0.05 && ca[1] < 0.05, "chisq at truth %g %g", ca[0],
              ca[1]);
    CHECK(mm[1] == m2[kb]);
    /* rotation: spectrum 1 at vsini 40 is fitted exactly, at 0 it is not */
    q[0].spec = q[1].spec = 1;
    q[0].v = q[1].v = 0;
    q[0].vsini = 40.0;
    q[1].vsini = 0.0;
    must(OPS->chisq(st, 2, q, NULL, &out, &err), &err, "chisq rot");
    *npts += 2;
    CHECK_MSG(ca[0] < 1e-6 && ca[1] < 1e-6, "rotated chisq %g %g", ca[0],
              ca[1]);
    CHECK(ca[2] > 1.0 && ca[3] > 1.0);
}

/* Backend ops 1.1: stencils from the core.  The library's own stencils
 * sent back reproduce chisq/vscan/models bitwise; hand-made stencils give
 * the template they name (a node, a midpoint, a flat one), with their
 * penalty; malformed tables are refused. */
static void test_stencils(void *st, const rvfit_library *lib)
{
    enum { NP = 8, NV = 5 };
    rvfit_err err = {{0}};
    rvfit_point p[NP];
    memset(p, 0, sizeof p);
    uint32_t off[NP + 1] = {0}, idx[NP * 4];
    double w[NP * 4], pen[NP];
    for (int i = 0; i < NP; i++) {
        p[i].spec = (uint32_t)(i % 2);
        p[i].v = 100.0 + 5.0 * i;
        p[i].vsini = i % 3 ? 0.0 : 30.0;
        p[i].theta[0] = -0.2 + 0.33 * i; /* past both ends: penalties */
        p[i].theta[1] = 0.125 * i;
        size_t c[RVFIT_MAX_CORNERS];
        int n = rvfit_library_stencil(lib, p[i].theta, c, w + off[i],
                                      &pen[i]);
        for (int k = 0; k < n; k++)
            idx[off[i] + (uint32_t)k] = (uint32_t)c[k];
        off[i + 1] = off[i] + (uint32_t)n;
    }
    rvfit_stencils sn = {off, idx, w, pen, 1, 0};
    double m1[NP], m2[NP], c1[2 * NP], c2[2 * NP];
    rvfit_chisq_out o1 = {m1, c1}, o2 = {m2, c2};
    must(OPS->chisq(st, NP, p, NULL, &o1, &err), &err, "chisq");
    must(OPS->chisq(st, NP, p, &sn, &o2, &err), &err, "chisq (table)");
    CHECK(memcmp(m1, m2, sizeof m1) == 0 && memcmp(c1, c2, sizeof c1) == 0);
    CHECK(pen[0] > 0 && pen[NP - 1] > 0); /* the penalty is exercised */
    double vel[NP * NV], s1[NP * NV], s2[NP * NV];
    for (int k = 0; k < NP * NV; k++)
        vel[k] = -50.0 + 7.0 * k;
    must(OPS->vscan(st, NP, p, NULL, NV, vel, s1, &err), &err, "vscan");
    must(OPS->vscan(st, NP, p, &sn, NV, vel, s2, &err), &err, "vscan (table)");
    CHECK(memcmp(s1, s2, sizeof s1) == 0);
    static float mo1[2][NP * LD_N], mo2[2][NP * LD_N];
    float *mp1[2] = {mo1[0], mo1[1]}, *mp2[2] = {mo2[0], mo2[1]};
    must(OPS->models(st, NP, p, NULL, mp1, NULL, &err), &err, "models");
    must(OPS->models(st, NP, p, &sn, mp2, NULL, &err), &err, "models (table)");
    CHECK(memcmp(mo1, mo2, sizeof mo1) == 0);

    /* hand-made: node (1,0) = model 2 with penalty 7.5; the midpoint of
     * models 2 and 4 = theta (1.5, 0); empty = the flat template */
    rvfit_point q[3], r[3];
    memset(q, 0, sizeof q);
    for (int i = 0; i < 3; i++) {
        q[i].v = 123.4;
        q[i].theta[0] = 0.3; /* ignored with stencils */
        q[i].theta[1] = 0.9;
        r[i] = q[i];
    }
    r[0].theta[0] = 1.0, r[0].theta[1] = 0.0;
    r[1].theta[0] = 1.5, r[1].theta[1] = 0.0;
    r[2].flags = RVFIT_PT_CONTINUUM;
    uint32_t hoff[4] = {0, 1, 3, 3}, hidx[3] = {2, 2, 4};
    double hw[3] = {1.0, 0.5, 0.5}, hpen[3] = {7.5, 0.0, 0.0};
    rvfit_stencils hs = {hoff, hidx, hw, hpen, 1, 0};
    must(OPS->chisq(st, 3, r, NULL, &o1, &err), &err, "chisq ref");
    must(OPS->chisq(st, 3, q, &hs, &o2, &err), &err, "chisq hand");
    CHECK_MSG(m2[0] == m1[0] + 7.5, "node: %.17g vs %.17g + 7.5", m2[0],
              m1[0]);
    CHECK_NEAR(m2[1], m1[1], 1e-9 * fabs(m1[1]));
    CHECK(m2[2] == m1[2]);
    CHECK(m1[0] < m1[1]); /* model 2 is spectrum 0's truth */

    /* malformed */
    hidx[2] = 6; /* nmodel = 6 */
    CHECK(OPS->chisq(st, 3, q, &hs, &o2, &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, "vector 6"), "%s", err.msg);
    hidx[2] = 4;
    hoff[3] = 2; /* decreasing */
    CHECK(OPS->vscan(st, 3, q, &hs, 1, vel, s2, &err) ==
          RVFIT_ERR_INVALID);
    hoff[3] = 3;
    hpen[1] = NAN;
    CHECK(OPS->models(st, 3, q, &hs, mp2, NULL, &err) ==
          RVFIT_ERR_INVALID);
}

/* Backend ops 1.2: weights per library arm.  Arm B weighs model 2 and
 * arm R model 4: each arm's chisq and model equal those of the shared
 * stencil naming that arm's model, bitwise; equal weights in both arms
 * reproduce chisq (table) bitwise; nw other than 1 or narm, and a non-finite
 * weight of arm R, are refused. */
static void test_arm_stencils(void *st)
{
    rvfit_err err = {{0}};
    rvfit_point q[2];
    memset(q, 0, sizeof q);
    for (int i = 0; i < 2; i++) {
        q[i].spec = (uint32_t)i;
        q[i].v = 123.4 - 40.0 * i;
        q[i].vsini = 25.0 * i;
    }
    uint32_t off[3] = {0, 2, 4}, idx[4] = {2, 4, 2, 4};
    double wa[8] = {1, 0, 0, 1, 1, 0, 0, 1}, pen[2] = {0.0, 3.0};
    double w2[4] = {1, 0, 1, 0}, w4[4] = {0, 1, 0, 1};
    rvfit_stencils sa = {off, idx, wa, pen, 2, 0};
    rvfit_stencils s2 = {off, idx, w2, pen, 1, 0}, s4 = {off, idx, w4, pen, 1, 0};
    double m[3][2], c[3][4];
    rvfit_chisq_out o[3] = {{m[0], c[0]}, {m[1], c[1]}, {m[2], c[2]}};
    must(OPS->chisq(st, 2, q, &sa, &o[0], &err), &err, "chisq (a weight per arm)");
    must(OPS->chisq(st, 2, q, &s2, &o[1], &err), &err, "chisq model 2");
    must(OPS->chisq(st, 2, q, &s4, &o[2], &err), &err, "chisq model 4");
    for (int i = 0; i < 2; i++) {
        CHECK(c[0][2 * i] == c[1][2 * i]);         /* arm B: model 2 */
        CHECK(c[0][2 * i + 1] == c[2][2 * i + 1]); /* arm R: model 4 */
        CHECK(c[1][2 * i + 1] != c[2][2 * i + 1]); /* they differ */
    }
    static float mo[3][2][2 * LD_N];
    float *mp[3][2];
    for (int k = 0; k < 3; k++)
        mp[k][0] = mo[k][0], mp[k][1] = mo[k][1];
    must(OPS->models(st, 2, q, &sa, mp[0], NULL, &err), &err, "models");
    must(OPS->models(st, 2, q, &s2, mp[1], NULL, &err), &err, "models 2");
    must(OPS->models(st, 2, q, &s4, mp[2], NULL, &err), &err, "models 4");
    CHECK(memcmp(mo[0][0], mo[1][0], sizeof mo[0][0]) == 0);
    CHECK(memcmp(mo[0][1], mo[2][1], sizeof mo[0][1]) == 0);
    double vel[6] = {100, 110, 120, 130, 140, 150}, v1[6], v2[6];
    double wsame[8] = {0.3, 0.3, 0.7, 0.7, 0.6, 0.6, 0.4, 0.4};
    double wone[4] = {0.3, 0.7, 0.6, 0.4};
    rvfit_stencils ss = {off, idx, wsame, pen, 2, 0};
    rvfit_stencils s1 = {off, idx, wone, pen, 1, 0};
    must(OPS->vscan(st, 2, q, &ss, 3, vel, v1, &err), &err, "vscan (a weight per arm)");
    must(OPS->vscan(st, 2, q, &s1, 3, vel, v2, &err), &err, "vscan (table)");
    CHECK(memcmp(v1, v2, sizeof v1) == 0);
    sa.nw = 3;
    CHECK(OPS->chisq(st, 2, q, &sa, &o[0], &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, "weights per entry"), "%s", err.msg);
    sa.nw = 2;
    wa[7] = NAN;
    CHECK(OPS->chisq(st, 2, q, &sa, &o[0], &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, "arm 1"), "%s", err.msg);
}

/* Random points over both spectra; threads=1 vs 2 must agree bitwise. */
static void test_threads(const rvfit_library *lib, const rvfit_batch *b,
                         const rvfit_model_opts *mo)
{
    enum { NP = 96 };
    rvfit_point p[NP];
    memset(p, 0, sizeof p);
    for (int k = 0; k < NP; k++) {
        p[k].spec = (uint32_t)(k % 2);
        p[k].flags = k % 17 == 0 ? RVFIT_PT_CONTINUUM : 0;
        p[k].v = -200 + 400 * urand();
        p[k].vsini = k % 3 ? 30 * urand() : 0;
        p[k].theta[0] = -0.2 + 2.4 * urand();
        p[k].theta[1] = urand();
    }
    double res[2][NP], carm[2][2 * NP];
    for (int t = 0; t < 2; t++) {
        void *st = be_open(t + 1);
        rvfit_err err = {{0}};
        must(OPS->load_library(st, lib, &err), &err, "load_library");
        must(OPS->load_batch(st, b, mo, &err), &err, "load_batch");
        rvfit_chisq_out out = {res[t], carm[t]};
        must(OPS->chisq(st, NP, p, NULL, &out, &err), &err, "chisq");
        OPS->close(st);
    }
    CHECK(memcmp(res[0], res[1], sizeof res[0]) == 0);
    /* a fingerprint of the exact bits, to compare builds (vector/scalar) */
    uint64_t fp = 0;
    for (int k = 0; k < NP; k++) {
        uint64_t bits;
        memcpy(&bits, &res[0][k], sizeof bits);
        fp = fp * 1099511628211ull ^ bits;
    }
    printf("thread test: m2lnl[0] = %.17g, bit fingerprint %016llx\n",
           res[0][0], (unsigned long long)fp);
    CHECK(memcmp(carm[0], carm[1], sizeof carm[0]) == 0);
    int finite = 1;
    for (int k = 0; k < NP; k++)
        finite &= isfinite(res[0][k]) && res[0][k] < 1e29;
    CHECK(finite);
}

/* update_data (backend ops 2.1): new flux and ivar give the same bits as
 * a fresh load of the changed batch in another handle; another geometry
 * is refused. */
static void test_update(const rvfit_library *lib, rvfit_batch *b,
                        const rvfit_model_opts *mo)
{
    enum { NP = 16 };
    rvfit_point p[NP];
    memset(p, 0, sizeof p);
    for (int k = 0; k < NP; k++) {
        p[k].spec = (uint32_t)(k % 2);
        p[k].v = -100 + 200 * urand();
        p[k].theta[0] = 0.2 + 1.6 * urand();
        p[k].theta[1] = urand();
    }
    double r[3][NP];
    rvfit_err err = {{0}};
    void *s1 = be_open(2), *s2 = be_open(1);
    must(OPS->load_library(s1, lib, &err), &err, "load_library");
    must(OPS->load_library(s2, lib, &err), &err, "load_library");
    must(OPS->load_batch(s1, b, mo, &err), &err, "load_batch");
    rvfit_chisq_out o0 = {r[0], NULL}, o1 = {r[1], NULL}, o2 = {r[2], NULL};
    must(OPS->chisq(s1, NP, p, NULL, &o0, &err), &err, "chisq");
    /* clip every 4th pixel of spectrum 1 in arm B, scale spectrum 0's
     * flux in arm R (kept to restore) */
    size_t n = b->arm[0].npix;
    float keep[2 * LD_N];
    memcpy(keep, b->arm[0].ivar + n, n * sizeof(float));
    memcpy(keep + LD_N, b->arm[1].flux, n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        if (i % 4 == 0)
            b->arm[0].ivar[n + i] = 0.0f;
        b->arm[1].flux[i] *= 1.05f;
    }
    must(OPS->update_data(s1, b, &err), &err, "update_data");
    must(OPS->chisq(s1, NP, p, NULL, &o1, &err), &err, "chisq after update");
    must(OPS->load_batch(s2, b, mo, &err), &err, "load_batch changed");
    must(OPS->chisq(s2, NP, p, NULL, &o2, &err), &err, "chisq fresh");
    CHECK(memcmp(r[1], r[2], sizeof r[1]) == 0);
    int moved = 1;
    for (int k = 0; k < NP; k++)
        moved &= r[1][k] != r[0][k];
    CHECK(moved);
    b->nspec = 1;
    CHECK(OPS->update_data(s1, b, &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, "resident"), "%s", err.msg);
    b->nspec = 2;
    memcpy(b->arm[0].ivar + n, keep, n * sizeof(float));
    memcpy(b->arm[1].flux, keep + LD_N, n * sizeof(float));
    OPS->close(s1);
    OPS->close(s2);
}

/* ---- band matrix known answers -------------------------------------- */
#define BT_N 40  /* template pixels */
#define BD_N 12  /* data pixels     */
#define BD_H 2   /* band half width */
#define BD_ND (2 * BD_H + 1)

/* m = R t by a dense matrix built from the DESI convention
 * R[i][j] = res[(h - (j - i)) * N + j]; t_j = 1 + (j+5)/64 (or 1). */
static void band_hand(const float *res, int flat, double *m)
{
    for (int i = 0; i < BD_N; i++) {
        m[i] = 0;
        for (int j = 0; j < BD_N; j++) {
            int k = BD_H - (j - i);
            if (k < 0 || k >= BD_ND)
                continue;
            double t = flat ? 1.0 : 1.0 + (j + 5) / 64.0;
            m[i] += (double)res[k * BD_N + j] * t;
        }
    }
}

/* npoly=1 closed forms: a = sum w f m / sum w m^2, chisq = sum w (f-am)^2,
 * logdet = ln sum w m^2. */
static void closed1(const float *f, const float *w, const double *m,
                    double *chi, double *ld, double *a)
{
    long double swfm = 0, swmm = 0, c = 0;
    for (int i = 0; i < BD_N; i++) {
        swfm += (long double)w[i] * f[i] * m[i];
        swmm += (long double)w[i] * m[i] * m[i];
    }
    long double al = swfm / swmm;
    for (int i = 0; i < BD_N; i++) {
        long double r = f[i] - al * m[i];
        c += w[i] * r * r;
    }
    *chi = (double)c;
    *ld = (double)logl(swmm);
    *a = (double)al;
}

/* A one-model, one-arm library "B" (ln lambda from ln 5000 in steps of
 * 1e-4) whose template tf[j] = 1 + j / scale is linear: Keys is exact. */
static void linear_library(rvfit_library *lib, float *tf, size_t nt,
                           double scale, uint8_t *ex)
{
    memset(lib, 0, sizeof *lib);
    *ex = 1;
    lib->nparam = 1;
    lib->axis[0].nnode = 1;
    lib->nmodel = 1;
    lib->exists = ex;
    tu_library_one_arm(lib, nt, tf);
    for (size_t j = 0; j < nt; j++)
        tf[j] = (float)(1.0 + (double)j / scale);
}

static void test_band(void *st, uint64_t *npts)
{
    rvfit_library lib;
    static float tf[BT_N];
    uint8_t ex;
    linear_library(&lib, tf, BT_N, 64.0, &ex);
    rvfit_arm_info info = {"B", BD_N, RVFIT_RES_BAND, BD_ND, 0};
    rvfit_batch b;
    rvfit_err err = {{0}};
    must(rvfit_batch_alloc(&b, 1, &info, 5, &err), &err, "batch_alloc");
    b.nspec = 5;
    rvfit_arm_batch *A = &b.arm[0];
    for (int i = 0; i < BD_N; i++)
        A->wave[i] = exp(lib.arm[0].lnl0 + (i + 5) * 1e-4);
    double m[5][BD_N], u[BD_N];
    for (int s = 0; s < 5; s++) {
        float *res = A->res + s * BD_ND * BD_N;
        for (int k = 0; k < BD_ND * BD_N; k++)
            res[k] = s == 2 ? 0.0f : (float)(0.1 + urand());
        band_hand(res, 0, m[s]);
        for (int i = 0; i < BD_N; i++) {
            A->flux[s * BD_N + i] = (float)(2.5 * m[s][i]);
            A->ivar[s * BD_N + i] = 4.0f;
        }
    }
    /* s1: add a perturbation w-orthogonal to m (npoly = 1) */
    double zm = 0, mm = 0, uu = 0;
    for (int i = 0; i < BD_N; i++) {
        u[i] = sin(1.3 * i);
        zm += u[i] * m[1][i];
        mm += m[1][i] * m[1][i];
    }
    for (int i = 0; i < BD_N; i++) {
        u[i] -= zm / mm * m[1][i];
        uu += 4.0 * 0.01 * u[i] * u[i];
        A->flux[BD_N + i] = (float)(2.5 * m[1][i] + 0.1 * u[i]);
    }
    /* s3: a single usable pixel: arm skipped; s4: random data, some
     * pixels unusable */
    for (int i = 1; i < BD_N; i++)
        A->ivar[3 * BD_N + i] = 0.0f;
    for (int i = 0; i < BD_N; i++) {
        A->flux[4 * BD_N + i] = (float)(1 + urand());
        A->ivar[4 * BD_N + i] = i % 5 == 3 ? 0.0f : (float)(1 + urand());
    }
    A->flux[4 * BD_N + 8] = NAN; /* with ivar 0: must not matter */
    A->ivar[4 * BD_N + 8] = 0.0f;
    must(OPS->load_library(st, &lib, &err), &err, "load_library");
    rvfit_model_opts mo = {1, RVFIT_BASIS_GAUSS};
    must(OPS->load_batch(st, &b, &mo, &err), &err, "load_batch");

    rvfit_point p[6];
    memset(p, 0, sizeof p);
    for (int s = 0; s < 5; s++)
        p[s].spec = (uint32_t)s;
    p[5].flags = RVFIT_PT_CONTINUUM; /* spectrum 0, template == 1 */
    double m2[6], ca[6];
    rvfit_chisq_out out = {m2, ca};
    must(OPS->chisq(st, 6, p, NULL, &out, &err), &err, "chisq");
    *npts += 6;
    double chi, ld, a;
    closed1(A->flux, A->ivar, m[0], &chi, &ld, &a);
    CHECK_MSG(ca[0] < 1e-10, "exact model: chisq %g", ca[0]);
    CHECK_NEAR(m2[0], ld, 1e-12 * fabs(ld));
    CHECK_NEAR(a, 2.5, 1e-6);
    closed1(A->flux + BD_N, A->ivar, m[1], &chi, &ld, &a);
    CHECK_NEAR(ca[1], chi, 1e-10 * chi);
    CHECK_NEAR(ca[1], uu, 1e-4 * uu);
    CHECK_NEAR(m2[1], chi + ld, 1e-10 * fabs(chi + ld));
    CHECK_MSG(m2[2] == 1e30, "singular: %g", m2[2]);
    CHECK(m2[3] == 0.0 && ca[3] == 0.0);
    double mc[BD_N];
    band_hand(A->res, 1, mc);
    closed1(A->flux, A->ivar, mc, &chi, &ld, &a);
    CHECK_NEAR(ca[5], chi, 1e-10 * chi);
    CHECK_NEAR(m2[5], chi + ld, 1e-10 * fabs(chi + ld));

    /* models(): model = a m over every pixel, cont = a */
    float mod[2 * BD_N], con[2 * BD_N];
    float *mp[1] = {mod}, *cp[1] = {con};
    must(OPS->models(st, 2, p, NULL, mp, cp, &err), &err, "models");
    *npts += 2;
    closed1(A->flux + BD_N, A->ivar, m[1], &chi, &ld, &a);
    for (int i = 0; i < BD_N; i++) {
        CHECK_NEAR(mod[i], 2.5 * m[0][i], 2e-6 * m[0][i]);
        CHECK_NEAR(con[i], 2.5, 1e-6);
        CHECK_NEAR(mod[BD_N + i], a * m[1][i], 2e-6 * m[1][i]);
    }

    /* npoly = 3 Chebyshev: agree with rvfit_marg_chisq on s4 */
    mo.npoly = 3;
    mo.basis = RVFIT_BASIS_CHEB;
    must(OPS->load_batch(st, &b, &mo, &err), &err, "load_batch cheb");
    must(OPS->chisq(st, 1, &p[4], NULL, &out, &err), &err, "chisq cheb");
    *npts += 1;
    double basis[BD_N * 3], ref_chi, ref_ld;
    double w0 = A->wave[0], w1 = A->wave[BD_N - 1];
    for (int i = 0; i < BD_N; i++)
        rvfit_basis(RVFIT_BASIS_CHEB, 3, (2 * A->wave[i] - (w0 + w1)) / (w1 - w0),
                    basis + 3 * i);
    CHECK(rvfit_marg_chisq(BD_N, 3, m[4], A->flux + 4 * BD_N,
                           A->ivar + 4 * BD_N, basis, &ref_chi, &ref_ld,
                           NULL) == RVFIT_OK);
    CHECK_NEAR(ca[0], ref_chi, 1e-10 * ref_chi);
    CHECK_NEAR(m2[0], ref_chi + ref_ld, 1e-10 * fabs(ref_chi + ref_ld));

    /* invalid inputs */
    rvfit_point bad = p[0];
    bad.spec = 99;
    CHECK(OPS->chisq(st, 1, &bad, NULL, &out, &err) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(err.msg, "spectrum 99"));
    A->res_kind = RVFIT_RES_LSF;
    CHECK(OPS->load_batch(st, &b, &mo, &err) == RVFIT_ERR_INVALID);
    A->res_kind = RVFIT_RES_BAND;
    strcpy(A->name, "Q");
    CHECK(OPS->load_batch(st, &b, &mo, &err) == RVFIT_ERR_INVALID);
    CHECK(tu_contains(err.msg, "'Q'"));
    rvfit_batch_free(&b);
}

/* ---- the continuum solve of every basis at full size ----------------- */
#define BS_N 3000 /* data pixels */

/* chi^2 and ln det of the cpu backend against rvfit_marg_chisq (the
 * sdk's dense sums and explicit residual) on one 3000-pixel spectrum with
 * holes: for the B-splines this checks the segment sums of
 * cpu_normal_seg, for the Gaussians the support cuts of cpu_normal. */
static void test_solve_bases(void *st, uint64_t *npts)
{
    enum { NT = BS_N + 40 };
    static float tf[NT];
    rvfit_library lib;
    uint8_t ex;
    linear_library(&lib, tf, NT, 4096.0, &ex);
    rvfit_arm_info info = {"B", BS_N, RVFIT_RES_NONE, 0, 0};
    rvfit_batch b;
    rvfit_err err = {{0}};
    must(rvfit_batch_alloc(&b, 1, &info, 1, &err), &err, "batch_alloc");
    b.nspec = 1;
    rvfit_arm_batch *A = &b.arm[0];
    static double m[BS_N], basis[BS_N * 10];
    for (int i = 0; i < BS_N; i++) {
        A->wave[i] = exp(lib.arm[0].lnl0 + (i + 5) * 1e-4);
        m[i] = 1.0 + (double)(i + 5) / 4096.0;
        double x = -1.0 + 2.0 * i / (BS_N - 1);
        A->flux[i] = (float)(m[i] * (2.0 + x + 0.3 * sin(9 * x)) +
                             0.02 * (urand() - 0.5));
        A->ivar[i] = (i / 97) % 7 == 3 ? 0.0f : (float)(2000 * (1 + urand()));
    }
    A->ivar[0] = A->ivar[BS_N - 1] = 0.0f; /* holes at both ends too */
    must(OPS->load_library(st, &lib, &err), &err, "load_library");
    static const int kinds[3] = {RVFIT_BASIS_GAUSS, RVFIT_BASIS_BSPLINE,
                                 RVFIT_BASIS_CHEB};
    for (int q = 0; q < 3; q++) {
        rvfit_model_opts mo = {10, kinds[q]};
        must(OPS->load_batch(st, &b, &mo, &err), &err, "load_batch");
        rvfit_point p;
        memset(&p, 0, sizeof p);
        double m2, ca, ref_chi, ref_ld;
        rvfit_chisq_out out = {&m2, &ca};
        must(OPS->chisq(st, 1, &p, NULL, &out, &err), &err, "chisq");
        *npts += 1;
        double w0 = A->wave[0], w1 = A->wave[BS_N - 1];
        for (int i = 0; i < BS_N; i++)
            rvfit_basis(kinds[q], 10, (2 * A->wave[i] - (w0 + w1)) / (w1 - w0),
                        basis + 10 * i);
        CHECK(rvfit_marg_chisq(BS_N, 10, m, A->flux, A->ivar, basis, &ref_chi,
                               &ref_ld, NULL) == RVFIT_OK);
        /* fwf - b^T A^-1 b cancels about 4 digits here */
        CHECK_MSG(fabs(ca - ref_chi) < 1e-9 * ref_chi,
                  "basis %d: chisq %.15g vs %.15g", kinds[q], ca, ref_chi);
        CHECK_MSG(fabs(m2 - (ref_chi + ref_ld)) < 1e-9 * fabs(ref_chi + ref_ld),
                  "basis %d: -2 ln L %.15g vs %.15g", kinds[q], m2,
                  ref_chi + ref_ld);
    }
    rvfit_batch_free(&b);
}

/* ---- DESI-size throughput ------------------------------------------ */
static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 3 arms (B, R, Z at 0.8 A: 7955 pixels), ndiag 11, npoly 10, a 4-axis
 * library with 16 corners per cell: prints points/s for chisq and vscan
 * with 1 and 2 threads. */
static void bench_desi(void)
{
    static const double lo[3] = {3600, 5760, 7520}, hi[3] = {5800, 7620, 9824};
    static const char *nm[3] = {"B", "R", "Z"};
    rvfit_library lib;
    memset(&lib, 0, sizeof lib);
    lib.nparam = 4;
    for (int p = 0; p < 4; p++) {
        lib.axis[p].nnode = 2;
        lib.axis[p].node[1] = 1;
    }
    lib.nmodel = 16;
    uint8_t ex[16];
    memset(ex, 1, sizeof ex);
    lib.exists = ex;
    lib.narm = 3;
    rvfit_arm_info info[3];
    memset(info, 0, sizeof info);
    for (int a = 0; a < 3; a++) {
        rvfit_lib_arm *la = &lib.arm[a];
        strcpy(la->name, nm[a]);
        la->dlnl = log(1 + 0.4 / (0.5 * (lo[a] + hi[a])));
        la->lnl0 = log(lo[a]) - 0.0034;
        la->npix = (size_t)((log(hi[a] / lo[a]) + 0.0068) / la->dlnl) + 1;
        la->flux = malloc(16 * la->npix * sizeof(float));
        double *base = calloc(la->npix, sizeof(double));
        for (int l = 0; l < 400; l++) { /* lines 3 px wide */
            double c = urand() * (double)la->npix, d = 0.5 * urand();
            for (long j = (long)c - 15; j <= (long)c + 15; j++)
                if (j >= 0 && j < (long)la->npix)
                    base[j] += d * exp(-0.5 * pow((j - c) / 3.0, 2));
        }
        for (int m = 0; m < 16; m++)
            for (size_t j = 0; j < la->npix; j++)
                la->flux[m * la->npix + j] =
                    (float)(1 - (0.8 + 0.03 * m) * base[j] / (1 + base[j]));
        free(base);
        strcpy(info[a].name, nm[a]);
        info[a].npix = (size_t)((hi[a] - lo[a]) / 0.8);
        info[a].res_kind = RVFIT_RES_BAND;
        info[a].ndiag = 11;
    }
    enum { NS = 16, NP = 512, NV = 64 };
    rvfit_batch b;
    rvfit_err err = {{0}};
    must(rvfit_batch_alloc(&b, 3, info, NS, &err), &err, "bench batch");
    b.nspec = NS;
    for (int a = 0; a < 3; a++) {
        rvfit_arm_batch *A = &b.arm[a];
        size_t n = A->npix;
        for (size_t i = 0; i < n; i++)
            A->wave[i] = lo[a] + 0.8 * (double)i;
        for (size_t k = 0; k < NS * n; k++) {
            A->flux[k] = (float)(1 + 0.1 * urand());
            A->ivar[k] = urand() < 0.02 ? 0.0f : 1.0f;
        }
        for (size_t s = 0; s < NS; s++)
            for (int k = 0; k < 11; k++)
                for (size_t j = 0; j < n; j++)
                    A->res[(s * 11 + (size_t)k) * n + j] =
                        (float)(exp(-0.5 * (k - 5) * (k - 5) / 2.0) / 2.5066);
    }
    rvfit_point *p = calloc(NP, sizeof *p);
    double *m2 = malloc(NP * NV * sizeof(double)), *vel = malloc(NP * NV * sizeof(double));
    for (int k = 0; k < NP; k++) {
        p[k].spec = (uint32_t)(k % NS);
        p[k].v = -300 + 600 * urand();
        p[k].vsini = 10 * urand();
        for (int q = 0; q < 4; q++)
            p[k].theta[q] = urand();
    }
    for (int k = 0; k < NP * NV; k++)
        vel[k] = -300 + (k % NV) * 5.0;
    rvfit_model_opts mo = {10, RVFIT_BASIS_GAUSS};
    for (int t = 1; t <= 2; t++) {
        void *st = be_open(t);
        must(OPS->load_library(st, &lib, &err), &err, "bench library");
        must(OPS->load_batch(st, &b, &mo, &err), &err, "bench batch");
        rvfit_chisq_out out = {m2, NULL};
        /* one thread: also CPU time of this thread (robust to a busy
         * machine) */
        clockid_t id = CLOCK_MONOTONIC, cid = CLOCK_THREAD_CPUTIME_ID;
        double t0 = clock_s(id), c0 = clock_s(cid);
        must(OPS->chisq(st, NP, p, NULL, &out, &err), &err, "bench chisq");
        double t1 = clock_s(id), c1 = clock_s(cid);
        must(OPS->vscan(st, NS, p, NULL, NV, vel, m2, &err), &err, "bench vscan");
        double t2 = clock_s(id), c2 = clock_s(cid);
        printf("bench (3 arms, %zu px, ndiag 11, npoly 10, 16 corners), %s: "
               "chisq %.0f points/s, vscan %.0f points/s (wall)",
               info[0].npix + info[1].npix + info[2].npix, OPS->device(st),
               NP / (t1 - t0), NS * NV / (t2 - t1));
        if (t == 1)
            printf("; per CPU-second: chisq %.0f, vscan %.0f", NP / (c1 - c0),
                   NS * NV / (c2 - c1));
        printf("\n"); /* a report, not a check: tests assert no timings */
        OPS->close(st);
    }
    free(p), free(m2), free(vel);
    rvfit_batch_free(&b);
    for (int a = 0; a < 3; a++)
        free(lib.arm[a].flux);
}

int main(void)
{
    HOST = tu_host(RVFIT_LOG_WARN);
    load_plugin();
    uint64_t npts = 0;

    void *st = be_open(2);
    CHECK(tu_contains(OPS->device(st), "cpu"));
    test_band(st, &npts);
    test_solve_bases(st, &npts);

    static float f0[6 * LT_N], f1[6 * LT_N];
    float *flux[2] = {f0, f1};
    uint8_t ex[6];
    rvfit_library lib;
    line_library(&lib, flux, ex);
    rvfit_batch b;
    line_batch(&b, &lib);
    rvfit_model_opts mo = {3, RVFIT_BASIS_GAUSS};
    rvfit_err err = {{0}};
    must(OPS->load_library(st, &lib, &err), &err, "load_library");
    must(OPS->load_batch(st, &b, &mo, &err), &err, "load_batch");
    test_line(st, &npts);

    /* out of the grid: penalty added on top of the clamped template */
    rvfit_point p[2];
    memset(p, 0, sizeof p);
    p[0].theta[0] = 2.0;
    p[1].theta[0] = 2.3; /* h = 1: penalty 1e4 * 0.09 */
    double m2[2];
    rvfit_chisq_out out = {m2, NULL};
    must(OPS->chisq(st, 2, p, NULL, &out, &err), &err, "chisq");
    npts += 2;
    CHECK_NEAR(m2[1] - m2[0], RVFIT_PENALTY_SCALE * 0.09, 1e-6);

    rvfit_counters c;
    OPS->counters(st, &c);
    CHECK_MSG(c.points == npts, "points %llu vs %llu",
              (unsigned long long)c.points, (unsigned long long)npts);
    CHECK(c.calls == 10 && c.seconds > 0); /* 3 of test_solve_bases */
    test_stencils(st, &lib);
    test_arm_stencils(st);
    OPS->close(st);

    test_threads(&lib, &b, &mo);
    test_update(&lib, &b, &mo);
    rvfit_batch_free(&b);
    bench_desi();
    return tu_finish("test_cpu_backend");
}
