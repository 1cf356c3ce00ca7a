/* scope_profiler.c -- scope-profiler 0.7.5's C API (include/scope_profiler.h)
 * over spanscope's public C API, and nothing else: every call here is an
 * sps_ function of <spanscope.h>.
 *
 * The mapping (docs/scope-profiler-c.md says it for users):
 * - a region handle is the sps_region_t of the region's name, so that
 *   sp_begin/sp_end are sps_begin/sps_end inlined at the call site (the
 *   header); the functions below exist for bindings (Fortran) and for
 *   (sp_begin)(r);
 * - spanscope has one session per process: the first active profiler
 *   starts it (or joins the one running), the last one to stop ends the
 *   session the face started;
 * - each profiler writes its own file from its own regions' spans of the
 *   session (sps_spans), since it started or was reset: HDF5 through
 *   sps_spans_write_h5, or scope-profiler's native ".spt" trace, written
 *   here (its layout is scope-profiler's native_trace.py, version 2);
 * - the default profiler's regions carry their own names; those of an
 *   sp_create profiler carry "<stem>:<name>" in the session (stem
 *   "<prefix>_rank<NNNNN>"), so that two profilers' regions stay apart;
 * - the checked pair (sp_profiler_begin/end, the scopes, end_last) keeps a
 *   stack of open calls per thread; nesting itself is spanscope's.
 *
 * Locking: g_lock guards the profilers' tables (registration, finalize,
 * queries).  The checked hot path reads p->active and the id -> region
 * index lock-free: the index is published with release stores and an old
 * index is kept until sp_destroy, so a reader never sees freed memory. */
#include "scope_profiler.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Undo the header's inline hot path here, where the functions are defined. */
#undef sp_begin
#undef sp_end

/* ------------------------------------------------------------------------ */
/* Profilers                                                                 */
/* ------------------------------------------------------------------------ */

/* One region of a profiler. */
typedef struct sp_reg {
    sps_region_t id;   /* the session's region (qualified name for sp_create) */
    char *name;        /* the name as registered (what the file says) */
    char *file;        /* source file or NULL */
    int line;          /* -1 unknown */
    sp_region_stats final; /* the statistics at finalize */
} sp_reg_t;

/* id -> index into regs, -1 for ids that are not this profiler's. */
typedef struct sp_index {
    uint32_t cap;
    int32_t at[];
} sp_index_t;

