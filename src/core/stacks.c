/* stacks.c -- native call stacks of spans, captured only on request.
 *
 * sps_capture_stacks(1) switches a running events session into the state
 * SPS__EVENTS_EXTRA.  The hot path compares the state with SPS__EVENTS, so
 * in that state every record takes the out-of-line path (buffer.c), which
 * records as usual and then, for a begin, calls sps__stack_note: one
 * backtrace(), cut at the user's call site (the return address of
 * sps__begin, passed down), interned into a process-wide table, and the
 * pair (record sequence number, stack id) appended to the thread's table.  sps_spans
 * looks a span's stack up by (thread, sequence number of its begin).
 * Nothing here runs while capture is off.
 *
 * Locks: g_lock guards the interning table and the array of per-thread
 * tables; each thread's table has its own lock (its owner appends, queries
 * read under the session lock).  Lock order: session lock, then g_lock,
 * then a thread table's lock.
 */
#include "core/core.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STACK_MAX 32   /* frames kept per stack */
#define STACK_SKIP 1   /* sps__stack_note itself; the rest of the recording
                          path is cut at the call site (or, failing that,
                          dropped when formatting: own_prefix) */
#define STACK_OWN 4    /* extra frames taken for the recording path, so a
                          cut stack still keeps up to STACK_MAX */

typedef struct stack_ent {
    uint32_t n;
    uint32_t cut;        /* starts at the call site: no own_prefix */
    void **frames;       /* n return addresses, innermost first */
} stack_ent_t;

typedef struct seq_tab {
    pthread_mutex_t lock;
    uint64_t epoch;
    uint64_t *seq;       /* begin record sequence numbers, increasing */
    uint32_t *id;
    size_t n, cap;
} seq_tab_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static stack_ent_t *g_ents;   /* id - 1 -> stack */
static size_t g_nents, g_capents;
static sps__htab_t g_index;   /* (frames, cut) -> id - 1 (util.h) */
static seq_tab_t **g_tabs;    /* by thread index */
static size_t g_ntabs;
static int g_used;            /* capture was switched on at least once */

/* Under g_lock: the id of stack f[0..n) (cut: it starts at the call
 * site), interned on first sight; 0 when out of memory. */
static uint32_t intern(void *const *f, int n, uint32_t cut) {
    uint64_t h = sps__hash_pair(sps__hash_bytes(f, (size_t)n * sizeof *f), cut);
    sps__hprobe_t p = sps__htab_probe(&g_index, h);
    for (uint32_t i; sps__htab_next(&g_index, &p, &i);) {
        const stack_ent_t *e = &g_ents[i];
        if (e->n == (uint32_t)n && e->cut == cut && !memcmp(e->frames, f, n * sizeof *f))
            return i + 1;
    }
    if (sps__htab_make_room(&g_index, &p)) return 0;
    if (g_nents == g_capents) {
        size_t cap = g_capents ? g_capents * 2 : 256;
        stack_ent_t *p = realloc(g_ents, cap * sizeof *p);
        if (!p) return 0;
        g_ents = p;
        g_capents = cap;
    }
    void **copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy) return 0;
    memcpy(copy, f, n * sizeof *f);
    g_ents[g_nents] = (stack_ent_t){(uint32_t)n, cut, copy};
    sps__htab_put(&g_index, &p, (uint32_t)g_nents);
    return (uint32_t)++g_nents;
}

/* Under g_lock: the table of thread index i (created on first use). */
static seq_tab_t *tab_of(uint32_t i) {
    if (i >= g_ntabs) {
        size_t n = (size_t)i * 2 + 8;
        seq_tab_t **p = realloc(g_tabs, n * sizeof *p);
        if (!p) return NULL;
        memset(p + g_ntabs, 0, (n - g_ntabs) * sizeof *p);
        g_tabs = p;
        g_ntabs = n;
    }
    if (!g_tabs[i] && (g_tabs[i] = calloc(1, sizeof **g_tabs)))
        pthread_mutex_init(&g_tabs[i]->lock, NULL);
    return g_tabs[i];
}

