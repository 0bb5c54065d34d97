/* numeric.c — random streams and medians shared by the plugins. */
#include <math.h>
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rvfit_median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}
