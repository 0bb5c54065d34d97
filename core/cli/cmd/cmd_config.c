/* cmd_config.c — `rvfit config`: every key with its default and meaning,
 * as an INI file a user can start from, or (--markdown) as the reference
 * document docs/configuration.md. */
#include <string.h>

#include "../cli.h"

static int usage(int rc)
{
    printf("usage: rvfit config [--defaults]\n"
           "       rvfit config --markdown [PLUGIN_DIR...]\n"
           "Prints every configuration key with its default and meaning "
           "as an INI file.\n"
           "  --markdown  the reference document docs/configuration.md: "
           "the keys, and the\n"
           "              keys of the plugins in PLUGIN_DIRs (default: the "
           "plugin search path)\n");
    return rc;
}

static int print_ini(void)
{
    const char *sec, *key, *def, *help, *cur = "";
    for (int i = 0; rvfit_config_describe(i, &sec, &key, &def, &help); i++) {
        if (strcmp(cur, sec))
            printf("%s[%s]\n", i ? "\n" : "", cur = sec);
        printf("# %s\n%s = %s\n", help, key, def);
    }
    printf("\n# Plugin options go in [backend.NAME] and [instrument.NAME];\n"
           "# `rvfit plugins` lists the plugins and docs/configuration.md "
           "their keys.\n");
    return 0;
}

int cmd_config(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--defaults"))
        return argc > 2 ? usage(2) : print_ini();
    if (strcmp(argv[1], "--markdown"))
        return usage(strcmp(argv[1], "--help") ? 2 : 0);
    if (argc > 2) /* argv[argc] is NULL */
        return cli_config_markdown(argv + 2);
    char **dirs = rvfit_plugin_dirs(NULL); /* defaults: no plugin_path */
    int rc = dirs ? cli_config_markdown(dirs) : 1;
    rvfit_plugin_dirs_free(dirs);
    return rc;
}
