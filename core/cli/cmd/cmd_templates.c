/* cmd_templates.c — `rvfit templates`: build a template library for an
 * instrument from a grid in PHOENIX layout. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "rvfit/library_io.h"
#include "rvfit/loader.h"
#include "rvfit/templates.h"

static void help(void)
{
    printf("usage: rvfit templates --grid DIR --out DIR [options]\n"
           "  -g, --grid DIR         PHOENIX-layout grid (the HiResFITS "
           "directory)\n"
           "  -o, --out DIR          library directory to write\n"
           "  -i, --instrument NAME  instrument whose arms to build "
           "(default desi)\n"
           "      --sigma0 A         Gaussian pre-smoothing, Angstrom "
           "(default 0.4), of\n"
           "                         the arms the instrument does not "
           "smooth in velocity\n"
           "      --vmax KMS         velocity padding of each arm (default "
           "1000)\n"
           "  -j, --threads N        worker threads (0 = all cores)\n"
           "  -c, --config FILE      configuration ([instrument.NAME] "
           "options; [templates] interpolator, cubic, log_flux, "
           "pca_components, pca_rms: the interpolator recorded in the "
           "library; fill_holes)\n");
}

/* How each arm's templates are smoothed, for the log: "B, R, Z 0.4 A" or
 * "BOSS 45 km/s": an instrument's sigma_kms replaces --sigma0 for its arm
 * (rvfit_template_arm).  Returns the number of arms smoothed in velocity. */
static int smoothing(const rvfit_template_arm *arms, int narm, double sigma0,
                     char *buf, size_t n)
{
    size_t len = 0;
    int nkms = 0;
    buf[0] = '\0';
    for (int a = 0; a < narm && len < n; a++) {
        double kms = arms[a].sigma_kms;
        nkms += kms > 0;
        int same_next = a + 1 < narm &&
                        (arms[a + 1].sigma_kms > 0) == (kms > 0) &&
                        (kms <= 0 || arms[a + 1].sigma_kms == kms);
        int k = same_next
                    ? snprintf(buf + len, n - len, "%s, ", arms[a].name)
                : kms > 0
                    ? snprintf(buf + len, n - len, "%s %.3g km/s%s",
                               arms[a].name, kms, a + 1 < narm ? "; " : "")
                    : snprintf(buf + len, n - len, "%s %.3g A%s",
                               arms[a].name, sigma0, a + 1 < narm ? "; " : "");
        len += k > 0 ? (size_t)k : 0;
    }
    return nkms;
}

int cmd_templates(int argc, char **argv)
{
    static const struct option opts[] = {
        {"grid", 1, 0, 'g'},   {"out", 1, 0, 'o'},    {"instrument", 1, 0, 'i'},
        {"sigma0", 1, 0, 1},   {"vmax", 1, 0, 2},     {"threads", 1, 0, 'j'},
        {"config", 1, 0, 'c'}, {"help", 0, 0, 'h'},   {0, 0, 0, 0}};
    const char *grid = NULL, *out = NULL, *config = NULL;
    cli_overrides ov;
    memset(&ov, 0, sizeof ov);
    rvfit_templates_opts to = {.sigma0 = 0.4, .vmax = 1000.0, .nthreads = 1};
    int c, sigma0_given = 0;
    optind = 1;
    int li = -1;
    while ((c = getopt_long(argc, argv, "g:o:i:j:c:h", opts, &li)) != -1) {
        cli_opt_seen(&ov, opts, &li, c);
        switch (c) {
        case 'g': grid = optarg; break;
        case 'o': out = optarg; break;
        case 'i': cli_override(&ov, "instrument", "name", optarg); break;
        case 'j': cli_override(&ov, "run", "threads", optarg); break;
        case 'c': config = optarg; break;
        case 1: to.sigma0 = atof(optarg), sigma0_given = 1; break;
        case 2: to.vmax = atof(optarg); break;
        case 'h': help(); return 0;
        default: help(); return 2;
        }
    }
    if (!grid || !out || !(to.sigma0 >= 0) || !(to.vmax >= 0)) {
        fprintf(stderr, "rvfit: error: templates needs --grid and --out "
                        "(sigma0, vmax >= 0)\n");
        return 2;
    }
    rvfit_config cfg;
    if (cli_config(&cfg, config, &ov))
        return 2;
    cli_log lg;
    rvfit_host host;
    cli_host_init(&host, &lg, (int)cfg.log_level, cli_threads(&cfg));
    to.nthreads = host.nthreads;
    to.interpolator = cfg.interpolator;
    to.cubic = cfg.cubic;
    to.log_flux = (int)cfg.log_flux;
    to.pca_k = (int)cfg.pca_components;
    to.pca_rms = cfg.pca_rms;
    size_t nfilled = 0, nleft = 0;
    to.fill_holes = cfg.fill_holes;
    to.simplex_correction = cfg.simplex_correction;
    to.nfilled = &nfilled;
    to.nleft = &nleft;
    rvfit_err err;
    rvfit_err_clear(&err);
    rvfit_plugin_handle inst;
    int rc = rvfit_instrument_load(&cfg, cfg.instrument, &inst, &err);
    rvfit_template_arm arms[RVFIT_MAX_ARMS];
    int narm = 0;
    if (!rc) {
        rvfit_kv *kv = NULL;
        int nkv = 0;
        char section[96];
        snprintf(section, sizeof section, "instrument.%s", cfg.instrument);
        rvfit_config_section(&cfg, section, &kv, &nkv);
        rc = inst.instrument.template_arms(kv, nkv, &narm, arms, &err);
        free(kv);
        rvfit_plugin_unload(&inst);
    }
    if (!rc) {
        char smooth[RVFIT_MAX_ARMS * 64];
        int nkms = smoothing(arms, narm, to.sigma0, smooth, sizeof smooth);
        if (sigma0_given && nkms == narm)
            rvfit_log(&host, RVFIT_LOG_WARN, "rvfit", "--sigma0 has no "
                      "effect: every arm of %s is smoothed in velocity "
                      "(sigma_kms)", cfg.instrument);
        rvfit_log(&host, RVFIT_LOG_INFO, "rvfit",
                  "building %d arms for %s from %s (smoothing %s; "
                  "padding %.0f km/s, %d threads; interpolator %s%s%s)",
                  narm, cfg.instrument, grid, smooth, to.vmax, to.nthreads,
                  cfg.interpolator, cfg.log_flux == 1 ? " in ln flux" : "",
                  cfg.cubic[0] ? ", cubic axes as given" : "");
        rc = rvfit_templates_build(grid, narm, arms, cfg.instrument, &to, out,
                                   &err);
    }
    if (!rc && rvfit_fill_parse(cfg.fill_holes) > 0)
        rvfit_log(&host, RVFIT_LOG_INFO, "rvfit", "fill_holes = %s: %zu "
                  "holes filled, %zu left (not surrounded by enough "
                  "models)", cfg.fill_holes, nfilled, nleft);
    if (rc)
        rvfit_log(&host, RVFIT_LOG_ERROR, "rvfit", "%s", err.msg);
    else
        rvfit_log(&host, RVFIT_LOG_INFO, "rvfit", "wrote %s/%s", out,
                  RVFIT_LIBRARY_FILE);
    rvfit_config_free(&cfg);
    return rc ? 1 : 0;
}
