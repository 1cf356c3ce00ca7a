/* emit_itt.c -- the ITT emitter (issue 38 part 2; docs/nvtx-itt.md): while
 * it is on, every region's begin and end is also an ITT task -- begin in
 * one domain, "spanscope", named by a string handle made once per region --
 * so that Intel VTune Profiler (or any ITT collector) shows spanscope's
 * regions on its timeline, whether a session records or not.
 *
 * Built on the static part of Intel's ittnotify (third_party/ittnotify,
 * linked into the library when SPS_ITT is on, SPS_HAVE_ITT here): it loads
 * the collector named by INTEL_LIBITTNOTIFY64 and is a no-op without one.
 * The core never calls this file by name: a constructor names the table
 * for the public bit SPS_EMIT_ITT (sps__emit_provide, core/emit.h), and
 * sps_emit_set / sps_config_t.emit turn it on and off.  The collector is
 * loaded and the domain created by the first begin after it is turned on
 * (once; nothing at all while ITT stays off).
 *
 * String handles: one per region id, in a table of segments that double in
 * size (ids 0..255, 256..511, 512..1023, ...), so that no segment moves
 * once made: a begin reads its region's handle without a lock (two acquire
 * loads); the first begin of a region makes the handle under g_lock
 * (__itt_string_handle_create with sps_region_name's name) and publishes
 * it.  Nothing is made while no collector is attached (the domain is then
 * NULL or disabled, and begin/end return at once). */
#include "ext/emit_itt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef SPS_HAVE_ITT
#include <sps_ittnotify.h>

#define SEG0_BITS 8u                 /* segment 0: ids 0..255 */
#define NSEG (32u - SEG0_BITS + 1u)  /* enough for every 32-bit id */

typedef _Atomic(__itt_string_handle *) handle_slot_t;

static __itt_domain *g_domain;             /* set once by itt_init */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* makes handles */
static _Atomic(handle_slot_t *) g_seg[NSEG];

/* segment of id r, and r's index in it */
static inline unsigned seg_of(uint32_t r, uint32_t *off) {
    if (r < (1u << SEG0_BITS)) {
        *off = r;
        return 0;
    }
    unsigned top = 31u - (unsigned)__builtin_clz(r); /* floor(log2 r) >= SEG0_BITS */
    unsigned s = top - SEG0_BITS + 1u;
    *off = r - (1u << top);
    return s;
}

static inline size_t seg_size(unsigned s) {
    return s == 0 ? (size_t)1 << SEG0_BITS : (size_t)1 << (SEG0_BITS + s - 1u);
}

/* r's handle, NULL when not made yet: no lock */
static inline __itt_string_handle *handle_get(sps_region_t r) {
    uint32_t off;
    unsigned s = seg_of(r, &off);
    handle_slot_t *seg = atomic_load_explicit(&g_seg[s], memory_order_acquire);
    return seg ? atomic_load_explicit(&seg[off], memory_order_acquire) : NULL;
}

/* Makes r's handle (once: under the lock, a second thread finds the
 * first's).  NULL when out of memory or the collector gives none; the task
 * is then begun without a name, so that begin and end still pair. */
static __itt_string_handle *handle_make(sps_region_t r) {
    uint32_t off;
    unsigned s = seg_of(r, &off);
    __itt_string_handle *h = NULL;
    pthread_mutex_lock(&g_lock);
    handle_slot_t *seg = atomic_load_explicit(&g_seg[s], memory_order_relaxed);
    if (!seg) {
        seg = calloc(seg_size(s), sizeof *seg);
        if (seg) atomic_store_explicit(&g_seg[s], seg, memory_order_release);
    }
    if (seg) {
        h = atomic_load_explicit(&seg[off], memory_order_relaxed);
        if (!h) {
            const char *name = sps_region_name(r);
            h = __itt_string_handle_create(name ? name : "(unknown region)");
            if (h) atomic_store_explicit(&seg[off], h, memory_order_release);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return h;
}

static _Atomic int g_ready; /* itt_init has run */

static void itt_init(void) {
    /* initialises the static part (__itt_get_collection_state): the
     * collector, if any, is loaded now, so that the domain and the string
     * handles are the collector's own from the start */
    (void)sps__itt_get_collection_state();
    g_domain = __itt_domain_create("spanscope");
    atomic_store_explicit(&g_ready, 1, memory_order_release);
}

/* whether tasks go anywhere: a collector's domain, enabled (the collector
 * may switch it off and on) */
static inline int itt_live(void) {
    if (SPS__UNLIKELY(!atomic_load_explicit(&g_ready, memory_order_acquire)))
        pthread_once(&g_once, itt_init);
    return g_domain && g_domain->flags;
}

/* tasks this thread began and has not ended: an end whose begin came
 * before the emitter was on (or before a collector's domain was live)
 * ends nothing, so it never closes a task someone else began */
static __thread uint32_t t_depth;

static _Atomic(__itt_string_handle *) g_sizes_key; /* "sizes", made once */

/* The metadata key of a begin's label (sps_emit_label). */
static __itt_string_handle *sizes_key(void) {
    __itt_string_handle *k = atomic_load_explicit(&g_sizes_key, memory_order_acquire);
    if (k) return k;
    pthread_mutex_lock(&g_lock);
    k = atomic_load_explicit(&g_sizes_key, memory_order_relaxed);
    if (!k) {
        k = __itt_string_handle_create("sizes");
        atomic_store_explicit(&g_sizes_key, k, memory_order_release);
    }
    pthread_mutex_unlock(&g_lock);
    return k;
}

static void itt_begin(sps_region_t r) {
    if (!itt_live()) return;
    __itt_string_handle *h = handle_get(r);
    if (SPS__UNLIKELY(!h)) h = handle_make(r);
    __itt_task_begin(g_domain, __itt_null, __itt_null, h);
    t_depth++;
    const char *label = sps__emit_label(); /* the task's "sizes" (torch's shapes) */
    if (label) {
        __itt_string_handle *k = sizes_key();
        if (k) __itt_metadata_str_add(g_domain, __itt_null, k, label, strlen(label));
    }
}

static void itt_end(sps_region_t r) {
    (void)r; /* ITT tasks nest per thread: the end closes the innermost */
    if (!t_depth) return;
    t_depth--;
    __itt_task_end(g_domain);
}

static const sps__emit_ops_t g_itt_ops = {"itt", itt_begin, itt_end};

const sps__emit_ops_t *sps__itt_emitter(void) {
    return &g_itt_ops;
}

/* names the table for SPS_EMIT_ITT at load (CMake keeps this object in a
 * static link with --undefined=sps__itt_provide) */
__attribute__((constructor)) void sps__itt_provide(void) {
    sps__emit_provide(SPS_EMIT_ITT, &g_itt_ops);
}

#else /* !SPS_HAVE_ITT */

/* A build without ITT (SPS_ITT=OFF): no emitter (emit_itt.h) */
const sps__emit_ops_t *sps__itt_emitter(void) {
    return NULL;
}

#endif /* SPS_HAVE_ITT */
