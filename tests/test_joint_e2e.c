/* test_joint_e2e.c — `rvfit fit --epochs joint` end to end on the
 * independent generator's per-exposure files (rvfit-indep epochs: 12
 * stars of 2-8 exposures over 3 spectra- files, a third of them
 * binaries; library of the indep_lib fixture):
 *  - the outputs do not depend on the order of the input files, the batch
 *    size, the thread count, read-ahead or (under MPI) the number of
 *    processes: RVTAB, RVEPOCH and every model image compared bitwise;
 *  - one RVTAB row per star and one RVEPOCH row per exposure, each
 *    exposure of the truth exactly once, NEPOCH its count;
 *  - objects of one spectrum (a 4-star coadd) get the single fit's
 *    numbers, bitwise;
 *  - an instrument without the 'epochs' extension is refused, naming it;
 *  - --skip-existing keeps the output, without --overwrite it is an
 *    error. */
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static const char *bin, *ind, *lib;
static char dir[1024];

/* rvfit fit --epochs joint into dir/OUT with OPTS and FILES. */
static int joint(const char *out, const char *opts, const char *files,
                 char **log)
{
    return tu_rvfit(log, "fit -t '%s' -o '%s/%s' --epochs joint %s %s", lib,
                    dir, out, opts, files);
}

static void same_outputs(const char *a, const char *b, const char *what)
{
    char ta[4200], tb[4200], ma[4200], mb[4200], why[1024] = "";
    snprintf(ta, sizeof ta, "%s/%s/rvtab_joint.fits", dir, a);
    snprintf(tb, sizeof tb, "%s/%s/rvtab_joint.fits", dir, b);
    snprintf(ma, sizeof ma, "%s/%s/rvmod_joint.fits", dir, a);
    snprintf(mb, sizeof mb, "%s/%s/rvmod_joint.fits", dir, b);
    static const char *const tabs[] = {"RVTAB", "RVEPOCH"};
    for (int i = 0; i < 2; i++) {
        long d = tu_table_diff(ta, tb, tabs[i], why, sizeof why);
        CHECK_MSG(d == 0, "%s: HDU %s: %ld differences: %s", what, tabs[i],
                  d, why);
    }
    static const char *const img[] = {"B_MODEL", "R_MODEL", "Z_MODEL",
                                      "B_WAVELENGTH", "Z_WAVELENGTH"};
    for (int i = 0; i < 5; i++) {
        long d = tu_image_diff(ma, mb, img[i], why, sizeof why);
        CHECK_MSG(d == 0, "%s: rvmod %s: %ld differences: %s", what, img[i],
                  d, why);
    }
    printf("%s: outputs identical\n", what);
}

/* Rows of RVTAB / RVEPOCH against the truth's stars and exposures. */
static void check_rows(void)
{
    char tab[4200], truth[4200];
    snprintf(tab, sizeof tab, "%s/a/rvtab_joint.fits", dir);
    snprintf(truth, sizeof truth, "%s/truth.fits", dir);
    long nr = 0, ne = 0, nt = 0, nx = 0, n2 = 0;
    double *rt = tu_read_col(tab, "RVTAB", "TARGETID", &nr);
    double *rn = tu_read_col(tab, "RVTAB", "NEPOCH", &n2);
    double *et = tu_read_col(tab, "RVEPOCH", "TARGETID", &ne);
    double *ee = tu_read_col(tab, "RVEPOCH", "EXPID", &n2);
    double *tt = tu_read_col(truth, "TRUTH", "TARGETID", &nt);
    double *xt = tu_read_col(truth, "EXPTRUTH", "TARGETID", &nx);
    double *xe = tu_read_col(truth, "EXPTRUTH", "EXPID", &n2);
    CHECK(rt && rn && et && ee && tt && xt && xe);
    CHECK_MSG(nr == nt && ne == nx, "%ld objects for %ld stars, %ld "
              "exposures for %ld", nr, nt, ne, nx);
    for (long i = 0; rt && xt && i < nr; i++) {
        long n = 0;
        for (long k = 0; k < nx; k++)
            n += xt[k] == rt[i];
        CHECK_MSG(rn[i] == n, "TARGETID %.0f: NEPOCH %.0f, %ld exposures",
                  rt[i], rn[i], n);
    }
    for (long k = 0; et && xt && k < nx; k++) {
        long n = 0;
        for (long i = 0; i < ne; i++)
            n += et[i] == xt[k] && ee[i] == xe[k];
        CHECK_MSG(n == 1, "exposure %.0f of %.0f: %ld RVEPOCH rows", xe[k],
                  xt[k], n);
    }
    CHECK(tu_read_key(tab, 1, "NOBJ") == nr);
    CHECK(tu_read_key(tab, 1, "NSPEC") == ne);
    free(rt), free(rn), free(et), free(ee), free(tt), free(xt), free(xe);
}

