/* fits_headers.c — a byte-level look at every FITS header of a file
 * before CFITSIO parses it.  CFITSIO 4.2 copies an unquoted TTYPEn value
 * that fills all 70 value columns into a 70-byte field with strcpy: with
 * _FORTIFY_SOURCE the process aborts ("buffer overflow detected"), so a
 * corrupt file would kill a run instead of failing with a message; the
 * same happens when an integer keyword holds an unquoted word of 29 or
 * more characters (ffc2j).  The scan also refuses header bytes outside
 * printable ASCII, which the FITS standard forbids.  Anything else odd (no END, sizes past the end of the
 * file) is left to CFITSIO and the readers' own checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "rvfit/fits.h"

#define FH_BLOCK 2880
#define FH_CARD 80
#define FH_MAXAX 999
#define FH_MAXWORD 28 /* longest unquoted value word */

/* What a header says about the size of its data. */
typedef struct fh_hdr {
    long long bitpix, naxis, pcount, gcount;
    long long ax[FH_MAXAX + 1];
    int groups;
    unsigned seen; /* bits: the first BITPIX, NAXIS, PCOUNT, GCOUNT count */
} fh_hdr;

/* The first occurrence of a size keyword counts (CFITSIO reads them at
 * their fixed places, where the first one is in a valid header). */
static void fh_set(fh_hdr *h, unsigned bit, long long *dst, long long v)
{
    if (!(h->seen & bit))
        *dst = v;
    h->seen |= bit;
}

static int fh_int(const char *card, long long *v)
{
    char buf[FH_CARD - 9];
    memcpy(buf, card + 10, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    return sscanf(buf, "%lld", v) == 1;
}

/* Note one card's sizes; 0 when it is END. */
static int fh_note(fh_hdr *h, const char *c)
{
    long long v = 0;
    int n = 0;
    if (!memcmp(c, "END     ", 8))
        return 0;
    if (c[8] != '=' || c[9] != ' ')
        return 1;
    if (!memcmp(c, "BITPIX  ", 8) && fh_int(c, &v))
        fh_set(h, 1u, &h->bitpix, v);
    else if (!memcmp(c, "NAXIS   ", 8) && fh_int(c, &v))
        fh_set(h, 2u, &h->naxis, v);
    else if (!memcmp(c, "PCOUNT  ", 8) && fh_int(c, &v))
        fh_set(h, 4u, &h->pcount, v);
    else if (!memcmp(c, "GCOUNT  ", 8) && fh_int(c, &v))
        fh_set(h, 8u, &h->gcount, v);
    else if (!memcmp(c, "GROUPS  ", 8))
        h->groups = memchr(c + 10, 'T', FH_CARD - 10) != NULL;
    else if (!memcmp(c, "NAXIS", 5) && sscanf(c + 5, "%3d", &n) == 1 &&
             n >= 1 && n <= FH_MAXAX && fh_int(c, &v))
        h->ax[n] = v;
    return 1;
}

/* Data bytes (padded to blocks) of header h; -1 when not computable. */
static long long fh_data(const fh_hdr *h)
{
    if (h->naxis < 0 || h->naxis > FH_MAXAX || h->pcount < 0 ||
        h->gcount < 0 || (h->bitpix != 8 && h->bitpix != 16 &&
                          h->bitpix != 32 && h->bitpix != 64 &&
                          h->bitpix != -32 && h->bitpix != -64))
        return -1;
    if (h->naxis == 0)
        return 0;
    long long prod = 1, lim = 1LL << 50;
    for (long long i = 1; i <= h->naxis; i++) {
        if (i == 1 && h->groups && h->ax[1] == 0)
            continue; /* random groups: NAXIS1 = 0 */
        if (h->ax[i] < 0 || (h->ax[i] && prod > lim / h->ax[i]))
            return -1;
        prod *= h->ax[i];
    }
    long long bytes = (h->bitpix < 0 ? -h->bitpix : h->bitpix) / 8;
    if (prod + h->pcount > lim || h->gcount > lim / (prod + h->pcount + 1))
        return -1;
    bytes *= h->gcount * (prod + h->pcount);
    return (bytes + FH_BLOCK - 1) / FH_BLOCK * FH_BLOCK;
}

static int fh_check_card(const char *c, const char *path, int hdu, int card,
                         rvfit_err *err)
{
    for (int i = 0; i < FH_CARD; i++)
        if (c[i] < 32 || c[i] > 126)
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %d: header "
                                 "card %d: byte 0x%02x in column %d is not "
                                 "ASCII text", path, hdu, card,
                                 (unsigned char)c[i], i + 1);
    int kl = 8; /* keyword without its padding, for messages */
    while (kl > 1 && c[kl - 1] == ' ')
        kl--;
    if (c[8] == '=') {
        /* CFITSIO 4.2 (ffc2j) overflows its message buffer, and aborts,
         * when an integer keyword holds an unquoted word of 29 or more
         * characters; no number needs that many (17 significant digits
         * and an exponent take 24).  CFITSIO takes a value after '=' in
         * column 9 even without the space the standard puts in column 10
         * (a library fuzzer find), so the word may start there. */
        const char *v = c + 9, *end = c + FH_CARD;
        while (v < end && *v == ' ')
            v++;
        /* a complex value "(re, im)" runs to its ')' for CFITSIO, '/'
         * and blanks included; no key rvfit reads is complex */
        int len = 0, cplx = v < end && *v == '(';
        while (v + len < end &&
               (cplx ? len == 0 || v[len - 1] != ')'
                     : v[len] != ' ' && v[len] != '/'))
            len++;
        if (len > FH_MAXWORD && *v != '\'')
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %d: header "
                                 "card %d (%.*s): a value of %d characters "
                                 "is not a number (at most %d)", path, hdu,
                                 card, kl, c, len, FH_MAXWORD);
    }
    if (!memcmp(c, "TTYPE", 5) && c[8] == '=') {
        const char *v = c + 9;
        while (v < c + FH_CARD && *v == ' ')
            v++;
        if (v < c + FH_CARD && *v != '\'')
            return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU %d: %.*s "
                                 "is not a quoted string", path, hdu, kl, c);
    }
    return RVFIT_OK;
}

