/* test_e2e_mpi_status.c — the status file of an MPI job killed outright
 * (issue 28).  The five stream-fixture files are fitted by `mpirun -n 2`
 * in batches of 4 (so files are cut into parts) with `--status FILE`, and
 * the whole job (mpirun and its ranks: every process of its session) is
 * killed with SIGKILL at several moments:
 *
 *   - the first run, once two rvtab files are in place;
 *   - reruns with --skip-existing: at once (before the skip scan: the
 *     file is still the first run's), as soon as the status file is
 *     replaced (right after the skip scan), while an output is being
 *     written (its temporary exists), and right after an rvtab appears.
 *
 * After each kill the status file must parse (one line per input, in
 * order, a known state) and agree with the disk: no input whose rvtab is
 * in place is pending, failed or skipped, and no input without one is
 * done.  A last rerun completes the job: every output bit-identical to the
 * reference fit, every input done, no part or temporary file left.
 *
 * Then one rank alone (rank 1) is killed with SIGKILL while it fits a
 * file; mpirun stops the job, and the input rank 1 was running must read
 * `interrupted` (or done, when it finished first), the inputs never
 * handed out pending or skipped. */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "faultutil.h"
#include "testutil.h"

#define NIN 5

static char bin[4096], lib[4096], data[4096], mpiexec[4096];
static char in[NIN][4200];
static int order[NIN]; /* the inputs of the job being run, in order */

static void set_order(int reversed)
{
    for (int k = 0; k < NIN; k++)
        order[k] = reversed ? NIN - 1 - k : k;
}

/* The session of process `pid` (from /proc/PID/stat), -1 when gone. */
static long session_of(long pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *c = strrchr(buf, ')'); /* after the command's name */
    char state;
    long ppid, pgrp, sid;
    if (!c || sscanf(c + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &sid)
                  != 4)
        return -1;
    return sid;
}

/* mpirun ... rvfit fit in a session of its own (so that the whole job can
 * be found and killed), its output into logp. */
static pid_t job_start(const char *out, int skip, const char *logp)
{
    char st[4300];
    snprintf(st, sizeof st, "%s/status.txt", out);
    char *argv[32];
    int k = 0;
    argv[k++] = mpiexec;
    if (geteuid() == 0)
        argv[k++] = "--allow-run-as-root";
    argv[k++] = "--oversubscribe";
    argv[k++] = "-n";
    argv[k++] = "2";
    argv[k++] = bin;
    argv[k++] = "fit";
    argv[k++] = "--templates";
    argv[k++] = lib;
    argv[k++] = "-o";
    argv[k++] = (char *)out;
    argv[k++] = "-j";
    argv[k++] = "1";
    argv[k++] = "--batch-size";
    argv[k++] = "4";
    argv[k++] = "--status";
    argv[k++] = st;
    if (skip)
        argv[k++] = "--skip-existing";
    for (int i = 0; i < NIN; i++)
        argv[k++] = in[order[i]];
    argv[k] = NULL;
    /* Open MPI keeps its session files under TMPDIR, and a job killed
     * with -9 cannot remove them: keep them beside the test's output. */
    char tmpd[4300];
    snprintf(tmpd, sizeof tmpd, "%s.mpitmp", out);
    mkdir(tmpd, 0755);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        setenv("TMPDIR", tmpd, 1);
        int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    /* the job is found by its session: wait until the child has one */
    for (int t = 0; pid > 0 && t < 500 && session_of(pid) != pid; t++)
        fu_nap(2);
    return pid;
}

/* Send sig to every process of session sid but the test; the number. */
static int signal_session(long sid, int sig)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == (long)getpid())
            continue;
        if (session_of(pid) == sid && kill((pid_t)pid, sig) == 0)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* kill -9 of the whole job: mpirun and its ranks. */
static void kill_job(pid_t pid)
{
    for (int t = 0; t < 50 && signal_session(pid, SIGKILL) > 0; t++)
        fu_nap(20);
    int status;
    waitpid(pid, &status, 0);
}

/* The rank-r process of the job in session sid (OMPI_COMM_WORLD_RANK in
 * its environment), or -1. */
