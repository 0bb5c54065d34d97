/* rvfit_abi1.h — a frozen, minimal copy of the rvfit plugin ABI 1.0 as a
 * 1.0 plugin compiled it (core/include/rvfit/plugin.h and backend.h of
 * commit ff7c915): the descriptor and the backend operation table, whose
 * first field was its size and which had no version.  Function pointer
 * types are reduced to what the layout needs.  Never edit this file: it
 * stands for plugins already built, and the loader must refuse them at
 * the ABI stage with a message that says to rebuild. */
#ifndef RVFIT_ABI1_H
#define RVFIT_ABI1_H

#include <stdint.h>

#define RVFIT1_ABI_MAJOR 1
#define RVFIT1_ABI_MINOR 0
#define RVFIT1_PLUGIN_BACKEND 1
#define RVFIT1_EXPORT __attribute__((visibility("default")))

typedef struct rvfit1_backend_ops {
    uint32_t size; /* sizeof(rvfit1_backend_ops) */
    int (*open)(void);
    const char *(*device)(void *state);
    int (*load_library)(void);
    int (*load_batch)(void);
    int (*chisq)(void);
    int (*vscan)(void);
    int (*models)(void);
    void (*counters)(void);
    void (*close)(void *state);
} rvfit1_backend_ops;

typedef struct rvfit1_plugin {
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t size;
    uint32_t kind;
    const char *name;
    const char *version;
    const char *description;
    const char *const *config_keys;
    const void *ops;
} rvfit1_plugin;

#endif
