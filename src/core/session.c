/* session.c -- the session's lifecycle (open, close, fork) and its
 * snapshots: what a finalize or a query takes out of the recording.
 *
 * A snapshot holds a period's records (retired chunks moved out, each
 * thread's current chunk copied), the open calls at its start and end, and
 * the facts a writer needs.  What the records mean (statistics, the tree)
 * is the model's; the public calls that put the two together are the api
 * layer's (src/api/).  Core calls neither. */
#include "core/core.h"
#include "core/emit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

sps__session_t sps__g = {.lock = PTHREAD_MUTEX_INITIALIZER, .spill_fd = -1,
                          .sp = {.work = PTHREAD_COND_INITIALIZER,
                                 .done = PTHREAD_COND_INITIALIZER}};

#define DEFAULT_MEMORY (32u << 20)
#define DEFAULT_CHUNK (64u << 10)

/* ------------------------------------------------------------------------ */
/* Process-wide set-up: thread key, fork handlers                            */
/* ------------------------------------------------------------------------ */

/* A child must not inherit an analysis half done by the writer, which it
 * does not have: the fork waits for the writer's background step. */
static void atfork_prepare(void) {
    pthread_mutex_lock(&sps__g.lock);
    sps__bg_wait();
    sps__perf_atfork_prepare(); /* its lock after the session's, as setup takes them */
    /* the leaf locks: no other thread is inside one of them at the fork */
    sps__rinfo_fork_lock(1);
    sps__tasks_fork_lock(1);
    sps__meta_fork_lock(1);
    sps__registry_fork_lock(1);
    /* not the crash log's: fork.c's prepare, which runs after this one,
     * analyzes (and so logs an anchor); a child closes the log anyway */
}
static void atfork_parent(void) {
    sps__registry_fork_lock(0);
    sps__meta_fork_lock(0);
    sps__tasks_fork_lock(0);
    sps__rinfo_fork_lock(0);
    sps__perf_atfork_parent();
    pthread_mutex_unlock(&sps__g.lock);
}

/* The child must never write into the parent's files: its chunk mappings
 * become private memory (crash.c), its copy of the session is switched
 * off, the spill file is let go (and with it the spill writer's work: that
 * thread does not exist here), and the other threads' states (those
 * threads do not exist here either) are marked exited.  Then the fork
 * hook (api/fork.c) opens the child's own session, unless SPANSCOPE_FORK
 * is off; the child may also start one with sps_setup. */
static void atfork_child(void) {
    pthread_mutex_init(&sps__g.lock, NULL);
    sps__crash_atfork_child(); /* before anything writes a chunk */
    sps__registry_atfork_child(); /* locks a parent thread may have held */
    sps__rinfo_atfork_child();
    sps__tasks_atfork_child();
    sps__meta_atfork_child();
    sps__state_store(SPS__OFF);
    if (sps__g.spill_fd >= 0) close(sps__g.spill_fd);
    sps__g.spill_fd = -1;
    sps__spill_atfork_child();
    for (sps__thr_t *t = sps__g.threads; t; t = t->next_all)
        if (t != sps__tls) t->exited = 1;
    /* the forking thread is the child's main thread, with the child's id
     * (its samples carry that id: the thread table must too) */
    if (sps__tls && sps__tls != &sps__dummy_thr) sps__tls->tid = getpid();
    sps__stacks_atfork_child(); /* its locks may be held by a thread that
                                   does not exist here */
    sps__perf_atfork_child();
    if (sps__fork_child_hook) sps__fork_child_hook(); /* api/fork.c */
}
void (*sps__fork_child_hook)(void);

static void process_init(void) {
    sps__clock_init();
    sps__thread_key_init();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    sps__crash_process_init();
}

void sps__process_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, process_init);
}

