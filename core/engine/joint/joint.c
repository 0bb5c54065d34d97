/* joint.c — rvfit_fit_joint: the fit's stages over objects of several
 * spectra (fit_group.c expands their points), and a last stage that adds
 * each object's constant-velocity scan to the diagnostics' backend call
 * and makes the objects' results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "joint_internal.h"

/* The constant-velocity scan: CV_N velocities over +-CV_NSIGMA errors of
 * the error-weighted mean of the exposures' velocities (a step of half
 * an error, as the last scans of stage 3), each evaluated for every
 * exposure at the joint parameters and summed. */
#define CV_N 25
#define CV_NSIGMA 6.0

typedef struct joint_ctx {
    fit_ctx f; /* first: the stages are handed &f */
    size_t nobj;
    const size_t *obj_off;
    rvfit_joint_result *jres;
    rvfit_sb2 *sb2;  /* NULL: no two-velocity test                      */
    /* the last stage's */
    double *cv_v;    /* [nobj * CV_N] scan velocities (cv_n[o] of them) */
    double *cv_m;    /* [nobj * CV_N] summed -2 ln L                   */
    int *cv_n;       /* [nobj] 0: no scan                               */
} joint_ctx;

/* Usable spectra of object o (fit_group.c's lists). */
static size_t obj_members(const fit_ctx *f, size_t o, const size_t **mem)
{
    *mem = f->grp->mem + f->grp->off[o];
    return f->grp->off[o + 1] - f->grp->off[o];
}

/* The grid of object o's scan (cv_v) and its points into px; the number
 * of points. */
static size_t cv_points(joint_ctx *j, size_t o, rvfit_point *px)
{
    fit_ctx *f = &j->f;
    const size_t *mem;
    size_t nm = obj_members(f, o, &mem), np = 0;
    double sw = 0, swv = 0;
    for (size_t k = 0; k < nm; k++) {
        double e = f->verr[mem[k]], v = f->best[mem[k]].v;
        if (isfinite(e) && e > 0 && isfinite(v))
            sw += 1 / (e * e), swv += v / (e * e);
    }
    j->cv_n[o] = 0;
    if (nm < 2 || !(sw > 0))
        return 0;
    double c = swv / sw, half = fmax(CV_NSIGMA / sqrt(sw), 0.05);
    double *v = j->cv_v + o * CV_N;
    for (int k = 0; k < CV_N; k++)
        v[k] = c + half * (2.0 * k / (CV_N - 1) - 1);
    for (size_t e = 0; e < nm; e++)
        for (int k = 0; k < CV_N; k++, np++) {
            px[np] = f->best[mem[e]];
            px[np].v = v[k];
        }
    j->cv_n[o] = CV_N;
    return np;
}

/* Sum each object's scan over its exposures (mx in cv_points' order). */
static void cv_sum(joint_ctx *j, const double *mx)
{
    fit_ctx *f = &j->f;
    for (size_t o = 0; o < j->nobj; o++) {
        if (!j->cv_n[o])
            continue;
        const size_t *mem;
        size_t nm = obj_members(f, o, &mem);
        double *m = j->cv_m + o * CV_N;
        for (int k = 0; k < CV_N; k++) {
            double s = mx[k];
            for (size_t e = 1; e < nm; e++)
                s += mx[e * CV_N + (size_t)k];
            m[k] = s;
        }
        mx += nm * CV_N;
    }
}

/* The constant velocity of object o into r: the posterior of the summed
 * scan, or, where its minimum lies at an edge or there is none, the
 * error-weighted mean with its error (skewness and kurtosis NaN). */
static void cv_result(const joint_ctx *j, size_t o, rvfit_result *r)
{
    const double *v = j->cv_v + o * CV_N, *m = j->cv_m + o * CV_N;
    size_t kb = 0;
    for (size_t k = 1; k < CV_N; k++)
        kb = m[k] < m[kb] ? k : kb;
    if (kb == 0 || kb == CV_N - 1) {
        r->vrad = v[CV_N / 2];
        r->vrad_err = (v[1] - v[0]) * (CV_N - 1) / (2 * CV_NSIGMA);
        r->vrad_skew = r->vrad_kurt = NAN;
    } else {
        r->vrad = fit_vscan_mode(v, m, CV_N, kb);
        fit_vscan_moments(v, m, CV_N, r->vrad, &r->vrad_err, &r->vrad_skew,
                          &r->vrad_kurt);
    }
    r->vscan_n = CV_N;
    memcpy(r->vscan_v, v, CV_N * sizeof *v);
    memcpy(r->vscan_m2lnl, m, CV_N * sizeof *m);
}

