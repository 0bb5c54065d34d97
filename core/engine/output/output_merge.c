/* output_merge.c — joining the part outputs of a file that several
 * processes fitted in parts (rvfit_unit nparts > 1) into its final
 * rvtab/rvmod, atomically, and removing part outputs.  Part k of n holds
 * rows k n/N .. of the file; the join appends table rows and the rows of
 * 2-D images (models, per-spectrum wavelengths) in part order and copies
 * everything else from part 0, summing NSPEC and BKNDPTS. */
#include <dirent.h>
#include <errno.h>
#include <fitsio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvfit/files.h"
#include "rvfit/fits.h"
#include "output_internal.h"

/* Append the pixel rows of image HDU `in` (current HDU) to out's current
 * 2-D image at row *row. */
static void merge_image_rows(fitsfile *in, fitsfile *out, long *row, int *st)
{
    int bitpix = 0, naxis = 0;
    long ax[2] = {0, 0};
    fits_get_img_param(in, 2, &bitpix, &naxis, ax, st);
    if (*st || naxis != 2 || ax[1] == 0)
        return;
    int type = bitpix == DOUBLE_IMG ? TDOUBLE : TFLOAT;
    size_t esz = type == TDOUBLE ? sizeof(double) : sizeof(float);
    LONGLONG n = (LONGLONG)ax[0] * ax[1];
    void *buf = malloc((size_t)n * esz);
    if (!buf) {
        *st = MEMORY_ALLOCATION;
        return;
    }
    long fp[2] = {1, 1}, op[2] = {1, *row + 1};
    fits_read_pix(in, type, fp, n, NULL, buf, NULL, st);
    fits_write_pix(out, type, op, n, buf, st);
    *row += ax[1];
    free(buf);
}

/* HDU h (2..) of every part into out. */
static void merge_hdu(fitsfile **in, int nparts, fitsfile *out, int *st)
{
    int type = 0, naxis = 0, bitpix = 0;
    long ax[2] = {0, 0}, total = 0;
    fits_get_hdu_type(in[0], &type, st);
    fits_copy_hdu(in[0], out, 0, st);
    if (type == BINARY_TBL) {
        for (int k = 1; k < nparts && !*st; k++) {
            long nr = 0;
            fits_get_num_rows(in[k], &nr, st);
            if (nr > 0)
                fits_copy_rows(in[k], out, 1, nr, st);
        }
        return;
    }
    fits_get_img_param(in[0], 2, &bitpix, &naxis, ax, st);
    if (*st || naxis != 2)
        return; /* a shared grid: part 0's */
    for (int k = 0; k < nparts && !*st; k++) {
        long a[2] = {0, 0};
        fits_get_img_size(in[k], 2, a, st);
        total += a[1];
    }
    long na[2] = {ax[0], total}, row = 0;
    fits_resize_img(out, bitpix, 2, na, st);
    for (int k = 0; k < nparts && !*st; k++)
        merge_image_rows(in[k], out, &row, st);
}

static void merge_primary(fitsfile **in, int nparts, fitsfile *out, int *st)
{
    long long nspec = 0, pts = 0, nobj = 0;
    int have_nobj = 1; /* joint outputs count objects too */
    for (int k = 0; k < nparts && !*st; k++) {
        long long v = 0;
        rvfit_fits_read_key(in[k], TLONGLONG, "NSPEC", &v, st);
        nspec += v;
        int ks = 0;
        if (rvfit_fits_read_key(in[k], TLONGLONG, "BKNDPTS", &v, &ks) == 0)
            pts += v;
        ks = 0;
        if (rvfit_fits_read_key(in[k], TLONGLONG, "NOBJ", &v, &ks) == 0)
            nobj += v;
        else
            have_nobj = 0;
    }
    fits_copy_hdu(in[0], out, 0, st);
    if (have_nobj)
        fits_update_key_lng(out, "NOBJ", nobj, "objects fitted", st);
    fits_update_key_lng(out, "NSPEC", nspec, "spectra fitted", st);
    fits_update_key_lng(out, "BKNDPTS", pts, "points the backend evaluated "
                        "for this file", st);
    int np = nparts;
    fits_update_key(out, TINT, "NPARTS", &np, "fitted in this many parts",
                    st);
}

/* Join part files part[0..nparts-1] into `path` atomically. */
static int merge_file(char **part, int nparts, const char *path,
                      rvfit_err *err)
{
    fitsfile **in = calloc((size_t)nparts, sizeof *in), *out = NULL;
    char tmp[OUT_PATH + 64] = "";
    int st = 0, nhdu = 0;
    if (!in)
        return rvfit_err_set(err, RVFIT_ERR_NOMEM, "%s: out of memory", path);
    errno = 0;
    for (int k = 0; k < nparts && !st; k++)
        if (fits_open_diskfile(&in[k], part[k], READONLY, &st))
            rvfit_fits_error(err, st, part[k], NULL, "cannot open part");
    if (!st && rvfit_fits_create(path, tmp, sizeof tmp, &out, err))
        st = FILE_NOT_CREATED; /* err says why */
    if (!st)
        fits_get_num_hdus(in[0], &nhdu, &st);
    for (int h = 1; h <= nhdu && !st; h++) {
        for (int k = 0; k < nparts && !st; k++)
            fits_movabs_hdu(in[k], h, NULL, &st);
        if (h == 1)
            merge_primary(in, nparts, out, &st);
        else
            merge_hdu(in, nparts, out, &st);
    }
    int rc = out ? rvfit_fits_commit(out, st, tmp, path, err)
                 : RVFIT_ERR_IO; /* the message names the file */
    for (int k = 0; k < nparts; k++)
        if (in[k]) {
            int s2 = 0;
            fits_close_file(in[k], &s2);
        }
    free(in);
    return rc;
}

