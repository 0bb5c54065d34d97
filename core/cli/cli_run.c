/* cli_run.c — what `rvfit fit` and `rvfit compare` share: opening the
 * library, instrument and backend, fitting a list of files as one stream
 * (rvfit_run_stream; under mpirun through cli_mpi.c), the status file and
 * the final profile. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "rvfit/files.h"
#include "rvfit/library_io.h"
#include "rvfit/output.h"

/* The output directory, created, locked by rank 0 for the job (one run
 * per directory; the ranks of an MPI job are one run) and cleared of
 * what killed runs left there. */
static int take_output_dir(fit_env *e, rvfit_err *err)
{
    rvfit_config *c = &e->cfg;
    int rc = rvfit_mkdirs(c->output_dir, err);
    if (rc)
        rvfit_err_prefix(err, "output directory");
    int rank0 = cli_mpi_rank(e->mpi) == 0;
    if (!rc && rank0) {
        rc = cli_dirlock_take(&e->lock, c->output_dir, &e->host, err);
        e->have_lock = !rc;
    }
    /* Holding the directory, this run alone writes there: hidden parts
     * and temporaries are what killed runs left (an input kept by
     * --skip-existing is never opened, so nothing else removes them). */
    if (!rc && rank0 && e->lock.fd >= 0) {
        size_t n = rvfit_output_clean_dir(c->output_dir);
        if (n)
            rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit", "%s: removed %zu "
                      "part or temporary files left by killed runs",
                      c->output_dir, n);
    }
    int rc0 = cli_mpi_bcast_int(e->mpi, rc);
    if (rc)
        return rc;
    if (rc0)
        return rvfit_err_set(err, rc0, "output directory %s: rank 0 could "
                             "not take it (see its message)", c->output_dir);
    return RVFIT_OK;
}

/* [run] streams - 1 more instances of the chosen backend (by its name:
 * a fallback list chose it already), each with the library.  Only where
 * the run uses them: single fits that read ahead. */
static int open_streams(fit_env *e, rvfit_err *err)
{
    const rvfit_config *c = &e->cfg;
    if (c->streams <= 1)
        return RVFIT_OK;
    if (!c->readahead || !strcasecmp(c->epochs, "joint")) {
        rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit", "[run] streams = %ld "
                  "ignored: streams are for single fits with readahead",
                  c->streams);
        return RVFIT_OK;
    }
    for (int k = 0; k + 1 < c->streams && k < 3; k++) {
        rvfit_backend *b = &e->more_be[k];
        int stage = 0;
        int rc = rvfit_backend_open_name(c, &e->host, e->be.name, b, &stage,
                                         err);
        if (rc) {
            rvfit_err_prefix(err, "[run] streams: instance %d of backend "
                             "'%s'", k + 2, e->be.name);
            return rc;
        }
        e->more_ptr[e->nmore_be++] = b;
        rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit",
                  "backend %s, fit stream %d: on %s", b->name, k + 2,
                  b->ops->device(b->state));
        rc = b->ops->load_library(b->state, rvfit_interp_vectors(&e->interp),
                                  err);
        if (rc) {
            rvfit_err_prefix(err, "backend '%s' (fit stream %d): "
                             "load_library", b->name, k + 2);
            return rc;
        }
    }
    return RVFIT_OK;
}

