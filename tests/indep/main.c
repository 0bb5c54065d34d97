/* rvfit-indep: an independent synthetic-data generator for testing rvfit
 * (see docs/independent-generator.md).  Subcommands: grid, spectra,
 * epochs, mrs, model, bound, score, score-epochs. */
#include "bound.h"
#include "mrs.h"
#include "util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage: rvfit-indep grid --out DIR\n"
    "           [--preset small|std|dense|dense-fe|dense-box|small-fa|mrs]\n"
    "           [--seed S]\n"
    "           [--threads N]\n"
    "       rvfit-indep spectra --out FILE --truth FILE [--nstar N] [--seed S]\n"
    "           [--preset small|std|dense|dense-fe|dense-box|small-fa]\n"
    "           [--snr-min 3] [--snr-max 60]\n"
    "           [--vmax 500] [--vsini-max 10]\n"
    "           [--model-seed S (= grid --seed, default 1)]\n"
    "           [--ablate cosmics,skyres,distortion,lsfshape,rotation,nodes]\n"
    "           [--threads N]\n"
    "       rvfit-indep model --teff T --logg G [--feh F] [--alpha A] [--seed S]\n"
    "           [--lo 3450] [--hi 10000] [--dlnl 1e-5] [--norm]  (text to stdout)\n"
    "       rvfit-indep bound COADD TRUTH --out FILE [--first I] [--count N]\n"
    "           [--npoly 10] [--basis gauss|legendre] [--step 1] [--threads N]\n"
    "           [--snr-min/--snr-max/--vmax/--vsini-max as given to spectra]\n"
    "       rvfit-indep score RVTAB TRUTH [--bound FILE]\n"
    "           [--check-absdv KMS --check-snr X]\n"
    "           [--check-dteff K] [--check-dlogg D] [--check-dfeh D]\n"
    "       rvfit-indep epochs --out DIR --truth FILE [--nstar N] [--seed S]\n"
    "           [--nexp-min 2] [--nexp-max 8] [--nfile 4] [--binary-frac 0.3]\n"
    "           [--k-min 0.5] [--k-max 100] [--p-min 1] [--p-max 1000]\n"
    "           [--span 1500] [--sb2-frac 0] and the options of spectra\n"
    "       rvfit-indep mrs --out DIR --truth FILE [--nstar N] [--seed S]\n"
    "           [--preset mrs] [--nnight-max 3] [--nexp-min 2] [--nexp-max 8]\n"
    "           [--binary-frac 0.3] [--k-min 0.5] [--k-max 100] [--p-min 1]\n"
    "           [--p-max 1000] [--span 1500] [--snr-min 3] [--snr-max 60]\n"
    "           [--vmax 500] [--vsini-max 10] [--model-seed S] [--threads N]\n"
    "       rvfit-indep score-epochs RVTAB TRUTH [SINGLE_RVTAB...] [--check\n"
    "           --ks-p 0.01 --frac-lo 3e-4 --frac-hi 3e-3 --pull-lo 0.9\n"
    "           --pull-hi 1.1 --pull-min-n 20 --joint-better[=TEFF,LOGG,FEH]\n"
    "           --complete-k 8\n"
    "           --complete-min 0.9]\n";

enum { O_NSTAR, O_SEED, O_SNRMIN, O_SNRMAX, O_VMAX, O_VSINI, O_MSEED,
       O_THREADS, O_TEFF, O_LOGG, O_FEH, O_ALPHA, O_LO, O_HI, O_DLNL,
       O_CHECK, O_NEXPMIN, O_NEXPMAX, O_NFILE, O_BFRAC, O_KMIN, O_KMAX,
       O_PMIN, O_PMAX, O_SPAN, O_KSP, O_FLO, O_FHI, O_PLO, O_PHI, O_CK,
       O_CMIN, O_SB2FRAC, O_PMINN, O_FIRST, O_COUNT, O_NPOLY, O_STEP,
       O_NNIGHT,
       O_CDT, O_CDG, O_CDF, O_NUM };

typedef struct {
    const char *out, *truth, *preset, *ablate, *basis, *bound;
    double num[O_NUM];
    int norm, check, joint_better;
} opts;

