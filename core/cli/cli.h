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
/* --log-level ARG as [run] log_level; 1 (message printed) when ARG is
 * not a level. */
int cli_override_log_level(cli_overrides *o, const char *arg);
/* "--set section.key=value" (section may contain a dot: backend.opencl). */
int cli_override_set(cli_overrides *o, const char *spec);
/* Defaults, then the file (if any), then the overrides. Prints errors. */
int cli_config(rvfit_config *c, const char *file, const cli_overrides *o);
int cli_threads(const rvfit_config *c);
/* h->nthreads for `rvfit fit`, logged with why: [run] threads when set,
 * else this process's share of the node's cores (all of them without MPI;
 * under mpirun divided among the node's ranks, h->local_size). */
void cli_threads_rank(const rvfit_config *c, rvfit_host *h);
/* A plugin's file name rvfit_<kind>_<name>.so -> kind, name (n bytes);
 * 0 when the name is not a plugin's. */
int cli_plugin_file(const char *file, int *kind, char *name, size_t n);

/* The whole command line as one string (for output headers). */
void cli_cmdline(int argc, char **argv, char *buf, size_t n);

/* Everything a fit needs, opened in order and closed in reverse. */
struct cli_mpi;
struct cli_signals;

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
    struct cli_signals *sig; /* the signal thread (hooks), or NULL      */
    rvfit_config cfg;
    cli_log lg;
    rvfit_host host;
    rvfit_library lib;
    rvfit_interpolator interp; /* refers to lib */
    int have_lib;
    rvfit_backend be;
    int have_be;
    /* [run] streams: more instances of be's plugin, for the run */
    rvfit_backend more_be[3];
    rvfit_backend *more_ptr[3];
    int nmore_be;
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
 * Returns the number of files that failed, -1 when setup failed, -2 when
 * it failed on the configuration (exit status 2, as for bad options). */
int cli_fit_files(fit_env *e, char **files, int nfiles, const char *cmdline,
                  const int64_t *ids, size_t nids, cli_fit_summary *sum);
int cli_parse_targetids(const char *spec, int64_t **ids, size_t *n);
/* [fit] epochs = joint (cli_joint.c): the files as one joint job, under
 * mpirun each rank its part; returns as cli_fit_files. */
int cli_fit_joint(fit_env *e, rvfit_run *run, char **files, int nfiles,
                  cli_fit_summary *sum);
void cli_print_profile(const rvfit_host *h, const rvfit_run *r, double wall);
/* Log why a run stopped (rc, why: its status and message): for a signal,
 * which one and how many files were completed. */
void cli_run_stopped(const fit_env *e, const rvfit_run *run, int rc,
                     const char *why);

/* ---- a job's inputs and the status file (cli_status.c) ----------------
 * Kept by the process that coordinates the job (the single process, or
 * MPI rank 0).  Every change is written at once (rvfit_statusfile: the
 * whole file replaced), so that a job killed at any moment leaves a file
 * that lists no completed output as pending: an input is `running` on
 * disk before any process works on it. */
enum { CLI_JS_PENDING, CLI_JS_RUNNING, CLI_JS_DONE, CLI_JS_FAILED,
       CLI_JS_SKIPPED, CLI_JS_INTERRUPTED };

typedef struct cli_jobstat {
    size_t n, nkept;
    unsigned char *st;     /* [n] CLI_JS_*                                */
    char (*where)[64];     /* [n] where it runs ("rank 1", "ranks 0, 1") */
    rvfit_statusfile *sf;  /* NULL: no status file configured             */
    const rvfit_host *host;
    pthread_mutex_t mu;    /* every call below but _open and _close holds
                              it: a signal's stop may come from any thread */
} cli_jobstat;

/* Every input pending, except, with [output] skip_existing, those whose
 * rvtab exists: done ("kept existing OUT", logged; nkept counts them).
 * The status file ([output] status) is written once before returning.
 * Returns 0, or -1 (logged). */
int cli_jobstat_open(cli_jobstat *js, const rvfit_config *cfg,
                     const rvfit_host *h, char **files, size_t n);
/* CLI_JS_* of input i (thread-safe, as the calls below but _close). */
int cli_jobstat_state(cli_jobstat *js, size_t i);
/* Input i is handed to `where` ("rank 1"; "ranks 0, 1" for a file whose
 * parts several ranks fit); written before it runs.  No change once it is
 * settled. */
void cli_jobstat_running(cli_jobstat *js, size_t i, const char *where);
/* The outcome of input i: CLI_JS_DONE (detail: the output), _FAILED (the
 * reason) or _INTERRUPTED.  A settled input keeps its state, except that
 * an interrupted one may still become done. */
void cli_jobstat_settle(cli_jobstat *js, size_t i, int state,
                        const char *detail);
/* The job stops: running inputs become interrupted (why), pending ones
 * skipped ("not reached: why"); written at once. */
void cli_jobstat_stop(cli_jobstat *js, const char *why);
/* The end of the job: what is left is settled as by _stop, the file is
 * written and closed.  Returns the inputs not done. */
size_t cli_jobstat_close(cli_jobstat *js);

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
    pthread_mutex_t hook_mu;
    void (*hook)(void *ctx, int sig); /* called at the first signal      */
    void *hook_ctx;
} cli_signals;

int cli_signals_start(cli_signals *s);
void cli_signals_stop(cli_signals *s);
/* fn(ctx, sig) is called from the signal thread at the first signal (at
 * once, when one was caught already), until replaced; NULL removes it.
 * It must not block: it runs while the rest of the process goes on. */
void cli_signals_hook(cli_signals *s, void (*fn)(void *ctx, int sig),
                      void *ctx);
/* "SIGINT", "SIGTERM", "SIGHUP". */
const char *cli_signal_name(int sig);

int cmd_fit(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_templates(int argc, char **argv);
int cmd_mock(int argc, char **argv);
int cmd_plugins(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_plot(int argc, char **argv);
/* `rvfit --version` (cmd_plugins.c): program, ABI, each plugin. */
int cli_print_version(void);
/* `rvfit config --markdown`: docs/configuration.md, with the plugins of
 * dirs (NULL-terminated; the first of each kind and name, as the loader
 * picks).  Returns 0, or 1 when a plugin does not load (nothing printed). */
int cli_config_markdown(char *const *dirs);
int cmd_compare_truth(const char *rvtab, const char *truth, int nshow);

#endif
