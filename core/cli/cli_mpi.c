/* cli_mpi.c — `rvfit fit` as one job of several MPI ranks (Open MPI).
 *
 * Every rank opens its own library and backend and runs rvfit_run_stream
 * with a source that asks rank 0 for work.  Rank 0 keeps the job's queue
 * (cli_coord.c): input files in order, handed out one at a time as ranks
 * ask (a dynamic queue: files differ in size); a file with more selected
 * spectra than a batch is cut into parts that other ranks take, and the
 * rank that reports the last part's completion gets a MERGE unit.  Rank 0
 * serves the other ranks from a service thread polling MPI, and its own
 * run through direct calls; it alone writes the status file.  A rank whose
 * run stops (a failing backend) says goodbye and the others go on.  At the
 * end the ranks' profiles are gathered and every rank exits with the
 * job's status.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_coord.h"

static int launched_by_mpi(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (!v)
        v = getenv("PMI_SIZE");
    if (!v)
        v = getenv("PMIX_SIZE");
    return v != NULL;
}

#ifndef RVFIT_HAVE_MPI

int cli_mpi_init(int *argc, char ***argv, struct cli_mpi **m)
{
    (void)argc, (void)argv;
    *m = NULL;
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (launched_by_mpi() && !(v && !strcmp(v, "1"))) {
        fprintf(stderr, "rvfit: error: started by an MPI launcher, but this "
                        "rvfit was built without MPI (install libopenmpi-dev "
                        "and rebuild, or run one process)\n");
        return 2;
    }
    return 0;
}
void cli_mpi_finalize(struct cli_mpi *m) { (void)m; }
void cli_mpi_host(const struct cli_mpi *m, rvfit_host *h, cli_log *lg)
{
    (void)m, (void)h, (void)lg;
}
int cli_mpi_fit(fit_env *e, rvfit_run *run, char **files, int nfiles)
{
    (void)e, (void)run, (void)files, (void)nfiles;
    return -1;
}
int cli_mpi_exit_code(const struct cli_mpi *m, int code)
{
    (void)m;
    return code;
}
int cli_mpi_rank(const struct cli_mpi *m)
{
    (void)m;
    return 0;
}
int cli_mpi_bcast_int(const struct cli_mpi *m, int v)
{
    (void)m;
    return v;
}

#else /* RVFIT_HAVE_MPI */

#include <mpi.h>

enum { TAG_REQ = 1, TAG_UNIT, TAG_STOP, TAG_WAIT, TAG_SPLIT, TAG_SPLITN,
       TAG_REPORT, TAG_BYE };

/* Everything that travels between ranks, as bytes (same binary). */
typedef struct mpi_msg {
    int32_t kind, state, part, nparts, reused, nsplit, may_wait, pad;
    uint64_t input, nselect, nspec, points;
    char detail[1024];
} mpi_msg;

struct cli_mpi {
    int rank, size, local_rank, local_size;
    pthread_mutex_t mu; /* one MPI call at a time on this rank */
};

int cli_mpi_init(int *argc, char ***argv, struct cli_mpi **out)
{
    *out = NULL;
    if (!launched_by_mpi())
        return 0;
    int prov = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &prov);
    if (prov < MPI_THREAD_SERIALIZED) {
        fprintf(stderr, "rvfit: error: the MPI library offers no "
                        "MPI_THREAD_SERIALIZED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct cli_mpi *m = calloc(1, sizeof *m);
    if (!m)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank,
                        MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &m->local_rank);
    MPI_Comm_size(node, &m->local_size);
    MPI_Comm_free(&node);
    pthread_mutex_init(&m->mu, NULL);
    *out = m;
    return 0;
}

void cli_mpi_finalize(struct cli_mpi *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
    MPI_Finalize();
}

void cli_mpi_host(const struct cli_mpi *m, rvfit_host *h, cli_log *lg)
{
    if (!m)
        return;
    h->rank = m->rank;
    h->nranks = m->size;
    h->local_rank = m->local_rank;
    h->local_size = m->local_size;
    lg->rank = m->rank;
}