/* Sums over the spectra of object o into r; returns the arms with
 * pixels summed over its spectra. */
static int obj_sums(const fit_ctx *f, size_t o, rvfit_result *r)
{
    const size_t *mem;
    size_t nm = obj_members(f, o, &mem);
    int na = f->b->narm, used = 0;
    double sn2[RVFIT_MAX_ARMS] = {0};
    r->chisq_tot = r->chisq_c_tot = r->m2lnl = 0;
    r->npix_tot = 0;
    for (int a = 0; a < RVFIT_MAX_ARMS; a++) {
        r->chisq[a] = r->chisq_c[a] = a < na ? 0 : NAN;
        r->npix[a] = r->nclip[a] = 0;
    }
    for (size_t e = 0; e < nm; e++) {
        const rvfit_result *q = &f->res[mem[e]];
        for (int a = 0; a < na; a++) {
            r->chisq[a] += q->chisq[a];
            r->chisq_c[a] += q->chisq_c[a];
            r->npix[a] += q->npix[a];
            r->nclip[a] += q->nclip[a];
            used += q->npix[a] > 0;
            if (isfinite(q->sn[a]))
                sn2[a] += q->sn[a] * q->sn[a];
        }
        r->chisq_tot += q->chisq_tot;
        r->chisq_c_tot += q->chisq_c_tot;
        r->npix_tot += q->npix_tot;
        r->m2lnl += q->m2lnl;
    }
    for (int a = 0; a < RVFIT_MAX_ARMS; a++)
        r->sn[a] = a < na ? sqrt(sn2[a]) : NAN;
    return used;
}

/* The result of object o (usable spectra, finished): one spectrum gives
 * its own result; several give the joint parameters (stat and interp
 * error parts st, ip saved before the spectra were finished), the sums,
 * the constant velocity and the constancy statistics. */
static int obj_result(joint_ctx *j, size_t o, const double *st,
                      const double *ip)
{
    fit_ctx *f = &j->f;
    const size_t *mem;
    size_t nm = obj_members(f, o, &mem);
    rvfit_joint_result *J = &j->jres[o];
    rvfit_result *r = &J->r;
    const rvfit_result *rep = &f->res[mem[0]];
    double *vk = malloc(2 * nm * sizeof *vk), *ek = vk ? vk + nm : NULL;
    uint32_t prep = 0;
    if (!vk)
        return fit_nomem(f);
    J->nepoch = (int)nm;
    if (nm == 1) {
        *r = *rep;
    } else {
        memset(r, 0, sizeof *r);
        r->vsini = rep->vsini;
        memcpy(r->param, rep->param, sizeof r->param);
        memcpy(r->param_err, st, sizeof r->param_err);
        memcpy(r->param_err_interp, ip, sizeof r->param_err_interp);
        int used = obj_sums(f, o, r);
        if (j->cv_n[o]) {
            cv_result(j, o, r);
        } else { /* no usable velocity error: nothing to weigh */
            r->vrad = rep->vrad;
            r->vrad_err = r->vrad_skew = r->vrad_kurt = NAN;
        }
        fit_result_reduce(f, r, used, (int)nm);
        r->warn = rep->warn & (RVFIT_WARN_PARAM | RVFIT_WARN_BAD_HESSIAN |
                               RVFIT_WARN_VSINI);
        if (r->chisq_c_tot - r->chisq_tot < 50)
            r->warn |= RVFIT_WARN_CHISQ;
        if (r->vrad < f->o->vmin + 5 || r->vrad > f->o->vmax - 5)
            r->warn |= RVFIT_WARN_RV;
        if (!(r->vrad_err <= 100))
            r->warn |= RVFIT_WARN_RVERR;
    }
    r->npoints = 0;
    for (size_t k = 0; k < nm; k++) {
        r->npoints += f->npts[mem[k]];
        r->warn |= f->res[mem[k]].warn & RVFIT_WARN_SB2;
    }
    for (size_t s = j->obj_off[o]; s < j->obj_off[o + 1]; s++)
        prep |= fit_result_prep_warn(f->b->flags[s]);
    r->warn |= prep;
    for (size_t k = 0; k < nm; k++)
        vk[k] = f->res[mem[k]].vrad, ek[k] = f->res[mem[k]].vrad_err;
    int nused;
    rvfit_vrad_constancy(vk, ek, nm, &J->vrad_chisq, &J->vrad_pvalue,
                         &J->vrad_scatter, &nused);
    free(vk);
    return RVFIT_OK;
}

