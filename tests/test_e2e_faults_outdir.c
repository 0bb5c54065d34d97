/* test_e2e_faults_outdir.c — two runs, one output directory (issue 15).
 *  1. A lock held by another process (this test, with a holder line of a
 *     made-up PID and host) makes `rvfit fit` fail before writing anything,
 *     naming that PID and host; released, the same command succeeds and
 *     leaves no lock file.
 *  2. Two real runs: while a longer one (three inputs) writes into the
 *     directory, a second fails naming the first's PID; the first is then
 *     unaffected (its outputs identical to the reference fits).
 *  3. A stale lock file (no process holds the lock, as after kill -9)
 *     blocks nothing.
 *  4. An existing output is an error without --overwrite/--skip-existing
 *     and stays untouched; --skip-existing keeps it, --overwrite replaces.
 *  5. Two inputs that would write the same output (the same file name in
 *     two folders) are refused before anything is written. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "faultutil.h"
#include "testutil.h"

static char bin[4096], lib[4096], data[4096];

static int fit(const char *out, const char *opts, const char *files,
               char **log)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd, "'%s' fit --templates '%s' -o '%s' "
             "--log-level warn %s %s", bin, lib, out, opts, files);
    return tu_run(cmd, log);
}

static int hold_lock(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.rvfit.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const char *who = "PID 4242 on host testhost, started 2000-01-01\n";
    if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0 ||
        write(fd, who, strlen(who)) != (ssize_t)strlen(who)) {
        fprintf(stderr, "cannot lock %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return fd;
}

static void foreign_lock(void)
{
    char out[4096], in[4200], *log = NULL;
    snprintf(out, sizeof out, "%s", tu_tmpdir("faults_lock"));
    snprintf(in, sizeof in, "'%s/c1.fits'", data);
    int fd = hold_lock(out);
    int rc = fit(out, "", in, &log);
    CHECK_MSG(rc != 0, "a locked output directory must be refused");
    CHECK_MSG(tu_contains(log, "is in use by another rvfit run") &&
                  tu_contains(log, "PID 4242 on host testhost"),
              "the message names the other run:\n%s", log);
    CHECK_MSG(tu_count_files(out, "rvtab") == 0, "outputs written while "
              "locked");
    CHECK_MSG(tu_count_files(out, ".rvfit.lock") == 1, "the holder's lock "
              "file was removed by the refused run");
    free(log);
    log = NULL;
    close(fd);
    log = NULL;
    rc = fit(out, "", in, &log);
    CHECK_MSG(rc == 0, "after the release: exit %d\n%s", rc, log);
    CHECK_MSG(tu_count_files(out, "rvtab_c1.fits") == 1, "no output");
    CHECK_MSG(tu_count_files(out, ".rvfit.lock") == 0, "lock file left");
    free(log);
}

static void two_runs(void)
{
    char out[4096], logp[4200], lockp[4200], *log = NULL;
    snprintf(out, sizeof out, "%s", tu_tmpdir("faults_two"));
    snprintf(logp, sizeof logp, "%s.log", out);
    snprintf(lockp, sizeof lockp, "%s/.rvfit.lock", out);
    char in[5][4200], one[4300];
    for (int i = 0; i < 5; i++)
        snprintf(in[i], sizeof in[i], "%s/c%d.fits", data, i + 1);
    char *argv[] = {bin, "fit", "--templates", lib, "-o", out, "-j", "1",
                    "--batch-size", "4", in[0], in[1], in[3], NULL};
    pid_t pid = fu_spawn(argv, logp);
    CHECK(pid > 0);
    if (pid <= 0)
        return;
    /* until the first run has described itself in the lock file */
    char want[64];
    snprintf(want, sizeof want, "PID %ld on host ", (long)pid);
    int status = 0;
    pid_t w = 0;
    for (;;) {
        char *t = fu_slurp(lockp);
        int ok = t && tu_contains(t, want);
        free(t);
        if (ok || (w = waitpid(pid, &status, WNOHANG)) != 0)
            break;
        fu_nap(20);
    }
    CHECK_MSG(w == 0, "the first run ended before the second started");
    snprintf(one, sizeof one, "'%s'", in[2]);
    int rc = fit(out, "", one, &log);
    CHECK_MSG(rc != 0, "the second run must be refused");
    CHECK_MSG(tu_contains(log, want), "the second run names the first "
              "(%s):\n%s", want, log);
    free(log);
    if (w == 0)
        CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the first run was disturbed");
    for (int i = 1; i <= 4; i += 1 + (i == 2)) { /* c1, c2, c4 */
        char stem[8], why[1024], ref[4200];
        snprintf(stem, sizeof stem, "c%d", i);
        snprintf(ref, sizeof ref, "%s/ref", data);
        long d = tu_outputs_diff(ref, out, stem, why, sizeof why);
        CHECK_MSG(d == 0, "c%d: %s", i, why);
    }
    CHECK_MSG(tu_count_files(out, ".rvfit.lock") == 0, "lock file left");
}

