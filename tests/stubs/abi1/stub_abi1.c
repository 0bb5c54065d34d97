/* stub_abi1.c — a backend plugin built against the previous plugin ABI
 * (1.0, frozen in rvfit_abi1.h, no rvfit header involved): the loader
 * must refuse it at the ABI stage and say to rebuild against 2.x. */
#include <stddef.h>

#include "rvfit_abi1.h"

static const char *stub_device(void *s)
{
    (void)s;
    return "abi1 stub device";
}

static void stub_close(void *s) { (void)s; }

static const rvfit1_backend_ops ops = {
    .size = sizeof(rvfit1_backend_ops),
    .device = stub_device,
    .close = stub_close,
};

static const char *const keys[] = {NULL};

static const rvfit1_plugin desc = {
    .abi_major = RVFIT1_ABI_MAJOR,
    .abi_minor = RVFIT1_ABI_MINOR,
    .size = sizeof(rvfit1_plugin),
    .kind = RVFIT1_PLUGIN_BACKEND,
    .name = "abi1",
    .version = "1.0.0",
    .description = "a plugin built for rvfit plugin ABI 1.0",
    .config_keys = keys,
    .ops = &ops,
};

RVFIT1_EXPORT const rvfit1_plugin *rvfit_plugin_entry(void) { return &desc; }
