/* rvfit/descriptor.h — the plugin descriptor a plugin's entry symbol
 * returns (rvfit/plugin.h says how a plugin is found and checked, and
 * includes this).  Its leading fields never move (rvfit/abi.h).
 * Ownership: the descriptor, its strings and every table it points to are
 * static and immutable in the plugin; the core never writes to them. */
#ifndef RVFIT_DESCRIPTOR_H
#define RVFIT_DESCRIPTOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RVFIT_PLUGIN_ENTRY rvfit_plugin_entry
#define RVFIT_PLUGIN_ENTRY_NAME "rvfit_plugin_entry"

enum rvfit_plugin_kind {
    RVFIT_PLUGIN_BACKEND = 1,
    RVFIT_PLUGIN_INSTRUMENT = 2
};

/* One optional extension table: features beyond the kind's ops table
 * (e.g. RVFIT_EXT_MOCK, rvfit/instrument_mock.h) that the core asks for by
 * name (rvfit_plugin_ext in the engine).  `table` starts, like every ops
 * table, with uint32_t size (its sizeof as compiled) and uint32_t version
 * (RVFIT_MAKE_VERSION(major, minor) of that extension), so one header
 * carries its own version; the core reads only the prefix it asked for. */
typedef struct rvfit_ext {
    const char *name;  /* NULL ends the array                            */
    const void *table;
} rvfit_ext;

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
    /* rvfit_backend_ops / rvfit_instrument_ops; its `version` must be
     * RVFIT_BACKEND_OPS_VERSION / RVFIT_INSTRUMENT_OPS_VERSION. */
    const void *ops;
    /* Optional extension tables, ended by an entry with a NULL name (at
     * most RVFIT_MAX_EXT entries); NULL when there are none. */
    const rvfit_ext *ext;
} rvfit_plugin;

typedef const rvfit_plugin *(*rvfit_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
