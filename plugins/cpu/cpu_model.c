/* cpu_model.c — the model of one arm at one point (physics.h steps a-d):
 * interpolated template over the pixel range the data need, rotation,
 * Doppler shift by Keys cubic convolution, band matrix.  Loops run over
 * contiguous double arrays so that the compiler vectorizes them. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

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

void cpu_stencil_given(const rvfit_point *p, const rvfit_stencils *stn,
                       size_t i, cpu_stencil *sc)
{
    sc->penalty = 0.0;
    sc->nc = 0;
    sc->flat = 1;
    if (p->flags & RVFIT_PT_CONTINUUM)
        return;
    size_t e0 = stn->off[i];
    sc->nc = (int)(stn->off[i + 1] - e0);
    for (int k = 0; k < sc->nc; k++) {
        sc->corner[k] = stn->idx[e0 + (size_t)k];
        sc->weight[k] = stn->w[(e0 + (size_t)k) * stn->nw];
    }
    sc->penalty = stn->pen[i];
    sc->flat = sc->nc == 0;
}

void cpu_stencil_arm(const rvfit_stencils *stn, size_t i, int la,
                     cpu_stencil *sc)
{
    if (!stn || stn->nw <= 1 || sc->flat)
        return;
    size_t e0 = stn->off[i];
    for (int k = 0; k < sc->nc; k++)
        sc->weight[k] = stn->w[(e0 + (size_t)k) * stn->nw + (size_t)la];
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

/* Interpolate library pixels [l0, l1] into dst[0 .. l1-l0]:
 * dst = w_0 f_0 + w_1 f_1 + ... in corner order. */
CPU_HOT static void cpu_interp(const rvfit_lib_arm *la, const cpu_stencil *sc,
                               int log_flux, long l0, long l1, double *dst)
{
    long n = l1 - l0 + 1, j = 0;
    const float *fp[RVFIT_MAX_CORNERS];
    for (int k = 0; k < sc->nc; k++)
        fp[k] = la->flux + sc->corner[k] * la->npix + l0;
#if defined(CPU_VEC)
    /* four independent chains hide the add latency */
    for (; j + 16 <= n; j += 16) {
        cpu_v4 a[4], f;
        for (int q = 0; q < 4; q++) {
            CPU_LDF(f, fp[0] + j + 4 * q);
            a[q] = sc->weight[0] * f;
        }
        for (int k = 1; k < sc->nc; k++)
            for (int q = 0; q < 4; q++) {
                CPU_LDF(f, fp[k] + j + 4 * q);
                a[q] += sc->weight[k] * f;
            }
        for (int q = 0; q < 4; q++)
            CPU_ST(dst + j + 4 * q, a[q]);
    }
    for (; j + 4 <= n; j += 4) {
        cpu_v4 acc, f;
        CPU_LDF(f, fp[0] + j);
        acc = sc->weight[0] * f;
        for (int k = 1; k < sc->nc; k++) {
            CPU_LDF(f, fp[k] + j);
            acc += sc->weight[k] * f;
        }
        CPU_ST(dst + j, acc);
    }
#endif
    for (; j < n; j++) {
        double acc = sc->weight[0] * (double)fp[0][j];
        for (int k = 1; k < sc->nc; k++)
            acc += sc->weight[k] * (double)fp[k][j];
        dst[j] = acc;
    }
    if (log_flux)
        for (j = 0; j < n; j++)
            dst[j] = exp(dst[j]);
}

/* tr[j] = sum_d w[d] text[j + d], d = 0..2h, for j < nj. */
CPU_HOT static void cpu_rotate(const double *w, long h, const double *text,
                               long nj, double *tr)
{
    long j = 0;
#if defined(CPU_VEC)
    for (; j + 4 <= nj; j += 4) {
        cpu_v4 acc, x;
        CPU_LD(x, text + j);
        acc = w[0] * x;
        for (long d = 1; d <= 2 * h; d++) {
            CPU_LD(x, text + j + d);
            acc += w[d] * x;
        }
        CPU_ST(tr + j, acc);
    }
#endif
    for (; j < nj; j++) {
        double acc = w[0] * text[j];
        for (long d = 1; d <= 2 * h; d++)
            acc += w[d] * text[j + d];
        tr[j] = acc;
    }
}

