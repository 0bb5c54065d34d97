/* pca_build.c — the decomposition of the pca interpolator: per arm
 * the mean of the existing models and the principal components of their
 * deviations from it, from the eigenvectors of the models' Gram matrix
 * (LAPACKE_dsyevd on G = Xc Xc^T, ne x ne with ne the models present;
 * BLAS dsyrk and dgemm over blocks of pixels, so that no ne x npix copy
 * in double is ever held).  With u_i the eigenvector of eigenvalue l_i,
 * component i is Xc^T u_i / sqrt(l_i) (unit norm) and model m's
 * coefficient sqrt(l_i) u_i[m] (here: its projection on the component
 * as stored); the squared reconstruction error of k components summed
 * over models and pixels is sum_{i>k} l_i.
 *
 * LAPACKE and CBLAS (Debian's liblapacke, libblas/OpenBLAS) are loaded
 * with dlopen when a decomposition runs, not linked: OpenBLAS starts its
 * worker threads as soon as it is loaded, with every signal unblocked,
 * and a process that only fits (and takes SIGINT with sigwait in one
 * thread, core/cli/cli_signal.c) must not carry them. */
#include <cblas.h>
#include <dlfcn.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pca_internal.h"

#define PB 1024 /* pixels per block */

/* The three routines, by their C ABI (enums are ints; LP64 integers). */
typedef void (*pb_dsyrk_fn)(int order, int uplo, int trans, int n, int k,
                            double alpha, const double *a, int lda,
                            double beta, double *c, int ldc);
typedef void (*pb_dgemm_fn)(int order, int ta, int tb, int m, int n, int k,
                            double alpha, const double *a, int lda,
                            const double *b, int ldb, double beta, double *c,
                            int ldc);
typedef lapack_int (*pb_dsyevd_fn)(int layout, char jobz, char uplo,
                                   lapack_int n, double *a, lapack_int lda,
                                   double *w);
_Static_assert(sizeof(lapack_int) == sizeof(int) &&
                   CblasRowMajor == LAPACK_ROW_MAJOR,
               "pca: LP64 LAPACKE and CBLAS expected");

typedef struct pb_la {
    void *h[2];
    pb_dsyrk_fn dsyrk;
    pb_dgemm_fn dgemm;
    pb_dsyevd_fn dsyevd;
} pb_la;

/* The first of names that loads and has sym. */
static void *pb_sym(const char *const *names, const char *sym, void **h)
{
    for (int i = 0; names[i]; i++) {
        /* NODELETE: OpenBLAS must not be unloaded while its threads run */
        void *d = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        void *f = d ? dlsym(d, sym) : NULL;
        if (f) {
            *h = d;
            return f;
        }
        if (d)
            dlclose(d);
    }
    return NULL;
}

static int pb_la_open(pb_la *L, rvfit_err *err)
{
    static const char *const lapacke[] = {"liblapacke.so.3",
                                          "libopenblas.so.0", NULL};
    static const char *const cblas[] = {"libblas.so.3", "libcblas.so.3",
                                        "libopenblas.so.0", NULL};
    memset(L, 0, sizeof *L);
    void *f = pb_sym(lapacke, "LAPACKE_dsyevd", &L->h[0]);
    memcpy(&L->dsyevd, &f, sizeof f); /* object to function pointer */
    f = pb_sym(cblas, "cblas_dsyrk", &L->h[1]);
    memcpy(&L->dsyrk, &f, sizeof f);
    f = L->h[1] ? dlsym(L->h[1], "cblas_dgemm") : NULL;
    memcpy(&L->dgemm, &f, sizeof f);
    if (L->dsyevd && L->dsyrk && L->dgemm)
        return RVFIT_OK;
    const char *why = dlerror();
    return rvfit_err_set(err, RVFIT_ERR_UNAVAILABLE, "pca: cannot load %s "
                         "(%s): install liblapacke-dev and libopenblas-dev "
                         "(scripts/setup-deps.sh)",
                         L->dsyevd ? "CBLAS (libblas.so.3)"
                                   : "LAPACKE (liblapacke.so.3)",
                         why ? why : "symbol not found");
}

