/* session.c -- session lifecycle (setup, finalize, shutdown, fork) and the
 * queries of the public API.
 *
 * sps_finalize works in three steps: under the session lock it brings the
 * analysis up to date and takes a snapshot of the period (moving retired
 * chunks out, copying each thread's current chunk); without the lock it
 * writes the snapshot to "<path>.tmp-<pid>" and renames it into place; then
 * it gives the chunks back to the pool.  Recording goes on in every thread
 * meanwhile.  If the write fails the snapshot is kept as "pending" and
 * written, together with the next period, by the next finalize. */
#include "sps_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

sps__session_t sps__g = {.lock = PTHREAD_MUTEX_INITIALIZER, .spill_fd = -1};

#define DEFAULT_MEMORY (32u << 20)
#define DEFAULT_CHUNK (64u << 10)

/* ------------------------------------------------------------------------ */
/* Process-wide set-up: thread key, fork handlers                            */
/* ------------------------------------------------------------------------ */

static void atfork_prepare(void) { pthread_mutex_lock(&sps__g.lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&sps__g.lock); }

/* The child must never write into the parent's files: its copy of the
 * session is switched off, the spill file is let go, and the other threads'
 * states (those threads do not exist here) are marked exited.  The child may
 * start its own session with sps_setup. */
static void atfork_child(void) {
    pthread_mutex_init(&sps__g.lock, NULL);
    sps__state_store(SPS__OFF);
    if (sps__g.spill_fd >= 0) close(sps__g.spill_fd);
    sps__g.spill_fd = -1;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        if (t != sps__tls) t->exited = 1;
    sps__stacks_atfork_child(); /* its locks may be held by a thread that
                                   does not exist here */
}

static void process_init(void) {
    sps__clock_init();
    sps__thread_key_init();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void ensure_process_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, process_init);
}

static int session_live(void) {
    return sps__state_load() != SPS__OFF && sps__g.pid == getpid();
}

/* ------------------------------------------------------------------------ */
/* Setup and shutdown                                                        */
/* ------------------------------------------------------------------------ */

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int check_config(const sps_config_t *c) {
    if (c->overflow < SPS_OVERFLOW_SPILL || c->overflow > SPS_OVERFLOW_GROW) return SPS_EINVAL;
    if (c->chunk_size && (c->chunk_size < 4096 || c->chunk_size > (16u << 20) ||
                          (c->chunk_size & (c->chunk_size - 1))))
        return SPS_EINVAL;
    if (c->memory_limit && c->memory_limit < 2 * (c->chunk_size ? c->chunk_size : DEFAULT_CHUNK))
        return SPS_EINVAL;
    if (c->rank < 0 || c->size < 1 || c->rank >= c->size) return SPS_EINVAL;
    if (c->compress_threshold < -1) return SPS_EINVAL;
    return 0;
}

static void free_session_strings(void) {
    free(sps__g.file_path);
    free(sps__g.label);
    free(sps__g.spill_dir);
    sps__g.file_path = sps__g.label = sps__g.spill_dir = NULL;
}

static void snap_free(sps__snap_t *s);

/* Under the lock: frees pooled chunk memory until at most keep chunks are
 * allocated (threads' current chunks are never freed here). */
static void pool_trim(size_t keep) {
    while (sps__g.mem_chunks > keep && sps__g.free_mem) {
        sps__chunk_t *c = sps__g.free_mem;
        sps__g.free_mem = c->next;
        free(c->rec);
        free(c);
        sps__g.mem_chunks--;
    }
}

/* Under the lock: forgets everything recorded (not the registry). */
static void session_clear(void) {
    sps__buffers_reset();
    sps__counters_reset();
    if (sps__g.pending) {
        snap_free(sps__g.pending);
        sps__g.pending = NULL;
    }
    if (sps__g.acc_cap) {
        memset(sps__g.cum, 0, sps__g.acc_cap * sizeof *sps__g.cum);
        memset(sps__g.per, 0, sps__g.acc_cap * sizeof *sps__g.per);
    }
    if (sps__g.registered_cap) memset(sps__g.registered, 0, sps__g.registered_cap);
    sps__tree_free(&sps__g.tree);
    sps__timemap_free(&sps__g.tm);
    sps__g.misuse = 0;
}

