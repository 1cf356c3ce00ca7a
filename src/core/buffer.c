/* buffer.c -- the hot path: per-thread chunks of 8-byte records.
 *
 * sps_begin/sps_end append one record to the calling thread's current chunk:
 * no lock, no allocation, no syscall.  Everything else -- the first call of a
 * thread, a full chunk, a change of the timestamp's upper half, a new session
 * -- goes through sps__slow_record, which takes the session lock.
 *
 * Memory: chunks come from a pool bounded by cfg.memory_limit.  When the
 * pool runs low the overflow policy decides: SPILL hands full chunks to the
 * spill writer (spill.c), which packs them into an unlinked spill file and
 * gives their memory back, DROP counts and discards new events, GROW
 * allocates.  Chunk memory is touched when allocated and then recycled, so
 * a long run does not keep paying page faults. */
#include "core/core.h"
#include "core/emit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

SPS_API int sps__active __attribute__((aligned(64))) = SPS__OFF;
int sps__state = SPS__OFF;  /* see core.h: the session's state */
int sps__paused;            /* sps_pause: sps__active is SPS__OFF */
sps__thr_t sps__dummy_thr; /* pos == end == NULL: always the slow path */
const sps__agg_ops_t *sps__agg_ops; /* set at setup by the api layer */
const sps__sample_ops_t *sps__sample_ops; /* the sampler's (src/ext/sampler.c) */
__thread sps__thr_t *sps__tls __attribute__((tls_model("initial-exec"))) =
    &sps__dummy_thr;
static pthread_key_t g_key;

/* ------------------------------------------------------------------------ */
/* Hot path                                                                  */
/* ------------------------------------------------------------------------ */

/* Appends one record stamped now; the fast path of both clocks. */
static inline void record_at(uint32_t payload, uint64_t now) {
    sps__thr_t *t = sps__tls;
    uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    uint64_t *end = atomic_load_explicit(&t->end, memory_order_relaxed);
    if (SPS__UNLIKELY(p >= end || (uint32_t)(now >> 32) != t->hi)) {
        sps__slow_record(t, payload, now, NULL, 0);
        return;
    }
    *p = ((uint64_t)payload << 32) | (uint32_t)now;
    atomic_store_explicit(&t->pos, p + 1, memory_order_release);
}

/* Records, then notes the native stack of a begin (stacks.c).  caller is
 * the return address of sps__begin, i.e. the user's call site: stacks.c
 * cuts the captured frames there. */
static void record_with_stack(uint32_t payload, uint64_t now, void *caller) {
    record_at(payload, now);
    sps__thr_t *t = sps__tls;
    if (payload & 1u || t == &sps__dummy_thr || !t->cur || t->dropping) return;
    const uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    if (p <= t->cur->rec) return;
    sps__stack_note(t, t->cur->seq0 + (uint64_t)(p - 1 - t->cur->rec), caller);
}

/* Appends the value group vals[0, n) and the record stamped now, published
 * together by one release store (a reader never sees one without the
 * other; see SPS__REC_VAL_TAG). */
static void record_values_at(uint32_t payload, uint64_t now, const uint64_t *vals, uint32_t n) {
    sps__thr_t *t = sps__tls;
    uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    uint64_t *end = atomic_load_explicit(&t->end, memory_order_relaxed);
    if (SPS__UNLIKELY(p + n + 2 > end || (uint32_t)(now >> 32) != t->hi)) {
        sps__slow_record(t, payload, now, vals, n);
        return;
    }
    p[0] = ((uint64_t)SPS__REC_VAL_TAG << 32) | n;
    memcpy(p + 1, vals, n * sizeof *vals);
    p[n + 1] = ((uint64_t)payload << 32) | (uint32_t)now;
    atomic_store_explicit(&t->pos, p + n + 2, memory_order_release);
}

/* State SPS__EVENTS_EXTRA: the record with the session's values and/or
 * the begin's native stack.  The values are read inside the span (a
 * begin reads them before its timestamp, an end after), so that what the
 * reading costs (a perf_event read() is about a microsecond) is the
 * span's own, not its parent's. */
