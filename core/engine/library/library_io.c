/* library_io.c — rvfit_library_save / _load / _free: the template library
 * file (docs/template-library.md).
 *
 * Layout: primary header (RVFLIBV, NPARAM, NARM, NMODEL, SIGMA0, VMAX,
 * INSTRUM, SOURCE), then NPARAM image HDUs AXIS_<NAME> (float64 scaled
 * nodes; SCALE, UNIT, AXINDEX), one HDU EXISTS (uint8 [nmodel]) and NARM
 * HDUs FLUX_<ARM> (float32 [nmodel][npix]; LNL0, DLNL, NPIX, optional
 * SIGMAV), in this
 * order; the interpolators' records and FILLED (library_io_fill.c) after
 * them.  Saving is atomic (temp file + rename); loading validates every
 * field and names the file, HDU and reason on failure.
 */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "library_io_internal.h"
#include "rvfit/files.h"
#include "rvfit/fits.h"
#include "rvfit/interp.h"
#include "rvfit/library_io.h"

void rvfit_library_free(rvfit_library *lib)
{
    if (!lib)
        return;
    free(lib->exists);
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        free(lib->arm[a].flux);
    memset(lib, 0, sizeof *lib);
}

/* A name usable in an EXTNAME and as a C string: 1..15 of [A-Za-z0-9_]. */
static int lio_name_ok(const char *s)
{
    size_t n = strnlen(s, 16);
    if (n == 0 || n >= 16)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

/* Axis names become output columns (TEFF, TEFF_ERR, ...): only the
 * parameters rvfit knows, so that no name collides with another column. */
static int lio_axis_known(const char *s)
{
    static const char *const known[] = {"TEFF", "LOGG", "FEH", "ALPHAFE"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(s, known[i]) == 0)
            return 1;
    return 0;
}

/* Structural checks shared by save (before writing) and load (after
 * reading the headers): counts, axis names and nodes. */
static int lio_check_axes(const rvfit_library *lib, const char *file,
                          rvfit_err *err)
{
    if (lib->nparam < 1 || lib->nparam > RVFIT_MAX_PARAMS)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: NPARAM = %d not in "
                             "1..%d", file, lib->nparam, RVFIT_MAX_PARAMS);
    if (lib->narm < 1 || lib->narm > RVFIT_MAX_ARMS)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: NARM = %d not in "
                             "1..%d", file, lib->narm, RVFIT_MAX_ARMS);
    size_t prod = 1;
    for (int i = 0; i < lib->nparam; i++) {
        const rvfit_axis *ax = &lib->axis[i];
        if (!lio_name_ok(ax->name))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %d: bad "
                                 "name '%.16s'", file, i, ax->name);
        if (!lio_axis_known(ax->name))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %d: "
                                 "unknown parameter '%s' (known: TEFF, "
                                 "LOGG, FEH, ALPHAFE)", file, i, ax->name);
        if (ax->nnode < 1 || ax->nnode > RVFIT_MAX_NODES)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s: %d "
                                 "nodes, need 1..%d", file, ax->name,
                                 ax->nnode, RVFIT_MAX_NODES);
        for (int k = 0; k < ax->nnode; k++)
            if (!isfinite(ax->node[k]) ||
                (k > 0 && !(ax->node[k] > ax->node[k - 1])))
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s: "
                                     "nodes not finite and increasing at "
                                     "%d", file, ax->name, k);
        if (ax->scale != RVFIT_SCALE_LINEAR && ax->scale != RVFIT_SCALE_LOG10)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s: "
                                 "unknown scale %d", file, ax->name,
                                 ax->scale);
        for (int j = 0; j < i; j++)
            if (strcmp(lib->axis[j].name, ax->name) == 0)
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: axis %s "
                                     "appears twice", file, ax->name);
        prod *= (size_t)ax->nnode;
    }
    if (prod != lib->nmodel)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: NMODEL = %zu but "
                             "the axes give %zu", file, lib->nmodel, prod);
    if (!(lib->sigma0 >= 0.0) || !(lib->vmax >= 0.0))
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: bad SIGMA0 %g or "
                             "VMAX %g", file, lib->sigma0, lib->vmax);
    return RVFIT_OK;
}

/* Arm names unique and usable; grids sane. */
static int lio_check_arms(const rvfit_library *lib, const char *file,
                          rvfit_err *err)
{
    for (int a = 0; a < lib->narm; a++) {
        const rvfit_lib_arm *ar = &lib->arm[a];
        if (!lio_name_ok(ar->name))
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: arm %d: bad "
                                 "name '%.16s'", file, a, ar->name);
        if (!isfinite(ar->lnl0) || !(ar->dlnl > 0.0 && ar->dlnl < 0.1) ||
            ar->npix < 2)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: arm %s: bad "
                                 "grid (LNL0 %g, DLNL %g, NPIX %zu)", file,
                                 ar->name, ar->lnl0, ar->dlnl, ar->npix);
        for (int j = 0; j < a; j++)
            if (strcmp(lib->arm[j].name, ar->name) == 0)
                return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: arm %s "
                                     "appears twice", file, ar->name);
    }
    return RVFIT_OK;
}

