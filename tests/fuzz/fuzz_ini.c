/* fuzz_ini.c — libFuzzer target: the INI configuration loader
 * (core/engine/config/config.c over inih).  Checked: a load either succeeds
 * or fails with a message naming the file; the loaded configuration
 * dumps and every plugin section can be listed. */
#include "fuzz_util.h"
#include "rvfit/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512];
    if (fz_write("ini", "ini", data, size, path, sizeof path) != 0)
        return 0;
    rvfit_config c;
    rvfit_config_defaults(&c);
    rvfit_err err;
    rvfit_err_clear(&err);
    if (rvfit_config_load(&c, path, &err) == RVFIT_OK) {
        char dump[16384];
        size_t need = rvfit_config_dump(&c, NULL, 0);
        FZ_REQUIRE(rvfit_config_dump(&c, dump, sizeof dump) == need,
                   "dump sizes differ");
        for (int i = 0; i < c.nplug; i++) {
            rvfit_kv *kv = NULL;
            int n = 0;
            if (rvfit_config_section(&c, c.plug_section[i], &kv, &n) ==
                RVFIT_OK)
                FZ_REQUIRE(n >= 1, "section %s lists no key",
                           c.plug_section[i]);
            free(kv);
        }
    } else {
        fz_check_error(&err, path);
    }
    rvfit_config_free(&c);
    remove(path);
    return 0;
}
