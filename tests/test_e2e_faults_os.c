/* test_e2e_faults_os.c — OS-level failures say what the OS said (issue 15,
 * "Faults and messages"), with the CLI and through the SDK helper that
 * every FITS writer uses:
 *  - an output name too long for the file system (a 240-character input
 *    name): "File name too long", the input named, nothing left behind;
 *  - a 5,000-character output path: a complete message with the reason;
 *  - a path CFITSIO cannot take (over 1,024 characters, valid for the OS);
 *  - an @list that lists itself, directly and through another list;
 *  - a message longer than the error buffer keeps its end (the reason);
 *  - rvfit_fits_error with a CFITSIO write error and errno ENOSPC says
 *    "No space left on device", and ignores a stale ENOENT. */
#include <errno.h>
#include <fitsio.h>
#include <string.h>
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

static void long_name(void)
{
    char in[4096], out[4096], cmd[16384], name[300], *log = NULL;
    snprintf(in, sizeof in, "%s", tu_tmpdir("faults_longname_in"));
    snprintf(out, sizeof out, "%s", tu_tmpdir("faults_longname"));
    memset(name, 'x', 240);
    name[240] = '\0';
    /* the input's name fits (245 < 255), rvtab_<it> and its temporary not */
    snprintf(cmd, sizeof cmd, "cp '%s/c1.fits' '%s/%s.fits'", data, in,
             name);
    CHECK(tu_run(cmd, NULL) == 0);
    char files[4800];
    snprintf(files, sizeof files, "'%s/%s.fits'", in, name);
    int rc = fit(out, files, &log);
    CHECK_MSG(rc != 0, "an output that cannot be created must fail");
    CHECK_MSG(tu_contains(log, strerror(ENAMETOOLONG)) &&
                  tu_contains(log, "cannot create") &&
                  !tu_contains(log, "already exists"),
              "want the OS's reason:\n%s", log);
    CHECK_MSG(fu_count_files(out, "rv") == 0, "something was left");
    free(log);
}

/* The error line of a log: does it end with the reason? */
static int ends_with_reason(const char *log, const char *reason)
{
    const char *e = strstr(log, "error ");
    if (!e)
        e = strstr(log, "error:");
    if (!e)
        return 0;
    const char *nl = strchr(e, '\n');
    size_t len = nl ? (size_t)(nl - e) : strlen(e), rl = strlen(reason);
    return len >= rl && !strncmp(e + len - rl, reason, rl);
}

static void long_paths(void)
{
    char base[4096], files[4400], *log = NULL;
    snprintf(base, sizeof base, "%s", tu_tmpdir("faults_longpath"));
    snprintf(files, sizeof files, "'%s/c1.fits'", data);
    /* 5,000 characters: more than any path may have */
    char *p = malloc(6000);
    int n = snprintf(p, 6000, "%s", base);
    while (n < 5000)
        n += snprintf(p + n, 6000 - (size_t)n, "/%0199d", 0);
    int rc = fit(p, files, &log);
    CHECK_MSG(rc != 0, "a 5000-character path must fail");
    CHECK_MSG(log && ends_with_reason(log, strerror(ENAMETOOLONG)),
              "the message must end with the reason:\n%.300s ... %s",
              log ? log : "", log && strlen(log) > 300
                                  ? log + strlen(log) - 300 : "");
    free(log);
    log = NULL;
    /* about 1,900 characters: fine for the OS, too long for CFITSIO */
    n = snprintf(p, 6000, "%s", base);
    while (n < 1900)
        n += snprintf(p + n, 6000 - (size_t)n, "/%0199d", 0);
    rc = fit(p, files, &log);
    CHECK_MSG(rc != 0, "a path CFITSIO cannot take must fail");
    CHECK_MSG(log && tu_contains(log, "CFITSIO takes at most") &&
                  tu_contains(log, strerror(ENAMETOOLONG)),
              "%.200s ... %s", log ? log : "",
              log && strlen(log) > 400 ? log + strlen(log) - 400 : "");
    free(log);
    free(p);
}

