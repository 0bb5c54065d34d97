/* lamost_ids.c — the TARGETID of an LRS file: its OBSID when that is a
 * positive integer, else an id derived from the fibre's identity.
 *
 * Files of early releases carry no usable OBSID: a DR3 file had
 * OBSID = -28762, a DR2 file none at all (and FIBERID as a string).  What
 * identifies a LAMOST spectrum is the observation of one fibre: the local
 * MJD of the night (LMJD), the plan (PLANID, a string), the spectrograph
 * (SPID) and the fibre (FIBERID) — what the file name spec-LMJD-
 * PLANID_spSS-FFF encodes.  The derived id packs them (docs/lamost.md):
 *
 *   TARGETID = -(2^62 + LMJD*2^45 + SPID*2^40 + FIBERID*2^32
 *                + FNV-1a-32(PLANID))
 *
 * with LMJD < 2^17, SPID < 32, FIBERID < 256.  It is deterministic (the
 * header alone, not the file name), at most -2^62 so it can meet neither
 * a survey OBSID (positive) nor any small negative value a file may hold,
 * and two spectra get the same id only when two plans of the same night
 * hash alike (a chance of 45 in 2^32 per night of 10 plans).  LMJD, SPID
 * and FIBERID read back from it.
 *
 * A negative integer OBSID is not kept as the TARGETID: LAMOST's
 * observation ids are positive, so such a value cannot be matched with
 * the survey's catalogues and nothing says it is unique.  It is kept in
 * the LAMOST table (column OBSID), with the keywords the id came from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lamost_internal.h"

#define LAMOST_TID_TAG (INT64_C(1) << 62)
#define LAMOST_LMJD_BITS 17
#define LAMOST_SPID_BITS 5
#define LAMOST_FIBER_BITS 8

/* FNV-1a, 32 bits, over the bytes of s. */
static uint32_t lamost_fnv1a32(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* A decimal integer, blanks around it allowed: 1 and *v, or 0. */
static int lamost_parse_int(const char *s, long long *v)
{
    while (*s == ' ')
        s++;
    if (!*s)
        return 0;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s)
        return 0;
    while (*end == ' ')
        end++;
    if (*end)
        return 0;
    *v = x;
    return 1;
}

/* An integer keyword, written as an integer or as a string holding one
 * (the DR2 file's FIBERID = '126'): 1 and *v; 0 when absent; -1 when
 * present but not an integer. */
static int lamost_key_int(fitsfile *fp, const char *key, long long *v)
{
    char raw[FLEN_VALUE] = "", s[FLEN_VALUE] = "";
    int st = 0;
    if (fits_read_keyword(fp, key, raw, NULL, &st)) {
        fits_clear_errmsg();
        return 0;
    }
    if (raw[0] == '\'') {
        if (fits_read_key(fp, TSTRING, key, s, NULL, &st)) {
            fits_clear_errmsg();
            return -1;
        }
    } else {
        memcpy(s, raw, sizeof s);
    }
    return lamost_parse_int(s, v) ? 1 : -1;
}

/* An integer keyword in [0, lim), else -1. */
static int32_t lamost_key_small(fitsfile *fp, const char *key, int32_t lim)
{
    long long v = 0;
    return lamost_key_int(fp, key, &v) == 1 && v >= 0 && v < lim
               ? (int32_t)v : -1;
}

/* Why the OBSID is not the TARGETID, into m->why; 0 when it is. */
static int lamost_obsid_bad(fitsfile *fp, lamost_meta *m)
{
    long long v = 0;
    int k = lamost_key_int(fp, "OBSID", &v);
    m->obsid = k == 1 ? (int64_t)v : 0;
    if (k == 1 && v > 0)
        return 0;
    if (k == 0)
        snprintf(m->why, sizeof m->why, "no OBSID keyword");
    else if (k < 0)
        snprintf(m->why, sizeof m->why, "OBSID is not an integer");
    else
        snprintf(m->why, sizeof m->why, "OBSID %lld is not positive", v);
    return 1;
}

/* The derived TARGETID, or an error naming the keywords it lacks. */
static int lamost_derive(const char *path, lamost_meta *m, rvfit_err *err)
{
    char miss[160] = "";
    size_t n = 0;
    const struct { const char *key, *range; int bad; } k[4] = {
        {"LMJD", " (an integer 0-131071)", m->lmjd < 0},
        {"PLANID", " (a string)", !m->planid[0]},
        {"SPID", " (an integer 0-31)", m->spid < 0},
        {"FIBERID", " (an integer 0-255)", m->fiberid < 0}};
    for (int i = 0; i < 4; i++)
        if (k[i].bad && n < sizeof miss)
            n += (size_t)snprintf(miss + n, sizeof miss - n, "%s%s%s",
                                  n ? ", " : "", k[i].key, k[i].range);
    if (n)
        return rvfit_err_set(err, RVFIT_ERR_FORMAT, "%s: HDU PRIMARY: %s, "
                             "and no TARGETID can be derived without %s",
                             path, m->why, miss);
    uint64_t u = (uint64_t)LAMOST_TID_TAG |
                 (uint64_t)m->lmjd << (64 - 2 - LAMOST_LMJD_BITS) |
                 (uint64_t)m->spid << (32 + LAMOST_FIBER_BITS) |
                 (uint64_t)m->fiberid << 32 | lamost_fnv1a32(m->planid);
    m->targetid = -(int64_t)u;
    m->derived = 1;
    size_t w = strlen(m->why);
    snprintf(m->why + w, sizeof m->why - w, ": TARGETID %lld derived from "
             "LMJD %d, PLANID '%s', SPID %d, FIBERID %d (docs/lamost.md)",
             (long long)m->targetid, (int)m->lmjd, m->planid, (int)m->spid,
             (int)m->fiberid);
    return RVFIT_OK;
}

int lamost_read_ids(fitsfile *fp, const char *path, lamost_meta *m,
                    rvfit_err *err)
{
    m->lmjd = lamost_key_small(fp, "LMJD", INT32_C(1) << LAMOST_LMJD_BITS);
    m->spid = lamost_key_small(fp, "SPID", INT32_C(1) << LAMOST_SPID_BITS);
    m->fiberid = lamost_key_small(fp, "FIBERID",
                                  INT32_C(1) << LAMOST_FIBER_BITS);
    lamost_key_str(fp, "PLANID", m->planid, sizeof m->planid);
    lamost_key_str(fp, "DESIG", m->desig, sizeof m->desig);
    m->derived = 0;
    m->why[0] = '\0';
    if (!lamost_obsid_bad(fp, m)) {
        m->targetid = m->obsid;
        return RVFIT_OK;
    }
    return lamost_derive(path, m, err);
}
