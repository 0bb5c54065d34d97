/* test_interp_pca.c — the pca interpolator (rvfit/interp.h) on a library
 * whose fluxes are known functions of theta: arm B is 1 + (three terms
 * linear in theta) and arm R 1 + (one linear and one bilinear term), each
 * term a fixed smooth shape in wavelength.  Multilinear interpolation of
 * such models is exact, and their deviations from the mean have rank 3
 * and 2.  Known answers:
 *   - asked for an rms error of 1e-6, the decomposition keeps 3
 *     components (arm B needs 3, arm R 2), orthonormal, and reports the
 *     rms error it reaches, which a direct reconstruction of every model
 *     confirms; asked for 2 it reports arm B's error of rank 3 dropped;
 *   - the stencil over the k+1 vectors (weights per arm) gives the exact
 *     flux at random points inside the grid (to float storage), the
 *     mean's weight is 1 and the penalty outside the grid is the grid's;
 *   - with holes, the template equals the multilinear one of the models
 *     rebuilt from the components (rvfit_library_interp on the loaded
 *     library);
 *   - the library file records the kind, NPCA, vectors and coefficients:
 *     they read back bitwise, the loader rebuilds the models, a file whose
 *     NPCA or coefficient HDU is wrong is refused, as are a component
 *     count out of range and ln flux asked of a library decomposed in
 *     flux. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvfit/config.h"
#include "rvfit/interp.h"
#include "rvfit/library_io.h"
#include "testutil.h"

#define N0 4
#define N1 3
#define N2 3
#define NM (N0 * N1 * N2)
static const size_t NPIX[2] = {300, 200};

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double node_of(int axis, int i)
{
    static const double lo[3] = {3.60, 1.0, -1.0}, h[3] = {0.05, 1.0, 0.5};
    return lo[axis] + h[axis] * i;
}

/* theta relative to the grid's centre, in node spacings */
static double rel(const double *th, int p)
{
    static const double c[3] = {3.675, 2.0, -0.5}, h[3] = {0.05, 1.0, 0.5};
    return (th[p] - c[p]) / h[p];
}

static double shape(int i, size_t j, size_t n)
{
    double x = (double)j / (double)n;
    return 0.01 * (i + 1) * sin((3.0 + 2.0 * i) * x + 0.7 * i);
}

/* The flux of arm a at theta, pixel j: exact truth. */
static double truth(int a, const double *th, size_t j)
{
    size_t n = NPIX[a];
    if (a == 0)
        return 1.0 + rel(th, 0) * shape(0, j, n) + rel(th, 1) * shape(1, j, n) +
               rel(th, 2) * shape(2, j, n);
    return 1.0 + rel(th, 0) * shape(3, j, n) +
           rel(th, 1) * rel(th, 2) * shape(4, j, n);
}

static void model_theta(size_t m, double *th)
{
    th[0] = node_of(0, (int)(m / (N1 * N2)));
    th[1] = node_of(1, (int)(m / N2 % N1));
    th[2] = node_of(2, (int)(m % N2));
}

static void build(rvfit_library *lib, uint8_t *ex, int holes)
{
    memset(lib, 0, sizeof *lib);
    const char *nm[3] = {"TEFF", "LOGG", "FEH"};
    const int nn[3] = {N0, N1, N2};
    lib->nparam = 3;
    for (int p = 0; p < 3; p++) {
        strcpy(lib->axis[p].name, nm[p]);
        strcpy(lib->axis[p].unit, p ? "dex" : "K");
        lib->axis[p].nnode = nn[p];
        for (int i = 0; i < nn[p]; i++)
            lib->axis[p].node[i] = node_of(p, i);
    }
    lib->axis[0].scale = RVFIT_SCALE_LOG10;
    lib->nmodel = NM;
    lib->exists = ex;
    for (size_t m = 0; m < NM; m++)
        ex[m] = !holes || (m != 13 && m != 22);
    lib->narm = 2;
    for (int a = 0; a < 2; a++) {
        rvfit_lib_arm *la = &lib->arm[a];
        strcpy(la->name, a ? "R" : "B");
        la->lnl0 = log(a ? 6000.0 : 4000.0);
        la->dlnl = 1e-4;
        la->npix = NPIX[a];
        la->flux = malloc(NM * NPIX[a] * sizeof(float));
        for (size_t m = 0; m < NM; m++) {
            double th[3];
            model_theta(m, th);
            for (size_t j = 0; j < NPIX[a]; j++)
                la->flux[m * NPIX[a] + j] =
                    ex[m] ? (float)truth(a, th, j) : 1.0f;
        }
    }
    lib->sigma0 = 0.5;
    lib->vmax = 100;
    strcpy(lib->instrument, "desi");
    strcpy(lib->source, "test_interp_pca");
}