/* Keys (a = -1/2) in powers of the fraction x instead of weights of the
 * taps, per buffer index k in [k0, k1] (taps trx[k-1 .. k+2]):
 *   t = c0 + x (c1 + x (c2 + x c3)),
 *   c0 = f1, c1 = (f2 - f0)/2, c3 = (f3 - f0)/2 + 3 e/2 with e = f1 - f2,
 *   c2 = f0 - 5 f1/2 + 2 f2 - f3/2 = -(e + c1 + c3) (9 flops, not 13),
 * the same polynomial as rvfit_cubic_weights' weights (physics.c), summed
 * in another order.  Computed once per template, shared by every velocity
 * of a scan; a data pixel then reads 4 neighbouring doubles instead of
 * gathering 4 taps. */
CPU_HOT static void cpu_keys_coef(const double *trx, long k0, long k1,
                                  double *kc)
{
    for (long k = k0; k <= k1; k++) {
        double f0 = trx[k - 1], f1 = trx[k], f2 = trx[k + 1], f3 = trx[k + 2];
        double *c = kc + 4 * k;
        c[0] = f1;
        double e = f1 - f2;
        c[1] = 0.5 * (f2 - f0);
        c[3] = 0.5 * (f3 - f0) + 1.5 * e;
        c[2] = -(e + c[1] + c[3]);
    }
}

void cpu_template(const cpu_state *st, int a, size_t s, const cpu_stencil *sc,
                  double vsini, double dmin, double dmax, int nvel,
                  const cpu_range *r, cpu_scratch *w, cpu_tmpl *tp)
{
    const cpu_arm *ca = &st->arm[a];
    const rvfit_lib_arm *la = &st->lib.arm[ca->lib_arm];
    tp->flat = sc->flat;
    tp->coef = 0;
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
    /* text[j - (J0-h)] = T(clamp(j)) for j in [J0-h, J1+h].  Without
     * rotation that is already tr below: interpolate straight into it
     * rather than copy (the copy was 5 % of the backend's instructions). */
    double *trx = w->trx;
    double *tr = trx + 3;
    long l0 = cpu_clampl(J0 - h, 0, nt - 1), l1 = cpu_clampl(J1 + h, 0, nt - 1);
    double *text = h == 0 ? tr : w->text;
    long off = l0 - (J0 - h);
    cpu_interp(la, sc, st->lib.log_flux, l0, l1, text + off);
    for (long j = 0; j < off; j++)
        text[j] = text[off];
    long tend = l1 - (J0 - h);
    for (long j = tend + 1; j <= J1 + h - (J0 - h); j++)
        text[j] = text[tend];
    /* trx[k - (J0-3)] = Tr(clamp(k)) for k in [J0-3, J1+3]. */
    long nj = J1 - J0 + 1;
    if (h > 0)
        cpu_rotate(w->wrot, h, text, nj, tr);
    for (int q = 0; q < 3; q++) {
        trx[q] = tr[0];
        tr[nj + q] = tr[nj - 1];
    }
    tp->base = J0 - 3;
    tp->kmin = J0 - 2;
    tp->kmax = J1 + 1;
    tp->coef = nvel >= CPU_KEYS_MIN_VEL;
    if (tp->coef)
        cpu_keys_coef(trx, (long)(tp->kmin - tp->base),
                      (long)(tp->kmax - tp->base), w->kc);
}

#if defined(CPU_VEC)
/* Four groups of 4 neighbouring doubles, at p + off[q], transposed:
 * C[i] = (p[off[0] + i], p[off[1] + i], p[off[2] + i], p[off[3] + i]).
 * One load per data pixel instead of four gathered values. */
