/* Random numbers and error text for rvfit-indep (see indep.h). */
#include "indep.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

int ind_fail(ind_err *e, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ind_rng_seed(ind_rng *r, uint64_t a, uint64_t b, uint64_t c)
{
    /* Mix the three keys through splitmix so nearby seeds give unrelated
     * streams, then fill the xoshiro state from the mixed value. */
    uint64_t x = a;
    uint64_t h = splitmix(&x);
    x = h ^ (b * 0xd1b54a32d192ed03ULL);
    h = splitmix(&x);
    x = h ^ (c * 0x8cb92ba72f3d8dd7ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&x);
}

static uint64_t rotl(uint64_t v, int k) { return (v << k) | (v >> (64 - k)); }

static uint64_t next(ind_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double ind_rng_uniform(ind_rng *r)
{
    return (double)(next(r) >> 11) * 0x1.0p-53;
}

double ind_rng_normal(ind_rng *r)
{
    /* Box-Muller without a cached spare: every call consumes exactly two
     * uniforms, which keeps streams easy to reason about. */
    double u1 = 1.0 - ind_rng_uniform(r), u2 = ind_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * IND_PI * u2);
}

unsigned ind_rng_poisson(ind_rng *r, double mean)
{
    /* Knuth's product method: only small means are used here. */
    double l = exp(-mean), p = 1.0;
    unsigned k = 0;
    do {
        k++;
        p *= ind_rng_uniform(r);
    } while (p > l && k < 1000);
    return k - 1;
}
