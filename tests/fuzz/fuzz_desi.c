/* fuzz_desi.c — libFuzzer target: the DESI reader (instruments/desi)
 * opening and reading one coadd file. */
#include "fuzz_instrument.h"

const rvfit_plugin *rvfit_plugin_entry(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_instrument(rvfit_plugin_entry(), "desi", data, size);
}
