/* instrument.c -- libspanscope_instrument: every function of a program
 * built with -finstrument-functions (GCC, Clang; gfortran too) a region,
 * with no change to its source (docs/instrument.md).
 *
 * The compiler puts a call of __cyg_profile_func_enter(fn, site) at the
 * start of each instrumented function and one of __cyg_profile_func_exit
 * at each of its ends.  glibc defines both as no-ops; this library
 * defines them too, and wins where it comes before libc in the lookup
 * order: linked (-lspanscope_instrument, which the linker lists before the
 * implicit -lc) or preloaded (LD_PRELOAD=libspanscope_instrument.so).
 *
 * A library of its own, an integration of the fifth layer: it uses the
 * public API only (spanscope.h; linked with --no-undefined, a hidden core
 * symbol would fail the build) and util.h's inline integer hash.
 *
 *   - The session: a constructor sets it up from the environment
 *     (sps_env_resolve: SPANSCOPE_OUTPUT and the other SPANSCOPE_*
 *     settings over the TOML file SPANSCOPE_CONFIG names) before main, and an atexit handler finalizes it -- only when some
 *     instrumented function was recorded, so that an uninstrumented child
 *     that inherits LD_PRELOAD (a shell of system()) writes no file.
 *   - Each function is a region, named once, at its first call, outside
 *     the timed interval of that call: dladdr for exported symbols, else
 *     the object's ELF symbol table (.symtab, else .dynsym: static
 *     functions), read once per object; C++ names demangled with
 *     __cxa_demangle when the process has libstdc++ (looked up with dlsym:
 *     this library needs no C++).  The public API cannot rename a region,
 *     so the name is made at the first call, not at finalize.
 *   - SPANSCOPE_INSTRUMENT_INCLUDE / SPANSCOPE_INSTRUMENT_EXCLUDE (comma-
 *     separated fnmatch globs on the name, or on the object's path with a
 *     leading '@') are decided once per function, and a function left out
 *     is cached as "skip": its calls cost the cache lookup only.
 *   - The hot path: a per-thread direct-mapped cache (address -> region id
 *     or skip) in front of a global open-addressing table whose readers
 *     take no lock; a per-thread shadow stack of (function, region, frame)
 *     makes nesting exact when exits are missed (longjmp, a C++ exception
 *     where the compiler emits no exit): an exit of a function below the
 *     top ends the calls above it first, and a new call whose frame (the
 *     slot of its return address, x86-64) lies at or above a recorded
 *     call's ends that call (its frame is gone), so the core sees only
 *     well-nested pairs.
 *   - The first call of a function (per function, not per call) costs
 *     about a microsecond (dladdr, dl_iterate_phdr, the patterns,
 *     sps_region); the first of an object also reads its symbol table
 *     (about 0.1 ms for a small program).
 */
#include "util/util.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spanscope.h>

#define NOINSTR __attribute__((no_instrument_function))
#define EXPORT __attribute__((visibility("default")))

/* The hooks the compiler calls (GCC's names; Clang and gfortran use them
 * too).  Exported; never instrumented themselves. */
EXPORT NOINSTR void __cyg_profile_func_enter(void *fn, void *site);
EXPORT NOINSTR void __cyg_profile_func_exit(void *fn, void *site);

/* ------------------------------------------------------------------------ */
/* The global table: function address -> region id (0: skip)                */
/* ------------------------------------------------------------------------ */

/* Insert-only open addressing with linear probing, load at most one half.
 * util's sps__htab is an index for one thread's items; this one must be
 * read by every thread while another inserts, without a lock: a slot's
 * value is stored before its key (release), readers load the key
 * (acquire) then the value.  Inserts take g_lock.  A grown table is
 * published with a release store; the old one is kept (a reader may still
 * be walking it) on a list, so the memory is at most twice the live
 * table's. */
typedef struct gslot {
    uintptr_t key; /* function address; 0: empty */
    uint32_t val;  /* region id, 0 for skip */
} gslot_t;

typedef struct gtab {
    size_t cap, n;
    struct gtab *older; /* the table this one replaced */
    gslot_t slot[];
} gtab_t;

static gtab_t *g_tab; /* atomic pointer */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

NOINSTR static int gtab_find(uintptr_t a, uint32_t *val) {
    gtab_t *t = __atomic_load_n(&g_tab, __ATOMIC_ACQUIRE);
    if (!t) return 0;
    size_t mask = t->cap - 1, i = (size_t)sps__hash_u64(a) & mask;
    for (;;) {
        uintptr_t k = __atomic_load_n(&t->slot[i].key, __ATOMIC_ACQUIRE);
        if (k == a) {
            *val = __atomic_load_n(&t->slot[i].val, __ATOMIC_RELAXED);
            return 1;
        }
        if (!k) return 0;
        i = (i + 1) & mask;
    }
}