static void free_flux(rvfit_library *lib)
{
    for (int a = 0; a < lib->narm; a++)
        free(lib->arm[a].flux);
}

/* The template of arm a at theta through the stencil over the vectors. */
static double tmpl_of(const rvfit_interpolator *ip, const double *th,
                      int a, double *out, rvfit_stencil_buf *buf)
{
    rvfit_point p;
    memset(&p, 0, sizeof p);
    memcpy(p.theta, th, 3 * sizeof *th);
    rvfit_err err;
    CHECK(rvfit_stencil_fill(ip, 1, &p, buf, &err) == RVFIT_OK);
    const rvfit_library *v = rvfit_interp_vectors(ip);
    size_t n = v->arm[a].npix, nw = buf->nw;
    for (size_t j = 0; j < n; j++) {
        double s = 0.0;
        for (uint32_t e = buf->off[0]; e < buf->off[1]; e++)
            s += buf->w[e * nw + (size_t)a] *
                 (double)v->arm[a].flux[buf->idx[e] * n + j];
        out[j] = v->log_flux ? exp(s) : s;
    }
    return buf->pen[0];
}

static void test_decomposition(const rvfit_library *lib)
{
    rvfit_interpolator ip;
    rvfit_err err;
    CHECK(rvfit_interp_open_pca(&ip, lib, 0, 1e-6, &err) == RVFIT_OK);
    CHECK_MSG(rvfit_interp_pca_k(&ip) == 3, "k = %d",
              rvfit_interp_pca_k(&ip));
    CHECK(rvfit_interp_nweights(&ip) == 2);
    const rvfit_library *v = rvfit_interp_vectors(&ip);
    CHECK(v->nmodel == 4 && v->nparam == 1 && v->narm == 2);
    CHECK(rvfit_library_check(v, &err) == RVFIT_OK);
    double worst_orth = 0.0;
    for (int a = 0; a < 2; a++) {
        size_t n = NPIX[a];
        for (int i = 1; i <= 3; i++)
            for (int k = 1; k <= 3; k++) {
                double s = 0.0;
                for (size_t j = 0; j < n; j++)
                    s += (double)v->arm[a].flux[i * n + j] *
                         v->arm[a].flux[k * n + j];
                worst_orth = fmax(worst_orth, fabs(s - (i == k)));
            }
        printf("arm %s: rms %.3g with 3 components\n", lib->arm[a].name,
               rvfit_interp_pca_rms(&ip, a));
        CHECK(rvfit_interp_pca_rms(&ip, a) <= 1e-6);
    }
    printf("orthonormal to %.2g\n", worst_orth);
    CHECK(worst_orth < 1e-5);

    /* exact at random points; mean weight 1 */
    rvfit_stencil_buf buf;
    memset(&buf, 0, sizeof buf);
    double worst = 0.0, out[300];
    for (int i = 0; i < 200; i++) {
        double th[3];
        for (int p = 0; p < 3; p++)
            th[p] = node_of(p, 0) +
                    urand() * (node_of(p, p ? 2 : 3) - node_of(p, 0));
        for (int a = 0; a < 2; a++) {
            double pen = tmpl_of(&ip, th, a, out, &buf);
            CHECK(pen == 0.0 && buf.off[1] == 4);
            CHECK_NEAR(buf.w[a], 1.0, 1e-14);
            for (size_t j = 0; j < NPIX[a]; j++)
                worst = fmax(worst, fabs(out[j] - truth(a, th, j)));
        }
    }
    printf("template vs truth inside the grid: %.2g\n", worst);
    CHECK(worst < 2e-6);

    /* outside: the grid's penalty */
    double th[3] = {node_of(0, 3) + 0.02, node_of(1, 1), node_of(2, 0) - 0.1};
    double pen = tmpl_of(&ip, th, 0, out, &buf), gpen = 0.0;
    size_t c[RVFIT_MAX_CORNERS];
    double w[RVFIT_MAX_CORNERS];
    rvfit_library_stencil(lib, th, c, w, &gpen);
    CHECK(gpen > 0 && pen == gpen);
    rvfit_stencil_buf_free(&buf);
    rvfit_interp_close(&ip);

    /* 2 components: arm B's third term is lost; the reported rms is a
     * direct reconstruction's */
    CHECK(rvfit_interp_open_pca(&ip, lib, 2, 0.0, &err) == RVFIT_OK);
    v = rvfit_interp_vectors(&ip);
    for (int a = 0; a < 2; a++) {
        double ss = 0.0;
        size_t n = NPIX[a];
        for (size_t m = 0; m < NM; m++) {
            double th2[3];
            model_theta(m, th2);
            rvfit_point p;
            memset(&p, 0, sizeof p);
            memcpy(p.theta, th2, sizeof th2);
            CHECK(rvfit_stencil_fill(&ip, 1, &p, &buf, &err) == RVFIT_OK);
            for (size_t j = 0; j < n; j++) {
                double s = 0.0;
                for (uint32_t e = 0; e < buf.off[1]; e++)
                    s += buf.w[e * 2 + (size_t)a] *
                         (double)v->arm[a].flux[buf.idx[e] * n + j];
                double d = s - lib->arm[a].flux[m * n + j];
                ss += d * d;
            }
        }
        double rms = sqrt(ss / (double)(NM * n));
        printf("arm %s, 2 components: reported rms %.4g, direct %.4g\n",
               lib->arm[a].name, rvfit_interp_pca_rms(&ip, a), rms);
        CHECK(fabs(rms - rvfit_interp_pca_rms(&ip, a)) <= 1e-3 * rms + 1e-7);
        if (a == 0)
            CHECK(rms > 1e-3);
    }
    rvfit_stencil_buf_free(&buf);
    rvfit_interp_close(&ip);

    CHECK(rvfit_interp_open_pca(&ip, lib, NM, 0.0, &err) ==
          RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "between 1 and"), "%s", err.msg);
}

