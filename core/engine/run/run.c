/* run.c — a run over a stream of units: the calling thread fits batch
 * after batch while the reader thread (run_reader.c) prepares the next
 * and the writer thread (run_writer.c) writes the previous one, or all
 * three in turn on this thread ([run] readahead = 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

/* Release what the core no longer needs of a batch: once the backend has
 * its copy, the fit driver reads only ivar (pixels used) and the writer
 * only wavelengths, results and models, so the band matrices (most of a
 * batch's bytes) and the flux go at once and ivar after the fit, to the
 * reader's next batch (run_mem.c).  Memory then holds about one full
 * batch besides the backend's copy.  With [fit] clip the fit loads the
 * batch again, so everything stays until the fit ends: about one more
 * batch.  Once the reader is done no batch
 * takes them, and giving them back to the system (hundreds of MB
 * unmapped) is left to the writer's rb_clear instead of this thread,
 * whose time between backend calls the backend waits for. */
static void fit_drop(run_ctx *c, rvfit_batch *b, int ivar_too, int keep_flux)
{
    if (!run_mem_closed(&c->mem))
        rb_drop_spectra(c, b, ivar_too, keep_flux);
}

static void fit_one(run_stream *st, run_batch *rb)
{
    run_ctx *c = st->c;
    rvfit_run *r = c->r;
    rvfit_backend *be = st->be;
    rb->be = be;
    if (!rb->have_b || rb->b.nspec == 0) {
        rb->fitted = 1; /* nothing to fit: its ends may be committed */
        return;
    }
    run_poll_cancel(c); /* the reader may be blocked on a full queue */
    if (atomic_load(&c->stop))
        return;
    rvfit_err e;
    rvfit_err_clear(&e);
    double t0 = rvfit_now();
    int rc = rb_alloc_results(c, rb, (int)r->cfg->write_models, &e);
    if (!rc && !c->J)
        rc = plot_select(c, rb, &e);
    if (!rc) {
        double t1 = rvfit_now();
        rc = be->ops->load_batch(be->state, &rb->b, &r->fo.model, &e);
        st->loading += rvfit_now() - t1;
        if (rc)
            rvfit_err_prefix(&e, "backend '%s': load_batch", be->name);
        /* the clip stage loads the batch again (flux, resolution); the
         * two-velocity test reads the flux after the fit */
        if (!(r->fo.clip > 0))
            fit_drop(c, &rb->b, 0, c->J && r->fo.sb2);
    }
    float *const *models = r->cfg->write_models ? rb->models : NULL;
    rvfit_counters c0, c1;
    be->ops->counters(be->state, &c0);
    double t2 = rvfit_now(), reload0 = st->prof.reload_seconds;
    if (!rc && c->J)
        rc = rvfit_fit_joint(be, r->lib, &rb->b, rb->j.nobj,
                             rb->j.obj_off, &r->fo, rb->res, rb->j.jres,
                             rb->j.sb2, models, &st->prof, r->host, &e);
    else if (!rc)
        rc = rvfit_fit_batch(be, r->lib, &rb->b, &r->fo, rb->res, models,
                             &st->prof, r->host, &e);
    be->ops->counters(be->state, &c1);
    double reload = st->prof.reload_seconds - reload0; /* the clip stage's */
    st->driver += rvfit_now() - t2 - (c1.seconds - c0.seconds) - reload;
    st->loading += reload;
    if (!rc && !c->J)
        rc = plot_models(c, rb, &e);
    st->busy += rvfit_now() - t0;
    fit_drop(c, &rb->b, 1, 0);
    if (rc)
        run_fatal(c, rc, &e);
    else
        rb->fitted = 1;
}

/* The reader's and the writer's side of a batch: of single fits or of a
 * joint run (run_jread.c, run_jwrite.c). */
static run_batch *read_batch(run_ctx *c)
{
    return c->J ? jreader_batch(c) : reader_batch(c);
}

