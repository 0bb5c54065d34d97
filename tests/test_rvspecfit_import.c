/* test_rvspecfit_import.c — rvfit_templates_from_rvspecfit on small
 * specs_{setup}.h5 files written here with the HDF5 C API in the layout
 * rvspecfit's serializer (h5py) gives them (vlen UTF-8 strings, booleans
 * as h5py's int8 enum, mapper_args a [1][k] int64 array): known answers
 * for the axes, holes, wavelengths, flux (exp of the stored ln flux, a
 * constant factor apart), the LSF from the recorded command line and the
 * interpolator chosen; and for malformed files, errors naming the file,
 * the dataset and the reason.  The end-to-end check against rvspecfit
 * itself is test_rvspecfit_fit.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rvfit/interp.h"
#include "rvfit/physics.h"
#include "rvfit/rvspecfit.h"
#include "testutil.h"

#ifdef RVFIT_HAVE_HDF5
#include <hdf5.h>

#define FWHM_SIGMA 2.3548200450309493
#define NPAR 4

/* The toy instrument: two arms; templates 0.5 A per pixel at mid-arm. */
static const rvfit_template_arm ARMS[2] = {{"B", 4000.0, 4100.0, 0.5, 0.0},
                                           {"R", 5000.0, 5100.0, 0.5, 0.0}};
static const double TEFF[3] = {4000, 5000, 6000}, LOGG[2] = {1, 2},
                    FEH[2] = {-1, 0};

/* What one file holds (a test changes a field to break it). */
typedef struct spec {
    int arm;
    int nmodel;               /* models written (<= 12)                   */
    int skip;                 /* lattice node left out (-1: none)         */
    const char *parnames[NPAR];
    int version;
    int log_step;
    int no_specs, bad_shape, nan_at;
    const char *cmdline;
    double fe_offset;         /* added to [Fe/H] of model 0 (foreign model) */
} spec;

/* ln flux of the model (teff, logg, feh) at lambda: a slope, and a line
 * whose depth and width follow the parameters. */
static double lnflux(double teff, double logg, double feh, double lam,
                     double lc)
{
    double x = (lam - lc) / 30.0, w = 0.6 + 0.1 * logg;
    return 0.3 * (teff / 5000.0 - 1.0) * x + 0.05 * feh -
           (0.2 + 0.1 * feh) * exp(-0.5 * pow((lam - lc) / w, 2));
}

/* rvs_make_interpol's grid: exp(arange(ln(l0/fac), ln(l1*fac), dlnl)),
 * dlnl = ln(1 + step/mid). */
static size_t grid(const rvfit_template_arm *a, double *lam, size_t max)
{
    double fac = 1.0 + 1000.0 / RVFIT_C_KMS;
    double dl = log(1.0 + a->step / (0.5 * (a->lam_min + a->lam_max)));
    double x0 = log(a->lam_min / fac), x1 = log(a->lam_max * fac);
    size_t n = 0;
    for (; n < max && x0 + (double)n * dl < x1; n++)
        lam[n] = exp(x0 + (double)n * dl);
    return n;
}

static void w_str(hid_t f, const char *name, const char *const *s, int n)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hsize_t d = (hsize_t)n;
    hid_t sp = n < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &d, NULL);
    hid_t ds = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s);
    H5Dclose(ds), H5Sclose(sp), H5Tclose(t);
}

static void w_num(hid_t f, const char *name, hid_t type, int rank,
                  const hsize_t *dims, const void *v)
{
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL)
                    : H5Screate(H5S_SCALAR);
    hid_t ds = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(ds), H5Sclose(sp);
}

/* h5py's bool: an enum of int8 with FALSE = 0, TRUE = 1. */
static void w_bool(hid_t f, const char *name, int v)
{
    hid_t t = H5Tenum_create(H5T_NATIVE_SCHAR);
    signed char no = 0, yes = 1, x = (signed char)v;
    H5Tenum_insert(t, "FALSE", &no);
    H5Tenum_insert(t, "TRUE", &yes);
    w_num(f, name, t, 0, NULL, &x);
    H5Tclose(t);
}