static void record_extra(uint32_t payload, void *caller) {
    /* written under the lock at a session's start and end, read here
     * without it: atomics (relaxed: a stale value only misses a group) */
    uint32_t n = __atomic_load_n(&sps__g.nvals, __ATOMIC_RELAXED);
    if (!n) {
        record_with_stack(payload, sps__ticks(), caller);
        return;
    }
    uint64_t vals[SPS__VAL_MAX], now;
    if (n > SPS__VAL_MAX) n = SPS__VAL_MAX;
    /* a session ending meanwhile may read fewer than n: no stale words */
    memset(vals, 0, n * sizeof *vals);
    if (payload & 1u) {
        now = sps__ticks();
        sps__values_read(vals);
    } else {
        sps__values_read(vals);
        now = sps__ticks();
    }
    record_values_at(payload, now, vals, n);
    sps__thr_t *t = sps__tls;
    if (!__atomic_load_n(&sps__g.stacks_on, __ATOMIC_RELAXED) || payload & 1u || t == &sps__dummy_thr || !t->cur || t->dropping)
        return;
    const uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    if (p > t->cur->rec)
        sps__stack_note(t, t->cur->seq0 + (uint64_t)(p - 1 - t->cur->rec), caller);
}

/* Records as the session's state says (every state but SPS__EMITTING). */
static void record_state(uint32_t payload, int state, void *caller) {
    if (state == SPS__EVENTS_EXTRA) {
        record_extra(payload, caller);
        return;
    }
    uint64_t now = sps__ticks();
    if (state == SPS__EVENTS) record_at(payload, now);
    else if (state != SPS__AGGREGATE || !sps__agg_ops) return;
    else if (payload & 1u) sps__agg_ops->end(payload >> 1, now);
    else sps__agg_ops->begin(payload >> 1, now);
}

/* SPS__EMITTING (an emitter is on, emit.c): the emitters' begin before the
 * begin's timestamp, their end after the end's, and between them the
 * record exactly as the hot path would make it without emitters: the
 * session's state, or nothing while paused or without a session. */
static void record_emitting(uint32_t payload, void *caller) {
    sps_region_t r = payload >> 1;
    if (!(payload & 1u)) sps__emit_begin(r);
    int s = __atomic_load_n(&sps__paused, __ATOMIC_RELAXED) ? SPS__OFF : sps__state_load();
    if (s != SPS__OFF) record_state(payload, s, caller);
    if (payload & 1u) sps__emit_end(r);
}

/* Everything but the TSC events path, kept out of line so that the fast
 * path needs no stack frame.  caller: see record_with_stack (NULL for an
 * end, which notes no stack). */
__attribute__((noinline, cold))
static void record_other(uint32_t payload, int state, void *caller) {
    if (state == SPS__EMITTING) record_emitting(payload, caller);
    else record_state(payload, state, caller);
}

/* Always inlined into sps__begin/sps__end, so that __builtin_return_address
 * (0) below is theirs (GCC and clang document that an inlined function's
 * return address is its caller's): for sps__begin, the user's call site,
 * which stacks.c needs to cut off our own frames even when the library is
 * linked statically into an executable without symbols.  It is evaluated
 * in the cold branch only: passed in as an argument from sps__begin, GCC
 * loaded it on the fast path (objdump -d); an end notes no stack. */
__attribute__((always_inline))
static inline void record(uint32_t payload) {
    int s = sps__hot_state_load(); /* SPS__OFF while paused */
#if defined(__x86_64__) || defined(__i386__)
    if (SPS__LIKELY(s == SPS__EVENTS && sps__use_tsc)) {
        record_at(payload, __rdtsc());
        return;
    }
#endif
    record_other(payload, s, payload & 1u ? NULL : __builtin_return_address(0));
}

void sps__begin(sps_region_t r) { record(r << 1); }
void sps__end(sps_region_t r) { record((r << 1) | 1u); }

/* ------------------------------------------------------------------------ */
/* Chunks                                                                    */
/* ------------------------------------------------------------------------ */

/* A descriptor with fresh (pre-touched) or recycled memory; NULL if none can
 * be had.  Under the lock. */
