/* cpu_internal.h — shared state of the cpu backend plugin (not installed).
 *
 * Layout: per batch arm, pixel rows are padded to npad (a multiple of
 * CPU_LANES) with ivar = 0 and basis = 0, so accumulation loops run over
 * whole lane groups without tails and without branches.
 */
#ifndef CPU_INTERNAL_H
#define CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rvfit/backend.h"
#include "rvfit/library.h"
#include "rvfit/physics.h"
#include "rvfit/pool.h"

/* Hot loops are also compiled for x86-64-v4 (AVX-512) and x86-64-v3
 * (AVX2) and the best clone the CPU runs is picked at load time.  Results
 * do not depend on the clone: the sums keep their explicit lane order and
 * FP contraction is off (-ffp-contract=off), so no FMA.  The v4 clone runs
 * the same 4-lane code with AVX-512VL's 32 registers and instructions:
 * desi-1k 10-17 % faster on an AMD EPYC (docs/benchmarks.md).  CPU_NO_V4
 * (a test double's build) leaves it out, so that a machine with AVX-512
 * still tests the v3 clone. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__) && !defined(CPU_NO_CLONES)
#if defined(CPU_NO_V4)
#define CPU_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CPU_HOT                                                              \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",        \
                                 "default")))
#endif
#else
#define CPU_HOT
#endif

/* Helpers of a CPU_HOT function must be inlined into each clone, or they
 * run as baseline code (GCC does not inline them by itself when large). */
#if defined(__GNUC__)
#define CPU_INLINE static inline __attribute__((always_inline))
#else
#define CPU_INLINE static inline
#endif

/* 4-double vectors (GCC/Clang vector extensions) for the hot loops; the
 * loads and stores are macros because passing AVX vectors by value would
 * differ between clones (-Wpsabi).  Each vector lane does exactly the
 * scalar operations of the fallback, in the same order. */
#if defined(__GNUC__) && !defined(CPU_NO_VEC)
#define CPU_VEC 1
typedef double cpu_v4 __attribute__((vector_size(32)));
typedef float cpu_f4 __attribute__((vector_size(16)));
#define CPU_LD(v, p) memcpy(&(v), (p), sizeof(cpu_v4))
#define CPU_ST(p, v) memcpy((p), &(v), sizeof(cpu_v4))
#define CPU_LDF(v, p)                                                      \
    do {                                                                   \
        cpu_f4 f_;                                                         \
        memcpy(&f_, (p), sizeof f_);                                       \
        (v) = (cpu_v4){f_[0], f_[1], f_[2], f_[3]};                        \
    } while (0)
#endif

/* A lane permutation of two cpu_v4 (GCC and Clang spell it apart). */
#if defined(CPU_VEC) && defined(__clang__)
#define CPU_SHUF(a, b, i0, i1, i2, i3)                                     \
    __builtin_shufflevector(a, b, i0, i1, i2, i3)
#elif defined(CPU_VEC)
#define CPU_SHUF(a, b, i0, i1, i2, i3)                                     \
    __builtin_shuffle(a, b, (long long __attribute__((vector_size(32)))){  \
                                i0, i1, i2, i3})
#endif

#define CPU_LANES 8    /* independent accumulators per sum (vectorizable) */
#define CPU_BLOCK 256  /* pixels per cache block of the normal equations  */
#define CPU_VCHUNK 32  /* velocities per vscan work item                   */
/* A template shared by at least this many velocities gets its Keys
 * coefficients (cpu_model.c): 13 flops per template pixel once, then 6
 * per data pixel instead of 27 with 4 gathered taps. */
#define CPU_KEYS_MIN_VEL 4
#define CPU_FAIL RVFIT_M2LNL_FAIL /* -2 ln L of a failed Cholesky */
#define CPU_NPAIR (RVFIT_MAX_POLY * (RVFIT_MAX_POLY + 1) / 2)
#define CPU_IMOM 7 /* moments T_0 .. T_6 per B-spline interval          */

