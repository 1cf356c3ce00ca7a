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
 * at most), up to 2^63 ns: 1920 counts, 15 KiB, whatever the calls.
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

void sps__hist_add(sps__hist_t *h, uint64_t ns) {
    h->count[bucket_of(ns)]++;
    h->n++;
}

double sps__hist_quantile(const sps__hist_t *h, double q) {
    if (!h->n) return NAN;
    double want = q * (double)h->n, seen = 0;
    for (size_t b = 0; b < SPS__HIST_BUCKETS; b++) {
        if (!h->count[b]) continue;
        double c = (double)h->count[b];
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
    for (size_t k = 0; k < SPS__HIST_BUCKETS; k++) {
        double ca = (double)a->count[k], cb = (double)b->count[k];
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