CPU_INLINE void cpu_load_t4(const double *p, const int *off, cpu_v4 *C)
{
    /* four named loads, not a loop: GCC's x86-64-v3 clone kept the loop
     * and bounced the vectors through the stack (+40 % instructions in
     * cpu_shift_taps under callgrind) */
    cpu_v4 c0, c1, c2, c3;
    CPU_LD(c0, p + off[0]);
    CPU_LD(c1, p + off[1]);
    CPU_LD(c2, p + off[2]);
    CPU_LD(c3, p + off[3]);
    cpu_v4 e0 = CPU_SHUF(c0, c1, 0, 4, 2, 6);
    cpu_v4 e1 = CPU_SHUF(c0, c1, 1, 5, 3, 7);
    cpu_v4 e2 = CPU_SHUF(c2, c3, 0, 4, 2, 6);
    cpu_v4 e3 = CPU_SHUF(c2, c3, 1, 5, 3, 7);
    C[0] = CPU_SHUF(e0, e2, 0, 1, 4, 5);
    C[1] = CPU_SHUF(e1, e3, 0, 1, 4, 5);
    C[2] = CPU_SHUF(e0, e2, 2, 3, 6, 7);
    C[3] = CPU_SHUF(e1, e3, 2, 3, 6, 7);
}
#endif

/* The taps of data pixels j in [j0, j1] at ln(lambda_j) + delta: kk[j]
 * = the first of the four (relative to trx, clamped so that they stay in
 * the buffer) and xx[j] the fraction.  They depend on the spectrum, the
 * arm and the shift only, so every chisq point of a spectrum at one
 * velocity shares them (cpu_model_pixels keeps them per thread). */
CPU_HOT static void cpu_taps_at(const cpu_arm *ca, size_t s,
                                const cpu_tmpl *tp, double delta,
                                const cpu_range *r, int *kk, double *xx)
{
    const double *u = ca->u + (ca->wave_per_spec ? s * ca->npad : 0);
    double dp = delta * tp->inv_dlnl;
    int base = (int)tp->base;
    int kmin = (int)(tp->kmin - tp->base), kmax = (int)(tp->kmax - tp->base);
    long j = r->j0;
#if defined(CPU_VEC)
    typedef int cpu_i4 __attribute__((vector_size(16)));
    typedef long long cpu_l4 __attribute__((vector_size(32)));
    for (; j + 3 <= r->j1; j += 4) {
        cpu_v4 p;
        CPU_LD(p, u + j);
        p += dp;
        cpu_i4 k0 = __builtin_convertvector(p, cpu_i4);
        cpu_l4 lt = p < __builtin_convertvector(k0, cpu_v4);
        k0 += __builtin_convertvector(lt, cpu_i4);
        cpu_v4 x = p - __builtin_convertvector(k0, cpu_v4);
        CPU_ST(xx + j, x);
        for (int q = 0; q < 4; q++) {
            int kr = k0[q] - base;
            kk[j + q] = (kr < kmin ? kmin : kr > kmax ? kmax : kr) - 1;
        }
    }
#endif
    for (; j <= r->j1; j++) {
        double p = u[j] + dp;
        int k0 = (int)p; /* floor without a libm call (|p| < 2^31) */
        k0 -= p < (double)k0;
        xx[j] = p - (double)k0;
        int kr = k0 - base;
        kk[j] = (kr < kmin ? kmin : kr > kmax ? kmax : kr) - 1;
    }
}

/* t_j for j in [j0, j1]: the template at the taps of cpu_taps_at.  A
 * pixel's four taps are neighbours, so the vector loop loads them as one
 * vector per pixel and transposes (cpu_load_t4; 16 scalar gathers
 * before, which cost about 2 % more of desi-1k's time).  Keys' cubic is
 * evaluated as the polynomial of cpu_keys_coef, computed from the four
 * taps on the spot: 17 flops instead of 27 with the four weights, and bit
 * for bit what cpu_shift_coef gives a velocity scan. */
