/* cli_report.c — what a run reports to the person running it, one
 * implementation for the single-process and the MPI paths: the per-stage
 * profile and the backend line, and why a run stopped. */
#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>

#include "cli.h"

/* Backend handle k of the run's fit streams (0: r->be). */
static const rvfit_backend *handle(const rvfit_run *r, size_t k)
{
    return k ? r->more_be[k - 1] : r->be;
}

/* The handles' counters added into *c, and a line each when the run has
 * several fit streams. */
static void instances(const rvfit_host *h, const rvfit_run *r,
                      rvfit_counters *c)
{
    *c = (rvfit_counters){0};
    for (size_t k = 0; k <= r->nmore_be; k++) {
        const rvfit_backend *b = handle(r, k);
        rvfit_counters ck;
        b->ops->counters(b->state, &ck);
        if (r->nmore_be)
            rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
                      "fit stream %zu: backend %s on %s evaluated %" PRIu64
                      " points in %" PRIu64 " calls (%.3f s)", k + 1,
                      b->name, b->ops->device(b->state), ck.points,
                      ck.calls, ck.seconds);
        c->points += ck.points, c->calls += ck.calls;
        c->seconds += ck.seconds;
    }
}

void cli_print_profile(const rvfit_host *h, const rvfit_run *r, double wall)
{
    rvfit_counters c;
    instances(h, r, &c);
    rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
              "profile: %zu spectra in %zu files, %.2f s, %.2f spectra/s",
              r->nspectra, r->nfiles, wall,
              wall > 0 ? (double)r->nspectra / wall : 0.0);
    for (int s = 0; s < RVFIT_NSTAGE; s++)
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
                  "profile: %-12s %9.3f s %12" PRIu64 " points %8" PRIu64
                  " calls",
                  rvfit_stage_label(s), r->prof.seconds[s],
                  r->prof.points[s], r->prof.calls[s]);
    rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
              "backend %s on %s evaluated %" PRIu64 " points in %" PRIu64
              " calls (%.3f s inside the backend, fitting %.3f s of %.3f)",
              r->be->name, r->be->ops->device(r->be->state), c.points,
              c.calls, c.seconds, r->busy, wall);
    /* What a GPU run is judged by: how much of the wall time the device
     * worked, and the host's own time per spectrum while it waited
     * (fitting less the backend's evaluation calls): the fit driver, the
     * backend's load_batch (a copy into its own memory), and the rest
     * (results' memory, figures' models). */
    double host = r->busy > c.seconds ? r->busy - c.seconds : 0.0;
    double ms = r->nspectra ? 1e3 / (double)r->nspectra : 0.0;
    double rest = host - r->driver - r->loading;
    /* with several fit streams both are sums over their instances */
    char over[48] = "";
    if (r->nmore_be)
        snprintf(over, sizeof over, " (%zu fit streams added)",
                 r->nmore_be + 1);
    rvfit_log(h, RVFIT_LOG_INFO, "rvfit",
              "profile: backend busy %.1f %% of the wall time%s; host work "
              "between backend calls %.3f ms per spectrum: fit driver "
              "%.3f, load_batch %.3f, other %.3f",
              wall > 0 ? 100.0 * c.seconds / wall : 0.0, over, host * ms,
              r->driver * ms, r->loading * ms, (rest > 0 ? rest : 0.0) * ms);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit", "peak RSS %.1f MiB",
                  (double)ru.ru_maxrss / 1024.0);
}

void cli_run_stopped(const fit_env *e, const rvfit_run *run, int rc,
                     const char *why)
{
    if (rc == RVFIT_ERR_CANCELLED && e->cancel && *e->cancel && e->mpi)
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit", "interrupted by %s; "
                  "this rank completed %zu units (files or parts of "
                  "files), partial outputs removed (the status file has "
                  "the job's files)", cli_signal_name(*e->cancel),
                  run->nfiles);
    else if (rc == RVFIT_ERR_CANCELLED && e->cancel && *e->cancel)
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit", "interrupted by %s; "
                  "%zu file%s complete, partial outputs removed",
                  cli_signal_name(*e->cancel), run->nfiles,
                  run->nfiles == 1 ? "" : "s");
    else
        rvfit_log(&e->host, RVFIT_LOG_ERROR, "rvfit", "run stopped: %s",
                  why);
}
