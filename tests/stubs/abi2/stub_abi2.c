/* stub_abi2.c — a backend plugin built against plugin ABI 2.0 (frozen in
 * rvfit_abi2.h, no rvfit header involved), complete as such a plugin was:
 * the loader must refuse it at the ABI stage and say to rebuild against
 * 3.x, before anything calls its table of another layout. */
#include <stddef.h>

#include "rvfit_abi2.h"

_Static_assert(sizeof(rvfit2_backend_ops) == 128, "backend ops 1.2");
_Static_assert(sizeof(rvfit2_plugin) == 64, "descriptor of ABI 2.0");

static const char *stub_device(void *s)
{
    (void)s;
    return "abi2 stub device";
}

static void stub_close(void *s) { (void)s; }

static const rvfit2_backend_ops ops = {
    .size = sizeof(rvfit2_backend_ops),
    .version = RVFIT2_MAKE_VERSION(1, 2),
    .device = stub_device,
    .close = stub_close,
};

static const char *const keys[] = {NULL};

static const rvfit2_plugin desc = {
    .abi_major = RVFIT2_ABI_MAJOR,
    .abi_minor = RVFIT2_ABI_MINOR,
    .size = sizeof(rvfit2_plugin),
    .kind = RVFIT2_PLUGIN_BACKEND,
    .name = "abi2",
    .version = "2.0.0",
    .description = "a plugin built for rvfit plugin ABI 2.0",
    .config_keys = keys,
    .ops = &ops,
    .ext = NULL,
};

RVFIT2_EXPORT const rvfit2_plugin *rvfit_plugin_entry(void) { return &desc; }
