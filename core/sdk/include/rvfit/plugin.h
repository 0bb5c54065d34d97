/* rvfit/plugin.h — the plugin descriptor and its single entry symbol.
 *
 * A plugin is a shared library named rvfit_<kind>_<name>.so (kind is
 * "backend" or "instrument") exporting exactly one symbol,
 * RVFIT_PLUGIN_ENTRY, a function returning a pointer to a static
 * descriptor.  The loader checks, in order, and reports the failing stage:
 *   not found  -> dlopen -> symbol -> ABI (major equal, minor <= host,
 *   descriptor and ops sizes sane) -> name (descriptor name == file name)
 *   -> init (the plugin's open).
 * Build plugins with -fvisibility=hidden and mark the entry RVFIT_EXPORT.
 */
#ifndef RVFIT_PLUGIN_H
#define RVFIT_PLUGIN_H

#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/instrument.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_ABI_MAJOR 2
#define RVFIT_ABI_MINOR 0

#define RVFIT_PLUGIN_ENTRY rvfit_plugin_entry
#define RVFIT_PLUGIN_ENTRY_NAME "rvfit_plugin_entry"

enum rvfit_plugin_kind {
    RVFIT_PLUGIN_BACKEND = 1,
    RVFIT_PLUGIN_INSTRUMENT = 2
};

typedef struct rvfit_plugin {
    uint32_t abi_major;        /* RVFIT_ABI_MAJOR at build time          */
    uint32_t abi_minor;        /* RVFIT_ABI_MINOR at build time          */
    uint32_t size;             /* sizeof(rvfit_plugin) at build time     */
    uint32_t kind;             /* enum rvfit_plugin_kind                  */
    const char *name;          /* must equal NAME in rvfit_KIND_NAME.so   */
    const char *version;       /* plugin version string                  */
    const char *description;   /* one line                               */
    /* Keys accepted in [backend.NAME] / [instrument.NAME]; NULL ends. */
    const char *const *config_keys;
    const void *ops;           /* rvfit_backend_ops / rvfit_instrument_ops */
} rvfit_plugin;

typedef const rvfit_plugin *(*rvfit_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