static void test_file(rvfit_library *lib)
{
    const char *dir = tu_tmpdir("interp_pca");
    char file[600];
    snprintf(file, sizeof file, "%s/%s", dir, RVFIT_LIBRARY_FILE);
    rvfit_interpolator ip, ip2;
    rvfit_err err;
    CHECK(rvfit_interp_open_pca(&ip, lib, 0, 1e-6, &err) == RVFIT_OK);
    CHECK(rvfit_library_save_interp(lib, &ip, dir, &err) == RVFIT_OK);
    CHECK(tu_read_key(file, 1, "NPCA") == 3);
    rvfit_library L;
    CHECK_MSG(rvfit_library_open(&L, &ip2, dir, &err) == RVFIT_OK, "%s",
              err.msg);
    CHECK(!strcmp(rvfit_interp_name(&ip2), "pca"));
    const rvfit_library *v1 = rvfit_interp_vectors(&ip);
    const rvfit_library *v2 = rvfit_interp_vectors(&ip2);
    for (int a = 0; a < 2; a++)
        CHECK(memcmp(v1->arm[a].flux, v2->arm[a].flux,
                     4 * NPIX[a] * sizeof(float)) == 0);
    CHECK(rvfit_interp_pca_rms(&ip2, 1) == rvfit_interp_pca_rms(&ip, 1));
    /* the loaded models are the rebuilt ones: the multilinear template
     * of them equals the pca template (holes included) */
    rvfit_stencil_buf buf;
    memset(&buf, 0, sizeof buf);
    double worst = 0.0, worst_model = 0.0, out[300], ref[300];
    for (int i = 0; i < 100; i++) {
        double th[3];
        for (int p = 0; p < 3; p++)
            th[p] = node_of(p, 0) +
                    urand() * (node_of(p, p ? 2 : 3) - node_of(p, 0));
        for (int a = 0; a < 2; a++) {
            tmpl_of(&ip2, th, a, out, &buf);
            rvfit_library_interp(&L, a, th, ref);
            for (size_t j = 0; j < NPIX[a]; j++)
                worst = fmax(worst, fabs(out[j] - ref[j]));
        }
    }
    for (int a = 0; a < 2; a++)
        for (size_t i = 0; i < NM * NPIX[a]; i++)
            if (L.exists[i / NPIX[a]])
                worst_model = fmax(worst_model, fabs(L.arm[a].flux[i] -
                                                     lib->arm[a].flux[i]));
    printf("file: pca vs multilinear on the rebuilt models %.2g, rebuilt "
           "vs original models %.2g\n", worst, worst_model);
    CHECK(worst < 1e-6 && worst_model < 1e-6);
    rvfit_stencil_buf_free(&buf);
    rvfit_interp_close(&ip2);
    /* ln flux asked of a library decomposed in flux */
    rvfit_config cfg;
    rvfit_config_defaults(&cfg);
    cfg.log_flux = 1;
    rvfit_library L2;
    CHECK(rvfit_library_open_fit(&L2, &ip2, dir, &cfg, &err) ==
          RVFIT_ERR_CONFIG);
    CHECK_MSG(tu_contains(err.msg, "cannot change a pca library"), "%s",
              err.msg);
    rvfit_config_free(&cfg);
    rvfit_library_free(&L);

    /* broken records */
    CHECK(tu_patch_card(file, 1, "NPCA", "300") == 0);
    CHECK(rvfit_library_load(&L, dir, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "NPCA = 300"), "%s", err.msg);
    CHECK(rvfit_library_save_interp(lib, &ip, dir, &err) == RVFIT_OK);
    CHECK(tu_patch_card(file, 3 + 3 + 2, "EXTNAME", "'PCAXXX_B'") == 0);
    CHECK(rvfit_library_load(&L, dir, &err) == RVFIT_ERR_FORMAT);
    CHECK_MSG(tu_contains(err.msg, "PCACOEF_"), "%s", err.msg);
    rvfit_interp_close(&ip);
}

