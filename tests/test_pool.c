/* test_pool.c — rvfit/pool.h: every item runs exactly once on a valid
 * thread id, a pool serves many runs, and rvfit_parallel_for gives each
 * thread one scratch, frees them all and passes the first failure up
 * (on one thread, no item after it starts); many tiny runs in a row, each
 * item once with its own run's function. */
#include <stdatomic.h>
#include <string.h>

#include "rvfit/pool.h"
#include "testutil.h"

#define NITEM 5000

typedef struct run_ctx {
    atomic_int count[NITEM];
    double value[NITEM];
    int nthreads;
    atomic_int bad_tid;
} run_ctx;

static void square(void *ctx, int tid, size_t item)
{
    run_ctx *c = ctx;
    if (tid < 0 || tid >= c->nthreads)
        atomic_fetch_add(&c->bad_tid, 1);
    atomic_fetch_add(&c->count[item], 1);
    c->value[item] = (double)item * (double)item;
}

static void test_pool(void)
{
    rvfit_pool *p = NULL;
    rvfit_err err;
    CHECK(rvfit_pool_create(4, &p, &err) == RVFIT_OK && p);
    if (!p)
        return;
    run_ctx *c = calloc(1, sizeof *c);
    c->nthreads = rvfit_pool_size(p);
    CHECK(c->nthreads >= 1 && c->nthreads <= 4);
    const size_t sizes[] = {0, 1, 3, NITEM, 17};
    for (int r = 0; r < 5; r++) { /* the same threads, run after run */
        memset(c->count, 0, sizeof c->count);
        rvfit_pool_run(p, sizes[r], square, c);
        int ok = 1;
        for (size_t i = 0; i < NITEM; i++)
            ok &= atomic_load(&c->count[i]) == (i < sizes[r] ? 1 : 0) &&
                  (i >= sizes[r] || c->value[i] == (double)(i * i));
        CHECK_MSG(ok, "run of %zu items", sizes[r]);
    }
    CHECK(atomic_load(&c->bad_tid) == 0);
    rvfit_pool_destroy(p);
    rvfit_pool_destroy(NULL);
    free(c);
    rvfit_pool *one = NULL;
    CHECK(rvfit_pool_create(0, &one, &err) == RVFIT_OK);
    CHECK(one && rvfit_pool_size(one) == 1);
    rvfit_pool_destroy(one);
}

/* Many small runs in a row, two functions on two contexts in turn: a
 * run returns only when its items are done, and a worker that wakes late
 * takes no item of a later run with an earlier run's function or context
 * (each item counted once, in its own run's context, by its own
 * function). */
typedef struct tiny_ctx {
    atomic_int count[8];
    atomic_int wrong;
    int tag;
} tiny_ctx;

/* A microsecond or so of work, so that a worker's item can still be
 * running when the caller has done its own. */
static void tiny_work(void)
{
    volatile double x = 1.0;
    for (int k = 0; k < 1000; k++)
        x = x * 1.0000001 + 1e-9;
}

/* Item of a run whose function is tag's: counted, and wrong unless the
 * context is that run's too. */
static void tiny_item(void *ctx, size_t item, int tag)
{
    tiny_ctx *c = ctx;
    tiny_work();
    atomic_fetch_add(&c->wrong, c->tag != tag);
    atomic_fetch_add(&c->count[item], 1);
}

static void tiny_a(void *ctx, int tid, size_t item)
{
    (void)tid;
    tiny_item(ctx, item, 'a');
}

static void tiny_b(void *ctx, int tid, size_t item)
{
    (void)tid;
    tiny_item(ctx, item, 'b');
}

static void test_pool_tiny_runs(void)
{
    rvfit_pool *p = NULL;
    rvfit_err err;
    CHECK(rvfit_pool_create(3, &p, &err) == RVFIT_OK && p);
    if (!p)
        return;
    tiny_ctx *c = calloc(2, sizeof *c);
    c[0].tag = 'a', c[1].tag = 'b';
    int bad = 0;
    for (int r = 0; r < 20000 && !bad; r++) {
        tiny_ctx *t = &c[r % 2];
        size_t n = (size_t)(r % 8);
        for (int i = 0; i < 8; i++)
            atomic_store(&t->count[i], 0);
        rvfit_pool_run(p, n, r % 2 ? tiny_b : tiny_a, t);
        for (size_t i = 0; i < 8; i++)
            bad |= atomic_load(&t->count[i]) != (i < n ? 1 : 0);
        CHECK_MSG(!bad, "run %d of %zu items", r, n);
    }
    rvfit_pool_destroy(p);
    CHECK(atomic_load(&c[0].wrong) == 0 && atomic_load(&c[1].wrong) == 0);
    free(c);
}