int sps_setup(const sps_config_t *cfg) {
    static const sps_config_t defaults = SPS_CONFIG_INIT;
    if (!cfg) cfg = &defaults;
    int rc = check_config(cfg);
    if (rc) return rc;
    ensure_process_init();
    /* MPI (src/ext/mpi.c): collective when MPI is initialised; a no-op in a
     * build without MPI.  Runs before the lock: it talks to other ranks. */
    sps__dist_t dist = {0};
    if (session_live()) return SPS_EACTIVE;
    rc = cfg->local ? 0 : sps__mpi_setup_hook(&dist);
    if (rc) return rc;
    pthread_mutex_lock(&sps__g.lock);
    if (session_live()) {
        pthread_mutex_unlock(&sps__g.lock);
        return SPS_EACTIVE;
    }
    sps__state_store(SPS__OFF);
    session_clear();
    free_session_strings();
    sps__g.cfg = *cfg;
    sps__g.dist = dist;
    if (dist.on) {
        sps__g.cfg.rank = dist.rank;
        sps__g.cfg.size = dist.size;
    }
    sps__g.file_path = dup_or_null(cfg->file_path);
    sps__g.label = dup_or_null(cfg->label);
    sps__g.spill_dir = dup_or_null(cfg->spill_dir);
    size_t chunk = cfg->chunk_size ? cfg->chunk_size : DEFAULT_CHUNK;
    size_t mem = cfg->memory_limit ? cfg->memory_limit : DEFAULT_MEMORY;
    if (sps__g.chunk_recs != chunk / 8) { /* pooled memory has the old size */
        for (sps__chunk_t *c = sps__g.free_mem, *n; c; c = n) {
            n = c->next;
            free(c->rec);
            free(c);
            sps__g.mem_chunks--;
        }
        sps__g.free_mem = NULL; /* threads' current chunks: see thr_join */
    }
    sps__g.chunk_recs = (uint32_t)(chunk / 8);
    sps__g.budget_chunks = mem / chunk;
    pool_trim(sps__g.budget_chunks); /* a larger earlier session's pool */
    sps__g.epoch++;
    sps__g.pid = getpid();
    sps__g.mode = cfg->aggregate ? SPS__AGGREGATE : SPS__EVENTS;
    sps__anchor_t a = sps__anchor_now();
    sps__timemap_add(&sps__g.tm, a);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    sps__g.wall_anchor_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
    sps__g.mono_anchor_ns = (int64_t)sps__mono_ns();
    sps__g.start_ns = sps__g.period_start_ns = a.ns;
    sps__state_store(sps__g.mode);
    pthread_mutex_unlock(&sps__g.lock);
    return 0;
}

int sps_shutdown(void) {
    ensure_process_init();
    pthread_mutex_lock(&sps__g.lock);
    sps__state_store(SPS__OFF);
    int mine = sps__g.pid == getpid();
    if (mine) {
        session_clear();
        pool_trim(0);
    }
    int dist_on = sps__g.dist.on;
    sps__g.dist.on = 0;
    pthread_mutex_unlock(&sps__g.lock);
    if (mine && dist_on) sps__mpi_shutdown_hook();
    return 0;
}

int sps_is_active(void) { return session_live(); }