static sps__chunk_t *chunk_get(int allow_alloc) {
    sps__chunk_t *c = sps__g.free_mem;
    if (c) {
        sps__g.free_mem = c->next;
        sps__g.free_count--;
    } else {
        if (!allow_alloc) return NULL;
        c = calloc(1, sizeof *c);
        size_t bytes = (size_t)sps__g.chunk_recs * sizeof(uint64_t);
        if (!c) return NULL;
        c->live_off = -1;
        /* crash safety: a slot of the live file, in the page cache as it
         * is written (crash.c); else private memory */
        if ((c->rec = sps__crash_chunk_map(&c->live_off))) {
            c->live_gen = sps__crash_gen();
        } else if ((c->rec = aligned_alloc(64, bytes))) {
            memset(c->rec, 0, bytes); /* fault the pages in now, not per event */
        } else {
            free(c);
            return NULL;
        }
        c->cap = sps__g.chunk_recs;
        sps__g.mem_chunks++;
    }
    c->next = NULL;
    c->file_off = -1;
    c->n = c->consumed = 0;
    return c;
}

void sps__pool_put(sps__chunk_t *c) {
    c->thr = NULL;
    c->spill = SPS__CH_IDLE;
    c->release_pending = 0;
    c->file_off = -1;
    if (!sps__g.budget_chunks || c->cap != sps__g.chunk_recs ||
        (c->live_off >= 0 && c->live_gen != sps__crash_gen())) {
        /* no session owns the pool (a write ended after sps_shutdown), or
         * an earlier session's chunk size or live file */
        sps__chunk_mem_free(c);
        free(c);
        sps__g.mem_chunks--;
        return;
    }
    sps__crash_chunk_clear(c); /* a slot starts zero-filled (crash.c) */
    c->next = sps__g.free_mem;
    sps__g.free_mem = c;
    sps__g.free_count++;
    if (sps__g.sp.waiters) pthread_cond_broadcast(&sps__g.sp.done);
}

/* Gives c's memory (if any) back to the pool and frees a spilled
 * descriptor; a chunk the spill writer is busy with is released by the
 * writer when it is done.  Under the lock. */
void sps__chunk_release(sps__chunk_t *c) {
    if (!c || sps__spill_release(c)) return;
    if (c->rec) {
        sps__pool_put(c);
    } else {
        if (sps__g.spilled_live) sps__g.spilled_live--;
        free(c);
    }
}

/* Makes c the thread's current chunk, starting with a HI record.  With no
 * analyzer cursor (a finalize took every chunk while the thread had none:
 * it waited for the spill writer, or dropped) the analysis resumes at c. */
static void thr_install(sps__thr_t *t, sps__chunk_t *c, uint64_t now,
                        uint64_t seq0) {
    c->seq0 = seq0;
    t->cur = c;
    t->mem_low = NULL; /* its end is the new chunk's (values.c) */
    if (!t->an_chunk) {
        t->an_chunk = c;
        t->an_pos = 0;
        t->an_off = -1;
    }
    t->hi = (uint32_t)(now >> 32);
    sps__crash_install(t, c); /* before its first record */
    c->rec[0] = sps__rec_hi(t->hi);
    t->true_end = c->rec + sps__g.chunk_recs;
    atomic_store_explicit(&t->end, c->rec + sps__g.chunk_recs, memory_order_relaxed);
    atomic_store_explicit(&t->pos, c->rec + 1, memory_order_release);
}

static void thr_stop(sps__thr_t *t) { /* no chunk: every call is slow */
    static uint64_t none[1];
    t->true_end = t->mem_low = NULL;
    atomic_store_explicit(&t->end, none, memory_order_relaxed);
    atomic_store_explicit(&t->pos, none, memory_order_release);
}

/* A chunk for t once the pool is spent, by the overflow policy: SPILL
 * makes one come free (spill.c; the lock may be released meanwhile), DROP
 * and a failing spill give none.  *gone: the session ended meanwhile. */
static sps__chunk_t *chunk_for(sps__thr_t *t, int *gone) {
    int spill = sps__g.cfg.overflow == SPS_OVERFLOW_SPILL;
    for (;;) {
        int grow = sps__g.cfg.overflow == SPS_OVERFLOW_GROW ||
                   sps__g.mem_chunks < sps__g.budget_chunks;
        sps__chunk_t *c = chunk_get(grow);
        if (c || !spill) return c;
        switch (sps__spill_make_room(t)) {
        case SPS__ROOM_RETRY: continue;
        case SPS__ROOM_GROW: return chunk_get(1); /* past the budget, lossless */
        case SPS__ROOM_GONE: *gone = 1; return NULL;
        default: return NULL; /* SPS__ROOM_DROP */
        }
    }
}

