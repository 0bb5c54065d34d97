/* plot_layout.c — geometry of a fit figure (rvfit/plot.h): panel
 * rectangles and the data ranges they map.  Pure arithmetic, built with or
 * without Cairo, so that the frame a test checks is the one drawn. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"

void rvfit_plot_size(int narm, int *width, int *height)
{
    *width = PLOT_W;
    *height = PLOT_TITLE_H + (narm > 0 ? narm : 1) * PLOT_ARM_H +
              PLOT_XLAB_H + PLOT_ROW_H;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Flux range of the data panel: the 1st..99th percentile of the usable
 * flux (so that a few cosmic rays do not flatten the spectrum), widened
 * to the model and continuum, padded by 8%. */
int plot_data_range(const rvfit_plot_arm *A, double *lo, double *hi)
{
    float *v = malloc((A->npix ? A->npix : 1) * sizeof *v);
    if (!v)
        return RVFIT_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < A->npix; i++)
        if (A->ivar[i] > 0 && isfinite(A->flux[i]))
            v[n++] = A->flux[i];
    if (n == 0) {
        free(v);
        return RVFIT_ERR_INVALID;
    }
    qsort(v, n, sizeof *v, cmp_float);
    double a = v[(size_t)(0.01 * (double)(n - 1))];
    double b = v[(size_t)(0.99 * (double)(n - 1) + 0.5)];
    free(v);
    for (size_t i = 0; i < A->npix; i++) {
        if (A->ivar[i] <= 0)
            continue;
        const float *c[2] = {A->model, A->cont};
        for (int k = 0; k < 2; k++)
            if (c[k] && isfinite(c[k][i])) {
                a = fmin(a, c[k][i]);
                b = fmax(b, c[k][i]);
            }
    }
    double pad = b > a ? 0.08 * (b - a) : fmax(1e-3, 0.1 * fabs(a));
    *lo = a - pad;
    *hi = b + pad;
    return RVFIT_OK;
}

int rvfit_plot_frame_of(const rvfit_plot_spec *s, int arm, int resid,
                        rvfit_plot_frame *f, rvfit_err *err)
{
    if (arm < 0 || arm >= s->narm)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "plot: no arm %d", arm);
    const rvfit_plot_arm *A = &s->arm[arm];
    double top = PLOT_TITLE_H + arm * PLOT_ARM_H + PLOT_GAP;
    f->x0 = PLOT_LEFT;
    f->w = PLOT_W - PLOT_LEFT - PLOT_RIGHT;
    f->y0 = resid ? top + PLOT_DATA_H + PLOT_GAP : top;
    f->h = resid ? PLOT_RESID_H : PLOT_DATA_H;
    if (A->npix < 2)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "plot: arm %s has "
                             "fewer than 2 pixels", A->name);
    f->xmin = A->wave[0];
    f->xmax = A->wave[A->npix - 1];
    if (!(f->xmax > f->xmin) || !isfinite(f->xmax - f->xmin))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "plot: arm %s: "
                             "wavelengths do not increase", A->name);
    if (resid) {
        f->ymin = -RVFIT_PLOT_RESID_MAX;
        f->ymax = RVFIT_PLOT_RESID_MAX;
        return RVFIT_OK;
    }
    int rc = plot_data_range(A, &f->ymin, &f->ymax);
    if (rc == RVFIT_ERR_NOMEM)
        return rvfit_err_set(err, rc, "plot: out of memory");
    if (rc)
        return rvfit_err_set(err, rc, "plot: arm %s has no usable pixels",
                             A->name);
    return RVFIT_OK;
}

/* ---- the row under the arms: zoom panels and chi^2(v) -------------- */

/* Strong lines, vacuum rest wavelengths (Angstrom) and the window drawn
 * around them. */
static const struct {
    const char *name;
    double lo, hi;
    int n;
    double line[3];
} zoom_lines[RVFIT_PLOT_MAX_ZOOM] = {
    {"Ca II H&K", 3915, 3990, 2, {3934.78, 3969.59, 0}},
    {"Mg b", 5150, 5200, 3, {5168.76, 5174.13, 5185.05}},
    {"H\xce\xb1", 6535, 6595, 1, {6564.61, 0, 0}},
    {"Ca II triplet", 8480, 8685, 3, {8500.36, 8544.44, 8664.52}},
};

void plot_window(const rvfit_plot_arm *A, double lo, double hi, size_t *i0,
                 size_t *i1)
{
    size_t a = 0, b = A->npix;
    while (a < b && A->wave[a] < lo)
        a++;
    while (b > a && A->wave[b - 1] > hi)
        b--;
    *i0 = a, *i1 = b;
}

/* Usable pixels of A in [lo, hi]. */
static size_t usable_in(const rvfit_plot_arm *A, double lo, double hi)
{
    size_t i0, i1, n = 0;
    plot_window(A, lo, hi, &i0, &i1);
    for (size_t i = i0; i < i1; i++)
        n += A->ivar[i] > 0 && isfinite(A->flux[i]);
    return n;
}

