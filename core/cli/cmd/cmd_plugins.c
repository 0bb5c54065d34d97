/* cmd_plugins.c — `rvfit plugins`: what is on the search path, what loads,
 * which backends have a device, and why the others fail. */
#include <dirent.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "rvfit/loader.h"

/* Backends that declare a `list` key enumerate their platforms/devices
 * (logged) when opened with list = 1, then report "listing only". */
static void list_devices(rvfit_config *cfg, const rvfit_host *host,
                         const char *name, const char *const *keys)
{
    int has_list = 0;
    for (int i = 0; keys && keys[i]; i++)
        has_list |= !strcmp(keys[i], "list");
    if (!has_list)
        return;
    char section[300];
    rvfit_err err;
    snprintf(section, sizeof section, "backend.%s", name);
    if (rvfit_config_set(cfg, section, "list", "1", "rvfit plugins", 0,
                         &err) != RVFIT_OK)
        return;
    rvfit_backend be;
    int stage = 0;
    fflush(stdout);
    if (rvfit_backend_open_name(cfg, host, name, &be, &stage, &err) ==
        RVFIT_OK)
        rvfit_backend_close(&be);
    fflush(stderr);
}

static void probe_backend(const rvfit_config *cfg, const rvfit_host *host,
                          const char *name)
{
    rvfit_backend be;
    rvfit_err err;
    rvfit_err_clear(&err);
    int stage = 0;
    int rc = rvfit_backend_open_name(cfg, host, name, &be, &stage, &err);
    if (rc == RVFIT_OK) {
        printf("    status: available, device %s\n", be.ops->device(be.state));
        rvfit_backend_close(&be);
    } else if (rc == RVFIT_ERR_UNAVAILABLE) {
        printf("    status: unavailable: %s\n", err.msg);
    } else {
        printf("    status: broken (%s stage): %s\n", rvfit_stage_name(stage),
               err.msg);
    }
}