/* Write DIR/specs_<setup>.h5 as s says. */
static void write_specs(const char *dir, const char *setup, const spec *s)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/specs_%s.h5", dir, setup);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t at = H5Acreate2(f, "version", H5T_STD_I64LE, sp, H5P_DEFAULT,
                          H5P_DEFAULT);
    long long ver = s->version;
    H5Awrite(at, H5T_NATIVE_LLONG, &ver);
    H5Aclose(at), H5Sclose(sp);
    static double lam[4096];
    const rvfit_template_arm *a = &ARMS[s->arm];
    size_t n = grid(a, lam, 4096);
    if (!s->log_step) /* linear, same ends */
        for (size_t i = 0; i < n; i++)
            lam[i] = lam[0] + (lam[n - 1] - lam[0]) * (double)i / (n - 1);
    double vec[NPAR][12];
    float *sp_ = calloc(12 * n, sizeof *sp_);
    int k = 0;
    double lc = 0.5 * (a->lam_min + a->lam_max);
    for (int node = 0; node < 12 && k < s->nmodel; node++) {
        if (node == s->skip)
            continue;
        vec[0][k] = TEFF[node / 4], vec[1][k] = LOGG[(node / 2) % 2];
        vec[2][k] = FEH[node % 2] + (k == 0 ? s->fe_offset : 0);
        vec[3][k] = 0.0;
        for (size_t p = 0; p < n; p++)
            sp_[(size_t)k * n + p] = (float)lnflux(vec[0][k], vec[1][k],
                                                   vec[2][k], lam[p], lc);
        k++;
    }
    if (s->nan_at >= 0)
        sp_[3 * n + (size_t)s->nan_at] = NAN;
    double v2[NPAR * 12];
    for (int p = 0; p < NPAR; p++)
        memcpy(v2 + p * k, vec[p], (size_t)k * sizeof(double));
    hsize_t dv[2] = {NPAR, (hsize_t)k}, dl = n;
    hsize_t ds[2] = {(hsize_t)k, n - (s->bad_shape ? 1 : 0)};
    w_num(f, "vec", H5T_NATIVE_DOUBLE, 2, dv, v2);
    w_num(f, "lam", H5T_NATIVE_DOUBLE, 1, &dl, lam);
    if (!s->no_specs)
        w_num(f, "specs", H5T_NATIVE_FLOAT, 2, ds, sp_);
    w_str(f, "parnames", s->parnames, NPAR);
    const char *one[1];
    one[0] = "9.9.9", w_str(f, "git_rev", one, -1);
    one[0] = "r1", w_str(f, "revision", one, -1);
    one[0] = s->cmdline, w_str(f, "cmdline", one, -1);
    one[0] = "LogParamMapper", w_str(f, "mapper_class_name", one, -1);
    long long logids[1] = {0};
    hsize_t dm[2] = {1, 1};
    w_num(f, "mapper_args", H5T_NATIVE_LLONG, 2, dm, logids);
    w_bool(f, "log_spec", 1);
    w_bool(f, "log_step", s->log_step);
    free(sp_);
    H5Fclose(f);
}

/* A good file of arm a: 11 models (node 5 a hole), constant FWHM
 * 2.3548 * 0.5 A over the arm. */
static spec good(int a)
{
    static char cmd[2][256];
    double mid = 0.5 * (ARMS[a].lam_min + ARMS[a].lam_max);
    snprintf(cmd[a], sizeof cmd[a], "/venv/bin/rvs_make_interpol --setup "
             "toy_%c --lambda0 %g --lambda1 %g --step 0.5 --fixed_fwhm "
             "--resol %.17g --templdb 'my files.db'", a ? 'r' : 'b',
             ARMS[a].lam_min, ARMS[a].lam_max, mid / (FWHM_SIGMA * 0.5));
    spec s = {a, 11, 5, {"teff", "logg", "feh", "alpha"}, 1, 1, 0, 0, -1,
              cmd[a], 0.0};
    return s;
}

/* The interpolator kind the library at path records ("?" when it does
 * not open). */
