/* rvk_host.h — host-side preparation of the data the shared kernels
 * (rvfit_kernels.c) read, compiled into both GPU backends (opencl, cuda and
 * the emulated cuda build).  Vendor-neutral only: validation of what a
 * backend is given, the flat layouts of rvfit_klayout.h, host images of the
 * library and batch arrays in the device's real type, conversions between
 * host doubles and device reals, and the options both backends share.
 * Buffers, queues, streams and launches stay in each plugin, which uploads
 * the images built here.
 *
 * "Real" below is the device's floating type: double when the device code
 * is built with RVK_FP64 (fp64 != 0), float otherwise.
 */
#ifndef RVK_HOST_H
#define RVK_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "rvfit/backend.h"
#include "rvfit/library.h"
#include "rvfit/pool.h"
#include "rvfit_kargs.h"
#include "rvfit_klayout.h"

/* The resident library as the host code needs it once the fluxes are on
 * the device. */
typedef struct rvk_lib {
    int have;                     /* loaded (set by the plugin on success) */
    int nparam;
    size_t nmodel;
    rvfit_library meta;           /* axes and arms; flux, exists NULL      */
    size_t lfoff[RVFIT_MAX_ARMS]; /* first float of arm a in the flux array */
    size_t nflux;                 /* floats of every arm's models          */
} rvk_lib;

/* Host images of the library arrays except the fluxes (the plugin copies
 * lib->arm[a].flux to lfoff[a] of its flux buffer itself). */
typedef struct rvk_lib_img {
    int32_t nn[RVK_NN_N(RVFIT_MAX_PARAMS)]; /* axis table (RVK_NN_*);
                                      uploaded as RVK_NN_N(na) ints     */
    size_t na;                    /* axes in the tables (>= 1)            */
    void *nodes;                  /* na * RVFIT_MAX_NODES reals           */
    uint8_t *ex;                  /* nmodel: 1 = model exists             */
} rvk_lib_img;

/* Geometry of the resident batch, as the launches and chunking need it. */
typedef struct rvk_batch {
    int have;                     /* loaded (set by the plugin on success) */
    size_t nspec;
    int narm, npoly;
    int basis;                    /* enum rvfit_basis_kind                  */
    size_t npix[RVFIT_MAX_ARMS];  /* observed pixels of batch arm a        */
    size_t npix_sum, npix_max;    /* over batch arms                        */
    size_t lnpix_max;             /* template pixels, largest matching arm */
    size_t slot_len;              /* reals per template slot               */
    int larm[RVFIT_MAX_ARMS];     /* library arm of batch arm a            */
} rvk_batch;

/* Host images of the batch arrays, concatenated over arms (offsets in ai,
 * see RVK_AI_*).  Element counts are exact; every pointer is valid even
 * for a count of 0.  The band matrices are not copied: res[a] points into
 * the batch given to rvk_batch_prepare (valid while it is), and a plugin
 * uploads arm a's ndiag * npix * nspec floats to offset ai[RVK_AI_ROFF].
 * The buffers are kept from one rvk_batch_prepare to the next and grown
 * when a batch needs more (cap_*, in bytes): a reload of a batch of the
 * same size writes into pages already mapped instead of faulting in
 * fresh ones (most of a GPU backend's load_batch time on a virtual
 * machine). */
typedef struct rvk_batch_img {
    int64_t ai[RVFIT_MAX_ARMS * RVK_AI_N]; /* narm * RVK_AI_N used        */
    double ad[RVFIT_MAX_ARMS * RVK_AD_N];  /* narm * RVK_AD_N reals       */
    size_t npos, nbas, ndata, nres, nnuse, nplan;
    double *pos, *basis;  /* npos, nbas reals (stored in double slots)   */
    int32_t *bplan;        /* nplan: basis rows' non-zero pixel ranges     */
    double *fwf;          /* nnuse reals: sum w f^2 over usable pixels   */
    float *flux, *ivar;   /* ndata: sanitised (0 where unusable)          */
    const float *res[RVFIT_MAX_ARMS]; /* the batch's band matrices, or NULL
                             when arm a has none                          */
    int32_t *nuse;        /* nnuse = nspec * narm: usable pixels [s][a]   */
    size_t cap_pos, cap_basis, cap_bplan, cap_fwf, cap_flux, cap_ivar,
        cap_nuse;         /* bytes allocated                               */
    rvfit_pool *pool;     /* threads that fill flux/ivar, spectrum by
                             spectrum (made by the first prepare)          */
} rvk_batch_img;

/* ---- library --------------------------------------------------------- */

