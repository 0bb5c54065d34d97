/* cpu_model.c — the model of one arm at one point (physics.h steps a-d):
 * interpolated template over the pixel range the data need, rotation,
 * Doppler shift by Keys cubic convolution, band matrix.  Loops run over
 * contiguous double arrays so that the compiler vectorizes them. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

/* Same formula as rvfit_cubic_weights, inlined for the per-pixel loop. */
static inline void cpu_cubic(double t, double w[4])
{
    double t2 = t * t, t3 = t2 * t;
    w[0] = 0.5 * (-t3 + 2.0 * t2 - t);
    w[1] = 0.5 * (3.0 * t3 - 5.0 * t2 + 2.0);
    w[2] = 0.5 * (-3.0 * t3 + 4.0 * t2 + t);
    w[3] = 0.5 * (t3 - t2);
}

static long cpu_clampl(long x, long lo, long hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

void cpu_stencil_of(const cpu_state *st, const rvfit_point *p,
                    cpu_stencil *sc)
{
    sc->penalty = 0.0;
    sc->nc = 0;
    sc->flat = 1;
    if (p->flags & RVFIT_PT_CONTINUUM)
        return;
    sc->nc = rvfit_library_stencil(&st->lib, p->theta, sc->corner,
                                   sc->weight, &sc->penalty);
    sc->flat = sc->nc == 0;
}

void cpu_range_of(const cpu_state *st, int a, size_t s, int all,
                  cpu_range *r)
{
    const cpu_arm *ca = &st->arm[a];
    long n = (long)ca->npix, hb = ca->ndiag / 2;
    r->i0 = all ? 0 : ca->first[s];
    r->i1 = all ? n - 1 : ca->last[s];
    r->j0 = cpu_clampl(r->i0 - hb, 0, n - 1);
    r->j1 = cpu_clampl(r->i1 + hb, 0, n - 1);
}

/* Interpolate library pixels [l0, l1] into dst[0 .. l1-l0]. */
static void cpu_interp(const rvfit_lib_arm *la, const cpu_stencil *sc,
                       long l0, long l1, double *dst)
{
    size_t n = (size_t)(l1 - l0 + 1);
    const float *f0 = la->flux + sc->corner[0] * la->npix + l0;
    double w0 = sc->weight[0];
    for (size_t j = 0; j < n; j++)
        dst[j] = w0 * (double)f0[j];
    for (int k = 1; k < sc->nc; k++) {
        const float *fk = la->flux + sc->corner[k] * la->npix + l0;
        double wk = sc->weight[k];
        for (size_t j = 0; j < n; j++)
            dst[j] += wk * (double)fk[j];
    }
}

void cpu_template(const cpu_state *st, int a, size_t s, const cpu_stencil *sc,
                  double vsini, double dmin, double dmax, const cpu_range *r,
                  cpu_scratch *w, cpu_tmpl *tp)
{
    const cpu_arm *ca = &st->arm[a];
    const rvfit_lib_arm *la = &st->lib.arm[ca->lib_arm];
    tp->flat = sc->flat;
    if (sc->flat)
        return;
    const double *u = ca->u + (ca->wave_per_spec ? s * ca->npad : 0);
    long nt = (long)la->npix;
    tp->inv_dlnl = 1.0 / la->dlnl;
    /* Template pixels the cubic taps can reach, clamped to the arm. */
    long kmin = (long)floor(u[r->j0] + dmin * tp->inv_dlnl);
    long kmax = (long)floor(u[r->j1] + dmax * tp->inv_dlnl);
    long J0 = cpu_clampl(kmin - 1, 0, nt - 1);
    long J1 = cpu_clampl(kmax + 2, 0, nt - 1);
    double half = fabs(vsini) / RVFIT_C_KMS * tp->inv_dlnl;
    if (half > RVFIT_MAX_VSINI_HALF)
        half = RVFIT_MAX_VSINI_HALF;
    long h = rvfit_vsini_kernel(half, w->wrot);
    /* text[j - (J0-h)] = T(clamp(j)) for j in [J0-h, J1+h]. */
    long l0 = cpu_clampl(J0 - h, 0, nt - 1), l1 = cpu_clampl(J1 + h, 0, nt - 1);
    double *text = w->text;
    long off = l0 - (J0 - h);
    cpu_interp(la, sc, l0, l1, text + off);
    for (long j = 0; j < off; j++)
        text[j] = text[off];
    long tend = l1 - (J0 - h);
    for (long j = tend + 1; j <= J1 + h - (J0 - h); j++)
        text[j] = text[tend];
    /* trx[k - (J0-3)] = Tr(clamp(k)) for k in [J0-3, J1+3]. */
    double *trx = w->trx;
    double *tr = trx + 3;
    long nj = J1 - J0 + 1;
    if (h == 0) {
        memcpy(tr, text, (size_t)nj * sizeof(double));
    } else {
        for (long j = 0; j < nj; j++)
            tr[j] = w->wrot[0] * text[j];
        for (long d = 1; d <= 2 * h; d++) {
            double wd = w->wrot[d];
            const double *src = text + d;
            for (long j = 0; j < nj; j++)
                tr[j] += wd * src[j];
        }
    }
    for (int q = 0; q < 3; q++) {
        trx[q] = tr[0];
        tr[nj + q] = tr[nj - 1];
    }
    tp->base = J0 - 3;
    tp->kmin = J0 - 2;
    tp->kmax = J1 + 1;
}

/* t_j for j in [j0, j1]: template at ln(lambda_j) + delta. */
static void cpu_shift(const cpu_arm *ca, size_t s, const cpu_tmpl *tp,
                      const double *trx, double delta, const cpu_range *r,
                      double *t)
{
    if (tp->flat) {
        for (long j = r->j0; j <= r->j1; j++)
            t[j] = 1.0;
        return;
    }
    const double *u = ca->u + (ca->wave_per_spec ? s * ca->npad : 0);
    double dp = delta * tp->inv_dlnl;
    for (long j = r->j0; j <= r->j1; j++) {
        double p = u[j] + dp;
        double fl = floor(p);
        long k = cpu_clampl((long)fl, tp->kmin, tp->kmax);
        double cw[4];
        cpu_cubic(p - fl, cw);
        const double *f = trx + (k - 1 - tp->base);
        t[j] = cw[0] * f[0] + cw[1] * f[1] + cw[2] * f[2] + cw[3] * f[3];
    }
}

/* m_i = sum_d res[(h-d)*npix + i+d] t_{i+d} over i in [i0, i1]. */
static void cpu_band(const cpu_arm *ca, size_t s, const cpu_range *r,
                     const double *t, double *m)
{
    long i0 = r->i0, i1 = r->i1;
    if (ca->res_kind != RVFIT_RES_BAND) {
        memcpy(m + i0, t + i0, (size_t)(i1 - i0 + 1) * sizeof(double));
        return;
    }
    long n = (long)ca->npix, h = ca->ndiag / 2;
    const float *res = ca->res + s * (size_t)ca->ndiag * ca->npix;
    for (long i = i0; i <= i1; i++)
        m[i] = 0.0;
    for (long d = -h; d <= h; d++) {
        long lo = i0 > -d ? i0 : -d, hi = i1 < n - 1 - d ? i1 : n - 1 - d;
        const float *rd = res + (h - d) * n + d;
        for (long i = lo; i <= hi; i++)
            m[i] += (double)rd[i] * t[i + d];
    }
}

void cpu_model_pixels(const cpu_state *st, int a, size_t s,
                      const cpu_tmpl *tp, double delta, const cpu_range *r,
                      cpu_scratch *w)
{
    const cpu_arm *ca = &st->arm[a];
    cpu_shift(ca, s, tp, w->trx, delta, r, w->t);
    cpu_band(ca, s, r, w->t, w->m);
    /* Zero the lane-alignment margins read by the accumulation. */
    long a0 = r->i0 / CPU_LANES * CPU_LANES;
    long a1 = (r->i1 / CPU_LANES + 1) * CPU_LANES;
    for (long i = a0; i < r->i0; i++)
        w->m[i] = 0.0;
    for (long i = r->i1 + 1; i < a1; i++)
        w->m[i] = 0.0;
}
