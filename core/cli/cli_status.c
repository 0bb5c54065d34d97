/* cli_status.c — the states of a job's inputs and their status file, one
 * implementation for the single-process run (cli_run.c) and the MPI
 * coordinator (cli_coord.c).  See cli.h and docs/scale.md. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *const js_names[] = {"pending", "running", "done",
                                       "failed", "skipped", "interrupted"};

static void js_mark(cli_jobstat *js, size_t i, int state, const char *detail)
{
    js->st[i] = (unsigned char)state;
    rvfit_statusfile_mark(js->sf, i, js_names[state], detail);
}

static void js_flush(cli_jobstat *js)
{
    rvfit_err e;
    if (rvfit_statusfile_flush(js->sf, &e))
        rvfit_log(js->host, RVFIT_LOG_WARN, "rvfit", "%s", e.msg);
}

int cli_jobstat_open(cli_jobstat *js, const rvfit_config *cfg,
                     const rvfit_host *h, char **files, size_t n)
{
    memset(js, 0, sizeof *js);
    js->n = n;
    js->host = h;
    js->st = calloc(n ? n : 1, 1);
    js->where = calloc(n ? n : 1, sizeof *js->where);
    rvfit_err e;
    rvfit_err_clear(&e);
    if (!js->st || !js->where || (cfg->status[0] &&
                    rvfit_statusfile_open(&js->sf, cfg->status, n, files,
                                          &e))) {
        rvfit_log(h, RVFIT_LOG_ERROR, "rvfit", "%s",
                  js->st && js->where ? e.msg : "out of memory");
        free(js->st), free(js->where);
        return -1;
    }
    /* The skip scan, before the first write: an output kept from an
     * earlier run is never listed as pending. */
    for (size_t i = 0; cfg->skip_existing && i < n; i++) {
        char tab[RVFIT_PATH_LEN + 1100], mod[RVFIT_PATH_LEN + 1100];
        char d[sizeof tab + 16];
        struct stat sb;
        rvfit_output_names(cfg->output_dir, files[i], tab, mod, sizeof tab);
        if (stat(tab, &sb) != 0)
            continue;
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit", "%s: skipped, %s exists",
                  files[i], tab);
        snprintf(d, sizeof d, "kept existing %s", tab);
        js_mark(js, i, CLI_JS_DONE, d);
        js->nkept++;
    }
    if (js->sf && rvfit_statusfile_flush(js->sf, &e)) {
        rvfit_log(h, RVFIT_LOG_ERROR, "rvfit", "%s", e.msg);
        rvfit_statusfile_close(js->sf, &e);
        free(js->st), free(js->where);
        return -1;
    }
    pthread_mutex_init(&js->mu, NULL);
    return 0;
}

int cli_jobstat_state(cli_jobstat *js, size_t i)
{
    pthread_mutex_lock(&js->mu);
    int st = i < js->n ? js->st[i] : -1;
    pthread_mutex_unlock(&js->mu);
    return st;
}

void cli_jobstat_running(cli_jobstat *js, size_t i, const char *where)
{
    pthread_mutex_lock(&js->mu);
    if (i < js->n && js->st[i] <= CLI_JS_RUNNING) {
        snprintf(js->where[i], sizeof js->where[i], "%s", where);
        js_mark(js, i, CLI_JS_RUNNING, where);
        js_flush(js);
    }
    pthread_mutex_unlock(&js->mu);
}

void cli_jobstat_settle(cli_jobstat *js, size_t i, int state,
                        const char *detail)
{
    if (i >= js->n)
        return;
    pthread_mutex_lock(&js->mu);
    int was = js->st[i];
    /* a final outcome once; a later report may still complete an input
     * the stop marked interrupted (its rank went on) */
    int keep = was == CLI_JS_DONE || was == CLI_JS_FAILED ||
               (state != CLI_JS_DONE && was == CLI_JS_INTERRUPTED);
    if (!keep) {
        js_mark(js, i, state, detail);
        js_flush(js);
    }
    pthread_mutex_unlock(&js->mu);
}

/* With the lock. */
static void js_stop(cli_jobstat *js, const char *why)
{
    char d[600];
    for (size_t i = 0; i < js->n; i++) {
        if (js->st[i] == CLI_JS_PENDING) {
            snprintf(d, sizeof d, "not reached: %s", why);
            js_mark(js, i, CLI_JS_SKIPPED, d);
        } else if (js->st[i] == CLI_JS_RUNNING) {
            snprintf(d, sizeof d, "%s%s%s%s", why,
                     js->where[i][0] ? " (was running on " : "",
                     js->where[i], js->where[i][0] ? ")" : "");
            js_mark(js, i, CLI_JS_INTERRUPTED, d);
        }
    }
    js_flush(js);
}

void cli_jobstat_stop(cli_jobstat *js, const char *why)
{
    pthread_mutex_lock(&js->mu);
    js_stop(js, why);
    pthread_mutex_unlock(&js->mu);
}

size_t cli_jobstat_close(cli_jobstat *js)
{
    js_stop(js, "the job ended before this input was done");
    size_t bad = 0;
    for (size_t i = 0; i < js->n; i++)
        bad += js->st[i] != CLI_JS_DONE;
    rvfit_err e;
    if (rvfit_statusfile_close(js->sf, &e))
        rvfit_log(js->host, RVFIT_LOG_ERROR, "rvfit", "%s", e.msg);
    free(js->st), free(js->where);
    pthread_mutex_destroy(&js->mu);
    memset(js, 0, sizeof *js);
    return bad;
}
