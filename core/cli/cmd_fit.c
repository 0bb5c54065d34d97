/* cmd_fit.c — `rvfit fit`: fit input files and write rvtab/rvmod outputs. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "rvfit/run.h"
#include "rvfit/library_io.h"

static void help(void)
{
    printf(
        "usage: rvfit fit [options] FILE... (or @LIST: a file of file names)\n"
        "  -c, --config FILE      INI configuration (every key has a default)\n"
        "  -t, --templates DIR    template library directory\n"
        "  -o, --output-dir DIR   where rvtab_*.fits / rvmod_*.fits go\n"
        "  -b, --backend NAME     backend plugin or list 'cuda,opencl,cpu'\n"
        "  -i, --instrument NAME  instrument plugin (default desi)\n"
        "  -j, --threads N        worker threads (0 = all cores)\n"
        "      --minsn X          skip spectra whose best arm S/N < X\n"
        "      --targetid LIST    only these TARGETIDs (comma list or @file)\n"
        "      --batch-size N     spectra fitted together\n"
        "      --log-level L      error, warn, info or debug\n"
        "      --skip-existing    skip inputs whose rvtab exists\n"
        "      --overwrite        replace existing outputs\n"
        "      --no-models        do not write rvmod files\n"
        "      --set S.K=V        any config key, e.g. backend.opencl.device=1\n"
        "      --files-from FILE  read input file names from FILE\n");
}

/* Append names from a list file (one per line, # comments). */
static int read_list(const char *path, char ***files, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rvfit: error: file list %s: %s\n", path,
                strerror(errno));
        return 1;
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        char **g = realloc(*files, (size_t)(*n + 1) * sizeof *g);
        if (!g || !(g[*n] = strdup(p))) {
            fclose(f);
            return 1;
        }
        *files = g;
        (*n)++;
    }
    fclose(f);
    return 0;
}

/* A comma/blank list of TARGETIDs, or @file holding one; at least one.
 * Errors go to stderr; on failure *ids is NULL. */
int cli_parse_targetids(const char *spec, int64_t **ids, size_t *n)
{
    char *text = NULL;
    if (spec[0] == '@') {
        FILE *f = fopen(spec + 1, "r");
        if (!f) {
            fprintf(stderr, "rvfit: error: --targetid %s: %s\n", spec + 1,
                    strerror(errno));
            return 1;
        }
        size_t cap = 1 << 16, len = 0;
        text = malloc(cap);
        size_t r;
        while (text && (r = fread(text + len, 1, cap - len - 1, f)) > 0) {
            len += r;
            if (len + 1 >= cap) {
                char *g = realloc(text, cap *= 2);
                if (!g) { free(text); text = NULL; }
                else text = g;
            }
        }
        fclose(f);
        if (!text)
            return 1;
        text[len] = '\0';
    } else {
        text = strdup(spec);
    }
    *n = 0;
    *ids = NULL;
    for (char *save = NULL, *t = strtok_r(text, ", \t\r\n", &save); t;
         t = strtok_r(NULL, ", \t\r\n", &save)) {
        char *end;
        errno = 0;
        long long v = strtoll(t, &end, 10);
        if (errno || *end) {
            fprintf(stderr, "rvfit: error: --targetid: '%s' is not an "
                            "integer\n", t);
            free(text);
            free(*ids);
            *ids = NULL;
            return 1;
        }
        int64_t *g = realloc(*ids, (*n + 1) * sizeof *g);
        if (!g) {
            free(text);
            free(*ids);
            *ids = NULL;
            return 1;
        }
        *ids = g;
        (*ids)[(*n)++] = (int64_t)v;
    }
    free(text);
    /* an empty list would otherwise mean "no selection": every star */
    if (*n == 0) {
        if (spec[0] == '@')
            fprintf(stderr, "rvfit: error: --targetid %s: the file lists no "
                            "TARGETID\n", spec);
        else
            fprintf(stderr, "rvfit: error: --targetid '%s': no TARGETID "
                            "given\n", spec);
        return 1;
    }
    return 0;
}

typedef struct fit_args {
    const char *config;
    cli_overrides ov;
    char **files;
    int nfiles;
    const char *targetid;
} fit_args;

static void free_files(fit_args *a)
{
    for (int i = 0; i < a->nfiles; i++)
        free(a->files[i]);
    free(a->files);
    a->files = NULL;
    a->nfiles = 0;
}

