/* test_e2e_sdss_batch.c — batches come from the core, not from a list
 * file: 40 one-spectrum BOSS spec files (a synthetic set) fitted in one
 * command must make no more backend calls than the same 40 spectra as one
 * list input (within 10 %; before batches spanned files, each file was a
 * batch of one and the calls scaled with the files), and give identical
 * results; a file fitted alone gives the same result too, so that padding
 * a shorter spectrum to a batch's longest never changes it. */
#include <string.h>

#include "testutil.h"

#define NSTAR 40

static char dir[2048];

static const char *const cols[] = {"VRAD", "VRAD_ERR", "VRAD_SKEW",
                                   "VRAD_KURT", "VSINI", "TEFF", "TEFF_ERR",
                                   "LOGG", "FEH", "ALPHAFE", "CHISQ_TOT",
                                   "CHISQ_C_TOT", "RVS_WARN"};
#define NCOL (sizeof cols / sizeof *cols)

/* Row k of the list's rvtab against row 0 of spectrum k's own rvtab. */
static long compare(const char *list_tab, const char *outdir, long k)
{
    char tab[4200];
    snprintf(tab, sizeof tab, "%s/rvtab_spec-0000-00100-%04ld.fits", outdir,
             k);
    long bad = 0;
    for (size_t c = 0; c < NCOL; c++) {
        long n1 = 0, n2 = 0;
        double *a = tu_read_col(list_tab, "RVTAB", cols[c], &n1);
        double *b = tu_read_col(tab, "RVTAB", cols[c], &n2);
        int same = a && b && n1 == NSTAR && n2 == 1 &&
                   (memcmp(&a[k], &b[0], sizeof(double)) == 0 ||
                    (isnan(a[k]) && isnan(b[0])));
        if (!same && bad++ == 0)
            fprintf(stderr, "spectrum %ld, %s: list %.17g, file %.17g\n", k,
                    cols[c], a && n1 > k ? a[k] : NAN, b && n2 ? b[0] : NAN);
        free(a), free(b);
    }
    return bad;
}

int main(void)
{
    const char *data = tu_env("RVFIT_TEST_DATA");
    char *log = NULL, *loglist = NULL, *logfiles = NULL, files[40000] = "";
    snprintf(dir, sizeof dir, "%s", tu_tmpdir("sdss_batch"));
    char ini[4096];
    snprintf(ini, sizeof ini, "%s/sdss.ini", dir);
    FILE *f = fopen(ini, "w");
    fprintf(f, "[instrument.sdss]\nlam_max = 9900\n");
    fclose(f);
    if (tu_rvfit(&log, "templates --grid %s/grid -i sdss -c %s -j 2 --out "
                 "%s/lib", data, ini, dir) ||
        tu_rvfit(&log, "mock spectra -i sdss -n %d --seed 3 -c %s --out "
            "%s/boss.list --truth %s/truth.fits", NSTAR, ini, dir, dir))
        return tu_finish("test_e2e_sdss_batch");
    if (tu_rvfit(&loglist, "fit -t %s/lib -i sdss -c %s -j 2 -o %s/list "
            "%s/boss.list", dir, ini, dir, dir))
        return tu_finish("test_e2e_sdss_batch");
    for (int k = 0; k < NSTAR; k++)
        snprintf(files + strlen(files), sizeof files - strlen(files),
                 " '%s/boss/spec-0000-00100-%04d.fits'", dir, k);
    if (tu_rvfit(&logfiles, "fit -t %s/lib -i sdss -c %s -j 2 -o "
                 "%s/files%s", dir, ini, dir, files))
        return tu_finish("test_e2e_sdss_batch");
    long cl = tu_backend_calls(loglist), cf = tu_backend_calls(logfiles);
    printf("backend calls: list %ld, %d files in one command %ld\n", cl,
           NSTAR, cf);
    CHECK_MSG(cl > 0 && cf > 0 && (double)cf <= 1.10 * (double)cl,
              "%ld calls for the files vs %ld for the list", cf, cl);
    char ltab[4200], fdir[4200];
    snprintf(ltab, sizeof ltab, "%s/list/rvtab_boss.list.fits", dir);
    snprintf(fdir, sizeof fdir, "%s/files", dir);
    long bad = 0;
    for (long k = 0; k < NSTAR; k++)
        bad += compare(ltab, fdir, k);
    CHECK_MSG(bad == 0, "%ld values differ between list and files", bad);
    /* Spectrum 17 alone, in a batch of its own length. */
    if (!tu_rvfit(&log, "fit -t %s/lib -i sdss -c %s -j 2 -o %s/alone "
             "%s/boss/spec-0000-00100-0017.fits", dir, ini, dir, dir)) {
        char alone[4200];
        snprintf(alone, sizeof alone, "%s/alone", dir);
        CHECK_MSG(compare(ltab, alone, 17) == 0, "alone differs from list");
    }
    free(log), free(loglist), free(logfiles);
    return tu_finish("test_e2e_sdss_batch");
}
