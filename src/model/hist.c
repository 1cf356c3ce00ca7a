/*
 * hist.c -- a duration histogram per region (model.h: sps__hist_t), for
 * comparisons that must not be swayed by a few outliers (diff, check).
 *
 * Why: per-call durations are heavy-tailed (an interrupt, a page fault or
 * a preemption makes one call 100x longer), and such outliers come in
 * bursts, so the mean of a run moves by far more than its standard error
 * says: two runs of one workload differ "significantly" by Welch's t on
 * the means (LULESH's TimeIncrement read 165 -> 129 ns, t = -4.5, on two
 * identical runs).  The median and a rank test (Mann-Whitney) do not care
 * how long an outlier is, only that it is one.
 *
 * Buckets: exact below 32 ns, then 32 per octave (each bucket 2.2% wide
 * at most), up to 2^64 ns: 1920 in all, of which a histogram keeps the
 * range it has seen (grown by doubling towards the new bucket).
 */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BITS 5
#define SUB (1u << SUB_BITS) /* buckets per octave, and exact ones below */

/* The bucket of v ns. */
static size_t bucket_of(uint64_t v) {
    if (v < SUB) return (size_t)v;
    unsigned o = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
    unsigned sub = (unsigned)(v >> (o - SUB_BITS)) & (SUB - 1);
    return SUB + (size_t)(o - SUB_BITS) * SUB + sub;
}

/* The lowest value of bucket b and its width (ns). */
static void bucket_range(size_t b, double *lo, double *width) {
    if (b < SUB) {
        *lo = (double)b;
        *width = 1;
        return;
    }
    unsigned o = (unsigned)((b - SUB) / SUB) + SUB_BITS, sub = (unsigned)((b - SUB) % SUB);
    double unit = ldexp(1.0, (int)o - SUB_BITS);
    *lo = ldexp(1.0, (int)o) + sub * unit;
    *width = unit;
}

/* Grows h's range to hold bucket b.  0 or SPS_ENOMEM. */
static int hist_reach(sps__hist_t *h, uint32_t b) {
    uint32_t lo = h->len ? h->lo : b, hi = h->len ? h->lo + h->len : b + 1;
    if (h->len && b >= lo && b < hi) return 0;
    uint32_t want = (b < lo ? hi - b : b + 1 - lo), len = h->len ? h->len : 8;
    while (len < want) len *= 2;
    if (len > SPS__HIST_BUCKETS) len = SPS__HIST_BUCKETS;
    uint32_t nlo = b < lo ? (hi > len ? hi - len : 0) : lo;
    if (nlo + len > SPS__HIST_BUCKETS) nlo = SPS__HIST_BUCKETS - len;
    uint64_t *v = calloc(len, sizeof *v);
    if (!v) return SPS_ENOMEM;
    if (h->len) memcpy(v + (h->lo - nlo), h->count, h->len * sizeof *v);
    free(h->count);
    h->count = v;
    h->lo = nlo;
    h->len = len;
    return 0;
}

int sps__hist_add(sps__hist_t *h, uint64_t ns) {
    uint32_t b = (uint32_t)bucket_of(ns);
    if (hist_reach(h, b)) return SPS_ENOMEM;
    h->count[b - h->lo]++;
    h->n++;
    return 0;
}

int sps__hist_merge(sps__hist_t *into, const sps__hist_t *from) {
    if (!from->n) return 0;
    uint32_t first = from->lo, last = from->lo + from->len - 1;
    if (hist_reach(into, first) || hist_reach(into, last)) return SPS_ENOMEM;
    for (uint32_t k = 0; k < from->len; k++) into->count[from->lo + k - into->lo] += from->count[k];
    into->n += from->n;
    return 0;
}

void sps__hist_free(sps__hist_t *h) {
    free(h->count);
    memset(h, 0, sizeof *h);
}

/* The count of bucket b (0 outside h's range). */
static uint64_t count_at(const sps__hist_t *h, size_t b) {
    return b >= h->lo && b < (size_t)h->lo + h->len ? h->count[b - h->lo] : 0;
}

double sps__hist_quantile(const sps__hist_t *h, double q) {
    if (!h->n) return NAN;
    double want = q * (double)h->n, seen = 0;
    for (size_t b = h->lo; b < (size_t)h->lo + h->len; b++) {
        if (!count_at(h, b)) continue;
        double c = (double)count_at(h, b);
        if (seen + c >= want) { /* interpolated within a wide bucket */
            double lo, w;
            bucket_range(b, &lo, &w);
            return b < SUB ? lo : lo + w * (want - seen) / c;
        }
        seen += c;
    }
    return NAN;
}

double sps__hist_mann_whitney_z(const sps__hist_t *a, const sps__hist_t *b) {
    double na = (double)a->n, nb = (double)b->n, N = na + nb;
    if (!a->n || !b->n) return NAN;
    double u = 0, a_below = 0, ties = 0; /* u: pairs where b > a, ties half */
    size_t from = a->lo < b->lo ? a->lo : b->lo;
    size_t to = (size_t)a->lo + a->len > (size_t)b->lo + b->len ? (size_t)a->lo + a->len
                                                                  : (size_t)b->lo + b->len;
    for (size_t k = from; k < to; k++) {
        double ca = (double)count_at(a, k), cb = (double)count_at(b, k);
        if (ca == 0 && cb == 0) continue;
        u += cb * (a_below + ca / 2);
        a_below += ca;
        double t = ca + cb;
        ties += t * t * t - t;
    }
    double mean = na * nb / 2;
    double var = na * nb / 12 * ((N + 1) - ties / (N * (N - 1)));
    if (!(var > 0)) return u > mean ? INFINITY : u < mean ? -INFINITY : 0;
    return (u - mean) / sqrt(var);
}
