/* cli.h — shared pieces of the rvfit command-line tool. */
#ifndef RVFIT_CLI_H
#define RVFIT_CLI_H

#include <pthread.h>
#include <stdio.h>

#include "rvfit/config.h"
#include "rvfit/host.h"
#include "rvfit/loader.h"

/* Logging context behind the host: one mutex so that plugin threads do
 * not interleave lines, and the progress line is cleared first. */
typedef struct cli_log {
    pthread_mutex_t lock;
    double t0;
    int progress_shown;
} cli_log;

void cli_host_init(rvfit_host *h, cli_log *lg, int level, int nthreads);
void cli_progress(void *ctx, const char *file, size_t done, size_t total,
                  double seconds);

/* Parse "error|warn|info|debug|0..3". Returns -1 if invalid. */
int cli_log_level(const char *s);

/* Command-line overrides collected during option parsing, applied after
 * the config file so they win. */
typedef struct cli_overrides {
    int n;
    struct { char section[96], key[64], value[4096]; } kv[64];
} cli_overrides;

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
typedef struct fit_env {
    rvfit_config cfg;
    cli_log lg;
    rvfit_host host;
    rvfit_library lib;
    int have_lib;
    rvfit_backend be;
    int have_be;
    rvfit_plugin_handle inst;
    int have_inst;
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
