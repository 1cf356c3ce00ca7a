/* clock.c -- raw timestamps and their mapping to CLOCK_MONOTONIC ns.
 *
 * The hot path stores raw counter values ("ticks"): rdtsc where the TSC is
 * invariant (about 12 ns on these VMs, against 29 ns for clock_gettime),
 * else CLOCK_MONOTONIC ns.  Ticks become ns only when a recording is read
 * back, by interpolating between anchors (tick, ns) pairs, so the cost of
 * conversion is paid once per event at finalize, never while recording, and
 * slow drift between the two clocks (NTP slewing CLOCK_MONOTONIC) is
 * followed piecewise rather than extrapolated over the whole run. */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#  include <cpuid.h>
#endif

int sps__use_tsc = 0;
static double g_init_scale = 1.0; /* ns per tick measured at init */

uint64_t sps__mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* True when CPUID says the TSC runs at a constant rate in all C/P states. */
static int tsc_is_invariant(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
        __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)))
        return 1;
#endif
    return 0;
}

/* A (ticks, ns) pair: the ns read bracketed by two tick reads, best of 7
 * tries by bracket width, tick taken at the bracket's middle. */
sps__anchor_t sps__anchor_now(void) {
    sps__anchor_t best = {0, 0};
    uint64_t best_w = UINT64_MAX;
    for (int i = 0; i < 7; i++) {
        uint64_t t0 = sps__ticks();
        int64_t ns = (int64_t)sps__mono_ns();
        uint64_t t1 = sps__ticks();
        if (t1 - t0 < best_w) {
            best_w = t1 - t0;
            best.ticks = t0 + (t1 - t0) / 2;
            best.ns = ns;
        }
    }
    return best;
}

static void init_once(void) {
    const char *env = getenv("SPANSCOPE_CLOCK");
    sps__use_tsc = tsc_is_invariant();
    if (env && strcmp(env, "monotonic") == 0) sps__use_tsc = 0;
    if (env && strcmp(env, "tsc") == 0) sps__use_tsc = 1;
#if !(defined(__x86_64__) || defined(__i386__))
    sps__use_tsc = 0;
#endif
    if (!sps__use_tsc) return;
    sps__anchor_t a = sps__anchor_now(), b;
    do b = sps__anchor_now(); while (b.ns - a.ns < 2000000);
    if (b.ticks > a.ticks) g_init_scale = (double)(b.ns - a.ns) / (double)(b.ticks - a.ticks);
    else sps__use_tsc = 0; /* a TSC that does not advance is no clock */
}

/* Chooses the counter once per process and measures its rate over ~2 ms. */
void sps__clock_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
}

/* ns per tick k as timemap_t's q: k * 2^SPS__TM_FRAC, rounded (0 for a
 * slope that does not fit, which no TSC of 2^-16 GHz or more has). */
static uint64_t scale_fixed(double k) {
    double q = k * (double)((uint64_t)1 << SPS__TM_FRAC);
    return q > 0 && q < 18446744073709549568.0 ? (uint64_t)(q + 0.5) : 0;
}

/* Appends an anchor (ignored if not later than the last one).  Returns 0 or
 * SPS_ENOMEM. */
int sps__timemap_add(sps__timemap_t *m, sps__anchor_t a) {
    if (m->n && (a.ticks <= m->a[m->n - 1].ticks || a.ns < m->a[m->n - 1].ns))
        return 0;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        sps__anchor_t *p = realloc(m->a, cap * sizeof *p);
        if (!p) return SPS_ENOMEM;
        m->a = p;
        double *k = realloc(m->k, cap * sizeof *k);
        if (!k) return SPS_ENOMEM;
        m->k = k;
        uint64_t *q = realloc(m->q, cap * sizeof *q);
        if (!q) return SPS_ENOMEM;
        m->q = q;
        m->cap = cap;
    }
    m->a[m->n] = a;
    m->k[m->n] = g_init_scale;
    m->q[m->n] = scale_fixed(g_init_scale);
    if (m->n > 0) { /* the segment that this anchor closes */
        const sps__anchor_t *p = &m->a[m->n - 1];
        if (a.ns - p->ns >= 1000000) {
            m->k[m->n - 1] = (double)(a.ns - p->ns) / (double)(a.ticks - p->ticks);
            m->q[m->n - 1] = scale_fixed(m->k[m->n - 1]);
        }
    }
    m->n++;
    return 0;
}

