/* rvspecfit_h5.c — reading rvspecfit's specs_{setup}.h5 with the HDF5 C
 * API (rvspecfit_h5.h).  rvspecfit's serializer (h5py) stores every key
 * of a dict as a dataset: numbers as numeric arrays or scalars, Python
 * strings as UTF-8 variable-length strings, booleans as h5py's enum of
 * int8 (FALSE 0, TRUE 1), and the mapper's arguments ((log_ids,)) as a
 * [1][k] integer array. */
#ifdef RVFIT_HAVE_HDF5
#include "rvspecfit_h5.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

_Static_assert(sizeof(hid_t) == sizeof(int64_t), "hid_t is 64-bit");

/* HDF5 prints its error stack to stderr by default; while we read, its
 * innermost message goes into our error instead. */
typedef struct rvs_quiet {
    H5E_auto2_t fn;
    void *data;
} rvs_quiet;

static void quiet_on(rvs_quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_off(const rvs_quiet *q)
{
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

static herr_t first_desc(unsigned n, const H5E_error2_t *e, void *buf)
{
    if (n == 0 && e->desc)
        snprintf(buf, 256, "%s", e->desc);
    return 0;
}

/* "path: dataset 'name': reason (HDF5: innermost message)"; name NULL:
 * the file as a whole. */
static int h5fail(rvfit_err *err, int st, const rvs_file *f,
                  const char *name, const char *reason)
{
    char h5[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_desc, h5);
    H5Eclear2(H5E_DEFAULT);
    return rvfit_err_set(err, st, "%s: %s%s%s%s%s%s%s", f->path,
                         name ? "dataset '" : "", name ? name : "",
                         name ? "': " : "", reason, h5[0] ? " (HDF5: " : "",
                         h5, h5[0] ? ")" : "");
}

/* Open dataset name; *did < 0 and status 0 when it is absent and
 * optional. */
static int ds_open(rvs_file *f, const char *name, int optional, hid_t *did,
                   rvfit_err *err)
{
    *did = -1;
    htri_t ex = H5Lexists((hid_t)f->fid, name, H5P_DEFAULT);
    if (ex < 0)
        return h5fail(err, RVFIT_ERR_FORMAT, f, name, "cannot look it up");
    if (ex == 0)
        return optional ? RVFIT_OK
                        : h5fail(err, RVFIT_ERR_FORMAT, f, name,
                                 "missing (not an rvspecfit specs file?)");
    *did = H5Dopen2((hid_t)f->fid, name, H5P_DEFAULT);
    if (*did < 0)
        return h5fail(err, RVFIT_ERR_FORMAT, f, name, "not a dataset");
    return RVFIT_OK;
}

/* Rank and dimensions (up to 2) of an open dataset. */
static int ds_shape(rvs_file *f, const char *name, hid_t did, int *rank,
                    hsize_t dims[2], rvfit_err *err)
{
    hid_t sp = H5Dget_space(did);
    int r = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
    dims[0] = dims[1] = 1;
    if (r >= 0 && r <= 2)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0)
        H5Sclose(sp);
    if (r < 0 || r > 2)
        return h5fail(err, RVFIT_ERR_FORMAT, f, name, "rank not 0, 1 or 2");
    *rank = r;
    return RVFIT_OK;
}

/* The whole dataset as doubles (numbers only); *n its element count. */
static int ds_doubles(rvs_file *f, const char *name, int rank_want,
                      hsize_t dims[2], double **out, rvfit_err *err)
{
    hid_t did;
    int rank, st = ds_open(f, name, 0, &did, err);
    if (!st)
        st = ds_shape(f, name, did, &rank, dims, err);
    hid_t ty = st ? -1 : H5Dget_type(did);
    H5T_class_t cl = ty < 0 ? H5T_NO_CLASS : H5Tget_class(ty);
    if (ty >= 0)
        H5Tclose(ty);
    if (!st && cl != H5T_FLOAT && cl != H5T_INTEGER)
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "not numbers");
    if (!st && rank != rank_want) {
        char why[64];
        snprintf(why, sizeof why, "rank %d, expected %d", rank, rank_want);
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, why);
    }
    size_t n = (size_t)dims[0] * (size_t)dims[1];
    if (!st && n == 0)
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "empty");
    if (!st && !(*out = malloc(n * sizeof **out)))
        st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: dataset '%s': no "
                           "memory for %zu values", f->path, name, n);
    if (!st && H5Dread(did, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                       *out) < 0)
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "read failed");
    for (size_t i = 0; !st && i < n; i++)
        if (!isfinite((*out)[i])) {
            char why[64];
            snprintf(why, sizeof why, "value %zu is not finite", i);
            st = h5fail(err, RVFIT_ERR_FORMAT, f, name, why);
        }
    if (did >= 0)
        H5Dclose(did);
    return st;
}