static int parse(int argc, char **argv, opts *o, double *check_snr)
{
    static const struct option lo[] = {
        {"out", 1, 0, 'o'}, {"truth", 1, 0, 't'}, {"preset", 1, 0, 'p'},
        {"nstar", 1, 0, 1000 + O_NSTAR}, {"seed", 1, 0, 1000 + O_SEED},
        {"snr-min", 1, 0, 1000 + O_SNRMIN}, {"snr-max", 1, 0, 1000 + O_SNRMAX},
        {"vmax", 1, 0, 1000 + O_VMAX}, {"vsini-max", 1, 0, 1000 + O_VSINI},
        {"model-seed", 1, 0, 1000 + O_MSEED}, {"threads", 1, 0, 1000 + O_THREADS},
        {"teff", 1, 0, 1000 + O_TEFF}, {"logg", 1, 0, 1000 + O_LOGG},
        {"feh", 1, 0, 1000 + O_FEH}, {"alpha", 1, 0, 1000 + O_ALPHA},
        {"lo", 1, 0, 1000 + O_LO}, {"hi", 1, 0, 1000 + O_HI},
        {"dlnl", 1, 0, 1000 + O_DLNL}, {"check-absdv", 1, 0, 1000 + O_CHECK},
        {"check-snr", 1, 0, 999}, {"norm", 0, 0, 'n'}, {"help", 0, 0, 'h'},
        {"ablate", 1, 0, 'a'}, {"basis", 1, 0, 'b'}, {"bound", 1, 0, 'B'},
        {"first", 1, 0, 1000 + O_FIRST}, {"count", 1, 0, 1000 + O_COUNT},
        {"npoly", 1, 0, 1000 + O_NPOLY}, {"step", 1, 0, 1000 + O_STEP},
        {"nexp-min", 1, 0, 1000 + O_NEXPMIN},
        {"nexp-max", 1, 0, 1000 + O_NEXPMAX}, {"nfile", 1, 0, 1000 + O_NFILE},
        {"binary-frac", 1, 0, 1000 + O_BFRAC}, {"k-min", 1, 0, 1000 + O_KMIN},
        {"k-max", 1, 0, 1000 + O_KMAX}, {"p-min", 1, 0, 1000 + O_PMIN},
        {"p-max", 1, 0, 1000 + O_PMAX}, {"span", 1, 0, 1000 + O_SPAN},
        {"ks-p", 1, 0, 1000 + O_KSP}, {"frac-lo", 1, 0, 1000 + O_FLO},
        {"frac-hi", 1, 0, 1000 + O_FHI}, {"pull-lo", 1, 0, 1000 + O_PLO},
        {"pull-hi", 1, 0, 1000 + O_PHI}, {"complete-k", 1, 0, 1000 + O_CK},
        {"complete-min", 1, 0, 1000 + O_CMIN}, {"check", 0, 0, 'C'},
        {"pull-min-n", 1, 0, 1000 + O_PMINN},
        {"sb2-frac", 1, 0, 1000 + O_SB2FRAC},
        {"joint-better", 2, 0, 'J'},
        {"nnight-max", 1, 0, 1000 + O_NNIGHT},
        {"check-dteff", 1, 0, 1000 + O_CDT},
        {"check-dlogg", 1, 0, 1000 + O_CDG},
        {"check-dfeh", 1, 0, 1000 + O_CDF},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:t:p:nh", lo, NULL)) != -1) {
        if (c == 'o')
            o->out = optarg;
        else if (c == 't')
            o->truth = optarg;
        else if (c == 'p')
            o->preset = optarg;
        else if (c == 'n')
            o->norm = 1;
        else if (c == 'a')
            o->ablate = optarg;
        else if (c == 'C')
            o->check = 1;
        else if (c == 'J') {
            o->joint_better = ind_joint_mask(optarg);
            if (!o->joint_better) {
                fprintf(stderr, "rvfit-indep: --joint-better=%s: name TEFF, "
                        "LOGG or FEH, comma-separated\n", optarg);
                return -1;
            }
        } else if (c == 'b')
            o->basis = optarg;
        else if (c == 'B')
            o->bound = optarg;
        else if (c >= 999 && c < 1000 + O_NUM) {
            char *end;
            double v = strtod(optarg, &end);
            if (end == optarg || *end) {
                fprintf(stderr, "rvfit-indep: bad number '%s'\n", optarg);
                return -1;
            }
            if (c == 999)
                *check_snr = v;
            else
                o->num[c - 1000] = v;
        } else {
            fputs(USAGE, stderr);
            return c == 'h' ? 1 : -1;
        }
    }
    return 0;
}