CPU_HOT static void cpu_shift_taps(const double *trx, const int *kk,
                                   const double *xx, const cpu_range *r,
                                   double *t)
{
    long j = r->j0;
#if defined(CPU_VEC)
    for (; j + 3 <= r->j1; j += 4) {
        cpu_v4 f[4], x;
        CPU_LD(x, xx + j);
        cpu_load_t4(trx, kk + j, f);
        cpu_v4 e = f[1] - f[2];
        cpu_v4 c1 = 0.5 * (f[2] - f[0]);
        cpu_v4 c3 = 0.5 * (f[3] - f[0]) + 1.5 * e;
        cpu_v4 c2 = -(e + c1 + c3);
        cpu_v4 tv = f[1] + x * (c1 + x * (c2 + x * c3));
        CPU_ST(t + j, tv);
    }
#endif
    for (; j <= r->j1; j++) {
        const double *f = trx + kk[j];
        double x = xx[j];
        double e = f[1] - f[2];
        double c1 = 0.5 * (f[2] - f[0]);
        double c3 = 0.5 * (f[3] - f[0]) + 1.5 * e;
        double c2 = -(e + c1 + c3);
        t[j] = f[1] + x * (c1 + x * (c2 + x * c3));
    }
}

/* The same from the Keys coefficients kc of cpu_keys_coef (a scan's
 * template, shared by its velocities): per data pixel one group of 4
 * neighbouring doubles instead of 4 gathered taps, and a Horner
 * polynomial. */
CPU_HOT static void cpu_shift_coef(const cpu_arm *ca, size_t s,
                                   const cpu_tmpl *tp, const double *kc,
                                   double delta, const cpu_range *r,
                                   double *t)
{
    const double *u = ca->u + (ca->wave_per_spec ? s * ca->npad : 0);
    double dp = delta * tp->inv_dlnl;
    int base = (int)tp->base;
    int kmin = (int)(tp->kmin - tp->base), kmax = (int)(tp->kmax - tp->base);
    long j = r->j0;
#if defined(CPU_VEC)
    typedef int cpu_i4 __attribute__((vector_size(16)));
    typedef long long cpu_l4 __attribute__((vector_size(32)));
    for (; j + 3 <= r->j1; j += 4) {
        cpu_v4 p, c[4];
        CPU_LD(p, u + j);
        p += dp;
        cpu_i4 k0 = __builtin_convertvector(p, cpu_i4);
        cpu_l4 lt = p < __builtin_convertvector(k0, cpu_v4);
        k0 += __builtin_convertvector(lt, cpu_i4);
        cpu_v4 x = p - __builtin_convertvector(k0, cpu_v4);
        int kk[4];
        for (int q = 0; q < 4; q++) {
            int kr = k0[q] - base;
            kk[q] = 4 * (kr < kmin ? kmin : kr > kmax ? kmax : kr);
        }
        cpu_load_t4(kc, kk, c);
        cpu_v4 tv = c[0] + x * (c[1] + x * (c[2] + x * c[3]));
        CPU_ST(t + j, tv);
    }
#endif
    for (; j <= r->j1; j++) {
        double p = u[j] + dp;
        int k0 = (int)p; /* floor without a libm call (|p| < 2^31) */
        k0 -= p < (double)k0;
        double x = p - (double)k0;
        int kr = k0 - base;
        const double *c = kc + 4 * (kr < kmin ? kmin : kr > kmax ? kmax : kr);
        t[j] = c[0] + x * (c[1] + x * (c[2] + x * c[3]));
    }
}

/* m_i = sum_d res[(h-d)*npix + i+d] t_{i+d} over i in [i0, i1], terms
 * with i+d outside the arm skipped, summed in order d = -h..h. */
static inline double cpu_band1(const float *res, long n, long h,
                               const double *t, long i)
{
    double acc = 0.0;
    for (long d = -h; d <= h; d++)
        if (i + d >= 0 && i + d < n)
            acc += res[(h - d) * n + i + d] * t[i + d];
    return acc;
}

