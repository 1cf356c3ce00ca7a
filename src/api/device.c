/* device.c -- the device collectors' api side (device.h; docs/device.md;
 * issue 38 parts 3 and 4): the public sps_device_* functions, dispatched
 * through the operations table each integration registers
 * (sps__device_provide); what the collectors hand over, kept until a
 * finalize writes it; and at finalize the attribution of every activity
 * and every CUDA-event pair to a span of the period, and the writing of
 * /device, /events/gpu_durations and summary_statistics' gpu_count /
 * gpu_total.
 *
 * The attribution rule (DESIGN.md, "Event model"): an activity belongs to
 * the innermost span OF THE REGION its external correlation id names
 * (the region id pushed at span begin) open on the launching thread at
 * the launch (the runtime/driver API record's start) -- never "any span
 * of any thread open at that time".  A kernel, copy or set takes the
 * launch of the API record with its correlation id.  The period's calls
 * come from the merged pass (model/period.c: the same call ids and
 * ordinals as the file's), kept only for the regions that launched
 * something; per (thread, region) they are sorted by start, each linked
 * to the nearest earlier call of its region that contains it, so finding
 * the innermost one that contains a time is a binary search and a walk up
 * that chain. */
#include "api/device.h"
#include "api/api.h"
#include "formats/h5_device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEV_BITS 2
#define PAIR_SLACK_NS 1000 /* a CUDA-event pair's bounds, when no span lies inside exactly */
#define DEV_KNOWN (SPS_DEVICE_CUPTI | SPS_DEVICE_EVENTS)

/* Recursive: a collector's take and stop run under it, and gpu_timing's hand
 * their pairs over through sps__device_pairs_add, which takes it too (from
 * other threads, lazily resolved pairs, it is an ordinary lock). */
static pthread_mutex_t g_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static const sps__device_ops_t *g_by_bit[DEV_BITS];
static unsigned g_on;  /* bits started */
static unsigned g_ran; /* bits on since the last finalize */
/* what waits for a finalize (under g_lock) */
static sps__devrow_t *g_rows;
static size_t g_nrows, g_caprows;
static char **g_names; /* every name seen: rows' name indexes point here */
static size_t g_nnames;
static const char *g_clock;
static uint64_t g_dropped;       /* the collectors' own count (latest) */
static uint64_t g_pairs_dropped; /* pairs no span took */
static int64_t g_version;
static sps__device_pair_t *g_pairs;
static size_t g_npairs, g_cappairs;

static const char *const g_what[DEV_BITS] = {"the CUPTI collector (SPS_DEVICE_CUPTI)",
                                             "gpu_timing, CUDA event pairs (SPS_DEVICE_EVENTS)"};

void sps__device_provide(unsigned bit, const sps__device_ops_t *ops) {
    if (!bit || bit & (bit - 1) || __builtin_ctz(bit) >= DEV_BITS) return;
    __atomic_store_n(&g_by_bit[__builtin_ctz(bit)], ops, __ATOMIC_RELEASE);
}

static const sps__device_ops_t *ops_of(int i) {
    return __atomic_load_n(&g_by_bit[i], __ATOMIC_ACQUIRE);
}

/* 0 when what names known bits, all built. */
static int check(unsigned what) {
    if (!what || what & ~(unsigned)DEV_KNOWN)
        return sps__err_fail(SPS_EINVAL, "device: unknown collector bits 0x%x (SPS_DEVICE_CUPTI, "
                                         "SPS_DEVICE_EVENTS)", what);
    for (int i = 0; i < DEV_BITS; i++)
        if (what & (1u << i) && !ops_of(i))
            return sps__err_fail(SPS_ENOTSUP, "device: built without %s", g_what[i]);
    return 0;
}

/* ---- what waits for a finalize ------------------------------------------ */

static int rows_reserve(size_t more) {
    if (g_nrows + more <= g_caprows) return 0;
    size_t cap = g_caprows ? g_caprows : 256;
    while (cap < g_nrows + more) cap *= 2;
    sps__devrow_t *v = realloc(g_rows, cap * sizeof *v);
    if (!v) return SPS_ENOMEM;
    g_rows = v;
    g_caprows = cap;
    return 0;
}