typedef struct par_ctx {
    atomic_int nnew, nfree, fail_at, scratch_null;
    atomic_int ran[NITEM];
    double sum[NITEM];
} par_ctx;

typedef struct par_scratch {
    par_ctx *c;
    double acc;
} par_scratch;

static void *scratch_new(void *ctx)
{
    par_ctx *c = ctx;
    atomic_fetch_add(&c->nnew, 1);
    if (atomic_load(&c->scratch_null))
        return NULL;
    par_scratch *s = calloc(1, sizeof *s);
    if (s)
        s->c = c;
    return s;
}

static void scratch_free(void *arg)
{
    par_scratch *s = arg;
    atomic_fetch_add(&s->c->nfree, 1);
    free(s);
}

static int item(void *ctx, void *scratch, size_t i, rvfit_err *err)
{
    par_ctx *c = ctx;
    par_scratch *s = scratch;
    atomic_fetch_add(&c->ran[i], 1);
    if (s->c != c)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL, "foreign scratch");
    if ((int)i == atomic_load(&c->fail_at))
        return rvfit_err_set(err, RVFIT_ERR_NUMERIC, "item %zu refused", i);
    s->acc += 1.0; /* this thread's own */
    c->sum[i] = 0.5 * (double)i;
    return RVFIT_OK;
}

static void test_parallel_for(int nthreads)
{
    par_ctx *c = calloc(1, sizeof *c);
    rvfit_err err;
    atomic_store(&c->fail_at, -1);
    rvfit_parallel_job job = {c, scratch_new, scratch_free, item};
    CHECK(rvfit_parallel_for(&job, NITEM, nthreads, &err) == RVFIT_OK);
    int ok = 1;
    for (int i = 0; i < NITEM; i++)
        ok &= atomic_load(&c->ran[i]) == 1 && c->sum[i] == 0.5 * i;
    CHECK_MSG(ok, "%d threads: every item once", nthreads);
    int nnew = atomic_load(&c->nnew);
    CHECK(nnew >= 1 && nnew <= (nthreads < 64 ? nthreads : 64));
    CHECK(atomic_load(&c->nfree) == nnew);

    memset(c, 0, sizeof *c);
    atomic_store(&c->fail_at, 37);
    int rc = rvfit_parallel_for(&job, NITEM, nthreads, &err);
    CHECK(rc == RVFIT_ERR_NUMERIC);
    CHECK_MSG(tu_contains(err.msg, "item 37 refused"), "%s", err.msg);
    if (nthreads == 1) { /* items are taken in order: none after 37 */
        int later = 0;
        for (int i = 38; i < NITEM; i++)
            later += atomic_load(&c->ran[i]);
        CHECK(later == 0 && atomic_load(&c->ran[36]) == 1);
    }

    memset(c, 0, sizeof *c);
    atomic_store(&c->fail_at, -1);
    atomic_store(&c->scratch_null, 1);
    CHECK(rvfit_parallel_for(&job, 10, nthreads, &err) == RVFIT_ERR_NOMEM);
    CHECK(atomic_load(&c->nfree) == 0);
    free(c);
}

static int no_scratch_item(void *ctx, void *scratch, size_t i,
                           rvfit_err *err)
{
    (void)err;
    (void)i;
    if (scratch == NULL)
        atomic_fetch_add((atomic_int *)ctx, 1);
    return RVFIT_OK;
}

int main(void)
{
    test_pool();
    test_pool_tiny_runs();
    test_parallel_for(1);
    test_parallel_for(3);
    test_parallel_for(200); /* capped at 64 */
    /* without scratch_new, items get a NULL scratch */
    atomic_int n = 0;
    rvfit_parallel_job job = {&n, NULL, NULL, no_scratch_item};
    rvfit_err err;
    CHECK(rvfit_parallel_for(&job, 100, 2, &err) == RVFIT_OK);
    CHECK(atomic_load(&n) == 100);
    CHECK(rvfit_parallel_for(&job, 0, 2, &err) == RVFIT_OK);
    return tu_finish("test_pool");
}