int rvfit_fits_check_headers(const char *path, rvfit_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return RVFIT_OK; /* the caller's open says why */
    char blk[FH_BLOCK];
    fh_hdr *h = malloc(sizeof *h);
    int rc = RVFIT_OK, more = h != NULL, lost = 0;
    for (int hdu = 1; more && !rc; hdu++) {
        memset(h, 0, sizeof *h);
        h->gcount = 1;
        int in_header = 1, card = 0;
        while (in_header && !rc) {
            size_t n = fread(blk, 1, FH_BLOCK, f);
            if (n == 0) {
                more = 0; /* the end */
                break;
            }
            /* CFITSIO parses a header cut short by the end of the file
             * too (the fuzzer's ffgtbp abort of 2026-11-28), so its cards
             * are checked; blanks stand in for the missing bytes */
            if (n < FH_BLOCK) {
                memset(blk + n, ' ', FH_BLOCK - n);
                more = 0;
            }
            if (card == 0 && memcmp(blk, hdu == 1 ? "SIMPLE  =" :
                                    "XTENSION=", 9) != 0) {
                if (lost) /* sizes unknown: look at every block */
                    continue;
                more = 0; /* not FITS, or not ours to judge */
                break;
            }
            for (int k = 0; k < FH_BLOCK / FH_CARD && in_header && !rc; k++) {
                const char *c = blk + k * FH_CARD;
                rc = fh_check_card(c, path, hdu, ++card, err);
                in_header = fh_note(h, c);
            }
        }
        /* a header whose sizes make no sense: CFITSIO may still find
         * the next one, so every block that starts like one is checked */
        long long skip = more && !rc ? fh_data(h) : 0;
        lost |= skip < 0;
        if (skip > 0 && !lost && fseeko(f, (off_t)skip, SEEK_CUR) != 0)
            more = 0;
    }
    free(h);
    fclose(f);
    return rc;
}
