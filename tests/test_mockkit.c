/* test_mockkit.c — rvfit/mockkit.h against independent truths: the
 * tabulated CDF against erfc, the spreading of a sample over pixels
 * against exact CDF differences (and its conservation of light), the
 * scale and noise against their definitions, the argument checks, and
 * the block driver (every star once, blocks in order, failures passed
 * up with nothing flushed after them), and the log-lambda grid helpers
 * against closed forms (pixel edges 10^(coeff0 + (i - 1/2) dloglam), the
 * truth's span, the grid draws' ranges, the defect counts and values);
 * rvfit_mock_each's slots and stop, rvfit_mock_run_phi's table. */
#include <string.h>

#include "rvfit/mockkit.h"
#include "testutil.h"

static double phi_exact(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

static void test_phi(void)
{
    rvfit_phi_table *t = rvfit_phi_new();
    CHECK(t != NULL);
    if (!t)
        return;
    double worst = 0.0;
    for (double z = -10.0; z <= 10.0; z += 0.000731)
        worst = fmax(worst, fabs(rvfit_phi(t, z) - phi_exact(z)));
    CHECK_MSG(worst < 6e-12, "table CDF off by %.3g", worst);
    CHECK(rvfit_phi(t, -9.5) == 0.0 && rvfit_phi(t, 9.5) == 1.0);

    /* one sample at 5000.3 A, sigma 0.7 A, on 0.8 A pixels from 4990 A */
    enum { NP = 40 };
    double e0 = 4990.0, de = 0.8, lam = 5000.3, sig = 0.7, w = 2.5;
    double out[NP] = {0}, out2[NP] = {0}, edge[NP + 1];
    for (int i = 0; i <= NP; i++)
        edge[i] = e0 + de * i;
    long lo = 7, n = 12; /* 4995.6 .. 5005.2 A: beyond +-6 sigma */
    rvfit_mock_spread_uniform(t, e0, de, lo, n, lam, 1.0 / sig, w, out);
    rvfit_mock_spread(t, edge, lo, n, lam, 1.0 / sig, w, out2);
    double sum = 0.0;
    worst = 0.0;
    for (int i = 0; i < NP; i++) {
        double exact = i >= lo && i < lo + n
                           ? w * (phi_exact((edge[i + 1] - lam) / sig) -
                                  phi_exact((edge[i] - lam) / sig))
                           : 0.0;
        worst = fmax(worst, fabs(out[i] - exact));
        worst = fmax(worst, fabs(out2[i] - exact));
        sum += out[i];
    }
    CHECK_MSG(worst < 1e-11, "spread off by %.3g", worst);
    CHECK_NEAR(sum, w, 1e-8); /* all the light, up to the +-6.9 sigma tails */
    /* more than RVFIT_MOCK_SPAN pixels asked: the rest is left alone */
    double wide[NP] = {0};
    rvfit_mock_spread_uniform(t, e0, 0.05, 0, NP - 1, 4990.6, 1.0, 1.0,
                              wide);
    CHECK(wide[RVFIT_MOCK_SPAN - 1] > 0.0 && wide[RVFIT_MOCK_SPAN] == 0.0);
    rvfit_phi_free(t);
    rvfit_phi_free(NULL);
}

static void test_scale_noise(void)
{
    double v[5] = {4, 100, 1, 3, 2};
    CHECK(rvfit_mock_scale(v, 5, 6.0) == 2.0); /* median 3 */
    double z[3] = {0, -1, 0};
    CHECK(rvfit_mock_scale(z, 3, 6.0) == 1.0);

    enum { N = 20000 };
    double *F = malloc(N * sizeof *F), *shape = malloc(N * sizeof *shape);
    double *work = malloc(N * sizeof *work);
    float *flux = malloc(N * sizeof *flux), *ivar = malloc(N * sizeof *ivar);
    for (int i = 0; i < N; i++) {
        F[i] = 100.0;
        shape[i] = i % 2 ? 10.0 : 5.0; /* F/shape: 10 and 20, median 15 */
    }
    rvfit_rng r;
    rvfit_rng_seed(&r, 99, 1);
    double c = rvfit_mock_noise(F, shape, N, 5.0, &r, work, flux, ivar);
    CHECK_NEAR(c, 3.0, 1e-15); /* 15 / 5 */
    double s1 = 0, s2 = 0;
    int ok = 1;
    for (int i = 1; i < N; i += 2) { /* the sigma = 30 pixels */
        double d = flux[i] - 100.0;
        s1 += d, s2 += d * d;
        ok &= ivar[i] == (float)(1.0 / 900.0);
    }
    CHECK(ok);
    double mean = s1 / (N / 2), sd = sqrt(s2 / (N / 2) - mean * mean);
    CHECK_MSG(fabs(mean) < 5 * 30 / sqrt(N / 2) && fabs(sd - 30) < 1.5,
              "noise mean %.3g sd %.3g, want 0 and 30", mean, sd);
    free(F), free(shape), free(work), free(flux), free(ivar);
}

static void test_begin(void)
{
    rvfit_mock_star st[2] = {{1, 5000, 4, 0, 0, 0, 0, 10},
                             {2, 5000, 4, 0, 0, 0, 0, 10}};
    rvfit_err err;
    rvfit_mock_job job;
    rvfit_truth_fn truth = (rvfit_truth_fn)1; /* never called */
    rvfit_host host = tu_host(RVFIT_LOG_ERROR);
    host.nthreads = 5;
    int x;
    CHECK(rvfit_mock_begin(&job, &host, "p", 2, st, truth, &x, 9, &err) ==
          RVFIT_OK);
    CHECK(job.nstar == 2 && job.stars == st && job.truth == truth &&
          job.truth_ctx == &x && job.seed == 9 && job.nthreads == 5 &&
          job.nbuf == 0 && job.ctx == NULL && job.star == NULL);
    CHECK(rvfit_mock_begin(&job, NULL, "p", 2, st, truth, &x, 9, &err) ==
              RVFIT_OK && job.nthreads == 1);
    CHECK(rvfit_mock_begin(&job, &host, "p", 0, st, truth, NULL, 1, &err) ==
          RVFIT_ERR_INVALID);
    CHECK(rvfit_mock_begin(&job, &host, "p", 2, st, NULL, NULL, 1, &err) ==
          RVFIT_ERR_INVALID);
    st[1].snr = NAN;
    CHECK(rvfit_mock_begin(&job, &host, "/x/m.fits", 2, st, truth, NULL, 1,
                           &err) == RVFIT_ERR_INVALID);
    CHECK_MSG(tu_contains(err.msg, "/x/m.fits: mock star 1"), "%s", err.msg);
}

/* ---- the block driver ----------------------------------------------- */

#define NSTAR 30
typedef struct drv {
    int nan_star;      /* the truth of this star has a NaN               */
    int fail_star;     /* star() fails for this one                      */
    int flushed[NSTAR];
    size_t next_s0;    /* blocks must come in order, 7 stars each        */
    int order_ok;
} drv;

static int ramp_truth(void *ctx, size_t star, double lnl0, double dlnl,
                      size_t n, double *flux, rvfit_err *err)
{
    const drv *d = ctx;
    (void)err;
    for (size_t k = 0; k < n; k++)
        flux[k] = (int)star == d->nan_star && k == 3
                      ? NAN
                      : lnl0 + dlnl * (double)k;
    return RVFIT_OK;
}

static int drv_star(const rvfit_mock_job *job, void *scratch, size_t s,
                    void *const *out, rvfit_err *err)
{
    const drv *d = job->ctx;
    (void)scratch;
    if ((int)s == d->fail_star)
        return rvfit_err_set(err, RVFIT_ERR_NUMERIC, "star %zu refused", s);
    *(int32_t *)out[0] = (int32_t)(3 * s);
    return rvfit_mock_truth(job, s, "part", 0.5, 0.25, 5, out[1], err);
}

static int drv_flush(const rvfit_mock_job *job, size_t s0, size_t ns,
                     void *const *buf, rvfit_err *err)
{
    drv *d = job->ctx;
    const int32_t *a = buf[0];
    const double *v = buf[1];
    (void)err;
    d->order_ok &= s0 == d->next_s0 && ns == (s0 < 28 ? 7u : 2u);
    d->next_s0 = s0 + ns;
    for (size_t i = 0; i < ns; i++)
        d->flushed[s0 + i] += a[i] == (int32_t)(3 * (s0 + i)) &&
                              v[5 * i + 4] == 1.5;
    return RVFIT_OK;
}

static int drv_run(drv *d, int nan_star, int fail_star, rvfit_err *err)
{
    rvfit_mock_star st[NSTAR];
    for (int s = 0; s < NSTAR; s++)
        st[s] = (rvfit_mock_star){s, 5000, 4, 0, 0, 0, 0, 10};
    memset(d, 0, sizeof *d);
    d->nan_star = nan_star;
    d->fail_star = fail_star;
    d->order_ok = 1;
    rvfit_mock_job job;
    rvfit_host host = tu_host(RVFIT_LOG_ERROR);
    host.nthreads = 3;
    CHECK(rvfit_mock_begin(&job, &host, "p", NSTAR, st, ramp_truth, d, 1,
                           err) == RVFIT_OK);
    job.ctx = d;
    job.block = 7;
    job.nbuf = 2;
    job.bytes[0] = sizeof(int32_t);
    job.bytes[1] = 5 * sizeof(double);
    job.star = drv_star;
    job.flush = drv_flush;
    return rvfit_mock_run(&job, err);
}

static void test_run(void)
{
    drv d;
    rvfit_err err;
    CHECK(drv_run(&d, -1, -1, &err) == RVFIT_OK);
    int once = 1;
    for (int s = 0; s < NSTAR; s++)
        once &= d.flushed[s] == 1;
    CHECK(once && d.order_ok && d.next_s0 == NSTAR);
    /* star 5's truth has a NaN: the first block fails, nothing flushed */
    CHECK(drv_run(&d, 5, -1, &err) == RVFIT_ERR_NUMERIC);
    CHECK_MSG(tu_contains(err.msg, "truth of star 5, part: non-finite") &&
                  tu_contains(err.msg, "at 3.490 A"), "%s", err.msg);
    CHECK(d.next_s0 == 0);
    /* star 12 fails in the second block: only the first was written */
    CHECK(drv_run(&d, -1, 12, &err) == RVFIT_ERR_NUMERIC);
    CHECK_MSG(tu_contains(err.msg, "star 12 refused"), "%s", err.msg);
    CHECK(d.next_s0 == 7 && d.flushed[6] == 1 && d.flushed[7] == 0);
}

/* rvfit_mock_each hands each star its slot of array 0, in order. */
static int each_one(const rvfit_mock_job *job, size_t s, const void *spec,
                    rvfit_err *err)
{
    int *seen = job->ctx;
    if (s == 6)
        return rvfit_err_set(err, RVFIT_ERR_IO, "star 6 unwritable");
    seen[s] = *(const int32_t *)spec == (int32_t)(10 * s) ? 1 : -1;
    return RVFIT_OK;
}

static void test_each(void)
{
    int seen[8] = {0};
    int32_t a[4] = {20, 30, 40, 50};
    void *buf[1] = {a};
    rvfit_mock_job job = {.ctx = seen, .bytes = {sizeof(int32_t)}};
    rvfit_err err;
    CHECK(rvfit_mock_each(&job, 2, 4, buf, each_one, &err) == RVFIT_OK);
    CHECK(!seen[1] && seen[2] == 1 && seen[5] == 1 && !seen[6]);
    a[0] = 50, a[1] = 60, a[2] = 70;
    memset(seen, 0, sizeof seen);
    CHECK(rvfit_mock_each(&job, 5, 3, buf, each_one, &err) == RVFIT_ERR_IO);
    CHECK(seen[5] == 1 && !seen[6] && !seen[7]); /* stopped at 6 */
}

/* rvfit_mock_run_phi: the table is there during the run only. */
typedef struct {
    const rvfit_phi_table *phi;
    int ok;
} phi_ctx;

static int phi_star(const rvfit_mock_job *job, void *scratch, size_t s,
                    void *const *out, rvfit_err *err)
{
    phi_ctx *c = job->ctx;
    (void)scratch, (void)s, (void)out, (void)err;
    if (!c->phi || rvfit_phi(c->phi, 0.0) != 0.5)
        c->ok = 0;
    return RVFIT_OK;
}

static int phi_flush(const rvfit_mock_job *job, size_t s0, size_t ns,
                     void *const *buf, rvfit_err *err)
{
    (void)job, (void)s0, (void)ns, (void)buf, (void)err;
    return RVFIT_OK;
}

static void test_run_phi(void)
{
    phi_ctx c = {NULL, 1};
    rvfit_mock_job job = {.nstar = 3, .nthreads = 1, .ctx = &c, .block = 2,
                          .star = phi_star, .flush = phi_flush};
    rvfit_err err;
    CHECK(rvfit_mock_run_phi(&job, &c.phi, "p", &err) == RVFIT_OK);
    CHECK(c.ok && c.phi == NULL);
}

static const rvfit_mock_loglam tgrid = {
    .ll0 = 3.5, .dloglam = 1e-4, .shift = 4, .npix = 50, .trim = 5,
    .dlnl = 5e-6, .pad = 2.0, .level = 10.0};

static void test_loglam_draw(void)
{
    int seen_k[4] = {0}, seen_t[6] = {0}, ok = 1;
    for (uint64_t s = 0; s < 400; s++) {
        rvfit_rng r;
        rvfit_rng_seed(&r, 7, s + 1);
        double c0;
        size_t n;
        rvfit_mock_loglam_draw(&tgrid, &r, &c0, &n);
        double k = (c0 - 3.5) / 1e-4;
        long ki = lround(k);
        ok &= fabs(k - (double)ki) < 1e-6 && ki >= 0 && ki < 4 && n <= 50 &&
              n >= 45;
        if (ok)
            seen_k[ki] = seen_t[50 - n] = 1;
    }
    CHECK(ok);
    for (int i = 0; i < 6; i++)
        CHECK_MSG(seen_t[i] && (i >= 4 || seen_k[i]), "value %d never drawn",
                  i);
}

static void test_loglam_truth(void)
{
    drv d;
    memset(&d, 0, sizeof d);
    d.nan_star = -1;
    rvfit_mock_star st = {1, 5000, 4, 0, 0, 0, 0, 10};
    rvfit_mock_job job;
    rvfit_err err;
    CHECK(rvfit_mock_begin(&job, NULL, "p", 1, &st, ramp_truth, &d, 1,
                           &err) == RVFIT_OK);
    rvfit_mock_scratch *w = rvfit_mock_scratch_new(&tgrid);
    CHECK(w != NULL);
    if (!w)
        return;
    double c0 = 3.5 + 3e-4, lnl0 = 0.0; /* the reddest start, 50 pixels */
    size_t nf = 0;
    CHECK(rvfit_mock_loglam_truth(&job, 0, &tgrid, c0, 50, w, &lnl0, &nf,
                                  &err) == RVFIT_OK);
    int ok = 1;
    for (int i = 0; i <= 50; i++)
        ok &= fabs(w->edge[i] / pow(10.0, c0 + (i - 0.5) * 1e-4) - 1) < 1e-13;
    CHECK(ok);
    CHECK_NEAR(exp(lnl0), w->edge[0] - 2.0, 1e-9);
    double top = exp(lnl0 + 5e-6 * (double)(nf - 1));
    CHECK(top >= w->edge[50] + 2.0 && top < (w->edge[50] + 2.0) * 1.00001);
    CHECK_NEAR(w->fine[nf - 1], lnl0 + 5e-6 * (double)(nf - 1), 1e-12);
    /* level: 1..50 has median 25.5, scaled to 10 */
    for (int i = 0; i < 50; i++)
        w->pix[i] = i + 1;
    rvfit_mock_loglam_level(&tgrid, 50, w);
    CHECK_NEAR(w->pix[0], 10.0 / 25.5, 1e-15);
    CHECK_NEAR(w->pix[49], 500.0 / 25.5, 1e-13);
    w->nfine = nf - 1; /* a grid wider than the scratch */
    CHECK(rvfit_mock_loglam_truth(&job, 0, &tgrid, c0, 50, w, &lnl0, &nf,
                                  &err) == RVFIT_ERR_INTERNAL);
    rvfit_mock_scratch_free(w);
}

static void test_defects(void)
{
    enum { N = 1000 };
    static float flux[N], ivar[N], dead[N];
    static int32_t mask[N];
    static double shape[N];
    int max_bad = 0, max_dead = 0, ok = 1;
    for (uint64_t s = 0; s < 60; s++) {
        for (int i = 0; i < N; i++)
            flux[i] = ivar[i] = dead[i] = 1.0f, mask[i] = 0, shape[i] = 2.0;
        rvfit_rng r;
        rvfit_rng_seed(&r, 3, s + 1);
        rvfit_mock_defects(&r, N, 0.5, shape, 0x40, flux, ivar, mask,
                           s % 2 ? dead : NULL);
        int nbad = 0, ndead = 0;
        for (int i = 0; i < N; i++) {
            nbad += mask[i] != 0;
            ndead += ivar[i] == 0.0f;
            ok &= (mask[i] == 0 && flux[i] == 1.0f) ||
                  (mask[i] == 0x40 && flux[i] == 31.0f); /* 1 + 30 c 2 */
            ok &= (dead[i] == 0.0f) == (s % 2 && ivar[i] == 0.0f);
        }
        ok &= nbad <= 3 && ndead <= 2;
        max_bad = nbad > max_bad ? nbad : max_bad;
        max_dead = ndead > max_dead ? ndead : max_dead;
    }
    CHECK(ok);
    CHECK(max_bad == 3 && max_dead == 2);
}

int main(void)
{
    test_phi();
    test_scale_noise();
    test_begin();
    test_run();
    test_each();
    test_run_phi();
    test_loglam_draw();
    test_loglam_truth();
    test_defects();
    return tu_finish("test_mockkit");
}
