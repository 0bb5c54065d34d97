/* test_config.c — INI parsing through inih: defaults, precedence of the
 * command line, errors that name the file and line, and relative paths
 * in a file taken relative to that file's directory. */
#include <stdio.h>
#include <string.h>

#include "rvfit/config.h"
#include "rvfit/fit.h"
#include "testutil.h"

static const char *write_ini(const char *name, const char *text)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", tu_tmpdir(name), "c.ini");
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void expect_error(const char *name, const char *text,
                         const char *needle)
{
    rvfit_config c;
    rvfit_config_defaults(&c);
    rvfit_err err;
    rvfit_err_clear(&err);
    const char *path = write_ini(name, text);
    int rc = rvfit_config_load(&c, path, &err);
    printf("%s -> %s\n", name, err.msg);
    CHECK_MSG(rc == RVFIT_ERR_CONFIG, "%s: rc %d", name, rc);
    CHECK_MSG(tu_contains(err.msg, path), "%s: no path in '%s'", name,
              err.msg);
    CHECK_MSG(tu_contains(err.msg, needle), "%s: '%s' lacks '%s'", name,
              err.msg, needle);
    rvfit_config_free(&c);
}

/* Paths in a file are relative to its directory (absolute ones and the
 * command line's are kept): the same file read from anywhere. */
static void relative_paths(void)
{
    rvfit_config c;
    rvfit_config_defaults(&c);
    rvfit_err err;
    const char *path = write_ini("cfg_paths",
                                 "[run]\nplugin_path = plug:/abs/p::x\n"
                                 "[templates]\npath = lib\n"
                                 "[output]\ndir = ../out\nstatus = /tmp/s.txt\n"
                                 "plot_dir = figs\n"
                                 "[instrument.desi]\nobjtypes = TGT\n");
    char dir[2048], want[4200];
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path),
             path);
    CHECK(rvfit_config_load(&c, path, &err) == RVFIT_OK);
    snprintf(want, sizeof want, "%s/lib", dir);
    CHECK_MSG(!strcmp(c.templates, want), "templates.path '%s', want '%s'",
              c.templates, want);
    snprintf(want, sizeof want, "%s/../out", dir);
    CHECK_MSG(!strcmp(c.output_dir, want), "output.dir '%s'", c.output_dir);
    CHECK_MSG(!strcmp(c.status, "/tmp/s.txt"), "status '%s'", c.status);
    snprintf(want, sizeof want, "%s/figs", dir);
    CHECK_MSG(!strcmp(c.plot_dir, want), "plot_dir '%s'", c.plot_dir);
    snprintf(want, sizeof want, "%s/plug:/abs/p::%s/x", dir, dir);
    CHECK_MSG(!strcmp(c.plugin_path, want), "plugin_path '%s', want '%s'",
              c.plugin_path, want);
    /* not a path: kept as written */
    rvfit_kv *kv;
    int n;
    CHECK(rvfit_config_section(&c, "instrument.desi", &kv, &n) == RVFIT_OK);
    CHECK(n == 1 && !strcmp(kv[0].value, "TGT"));
    free(kv);
    /* the command line: relative to the working directory */
    CHECK(rvfit_config_set(&c, "templates", "path", "lib2", "option -t", 0,
                           &err) == RVFIT_OK);
    CHECK(!strcmp(c.templates, "lib2"));
    rvfit_config_free(&c);
}