/* Retires the full current chunk and installs a new one according to the
 * overflow policy.  Returns 0, -1 when events must be dropped, -2 when the
 * session ended while the thread waited for the spill writer. */
static int thr_next_chunk(sps__thr_t *t, uint64_t now) {
    sps__chunk_t *old = t->cur;
    uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    uint64_t seq0 = old->seq0 + (uint64_t)(p - old->rec);
    old->n = (uint32_t)(p - old->rec);
    t->retired_seq = seq0;
    sps__g.retired += old->n;
    old->next = NULL;
    old->thr = t;
    if (t->tail) t->tail->next = old; else t->head = old;
    t->tail = old;
    t->cur = NULL;
    thr_stop(t); /* nothing is written until a chunk is installed */
    if (sps__g.cfg.overflow == SPS_OVERFLOW_SPILL) sps__spill_retired(old);
    int gone = 0;
    sps__chunk_t *c = chunk_for(t, &gone);
    if (gone) return -2;
    if (!c) {
        t->seq_next = seq0; /* where numbering resumes (sps__slow_record) */
        t->dropping = 1;
        return -1;
    }
    thr_install(t, c, now, seq0);
    sps__anchor_t a = sps__anchor_now(); /* follow clock drift on long runs */
    if (a.ns - (sps__g.tm.n ? sps__g.tm.a[sps__g.tm.n - 1].ns : 0) > 100000000 &&
        sps__timemap_add(&sps__g.tm, a) == 0) {
        sps__crash_anchor(a);
        /* the background analysis may now read what was retired: without
         * this, a recording whose chunks come more often than every 100
         * ms left the writer waiting for 2^22 records (model/analyze.c) */
        sps__retired_before_anchor();
    }
    return 0;
}

void sps__retired_before_anchor(void) {
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        if (t->epoch == sps__g.epoch) t->bg_ready_seq = t->retired_seq;
}

static void thr_exit(void *arg) {
    sps__thr_t *t = arg;
    pthread_mutex_lock(&sps__g.lock);
    t->exited = 1;
    t->last_ns = (int64_t)sps__mono_ns();
    pthread_mutex_unlock(&sps__g.lock);
    sps__tls = &sps__dummy_thr;
}

void sps__thread_key_init(void) { pthread_key_create(&g_key, thr_exit); }

/* Joins t to the current session (first use, or first use after a new
 * sps_setup).  Under the lock.  Returns 0 or -1. */
static int thr_join(sps__thr_t *t, uint64_t now) {
    if (t->cur && (t->cur->cap != sps__g.chunk_recs || t->cur->live_off >= 0 ||
                   sps__crash_on())) {
        /* the session changed the chunk size, or the chunk is (or must now
         * be) a slot of a session's live file (crash.c); only this thread
         * may free the chunk it was writing */
        sps__chunk_mem_free(t->cur);
        free(t->cur);
        t->cur = NULL;
        sps__g.mem_chunks--;
    }
    if (!t->cur) {
        sps__chunk_t *c = chunk_get(1); /* a thread always gets one chunk */
        if (!c) return -1;
        t->cur = c;
    }
    t->head = t->tail = t->spill_run = NULL;
    t->epoch = sps__g.epoch;
    t->index = sps__g.nthreads++;
    sps__crash_thread(t);
    t->dropping = 0;
    t->seq_next = 0;
    t->retired_seq = t->bg_ready_seq = 0;
    t->dropped = 0;
    t->first_ns = t->last_ns = (int64_t)sps__mono_ns();
    t->stack.n = t->carried.n = t->agg_stack.n = 0;
    t->an_chunk = t->cur;
    t->an_pos = 0;
    t->an_off = -1;
    t->cur->consumed = 0;
    thr_install(t, t->cur, now, 0);
    return 0;
}

/* The name sps_thread_set_name gave the calling thread, for thr_register
 * to take instead of the pthread name (a thread may be named before its
 * first record).  Only slow paths read it.  Its bytes join the library's
 * static TLS block (sps__tls is initial-exec, so a dlopen places all of the
 * library's TLS there, from glibc's small surplus): per-thread state of the
 * library stays a few dozen bytes. */
static __thread char tls_name[32];