static const char *file_kind(const char *path)
{
    rvfit_library lib;
    rvfit_interpolator ip;
    rvfit_err err;
    if (rvfit_library_open(&lib, &ip, path, &err) != RVFIT_OK)
        return "?";
    const char *name = rvfit_interp_name(&ip); /* the kind's, static */
    rvfit_interp_close(&ip);
    rvfit_library_free(&lib);
    return name;
}

static int import(const char *dir, double sigma0, rvfit_err *err)
{
    rvfit_rvspecfit_opts o;
    memset(&o, 0, sizeof o);
    o.sigma0 = sigma0;
    o.build.log_flux = -1;
    char out[1024];
    snprintf(out, sizeof out, "%s/lib", dir);
    rvfit_err_clear(err);
    return rvfit_templates_from_rvspecfit(dir, 2, ARMS, "toy", &o, out, err);
}

/* Known answers of a good import. */
static void check_good(void)
{
    const char *dir = tu_tmpdir("rvs_good");
    spec b = good(0), r = good(1);
    write_specs(dir, "toy_b", &b), write_specs(dir, "toy_r", &r);
    rvfit_err err;
    CHECK_MSG(import(dir, 0, &err) == RVFIT_OK, "%s", err.msg);
    char path[1024];
    snprintf(path, sizeof path, "%s/lib", dir);
    rvfit_library lib;
    memset(&lib, 0, sizeof lib);
    if (rvfit_library_load(&lib, path, &err)) {
        CHECK_MSG(0, "load: %s", err.msg);
        return;
    }
    CHECK(!strcmp(file_kind(path), "simplex")); /* a hole: irregular */
    CHECK(lib.log_flux == 1);
    CHECK(lib.nparam == 4 && lib.nmodel == 12 && lib.narm == 2);
    CHECK(!strcmp(lib.axis[0].name, "TEFF") &&
          lib.axis[0].scale == RVFIT_SCALE_LOG10 && lib.axis[0].nnode == 3);
    CHECK_NEAR(lib.axis[0].node[1], log10(5000.0), 1e-12);
    CHECK(!strcmp(lib.axis[2].name, "FEH") && lib.axis[2].nnode == 2 &&
          lib.axis[2].scale == RVFIT_SCALE_LINEAR);
    CHECK(!strcmp(lib.axis[3].name, "ALPHAFE") && lib.axis[3].nnode == 1);
    for (int m = 0; m < 12; m++)
        CHECK_MSG(lib.exists[m] == (m != 5), "model %d", m);
    /* pixel 0.5 A at mid-arm, Gaussian sigma 0.5 A */
    CHECK_NEAR(lib.sigma0, sqrt(0.25 + 0.25 / 12.0), 2e-5);
    CHECK(tu_contains(lib.source, "rvspecfit 9.9.9, revision r1") &&
          tu_contains(lib.source, "B=toy_b, R=toy_r") &&
          tu_contains(lib.source, "teff=TEFF (log10)") &&
          tu_contains(lib.source, "alpha=ALPHAFE"));
    static double lam[4096];
    for (int a = 0; a < 2; a++) {
        const rvfit_lib_arm *la = &lib.arm[a];
        size_t n = grid(&ARMS[a], lam, 4096);
        CHECK(la->npix == n && la->sigma_kms == 0.0);
        CHECK_NEAR(la->lnl0, log(lam[0]), 1e-12);
        CHECK_NEAR(la->dlnl, log(1.0 + 0.5 / (0.5 * (ARMS[a].lam_min +
                                                     ARMS[a].lam_max))),
                   1e-14);
        /* model (5000, 2, 0) = node 7: flux / exp(ln flux) is one
         * constant, the arm's mean over [lam_min, lam_max] about 1 */
        double lc = 0.5 * (ARMS[a].lam_min + ARMS[a].lam_max);
        double rmin = 1e300, rmax = 0, sum = 0;
        int cnt = 0;
        for (size_t p = 0; p < n; p++) {
            double v = la->flux[7 * n + p]; /* ln flux once loaded */
            v = lib.log_flux ? exp(v) : v;
            double t = exp(lnflux(5000, 2, 0, lam[p], lc));
            rmin = fmin(rmin, v / t), rmax = fmax(rmax, v / t);
            if (lam[p] >= ARMS[a].lam_min && lam[p] <= ARMS[a].lam_max)
                sum += v, cnt++;
        }
        CHECK_MSG(rmin > 0 && rmax / rmin - 1 < 2e-6, "arm %d: ratio "
                  "%.9g..%.9g", a, rmin, rmax);
        CHECK_NEAR(sum / cnt, 1.0, 2e-3);
    }
    rvfit_library_free(&lib);
}