/* ---- resident data (cpu_batch.c) ------------------------------------- */
typedef struct cpu_arm {
    char name[16];
    int lib_arm;        /* index into the library copy                    */
    size_t npix, npad;
    int wave_per_spec;
    double *u;          /* [(nspec|1)*npad] (ln lambda - lnl0)/dlnl       */
    /* B_k(x_i) at k*npad + i, and each row's support; NULL for the
     * B-splines, whose sums and continuum come from itab below */
    double *basis;      /* [(nspec|1)*npoly*npad]                         */
    uint32_t *sup;      /* [(nspec|1)*npoly*2] pixels [lo, hi) outside of
                         * which B_k is exactly 0, multiples of CPU_LANES */
    /* Chebyshev basis: T_0 .. T_{nmom-1} (nmom = 2 npoly - 1), whose
     * weighted moments give the normal matrix, T_k T_l = (T_{k+l} +
     * T_{|k-l|}) / 2 (cpu_normal.c); NULL for other bases. */
    int nmom;
    double *mom;        /* [(nspec|1)*nmom*npad]                          */
    /* B-spline basis: the pixels of interval j of grid w are [lo, hi) =
     * ilim[2 (w nint + j) ..] (widened to multiples of CPU_LANES), and
     * its table at itab + w icap + ioff[w nint + j] holds T_0 .. T_6 of
     * each pixel's interval coordinate (rvfit_pixel_cells), rows hi - lo
     * long, 0 at pixels of other intervals; the weighted moments of these
     * give the normal matrix through icheb (cpu_normal.c).  nint = 0 for
     * other bases. */
    int nint;
    uint32_t *ilim;     /* [(nspec|1)*nint*2]                             */
    size_t *ioff;       /* [(nspec|1)*nint]                               */
    size_t icap;        /* table doubles per grid                         */
    double *itab;       /* [(nspec|1)*icap]                               */
    double *icheb;      /* [nint*16] rvfit_bspline_cheb of each interval  */
    double *fwf;        /* [nspec] sum w f^2 over the usable pixels       */
    double *flux;       /* [nspec*npad] 0 where unusable                  */
    double *ivar;       /* [nspec*npad] 0 = unusable                      */
    int res_kind;       /* RVFIT_RES_NONE or RVFIT_RES_BAND               */
    int ndiag;
    /* [nspec*ndiag*npix] (BAND), as float as the batch's: in double it
     * would double the largest array of a batch (11 diagonals of DESI:
     * 0.7 GB per 1000 spectra) for no fewer instructions, since the band
     * product converts 4 values per instruction (CPU_LDF) */
    float *res;
    long *first, *last; /* [nspec] usable pixel range                     */
    long *nuse;         /* [nspec] usable pixels                          */
} cpu_arm;

/* Per-thread buffers, allocated once per (library, batch). */
typedef struct cpu_scratch {
    double *text;    /* interpolated template with rotation margins      */
    double *trx;     /* rotated template with cubic margins              */
    double *kc;      /* [4*(nt+16)] Keys cubic coefficients of trx: for
                      * buffer index k, c0..c3 with t(k + x) = c0 + x(c1 +
                      * x(c2 + x c3)) (cpu_model.c)                      */
    double *t;       /* [npad] shifted template on data pixels           */
    double *m;       /* [npad] after the band matrix                     */
    double *g, *c;   /* [npad] w m^2, w f m                              */
    double *gb;      /* [npoly*CPU_BLOCK]                                */
    double *cont;    /* [npad] continuum sum_k a_k B_k                   */
    double *acc;     /* [(CPU_NPAIR+RVFIT_MAX_POLY)*CPU_LANES]           */
    double *wrot;    /* [2*RVFIT_MAX_VSINI_HALF+1]                       */
    /* Per arm, the first Keys tap (relative to trx, less 1) and the
     * fraction of each data pixel at one shift (cpu_model.c), kept for
     * the next point of the same spectrum and velocity: [RVFIT_MAX_ARMS *
     * npad max] each, valid for the key beside them. */
    int *sk;
    double *sx;
    int *fcell;      /* [npad max] the pixels' B-spline intervals and     */
    double *fy;      /* their coordinates, while load_batch fills a grid */
    struct cpu_shift_key {
        long ok;
        size_t spec;
        double delta;
        long j0, j1, base, kmin, kmax;
    } skey[RVFIT_MAX_ARMS];
    double vacc[CPU_VCHUNK];
    int vfail[CPU_VCHUNK];
} cpu_scratch;

typedef struct cpu_state {
    const rvfit_host *host;
    int nthreads;
    size_t npad_max; /* the longest arm's npad: the scratch's row stride */
    char device[64];
    rvfit_pool *pool;   /* nthreads threads; tid indexes scr            */
    int have_lib;
    rvfit_library lib;  /* deep copy, owned                               */
    int have_batch;
    rvfit_model_opts mo;
    size_t nspec;
    int narm;
    cpu_arm arm[RVFIT_MAX_ARMS];
    /* One block holding every cpu_arm array of the batch, kept from batch
     * to batch (grown when a batch needs more): fresh pages for ~100 MB
     * per 200 DESI spectra cost more than the copy itself. */
    void *arena;
    size_t arena_cap;
    cpu_scratch *scr;   /* [nthreads]                                     */
    rvfit_counters cnt;
} cpu_state;