static int cmd_model(const opts *o, ind_err *e)
{
    ind_linelist ll;
    if (ind_linelist_build((uint64_t)o->num[O_SEED], &ll, e))
        return -1;
    ind_hgrid g;
    ind_star s = {o->num[O_TEFF], o->num[O_LOGG], o->num[O_FEH],
                  o->num[O_ALPHA]};
    if (ind_hgrid_make(&g, o->num[O_LO], o->num[O_HI], o->num[O_DLNL], e)) {
        ind_linelist_free(&ll);
        return -1;
    }
    double *f = malloc(3 * g.n * sizeof *f);
    if (!f) {
        ind_hgrid_free(&g);
        ind_linelist_free(&ll);
        return ind_fail(e, "out of memory");
    }
    if (o->norm)
        ind_spectrum_norm(&ll, &s, &g, f, f + g.n);
    else
        ind_spectrum(&ll, &s, &g, f, f + g.n);
    for (size_t k = 0; k < g.n; k++)
        printf("%.4f %.8g\n", g.lam[k], f[k]);
    free(f);
    ind_hgrid_free(&g);
    ind_linelist_free(&ll);
    return 0;
}

static int cmd_bound(const opts *o, int nargs, char **args, int nth,
                     ind_err *e)
{
    if (nargs != 2 || !o->out)
        return ind_fail(e, "bound: need COADD, TRUTH and --out FILE");
    int basis = !o->basis || !strcmp(o->basis, "gauss") ? IND_BASIS_GAUSS
              : !strcmp(o->basis, "legendre") ? IND_BASIS_LEGENDRE : -1;
    if (basis < 0)
        return ind_fail(e, "bound: --basis '%s': gauss or legendre",
                        o->basis);
    if (o->num[O_FIRST] < 0 || o->num[O_COUNT] < 0)
        return ind_fail(e, "bound: --first and --count must be >= 0");
    ind_bound_args a = {args[0], args[1], o->out, (size_t)o->num[O_FIRST],
        (size_t)o->num[O_COUNT], (int)o->num[O_NPOLY], basis,
        o->num[O_STEP], {o->num[O_SNRMIN], o->num[O_SNRMAX],
        o->num[O_VMAX], o->num[O_VSINI], 0}, nth};
    return ind_bound_write(&a, e);
}

/* --ablate: comma-separated names of the effects to switch off. */
static int parse_ablate(const char *s, unsigned *bits, ind_err *e)
{
    static const struct { const char *name; unsigned bit; } t[] = {
        {"cosmics", IND_NO_COSMICS}, {"skyres", IND_NO_SKYRES},
        {"distortion", IND_NO_DISTORTION}, {"lsfshape", IND_GAUSS_LSF},
        {"rotation", IND_NO_ROTATION}, {"nodes", IND_ON_NODES}};
    *bits = 0;
    while (s && *s) {
        size_t n = strcspn(s, ","), k = 0;
        while (k < sizeof t / sizeof t[0] &&
               !(strlen(t[k].name) == n && strncmp(t[k].name, s, n) == 0))
            k++;
        if (k == sizeof t / sizeof t[0])
            return ind_fail(e, "--ablate: unknown effect '%.*s'", (int)n, s);
        *bits |= t[k].bit;
        s += n + (s[n] == ',');
    }
    return 0;
}

