/* cli_coord.c — see cli_coord.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "cli.h"
#include "cli_coord.h"

#define CO_MAX_PARTS_PER_RANK 4 /* parts of one file per rank, at most */

typedef struct co_input {
    int nparts, done, failed; /* parts of a cut file                  */
    int final;                /* settled                               */
    int why_state;            /* CLI_JS_FAILED or _INTERRUPTED: the first
                                 part that did not complete            */
    char why[512];            /* and why                               */
    char ranks[48];           /* the ranks fitting it, "0, 3"          */
    int nranks;
} co_input;

struct coord {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **files;
    size_t n, open;           /* inputs, inputs not yet settled        */
    co_input *in;
    co_unit *q;               /* ring buffer of units to hand out      */
    size_t qhead, qn, qcap;
    int nranks;
    size_t batch;
    cli_jobstat js;           /* states and the status file          */
    const rvfit_host *host;
    const volatile int *cancel; /* rank 0's signal                    */
    atomic_int stopped;       /* hand out nothing more                 */
};

static int q_reserve(coord *co)
{
    if (co->qn < co->qcap)
        return 0;
    size_t cap = co->qcap ? 2 * co->qcap : 64;
    co_unit *q = malloc(cap * sizeof *q);
    if (!q)
        return -1;
    for (size_t i = 0; i < co->qn; i++)
        q[i] = co->q[(co->qhead + i) % co->qcap];
    free(co->q);
    co->q = q;
    co->qcap = cap;
    co->qhead = 0;
    return 0;
}

static void q_push(coord *co, co_unit u, int front)
{
    if (q_reserve(co))
        return; /* out of memory: the input is settled as failed later */
    if (front) {
        co->qhead = (co->qhead + co->qcap - 1) % co->qcap;
        co->q[co->qhead] = u;
    } else {
        co->q[(co->qhead + co->qn) % co->qcap] = u;
    }
    co->qn++;
}

int coord_new(coord **out, char **files, size_t n, int nranks,
              const rvfit_config *cfg, const rvfit_host *host,
              const volatile int *cancel, rvfit_err *err)
{
    coord *co = calloc(1, sizeof *co);
    if (!co || !(co->in = calloc(n ? n : 1, sizeof *co->in))) {
        free(co);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "job: out of memory");
    }
    co->files = files;
    co->n = n;
    co->nranks = nranks;
    co->batch = cfg->batch_size > 0 ? (size_t)cfg->batch_size : 1;
    co->host = host;
    co->cancel = cancel;
    if (cli_jobstat_open(&co->js, cfg, host, files, n)) {
        free(co->in), free(co);
        return rvfit_err_set(err, RVFIT_ERR_IO, "job: the status file "
                             "cannot be written (see above)");
    }
    pthread_mutex_init(&co->mu, NULL);
    pthread_cond_init(&co->cv, NULL);
    size_t want = 0;
    for (size_t i = 0; i < n; i++) {
        if (cli_jobstat_state(&co->js, i) != CLI_JS_PENDING) {
            co->in[i].final = 1; /* kept by the skip scan */
            continue;
        }
        q_push(co, (co_unit){RVFIT_UNIT_FIT, 0, nranks > 1 ? 0 : 1, i}, 0);
        want++;
    }
    co->open = want;
    if (co->qn != want) {
        cli_jobstat_close(&co->js);
        pthread_mutex_destroy(&co->mu);
        pthread_cond_destroy(&co->cv);
        free(co->q), free(co->in), free(co);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "job: out of memory");
    }
    *out = co;
    return RVFIT_OK;
}

void coord_lock(coord *co) { pthread_mutex_lock(&co->mu); }
void coord_unlock(coord *co) { pthread_mutex_unlock(&co->mu); }

/* Input i (or a part of it) goes to `rank`: the status file lists every
 * rank that fits a part of it ("rank 1", "ranks 0, 1"). */
static void running_on(coord *co, size_t i, int rank)
{
    co_input *in = &co->in[i];
    char r[16], where[64];
    snprintf(r, sizeof r, "%d", rank);
    int listed = 0;
    for (const char *p = in->ranks; *p;) {
        size_t l = strcspn(p, ",");
        listed |= l == strlen(r) && !strncmp(p, r, l);
        p += l;
        p += strspn(p, ", ");
    }
    if (!listed && strlen(in->ranks) + strlen(r) + 3 < sizeof in->ranks) {
        size_t l = strlen(in->ranks);
        snprintf(in->ranks + l, sizeof in->ranks - l, "%s%s", l ? ", " : "",
                 r);
        in->nranks++;
    }
    snprintf(where, sizeof where, "rank%s %s", in->nranks > 1 ? "s" : "",
             in->ranks);
    cli_jobstat_running(&co->js, i, where);
}

int coord_take(coord *co, co_unit *u, int rank)
{
    if (atomic_load(&co->stopped)) {
        co->qn = 0;
        return 0;
    }
    if (co->qn > 0) {
        *u = co->q[co->qhead];
        co->qhead = (co->qhead + 1) % co->qcap;
        co->qn--;
        if (u->kind == RVFIT_UNIT_FIT)
            running_on(co, u->input, rank);
        return 1;
    }
    return co->open == 0 ? 0 : -1;
}

int coord_split(coord *co, size_t input, size_t nselect)
{
    if (input >= co->n || co->nranks < 2 || nselect <= co->batch)
        return 1;
    size_t m = (nselect + co->batch - 1) / co->batch;
    size_t cap = (size_t)co->nranks * CO_MAX_PARTS_PER_RANK;
    m = m > cap ? cap : m;
    co->in[input].nparts = (int)m;
    for (size_t k = m - 1; k >= 1; k--)
        q_push(co, (co_unit){RVFIT_UNIT_FIT, (int)k, (int)m, input}, 1);
    pthread_cond_broadcast(&co->cv);
    return (int)m;
}

