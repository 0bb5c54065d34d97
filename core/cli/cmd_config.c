/* cmd_config.c — `rvfit config`: every key with its default and meaning,
 * as an INI file a user can start from. */
#include <string.h>

#include "cli.h"

int cmd_config(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--defaults")) {
        printf("usage: rvfit config [--defaults]\nPrints every "
               "configuration key with its default and meaning.\n");
        return strcmp(argv[1], "--help") ? 2 : 0;
    }
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