static int list_dir(const char *dir, rvfit_config *cfg,
                    const rvfit_host *host, int *seen, int devices)
{
    DIR *d = opendir(dir);
    if (!d) {
        printf("  %s: (not present)\n", dir);
        return 0;
    }
    printf("  %s:\n", dir);
    struct dirent *e;
    int failures = 0;
    while ((e = readdir(d))) {
        int kind;
        char name[256], path[RVFIT_PATH_LEN + 512];
        if (!cli_plugin_file(e->d_name, &kind, name, sizeof name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rvfit_plugin_handle h;
        rvfit_err err;
        rvfit_err_clear(&err);
        int stage = 0;
        (*seen)++;
        if (rvfit_plugin_load_file(path, kind, name, &h, &stage, &err)) {
            printf("    %-10s %-12s FAILED at %s: %s\n", rvfit_kind_name(kind),
                   name, rvfit_stage_name(stage), err.msg);
            failures++;
            continue;
        }
        printf("    %-10s %-12s %-8s %s\n", rvfit_kind_name(kind), name,
               h.desc->version, h.desc->description);
        fflush(stdout); /* keep plugin log lines (stderr) in order */
        const char *const *keys = h.desc->config_keys;
        if (kind == RVFIT_PLUGIN_BACKEND) {
            probe_backend(cfg, host, name);
            if (devices)
                list_devices(cfg, host, name, keys);
        }
        rvfit_plugin_unload(&h);
    }
    closedir(d);
    return failures;
}

int cmd_plugins(int argc, char **argv)
{
    const char *config = NULL;
    int devices = 0;
    static const struct option opts[] = {
        {"config", 1, 0, 'c'}, {"devices", 0, 0, 'd'}, {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:dh", opts, NULL)) != -1) {
        if (c == 'c') {
            config = optarg;
        } else if (c == 'd') {
            devices = 1;
        } else {
            printf("usage: rvfit plugins [-c CONFIG] [--devices]\n"
                   "  --devices  also list every platform/device of the "
                   "backends that can enumerate them\n"
                   "Lists plugins on the search path ([run] plugin_path, "
                   "RVFIT_PLUGIN_PATH, and this rvfit's own plugin "
                   "directory),\n"
                   "their versions, whether each backend has a device, and "
                   "why any plugin fails to load.\n");
            return c == 'h' ? 0 : 2;
        }
    }
    rvfit_config cfg;
    if (cli_config(&cfg, config, NULL))
        return 2;
    cli_log lg;
    rvfit_host host;
    /* Plugin chatter (e.g. device lists) at info level is wanted here. */
    cli_host_init(&host, &lg, (int)cfg.log_level, cli_threads(&cfg));
    char **dirs = rvfit_plugin_dirs(&cfg);
    printf("rvfit %s plugin ABI %d.%d\nsearch path:\n", RVFIT_VERSION,
           RVFIT_ABI_MAJOR, RVFIT_ABI_MINOR);
    int seen = 0, failures = 0;
    for (int i = 0; dirs && dirs[i]; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= !strcmp(dirs[i], dirs[j]);
        if (!dup)
            failures += list_dir(dirs[i], &cfg, &host, &seen, devices);
    }
    if (!seen)
        printf("no plugins found; set [run] plugin_path or "
               "RVFIT_PLUGIN_PATH\n");
    rvfit_plugin_dirs_free(dirs);
    rvfit_config_free(&cfg);
    return failures ? 1 : 0;
}

/* `rvfit --version`: the program, the plugin ABI its libraries carry, and
 * each plugin on the search path with its own version and the ABI it was
 * built for (the one that must match); no device is probed. */
int cli_print_version(void)
{
    rvfit_config cfg;
    rvfit_config_defaults(&cfg);
    printf("rvfit %s\n"
           "plugin ABI %d.%d (librvfit.so.%d, librvfit_sdk.so.%d, "
           "librvfit_tools.so.%d); backend operations %d.%d, instrument "
           "operations %d.%d\n"
           "plugins (each has its own version; a plugin loads when it was "
           "built for ABI %d.0-%d.%d):\n",
           RVFIT_VERSION, RVFIT_ABI_MAJOR, RVFIT_ABI_MINOR, RVFIT_ABI_MAJOR,
           RVFIT_ABI_MAJOR, RVFIT_ABI_MAJOR, RVFIT_BACKEND_OPS_MAJOR,
           RVFIT_BACKEND_OPS_MINOR, RVFIT_INSTRUMENT_OPS_MAJOR,
           RVFIT_INSTRUMENT_OPS_MINOR, RVFIT_ABI_MAJOR, RVFIT_ABI_MAJOR,
           RVFIT_ABI_MINOR);
    char **dirs = rvfit_plugin_dirs(&cfg);
    char seen[64][80];
    int nseen = 0, n = 0;
    for (int i = 0; dirs && dirs[i]; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            int kind;
            char name[64], path[RVFIT_PATH_LEN + 512], key[80];
            if (!cli_plugin_file(e->d_name, &kind, name, sizeof name))
                continue;
            snprintf(key, sizeof key, "%d %s", kind, name);
            int dup = 0;
            for (int k = 0; k < nseen; k++)
                dup |= !strcmp(seen[k], key);
            if (dup)
                continue; /* an earlier directory's is the one used */
            if (nseen < 64)
                snprintf(seen[nseen++], sizeof seen[0], "%s", key);
            snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
            rvfit_plugin_handle h;
            rvfit_err err;
            int stage = 0;
            n++;
            if (rvfit_plugin_load_file(path, kind, name, &h, &stage, &err)) {
                printf("  %-10s %-10s does not load (%s stage): %s\n",
                       rvfit_kind_name(kind), name, rvfit_stage_name(stage),
                       err.msg);
                continue;
            }
            printf("  %-10s %-10s %-8s ABI %d.%d  %s\n",
                   rvfit_kind_name(kind), name, h.desc->version,
                   (int)h.desc->abi_major, (int)h.desc->abi_minor, path);
            rvfit_plugin_unload(&h);
        }
        if (d)
            closedir(d);
    }
    if (!n)
        printf("  none found (set [run] plugin_path or RVFIT_PLUGIN_PATH)\n");
    rvfit_plugin_dirs_free(dirs);
    rvfit_config_free(&cfg);
    return 0;
}