/* The index of name s in g_names (added when new), or -1 (no memory). */
static int32_t name_index(const char *s) {
    for (size_t i = 0; i < g_nnames; i++)
        if (strcmp(g_names[i], s) == 0) return (int32_t)i;
    char **v = realloc(g_names, (g_nnames + 1) * sizeof *v);
    if (!v) return -1;
    g_names = v;
    if (!(g_names[g_nnames] = strdup(s))) return -1;
    return (int32_t)g_nnames++;
}

/* Moves batch b into the pending rows (its names mapped onto g_names);
 * frees what b held.  Under g_lock. */
static int batch_absorb(sps__devbatch_t *b) {
    int rc = 0;
    int32_t *map = b->nnames ? malloc(b->nnames * sizeof *map) : NULL;
    if (b->nnames && !map) rc = SPS_ENOMEM;
    for (size_t i = 0; !rc && i < b->nnames; i++)
        if ((map[i] = name_index(b->names[i] ? b->names[i] : "")) < 0) rc = SPS_ENOMEM;
    if (!rc) rc = rows_reserve(b->n);
    for (size_t i = 0; !rc && i < b->n; i++) {
        sps__devrow_t r = b->rows[i];
        r.name = r.name >= 0 && (size_t)r.name < b->nnames ? map[r.name]
                                                            : name_index("<unknown>");
        if (r.name < 0) rc = SPS_ENOMEM;
        else g_rows[g_nrows++] = r;
    }
    if (b->clock) g_clock = b->clock;
    g_dropped += b->dropped;
    if (b->version) g_version = b->version;
    if (rc) g_dropped += b->n; /* what did not fit is lost, and counted */
    free(map);
    for (size_t i = 0; i < b->nnames; i++) free(b->names[i]);
    free(b->names);
    free(b->rows);
    memset(b, 0, sizeof *b);
    return rc;
}

/* Takes what collector i holds (under g_lock). */
static int take(int i) {
    const sps__device_ops_t *ops = ops_of(i);
    if (!ops || !ops->take) return 0;
    sps__devbatch_t b;
    memset(&b, 0, sizeof b);
    int rc = ops->take(&b);
    int rc2 = batch_absorb(&b);
    return rc ? rc : rc2;
}

