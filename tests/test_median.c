/* test_median.c — rvfit_median (selection, not a sort) against the
 * middle of a qsort-ed copy, on random arrays of odd and even lengths,
 * with many ties, already sorted and reversed inputs, and closed-form
 * cases; and the partition contract the selection leaves behind. */
#include <stdlib.h>
#include <string.h>

#include "rvfit/numeric.h"
#include "testutil.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median from a sorted copy: the truth the selection must match
 * exactly (both pick the same order statistics). */
static double sorted_median(const double *x, size_t n)
{
    double *s = malloc(n * sizeof *s);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

static void fill(double *x, size_t n, int kind, rvfit_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        double u = rvfit_rng_uniform(r);
        x[i] = kind == 0   ? rvfit_rng_normal(r)
               : kind == 1 ? (double)(int)(u * 4.0) /* many ties */
               : kind == 2 ? (double)i               /* sorted */
                           : (double)(n - i);        /* reversed */
    }
}

static void test_random(void)
{
    rvfit_rng r;
    rvfit_rng_seed(&r, 7, 1);
    size_t lens[] = {1, 2, 3, 4, 5, 8, 31, 64, 1000, 1001, 4096, 7781};
    for (int kind = 0; kind < 4; kind++)
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
            size_t n = lens[l];
            double *x = malloc(n * sizeof *x);
            fill(x, n, kind, &r);
            double want = sorted_median(x, n);
            double got = rvfit_median(x, n);
            CHECK_MSG(got == want, "kind %d n %zu: %.17g vs %.17g", kind, n,
                   got, want);
            /* x is a permutation around its upper middle element */
            size_t h = n / 2;
            for (size_t i = 0; i < n; i++)
                CHECK_MSG(i < h ? x[i] <= x[h] : x[i] >= x[h],
                       "kind %d n %zu: x[%zu] on the wrong side", kind, n, i);
            free(x);
        }
}

static void test_known(void)
{
    double a[] = {3, 1, 2};
    CHECK(rvfit_median(a, 3) == 2.0);
    double b[] = {4, 1, 3, 2};
    CHECK(rvfit_median(b, 4) == 2.5);
    double c[] = {5, 5, 5, 5, 5, 5};
    CHECK(rvfit_median(c, 6) == 5.0);
    double d[] = {-1e300, 1e300};
    CHECK(rvfit_median(d, 2) == 0.0);
    CHECK(isnan(rvfit_median(a, 0)));
}

int main(void)
{
    test_random();
    test_known();
    return tu_finish("test_median");
}
