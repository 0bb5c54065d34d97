/* test_e2e_faults_disk.c — a full disk and a read-only file system (issue
 * 15).  Needs root and permission to mount tmpfs; skips (77) otherwise.
 *  - Full: a 600 KiB tmpfs takes c1's outputs (~230 KB) but not c3's
 *    (~1.4 MB).  c1 is fitted into it, then c1 and c3 with
 *    --skip-existing: exit status non-zero, c3's failure says "No space
 *    left on device" and names its output, c1's outputs stay complete and
 *    identical to the reference, and neither a temporary nor c3's output
 *    is left.
 *  - Read-only: as output directory, or as the parent of one, the message
 *    says "Read-only file system"; the SDK's atomic FITS writer (used for
 *    every output) says so too instead of CFITSIO's "already exists?". */
#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "faultutil.h"
#include "rvfit/fits.h"
#include "testutil.h"

static char bin[4096], lib[4096], data[4096];

static int fit(const char *out, const char *files, char **log)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd, "'%s' fit --templates '%s' -o '%s' "
             "--log-level warn %s", bin, lib, out, files);
    return tu_run(cmd, log);
}

static void full_disk(const char *mnt)
{
    char out[4200], files[9000], *log = NULL;
    snprintf(out, sizeof out, "%s/out", mnt);
    snprintf(files, sizeof files, "'%s/c1.fits'", data);
    int rc = fit(out, files, &log);
    CHECK_MSG(rc == 0, "c1 alone fits on the disk:\n%s", log);
    free(log);
    log = NULL;
    /* c3's outputs are sized for all their rows when they are opened */
    snprintf(files, sizeof files, "--skip-existing '%s/c1.fits' "
             "'%s/c3.fits'", data, data);
    rc = fit(out, files, &log);
    CHECK_MSG(rc != 0, "a full disk must fail the input it stops");
    CHECK_MSG(tu_contains(log, "rvmod_c3.fits") &&
                  tu_contains(log, strerror(ENOSPC)),
              "want c3's output named with the OS's reason:\n%s", log);
    CHECK_MSG(fu_count_files(out, ".tmp.") == 0, "temporaries left");
    CHECK_MSG(fu_count_files(out, "_c3") == 0, "c3's output left");
    char ref[4200], why[1024];
    snprintf(ref, sizeof ref, "%s/ref", data);
    CHECK_MSG(tu_outputs_diff(ref, out, "c1", why, sizeof why) == 0,
              "c1: %s", why);
    free(log);
}

static void read_only(const char *mnt)
{
    char out[4200], files[4400], *log = NULL;
    snprintf(files, sizeof files, "'%s/c1.fits'", data);
    int rc = fit(mnt, files, &log);
    CHECK_MSG(rc != 0 && tu_contains(log, strerror(EROFS)),
              "read-only output directory:\n%s", log);
    free(log);
    log = NULL;
    snprintf(out, sizeof out, "%s/sub", mnt);
    rc = fit(out, files, &log);
    CHECK_MSG(rc != 0 && tu_contains(log, strerror(EROFS)),
              "output directory on a read-only file system:\n%s", log);
    free(log);
    char path[4300], tmp[4400];
    void *fp = NULL;
    rvfit_err e;
    snprintf(path, sizeof path, "%s/x.fits", mnt);
    rc = rvfit_fits_create(path, tmp, sizeof tmp, &fp, &e);
    CHECK_MSG(rc == RVFIT_ERR_IO && fp == NULL && tmp[0] == '\0' &&
                  tu_contains(e.msg, strerror(EROFS)) &&
                  !tu_contains(e.msg, "already exists"),
              "rvfit_fits_create: %s", e.msg);
}

int main(void)
{
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    snprintf(lib, sizeof lib, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    snprintf(data, sizeof data, "%s/stream", tu_env("RVFIT_TEST_DATA"));
    char full[4096], ro[4096];
    snprintf(full, sizeof full, "%s", tu_tmpdir("faults_full"));
    snprintf(ro, sizeof ro, "%s", tu_tmpdir("faults_ro"));
    if (mount("tmpfs", full, "tmpfs", 0, "size=600k") != 0)
        tu_skip("cannot mount a tmpfs (%s): needs root", strerror(errno));
    if (mount("tmpfs", ro, "tmpfs", MS_RDONLY, "size=64k") != 0) {
        umount2(full, MNT_DETACH);
        tu_skip("cannot mount a read-only tmpfs (%s)", strerror(errno));
    }
    full_disk(full);
    read_only(ro);
    umount2(full, MNT_DETACH);
    umount2(ro, MNT_DETACH);
    return tu_finish("test_e2e_faults_disk");
}