static int cmd_epochs(const opts *o, const ind_preset *ps, int nth,
                      ind_err *e)
{
    if (!o->out || !o->truth)
        return ind_fail(e, "epochs: --out DIR and --truth are required");
    ind_epochs_args a = {o->out, o->truth, (size_t)o->num[O_NSTAR],
        (uint64_t)o->num[O_SEED], (uint64_t)o->num[O_MSEED], ps,
        {o->num[O_SNRMIN], o->num[O_SNRMAX], o->num[O_VMAX],
         o->num[O_VSINI], 0}, (int)o->num[O_NEXPMIN], (int)o->num[O_NEXPMAX],
        (int)o->num[O_NFILE], o->num[O_BFRAC], o->num[O_KMIN],
        o->num[O_KMAX], o->num[O_PMIN], o->num[O_PMAX], o->num[O_SPAN], nth,
        o->num[O_SB2FRAC]};
    if (parse_ablate(o->ablate, &a.o.ablate, e))
        return -1;
    if (!(a.o.snr_min > 0 && a.o.snr_max >= a.o.snr_min &&
          a.o.vmax >= 0 && a.o.vmax + a.k_max < 0.5 * IND_C_KMS &&
          a.o.vsini_max >= 0 && a.o.vsini_max < 1000 &&
          a.binary_frac >= 0 && a.binary_frac <= 1 && a.sb2_frac >= 0 &&
          a.sb2_frac <= 1))
        return ind_fail(e, "epochs: bad --snr-min/--snr-max/--vmax/"
                        "--vsini-max/--binary-frac");
    return ind_epochs_write(&a, e);
}

static int cmd_mrs(const opts *o, const ind_preset *ps, int nth, ind_err *e)
{
    if (!o->out || !o->truth)
        return ind_fail(e, "mrs: --out DIR and --truth are required");
    ind_mrs_args a = {o->out, o->truth, (size_t)o->num[O_NSTAR],
        (uint64_t)o->num[O_SEED], (uint64_t)o->num[O_MSEED], ps,
        {o->num[O_SNRMIN], o->num[O_SNRMAX], o->num[O_VMAX],
         o->num[O_VSINI], 0}, (int)o->num[O_NNIGHT],
        (int)o->num[O_NEXPMIN], (int)o->num[O_NEXPMAX], o->num[O_BFRAC],
        o->num[O_KMIN], o->num[O_KMAX], o->num[O_PMIN], o->num[O_PMAX],
        o->num[O_SPAN], nth};
    if (!(a.o.snr_min > 0 && a.o.snr_max >= a.o.snr_min &&
          a.o.vmax >= 0 && a.o.vmax + a.k_max < 0.5 * IND_C_KMS &&
          a.o.vsini_max >= 0 && a.o.vsini_max < 1000 &&
          a.binary_frac >= 0 && a.binary_frac <= 1))
        return ind_fail(e, "mrs: bad --snr-min/--snr-max/--vmax/"
                        "--vsini-max/--binary-frac");
    return ind_mrs_write(&a, e);
}

static int cmd_score_epochs(const opts *o, int nargs, char **args,
                            ind_err *e)
{
    if (nargs < 2)
        return ind_fail(e, "score-epochs: need RVTAB and TRUTH");
    ind_epoch_checks ck = {o->num[O_KSP], o->num[O_FLO], o->num[O_FHI],
                           o->num[O_PLO], o->num[O_PHI], o->joint_better,
                           o->num[O_CK], o->num[O_CMIN], o->num[O_PMINN]};
    int rc = ind_score_epochs(args[0], args[1], args + 2, nargs - 2,
                              o->check ? &ck : NULL, e);
    if (rc > 0)
        e->msg[0] = '\0';
    return rc ? -1 : 0;
}

