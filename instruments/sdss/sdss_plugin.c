/* sdss_plugin.c — descriptor and operation table of the SDSS/BOSS
 * instrument plugin (spec-PLATE-MJD-FIBER.fits files, or lists of them). */
#include "rvfit/plugin.h"

#include "sdss_internal.h"


/* [instrument.sdss] keys; see sdss_parse_opts() in sdss_opts.c. */
static const char *const sdss_config_keys[] = {"lam_min", "lam_max", "step",
                                               "sigma_kms", NULL};

static const rvfit_instrument_ops sdss_ops = {
    .size = sizeof(rvfit_instrument_ops),
    .version = RVFIT_INSTRUMENT_OPS_VERSION,
    .open = sdss_open,
    .info = sdss_info,
    .read = sdss_read,
    .read_rows = sdss_read_rows,
    .close = sdss_close,
    .template_arms = sdss_template_arms,
};

/* Synthetic files: the optional 'mock' extension (rvfit/instrument_mock.h). */
static const rvfit_instrument_mock_ops sdss_mock_ops = {
    .size = sizeof(rvfit_instrument_mock_ops),
    .version = RVFIT_MOCK_EXT_VERSION,
    .write_mock = sdss_write_mock,
};

static const rvfit_ext sdss_ext[] = {
    {RVFIT_EXT_MOCK, &sdss_mock_ops},
    {NULL, NULL},
};

static const rvfit_plugin sdss_descriptor = {
    .abi_major = RVFIT_ABI_MAJOR,
    .abi_minor = RVFIT_ABI_MINOR,
    .size = sizeof(rvfit_plugin),
    .kind = RVFIT_PLUGIN_INSTRUMENT,
    .name = "sdss",
    .version = RVFIT_RELEASE,
    .description = "SDSS/BOSS spec-PLATE-MJD-FIBER.fits files or text lists "
                   "of them (one BOSS arm, Gaussian LSF from WDISP); "
                   "synthetic spec files",
    .config_keys = sdss_config_keys,
    .ops = &sdss_ops,
    .ext = sdss_ext,
};

RVFIT_EXPORT const rvfit_plugin *rvfit_plugin_entry(void)
{
    return &sdss_descriptor;
}