int cli_open_env(fit_env *e, rvfit_err *err)
{
    rvfit_config *c = &e->cfg;
    if (!c->templates[0])
        return rvfit_err_set(err, RVFIT_ERR_CONFIG,
                             "no template library: give --templates DIR "
                             "or [templates] path (build one with `rvfit "
                             "templates`)");
    int rc = take_output_dir(e, err);
    if (rc)
        return rc;
    if (c->plot_dir[0] && (rc = rvfit_mkdirs(c->plot_dir, err))) {
        rvfit_err_prefix(err, "plot directory");
        return rc;
    }
    /* The backend first: the run's first lines say which backend and
     * device it chose and why. */
    if ((rc = rvfit_backend_open(c, &e->host, &e->be, err)))
        return rc;
    e->have_be = 1;
    rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit",
              "backend %s %s on %s (%s)", e->be.name,
              e->be.ph.desc->version, e->be.ops->device(e->be.state),
              e->be.ph.path);
    if ((rc = rvfit_instrument_load(c, c->instrument, &e->inst, err)))
        return rc;
    e->have_inst = 1;
    rc = rvfit_library_open_fit(&e->lib, &e->interp, c->templates, c, err);
    if (rc)
        return rc;
    e->have_lib = 1;
    char cub[RVFIT_MAX_PARAMS * 18] = "";
    for (int p = 0; p < e->lib.nparam; p++)
        if (e->lib.axis[p].interp == RVFIT_INTERP_CUBIC) {
            strcat(cub, cub[0] ? ", " : "");
            strncat(cub, e->lib.axis[p].name, 16);
        }
    char how[64];
    rvfit_interp_describe(&e->interp, how, sizeof how);
    size_t nfill = rvfit_library_nfilled(&e->lib);
    char fill[48] = "";
    if (nfill)
        snprintf(fill, sizeof fill, " (%zu holes filled)", nfill);
    rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit",
              "templates %s: %d parameters, %zu models%s, %d arms; "
              "interpolator %s%s in %s, cubic on: %s, stencils from the %s",
              c->templates, e->lib.nparam, e->lib.nmodel, fill, e->lib.narm,
              rvfit_interp_name(&e->interp), how,
              e->lib.log_flux ? "ln flux" : "flux", cub[0] ? cub : "none",
              e->interp.host_stencils ? "core" : "backend");
    rc = e->be.ops->load_library(e->be.state,
                                 rvfit_interp_vectors(&e->interp), err);
    if (rc)
        rvfit_err_prefix(err, "backend '%s': load_library", e->be.name);
    return rc ? rc : open_streams(e, err);
}

void cli_close_env(fit_env *e)
{
    if (e->have_lock)
        cli_dirlock_release(&e->lock);
    e->have_lock = 0;
    for (int k = 0; k < e->nmore_be; k++)
        rvfit_backend_close(e->more_ptr[k]);
    e->nmore_be = 0;
    if (e->have_be)
        rvfit_backend_close(&e->be);
    if (e->have_inst)
        rvfit_plugin_unload(&e->inst);
    if (e->have_lib) {
        rvfit_interp_close(&e->interp);
        rvfit_library_free(&e->lib);
    }
    rvfit_config_free(&e->cfg);
}

/* ---- a list of files as the source of a run --------------------------- */

typedef struct list_src {
    char **files;
    size_t n, next;
    cli_jobstat js;
    const rvfit_host *host;
    size_t failed;
    const volatile int *cancel;
} list_src;

static int list_next(void *ctx, rvfit_unit *u, int may_wait)
{
    list_src *s = ctx;
    (void)may_wait;
    /* inputs the skip scan kept are not handed out */
    while (s->next < s->n &&
           cli_jobstat_state(&s->js, s->next) != CLI_JS_PENDING)
        s->next++;
    if (s->next >= s->n || (s->cancel && *s->cancel))
        return 0;
    cli_jobstat_running(&s->js, s->next, "");
    *u = (rvfit_unit){RVFIT_UNIT_FIT, s->files[s->next], s->next, 0, 1};
    s->next++;
    return 1;
}

static void list_report(void *ctx, const rvfit_unit_report *r)
{
    list_src *s = ctx;
    size_t i = r->unit.input;
    if (r->state == RVFIT_UNIT_FAILED) {
        s->failed++;
        rvfit_log(s->host, RVFIT_LOG_ERROR, "rvfit", "%s", r->detail);
        cli_jobstat_settle(&s->js, i, CLI_JS_FAILED, r->detail);
    } else if (r->state == RVFIT_UNIT_DONE) {
        char d[600];
        snprintf(d, sizeof d, "%s%s", r->reused ? "kept existing " : "",
                 r->detail);
        cli_jobstat_settle(&s->js, i, CLI_JS_DONE, d);
    } else { /* cut short by a signal */
        char d[64];
        snprintf(d, sizeof d, "interrupted by %s",
                 s->cancel && *s->cancel ? cli_signal_name(*s->cancel)
                                         : "a signal");
        cli_jobstat_settle(&s->js, i, CLI_JS_INTERRUPTED, d);
    }
}