static int pairs_put(const sps__device_pair_t *p, size_t n) {
    if (g_npairs + n > g_cappairs) {
        size_t cap = g_cappairs ? g_cappairs : 256;
        while (cap < g_npairs + n) cap *= 2;
        sps__device_pair_t *v = realloc(g_pairs, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        g_pairs = v;
        g_cappairs = cap;
    }
    if (n) memcpy(g_pairs + g_npairs, p, n * sizeof *p);
    g_npairs += n;
    return 0;
}

int sps__device_pairs_add(const sps__device_pair_t *p, size_t n) {
    if (!p && n) return SPS_EINVAL;
    pthread_mutex_lock(&g_lock);
    int rc = pairs_put(p, n);
    if (rc) g_pairs_dropped += n;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* ---- the public functions ------------------------------------------------ */

int sps_device_available(unsigned what) {
    int rc = check(what);
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; !rc && i < DEV_BITS; i++)
        if (what & (1u << i) && !(g_on & (1u << i))) rc = ops_of(i)->available();
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Stops collector i and takes what it still holds (under g_lock). */
static int stop_one(int i) {
    int rc = ops_of(i)->stop();
    int rc2 = take(i);
    g_on &= ~(1u << i);
    return rc ? rc : rc2;
}

int sps_device_start(unsigned what) {
    int rc = check(what);
    if (rc) return rc;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; !rc && i < DEV_BITS; i++)
        if (what & (1u << i) && g_on & (1u << i))
            rc = sps__err_fail(SPS_EACTIVE, "device: %s is on already", g_what[i]);
    unsigned started = 0;
    for (int i = 0; !rc && i < DEV_BITS; i++) {
        if (!(what & (1u << i))) continue;
        rc = ops_of(i)->start();
        if (!rc) {
            started |= 1u << i;
            g_on |= 1u << i;
            g_ran |= 1u << i;
        }
    }
    if (rc) { /* all or nothing: the message is the failure's */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", sps__err_msg());
        for (int i = 0; i < DEV_BITS; i++)
            if (started & (1u << i)) stop_one(i);
        sps__err_fail(rc, "%s", msg);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int sps_device_stop(unsigned what) {
    if (!what || what & ~(unsigned)DEV_KNOWN)
        return sps__err_fail(SPS_EINVAL, "device: unknown collector bits 0x%x", what);
    pthread_mutex_lock(&g_lock);
    int rc = 0;
    for (int i = 0; !rc && i < DEV_BITS; i++)
        if (what & (1u << i) && !(g_on & (1u << i)))
            rc = sps__err_fail(SPS_EINVAL, "device: %s is not on", g_what[i]);
    for (int i = 0; !rc && i < DEV_BITS; i++)
        if (what & (1u << i)) {
            int r = stop_one(i);
            if (r && !rc) rc = r;
        }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* ---- SPANSCOPE_DEVICE ---------------------------------------------------------- */

int sps__device_env_parse(const char *v, unsigned *bits) {
    *bits = 0;
    if (!v) return 0;
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        const char *w = p;
        while (*p && *p != ',' && *p != ' ') p++;
        size_t n = (size_t)(p - w);
        if (!n) continue;
        if (n == 5 && !strncmp(w, "cupti", 5)) *bits |= SPS_DEVICE_CUPTI;
        else if (n == 6 && !strncmp(w, "events", 6)) *bits |= SPS_DEVICE_EVENTS;
        else if (n == 4 && !strncmp(w, "none", 4)) continue;
        else
            return sps__err_fail(SPS_EINVAL, "SPANSCOPE_DEVICE=%s: unknown collector '%.*s' "
                                             "(cupti, events, cupti,events or none)",
                                 v, (int)n, w);
    }
    return 0;
}

int sps__device_env_start(const char *value) {
    unsigned bits = 0;
    int rc = sps__device_env_parse(value, &bits);
    if (rc || !bits) return rc;
    /* one at a time: a GPU without CUPTI still gets its event pairs */
    for (int i = 0; i < DEV_BITS; i++) {
        if (!(bits & (1u << i))) continue;
        int r = check(1u << i);
        if (!r) r = sps_device_start(1u << i);
        if (r && r != SPS_EACTIVE)
            fprintf(stderr, "spanscope: SPANSCOPE_DEVICE=%s: %s: recording without it\n", value,
                    sps__err_msg());
        else if (r)
            fprintf(stderr, "spanscope: SPANSCOPE_DEVICE=%s: %s\n", value, sps__err_msg());
    }
    return 0;
}

/* ---- finalize: the attribution -------------------------------------------- */

/* One call of the period, of a region that launched something. */
typedef struct dcall {
    uint32_t thread, region;
    int64_t start, end;
    int64_t call_id;
    uint64_t ordinal;
    int64_t up; /* the nearest earlier call of its (thread, region) containing it, -1 */
} dcall_t;

typedef struct dcoll {
    const uint8_t *want; /* by region id */
    uint32_t nwant;
    dcall_t *v;
    size_t n, cap;
} dcoll_t;

static int coll_end(void *ctx, const sps__call_t *c) {
    dcoll_t *k = ctx;
    if (c->region >= k->nwant || !k->want[c->region]) return 0;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 1024;
        dcall_t *v = realloc(k->v, cap * sizeof *v);
        if (!v) return SPS_ENOMEM;
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n++] = (dcall_t){c->thread, c->region, (int64_t)c->start, (int64_t)c->end,
                             c->call_id, c->ordinal, -1};
    return 0;
}

/* by (thread, region, start), the outer of equal starts first */
static int dcall_cmp(const void *a, const void *b) {
    const dcall_t *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->region != y->region) return x->region < y->region ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end);
}

