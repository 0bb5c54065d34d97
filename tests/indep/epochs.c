/* `rvfit-indep epochs`: stars observed several times, written as DESI
 * per-exposure spectra- files, a fraction of them single-lined binaries
 * on Keplerian orbits, and the truth: HDU TRUTH, one row per star (the
 * columns of `spectra`'s truth, VRAD being the systemic velocity, plus
 * the orbit) and HDU EXPTRUTH, one row per exposure (its true velocity
 * and S/N).  Every exposure is a fresh observation: its own fibre (LSF),
 * S/N, sky residuals, calibration distortion, cosmic rays and noise.  The
 * exposures are spread over --nfile files ("nights"), a star possibly
 * several times in one.  Deterministic in the seeds, independent of the
 * thread count. */
#include "mock.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exposure draws and noise use stream indices above every star's. */
#define EXP_STREAM (1ULL << 40)
#define MJD0 59000.0 /* 2020-05-31 */

/* One star: its draw (parameters, systemic velocity), its orbit and its
 * exposures [e0, e0 + nexp) of the job's list. */
typedef struct {
    ind_draw d;
    ind_orbit o;
    size_t e0;
} star_t;

typedef struct {
    size_t star;
    double mjd, vrad, snr, vrad2;      /* vrad2: SB2's companion     */
    int file;
    int64_t expid;
} exposure_t;

/* Radial velocity of the primary at time t: gamma + K (cos(nu + omega) +
 * e cos omega), nu the true anomaly from Kepler's equation. */
double ind_kepler_rv(double gamma, double k, double period, double ecc,
                     double omega, double t0, double t)
{
    double m = 2 * IND_PI * (t - t0) / period;
    m = fmod(m, 2 * IND_PI);
    double E = m + ecc * sin(m);
    for (int it = 0; it < 50; it++) {
        double dE = (E - ecc * sin(E) - m) / (1 - ecc * cos(E));
        E -= dE;
        if (fabs(dE) < 1e-14)
            break;
    }
    double nu = 2 * atan2(sqrt(1 + ecc) * sin(0.5 * E),
                          sqrt(1 - ecc) * cos(0.5 * E));
    return gamma + k * (cos(nu + omega) + ecc * cos(omega));
}

/* Civil date YYYYMMDD of the night an MJD falls in (the data model's
 * NIGHT: the local date at the start of the night, here MJD - 0.5). */
static int night_of(double mjd)
{
    long z = (long)floor(mjd - 0.5) + 678881; /* days since 0000-03-01 */
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
    long mo = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (mo <= 2);
    return (int)(y * 10000 + mo * 100 + d);
}

void ind_orbit_draw(const ind_epochs_args *a, size_t s, ind_orbit *st)
{
    ind_rng r;
    ind_rng_seed(&r, a->seed, s, 4);
    st->nexp = a->nexp_min +
               (int)((a->nexp_max - a->nexp_min + 1) * ind_rng_uniform(&r));
    st->binary = ind_rng_uniform(&r) < a->binary_frac;
    st->k1 = a->k_min * pow(a->k_max / a->k_min, ind_rng_uniform(&r));
    st->period = a->p_min * pow(a->p_max / a->p_min, ind_rng_uniform(&r));
    st->ecc = 0.6 * ind_rng_uniform(&r);
    st->omega = 2 * IND_PI * ind_rng_uniform(&r);
    st->t0 = MJD0 + st->period * ind_rng_uniform(&r);
    /* a twin companion of mass ratio qm shines qm^4 as bright (a main-
     * sequence mass-luminosity law) and moves opposite, K2 = K1 / qm */
    st->sb2 = st->binary && ind_rng_uniform(&r) < a->sb2_frac;
    st->qm = 0.7 + 0.3 * ind_rng_uniform(&r);
    st->lratio = pow(st->qm, 4);
    if (!st->sb2)
        st->qm = st->lratio = 0;
    if (!st->binary)
        st->k1 = st->period = st->ecc = st->omega = st->t0 = 0;
}

/* The star's exposures: epochs, velocities, S/N and files. */
static void draw_exposures(const ind_epochs_args *a, size_t s,
                           const ind_orbit *st, double gamma, exposure_t *x)
{
    ind_rng r;
    ind_rng_seed(&r, a->seed, s, 5);
    for (int k = 0; k < st->nexp; k++) {
        exposure_t *e = &x[k];
        e->star = s;
        e->mjd = MJD0 + a->span * ind_rng_uniform(&r);
        e->snr = a->o.snr_min *
                 pow(a->o.snr_max / a->o.snr_min, ind_rng_uniform(&r));
        e->file = (int)(a->nfile * ind_rng_uniform(&r));
        e->vrad = st->binary ? ind_kepler_rv(gamma, st->k1, st->period,
                                             st->ecc, st->omega, st->t0,
                                             e->mjd)
                             : gamma;
        e->vrad2 = st->sb2 ? gamma - (e->vrad - gamma) / st->qm : NAN;
    }
}