/* The LSF recorded other ways, and a full lattice. */
static void check_lsf_kinds(void)
{
    const char *dir = tu_tmpdir("rvs_lsf");
    spec b = good(0), r = good(1);
    b.cmdline = "rvs_make_interpol --setup toy_b --resol=20000";
    r.cmdline = "rvs_make_interpol --setup toy_r --resol_func 'x / 1.2'";
    b.nmodel = r.nmodel = 12, b.skip = r.skip = -1;
    write_specs(dir, "toy_b", &b), write_specs(dir, "toy_r", &r);
    rvfit_err err;
    CHECK_MSG(import(dir, 0, &err) == RVFIT_OK, "%s", err.msg);
    char path[1024];
    snprintf(path, sizeof path, "%s/lib", dir);
    rvfit_library lib;
    memset(&lib, 0, sizeof lib);
    CHECK(!strcmp(file_kind(path), "multilinear")); /* no holes */
    if (rvfit_library_load(&lib, path, &err)) {
        CHECK_MSG(0, "load: %s", err.msg);
        return;
    }
    CHECK_NEAR(lib.arm[0].sigma_kms, RVFIT_C_KMS / 20000 / FWHM_SIGMA, 1e-9);
    CHECK(lib.arm[1].sigma_kms == 0.0);
    CHECK_NEAR(lib.sigma0, sqrt(pow(1.2 / FWHM_SIGMA, 2) + 0.25 / 12), 2e-5);
    rvfit_library_free(&lib);
}

/* Import dir as is (sigma0 as given): must fail with every piece of
 * `want` ("|"-separated) in the message. */
static void expect_fail(const char *dir, double sigma0, const char *want)
{
    rvfit_err err;
    int st = import(dir, sigma0, &err);
    CHECK_MSG(st != RVFIT_OK, "%s: imported", dir);
    char w[512];
    snprintf(w, sizeof w, "%s", want);
    for (char *t = strtok(w, "|"); t; t = strtok(NULL, "|"))
        CHECK_MSG(tu_contains(err.msg, t), "'%s' not in: %s", t, err.msg);
}

/* One case: arm B's file broken by `edit`, arm R's good. */
#define BROKEN(name, edit, sigma0, want)                                   \
    do {                                                                   \
        const char *bd = tu_tmpdir(name);                                  \
        spec b = good(0), r = good(1);                                     \
        edit;                                                              \
        write_specs(bd, "toy_b", &b), write_specs(bd, "toy_r", &r);        \
        expect_fail(bd, sigma0, want);                                     \
    } while (0)