CPU_HOT static void cpu_band(const cpu_arm *ca, size_t s, const cpu_range *r,
                             const double *t, double *m)
{
    long i0 = r->i0, i1 = r->i1;
    if (ca->res_kind != RVFIT_RES_BAND) {
        memcpy(m + i0, t + i0, (size_t)(i1 - i0 + 1) * sizeof(double));
        return;
    }
    long n = (long)ca->npix, h = ca->ndiag / 2;
    const float *res = ca->res + s * (size_t)ca->ndiag * ca->npix;
    long lo = i0 > h ? i0 : h;
    long i = i0;
    for (; i <= i1 && i < lo; i++)
        m[i] = cpu_band1(res, n, h, t, i);
#if defined(CPU_VEC)
    long hi = i1 < n - 1 - h ? i1 : n - 1 - h; /* all taps inside */
    /* Four chains hide the add latency.  Named, not an array: GCC's
     * x86-64-v3 clone zeroed an array of them with rep stos and copied it
     * out through the stack (+25 % instructions in this loop). */
    for (; i + 15 <= hi; i += 16) {
        cpu_v4 a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0, rv, tv;
        for (long d = -h; d <= h; d++) {
            const float *rd = res + (h - d) * n + i + d;
            const double *td = t + i + d;
            CPU_LDF(rv, rd);
            CPU_LD(tv, td);
            a0 += rv * tv;
            CPU_LDF(rv, rd + 4);
            CPU_LD(tv, td + 4);
            a1 += rv * tv;
            CPU_LDF(rv, rd + 8);
            CPU_LD(tv, td + 8);
            a2 += rv * tv;
            CPU_LDF(rv, rd + 12);
            CPU_LD(tv, td + 12);
            a3 += rv * tv;
        }
        CPU_ST(m + i, a0);
        CPU_ST(m + i + 4, a1);
        CPU_ST(m + i + 8, a2);
        CPU_ST(m + i + 12, a3);
    }
    for (; i + 3 <= hi; i += 4) {
        cpu_v4 acc = {0.0, 0.0, 0.0, 0.0}, rv, tv;
        for (long d = -h; d <= h; d++) {
            CPU_LDF(rv, res + (h - d) * n + i + d);
            CPU_LD(tv, t + i + d);
            acc += rv * tv;
        }
        CPU_ST(m + i, acc);
    }
#endif
    for (; i <= i1; i++)
        m[i] = cpu_band1(res, n, h, t, i);
}

static int cpu_same_shift(const struct cpu_shift_key *a,
                          const struct cpu_shift_key *b)
{
    return a->ok && a->spec == b->spec && a->delta == b->delta &&
           a->j0 == b->j0 && a->j1 == b->j1 && a->base == b->base &&
           a->kmin == b->kmin && a->kmax == b->kmax;
}

void cpu_model_pixels(const cpu_state *st, int a, size_t s,
                      const cpu_tmpl *tp, double delta, const cpu_range *r,
                      cpu_scratch *w)
{
    const cpu_arm *ca = &st->arm[a];
    if (tp->flat) {
        for (long j = r->j0; j <= r->j1; j++)
            w->t[j] = 1.0;
    } else if (tp->coef) {
        cpu_shift_coef(ca, s, tp, w->kc, delta, r, w->t);
    } else {
        struct cpu_shift_key *key = &w->skey[a], now = {
            1, s, delta, r->j0, r->j1, tp->base, tp->kmin, tp->kmax};
        int *kk = w->sk + (size_t)a * st->npad_max;
        double *xx = w->sx + (size_t)a * st->npad_max;
        if (!cpu_same_shift(key, &now)) {
            cpu_taps_at(ca, s, tp, delta, r, kk, xx);
            *key = now;
        }
        cpu_shift_taps(w->trx, kk, xx, r, w->t);
    }
    cpu_band(ca, s, r, w->t, w->m);
    /* Zero the lane-alignment margins read by the accumulation. */
    long a0 = r->i0 / CPU_LANES * CPU_LANES;
    long a1 = (r->i1 / CPU_LANES + 1) * CPU_LANES;
    for (long i = a0; i < r->i0; i++)
        w->m[i] = 0.0;
    for (long i = r->i1 + 1; i < a1; i++)
        w->m[i] = 0.0;
}