static void pb_la_close(pb_la *L)
{
    for (int i = 0; i < 2; i++)
        if (L->h[i])
            dlclose(L->h[i]);
}

/* One arm's existing models minus their mean, pixels p0..p0+n-1, into
 * xc[ne][n]; the mean into mu (once, by the caller's first pass). */
static void pb_block(const rvfit_lib_arm *la, const size_t *mod, size_t ne,
                     const double *mu, size_t p0, size_t n, double *xc)
{
    for (size_t r = 0; r < ne; r++) {
        const float *f = la->flux + mod[r] * la->npix + p0;
        for (size_t j = 0; j < n; j++)
            xc[r * n + j] = (double)f[j] - mu[p0 + j];
    }
}

/* The eigen-decomposition of one arm: g[ne][ne] holds the eigenvectors
 * (columns) on return, lam the eigenvalues, descending. */
typedef struct pb_arm {
    double *g, *lam;
    double *mu;
} pb_arm;

static int pb_decompose(const pb_la *L, const rvfit_lib_arm *la,
                        const size_t *mod, size_t ne, double *xc, pb_arm *pa,
                        rvfit_err *err)
{
    size_t np = la->npix;
    memset(pa->mu, 0, np * sizeof *pa->mu);
    for (size_t r = 0; r < ne; r++) {
        const float *f = la->flux + mod[r] * np;
        for (size_t j = 0; j < np; j++)
            pa->mu[j] += (double)f[j];
    }
    for (size_t j = 0; j < np; j++)
        pa->mu[j] /= (double)ne;
    memset(pa->g, 0, ne * ne * sizeof *pa->g);
    for (size_t p0 = 0; p0 < np; p0 += PB) {
        size_t n = np - p0 < PB ? np - p0 : PB;
        pb_block(la, mod, ne, pa->mu, p0, n, xc);
        L->dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)ne, (int)n,
                 1.0, xc, (int)n, 1.0, pa->g, (int)ne);
    }
    lapack_int info = L->dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)ne,
                                pa->g, (lapack_int)ne, pa->lam);
    if (info != 0)
        return rvfit_err_set(err, RVFIT_ERR_INTERNAL, "pca: arm %s: "
                             "LAPACKE_dsyevd failed (info %d)", la->name,
                             (int)info);
    /* ascending -> descending, eigenvectors with them */
    for (size_t i = 0; i < ne / 2; i++) {
        size_t j = ne - 1 - i;
        double t = pa->lam[i];
        pa->lam[i] = pa->lam[j];
        pa->lam[j] = t;
        for (size_t r = 0; r < ne; r++) {
            t = pa->g[r * ne + i];
            pa->g[r * ne + i] = pa->g[r * ne + j];
            pa->g[r * ne + j] = t;
        }
    }
    for (size_t i = 0; i < ne; i++) /* rounding can leave tiny negatives */
        pa->lam[i] = pa->lam[i] > 0.0 ? pa->lam[i] : 0.0;
    return RVFIT_OK;
}

/* rms reconstruction error of k components: sqrt(sum_{i>=k} lam / n). */
static double pb_rms(const double *lam, size_t ne, size_t k, size_t npix)
{
    double s = 0.0;
    for (size_t i = ne; i-- > k;)
        s += lam[i];
    return sqrt(s / ((double)ne * (double)npix));
}

/* Modified Gram-Schmidt, twice, on the k rows of v[k][np]: the Gram
 * route loses orthogonality in components of tiny eigenvalue (relative
 * error ~ eps * l_1 / l_i), which the stored basis should not inherit. */