static void check_errors(void)
{
    const char *d = tu_tmpdir("rvs_missing");
    expect_fail(d, 0, "specs_toy_b.h5: No such file or directory");
    char path[1024];
    snprintf(path, sizeof path, "%s/specs_toy_b.h5", d);
    FILE *f = fopen(path, "w");
    fputs("not hdf5\n", f), fclose(f);
    expect_fail(d, 0, "specs_toy_b.h5: not an HDF5 file");
    BROKEN("rvs_nospecs", b.no_specs = 1, 0,
           "specs_toy_b.h5: dataset 'specs': missing");
    BROKEN("rvs_shape", b.bad_shape = 1, 0,
           "specs_toy_b.h5: dataset 'specs': shape (11, ");
    BROKEN("rvs_nan", b.nan_at = 7, 0, "specs_toy_b.h5: dataset 'specs': "
           "spectrum 3, pixel 7 is not finite");
    BROKEN("rvs_version", b.version = 2, 0,
           "specs_toy_b.h5: root attribute 'version' is 2");
    BROKEN("rvs_linear", b.log_step = 0, 0,
           "specs_toy_b.h5: dataset 'lam': linear in wavelength");
    BROKEN("rvs_air", b.cmdline = "x --resol 5000 --air", 0,
           "specs_toy_b.h5: dataset 'cmdline': made with --air");
    BROKEN("rvs_func", b.cmdline = "x --resol_func 'x**2/1000'", 0,
           "specs_toy_b.h5: dataset 'cmdline'|resolution is unknown|"
           "x**2/1000|--sigma0");
    BROKEN("rvs_parname", b.parnames[1] = "vmic", 0,
           "specs_toy_b.h5: dataset 'parnames': 'vmic' is not teff");
    BROKEN("rvs_models", r.fe_offset = 0.25, 0,
           "specs_toy_r.h5: dataset 'vec': model 0 (feh = -0.75) is not a "
           "model of|specs_toy_b.h5");
    BROKEN("rvs_nmodel", r.nmodel = 10, 0,
           "specs_toy_r.h5: dataset 'vec': 10 models|has 11");
    BROKEN("rvs_sigmas", r.cmdline = "x --resol_func x/1.5", 0,
           "specs_toy_b.h5 (sigma 0.5 A)|specs_toy_r.h5 (sigma 0.637|"
           "--sigma0");
    BROKEN("rvs_swapped", (b.arm = 1, r.arm = 0), 0,
           "specs_toy_b.h5: dataset 'lam': 5000.0-5099.9 A does not reach the "
           "centre 4050.0 A of arm B");
    /* a truncated file: HDF5's own reason */
    d = tu_tmpdir("rvs_trunc");
    spec tb = good(0), tr = good(1);
    write_specs(d, "toy_b", &tb), write_specs(d, "toy_r", &tr);
    snprintf(path, sizeof path, "%s/specs_toy_b.h5", d);
    struct stat stt;
    CHECK(stat(path, &stt) == 0 && truncate(path, stt.st_size / 2) == 0);
    expect_fail(d, 0, "specs_toy_b.h5: cannot open as HDF5|truncated file");
}

/* --sigma0 resolves what the command lines leave open. */
static void check_sigma0_given(void)
{
    const char *d = tu_tmpdir("rvs_given");
    spec b = good(0), r = good(1);
    b.cmdline = "x --resol_func 'x**2/1000'";
    r.cmdline = "x --resol_func x/1.5";
    write_specs(d, "toy_b", &b), write_specs(d, "toy_r", &r);
    rvfit_err err;
    CHECK_MSG(import(d, 0.45, &err) == RVFIT_OK, "%s", err.msg);
    char path[1024];
    snprintf(path, sizeof path, "%s/lib", d);
    rvfit_library lib;
    memset(&lib, 0, sizeof lib);
    CHECK_MSG(rvfit_library_load(&lib, path, &err) == RVFIT_OK, "%s",
              err.msg);
    CHECK_NEAR(lib.sigma0, sqrt(0.45 * 0.45 + 0.25 / 12), 2e-5);
    rvfit_library_free(&lib);
}

int main(void)
{
    CHECK(rvfit_rvspecfit_available() == 1);
    check_good();
    check_lsf_kinds();
    check_errors();
    check_sigma0_given();
    return tu_finish("test_rvspecfit_import");
}
#else
int main(void)
{
    rvfit_err err;
    rvfit_rvspecfit_opts o;
    memset(&o, 0, sizeof o);
    rvfit_template_arm arm = {"B", 4000, 4100, 0.5, 0};
    CHECK(rvfit_rvspecfit_available() == 0);
    CHECK(rvfit_templates_from_rvspecfit("x", 1, &arm, "toy", &o, "y",
                                         &err) == RVFIT_ERR_UNAVAILABLE &&
          tu_contains(err.msg, "without HDF5"));
    if (tu_finish("test_rvspecfit_import"))
        return 1;
    tu_skip("rvfit was built without HDF5 (libhdf5-dev): only the "
            "'unavailable' answer was checked");
    return 77;
}
#endif
