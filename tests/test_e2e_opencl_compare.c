/* test_e2e_opencl_compare.c — issue 3's acceptance on the injection set:
 * `rvfit compare --backends cpu,opencl` over 20 synthetic stars must give
 * VRAD within 0.01 km/s, Teff within 1 K, logg/[Fe/H] within 0.001 and
 * identical RVS_WARN (the tolerances compare applies), and the OpenCL run
 * must have been evaluated by the OpenCL device, with as many points as the
 * cpu run needed.  Skips visibly when this configuration did not build the
 * opencl plugin or `rvfit plugins` reports it unavailable (no platform or
 * device); a built plugin that is missing or broken is a failure. */
#include <string.h>

#include "testutil.h"

int main(void)
{
    const char *bin = tu_env("RVFIT_BIN"), *data = tu_env("RVFIT_TEST_DATA");
    char cmd[16384], ids[512] = "";
    char *log = NULL;
    tu_need_plugin("rvfit_backend_opencl");
    /* The first entry is the build's: $RVFIT_PLUGIN_PATH is searched
     * first.  Plugin log lines (stderr) would split entry and status. */
    snprintf(cmd, sizeof cmd, "'%s' plugins 2>/dev/null", bin);
    tu_run(cmd, &log);
    const char *p = log ? strstr(log, "backend    opencl") : NULL;
    char why[600] = "not listed by `rvfit plugins`";
    if (p) { /* the entry line: "FAILED at ...", or a status line follows */
        snprintf(why, sizeof why, "%.*s", (int)strcspn(p, "\n"), p);
        if (!tu_contains(why, "FAILED")) {
            p += strcspn(p, "\n");
            p += strspn(p, "\n ");
            snprintf(why, sizeof why, "%.*s", (int)strcspn(p, "\n"), p);
        }
    }
    if (p && !strncmp(p, "status: unavailable", 19)) {
        free(log);
        tu_skip("opencl backend: %s", why);
    }
    CHECK_MSG(p && !strncmp(p, "status: available", 17),
              "opencl backend built but %s:\n%s", why, log ? log : "");
    free(log);
    log = NULL;
    if (tu_failures)
        return tu_finish("test_e2e_opencl_compare");
    for (int i = 0; i < 20; i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d",
                 i ? "," : "", 1000000 + i);
    const char *out = tu_tmpdir("e2e_opencl_compare");
    snprintf(cmd, sizeof cmd,
             "'%s' compare --backends cpu,opencl --templates '%s/lib' -o "
             "'%s' --targetid %s --log-level warn '%s/coadd-mock.fits'",
             bin, data, out, ids, data);
    int rc = tu_run(cmd, &log);
    printf("%s", log ? log : "");
    CHECK_MSG(rc == 0, "rvfit compare exited %d", rc);
    CHECK(tu_contains(log, "all within tolerance"));
    CHECK(!tu_contains(log, "FAIL"));
    /* Both rows of the backend table: same number of points, and the
     * OpenCL one names its platform/device. */
    unsigned long long pc = 0, po = 0;
    const char *lc = log ? strstr(log, "\ncpu ") : NULL;
    const char *lo = log ? strstr(log, "\nopencl ") : NULL;
    CHECK(lc && sscanf(lc, "\ncpu %*u %*f %*f %llu", &pc) == 1);
    CHECK(lo && sscanf(lo, "\nopencl %*u %*f %*f %llu", &po) == 1);
    CHECK_MSG(pc > 20 * 100 && pc == po, "points cpu %llu opencl %llu", pc,
              po);
    CHECK(lo && tu_contains(lo, "opencl: "));
    char tab[4300];
    snprintf(tab, sizeof tab, "%s/compare-opencl/rvtab_coadd-mock.fits", out);
    CHECK_MSG(tu_read_key(tab, 1, "BKNDPTS") == (long long)po,
              "BKNDPTS of the OpenCL output");
    free(log);
    return tu_finish("test_e2e_opencl_compare");
}