/* "DIR" -> "DIR/rvfit_library.fits"; a path ending in .fits is kept. */
static int lio_path(const char *in, int for_save, char *out, size_t size,
                    int *file_given)
{
    size_t n = strlen(in);
    struct stat sb;
    int is_file = n > 5 && strcmp(in + n - 5, ".fits") == 0;
    if (!for_save && stat(in, &sb) == 0)
        is_file = !S_ISDIR(sb.st_mode);
    int w = is_file ? snprintf(out, size, "%s", in)
                    : snprintf(out, size, "%s/%s", in, RVFIT_LIBRARY_FILE);
    *file_given = is_file;
    return (w < 0 || (size_t)w >= size) ? -1 : 0;
}

/* The interpolator the library is built for: INTERP (its kind), CUBAXES
 * (cubic axes) and LOGFLUX (interpolate in ln flux; the FLUX_* images
 * always hold flux itself). */
static void lio_write_interp(fitsfile *f, const rvfit_library *lib, int kind,
                             const pca_data *pd, int *fs)
{
    int lf = lib->log_flux != 0;
    char cub[RVFIT_MAX_PARAMS * 17 + 1] = "";
    for (int p = 0; p < lib->nparam; p++)
        if (lib->axis[p].interp == RVFIT_INTERP_CUBIC) {
            strcat(cub, cub[0] ? "," : "");
            strncat(cub, lib->axis[p].name, 16);
        }
    fits_write_key(f, TSTRING, "INTERP", (void *)rvfit_interp_kind_fits(kind),
                   "template interpolator (docs/template-library.md)", fs);
    if (cub[0])
        fits_write_key(f, TSTRING, "CUBAXES", cub, "axes interpolated "
                       "cubically", fs);
    fits_write_key(f, TLOGICAL, "LOGFLUX", &lf, "interpolate in ln flux",
                   fs);
    if (!pd)
        return;
    int k = pd->k;
    fits_write_key(f, TINT, "NPCA", &k, "pca: principal components per arm",
                   fs);
    fits_write_key_dbl(f, "PCATARG", pd->target, -17, "pca: rms error asked "
                       "for (0: NPCA given)", fs);
}

static void lio_write_primary(fitsfile *f, const rvfit_library *lib,
                              int kind, const pca_data *pd, int *fs)
{
    int v = RVFIT_LIBRARY_VERSION, np = lib->nparam, na = lib->narm;
    LONGLONG nm = (LONGLONG)lib->nmodel;
    double s0 = lib->sigma0, vm = lib->vmax;
    fits_create_img(f, BYTE_IMG, 0, NULL, fs);
    fits_write_key(f, TINT, "RVFLIBV", &v, "rvfit template library version",
                   fs);
    fits_write_key(f, TINT, "NPARAM", &np, "number of parameter axes", fs);
    fits_write_key(f, TINT, "NARM", &na, "number of arms", fs);
    fits_write_key(f, TLONGLONG, "NMODEL", &nm, "models = product of nodes",
                   fs);
    fits_write_key_dbl(f, "SIGMA0", s0, -17, "[Angstrom] template LSF sigma"
                       " incl. pixel", fs);
    fits_write_key_dbl(f, "VMAX", vm, -17, "[km/s] padding of each arm", fs);
    fits_write_key(f, TSTRING, "INSTRUM", (void *)lib->instrument,
                   "instrument the arms were built for", fs);
    lio_write_interp(f, lib, kind, pd, fs);
    lio_fill_write_key(f, lib, fs);
    fits_write_key(f, TSTRING, "FLUXNORM", "ARMMEAN", "flux / mean over the"
                   " unpadded arm", fs);
    fits_write_key_longstr(f, "SOURCE", lib->source, "grid the library was "
                           "built from", fs);
}

