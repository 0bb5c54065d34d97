/* lamost_plugin.c — descriptor and operation table of the LAMOST
 * instrument plugin: LRS spec-*.fits files (one spectrum per file, DR1-DR7
 * image or DR8+ COADD table layout) and MRS med-*.fits files (a coadd and
 * the exposures of one target on one night, arms MRS_B and MRS_R). */
#include "rvfit/plugin.h"

#include "lamost_internal.h"


/* [instrument.lamost] keys; see lamost_parse_opts() in lamost_opts.c. */
static const char *const lamost_config_keys[] = {
    "lam_min", "lam_max", "step", "sigma_kms", "resolution", "mock_layout",
    "arms", "mrs", "mrs_resolution", "mrs_step", "mrs_sigma_kms", NULL};

static const rvfit_instrument_ops lamost_ops = {
    .size = sizeof(rvfit_instrument_ops),
    .version = RVFIT_INSTRUMENT_OPS_VERSION,
    .open = lamost_open,
    .info = lamost_info,
    .read = lamost_read,
    .read_rows = lamost_read_rows,
    .close = lamost_close,
    .template_arms = lamost_template_arms,
};

/* Synthetic files: the optional 'mock' extension (rvfit/instrument_mock.h). */
static const rvfit_instrument_mock_ops lamost_mock_ops = {
    .size = sizeof(rvfit_instrument_mock_ops),
    .version = RVFIT_MOCK_EXT_VERSION,
    .write_mock = lamost_write_mock,
};

/* Objects and epochs for joint fits (rvfit/instrument_epochs.h): the
 * designation groups a star's files. */
static const rvfit_instrument_epochs_ops lamost_epochs_ops = {
    .size = sizeof(rvfit_instrument_epochs_ops),
    .version = RVFIT_EPOCHS_EXT_VERSION,
    .epochs = lamost_epochs,
};

static const rvfit_ext lamost_ext[] = {
    {RVFIT_EXT_MOCK, &lamost_mock_ops},
    {RVFIT_EXT_EPOCHS, &lamost_epochs_ops},
    {NULL, NULL},
};

static const rvfit_plugin lamost_descriptor = {
    .abi_major = RVFIT_ABI_MAJOR,
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
    .kind = RVFIT_PLUGIN_INSTRUMENT,
    .name = "lamost",
    .version = RVFIT_RELEASE,
    .description = "LAMOST LRS spec files, DR1-DR7 image or DR8+ COADD "
                   "table (one arm, Gaussian LSF at R ~ 1800), and MRS "
                   "med- files, coadds or exposures (arms MRS_B, MRS_R, "
                   "R ~ 7500); synthetic spec files",
    .config_keys = lamost_config_keys,
    .ops = &lamost_ops,
    .ext = lamost_ext,
};

RVFIT_EXPORT const rvfit_plugin *rvfit_plugin_entry(void)
{
    return &lamost_descriptor;
}
