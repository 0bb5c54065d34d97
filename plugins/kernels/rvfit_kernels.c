/* rvfit_kernels.c — the device code of the GPU backends, one source for
 * OpenCL C (embedded into rvfit_backend_opencl.so) and CUDA (compiled with
 * nvcc -x cu).  Vendor differences live in rvfit_vendor.h only.
 *
 * It reproduces the cpu reference (core/sdk/src/library_stencil.c,
 * core/sdk/src/physics.c, plugins/cpu) step by step:
 *   rvk_template  one work-group per template slot (a point of chisq or
 *                 models, a base point of vscan): rvk_slot_stencil (same
 *                 rules as rvfit_library_stencil), then per arm
 *                 rvk_template_arm: interpolated template (rvk_interp),
 *                 rotated by rvk_rotate (weights as rvfit_vsini_kernel;
 *                 the template is extended by its edge values) into the
 *                 slot, which holds the rotated template on the arm's
 *                 pixels.
 *   rvk_like      one work-group per point, per arm: rvk_model_arm
 *                 (rvk_shift: Doppler shift + Keys cubic; rvk_band: band
 *                 matrix), rvk_normal_sums (work-group reduction over
 *                 the pixels where each sum's rows live, as planned by
 *                 rvk_host.c),
 *                 rvk_solve (equilibrated Cholesky, work-item 0),
 *                 rvk_residual (explicit residual), rvk_models_out
 *                 (models mode); writes -2 ln L, chisq per arm and, in
 *                 models mode, model and continuum.
 * Arguments: rvfit_kargs.h (RVK_TEMPLATE_ARGS, RVK_LIKE_ARGS); layouts
 * and limits: rvfit_klayout.h.  Functions marked "whole group" must be
 * called by every work-item with uniform arguments (they hold barriers).
 * Both kernels loop over their items with a stride of the number of
 * groups, so global scratch is sized by the launch, not by the points.
 * Work-group size: any power of two <= RVK_WG_MAX.
 */
#include "rvfit_vendor.h"
#include "rvfit_klayout.h"
#include "rvfit_kargs.h"

#define RVK_PI 3.14159265358979323846

#ifdef RVK_FP64
/* Plain sums: double accumulators over <= 10^4 terms are far inside the
 * 1e-6 budget; the compensation variables do not exist. */
#define KDECL(decl)
#define KZERO(c)
#define KADD(s, c, x) ((s) += (x))
#else
/* Compensated (Kahan) sums for float-only devices. */
#define KDECL(decl) decl;
#define KZERO(c) ((c) = 0)
#define KADD(s, c, x)                                                    \
    do {                                                                 \
        real ky_ = (x) - (c);                                            \
        real kt_ = (s) + ky_;                                            \
        (c) = (kt_ - (s)) - ky_;                                         \
        (s) = kt_;                                                       \
    } while (0)
#endif