static void lio_write_hdus(fitsfile *f, const rvfit_library *lib,
                           const pca_data *pd, int *fs)
{
    char ext[32];
    for (int i = 0; i < lib->nparam && !*fs; i++) {
        const rvfit_axis *ax = &lib->axis[i];
        long n = ax->nnode;
        fits_create_img(f, DOUBLE_IMG, 1, &n, fs);
        snprintf(ext, sizeof ext, "AXIS_%s", ax->name);
        fits_write_key(f, TSTRING, "EXTNAME", ext, NULL, fs);
        fits_write_key(f, TSTRING, "AXNAME", (void *)ax->name, "parameter",
                       fs);
        fits_write_key(f, TINT, "AXINDEX", &i, "position in theta", fs);
        fits_write_key(f, TSTRING, "SCALE",
                       ax->scale == RVFIT_SCALE_LOG10 ? "LOG10" : "LINEAR",
                       "nodes are log10(value) or value", fs);
        fits_write_key(f, TSTRING, "UNIT", (void *)ax->unit,
                       "unit of the physical value", fs);
        fits_write_img(f, TDOUBLE, 1, n, (void *)ax->node, fs);
    }
    long nm = (long)lib->nmodel;
    fits_create_img(f, BYTE_IMG, 1, &nm, fs);
    fits_write_key(f, TSTRING, "EXTNAME", "EXISTS", NULL, fs);
    lio_fill_write_exists(f, lib, fs);
    for (int a = 0; a < lib->narm && !*fs; a++) {
        const rvfit_lib_arm *ar = &lib->arm[a];
        long naxes[2] = {(long)ar->npix, pd ? pd->k + 1 : nm};
        LONGLONG np = (LONGLONG)ar->npix;
        double l0 = ar->lnl0, dl = ar->dlnl;
        fits_create_img(f, FLOAT_IMG, 2, naxes, fs);
        snprintf(ext, sizeof ext, "FLUX_%s", ar->name);
        fits_write_key(f, TSTRING, "EXTNAME", ext, NULL, fs);
        fits_write_key(f, TSTRING, "ARMNAME", (void *)ar->name, "arm", fs);
        /* 17 significant digits: doubles survive the round trip. */
        fits_write_key_dbl(f, "LNL0", l0, -17, "ln(lambda/A) of pixel 0 "
                           "centre", fs);
        fits_write_key_dbl(f, "DLNL", dl, -17, "step in ln(lambda)", fs);
        fits_write_key(f, TLONGLONG, "NPIX", &np, "pixels per model", fs);
        if (ar->sigma_kms > 0.0)
            fits_write_key_dbl(f, "SIGMAV", ar->sigma_kms, -17,
                               "[km/s] template smoothing, constant in v", fs);
        if (pd) { /* the vectors, in their own space */
            lio_pca_write_arm(f, pd, a, (long)ar->npix, fs);
            continue;
        }
        if (!lib->log_flux) {
            fits_write_img(f, TFLOAT, 1, np * nm, ar->flux, fs);
            continue;
        }
        /* In memory ln flux (LOGFLUX): the file keeps flux. */
        float *row = malloc(ar->npix * sizeof *row);
        if (!row) {
            *fs = MEMORY_ALLOCATION;
            return;
        }
        for (long m = 0; m < nm && !*fs; m++) {
            const float *src = ar->flux + (size_t)m * ar->npix;
            int ex = !lib->exists || lib->exists[m];
            for (size_t j = 0; j < ar->npix; j++)
                row[j] = ex ? expf(src[j]) : src[j];
            fits_write_img(f, TFLOAT, 1 + m * np, np, row, fs);
        }
        free(row);
    }
}

/* The simplex interpolator's triangulation: int32 [ns][nvert] model
 * indices, after the FLUX_* HDUs (readers that do not know it stop
 * before). */
static void lio_write_simplices(fitsfile *f, const rvfit_interpolator *ip,
                                int *fs)
{
    const uint32_t *vert;
    size_t ns;
    int nv;
    if (rvfit_interp_simplices(ip, &vert, &ns, &nv) != 0 || *fs)
        return;
    long naxes[2] = {nv, (long)ns};
    fits_create_img(f, LONG_IMG, 2, naxes, fs);
    fits_write_key(f, TSTRING, "EXTNAME", "SIMPLEX", NULL, fs);
    fits_write_comment(f, "Delaunay simplices of the models present "
                       "(model indices), scaled coordinates in node "
                       "spacings", fs);
    fits_write_key(f, TSTRING, "SXCORR",
                   rvfit_interp_simplex_corr(ip) == RVFIT_SXCORR_QUADRATIC
                       ? "QUADRATIC"
                       : "NONE",
                   "correction of the barycentric interpolant", fs);
    fits_write_img(f, TUINT, 1, (LONGLONG)ns * nv, (void *)vert, fs);
}

int rvfit_library_save(const rvfit_library *lib, const char *dir,
                       rvfit_err *err)
{
    return rvfit_library_save_interp(lib, NULL, dir, err);
}