/* Puts (a, val) into t, which has room (g_lock held). */
NOINSTR static void gtab_put(gtab_t *t, uintptr_t a, uint32_t val) {
    size_t mask = t->cap - 1, i = (size_t)sps__hash_u64(a) & mask;
    while (t->slot[i].key) i = (i + 1) & mask;
    __atomic_store_n(&t->slot[i].val, val, __ATOMIC_RELAXED);
    __atomic_store_n(&t->slot[i].key, a, __ATOMIC_RELEASE);
    t->n++;
}

/* Adds a -> val unless a is there already; returns the value a has.  On
 * failure to grow the table, val is returned and nothing is kept (the
 * function is decided again by its next call on a thread whose cache
 * lacks it). */
NOINSTR static uint32_t gtab_insert(uintptr_t a, uint32_t val) {
    pthread_mutex_lock(&g_lock);
    uint32_t have;
    if (gtab_find(a, &have)) {
        pthread_mutex_unlock(&g_lock);
        return have;
    }
    gtab_t *t = g_tab;
    if (!t || (t->n + 1) * 2 > t->cap) {
        size_t cap = t ? t->cap * 2 : 1024;
        gtab_t *nt = calloc(1, sizeof *nt + cap * sizeof nt->slot[0]);
        if (!nt) {
            pthread_mutex_unlock(&g_lock);
            return val;
        }
        nt->cap = cap;
        nt->older = t;
        if (t)
            for (size_t i = 0; i < t->cap; i++)
                if (t->slot[i].key) gtab_put(nt, t->slot[i].key, t->slot[i].val);
        __atomic_store_n(&g_tab, nt, __ATOMIC_RELEASE);
        t = nt;
    }
    gtab_put(t, a, val);
    pthread_mutex_unlock(&g_lock);
    return val;
}

/* ------------------------------------------------------------------------ */
/* Per-thread state: the cache and the shadow stack                         */
/* ------------------------------------------------------------------------ */

#define CACHE_BITS 10 /* 1024 entries, 16 KiB a thread */
#define DEAD_STATE ((tstate_t *)(uintptr_t)1)
/* Where a call's frame is: its CFA, the address of the slot that holds
 * its return address (the hook's site), found by scanning up from the
 * hook's own frame through the instrumented function's (x86-64: at most
 * CFA_SCAN words; elsewhere, or not found: CFA_UNKNOWN, and such a call
 * is ended by exits only).  A live caller's CFA lies above its callee's,
 * so a recorded call whose CFA is at or below a new call's is over: a
 * longjmp skipped its exit.  One that lies more than SAME_STACK_SPAN
 * below is taken for another stack (a handler on sigaltstack) and left
 * alone. */
#define CFA_UNKNOWN UINTPTR_MAX
#define CFA_SCAN 256
#define SAME_STACK_SPAN ((uintptr_t)8 << 20)

typedef struct centry {
    uintptr_t key;
    uint32_t val;
} centry_t;

/* A call on the shadow stack.  region 0: pushed while no session
 * recorded (paused, or none), so not begun, but kept so that exits pair
 * up with their own calls. */
typedef struct frame {
    uintptr_t fn, cfa;
    uint32_t region;
} frame_t;

typedef struct tstate {
    centry_t cache[1u << CACHE_BITS];
    frame_t *stack;
    uint32_t depth, cap;
    int resolving; /* inside resolve(): calls it makes are not recorded */
} tstate_t;

static __thread tstate_t *t_state __attribute__((tls_model("initial-exec")));
static pthread_key_t g_key;
static int g_key_ok;

/* The cache slot of a function: its address over 16, modulo the cache.
 * An instrumented function is longer than 16 bytes (two calls), so
 * functions laid out next to each other never share a slot; a shift, not
 * a hash, since the filtered path is this lookup and little else. */
NOINSTR static inline size_t cache_slot(uintptr_t a) {
    return (size_t)(a >> 4) & ((1u << CACHE_BITS) - 1);
}

/* At thread exit (pthread's key destructor): frees the state; hooks the
 * thread still runs (other destructors) do nothing. */
NOINSTR static void tstate_free(void *p) {
    tstate_t *t = p;
    t_state = DEAD_STATE;
    if (t) {
        free(t->stack);
        free(t);
    }
}

