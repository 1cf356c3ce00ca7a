/* fork.c -- forked children record into profiles of their own.
 *
 * A process that forks while a session records gives the child (policy
 * "own", the default: sps_fork_policy, SPANSCOPE_FORK) a session of its
 * own, opened in the fork's child handler by the normal path (sps_setup)
 * with the parent's settings, writing DIR/STEM.pid<PID>.EXT
 * (sps_fork_child_path); policy "off" keeps the old behaviour (the
 * child's copy of the session is off: it records nothing).
 * docs/process-trees.md, "Forked children".
 *
 * The fork, step by step (pthread_atfork; POSIX runs the prepare handlers
 * in the reverse order of their registration, the parent and child
 * handlers in that order):
 *   1. fork_prepare (ours, in the parent, registered from this file's
 *      constructor: before core's handlers, which the first sps_setup
 *      registers, so it runs after core's prepare, which holds the session
 *      lock and has waited for the spill writer's background step): notes
 *      whether a session records here, the policy (SPANSCOPE_FORK read now,
 *      in the parent, unless sps_fork_policy set it), the parent's pid, and the forking thread's open calls: in aggregate
 *      mode the recorder's own stack, else the analyzer's stack brought up
 *      to the fork (as sps_open_calls does).  In the parent, not in the
 *      child: the child's copies of the chunks may change under it until
 *      core's child handler makes them private (crash-safe sessions map
 *      them shared with the parent, whose threads run on and may recycle
 *      the forking thread's chunks).  Where core registered its handlers
 *      first (a static link whose program calls sps_setup from a
 *      constructor that runs before this file's), ours runs before core's
 *      prepare and takes the lock itself.
 *   2. core's atfork_child (session.c) switches the inherited session off,
 *      lets the spill file go, makes the chunks private, marks the other
 *      threads exited, re-inits the locks, and at its end calls
 *      sps__fork_child_hook: fork_child.
 *   3. fork_child opens the child's session through sps_setup (local: no
 *      MPI in a child), begins the open calls again (at the fork: the
 *      child's session start), sets /metadata (ppid, parent_output,
 *      fork_open_calls, and the parent's added attributes), and carries
 *      over what the parent's session had switched on beside its config:
 *      native stacks, a pause, the registered regions and their
 *      sources and tags.
 *
 * What a child handler may call: POSIX allows only async-signal-safe
 * functions in the child of a multithreaded process.  This one allocates
 * (malloc, strdup, snprintf) and reads the environment, as the rest of the
 * child's recording will: glibc's malloc and stdio are fork-safe (their
 * locks are reset in the child before the handlers run), and the session's
 * own locks are re-initialised by core.  It starts no thread, except the
 * sampler's when the parent was sampling (glibc allows it; ThreadSanitizer
 * kills such a child: sanitizer runs do not sample across a fork).  The
 * locks of region attributes, tasks, /metadata and the region registry are
 * re-initialised by core before this hook runs (session.c's atfork_child). */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* sps_fork_policy's choice: -1 none (SPANSCOPE_FORK decides), 0 off, 1 own */
static int g_policy = -1;

/* What fork_prepare saw in the parent, for the child.  Written by the
 * forking thread only, inside fork() (glibc runs the handlers of one fork
 * at a time): no other thread reads them, and the child has no other. */
static struct {
    int own;             /* a session records and the policy is own */
    pid_t ppid;          /* the parent's pid */
    sps_region_t *open;  /* the forking thread's open calls, outermost first */
    size_t nopen;
} g_fk;
/* core registered its fork handlers before ours (fork_register) */
static int g_core_first;

/* ------------------------------------------------------------------------ */
/* The policy and the path                                                   */
/* ------------------------------------------------------------------------ */

/* SPANSCOPE_FORK as a policy: 1 own (unset, "", own, on, 1, true, yes), 0
 * off (off, none, 0, false, no), -1 another value (children record, as by
 * default). */