int rvfit_library_save_interp(const rvfit_library *lib,
                              const rvfit_interpolator *ip, const char *dir,
                              rvfit_err *err)
{
    char path[4096], tmp[4200], bang[4300];
    int file_given = 0;
    if (lio_path(dir, 1, path, sizeof path, &file_given) != 0 ||
        rvfit_tmpname(tmp, sizeof tmp, path) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: path too long", dir);
    if (lio_check_axes(lib, path, err) || lio_check_arms(lib, path, err))
        return RVFIT_ERR_INVALID;
    if (!lib->exists)
        return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: no EXISTS array",
                             path);
    for (int a = 0; a < lib->narm; a++)
        if (!lib->arm[a].flux)
            return rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: arm %s has no "
                                 "flux", path, lib->arm[a].name);
    int st = file_given ? RVFIT_OK : rvfit_mkdirs(dir, err);
    if (st)
        return st;
    snprintf(bang, sizeof bang, "!%s", tmp);
    fitsfile *f = NULL;
    int fs = 0;
    fits_create_file(&f, bang, &fs);
    int kind = ip ? ip->kind : rvfit_interp_kind_of(lib);
    const pca_data *pd = kind == RVFIT_IKIND_PCA ? ip->data : NULL;
    if (!fs)
        lio_write_primary(f, lib, kind, pd, &fs);
    if (!fs)
        lio_write_hdus(f, lib, pd, &fs);
    if (!fs && pd)
        lio_pca_write_coef(f, lib, pd, &fs);
    if (!fs && ip)
        lio_write_simplices(f, ip, &fs);
    lio_fill_write_hdu(f, lib, &fs);
    return rvfit_fits_commit(f, fs, tmp, path, err);
}

/* ---- load ----------------------------------------------------------- */

int lio_fail(lio_rd *r, int fs, const char *what)
{
    char ctx[200];
    snprintf(ctx, sizeof ctx, "%s: %s", r->hdu, what);
    rvfit_fits_error(r->err, fs, r->path, NULL, ctx);
    return RVFIT_ERR_FORMAT;
}

/* An image extension has PCOUNT = 0 and GCOUNT = 1; CFITSIO accepts
 * other values and then reads the pixels shifted (PCOUNT = -1: one pixel
 * off, no error).  Its data must also lie within the file. */
static int lio_layout(lio_rd *r)
{
    LONGLONG pc = 0, gc = 1;
    int fs = 0;
    if (rvfit_fits_read_key(r->f, TLONGLONG, "PCOUNT", &pc, &fs) == 0 &&
        rvfit_fits_read_key(r->f, TLONGLONG, "GCOUNT", &gc, &fs) == 0 &&
        (pc != 0 || gc != 1))
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: PCOUNT = "
                             "%lld, GCOUNT = %lld (an image extension needs "
                             "0 and 1)", r->path, r->hdu, (long long)pc,
                             (long long)gc);
    if (fs)
        return lio_fail(r, fs, "keyword PCOUNT or GCOUNT");
    return rvfit_fits_check_extent(r->f, r->path, r->hdu, r->err);
}

/* Move to HDU number `num` (1-based) and check its EXTNAME starts with
 * `prefix`; the rest of the name goes to `suffix`. */
int lio_goto(lio_rd *r, int num, const char *prefix, char *suffix)
{
    int fs = 0, type = 0;
    char ext[FLEN_VALUE] = "";
    snprintf(r->hdu, sizeof r->hdu, "HDU %d", num);
    if (fits_movabs_hdu(r->f, num, &type, &fs))
        return lio_fail(r, fs, prefix[0] ? "missing (file truncated?)"
                                          : "cannot read");
    if (fits_read_key(r->f, TSTRING, "EXTNAME", ext, NULL, &fs)) {
        fits_clear_errmsg();
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: no EXTNAME"
                             " (expected %s*)", r->path, r->hdu, prefix);
    }
    snprintf(r->hdu, sizeof r->hdu, "HDU %d (%.24s)", num, ext);
    size_t pl = strlen(prefix);
    if (type != IMAGE_HDU || strncmp(ext, prefix, pl) != 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: expected an"
                             " image HDU named %s*", r->path, r->hdu,
                             prefix);
    if (suffix)
        snprintf(suffix, 16, "%.15s", ext + pl);
    return lio_layout(r);
}

/* Check the image dimensions of the current HDU. */
int lio_dims(lio_rd *r, int naxis, long n1, long n2)
{
    int fs = 0, nx = 0;
    long ax[3] = {0, 0, 0};
    fits_get_img_dim(r->f, &nx, &fs);
    if (!fs && nx == naxis)
        fits_get_img_size(r->f, naxis, ax, &fs);
    if (fs)
        return lio_fail(r, fs, "image size");
    if (nx != naxis || ax[0] != n1 || (naxis > 1 && ax[1] != n2))
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: image is "
                             "%dD %ldx%ld, expected %dD %ldx%ld", r->path,
                             r->hdu, nx, ax[0], ax[1], naxis, n1,
                             naxis > 1 ? n2 : 0L);
    return RVFIT_OK;
}

int lio_key(lio_rd *r, int type, const char *key, void *val)
{
    int fs = 0;
    if (rvfit_fits_read_key(r->f, type, key, val, &fs)) {
        char w[64];
        snprintf(w, sizeof w, "keyword %s", key);
        return lio_fail(r, fs, w);
    }
    return RVFIT_OK;
}

/* INTERP (its kind), LOGFLUX and, for pca, NPCA: what the arms' images
 * hold depends on them.  Libraries written before INTERP carried its
 * kind mean MULTILIN, without LOGFLUX flux. */
