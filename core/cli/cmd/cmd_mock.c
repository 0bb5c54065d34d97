/* cmd_mock.c — `rvfit mock grid` (synthetic grid in PHOENIX layout) and
 * `rvfit mock spectra` (synthetic observations plus a truth table). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "rvfit/loader.h"
#include "rvfit/synth.h"

static void help(void)
{
    printf("usage: rvfit mock grid --out DIR [--preset small|std] "
           "[--threads N]\n"
           "       rvfit mock spectra --out FILE --truth FILE [options]\n"
           "       rvfit mock compare RVTAB TRUTH [N]   recovered vs true\n"
           "  -i, --instrument NAME  file format to write (default desi)\n"
           "  -n, --nstar N          number of stars (default 200)\n"
           "      --seed S           random seed (default 1)\n"
           "      --preset NAME      parameter ranges of this grid preset "
           "(default small)\n"
           "      --vmax KMS         |RV| limit (default 500)\n"
           "      --vsini-max KMS    vsini limit (default 10)\n"
           "      --snr-min X        lowest S/N per pixel (default 3)\n"
           "      --snr-max X        highest S/N per pixel (default 60)\n"
           "  -j, --threads N        worker threads (0 = all cores)\n");
}

typedef struct mock_args {
    const char *out, *truth, *preset, *config;
    long nstar;
    unsigned long long seed;
    double vmax, vsini_max, snr_min, snr_max;
    cli_overrides ov;
} mock_args;

static int parse(int argc, char **argv, mock_args *a)
{
    static const struct option opts[] = {
        {"out", 1, 0, 'o'},      {"truth", 1, 0, 'T'},
        {"instrument", 1, 0, 'i'}, {"nstar", 1, 0, 'n'},
        {"seed", 1, 0, 1},       {"preset", 1, 0, 2},
        {"vmax", 1, 0, 3},       {"vsini-max", 1, 0, 4},
        {"snr-min", 1, 0, 5},    {"snr-max", 1, 0, 6},
        {"threads", 1, 0, 'j'},  {"config", 1, 0, 'c'},
        {"help", 0, 0, 'h'},     {0, 0, 0, 0}};
    int c;
    optind = 1;
    int li = -1;
    while ((c = getopt_long(argc, argv, "o:T:i:n:j:c:h", opts, &li)) != -1) {
        cli_opt_seen(&a->ov, opts, &li, c);
        switch (c) {
        case 'o': a->out = optarg; break;
        case 'T': a->truth = optarg; break;
        case 'i': cli_override(&a->ov, "instrument", "name", optarg); break;
        case 'n': a->nstar = atol(optarg); break;
        case 'j': cli_override(&a->ov, "run", "threads", optarg); break;
        case 'c': a->config = optarg; break;
        case 1: a->seed = strtoull(optarg, NULL, 10); break;
        case 2: a->preset = optarg; break;
        case 3: a->vmax = atof(optarg); break;
        case 4: a->vsini_max = atof(optarg); break;
        case 5: a->snr_min = atof(optarg); break;
        case 6: a->snr_max = atof(optarg); break;
        case 'h': help(); exit(0);
        default: help(); return 2;
        }
    }
    return 0;
}

static int mock_spectra(const mock_args *a, rvfit_config *cfg,
                        const rvfit_host *host, rvfit_err *err)
{
    rvfit_grid_spec spec;
    int rc = rvfit_grid_preset(a->preset, &spec, err);
    if (rc)
        return rc;
    rvfit_mock_star *stars = calloc((size_t)a->nstar, sizeof *stars);
    if (!stars)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "out of memory");
    rvfit_mock_stars(&spec, (size_t)a->nstar, a->seed, a->vmax, a->vsini_max,
                     a->snr_min, a->snr_max, stars);
    rvfit_plugin_handle inst;
    rc = rvfit_instrument_load(cfg, cfg->instrument, &inst, err);
    if (!rc) {
        rvfit_kv *kv = NULL;
        int nkv = 0;
        char section[96];
        snprintf(section, sizeof section, "instrument.%s", cfg->instrument);
        rvfit_config_section(cfg, section, &kv, &nkv);
        const rvfit_instrument_mock_ops *mk = rvfit_instrument_mock(&inst,
                                                                    err);
        rc = mk ? mk->write_mock(host, kv, nkv, a->out, (size_t)a->nstar,
                                 stars, rvfit_synth_truth, stars, a->seed,
                                 err)
                : RVFIT_ERR_UNAVAILABLE;
        free(kv);
        rvfit_plugin_unload(&inst);
    }
    if (!rc)
        rc = rvfit_truth_write(a->truth, (size_t)a->nstar, stars, err);
    if (!rc)
        rvfit_log(host, RVFIT_LOG_INFO, "rvfit",
                  "wrote %ld synthetic %s stars to %s, truth in %s",
                  a->nstar, cfg->instrument, a->out, a->truth);
    free(stars);
    return rc;
}

int cmd_mock(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "compare"))
        return cmd_compare_truth(argv[2], argv[3],
                                 argc > 4 ? atoi(argv[4]) : 10);
    if (argc < 2 || (strcmp(argv[1], "grid") && strcmp(argv[1], "spectra"))) {
        help();
        return argc >= 2 && !strcmp(argv[1], "--help") ? 0 : 2;
    }
    int grid = !strcmp(argv[1], "grid");
    mock_args a = {NULL, NULL, "small", NULL, 200, 1, 500, 10, 3, 60, {0}};
    if (parse(argc - 1, argv + 1, &a))
        return 2;
    if (!a.out || (!grid && (!a.truth || a.nstar < 1))) {
        fprintf(stderr, "rvfit: error: mock %s needs --out%s\n", argv[1],
                grid ? "" : ", --truth and --nstar >= 1");
        return 2;
    }
    rvfit_config cfg;
    if (cli_config(&cfg, a.config, &a.ov))
        return 2;
    cli_log lg;
    rvfit_host host;
    cli_host_init(&host, &lg, (int)cfg.log_level, cli_threads(&cfg));
    rvfit_err err;
    rvfit_err_clear(&err);
    int rc;
    if (grid) {
        rvfit_grid_spec spec;
        rc = rvfit_grid_preset(a.preset, &spec, &err);
        if (!rc) {
            spec.seed = a.seed;
            rc = rvfit_grid_write(a.out, &spec, host.nthreads, &err);
        }
        if (!rc)
            rvfit_log(&host, RVFIT_LOG_INFO, "rvfit",
                      "wrote the '%s' grid in PHOENIX layout under %s",
                      a.preset, a.out);
    } else {
        rc = mock_spectra(&a, &cfg, &host, &err);
    }
    if (rc)
        rvfit_log(&host, RVFIT_LOG_ERROR, "rvfit", "%s", err.msg);
    rvfit_config_free(&cfg);
    return rc ? 1 : 0;
}
