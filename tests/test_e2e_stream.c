/* test_e2e_stream.c — batches that span files (issue: survey scale).
 * Five DESI files of different sizes (fixture_stream.sh, fitted there one
 * file per command with one thread and no read-ahead) are fitted:
 *  1. in one command, batches of 16 spectra across file boundaries, two
 *     threads, read-ahead on: every output bit-identical to the reference;
 *  2. with a truncated file among them: the others complete identically,
 *     the bad one is named in the log and the status file, the exit status
 *     is non-zero, and nothing of it is left in the output directory;
 *  3. killed (SIGKILL) once the first output exists, then rerun with
 *     --skip-existing: every output present and identical to the
 *     reference, no temporaries, and the status file lists each input once
 *     as done;
 *  4. with two and three fit streams ([run] streams, each its own
 *     backend instance; batches finished out of order): every output
 *     bit-identical to the reference, each instance logs the points it
 *     evaluated, none idle, and they add up to the run's; and the corrupt
 *     input of 2 among them gives the same outcome as there. */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static char bin[4096], lib[4096], data[4096];

static int fit(const char *out, const char *opts, const char *files,
               char **log)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd, "'%s' fit --templates '%s' -o '%s' %s %s", bin,
             lib, out, opts, files);
    return tu_run(cmd, log);
}

static void nap(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void same_as_ref(const char *dir, int i, const char *what)
{
    char ref[4200], stem[16], why[1024];
    snprintf(ref, sizeof ref, "%s/ref", data);
    snprintf(stem, sizeof stem, "c%d", i);
    long d = tu_outputs_diff(ref, dir, stem, why, sizeof why);
    CHECK_MSG(d == 0, "%s: c%d: %ld differences: %s", what, i, d, why);
}

/* Status-file lines "STATE<TAB>INPUT..." whose input ends in name. */
static int status_count(const char *path, const char *state,
                        const char *name)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t1 || !t2)
            continue;
        *t1 = *t2 = '\0';
        size_t ln = strlen(t1 + 1), lm = strlen(name);
        n += !strcmp(line, state) && ln >= lm &&
             !strcmp(t1 + 1 + ln - lm, name);
    }
    if (f)
        fclose(f);
    return n;
}

static void files_list(char *buf, size_t n, const char *extra)
{
    buf[0] = '\0';
    for (int i = 1; i <= 5; i++) {
        snprintf(buf + strlen(buf), n - strlen(buf), "'%s/c%d.fits' ", data,
                 i);
        if (i == 2 && extra)
            snprintf(buf + strlen(buf), n - strlen(buf), "'%s' ", extra);
    }
}

static void one_command(void)
{
    char out[4096], files[8192], *log = NULL, st[4200];
    snprintf(out, sizeof out, "%s", tu_tmpdir("stream_one"));
    snprintf(st, sizeof st, "%s/status.txt", out);
    files_list(files, sizeof files, NULL);
    char opts[4400];
    snprintf(opts, sizeof opts, "--batch-size 16 -j 2 --set "
             "output.status='%s'", st);
    int rc = fit(out, opts, files, &log);
    CHECK_MSG(rc == 0, "one command: exit %d\n%s", rc, log);
    /* 95 spectra in batches of 16 whatever the files: 6 batches */
    CHECK_MSG(tu_contains(log, "95 spectra in 5 files"), "%s", log);
    for (int i = 1; i <= 5; i++)
        same_as_ref(out, i, "one command");
    CHECK(status_count(st, "done", "c3.fits") == 1);
    free(log);
}

static void corrupt_input(const char *more)
{
    char out[4096], files[8192], bad[4200], *log = NULL, st[4200];
    snprintf(out, sizeof out, "%s", tu_tmpdir("stream_bad"));
    snprintf(bad, sizeof bad, "%s/cbad.fits", tu_tmpdir("stream_badin"));
    snprintf(st, sizeof st, "%s/status.txt", out);
    char cmd[12000];
    snprintf(cmd, sizeof cmd, "head -c 40000 '%s/c3.fits' > '%s'", data, bad);
    CHECK(tu_run(cmd, NULL) == 0);
    files_list(files, sizeof files, bad);
    char opts[4400];
    snprintf(opts, sizeof opts, "--batch-size 16 --set output.status='%s' "
             "%s", st, more);
    int rc = fit(out, opts, files, &log);
    CHECK_MSG(rc != 0, "a corrupt input must make the exit status non-zero");
    CHECK_MSG(tu_contains(log, "cbad.fits") && tu_contains(log, "truncated"),
              "the log names the bad file and why:\n%s", log);
    CHECK(status_count(st, "failed", "cbad.fits") == 1);
    CHECK(status_count(st, "done", ".fits") == 5);
    CHECK_MSG(tu_count_files(out, "cbad") == 0,
              "outputs of the bad input left");
    CHECK_MSG(tu_count_files(out, ".tmp.") == 0, "temporaries left");
    for (int i = 1; i <= 5; i++)
        same_as_ref(out, i, "corrupt input among good ones");
    free(log);
}

