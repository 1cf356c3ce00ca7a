/* cupti_device.c -- the CUPTI collector (cupti.c) as the SPS_DEVICE_CUPTI
 * device collector of a recording (src/api/device.h; docs/device.md).
 *
 * - start/stop: one collector (g_c), started by sps_device_start; while it
 *   is on, an emitter (core/emit.h) pushes the region id as CUPTI's
 *   external correlation id (kind CUSTOM0) at every region begin -- before
 *   the begin's timestamp -- and pops it at the end, after the end's, on
 *   every thread.  The hot path does not change: the emitters' out-of-line
 *   path calls it.
 * - take (every finalize while on, and at the stop): a forced flush, the
 *   clock map refitted (a fitted clock), and the activities parsed since
 *   the last take handed over as /device rows in CLOCK_MONOTONIC ns, each
 *   with its external id (the region) and its launch: the runtime/driver
 *   API record of the same correlation id gives the launching thread and
 *   the launch time.  finalize (src/api/device.c) finds the span.
 *
 * CUPTI names a thread by the low 32 bits of pthread_self() (the API
 * records' threadId); the emitter's first begin on a thread records that
 * value beside the thread's OS tid (gettid), which is what the recording
 * knows the thread by. */
#include "api/device.h"
#include "core/emit.h"
#include "ext/cupti.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- threads: CUPTI's id -> OS tid ---------------------------------------- */

typedef struct tmap {
    uint32_t cupti;
    int32_t tid;
} tmap_t;
static pthread_mutex_t g_tlock = PTHREAD_MUTEX_INITIALIZER;
static tmap_t *g_tmap;
static size_t g_ntmap, g_captmap;
static __thread int t_known;

static void thread_note(void) {
    t_known = 1;
    tmap_t m = {(uint32_t)(uintptr_t)pthread_self(), (int32_t)syscall(SYS_gettid)};
    pthread_mutex_lock(&g_tlock);
    size_t i = 0;
    while (i < g_ntmap && g_tmap[i].cupti != m.cupti) i++;
    if (i == g_ntmap && g_ntmap == g_captmap) {
        size_t cap = g_captmap ? 2 * g_captmap : 64;
        tmap_t *v = realloc(g_tmap, cap * sizeof *v);
        if (v) g_tmap = v, g_captmap = cap;
    }
    if (i < g_captmap) {
        g_tmap[i] = m; /* a pthread_t reused by a later thread: the latest */
        if (i == g_ntmap) g_ntmap++;
    }
    pthread_mutex_unlock(&g_tlock);
}

/* The OS tid of CUPTI's thread id id, -1 unknown (a value that is an OS
 * tid already, as some CUPTI versions may report, is taken as one). */
static int64_t tid_of(uint32_t id) {
    int64_t out = -1;
    pthread_mutex_lock(&g_tlock);
    for (size_t i = 0; i < g_ntmap && out < 0; i++)
        if (g_tmap[i].cupti == id) out = g_tmap[i].tid;
    for (size_t i = 0; i < g_ntmap && out < 0; i++)
        if ((uint32_t)g_tmap[i].tid == id) out = g_tmap[i].tid;
    pthread_mutex_unlock(&g_tlock);
    return out;
}

/* ---- the emitter: push/pop at region begin/end ---------------------------- */

static void em_begin(sps_region_t r) {
    if (!t_known) thread_note();
    sps__cupti_push((uint64_t)r);
}

static void em_end(sps_region_t r) {
    (void)r;
    sps__cupti_pop();
}

static const sps__emit_ops_t g_emit = {"cupti", em_begin, em_end};

/* ---- launches: correlation id -> (launch ns, tid), two generations -------- */

typedef struct launch {
    uint32_t corr;
    int64_t ns, tid;
} launch_t;
typedef struct lmap {
    launch_t *v;
    size_t n, cap;
} lmap_t;
static lmap_t g_gen[2]; /* [0] this take's, [1] the previous take's */
static uint32_t g_top[2]; /* the highest correlation id of the last take, the one before */

static int lmap_cmp(const void *a, const void *b) {
    uint32_t x = ((const launch_t *)a)->corr, y = ((const launch_t *)b)->corr;
    return (x > y) - (x < y);
}

static const launch_t *lmap_find(const lmap_t *m, uint32_t corr) {
    launch_t key = {corr, 0, 0};
    return m->n ? bsearch(&key, m->v, m->n, sizeof *m->v, lmap_cmp) : NULL;
}

/* ---- the collector ----------------------------------------------------------- */

static sps__cupti_t g_c;
static int g_on, g_stopped; /* under device.c's lock (every op is called under it) */

static int dev_available(void) { return sps__cupti_probe(); }

static void collector_free(void) {
    sps__cupti_free(&g_c);
    for (int i = 0; i < 2; i++) {
        free(g_gen[i].v);
        memset(&g_gen[i], 0, sizeof g_gen[i]);
    }
    g_on = g_stopped = 0;
    g_top[0] = g_top[1] = 0;
}