static int lio_kind_keys(lio_rd *r)
{
    int fs = 0, lf = 0;
    char kind[FLEN_VALUE] = "MULTILIN";
    if (fits_read_key(r->f, TSTRING, "INTERP", kind, NULL, &fs))
        snprintf(kind, sizeof kind, "MULTILIN");
    fs = 0;
    if (rvfit_fits_read_key(r->f, TLOGICAL, "LOGFLUX", &lf, &fs))
        lf = 0;
    fits_clear_errmsg();
    r->log_flux = lf != 0;
    r->kind = rvfit_interp_kind_parse(kind);
    if (r->kind < 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: INTERP = '%s': "
                             "not an interpolator this rvfit knows",
                             r->path, kind);
    if (r->kind != RVFIT_IKIND_PCA)
        return RVFIT_OK;
    int st = lio_key(r, TINT, "NPCA", &r->npca);
    if (!st && (r->npca < 1 || r->npca > RVFIT_MAX_STENCIL - 1))
        st = rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: NPCA = %d not in "
                           "1..%d", r->path, r->npca, RVFIT_MAX_STENCIL - 1);
    return st;
}

static int lio_primary(lio_rd *r, rvfit_library *lib)
{
    int v = 0, st, fs = 0;
    LONGLONG nm = 0;
    char *src = NULL;
    snprintf(r->hdu, sizeof r->hdu, "primary HDU");
    if (rvfit_fits_read_key(r->f, TINT, "RVFLIBV", &v, &fs)) {
        fits_clear_errmsg();
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: primary HDU: no"
                             " RVFLIBV keyword (not an rvfit library)",
                             r->path);
    }
    if (v != RVFIT_LIBRARY_VERSION)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: RVFLIBV = %d, "
                             "this rvfit reads version %d", r->path, v,
                             RVFIT_LIBRARY_VERSION);
    if ((st = lio_key(r, TINT, "NPARAM", &lib->nparam)) ||
        (st = lio_key(r, TINT, "NARM", &lib->narm)) ||
        (st = lio_key(r, TLONGLONG, "NMODEL", &nm)) ||
        (st = lio_key(r, TDOUBLE, "SIGMA0", &lib->sigma0)) ||
        (st = lio_key(r, TDOUBLE, "VMAX", &lib->vmax)))
        return st;
    char ins[FLEN_VALUE] = "";
    if ((st = lio_key(r, TSTRING, "INSTRUM", ins)))
        return st;
    snprintf(lib->instrument, sizeof lib->instrument, "%s", ins);
    if (fits_read_key_longstr(r->f, "SOURCE", &src, NULL, &fs))
        return lio_fail(r, fs, "keyword SOURCE");
    snprintf(lib->source, sizeof lib->source, "%s", src);
    fits_free_memory(src, &fs);
    if (nm < 1)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: NMODEL = %lld",
                             r->path, (long long)nm);
    lib->nmodel = (size_t)nm;
    if ((st = lio_kind_keys(r)))
        return st;
    if (lib->nparam < 1 || lib->nparam > RVFIT_MAX_PARAMS || lib->narm < 1
        || lib->narm > RVFIT_MAX_ARMS)
        return lio_check_axes(lib, r->path, r->err);
    return RVFIT_OK;
}

static int lio_axis(lio_rd *r, int i, rvfit_library *lib)
{
    rvfit_axis *ax = &lib->axis[i];
    int st, fs = 0, idx = -1, nx = 0, anynul = 0;
    long n = 0;
    char scale[FLEN_VALUE] = "", unit[FLEN_VALUE] = "";
    if ((st = lio_goto(r, 2 + i, "AXIS_", ax->name)))
        return st;
    if ((st = lio_key(r, TINT, "AXINDEX", &idx)) ||
        (st = lio_key(r, TSTRING, "SCALE", scale)) ||
        (st = lio_key(r, TSTRING, "UNIT", unit)))
        return st;
    if (idx != i)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: AXINDEX = "
                             "%d, expected %d", r->path, r->hdu, idx, i);
    char axname[FLEN_VALUE] = "";
    if ((st = lio_key(r, TSTRING, "AXNAME", axname)))
        return st;
    if (strcmp(axname, ax->name) != 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: AXNAME "
                             "'%s' does not match the EXTNAME", r->path,
                             r->hdu, axname);
    if (strcmp(scale, "LOG10") == 0)
        ax->scale = RVFIT_SCALE_LOG10;
    else if (strcmp(scale, "LINEAR") == 0)
        ax->scale = RVFIT_SCALE_LINEAR;
    else
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: SCALE = "
                             "'%s' (expected LINEAR or LOG10)", r->path,
                             r->hdu, scale);
    snprintf(ax->unit, sizeof ax->unit, "%.15s", unit);
    fits_get_img_dim(r->f, &nx, &fs);
    if (!fs && nx == 1)
        fits_get_img_size(r->f, 1, &n, &fs);
    if (fs || nx != 1 || n < 1 || n > RVFIT_MAX_NODES)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: need a 1D "
                             "image of 1..%d nodes", r->path, r->hdu,
                             RVFIT_MAX_NODES);
    ax->nnode = (int)n;
    double nul = NAN;
    if (fits_read_img(r->f, TDOUBLE, 1, n, &nul, ax->node, &anynul, &fs))
        return lio_fail(r, fs, "reading nodes");
    return RVFIT_OK;
}