int sps_set_file_path(const char *path) {
    pthread_mutex_lock(&sps__g.lock);
    int rc = SPS_ENOSESSION;
    if (session_live()) {
        char *p = dup_or_null(path);
        rc = (path && !p) ? SPS_ENOMEM : 0;
        if (!rc) {
            free(sps__g.file_path);
            sps__g.file_path = p;
        }
    }
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

int64_t sps_now_ns(void) { return (int64_t)sps__mono_ns(); }

uint64_t sps_dropped(void) {
    uint64_t n = 0;
    pthread_mutex_lock(&sps__g.lock);
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        if (t->epoch == sps__g.epoch) n += t->dropped;
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}

uint64_t sps_misuse_count(void) {
    pthread_mutex_lock(&sps__g.lock);
    if (sps__g.mode == SPS__EVENTS && session_live()) {
        sps__timemap_add(&sps__g.tm, sps__anchor_now());
        for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) sps__analyze_thread(t);
    }
    uint64_t n = __atomic_load_n(&sps__g.misuse, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Regions                                                                   */
/* ------------------------------------------------------------------------ */

/* Under the lock: marks r registered in the session. */
static void mark_registered(sps_region_t r) {
    if (r >= sps__g.registered_cap) {
        uint32_t cap = r + 1024;
        uint8_t *p = realloc(sps__g.registered, cap);
        if (!p) return;
        memset(p + sps__g.registered_cap, 0, cap - sps__g.registered_cap);
        sps__g.registered = p;
        sps__g.registered_cap = cap;
    }
    sps__g.registered[r] = 1;
}

sps_region_t sps_region(const char *name) {
    sps_region_t r = sps__registry_intern(name);
    if (r != SPS_REGION_INVALID && sps__state_load() != SPS__OFF) {
        pthread_mutex_lock(&sps__g.lock);
        mark_registered(r);
        pthread_mutex_unlock(&sps__g.lock);
    }
    return r;
}

const char *sps_region_name(sps_region_t r) { return sps__registry_name(r); }
uint32_t sps_region_count(void) { return sps__registry_count(); }

/* Under the lock: brings every thread's analysis up to date. */
static void analyze_all(void) {
    if (sps__g.mode != SPS__EVENTS) return;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) sps__analyze_thread(t);
}

/* Reads thread t's aggregate accumulator of r consistently (seqlock). */
__attribute__((no_sanitize("thread")))
static sps__acc_t agg_read(const sps__thr_t *t, sps_region_t r) {
    sps__acc_t a;
    for (;;) {
        uint32_t s0 = __atomic_load_n(&t->agg_seq, __ATOMIC_ACQUIRE);
        a = t->agg_acc[r];
        atomic_thread_fence(memory_order_acquire);
        if (!(s0 & 1) && __atomic_load_n(&t->agg_seq, __ATOMIC_RELAXED) == s0) return a;
    }
}

/* Under the lock: session-cumulative accumulator of r. */
static sps__acc_t cum_acc(sps_region_t r) {
    sps__acc_t a = {0};
    if (sps__g.mode == SPS__AGGREGATE) {
        for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
            if (t->epoch == sps__g.epoch && r < t->agg_cap) {
                sps__acc_t x = agg_read(t, r);
                sps__acc_to_ns(&x, &sps__g.tm);
                sps__acc_merge(&a, &x);
            }
    } else if (r < sps__g.acc_cap) {
        a = sps__g.cum[r];
    }
    return a;
}

/* Under the lock: a fresh anchor, then the analysis up to now (so every
 * analyzed timestamp lies before the last anchor and converts stably). */
static void refresh(void) {
    sps__timemap_add(&sps__g.tm, sps__anchor_now());
    analyze_all();
}

int sps_region_stats(sps_region_t r, sps_stats_t *out) {
    if (!out) return SPS_EINVAL;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&sps__g.lock);
    int rc = 0;
    if (!session_live()) rc = SPS_ENOSESSION;
    else if (r == 0 || r >= sps__registry_count()) rc = SPS_ENOREGION;
    else {
        refresh();
        sps__acc_t a = cum_acc(r);
        sps__acc_stats(&a, out);
    }
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

static size_t list_regions(sps_region_t *out, size_t cap, int recorded) {
    size_t n = 0;
    pthread_mutex_lock(&sps__g.lock);
    if (session_live()) {
        refresh();
        uint32_t count = sps__registry_count();
        for (sps_region_t r = 1; r < count; r++) {
            int reg = r < sps__g.registered_cap && sps__g.registered[r];
            int rec = cum_acc(r).count > 0;
            if (recorded ? rec : (reg || rec)) {
                if (n < cap) out[n] = r;
                n++;
            }
        }
    }
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}

size_t sps_regions_registered(sps_region_t *out, size_t cap) { return list_regions(out, cap, 0); }
size_t sps_regions_recorded(sps_region_t *out, size_t cap) { return list_regions(out, cap, 1); }

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                 */
/* ------------------------------------------------------------------------ */

static void snap_free(sps__snap_t *s) {
    if (!s) return;
    free(s->counters);
    free(s->segs);
    for (size_t i = 0; i < s->ncopies; i++) free(s->copies[i]);
    free(s->copies);
    for (uint32_t t = 0; t < s->nthreads; t++) {
        if (s->carried) sps__stack_free(&s->carried[t]);
        if (s->open) sps__stack_free(&s->open[t]);
    }
    free(s->carried);
    free(s->open);
    free(s->per);
    free(s->node_per);
    free(s->regs);
    free(s->node_parent);
    free(s->node_region);
    free(s->threads);
    free(s->tnames);
    free(s->label);
    sps__timemap_free(&s->tm);
    free(s);
}

/* Under the lock: the facts the writer and the table need (regions, tree
 * shape, threads, metadata), copied so they can be used without the lock. */
static int snap_describe(sps__snap_t *s) {
    uint32_t count = sps__registry_count();
    s->regs = malloc(count * sizeof *s->regs);
    s->node_parent = malloc((sps__g.tree.len + 1) * sizeof *s->node_parent);
    s->node_region = malloc((sps__g.tree.len + 1) * sizeof *s->node_region);
    s->threads = calloc(s->nthreads + 1, sizeof *s->threads);
    s->tnames = calloc(s->nthreads + 1, sizeof *s->tnames);
    if (!s->regs || !s->node_parent || !s->node_region || !s->threads || !s->tnames)
        return SPS_ENOMEM;
    for (sps_region_t r = 1; r < count; r++) {
        int reg = r < sps__g.registered_cap && sps__g.registered[r];
        int rec = (r < s->nregions && s->per[r].count) || cum_acc(r).count;
        if (reg || rec) s->regs[s->nregs++] = r;
    }
    for (size_t i = 0; i < s->nnodes; i++) {
        s->node_parent[i] = sps__g.tree.n[i].parent;
        s->node_region[i] = sps__g.tree.n[i].region;
    }
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all) {
        if (t->epoch != sps__g.epoch || t->index >= s->nthreads) continue;
        sps__thread_info_t *ti = &s->threads[t->index];
        memcpy(s->tnames[t->index], t->name, sizeof t->name);
        *ti = (sps__thread_info_t){t->index, t->tid, t->tid, t->first_ns,
                                   t->exited ? t->last_ns : s->end_ns, -1,
                                   s->tnames[t->index]};
        s->dropped += t->dropped;
        for (size_t k = 0; k < s->open[t->index].n; k++) s->open_calls++;
    }
    s->aggregate = sps__g.mode == SPS__AGGREGATE;
    s->rank = sps__g.cfg.rank;
    s->size = sps__g.cfg.size;
    s->compress_threshold = sps__g.cfg.compress_threshold;
    s->misuse = sps__g.misuse;
    s->wall_anchor_ns = sps__g.wall_anchor_ns;
    s->mono_anchor_ns = sps__g.mono_anchor_ns;
    s->label = sps__g.label ? strdup(sps__g.label) : NULL;
    s->has_clock_offset = sps__g.dist.has_clock_offset;
    s->clock_offset_ns = sps__g.dist.clock_offset_ns;
    s->clock_offset_error_ns = sps__g.dist.clock_offset_error_ns;
    return 0;
}

