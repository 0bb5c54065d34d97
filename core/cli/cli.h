/* cli.h — shared pieces of the rvfit command-line tool. */
#ifndef RVFIT_CLI_H
#define RVFIT_CLI_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "rvfit/config.h"
#include "rvfit/host.h"
#include "rvfit/loader.h"
#include "rvfit/run.h"
#include "rvfit/output.h"

/* Logging context behind the host: one mutex so that plugin threads do
 * not interleave lines, and the progress line is cleared first. */
typedef struct cli_log {
    pthread_mutex_t lock;
    double t0;
    int progress_shown;
    int rank;          /* MPI rank named in every line, -1: none */
} cli_log;

void cli_host_init(rvfit_host *h, cli_log *lg, int level, int nthreads);
void cli_progress(void *ctx, size_t spectra, double seconds);

/* Parse "error|warn|info|debug|0..3". Returns -1 if invalid. */
int cli_log_level(const char *s);

/* Command-line overrides collected during option parsing, applied after
 * the config file so they win.  Each remembers the option that set it
 * (`cur` when it was added), so that an error names the option. */
typedef struct cli_overrides {
    int n;
    char cur[64];
    struct { char section[96], key[64], value[4096], opt[64]; } kv[64];
} cli_overrides;

struct option;
/* Record the option getopt_long just returned (c, and li the index of the
 * long option or -1) as the one whose overrides follow; resets *li. */
void cli_opt_seen(cli_overrides *o, const struct option *opts, int *li,
                  int c);

int cli_override(cli_overrides *o, const char *section, const char *key,
                 const char *value);
/* "--set section.key=value" (section may contain a dot: backend.opencl). */
int cli_override_set(cli_overrides *o, const char *spec);
/* Defaults, then the file (if any), then the overrides. Prints errors. */
int cli_config(rvfit_config *c, const char *file, const cli_overrides *o);
int cli_threads(const rvfit_config *c);
/* A plugin's file name rvfit_<kind>_<name>.so -> kind, name (n bytes);
 * 0 when the name is not a plugin's. */
int cli_plugin_file(const char *file, int *kind, char *name, size_t n);

/* The whole command line as one string (for output headers). */
void cli_cmdline(int argc, char **argv, char *buf, size_t n);

/* Everything a fit needs, opened in order and closed in reverse. */
struct cli_mpi;

/* ---- the output directory's lock (cli_lock.c) ---------------------- */
typedef struct cli_dirlock {
    int fd;              /* -1: not held */
    char path[4200];
} cli_dirlock;

/* Lock DIR/.rvfit.lock for this process, or fail naming the run that
 * holds it (PID, host, start).  Where the file system cannot lock, warn
 * through h and go on unlocked (l->fd == -1). */
int cli_dirlock_take(cli_dirlock *l, const char *dir, const rvfit_host *h,
                     rvfit_err *err);
/* Remove the lock file and drop the lock; nothing when not held. */
void cli_dirlock_release(cli_dirlock *l);
/* RVFIT_ERR_CONFIG naming both when two of the files would write the same
 * output in dir (the same file twice, or the same name in two folders). */
int cli_check_output_names(char **files, int nfiles, const char *dir,
                           rvfit_err *err);

typedef struct fit_env {
    struct cli_mpi *mpi;   /* the MPI job this process is part of, or NULL */
    cli_dirlock lock;      /* the output directory's (held when have_lock) */
    int have_lock;
    const volatile int *cancel; /* set by SIGINT/SIGTERM (may be NULL)  */
    rvfit_config cfg;
    cli_log lg;
    rvfit_host host;
    rvfit_library lib;
    rvfit_interpolator interp; /* refers to lib */
    int have_lib;
    rvfit_backend be;
    int have_be;
    rvfit_plugin_handle inst;
    int have_inst;
    int64_t *plot_ids;     /* --plot-targetid (owned by the command)     */
    size_t nplot_ids;
} fit_env;

typedef struct cli_fit_summary {
    double wall;
    uint64_t points;
    size_t spectra;
    char device[256];
} cli_fit_summary;

int cli_open_env(fit_env *e, rvfit_err *err);
void cli_close_env(fit_env *e);
/* Open library, instrument and backend from e->cfg, fit the files, close.
 * Returns the number of files that failed, -1 when setup failed. */
int cli_fit_files(fit_env *e, char **files, int nfiles, const char *cmdline,
                  const int64_t *ids, size_t nids, cli_fit_summary *sum);
int cli_parse_targetids(const char *spec, int64_t **ids, size_t *n);
void cli_print_profile(const rvfit_host *h, const rvfit_run *r, double wall);
/* Log why a run stopped (rc, why: its status and message): for a signal,
 * which one and how many files were completed. */
void cli_run_stopped(const fit_env *e, const rvfit_run *run, int rc,
                     const char *why);
/* Set a status-file line, logging (not failing) when it cannot be written. */
void cli_status_set(rvfit_statusfile *sf, const rvfit_host *h, size_t input,
                    const char *state, const char *detail);

/* ---- MPI (cli_mpi.c) ---------------------------------------------------
 * Under mpirun every rank runs `rvfit fit` on the same files: rank 0 hands
 * out files (and parts of large files) from a queue and writes the status
 * file; every rank fits what it gets with its own backend.  Without MPI
 * support these report that MPI is unavailable. */
/* Join the MPI job when launched by an MPI launcher; *m = NULL otherwise.
 * Returns 0, or 2 (message printed) when launched under mpirun but built
 * without MPI. */
int cli_mpi_init(int *argc, char ***argv, struct cli_mpi **m);
void cli_mpi_finalize(struct cli_mpi *m);
/* Rank, ranks, node-local rank and ranks on the node into the host. */
void cli_mpi_host(const struct cli_mpi *m, rvfit_host *h, cli_log *lg);
/* The job over files; returns the job's failed inputs (same on every
 * rank), -1 when this rank could not take part. */
int cli_mpi_fit(fit_env *e, rvfit_run *run, char **files, int nfiles);
/* This process's rank (0 without MPI). */
int cli_mpi_rank(const struct cli_mpi *m);
/* Rank 0's v on every rank (v itself without MPI); collective. */
int cli_mpi_bcast_int(const struct cli_mpi *m, int v);
/* Agree on the exit status of the job: the largest of every rank's. */
int cli_mpi_exit_code(const struct cli_mpi *m, int code);

/* ---- signals (cli_signal.c) -------------------------------------------
 * SIGINT/SIGTERM/SIGHUP blocked in every thread and taken by one thread
 * with sigwait; the first sets `caught` (the run's cancel flag), a second
 * exits at once.  Start before any other thread. */
typedef struct cli_signals {
    volatile int caught; /* the first signal's number, 0: none          */
    sigset_t set, old;
    pthread_t th;
    int started;
} cli_signals;

int cli_signals_start(cli_signals *s);
void cli_signals_stop(cli_signals *s);
/* "SIGINT", "SIGTERM", "SIGHUP". */
const char *cli_signal_name(int sig);

int cmd_fit(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_templates(int argc, char **argv);
int cmd_mock(int argc, char **argv);
int cmd_plugins(int argc, char **argv);
int cmd_config(int argc, char **argv);
/* `rvfit config --markdown`: docs/configuration.md, with the plugins of
 * dirs (NULL-terminated; the first of each kind and name, as the loader
 * picks).  Returns 0, or 1 when a plugin does not load (nothing printed). */
int cli_config_markdown(char *const *dirs);
int cmd_compare_truth(const char *rvtab, const char *truth, int nshow);

#endif