static pid_t rank_pid(long sid, int r)
{
    DIR *d = opendir("/proc");
    pid_t found = -1;
    struct dirent *e;
    char want[48];
    snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", r);
    while (d && found < 0 && (e = readdir(d))) {
        char *end, p[64], env[16384];
        long pid = strtol(e->d_name, &end, 10);
        if (*end || session_of(pid) != sid)
            continue;
        snprintf(p, sizeof p, "/proc/%ld/environ", pid);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        size_t n = fread(env, 1, sizeof env - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i += strlen(env + i) + 1) {
            env[n] = '\0';
            if (!strcmp(env + i, want))
                found = (pid_t)pid;
        }
    }
    if (d)
        closedir(d);
    return found;
}

static int has_rvtab(const char *out, int i)
{
    char t[4300];
    struct stat sb;
    snprintf(t, sizeof t, "%s/rvtab_c%d.fits", out, i + 1);
    return stat(t, &sb) == 0;
}

/* The states of the status file into st[NIN], by input (0 when it does
 * not parse: a line per input, a known state, the inputs in the order of
 * this job or, before its first write, of the one before). */
static int read_status(const char *out, char st[NIN][16], char *why,
                       size_t nwhy)
{
    static const char *known[] = {"pending", "running", "done", "failed",
                                  "skipped", "interrupted"};
    char p[4300], line[8192];
    int seq[NIN];
    snprintf(p, sizeof p, "%s/status.txt", out);
    FILE *f = fopen(p, "r");
    if (!f) {
        snprintf(why, nwhy, "no status file");
        return 0;
    }
    int n = 0, ok = 1;
    while (ok && fgets(line, sizeof line, f)) {
        char *tab1 = strchr(line, '\t');
        char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        size_t len = strlen(line);
        ok = n < NIN && tab1 && tab2 && len && line[len - 1] == '\n';
        if (!ok) {
            snprintf(why, nwhy, "line %d malformed: %s", n + 1, line);
            break;
        }
        *tab1 = *tab2 = '\0';
        int k = 0, i = 0;
        while (k < 6 && strcmp(line, known[k]))
            k++;
        while (i < NIN && strcmp(tab1 + 1, in[i]))
            i++;
        for (int j = 0; j < n; j++)
            i = seq[j] == i ? NIN : i; /* listed twice */
        ok = k < 6 && i < NIN;
        if (!ok) {
            snprintf(why, nwhy, "line %d: state '%s', input '%s'", n + 1,
                     line, tab1 + 1);
            break;
        }
        seq[n++] = i;
        snprintf(st[i], 16, "%s", line);
    }
    fclose(f);
    if (ok && n != NIN) {
        snprintf(why, nwhy, "%d lines for %d inputs", n, NIN);
        ok = 0;
    }
    int same = 1, rev = 1;
    for (int j = 0; ok && j < NIN; j++)
        same &= seq[j] == order[j], rev &= seq[j] == order[NIN - 1 - j];
    if (ok && !same && !rev) {
        snprintf(why, nwhy, "the inputs are not in the order of a job");
        ok = 0;
    }
    return ok;
}

/* The status file after a kill: it parses and agrees with the outputs. */
static void check_status(const char *out, const char *moment)
{
    char st[NIN][16], why[8300] = "";
    char *text = NULL, p[4300];
    snprintf(p, sizeof p, "%s/status.txt", out);
    text = fu_slurp(p);
    int ok = read_status(out, st, why, sizeof why);
    CHECK_MSG(ok, "%s: the status file does not parse: %s\n%s", moment, why,
              text ? text : "");
    printf("%-34s", moment);
    for (int i = 0; ok && i < NIN; i++)
        printf(" c%d %s%s", i + 1, st[i], has_rvtab(out, i) ? "(rvtab)" : "");
    printf("\n");
    for (int i = 0; ok && i < NIN; i++) {
        int done = has_rvtab(out, i);
        CHECK_MSG(!done || (strcmp(st[i], "pending") &&
                            strcmp(st[i], "failed") &&
                            strcmp(st[i], "skipped")),
                  "%s: c%d is complete on disk but listed '%s':\n%s", moment,
                  i + 1, st[i], text ? text : "");
        CHECK_MSG(done || strcmp(st[i], "done"),
                  "%s: c%d listed done without its rvtab:\n%s", moment,
                  i + 1, text ? text : "");
    }
    free(text);
}

