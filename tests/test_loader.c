/* test_loader.c — every plugin loading stage fails with a message that
 * names the stage and the fix (stub plugins from tests/stubs), fallback
 * lists skip only "unavailable"-type failures, and short operation tables
 * are padded with safe defaults. */
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
    CHECK(h.dl == NULL);
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

int main(void)
{
    /* Each stage, with its own stub. */
    expect_stage("doesnotexist", RVFIT_STAGE_NOT_FOUND, "not found");
    expect_stage("garbage", RVFIT_STAGE_DLOPEN, "dlopen failed");
    expect_stage("nosym", RVFIT_STAGE_SYMBOL, "rvfit_plugin_entry");
    expect_stage("badabi", RVFIT_STAGE_ABI, "rebuild");
    expect_stage("wrongname", RVFIT_STAGE_NAME, "somethingelse");

    /* init: fatal and unavailable are distinct. */
    test_open("initfail", RVFIT_ERR_DEVICE, "init: stub: device exploded",
              NULL);
    test_open("unavail", RVFIT_ERR_UNAVAILABLE, "no device here", NULL);
    /* A list falls back past unavailable and missing plugins ... */
    test_open("unavail, doesnotexist, cpu", RVFIT_OK, NULL, "cpu");
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
            rvfit_chisq_out out = {NULL, NULL};
            CHECK(h.backend.chisq(NULL, 0, NULL, &out, &err) ==
                  RVFIT_ERR_UNAVAILABLE);
            rvfit_counters cnt;
            h.backend.counters(NULL, &cnt);
            CHECK(cnt.points == 0);
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
