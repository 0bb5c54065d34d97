/* test_e2e_faults_signal.c — SIGINT and SIGTERM in the middle of a run
 * (issue 15, "Faults and messages").  The five stream-fixture files are
 * fitted in batches of 4 on one thread; once the first input's rvtab is in
 * place the run gets the signal.  Demanded: exit status 128 + signal, a
 * message naming the signal and the files completed, no temporary left in
 * the output directory, the completed output identical to the reference
 * fit, the interrupted inputs without any output, and the status file
 * saying which were done and which were skipped.  Then once more with
 * every file in one batch, interrupted while that batch is fitted: the fit
 * stops without committing any output. */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "faultutil.h"
#include "testutil.h"

static char bin[4096], lib[4096], data[4096];

static void interrupt(int sig, const char *name)
{
    char out[4096], first[4200], logp[4200];
    snprintf(out, sizeof out, "%s", tu_tmpdir(name));
    snprintf(first, sizeof first, "%s/rvtab_c1.fits", out);
    snprintf(logp, sizeof logp, "%s.log", out);
    char in[5][4200];
    for (int i = 0; i < 5; i++)
        snprintf(in[i], sizeof in[i], "%s/c%d.fits", data, i + 1);
    char stset[4300];
    snprintf(stset, sizeof stset, "output.status=%s/status.txt", out);
    char *argv[] = {bin, "fit", "--templates", lib, "-o", out, "-j", "1",
                    "--batch-size", "4", "--set", stset, in[0], in[1],
                    in[2], in[3], in[4], NULL};
    pid_t pid = fu_spawn(argv, logp);
    CHECK_MSG(pid > 0, "cannot start %s", bin);
    if (pid <= 0)
        return;
    struct stat sb;
    int status = 0;
    pid_t w = 0;
    /* wait for the first output (or the end of the run) */
    while (stat(first, &sb) != 0 && (w = waitpid(pid, &status, WNOHANG)) == 0)
        fu_nap(20);
    CHECK_MSG(w == 0, "the run ended before the signal");
    if (w != 0)
        return;
    CHECK(kill(pid, sig) == 0);
    CHECK(waitpid(pid, &status, 0) == pid);
    char *log = fu_slurp(logp);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig,
              "%s: exit status %d (signalled: %d), want %d\n%s", name,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              WIFSIGNALED(status), 128 + sig, log ? log : "");
    char want[128];
    snprintf(want, sizeof want, "interrupted by %s; ",
             sig == SIGINT ? "SIGINT" : "SIGTERM");
    CHECK_MSG(log && tu_contains(log, want) &&
                  tu_contains(log, "complete, partial outputs removed"),
              "%s: message missing:\n%s", name, log ? log : "");
    CHECK_MSG(tu_count_files(out, ".tmp.") == 0, "%s: temporaries left",
              name);
    CHECK_MSG(tu_count_files(out, ".rvfit.lock") == 0, "%s: lock file "
              "left", name);
    int kept = 0;
    for (int i = 1; i <= 5; i++) {
        char t[4200], m[4200], stem[8], why[1024], ref[4200];
        snprintf(stem, sizeof stem, "c%d", i);
        snprintf(t, sizeof t, "%s/rvtab_%s.fits", out, stem);
        snprintf(m, sizeof m, "%s/rvmod_%s.fits", out, stem);
        int has_t = stat(t, &sb) == 0, has_m = stat(m, &sb) == 0;
        CHECK_MSG(has_t == has_m, "%s: c%d: rvtab %d, rvmod %d", name, i,
                  has_t, has_m);
        if (!has_t)
            continue;
        kept++;
        snprintf(ref, sizeof ref, "%s/ref", data);
        long d = tu_outputs_diff(ref, out, stem, why, sizeof why);
        CHECK_MSG(d == 0, "%s: completed output c%d differs from the "
                  "reference: %s", name, i, why);
    }
    CHECK_MSG(kept >= 1 && kept < 5, "%s: %d outputs complete", name, kept);
    char msg[64];
    snprintf(msg, sizeof msg, "%d file%s complete", kept,
             kept == 1 ? "" : "s");
    CHECK_MSG(log && tu_contains(log, msg), "%s: want '%s' in\n%s", name,
              msg, log ? log : "");
    char *stx = NULL, path[4300];
    snprintf(path, sizeof path, "%s/status.txt", out);
    stx = fu_slurp(path);
    /* done for the completed inputs; those the run had opened read
     * interrupted, the others skipped; none pending, running or failed */
    CHECK_MSG(stx && tu_contains(stx, "done\t") &&
                  (tu_contains(stx, "skipped\t") ||
                   tu_contains(stx, "\tinterrupted by SIG")) &&
                  !tu_contains(stx, "pending\t") &&
                  !tu_contains(stx, "running\t") &&
                  !tu_contains(stx, "failed\t"),
              "%s: status file:\n%s", name, stx ? stx : "(none)");
    int ndone = 0;
    for (const char *q = stx; q && (q = strstr(q, "done\t")); q++)
        ndone++;
    CHECK_MSG(ndone == kept, "%s: %d inputs done in the status file, %d "
              "outputs complete:\n%s", name, ndone, kept, stx ? stx : "");
    free(stx);
    free(log);
}