int cli_mpi_exit_code(const struct cli_mpi *m, int code)
{
    if (!m)
        return code;
    int all = code;
    MPI_Allreduce(&code, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

int cli_mpi_rank(const struct cli_mpi *m)
{
    return m ? m->rank : 0;
}

int cli_mpi_bcast_int(const struct cli_mpi *m, int v)
{
    if (m)
        MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

/* ---- ranks > 0: a source that asks rank 0 --------------------------- */

typedef struct remote_src {
    struct cli_mpi *m;
    char **files;
    size_t nfiles;
    int stopped; /* rank 0 said there is no more work */
} remote_src;

static int remote_next(void *ctx, rvfit_unit *u, int may_wait)
{
    remote_src *s = ctx;
    mpi_msg msg;
    MPI_Status st;
    memset(&msg, 0, sizeof msg);
    msg.may_wait = may_wait;
    /* Rank 0 may answer only after this rank's writer has reported (the
     * last part of a file gives a MERGE unit), so wait without holding the
     * lock the writer needs: poll a non-blocking receive. */
    MPI_Request req;
    pthread_mutex_lock(&s->m->mu);
    MPI_Send(&msg, sizeof msg, MPI_BYTE, 0, TAG_REQ, MPI_COMM_WORLD);
    MPI_Irecv(&msg, sizeof msg, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD,
              &req);
    pthread_mutex_unlock(&s->m->mu);
    for (int done = 0;;) {
        pthread_mutex_lock(&s->m->mu);
        MPI_Test(&req, &done, &st);
        pthread_mutex_unlock(&s->m->mu);
        if (done)
            break;
        struct timespec ts = {0, 1000000}; /* 1 ms */
        nanosleep(&ts, NULL);
    }
    if (st.MPI_TAG == TAG_WAIT)
        return RVFIT_SOURCE_LATER;
    if (st.MPI_TAG == TAG_STOP || msg.input >= s->nfiles) {
        s->stopped = 1;
        return 0;
    }
    *u = (rvfit_unit){msg.kind, s->files[msg.input], (size_t)msg.input,
                      msg.part, msg.nparts};
    return 1;
}

static int remote_split(void *ctx, const rvfit_unit *u, size_t nselect)
{
    remote_src *s = ctx;
    mpi_msg msg;
    memset(&msg, 0, sizeof msg);
    msg.input = u->input;
    msg.nselect = nselect;
    pthread_mutex_lock(&s->m->mu);
    MPI_Send(&msg, sizeof msg, MPI_BYTE, 0, TAG_SPLIT, MPI_COMM_WORLD);
    MPI_Recv(&msg, sizeof msg, MPI_BYTE, 0, TAG_SPLITN, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    pthread_mutex_unlock(&s->m->mu);
    return msg.nsplit;
}

static void remote_report(void *ctx, const rvfit_unit_report *r)
{
    remote_src *s = ctx;
    mpi_msg msg;
    memset(&msg, 0, sizeof msg);
    msg.kind = r->unit.kind;
    msg.state = r->state;
    msg.part = r->unit.part;
    msg.nparts = r->unit.nparts;
    msg.reused = r->reused;
    msg.input = r->unit.input;
    msg.nspec = r->nspec;
    msg.points = r->points;
    snprintf(msg.detail, sizeof msg.detail, "%s", r->detail ? r->detail : "");
    pthread_mutex_lock(&s->m->mu);
    MPI_Send(&msg, sizeof msg, MPI_BYTE, 0, TAG_REPORT, MPI_COMM_WORLD);
    pthread_mutex_unlock(&s->m->mu);
}

/* ---- rank 0: the service thread -------------------------------------- */

typedef struct service {
    coord *co;
    char **files;
    int nranks;
    int *waiting;   /* ranks that asked for work and may wait */
    int nwait;
    int active;     /* other ranks not yet stopped or gone */
} service;

static void send_unit(int to, const co_unit *u, int tag)
{
    mpi_msg msg;
    memset(&msg, 0, sizeof msg);
    if (u) {
        msg.kind = u->kind;
        msg.part = u->part;
        msg.nparts = u->nparts;
        msg.input = u->input;
    }
    MPI_Send(&msg, sizeof msg, MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

/* Give waiting ranks work, or tell them that there is none. */
static void serve_waiting(service *sv)
{
    for (int i = 0; i < sv->nwait;) {
        co_unit u;
        int r = coord_take(sv->co, &u, sv->waiting[i]);
        if (r < 0)
            return;
        send_unit(sv->waiting[i], r ? &u : NULL, r ? TAG_UNIT : TAG_STOP);
        if (!r)
            sv->active--;
        sv->waiting[i] = sv->waiting[--sv->nwait];
    }
}

static void handle(service *sv, int from, int tag, const mpi_msg *msg)
{
    coord *co = sv->co;
    if (tag == TAG_REQ) {
        co_unit u;
        int r = msg->may_wait ? -1 : coord_take(co, &u, from);
        if (r < 0 && msg->may_wait)
            sv->waiting[sv->nwait++] = from;
        else if (r < 0)
            send_unit(from, NULL, TAG_WAIT);
        else
            send_unit(from, r ? &u : NULL, r ? TAG_UNIT : TAG_STOP);
        if (r == 0)
            sv->active--;
    } else if (tag == TAG_SPLIT) {
        mpi_msg rep;
        memset(&rep, 0, sizeof rep);
        rep.nsplit = coord_split(co, (size_t)msg->input, msg->nselect);
        MPI_Send(&rep, sizeof rep, MPI_BYTE, from, TAG_SPLITN, MPI_COMM_WORLD);
    } else if (tag == TAG_REPORT) {
        rvfit_unit_report r = {{msg->kind, sv->files[msg->input],
                                (size_t)msg->input, msg->part, msg->nparts},
                               msg->state, msg->detail, (size_t)msg->nspec,
                               msg->points, msg->reused};
        coord_report(co, &r, from);
    } else if (tag == TAG_BYE) {
        sv->active--;
    }
}

/* A signal on rank 0 stops the job at once, in the status file too,
 * from the signal thread: when mpirun stops a job because a rank died,
 * that rank never reports, and rank 0 is killed a second after its
 * SIGTERM, maybe with a thread stuck in MPI. */
static void stop_job(void *ctx, int sig)
{
    char why[64];
    snprintf(why, sizeof why, "interrupted by %s on rank 0",
             cli_signal_name(sig));
    coord_stop(ctx, why);
}

static void *service_main(void *arg)
{
    service *sv = arg;
    while (sv->active > 0) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        coord_lock(sv->co);
        if (flag) {
            mpi_msg msg;
            MPI_Recv(&msg, sizeof msg, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            handle(sv, st.MPI_SOURCE, st.MPI_TAG, &msg);
        }
        serve_waiting(sv);
        coord_unlock(sv->co);
        if (!flag) {
            struct timespec ts = {0, 1000000}; /* 1 ms */
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* ---- the job ----------------------------------------------------------- */

typedef struct rank_stats {
    double wall, busy, seconds[RVFIT_NSTAGE];
    uint64_t spectra, points, failed_run;
} rank_stats;

/* Rank 0: print the job's profile from every rank's figures. */
static void job_profile(const fit_env *e, const rank_stats *all, int n,
                        double wall)
{
    uint64_t spectra = 0, points = 0;
    for (int r = 0; r < n; r++)
        spectra += all[r].spectra, points += all[r].points;
    rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit",
              "job profile: %d ranks, %llu spectra in %.2f s, %.2f "
              "spectra/s, %llu backend points", n,
              (unsigned long long)spectra, wall,
              wall > 0 ? (double)spectra / wall : 0.0,
              (unsigned long long)points);
    for (int r = 0; r < n; r++)
        rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit",
                  "job profile: rank %d: %llu spectra, fitting %.2f s of "
                  "%.2f (%.0f%% busy), read %.2f s, write %.2f s, waited "
                  "%.2f s for input", r,
                  (unsigned long long)all[r].spectra, all[r].busy,
                  all[r].wall,
                  all[r].wall > 0 ? 100.0 * all[r].busy / all[r].wall : 0.0,
                  all[r].seconds[RVFIT_ST_READ],
                  all[r].seconds[RVFIT_ST_WRITE],
                  all[r].seconds[RVFIT_ST_WAIT]);
}

static int run_rank0(rvfit_run *run, coord *co, char **files, int nranks,
                     const volatile int *cancel, rvfit_err *err)
{
    service sv = {co, files, nranks, calloc((size_t)nranks, sizeof(int)), 0,
                  nranks - 1};
    pthread_t th;
    int have_th = sv.waiting && nranks > 1 &&
                  pthread_create(&th, NULL, service_main, &sv) == 0;
    if (nranks > 1 && !have_th) {
        free(sv.waiting);
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "cannot start the MPI "
                             "service thread");
    }
    rvfit_source src = {co, coord_next_local, coord_split_local,
                        coord_report_local};
    int rc = rvfit_run_stream(run, &src, err);
    if (rc && cancel && *cancel) /* also without the signal thread */
        stop_job(co, *cancel);
    if (rc)
        coord_rank_gone(co);
    if (have_th)
        pthread_join(th, NULL);
    free(sv.waiting);
    return rc;
}

int cli_mpi_fit(fit_env *e, rvfit_run *run, char **files, int nfiles)
{
    struct cli_mpi *m = e->mpi;
    rvfit_err err;
    rvfit_err_clear(&err);
    double t0 = rvfit_now();
    coord *co = NULL;
    int rc = RVFIT_OK;
    if (m->rank == 0) {
        rc = coord_new(&co, files, (size_t)nfiles, m->size, &e->cfg,
                       &e->host, e->cancel, &err);
        if (!rc) {
            cli_signals_hook(e->sig, stop_job, co);
            rc = run_rank0(run, co, files, m->size, e->cancel, &err);
        }
    } else {
        remote_src rs = {m, files, (size_t)nfiles, 0};
        rvfit_source src = {&rs, remote_next, remote_split, remote_report};
        rc = rvfit_run_stream(run, &src, &err);
        if (!rs.stopped) {
            mpi_msg bye;
            memset(&bye, 0, sizeof bye);
            MPI_Send(&bye, sizeof bye, MPI_BYTE, 0, TAG_BYE, MPI_COMM_WORLD);
        }
    }
    if (rc)
        cli_run_stopped(e, run, rc, err.msg);
    rank_stats mine;
    memset(&mine, 0, sizeof mine);
    mine.wall = rvfit_now() - t0;
    mine.busy = run->busy;
    memcpy(mine.seconds, run->prof.seconds, sizeof mine.seconds);
    mine.spectra = run->nspectra;
    rvfit_counters c;
    e->be.ops->counters(e->be.state, &c);
    mine.points = c.points;
    mine.failed_run = rc != RVFIT_OK;
    rank_stats *all = m->rank == 0 ? calloc((size_t)m->size, sizeof *all)
                                   : NULL;
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
    cli_print_profile(&e->host, run, mine.wall);
    int failed = 0;
    if (m->rank == 0) {
        cli_signals_hook(e->sig, NULL, NULL);
        failed = (int)coord_finish(co);
        for (int r = 0; all && r < m->size; r++)
            failed += (int)all[r].failed_run;
        if (all)
            job_profile(e, all, m->size, rvfit_now() - t0);
        free(all);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return failed;
}

#endif /* RVFIT_HAVE_MPI */
