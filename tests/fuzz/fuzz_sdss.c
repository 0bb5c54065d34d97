/* fuzz_sdss.c — libFuzzer target: the SDSS reader (instruments/sdss)
 * opening and reading one BOSS spec file. */
#include "fuzz_instrument.h"

const rvfit_plugin *rvfit_plugin_entry(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_instrument(rvfit_plugin_entry(), "sdss", data, size);
}
