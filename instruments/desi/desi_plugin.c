/* desi_plugin.c — descriptor and operation table of the DESI instrument
 * plugin (coadd and spectra files of the DESI spectroscopic pipeline). */
#include "rvfit/plugin.h"

#include "desi_internal.h"


/* [instrument.desi] keys; see desi_parse_opts() in desi_open.c. */
static const char *const desi_config_keys[] = {"fiberstatus_mask",
                                               "objtypes", NULL};

static const rvfit_instrument_ops desi_ops = {
    .size = sizeof(rvfit_instrument_ops),
    .version = RVFIT_INSTRUMENT_OPS_VERSION,
    .open = desi_open,
    .info = desi_info,
    .read = desi_read,
    .read_rows = desi_read_rows,
    .close = desi_close,
    .template_arms = desi_template_arms,
};

/* Synthetic files: the optional 'mock' extension (rvfit/instrument_mock.h). */
static const rvfit_instrument_mock_ops desi_mock_ops = {
    .size = sizeof(rvfit_instrument_mock_ops),
    .version = RVFIT_MOCK_EXT_VERSION,
    .write_mock = desi_write_mock,
};

/* Objects, exposures and epochs for joint fits: the 'epochs' extension
 * (rvfit/instrument_epochs.h). */
static const rvfit_instrument_epochs_ops desi_epochs_ops = {
    .size = sizeof(rvfit_instrument_epochs_ops),
    .version = RVFIT_EPOCHS_EXT_VERSION,
    .epochs = desi_epochs,
};

static const rvfit_ext desi_ext[] = {
    {RVFIT_EXT_MOCK, &desi_mock_ops},
    {RVFIT_EXT_EPOCHS, &desi_epochs_ops},
    {NULL, NULL},
};

static const rvfit_plugin desi_descriptor = {
    .abi_major = RVFIT_ABI_MAJOR,
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
    .kind = RVFIT_PLUGIN_INSTRUMENT,
    .name = "desi",
    .version = RVFIT_RELEASE,
    .description = "DESI coadd/spectra files (CFITSIO): B/R/Z arms with "
                   "per-fibre resolution matrices; synthetic coadds",
    .config_keys = desi_config_keys,
    .ops = &desi_ops,
    .ext = desi_ext,
};

RVFIT_EXPORT const rvfit_plugin *rvfit_plugin_entry(void)
{
    return &desi_descriptor;
}
