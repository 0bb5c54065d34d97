/* rvfit_abi2.h — a frozen, minimal copy of the rvfit plugin ABI 2.0 as a
 * 2.0 plugin compiled it (core/sdk/include/rvfit/plugin.h and backend.h
 * of commit 2462712): the descriptor and the backend operation table of
 * backend ops 1.2, whose chisq, vscan and models came in three families
 * (plain, _st with one weight per stencil entry, _sta with a weight per
 * arm) and which declared no capabilities.  Function pointer types are
 * reduced to what the layout needs.  Never edit this file: it stands for
 * plugins already built, and the loader must refuse them at the ABI stage
 * with a message that says to rebuild. */
#ifndef RVFIT_ABI2_H
#define RVFIT_ABI2_H

#include <stdint.h>

#define RVFIT2_ABI_MAJOR 2
#define RVFIT2_ABI_MINOR 0
#define RVFIT2_PLUGIN_BACKEND 1
#define RVFIT2_EXPORT __attribute__((visibility("default")))
#define RVFIT2_MAKE_VERSION(major, minor)                                  \
    (((uint32_t)(major) << 16) | (uint32_t)(minor))

typedef struct rvfit2_backend_ops {
    uint32_t size;    /* sizeof(rvfit2_backend_ops) = 128 */
    uint32_t version; /* backend ops 1.2 */
    int (*open)(void);
    const char *(*device)(void *state);
    int (*load_library)(void);
    int (*load_batch)(void);
    int (*chisq)(void);
    int (*vscan)(void);
    int (*models)(void);
    void (*counters)(void);
    void (*close)(void *state);
    int (*chisq_st)(void);
    int (*vscan_st)(void);
    int (*models_st)(void);
    int (*chisq_sta)(void);
    int (*vscan_sta)(void);
    int (*models_sta)(void);
} rvfit2_backend_ops;

typedef struct rvfit2_ext {
    const char *name;
    const void *table;
} rvfit2_ext;

typedef struct rvfit2_plugin {
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t size;
    uint32_t kind;
    const char *name;
    const char *version;
    const char *description;
    const char *const *config_keys;
    const void *ops;
    const rvfit2_ext *ext;
} rvfit2_plugin;

#endif