/* The first signal: the status file says so at once (a second one
 * quits without another word). */
static void list_signal(void *ctx, int sig)
{
    char why[64];
    snprintf(why, sizeof why, "interrupted by %s", cli_signal_name(sig));
    cli_jobstat_stop(ctx, why);
}

static void fill_summary(const fit_env *e, const rvfit_run *run, double wall,
                         cli_fit_summary *sum)
{
    if (!sum)
        return;
    rvfit_counters c;
    e->be.ops->counters(e->be.state, &c);
    sum->wall = wall;
    sum->points = c.points;
    sum->spectra = run->nspectra;
    snprintf(sum->device, sizeof sum->device, "%s",
             e->be.ops->device(e->be.state));
}

/* The files of a single-process job as one stream; returns the number of
 * inputs that failed, plus one when the run itself stopped. */
static int fit_local(fit_env *e, rvfit_run *run, char **files, int nfiles,
                     cli_fit_summary *sum)
{
    rvfit_err err;
    rvfit_err_clear(&err);
    list_src ls = {files, (size_t)nfiles, 0, {0}, &e->host, 0, e->cancel};
    if (cli_jobstat_open(&ls.js, &e->cfg, &e->host, files, ls.n))
        return -1;
    rvfit_source src = {&ls, list_next, NULL, list_report};
    cli_signals_hook(e->sig, list_signal, &ls.js);
    double t0 = rvfit_now();
    int rc = rvfit_run_stream(run, &src, &err);
    double wall = rvfit_now() - t0;
    cli_signals_hook(e->sig, NULL, NULL);
    if (rc) {
        cli_run_stopped(e, run, rc, err.msg);
        char why[sizeof err.msg + 32];
        if (rc == RVFIT_ERR_CANCELLED && e->cancel && *e->cancel)
            snprintf(why, sizeof why, "interrupted by %s",
                     cli_signal_name(*e->cancel));
        else
            snprintf(why, sizeof why, "the run stopped: %s", err.msg);
        cli_jobstat_stop(&ls.js, why);
    }
    cli_print_profile(&e->host, run, wall);
    if (ls.failed)
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit",
                  "%zu of %d input files failed (no output written for "
                  "them)", ls.failed, nfiles);
    cli_jobstat_close(&ls.js);
    fill_summary(e, run, wall, sum);
    return (int)ls.failed + (rc ? 1 : 0);
}

int cli_fit_files(fit_env *e, char **files, int nfiles, const char *cmdline,
                  const int64_t *ids, size_t nids, cli_fit_summary *sum)
{
    rvfit_err err;
    rvfit_err_clear(&err);
    /* joint outputs are one pair: input names cannot collide there */
    int joint = !strcasecmp(e->cfg.epochs, "joint");
    int rc = joint ? RVFIT_OK
                   : cli_check_output_names(files, nfiles, e->cfg.output_dir,
                                            &err);
    if (!rc)
        rc = cli_open_env(e, &err);
    if (rc) {
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit", "%s", err.msg);
        cli_close_env(e);
        return rc == RVFIT_ERR_CONFIG ? -2 : -1;
    }
    rvfit_run run = {.cfg = &e->cfg, .host = &e->host, .be = &e->be,
                     .lib = &e->lib, .interp = &e->interp,
                     .lib_path = e->cfg.templates,
                     .inst = &e->inst, .cmdline = cmdline, .targetid = ids,
                     .ntargetid = nids, .progress = cli_progress,
                     .progress_ctx = &e->lg, .cancel = e->cancel,
                     .plot_targetid = e->plot_ids,
                     .nplot_targetid = e->nplot_ids,
                     .more_be = e->more_ptr,
                     .nmore_be = (size_t)e->nmore_be};
    int failed = joint    ? cli_fit_joint(e, &run, files, nfiles, sum)
                 : e->mpi ? cli_mpi_fit(e, &run, files, nfiles)
                          : fit_local(e, &run, files, nfiles, sum);
    if (e->cfg.plot_dir[0])
        rvfit_log(&e->host, RVFIT_LOG_INFO, "rvfit", "%zu figures in %s",
                  run.nplots, e->cfg.plot_dir);
    cli_close_env(e);
    return failed;
}
