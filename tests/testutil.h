/* tests/testutil.h — tiny assertion helpers shared by the C tests.
 * A test binary returns 0 when all checks pass, 1 on any failure and 77 to
 * tell CTest it skipped (with the reason printed). */
#ifndef RVFIT_TESTUTIL_H
#define RVFIT_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rvfit/host.h"
#include "rvfit/instrument_epochs.h"
#include "rvfit/instrument_mock.h"
#include "rvfit/library.h"

extern int tu_failures;
extern int tu_checks;

#define CHECK(cond)                                                        \
    do {                                                                   \
        tu_checks++;                                                       \
        if (!(cond)) {                                                     \
            tu_failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,        \
                    __LINE__, #cond);                                      \
        }                                                                  \
    } while (0)

#define CHECK_MSG(cond, ...)                                               \
    do {                                                                   \
        tu_checks++;                                                       \
        if (!(cond)) {                                                     \
            tu_failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__,        \
                    __LINE__, #cond);                                      \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

/* |a-b| <= tol */
#define CHECK_NEAR(a, b, tol)                                              \
    CHECK_MSG(fabs((double)(a) - (double)(b)) <= (tol),                   \
              "%.10g vs %.10g (tol %.3g)", (double)(a), (double)(b),       \
              (double)(tol))

/* Print "N passed, N failed" and return the exit code for main(). */
int tu_finish(const char *name);
/* Skip the whole test with a visible reason (exit code 77). */
void tu_skip(const char *fmt, ...);
/* $RVFIT_SHARED_DATA (the real files in ../shared/data); skips the test
 * (exit 77) with the reason when the directory is not there. */
const char *tu_shared_data(void);
/* Skip (exit 77, with the reason) unless this build configuration built
 * plugin target TARGET (e.g. "rvfit_backend_opencl"): listed in
 * $RVFIT_PLUGINS_BUILT or $RVFIT_TEST_PLUGINS (test doubles such as
 * "rvfit_backend_cuda_emu"), set by tests/CMakeLists.txt.  A plugin that
 * was built must then load and run: failing to is the test's failure, not
 * a skip. */
void tu_need_plugin(const char *target);
/* Environment variable or abort with a message. */
const char *tu_env(const char *name);
/* A fresh empty directory under $RVFIT_TEST_TMP/<name>; returns a static
 * buffer. */
const char *tu_tmpdir(const char *name);
/* A host that logs to stderr at the given level. */
rvfit_host tu_host(int level);
/* The operation table of plugin FILE in $RVFIT_PLUGIN_PATH, loaded with
 * dlopen + the entry symbol (the core loader is tested separately);
 * exits with a message when it cannot be loaded. */
const void *tu_plugin_ops(const char *file);
/* The 'mock' extension of instrument NAME in $RVFIT_PLUGIN_PATH, found
 * through the core loader (rvfit_instrument_mock), as `rvfit mock` finds
 * it; the plugin stays loaded.  Exits with the loader's message when it
 * cannot be loaded or has no such extension. */
const rvfit_instrument_mock_ops *tu_mock_ops(const char *name);
/* The 'epochs' extension of instrument NAME, found the same way. */
const rvfit_instrument_epochs_ops *tu_epochs_ops(const char *name);
/* Does substring `needle` occur in `hay`? */
int tu_contains(const char *hay, const char *needle);
/* Number of entries of dir other than . and .. (hidden ones included)
 * whose names contain s ("" counts them all);
 * 0 when dir cannot be read. */
int tu_count_files(const char *dir, const char *s);
/* Index of the column called name in schema s (exact match); -1 if
 * absent. */
int tu_find_col(const rvfit_table_schema *s, const char *name);
/* Row 0 of table t of instrument handle h (schema s) into r, allocated
 * here: 0 when both the allocation and ops->read_rows succeed (CHECKed);
 * free r with rvfit_rows_free(r, s) in either case. */
int tu_read_row0(const rvfit_instrument_ops *ops, void *h, int t,
                 const rvfit_table_schema *s, rvfit_table_rows *r);
/* Value of numeric column `name` of row 0 of r (schema s) as a double;
 * NaN when the column is absent, not numeric or r is empty. */
double tu_cell(const rvfit_table_schema *s, const rvfit_table_rows *r,
               const char *name);
/* Run "$RVFIT_BIN ARGS" (ARGS printf-style, quoted by the caller) with
 * tu_run, a failure counted as a CHECK failure naming the command and its
 * output.  log (may be NULL: output discarded) is reused across commands:
 * its previous text is freed and it holds the last command's output. */
int tu_rvfit(char **log, const char *fmt, ...) RVFIT_PRINTF(2, 3);
/* N of the last "... evaluated P points in N calls" backend line of a
 * log; -1 when there is none. */
long tu_backend_calls(const char *log);

/* One arm "B" of npix pixels (flux: [nmodel][npix], caller-owned) at
 * 5000 A, 1e-4 in ln lambda, sigma0 0.5 A, vmax 100 km/s, instrument desi:
 * the arm of the hand-made libraries of the interpolator tests. */
void tu_library_one_arm(rvfit_library *lib, size_t npix, float *flux);

#endif

/* Read a whole numeric column of table `ext` as doubles (malloc'ed, *n
 * rows); NULL on failure with the reason on stderr. */
double *tu_read_col(const char *path, const char *ext, const char *col,
                    long *n);
/* Read a whole string column of table `ext`: *n strings, string r at
 * r * width (NUL-terminated; malloc'ed); NULL on failure (also when the
 * column is `width` characters or wider) with the reason on stderr. */
char *tu_read_strcol(const char *path, const char *ext, const char *col,
                     size_t width, long *n);
/* Run a shell command, capturing stdout+stderr into a malloc'ed string
 * (*output: NULL or an earlier output, which is freed first); returns
 * the exit status (or -1). */
int tu_run(const char *cmd, char **output);
/* Integer keyword of HDU number hdu (1 = primary); -1 if absent. */
long long tu_read_key(const char *path, int hdu, const char *key);
/* Robust standard deviation (IQR/1.349) and median of x[0..n-1] (finite
 * values only). */
double tu_rstd(const double *x, long n);
double tu_median(const double *x, long n);
/* Compare every column of HDU `ext` of two FITS tables value by value
 * (floating point bitwise, NaN equal to NaN; integers exactly; strings);
 * returns the number of differing values (0: identical), -1 when a file
 * cannot be read or the layouts differ; the first difference is
 * described in why. */
long tu_table_diff(const char *a, const char *b, const char *ext, char *why,
                   size_t nwhy);
/* Compare the pixels of image HDU `ext` of two FITS files bitwise (as
 * doubles, NaN equal to NaN): the number of differing pixels, -1 when
 * unreadable or of different shape; the first difference in why. */
long tu_image_diff(const char *a, const char *b, const char *ext, char *why,
                   size_t nwhy);
/* Every HDU of two rvtab (RVTAB, FIBERMAP, SCORES when present) and rvmod
 * (tables and images) files compared with the functions above; 0 when
 * identical, else the number of differences (why: the first). */
long tu_outputs_diff(const char *dir_a, const char *dir_b, const char *stem,
                     char *why, size_t nwhy);
/* Overwrite the value of header card `key` of HDU hdu (1 = primary) of a
 * FITS file in place, bytes only (CFITSIO would recompute sizes on close):
 * the card becomes "KEY     = value" padded to 80 characters.  For
 * corrupt-header tests; 0 when done, -1 when the card is not found. */
int tu_patch_card(const char *path, int hdu, const char *key,
                  const char *value);
/* The same with the whole card given as text (padded to 80): cards
 * that break the "KEY     = " layout. */
int tu_patch_card_text(const char *path, int hdu, const char *key,
                       const char *text);
