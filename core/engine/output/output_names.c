/* output_names.c — where the outputs of an input go
 * (rvfit/output.h): rvtab_<stem>.fits and rvmod_<stem>.fits, hidden part
 * outputs for files fitted in parts. */
#include <stdio.h>
#include <string.h>

#include "output_internal.h"

void out_stem(const char *input, char *stem, size_t n)
{
    const char *base = strrchr(input, '/');
    snprintf(stem, n, "%s", base ? base + 1 : input);
    static const char *ext[] = {".fits.gz", ".fits.fz", ".fits", ".fit"};
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t ls = strlen(stem), le = strlen(ext[i]);
        if (ls > le && !strcmp(stem + ls - le, ext[i])) {
            stem[ls - le] = '\0';
            break;
        }
    }
}

void rvfit_output_names(const char *outdir, const char *input, char *tab,
                        char *mod, size_t n)
{
    char stem[1024];
    out_stem(input, stem, sizeof stem);
    snprintf(tab, n, "%s/rvtab_%s.fits", outdir, stem);
    snprintf(mod, n, "%s/rvmod_%s.fits", outdir, stem);
}

void rvfit_output_part_names(const char *outdir, const char *input,
                             int part, int nparts, char *tab, char *mod,
                             size_t n)
{
    char stem[1024];
    out_stem(input, stem, sizeof stem);
    snprintf(tab, n, "%s/.rvtab_%s.fits.part%dof%d", outdir, stem, part,
             nparts);
    snprintf(mod, n, "%s/.rvmod_%s.fits.part%dof%d", outdir, stem, part,
             nparts);
}