static int snap_push_seg(sps__snap_t *s, sps__seg_t g) {
    if (s->nsegs == s->capsegs) {
        size_t cap = s->capsegs ? s->capsegs * 2 : 64;
        sps__seg_t *p = realloc(s->segs, cap * sizeof *p);
        if (!p) return SPS_ENOMEM;
        s->segs = p;
        s->capsegs = cap;
    }
    s->segs[s->nsegs++] = g;
    return 0;
}

static const uint64_t *snap_copy(sps__snap_t *s, const uint64_t *rec, uint32_t n) {
    if (s->ncopies == s->capcopies) {
        size_t cap = s->capcopies ? s->capcopies * 2 : 16;
        uint64_t **p = realloc(s->copies, cap * sizeof *p);
        if (!p) return NULL;
        s->copies = p;
        s->capcopies = cap;
    }
    uint64_t *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) return NULL;
    memcpy(c, rec, n * sizeof *c);
    s->copies[s->ncopies++] = c;
    return c;
}

/* Threads of the current epoch by index (NULL holes possible). */
static sps__thr_t **threads_by_index(void) {
    sps__thr_t **v = calloc(sps__g.nthreads ? sps__g.nthreads : 1, sizeof *v);
    if (!v) return NULL;
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        if (t->epoch == sps__g.epoch && t->index < sps__g.nthreads) v[t->index] = t;
    return v;
}

/* Adds thread t's records since the last finalize, up to the analyzer's
 * cursor, to s.  take: move the retired chunks into s and mark everything
 * consumed; else just reference the live memory (the caller keeps the lock
 * while it reads).  Call right after the analyzer caught up. */
static int snap_thread(sps__snap_t *s, sps__thr_t *t, int take) {
    int rc = 0;
    sps__chunk_t *c = t->head;
    for (sps__chunk_t *n; c && !rc; c = n) {
        n = c->next;
        rc = snap_push_seg(s, (sps__seg_t){t->index, c->rec, c->file_off, c->n,
                                          c->consumed, c->seq0});
        if (take && !rc) {
            c->next = s->owned;
            s->owned = c;
            t->head = n;
        }
    }
    if (take && !rc && !t->head) t->tail = NULL;
    if (rc || !t->cur || t->dropping) return rc;
    /* Stop where the analyzer stopped, not at the current position: the
     * owner keeps appending, and records the statistics have not seen must
     * stay for the next period or counts and rows would disagree. */
    uint32_t n = t->an_chunk == t->cur
        ? t->an_pos
        : (uint32_t)(atomic_load_explicit(&t->pos, memory_order_acquire) - t->cur->rec);
    const uint64_t *rec = take ? snap_copy(s, t->cur->rec, n) : t->cur->rec;
    if (!rec) return SPS_ENOMEM;
    rc = snap_push_seg(s, (sps__seg_t){t->index, rec, -1, n, t->cur->consumed, t->cur->seq0});
    if (take && !rc) t->cur->consumed = n;
    return rc;
}