static int run(const char *cmd, const opts *o, int nargs, char **args,
               double check_snr, ind_err *e)
{
    int nth = o->num[O_THREADS] > 0 ? (int)o->num[O_THREADS]
                                    : ind_default_threads();
    /* mrs draws its stars inside the mrs grid; the rest inside small */
    const char *pname = o->preset ? o->preset
                        : strcmp(cmd, "mrs") ? "small" : "mrs";
    const ind_preset *ps = ind_preset_find(pname);
    if (!ps && strcmp(cmd, "score") && strcmp(cmd, "model") &&
        strcmp(cmd, "score-epochs") && strcmp(cmd, "bound"))
        return ind_fail(e, "unknown preset '%s' (small, std, dense, "
                        "dense-fe, dense-box, small-fa or mrs)", pname);
    if (strcmp(cmd, "grid") == 0) {
        if (!o->out)
            return ind_fail(e, "grid: --out DIR is required");
        return ind_grid_write(o->out, ps, (uint64_t)o->num[O_SEED], nth, e);
    }
    if (strcmp(cmd, "spectra") == 0) {
        if (!o->out || !o->truth)
            return ind_fail(e, "spectra: --out and --truth are required");
        ind_coadd_args a = {o->out, o->truth, (size_t)o->num[O_NSTAR],
            (uint64_t)o->num[O_SEED], (uint64_t)o->num[O_MSEED], ps,
            {o->num[O_SNRMIN], o->num[O_SNRMAX], o->num[O_VMAX],
             o->num[O_VSINI], 0}, nth};
        if (parse_ablate(o->ablate, &a.o.ablate, e))
            return -1;
        if (!(a.o.snr_min > 0 && a.o.snr_max >= a.o.snr_min &&
              a.o.vmax >= 0 && a.o.vmax < 0.5 * IND_C_KMS &&
              a.o.vsini_max >= 0 && a.o.vsini_max < 1000))
            return ind_fail(e, "spectra: bad --snr-min/--snr-max/--vmax/"
                            "--vsini-max");
        return ind_coadd_write(&a, e);
    }
    if (strcmp(cmd, "epochs") == 0)
        return cmd_epochs(o, ps, nth, e);
    if (strcmp(cmd, "mrs") == 0)
        return cmd_mrs(o, ps, nth, e);
    if (strcmp(cmd, "score-epochs") == 0)
        return cmd_score_epochs(o, nargs, args, e);
    if (strcmp(cmd, "model") == 0)
        return cmd_model(o, e);
    if (strcmp(cmd, "bound") == 0)
        return cmd_bound(o, nargs, args, nth, e);
    if (strcmp(cmd, "score") == 0) {
        if (nargs != 2)
            return ind_fail(e, "score: need RVTAB and TRUTH");
        int rc = ind_score(args[0], args[1], o->bound, o->num[O_CHECK],
                           check_snr, &o->num[O_CDT], e);
        if (rc > 0)
            e->msg[0] = '\0';
        return rc ? -1 : 0;
    }
    return ind_fail(e, "unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "--help") == 0) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    opts o = {.preset = NULL};
    double check_snr = 10.0;
    o.num[O_NSTAR] = 200;
    o.num[O_SEED] = 1;
    o.num[O_MSEED] = 1;
    o.num[O_SNRMIN] = 3;
    o.num[O_SNRMAX] = 60;
    o.num[O_VMAX] = 500;
    o.num[O_VSINI] = 10;
    o.num[O_ALPHA] = 0;
    o.num[O_LO] = 3450;
    o.num[O_HI] = 10000;
    o.num[O_DLNL] = 1e-5;
    o.num[O_NEXPMIN] = 2;
    o.num[O_NEXPMAX] = 8;
    o.num[O_NFILE] = 4;
    o.num[O_BFRAC] = 0.3;
    o.num[O_KMIN] = 0.5;
    o.num[O_KMAX] = 100;
    o.num[O_PMIN] = 1;
    o.num[O_PMAX] = 1000;
    o.num[O_SPAN] = 1500;
    o.num[O_KSP] = 0.01;
    o.num[O_FLO] = 3e-4;
    o.num[O_FHI] = 3e-3;
    o.num[O_PLO] = 0.9;
    o.num[O_PHI] = 1.1;
    o.num[O_CK] = 8;
    o.num[O_CMIN] = 0;
    o.num[O_PMINN] = 20;
    o.num[O_NPOLY] = 10;
    o.num[O_STEP] = 1;
    o.num[O_NNIGHT] = 3;
    int rc = parse(argc - 1, argv + 1, &o, &check_snr);
    if (rc)
        return rc > 0 ? 0 : 2;
    ind_err e = {{0}};
    if (run(argv[1], &o, argc - 1 - optind, argv + 1 + optind, check_snr,
            &e)) {
        if (e.msg[0])
            fprintf(stderr, "rvfit-indep: %s\n", e.msg);
        return 1;
    }
    return 0;
}
