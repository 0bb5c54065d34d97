/* fuzz_lamost.c — libFuzzer target: the LAMOST reader (instruments/lamost)
 * opening and reading one LRS spectrum file (DR1-DR7 or DR8+ layout) or
 * MRS med- file: its coadd, or (inputs whose size has bit 1 set) its
 * exposures. */
#include "fuzz_instrument.h"

const rvfit_plugin *rvfit_plugin_entry(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const rvfit_kv exposures = {"mrs", "exposures", "fuzz", 0};
    return fz_instrument_kv(rvfit_plugin_entry(), "lamost", &exposures,
                            (size & 2) ? 1 : 0, data, size);
}