/* Validate lib for the kernels (sizes, axes, 32-bit index limits), then
 * fill *L (have = 0) and the axis/hole images *im in reals.  On failure
 * nothing is left allocated; err says why (RVFIT_ERR_INVALID or
 * RVFIT_ERR_NOMEM). */
int rvk_lib_prepare(const rvfit_library *lib, int fp64, rvk_lib *L,
                    rvk_lib_img *im, rvfit_err *err);
void rvk_lib_img_free(rvk_lib_img *im);

/* ---- batch ------------------------------------------------------------ */

/* Validate the batch and model options against the loaded library L
 * (which must have L->have set), fill *B (have = 0) and the batch images
 * *im with pos, basis and ad already in reals.  *im is zeroed before its
 * first use and keeps its buffers and its pool of nthreads threads (the
 * host's [run] threads; made on the first call) between calls (free them
 * with rvk_batch_img_free); on failure its contents are undefined but
 * still owned by it; err says why.  The images do not depend on the
 * thread count. */
int rvk_batch_prepare(const rvk_lib *L, const rvfit_batch *bt,
                      const rvfit_model_opts *mo, int fp64, int nthreads,
                      rvk_batch *B, rvk_batch_img *im, rvfit_err *err);
void rvk_batch_img_free(rvk_batch_img *im);
/* Bytes of arm a's band matrices in the images of batch B (0 when the
 * arm has none); they go to float offset ai[RVK_AI_ROFF] of the device's
 * resolution buffer, from im->res[a]. */
size_t rvk_res_bytes(const rvk_batch_img *im, const rvk_batch *B, int a);
/* New flux and ivar of the resident batch B (backend ops update_data):
 * bt must have B's spectra, arms and pixel counts (else
 * RVFIT_ERR_INVALID); refills flux, ivar, nuse and fwf (in reals) of the
 * images that rvk_batch_prepare made for it.  The plugin uploads those
 * four arrays again, nothing else. */
int rvk_batch_update(const rvk_batch *B, const rvfit_batch *bt, int fp64,
                     rvk_batch_img *im, rvfit_err *err);

/* ---- host <-> device reals ------------------------------------------- */

/* n doubles to reals in dst; dst == src is allowed (in place). */
void rvk_to_real(int fp64, const double *src, size_t n, void *dst);
/* Real i of src as a double. */
double rvk_real_at(int fp64, const void *src, size_t i);
/* Store v as real i of base (no alignment needed). */
void rvk_put_real(int fp64, void *base, size_t i, double v);
/* A -2 ln L or chisq result: real i of src, with RVFIT_M2LNL_FAIL restored
 * exactly when it went through float. */
double rvk_result_at(int fp64, const void *src, size_t i);

/* ---- shared by the evaluation code ------------------------------------ */

/* Statements for a function of a pointer `a` to a backend's argument
 * struct (fields named by the lists of rvfit_kargs.h): return the name
 * of the first IN or OUT argument left NULL, so that a buffer forgotten
 * in a struct initialiser fails with its name instead of computing from
 * nothing.  Use: LIST(RVK_MISSING) return NULL; */
#define RVK_MISSING(kind, type, name) RVK_MISSING_##kind(name)
#define RVK_MISSING_VAL(name)
#define RVK_MISSING_IN(name)                                               \
    if (!a->name)                                                          \
        return #name;
#define RVK_MISSING_OUT(name) RVK_MISSING_IN(name)

/* Stencil tables as the kernels read them: st_nw weights per entry (1
 * when sn->nw == 1, else one per batch arm), and the weight of entry e
 * for batch arm a (library arm B->larm[a]; a is ignored when st_nw ==
 * 1).  Entry e, arm a goes to st_w[e * st_nw + a]. */
int rvk_stencil_nw(const rvfit_stencils *sn, const rvk_batch *B);
double rvk_stencil_w(const rvfit_stencils *sn, const rvk_batch *B,
                     size_t e, int a);

/* The velocities every backend admits (as the cpu reference): finite and
 * |v| < c/2. */
int rvk_velocity_ok(double v);
/* Groups (blocks) per launch for a device with `units` compute units:
 * enough to fill it several times over, within [32, 8192]; each group owns
 * global scratch, so this also bounds scratch memory. */
size_t rvk_maxgroups(size_t units);

/* Options wgsize (power of two in [wg_min, RVK_WG_MAX], default wg_def),
 * scratch_mb (1..2^20, default mb_def) and fp64 (-1 auto, 0, 1; *fp64
 * holds its default on entry).  RVFIT_ERR_CONFIG with the key on a bad
 * value. */
int rvk_options(const rvfit_kv *opts, int nopt, long wg_def, long wg_min,
                long mb_def, size_t *wg, size_t *scratch_bytes, long *fp64,
                rvfit_err *err);

#endif