NOINSTR static tstate_t *tstate_new(void) {
    tstate_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->cap = 128;
    t->stack = malloc(t->cap * sizeof *t->stack);
    if (!t->stack) {
        free(t);
        return NULL;
    }
    if (g_key_ok) pthread_setspecific(g_key, t);
    t_state = t;
    return t;
}

NOINSTR static int stack_grow(tstate_t *t) {
    if (t->cap > UINT32_MAX / 2) return -1;
    frame_t *s = realloc(t->stack, (size_t)t->cap * 2 * sizeof *s);
    if (!s) return -1;
    t->stack = s;
    t->cap *= 2;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Names: util/symbols.c                                                     */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* Filters                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct patterns {
    char **v;
    size_t n;
} patterns_t;

static patterns_t g_include, g_exclude;

/* Splits a comma-separated list (spaces around a pattern are dropped). */
NOINSTR static int patterns_parse(const char *s, patterns_t *out) {
    out->v = NULL;
    out->n = 0;
    if (!s) return 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    out->v = calloc(cap, sizeof *out->v);
    if (!out->v) return -1;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l && (*p == ' ' || *p == '\t')) {
            p++;
            l--;
        }
        while (l && (p[l - 1] == ' ' || p[l - 1] == '\t')) l--;
        if (l) {
            char *c = strndup(p, l);
            if (!c) return -1;
            out->v[out->n++] = c;
        }
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* 1 when a pattern of ps matches: "@glob" the object's path, "glob" the
 * function's name. */
NOINSTR static int patterns_match(const patterns_t *ps, const char *name, const char *obj) {
    for (size_t i = 0; i < ps->n; i++) {
        const char *p = ps->v[i];
        if (p[0] == '@' ? fnmatch(p + 1, obj, 0) == 0 : fnmatch(p, name, 0) == 0) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Deciding a function: name, filter, region                                */
/* ------------------------------------------------------------------------ */

static int g_recorded_any; /* some function was made a region */

/* The inline functions of spanscope's own headers (a begin or end of a
 * region of the program's own): built with -finstrument-functions they
 * get the hooks too, and recorded they would double every region. */
NOINSTR static int api_inline(const char *name) {
    static const char *const own[] = {"sps_begin", "sps_end", "sps__scope_begin",
                                      "sps__scope_end", "sp_begin_inline_", "sp_end_inline_"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (!strcmp(name, own[i])) return 1;
    return 0;
}

/* Names the function at a (into buf), applies the filters and returns its
 * region id, or 0 when it is left out.  Called once per function (per
 * thread at worst, when two threads race to its first call), outside
 * g_lock: dladdr and dl_iterate_phdr take the dynamic loader's lock, which
 * a thread running an instrumented constructor under dlopen holds while it
 * waits for ours. */
NOINSTR static uint32_t resolve(uintptr_t a) {
    char name[512], obj[4096];
    sps__sym_name(a, 1, name, sizeof name, obj, sizeof obj, NULL);
    uint32_t id = 0;
    if (!api_inline(name) && (!g_include.n || patterns_match(&g_include, name, obj)) &&
        !patterns_match(&g_exclude, name, obj)) {
        id = sps_region(name);
        if (id) __atomic_store_n(&g_recorded_any, 1, __ATOMIC_RELAXED);
    }
    return id;
}

/* A miss of t's cache: the global table, else a first call. */
NOINSTR __attribute__((noinline)) static uint32_t lookup_slow(tstate_t *t, uintptr_t a) {
    uint32_t v;
    if (!gtab_find(a, &v)) {
        t->resolving = 1;
        v = gtab_insert(a, resolve(a));
        t->resolving = 0;
    }
    centry_t *c = &t->cache[cache_slot(a)];
    c->key = a;
    c->val = v;
    return v;
}

/* ------------------------------------------------------------------------ */
/* The hooks                                                                 */
/* ------------------------------------------------------------------------ */

/* Ends the calls of t's stack from the top down to depth d. */
NOINSTR static void unwind_to(tstate_t *t, uint32_t d) {
    while (t->depth > d) {
        t->depth--;
        if (t->stack[t->depth].region) sps_end(t->stack[t->depth].region);
    }
}

/* Non-zero while a session records (not paused). */
NOINSTR static inline int recording(void) {
    return __atomic_load_n(&sps__active, __ATOMIC_RELAXED) != 0;
}

/* The CFA of the instrumented function that called a hook whose own CFA
 * is hook_cfa (__builtin_dwarf_cfa() in the hook: the instrumented
 * function's frame starts there, whatever the hook's optimisation and
 * whatever it spilled below): the first slot above holding site, the
 * instrumented function's return address (see CFA_UNKNOWN). */
NOINSTR static inline uintptr_t frame_cfa(const void *hook_cfa, const void *site) {
#if defined(__x86_64__)
    const uintptr_t *p = hook_cfa;
    for (int i = 0; i < CFA_SCAN; i++)
        if (p[i] == (uintptr_t)site) return (uintptr_t)&p[i];
#else
    (void)hook_cfa, (void)site;
#endif
    return CFA_UNKNOWN;
}

/* 1 when the recorded call f is over for a new call at cfa (see above). */
NOINSTR static inline int frame_gone(const frame_t *f, uintptr_t cfa) {
    return cfa != CFA_UNKNOWN && f->cfa <= cfa && cfa - f->cfa <= SAME_STACK_SPAN;
}

/* Pushes the call of a (region r, CFA cfa) on t's stack and begins it
 * (while a session records), ending first the calls on top whose frames
 * are gone. */
NOINSTR static void push_begin(tstate_t *t, uintptr_t a, uint32_t r, uintptr_t cfa) {
    while (t->depth && frame_gone(&t->stack[t->depth - 1], cfa)) unwind_to(t, t->depth - 1);
    if (t->depth == t->cap && stack_grow(t)) return;
    int on = recording();
    t->stack[t->depth++] = (frame_t){a, cfa, on ? r : 0};
    if (on) sps__begin(r);
}

/* A recorded call (the hook's second half, out of line so that a call
 * left out never sets up a frame). */
NOINSTR __attribute__((noinline)) static void enter_record(tstate_t *t, uintptr_t a, uint32_t r,
                                                           void *site, void *hook_cfa) {
    uintptr_t cfa = frame_cfa(hook_cfa, site);
    uint32_t d = t->depth;
    /* the call on top is over (its frame is gone), or the stack is full */
    if (SPS__UNLIKELY(d && t->stack[d - 1].cfa <= cfa && cfa != CFA_UNKNOWN) ||
        SPS__UNLIKELY(d == t->cap)) {
        push_begin(t, a, r, cfa);
        return;
    }
    int on = recording();
    t->stack[d] = (frame_t){a, cfa, on ? r : 0};
    t->depth = d + 1;
    if (on) sps__begin(r);
}

/* A first call of this thread (t NULL; DEAD_STATE: it is exiting), or
 * a miss of its cache.  A thread's state is made at its first call while
 * a session records; until then its calls cost this check only. */
NOINSTR __attribute__((noinline)) static void enter_slow(tstate_t *t, uintptr_t a, void *site,
                                                         void *hook_cfa) {
    if (t == DEAD_STATE) return;
    if (!t && (!recording() || !(t = tstate_new()))) return;
    if (t->resolving) return;
    uint32_t r = lookup_slow(t, a);
    if (r) push_begin(t, a, r, frame_cfa(hook_cfa, site));
}

/* The fast path: a function left out costs the thread's cache lookup
 * (no frame, no session check); a recorded one the lookup, the push and
 * the session check and the begin.  Calls are pushed while no session
 * records too (a pause): an exit must find its own call, not an outer
 * call of the same function. */
void __cyg_profile_func_enter(void *fn, void *site) {
    tstate_t *t = t_state;
    uintptr_t a = (uintptr_t)fn;
    if (SPS__UNLIKELY((uintptr_t)t <= 1)) {
        enter_slow(t, a, site, __builtin_dwarf_cfa());
        return;
    }
    const centry_t *c = &t->cache[cache_slot(a)];
    if (SPS__UNLIKELY(c->key != a)) {
        enter_slow(t, a, site, __builtin_dwarf_cfa());
        return;
    }
    uint32_t r = c->val;
    if (!r) return;
    enter_record(t, a, r, site, __builtin_dwarf_cfa());
}

NOINSTR __attribute__((noinline)) static void exit_slow(tstate_t *t, uintptr_t a) {
    if (t->resolving) return;
    centry_t *c = &t->cache[cache_slot(a)];
    uint32_t r = c->key == a ? c->val : lookup_slow(t, a);
    if (!r) return; /* left out */
    /* below the top: end the calls above it, whose exits were skipped; not
     * on the stack (entered before the session, or beyond memory): ignore */
    for (uint32_t k = t->depth; k-- > 0;)
        if (t->stack[k].fn == a) {
            unwind_to(t, k);
            return;
        }
}

void __cyg_profile_func_exit(void *fn, void *site) {
    (void)site;
    tstate_t *t = t_state;
    if (SPS__UNLIKELY((uintptr_t)t <= 1)) return; /* none, or exiting */
    uintptr_t a = (uintptr_t)fn;
    const centry_t *c = &t->cache[cache_slot(a)];
    uint32_t d = t->depth;
    if (c->key == a && !c->val) return; /* left out: the lookup only */
    if (!d) return;                     /* nothing recorded open on this thread */
    if (SPS__LIKELY(t->stack[d - 1].fn == a)) {
        uint32_t r = t->stack[d - 1].region;
        t->depth = d - 1;
        if (r) sps_end(r);
        return;
    }
    exit_slow(t, a);
}

/* ------------------------------------------------------------------------ */
/* The session                                                               */
/* ------------------------------------------------------------------------ */

static int g_own_session;     /* this library set the session up */
static char g_output[4096];   /* the output path, %p expanded */

/* SPANSCOPE_OUTPUT with each "%p" replaced by the process id and "%%" by
 * "%", into g_output.  0, or -1 when it does not fit. */
NOINSTR static int expand_output(const char *in) {
    size_t o = 0;
    for (const char *p = in; *p; p++) {
        char tmp[24];
        const char *piece = tmp;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            strcpy(tmp, "%");
            p++;
        } else {
            tmp[0] = *p;
            tmp[1] = 0;
        }
        size_t l = strlen(piece);
        if (o + l >= sizeof g_output) return -1;
        memcpy(g_output + o, piece, l);
        o += l;
    }
    g_output[o] = 0;
    return 0;
}

NOINSTR static int env_flag(const char *name, int dflt) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    if (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
        !strcasecmp(v, "off"))
        return 0;
    if (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
        !strcasecmp(v, "on"))
        return 1;
    fprintf(stderr, "spanscope_instrument: %s=%s: expected 1/0, true/false, yes/no or on/off; "
            "taken as %d\n", name, v, dflt);
    return dflt;
}

/* At exit: the session this library set up is finalized (written), when
 * some function was recorded; else closed without a file. */
NOINSTR static void instrument_exit(void) {
    if (!g_own_session || !sps_is_active()) return;
    g_own_session = 0;
    if (!__atomic_load_n(&g_recorded_any, __ATOMIC_RELAXED)) {
        sps_shutdown();
        return;
    }
    int rc = sps_finalize();
    if (rc)
        fprintf(stderr, "spanscope_instrument: writing %s failed: %s (%s)\n",
                g_output[0] ? g_output : "(no file)", sps_strerror(rc), sps_last_error());
    sps_shutdown(); /* later hooks (other exit handlers) record nothing */
}

/* Before main: the filters, and the session from the environment
 * (docs/instrument.md lists the variables).  Bad settings are told on
 * stderr in one line each, and the program runs unprofiled. */
NOINSTR __attribute__((constructor)) static void instrument_init(void) {
    g_key_ok = pthread_key_create(&g_key, tstate_free) == 0;
    if (patterns_parse(getenv("SPANSCOPE_INSTRUMENT_INCLUDE"), &g_include) ||
        patterns_parse(getenv("SPANSCOPE_INSTRUMENT_EXCLUDE"), &g_exclude)) {
        fprintf(stderr, "spanscope_instrument: out of memory reading the filters\n");
        return;
    }
    if (!env_flag("SPANSCOPE_INSTRUMENT_SETUP", 1)) return; /* the program's own session */
    /* the variables over the SPANSCOPE_CONFIG file, as every face reads
     * them (docs/configuration.md); e's strings live until the next
     * resolution, and sps_setup copies what it keeps.  The file's
     * perf_events are not applied here: sps_env_t has no field for them,
     * only sps_setup_from_env applies them. */
    sps_env_t e;
    char err[512];
    int rc = sps_env_resolve(&e, err, sizeof err);
    if (rc) {
        fprintf(stderr, "spanscope_instrument: %s; not profiling\n", err);
        return;
    }
    if (e.deactivate == 1) return;
    sps_config_t cfg = e.cfg;
    const char *out = e.has_output ? e.cfg.file_path : "spanscope_instrument.h5";
    if (out) {
        if (expand_output(out)) {
            fprintf(stderr, "spanscope_instrument: SPANSCOPE_OUTPUT is too long; not profiling\n");
            return;
        }
        cfg.file_path = g_output;
    }
    cfg.verbose = env_flag("SPANSCOPE_INSTRUMENT_VERBOSE", 0);
    rc = sps_setup(&cfg);
    if (rc) {
        if (rc != SPS_EACTIVE)
            fprintf(stderr, "spanscope_instrument: sps_setup: %s; not profiling\n",
                    sps_strerror(rc));
        return;
    }
    g_own_session = 1;
    if (atexit(instrument_exit)) {
        fprintf(stderr, "spanscope_instrument: atexit failed; not profiling\n");
        g_own_session = 0;
        sps_shutdown();
    }
}