int rvfit_plot_zooms(const rvfit_plot_spec *s, rvfit_plot_zoom *z)
{
    double v = s->res && isfinite(s->res->vrad) ? s->res->vrad : 0;
    double k = 1 + v / PLOT_C_KMS;
    int n = 0;
    for (int l = 0; l < RVFIT_PLOT_MAX_ZOOM; l++) {
        double lo = zoom_lines[l].lo * k, hi = zoom_lines[l].hi * k;
        double mid = 0.5 * (lo + hi);
        int best = -1;
        size_t most = 9; /* at least 10 usable pixels */
        for (int a = 0; a < s->narm; a++) {
            const rvfit_plot_arm *A = &s->arm[a];
            if (A->npix < 2 || mid < A->wave[0] ||
                mid > A->wave[A->npix - 1])
                continue;
            size_t u = usable_in(A, lo, hi);
            if (u > most)
                most = u, best = a;
        }
        if (best < 0)
            continue;
        const rvfit_plot_arm *A = &s->arm[best];
        z[n] = (rvfit_plot_zoom){zoom_lines[l].name, best,
                                 fmax(lo, A->wave[0]),
                                 fmin(hi, A->wave[A->npix - 1]),
                                 zoom_lines[l].n, {0, 0, 0}};
        for (int i = 0; i < zoom_lines[l].n; i++)
            z[n].line[i] = zoom_lines[l].line[i] * k;
        n++;
    }
    return n;
}

/* Column c of the row under the arms (ranges unset). */
static void row_panel(const rvfit_plot_spec *s, int c, rvfit_plot_frame *f)
{
    double cw = (double)(PLOT_W - PLOT_ROW_X0) / PLOT_ROW_COLS;
    int narm = s->narm > 0 ? s->narm : 1;
    f->x0 = PLOT_ROW_X0 + c * cw + PLOT_ROW_PADL;
    f->w = cw - PLOT_ROW_PADL - PLOT_ROW_PADR;
    f->y0 = PLOT_TITLE_H + narm * PLOT_ARM_H + PLOT_XLAB_H + PLOT_ROW_T;
    f->h = PLOT_ROW_PH;
    f->xmin = f->ymin = 0;
    f->xmax = f->ymax = 1;
}

int rvfit_plot_zoom_frame(const rvfit_plot_spec *s, int k,
                          rvfit_plot_frame *f, rvfit_err *err)
{
    rvfit_plot_zoom z[RVFIT_PLOT_MAX_ZOOM];
    int n = rvfit_plot_zooms(s, z);
    if (k < 0 || k >= n)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "plot: no zoom panel "
                             "%d (%d)", k, n);
    row_panel(s, k, f);
    const rvfit_plot_arm *A = &s->arm[z[k].arm];
    size_t i0, i1;
    plot_window(A, z[k].lo, z[k].hi, &i0, &i1);
    rvfit_plot_arm w = {A->name, i1 - i0, A->wave + i0, A->flux + i0,
                        A->ivar + i0, A->model ? A->model + i0 : NULL,
                        NULL};
    f->xmin = z[k].lo;
    f->xmax = z[k].hi;
    int rc = plot_data_range(&w, &f->ymin, &f->ymax);
    return rc ? rvfit_err_set(err, rc, "plot: zoom %s: no range",
                              z[k].name)
              : RVFIT_OK;
}

int rvfit_plot_chisq_frame(const rvfit_plot_spec *s, rvfit_plot_frame *f,
                           rvfit_err *err)
{
    row_panel(s, PLOT_ROW_COLS - 1, f);
    const rvfit_result *r = s->res;
    int n = r ? r->vscan_n : 0;
    if (n < 2 || n > RVFIT_VSCAN_MAX)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "no velocity scan");
    double mmin = INFINITY, mmax = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(r->vscan_m2lnl[i]))
            mmin = fmin(mmin, r->vscan_m2lnl[i]),
            mmax = fmax(mmax, r->vscan_m2lnl[i]);
    f->xmin = r->vscan_v[0];
    f->xmax = r->vscan_v[n - 1];
    if (!(mmax >= mmin) || !(f->xmax > f->xmin))
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "no velocity scan");
    double span = fmax(mmax - mmin, 1.0);
    f->ymin = -0.05 * span;
    f->ymax = 1.08 * span;
    return RVFIT_OK;
}

/* Parameter label for the title: the usual astronomical spelling of the
 * library's axis names, others as they are. */
const char *plot_param_label(const char *axis)
{
    static const char *map[][2] = {{"TEFF", "Teff"}, {"LOGG", "logg"},
                                   {"FEH", "[Fe/H]"},
                                   {"ALPHAFE", "[\xce\xb1/Fe]"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(axis, map[i][0]))
            return map[i][1];
    return axis;
}

void rvfit_warn_names(uint32_t warn, char *buf, size_t n)
{
    static const char *names[] = {"CHISQ", "RV", "RVERR", "PARAM", "VSINI",
                                  "BAD_SPECTRUM", "BAD_HESSIAN"};
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < sizeof names / sizeof *names && len < n; i++)
        if (warn & (1u << i)) {
            int k = snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
                             names[i]);
            len += k > 0 ? (size_t)k : 0;
        }
}