static int dev_start(void) {
    if (g_on) return sps__err_fail(SPS_EACTIVE, "CUPTI: the collector is on already");
    if (g_stopped) collector_free(); /* a stop whose take did not come */
    int rc = sps__cupti_init(&g_c, 0, 0);
    if (rc) return rc;
    rc = sps__cupti_start(&g_c);
    if (rc) {
        sps__cupti_free(&g_c);
        return rc;
    }
    if (!t_known) thread_note(); /* the starting thread may launch outside any span */
    rc = sps__emit_set(&g_emit, 1);
    if (rc) {
        sps__cupti_stop(&g_c);
        sps__cupti_free(&g_c);
        return sps__err_fail(rc, "CUPTI: no emitter slot left for the push/pop (%d in use)",
                             SPS__EMIT_MAX);
    }
    g_on = 1;
    return 0;
}

static int dev_stop(void) {
    if (!g_on) return 0;
    sps__emit_set(&g_emit, 0);
    int rc = sps__cupti_stop(&g_c); /* flushes: nothing is lost */
    g_on = 0;
    g_stopped = 1;
    return rc;
}

static int64_t id_or_none(uint32_t v) { return v == ~0u ? -1 : (int64_t)v; }

static int dev_take(sps__devbatch_t *b) {
    if (!g_on && !g_stopped) return 0;
    int rc = 0;
    if (g_on) (void)sps__cupti_sync(&g_c); /* a refit that fails keeps the map it had */
    pthread_mutex_lock(&g_c.lock);
    size_t n = 0;
    const sps__dev_act_t *a = sps__cupti_acts(&g_c, &n);
    b->rows = malloc((n + 1) * sizeof *b->rows);
    b->names = calloc(g_c.n_names + 1, sizeof *b->names);
    /* this take's launches, beside the previous take's */
    free(g_gen[1].v);
    g_gen[1] = g_gen[0];
    memset(&g_gen[0], 0, sizeof g_gen[0]);
    size_t napi = 0;
    for (size_t i = 0; i < n; i++) napi += a[i].kind >= SPS__DEV_RUNTIME;
    g_gen[0].v = malloc((napi + 1) * sizeof *g_gen[0].v);
    if (!b->rows || !b->names || !g_gen[0].v) {
        rc = SPS_ENOMEM;
    } else {
        for (size_t i = 0; i < g_c.n_names; i++)
            if (!(b->names[b->nnames++] = strdup(sps__cupti_name(&g_c, (uint32_t)i)))) {
                rc = SPS_ENOMEM;
                break;
            }
    }
    const sps__clockmap_t *cm = &g_c.clock;
    for (size_t i = 0; !rc && i < n; i++)
        if (a[i].kind >= SPS__DEV_RUNTIME)
            g_gen[0].v[g_gen[0].n++] =
                (launch_t){a[i].correlation, (int64_t)sps__clockmap_apply(cm, a[i].start),
                           tid_of(a[i].tid)};
    if (!rc && g_gen[0].n > 1) qsort(g_gen[0].v, g_gen[0].n, sizeof *g_gen[0].v, lmap_cmp);
    for (size_t i = 0; !rc && i < n; i++) {
        const sps__dev_act_t *x = &a[i];
        const launch_t *l = lmap_find(&g_gen[0], x->correlation);
        if (!l) l = lmap_find(&g_gen[1], x->correlation);
        sps__devrow_t *r = &b->rows[b->n++];
        memset(r, 0, sizeof *r);
        r->start_ns = (int64_t)sps__clockmap_apply(cm, x->start);
        r->end_ns = (int64_t)sps__clockmap_apply(cm, x->end);
        r->launch_ns = l ? l->ns : -1;
        r->tid = l ? l->tid : -1;
        r->ext = sps__cupti_corr_span(&g_c, x->correlation);
        r->bytes = (int64_t)x->bytes;
        r->device = id_or_none(x->device);
        r->context = id_or_none(x->context);
        r->stream = id_or_none(x->stream);
        r->correlation = x->correlation;
        r->kind = (int32_t)x->kind;
        r->name = (int32_t)x->name;
        for (int j = 0; j < 3; j++) {
            r->grid[j] = (int32_t)x->grid[j];
            r->block[j] = (int32_t)x->block[j];
        }
        r->copy_kind = x->copy_kind;
        r->src_kind = x->src_kind;
        r->dst_kind = x->dst_kind;
        r->cbid = x->kind >= SPS__DEV_RUNTIME ? (int32_t)x->cbid : 0;
    }
    if (!rc) { /* handed over: a later take has only the newer ones */
        g_c.n_acts = 0;
        /* correlations of two takes ago: their activities came long since
         * (CUPTI's ids grow), so the map stays the size of two takes */
        uint32_t top = 0;
        for (size_t i = 0; i < n; i++)
            if (a[i].correlation > top) top = a[i].correlation;
        if (g_top[1]) sps__cupti_corr_prune(&g_c, g_top[1] + 1);
        if (top) g_top[1] = g_top[0], g_top[0] = top;
    }
    b->clock = cm->identity ? "identity" : "fitted";
    b->dropped = g_c.dropped; /* CUPTI's count since the last take */
    g_c.dropped = 0;
    b->version = g_c.api_version;
    pthread_mutex_unlock(&g_c.lock);
    if (g_stopped) collector_free();
    return rc;
}

static const sps__device_ops_t g_ops = {"cupti", dev_available, dev_start, dev_stop, dev_take};

/* Referenced by the static library's link options (CMakeLists.txt), so a
 * static link keeps this object and its constructor. */
int sps__cupti_device_built = 1;

__attribute__((constructor)) static void cupti_device_provide(void) {
    sps__device_provide(SPS_DEVICE_CUPTI, &g_ops);
}