/* The names of the nparts part files of input `path`: tab (mod = 0) or
 * mod (mod = 1).  NULL when out of memory. */
static char **part_names(const char *outdir, const char *path, int nparts,
                         int mod)
{
    char **p = calloc((size_t)nparts, sizeof *p);
    for (int k = 0; p && k < nparts; k++) {
        char t[OUT_PATH], m[OUT_PATH];
        rvfit_output_part_names(outdir, path, k, nparts, t, m, sizeof t);
        if (!(p[k] = strdup(mod ? m : t))) {
            for (int j = 0; j < k; j++)
                free(p[j]);
            free(p);
            return NULL;
        }
    }
    return p;
}

static void free_names(char **p, int n)
{
    for (int k = 0; p && k < n; k++)
        free(p[k]);
    free(p);
}

int out_merge_parts(const char *outdir, int models, const char *path,
                    int nparts, rvfit_err *err)
{
    char tab[OUT_PATH], mod[OUT_PATH];
    rvfit_output_names(outdir, path, tab, mod, sizeof tab);
    char **pt = part_names(outdir, path, nparts, 0);
    char **pm = part_names(outdir, path, nparts, 1);
    int rc = pt && pm ? RVFIT_OK
                      : rvfit_err_set(err, RVFIT_ERR_NOMEM, "out of memory");
    /* models first: an rvtab in place means the input is complete */
    if (!rc && models)
        rc = merge_file(pm, nparts, mod, err);
    if (!rc)
        rc = merge_file(pt, nparts, tab, err);
    if (rc && models)
        unlink(mod);
    if (!rc)
        out_remove_parts(outdir, path);
    free_names(pt, nparts);
    free_names(pm, nparts);
    return rc;
}

/* Remove the files of the output directory whose names start with one of
 * the n prefixes. */
static void remove_prefixed(const char *dir, const char *const *pre, int n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int hit = 0;
        for (int i = 0; i < n && !hit; i++)
            hit = !strncmp(e->d_name, pre[i], strlen(pre[i]));
        if (!hit)
            continue;
        char full[OUT_PATH + 300];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        unlink(full);
    }
    closedir(d);
}

/* "DIR/NAME" -> "NAME". */
static const char *base_of(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

void out_remove_parts(const char *outdir, const char *path)
{
    char tab[OUT_PATH], mod[OUT_PATH], pre[4][OUT_PATH + 16];
    rvfit_output_part_names(outdir, path, 0, 1, tab, mod,
                            sizeof tab);
    /* ".rvtab_STEM.fits.part0of1" -> ".rvtab_STEM.fits.part", and the
     * temporaries of part files, "..rvtab_STEM.fits.part" */
    const char *bt = base_of(tab), *bm = base_of(mod);
    int lt = (int)(strstr(bt, ".part") - bt) + 5;
    int lm = (int)(strstr(bm, ".part") - bm) + 5;
    snprintf(pre[0], sizeof pre[0], "%.*s", lt, bt);
    snprintf(pre[1], sizeof pre[1], "%.*s", lm, bm);
    snprintf(pre[2], sizeof pre[2], ".%.*s", lt, bt);
    snprintf(pre[3], sizeof pre[3], ".%.*s", lm, bm);
    const char *p[4] = {pre[0], pre[1], pre[2], pre[3]};
    remove_prefixed(outdir, p, 4);
}

void out_remove_stale(const char *outdir, const char *path)
{
    char tab[OUT_PATH], mod[OUT_PATH], pre[2][OUT_PATH + 16];
    rvfit_output_names(outdir, path, tab, mod, sizeof tab);
    /* the temporaries of rvfit_tmpname: ".BASE.tmp." */
    snprintf(pre[0], sizeof pre[0], ".%s.tmp.", base_of(tab));
    snprintf(pre[1], sizeof pre[1], ".%s.tmp.", base_of(mod));
    const char *p[2] = {pre[0], pre[1]};
    remove_prefixed(outdir, p, 2);
}

size_t rvfit_output_clean_dir(const char *outdir)
{
    /* every hidden name rvfit writes: parts ".rvtab_S.fits.partKofN", the
     * temporaries ".rvtab_S.fits.tmp.PID" and those of parts
     * "..rvtab_S.fits.partKofN.tmp.PID", the same for rvmod */
    static const char *const pre[] = {".rvtab_", ".rvmod_", "..rvtab_",
                                      "..rvmod_"};
    DIR *d = opendir(outdir);
    size_t n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int hit = 0;
        for (int i = 0; i < 4 && !hit; i++)
            hit = !strncmp(e->d_name, pre[i], strlen(pre[i]));
        if (!hit || !(strstr(e->d_name, ".part") ||
                      strstr(e->d_name, ".tmp.")))
            continue;
        char full[OUT_PATH + 300];
        snprintf(full, sizeof full, "%s/%s", outdir, e->d_name);
        n += unlink(full) == 0;
    }
    closedir(d);
    return n;
}
