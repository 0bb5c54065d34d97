/* main.c — `rvfit COMMAND ...` dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "rvfit %s — radial velocities and stellar parameters of survey "
            "spectra\n\n"
            "usage: rvfit COMMAND [options]\n\n"
            "commands:\n"
            "  fit        fit input files: rvfit fit [-c CONFIG] --templates "
            "DIR --output-dir DIR FILE...\n"
            "  templates  build a template library from a PHOENIX-layout "
            "grid\n"
            "  mock       write a synthetic grid (PHOENIX layout) or "
            "synthetic spectra\n"
            "  compare    fit with several backends and compare the results\n"
            "  plot       figures of fitted files from their outputs, without "
            "fitting\n"
            "  plugins    list plugins found, their versions, and load "
            "failures\n"
            "  config     print the configuration keys with defaults\n\n"
            "Many processes: `mpirun -n N rvfit fit ...` is one job: rank 0 "
            "hands out\nthe files, each rank fits with its share of its "
            "node's cores (-j to set);\n`--status FILE` keeps the job's "
            "status file, a line per input (pending,\nrunning, done, failed, "
            "skipped, interrupted); after a crash rerun with\n"
            "--skip-existing.  `rvfit --version`: the program, the plugin ABI "
            "and the\nplugins found.\n\n"
            "`rvfit COMMAND --help` describes a command's options.\n",
            RVFIT_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        return cli_print_version();
    }
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        {"fit", cmd_fit},         {"templates", cmd_templates},
        {"mock", cmd_mock},       {"plugins", cmd_plugins},
        {"config", cmd_config},   {"compare", cmd_compare},
        {"plot", cmd_plot}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmd, cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "rvfit: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