/* Stage 5 of a joint fit: the diagnostics of every spectrum and the
 * objects' constant-velocity scans in one chisq call, the models, the
 * spectra's results and the objects'. */
static int joint_stage_diag(fit_ctx *f)
{
    joint_ctx *j = (joint_ctx *)f;
    size_t nobj = j->nobj, nx = 0, nm = f->grp->off[nobj];
    int P = RVFIT_MAX_PARAMS;
    rvfit_point *px = malloc((nm ? nm : 1) * CV_N * sizeof *px);
    double *mx = malloc((nm ? nm : 1) * CV_N * sizeof *mx);
    double *st = malloc((nobj ? nobj : 1) * 2 * (size_t)P * sizeof *st);
    j->cv_v = malloc((nobj ? nobj : 1) * CV_N * sizeof *j->cv_v);
    j->cv_m = malloc((nobj ? nobj : 1) * CV_N * sizeof *j->cv_m);
    j->cv_n = calloc(nobj ? nobj : 1, sizeof *j->cv_n);
    int rc = px && mx && st && j->cv_v && j->cv_m && j->cv_n ? RVFIT_OK
                                                             : fit_nomem(f);
    for (size_t o = 0; o < nobj && !rc; o++)
        nx += cv_points(j, o, px + nx);
    if (!rc)
        rc = fit_diag_eval(f, nx, px, mx);
    if (!rc)
        cv_sum(j, mx);
    /* the error parts before the spectra's results combine them */
    for (size_t o = 0; o < nobj && !rc; o++) {
        const size_t *mem;
        if (!obj_members(f, o, &mem))
            continue;
        memcpy(st + 2 * o * (size_t)P, f->res[mem[0]].param_err,
               (size_t)P * sizeof *st);
        memcpy(st + (2 * o + 1) * (size_t)P, f->res[mem[0]].param_err_interp,
               (size_t)P * sizeof *st);
    }
    for (size_t i = 0; i < f->nxact && !rc; i++)
        fit_result_finish(f, &f->res[f->xact[i]], f->xact[i]);
    if (!rc && j->sb2 && f->o->sb2)
        rc = joint_sb2(f, j->sb2);
    for (size_t o = 0; o < nobj && !rc; o++) {
        const size_t *mem;
        if (obj_members(f, o, &mem))
            rc = obj_result(j, o, st + 2 * o * (size_t)P,
                            st + (2 * o + 1) * (size_t)P);
    }
    free(px), free(mx), free(st);
    free(j->cv_v), free(j->cv_m), free(j->cv_n);
    j->cv_v = j->cv_m = NULL, j->cv_n = NULL;
    return rc;
}

/* Objects none of whose spectra can be fitted. */
static void objects_bad(joint_ctx *j)
{
    for (size_t o = 0; o < j->nobj; o++) {
        rvfit_joint_result *J = &j->jres[o];
        memset(J, 0, sizeof *J);
        fit_result_bad(&j->f, &J->r, j->obj_off[o]);
        for (size_t s = j->obj_off[o]; s < j->obj_off[o + 1]; s++)
            J->r.warn |= fit_result_prep_warn(j->f.b->flags[s]);
        J->vrad_chisq = J->vrad_pvalue = J->vrad_scatter = NAN;
    }
}

int rvfit_fit_joint(rvfit_backend *be, const rvfit_library *lib,
                    const rvfit_batch *b, size_t nobj, const size_t *obj_off,
                    const rvfit_fit_opts *o, rvfit_result *res,
                    rvfit_joint_result *jres, rvfit_sb2 *sb2,
                    float *const *models, rvfit_profile *prof,
                    const rvfit_host *host, rvfit_err *err)
{
    joint_ctx j = {.f = {.be = be, .lib = lib, .b = b, .o = o, .prof = prof,
                         .host = host, .err = err, .res = res,
                         .models = models},
                   .nobj = nobj, .obj_off = obj_off, .jres = jres,
                   .sb2 = sb2};
    for (size_t s = 0; sb2 && s < b->nspec; s++)
        sb2[s] = (rvfit_sb2){NAN, NAN, NAN};
    const fit_stage stages[FIT_NSTAGES] = {
        fit_stages[0], fit_stages[1], fit_stages[2], fit_stages[3],
        fit_stages[4], {RVFIT_ST_DIAG, joint_stage_diag}};
    int rc = fit_begin(&j.f);
    if (!rc)
        rc = fit_group_setup(&j.f, nobj, obj_off);
    if (!rc)
        objects_bad(&j);
    if (!rc)
        rc = fit_run_stages(&j.f, stages, FIT_NSTAGES);
    return fit_end(&j.f, rc);
}