struct sp_profiler {
    uint64_t uid;          /* unique for the process, never reused */
    int active;            /* atomic */
    int rank;
    int qualified;         /* 1: regions are "<stem>:<name>" in the session */
    int in_session;        /* holds one of the face's session references */
    sp_output_format format;
    int last_error;        /* an sp_status; atomic */
    int64_t since_ns;      /* the file holds calls that begin at or after this */
    int was_reset;         /* sp_profiler_reset succeeded once */
    char *stem;            /* "<prefix>_rank<NNNNN>" */
    char *label;           /* the prefix's last path component, or NULL */
    char *path_h5, *path_spt;
    size_t n, cap;
    sp_reg_t *regs;
    sp_index_t *index;     /* atomic pointer */
    sp_index_t **retired;  /* older indexes, freed by sp_destroy */
    size_t nretired;
    int sampling;          /* started the sampler (sp_profiler_start_sampling) */
    int sample_hz;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static sp_profiler *g_default;
static uint64_t g_next_uid = 1;
static int g_owned;     /* the face started the running session */
static int g_sessions;  /* active profilers holding a session reference */
static uint64_t g_starter;  /* uid of the profiler that started it (0: none
                               whose rank the session took) */
static int g_joined;    /* profilers that took a reference in this session */

/* The face's messages (scope-profiler's C API prints them on stderr):
 * off on a thread that asked (sp_set_messages). */
static __thread int t_quiet __attribute__((tls_model("initial-exec")));

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...) {
    if (t_quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

int sp_set_messages(int on) {
    int was = !t_quiet;
    t_quiet = !on;
    return was;
}

static void set_error(const sp_profiler *p, sp_status s) {
    sp_profiler *q = (sp_profiler *)p;
    if (__atomic_load_n(&q->last_error, __ATOMIC_RELAXED) != (int)s)
        __atomic_store_n(&q->last_error, (int)s, __ATOMIC_RELAXED);
}

static int is_active(const sp_profiler *p) {
    return p && __atomic_load_n(&p->active, __ATOMIC_ACQUIRE);
}

/* Index of region id in p, or -1.  Lock-free. */
static int32_t reg_of(const sp_profiler *p, int region) {
    if (region <= 0) return -1;
    const sp_index_t *ix = __atomic_load_n(&p->index, __ATOMIC_ACQUIRE);
    if (!ix || (uint32_t)region >= ix->cap) return -1;
    return __atomic_load_n(&ix->at[region], __ATOMIC_RELAXED);
}

/* Under g_lock: a session reference for p (starting a session when none
 * runs).  0 or an sp_status. */
static sp_status session_acquire(sp_profiler *p) {
    if (!sps_is_active()) {
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.local = 1; /* each rank writes its own file: no collective setup */
        /* the starter's rank and label: the session's own writer (the
         * direct finalize below) then writes what its file should say */
        int ranked = p->rank < INT32_MAX;
        if (ranked) {
            cfg.rank = p->rank;
            cfg.size = p->rank + 1;
        }
        cfg.label = p->label;
        int rc = sps_setup(&cfg);
        if (rc < 0 && rc != SPS_EACTIVE) {
            say("scope_profiler: cannot start spanscope's session: %s\n",
                    sps_strerror(rc));
            return rc == SPS_ENOMEM ? SP_ERR_NO_MEMORY : SP_ERR_UNSUPPORTED;
        }
        if (rc == 0) {
            g_owned = 1;
            g_starter = ranked ? p->uid : 0;
            g_joined = 0;
        }
    }
    /* a session that keeps no spans (aggregate) cannot give this profiler
     * its calls: a window with from > to asks that at no cost */
    sps_span_t *none = NULL;
    size_t n = 0;
    int rc = sps_spans(1, 0, &none, &n);
    sps_free(none);
    if (rc == SPS_EMODE) {
        say("scope_profiler: the running spanscope session is an aggregate "
                        "one (statistics only): no calls to write; profiling stays off\n");
        return SP_ERR_UNSUPPORTED;
    }
    p->in_session = 1;
    g_sessions++;
    g_joined++;
    return SP_OK;
}

/* Under g_lock: gives p's session reference back, ending the session the
 * face started when it was the last. */
static void session_release(sp_profiler *p) {
    if (!p->in_session) return;
    p->in_session = 0;
    if (--g_sessions == 0 && g_owned) {
        g_owned = 0;
        sps_shutdown();
    }
}

static char *dup_str(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* "<prefix>_rank<NNNNN>" in a malloc'd string, or NULL. */
static char *stem_of(const char *prefix, int rank) {
    int n = snprintf(NULL, 0, "%s_rank%05d", prefix, rank);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) snprintf(s, (size_t)n + 1, "%s_rank%05d", prefix, rank);
    return s;
}

/* "<stem><suffix>" in a malloc'd string, or NULL. */
static char *cat(const char *stem, const char *suffix) {
    size_t a = strlen(stem), b = strlen(suffix);
    char *s = malloc(a + b + 1);
    if (s) {
        memcpy(s, stem, a);
        memcpy(s + a, suffix, b + 1);
    }
    return s;
}

static sp_profiler *create_locked(const char *prefix, int rank, int qualified) {
    sp_profiler *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->uid = g_next_uid++;
    p->rank = rank;
    p->qualified = qualified;
    p->format = SP_OUTPUT_HDF5;
    const char *pre = prefix ? prefix : "scope_profile";
    p->stem = stem_of(pre, rank < 0 ? 0 : rank);
    p->path_h5 = p->stem ? cat(p->stem, ".h5") : NULL;
    p->path_spt = p->stem ? cat(p->stem, ".spt") : NULL;
    const char *slash = strrchr(pre, '/');
    const char *base = slash ? slash + 1 : pre;
    p->label = *base ? dup_str(base) : NULL;
    if (!p->stem || !p->path_h5 || !p->path_spt || (*base && !p->label)) {
        p->last_error = SP_ERR_NO_MEMORY;
        say("scope_profiler: out of memory in sp_create\n");
        return p;
    }
    if (rank < 0) {
        p->last_error = SP_ERR_UNSUPPORTED;
        say("scope_profiler: rank %d is negative; profiling stays off\n", rank);
        return p;
    }
    sp_status s = session_acquire(p);
    if (s != SP_OK) {
        p->last_error = s;
        return p;
    }
    p->since_ns = sps_now_ns();
    __atomic_store_n(&p->active, 1, __ATOMIC_RELEASE);
    return p;
}

sp_profiler *sp_create(const char *prefix, int rank) {
    pthread_mutex_lock(&g_lock);
    sp_profiler *p = create_locked(prefix, rank, 1);
    pthread_mutex_unlock(&g_lock);
    return p;
}

/* ------------------------------------------------------------------------ */
/* The calling thread's checked calls                                        */
/* ------------------------------------------------------------------------ */

#define SP_STACK 256 /* deeper checked calls record, unchecked */

typedef struct sp_open {
    uint64_t uid;  /* the profiler's */
    int region;
    int64_t serial;
} sp_open_t;

/* A thread's checked calls, allocated at its first checked call and freed
 * at its exit (g_thr_key).  Reached through one initial-exec TLS pointer
 * (as the core's sps__tls): a general-dynamic TLS array would cost a
 * __tls_get_addr call per access in a shared library. */
typedef struct sp_thr {
    int depth;        /* entries in open */
    int untracked;    /* begun beyond SP_STACK (or without a block), innermost */
    int64_t serial;   /* this thread's last serial */
    sp_open_t open[SP_STACK];
} sp_thr_t;

static __thread sp_thr_t *t_thr __attribute__((tls_model("initial-exec")));
static sp_thr_t g_no_thr = {0, 0, 0, {{0, 0, 0}}}; /* no block: nothing tracked */
static pthread_key_t g_thr_key;
static pthread_once_t g_thr_once = PTHREAD_ONCE_INIT;
static int64_t g_thread_tags;

static void thr_free(void *t) { free(t); }
static void thr_key_init(void) { (void)pthread_key_create(&g_thr_key, thr_free); }

/* The calling thread's block; &g_no_thr (depth pinned at SP_STACK, so that
 * every call is untracked) when none can be had. */
__attribute__((noinline, cold)) static sp_thr_t *thr_make(void) {
    pthread_once(&g_thr_once, thr_key_init);
    sp_thr_t *t = calloc(1, sizeof *t);
    if (!t || pthread_setspecific(g_thr_key, t) != 0) {
        free(t);
        g_no_thr.depth = SP_STACK;
        return t_thr = &g_no_thr;
    }
    /* a serial no other call of the process has: the thread's tag in the
     * high bits, its count below */
    t->serial = (__atomic_add_fetch(&g_thread_tags, 1, __ATOMIC_RELAXED) & 0x7fffff) << 40;
    return t_thr = t;
}

static inline sp_thr_t *thr(void) {
    sp_thr_t *t = t_thr;
    return __builtin_expect(t != NULL, 1) ? t : thr_make();
}

/* Drops the calling thread's entries of profiler uid (finalize, destroy). */
static void forget_thread_calls(uint64_t uid) {
    sp_thr_t *t = t_thr;
    if (!t || t == &g_no_thr) return;
    int k = 0;
    for (int i = 0; i < t->depth; i++)
        if (t->open[i].uid != uid) t->open[k++] = t->open[i];
    t->depth = k;
}

/* Begins region (p's, checked by the caller) and returns its serial, 0
 * when the call is not tracked (ended as the innermost untracked one). */
static int64_t checked_begin(sp_profiler *p, int region) {
    sp_thr_t *t = thr();
    int64_t serial = 0;
    if (__builtin_expect(t->depth < SP_STACK && !t->untracked, 1)) {
        serial = ++t->serial;
        t->open[t->depth++] = (sp_open_t){p->uid, region, serial};
    } else {
        t->untracked++;
    }
    sps_begin((sps_region_t)region);
    if (__atomic_load_n(&p->last_error, __ATOMIC_RELAXED) != SP_OK) set_error(p, SP_OK);
    return serial;
}

/* Ends the entry at i of the thread's stack (and, as spanscope's nesting
 * does, every call opened inside it). */
static void checked_end_at(sp_thr_t *t, int i) {
    sps_end((sps_region_t)t->open[i].region);
    t->depth = i;
}

/* Whether region is open on the calling thread in spanscope's view (a call
 * begun by sp_begin rather than the checked pair).  A query: error path
 * only. */
static int open_in_session(int region) {
    sps_region_t small[64], *buf = small;
    size_t n = sps_open_calls(buf, 64);
    if (n > 64) { /* a deeper stack: all of it (the innermost come last) */
        buf = malloc(n * sizeof *buf);
        if (!buf) return 0;
        size_t m = sps_open_calls(buf, n);
        n = m < n ? m : n;
    }
    int found = 0;
    for (size_t i = n; i-- > 0 && !found;) found = buf[i] == (sps_region_t)region;
    if (buf != small) free(buf);
    return found;
}

void sp_profiler_begin(sp_profiler *profiler, int region) {
    if (!is_active(profiler) || reg_of(profiler, region) < 0) return;
    checked_begin(profiler, region);
}

void sp_profiler_end(sp_profiler *profiler, int region) {
    if (!is_active(profiler)) return;
    int32_t k = reg_of(profiler, region);
    if (k < 0) return;
    sp_thr_t *t = thr();
    if (t->untracked) {
        t->untracked--;
        sps_end((sps_region_t)region);
        return;
    }
    for (int i = t->depth; i-- > 0;) {
        if (t->open[i].uid == profiler->uid && t->open[i].region == region) {
            checked_end_at(t, i);
            set_error(profiler, SP_OK);
            return;
        }
    }
    if (open_in_session(region)) { /* begun by sp_begin: end it all the same */
        sps_end((sps_region_t)region);
        set_error(profiler, SP_OK);
        return;
    }
    pthread_mutex_lock(&g_lock);
    say("scope_profiler: sp_end('%s') without a matching sp_begin\n",
            profiler->regs[k].name);
    pthread_mutex_unlock(&g_lock);
    set_error(profiler, SP_ERR_UNMATCHED_END);
}

int sp_profiler_end_last(sp_profiler *profiler) {
    if (!profiler) return SP_ERR_UNMATCHED_END;
    if (is_active(profiler)) {
        sp_thr_t *t = thr();
        for (int i = t->depth; i-- > 0;) {
            if (t->open[i].uid == profiler->uid) {
                checked_end_at(t, i);
                set_error(profiler, SP_OK);
                return SP_OK;
            }
        }
    }
    set_error(profiler, SP_ERR_UNMATCHED_END);
    return SP_ERR_UNMATCHED_END;
}

sp_scope sp_profiler_scope_begin(sp_profiler *profiler, int region) {
    sp_scope s = {profiler, region, -1};
    if (!is_active(profiler) || reg_of(profiler, region) < 0) return s;
    s.slot = checked_begin(profiler, region); /* 0: untracked */
    return s;
}

int sp_scope_end(sp_scope *scope) {
    if (!scope || scope->slot < 0) return SP_ERR_UNMATCHED_END;
    sp_profiler *p = scope->profiler;
    sp_thr_t *t = thr();
    if (scope->slot == 0) { /* begun beyond the tracked depth */
        scope->slot = -1;
        if (t->untracked) {
            t->untracked--;
            sps_end((sps_region_t)scope->region);
            return SP_OK;
        }
        return SP_ERR_UNMATCHED_END;
    }
    for (int i = t->depth; i-- > 0;) {
        if (t->open[i].serial != scope->slot) continue;
        for (int j = i + 1; j < t->depth; j++) {
            if (t->open[j].uid == t->open[i].uid && t->open[j].region == t->open[i].region) {
                /* a later call of the same region is on top: end it first */
                if (is_active(p)) set_error(p, SP_ERR_UNMATCHED_END);
                return SP_ERR_UNMATCHED_END;
            }
        }
        checked_end_at(t, i);
        scope->slot = -1;
        if (!is_active(p)) return SP_ERR_UNMATCHED_END; /* finalized meanwhile */
        set_error(p, SP_OK);
        return SP_OK;
    }
    scope->slot = -1;
    if (is_active(p)) set_error(p, SP_ERR_UNMATCHED_END);
    return SP_ERR_UNMATCHED_END;
}

/* ------------------------------------------------------------------------ */
/* Regions                                                                   */
/* ------------------------------------------------------------------------ */

/* Under g_lock: makes p's index hold id (growing it). */
static int index_put(sp_profiler *p, sps_region_t id, int32_t k) {
    sp_index_t *ix = p->index;
    if (!ix || id >= ix->cap) {
        uint32_t cap = ix ? ix->cap : 64;
        while (cap <= id) cap *= 2;
        sp_index_t *nx = malloc(sizeof *nx + (size_t)cap * sizeof nx->at[0]);
        sp_index_t **ret = realloc(p->retired, (p->nretired + 1) * sizeof *ret);
        if (!nx || !ret) {
            free(nx);
            if (ret) p->retired = ret;
            return -1;
        }
        p->retired = ret;
        nx->cap = cap;
        for (uint32_t i = 0; i < cap; i++) nx->at[i] = ix && i < ix->cap ? ix->at[i] : -1;
        if (ix) p->retired[p->nretired++] = ix;
        __atomic_store_n(&p->index, nx, __ATOMIC_RELEASE);
        ix = nx;
    }
    __atomic_store_n(&ix->at[id], k, __ATOMIC_RELEASE);
    return 0;
}

static int region_locked(sp_profiler *p, const char *name, const char *file, int line) {
    if (!p) return SP_INVALID_REGION;
    if (!is_active(p) || !name) {
        set_error(p, SP_ERR_INACTIVE);
        return SP_INVALID_REGION;
    }
    for (size_t i = 0; i < p->n; i++) { /* registered already (by name) */
        sp_reg_t *r = &p->regs[i];
        if (strcmp(r->name, name) != 0) continue;
        if (file && !r->file) { /* backfill; first writer wins */
            r->file = dup_str(file);
            r->line = r->file ? line : -1;
            if (r->file) sps_region_set_source(r->id, r->file, r->line, NULL);
        }
        set_error(p, SP_OK);
        return (int)r->id;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        sp_reg_t *regs = realloc(p->regs, cap * sizeof *regs);
        if (!regs) goto oom;
        p->regs = regs;
        p->cap = cap;
    }
    sps_region_t id;
    if (p->qualified) {
        size_t ls = strlen(p->stem), ln = strlen(name);
        char *q = malloc(ls + 1 + ln + 1);
        if (!q) goto oom;
        memcpy(q, p->stem, ls);
        q[ls] = ':';
        memcpy(q + ls + 1, name, ln + 1);
        id = sps_region(q);
        free(q);
    } else {
        id = sps_region(name);
    }
    if (id == SPS_REGION_INVALID || id > (sps_region_t)INT32_MAX) goto oom;
    sp_reg_t *r = &p->regs[p->n];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->name = dup_str(name);
    r->file = file ? dup_str(file) : NULL;
    r->line = r->file ? line : -1;
    if (!r->name || (file && !r->file) || index_put(p, id, (int32_t)p->n) < 0) {
        free(r->name);
        free(r->file);
        goto oom;
    }
    p->n++;
    if (r->file) sps_region_set_source(id, r->file, r->line, NULL);
    set_error(p, SP_OK);
    return (int)id;
oom:
    say("scope_profiler: out of memory registering '%s'\n", name);
    set_error(p, SP_ERR_NO_MEMORY);
    return SP_INVALID_REGION;
}

int sp_profiler_region(sp_profiler *profiler, const char *name) {
    return sp_profiler_region_at(profiler, name, NULL, -1);
}

int sp_profiler_region_at(sp_profiler *profiler, const char *name, const char *source_file,
                          int source_line) {
    if (!profiler) return SP_INVALID_REGION;
    pthread_mutex_lock(&g_lock);
    int id = region_locked(profiler, name, source_file, source_line);
    pthread_mutex_unlock(&g_lock);
    return id;
}

int sp_profiler_num_regions(const sp_profiler *profiler) {
    if (!profiler) return 0;
    pthread_mutex_lock(&g_lock);
    int n = (int)profiler->n;
    pthread_mutex_unlock(&g_lock);
    return n;
}

const char *sp_profiler_region_name(const sp_profiler *profiler, int region) {
    if (!profiler) return NULL;
    pthread_mutex_lock(&g_lock);
    int32_t k = reg_of(profiler, region);
    const char *name = k >= 0 ? profiler->regs[k].name : NULL;
    pthread_mutex_unlock(&g_lock);
    return name;
}

/* ------------------------------------------------------------------------ */
/* The profiler's calls                                                      */
/* ------------------------------------------------------------------------ */

/* Under g_lock: p's completed calls since p->since_ns, in start order
 * (sps_spans' order), as a malloc'd array (*out NULL when none).  0, or
 * SP_ERR_NO_MEMORY / SP_ERR_UNSUPPORTED. */
static sp_status spans_of(const sp_profiler *p, sps_span_t **out, size_t *n) {
    sps_span_t *all = NULL;
    size_t m = 0;
    *out = NULL;
    *n = 0;
    int rc = sps_spans(0, INT64_MAX, &all, &m);
    if (rc == SPS_ENOSESSION) return SP_OK; /* the session is gone: no calls */
    if (rc == SPS_ENOMEM) return SP_ERR_NO_MEMORY;
    if (rc < 0) return SP_ERR_UNSUPPORTED;
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (all[i].start_ns >= p->since_ns && reg_of(p, (int)all[i].region) >= 0)
            all[k++] = all[i];
    if (k == 0) {
        sps_free(all);
        return SP_OK;
    }
    *out = all;
    *n = k;
    return SP_OK;
}

/* Under g_lock: the statistics of every region of p into stats[0..p->n)
 * (calls: completed since since_ns + open on any thread), from the
 * session's per-region call lists (sps_region_calls: 16 bytes a call, kept
 * up to date from the new records only). */
static int sole(const sp_profiler *p);
static sp_status stats_of(const sp_profiler *p, sp_region_stats *stats) {
    memset(stats, 0, (p->n ? p->n : 1) * sizeof *stats);
    /* a session of p's alone, never reset: the session's statistics are
     * p's (sps_region_stats: kept up to date, no call lists) */
    int whole = sole(p) && !p->was_reset;
    for (size_t k = 0; whole && k < p->n; k++) {
        sps_stats_t ss;
        if (sps_region_stats(p->regs[k].id, &ss) != 0) continue;
        stats[k].calls = (int64_t)ss.num_calls;
        stats[k].total_ns = ss.total_ns;
        stats[k].min_ns = ss.min_ns;
        stats[k].max_ns = ss.max_ns;
    }
    for (size_t k = 0; !whole && k < p->n; k++) {
        size_t n = sps_region_calls(p->regs[k].id, NULL, NULL, 0);
        if (!n) continue;
        int64_t *st = malloc(n * sizeof *st), *du = malloc(n * sizeof *du);
        if (!st || !du) {
            free(st), free(du);
            return SP_ERR_NO_MEMORY;
        }
        size_t m = sps_region_calls(p->regs[k].id, st, du, n);
        if (m > n) m = n;
        sp_region_stats *o = &stats[k];
        for (size_t i = 0; i < m; i++) {
            if (st[i] < p->since_ns) continue;
            if (o->calls == 0 || du[i] < o->min_ns) o->min_ns = du[i];
            if (o->calls == 0 || du[i] > o->max_ns) o->max_ns = du[i];
            o->calls++;
            o->total_ns += du[i];
        }
        free(st), free(du);
    }
    int64_t nopen = sps_open_calls_all(NULL, 0);
    if (nopen > 0) {
        sps_open_call_t *oc = malloc((size_t)nopen * sizeof *oc);
        if (!oc) return SP_ERR_NO_MEMORY;
        int64_t got = sps_open_calls_all(oc, (size_t)nopen);
        for (int64_t i = 0; i < got && i < nopen; i++) {
            int32_t k = reg_of(p, (int)oc[i].region);
            if (k >= 0) stats[k].calls++;
        }
        free(oc);
    }
    return SP_OK;
}

/* Under g_lock: whether p's file can be the session's own (sps_finalize_to,
 * the streaming writer: memory in threads, not in calls), rather than one
 * built from sps_spans: the face started the session for p alone (its rank
 * and label), no other profiler ever joined it, p's regions carry their own
 * names (the default profiler), the format is HDF5 (and, at finalize, each
 * of its regions has a completed call).  Calls of regions the
 * program records itself with sps_begin in that session are then in the
 * file too.  The period starts at p's start or last reset (below). */
static int sole(const sp_profiler *p) {
    return g_owned && g_starter == p->uid && g_joined == 1;
}
static int direct(const sp_profiler *p) {
    return sole(p) && !p->qualified && p->format == SP_OUTPUT_HDF5;
}

/* The calls of p's regions open on any thread, per region, into open[0..p->n);
 * their total. */
static int64_t open_of(const sp_profiler *p, int *open) {
    memset(open, 0, (p->n ? p->n : 1) * sizeof *open);
    int64_t nopen = sps_open_calls_all(NULL, 0), total = 0;
    if (nopen <= 0) return 0;
    sps_open_call_t *oc = malloc((size_t)nopen * sizeof *oc);
    if (!oc) return 0;
    int64_t got = sps_open_calls_all(oc, (size_t)nopen);
    for (int64_t i = 0; i < got && i < nopen; i++) {
        int32_t k = reg_of(p, (int)oc[i].region);
        if (k >= 0) open[k]++, total++;
    }
    free(oc);
    return total;
}

int sp_profiler_get_region_stats(const sp_profiler *profiler, int region, sp_region_stats *stats) {
    if (!profiler || !stats) return SP_ERR_INACTIVE;
    pthread_mutex_lock(&g_lock);
    int32_t k = reg_of(profiler, region);
    sp_status s = SP_ERR_INACTIVE;
    if (k >= 0 && !is_active(profiler)) {
        *stats = profiler->regs[k].final;
        s = SP_OK;
    } else if (k >= 0) {
        sp_region_stats *all = malloc((profiler->n ? profiler->n : 1) * sizeof *all);
        s = all ? stats_of(profiler, all) : SP_ERR_NO_MEMORY;
        if (s == SP_OK) *stats = all[k];
        free(all);
    }
    pthread_mutex_unlock(&g_lock);
    return s;
}

int sp_profiler_reset(sp_profiler *profiler) {
    if (!profiler) return SP_ERR_INACTIVE;
    pthread_mutex_lock(&g_lock);
    sp_status s = SP_ERR_INACTIVE;
    if (is_active(profiler)) {
        int *open = malloc((profiler->n ? profiler->n : 1) * sizeof *open);
        if (!open) {
            s = SP_ERR_NO_MEMORY;
        } else if (open_of(profiler, open) > 0) {
            s = SP_ERR_OPEN_SCOPES;
        } else {
            /* the session's period starts here too when it is p's alone, so
             * that the direct finalize writes the calls since the reset */
            if (sole(profiler)) (void)sps_finalize_to(NULL);
            profiler->since_ns = sps_now_ns();
            profiler->was_reset = 1;
            s = SP_OK;
        }
        free(open);
    }
    if (is_active(profiler) || s != SP_ERR_INACTIVE) set_error(profiler, s);
    pthread_mutex_unlock(&g_lock);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

static int write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n; }

/* scope-profiler's native trace, version 2 (native_trace.py):
 *   "SCOPEPRF", int32 version, int32 rank, int64 number of regions, then per
 *   region int32 name length, name, int32 source length, source, int32
 *   source line, int64 calls, int64 starts[calls], int64 ends[calls];
 * native byte order.  Regions with calls only, in registration order. */
static int write_spt(const sp_profiler *p, const sps_span_t *sp, size_t n, const char *path) {
    size_t *count = calloc(p->n ? p->n : 1, sizeof *count);
    int64_t *buf = malloc((n ? n : 1) * sizeof *buf);
    size_t lp = strlen(path);
    char *tmp = malloc(lp + 32);
    FILE *f = NULL;
    int ok = count && buf && tmp;
    if (ok) {
        snprintf(tmp, lp + 32, "%s.tmp-%ld", path, (long)getpid());
        f = fopen(tmp, "wb");
        if (!f) {
            say("scope_profiler: cannot write %s: %s\n", path, strerror(errno));
            free(count), free(buf), free(tmp);
            return SP_ERR_IO;
        }
    }
    int64_t nreg = 0;
    for (size_t i = 0; ok && i < n; i++) count[reg_of(p, (int)sp[i].region)]++;
    for (size_t k = 0; ok && k < p->n; k++) nreg += count[k] > 0;
    int32_t version = SP_FORMAT_VERSION, rank = p->rank;
    ok = ok && write_all(f, "SCOPEPRF", 8) && write_all(f, &version, 4) && write_all(f, &rank, 4) &&
         write_all(f, &nreg, 8);
    for (size_t k = 0; ok && k < p->n; k++) {
        if (!count[k]) continue;
        const sp_reg_t *r = &p->regs[k];
        int32_t ln = (int32_t)strlen(r->name), lf = r->file ? (int32_t)strlen(r->file) : 0;
        int32_t line = r->file ? r->line : -1;
        int64_t calls = (int64_t)count[k];
        ok = write_all(f, &ln, 4) && write_all(f, r->name, (size_t)ln) && write_all(f, &lf, 4) &&
             (lf == 0 || write_all(f, r->file, (size_t)lf)) && write_all(f, &line, 4) &&
             write_all(f, &calls, 8);
        for (int pass = 0; ok && pass < 2; pass++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (sp[i].region == r->id) buf[m++] = pass ? sp[i].end_ns : sp[i].start_ns;
            ok = write_all(f, buf, m * sizeof *buf);
        }
    }
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok && f) {
        say("scope_profiler: failed to write %s: %s\n", path, strerror(errno));
        unlink(tmp);
    }
    int nomem = !(count && buf && tmp);
    if (nomem) say("scope_profiler: out of memory writing %s\n", path);
    free(count), free(buf), free(tmp);
    return ok ? SP_OK : nomem ? SP_ERR_NO_MEMORY : SP_ERR_IO;
}

/* The HDF5 file: the spans as a schema-3 .h5 by sps_spans_write_h5 (names
 * of the regions with calls, rank p->rank, spanscope's thread indices,
 * sources, the prefix as label, start time since_ns). */
static int write_h5(const sp_profiler *p, const sps_span_t *sp, size_t n, const char *path) {
    size_t nn = p->n ? p->n : 1, ns = n ? n : 1;
    int32_t *slot = malloc(nn * sizeof *slot);
    const char **names = malloc(nn * sizeof *names), **files = malloc(nn * sizeof *files);
    int64_t *lines = malloc(nn * sizeof *lines);
    uint32_t *name = malloc(ns * sizeof *name);
    int64_t *rank = malloc(ns * sizeof *rank), *thread = malloc(ns * sizeof *thread);
    int64_t *start = malloc(ns * sizeof *start), *end = malloc(ns * sizeof *end);
    int rc = SP_ERR_NO_MEMORY;
    if (slot && names && files && lines && name && rank && thread && start && end) {
        size_t m = 0;
        for (size_t k = 0; k < p->n; k++) slot[k] = -1;
        for (size_t i = 0; i < n; i++) {
            int32_t k = reg_of(p, (int)sp[i].region);
            if (slot[k] < 0) slot[k] = 0; /* has calls */
        }
        for (size_t k = 0; k < p->n; k++) {
            if (slot[k] < 0) continue;
            slot[k] = (int32_t)m;
            names[m] = p->regs[k].name;
            files[m] = p->regs[k].file;
            lines[m] = p->regs[k].file ? p->regs[k].line : -1;
            m++;
        }
        for (size_t i = 0; i < n; i++) {
            name[i] = (uint32_t)slot[reg_of(p, (int)sp[i].region)];
            rank[i] = p->rank;
            thread[i] = sp[i].thread;
            start[i] = sp[i].start_ns;
            end[i] = sp[i].end_ns;
        }
        sps_span_set_t set;
        memset(&set, 0, sizeof set);
        set.nnames = m;
        set.names = names;
        set.nspans = n;
        set.name = name;
        set.rank = rank;
        set.thread = thread;
        set.start_ns = start;
        set.end_ns = end;
        set.has_times = 1;
        set.start_time_ns = p->since_ns;
        set.finalize_time_ns = sps_now_ns();
        set.label = p->label;
        set.source_files = files;
        set.source_lines = lines;
        char err[512];
        size_t lp = strlen(path);
        char *tmp = malloc(lp + 32);
        int r = SPS_ENOMEM;
        if (tmp) {
            snprintf(tmp, lp + 32, "%s.tmp-sp-%ld", path, (long)getpid());
            r = sps_spans_write_h5(tmp, &set, err, sizeof err);
            if (r == 0 && rename(tmp, path) != 0) {
                snprintf(err, sizeof err, "%s (renaming into place)", strerror(errno));
                r = SPS_EIO;
            }
            if (r != 0) unlink(tmp);
            free(tmp);
        } else {
            snprintf(err, sizeof err, "out of memory");
        }
        if (r == 0) {
            rc = SP_OK;
        } else {
            say("scope_profiler: failed to write %s: %s\n", path, err);
            rc = r == SPS_ENOMEM ? SP_ERR_NO_MEMORY : SP_ERR_IO;
        }
    } else {
        say("scope_profiler: out of memory writing %s\n", path);
    }
    free(slot), free(names), free(files), free(lines);
    free(name), free(rank), free(thread), free(start), free(end);
    return rc;
}

/* Under g_lock: writes p's file.  0 or non-zero (last_error set). */
static int write_locked(sp_profiler *p) {
    sps_span_t *sp;
    size_t n;
    sp_status s = spans_of(p, &sp, &n);
    if (s == SP_OK)
        s = p->format == SP_OUTPUT_TRACE ? write_spt(p, sp, n, p->path_spt)
                                         : write_h5(p, sp, n, p->path_h5);
    else
        say("scope_profiler: cannot read the calls to write: %s\n",
                sp_error_string(s));
    sps_free(sp);
    if (s != SP_OK) set_error(p, s);
    return s != SP_OK;
}

int sp_profiler_flush(sp_profiler *profiler) {
    if (!is_active(profiler)) return 0;
    pthread_mutex_lock(&g_lock);
    int rc = is_active(profiler) ? write_locked(profiler) : 0;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Under g_lock: stops p (statistics kept), giving its session back. */
static void stop_locked(sp_profiler *p) {
    __atomic_store_n(&p->active, 0, __ATOMIC_RELEASE);
    forget_thread_calls(p->uid);
    session_release(p);
}

/* Under g_lock: the direct write (see direct()).  0 or non-zero. */
static int write_direct(sp_profiler *p) {
    int rc = sps_finalize_to(p->path_h5);
    if (rc == 0) return 0;
    say("scope_profiler: failed to write %s: %s\n", p->path_h5,
            *sps_last_error() ? sps_last_error() : sps_strerror(rc));
    set_error(p, rc == SPS_ENOMEM ? SP_ERR_NO_MEMORY : SP_ERR_IO);
    return 1;
}

/* ---- line sampling: scope-profiler's "<stem>.sps" (its native_samples.py) ---- */

/* Appends n bytes to f; 0 or -1. */
static int put_bytes(FILE *f, const void *b, size_t n) { return fwrite(b, 1, n, f) == n ? 0 : -1; }
static int put_i32(FILE *f, int32_t v) { return put_bytes(f, &v, 4); }
static int put_i64(FILE *f, int64_t v) { return put_bytes(f, &v, 8); }
static int put_str(FILE *f, const char *s) {
    size_t n = strlen(s);
    return n > INT32_MAX || put_i32(f, (int32_t)n) || put_bytes(f, s, n);
}

/* The index of string s in v[0..*n), added when new (v holds pointers
 * into the caller's strings); -1 when v is full. */
static int32_t str_index(const char **v, int32_t *n, int32_t cap, const char *s) {
    for (int32_t i = 0; i < *n; i++)
        if (!strcmp(v[i], s)) return i;
    if (*n == cap) return -1;
    v[*n] = s;
    return (*n)++;
}

/* Writes p's samples, read from the spanscope file src, as scope-profiler's
 * sample file path (native byte order; its layout in native_samples.py):
 * per sample the innermost open region of p (index into the region list)
 * and the innermost native frame, as its module and an address whose
 * offset from the module's load address (written as 0) is the frame's
 * offset in the module, which is what scope-profiler's native-lines hands
 * to addr2line.  A sample of weight w (the timer periods it stands for)
 * is written w times: the format counts samples, not time.  0 or -1. */
static int write_sps(const sp_profiler *p, const char *src, const char *path) {
    sps_samples_t sm;
    if (sps_samples_read(src, &sm)) {
        sps_samples_free(&sm);
        return -1;
    }
    /* the region list is p's regions, as scope-profiler lists its own
     * (with samples or not); a sample's region is found by name */
    int32_t nreg = 0, nmod = 0, cap = (int32_t)(p->n + sm.nframes + 1);
    const char **regs = calloc((size_t)cap, sizeof *regs), **mods = calloc((size_t)cap, sizeof *mods);
    int32_t *reg_of_name = malloc((sm.nregion_names + 1) * sizeof *reg_of_name);
    size_t stemlen = strlen(p->stem);
    int64_t ticks = 0, count = 0;
    for (size_t i = 0; i < sm.n; i++) ticks += sm.weights[i];
    for (size_t k = 0; regs && k < p->n; k++) str_index(regs, &nreg, cap, p->regs[k].name);
    for (size_t i = 0; reg_of_name && regs && i < sm.nregion_names; i++) {
        const char *name = sm.region_names[i];
        /* a profiler sharing the session names its regions "<stem>:<name>" */
        if (p->qualified && !strncmp(name, p->stem, stemlen) && name[stemlen] == ':')
            name += stemlen + 1;
        reg_of_name[i] = -1;
        for (int32_t k = 0; k < nreg; k++)
            if (!strcmp(regs[k], name)) reg_of_name[i] = k;
    }
    FILE *f = regs && mods && reg_of_name ? fopen(path, "wb") : NULL;
    int rc = f ? 0 : -1;
    if (!rc) rc = put_bytes(f, "SCOPESMP", 8) || put_i32(f, 1) || put_i32(f, p->rank) ||
                  put_i32(f, sm.hz > 0 ? (int32_t)sm.hz : p->sample_hz) || put_i64(f, ticks) ||
                  put_i32(f, nreg);
    for (int32_t i = 0; !rc && i < nreg; i++) rc = put_str(f, regs[i]);
    /* the modules of the samples' innermost native frames, then the samples */
    int32_t *mod_of = calloc(sm.n + 1, sizeof *mod_of);
    int64_t *ip_of = calloc(sm.n + 1, sizeof *ip_of);
    if (!mod_of || !ip_of) rc = -1;
    for (size_t i = 0; !rc && i < sm.n; i++) {
        int64_t st = sm.stacks[i];
        mod_of[i] = -1;
        for (int64_t k = sm.stack_offsets[st]; k < sm.stack_offsets[st + 1]; k++) {
            int64_t fr = sm.stack_frames[k];
            if (sm.kinds[fr] != 0) continue;
            mod_of[i] = str_index(mods, &nmod, cap, sm.modules[fr]);
            ip_of[i] = sm.addresses[fr];
            break;
        }
        count += sm.weights[i];
    }
    if (!rc) rc = put_i32(f, nmod);
    for (int32_t i = 0; !rc && i < nmod; i++) rc = put_str(f, mods[i]) || put_i64(f, 0);
    if (!rc) rc = put_i64(f, count);
    for (size_t i = 0; !rc && i < sm.n; i++) {
        int32_t r = sm.regions[i] >= 0 ? reg_of_name[sm.regions[i]] : -1;
        for (int64_t w = 0; !rc && w < sm.weights[i]; w++)
            rc = put_i32(f, r) || put_i32(f, mod_of[i]) || put_i64(f, ip_of[i]);
    }
    if (f && fclose(f)) rc = -1;
    if (rc && f) unlink(path);
    free(mod_of), free(ip_of), free(regs), free(mods), free(reg_of_name);
    sps_samples_free(&sm);
    return rc;
}

/* Under g_lock, after p's file was written: when p sampled, stops the
 * sampler and writes "<stem>.sps" next to the file.  The samples come from
 * the session's own file (a direct write); else, when p is the session's
 * only profiler, from a finalize of the session into a temporary file (the
 * session then ends with p anyway). */
static void samples_out(sp_profiler *p, int wrote_direct) {
    if (!p->sampling) return;
    p->sampling = 0;
    size_t len = strlen(p->stem) + 32;
    char *sps = malloc(len), *tmp = malloc(len);
    if (!sps || !tmp) {
        free(sps), free(tmp);
        return;
    }
    snprintf(sps, len, "%s.sps", p->stem);
    snprintf(tmp, len, "%s.sps-tmp.h5", p->stem);
    const char *src = NULL;
    if (wrote_direct && p->format == SP_OUTPUT_HDF5) src = p->path_h5;
    else if (sole(p) && sps_finalize_to(tmp) == 0) src = tmp;
    if (!src)
        say("scope_profiler: line samples are written by the session's only profiler; "
            "%s not written\n", sps);
    else if (write_sps(p, src, sps))
        say("scope_profiler: could not write the line samples to %s\n", sps);
    if (src == tmp) unlink(tmp);
    free(sps), free(tmp);
}

/* sp_profiler_finalize (keep 0) and sp_profiler_finalize_or_keep (keep 1). */
static int finalize(sp_profiler *p, int keep) {
    if (!is_active(p)) return 0;
    pthread_mutex_lock(&g_lock);
    if (!is_active(p)) {
        pthread_mutex_unlock(&g_lock);
        return 0;
    }
    int *open = malloc((p->n ? p->n : 1) * sizeof *open);
    sp_region_stats *st = malloc((p->n ? p->n : 1) * sizeof *st);
    int any_open = open && open_of(p, open) > 0;
    /* the statistics first: a direct write ends the session's period */
    int have_stats = st && stats_of(p, st) == SP_OK;
    /* the session's writer names every region registered in it, with
     * calls or not; scope-profiler's files name the regions with calls:
     * the direct write only when each region has a completed call */
    int every_region_called = have_stats && open != NULL;
    for (size_t k = 0; every_region_called && k < p->n; k++)
        every_region_called = st[k].calls - open[k] > 0;
    /* the sampler stops before the write: the finalize's own work is no
     * sample of the program's (the samples taken stay for the file) */
    if (p->sampling) sps_sampling_stop();
    int wrote_direct = direct(p) && every_region_called;
    int failed = wrote_direct ? write_direct(p) : write_locked(p);
    if (!failed) samples_out(p, wrote_direct);
    if (failed && keep) {
        free(open);
        free(st);
        pthread_mutex_unlock(&g_lock);
        return failed;
    }
    for (size_t k = 0; any_open && k < p->n; k++)
        if (open[k])
            say(
                    "scope_profiler: region '%s' still open at sp_finalize "
                    "(depth %d); its last call(s) are dropped\n",
                    p->regs[k].name, open[k]);
    for (size_t k = 0; have_stats && k < p->n; k++) p->regs[k].final = st[k];
    if (any_open && !failed) set_error(p, SP_ERR_OPEN_SCOPES);
    free(open);
    free(st);
    stop_locked(p);
    pthread_mutex_unlock(&g_lock);
    return failed;
}

int sp_profiler_finalize(sp_profiler *profiler) { return finalize(profiler, 0); }

int sp_profiler_finalize_or_keep(sp_profiler *profiler) { return finalize(profiler, 1); }

static void destroy_locked(sp_profiler *p) {
    if (!p) return;
    if (is_active(p)) stop_locked(p);
    for (size_t k = 0; k < p->n; k++) {
        free(p->regs[k].name);
        free(p->regs[k].file);
    }
    free(p->regs);
    for (size_t i = 0; i < p->nretired; i++) free(p->retired[i]);
    free(p->retired);
    free(p->index);
    free(p->stem);
    free(p->label);
    free(p->path_h5);
    free(p->path_spt);
    free(p);
}

void sp_destroy(sp_profiler *profiler) {
    if (!profiler) return;
    pthread_mutex_lock(&g_lock);
    if (profiler == g_default) g_default = NULL;
    destroy_locked(profiler);
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------------------ */
/* Small queries and the output format                                       */
/* ------------------------------------------------------------------------ */

const char *sp_error_string(sp_status status) {
    switch (status) {
    case SP_OK: return "ok";
    case SP_ERR_INACTIVE: return "profiler is not active";
    case SP_ERR_NO_CLOCK: return "no monotonic clock available";
    case SP_ERR_NO_MEMORY: return "out of memory";
    case SP_ERR_IO: return "output file could not be written";
    case SP_ERR_UNMATCHED_END: return "no open call to end";
    case SP_ERR_OPEN_SCOPES: return "a region is still open";
    /* scope-profiler's words (its programs and tests compare them); the
     * other use, sp_start_sampling, is documented in the header */
    case SP_ERR_UNSUPPORTED: return "output format not available in this build";
    }
    return "unknown status";
}

int sp_profiler_is_active(const sp_profiler *profiler) { return is_active(profiler); }

sp_status sp_profiler_last_error(const sp_profiler *profiler) {
    return profiler ? (sp_status)__atomic_load_n(&profiler->last_error, __ATOMIC_RELAXED) : SP_OK;
}

int sp_hdf5_available(void) { return 1; }

sp_output_format sp_default_output_format(void) { return SP_OUTPUT_HDF5; }

sp_output_format sp_profiler_output_format(const sp_profiler *profiler) {
    return profiler ? profiler->format : SP_OUTPUT_HDF5;
}

int sp_profiler_set_output_format(sp_profiler *profiler, sp_output_format format) {
    if (!is_active(profiler)) return SP_ERR_INACTIVE;
    if (format != SP_OUTPUT_HDF5 && format != SP_OUTPUT_TRACE) {
        set_error(profiler, SP_ERR_UNSUPPORTED);
        return SP_ERR_UNSUPPORTED;
    }
    pthread_mutex_lock(&g_lock);
    profiler->format = format;
    pthread_mutex_unlock(&g_lock);
    set_error(profiler, SP_OK);
    return SP_OK;
}

const char *sp_profiler_output_path(const sp_profiler *profiler) {
    if (!profiler) return NULL;
    return profiler->format == SP_OUTPUT_TRACE ? profiler->path_spt : profiler->path_h5;
}

int sp_profiler_start_sampling(sp_profiler *profiler, int hz) {
    if (!is_active(profiler)) return SP_ERR_INACTIVE;
    pthread_mutex_lock(&g_lock);
    /* spanscope samples every thread; a second profiler's start shares
     * the running sampler */
    int rc = sps_sampling_start(hz > 0 ? hz : 0);
    sp_status s = rc == 0 || rc == SPS_EACTIVE ? SP_OK
                : rc == SPS_ENOMEM ? SP_ERR_NO_MEMORY : SP_ERR_UNSUPPORTED;
    if (s == SP_OK) {
        profiler->sampling = 1;
        profiler->sample_hz = sps_sampling_hz();
    } else {
        say("scope_profiler: could not start line sampling: %s\n",
            *sps_last_error() ? sps_last_error() : sps_strerror(rc));
    }
    pthread_mutex_unlock(&g_lock);
    set_error(profiler, s);
    return s;
}

int sp_profiler_stop_sampling(sp_profiler *profiler) {
    if (!profiler) return SP_OK;
    pthread_mutex_lock(&g_lock);
    /* the samples stay in the session for the next finalize */
    if (profiler->sampling) sps_sampling_stop();
    pthread_mutex_unlock(&g_lock);
    return SP_OK;
}

/* ------------------------------------------------------------------------ */
/* The default profiler                                                      */
/* ------------------------------------------------------------------------ */

int sp_init(const char *prefix, int rank) {
    pthread_mutex_lock(&g_lock);
    destroy_locked(g_default);
    g_default = create_locked(prefix, rank, 0);
    int ok = is_active(g_default);
    pthread_mutex_unlock(&g_lock);
    if (!g_default) say("scope_profiler: out of memory in sp_init\n");
    const char *hz = getenv("SCOPE_PROFILER_SAMPLE_HZ");
    if (ok && hz && atoi(hz) > 0) sp_start_sampling(atoi(hz));
    return ok ? 0 : 1;
}

sp_profiler *sp_default_profiler(void) {
    pthread_mutex_lock(&g_lock);
    sp_profiler *p = g_default;
    pthread_mutex_unlock(&g_lock);
    return p;
}

int sp_region(const char *name) { return sp_profiler_region(sp_default_profiler(), name); }

int sp_region_at(const char *name, const char *source_file, int source_line) {
    return sp_profiler_region_at(sp_default_profiler(), name, source_file, source_line);
}

void sp_begin(int region) {
    if (region > 0) sps_begin((sps_region_t)region);
}

void sp_end(int region) {
    if (region > 0) sps_end((sps_region_t)region);
}

int64_t sp_num_calls(int region) {
    sp_region_stats st;
    sp_profiler *p = sp_default_profiler();
    return p && sp_profiler_get_region_stats(p, region, &st) == SP_OK ? st.calls : 0;
}

int64_t sp_now_ns(void) { return sps_now_ns(); }

int sp_is_active(void) { return is_active(sp_default_profiler()); }

int sp_set_output_format(sp_output_format format) {
    return sp_profiler_set_output_format(sp_default_profiler(), format);
}

sp_output_format sp_current_output_format(void) {
    return sp_profiler_output_format(sp_default_profiler());
}

const char *sp_output_path(void) { return sp_profiler_output_path(sp_default_profiler()); }

int sp_finalize(void) { return sp_profiler_finalize(sp_default_profiler()); }

int sp_start_sampling(int hz) { return sp_profiler_start_sampling(sp_default_profiler(), hz); }

int sp_stop_sampling(void) { return sp_profiler_stop_sampling(sp_default_profiler()); }