static void write_batch(run_ctx *c, run_batch *rb)
{
    if (c->J)
        jwriter_batch(c, rb);
    else
        writer_batch(c, rb);
}

static void *reader_main(void *arg)
{
    run_ctx *c = arg;
    for (;;) {
        run_batch *rb = read_batch(c);
        int last = rb->last;
        rb->seq = c->nseq++;
        rq_push(&c->ready, rb);
        if (last)
            return NULL;
    }
}

static void *writer_main(void *arg)
{
    run_ctx *c = arg;
    for (size_t seq = 0;; seq++) {
        run_batch *rb = rq_pop_seq(&c->done, seq);
        write_batch(c, rb);
        int last = rb->last;
        rb_clear(c, rb);
        if (last)
            return NULL;
        rq_push(&c->free, rb);
    }
}

/* Fit what the reader thread prepares until the end of the stream.  The
 * stream that takes the last batch tells the others (a NULL each): the
 * reader has handed on everything by then. */
static void *fit_loop(void *arg)
{
    run_stream *st = arg;
    run_ctx *c = st->c;
    for (;;) {
        double t0 = rvfit_now();
        run_batch *rb = rq_pop(&c->ready);
        st->prof.seconds[RVFIT_ST_WAIT] += rvfit_now() - t0;
        if (!rb)
            return NULL;
        int last = rb->last;
        for (int k = 1; last && k < c->nstream; k++)
            rq_push(&c->ready, NULL);
        fit_one(st, rb);
        rq_push(&c->done, rb);
        if (last)
            return NULL;
    }
}

/* The fit streams past the first on threads of their own: how many run
 * (fewer when the system refuses a thread; the results do not depend on
 * it, and the stop signals for streams that did not start stay unread in
 * the queue). */
static int start_streams(run_ctx *c, pthread_t *th)
{
    int n = 1;
    while (n < c->nstream &&
           pthread_create(&th[n], NULL, fit_loop, &c->stream[n]) == 0)
        n++;
    if (n < c->nstream)
        rvfit_log(c->r->host, RVFIT_LOG_WARN, "rvfit",
                  "%d fit streams of the %d asked for: the system refused "
                  "a thread", n, c->nstream);
    return n;
}

static int run_threaded(run_ctx *c)
{
    pthread_t rt, wt, ft[RUN_MAX_STREAMS];
    for (int i = 0; i < c->nstream + 2; i++)
        rq_push(&c->free, &c->buf[i]);
    if (pthread_create(&rt, NULL, reader_main, c) != 0)
        return -1; /* the caller runs it serially */
    int nfit = start_streams(c, ft);
    if (pthread_create(&wt, NULL, writer_main, c) != 0) {
        /* Let the reader finish on its own, then write here. */
        rvfit_err e;
        rvfit_err_set(&e, RVFIT_ERR_NOMEM, "cannot start the writer thread");
        run_fatal(c, RVFIT_ERR_NOMEM, &e);
        fit_loop(&c->stream[0]);
        for (int k = 1; k < nfit; k++)
            pthread_join(ft[k], NULL);
        pthread_join(rt, NULL);
        writer_main(c);
        return 0;
    }
    fit_loop(&c->stream[0]);
    for (int k = 1; k < nfit; k++)
        pthread_join(ft[k], NULL);
    pthread_join(rt, NULL);
    pthread_join(wt, NULL);
    return 0;
}

/* One batch at a time on this thread (buffers already in c->free). */
static void run_serial(run_ctx *c)
{
    for (;;) {
        run_batch *rb = read_batch(c);
        int last = rb->last;
        fit_one(&c->stream[0], rb);
        write_batch(c, rb);
        rb_clear(c, rb);
        if (last)
            return;
        rq_push(&c->free, rb);
    }
}