static int env_policy(void) {
    const char *v = getenv("SPANSCOPE_FORK");
    if (!v || !*v) return 1;
    static const char *const own[] = {"own", "on", "1", "true", "yes"};
    static const char *const off[] = {"off", "none", "0", "false", "no"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (strcasecmp(v, own[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof off / sizeof *off; i++)
        if (strcasecmp(v, off[i]) == 0) return 0;
    return -1;
}

/* The policy in force: sps_fork_policy's, else the environment's. */
static int policy_now(void) {
    int p = __atomic_load_n(&g_policy, __ATOMIC_RELAXED);
    if (p >= 0) return p;
    return env_policy() != 0;
}

int sps_fork_policy(int own) {
    if (own < -1 || own > 1)
        return sps__err_fail(SPS_EINVAL, "sps_fork_policy: %d: expected 1 (own), 0 (off) "
                                         "or -1 (ask)", own);
    int before = __atomic_load_n(&g_policy, __ATOMIC_RELAXED);
    if (own >= 0) {
        __atomic_store_n(&g_policy, own, __ATOMIC_RELAXED);
        return before >= 0 ? before : env_policy() != 0;
    }
    if (before >= 0) return before;
    int e = env_policy();
    if (e < 0)
        return sps__err_fail(SPS_EINVAL, "SPANSCOPE_FORK=%s: expected own or off (children "
                                         "record into profiles of their own meanwhile)",
                             getenv("SPANSCOPE_FORK"));
    return e;
}

size_t sps_fork_child_path(const char *parent_path, int64_t pid, char *out, size_t cap) {
    if (out && cap) out[0] = 0;
    if (!parent_path || !*parent_path || pid <= 0) return 0;
    const char *slash = strrchr(parent_path, '/');
    const char *base = slash ? slash + 1 : parent_path;
    const char *dot = strrchr(base, '.');
    /* a name's extension: from its last dot, when that dot neither starts
     * the name (".h5": a hidden file's whole name) nor ends it */
    if (dot && (dot == base || dot[1] == 0)) dot = NULL;
    size_t stem = dot ? (size_t)(dot - parent_path) : strlen(parent_path);
    char suffix[32];
    int ns = snprintf(suffix, sizeof suffix, ".pid%lld", (long long)pid);
    size_t ext = dot ? strlen(dot) : 0;
    size_t need = stem + (size_t)ns + ext;
    if (out && cap > need) {
        memcpy(out, parent_path, stem);
        memcpy(out + stem, suffix, (size_t)ns);
        if (ext) memcpy(out + stem + (size_t)ns, dot, ext);
        out[need] = 0;
    }
    return need;
}

/* ------------------------------------------------------------------------ */
/* The fork                                                                  */
/* ------------------------------------------------------------------------ */

/* Copies stack s's regions, outermost first, into g_fk. */
static void keep_open(const sps__stack_t *s) {
    g_fk.nopen = 0;
    if (!s->n || !(g_fk.open = malloc(s->n * sizeof *g_fk.open))) return;
    for (size_t i = 0; i < s->n; i++) g_fk.open[i] = s->f[i].region;
    g_fk.nopen = s->n;
}

/* Under the session lock: the forking thread's open calls. */
static void read_open_calls(void) {
    sps__thr_t *t = sps__tls;
    if (!t || t == &sps__dummy_thr || t->epoch != sps__g.epoch) return;
    if (sps__g.mode == SPS__AGGREGATE) {
        keep_open(&t->agg_stack);
        return;
    }
    sps__analyze_thread(t); /* on a read error: the calls known before it */
    keep_open(&t->stack);
}

static void fork_prepare(void) {
    g_fk.open = NULL;
    g_fk.nopen = 0;
    /* not in the library's own children (util/isolate.c: a file checked) */
    g_fk.own = !sps__internal_fork && sps__state_load() != SPS__OFF && policy_now();
    g_fk.ppid = getpid();
    if (!g_fk.own) return;
    /* the lock: core's prepare took it in this thread (our handlers were
     * registered first), unless core registered first: then it is free or
     * another thread's, and ours to take */
    int mine = pthread_mutex_trylock(&sps__g.lock) == 0;
    if (!mine && g_core_first) {
        pthread_mutex_lock(&sps__g.lock);
        mine = 1;
    }
    if (sps__g.pid == getpid()) read_open_calls();
    else g_fk.own = 0; /* an inherited session, switched off */
    if (mine) pthread_mutex_unlock(&sps__g.lock);
}

/* The parent keeps nothing of it. */
static void fork_parent(void) {
    free(g_fk.open);
    g_fk.open = NULL;
    g_fk.nopen = 0;
}

/* The parent's registered regions in the order it registered them
 * (malloc'd; *n of them), so that the child's files list them alike. */
static sps_region_t *registered_regions(size_t *n) {
    *n = 0;
    uint32_t cap = sps__g.registered_cap, nr = sps__g.nregistered;
    if (!nr || !sps__g.registered) return NULL;
    sps_region_t *v = calloc(nr, sizeof *v);
    if (!v) return NULL;
    for (uint32_t r = 0; r < cap; r++) {
        uint32_t k = sps__g.registered[r];
        if (k && k <= nr) v[k - 1] = r;
    }
    for (uint32_t k = 0; k < nr; k++)
        if (v[k]) v[(*n)++] = v[k];
    return v;
}

/* The JSON list of the open calls' names (malloc'd; NULL without memory). */
static char *open_calls_json(void) {
    size_t len = 1, cap = 64;
    char *s = malloc(cap);
    if (!s) return NULL;
    s[0] = '[';
    for (size_t i = 0; i < g_fk.nopen; i++) {
        size_t q = 0;
        char *name = sps__json_quote(sps_region_name(g_fk.open[i]), &q);
        if (!name) {
            free(s);
            return NULL;
        }
        if (len + q + 3 > cap) {
            cap = 2 * (len + q + 3);
            char *p = realloc(s, cap);
            if (!p) {
                free(name);
                free(s);
                return NULL;
            }
            s = p;
        }
        if (i) s[len++] = ',';
        memcpy(s + len, name, q);
        len += q;
        free(name);
    }
    s[len++] = ']';
    s[len] = 0;
    return s;
}

/* What the parent's session held beside its configuration, read from the
 * inherited copy before the child's session replaces it. */
typedef struct carried {
    sps_config_t cfg;
    char *path, *parent_path, *label, *spill_dir; /* owned */
    int paused, stacks;
    sps_region_t *regs;  /* registered, in order */
    size_t nregs;
    sps__rinfo_t *info;  /* [nregs] their sources and tags */
    char **mkeys, **mvalues; /* the /metadata a binding added */
    size_t nmeta;
} carried_t;

static void carried_free(carried_t *c) {
    free(c->path);
    free(c->parent_path);
    free(c->label);
    free(c->spill_dir);
    for (size_t i = 0; c->info && i < c->nregs; i++) sps__rinfo_free(&c->info[i]);
    free(c->info);
    free(c->regs);
    sps__meta_free(c->mkeys, c->mvalues, c->nmeta);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* 0, or SPS_ENOMEM. */
static int carry(carried_t *c) {
    memset(c, 0, sizeof *c);
    const sps_config_t *p = &sps__g.cfg;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.verbose = p->verbose;
    cfg.aggregate = sps__g.mode == SPS__AGGREGATE;
    cfg.memory_limit = p->memory_limit;
    cfg.chunk_size = p->chunk_size;
    cfg.overflow = p->overflow;
    cfg.track = p->track;
    cfg.compress_threshold = p->compress_threshold;
    cfg.rank = p->rank;
    cfg.size = p->size;
    cfg.spill_limit = p->spill_limit;
    cfg.local = 1; /* no MPI in a child */
    /* the configured rate (a rate sps_sampling_start chose later is the
     * sampler's, an integration the api layer does not call by name) */
    cfg.sample_hz = cfg.aggregate ? 0 : p->sample_hz;
    c->parent_path = dup_or_null(sps__g.file_path);
    c->label = dup_or_null(sps__g.label);
    c->spill_dir = dup_or_null(sps__g.spill_dir);
    if ((sps__g.file_path && !c->parent_path) || (sps__g.label && !c->label) ||
        (sps__g.spill_dir && !c->spill_dir))
        return SPS_ENOMEM;
    if (c->parent_path) {
        size_t n = sps_fork_child_path(c->parent_path, getpid(), NULL, 0);
        if (!(c->path = malloc(n + 1))) return SPS_ENOMEM;
        sps_fork_child_path(c->parent_path, getpid(), c->path, n + 1);
    }
    cfg.file_path = c->path;
    cfg.label = c->label;
    cfg.spill_dir = c->spill_dir;
    c->cfg = cfg;
    c->paused = __atomic_load_n(&sps__paused, __ATOMIC_RELAXED);
    c->stacks = __atomic_load_n(&sps__g.stacks_on, __ATOMIC_RELAXED);
    c->regs = registered_regions(&c->nregs);
    if (c->nregs && (c->info = calloc(c->nregs, sizeof *c->info)))
        for (size_t i = 0; i < c->nregs; i++) sps__rinfo_copy(c->regs[i], &c->info[i]);
    sps__meta_copy(&c->mkeys, &c->mvalues, &c->nmeta);
    return 0;
}

/* Step 4: the child's session. */
static void fork_child(void) {
    if (!g_fk.own || sps__g.pid != g_fk.ppid) { /* off: as before */
        fork_parent();
        return;
    }
    carried_t c;
    int rc = carry(&c);
    if (!rc) {
        rc = sps_setup(&c.cfg);
        if (rc && c.cfg.sample_hz) { /* the sampler could not start here */
            c.cfg.sample_hz = 0;
            rc = sps_setup(&c.cfg);
        }
    }
    if (rc) { /* the child records nothing, as with policy off */
        carried_free(&c);
        fork_parent();
        return;
    }
    for (size_t i = 0; i < c.nregs; i++) { /* the parent's regions, its order */
        sps_region(sps_region_name(c.regs[i]));
        const sps__rinfo_t *ri = c.info ? &c.info[i] : NULL;
        if (ri && (ri->file || ri->text || ri->line >= 0))
            sps_region_set_source(c.regs[i], ri->file, ri->line, ri->text);
        if (ri && ri->tags) sps_region_set_tags(c.regs[i], ri->tags);
    }
    for (size_t i = 0; i < c.nmeta; i++) sps_metadata_set(c.mkeys[i], c.mvalues[i]);
    char ppid[32];
    snprintf(ppid, sizeof ppid, "%lld", (long long)g_fk.ppid);
    sps_metadata_set("ppid", ppid);
    sps_metadata_set("parent_output", c.parent_path ? c.parent_path : "");
    char *open = open_calls_json();
    if (open) sps_metadata_set("fork_open_calls", open);
    free(open);
    if (c.stacks) sps_capture_stacks(1);
    /* the calls open at the fork begin again at the child's start, before
     * a pause would make their begins record nothing */
    for (size_t i = 0; i < g_fk.nopen; i++) sps__begin(g_fk.open[i]);
    if (c.paused) sps_pause();
    fork_parent(); /* the list is spent */
    carried_free(&c);
}

/* Registers the handlers; from a constructor, so that ours are registered
 * before core's, which the first sps_setup registers (a session already
 * opened means core's came first: see fork_prepare). */
__attribute__((constructor)) static void fork_register(void) {
    g_core_first = sps__g.pid != 0;
    pthread_atfork(fork_prepare, fork_parent, NULL);
    sps__fork_child_hook = fork_child;
}