int sps__session_live(void) {
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
    /* values are read per record: aggregate mode keeps none */
    if (c->track & ~(SPS_TRACK_MEMORY | SPS_TRACK_COUNTERS)) return SPS_EINVAL;
    if (c->track && c->aggregate) return SPS_EINVAL;
    /* samples belong to spans: aggregate mode keeps none */
    if (c->sample_hz < -1 || c->sample_hz > 10000 || (c->sample_hz && c->aggregate))
        return SPS_EINVAL;
    if (c->reserved2_) return SPS_EINVAL;
    return sps__emit_check(c->emit); /* SPS_EINVAL, or SPS_ENOTSUP: not built */
}

/* The emitters the live session's cfg.emit turned on (they were off), which
 * its close turns off again (emit.c; outside the session lock, which
 * sps_emit_set takes). */
static unsigned g_session_emit;

static void free_session_strings(void) {
    free(sps__g.file_path);
    free(sps__g.label);
    free(sps__g.spill_dir);
    sps__g.file_path = sps__g.label = sps__g.spill_dir = NULL;
}


/* Under the lock: frees pooled chunk memory until at most keep chunks are
 * allocated (threads' current chunks are never freed here). */
static void pool_trim(size_t keep) {
    while (sps__g.mem_chunks > keep && sps__g.free_mem) {
        sps__chunk_t *c = sps__g.free_mem;
        sps__g.free_mem = c->next;
        sps__chunk_mem_free(c);
        free(c);
        sps__g.mem_chunks--;
        sps__g.free_count--;
    }
}

/* Under the lock: frees the pooled chunks that do not fit the session just
 * opened: all of them when it is crash-safe (its chunks must be slots of
 * its live file), else those mapped from an earlier session's. */
static void pool_drop_unfit(int crash_safe) {
    for (sps__chunk_t **pp = &sps__g.free_mem; *pp;) {
        sps__chunk_t *c = *pp;
        if (crash_safe || c->live_off >= 0 || c->mapped) {
            *pp = c->next;
            sps__chunk_mem_free(c);
            free(c);
            sps__g.mem_chunks--;
            sps__g.free_count--;
        } else {
            pp = &c->next;
        }
    }
}

/* Under the lock: forgets everything recorded (not the registry); reset
 * (the analysis's, from the api layer) forgets what was derived from it. */
static void session_clear(sps__reset_fn reset) {
    if (sps__g.pending) { /* a period whose write failed: its chunks too */
        sps__snap_release(sps__g.pending);
        sps__snap_free(sps__g.pending);
        sps__g.pending = NULL;
    }
    sps__buffers_reset();
    sps__counters_reset();
    if (reset) reset();
    if (sps__g.registered_cap)
        memset(sps__g.registered, 0, sps__g.registered_cap * sizeof *sps__g.registered);
    sps__g.nregistered = 0;
    sps__timemap_free(&sps__g.tm);
    sps__g.misuse = 0;
}

int sps__config_check(const sps_config_t *c) { return check_config(c); }

int sps__session_open(const sps_config_t *cfg, const sps__dist_t *dist_in,
                      sps__reset_fn reset) {
    sps__dist_t dist = *dist_in;
    pthread_mutex_lock(&sps__g.lock);
    if (sps__session_live()) {
        pthread_mutex_unlock(&sps__g.lock);
        return SPS_EACTIVE;
    }
    __atomic_store_n(&sps__paused, 0, __ATOMIC_RELAXED); /* a new session records */
    sps__state_store(SPS__OFF);
    sps__spill_open(); /* an earlier session's writer has exited */
    session_clear(reset);
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
            sps__chunk_mem_free(c);
            free(c);
            sps__g.mem_chunks--;
        }
        sps__g.free_mem = NULL; /* threads' current chunks: see thr_join */
        sps__g.free_count = 0;
    }
    sps__g.chunk_recs = (uint32_t)(chunk / 8);
    sps__g.budget_chunks = mem / chunk;
    pool_trim(sps__g.budget_chunks); /* a larger earlier session's pool */
    sps__g.epoch++;
    sps__g.pid = getpid();
    sps__g.mode = cfg->aggregate ? SPS__AGGREGATE : SPS__EVENTS;
    __atomic_store_n(&sps__g.stacks_on, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sps__g.nvals, sps__values_open(cfg->track), __ATOMIC_RELAXED);
    sps__anchor_t a = sps__anchor_now();
    sps__timemap_add(&sps__g.tm, a);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    sps__g.wall_anchor_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
    sps__g.mono_anchor_ns = (int64_t)sps__mono_ns();
    sps__g.start_ns = sps__g.period_start_ns = a.ns;
    pool_drop_unfit(sps__crash_open()); /* crash.c: the live directory */
    /* memory alone: delta groups on the plain state (values.c) */
    sps__state_store(sps__g.nvals && !sps__mem_delta ? SPS__EVENTS_EXTRA : sps__g.mode);
    pthread_mutex_unlock(&sps__g.lock);
    /* cfg.emit: checked by check_config, so it cannot fail but for a full
     * table (SPS_ENOMEM, not with the emitters the header names) */
    unsigned before = sps_emit_active();
    g_session_emit = 0;
    if (cfg->emit && sps_emit_set(cfg->emit, 1) == 0) g_session_emit = cfg->emit & ~before;
    return 0;
}