/* A string dataset (scalar or 1-d; variable or fixed length) into
 * strs[0..n-1] (malloc'ed copies).  Absent and optional: *n = 0. */
static int ds_strings(rvs_file *f, const char *name, int optional,
                      char ***strs, size_t *n, rvfit_err *err)
{
    hid_t did, ty = -1, mt = -1, sp = -1;
    int rank, st = ds_open(f, name, optional, &did, err);
    hsize_t dims[2];
    *strs = NULL;
    *n = 0;
    if (st || did < 0)
        return st;
    st = ds_shape(f, name, did, &rank, dims, err);
    if (!st && rank > 1)
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "not a string list");
    if (!st && ((ty = H5Dget_type(did)) < 0 ||
                H5Tget_class(ty) != H5T_STRING))
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "not a string");
    size_t cnt = rank == 0 ? 1 : (size_t)dims[0];
    int var = !st && H5Tis_variable_str(ty) > 0;
    size_t fsz = st ? 0 : H5Tget_size(ty) + 1;
    void *buf = st ? NULL
                   : calloc(cnt ? cnt : 1, var ? sizeof(char *) : fsz);
    *strs = st ? NULL : calloc(cnt ? cnt : 1, sizeof **strs);
    if (!st && (!buf || !*strs))
        st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: no memory", f->path);
    if (!st) {
        mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, var ? H5T_VARIABLE : fsz);
        H5Tset_cset(mt, H5Tget_cset(ty));
        sp = H5Dget_space(did);
        if (H5Dread(did, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "read failed");
    }
    for (size_t i = 0; !st && i < cnt; i++) {
        const char *s = var ? ((char **)buf)[i] : (char *)buf + i * fsz;
        if (!((*strs)[i] = strdup(s ? s : "")))
            st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: no memory",
                               f->path);
        *n = i + 1;
    }
    if (buf && var && mt >= 0 && sp >= 0)
#if H5_VERSION_GE(1, 12, 0)
        H5Treclaim(mt, sp, H5P_DEFAULT, buf);
#else
        H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
#endif
    free(buf);
    if (sp >= 0)
        H5Sclose(sp);
    if (mt >= 0)
        H5Tclose(mt);
    if (ty >= 0)
        H5Tclose(ty);
    H5Dclose(did);
    return st;
}

/* One optional string: *out = "" when absent. */
static int ds_string(rvs_file *f, const char *name, char **out,
                     rvfit_err *err)
{
    char **s;
    size_t n;
    int st = ds_strings(f, name, 1, &s, &n, err);
    if (!st && n > 1)
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "several strings");
    *out = !st && n == 1 ? s[0] : NULL;
    if (!st && !*out && !(*out = strdup("")))
        st = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: no memory", f->path);
    for (size_t i = 1; i < n; i++)
        free(s[i]);
    if (st && n == 1)
        free(s[0]);
    free(s);
    return st;
}

/* An optional scalar boolean (h5py enum, or an integer): *v = dflt when
 * absent. */
static int ds_bool(rvs_file *f, const char *name, int dflt, int *v,
                   rvfit_err *err)
{
    hid_t did, ty = -1, mt = -1;
    int rank, st = ds_open(f, name, 1, &did, err);
    hsize_t dims[2];
    *v = dflt;
    if (st || did < 0)
        return st;
    st = ds_shape(f, name, did, &rank, dims, err);
    if (!st && (rank != 0 || (ty = H5Dget_type(did)) < 0 ||
                (H5Tget_class(ty) != H5T_ENUM &&
                 H5Tget_class(ty) != H5T_INTEGER)))
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "not a scalar boolean");
    unsigned char b[16] = {0};
    if (!st && ((mt = H5Tget_native_type(ty, H5T_DIR_DEFAULT)) < 0 ||
                H5Tget_size(mt) > sizeof b ||
                H5Dread(did, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) < 0))
        st = h5fail(err, RVFIT_ERR_FORMAT, f, name, "read failed");
    if (!st) {
        *v = 0;
        for (size_t i = 0; i < sizeof b; i++)
            *v |= b[i] != 0;
    }
    if (mt >= 0)
        H5Tclose(mt);
    if (ty >= 0)
        H5Tclose(ty);
    H5Dclose(did);
    return st;
}

