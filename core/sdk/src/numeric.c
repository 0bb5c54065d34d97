/* numeric.c — random streams and medians shared by the plugins. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "rvfit/numeric.h"

uint64_t rvfit_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double rvfit_splitmix_uniform(uint64_t *x)
{
    return (double)(rvfit_splitmix64(x) >> 11) * 0x1.0p-53;
}

void rvfit_rng_seed(rvfit_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    rvfit_splitmix64(&x);
    for (int i = 0; i < 4; i++)
        r->s[i] = rvfit_splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

double rvfit_rng_uniform(rvfit_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return (double)(out >> 11) * 0x1.0p-53;
}

double rvfit_rng_normal(rvfit_rng *r)
{
    double u = 1.0 - rvfit_rng_uniform(r), v = rvfit_rng_uniform(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586477 * v);
}

static void swap_d(double *x, ptrdiff_t i, ptrdiff_t j)
{
    double t = x[i];
    x[i] = x[j];
    x[j] = t;
}

/* The k-th smallest of x[0..n-1] (k from 0), x reordered so that
 * x[0..k-1] <= x[k] <= x[k+1..]: Hoare's selection with a median-of-three
 * pivot, O(n) expected.  A full sort made the medians of the batch
 * preparation the largest part of reading a DESI file (docs/benchmarks.md,
 * "GPU"). */
static double select_kth(double *x, ptrdiff_t n, ptrdiff_t k)
{
    ptrdiff_t lo = 0, hi = n - 1;
    while (hi > lo) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (x[mid] < x[lo])
            swap_d(x, mid, lo);
        if (x[hi] < x[lo])
            swap_d(x, hi, lo);
        if (x[hi] < x[mid])
            swap_d(x, hi, mid);
        double p = x[mid];
        ptrdiff_t i = lo, j = hi;
        while (i <= j) { /* x[lo] <= p <= x[hi] bound both scans */
            while (x[i] < p)
                i++;
            while (x[j] > p)
                j--;
            if (i <= j)
                swap_d(x, i++, j--);
        }
        /* now x[lo..j] <= p, x[i..hi] >= p, and x[j+1..i-1] == p */
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return x[k];
    }
    return x[k];
}

double rvfit_median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    ptrdiff_t m = (ptrdiff_t)n, h = m / 2;
    double hi = select_kth(x, m, h);
    if (m % 2)
        return hi;
    /* x[0..h-1] <= hi now: the lower middle is their maximum */
    double lo = x[0];
    for (ptrdiff_t i = 1; i < h; i++)
        lo = x[i] > lo ? x[i] : lo;
    return 0.5 * (lo + hi);
}
