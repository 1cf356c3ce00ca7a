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
 * in the reverse order of their registration, the child handlers in that
 * order):
 *   1. fork_prepare (ours, in the parent): notes whether a session records
 *      here, the policy (SPANSCOPE_FORK read now, in the parent, unless
 *      sps_fork_policy set it), the sampling rate and the parent's pid.
 *      Atomics and getenv only: it takes no lock, so it is right whether
 *      it runs before or after core's prepare (which takes the session
 *      lock and waits for the spill writer's background step).
 *   2. capture_child (ours, in the child, registered from this file's
 *      constructor, so before core's handlers, which the first sps_setup
 *      registers): the forking thread's open calls, while the inherited
 *      session is still whole (its spill file open, the lock held since
 *      core's prepare, the one thread that exists now).
 *   3. core's atfork_child (session.c) switches the inherited session off,
 *      lets the spill file go, marks the other threads exited, re-inits
 *      the locks, and at its end calls sps__fork_child_hook: fork_child.
 *   4. fork_child opens the child's session through sps_setup (local: no
 *      MPI in a child), begins the open calls again (at the fork: the
 *      child's session start), sets /metadata (ppid, parent_output,
 *      fork_open_calls, and the parent's added attributes), and carries
 *      over what the parent's session had switched on beside its config:
 *      sampling, native stacks, a pause, the registered regions and their
 *      sources and tags.
 *
 * Where step 2 cannot run first (a static link whose program calls
 * sps_setup from a constructor that runs before this file's), fork_child
 * reads the open calls itself, after core let the spill file go: exact in
 * aggregate mode and for records still in memory; records of the forking
 * thread that were spilled and not analyzed yet are then not read, and the
 * open calls are those known before them.
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
 * not re-initialised by core: a parent thread holding one at the fork
 * would leave it held in the child, where opening the session waits on it. */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* sps_fork_policy's choice: -1 none (SPANSCOPE_FORK decides), 0 off, 1 own */
static int g_policy = -1;

/* What fork_prepare saw in the parent and capture_child in the child.
 * Written by the forking thread only, inside fork(): no other thread of
 * the parent reads them, and the child has no other thread. */
static struct {
    int live;            /* a session recorded in the parent */
    int own;             /* the policy for this fork */
    int hz;              /* the parent's sampling rate (0: none) */
    pid_t ppid;          /* the parent's pid */
    int hook_done;       /* fork_child ran in this child */
    int captured;        /* capture_child read the open calls */
    sps_region_t *open;  /* the forking thread's open calls, outermost first */
    size_t nopen;
} g_fk;

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

static void fork_prepare(void) {
    free(g_fk.open); /* an earlier fork's: only a child uses it */
    g_fk.open = NULL;
    g_fk.nopen = 0;
    g_fk.captured = g_fk.hook_done = 0;
    g_fk.live = sps__state_load() != SPS__OFF;
    g_fk.own = g_fk.live && policy_now();
    g_fk.hz = g_fk.own ? sps_sampling_hz() : 0;
    g_fk.ppid = getpid();
}

/* Copies stack s's regions, outermost first, into g_fk. */
static void keep_open(const sps__stack_t *s) {
    g_fk.nopen = 0;
    if (!s->n || !(g_fk.open = malloc(s->n * sizeof *g_fk.open))) return;
    for (size_t i = 0; i < s->n; i++) g_fk.open[i] = s->f[i].region;
    g_fk.nopen = s->n;
}

/* The forking thread's open calls, from the inherited session (the child's
 * one thread; the session lock is core's prepare's, or core's child handler
 * re-initialised it).  Aggregate mode: the recorder's own stack.  Events:
 * the analyzer's stack brought up to the fork. */
static void read_open_calls(void) {
    sps__thr_t *t = sps__tls;
    g_fk.captured = 1;
    if (!t || t == &sps__dummy_thr || t->epoch != sps__g.epoch) return;
    if (sps__g.mode == SPS__AGGREGATE) {
        keep_open(&t->agg_stack);
        return;
    }
    sps__g.sp.forked = 1; /* no helper thread for the reading (model/ahead.c) */
    sps__analyze_thread(t); /* on a read error: the calls known before it */
    keep_open(&t->stack);
}

/* Step 2 (see the top): before core's child handler, the session whole. */
static void capture_child(void) {
    if (g_fk.hook_done || !g_fk.own || sps__g.pid != g_fk.ppid) return;
    read_open_calls();
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
    cfg.sample_hz = cfg.aggregate ? 0 : g_fk.hz;
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
    g_fk.hook_done = 1;
    if (!g_fk.own || sps__g.pid != g_fk.ppid) return; /* off: as before */
    if (!g_fk.captured) read_open_calls(); /* see the top */
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
    free(g_fk.open);
    g_fk.open = NULL;
    g_fk.nopen = 0;
    carried_free(&c);
}

/* Registers the handlers; from a constructor, so that (as a rule) ours are
 * registered before core's, which the first sps_setup registers. */
__attribute__((constructor)) static void fork_register(void) {
    pthread_atfork(fork_prepare, NULL, capture_child);
    sps__fork_child_hook = fork_child;
}