int main(void)
{
    rvfit_config c;
    rvfit_config_defaults(&c);
    CHECK(c.npoly == 0 && !strcmp(c.backend, "cpu") &&
          !strcmp(c.instrument, "desi") && c.vmin == -1000 &&
          c.vmax == 1000 && c.batch_size == 512 &&
          !strcmp(c.basis, "bspline"));
    /* npoly 0: each basis's own size; B-splines need 4 */
    rvfit_fit_opts fo;
    rvfit_err fe = {0};
    CHECK(rvfit_fit_opts_from_config(&c, &fo, &fe) == RVFIT_OK &&
          fo.model.basis == RVFIT_BASIS_BSPLINE && fo.model.npoly == 7);
    strcpy(c.basis, "gauss");
    CHECK(rvfit_fit_opts_from_config(&c, &fo, &fe) == RVFIT_OK &&
          fo.model.basis == RVFIT_BASIS_GAUSS && fo.model.npoly == 10);
    strcpy(c.basis, "bspline");
    c.npoly = 3;
    CHECK(rvfit_fit_opts_from_config(&c, &fo, &fe) == RVFIT_ERR_CONFIG &&
          tu_contains(fe.msg, "npoly >= 4"));
    strcpy(c.basis, "spline");
    CHECK(rvfit_fit_opts_from_config(&c, &fo, &fe) == RVFIT_ERR_CONFIG &&
          tu_contains(fe.msg, "use gauss, cheb or bspline"));
    rvfit_config_free(&c);

    /* A full file, then a command-line override wins. */
    rvfit_config_defaults(&c);
    rvfit_err err;
    const char *ok = write_ini("cfg_ok",
                               "; comment\n[fit]\nnpoly = 5\nvmin = -600\n"
                               "[backend]\nname = opencl, cpu\n"
                               "[backend.opencl]\ndevice = 1\n");
    CHECK(rvfit_config_load(&c, ok, &err) == RVFIT_OK);
    CHECK(c.npoly == 5 && c.vmin == -600);
    CHECK(!strcmp(c.backend, "opencl, cpu"));
    CHECK(rvfit_config_set(&c, "fit", "npoly", "7", "command line", 0,
                           &err) == RVFIT_OK);
    CHECK(c.npoly == 7);
    rvfit_kv *kv;
    int n;
    CHECK(rvfit_config_section(&c, "backend.opencl", &kv, &n) == RVFIT_OK);
    CHECK(n == 1 && !strcmp(kv[0].key, "device") &&
          !strcmp(kv[0].value, "1") && kv[0].line == 8);
    free(kv);
    static const char *const known[] = {"platform", "device", NULL};
    CHECK(rvfit_config_check_keys(&c, "backend.opencl", known, &err) ==
          RVFIT_OK);
    char dump[8192];
    rvfit_config_dump(&c, dump, sizeof dump);
    CHECK(tu_contains(dump, "npoly = 7") && tu_contains(dump, "[backend.opencl]"));
    rvfit_config_free(&c);

    expect_error("cfg_key", "[fit]\nnpoly = 4\n\nnpolly = 3\n",
                 ":4: unknown key 'npolly' in section [fit]");
    /* a section header is checked on its own line, keys or not */
    expect_error("cfg_section", "[fitting]\nnpoly = 4\n",
                 ":1: unknown section [fitting]");
    expect_error("cfg_section_bare", "[fit]\nnpoly = 4\n[fitting]\n",
                 ":3: unknown section [fitting]");
    expect_error("cfg_empty_section", "[fit]\nnpoly = 4\n[]\n",
                 ":3: unknown section []");
    expect_error("cfg_plugin_noname", "; x\n[backend.]\n",
                 ":2: section [backend.] names no plugin");
    expect_error("cfg_inst_noname", "[instrument.]\nfoo = 1\n",
                 ":1: section [instrument.] names no plugin");
    /* a key given twice names both lines (once: the last one won) */
    expect_error("cfg_dup", "[fit]\nnpoly = 4\nvmin = -5\nnpoly = 6\n",
                 ":4: key 'npoly' in section [fit] given twice (first on "
                 "line 2)");
    expect_error("cfg_dup_plugin",
                 "[backend.opencl]\ndevice = 1\n[fit]\nnpoly = 4\n"
                 "[backend.opencl]\ndevice = 2\n",
                 ":6: key 'device' in section [backend.opencl] given twice "
                 "(first on line 2)");
    expect_error("cfg_value", "[fit]\nnpoly = ten\n", ":2: [fit] npoly");
    expect_error("cfg_range", "[run]\nthreads = -3\n", ":2:");
    expect_error("cfg_bool", "[output]\noverwrite = maybe\n", "boolean");
    expect_error("cfg_syntax", "[fit]\nnpoly 4\n", ":2: syntax error");

    /* A 250-character value in a valid line: a clear error at its own
     * line (once: "syntax error" at a line past the end of the file). */
    char longline[600];
    snprintf(longline, sizeof longline, "[fit]\nnpoly = 4\n[output]\n"
             "status = /%0249d\n", 0);
    expect_error("cfg_long", longline, ":4: line too long (at most 197 "
                 "characters)");
    /* the longest line that fits still works */
    rvfit_config_defaults(&c);
    snprintf(longline, sizeof longline, "[output]\nstatus = /%0187d\n",
             7);
    const char *fits = write_ini("cfg_long_ok", longline);
    CHECK_MSG(rvfit_config_load(&c, fits, &err) == RVFIT_OK, "%s", err.msg);
    CHECK(strlen(c.status) == 188 && c.status[187] == '7');
    /* the command line may still override a key of the file */
    CHECK(rvfit_config_set(&c, "output", "status", "x", "command line", 0,
                           &err) == RVFIT_OK);
    rvfit_config_free(&c);

    /* Missing file: an I/O error naming it. */
    rvfit_config_defaults(&c);
    rvfit_err_clear(&err);
    CHECK(rvfit_config_load(&c, "/nonexistent/x.ini", &err) == RVFIT_ERR_IO);
    CHECK(tu_contains(err.msg, "/nonexistent/x.ini"));
    rvfit_config_free(&c);
    relative_paths();
    return tu_finish("test_config");
}