static time_t status_ino(const char *out)
{
    char p[4300];
    struct stat sb;
    snprintf(p, sizeof p, "%s/status.txt", out);
    return stat(p, &sb) == 0 ? (time_t)sb.st_ino : 0;
}

static int count_rvtab(const char *out)
{
    int n = 0;
    for (int i = 0; i < NIN; i++)
        n += has_rvtab(out, i);
    return n;
}

enum { AT_ONCE, AT_FIRST_WRITE, AT_TEMP, AT_NEW_RVTAB, AT_TWO_RVTAB };

/* Run (a rerun with skip), kill -9 the whole job at moment `at`, check. */
static void kill_at(const char *out, int skip, int at, const char *moment)
{
    char logp[4300];
    snprintf(logp, sizeof logp, "%s.log", out);
    time_t ino0 = status_ino(out);
    int n0 = count_rvtab(out);
    pid_t pid = job_start(out, skip, logp);
    CHECK(pid > 0);
    int status = 0, ended = 0;
    for (int t = 0; t < 12000; t++) { /* 2 minutes at most */
        int hit = 0;
        switch (at) {
        case AT_ONCE: hit = 1; break;
        case AT_FIRST_WRITE: hit = status_ino(out) != ino0; break;
        case AT_TEMP:
            hit = tu_count_files(out, ".rvtab_") > 0 &&
                  tu_count_files(out, ".tmp.") > 0;
            break;
        case AT_NEW_RVTAB: hit = count_rvtab(out) > n0; break;
        case AT_TWO_RVTAB: hit = count_rvtab(out) >= 2; break;
        }
        if (hit)
            break;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            ended = 1;
            break;
        }
        fu_nap(at == AT_FIRST_WRITE ? 1 : 10);
    }
    if (!ended)
        kill_job(pid);
    if (ended) /* the moment never came: the job finished; still checked */
        printf("note: %s: the job ended first\n", moment);
    check_status(out, moment);
}

static void whole_job(void)
{
    char out[4096];
    snprintf(out, sizeof out, "%s", tu_tmpdir("mpi_status_kill"));
    /* The first run takes the inputs in the reverse order, so that the
     * outputs it leaves belong to the last inputs of the reruns, which
     * reach them last: a rerun that listed them pending until then would
     * show it at its first write. */
    set_order(1);
    kill_at(out, 0, AT_TWO_RVTAB, "first run, two outputs in place");
    set_order(0);
    kill_at(out, 1, AT_ONCE, "rerun, killed at once");
    kill_at(out, 1, AT_FIRST_WRITE, "rerun, after the skip scan");
    kill_at(out, 1, AT_TEMP, "rerun, during a write");
    kill_at(out, 1, AT_NEW_RVTAB, "rerun, just after a commit");
    /* the last rerun completes the job */
    char logp[4300], *log = NULL, st[NIN][16], why[8300];
    snprintf(logp, sizeof logp, "%s.log", out);
    pid_t pid = job_start(out, 1, logp);
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    log = fu_slurp(logp);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "final rerun: status %d\n%s", status, log ? log : "");
    free(log);
    CHECK(read_status(out, st, why, sizeof why));
    char ref[4200];
    snprintf(ref, sizeof ref, "%s/ref", data);
    for (int i = 0; i < NIN; i++) {
        char stem[8];
        snprintf(stem, sizeof stem, "c%d", i + 1);
        CHECK_MSG(!strcmp(st[i], "done"), "c%d: %s after the last rerun",
                  i + 1, st[i]);
        long d = tu_outputs_diff(ref, out, stem, why, sizeof why);
        CHECK_MSG(d == 0, "c%d differs from the reference: %s", i + 1, why);
    }
    CHECK_MSG(tu_count_files(out, ".part") == 0 &&
                  tu_count_files(out, ".tmp.") == 0,
              "part or temporary files left after the last rerun");
}