/* All five files in one batch of 128: the signal comes while that batch
 * is fitted, once the last input's temporaries exist and 0.3 s more.  On
 * one thread the temporaries exist 0.08 s into the run and the fit ends
 * at 1.7 s (2026-11-28, 95 stars; it took ~30 s when this test was
 * written, and a 2 s wait then outlived the run).  The fit must stop at
 * its next backend call rather than finish the batch and commit every
 * output. */
static void within_batch(void)
{
    char out[4096], last[4200], logp[4200];
    snprintf(out, sizeof out, "%s", tu_tmpdir("faults_inbatch"));
    snprintf(last, sizeof last, ".rvmod_c5.fits.tmp.");
    snprintf(logp, sizeof logp, "%s.log", out);
    char in[5][4200];
    for (int i = 0; i < 5; i++)
        snprintf(in[i], sizeof in[i], "%s/c%d.fits", data, i + 1);
    char *argv[] = {bin, "fit", "--templates", lib, "-o", out, "-j", "1",
                    "--batch-size", "128", in[0], in[1], in[2], in[3],
                    in[4], NULL};
    pid_t pid = fu_spawn(argv, logp);
    CHECK(pid > 0);
    if (pid <= 0)
        return;
    int status = 0;
    pid_t w = 0;
    while (tu_count_files(out, last) == 0 &&
           (w = waitpid(pid, &status, WNOHANG)) == 0)
        fu_nap(20);
    if (w == 0) {
        fu_nap(300); /* into the fit: reading and preparing are quick */
        w = waitpid(pid, &status, WNOHANG);
    }
    CHECK_MSG(w == 0, "the run ended before the signal");
    if (w != 0)
        return;
    CHECK(kill(pid, SIGINT) == 0);
    CHECK(waitpid(pid, &status, 0) == pid);
    char *log = fu_slurp(logp);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT,
              "exit status %d\n%s", WIFEXITED(status) ? WEXITSTATUS(status)
                                                      : -1, log ? log : "");
    CHECK_MSG(log && tu_contains(log, "interrupted by SIGINT; 0 files "
                                      "complete"), "%s", log ? log : "");
    CHECK_MSG(tu_count_files(out, "rvtab_") == 0 &&
                  tu_count_files(out, ".tmp.") == 0,
              "the interrupted batch left outputs or temporaries");
    free(log);
}

int main(void)
{
    snprintf(bin, sizeof bin, "%s", tu_env("RVFIT_BIN"));
    snprintf(lib, sizeof lib, "%s/lib", tu_env("RVFIT_TEST_DATA"));
    snprintf(data, sizeof data, "%s/stream", tu_env("RVFIT_TEST_DATA"));
    interrupt(SIGINT, "faults_sigint");
    interrupt(SIGTERM, "faults_sigterm");
    within_batch();
    return tu_finish("test_e2e_faults_signal");
}