/* parnames and vec: npar names of < 32 bytes, vec [npar][nspec]. */
static int read_params(rvs_file *f, rvfit_err *err)
{
    char **nm;
    size_t n;
    hsize_t dims[2];
    int st = ds_strings(f, "parnames", 0, &nm, &n, err);
    if (!st && (n < 1 || n > RVFIT_MAX_PARAMS))
        st = h5fail(err, RVFIT_ERR_FORMAT, f, "parnames",
                    "needs 1 to 8 names");
    for (size_t i = 0; !st && i < n; i++) {
        if (strlen(nm[i]) >= sizeof f->parname[0])
            st = h5fail(err, RVFIT_ERR_FORMAT, f, "parnames",
                        "a name longer than 31 bytes");
        else
            snprintf(f->parname[i], sizeof f->parname[i], "%s", nm[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(nm[i]);
    free(nm);
    if (st)
        return st;
    f->npar = (int)n;
    st = ds_doubles(f, "vec", 2, dims, &f->vec, err);
    if (!st && dims[0] != (hsize_t)f->npar) {
        char why[96];
        snprintf(why, sizeof why, "%llu rows, parnames has %d names",
                 (unsigned long long)dims[0], f->npar);
        st = h5fail(err, RVFIT_ERR_FORMAT, f, "vec", why);
    }
    f->nspec = (size_t)dims[1];
    return st;
}

/* Which parameters rvspecfit interpolates in log10: mapper_class_name
 * LogParamMapper with mapper_args = (log_ids,); absent: Teff (0), its
 * default. */
static int read_mapper(rvs_file *f, rvfit_err *err)
{
    char *cls;
    int st = ds_string(f, "mapper_class_name", &cls, err);
    if (st)
        return st;
    int absent = cls[0] == '\0';
    if (!absent && strcmp(cls, "LogParamMapper"))
        st = h5fail(err, RVFIT_ERR_FORMAT, f, "mapper_class_name",
                    "not LogParamMapper (the only parameter mapping rvfit "
                    "reproduces)");
    free(cls);
    memset(f->logpar, 0, sizeof f->logpar);
    if (st)
        return st;
    hid_t did;
    if ((st = ds_open(f, "mapper_args", 1, &did, err)))
        return st;
    if (did < 0) {
        f->logpar[0] = 1;
        return RVFIT_OK;
    }
    hsize_t dims[2];
    int rank;
    st = ds_shape(f, "mapper_args", did, &rank, dims, err);
    H5Dclose(did);
    if (st)
        return st;
    /* [1][k]; an empty tuple of ids is a [1][0] float array */
    if (rank != 2 || dims[0] != 1)
        return h5fail(err, RVFIT_ERR_FORMAT, f, "mapper_args",
                      "not a tuple of one list of parameter indices");
    if (dims[1] == 0)
        return RVFIT_OK;
    double *ids = NULL;
    st = ds_doubles(f, "mapper_args", 2, dims, &ids, err);
    for (hsize_t k = 0; !st && k < dims[1]; k++) {
        double x = ids[k];
        if (x != floor(x) || x < 0 || x >= f->npar)
            st = h5fail(err, RVFIT_ERR_FORMAT, f, "mapper_args",
                        "a parameter index out of range");
        else
            f->logpar[(int)x] = 1;
    }
    free(ids);
    return st;
}

/* lam: increasing positive wavelengths; specs: [nspec][nlam] numbers. */
static int read_grid(rvs_file *f, rvfit_err *err)
{
    hsize_t dims[2];
    int st = ds_doubles(f, "lam", 1, dims, &f->lam, err);
    f->nlam = st ? 0 : (size_t)dims[0];
    if (!st && f->nlam < 4)
        st = h5fail(err, RVFIT_ERR_FORMAT, f, "lam", "fewer than 4 pixels");
    for (size_t i = 0; !st && i < f->nlam; i++)
        if (!(f->lam[i] > 0) || (i && !(f->lam[i] > f->lam[i - 1])))
            st = h5fail(err, RVFIT_ERR_FORMAT, f, "lam",
                        "not positive and increasing");
    hid_t did = -1;
    int rank;
    if (!st)
        st = ds_open(f, "specs", 0, &did, err);
    f->did = did;
    if (!st)
        st = ds_shape(f, "specs", did, &rank, dims, err);
    if (!st && (rank != 2 || dims[0] != f->nspec || dims[1] != f->nlam)) {
        char why[160];
        snprintf(why, sizeof why, "shape (%llu, %llu), expected (%zu, %zu) "
                 "from vec and lam", (unsigned long long)dims[0],
                 (unsigned long long)(rank == 2 ? dims[1] : 0), f->nspec,
                 f->nlam);
        st = h5fail(err, RVFIT_ERR_FORMAT, f, "specs", why);
    }
    hid_t ty = st ? -1 : H5Dget_type(did);
    if (!st && H5Tget_class(ty) != H5T_FLOAT)
        st = h5fail(err, RVFIT_ERR_FORMAT, f, "specs", "not floating point");
    if (ty >= 0)
        H5Tclose(ty);
    return st;
}

/* The file itself: readable (errno text), HDF5, serializer version 1. */
static int open_file(rvs_file *f, rvfit_err *err)
{
    FILE *fp = fopen(f->path, "rb");
    if (!fp)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: %s", f->path,
                             strerror(errno));
    fclose(fp);
    if (H5Fis_hdf5(f->path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: not an HDF5 file",
                             f->path);
    }
    f->fid = H5Fopen(f->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f->fid < 0)
        return h5fail(err, RVFIT_ERR_FORMAT, f, NULL,
                      "cannot open as HDF5");
    long ver = -1;
    hid_t a = H5Aexists((hid_t)f->fid, "version") > 0
                  ? H5Aopen((hid_t)f->fid, "version", H5P_DEFAULT)
                  : -1;
    if (a >= 0 && H5Aread(a, H5T_NATIVE_LONG, &ver) < 0)
        ver = -1;
    if (a >= 0)
        H5Aclose(a);
    if (a < 0)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: root attribute "
                             "'version' missing (not written by rvspecfit's "
                             "serializer)", f->path);
    if (ver != 1)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: root attribute "
                             "'version' is %ld, expected 1 (rvspecfit's "
                             "serializer)", f->path, ver);
    return RVFIT_OK;
}