int sps__session_close(sps__reset_fn reset) {
    sps__process_init();
    pthread_mutex_lock(&sps__g.lock);
    sps__state_store(SPS__OFF);
    int mine = sps__g.pid == getpid();
    if (mine) {
        session_clear(reset);
        sps__values_close();
        __atomic_store_n(&sps__g.nvals, 0, __ATOMIC_RELAXED);
        pool_trim(0);
        sps__g.budget_chunks = 0; /* chunks released later are freed */
        sps__spill_close();
        sps__crash_close(1); /* shut down: nothing to recover */
    }
    int dist_on = sps__g.dist.on;
    sps__g.dist.on = 0;
    pthread_mutex_unlock(&sps__g.lock);
    unsigned emit = g_session_emit; /* cfg.emit's, on since the open */
    g_session_emit = 0;
    if (emit) sps_emit_set(emit, 0);
    return mine && dist_on;
}

int sps_is_active(void) { return sps__session_live(); }

void sps__pause_set(int on) {
    __atomic_store_n(&sps__paused, on ? 1 : 0, __ATOMIC_RELAXED);
    sps__state_store(sps__state_load()); /* sps__active follows */
}

int sps_set_file_path(const char *path) {
    pthread_mutex_lock(&sps__g.lock);
    int rc = SPS_ENOSESSION;
    if (sps__session_live()) {
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

int sps_spill_error(char *buf, size_t len) {
    char tmp[1];
    pthread_mutex_lock(&sps__g.lock);
    int rc = sps__session_live() ? sps__spill_cause(buf && len ? buf : tmp,
                                                    buf && len ? len : 0)
                                 : 0;
    pthread_mutex_unlock(&sps__g.lock);
    if (!rc && buf && len) buf[0] = 0;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Regions                                                                   */
/* ------------------------------------------------------------------------ */

/* Under the lock: marks r registered in the session, remembering when:
 * files list their regions in the order the session registered them, as
 * scope-profiler does, not in the process-wide order of region ids (which a
 * previous session may have set). */
static void mark_registered(sps_region_t r) {
    if (r >= sps__g.registered_cap) {
        uint32_t cap = r + 1024;
        uint32_t *p = realloc(sps__g.registered, cap * sizeof *p);
        if (!p) return;
        memset(p + sps__g.registered_cap, 0, (cap - sps__g.registered_cap) * sizeof *p);
        sps__g.registered = p;
        sps__g.registered_cap = cap;
    }
    if (!sps__g.registered[r]) sps__g.registered[r] = ++sps__g.nregistered;
}

int sps__region_registered(sps_region_t r) {
    return r < sps__g.registered_cap && sps__g.registered[r] != 0;
}

/* The place of r in the session's order: registered regions first, in the
 * order of registration, then the others by id. */
static uint64_t region_place(sps_region_t r) {
    uint64_t k = sps__region_registered(r) ? sps__g.registered[r] : UINT32_MAX;
    return k << 32 | r;
}

static int place_cmp(const void *a, const void *b) {
    uint64_t x = region_place(*(const sps_region_t *)a);
    uint64_t y = region_place(*(const sps_region_t *)b);
    return x < y ? -1 : x > y;
}

void sps__regions_sort(sps_region_t *v, size_t n) {
    if (n > 1) qsort(v, n, sizeof *v, place_cmp);
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

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                 */
/* ------------------------------------------------------------------------ */

void sps__snap_free(sps__snap_t *s) {
    if (!s) return;
    free(s->counters);
    free(s->samples);
    free(s->segs);
    for (size_t i = 0; i < s->ncopies; i++) free(s->copies[i]);
    free(s->copies);
    for (uint32_t t = 0; t < s->nthreads; t++) {
        if (s->carried) sps__stack_free(&s->carried[t]);
        if (s->open) sps__stack_free(&s->open[t]);
    }
    free(s->carried);
    free(s->open);
    free(s->lanes);
    free(s->node_lanes);
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

/* Under the lock: the facts the writer needs (threads, metadata), copied so
 * they can be used without the lock.  0 or SPS_ENOMEM. */
int sps__snap_describe(sps__snap_t *s) {
    s->threads = calloc(s->nthreads + 1, sizeof *s->threads);
    s->tnames = calloc(s->nthreads + 1, sizeof *s->tnames);
    if (!s->threads || !s->tnames) return SPS_ENOMEM;
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
    s->spill_errno = sps__spill_cause(s->spill_error, sizeof s->spill_error);
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
            if (t->an_chunk == c) { /* see thr_install */
                t->an_chunk = NULL;
                t->an_off = -1;
            }
            sps__spill_take(c); /* the spill writer leaves it alone */
            c->next = s->owned;
            s->owned = c;
            t->head = n;
        }
    }
    if (take && !rc && !t->head) t->tail = t->spill_run = NULL;
    if (rc || !t->cur || t->dropping) return rc;
    /* Stop where the analyzer stopped, not at the current position: the
     * owner keeps appending, and records the statistics have not seen must
     * stay for the next period or counts and rows would disagree. */
    uint32_t n = t->an_chunk == t->cur
        ? t->an_pos
        : (uint32_t)(atomic_load_explicit(&t->pos, memory_order_acquire) - t->cur->rec);
    if (take && t->exited && t->an_chunk == t->cur &&
        n == (uint32_t)(atomic_load_explicit(&t->pos, memory_order_acquire) - t->cur->rec)) {
        /* a thread that has exited appends no more: its chunk moves into
         * the snapshot instead of being copied (64 exited threads' copies
         * were 4 MiB of a finalize's peak) */
        sps__chunk_t *cur = t->cur;
        rc = snap_push_seg(s, (sps__seg_t){t->index, cur->rec, -1, n, cur->consumed, cur->seq0});
        if (rc) return rc;
        cur->n = n;
        cur->next = s->owned;
        s->owned = cur;
        t->cur = NULL;
        t->an_chunk = NULL;
        t->an_pos = 0;
        t->an_off = -1;
        return 0;
    }
    const uint64_t *rec = take ? snap_copy(s, t->cur->rec, n) : t->cur->rec;
    if (!rec) return SPS_ENOMEM;
    rc = snap_push_seg(s, (sps__seg_t){t->index, rec, -1, n, t->cur->consumed, t->cur->seq0});
    if (take && !rc) t->cur->consumed = n;
    return rc;
}

/* Under the lock: the period's records, stacks and statistics. */
sps__snap_t *sps__snap_build(int take) {
    sps__bg_wait(); /* the threads' stacks and cursors are the analysis' */
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
    sps__snap_free(s);
    return NULL;
}

/* Under the lock: puts a failed period back in front of the session's
 * pending data (merging with an older pending one; merge, if not NULL,
 * merges what the model derived: old came first). */
void sps__snap_stash(sps__snap_t *s, sps__snap_merge_fn merge) {
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
    if (merge) merge(s, old);
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
    if (old->nsamples) { /* the older samples first */
        sps__sample_t *v = malloc((old->nsamples + s->nsamples) * sizeof *v);
        if (v) {
            memcpy(v, old->samples, old->nsamples * sizeof *v);
            if (s->nsamples) memcpy(v + old->nsamples, s->samples, s->nsamples * sizeof *v);
            free(s->samples);
            s->samples = v;
            s->nsamples += old->nsamples;
        }
    }
    s->samples_lost += old->samples_lost;
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
    sps__snap_free(old);
}

/* Under the lock: takes the pending period (if any) into s. */
void sps__snap_absorb_pending(sps__snap_t *s, sps__snap_merge_fn merge) {
    sps__snap_t *p = sps__g.pending;
    if (!p) return;
    sps__g.pending = NULL;
    /* reuse snap_stash's merge: make p pending, stash s on top of it */
    sps__g.pending = p;
    sps__snap_stash(s, merge);
    sps__g.pending = NULL;
}

/* Under the lock: gives the snapshot's chunks back to the pool. */
void sps__snap_release(sps__snap_t *s) {
    sps__crash_consumed(s); /* before the slots are cleared and reused */
    for (sps__chunk_t *c = s->owned, *n; c; c = n) {
        n = c->next;
        sps__chunk_release(c);
    }
    s->owned = NULL;
    sps__spill_trim(1);
}

const char *sps_clock_source(void) {
    sps__process_init();
    return sps__use_tsc ? "tsc" : "monotonic";
}

int64_t sps_session_start_ns(void) {
    pthread_mutex_lock(&sps__g.lock);
    int64_t t = sps__session_live() ? sps__g.start_ns : 0;
    pthread_mutex_unlock(&sps__g.lock);
    return t;
}

void sps_free(void *p) { free(p); }

int sps_thread_info(uint32_t i, sps_thread_t *out) {
    if (!out) return SPS_EINVAL;
    memset(out, 0, sizeof *out);
    int rc = SPS_EINVAL;
    pthread_mutex_lock(&sps__g.lock);
    if (!sps__session_live()) rc = SPS_ENOSESSION;
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
    if (!t || t == &sps__dummy_thr || !sps__session_live()) return -1;
    return __atomic_load_n(&t->epoch, __ATOMIC_RELAXED) == sps__g.epoch ? (int64_t)t->index : -1;
}

int sps_thread_seq(uint32_t *thread, uint64_t *seq) {
    if (!thread || !seq) return SPS_EINVAL;
    /* Only the owner thread writes cur, pos and dropping (under the lock
     * in the slow path, which this thread is not in): plain reads are
     * consistent here.  The last record is the begin just made: a HI
     * record, when one was needed, is written before it. */
    sps__thr_t *t = sps__tls;
    int st = sps__state_load();
    if (st == SPS__AGGREGATE) return SPS_EMODE;
    /* No getpid() (session_live): it is a system call, called per span
     * here; a forked child's state is SPS__OFF (atfork_child) until it
     * sets up its own session, which has a new epoch. */
    if (!t || t == &sps__dummy_thr || st == SPS__OFF ||
        __atomic_load_n(&t->epoch, __ATOMIC_RELAXED) != sps__g.epoch)
        return SPS_ENOSESSION;
    if (t->dropping || !t->cur) return SPS_ETOOBIG;
    const uint64_t *p = atomic_load_explicit(&t->pos, memory_order_relaxed);
    if (p <= t->cur->rec) return SPS_ENOSESSION;
    *thread = t->index;
    *seq = t->cur->seq0 + (uint64_t)(p - 1 - t->cur->rec);
    return 0;
}

int sps_clock_anchor(int64_t *wall_ns, int64_t *mono_ns) {
    pthread_mutex_lock(&sps__g.lock);
    int live = sps__session_live();
    int64_t w = live ? sps__g.wall_anchor_ns : 0, m = live ? sps__g.mono_anchor_ns : 0;
    pthread_mutex_unlock(&sps__g.lock);
    if (wall_ns) *wall_ns = w;
    if (mono_ns) *mono_ns = m;
    return live ? 0 : SPS_ENOSESSION;
}