/* The observation of exposure e of star st: a fresh draw for everything
 * but the star. */
static void exposure_draw(const ind_epochs_args *a, const star_t *st,
                          const exposure_t *x, size_t e, ind_draw *d)
{
    ind_draw_star(a->seed, EXP_STREAM + e, a->ps, &a->o, d);
    d->p = st->d.p;
    d->vsini = st->d.vsini;
    d->vrad = x->vrad;
    d->snr = x->snr;
    d->ra = st->d.ra;
    d->dec = st->d.dec;
    d->vrad2 = st->o.sb2 ? x->vrad2 : 0;
    d->lratio = st->o.sb2 ? st->o.lratio : 0;
}

static int write_files(const ind_epochs_args *a, const star_t *st,
                       const exposure_t *x, size_t nx, const ind_obsctx *oc,
                       ind_err *e)
{
    ind_draw *draw = malloc((nx ? nx : 1) * sizeof *draw);
    ind_rowid *id = malloc((nx ? nx : 1) * sizeof *id);
    int rc = draw && id ? 0 : ind_fail(e, "%zu exposures: out of memory",
                                       nx);
    for (int f = 0; f < a->nfile && !rc; f++) {
        size_t n = 0;
        for (size_t k = 0; k < nx; k++) {
            if (x[k].file != f)
                continue;
            exposure_draw(a, &st[x[k].star], &x[k], k, &draw[n]);
            id[n] = (ind_rowid){1000000 + (int64_t)x[k].star, x[k].expid,
                                x[k].mjd, night_of(x[k].mjd), 1000 + f,
                                EXP_STREAM + k};
            n++;
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/spectra-%d.fits", a->outdir, f);
        ind_file fl = {path, n, draw, id, 1, a->seed, a->model_seed, a->ps,
                       a->o.ablate, a->nthreads};
        if (n)
            rc = ind_file_write(&fl, oc, e);
    }
    free(draw), free(id);
    return rc;
}

static void truth_stars(fitsfile *fp, const star_t *st, size_t n,
                        const exposure_t *x, int *s)
{
    char *tt[] = {"TARGETID", "TEFF", "LOGG", "FEH", "ALPHAFE", "VRAD",
                  "VSINI", "SNR", "NEXP", "BINARY", "K1", "PERIOD", "ECC",
                  "OMEGA", "T0", "SB2", "QM", "LRATIO"};
    char *tf[] = {"K", "D", "D", "D", "D", "D", "D", "D", "J", "J", "D", "D",
                  "D", "D", "D", "J", "D", "D"};
    char *tu[] = {"", "K", "dex", "dex", "dex", "km/s", "km/s", "", "", "",
                  "km/s", "d", "", "rad", "d", "", "", ""};
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)n, 18, tt, tf, tu, "TRUTH", s);
    fits_write_key(fp, TSTRING, "COMMENT", "VRAD: systemic velocity; SNR: "
                   "sqrt of the sum of the exposures' SNR^2", NULL, s);
    for (size_t i = 0; i < n && !*s; i++) {
        const star_t *q = &st[i];
        double s2 = 0;
        for (int k = 0; k < q->o.nexp; k++)
            s2 += x[q->e0 + k].snr * x[q->e0 + k].snr;
        LONGLONG row = (LONGLONG)i + 1, tid = 1000000 + (LONGLONG)i;
        double v[7] = {q->d.p.teff, q->d.p.logg, q->d.p.feh, q->d.p.alpha,
                       q->d.vrad, q->d.vsini, sqrt(s2)};
        double o[5] = {q->o.k1, q->o.period, q->o.ecc, q->o.omega, q->o.t0};
        int ne = q->o.nexp, bin = q->o.binary, sb2 = q->o.sb2;
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, s);
        for (int k = 0; k < 7; k++)
            fits_write_col(fp, TDOUBLE, 2 + k, row, 1, 1, &v[k], s);
        fits_write_col(fp, TINT, 9, row, 1, 1, &ne, s);
        fits_write_col(fp, TINT, 10, row, 1, 1, &bin, s);
        for (int k = 0; k < 5; k++)
            fits_write_col(fp, TDOUBLE, 11 + k, row, 1, 1, &o[k], s);
        fits_write_col(fp, TINT, 16, row, 1, 1, &sb2, s);
        fits_write_col(fp, TDOUBLE, 17, row, 1, 1, (void *)&q->o.qm, s);
        fits_write_col(fp, TDOUBLE, 18, row, 1, 1, (void *)&q->o.lratio, s);
    }
}

