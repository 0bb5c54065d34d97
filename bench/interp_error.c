/* interp_error.c — interpolation error without fit noise: the templates an
 * interpolator gives at the models of a finer grid, against those models
 * (docs/benchmarks.md, "Template interpolators: simplex and pca").
 *
 * The `std` synthetic grid holds the `small` grid's nodes and the
 * midpoints between them in TEFF and LOGG, so a library built from `std`
 * has, at every one of its models that is not a node of a `small`
 * library, the exact template the `small` library's interpolator should
 * give there.  For each such model (inside the small library's axes) this
 * prints the rms difference over every pixel of every arm, summarised as
 * median and 90th percentile per class (midpoint in TEFF only, LOGG only,
 * both), and the floor: the difference at the shared nodes (template
 * preparation from differently sampled inputs).
 *
 * Build (from the repository root, after building rvfit in build/):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L bench/interp_error.c \
 *      -Icore/sdk/include -Icore/engine/include -Lbuild/core -lrvfit \
 *      -lrvfit_sdk -lm -Wl,-rpath,$PWD/build/core -o build/interp_error
 * Usage: interp_error FINE_LIB LIB...
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/interp.h"
#include "rvfit/library_io.h"

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, dcmp);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

/* Node index of x on axis ax, or -1 (tolerance 1e-9 in scaled units). */
static int on_node(const rvfit_axis *ax, double x)
{
    for (int k = 0; k < ax->nnode; k++)
        if (fabs(ax->node[k] - x) < 1e-9)
            return k;
    return -1;
}

/* rms over every arm of the template of lib/ip at theta minus fine model
 * m. */
static double rms_error(const rvfit_interpolator *ip,
                        const rvfit_library *fine, size_t m,
                        const double *theta, double *penalty)
{
    const rvfit_library *lib = ip->lib;
    uint32_t idx[RVFIT_MAX_STENCIL];
    double w[RVFIT_MAX_STENCIL], pen = 0.0, ss = 0.0;
    size_t n = 0;
    int nc = rvfit_interp_stencil(ip, theta, idx, w, &pen);
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *la = &lib->arm[a], *fa = &fine->arm[a];
        for (size_t j = 0; j < la->npix; j++) {
            double s = nc ? 0.0 : 1.0;
            for (int k = 0; k < nc; k++)
                s += w[k] * (double)la->flux[idx[k] * la->npix + j];
            if (lib->log_flux && nc)
                s = exp(s);
            double f = fa->flux[m * fa->npix + j];
            if (fine->log_flux)
                f = exp(f);
            ss += (s - f) * (s - f);
            n++;
        }
    }
    *penalty = pen;
    return sqrt(ss / (double)n);
}

static void one(const rvfit_library *fine, const char *path)
{
    rvfit_library lib;
    rvfit_interpolator ip;
    rvfit_err err;
    if (rvfit_library_open(&lib, &ip, path, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        exit(1);
    }
    double *e[6];
    size_t ne[6] = {0, 0, 0, 0, 0, 0};
    for (int c = 0; c < 6; c++)
        e[c] = malloc(fine->nmodel * sizeof(double));
    for (size_t m = 0; m < fine->nmodel; m++) {
        if (!fine->exists[m])
            continue;
        double th[RVFIT_MAX_PARAMS];
        size_t r = m;
        int inside = 1, off[RVFIT_MAX_PARAMS], offn = 0;
        for (int p = fine->nparam - 1; p >= 0; p--) {
            int nn = fine->axis[p].nnode;
            th[p] = fine->axis[p].node[r % (size_t)nn];
            r /= (size_t)nn;
        }
        for (int p = 0; p < fine->nparam; p++) {
            const rvfit_axis *ax = &lib.axis[p];
            inside &= th[p] >= ax->node[0] - 1e-9 &&
                      th[p] <= ax->node[ax->nnode - 1] + 1e-9;
            off[p] = on_node(ax, th[p]) < 0;
            offn += off[p];
        }
        if (!inside)
            continue;
        /* class: 0 node present (floor), 1 TEFF only, 2 LOGG only, 3
         * both, 4 a node removed from lib */
        int c = offn == 0 ? 0 : off[0] && off[1] ? 3 : off[0] ? 1 : 2;
        if (offn == 0) {
            size_t lm = 0;
            for (int p = 0; p < lib.nparam; p++)
                lm = lm * (size_t)lib.axis[p].nnode +
                     (size_t)on_node(&lib.axis[p], th[p]);
            c = lib.exists[lm] ? 0 : 4;
        }
        if (offn > (off[0] + off[1]))
            continue; /* off-node on another axis: not in std/small */
        double pen = 0.0, er = rms_error(&ip, fine, m, th, &pen);
        if (pen > 1e-6) /* beyond the hull (or a cell of holes) */
            c = 5;
        e[c][ne[c]++] = er;
    }
    static const char *cls[6] = {"nodes present (floor)", "TEFF midpoints",
                                 "LOGG midpoints", "both midpoints",
                                 "nodes removed", "penalised (beyond hull)"};
    for (int c = 0; c < 6; c++) {
        printf("| %s | %s | %s | %zu | %.2e | %.2e |\n", path,
               rvfit_interp_name(&ip), cls[c], ne[c],
               pct(e[c], ne[c], 0.5), pct(e[c], ne[c], 0.9));
        free(e[c]);
    }
    rvfit_interp_close(&ip);
    rvfit_library_free(&lib);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: interp_error FINE_LIB LIB...\n");
        return 2;
    }
    rvfit_library fine;
    rvfit_err err;
    if (rvfit_library_load(&fine, argv[1], &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("| library | interpolator | points | n | median rms | 90%% |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int i = 2; i < argc; i++)
        one(&fine, argv[i]);
    rvfit_library_free(&fine);
    return 0;
}