/* Under the lock: the period's records, stacks and statistics. */
static sps__snap_t *snap_build(int take) {
    sps__snap_t *s = calloc(1, sizeof *s);
    sps__thr_t **tv = threads_by_index();
    uint32_t nt = sps__g.nthreads;
    if (!s || !tv) goto fail;
    s->nthreads = nt;
    s->carried = calloc(nt ? nt : 1, sizeof *s->carried);
    s->open = calloc(nt ? nt : 1, sizeof *s->open);
    if (!s->carried || !s->open) goto fail;
    for (uint32_t i = 0; i < nt; i++) {
        if (!tv[i]) continue;
        if (snap_thread(s, tv[i], take) ||
            sps__stack_copy(&s->carried[i], &tv[i]->carried) ||
            sps__stack_copy(&s->open[i], &tv[i]->stack))
            goto fail;
        if (take && sps__stack_copy(&tv[i]->carried, &tv[i]->stack)) goto fail;
    }
    for (size_t i = 0; i < sps__g.tm.n; i++) sps__timemap_add(&s->tm, sps__g.tm.a[i]);
    s->start_ns = sps__g.period_start_ns;
    s->end_ns = sps__g.tm.n ? sps__g.tm.a[sps__g.tm.n - 1].ns : 0;
    free(tv);
    return s;
fail:
    free(tv);
    snap_free(s);
    return NULL;
}

/* Under the lock: moves the period statistics into s (fresh ones start). */
static int snap_take_stats(sps__snap_t *s) {
    s->nregions = sps__g.acc_cap;
    s->per = calloc(s->nregions ? s->nregions : 1, sizeof *s->per);
    s->nnodes = sps__g.tree.len;
    s->node_per = calloc(s->nnodes ? s->nnodes : 1, sizeof *s->node_per);
    if (!s->per || !s->node_per) return SPS_ENOMEM;
    if (s->nregions) {
        memcpy(s->per, sps__g.per, s->nregions * sizeof *s->per);
        memset(sps__g.per, 0, s->nregions * sizeof *sps__g.per);
    }
    for (size_t i = 0; i < s->nnodes; i++) {
        s->node_per[i] = sps__g.tree.n[i].per;
        memset(&sps__g.tree.n[i].per, 0, sizeof sps__g.tree.n[i].per);
    }
    return 0;
}

/* Under the lock: puts a failed period back in front of the session's
 * pending data (merging with an older pending one). */
static void snap_stash(sps__snap_t *s) {
    sps__snap_t *old = sps__g.pending;
    sps__g.pending = s;
    if (!old) return;
    /* old came first: prepend its segments per thread, keep its carried */
    sps__seg_t *segs = malloc((old->nsegs + s->nsegs + 1) * sizeof *segs);
    if (!segs) return; /* keep the newer one only; the older is lost */
    size_t n = 0, i = 0, j = 0;
    for (uint32_t t = 0; t < s->nthreads || t < old->nthreads; t++) {
        while (i < old->nsegs && old->segs[i].thread == t) segs[n++] = old->segs[i++];
        while (j < s->nsegs && s->segs[j].thread == t) segs[n++] = s->segs[j++];
    }
    free(s->segs);
    s->segs = segs;
    s->nsegs = s->capsegs = n;
    for (uint32_t t = 0; t < s->nthreads && t < old->nthreads; t++) {
        sps__stack_t tmp = s->carried[t];
        s->carried[t] = old->carried[t];
        old->carried[t] = tmp;
    }
    for (uint32_t r = 0; r < s->nregions && r < old->nregions; r++)
        sps__acc_merge(&s->per[r], &old->per[r]);
    for (size_t k = 0; k < s->nnodes && k < old->nnodes; k++)
        sps__acc_merge(&s->node_per[k], &old->node_per[k]);
    s->start_ns = old->start_ns;
    if (old->ncounters) { /* the older samples first */
        sps_counter_sample_t *c = malloc((old->ncounters + s->ncounters) * sizeof *c);
        if (c) {
            memcpy(c, old->counters, old->ncounters * sizeof *c);
            if (s->ncounters) memcpy(c + old->ncounters, s->counters, s->ncounters * sizeof *c);
            free(s->counters);
            s->counters = c;
            s->ncounters += old->ncounters;
        }
    }
    s->counters_dropped += old->counters_dropped;
    /* chunks and copies now belong to s */
    sps__chunk_t **tail = &s->owned;
    while (*tail) tail = &(*tail)->next;
    *tail = old->owned;
    old->owned = NULL;
    for (size_t k = 0; k < old->ncopies; k++) {
        if (s->ncopies == s->capcopies) {
            size_t cap = s->capcopies * 2 + 16;
            uint64_t **p = realloc(s->copies, cap * sizeof *p);
            if (!p) break;
            s->copies = p;
            s->capcopies = cap;
        }
        s->copies[s->ncopies++] = old->copies[k];
        old->copies[k] = NULL;
    }
    snap_free(old);
}

