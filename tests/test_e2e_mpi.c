/* test_e2e_mpi.c — one job over several MPI processes (Open MPI): the five
 * DESI files of fixture_stream.sh fitted under `mpirun -n 2` and `-n 3`
 * with batches of 16 spectra, so that the files larger than a batch are
 * cut into parts fitted by different ranks and joined again.  Every output
 * must be bit-identical to the one-file-per-command reference, the status
 * file (written by rank 0) must list every input as done, the log must
 * name ranks and end with the job profile, and no part or temporary file
 * may be left.  Also: one file for three ranks (ranks without work), each
 * taking its share of the node's cores when -j is not given. */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char bin[4096], lib[4096], data[4096], mpiexec[4096];

static int mpi_fit_j(int np, const char *out, const char *files,
                     const char *threads, char **log)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd, "'%s' %s--oversubscribe -n %d '%s' fit "
             "--templates '%s' -o '%s' %s --batch-size 16 --set "
             "output.status='%s/status.txt' %s", mpiexec,
             geteuid() == 0 ? "--allow-run-as-root " : "", np, bin, lib, out,
             threads, out, files);
    return tu_run(cmd, log);
}

static int mpi_fit(int np, const char *out, const char *files, char **log)
{
    return mpi_fit_j(np, out, files, "-j 1", log);
}

static void job(int np)
{
    char out[4096], files[8192] = "", name[32], *log = NULL;
    snprintf(name, sizeof name, "mpi_n%d", np);
    snprintf(out, sizeof out, "%s", tu_tmpdir(name));
    for (int i = 1; i <= 5; i++)
        snprintf(files + strlen(files), sizeof files - strlen(files),
                 "'%s/c%d.fits' ", data, i);
    int rc = mpi_fit(np, out, files, &log);
    CHECK_MSG(rc == 0, "mpirun -n %d: exit %d\n%s", np, rc, log);
    CHECK_MSG(tu_contains(log, "rank 1 ") && tu_contains(log, "job profile")
              && tu_contains(log, "in parts"),
              "-n %d: ranks named, files cut, job profile:\n%s", np, log);
    char ref[4200], why[1024], stem[8], st[4200];
    snprintf(ref, sizeof ref, "%s/ref", data);
    for (int i = 1; i <= 5; i++) {
        snprintf(stem, sizeof stem, "c%d", i);
        long d = tu_outputs_diff(ref, out, stem, why, sizeof why);
        CHECK_MSG(d == 0, "-n %d: c%d: %ld differences: %s", np, i, d, why);
    }
    snprintf(st, sizeof st, "%s/status.txt", out);
    char cmd[4400], *done = NULL;
    snprintf(cmd, sizeof cmd, "grep -c '^done' '%s'", st);
    tu_run(cmd, &done);
    CHECK_MSG(done && atoi(done) == 5, "-n %d: status lists %s done", np,
              done ? done : "?");
    free(done);
    CHECK_MSG(tu_count_files(out, ".part") == 0 &&
                  tu_count_files(out, ".tmp.") == 0,
              "-n %d: part or temporary files left", np);
    free(log);
}

static void fewer_files_than_ranks(void)
{
    char out[4096], files[4200], *log = NULL, ref[4200], why[1024];
    snprintf(out, sizeof out, "%s", tu_tmpdir("mpi_one"));
    snprintf(files, sizeof files, "'%s/c1.fits'", data);
    /* no -j: each rank takes its share of the node's cores, and says so */
    int rc = mpi_fit_j(3, out, files, "", &log);
    CHECK_MSG(rc == 0, "one file, three ranks: exit %d\n%s", rc, log);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (int r = 0; r < 3; r++) {
        long share = cores / 3 + (r < cores % 3 ? 1 : 0);
        char want[160];
        snprintf(want, sizeof want, "rank %d rvfit: %ld worker thread%s: "
                 "this node's %ld cores shared by its 3 ranks", r,
                 share > 0 ? share : 1, share > 1 ? "s" : "", cores);
        CHECK_MSG(tu_contains(log, want), "rank %d: no '%s' in\n%s", r,
                  want, log);
    }
    snprintf(ref, sizeof ref, "%s/ref", data);
    CHECK(tu_outputs_diff(ref, out, "c1", why, sizeof why) == 0);
    free(log);
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
    job(2);
    job(3);
    fewer_files_than_ranks();
    return tu_finish("test_e2e_mpi");
}