int cpu_load_library(void *state, const rvfit_library *lib, rvfit_err *err);
int cpu_load_batch(void *state, const rvfit_batch *batch,
                   const rvfit_model_opts *mo, rvfit_err *err);
int cpu_update_data(void *state, const rvfit_batch *batch, rvfit_err *err);
void cpu_free_library(cpu_state *st);
/* Drops the batch; its arena is kept for the next (cpu_free_arena). */
void cpu_free_batch(cpu_state *st);
void cpu_free_arena(cpu_state *st);

/* ---- evaluation entry points (cpu_eval.c) ---------------------------- */
/* backend ops 2.0: the stencil table stn from the core, or NULL (the
 * regular grid's stencils from theta). */
int cpu_chisq(void *state, size_t n, const rvfit_point *pts,
              const rvfit_stencils *stn, rvfit_chisq_out *out,
              rvfit_err *err);
int cpu_vscan(void *state, size_t nq, const rvfit_point *base,
              const rvfit_stencils *stn, size_t nvel, const double *vel,
              double *m2lnl, rvfit_err *err);
int cpu_models(void *state, size_t n, const rvfit_point *pts,
               const rvfit_stencils *stn, float *const *model,
               float *const *cont, rvfit_err *err);

/* ---- physics of one point (cpu_model.c, cpu_normal.c) ---------------- */
typedef struct cpu_stencil {
    int flat;        /* template == 1 (continuum-only or all holes)       */
    int nc;
    size_t corner[RVFIT_MAX_CORNERS];
    double weight[RVFIT_MAX_CORNERS];
    double penalty;
} cpu_stencil;

/* Pixel ranges of one arm evaluation: i0..i1 pixels whose model is
 * needed (usable ones, or all for models()), j0..j1 the shifted template
 * range the band matrix reads. */
typedef struct cpu_range {
    long i0, i1, j0, j1;
} cpu_range;

/* Prepared (interpolated + rotated) template of one arm covering the
 * shifts dmin..dmax; trx[k - base] holds logical template pixel k for
 * k in [kmin, kmax], edge values replicated. */
typedef struct cpu_tmpl {
    int flat;
    int coef;        /* the scratch's Keys coefficients are this template's */
    long base, kmin, kmax;
    double inv_dlnl;
} cpu_tmpl;

void cpu_stencil_of(const cpu_state *st, const rvfit_point *p,
                    cpu_stencil *sc);
/* Stencil i of a table from the core (backend ops 1.1, 1.2), with the
 * weights of library arm 0. */
void cpu_stencil_given(const rvfit_point *p, const rvfit_stencils *stn,
                       size_t i, cpu_stencil *sc);
/* The weights of library arm la into sc, for a table with weights per
 * arm (stn->nw > 1); nothing to do otherwise. */
void cpu_stencil_arm(const rvfit_stencils *stn, size_t i, int la,
                     cpu_stencil *sc);
void cpu_range_of(const cpu_state *st, int a, size_t s, int all,
                  cpu_range *r);
/* The template of one arm for nvel velocities in [dmin, dmax] (shifts in
 * ln lambda). */
void cpu_template(const cpu_state *st, int a, size_t s, const cpu_stencil *sc,
                  double vsini, double dmin, double dmax, int nvel,
                  const cpu_range *r, cpu_scratch *w, cpu_tmpl *tp);
/* Shift + band: fills w->m over the aligned range, zero outside i0..i1. */
void cpu_model_pixels(const cpu_state *st, int a, size_t s,
                      const cpu_tmpl *tp, double delta, const cpu_range *r,
                      cpu_scratch *w);
/* Continuum solve on w->m: chisq, logdet and, when coef is not NULL, the
 * continuum's coefficients (npoly).  Returns 0, or -1 when the Cholesky
 * fails. */
int cpu_solve(const cpu_state *st, int a, size_t s, const cpu_range *r,
              cpu_scratch *w, double *chisq, double *logdet, double *coef);
/* Continuum sum_k coef_k B_k(x_i) into w->cont over 0..npix-1. */
void cpu_continuum(const cpu_state *st, int a, size_t s, const double *coef,
                   cpu_scratch *w);

#endif