/* sps_set_thread_namer's function, and whether this thread is in it. */
static void (*g_namer)(void);
static __thread int tls_naming;

void sps_set_thread_namer(void (*namer)(void)) {
    __atomic_store_n(&g_namer, namer, __ATOMIC_RELEASE);
}

/* A thread about to register asks the namer for its name first: outside
 * the session lock (the namer may take locks of its own, such as Python's),
 * once per thread unless it stays unnamed, never from inside the namer. */
static void thr_ask_namer(void) {
    void (*namer)(void) = __atomic_load_n(&g_namer, __ATOMIC_ACQUIRE);
    if (!namer || tls_naming || tls_name[0]) return;
    tls_naming = 1;
    namer();
    tls_naming = 0;
}

static sps__thr_t *thr_register(void) {
    sps__thr_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->tid = (pid_t)syscall(SYS_gettid);
    if (tls_name[0])
        memcpy(t->name, tls_name, sizeof t->name);
    else
        pthread_getname_np(pthread_self(), t->name, sizeof t->name);
    t->next_all = sps__g.threads;
    sps__g.threads = t;
    pthread_setspecific(g_key, t);
    sps__tls = t;
    return t;
}

/* Everything the fast path does not handle.  Takes the session lock. */
void sps__slow_record(sps__thr_t *t, uint32_t payload, uint64_t now,
                      const uint64_t *vals, uint32_t n) {
    if (!n && t->mem_low && sps__mem_record(t, payload, now)) return;
    uint64_t mem[SPS__MEM_NVALS];
    if (t == &sps__dummy_thr) thr_ask_namer();
    pthread_mutex_lock(&sps__g.lock);
    int st = sps__state_load();
    if (st != SPS__EVENTS && st != SPS__EVENTS_EXTRA) goto out;
    if (t == &sps__dummy_thr && !(t = thr_register())) goto out;
    if (t->epoch != sps__g.epoch && thr_join(t, now)) goto out;
    if (t->dropping) {
        if (sps__g.free_mem || sps__g.mem_chunks < sps__g.budget_chunks) {
            sps__chunk_t *c = chunk_get(1);
            if (c) {
                t->dropping = 0;
                /* continue the numbering where the retired chunk stopped
                 * (t->tail may have been taken by a finalize meanwhile):
                 * stacks and carried calls are matched by number, so it
                 * must never restart within a session */
                thr_install(t, c, now, t->seq_next);
            }
        }
        if (t->dropping) {
            t->dropped++;
            goto out;
        }
    }
    if (!n && sps__mem_delta) { /* every chunk starts with a group */
        sps__mem_read(mem);
        vals = mem;
        n = SPS__MEM_NVALS;
    }
    uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    /* a HI record, the value group (never split across chunks: a reader
     * resuming at a chunk's start must see whole groups) and the record */
    uint32_t words = 2 + (n ? n + 1 : 0);
    if (p + words > atomic_load_explicit(&t->end, memory_order_relaxed)) {
        int rc = thr_next_chunk(t, now);
        if (rc) {
            if (rc == -1) t->dropped++; /* else the session is gone */
            goto out;
        }
        p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    }
    if ((uint32_t)(now >> 32) != t->hi) {
        t->hi = (uint32_t)(now >> 32);
        *p++ = sps__rec_hi(t->hi);
    }
    if (n) {
        *p++ = ((uint64_t)SPS__REC_VAL_TAG << 32) | n;
        memcpy(p, vals, n * sizeof *vals);
        p += n;
    }
    *p++ = ((uint64_t)payload << 32) | (uint32_t)now;
    atomic_store_explicit(&t->pos, p, memory_order_release);
    sps__mem_slow_done(t);
out:
    pthread_mutex_unlock(&sps__g.lock);
}

/* Under the lock: drops every chunk of every thread; a live thread keeps its
 * current chunk's memory (it may be writing into it) but is sent to the slow
 * path, where it rejoins the next session.  Exited threads are freed. */
