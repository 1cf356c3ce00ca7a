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
        m->cap = cap;
    }
    m->a[m->n] = a;
    m->k[m->n] = g_init_scale;
    if (m->n > 0) { /* the segment that this anchor closes */
        const sps__anchor_t *p = &m->a[m->n - 1];
        if (a.ns - p->ns >= 1000000)
            m->k[m->n - 1] = (double)(a.ns - p->ns) / (double)(a.ticks - p->ticks);
    }
    m->n++;
    return 0;
}

/* Slope (ns per tick) of the segment starting at anchor i, computed when
 * its closing anchor was added.  Segments shorter than 1 ms are too noisy
 * to trust; they (and the open segment after the last anchor) use the rate
 * measured at init. */
static double seg_scale(const sps__timemap_t *m, size_t i) {
    return sps__use_tsc ? m->k[i] : 1.0;
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

/* Converts with anchor i as the base. */
static int64_t map_from(const sps__timemap_t *m, size_t i, uint64_t ticks) {
    const sps__anchor_t *a = &m->a[i];
    double d = ticks >= a->ticks ? (double)(int64_t)(ticks - a->ticks)
                                 : -(double)(int64_t)(a->ticks - ticks);
    size_t seg = (i + 1 == m->n && i > 0) ? i - 1 : i; /* past the end: extend
                                                          the last segment */
    return a->ns + (int64_t)(d * seg_scale(m, seg) + (d >= 0 ? 0.5 : -0.5));
}

/* Maps ticks to CLOCK_MONOTONIC ns.  Before the first anchor and after the
 * last, extrapolates with the nearest segment's slope. */
int64_t sps__timemap_ns(const sps__timemap_t *m, uint64_t ticks) {
    if (!sps__use_tsc) return (int64_t)ticks;
    if (m->n == 0) return (int64_t)((double)ticks * g_init_scale);
    return map_from(m, find_anchor(m, ticks), ticks);
}

/* sps__timemap_ns_hint's slow path (core.h): the hint missed, or there is
 * no map or no TSC. */
int64_t sps__timemap_ns_search(const sps__timemap_t *m, uint64_t ticks, size_t *hint) {
    if (!m || !sps__use_tsc) return (int64_t)ticks;
    if (m->n == 0) return sps__timemap_ns(m, ticks);
    size_t i = *hint;
    if (!(i < m->n && m->a[i].ticks <= ticks && (i + 1 == m->n || ticks < m->a[i + 1].ticks)))
        *hint = i = find_anchor(m, ticks);
    return map_from(m, i, ticks);
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
    m->k = NULL;
    m->a = NULL;
    m->n = m->cap = 0;
}