static void pb_orthonormalize(double *v, size_t k, size_t np)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < k; i++) {
            double *vi = v + i * np;
            for (size_t q = 0; q < i; q++) {
                const double *vq = v + q * np;
                double d = 0.0;
                for (size_t j = 0; j < np; j++)
                    d += vi[j] * vq[j];
                for (size_t j = 0; j < np; j++)
                    vi[j] -= d * vq[j];
            }
            double nn = 0.0;
            for (size_t j = 0; j < np; j++)
                nn += vi[j] * vi[j];
            double s = nn > 0.0 ? 1.0 / sqrt(nn) : 0.0;
            for (size_t j = 0; j < np; j++)
                vi[j] *= s;
        }
}

/* Components and coefficients of one arm from its decomposition: the
 * components Xc^T u_i / sqrt(l_i), orthonormalised and rounded to float
 * as stored; each model's coefficients its projections on the stored
 * components (least squares to their rounding); each component's sign
 * makes its largest coefficient positive (the eigen-solver's sign is
 * arbitrary).  vd: [k][npix] scratch. */
static void pb_components(const pb_la *L, const rvfit_lib_arm *la,
                          const size_t *mod, size_t ne, const pb_arm *pa,
                          int k, double *xc, double *ut, double *vd,
                          pca_data *pd, int a)
{
    size_t np = la->npix, K = (size_t)k;
    for (size_t i = 0; i < K; i++) {
        double sl = sqrt(pa->lam[i]);
        for (size_t r = 0; r < ne; r++)
            ut[i * ne + r] = sl > 0 ? pa->g[r * ne + i] / sl : 0.0;
    }
    double *vb = vd + K * np; /* [k][PB] block product */
    for (size_t p0 = 0; p0 < np; p0 += PB) {
        size_t n = np - p0 < PB ? np - p0 : PB;
        pb_block(la, mod, ne, pa->mu, p0, n, xc);
        L->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)K, (int)n,
                 (int)ne, 1.0, ut, (int)ne, xc, (int)n, 0.0, vb, (int)n);
        for (size_t i = 0; i < K; i++)
            memcpy(vd + i * np + p0, vb + i * n, n * sizeof *vd);
    }
    pb_orthonormalize(vd, K, np);
    for (size_t i = 0; i < K * np; i++) /* as stored */
        vd[i] = (double)(float)vd[i];
    /* coefficients: C[ne][k] = Xc Vf^T, accumulated over blocks (ut
     * reused as C) */
    double *c = ut;
    memset(c, 0, ne * K * sizeof *c);
    for (size_t p0 = 0; p0 < np; p0 += PB) {
        size_t n = np - p0 < PB ? np - p0 : PB;
        pb_block(la, mod, ne, pa->mu, p0, n, xc);
        L->dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ne, (int)K,
                 (int)n, 1.0, xc, (int)n, vd + p0, (int)np, 1.0, c, (int)K);
    }
    float *v = pd->vec[a];
    for (size_t j = 0; j < np; j++)
        v[j] = (float)pa->mu[j];
    for (size_t i = 0; i < K; i++) {
        size_t big = 0;
        for (size_t r = 1; r < ne; r++)
            if (fabs(c[r * K + i]) > fabs(c[big * K + i]))
                big = r;
        double sg = c[big * K + i] < 0 ? -1.0 : 1.0;
        for (size_t r = 0; r < ne; r++)
            pd->coef[a][mod[r] * K + i] = sg * c[r * K + i];
        for (size_t j = 0; j < np; j++)
            v[(i + 1) * np + j] = (float)(sg * vd[i * np + j]);
    }
}

