/* emit_nvtx.c -- the NVTX emitter (issue 38 part 1; docs/nvtx-itt.md):
 * while it is on, every region's begin pushes a range in the NVTX domain
 * "spanscope" and its end pops it, so that Nsight Systems (or any NVTX
 * tool) shows every region on every thread, session or not.
 *
 * Built on the CUDA toolkit's header-only nvtx3 (CMake finds
 * nvtx3/nvToolsExt.h and defines SPS_HAVE_NVTX); without it this file
 * provides nothing, and sps_emit_set(SPS_EMIT_NVTX, 1) answers
 * SPS_ENOTSUP.  nvtx3 needs no library: its first call looks for a tool
 * (NVTX_INJECTION64_PATH, which Nsight sets; or a preinjected one) and
 * either hands every call to it or turns every call into a no-op.
 *
 * Strings: a range's name is a registered string of the domain
 * (nvtxDomainRegisterStringA), made once per region and kept in a table
 * indexed by region id.  The table grows under a lock and is read without
 * one: readers load the table's pointer (acquire) and a slot's flag
 * (acquire) before its handle; a grown table is a copy published whole,
 * and old copies are kept until the process exits (the table doubles, so
 * they hold less than the live one), so a reader never reads freed memory.
 * The domain is made by the first begin, under the same lock: with no tool
 * attached nvtx3 answers NULL for it (every nvtx call would be a no-op),
 * and the emitter tells the core it is idle (sps__emit_idle): it stays on,
 * but begins and ends take the fast path again, at no cost.
 *
 * Pops: a per-thread count of the ranges this emitter pushed; an end that
 * finds none (its region began before the emitter was turned on) pops
 * nothing, so it never closes a range someone else pushed. */
#include "core/core.h"
#include "core/emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SPS_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

/* One region's string: done (acquire) says h is set. */
typedef struct slot {
    int done;
    nvtxStringHandle_t h;
} slot_t;

typedef struct table {
    uint32_t cap;
    struct table *older; /* the copies it replaced, kept (see above) */
    slot_t s[];
} table_t;

enum { DOM_FRESH = 0, DOM_ON = 1, DOM_NONE = 2 };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_dom_state;           /* DOM_*: acquire/release */
static nvtxDomainHandle_t g_dom;  /* set before g_dom_state turns DOM_ON */
static table_t *g_table;          /* acquire/release */
static __thread uint32_t t_depth; /* ranges this thread pushed and not popped */

/* Under g_lock: the domain, made once.  NULL: no tool attached. */
static void domain_make(void) {
    if (__atomic_load_n(&g_dom_state, __ATOMIC_RELAXED) != DOM_FRESH) return;
    g_dom = nvtxDomainCreateA("spanscope");
    __atomic_store_n(&g_dom_state, g_dom ? DOM_ON : DOM_NONE, __ATOMIC_RELEASE);
}

/* The registered string of region r, made (under the lock) the first time;
 * NULL when out of memory or no name (the range then goes unnamed). */
static nvtxStringHandle_t string_slow(sps_region_t r) {
    nvtxStringHandle_t h = NULL;
    pthread_mutex_lock(&g_lock);
    table_t *t = g_table;
    if (!t || r >= t->cap) {
        uint32_t cap = t ? t->cap : 64;
        while (cap <= r) cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
        table_t *n = calloc(1, sizeof *n + (size_t)cap * sizeof(slot_t));
        if (!n) goto out;
        n->cap = cap;
        n->older = t;
        if (t)
            for (uint32_t i = 0; i < t->cap; i++) n->s[i] = t->s[i]; /* done under the lock */
        __atomic_store_n(&g_table, n, __ATOMIC_RELEASE);
        t = n;
    }
    slot_t *s = &t->s[r];
    if (!__atomic_load_n(&s->done, __ATOMIC_RELAXED)) {
        const char *name = sps_region_name(r);
        s->h = nvtxDomainRegisterStringA(g_dom, name ? name : "?");
        __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
    }
    h = s->h;
out:
    pthread_mutex_unlock(&g_lock);
    return h;
}

static inline nvtxStringHandle_t string_of(sps_region_t r) {
    table_t *t = __atomic_load_n(&g_table, __ATOMIC_ACQUIRE);
    if (SPS__LIKELY(t && r < t->cap && __atomic_load_n(&t->s[r].done, __ATOMIC_ACQUIRE)))
        return t->s[r].h;
    return string_slow(r);
}

static const sps__emit_ops_t g_ops;

static void nvtx_begin(sps_region_t r) {
    int st = __atomic_load_n(&g_dom_state, __ATOMIC_ACQUIRE);
    if (SPS__UNLIKELY(st == DOM_FRESH)) {
        pthread_mutex_lock(&g_lock);
        domain_make();
        pthread_mutex_unlock(&g_lock);
        st = __atomic_load_n(&g_dom_state, __ATOMIC_ACQUIRE);
        /* no tool attached, and none can attach later (NVTX looks once):
         * the hot path need not call us any more (emit.h) */
        if (st == DOM_NONE) sps__emit_idle(&g_ops);
    }
    if (st != DOM_ON) return; /* no tool attached */
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    const char *label = sps__emit_label();
    char text[512];
    if (label) { /* a per-call message: "NAME, sizes = LABEL" (torch's form) */
        const char *name = sps_region_name(r);
        snprintf(text, sizeof text, "%s, sizes = %s", name ? name : "", label);
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = text;
    } else {
        nvtxStringHandle_t h = string_of(r);
        if (h) {
            a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
            a.message.registered = h;
        }
    }
    nvtxDomainRangePushEx(g_dom, &a);
    t_depth++;
}

static void nvtx_end(sps_region_t r) {
    (void)r;
    if (__atomic_load_n(&g_dom_state, __ATOMIC_ACQUIRE) != DOM_ON || !t_depth) return;
    t_depth--;
    nvtxDomainRangePop(g_dom);
}

static const sps__emit_ops_t g_ops = {"nvtx", nvtx_begin, nvtx_end};

__attribute__((constructor)) static void emit_nvtx_provide(void) {
    sps__emit_provide(SPS_EMIT_NVTX, &g_ops);
}
#endif /* SPS_HAVE_NVTX */

/* Named by CMake's --undefined for the static library, so that a static
 * link keeps this object (and its constructor); 1 when NVTX was built. */
int sps__emit_nvtx_built(void);
int sps__emit_nvtx_built(void) {
#ifdef SPS_HAVE_NVTX
    return 1;
#else
    return 0;
#endif
}