/* Links every call to the nearest earlier call of its group containing it
 * (a stack per group; the calls are sorted). */
static int link_up(dcall_t *v, size_t n) {
    size_t *st = malloc((n ? n : 1) * sizeof *st), sn = 0;
    if (!st) return SPS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (i && (v[i].thread != v[i - 1].thread || v[i].region != v[i - 1].region)) sn = 0;
        while (sn && v[st[sn - 1]].end < v[i].end) sn--;
        v[i].up = sn ? (int64_t)st[sn - 1] : -1;
        st[sn++] = i;
    }
    free(st);
    return 0;
}

/* The calls of group (thread, region): [*lo, *hi). */
static void group(const dcall_t *v, size_t n, uint32_t thread, uint32_t region, size_t *lo,
                  size_t *hi) {
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (v[m].thread < thread || (v[m].thread == thread && v[m].region < region)) a = m + 1;
        else b = m;
    }
    *lo = a;
    b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (v[m].thread == thread && v[m].region == region) a = m + 1;
        else b = m;
    }
    *hi = a;
}

/* The innermost call of [lo, hi) containing t, or -1. */
static int64_t innermost(const dcall_t *v, size_t lo, size_t hi, int64_t t) {
    size_t a = lo, b = hi;
    while (a < b) { /* the first call starting after t */
        size_t m = a + (b - a) / 2;
        if (v[m].start <= t) a = m + 1;
        else b = m;
    }
    int64_t j = (int64_t)a - 1;
    while (j >= (int64_t)lo && v[j].end < t) j = v[j].up;
    return j >= (int64_t)lo ? j : -1;
}

/* The outermost call of [lo, hi) lying inside [t0, t1], or -1. */
static int64_t outermost_inside(const dcall_t *v, size_t lo, size_t hi, int64_t t0, int64_t t1) {
    size_t a = lo, b = hi;
    while (a < b) { /* the first call starting at or after t0 */
        size_t m = a + (b - a) / 2;
        if (v[m].start < t0) a = m + 1;
        else b = m;
    }
    for (size_t j = a; j < hi && v[j].start <= t1; j++)
        if (v[j].end <= t1) return (int64_t)j;
    return -1;
}

static int64_t thread_of(const sps__snap_t *s, int64_t tid) {
    if (tid < 0) return -1;
    for (uint32_t t = 0; t < s->nthreads; t++)
        if (s->threads[t].native_id == tid) return t;
    return -1;
}

/* Whether a call of region r stays open on lane th past the period. */
static int open_on(const sps__snap_t *s, int64_t th, uint64_t r) {
    if (th < 0 || !s->open) return 0;
    const sps__stack_t *st = &s->open[th];
    for (size_t i = 0; i < st->n; i++)
        if (st->f[i].region == r) return 1;
    return 0;
}