static void truth_exposures(fitsfile *fp, const exposure_t *x, size_t n,
                            int *s)
{
    char *tt[] = {"TARGETID", "EXPID", "MJD", "VRAD", "SNR", "FILE", "VRAD2"};
    char *tf[] = {"K", "K", "D", "D", "D", "J", "D"};
    char *tu[] = {"", "", "d", "km/s", "", "", "km/s"};
    fits_create_tbl(fp, BINARY_TBL, (LONGLONG)n, 7, tt, tf, tu, "EXPTRUTH",
                    s);
    for (size_t i = 0; i < n && !*s; i++) {
        LONGLONG row = (LONGLONG)i + 1, tid = 1000000 + (LONGLONG)x[i].star;
        LONGLONG expid = x[i].expid;
        int f = x[i].file;
        fits_write_col(fp, TLONGLONG, 1, row, 1, 1, &tid, s);
        fits_write_col(fp, TLONGLONG, 2, row, 1, 1, &expid, s);
        fits_write_col(fp, TDOUBLE, 3, row, 1, 1, (void *)&x[i].mjd, s);
        fits_write_col(fp, TDOUBLE, 4, row, 1, 1, (void *)&x[i].vrad, s);
        fits_write_col(fp, TDOUBLE, 5, row, 1, 1, (void *)&x[i].snr, s);
        fits_write_col(fp, TINT, 6, row, 1, 1, &f, s);
        fits_write_col(fp, TDOUBLE, 7, row, 1, 1, (void *)&x[i].vrad2, s);
    }
}

static int write_truth(const ind_epochs_args *a, const star_t *st,
                       const exposure_t *x, size_t nx, ind_err *e)
{
    char tmp[4200], clobber[4300];
    ind_tmpname(tmp, sizeof tmp, a->truth, 0);
    snprintf(clobber, sizeof clobber, "!%s", tmp);
    fitsfile *fp = NULL;
    int s = 0;
    fits_create_file(&fp, clobber, &s);
    fits_create_img(fp, BYTE_IMG, 0, NULL, &s);
    fits_write_key(fp, TSTRING, "GENERATR", "rvfit-indep epochs", NULL, &s);
    truth_stars(fp, st, a->nstar, x, &s);
    truth_exposures(fp, x, nx, &s);
    fits_close_file(fp, &s);
    if (s) {
        remove(tmp);
        return ind_fits_fail(e, s, a->truth, "writing truth table");
    }
    return ind_commit(tmp, a->truth, e);
}

int ind_epochs_write(const ind_epochs_args *a, ind_err *e)
{
    if (a->nstar == 0 || a->nexp_min < 1 || a->nexp_max < a->nexp_min ||
        a->nfile < 1 || !(a->k_min > 0 && a->k_max >= a->k_min) ||
        !(a->p_min > 0 && a->p_max >= a->p_min) || !(a->span > 0))
        return ind_fail(e, "epochs: bad --nstar/--nexp-min/--nexp-max/"
                        "--nfile/--k-min/--k-max/--p-min/--p-max/--span");
    if (ind_mkdir(a->outdir, e))
        return -1;
    star_t *st = calloc(a->nstar, sizeof *st);
    size_t nx = 0;
    for (size_t s = 0; st && s < a->nstar; s++) {
        ind_draw_star(a->seed, s, a->ps, &a->o, &st[s].d);
        ind_orbit_draw(a, s, &st[s].o);
        st[s].e0 = nx;
        nx += (size_t)st[s].o.nexp;
    }
    exposure_t *x = st ? calloc(nx ? nx : 1, sizeof *x) : NULL;
    if (!st || !x) {
        free(st), free(x);
        return ind_fail(e, "%zu stars: out of memory", a->nstar);
    }
    for (size_t s = 0; s < a->nstar; s++)
        draw_exposures(a, s, &st[s].o, st[s].d.vrad, x + st[s].e0);
    for (size_t k = 0; k < nx; k++)
        x[k].expid = 100000 + (int64_t)k;
    ind_linelist ll;
    int rc = ind_linelist_build(a->model_seed, &ll, e);
    ind_obsctx oc;
    if (!rc && (rc = ind_obsctx_make(&oc, &ll, a->o.vsini_max, e)))
        ind_linelist_free(&ll);
    if (!rc) {
        rc = write_files(a, st, x, nx, &oc, e);
        if (!rc)
            rc = write_truth(a, st, x, nx, e);
        ind_obsctx_free(&oc);
        ind_linelist_free(&ll);
    }
    free(st), free(x);
    return rc;
}
