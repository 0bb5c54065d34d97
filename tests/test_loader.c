/* test_loader.c — every plugin loading stage fails with a message that
 * names the stage and the fix (stub plugins from tests/stubs), fallback
 * lists skip only "unavailable"-type failures, short operation tables
 * are padded with safe defaults, a plugin of the previous ABI or of
 * another ops table version is refused, and extension tables are found by
 * name, version and size. */
#include <stdio.h>
#include <string.h>

#include "rvfit/loader.h"
#include "testutil.h"

static char *dirs_one(const char *d)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s", d);
    return buf;
}

static void expect_stage(const char *name, int want_stage,
                         const char *needle)
{
    char *dirs[2] = {dirs_one(tu_env("RVFIT_STUB_DIR")), NULL};
    rvfit_plugin_handle h;
    rvfit_err err;
    rvfit_err_clear(&err);
    int stage = -1;
    int rc = rvfit_plugin_load(dirs, RVFIT_PLUGIN_BACKEND, name, &h, &stage,
                               &err);
    printf("%-10s -> stage '%s': %s\n", name, rvfit_stage_name(stage),
           err.msg);
    CHECK_MSG(rc == RVFIT_ERR_PLUGIN, "%s: rc %d", name, rc);
    CHECK_MSG(stage == want_stage, "%s: stage %d, want %d", name, stage,
              want_stage);
    CHECK_MSG(tu_contains(err.msg, needle), "%s: '%s' lacks '%s'", name,
              err.msg, needle);
    if (want_stage != RVFIT_STAGE_NOT_FOUND) {
        char file[256];
        snprintf(file, sizeof file, "/rvfit_backend_%s.so", name);
        CHECK_MSG(tu_contains(err.msg, file), "%s: '%s' does not name %s",
                  name, err.msg, file);
    }
    CHECK(h.dl == NULL);
}

/* Extension tables by name, version and size (stub "ext": "demo" 1.2 of
 * 32 bytes whose words are 11, 22, 33; "old" 0.3). */
static void test_ext(void)
{
    char *dirs[2] = {dirs_one(tu_env("RVFIT_STUB_DIR")), NULL};
    rvfit_plugin_handle h;
    rvfit_err err;
    int stage;
    CHECK(rvfit_plugin_load(dirs, RVFIT_PLUGIN_BACKEND, "ext", &h, &stage,
                            &err) == RVFIT_OK);
    if (!h.dl)
        return;
    typedef struct {
        uint32_t size, version;
        uint64_t word[3];
    } demo;
    const demo *d = rvfit_plugin_ext(&h, "demo", RVFIT_MAKE_VERSION(1, 0),
                                     8, &err);
    CHECK(d && d->size == 32 && d->word[2] == 33);
    CHECK(rvfit_plugin_ext(&h, "demo", RVFIT_MAKE_VERSION(1, 2), 32,
                           &err) == d);
    static const struct {
        const char *name;
        uint32_t version;
        size_t size;
        const char *needle;
    } no[] = {
        {"demo", RVFIT_MAKE_VERSION(1, 3), 8, "version 1.2 (32 bytes)"},
        {"demo", RVFIT_MAKE_VERSION(2, 0), 8, "needs 2.0 or a later 2.x"},
        {"demo", RVFIT_MAKE_VERSION(1, 0), 40, "at least 40 bytes"},
        {"old", RVFIT_MAKE_VERSION(1, 0), 8, "version 0.3"},
        {"nothing", RVFIT_MAKE_VERSION(1, 0), 8, "no 'nothing' extension"},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        rvfit_err_clear(&err);
        const void *t = rvfit_plugin_ext(&h, no[i].name, no[i].version,
                                         no[i].size, &err);
        printf("ext %-8s %u.%u %2zu B -> %s\n", no[i].name,
               RVFIT_VERSION_MAJ(no[i].version),
               RVFIT_VERSION_MIN(no[i].version), no[i].size, err.msg);
        CHECK(t == NULL);
        CHECK_MSG(tu_contains(err.msg, no[i].needle), "'%s' lacks '%s'",
                  err.msg, no[i].needle);
    }
    /* A plugin without a 'mock' extension cannot write mocks, and says so. */
    CHECK(rvfit_instrument_mock(&h, &err) == NULL);
    CHECK_MSG(tu_contains(err.msg, "instrument 'ext' cannot write synthetic "
                                   "files (no 'mock' extension)"),
              "%s", err.msg);
    rvfit_plugin_unload(&h);
}