static void self_list(void)
{
    char dir[4096], a[4200], b[4200], arg[4300], *log = NULL;
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("faults_lists"));
    snprintf(a, sizeof a, "%s/a.lst", dir);
    snprintf(b, sizeof b, "%s/b.lst", dir);
    FILE *f = fopen(a, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "%s/c1.fits\n@%s\n", data, a);
    fclose(f);
    snprintf(arg, sizeof arg, "@%s", a);
    int rc = fit(dir, arg, &log);
    CHECK_MSG(rc != 0 && tu_contains(log, "includes itself") &&
                  !tu_contains(log, "No such file"),
              "a list naming itself:\n%s", log);
    free(log);
    log = NULL;
    /* a -> b -> a */
    f = fopen(a, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "%s/c1.fits\n@%s\n", data, b);
        fclose(f);
    }
    f = fopen(b, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "@%s\n", a);
        fclose(f);
    }
    rc = fit(dir, arg, &log);
    CHECK_MSG(rc != 0 && tu_contains(log, "includes itself") &&
                  tu_contains(log, "b.lst"),
              "lists including each other:\n%s", log);
    free(log);
    log = NULL;
    /* a list of lists is fine: a -> b -> c1 */
    f = fopen(b, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "%s/c4.fits\n", data);
        fclose(f);
    }
    rc = fit(dir, arg, &log);
    CHECK_MSG(rc == 0, "a list of lists: exit %d\n%s", rc, log);
    CHECK(fu_count_files(dir, "rvtab_c1.fits") == 1 &&
          fu_count_files(dir, "rvtab_c4.fits") == 1);
    free(log);
}

static void error_buffer(void)
{
    char *path = malloc(5001);
    memset(path, 'p', 5000);
    path[0] = '/';
    path[5000] = '\0';
    rvfit_err e;
    rvfit_err_set(&e, RVFIT_ERR_IO, "%s: cannot create: %s", path,
                  "the reason");
    size_t len = strlen(e.msg);
    CHECK(len < RVFIT_ERR_LEN);
    CHECK_MSG(len > 10 && !strcmp(e.msg + len - 10, "the reason"), "%s",
              e.msg + len - 40);
    CHECK(tu_contains(e.msg, "characters left out"));
    CHECK(!strncmp(e.msg, "/ppp", 4));
    rvfit_err_set(&e, RVFIT_ERR_IO, "inner reason");
    rvfit_err_prefix(&e, "%s", path);
    len = strlen(e.msg);
    CHECK_MSG(len > 12 && !strcmp(e.msg + len - 12, "inner reason"), "%s",
              e.msg + len - 40);
    free(path);
}

static void fits_errno(void)
{
    rvfit_err e;
    errno = ENOSPC;
    rvfit_fits_error(&e, WRITE_ERROR, "/x/out.fits", NULL, "writing rows");
    CHECK_MSG(tu_contains(e.msg, "writing rows: No space left on device") &&
                  tu_contains(e.msg, "CFITSIO 106"), "%s", e.msg);
    errno = EROFS;
    rvfit_fits_error(&e, FILE_NOT_CREATED, "/x/out.fits", NULL, "creating");
    CHECK_MSG(tu_contains(e.msg, strerror(EROFS)), "%s", e.msg);
    /* a stale "no such file" does not explain a failed write */
    errno = ENOENT;
    rvfit_fits_error(&e, WRITE_ERROR, "/x/out.fits", NULL, "writing rows");
    CHECK_MSG(!tu_contains(e.msg, strerror(ENOENT)), "%s", e.msg);
    /* nor anything a format error */
    errno = ENOSPC;
    rvfit_fits_error(&e, BAD_NAXIS, "/x/in.fits", "FLUX", "reading");
    CHECK_MSG(!tu_contains(e.msg, strerror(ENOSPC)), "%s", e.msg);
}

int main(void)
{
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    snprintf(lib, sizeof lib, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    snprintf(data, sizeof data, "%s/stream", tu_env("RVFIT_TEST_DATA"));
    error_buffer();
    fits_errno();
    long_name();
    long_paths();
    self_list();
    return tu_finish("test_e2e_faults_os");
}
