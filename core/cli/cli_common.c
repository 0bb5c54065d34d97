/* cli_common.c — logging, configuration overrides and small helpers of the
 * command-line tool. */
#include <getopt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"

static void log_fn(void *ctx, int level, const char *who, const char *msg)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    cli_log *lg = ctx;
    pthread_mutex_lock(&lg->lock);
    if (lg->progress_shown) {
        fputs("\r\033[K", stderr);
        lg->progress_shown = 0;
    }
    if (lg->rank >= 0)
        fprintf(stderr, "[%8.3f] %-5s rank %d %s: %s\n", rvfit_now() - lg->t0,
                names[level & 3], lg->rank, who, msg);
    else
        fprintf(stderr, "[%8.3f] %-5s %s: %s\n", rvfit_now() - lg->t0,
                names[level & 3], who, msg);
    pthread_mutex_unlock(&lg->lock);
}

void cli_host_init(rvfit_host *h, cli_log *lg, int level, int nthreads)
{
    pthread_mutex_init(&lg->lock, NULL);
    lg->t0 = rvfit_now();
    lg->progress_shown = 0;
    lg->rank = -1;
    memset(h, 0, sizeof *h);
    h->size = sizeof *h;
    h->log_level = level;
    h->log = log_fn;
    h->log_ctx = lg;
    h->nthreads = nthreads;
    h->nranks = h->local_size = 1;
}

void cli_progress(void *ctx, size_t done, double seconds)
{
    cli_log *lg = ctx;
    if (!isatty(2) || lg->rank >= 0)
        return;
    pthread_mutex_lock(&lg->lock);
    fprintf(stderr, "\r\033[K%zu spectra fitted, %.1f spectra/s", done,
            seconds > 0 ? (double)done / seconds : 0.0);
    lg->progress_shown = 1;
    pthread_mutex_unlock(&lg->lock);
}

int cli_log_level(const char *s)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i]))
            return i;
    if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
        return s[0] - '0';
    return -1;
}

int cli_override_log_level(cli_overrides *o, const char *arg)
{
    int l = cli_log_level(arg);
    char v[16];
    if (l < 0) {
        fprintf(stderr, "rvfit: error: --log-level %s: use error, warn, "
                        "info or debug\n", arg);
        return 1;
    }
    snprintf(v, sizeof v, "%d", l);
    return cli_override(o, "run", "log_level", v);
}

int cli_override(cli_overrides *o, const char *section, const char *key,
                 const char *value)
{
    if (o->n >= 64) {
        fprintf(stderr, "rvfit: error: too many options (at most 64 "
                        "settings)\n");
        return 1;
    }
    size_t len = strlen(value), max = sizeof o->kv[0].value - 1;
    if (len > max) {
        /* Say so rather than cut a path short. */
        fprintf(stderr, "rvfit: error: [%s] %s: a value of %zu characters "
                        "is longer than the %zu allowed: %s\n", section, key,
                len, max, strerror(ENAMETOOLONG));
        return 1;
    }
    snprintf(o->kv[o->n].section, sizeof o->kv[o->n].section, "%s", section);
    snprintf(o->kv[o->n].key, sizeof o->kv[o->n].key, "%s", key);
    snprintf(o->kv[o->n].value, sizeof o->kv[o->n].value, "%s", value);
    snprintf(o->kv[o->n].opt, sizeof o->kv[o->n].opt, "%s", o->cur);
    o->n++;
    return 0;
}

void cli_opt_seen(cli_overrides *o, const struct option *opts, int *li,
                  int c)
{
    if (*li >= 0)
        snprintf(o->cur, sizeof o->cur, "--%s", opts[*li].name);
    else
        snprintf(o->cur, sizeof o->cur, "-%c", c);
    *li = -1;
}

int cli_override_set(cli_overrides *o, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return -1;
    char lhs[256];
    snprintf(lhs, sizeof lhs, "%.*s", (int)(eq - spec), spec);
    char *dot = strrchr(lhs, '.');
    if (!dot || dot == lhs)
        return -1;
    *dot = '\0';
    return cli_override(o, lhs, dot + 1, eq + 1) ? -2 : 0;
}

int cli_config(rvfit_config *c, const char *file, const cli_overrides *o)
{
    rvfit_err err;
    rvfit_err_clear(&err);
    rvfit_config_defaults(c);
    if (file && rvfit_config_load(c, file, &err) != RVFIT_OK) {
        fprintf(stderr, "rvfit: error: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; o && i < o->n; i++) {
        /* line 0: the origin alone is the place ("option --threads") */
        char origin[96];
        snprintf(origin, sizeof origin, "option %s",
                 o->kv[i].opt[0] ? o->kv[i].opt : "on the command line");
        if (rvfit_config_set(c, o->kv[i].section, o->kv[i].key,
                             o->kv[i].value, origin, 0, &err) != RVFIT_OK) {
            fprintf(stderr, "rvfit: error: %s\n", err.msg);
            return 1;
        }
    }
    return 0;
}

int cli_plugin_file(const char *file, int *kind, char *name, size_t n)
{
    size_t len = strlen(file);
    if (len < 10 || strncmp(file, "rvfit_", 6) || strcmp(file + len - 3, ".so"))
        return 0;
    const char *k = file + 6;
    if (!strncmp(k, "backend_", 8)) {
        *kind = RVFIT_PLUGIN_BACKEND;
        k += 8;
    } else if (!strncmp(k, "instrument_", 11)) {
        *kind = RVFIT_PLUGIN_INSTRUMENT;
        k += 11;
    } else {
        return 0;
    }
    snprintf(name, n, "%.*s", (int)(file + len - 3 - k), k);
    return name[0] != '\0';
}

int cli_threads(const rvfit_config *c)
{
    if (c->threads > 0)
        return (int)c->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void cli_threads_rank(const rvfit_config *c, rvfit_host *h)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cores = cores > 0 ? cores : 1;
    int ranks = h->local_size > 0 ? h->local_size : 1;
    if (c->threads > 0) {
        h->nthreads = (int)c->threads;
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit", "%d worker thread%s ([run] "
                  "threads or -j)%s", h->nthreads, h->nthreads == 1 ? "" : "s",
                  c->threads * ranks > cores ? "; more than this node's "
                  "cores, with the other ranks on it" : "");
        return;
    }
    /* the node's cores shared by its ranks, the remainder to the first */
    long share = cores / ranks + (h->local_rank < cores % ranks ? 1 : 0);
    h->nthreads = share > 0 ? (int)share : 1;
    if (ranks > 1)
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit", "%d worker thread%s: this "
                  "node's %ld cores shared by its %d ranks (set [run] "
                  "threads or -j to choose)", h->nthreads,
                  h->nthreads == 1 ? "" : "s", cores, ranks);
    else
        rvfit_log(h, RVFIT_LOG_INFO, "rvfit", "%d worker thread%s: every "
                  "core (set [run] threads or -j to choose)", h->nthreads,
                  h->nthreads == 1 ? "" : "s");
}

void cli_cmdline(int argc, char **argv, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && used + 1 < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? " " : "", argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}