/* The smallest k reaching rms in every arm (k given: checked). */
static int pb_choose(const rvfit_library *lib, const pb_arm *pa, size_t ne,
                     int k, double rms, int *out, rvfit_err *err)
{
    int kmax = (int)(ne - 1 < RVFIT_MAX_STENCIL - 1 ? ne - 1
                                                    : RVFIT_MAX_STENCIL - 1);
    if (k > kmax || (k == 0 && !(rms > 0.0)) || k < 0 || kmax < 1)
        return rvfit_err_set(err, RVFIT_ERR_CONFIG, "pca: %d components "
                             "asked for (rms %g), %zu models present: "
                             "between 1 and %d", k, rms, ne, kmax);
    if (k == 0) {
        for (int a = 0; a < lib->narm; a++) {
            int ka = 1;
            while (ka < kmax && pb_rms(pa[a].lam, ne, (size_t)ka,
                                       lib->arm[a].npix) > rms)
                ka++;
            if (pb_rms(pa[a].lam, ne, (size_t)ka, lib->arm[a].npix) > rms)
                return rvfit_err_set(err, RVFIT_ERR_CONFIG, "pca: arm %s "
                                     "needs more than %d components for an "
                                     "rms error of %g (%d give %.3g)",
                                     lib->arm[a].name, kmax, rms, kmax,
                                     pb_rms(pa[a].lam, ne, (size_t)kmax,
                                            lib->arm[a].npix));
            k = ka > k ? ka : k;
        }
    }
    *out = k;
    return RVFIT_OK;
}

static void pb_arms_free(pb_arm *pa, int narm)
{
    for (int a = 0; a < narm; a++) {
        free(pa[a].g);
        free(pa[a].lam);
        free(pa[a].mu);
    }
}

int pca_build(const rvfit_library *lib, int k, double rms, pca_data **out,
              rvfit_err *err)
{
    *out = NULL;
    size_t ne = 0;
    int k_in = k;
    size_t *mod = malloc(lib->nmodel * sizeof *mod);
    if (!mod)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "pca: no memory");
    for (size_t m = 0; m < lib->nmodel; m++)
        if (!lib->exists || lib->exists[m])
            mod[ne++] = m;
    pb_arm pa[RVFIT_MAX_ARMS];
    memset(pa, 0, sizeof pa);
    pb_la L;
    int rc = pb_la_open(&L, err);
    double *xc = rc ? NULL : malloc(ne * PB * sizeof *xc);
    if (!rc && !xc)
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "pca: no memory");
    for (int a = 0; a < lib->narm && !rc; a++) {
        pa[a].g = malloc(ne * ne * sizeof(double));
        pa[a].lam = malloc(ne * sizeof(double));
        pa[a].mu = malloc(lib->arm[a].npix * sizeof(double));
        rc = pa[a].g && pa[a].lam && pa[a].mu
                 ? pb_decompose(&L, &lib->arm[a], mod, ne, xc, &pa[a], err)
                 : rvfit_err_set(err, RVFIT_ERR_NOMEM, "pca: no memory for "
                                 "%zu models", ne);
    }
    if (!rc)
        rc = pb_choose(lib, pa, ne, k, rms, &k, err);
    pca_data *pd = NULL;
    if (!rc)
        rc = pca_alloc(lib, k, &pd, err);
    size_t npmax = 0;
    for (int a = 0; a < lib->narm; a++)
        npmax = lib->arm[a].npix > npmax ? lib->arm[a].npix : npmax;
    double *ut = rc ? NULL : malloc((size_t)k * ne * sizeof *ut);
    double *vd = rc ? NULL : malloc((size_t)k * (npmax + PB) * sizeof *vd);
    if (!rc && (!ut || !vd))
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "pca: no memory");
    for (int a = 0; a < lib->narm && !rc; a++) {
        pb_components(&L, &lib->arm[a], mod, ne, &pa[a], k, xc, ut, vd, pd,
                      a);
        pd->rms[a] = pb_rms(pa[a].lam, ne, (size_t)k, lib->arm[a].npix);
    }
    if (!rc) {
        pd->target = k_in ? 0.0 : rms;
        rc = pca_finish(lib, pd, err);
    }
    free(ut), free(vd), free(xc), free(mod);
    pb_arms_free(pa, lib->narm);
    pb_la_close(&L);
    if (rc)
        pca_free(pd);
    else
        *out = pd;
    return rc;
}