static void kill_and_resume(void)
{
    char out[4096], files[8192], st[4200], first[4200], *log = NULL;
    snprintf(out, sizeof out, "%s", tu_tmpdir("stream_kill"));
    snprintf(st, sizeof st, "%s/status.txt", out);
    snprintf(first, sizeof first, "%s/rvtab_c1.fits", out);
    files_list(files, sizeof files, NULL);
    char cmd[32768];
    snprintf(cmd, sizeof cmd, "'%s' fit --templates '%s' -o '%s' -j 1 "
             "--batch-size 8 --set output.status='%s' %s > '%s/kill.log' "
             "2>&1 & echo $!", bin, lib, out, st, files, out);
    char *pidtxt = NULL;
    CHECK(tu_run(cmd, &pidtxt) == 0);
    pid_t pid = pidtxt ? (pid_t)atol(pidtxt) : 0;
    free(pidtxt);
    struct stat sb;
    for (int k = 0; k < 1200 && stat(first, &sb) != 0; k++)
        nap(50);
    CHECK_MSG(pid > 0 && kill(pid, SIGKILL) == 0, "the run ended before it "
              "could be killed");
    nap(200);
    int kept = 0;
    for (int i = 1; i <= 5; i++) {
        char t[4200], stem[8];
        snprintf(stem, sizeof stem, "c%d", i);
        snprintf(t, sizeof t, "%s/rvtab_%s.fits", out, stem);
        if (stat(t, &sb) == 0) { /* an output in place is complete */
            kept++;
            same_as_ref(out, i, "after kill -9");
        }
    }
    CHECK_MSG(kept >= 1 && kept < 5, "%d outputs complete at the kill", kept);
    char opts[4400];
    snprintf(opts, sizeof opts, "--skip-existing --set output.status='%s'",
             st);
    int rc = fit(out, opts, files, &log);
    CHECK_MSG(rc == 0, "rerun: exit %d\n%s", rc, log);
    for (int i = 1; i <= 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d.fits", i);
        same_as_ref(out, i, "resumed");
        CHECK_MSG(status_count(st, "done", name) == 1, "%s not done once",
                  name);
    }
    CHECK_MSG(tu_count_files(out, ".tmp.") == 0, "temporaries left");
    CHECK(status_count(st, "pending", ".fits") == 0);
    free(log);
}

/* The points of "KEY N points" in the log, or -1. */
static long long points_after(const char *log, const char *key)
{
    const char *p = strstr(log, key);
    long long n = -1;
    if (!p || sscanf(p + strlen(key), " evaluated %lld points", &n) != 1)
        return -1;
    return n;
}

/* One run of ns streams with batches of bs; the order in which batches
 * finish varies from run to run, so the caller repeats it. */
static void streams_once(int ns, int bs)
{
    char out[4096], files[8192], opts[128], *log = NULL;
    snprintf(out, sizeof out, "%s", tu_tmpdir("stream_streams"));
    files_list(files, sizeof files, NULL);
    snprintf(opts, sizeof opts, "--overwrite --batch-size %d -j 2 --set "
             "run.streams=%d", bs, ns);
    int rc = fit(out, opts, files, &log);
    CHECK_MSG(rc == 0, "%s: exit %d\n%s", opts, rc, log);
    for (int i = 1; i <= 5; i++)
        same_as_ref(out, i, opts);
    long long sum = 0, tot = points_after(log, "rvfit: backend cpu on cpu "
                                               "(2 threads)");
    for (int k = 1; k <= ns; k++) {
        char key[64];
        snprintf(key, sizeof key, "fit stream %d: backend cpu on cpu "
                 "(2 threads)", k);
        long long n = points_after(log, key);
        CHECK_MSG(n > 0, "stream %d evaluated %lld points:\n%s", k, n, log);
        sum += n;
    }
    CHECK_MSG(tot > 0 && sum == tot, "streams' points %lld, the run's %lld",
              sum, tot);
    free(log);
}

static void streams(void)
{
    /* With read-ahead the first batch holds 64 spectra and the second the
     * other 31, so the second stream's batch is done first; then batches
     * of 4 on three streams, twice, finish in an order that varies.  A
     * writer that took batches as they finished failed each time
     * (tried). */
    streams_once(2, 100);
    for (int k = 0; k < 2; k++)
        streams_once(3, 4);
    corrupt_input("--batch-size 8 -j 2 --set run.streams=2");
}

int main(void)
{
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    snprintf(lib, sizeof lib, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    snprintf(data, sizeof data, "%s/stream", tu_env("RVFIT_TEST_DATA"));
    one_command();
    corrupt_input("");
    kill_and_resume();
    streams();
    return tu_finish("test_e2e_stream");
}