DEVFN int rvk_clampi(int x, int lo, int hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* ---- stencil (rvfit_library_stencil) --------------------------------- */

/* Lower node and fraction on one axis after clamping; returns (d/h)^2. */
DEVFN real rvk_axis_locate(int n, GLOBAL const real *node, real x, int *i0,
                           real *fr)
{
    *i0 = 0;
    *fr = 0;
    if (n <= 1) {
        real d = n == 1 ? x - node[0] : (real)0;
        return d * d;
    }
    real lo = node[0], hi = node[n - 1];
    real h = (hi - lo) / (n - 1);
    real d = 0;
    if (x < lo) {
        d = (lo - x) / h;
        x = lo;
    } else if (x > hi) {
        d = (x - hi) / h;
        x = hi;
    } else if (!(x == x)) {
        x = lo;
        d = (real)RVFIT_NAN_DISTANCE;
    }
    int l = 0, r = n - 2;
    while (l < r) {
        int mid = (l + r + 1) / 2;
        if (node[mid] <= x)
            l = mid;
        else
            r = mid - 1;
    }
    *i0 = l;
    real f = (x - node[l]) / (node[l + 1] - node[l]);
    *fr = f < 0 ? (real)0 : (f > 1 ? (real)1 : f);
    return d * d;
}

/* One axis' share of a stencil: up to four nodes and their weights. */
typedef struct rvk_share {
    int n;
    int node[4];
    real w[4];
} rvk_share;

DEVFN void rvk_share_linear(int i0, real fr, rvk_share *s)
{
    s->n = 1;
    s->node[0] = i0;
    s->w[0] = 1 - fr;
    if (fr > 0) {
        s->node[1] = i0 + 1;
        s->w[1] = fr;
        s->n = 2;
    }
}

/* Slope weights at node j on nodes c-1, c, c+1 (c returned); see
 * node_slope in core/sdk/src/library_stencil.c. */
DEVFN int rvk_node_slope(int n, GLOBAL const real *node, int j, real *d)
{
    int c = j == 0 ? 1 : (j == n - 1 ? n - 2 : j);
    real h0 = node[c] - node[c - 1], h1 = node[c + 1] - node[c];
    if (j < c) {
        d[0] = -(2 * h0 + h1) / (h0 * (h0 + h1));
        d[1] = (h0 + h1) / (h0 * h1);
        d[2] = -h0 / (h1 * (h0 + h1));
    } else if (j > c) {
        d[0] = h1 / (h0 * (h0 + h1));
        d[1] = -(h0 + h1) / (h0 * h1);
        d[2] = (h0 + 2 * h1) / (h1 * (h0 + h1));
    } else {
        d[0] = -h1 / (h0 * (h0 + h1));
        d[1] = (h1 - h0) / (h0 * h1);
        d[2] = h0 / (h1 * (h0 + h1));
    }
    return c;
}

/* t > 0, n >= 3: the stencil only asks for cubic shares then. */
DEVFN void rvk_share_cubic(int n, GLOBAL const real *node, int i0, real t,
                           rvk_share *s)
{
    real h = node[i0 + 1] - node[i0];
    real t2 = t * t, t3 = t2 * t;
    real acc[4];
    acc[0] = 0;
    acc[1] = 2 * t3 - 3 * t2 + 1;
    acc[2] = -2 * t3 + 3 * t2;
    acc[3] = 0;
    for (int e = 0; e < 2; e++) {
        real hs = e == 0 ? h * (t3 - 2 * t2 + t) : h * (t3 - t2);
        real d[3];
        int c = rvk_node_slope(n, node, i0 + e, d);
        for (int q = 0; q < 3; q++)
            acc[c - 1 + q - (i0 - 1)] += hs * d[q];
    }
    s->n = 0;
    for (int q = 0; q < 4; q++)
        if (acc[q] != 0) {
            s->node[s->n] = i0 - 1 + q;
            s->w[s->n] = acc[q];
            s->n++;
        }
}

/* Tensor product (first axis slowest); -1 at the first hole. */
DEVFN int rvk_share_product(int nparam, GLOBAL const int *ax_n,
                            GLOBAL const rvk_uchar *exists,
                            const rvk_share *as, LOCAL_PTR int *corner,
                            LOCAL_PTR real *cw)
{
    int total = 1;
    for (int a = 0; a < nparam; a++)
        total *= as[a].n;
    for (int c = 0; c < total; c++) {
        int r = c, rest = total, idx = 0;
        real wt = 1;
        for (int a = 0; a < nparam; a++) {
            rest /= as[a].n;
            int q = r / rest;
            r -= q * rest;
            idx = idx * ax_n[a] + as[a].node[q];
            wt *= as[a].w[q];
        }
        if (!exists[idx])
            return -1;
        corner[c] = idx;
        cw[c] = wt;
    }
    return total;
}

DEVFN int rvk_popcount(unsigned m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

/* Corners (model indices) and weights into corner/cw by the rules of
 * rvfit_library_stencil: cubic axes (RVK_NN_INTERP) as far as no
 * hole is hit, else the renormalised linear stencil.  Returns their
 * number, 0 when every linear corner is a hole; *pen receives the penalty
 * including RVFIT_PENALTY_HOLE in that case. */
DEVFN int rvk_stencil(int nparam, GLOBAL const int *ax_n,
                      GLOBAL const real *ax_node,
                      GLOBAL const rvk_uchar *exists,
                      GLOBAL const real *theta, LOCAL_PTR int *corner,
                      LOCAL_PTR real *cw, real *pen)
{
    int i0[RVFIT_MAX_PARAMS];
    real fr[RVFIT_MAX_PARAMS];
    real p = 0;
    unsigned want = 0;
    for (int a = 0; a < nparam; a++) {
        p += rvk_axis_locate(ax_n[a], ax_node + a * RVFIT_MAX_NODES, theta[a],
                             &i0[a], &fr[a]);
        if (ax_n[RVK_NN_INTERP(nparam, a)] == RVK_INTERP_CUBIC &&
            ax_n[RVK_NN_NNODE(nparam, a)] >= 3 && fr[a] > 0)
            want |= 1u << a;
    }
    p *= (real)RVFIT_PENALTY_SCALE;
    *pen = p;
    for (int k = rvk_popcount(want); k > 0; k--) {
        for (unsigned sub = want;; sub = (sub - 1) & want) {
            if (rvk_popcount(sub) == k) {
                rvk_share as[RVFIT_MAX_PARAMS];
                for (int a = 0; a < nparam; a++) {
                    if (sub & (1u << a))
                        rvk_share_cubic(ax_n[a], ax_node + a * RVFIT_MAX_NODES,
                                        i0[a], fr[a], &as[a]);
                    else
                        rvk_share_linear(i0[a], fr[a], &as[a]);
                }
                int nc = rvk_share_product(nparam, ax_n, exists, as, corner,
                                           cw);
                if (nc > 0)
                    return nc;
            }
            if (sub == 0)
                break;
        }
    }
    int nc = 0;
    real sum = 0;
    for (int c = 0; c < (1 << nparam); c++) {
        real wt = 1;
        int idx = 0;
        for (int a = 0; a < nparam; a++) {
            int up = (c >> a) & 1;
            if (up && fr[a] == 0) {
                wt = 0;
                break;
            }
            wt *= up ? fr[a] : 1 - fr[a];
            idx = idx * ax_n[a] + i0[a] + up;
        }
        if (wt == 0 || !exists[idx])
            continue;
        corner[nc] = idx;
        cw[nc] = wt;
        sum += wt;
        nc++;
    }
    if (nc == 0 || !(sum > 0)) {
        *pen = p + (real)RVFIT_PENALTY_HOLE;
        return 0;
    }
    for (int k = 0; k < nc; k++)
        cw[k] /= sum;
    return nc;
}

/* ---- rotation kernel (rvfit_vsini_kernel) ----------------------------- */

DEVFN real rvk_kern_p0(real x)
{
    const real e = (real)RVFIT_VSINI_EPS;
    real q = 1 - x * x;
    real r = sqrt(q > 0 ? q : (real)0);
    return (1 - e) * (x * r + asin(x)) +
           (real)0.5 * (real)RVK_PI * e * (x - x * x * x / 3);
}

DEVFN real rvk_kern_p1(real x)
{
    const real e = (real)RVFIT_VSINI_EPS;
    real q = 1 - x * x;
    q = q > 0 ? q : (real)0;
    return -2 * (1 - e) * q * sqrt(q) / 3 +
           (real)0.5 * (real)RVK_PI * e *
               ((real)0.5 * x * x - (real)0.25 * x * x * x * x);
}

/* Unnormalised weight of offset j in [-h, h]: the contributions of
 * segments [j-1, j] (hat rising) and [j, j+1] (hat falling), exactly as
 * the reference accumulates them. */
DEVFN real rvk_vsini_weight(real hw, int j, int h)
{
    real w = 0;
    for (int k = j - 1; k <= j; k++) {
        if (k < -h || k >= h)
            continue;
        real u0 = fmax((real)k, -hw), u1 = fmin((real)(k + 1), hw);
        if (!(u1 > u0))
            continue;
        real x0 = u0 / hw, x1 = u1 / hw;
        real m0 = hw * (rvk_kern_p0(x1) - rvk_kern_p0(x0));
        real m1 = hw * hw * (rvk_kern_p1(x1) - rvk_kern_p1(x0)) - k * m0;
        w += k == j ? m0 - m1 : m1;
    }
    return w;
}

/* Interpolated (unrotated) template pixel j of one arm; lnf: the library
 * holds ln flux (RVK_NN_LOGFLUX). */
DEVFN real rvk_interp(GLOBAL const float *flux, rvk_long npixl, int nc,
                      LOCAL_PTR const int *corner, LOCAL_PTR const real *cw,
                      int lnf, int j)
{
    real s = cw[0] * (real)flux[(rvk_long)corner[0] * npixl + j];
    for (int k = 1; k < nc; k++)
        s += cw[k] * (real)flux[(rvk_long)corner[k] * npixl + j];
    return lnf ? exp(s) : s;
}

/* ---- kernel 1: templates ---------------------------------------------- */

/* Stencil of one template slot into corner/cw (one work-item): returns
 * the corner count, 0 for a flat template (every corner a hole, or a
 * continuum-only point, which also has no penalty, as the cpu), and
 * stores the penalty in *pen. */
DEVFN int rvk_slot_stencil(int nparam, GLOBAL const int *ax_n,
                           GLOBAL const real *ax_node,
                           GLOBAL const rvk_uchar *exists,
                           GLOBAL const real *theta, rvk_uint flags,
                           LOCAL_PTR int *corner, LOCAL_PTR real *cw,
                           GLOBAL real *pen)
{
    real p = 0;
    int nc = rvk_stencil(nparam, ax_n, ax_node, exists, theta, corner, cw,
                         &p);
    if (flags & RVK_PT_CONTINUUM) {
        nc = 0;
        p = 0;
    }
    *pen = p;
    return nc;
}

/* A stencil from the core (rvfit_stencils, rebased to the launch) into
 * corner/cw (one work-item), weights of batch arm 0, with the rules of
 * rvk_slot_stencil for continuum-only points. */
DEVFN int rvk_given_stencil(GLOBAL const rvk_uint *st_off,
                            GLOBAL const rvk_uint *st_idx,
                            GLOBAL const real *st_w, int st_nw,
                            GLOBAL const real *st_pen, int t,
                            rvk_uint flags, LOCAL_PTR int *corner,
                            LOCAL_PTR real *cw, GLOBAL real *pen)
{
    if (flags & RVK_PT_CONTINUUM) {
        *pen = 0;
        return 0;
    }
    rvk_uint e0 = st_off[t];
    int nc = (int)(st_off[t + 1] - e0);
    for (int k = 0; k < nc; k++) {
        corner[k] = (int)st_idx[e0 + (rvk_uint)k];
        cw[k] = st_w[(rvk_long)(e0 + (rvk_uint)k) * st_nw];
    }
    *pen = st_pen[t];
    return nc;
}

/* The weights of batch arm a of slot t's stencil into cw (one
 * work-item), for tables with weights per arm (st_nw > 1). */
DEVFN void rvk_given_weights(GLOBAL const rvk_uint *st_off,
                             GLOBAL const real *st_w, int st_nw, int t,
                             int a, int nc, LOCAL_PTR real *cw)
{
    rvk_long e0 = (rvk_long)st_off[t];
    for (int k = 0; k < nc; k++)
        cw[k] = st_w[(e0 + k) * st_nw + a];
}

/* Half width of the rotation kernel (template pixels) for vsini (km/s) on
 * an arm whose template step is 1 / invdlnl, clamped as the cpu. */
DEVFN real rvk_half_width(real vsini, real invdlnl)
{
    real hw = fabs(vsini) / (real)RVFIT_C_KMS * invdlnl;
    if (hw > RVFIT_MAX_VSINI_HALF)
        hw = RVFIT_MAX_VSINI_HALF;
    return hw;
}

/* Rotation of one arm's template (rvfit_vsini_kernel, half width hw,
 * h = ceil(hw) > 0): weights into kw and their sum into *ksum, the
 * interpolated template into ti, the convolution (template extended by
 * its edge values) into out.  Whole group. */
DEVFN void rvk_rotate(int npl, real hw, int h, GLOBAL const float *fl, int nc,
                      LOCAL_PTR const int *corner, LOCAL_PTR const real *cw,
                      int lnf, LOCAL_PTR real *kw, LOCAL_PTR real *ksum,
                      GLOBAL real *ti, GLOBAL real *out)
{
    int lid = LOCAL_ID(), wg = LOCAL_SIZE();
    for (int j = lid; j <= 2 * h; j += wg)
        kw[j] = rvk_vsini_weight(hw, j - h, h);
    for (int j = lid; j < npl; j += wg)
        ti[j] = rvk_interp(fl, npl, nc, corner, cw, lnf, j);
    BARRIER();
    if (lid == 0) {
        real s = 0;
        for (int j = 0; j <= 2 * h; j++)
            s += kw[j];
        *ksum = s;
    }
    BARRIER();
    real ks = *ksum;
    for (int j = lid; j < npl; j += wg) {
        real s = 0;
        int c = j - h;
        for (int k = 0; k <= 2 * h; k++)
            s += (kw[k] / ks) * ti[rvk_clampi(c + k, 0, npl - 1)];
        out[j] = s;
    }
}

/* The template of one arm of a slot on its npl pixels into out: flat
 * (nc == 0), interpolated (no rotation) or rotated.  Whole group; every
 * argument is uniform over it. */
DEVFN void rvk_template_arm(int npl, real hw, GLOBAL const float *fl, int nc,
                            LOCAL_PTR const int *corner,
                            LOCAL_PTR const real *cw, int lnf,
                            LOCAL_PTR real *kw, LOCAL_PTR real *ksum,
                            GLOBAL real *ti, GLOBAL real *out)
{
    int lid = LOCAL_ID(), wg = LOCAL_SIZE();
    int h = hw >= (real)RVFIT_VSINI_MIN_HALF ? (int)ceil(hw) : 0;
    if (nc == 0) {
        for (int j = lid; j < npl; j += wg)
            out[j] = 1;
    } else if (h == 0) {
        for (int j = lid; j < npl; j += wg)
            out[j] = rvk_interp(fl, npl, nc, corner, cw, lnf, j);
    } else {
        rvk_rotate(npl, hw, h, fl, nc, corner, cw, lnf, kw, ksum, ti, out);
    }
}

/* One work-group per template slot t: the stencil of ttheta[t] or, with
 * use_st, the one the core sent (work-item 0), then the template of every
 * arm into the slot's part of tr. */
KERNEL void rvk_template(RVK_PARAMS(RVK_TEMPLATE_ARGS))
{
    LOCAL_DECL int corner[RVFIT_MAX_CORNERS];
    LOCAL_DECL real cw[RVFIT_MAX_CORNERS];
    LOCAL_DECL real kw[2 * RVFIT_MAX_VSINI_HALF + 1];
    LOCAL_DECL int ncorner;
    LOCAL_DECL real ksum;
    const int lnf = ax_n[RVK_NN_LOGFLUX(nparam)];
    GLOBAL real *ti = tint + (rvk_long)GROUP_ID() * tint_len;
    for (int t = GROUP_ID(); t < ntpl; t += NUM_GROUPS()) {
        if (LOCAL_ID() == 0)
            ncorner = use_st ? rvk_given_stencil(st_off, st_idx, st_w,
                                                 st_nw, st_pen, t, tflags[t],
                                                 corner, cw, tpen + t)
                             : rvk_slot_stencil(nparam, ax_n, ax_node, exists,
                                                ttheta + (rvk_long)t * nparam,
                                                tflags[t], corner, cw,
                                                tpen + t);
        BARRIER();
        for (int a = 0; a < narm; a++) {
            GLOBAL const rvk_long *m = ai + a * RVK_AI_N;
            if (use_st && st_nw > 1 && a > 0) { /* uniform over the group */
                if (LOCAL_ID() == 0)
                    rvk_given_weights(st_off, st_w, st_nw, t, a, ncorner,
                                      cw);
                BARRIER();
            }
            real hw = rvk_half_width(tvsini[t],
                                     ad[a * RVK_AD_N + RVK_AD_INVDLNL]);
            rvk_template_arm((int)m[RVK_AI_LNPIX], hw,
                             lib_flux + m[RVK_AI_LFOFF], ncorner, corner, cw,
                             lnf, kw, &ksum, ti,
                             tr + (rvk_long)t * slot_len + m[RVK_AI_TROFF]);
            BARRIER();
        }
    }
}

/* ---- kernel 2: likelihood ---------------------------------------------- */

/* Row k of sums[] (and its b) exactly 0: a basis function without a
 * usable pixel, left out of the solve as rvfit_chol_eq_quad does. */
DEVFN int rvk_dead_row(int np, LOCAL_PTR const real *sums, int k)
{
    if (sums[np * (np + 1) / 2 + k] != 0)
        return 0;
    for (int l = 0; l < np; l++)
        if (sums[l <= k ? k * (k + 1) / 2 + l : l * (l + 1) / 2 + k] != 0)
            return 0;
    return 1;
}

/* Equilibrated Cholesky solve of the normal equations in sums[] (pairs
 * k >= l packed row by row, then b).  Writes coef[], returns ln det or
 * sets *fail.  Mirrors rvfit_marg_chisq (rvfit_chol_eq_quad). */
DEVFN real rvk_solve(int np, LOCAL_PTR const real *sums, LOCAL_PTR real *A,
                     LOCAL_PTR real *coef, int *fail, real *q)
{
    real sc[RVFIT_MAX_POLY];
    int npair = np * (np + 1) / 2;
    real ld = 0;
    int nlive = 0;
    for (int k = 0; k < np; k++) {
        real d = sums[k * (k + 1) / 2 + k];
        if (d == 0 && rvk_dead_row(np, sums, k)) {
            sc[k] = 1; /* a unit row below: coef 0, nothing in ln det */
            continue;
        }
        if (!(d > 0) || !RVK_ISFINITE(d)) {
            *fail = 1;
            return 0;
        }
        sc[k] = 1 / sqrt(d);
        ld += log(d);
        nlive++;
    }
    if (nlive == 0) { /* nothing constrained (a model of zeros) */
        *fail = 1;
        return 0;
    }
    for (int k = 0; k < np; k++)
        for (int l = 0; l <= k; l++)
            A[k * np + l] = sums[k * (k + 1) / 2 + l] * (sc[k] * sc[l]);
    for (int k = 0; k < np; k++)
        if (A[k * np + k] == 0)
            A[k * np + k] = 1;
    for (int j = 0; j < np; j++) {
        real d = A[j * np + j];
        for (int k = 0; k < j; k++)
            d -= A[j * np + k] * A[j * np + k];
        if (!(d > (real)RVFIT_CHOL_MIN_PIVOT) || !RVK_ISFINITE(d)) {
            *fail = 1;
            return 0;
        }
        d = sqrt(d);
        A[j * np + j] = d;
        for (int i = j + 1; i < np; i++) {
            real s = A[i * np + j];
            for (int k = 0; k < j; k++)
                s -= A[i * np + k] * A[j * np + k];
            A[i * np + j] = s / d;
        }
    }
    for (int k = 0; k < np; k++)
        ld += 2 * log(A[k * np + k]);
    real qq = 0;
    for (int k = 0; k < np; k++) {
        real s = sums[npair + k] * sc[k];
        for (int l = 0; l < k; l++)
            s -= A[k * np + l] * coef[l];
        coef[k] = s / A[k * np + k];
        qq += coef[k] * coef[k]; /* |L^-1 D b|^2 = b^T A^-1 b */
    }
    *q = qq;
    for (int k = np - 1; k >= 0; k--) {
        real s = coef[k];
        for (int l = k + 1; l < np; l++)
            s -= A[l * np + k] * coef[l];
        coef[k] = s / A[k * np + k];
    }
    for (int k = 0; k < np; k++)
        coef[k] *= sc[k];
    *fail = 0;
    return ld;
}

/* Doppler shift + Keys cubic: the slot's template of one arm (npl
 * pixels) at template position pos[i] + dp of every data pixel, into dst.
 * Whole group. */
DEVFN void rvk_shift(int npix, int npl, real dp, GLOBAL const real *pos,
                     GLOBAL const real *slot, GLOBAL real *dst)
{
    int lid = LOCAL_ID(), wg = LOCAL_SIZE();
    for (int i = lid; i < npix; i += wg) {
        real u = pos[i] + dp;
        real fk = floor(u);
        real t = u - fk;
        /* Taps read the rotated template clamped to the arm (edge values
         * beyond it), as the cpu backend; fk is bounded first so that the
         * int conversion cannot overflow. */
        fk = fk < -4 ? (real)-4 : (fk > npl + 4 ? (real)(npl + 4) : fk);
        int k = (int)fk;
        int hi = npl - 1;
        real f0 = slot[rvk_clampi(k - 1, 0, hi)];
        real f1 = slot[rvk_clampi(k, 0, hi)];
        real f2 = slot[rvk_clampi(k + 1, 0, hi)];
        real f3 = slot[rvk_clampi(k + 2, 0, hi)];
        /* Keys' cubic as a polynomial in t (as the cpu backend): 17 flops
         * per pixel instead of 27 with the four weights */
        real e = f1 - f2;
        real c1 = (real)0.5 * (f2 - f0);
        real c3 = (real)0.5 * (f3 - f0) + (real)1.5 * e;
        real c2 = -(e + c1 + c3);
        dst[i] = f1 + t * (c1 + t * (c2 + t * c3));
    }
}

/* Band matrix: mb = R tb on one arm's npix pixels, R with ndiag diagonals
 * in the DESI layout (rvfit/spectra.h).  Whole group. */
DEVFN void rvk_band(int npix, int ndiag, GLOBAL const float *res,
                    GLOBAL const real *tb, GLOBAL real *mb)
{
    int lid = LOCAL_ID(), wg = LOCAL_SIZE();
    int h = ndiag / 2;
    for (int i = lid; i < npix; i += wg) {
        real s = 0;
        for (int d = -h; d <= h; d++) {
            int j = i + d;
            if (j < 0 || j >= npix)
                continue;
            s += (real)res[(rvk_long)(h - d) * npix + j] * tb[j];
        }
        mb[i] = s;
    }
}

/* Model of every pixel of one arm into mb: the shifted template, through
 * the band matrix (via tb) when the arm has one.  Whole group; ends with
 * a barrier. */
DEVFN void rvk_model_arm(int npix, int npl, int ndiag, real dp,
                         GLOBAL const real *pos, GLOBAL const real *slot,
                         GLOBAL const float *res, GLOBAL real *tb,
                         GLOBAL real *mb)
{
    rvk_shift(npix, npl, dp, pos, slot, ndiag > 0 ? tb : mb);
    if (ndiag > 0) {
        BARRIER();
        rvk_band(npix, ndiag, res, tb, mb);
    }
    BARRIER();
}

/* Normal-equation sums of one arm into sums[], as plan says (rvk_host.c,
 * rvfit_klayout.h RVK_PLAN_*): each pass of up to RVK_PC sums runs over
 * the pixels where one of them lives, each work-item over the same
 * pixels (i = lid mod wg) as a loop over the whole arm would give it, so
 * a sum differs from the whole arm's only by the exact zeros left out
 * (in double the same bits).  Sums that live nowhere are 0.  B-splines,
 * npoly 7: 29 of 35 sums live, over 10 of 20 quarter-arm passes. */
DEVFN void rvk_normal_sums(int np, GLOBAL const real *mb,
                           GLOBAL const float *fx, GLOBAL const float *iv,
                           GLOBAL const real *B, int npix,
                           GLOBAL const int *plan, LOCAL_PTR real *red,
                           LOCAL_PTR real *sums)
{
    int lid = LOCAL_ID(), wg = LOCAL_SIZE();
    int nsum = np * (np + 1) / 2 + np, nlive = plan[0], npass = plan[1];
    for (int s = lid; s < nsum; s += wg)
        sums[s] = 0;
    BARRIER();
    for (int p = 0; p < npass; p++) {
        int c0 = p * RVK_PC;
        int nc = nlive - c0 < RVK_PC ? nlive - c0 : RVK_PC;
        int lo = plan[RVK_PLAN_PASS(p)], hi = plan[RVK_PLAN_PASS(p) + 1];
        real acc[RVK_PC];
        int rk[RVK_PC], rl[RVK_PC];
        KDECL(real cmp[RVK_PC])
        for (int r = 0; r < RVK_PC; r++) {
            acc[r] = 0;
            KZERO(cmp[r]);
            rk[r] = r < nc ? plan[RVK_PLAN_SUM(c0 + r) + 1] : 0;
            rl[r] = r < nc ? plan[RVK_PLAN_SUM(c0 + r) + 2] : 0;
        }
        /* first pixel >= lo that is this work-item's */
        int i0 = lo + ((lid - lo) % wg + wg) % wg;
        for (int i = i0; i < hi; i += wg) {
            real w = (real)iv[i];
            if (!(w > 0))
                continue;
            real m = mb[i];
            real g = w * m * m, q = w * (real)fx[i] * m;
            for (int r = 0; r < nc; r++) {
                real bk = B[(rvk_long)rk[r] * npix + i];
                real x = rl[r] >= 0 ? g * bk * B[(rvk_long)rl[r] * npix + i]
                                    : q * bk;
                KADD(acc[r], cmp[r], x);
            }
        }
        for (int r = 0; r < nc; r++)
            red[r * wg + lid] = acc[r];
        BARRIER();
        /* Sum r of the pass is reduced by work-item r (r mod wg: groups
         * smaller than RVK_PC take several). */
        for (int r = lid; r < nc; r += wg) {
            real s = 0;
            KDECL(real c = 0)
            for (int j = 0; j < wg; j++)
                KADD(s, c, red[r * wg + j]);
            sums[plan[RVK_PLAN_SUM(c0 + r)]] = s;
        }
        BARRIER();
    }
}

/* Chebyshev moments of one arm into mom[] (RVK_PC at a time): mom[s],
 * s < nb, is sum g T_s (g = w m^2), mom[nb + k], k < np, is sum q T_k
 * (q = w f m).  The normal matrix follows from the moments
 * (rvk_moments_to_sums), so a pass costs nb + np products per pixel
 * instead of np (np + 3) / 2.  Whole group. */
DEVFN void rvk_moment_sums(int npix, int np, int nb, GLOBAL const real *mb,
                           GLOBAL const float *fx, GLOBAL const float *iv,
                           GLOBAL const real *B, LOCAL_PTR real *red,
                           LOCAL_PTR real *mom)
{
    int lid = LOCAL_ID(), wg = LOCAL_SIZE();
    int nsum = nb + np;
    for (int c0 = 0; c0 < nsum; c0 += RVK_PC) {
        real acc[RVK_PC];
        KDECL(real cmp[RVK_PC])
        for (int r = 0; r < RVK_PC; r++) {
            acc[r] = 0;
            KZERO(cmp[r]);
        }
        int nc = nsum - c0 < RVK_PC ? nsum - c0 : RVK_PC;
        for (int i = lid; i < npix; i += wg) {
            real w = (real)iv[i];
            if (!(w > 0))
                continue;
            real m = mb[i];
            real g = w * m * m, q = w * (real)fx[i] * m;
            for (int r = 0; r < nc; r++) {
                int s = c0 + r;
                int row = s < nb ? s : s - nb;
                real x = (s < nb ? g : q) * B[(rvk_long)row * npix + i];
                KADD(acc[r], cmp[r], x);
            }
        }
        /* The pass's reduction, written out as in rvk_normal_sums: as a
         * shared device function taking acc[] (private, live across its
         * barriers) PoCL returned wrong sums. */
        for (int r = 0; r < nc; r++)
            red[r * wg + lid] = acc[r];
        BARRIER();
        for (int r = lid; r < nc; r += wg) {
            real t = 0;
            KDECL(real c = 0)
            for (int j = 0; j < wg; j++)
                KADD(t, c, red[r * wg + j]);
            mom[c0 + r] = t;
        }
        BARRIER();
    }
}

/* The packed normal sums (pairs k >= l, then b) from the moments mom:
 * A_kl = (mu_{k+l} + mu_{k-l}) / 2, b_k = mom[nb + k].  One work-item
 * (the one that solves). */
DEVFN void rvk_moments_to_sums(int np, int nb, LOCAL_PTR const real *mom,
                               LOCAL_PTR real *sums)
{
    int s = 0;
    for (int k = 0; k < np; k++)
        for (int l = 0; l <= k; l++)
            sums[s++] = (real)0.5 * (mom[k + l] + mom[k - l]);
    for (int k = 0; k < np; k++)
        sums[s++] = mom[nb + k];
}

/* Continuum of pixel i: sum_k coef[k] B[k][i]. */
DEVFN real rvk_continuum(int npix, int npoly, LOCAL_PTR const real *coef,
                         GLOBAL const real *B, int i)
{
    real c = 0;
    for (int k = 0; k < npoly; k++)
        c += coef[k] * B[(rvk_long)k * npix + i];
    return c;
}

#ifndef RVK_FP64
/* Explicit residual of one arm, sum over usable pixels of
 * w (f - c m)^2 (rvfit_marg_chisq), reduced over the group through red.
 * Whole group; every item returns the sum. */
DEVFN real rvk_residual(int npix, int npoly, LOCAL_PTR const real *coef,
                        GLOBAL const real *B, GLOBAL const float *fx,
                        GLOBAL const float *iv, GLOBAL const real *mb,
                        LOCAL_PTR real *red)
{
    int lid = LOCAL_ID(), wg = LOCAL_SIZE();
    real acc = 0;
    KDECL(real cmp = 0)
    for (int i = lid; i < npix; i += wg) {
        real w = (real)iv[i];
        if (!(w > 0))
            continue;
        real c = rvk_continuum(npix, npoly, coef, B, i);
        real r = (real)fx[i] - c * mb[i];
        KADD(acc, cmp, w * r * r);
    }
    red[lid] = acc;
    BARRIER();
    if (lid == 0) {
        real s = 0;
        KDECL(real c = 0)
        for (int j = 0; j < wg; j++)
            KADD(s, c, red[j]);
        red[wg] = s;
    }
    BARRIER();
    return red[wg];
}

#endif

/* Models (mode 1): model and continuum of every pixel of one arm into mo
 * and co; zeros when !ok (arm skipped or its solve failed), as the cpu
 * backend.  Whole group. */
DEVFN void rvk_models_out(int npix, int npoly, int ok,
                          LOCAL_PTR const real *coef, GLOBAL const real *B,
                          GLOBAL const real *mb, GLOBAL float *mo,
                          GLOBAL float *co)
{
    for (int i = LOCAL_ID(); i < npix; i += LOCAL_SIZE()) {
        real c = ok ? rvk_continuum(npix, npoly, coef, B, i) : (real)0;
        mo[i] = ok ? (float)(c * mb[i]) : 0.0f;
        co[i] = ok ? (float)c : 0.0f;
    }
}

/* One work-group per point p (slot p / nrep), looping over the arms:
 * model (shift, band), normal equations, solve, residual, models. */
KERNEL RVK_LIKE_BOUNDS void rvk_like(RVK_PARAMS(RVK_LIKE_ARGS))
{
    LOCAL_DECL real red[RVK_PC * RVK_WG_MAX];
    LOCAL_DECL real sums[RVK_MAX_SUMS];
    LOCAL_DECL real mom[3 * RVFIT_MAX_POLY];
    LOCAL_DECL real A[RVFIT_MAX_POLY * RVFIT_MAX_POLY];
    LOCAL_DECL real coef[RVFIT_MAX_POLY];
    LOCAL_DECL real ldet;
#ifdef RVK_FP64
    LOCAL_DECL real lq; /* b^T A^-1 b of the arm being solved */
#else
    (void)fwf; /* the float path forms the residual explicitly */
#endif
    LOCAL_DECL int lfail;
    const int lid = LOCAL_ID();
    /* Basis table rows (the same for every arm): more than npoly means
     * the Chebyshev moments (RVK_AI_NBROW). */
    const int nb = narm > 0 ? (int)ai[RVK_AI_NBROW] : npoly;
    GLOBAL real *tb = scratch + (rvk_long)GROUP_ID() * 2 * scr_len;
    GLOBAL real *mb = tb + scr_len;
    for (int p = GROUP_ID(); p < npt; p += NUM_GROUPS()) {
        int slot = p / nrep;
        rvk_long sp = tspec[slot];
        real delta = -atanh(pv[p] / (real)RVFIT_C_KMS);
        real tot = 0;
        int fail = 0;
        rvk_long moff = 0;
        for (int a = 0; a < narm; a++) {
            GLOBAL const rvk_long *m = ai + a * RVK_AI_N;
            int npix = (int)m[RVK_AI_NPIX], ndiag = (int)m[RVK_AI_NDIAG];
            rvk_long ps = m[RVK_AI_PERSPEC] ? sp : 0;
            rvk_long doff = m[RVK_AI_DOFF] + sp * npix;
            GLOBAL const real *B = basis + m[RVK_AI_BOFF] + ps * nb * npix;
            GLOBAL const int *P = bplan + m[RVK_AI_PLOFF] + ps * RVK_PLAN_N;
            GLOBAL const float *fx = flux + doff;
            GLOBAL const float *iv = ivar + doff;
            rvk_model_arm(npix, (int)m[RVK_AI_LNPIX], ndiag,
                          delta * ad[a * RVK_AD_N + RVK_AD_INVDLNL],
                          pos + m[RVK_AI_POFF] + ps * npix,
                          tr + (rvk_long)slot * slot_len + m[RVK_AI_TROFF],
                          res + m[RVK_AI_ROFF] + sp * ndiag * npix, tb, mb);
            int use = nuse[sp * narm + a] >= npoly + 1;
            if (use && nb > npoly)
                rvk_moment_sums(npix, npoly, nb, mb, fx, iv, B, red, mom);
            else if (use)
                rvk_normal_sums(npoly, mb, fx, iv, B, npix, P, red, sums);
            if (use) {
                if (lid == 0) {
                    int f = 0;
                    real q = 0;
                    if (nb > npoly)
                        rvk_moments_to_sums(npoly, nb, mom, sums);
                    ldet = rvk_solve(npoly, sums, A, coef, &f, &q);
                    lfail = f;
#ifdef RVK_FP64
                    lq = q;
#endif
                }
                BARRIER();
                fail |= lfail;
            }
            int ok = use && !lfail;
            real chi = 0;
            if (ok) {
#ifdef RVK_FP64
                /* f^T W f - b^T A^-1 b, as the cpu backend (cpu_normal.c):
                 * no continuum, no residual pass */
                chi = fwf[sp * narm + a] - lq;
                chi = chi > 0 ? chi : (real)0;
#else
                /* in float the difference would cancel to noise: the
                 * explicit residual, compensated */
                chi = rvk_residual(npix, npoly, coef, B, fx, iv, mb, red);
#endif
                tot += chi + ldet;
            }
            if (mode == 1) {
                rvk_models_out(npix, npoly, ok, coef, B, mb,
                               mout + moff + (rvk_long)p * npix,
                               cout + moff + (rvk_long)p * npix);
                moff += (rvk_long)npt * npix;
            }
            if (lid == 0)
                achi[(rvk_long)p * narm + a] =
                    use && lfail ? (real)RVFIT_M2LNL_FAIL : chi;
            BARRIER();
        }
        if (lid == 0)
            m2lnl[p] = fail ? (real)RVFIT_M2LNL_FAIL : tot + tpen[slot];
        BARRIER();
    }
}