/* Under the lock: takes the pending period (if any) into s. */
static void snap_absorb_pending(sps__snap_t *s) {
    sps__snap_t *p = sps__g.pending;
    if (!p) return;
    sps__g.pending = NULL;
    /* reuse snap_stash's merge: make p pending, stash s on top of it */
    sps__g.pending = p;
    snap_stash(s);
    sps__g.pending = NULL;
}

/* Under the lock: gives the snapshot's chunks back to the pool. */
static void snap_release(sps__snap_t *s) {
    for (sps__chunk_t *c = s->owned, *n; c; c = n) {
        n = c->next;
        sps__chunk_release(c);
    }
    s->owned = NULL;
    if (sps__g.spilled_live == 0 && sps__g.spill_fd >= 0 && sps__g.spill_end > 0 &&
        ftruncate(sps__g.spill_fd, 0) == 0)
        sps__g.spill_end = 0;
}

/* ------------------------------------------------------------------------ */
/* Finalize                                                                  */
/* ------------------------------------------------------------------------ */

int sps_finalize_to(const char *path) {
    return sps__finalize_ex(path, sps__g.cfg.verbose ? stderr : NULL);
}

/* sps_finalize_to, with the table printed to table_fp (NULL: no table).
 * Under MPI the finalize is collective (src/ext/mpi.c), which writes this
 * process's part with sps__finalize_local. */
int sps__finalize_ex(const char *path, FILE *table_fp) {
    if (session_live() && sps__g.dist.on) return sps__mpi_finalize_hook(path, table_fp);
    return sps__finalize_local(path, table_fp);
}

int sps__finalize_local(const char *path, FILE *table_fp) {
    ensure_process_init();
    pthread_mutex_lock(&sps__g.lock);
    if (!session_live()) {
        pthread_mutex_unlock(&sps__g.lock);
        return SPS_ENOSESSION;
    }
    char *p = path ? strdup(path) : NULL;
    sps__timemap_add(&sps__g.tm, sps__anchor_now());
    analyze_all();
    sps__snap_t *s = snap_build(1);
    if (s && snap_take_stats(s)) {
        snap_stash(s); /* nothing lost: written next time */
        s = NULL;
    }
    if (s) snap_absorb_pending(s);
    if (s) sps__counters_take(s);
    if (s && sps__g.mode == SPS__AGGREGATE) /* aggregate files: whole session */
        for (uint32_t r = 1; r < s->nregions; r++) s->per[r] = cum_acc(r);
    if (s && snap_describe(s)) {
        snap_stash(s);
        s = NULL;
    }
    if (s) sps__g.period_start_ns = s->end_ns;
    pthread_mutex_unlock(&sps__g.lock);
    if (!s) {
        free(p);
        return SPS_ENOMEM;
    }
    int rc = sps__finalize_write(s, p, table_fp);
    pthread_mutex_lock(&sps__g.lock);
    if (rc) {
        snap_stash(s);
    } else {
        snap_release(s);
        snap_free(s);
    }
    pthread_mutex_unlock(&sps__g.lock);
    free(p);
    return rc;
}