int run_ctx_init(run_ctx *c, rvfit_run *r, const rvfit_source *src,
                 rvfit_err *err)
{
    memset(c, 0, sizeof *c);
    c->r = r;
    c->src = src;
    c->cap = r->cfg->batch_size > 0 ? (size_t)r->cfg->batch_size : 1;
    c->threaded = r->cfg->readahead != 0;
    char section[96];
    snprintf(section, sizeof section, "instrument.%s", r->inst->desc->name);
    size_t need = rvfit_config_dump(r->cfg, NULL, 0) + 1;
    c->cfgtext = malloc(need);
    if (c->cfgtext)
        rvfit_config_dump(r->cfg, c->cfgtext, need);
    if (!c->cfgtext ||
        rvfit_config_section(r->cfg, section, &c->kv, &c->nkv) != RVFIT_OK)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "run: out of memory");
    rq_init(&c->free);
    rq_init(&c->ready);
    rq_init(&c->done);
    pthread_mutex_init(&c->mu, NULL);
    run_mem_init(&c->mem);
    atomic_init(&c->stop, 0);
    c->t0 = rvfit_now();
    /* more streams only where batches overlap (read-ahead); a joint run
     * keeps one (run_joint.c) */
    size_t more = c->threaded ? r->nmore_be : 0;
    c->nstream = 1 + (int)(more < RUN_MAX_STREAMS - 1 ? more
                                                      : RUN_MAX_STREAMS - 1);
    for (int k = 0; k < c->nstream; k++)
        c->stream[k] = (run_stream){.c = c,
                                    .be = k ? r->more_be[k - 1] : r->be};
    int rc = rvfit_fit_opts_from_config(r->cfg, &r->fo, err);
    r->fo.interp = r->interp;
    r->fo.cancel = r->cancel;
    return rc;
}

void run_ctx_free(run_ctx *c)
{
    rq_destroy(&c->free);
    rq_destroy(&c->ready);
    rq_destroy(&c->done);
    pthread_mutex_destroy(&c->mu);
    run_mem_destroy(&c->mem);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(c->grid[a]);
    free(c->kv);
    free(c->cfgtext);
}

/* The streams' profiles and times into the run's. */
static void streams_add(run_ctx *c)
{
    rvfit_run *r = c->r;
    for (int k = 0; k < RUN_MAX_STREAMS; k++) {
        const run_stream *st = &c->stream[k];
        for (int s = 0; s < RVFIT_NSTAGE; s++) {
            r->prof.seconds[s] += st->prof.seconds[s];
            r->prof.points[s] += st->prof.points[s];
            r->prof.calls[s] += st->prof.calls[s];
        }
        r->prof.spectra += st->prof.spectra;
        r->prof.reload_seconds += st->prof.reload_seconds;
        r->busy += st->busy, r->loading += st->loading;
        r->driver += st->driver;
    }
}

void run_loop(run_ctx *c)
{
    if (!c->threaded) {
        rq_push(&c->free, &c->buf[0]);
        run_serial(c);
    } else if (run_threaded(c) != 0) {
        c->nstream = 1;
        run_serial(c);
    }
    streams_add(c);
    c->r->prof.seconds[RVFIT_ST_READ] += c->t_read;
    c->r->prof.seconds[RVFIT_ST_WRITE] += c->t_write;
}

int rvfit_run_stream(rvfit_run *r, const rvfit_source *src, rvfit_err *err)
{
    if (r->cfg->sb2)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "[fit] sb2: the "
                             "two-velocity test is part of joint fits "
                             "([fit] epochs = joint, --epochs joint)");
    run_ctx *c = malloc(sizeof *c);
    if (!c)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "run: out of memory");
    int rc = run_ctx_init(c, r, src, err);
    if (!rc) {
        run_loop(c);
        rc = c->fatal_rc;
        if (rc && err)
            *err = c->fatal_err;
    }
    run_ctx_free(c);
    free(c);
    return rc;
}