int sps__device_attribute(sps__snap_t *s, const uint32_t *file_region, sps__row_t *rows,
                          size_t nrows, uint64_t nevents, int64_t first_call_id,
                          sps__devfin_t *d) {
    memset(d, 0, sizeof *d);
    pthread_mutex_lock(&g_lock);
    if (!g_ran && !g_on && !g_nrows && !g_npairs) {
        pthread_mutex_unlock(&g_lock);
        return 0;
    }
    int rc = 0;
    for (int i = 0; i < DEV_BITS; i++) /* a collector's error loses only its own take */
        if (g_on & (1u << i)) (void)take(i);
    d->any = 1;
    d->collector = ((g_ran | g_on) & SPS_DEVICE_CUPTI) || g_nrows ? "cupti" : "cuda_events";
    d->b.rows = g_rows;
    d->b.n = g_nrows;
    g_rows = NULL;
    g_nrows = g_caprows = 0;
    sps__device_pair_t *pairs = g_pairs;
    size_t npairs = g_npairs;
    g_pairs = NULL;
    g_npairs = g_cappairs = 0;
    d->b.names = calloc(g_nnames + 1, sizeof *d->b.names);
    if (!d->b.names) rc = SPS_ENOMEM;
    for (size_t i = 0; !rc && i < g_nnames; i++)
        if (!(d->b.names[i] = strdup(g_names[i]))) rc = SPS_ENOMEM;
    d->b.nnames = g_nnames;
    d->b.clock = g_clock ? g_clock : "identity";
    d->b.dropped = g_dropped + g_pairs_dropped; /* this file's: given back on a failure */
    d->dropped_taken = d->b.dropped;
    g_dropped = g_pairs_dropped = 0;
    d->b.version = g_version;
    g_ran = g_on;
    pthread_mutex_unlock(&g_lock);
    /* the pairs go back with the rows when anything fails */
    d->pairs_later = pairs;
    d->npairs_later = npairs;
    if (rc) return rc;
    size_t n = d->b.n;
    d->regions = malloc((n + 1) * sizeof *d->regions);
    d->call_ids = malloc((n + 1) * sizeof *d->call_ids);
    d->threads = malloc((n + 1) * sizeof *d->threads);
    d->later = malloc((n + 1) * sizeof *d->later);
    int with_events = !s->aggregate; /* spans to put activities on (maybe none) */
    d->nevents = nevents;
    d->gpu_dur = with_events ? malloc((nevents + 1) * sizeof *d->gpu_dur) : NULL;
    uint32_t nregs = sps__registry_count();
    uint8_t *want = calloc(nregs + 1, 1);
    dcoll_t k = {want, nregs, NULL, 0, 0};
    if (!d->regions || !d->call_ids || !d->threads || !d->later || !want ||
        (with_events && !d->gpu_dur))
        rc = SPS_ENOMEM;
    for (uint64_t i = 0; !rc && with_events && i < nevents; i++) d->gpu_dur[i] = -1;
    /* the calls of the regions that launched something */
    size_t nwanted = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (d->b.rows[i].ext && d->b.rows[i].ext < nregs) nwanted += !want[d->b.rows[i].ext], want[d->b.rows[i].ext] = 1;
    for (size_t i = 0; !rc && i < npairs; i++)
        if (pairs[i].region && pairs[i].region < nregs) nwanted += !want[pairs[i].region], want[pairs[i].region] = 1;
    if (!rc && with_events && nwanted) {
        sps__pass_cb_t cb = {&k, NULL, coll_end};
        rc = sps__pass_run(s, &cb, NULL);
        if (!rc && k.n > 1) qsort(k.v, k.n, sizeof *k.v, dcall_cmp);
        if (!rc) rc = link_up(k.v, k.n);
    }
    /* the activities */
    size_t nout = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const sps__devrow_t *a = &d->b.rows[i];
        int64_t th = thread_of(s, a->tid);
        uint64_t r = a->ext;
        uint32_t fr = r && r < nregs ? file_region[r] : UINT32_MAX;
        int64_t call = -1;
        if (r && r < nregs && th >= 0 && a->launch_ns >= 0 && with_events) {
            if (a->launch_ns > s->end_ns) { /* launched after this period's end */
                d->later[d->nlater++] = *a;
                continue;
            }
            size_t lo, hi;
            group(k.v, k.n, (uint32_t)th, (uint32_t)r, &lo, &hi);
            int64_t j = innermost(k.v, lo, hi, a->launch_ns);
            if (j < 0 && open_on(s, th, r)) { /* its span is written later */
                d->later[d->nlater++] = *a;
                continue;
            }
            if (j >= 0 && fr != UINT32_MAX) {
                const dcall_t *c = &k.v[j];
                call = first_call_id + c->call_id;
                uint64_t ev = rows[fr].offset + c->ordinal;
                if (a->kind >= 1 && a->kind <= 3 && ev < nevents) {
                    int64_t dt = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
                    d->gpu_dur[ev] = (d->gpu_dur[ev] < 0 ? 0 : d->gpu_dur[ev]) + dt;
                }
            }
        }
        d->b.rows[nout] = *a;
        d->regions[nout] = fr == UINT32_MAX ? -1 : (int64_t)rows[fr].file_region;
        d->call_ids[nout] = call;
        d->threads[nout] = th;
        nout++;
    }
    if (!rc) d->b.n = nout;
    /* the CUDA-event pairs: a span's pair replaces CUPTI's sum */
    sps__device_pair_t *plater = NULL;
    size_t nplater = 0;
    if (!rc && npairs && !(plater = malloc(npairs * sizeof *plater))) rc = SPS_ENOMEM;
    for (size_t i = 0; !rc && i < npairs; i++) {
        const sps__device_pair_t *p = &pairs[i];
        int64_t th = thread_of(s, p->tid);
        int64_t j = -1;
        if (th >= 0 && p->region && p->region < nregs && with_events &&
            file_region[p->region] != UINT32_MAX) {
            size_t lo, hi;
            group(k.v, k.n, (uint32_t)th, p->region, &lo, &hi);
            j = outermost_inside(k.v, lo, hi, p->t0_ns, p->t1_ns);
            /* the span's times went through the recording's clock map
             * (the TSC's), t0/t1 did not: a few ns of disagreement */
            if (j < 0)
                j = outermost_inside(k.v, lo, hi, p->t0_ns - PAIR_SLACK_NS,
                                     p->t1_ns + PAIR_SLACK_NS);
        }
        if (j >= 0) {
            uint64_t ev = rows[file_region[p->region]].offset + k.v[j].ordinal;
            if (ev < nevents) d->gpu_dur[ev] = p->device_ns < 0 ? 0 : p->device_ns;
        } else if (p->t1_ns > s->end_ns) {
            plater[nplater++] = *p;
        } else {
            d->pairs_dropped++;
        }
    }
    if (!rc) { /* the pairs stay in d->pairs_all until the file is written */
        d->pairs_all = pairs;
        d->npairs_all = npairs;
        d->pairs_later = plater;
        d->npairs_later = nplater;
        d->b.dropped += d->pairs_dropped;
    } else {
        free(plater);
    }
    /* per (rank, region): scope-profiler's gpu_count / gpu_total */
    for (size_t i = 0; !rc && with_events && i < nrows; i++) {
        uint64_t cnt = 0;
        int64_t tot = 0;
        for (uint64_t e = rows[i].offset; e < rows[i].offset + rows[i].count && e < nevents; e++)
            if (d->gpu_dur[e] >= 0) cnt++, tot += d->gpu_dur[e];
        rows[i].s.gpu_count = cnt;
        rows[i].s.gpu_total = tot;
        if (cnt) d->events = 1;
    }
    free(k.v);
    free(want);
    return rc;
}