void sps__buffers_reset(void) {
    sps__bg_wait(); /* a background step may be reading these chunks */
    sps__thr_t **pp = &sps__g.threads;
    while (*pp) {
        sps__thr_t *t = *pp;
        for (sps__chunk_t *c = t->head, *n; c; c = n) {
            n = c->next;
            sps__chunk_release(c);
        }
        t->head = t->tail = t->spill_run = NULL;
        t->epoch = 0;
        if (t->exited) {
            sps__chunk_release(t->cur);
            sps__stack_free(&t->stack);
            sps__stack_free(&t->carried);
            free(t->an_seen);
            free(t->an_seen_node);
            sps__stack_free(&t->agg_stack);
            free(t->agg_acc);
            *pp = t->next_all;
            free(t);
            continue;
        }
        if (t->cur) {
            /* pos >= end: the next call takes the slow path (the owner may be
             * reading end right now: an atomic, relaxed, a plain mov on x86) */
            atomic_store_explicit(&t->end, t->cur->rec, memory_order_relaxed);
        }
        if (t->agg_acc) memset(t->agg_acc, 0, t->agg_bytes);
        t->agg_stack.n = 0;
        pp = &t->next_all;
    }
    sps__g.nthreads = 0;
    sps__g.spilled_live = 0;
    sps__spill_trim(1); /* (after a write still in flight: by the writer) */
}

/* ------------------------------------------------------------------------ */
/* Aggregate mode: statistics kept by the thread itself, no events          */
/* ------------------------------------------------------------------------ */

/* The calling thread's state, joined to the session, with at least bytes
 * of aggregate storage (zero-filled as it grows); NULL if impossible.  What
 * the storage holds is the model's (model/aggregate.c): core only keeps it,
 * clears it with a new session and frees it with the thread. */
sps__thr_t *sps__agg_thread(size_t bytes) {
    sps__thr_t *t = sps__tls;
    if (SPS__LIKELY(t->epoch == sps__g.epoch && bytes <= t->agg_bytes)) return t;
    if (t == &sps__dummy_thr) thr_ask_namer();
    pthread_mutex_lock(&sps__g.lock);
    if (t == &sps__dummy_thr) t = thr_register();
    if (t && t->epoch != sps__g.epoch) {
        t->epoch = sps__g.epoch;
        t->index = sps__g.nthreads++;
        t->first_ns = (int64_t)sps__mono_ns();
        t->agg_stack.n = 0;
        if (t->agg_acc) memset(t->agg_acc, 0, t->agg_bytes);
    }
    if (t && bytes > t->agg_bytes) {
        unsigned char *a = realloc(t->agg_acc, bytes);
        if (a) {
            memset(a + t->agg_bytes, 0, bytes - t->agg_bytes);
            t->agg_acc = a;
            t->agg_bytes = bytes;
        }
    }
    pthread_mutex_unlock(&sps__g.lock);
    return t && bytes <= t->agg_bytes ? t : NULL;
}
/* ------------------------------------------------------------------------ */
/* Thread names                                                              */
/* ------------------------------------------------------------------------ */