/* Appends (seq, id) to tab, forgetting entries of an earlier session.
 * A thread's numbering never restarts within a session (buffer.c keeps it
 * across drops and finalizes), so only an epoch change resets: resetting
 * on a smaller seq would lose the stacks of calls still open and let a
 * later begin's stack answer for them. */
static void tab_add(seq_tab_t *tab, uint64_t epoch, uint64_t seq, uint32_t id) {
    pthread_mutex_lock(&tab->lock);
    if (tab->epoch != epoch) {
        tab->n = 0; /* a new session */
        tab->epoch = epoch;
    }
    if (tab->n && tab->seq[tab->n - 1] >= seq) { /* cannot happen; keeps the
                                                     table sorted regardless */
        pthread_mutex_unlock(&tab->lock);
        return;
    }
    if (tab->n == tab->cap) {
        size_t cap = tab->cap ? tab->cap * 2 : 1024;
        uint64_t *s = realloc(tab->seq, cap * sizeof *s);
        if (s) tab->seq = s;
        uint32_t *d = realloc(tab->id, cap * sizeof *d);
        if (d) tab->id = d;
        if (s && d) tab->cap = cap;
    }
    if (tab->n < tab->cap) {
        tab->seq[tab->n] = seq;
        tab->id[tab->n++] = id;
    }
    pthread_mutex_unlock(&tab->lock);
}

void sps__stack_note(const sps__thr_t *t, uint64_t seq, void *caller) {
    void *f[STACK_MAX + STACK_SKIP + STACK_OWN];
    int n = backtrace(f, STACK_MAX + STACK_SKIP + STACK_OWN);
    int skip = n > STACK_SKIP ? STACK_SKIP : 0;
    /* Cut at the call site: the frame equal to sps__begin's return address
     * is the user's.  Symbols cannot tell our frames from the user's when
     * both are in one executable (static linking, no -rdynamic), so
     * own_prefix is only the fallback (caller not among the frames). */
    uint32_t cut = 0;
    for (int i = skip; caller && i < n; i++)
        if (f[i] == caller) {
            skip = i;
            cut = 1;
            break;
        }
    if (n - skip > STACK_MAX) n = skip + STACK_MAX;
    pthread_mutex_lock(&g_lock);
    uint32_t id = intern(f + skip, n - skip, cut);
    seq_tab_t *tab = id ? tab_of(t->index) : NULL;
    pthread_mutex_unlock(&g_lock);
    if (tab) tab_add(tab, t->epoch, seq, id);
}

uint32_t sps__stack_lookup(uint32_t thread, uint64_t epoch, uint64_t seq) {
    uint32_t id = 0;
    pthread_mutex_lock(&g_lock);
    seq_tab_t *tab = thread < g_ntabs ? g_tabs[thread] : NULL;
    pthread_mutex_unlock(&g_lock);
    if (!tab) return 0;
    pthread_mutex_lock(&tab->lock);
    if (tab->epoch == epoch) {
        size_t lo = 0, hi = tab->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (tab->seq[mid] < seq) lo = mid + 1;
            else hi = mid;
        }
        if (lo < tab->n && tab->seq[lo] == seq) id = tab->id[lo];
    }
    pthread_mutex_unlock(&tab->lock);
    return id;
}

int sps__stacks_used(void) { return __atomic_load_n(&g_used, __ATOMIC_RELAXED); }

/* In the fork child, where only the forking thread exists: a lock another
 * thread held at fork time would stay locked forever. */
void sps__stacks_atfork_child(void) {
    pthread_mutex_init(&g_lock, NULL);
    for (size_t i = 0; i < g_ntabs; i++)
        if (g_tabs[i]) pthread_mutex_init(&g_tabs[i]->lock, NULL);
}