int rvs_open(const char *path, rvs_file *f, rvfit_err *err)
{
    memset(f, 0, sizeof *f);
    f->fid = f->did = -1;
    if (!(f->path = strdup(path)))
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: no memory", path);
    rvs_quiet q;
    quiet_on(&q);
    int st = open_file(f, err);
    if (!st)
        st = read_params(f, err);
    if (!st)
        st = read_grid(f, err);
    if (!st)
        st = read_mapper(f, err);
    if (!st)
        st = ds_bool(f, "log_spec", 1, &f->log_spec, err);
    if (!st)
        st = ds_bool(f, "log_step", -1, &f->log_step, err);
    if (!st)
        st = ds_string(f, "revision", &f->revision, err);
    if (!st)
        st = ds_string(f, "git_rev", &f->git_rev, err);
    if (!st)
        st = ds_string(f, "cmdline", &f->cmdline, err);
    quiet_off(&q);
    return st;
}

int rvs_row(rvs_file *f, size_t i, float *out, rvfit_err *err)
{
    rvs_quiet q;
    quiet_on(&q);
    hsize_t start[2] = {i, 0}, count[2] = {1, f->nlam};
    hid_t fs = H5Dget_space((hid_t)f->did);
    hid_t ms = H5Screate_simple(1, &count[1], NULL);
    int st = RVFIT_OK;
    if (fs < 0 || ms < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) <
            0 ||
        H5Dread((hid_t)f->did, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, out) <
            0) {
        char why[64];
        snprintf(why, sizeof why, "reading spectrum %zu failed", i);
        st = h5fail(err, RVFIT_ERR_FORMAT, f, "specs", why);
    }
    for (size_t p = 0; !st && p < f->nlam; p++)
        if (!isfinite(out[p])) {
            char why[96];
            snprintf(why, sizeof why, "spectrum %zu, pixel %zu is not "
                     "finite", i, p);
            st = h5fail(err, RVFIT_ERR_FORMAT, f, "specs", why);
        }
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    quiet_off(&q);
    return st;
}

void rvs_close(rvs_file *f)
{
    if (f->did >= 0)
        H5Dclose((hid_t)f->did);
    if (f->fid >= 0)
        H5Fclose((hid_t)f->fid);
    free(f->vec), free(f->lam), free(f->revision), free(f->git_rev);
    free(f->cmdline), free(f->path);
    memset(f, 0, sizeof *f);
    f->fid = f->did = -1;
}
#else
typedef int rvspecfit_h5_unused; /* built without HDF5 */
#endif