static int lio_exists(lio_rd *r, rvfit_library *lib)
{
    int st, fs = 0, anynul = 0;
    if ((st = lio_goto(r, 2 + lib->nparam, "EXISTS", NULL)) ||
        (st = lio_dims(r, 1, (long)lib->nmodel, 0)))
        return st;
    lib->exists = malloc(lib->nmodel);
    if (!lib->exists)
        return rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: no memory",
                             r->path);
    unsigned char nul = 0;
    if (fits_read_img(r->f, TBYTE, 1, (LONGLONG)lib->nmodel, &nul,
                      lib->exists, &anynul, &fs))
        return lio_fail(r, fs, "reading data");
    for (size_t m = 0; m < lib->nmodel; m++)
        if (lib->exists[m] > 1)
            return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: value "
                                 "%d at model %zu (expected 0 or 1)",
                                 r->path, r->hdu, lib->exists[m], m);
    return RVFIT_OK;
}

static int lio_arm(lio_rd *r, int a, rvfit_library *lib)
{
    rvfit_lib_arm *ar = &lib->arm[a];
    int st, fs = 0, anynul = 0;
    LONGLONG np = 0;
    char nm[FLEN_VALUE] = "";
    if ((st = lio_goto(r, 3 + lib->nparam + a, "FLUX_", ar->name)) ||
        (st = lio_key(r, TSTRING, "ARMNAME", nm)) ||
        (st = lio_key(r, TDOUBLE, "LNL0", &ar->lnl0)) ||
        (st = lio_key(r, TDOUBLE, "DLNL", &ar->dlnl)) ||
        (st = lio_key(r, TLONGLONG, "NPIX", &np)))
        return st;
    int ks = 0; /* SIGMAV is optional: absent means constant sigma0 */
    if (rvfit_fits_read_key(r->f, TDOUBLE, "SIGMAV", &ar->sigma_kms, &ks)) {
        ar->sigma_kms = 0.0;
        fits_clear_errmsg();
    }
    if (strcmp(nm, ar->name) != 0)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: ARMNAME '%s'"
                             " does not match the EXTNAME", r->path, r->hdu,
                             nm);
    if (np < 2 || !isfinite(ar->lnl0) || !(ar->dlnl > 0.0))
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: bad grid "
                             "(LNL0 %g, DLNL %g, NPIX %lld)", r->path,
                             r->hdu, ar->lnl0, ar->dlnl, (long long)np);
    ar->npix = (size_t)np;
    if (r->kind == RVFIT_IKIND_PCA) { /* vectors: models rebuilt */
        char hdu[sizeof r->hdu];
        snprintf(hdu, sizeof hdu, "%s", r->hdu);
        st = lio_pca_arm(r, a, lib);
        snprintf(r->hdu, sizeof r->hdu, "%s", hdu);
        return st ? st : lio_check_models(r, lib, ar, r->log_flux);
    }
    if ((st = lio_dims(r, 2, (long)np, (long)lib->nmodel)))
        return st;
    size_t tot = ar->npix * lib->nmodel;
    ar->flux = malloc(tot * sizeof *ar->flux);
    if (!ar->flux)
        return rvfit_err_set(r->err, RVFIT_ERR_NOMEM, "%s: %s: no memory "
                             "for %zu values", r->path, r->hdu, tot);
    float nul = NAN;
    if (fits_read_img(r->f, TFLOAT, 1, (LONGLONG)tot, &nul, ar->flux,
                      &anynul, &fs))
        return lio_fail(r, fs, "reading data");
    return lio_check_models(r, lib, ar, 0);
}

int lio_check_models(lio_rd *r, const rvfit_library *lib,
                     const rvfit_lib_arm *ar, int log_space)
{
    for (size_t m = 0; m < lib->nmodel; m++) {
        if (!lib->exists[m])
            continue;
        const float *row = ar->flux + m * ar->npix;
        double sum = 0.0;
        for (size_t p = 0; p < ar->npix; p++) {
            if (!isfinite(row[p]))
                return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: "
                                     "non-finite flux at model %zu pixel "
                                     "%zu", r->path, r->hdu, m, p);
            sum += row[p];
        }
        /* flux is normalised to a mean of 1 over the arm (FLUXNORM) */
        if (!log_space && !(sum > 0.0))
            return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: %s: model "
                                 "%zu: mean flux %g is not positive",
                                 r->path, r->hdu, m, sum / (double)ar->npix);
    }
    return RVFIT_OK;
}

