/* fuzz_lamost.c — libFuzzer target: the LAMOST reader (instruments/lamost)
 * opening and reading one LRS spectrum file (DR1-DR7 or DR8+ layout). */
#include "fuzz_instrument.h"

const rvfit_plugin *rvfit_plugin_entry(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_instrument(rvfit_plugin_entry(), "lamost", data, size);
}