static void config_with_stubs(rvfit_config *c, const char *backend)
{
    rvfit_config_defaults(c);
    char path[8192];
    snprintf(path, sizeof path, "%s:%s", tu_env("RVFIT_STUB_DIR"),
             tu_env("RVFIT_PLUGIN_PATH"));
    rvfit_err err;
    CHECK(rvfit_config_set(c, "run", "plugin_path", path, "test", 1, &err) ==
          RVFIT_OK);
    CHECK(rvfit_config_set(c, "backend", "name", backend, "test", 2, &err) ==
          RVFIT_OK);
}

static void test_open(const char *backend, int want_rc, const char *needle,
                      const char *want_name)
{
    rvfit_config c;
    config_with_stubs(&c, backend);
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_backend b;
    rvfit_err err;
    rvfit_err_clear(&err);
    int rc = rvfit_backend_open(&c, &host, &b, &err);
    printf("backend = %-16s -> rc %d %s\n", backend, rc, err.msg);
    CHECK_MSG(rc == want_rc, "'%s': rc %d, want %d", backend, rc, want_rc);
    if (needle)
        CHECK_MSG(tu_contains(err.msg, needle), "'%s': '%s' lacks '%s'",
                  backend, err.msg, needle);
    if (rc == RVFIT_OK) {
        CHECK(!strcmp(b.name, want_name));
        rvfit_backend_close(&b);
    }
    rvfit_config_free(&c);
}

/* test_open of a list with [backend.NAME] device_type = v set. */
static void test_open_set(const char *backend, const char *name,
                          const char *v, const char *want_name)
{
    rvfit_config c;
    config_with_stubs(&c, backend);
    char section[64];
    snprintf(section, sizeof section, "backend.%s", name);
    rvfit_err err;
    CHECK(rvfit_config_set(&c, section, "device_type", v, "my.ini", 3,
                           &err) == RVFIT_OK);
    rvfit_host host = tu_host(RVFIT_LOG_WARN);
    rvfit_backend b;
    rvfit_err_clear(&err);
    int rc = rvfit_backend_open(&c, &host, &b, &err);
    printf("backend = %-16s device_type = %s -> rc %d %s\n", backend, v, rc,
           rc ? err.msg : b.name);
    CHECK_MSG(rc == RVFIT_OK && !strcmp(b.name, want_name),
              "'%s' with device_type = %s: rc %d, '%s', want '%s'", backend,
              v, rc, rc ? err.msg : b.name, want_name);
    if (rc == RVFIT_OK)
        rvfit_backend_close(&b);
    rvfit_config_free(&c);
}