/* Does the status text list input `name` running on rank 1? */
static int on_rank1(const char *text, const char *name)
{
    char want[4300];
    snprintf(want, sizeof want, "running\t%.4199s\t", name);
    const char *l = strstr(text, want);
    if (!l)
        return 0;
    l += strlen(want);
    size_t n = strcspn(l, "\n");
    char d[256];
    snprintf(d, sizeof d, "%.*s", (int)(n < 255 ? n : 255), l);
    if (!strcmp(d, "rank 1"))
        return 1;
    if (strncmp(d, "ranks ", 6))
        return 0;
    for (char *save = NULL, *t = strtok_r(d + 6, ", ", &save); t;
         t = strtok_r(NULL, ", ", &save))
        if (!strcmp(t, "1"))
            return 1;
    return 0;
}

/* kill -9 of rank 1 while it fits a file. */
static void one_rank(void)
{
    char out[4096], logp[4300], p[4300];
    snprintf(out, sizeof out, "%s", tu_tmpdir("mpi_status_rank"));
    set_order(0);
    snprintf(logp, sizeof logp, "%s.log", out);
    snprintf(p, sizeof p, "%s/status.txt", out);
    pid_t pid = job_start(out, 0, logp);
    CHECK(pid > 0);
    int victim = -1, status = 0;
    char before[NIN][16] = {{0}}, why[8300];
    /* wait for an input running on rank 1 (alone, or with others on the
     * parts of a file: "ranks 0, 1") */
    for (int t = 0; t < 6000 && victim < 0; t++) {
        char *text = fu_slurp(p);
        for (int i = 0; text && i < NIN; i++)
            if (on_rank1(text, in[i]) &&
                read_status(out, before, why, sizeof why))
                victim = i;
        free(text);
        if (victim < 0)
            fu_nap(10);
    }
    pid_t r1 = rank_pid(pid, 1);
    CHECK_MSG(victim >= 0 && r1 > 0, "no input running on rank 1 found "
              "(victim %d, pid %d)", victim, (int)r1);
    if (r1 > 0)
        kill(r1, SIGKILL);
    /* mpirun stops the job; give it 60 s */
    int ended = 0;
    for (int t = 0; t < 3000 && !ended; t++) {
        ended = waitpid(pid, &status, WNOHANG) == pid;
        if (!ended)
            fu_nap(20);
    }
    CHECK_MSG(ended, "mpirun did not stop the job after rank 1 died");
    if (!ended)
        kill_job(pid);
    signal_session(pid, SIGKILL); /* ranks left behind, if any */
    check_status(out, "rank 1 killed");
    char st[NIN][16];
    char *text = fu_slurp(p);
    int ok = read_status(out, st, why, sizeof why);
    CHECK(ok);
    for (int i = 0; ok && i < NIN; i++) {
        if (i == victim)
            CHECK_MSG(!strcmp(st[i], "interrupted") ||
                          (!strcmp(st[i], "done") && has_rvtab(out, i)),
                      "c%d, running on the killed rank, reads '%s':\n%s",
                      i + 1, st[i], text ? text : "");
        if (!strcmp(before[i], "pending") && !has_rvtab(out, i))
            CHECK_MSG(!strcmp(st[i], "pending") ||
                          !strcmp(st[i], "skipped") ||
                          !strcmp(st[i], "interrupted"),
                      "c%d, not reached, reads '%s':\n%s", i + 1, st[i],
                      text ? text : "");
    }
    free(text);
}

int main(void)
{
    const char *m = getenv("RVFIT_MPIEXEC");
    if (!m || !m[0])
        tu_skip("rvfit was built without MPI (install libopenmpi-dev and "
                "openmpi-bin, then reconfigure)");
    snprintf(mpiexec, sizeof mpiexec, "%s", m);
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    snprintf(lib, sizeof lib, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    snprintf(data, sizeof data, "%s/stream", tu_env("RVFIT_TEST_DATA"));
    for (int i = 0; i < NIN; i++)
        snprintf(in[i], sizeof in[i], "%s/c%d.fits", data, i + 1);
    whole_job();
    one_rank();
    return tu_finish("test_e2e_mpi_status");
}