/* ln flux: decomposed in ln flux, recorded, read back as ln flux. */
static void test_log_flux(rvfit_library *lib)
{
    rvfit_err err;
    CHECK(rvfit_library_set_log_flux(lib, &err) == RVFIT_OK);
    rvfit_interpolator ip, ip2;
    CHECK(rvfit_interp_open_pca(&ip, lib, 0, 1e-4, &err) == RVFIT_OK);
    const char *dir = tu_tmpdir("interp_pca_ln");
    CHECK(rvfit_library_save_interp(lib, &ip, dir, &err) == RVFIT_OK);
    rvfit_library L;
    CHECK_MSG(rvfit_library_open(&L, &ip2, dir, &err) == RVFIT_OK, "%s",
              err.msg);
    CHECK(L.log_flux == 1 && !strcmp(rvfit_interp_name(&ip2), "pca"));
    CHECK(rvfit_interp_vectors(&ip2)->log_flux == 1);
    rvfit_stencil_buf buf;
    memset(&buf, 0, sizeof buf);
    double th[3] = {3.66, 1.7, -0.8}, out[300], worst = 0.0;
    tmpl_of(&ip2, th, 0, out, &buf);
    double ref[300];
    rvfit_library_interp(&L, 0, th, ref); /* exponentiated too */
    for (size_t j = 0; j < NPIX[0]; j++)
        worst = fmax(worst, fabs(out[j] / ref[j] - 1.0));
    printf("ln flux: pca vs multilinear of the rebuilt models %.2g, rms "
           "%.3g with %d components\n", worst, rvfit_interp_pca_rms(&ip2, 0),
           rvfit_interp_pca_k(&ip2));
    CHECK(worst < 1e-6 && out[0] > 0.5 && out[0] < 1.5);
    rvfit_stencil_buf_free(&buf);
    rvfit_interp_close(&ip2);
    rvfit_interp_close(&ip);
    rvfit_library_free(&L);
}

int main(void)
{
    static uint8_t ex[NM], exh[NM];
    rvfit_library lib, libh;
    build(&lib, ex, 0);
    test_decomposition(&lib);
    build(&libh, exh, 1); /* two holes */
    test_file(&libh);
    test_log_flux(&libh);
    free_flux(&lib);
    free_flux(&libh);
    return tu_finish("test_interp_pca");
}