/* Every RVTAB column of the single fit that the joint RVTAB has too. */
static void check_single(void)
{
    static const char *const cols[] = {
        "VRAD", "VRAD_ERR", "VRAD_SKEW", "VRAD_KURT", "VSINI", "TEFF",
        "TEFF_ERR", "TEFF_ERR_INTERP", "LOGG", "LOGG_ERR", "FEH", "FEH_ERR",
        "ALPHAFE", "ALPHAFE_ERR", "CHISQ_TOT", "CHISQ_C_TOT", "CHISQ_RED",
        "NPIX_TOT", "CHISQ_B", "CHISQ_Z", "SN_R", "RVS_WARN"};
    char s[4200], j[4200];
    snprintf(s, sizeof s, "%s/s1/rvtab_co.fits", dir);
    snprintf(j, sizeof j, "%s/j1/rvtab_joint.fits", dir);
    long n1 = 0, n2 = 0;
    double *ts = tu_read_col(s, "RVTAB", "TARGETID", &n1);
    double *tj = tu_read_col(j, "RVTAB", "TARGETID", &n2);
    CHECK(ts && tj && n1 == 4 && n2 == 4);
    for (size_t c = 0; ts && tj && c < sizeof cols / sizeof *cols; c++) {
        double *a = tu_read_col(s, "RVTAB", cols[c], &n1);
        double *b = tu_read_col(j, "RVTAB", cols[c], &n2);
        for (long k = 0; a && b && k < n2; k++)
            for (long i = 0; i < n1; i++)
                if (ts[i] == tj[k])
                    CHECK_MSG(a[i] == b[k] || (isnan(a[i]) && isnan(b[k])),
                              "%s of %.0f: single %.17g, joint %.17g",
                              cols[c], tj[k], a[i], b[k]);
        free(a), free(b);
    }
    free(ts), free(tj);
    printf("objects of one spectrum: the single fit's numbers\n");
}

static void check_mpi(const char *files)
{
    const char *mpi = getenv("RVFIT_MPIEXEC");
    if (!mpi || !mpi[0]) {
        printf("rvfit built without MPI: no multi-process case\n");
        return;
    }
    char cmd[16384], *log = NULL;
    /* Open MPI leaks from components it unloads ("<unknown module>"
     * frames): no leak check for the ranks, as for the MPI tests. */
    snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
             "'%s' %s--oversubscribe -n 3 '%s' fit -t '%s' "
             "-o '%s/c' --epochs joint -j 1 --batch-size 4 %s", mpi,
             geteuid() == 0 ? "--allow-run-as-root " : "", bin, lib, dir,
             files);
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "mpirun -n 3: exit %d\n%s", rc, log);
    free(log);
    char c[4200];
    snprintf(c, sizeof c, "%s/c", dir);
    CHECK_MSG(tu_count_files(c, "part") == 0, "part outputs left in %s", c);
    same_outputs("a", "c", "3 MPI processes");
}

int main(void)
{
    bin = tu_env("RVFIT_BIN");
    ind = tu_env("RVFIT_INDEP_BIN");
    static char libbuf[4200];
    snprintf(libbuf, sizeof libbuf, "%s/indep_lib/lib",
             tu_env("RVFIT_TEST_TMP"));
    lib = libbuf;
    snprintf(dir, sizeof dir, "%.1000s", tu_tmpdir("joint_e2e"));
    char cmd[16384], *log = NULL;
    snprintf(cmd, sizeof cmd, "'%s' epochs --out '%s/ep' --truth "
             "'%s/truth.fits' --nstar 12 --seed 5 --nfile 3 --binary-frac "
             "0.35 --threads 2 && '%s' spectra --out '%s/co.fits' --truth "
             "'%s/co_truth.fits' --nstar 4 --seed 9 --threads 2", ind, dir,
             dir, ind, dir, dir);
    int rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 0, "rvfit-indep: exit %d\n%s", rc, log);
    char f012[4200], f201[4200], f1[4200], co[4200];
    snprintf(f012, sizeof f012, "'%s/ep/spectra-0.fits' "
             "'%s/ep/spectra-1.fits' '%s/ep/spectra-2.fits'", dir, dir, dir);
    snprintf(f201, sizeof f201, "'%s/ep/spectra-2.fits' "
             "'%s/ep/spectra-0.fits' '%s/ep/spectra-1.fits'", dir, dir, dir);
    snprintf(f1, sizeof f1, "'%s/ep/spectra-1.fits'", dir);
    snprintf(co, sizeof co, "'%s/co.fits'", dir);
    CHECK(joint("a", "-j 2 --batch-size 512", f012, &log) == 0);
    CHECK(tu_contains(log, "joint: 3 of 3 inputs read"));
    CHECK(joint("b", "-j 1 --batch-size 3 --set run.readahead=0", f201,
                &log) == 0);
    same_outputs("a", "b", "file order, batch size, threads, read-ahead");
    check_rows();
    check_mpi(f201);

    CHECK(tu_rvfit(&log, "fit -t '%s' -o '%s/s1' %s", lib, dir, co) == 0);
    CHECK(joint("j1", "", co, &log) == 0);
    check_single();

    /* the output exists: an error, or kept */
    snprintf(cmd, sizeof cmd, "'%s' fit -t '%s' -o '%s/a' --epochs joint %s",
             bin, lib, dir, f1);
    rc = tu_run(cmd, &log);
    CHECK_MSG(rc != 0 && tu_contains(log, "exists"), "existing output: "
              "exit %d\n%s", rc, log);
    CHECK(joint("a", "--skip-existing", f1, &log) == 0);
    CHECK(tu_contains(log, "kept"));
    same_outputs("a", "b", "after --skip-existing");
    /* no epochs from this instrument: refused, naming why */
    snprintf(cmd, sizeof cmd, "'%s' fit -t '%s' -o '%s/x' --epochs joint -i "
             "sdss %s", bin, lib, dir, f1);
    rc = tu_run(cmd, &log);
    CHECK_MSG(rc == 2 && tu_contains(log, "epochs") &&
                  tu_contains(log, "sdss"),
              "instrument without epochs: exit %d\n%s", rc, log);
    free(log);
    return tu_finish("test_joint_e2e");
}