static int parse(int argc, char **argv, fit_args *a)
{
    static const struct option opts[] = {
        {"config", 1, 0, 'c'},      {"templates", 1, 0, 't'},
        {"output-dir", 1, 0, 'o'},  {"backend", 1, 0, 'b'},
        {"instrument", 1, 0, 'i'},  {"threads", 1, 0, 'j'},
        {"minsn", 1, 0, 1},         {"targetid", 1, 0, 2},
        {"batch-size", 1, 0, 3},    {"log-level", 1, 0, 4},
        {"skip-existing", 0, 0, 5}, {"overwrite", 0, 0, 6},
        {"no-models", 0, 0, 7},     {"set", 1, 0, 8},
        {"files-from", 1, 0, 9},    {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c, bad = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:t:o:b:i:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': a->config = optarg; break;
        case 't': bad |= cli_override(&a->ov, "templates", "path", optarg); break;
        case 'o': bad |= cli_override(&a->ov, "output", "dir", optarg); break;
        case 'b': bad |= cli_override(&a->ov, "backend", "name", optarg); break;
        case 'i': bad |= cli_override(&a->ov, "instrument", "name", optarg); break;
        case 'j': bad |= cli_override(&a->ov, "run", "threads", optarg); break;
        case 1: bad |= cli_override(&a->ov, "fit", "minsn", optarg); break;
        case 2: a->targetid = optarg; break;
        case 3: bad |= cli_override(&a->ov, "run", "batch_size", optarg); break;
        case 4: {
            int l = cli_log_level(optarg);
            char v[4];
            snprintf(v, sizeof v, "%d", l);
            if (l < 0) {
                fprintf(stderr, "rvfit: error: --log-level %s: use error, "
                                "warn, info or debug\n", optarg);
                return 2;
            }
            bad |= cli_override(&a->ov, "run", "log_level", v);
            break;
        }
        case 5: bad |= cli_override(&a->ov, "output", "skip_existing", "1"); break;
        case 6: bad |= cli_override(&a->ov, "output", "overwrite", "1"); break;
        case 7: bad |= cli_override(&a->ov, "output", "models", "0"); break;
        case 8:
            if (cli_override_set(&a->ov, optarg)) {
                fprintf(stderr, "rvfit: error: --set %s: expected "
                                "SECTION.KEY=VALUE\n", optarg);
                return 2;
            }
            break;
        case 9: if (read_list(optarg, &a->files, &a->nfiles)) return 2; break;
        case 'h': help(); exit(0);
        default: help(); return 2;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (argv[i][0] == '@') {
            if (read_list(argv[i] + 1, &a->files, &a->nfiles))
                return 2;
            continue;
        }
        char **g = realloc(a->files, (size_t)(a->nfiles + 1) * sizeof *g);
        if (!g)
            return 2;
        a->files = g;
        a->files[a->nfiles++] = strdup(argv[i]);
    }
    if (bad) {
        fprintf(stderr, "rvfit: error: too many options\n");
        return 2;
    }
    return 0;
}

static int fit_main(int argc, char **argv, struct cli_mpi *mpi)
{
    fit_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    if (a.nfiles == 0) {
        fprintf(stderr, "rvfit: error: no input files (see rvfit fit "
                        "--help)\n");
        return 2;
    }
    fit_env *e = calloc(1, sizeof *e); /* large */
    if (!e || cli_config(&e->cfg, a.config, &a.ov)) {
        free_files(&a);
        free(e);
        return 2;
    }
    e->mpi = mpi;
    cli_host_init(&e->host, &e->lg, (int)e->cfg.log_level,
                  cli_threads(&e->cfg));
    cli_mpi_host(mpi, &e->host, &e->lg);
    int64_t *ids = NULL;
    size_t nids = 0;
    char cmdline[8192];
    cli_cmdline(argc, argv, cmdline, sizeof cmdline);
    if (a.targetid && cli_parse_targetids(a.targetid, &ids, &nids)) {
        free_files(&a);
        rvfit_config_free(&e->cfg);
        free(e);
        return 2;
    }
    int failed = cli_fit_files(e, a.files, a.nfiles, cmdline, ids, nids,
                               NULL);
    free_files(&a);
    free(ids);
    free(e);
    return failed ? 1 : 0;
}

int cmd_fit(int argc, char **argv)
{
    struct cli_mpi *mpi = NULL;
    int rc = cli_mpi_init(&argc, &argv, &mpi);
    if (rc)
        return rc;
    rc = cli_mpi_exit_code(mpi, fit_main(argc, argv, mpi));
    cli_mpi_finalize(mpi);
    return rc;
}