int main(void)
{
    /* Each stage, with its own stub. */
    expect_stage("doesnotexist", RVFIT_STAGE_NOT_FOUND, "not found");
    expect_stage("garbage", RVFIT_STAGE_DLOPEN, "dlopen failed");
    expect_stage("nosym", RVFIT_STAGE_SYMBOL, "rvfit_plugin_entry");
    expect_stage("badabi", RVFIT_STAGE_ABI, "rebuild");
    expect_stage("wrongname", RVFIT_STAGE_NAME, "somethingelse");

    /* ABI: plugins built against earlier ABIs (1.0 and 2.0, frozen in
     * tests/stubs/abi1 and abi2), ops tables of another major or a newer
     * minor, capabilities not declared or unknown; each message names the
     * file (checked in expect_stage) and the fix. */
    char want[512];
    for (int old = 1; old <= 2; old++) {
        char name[8];
        snprintf(name, sizeof name, "abi%d", old);
        snprintf(want, sizeof want, "built for rvfit plugin ABI %d.0, this "
                 "rvfit supports %d.0-%d.%d: rebuild the plugin against the "
                 "rvfit %d.x headers", old, RVFIT_ABI_MAJOR, RVFIT_ABI_MAJOR,
                 RVFIT_ABI_MINOR, RVFIT_ABI_MAJOR);
        expect_stage(name, RVFIT_STAGE_ABI, want);
    }
    expect_stage("nocaps", RVFIT_STAGE_ABI, "declares no way to be called "
                 "(caps 0x0): set .caps");
    expect_stage("badcaps", RVFIT_STAGE_ABI, "declares capabilities 0x101 "
                 "this rvfit does not know");
    snprintf(want, sizeof want, "backend operation table version %d.0, "
             "this rvfit supports %d.0-%d.%d: rebuild the plugin against "
             "this rvfit's headers (its table's .version = "
             "RVFIT_BACKEND_OPS_VERSION)", RVFIT_BACKEND_OPS_MAJOR + 1,
             RVFIT_BACKEND_OPS_MAJOR, RVFIT_BACKEND_OPS_MAJOR,
             RVFIT_BACKEND_OPS_MINOR);
    expect_stage("opsmajor", RVFIT_STAGE_ABI, want);
    snprintf(want, sizeof want, "backend operation table version %d.%d, "
             "newer than this rvfit's %d.%d: upgrade rvfit",
             RVFIT_BACKEND_OPS_MAJOR, RVFIT_BACKEND_OPS_MINOR + 1,
             RVFIT_BACKEND_OPS_MAJOR, RVFIT_BACKEND_OPS_MINOR);
    expect_stage("opsnew", RVFIT_STAGE_ABI, want);
    expect_stage("wrongkind", RVFIT_STAGE_ABI,
                 "is of kind 2 (instrument), its file name says backend");
    expect_stage("badext", RVFIT_STAGE_ABI, "extension 'broken' has no table");
    test_ext();

    /* init: fatal and unavailable are distinct. */
    test_open("initfail", RVFIT_ERR_DEVICE, "init: stub: device exploded",
              NULL);
    test_open("unavail", RVFIT_ERR_UNAVAILABLE, "no device here", NULL);
    /* A list falls back past unavailable plugins ... */
    test_open("unavail, cpu", RVFIT_OK, NULL, "cpu");
    /* ... but a name no backend has is an error, alone or in a list,
     * naming the backends rvfit knows (its own and those found) */
    test_open("doesnotexist", RVFIT_ERR_CONFIG, "backend "
              "'doesnotexist' does not exist ([backend] name = doesnotexist; "
              "known: cpu, opencl, cuda, ", NULL);
    test_open("unavail, doesnotexist, cpu", RVFIT_ERR_CONFIG,
              "backend 'doesnotexist' does not exist", NULL);
    test_open("gpu, cpu", RVFIT_ERR_CONFIG, "unavail", NULL);
    /* A fallback list asks a plugin that has the key device_type for
     * device_type = gpu (no OpenCL CPU device); a single name does not,
     * nor a list whose section sets the key. */
    test_open("devtype", RVFIT_OK, NULL, "devtype");
    test_open("devtype, cpu", RVFIT_OK, NULL, "cpu");
    test_open_set("devtype, cpu", "devtype", "all", "devtype");
    test_open_set("devtype, cpu", "devtype", "gpu", "cpu");
    /* ... but not past a broken one, nor past a fatal init. */
    test_open("badabi, cpu", RVFIT_ERR_PLUGIN, "ABI", NULL);
    test_open("initfail, cpu", RVFIT_ERR_DEVICE, "exploded", NULL);

    /* A short (older) operation table gets defaults, not NULLs. */
    {
        char *dirs[2] = {dirs_one(tu_env("RVFIT_STUB_DIR")), NULL};
        rvfit_plugin_handle h;
        rvfit_err err;
        int stage;
        CHECK(rvfit_plugin_load(dirs, RVFIT_PLUGIN_BACKEND, "short", &h,
                                &stage, &err) == RVFIT_OK);
        if (h.dl) {
            CHECK(h.backend.chisq != NULL && h.backend.vscan != NULL);
            CHECK(h.backend.size == sizeof(rvfit_backend_ops) &&
                  h.backend.version == RVFIT_BACKEND_OPS_VERSION);
            rvfit_chisq_out out = {NULL, NULL};
            CHECK(h.backend.chisq(NULL, 0, NULL, NULL, &out, &err) ==
                  RVFIT_ERR_UNAVAILABLE);
            rvfit_counters cnt;
            h.backend.counters(NULL, &cnt);
            CHECK(cnt.points == 0);
            /* ops 2.1's entry, past an ops 2.0 table's end */
            CHECK(h.backend.update_data(NULL, NULL, &err) ==
                  RVFIT_ERR_UNAVAILABLE);
            rvfit_plugin_unload(&h);
        }
    }

    /* Unknown plugin option: named with file, line and the known keys. */
    {
        rvfit_config c;
        config_with_stubs(&c, "cpu");
        rvfit_err err;
        CHECK(rvfit_config_set(&c, "backend.cpu", "bogus", "1", "my.ini", 7,
                               &err) == RVFIT_OK);
        rvfit_host host = tu_host(RVFIT_LOG_WARN);
        rvfit_backend b;
        rvfit_err_clear(&err);
        int rc = rvfit_backend_open(&c, &host, &b, &err);
        printf("unknown key -> %s\n", err.msg);
        CHECK(rc == RVFIT_ERR_CONFIG);
        CHECK(tu_contains(err.msg, "my.ini:7") &&
              tu_contains(err.msg, "bogus") &&
              tu_contains(err.msg, "threads"));
        rvfit_config_free(&c);
    }
    return tu_finish("test_loader");
}