int sps_capture_stacks(int on) {
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder now, not inside a span */
    pthread_mutex_lock(&sps__g.lock);
    int s = sps__state_load(), rc = 0;
    if (s == SPS__OFF || sps__g.pid != getpid()) rc = SPS_ENOSESSION;
    else if (sps__g.mode != SPS__EVENTS) rc = SPS_EMODE;
    else {
        /* stacks take the out-of-line path for every record, which then
         * reads every value too: no delta groups meanwhile (values.c) */
        int mem_only = sps__g.cfg.track == SPS_TRACK_MEMORY;
        __atomic_store_n(&sps__g.stacks_on, on != 0, __ATOMIC_RELAXED);
        __atomic_store_n(&sps__mem_delta, mem_only && !on, __ATOMIC_RELAXED);
        sps__state_store(on || (sps__g.nvals && !mem_only) ? SPS__EVENTS_EXTRA : SPS__EVENTS);
    }
    /* set under the session lock, which sps_spans holds while it reads */
    if (!rc && on) __atomic_store_n(&g_used, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&sps__g.lock);
    return rc;
}

/* Appends "symbol+0xoff (object)" or "0xaddr (object)" for address a. */
static size_t format_frame(char *buf, size_t cap, void *a) {
    Dl_info di;
    int n;
    /* a return address points after the call; a-1 names the call's line */
    if (dladdr((char *)a - 1, &di) && di.dli_fname) {
        const char *obj = strrchr(di.dli_fname, '/');
        obj = obj ? obj + 1 : di.dli_fname;
        if (di.dli_sname)
            n = snprintf(buf, cap, "%s+0x%lx (%s)\n", di.dli_sname,
                         (unsigned long)((char *)a - (char *)di.dli_saddr), obj);
        else
            n = snprintf(buf, cap, "0x%lx (%s+0x%lx)\n", (unsigned long)(uintptr_t)a, obj,
                         (unsigned long)((char *)a - (char *)di.dli_fbase));
    } else {
        n = snprintf(buf, cap, "0x%lx\n", (unsigned long)(uintptr_t)a);
    }
    return n < 0 ? 0 : (size_t)n;
}

/* True when return address a is in spanscope's own recording path: in the
 * object holding this code, under no symbol or an sps_ one. */
static int own_frame(void *a, const void *own_base) {
    Dl_info di;
    if (!dladdr((char *)a - 1, &di) || di.dli_fbase != own_base) return 0;
    return !di.dli_sname || strncmp(di.dli_sname, "sps_", 4) == 0;
}

/* How many leading frames f[0..n) belong to the recording path (how many
 * the compiler kept depends on inlining and tail calls); 0 if that is all.
 * Only for stacks not cut at the call site. */
static uint32_t own_prefix(void *const *f, uint32_t n) {
    Dl_info self;
    if (!dladdr((void *)sps_stack_format, &self)) return 0;
    uint32_t k = 0;
    while (k < n && own_frame(f[k], self.dli_fbase)) k++;
    return k < n ? k : 0;
}

size_t sps_stack_format(uint32_t id, char *buf, size_t cap) {
    if (buf && cap) buf[0] = 0;
    /* Copy the frames under g_lock and resolve them after: dladdr takes
     * the loader's lock and is slow, and recording threads wait on g_lock. */
    void *f[STACK_MAX];
    uint32_t n = 0, cut = 0;
    pthread_mutex_lock(&g_lock);
    if (id > 0 && id <= g_nents) {
        const stack_ent_t *e = &g_ents[id - 1];
        n = e->n < STACK_MAX ? e->n : STACK_MAX;
        cut = e->cut;
        memcpy(f, e->frames, n * sizeof *f);
    }
    pthread_mutex_unlock(&g_lock);
    size_t need = 0;
    char line[1024];
    for (uint32_t i = cut ? 0 : own_prefix(f, n); i < n; i++) {
        size_t k = format_frame(line, sizeof line, f[i]);
        if (k >= sizeof line) k = sizeof line - 1;
        if (buf && need + k < cap) memcpy(buf + need, line, k + 1);
        need += k;
    }
    return need;
}