int sps_finalize(void) {
    pthread_mutex_lock(&sps__g.lock);
    char *p = sps__g.file_path ? strdup(sps__g.file_path) : NULL;
    int nomem = sps__g.file_path && !p;
    pthread_mutex_unlock(&sps__g.lock);
    if (nomem) return SPS_ENOMEM;
    int rc = sps_finalize_to(p);
    free(p);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Per-call queries                                                          */
/* ------------------------------------------------------------------------ */

size_t sps_region_calls(sps_region_t r, int64_t *starts, int64_t *durations,
                        size_t cap) {
    size_t n = 0;
    pthread_mutex_lock(&sps__g.lock);
    if (session_live() && sps__g.mode == SPS__EVENTS && r > 0 &&
        r < sps__registry_count()) {
        sps__timemap_add(&sps__g.tm, sps__anchor_now());
        analyze_all();
        sps__snap_t *s = snap_build(0);
        if (s) {
            sps__snap_t *p = sps__g.pending;
            if (p) { /* pending calls come first */
                sps__g.pending = NULL;
                n = sps__collect_calls(p, r, starts, durations, cap);
                sps__g.pending = p;
                if (starts) starts += n < cap ? n : cap;
                if (durations) durations += n < cap ? n : cap;
                cap = n < cap ? cap - n : 0;
            }
            n += sps__collect_calls(s, r, starts, durations, cap);
            snap_free(s);
        }
    }
    pthread_mutex_unlock(&sps__g.lock);
    return n;
}

size_t sps_region_durations(sps_region_t r, int64_t *out, size_t cap) {
    return sps_region_calls(r, NULL, out, cap);
}

int sps_print_summary(void *file) {
    FILE *fp = file ? (FILE *)file : stderr;
    pthread_mutex_lock(&sps__g.lock);
    if (!session_live()) {
        pthread_mutex_unlock(&sps__g.lock);
        return SPS_ENOSESSION;
    }
    refresh();
    uint32_t n = sps__registry_count();
    sps__acc_t *acc = calloc(n, sizeof *acc);
    size_t nn = sps__g.tree.len;
    sps__acc_t *nodes = calloc(nn + 1, sizeof *nodes);
    int32_t *par = calloc(nn + 1, sizeof *par);
    uint32_t *reg = calloc(nn + 1, sizeof *reg);
    int rc = acc && nodes && par && reg ? 0 : SPS_ENOMEM;
    for (uint32_t r = 1; !rc && r < n; r++) acc[r] = cum_acc(r);
    for (size_t i = 0; !rc && i < nn; i++) {
        nodes[i] = sps__g.tree.n[i].cum;
        par[i] = sps__g.tree.n[i].parent;
        reg[i] = sps__g.tree.n[i].region;
    }
    int64_t span = sps__g.tm.a[sps__g.tm.n - 1].ns - sps__g.start_ns;
    pthread_mutex_unlock(&sps__g.lock);
    if (!rc) rc = sps__print_accs(fp, acc, n, nodes, par, reg, nn, span);
    free(acc);
    free(nodes);
    free(par);
    free(reg);
    return rc;
}

const char *sps_clock_source(void) {
    ensure_process_init();
    return sps__use_tsc ? "tsc" : "monotonic";
}

int sps_finalize_print(const char *path, void *table_file) {
    return sps__finalize_ex(path, (FILE *)table_file);
}

int64_t sps_session_start_ns(void) {
    pthread_mutex_lock(&sps__g.lock);
    int64_t t = session_live() ? sps__g.start_ns : 0;
    pthread_mutex_unlock(&sps__g.lock);
    return t;
}

/* ------------------------------------------------------------------------ */
/* Spans (the torch-style face's view of a session)                          */
/* ------------------------------------------------------------------------ */

typedef struct spans_sink {
    sps_span_t *v;
    int64_t *ids, *pids; /* call ids and parent call ids, beside v */
    size_t n, cap;
    int64_t from, to;
    int stacks;          /* look native stacks up (capture was ever on) */
} spans_sink_t;

static int spans_grow(spans_sink_t *k) {
    size_t cap = k->cap ? k->cap * 2 : 1024;
    sps_span_t *v = realloc(k->v, cap * sizeof *v);
    if (v) k->v = v;
    int64_t *a = realloc(k->ids, cap * sizeof *a);
    if (a) k->ids = a;
    int64_t *b = realloc(k->pids, cap * sizeof *b);
    if (b) k->pids = b;
    if (!v || !a || !b) return SPS_ENOMEM;
    k->cap = cap;
    return 0;
}

/* Pass sink: keeps the calls that lie inside the window. */
static int spans_end(void *ctx, const sps__call_t *c) {
    spans_sink_t *k = ctx;
    if ((int64_t)c->start < k->from || (int64_t)c->end > k->to) return 0;
    if (k->n == k->cap && spans_grow(k)) return SPS_ENOMEM;
    uint32_t stack = k->stacks ? sps__stack_lookup(c->thread, sps__g.epoch, c->seq) : 0;
    k->v[k->n] = (sps_span_t){(int64_t)c->start, (int64_t)c->end, (int64_t)c->self,
                              -1, c->region, c->thread, c->depth, stack};
    k->ids[k->n] = c->call_id;
    k->pids[k->n] = c->parent_id;
    k->n++;
    return 0;
}

typedef struct { int64_t id; size_t i; } id_ix_t;
static int id_ix_cmp(const void *a, const void *b) {
    const id_ix_t *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Sorts k's spans from index first on by call id (start order) and turns
 * parent call ids into indexes.  Ends arrive in end order; ids are start
 * order, so one sort puts every parent before its children. */
static int spans_order(spans_sink_t *k, size_t first) {
    size_t m = k->n - first;
    id_ix_t *ix = malloc((m ? m : 1) * sizeof *ix);
    sps_span_t *tmp = malloc((m ? m : 1) * sizeof *tmp);
    int64_t *pid = malloc((m ? m : 1) * sizeof *pid);
    if (!ix || !tmp || !pid) {
        free(ix), free(tmp), free(pid);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < m; i++) ix[i] = (id_ix_t){k->ids[first + i], first + i};
    qsort(ix, m, sizeof *ix, id_ix_cmp);
    for (size_t i = 0; i < m; i++) {
        tmp[i] = k->v[ix[i].i];
        pid[i] = k->pids[ix[i].i];
    }
    for (size_t i = 0; i < m; i++) {
        k->v[first + i] = tmp[i];
        k->ids[first + i] = ix[i].id;
    }
    for (size_t i = 0; i < m; i++) {
        id_ix_t key = {pid[i], 0};
        id_ix_t *hit = pid[i] < 0 ? NULL : bsearch(&key, ix, m, sizeof *ix, id_ix_cmp);
        k->v[first + i].parent = hit ? (int64_t)(first + (size_t)(hit - ix)) : -1;
    }
    free(ix), free(tmp), free(pid);
    return 0;
}

static int spans_of(const sps__snap_t *s, spans_sink_t *k) {
    size_t first = k->n;
    sps__pass_cb_t cb = {k, NULL, spans_end};
    int rc = sps__pass_run(s, &cb, NULL);
    return rc ? rc : spans_order(k, first);
}

int sps_spans(int64_t from_ns, int64_t to_ns, sps_span_t **out, size_t *n) {
    if (!out || !n) return SPS_EINVAL;
    *out = NULL;
    *n = 0;
    spans_sink_t k = {.from = from_ns, .to = to_ns};
    int rc = 0;
    pthread_mutex_lock(&sps__g.lock);
    /* without any capture every lookup would be two lock pairs for nothing */
    k.stacks = sps__stacks_used();
    if (!session_live()) rc = SPS_ENOSESSION;
    else if (sps__g.mode != SPS__EVENTS) rc = SPS_EMODE;
    else if (from_ns <= to_ns) { /* an empty window only probes the mode */
        refresh();
        sps__snap_t *s = snap_build(0);
        if (!s) rc = SPS_ENOMEM;
        if (!rc && sps__g.pending) rc = spans_of(sps__g.pending, &k); /* older first */
        if (!rc) rc = spans_of(s, &k);
        snap_free(s);
    }
    pthread_mutex_unlock(&sps__g.lock);
    free(k.ids);
    free(k.pids);
    if (rc) {
        free(k.v);
        return rc;
    }
    *out = k.v;
    *n = k.n;
    return 0;
}

void sps_free(void *p) { free(p); }

int sps_thread_info(uint32_t i, sps_thread_t *out) {
    if (!out) return SPS_EINVAL;
    memset(out, 0, sizeof *out);
    int rc = SPS_EINVAL;
    pthread_mutex_lock(&sps__g.lock);
    if (!session_live()) rc = SPS_ENOSESSION;
    else
        for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
            if (t->epoch == sps__g.epoch && t->index == i) {
                out->native_id = t->tid;
                out->first_ns = t->first_ns;
                memcpy(out->name, t->name, sizeof out->name);
                out->name[sizeof out->name - 1] = 0;
                rc = 0;
                break;
            }
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

int64_t sps_thread_current(void) {
    sps__thr_t *t = sps__tls;
    if (!t || t == &sps__dummy_thr || !session_live()) return -1;
    return __atomic_load_n(&t->epoch, __ATOMIC_RELAXED) == sps__g.epoch ? (int64_t)t->index : -1;
}