int sps__device_write(const char *tmp, int rank, const sps__devfin_t *d) {
    if (!d->any) return 0;
    size_t n = d->b.n;
    int64_t *col = malloc((SPS__DEVC_N * n + 1) * sizeof *col);
    int32_t *map = malloc((d->b.nnames + 1) * sizeof *map);
    const char **names = malloc((d->b.nnames + 1) * sizeof *names);
    if (!col || !map || !names) {
        free(col), free(map), free(names);
        return SPS_ENOMEM;
    }
    /* the names the rows use, in order of first use */
    size_t nn = 0;
    for (size_t i = 0; i < d->b.nnames; i++) map[i] = -1;
    sps__h5_device_t x;
    memset(&x, 0, sizeof x);
    for (int c = 0; c < SPS__DEVC_N; c++) x.cols[c] = col + (size_t)c * n;
#define C(c) (col + (size_t)(c) * n)
    for (size_t i = 0; i < n; i++) {
        const sps__devrow_t *a = &d->b.rows[i];
        int32_t nm = a->name >= 0 && (size_t)a->name < d->b.nnames ? a->name : -1;
        if (nm >= 0 && map[nm] < 0) {
            map[nm] = (int32_t)nn;
            names[nn++] = d->b.names[nm];
        }
        C(SPS__DEVC_KINDS)[i] = a->kind;
        C(SPS__DEVC_NAMES_IDX)[i] = nm >= 0 ? map[nm] : -1;
        C(SPS__DEVC_DEVICES)[i] = a->device;
        C(SPS__DEVC_CONTEXTS)[i] = a->context;
        C(SPS__DEVC_STREAMS)[i] = a->stream;
        C(SPS__DEVC_CORRELATIONS)[i] = a->correlation;
        C(SPS__DEVC_STARTS)[i] = a->start_ns;
        C(SPS__DEVC_ENDS)[i] = a->end_ns;
        C(SPS__DEVC_BYTES)[i] = a->bytes;
        C(SPS__DEVC_RANKS)[i] = rank;
        C(SPS__DEVC_THREADS)[i] = d->threads[i];
        C(SPS__DEVC_TIDS)[i] = a->tid;
        C(SPS__DEVC_REGIONS)[i] = d->regions[i];
        C(SPS__DEVC_CALL_IDS)[i] = d->call_ids[i];
        for (int j = 0; j < 3; j++) {
            C(SPS__DEVC_GRID_X + j)[i] = a->grid[j];
            C(SPS__DEVC_BLOCK_X + j)[i] = a->block[j];
        }
        C(SPS__DEVC_COPY_KINDS)[i] = a->copy_kind;
        C(SPS__DEVC_SRC_KINDS)[i] = a->src_kind;
        C(SPS__DEVC_DST_KINDS)[i] = a->dst_kind;
        C(SPS__DEVC_CBIDS)[i] = a->kind >= SPS_DEVICE_RUNTIME ? a->cbid : 0;
    }
#undef C
    x.n = n;
    x.nnames = nn;
    x.names = names;
    x.collector = d->collector;
    x.clock = d->b.clock;
    x.dropped = (int64_t)d->b.dropped;
    x.cupti_version = d->b.version;
    x.gpu_dur = d->events ? d->gpu_dur : NULL;
    x.nevents = d->nevents;
    int rc = sps__h5_add_device(tmp, &x);
    free(col), free(map), free(names);
    return rc;
}

