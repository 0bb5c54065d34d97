/* cli_joint.c — `rvfit fit --epochs joint`: one job over all inputs
 * (rvfit_run_joint).  Under mpirun every rank indexes the inputs itself
 * (the index is the same everywhere: it does not depend on the order of
 * the inputs) and fits its share of the objects into hidden part
 * outputs; when every rank has finished, rank 0 joins them.  Rank 0
 * keeps the status file: every input running while the job runs, then
 * done (its spectra are in the joint output), failed (it could not be
 * read: the log says why) or the reason the job stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The inputs' status file: opened by rank 0 without the single-fit skip
 * scan (the joint outputs are one pair, checked by the run). */
static int status_open(fit_env *e, cli_jobstat *js, char **files, int n)
{
    rvfit_config *c = malloc(sizeof *c);
    if (!c)
        return -1;
    *c = e->cfg;
    c->skip_existing = 0;
    int rc = cli_jobstat_open(js, c, &e->host, files, (size_t)n);
    free(c);
    if (rc)
        return rc;
    char where[64];
    int nr = e->mpi ? e->host.nranks : 1;
    snprintf(where, sizeof where, nr > 1 ? "joint job, ranks 0-%d"
                                         : "joint job", nr - 1);
    for (int i = 0; i < n; i++)
        cli_jobstat_running(js, (size_t)i, where);
    return 0;
}

static void status_close(cli_jobstat *js, const rvfit_joint_report *rep,
                         int rc, const char *why)
{
    char d[sizeof rep->output + 64];
    for (size_t i = 0; i < js->n; i++) {
        if (rc)
            continue; /* the stop below says why */
        if (rep->kept || rep->usable[i])
            snprintf(d, sizeof d, "%s%s", rep->kept ? "kept existing " : "",
                     rep->output);
        else
            snprintf(d, sizeof d, "could not be read (see the log)");
        cli_jobstat_settle(js, i, rep->kept || rep->usable[i]
                                      ? CLI_JS_DONE : CLI_JS_FAILED, d);
    }
    if (rc)
        cli_jobstat_stop(js, why);
    cli_jobstat_close(js);
}

/* This rank's part, then (every rank agreeing it went through) the
 * join by rank 0.  Returns the status of the job (the same on every
 * rank). */
static int run_parts(fit_env *e, rvfit_run *run, char **files, int nfiles,
                     rvfit_joint_report *rep, rvfit_err *err)
{
    int rank = cli_mpi_rank(e->mpi), nr = e->mpi ? e->host.nranks : 1;
    int rc = rvfit_run_joint(run, files, (size_t)nfiles, rank, nr, rep,
                             err);
    if (!e->mpi)
        return rc;
    if (rc)
        cli_run_stopped(e, run, rc, err->msg);
    int any = cli_mpi_exit_code(e->mpi, rc != 0);
    int kept = cli_mpi_bcast_int(e->mpi, rep->kept);
    if (any) {
        if (!rc)
            rc = rvfit_err_set(err, RVFIT_ERR_IO, "another rank's part "
                               "failed (see its messages)");
        return rc;
    }
    if (rank == 0 && !kept && nr > 1) {
        char mod[sizeof rep->output];
        rc = rvfit_run_joint_merge(&e->cfg, nr, err);
        rvfit_output_names(e->cfg.output_dir, e->cfg.joint_name,
                           rep->output, mod, sizeof rep->output);
    }
    rc = cli_mpi_bcast_int(e->mpi, rc);
    if (rc && rank != 0)
        rvfit_err_set(err, rc, "rank 0 could not join the parts");
    return rc;
}

int cli_fit_joint(fit_env *e, rvfit_run *run, char **files, int nfiles,
                  cli_fit_summary *sum)
{
    rvfit_err err;
    rvfit_err_clear(&err);
    cli_jobstat js;
    int rank0 = cli_mpi_rank(e->mpi) == 0, have_js = 0;
    rvfit_joint_report *rep = calloc(1, sizeof *rep);
    int *usable = calloc((size_t)nfiles, sizeof *usable);
    if (!rep || !usable) {
        free(rep), free(usable);
        return -1;
    }
    rep->usable = usable;
    if (rank0 && status_open(e, &js, files, nfiles) == 0)
        have_js = 1;
    double t0 = rvfit_now();
    int rc = run_parts(e, run, files, nfiles, rep, &err);
    double wall = rvfit_now() - t0;
    char why[sizeof err.msg + 32];
    if (rc == RVFIT_ERR_CANCELLED && e->cancel && *e->cancel)
        snprintf(why, sizeof why, "interrupted by %s",
                 cli_signal_name(*e->cancel));
    else
        snprintf(why, sizeof why, "the joint job stopped: %s", err.msg);
    if (rc && !e->mpi)
        cli_run_stopped(e, run, rc, err.msg);
    if (!rep->kept)
        cli_print_profile(&e->host, run, wall);
    if (have_js)
        status_close(&js, rep, rc, why);
    if (rep->nfailed)
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit", "%zu of %d input "
                  "files could not be read (left out of the joint fit)",
                  rep->nfailed, nfiles);
    if (sum) {
        rvfit_counters c;
        e->be.ops->counters(e->be.state, &c);
        *sum = (cli_fit_summary){wall, c.points, run->nspectra, ""};
        snprintf(sum->device, sizeof sum->device, "%s",
                 e->be.ops->device(e->be.state));
    }
    int out = rc ? (rc == RVFIT_ERR_CONFIG ? -2 : (int)rep->nfailed + 1)
                 : (int)rep->nfailed;
    free(rep), free(usable);
    return out;
}