/* Apply the interpolator the primary HDU records (lio_kind_keys read
 * INTERP and LOGFLUX) to the loaded lib: CUBAXES (MULTILIN: none; CUBIC:
 * some; PCA: its coefficients' interpolation, either; SIMPLEX: none),
 * LOGFLUX (a pca library's models are rebuilt in ln flux already). */
static int lio_interp(lio_rd *r, rvfit_library *lib)
{
    int fs = 0, type = 0, k = r->kind;
    char cub[FLEN_VALUE] = "";
    fits_movabs_hdu(r->f, 1, &type, &fs);
    if (fs)
        return lio_fail(r, fs, "primary HDU");
    snprintf(r->hdu, sizeof r->hdu, "primary HDU");
    if (fits_read_key(r->f, TSTRING, "CUBAXES", cub, NULL, &fs))
        cub[0] = '\0';
    fits_clear_errmsg();
    int bad = k == RVFIT_IKIND_PCA ? 0
              : k == RVFIT_IKIND_SIMPLEX ? cub[0] != '\0'
              : (k == RVFIT_IKIND_CUBIC) != (cub[0] != '\0');
    if (bad)
        return rvfit_err_set(r->err, RVFIT_ERR_FORMAT, "%s: INTERP = '%s' "
                             "with CUBAXES = '%s'", r->path,
                             rvfit_interp_kind_fits(k), cub);
    int st = rvfit_library_set_cubic(lib, cub, r->err);
    if (!st && r->log_flux && k == RVFIT_IKIND_PCA)
        lib->log_flux = 1;
    else if (!st && r->log_flux)
        st = rvfit_library_set_log_flux(lib, r->err);
    if (st)
        rvfit_err_prefix(r->err, "%s", r->path);
    return st;
}

int rvfit_library_load(rvfit_library *lib, const char *path, rvfit_err *err)
{
    char file[4096];
    memset(lib, 0, sizeof *lib);
    int file_given = 0;
    if (lio_path(path, 0, file, sizeof file, &file_given) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: path too long", path);
    lio_rd r = {.path = file, .err = err};
    int fs = 0, st = RVFIT_OK;
    struct stat sb;
    if (stat(file, &sb) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "template library %s not "
                             "found", file);
    if ((st = rvfit_fits_check_headers(file, err)))
        return st;
    if (fits_open_file(&r.f, file, READONLY, &fs)) {
        /* The file exists: anything but "cannot open" means not FITS. */
        int rc = rvfit_fits_error(err, fs, file, NULL, "cannot open");
        return fs == FILE_NOT_OPENED ? rc : RVFIT_ERR_FORMAT;
    }
    st = lio_primary(&r, lib);
    for (int i = 0; !st && i < lib->nparam; i++)
        st = lio_axis(&r, i, lib);
    if (!st)
        st = lio_check_axes(lib, file, err);
    if (!st)
        st = lio_exists(&r, lib);
    for (int a = 0; !st && a < lib->narm; a++)
        st = lio_arm(&r, a, lib);
    if (!st)
        st = lio_check_arms(lib, file, err);
    if (!st)
        st = lio_fill_read(&r, lib);
    if (!st)
        st = lio_interp(&r, lib);
    fs = 0;
    fits_close_file(r.f, &fs);
    if (st)
        rvfit_library_free(lib);
    return st;
}

/* Open path (a library directory or file) read-only: *f, the file name in
 * file. */
static int lio_open_ro(const char *path, char *file, size_t size,
                       fitsfile **f, rvfit_err *err)
{
    int file_given = 0, fs = 0;
    if (lio_path(path, 0, file, size, &file_given) != 0)
        return rvfit_err_set(err, RVFIT_ERR_IO, "%s: path too long", path);
    if (fits_open_file(f, file, READONLY, &fs))
        return rvfit_fits_error(err, fs, file, NULL, "cannot open");
    return RVFIT_OK;
}

int rvfit_library_kind(const char *path, int *kind, rvfit_err *err)
{
    char file[4096], k[FLEN_VALUE] = "MULTILIN";
    fitsfile *f = NULL;
    int fs = 0, rc = lio_open_ro(path, file, sizeof file, &f, err);
    if (rc)
        return rc;
    if (fits_read_key(f, TSTRING, "INTERP", k, NULL, &fs)) {
        snprintf(k, sizeof k, "MULTILIN"); /* before INTERP meant anything */
        fits_clear_errmsg();
    }
    fs = 0;
    fits_close_file(f, &fs);
    *kind = rvfit_interp_kind_parse(k);
    if (*kind < 0)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: INTERP = '%s': not "
                             "an interpolator this rvfit knows", file, k);
    return RVFIT_OK;
}

