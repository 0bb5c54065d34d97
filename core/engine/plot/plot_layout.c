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
    *height = PLOT_TITLE_H + (narm > 0 ? narm : 1) * PLOT_ARM_H;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Flux range of the data panel: the 1st..99th percentile of the usable
 * flux (so that a few cosmic rays do not flatten the spectrum), widened
 * to the model and continuum, padded by 8%. */
static int data_range(const rvfit_plot_arm *A, double *lo, double *hi)
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
    int rc = data_range(A, &f->ymin, &f->ymax);
    if (rc == RVFIT_ERR_NOMEM)
        return rvfit_err_set(err, rc, "plot: out of memory");
    if (rc)
        return rvfit_err_set(err, rc, "plot: arm %s has no usable pixels",
                             A->name);
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