/* Index of the last anchor at or before ticks (0 if none). */
static size_t find_anchor(const sps__timemap_t *m, uint64_t ticks) {
    size_t lo = 0, hi = m->n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (m->a[mid].ticks <= ticks) lo = mid; else hi = mid;
    }
    return lo;
}

/* The slope of the segment starting at anchor i (k[i], q[i]) is computed
 * when its closing anchor is added.  Segments shorter than 1 ms are too
 * noisy to trust; they (and the open segment after the last anchor) use
 * the rate measured at init. */

/* |d| ticks at fixed-point slope q, in ns rounded half up (as
 * sps__tmcur_ns computes it, to the bit). */
static int64_t fixed_ns(uint64_t d, uint64_t q) {
    unsigned __int128 p = (unsigned __int128)d * q;
    return (int64_t)((p + ((unsigned __int128)1 << (SPS__TM_FRAC - 1))) >> SPS__TM_FRAC);
}

/* Converts with anchor i as the base (the slope in fixed point; ticks
 * before the anchor mirror the ones after it). */
static int64_t map_from(const sps__timemap_t *m, size_t i, uint64_t ticks) {
    const sps__anchor_t *a = &m->a[i];
    size_t seg = (i + 1 == m->n && i > 0) ? i - 1 : i; /* past the end: extend
                                                          the last segment */
    return ticks >= a->ticks ? a->ns + fixed_ns(ticks - a->ticks, m->q[seg])
                             : a->ns - fixed_ns(a->ticks - ticks, m->q[seg]);
}

/* Maps ticks to CLOCK_MONOTONIC ns.  Before the first anchor and after the
 * last, extrapolates with the nearest segment's slope. */
int64_t sps__timemap_ns(const sps__timemap_t *m, uint64_t ticks) {
    if (!sps__use_tsc) return (int64_t)ticks;
    if (m->n == 0) return (int64_t)((double)ticks * g_init_scale);
    return map_from(m, find_anchor(m, ticks), ticks);
}

/* sps__timemap_ns from the anchor *hint, when ticks is in its segment
 * (else found, and *hint updated); no map or no TSC: raw ns. */
int64_t sps__timemap_ns_search(const sps__timemap_t *m, uint64_t ticks, size_t *hint) {
    if (!m || !sps__use_tsc) return (int64_t)ticks;
    if (m->n == 0) return sps__timemap_ns(m, ticks);
    size_t i = *hint;
    if (!(i < m->n && m->a[i].ticks <= ticks && (i + 1 == m->n || ticks < m->a[i + 1].ticks)))
        *hint = i = find_anchor(m, ticks);
    return map_from(m, i, ticks);
}

/* sps__tmcur_ns's slow path (core.h): converts, then caches the segment
 * of ticks where there is one to cache. */
int64_t sps__tmcur_ns_slow(sps__tmcur_t *c, const sps__timemap_t *m, uint64_t ticks) {
    if (!m || !sps__use_tsc) { /* raw ns: the identity, as a segment */
        *c = (sps__tmcur_t){0, UINT64_MAX, (uint64_t)1 << SPS__TM_FRAC, 0, 0};
        return (int64_t)ticks;
    }
    int64_t ns = sps__timemap_ns_search(m, ticks, &c->hint);
    size_t i = c->hint;
    c->span = 0; /* before the first anchor, or no map: nothing cached */
    if (m->n && m->a[i].ticks <= ticks) {
        size_t seg = (i + 1 == m->n && i > 0) ? i - 1 : i;
        c->lo = m->a[i].ticks;
        c->span = i + 1 < m->n ? m->a[i + 1].ticks - c->lo : UINT64_MAX - c->lo;
        c->q = m->q[seg];
        c->ns0 = m->a[i].ns;
    }
    return ns;
}

/* ns per tick of the most recent trustworthy segment. */
double sps__timemap_scale(const sps__timemap_t *m) {
    if (!sps__use_tsc) return 1.0;
    for (size_t i = m->n; i-- > 1;) {
        const sps__anchor_t *a = &m->a[i - 1], *b = &m->a[i];
        if (b->ns - a->ns >= 1000000) return m->k[i - 1];
    }
    return g_init_scale;
}

void sps__timemap_free(sps__timemap_t *m) {
    free(m->a);
    free(m->k);
    free(m->q);
    m->k = NULL;
    m->q = NULL;
    m->a = NULL;
    m->n = m->cap = 0;
}