/* SXCORR of the current HDU into *corr (NONE when absent). */
static int lio_read_sxcorr(fitsfile *f, const char *file, int *corr,
                           rvfit_err *err)
{
    char v[FLEN_VALUE] = "";
    int fs = 0;
    *corr = RVFIT_SXCORR_NONE;
    if (fits_read_key(f, TSTRING, "SXCORR", v, NULL, &fs)) {
        fits_clear_errmsg();
        return fs == KEY_NO_EXIST ? RVFIT_OK
                                  : rvfit_fits_error(err, fs, file, "SIMPLEX",
                                                     "reading SXCORR");
    }
    *corr = rvfit_simplex_correction_parse(v);
    if (*corr < 0)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU SIMPLEX: "
                             "SXCORR = '%s': not a correction this rvfit "
                             "knows (NONE, QUADRATIC)", file, v);
    return RVFIT_OK;
}

int rvfit_library_read_simplices(const char *path, uint32_t **vert,
                                 size_t *ns, int *nvert, int *corr,
                                 rvfit_err *err)
{
    char file[4096];
    fitsfile *f = NULL;
    *vert = NULL;
    *ns = 0;
    int fs = 0, nx = 0, anynul = 0;
    long ax[2] = {0, 0};
    int rc = lio_open_ro(path, file, sizeof file, &f, err);
    if (rc)
        return rc;
    if (fits_movnam_hdu(f, IMAGE_HDU, "SIMPLEX", 0, &fs)) {
        rc = rvfit_fits_error(err, fs, file, "SIMPLEX", "INTERP = 'SIMPLEX' "
                              "but no SIMPLEX HDU (rebuild the library)");
    } else {
        fits_get_img_dim(f, &nx, &fs);
        if (!fs && nx == 2)
            fits_get_img_size(f, 2, ax, &fs);
        if (fs || nx != 2 || ax[0] < 3 || ax[0] > RVFIT_MAX_PARAMS + 1 ||
            ax[1] < 1)
            rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU SIMPLEX: "
                               "need a 2D image of [nsimplex][3..%d] "
                               "indices", file, RVFIT_MAX_PARAMS + 1);
    }
    if (!rc && corr)
        rc = lio_read_sxcorr(f, file, corr, err);
    size_t n = rc ? 0 : (size_t)ax[0] * (size_t)ax[1];
    if (!rc && !(*vert = malloc(n * sizeof **vert)))
        rc = rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: no memory", file);
    unsigned nul = 0;
    if (!rc && fits_read_img(f, TUINT, 1, (LONGLONG)n, &nul, *vert, &anynul,
                             &fs))
        rc = rvfit_fits_error(err, fs, file, "SIMPLEX", "reading data");
    if (rc) {
        free(*vert);
        *vert = NULL;
    } else {
        *ns = (size_t)ax[1];
        *nvert = (int)ax[0];
    }
    fs = 0;
    fits_close_file(f, &fs);
    return rc;
}

int lio_pca_load(const char *path, const rvfit_library *lib,
                 pca_data **out, rvfit_err *err)
{
    char file[4096];
    rvfit_library hdr;
    memset(&hdr, 0, sizeof hdr);
    *out = NULL;
    lio_rd r = {.path = file, .err = err};
    int rc = lio_open_ro(path, file, sizeof file, &r.f, err);
    if (rc)
        return rc;
    rc = lio_primary(&r, &hdr);
    if (!rc && r.kind != RVFIT_IKIND_PCA)
        rc = rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: INTERP = '%s', not "
                           "a pca library", file,
                           rvfit_interp_kind_fits(r.kind));
    if (!rc && (hdr.nparam != lib->nparam || hdr.narm != lib->narm ||
                hdr.nmodel != lib->nmodel))
        rc = rvfit_err_set(err, RVFIT_ERR_INVALID, "%s: not the library "
                           "loaded (%d axes, %d arms, %zu models)", file,
                           hdr.nparam, hdr.narm, hdr.nmodel);
    if (!rc && r.log_flux != (lib->log_flux != 0))
        rc = rvfit_err_set(err, RVFIT_ERR_CONFIG, "%s: the pca components "
                           "are in %s, the templates are to be interpolated "
                           "in %s: [templates] log_flux cannot change a pca "
                           "library (rebuild it)", file,
                           r.log_flux ? "ln flux" : "flux",
                           lib->log_flux ? "ln flux" : "flux");
    pca_data *pd = NULL;
    if (!rc)
        rc = pca_alloc(lib, r.npca, &pd, err);
    int fs = 0;
    if (!rc && fits_movabs_hdu(r.f, 1, NULL, &fs) == 0 &&
        rvfit_fits_read_key(r.f, TDOUBLE, "PCATARG", &pd->target, &fs))
        pd->target = 0.0; /* optional */
    fits_clear_errmsg();
    if (!rc)
        rc = lio_pca_read(&r, lib, pd);
    if (!rc)
        rc = pca_finish(lib, pd, err);
    fs = 0;
    fits_close_file(r.f, &fs);
    if (rc)
        pca_free(pd);
    else
        *out = pd;
    return rc;
}