static void stale_lock(void)
{
    char out[4096], in[4200], path[4200], *log = NULL;
    snprintf(out, sizeof out, "%s", tu_tmpdir("faults_stale"));
    snprintf(in, sizeof in, "'%s/c1.fits'", data);
    snprintf(path, sizeof path, "%s/.rvfit.lock", out);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs("PID 1 on host gone, started 2000-01-01\n", f) >= 0);
    if (f)
        fclose(f);
    int rc = fit(out, "", in, &log);
    CHECK_MSG(rc == 0, "a stale lock file: exit %d\n%s", rc, log);
    free(log);
}

static long long size_mtime(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    return (long long)sb.st_size * 1000003LL + (long long)sb.st_mtim.tv_nsec +
           1000000000LL * (long long)sb.st_mtim.tv_sec;
}

static void existing_output(void)
{
    char out[4096], in[4200], tab[4200], *log = NULL;
    snprintf(out, sizeof out, "%s", tu_tmpdir("faults_exist"));
    snprintf(in, sizeof in, "'%s/c1.fits'", data);
    snprintf(tab, sizeof tab, "%s/rvtab_c1.fits", out);
    CHECK(fit(out, "", in, NULL) == 0);
    long long before = size_mtime(tab);
    int rc = fit(out, "", in, &log);
    CHECK_MSG(rc != 0, "an existing output must not be replaced silently");
    CHECK_MSG(tu_contains(log, "rvtab_c1.fits exists (use --overwrite or "
                               "--skip-existing)"), "%s", log);
    CHECK_MSG(size_mtime(tab) == before, "the existing output changed");
    free(log);
    CHECK(fit(out, "--skip-existing", in, NULL) == 0);
    CHECK_MSG(size_mtime(tab) == before, "--skip-existing changed it");
    CHECK(fit(out, "--overwrite", in, NULL) == 0);
    CHECK_MSG(size_mtime(tab) != before, "--overwrite did not replace it");
    char why[1024], ref[4200];
    snprintf(ref, sizeof ref, "%s/ref", data);
    CHECK_MSG(tu_outputs_diff(ref, out, "c1", why, sizeof why) == 0, "%s",
              why);
}

static void same_name_twice(void)
{
    char out[4096], other[4096], files[16000], cmd[12000], *log = NULL;
    snprintf(out, sizeof out, "%s", tu_tmpdir("faults_twice"));
    snprintf(other, sizeof other, "%s", tu_tmpdir("faults_twice_in"));
    snprintf(cmd, sizeof cmd, "cp '%s/c1.fits' '%s/'", data, other);
    CHECK(tu_run(cmd, NULL) == 0);
    snprintf(files, sizeof files, "'%s/c1.fits' '%s/c2.fits' '%s/c1.fits'",
             data, data, other);
    int rc = fit(out, "--overwrite", files, &log);
    CHECK_MSG(rc != 0, "two inputs for one output must be refused");
    CHECK_MSG(tu_contains(log, "inputs 1 (") && tu_contains(log, "and 3 (") &&
                  tu_contains(log, "would both be written to"),
              "%s", log);
    CHECK_MSG(tu_count_files(out, "rvtab") == 0, "outputs written");
    free(log);
}

int main(void)
{
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    snprintf(lib, sizeof lib, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    snprintf(data, sizeof data, "%s/stream", tu_env("RVFIT_TEST_DATA"));
    foreign_lock();
    two_runs();
    stale_lock();
    existing_output();
    same_name_twice();
    return tu_finish("test_e2e_faults_outdir");
}