int sps_thread_set_name(const char *name) {
    if (!name) return SPS_EINVAL;
    size_t n = strnlen(name, sizeof tls_name - 1);
    if (name[n]) n = sps__utf8_cut(name, n); /* never half a UTF-8 sequence */
    memcpy(tls_name, name, n);
    tls_name[n] = 0;
    if (!n) { /* the namer's name again, if it has one (it calls back here) */
        thr_ask_namer();
        if (tls_name[0]) return 0;
    }
    sps__thr_t *t = sps__tls;
    if (t != &sps__dummy_thr) { /* registered: finalize reads t->name under the lock */
        pthread_mutex_lock(&sps__g.lock);
        if (n)
            memcpy(t->name, tls_name, sizeof t->name);
        else
            pthread_getname_np(pthread_self(), t->name, sizeof t->name);
        if (t->epoch == sps__g.epoch) sps__crash_thread(t); /* the new name */
        pthread_mutex_unlock(&sps__g.lock);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Recovery: a dead process's records adopted (api/recover.c)                */
/* ------------------------------------------------------------------------ */

int sps__adopt_clock(const sps__anchor_t *a, size_t n, int64_t wall_anchor_ns,
                     int64_t mono_anchor_ns) {
    pthread_mutex_lock(&sps__g.lock);
    int rc = sps__session_live() ? 0 : SPS_ENOSESSION;
    if (!rc && n) {
        sps__timemap_free(&sps__g.tm);
        for (size_t i = 0; i < n && !rc; i++)
            if (sps__timemap_add(&sps__g.tm, a[i]) == SPS_ENOMEM) rc = SPS_ENOMEM;
        sps__g.start_ns = sps__g.period_start_ns = sps__g.tm.n ? sps__g.tm.a[0].ns : 0;
        sps__g.wall_anchor_ns = wall_anchor_ns;
        sps__g.mono_anchor_ns = mono_anchor_ns;
    }
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

/* Appends rec[0, n) to t as retired chunks, each starting with the HI
 * record in effect (n > 0, rec[0] a HI record).  Under the lock. */
static int adopt_records(sps__thr_t *t, const uint64_t *rec, size_t n) {
    uint32_t room = sps__g.chunk_recs - 1;
    uint64_t seq = 0, hi = rec[0];
    for (size_t i = 0; i < n;) {
        sps__chunk_t *c = chunk_get(1);
        if (!c) return SPS_ENOMEM;
        uint32_t m = 0;
        if ((rec[i] >> 32) != SPS__REC_HI_TAG) c->rec[m++] = hi;
        while (i < n && m < room + 1) {
            if ((rec[i] >> 32) == SPS__REC_HI_TAG) hi = rec[i];
            c->rec[m++] = rec[i++];
        }
        c->n = m;
        c->seq0 = seq;
        seq += m;
        c->thr = t;
        c->next = NULL;
        if (t->tail) t->tail->next = c; else t->head = c;
        t->tail = c;
        sps__g.retired += m;
    }
    t->retired_seq = seq;
    return 0;
}

int sps__adopt_thread(int32_t tid, const char *name, const uint64_t *rec, size_t n) {
    if (!n || (rec[0] >> 32) != SPS__REC_HI_TAG) return SPS_EINVAL;
    pthread_mutex_lock(&sps__g.lock);
    int rc = sps__session_live() ? 0 : SPS_ENOSESSION;
    sps__thr_t *t = rc ? NULL : calloc(1, sizeof *t);
    if (!rc && !t) rc = SPS_ENOMEM;
    if (!rc) {
        t->tid = tid;
        snprintf(t->name, sizeof t->name, "%s", name ? name : "");
        t->epoch = sps__g.epoch;
        t->index = sps__g.nthreads++;
        t->exited = 1;
        t->an_off = -1;
        rc = adopt_records(t, rec, n);
        t->an_chunk = t->head;
        uint64_t first = ((uint64_t)(uint32_t)rec[0] << 32), last = first;
        for (size_t i = 0; i < n; i++) { /* the last record's ticks */
            if ((rec[i] >> 32) == SPS__REC_HI_TAG) last = (uint64_t)(uint32_t)rec[i] << 32;
            else last = (last & ~0xFFFFFFFFull) | (uint32_t)rec[i];
        }
        for (size_t i = 1; i < n; i++)
            if ((rec[i] >> 32) != SPS__REC_HI_TAG) {
                first |= (uint32_t)rec[i];
                break;
            }
        t->first_ns = sps__timemap_ns(&sps__g.tm, first);
        t->last_ns = sps__timemap_ns(&sps__g.tm, last);
        t->next_all = sps__g.threads;
        sps__g.threads = t;
    }
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Joining without recording (steps, schedule.c)                             */
/* ------------------------------------------------------------------------ */

/* A thread that marks a step before recording any region needs its session
 * index all the same: this joins it as its first record would (thr_join
 * writes only the chunk's timestamp record, which no reader counts). */
int64_t sps__thread_join(void) {
    sps__thr_t *t = sps__tls;
    if (t != &sps__dummy_thr && __atomic_load_n(&t->epoch, __ATOMIC_RELAXED) == sps__g.epoch &&
        sps__state_load() != SPS__OFF)
        return t->index;
    if (t == &sps__dummy_thr) thr_ask_namer();
    pthread_mutex_lock(&sps__g.lock);
    int st = sps__state_load();
    int64_t rc;
    if (st == SPS__AGGREGATE) rc = SPS_EMODE;
    else if (st != SPS__EVENTS && st != SPS__EVENTS_EXTRA) rc = SPS_ENOSESSION;
    else if (t == &sps__dummy_thr && !(t = thr_register())) rc = SPS_ENOMEM;
    else if (t->epoch != sps__g.epoch && thr_join(t, sps__ticks())) rc = SPS_ENOMEM;
    else rc = t->index;
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}