void sps__device_done(sps__devfin_t *d, int written) {
    if (!d->any) return;
    pthread_mutex_lock(&g_lock);
    /* rows back in front of what came since (their names are g_names' own
     * indexes: the names only grow) */
    const sps__devrow_t *back = written ? d->later : d->b.rows;
    size_t nback = written ? d->nlater : d->b.n;
    if (!written && d->later && d->nlater && d->b.rows) {
        /* a failure: the rows deferred during the attribution go back too */
        sps__devrow_t *all = realloc(d->b.rows, (d->b.n + d->nlater) * sizeof *all);
        if (all) {
            memcpy(all + d->b.n, d->later, d->nlater * sizeof *all);
            d->b.rows = all;
            back = all;
            nback = d->b.n + d->nlater;
        }
    }
    if (nback && rows_reserve(nback) == 0) {
        memmove(g_rows + nback, g_rows, g_nrows * sizeof *g_rows);
        memcpy(g_rows, back, nback * sizeof *back);
        g_nrows += nback;
    } else if (nback) {
        g_dropped += nback;
    }
    /* the pairs: those for a later period, or all of them after a failure */
    const sps__device_pair_t *pb = written || !d->pairs_all ? d->pairs_later : d->pairs_all;
    size_t npb = written || !d->pairs_all ? d->npairs_later : d->npairs_all;
    if (npb && pairs_put(pb, npb)) g_pairs_dropped += npb;
    if (!written) { /* the next finalize writes /device and counts these */
        g_dropped += d->dropped_taken;
        g_ran |= strcmp(d->collector, "cupti") == 0 ? SPS_DEVICE_CUPTI : SPS_DEVICE_EVENTS;
    }
    pthread_mutex_unlock(&g_lock);
    for (size_t i = 0; d->b.names && i < d->b.nnames; i++) free(d->b.names[i]);
    free(d->b.names);
    free(d->b.rows);
    free(d->regions), free(d->call_ids), free(d->threads), free(d->later);
    free(d->gpu_dur);
    free(d->pairs_later);
    free(d->pairs_all);
    memset(d, 0, sizeof *d);
}