static void settle(coord *co, size_t i, int state, const char *detail,
                   int reused)
{
    co_input *in = &co->in[i];
    char d[600];
    snprintf(d, sizeof d, "%s%s", reused ? "kept existing " : "", detail);
    cli_jobstat_settle(&co->js, i, state, d);
    if (in->final)
        return;
    in->final = 1;
    co->open--;
    if (state == CLI_JS_FAILED)
        rvfit_log(co->host, RVFIT_LOG_ERROR, "rvfit", "%s", detail);
}

/* The state of a unit's report: done, failed, or cut short by a signal. */
static int report_state(const rvfit_unit_report *r)
{
    return r->state == RVFIT_UNIT_DONE     ? CLI_JS_DONE
           : r->state == RVFIT_UNIT_FAILED ? CLI_JS_FAILED
                                           : CLI_JS_INTERRUPTED;
}

/* A part of a cut file: merge or discard once every part is in. */
static void part_report(coord *co, const rvfit_unit_report *r)
{
    co_input *in = &co->in[r->unit.input];
    if (r->state != RVFIT_UNIT_DONE) { /* failed, or interrupted */
        if (!in->failed) {
            in->why_state = report_state(r);
            snprintf(in->why, sizeof in->why, "%s%s", r->detail,
                     in->why_state == CLI_JS_INTERRUPTED ? " (a part)" : "");
        }
        in->failed++;
    } else {
        in->done++;
    }
    if (in->done + in->failed < in->nparts || atomic_load(&co->stopped))
        return;
    int kind = in->failed ? RVFIT_UNIT_DISCARD : RVFIT_UNIT_MERGE;
    q_push(co, (co_unit){kind, 0, in->nparts, r->unit.input}, 1);
}

void coord_report(coord *co, const rvfit_unit_report *r, int from)
{
    size_t i = r->unit.input;
    if (i >= co->n)
        return;
    if (r->state == RVFIT_UNIT_FAILED)
        rvfit_log(co->host, RVFIT_LOG_DEBUG, "rvfit", "rank %d: %s", from,
                  r->detail);
    int state = report_state(r);
    char d[600];
    snprintf(d, sizeof d, "rank %d: %s", from, r->detail);
    if (r->unit.kind == RVFIT_UNIT_MERGE)
        settle(co, i, state, state == CLI_JS_INTERRUPTED ? d : r->detail, 0);
    else if (r->unit.kind == RVFIT_UNIT_DISCARD)
        settle(co, i, co->in[i].why_state ? co->in[i].why_state
                                          : CLI_JS_FAILED,
               co->in[i].why, 0);
    else if (r->unit.nparts > 1)
        part_report(co, r);
    else
        settle(co, i, state, state == CLI_JS_INTERRUPTED ? d : r->detail,
               r->reused);
    pthread_cond_broadcast(&co->cv);
}

void coord_stop(coord *co, const char *why)
{
    if (atomic_exchange(&co->stopped, 1))
        return;
    cli_jobstat_stop(&co->js, why);
}

int coord_next_local(void *ctx, rvfit_unit *u, int may_wait)
{
    coord *co = ctx;
    co_unit cu;
    pthread_mutex_lock(&co->mu);
    int r;
    /* a timed wait: a stop from the signal thread does not signal cv */
    while ((r = coord_take(co, &cu, 0)) < 0 && may_wait) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 200000000L;
        if (t.tv_nsec >= 1000000000L)
            t.tv_sec++, t.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&co->cv, &co->mu, &t);
    }
    pthread_mutex_unlock(&co->mu);
    if (r < 0)
        return RVFIT_SOURCE_LATER;
    if (r == 0)
        return 0;
    *u = (rvfit_unit){cu.kind, co->files[cu.input], cu.input, cu.part,
                      cu.nparts};
    return 1;
}

int coord_split_local(void *ctx, const rvfit_unit *u, size_t nselect)
{
    coord *co = ctx;
    pthread_mutex_lock(&co->mu);
    int m = coord_split(co, u->input, nselect);
    pthread_mutex_unlock(&co->mu);
    return m;
}

void coord_report_local(void *ctx, const rvfit_unit_report *r)
{
    coord *co = ctx;
    /* An input rank 0 completed is done in the status file before the
     * lock: when a rank dies, the lock may stay with the service thread
     * in an MPI call until mpirun kills this process. */
    int whole = r->unit.kind == RVFIT_UNIT_MERGE ||
                (r->unit.kind == RVFIT_UNIT_FIT && r->unit.nparts <= 1);
    if (whole && r->state == RVFIT_UNIT_DONE && r->unit.input < co->n) {
        char d[600];
        snprintf(d, sizeof d, "%s%s", r->reused ? "kept existing " : "",
                 r->detail);
        cli_jobstat_settle(&co->js, r->unit.input, CLI_JS_DONE, d);
    }
    pthread_mutex_lock(&co->mu);
    coord_report(co, r, 0);
    pthread_mutex_unlock(&co->mu);
}

void coord_rank_gone(coord *co)
{
    pthread_mutex_lock(&co->mu);
    pthread_cond_broadcast(&co->cv);
    pthread_mutex_unlock(&co->mu);
}

size_t coord_finish(coord *co)
{
    if (!co)
        return 0;
    size_t failed = cli_jobstat_close(&co->js);
    pthread_mutex_destroy(&co->mu);
    pthread_cond_destroy(&co->cv);
    free(co->q);
    free(co->in);
    free(co);
    return failed;
}
