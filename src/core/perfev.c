/* perfev.c -- perf_event counters per thread, read at every begin and end
 * of a session that tracks them (sps_config_t.track & SPS_TRACK_COUNTERS,
 * docs/perf-events.md).
 *
 * Why it is built this way:
 * - scope-profiler opens, enables, reads and closes each counter at every
 *   region call (five syscalls or more per event per call).  Here a
 *   thread opens its events ONCE, as a group, at its first read, and every
 *   later read is either rdpmc (no syscall: the kernel's mmap page says
 *   which hardware counter holds the event, and the instruction reads it
 *   from user space) or ONE read() of the whole group.  The counts are
 *   cumulative; a span's own value is its end's reading minus its begin's,
 *   which the model folds like time.
 * - Events go in one group per kernel PMU (pmu_key): a group is scheduled
 *   as a whole, and a member of another PMU than its leader's is never
 *   scheduled with it (it reads 0).  The usual sets need two: the core
 *   PMU's hardware events, read with rdpmc, and the software events, one
 *   read() that also gives task-clock (thr_open says how); cpu-clock, and
 *   task-clock without other software events, are a group of their own.
 * - The read path takes no lock, allocates nothing and prints nothing: it
 *   runs inside sps_begin / sps_end.  Everything that can fail or print
 *   happens at the thread's first read (the open), under a mutex.
 * - Thread state is one calloc'd struct reached through ONE initial-exec
 *   TLS pointer: a big TLS block broke `import spanscope` before (a
 *   dlopen'ed library's static TLS is taken from a small surplus).
 * - An event the machine cannot count (no PMU on a VM, kernel policy) is
 *   reported once per process on stderr and reads 0: the rest of the
 *   profile is still worth having.
 */
#include "core/core.h"
#include "core/perfev.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NAME_MAX_LEN 127 /* longest event name sps_set_counters takes */
#define REPORTED_MAX 64  /* distinct names reported unavailable, per process */

/* ------------------------------------------------------------------------ */
/* Event names                                                               */
/* ------------------------------------------------------------------------ */

/* One event as perf_event_open takes it (what a name encodes to). */
typedef struct ev_desc {
    uint32_t type;
    uint64_t config, config1, config2;
    /* privilege levels the name itself asks to leave out (libpfm4's
     * modifiers, "cycles:u"); kernel policy may add exclude_kernel/hv */
    uint8_t excl_user, excl_kernel, excl_hv;
    char name[NAME_MAX_LEN + 1]; /* as the caller wrote it, trimmed */
} ev_desc_t;

typedef struct ev_set {
    uint32_t n;
    ev_desc_t ev[SPS__PERF_MAX];
} ev_set_t;

/* The generic names perf stat -e takes (tools/perf/util/parse-events.c's
 * hardware and software symbols), with their aliases. */
static const struct generic {
    const char *name;
    uint32_t type;
    uint64_t config;
} generic[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
};

/* libpfm4, loaded at run time (a program that never names a libpfm event
 * never loads it, and spanscope builds without its headers).  These few
 * declarations come from perfmon/pfmlib.h and perfmon/pfmlib_perf_event.h
 * (libpfm4 4.x, ABI stable since 4.0): pfm_initialize, pfm_strerror,
 * pfm_get_os_event_encoding with PFM_OS_PERF_EVENT and its argument
 * pfm_perf_encode_arg_t. */
typedef struct pfm_perf_encode_arg {
    struct perf_event_attr *attr; /* in/out: the attr libpfm fills */
    char **fstr;                  /* out: fully qualified name (NULL: none) */
    size_t size;                  /* sizeof this struct */
    int idx, cpu, flags, pad0;
} pfm_perf_encode_arg_t;
#define PFM_SUCCESS 0
#define PFM_PLM0 0x01 /* kernel */
#define PFM_PLM3 0x08 /* user */
#define PFM_OS_PERF_EVENT 1
static struct {
    int state; /* 0 not tried, 1 loaded and initialised, -1 not there */
    int (*encode)(const char *, int, int, void *);
    const char *(*strerror)(int);
} g_pfm;

/* ------------------------------------------------------------------------ */
/* Process state (under g_lock; never touched by the read path)              */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static ev_set_t g_choice; /* sps_set_counters' */
static ev_set_t g_sess;   /* the session's frozen copy (names stay valid
                             until the next sps__perf_session_open) */
/* A thread's open events belong to one epoch; the read path compares it
 * with this one and opens again when they differ: bumped by every session
 * open and close, and in a forked child (whose inherited descriptors
 * count the parent's thread, not the child). */
static _Atomic uint32_t g_epoch = 1;
static char g_reported[REPORTED_MAX][NAME_MAX_LEN + 1];
static int g_nreported;
/* 1 once an open was refused for counting the kernel: later opens count
 * user space alone at once (kernel.perf_event_paranoid >= 2 without
 * CAP_PERFMON) instead of failing first each time. */
static _Atomic int g_user_only;

/* Under g_lock: loads libpfm4 once.  1 when it is usable. */
static int pfm_load(void) {
    if (g_pfm.state) return g_pfm.state > 0;
    g_pfm.state = -1;
    void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
    int (*init)(void) = (int (*)(void))dlsym(h, "pfm_initialize");
    g_pfm.encode = (int (*)(const char *, int, int, void *))dlsym(h, "pfm_get_os_event_encoding");
    g_pfm.strerror = (const char *(*)(int))dlsym(h, "pfm_strerror");
    if (!init || !g_pfm.encode || !g_pfm.strerror || init() != PFM_SUCCESS) {
        dlclose(h);
        return 0;
    }
    g_pfm.state = 1; /* kept loaded for the life of the process */
    return 1;
}

/* Under g_lock: encodes one name (a generic name first, then libpfm4).
 * 0, or SPS_EINVAL with the message set. */
static int encode(const char *name, ev_desc_t *d) {
    memset(d, 0, sizeof *d);
    memcpy(d->name, name, strlen(name) + 1);
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
        if (strcasecmp(name, generic[i].name) == 0) {
            d->type = generic[i].type;
            d->config = generic[i].config;
            return 0;
        }
    if (!pfm_load())
        return sps__err_fail(SPS_EINVAL,
                             "unknown perf event '%s' (libpfm4, libpfm.so.4, is not available: "
                             "only the generic names such as cycles, instructions, task-clock, "
                             "page-faults are known)", name);
    /* libpfm may write a perf_event_attr larger than this kernel header's */
    union {
        struct perf_event_attr a;
        unsigned char room[512];
    } attr;
    memset(&attr, 0, sizeof attr);
    pfm_perf_encode_arg_t arg;
    memset(&arg, 0, sizeof arg);
    arg.attr = &attr.a;
    arg.size = sizeof arg;
    int rc = g_pfm.encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    if (rc != PFM_SUCCESS)
        return sps__err_fail(SPS_EINVAL, "unknown perf event '%s' (libpfm4: %s)", name,
                             g_pfm.strerror(rc));
    d->type = attr.a.type;
    d->config = attr.a.config;
    d->config1 = attr.a.config1;
    d->config2 = attr.a.config2;
    d->excl_user = (uint8_t)attr.a.exclude_user;
    d->excl_kernel = (uint8_t)attr.a.exclude_kernel;
    d->excl_hv = (uint8_t)attr.a.exclude_hv;
    return 0;
}

/* Takes comma-separated names as perf stat -e does; the contract is in
 * include/spanscope.h.  Names are trimmed of blanks; an empty name, a
 * name longer than 127 bytes, more than SPS__PERF_MAX names, a repeated
 * name or an unknown one is SPS_EINVAL and leaves the choice as it was.
 * Thread-safe (g_lock); sessions already running keep their frozen copy. */
int sps_set_counters(const char *names) {
    ev_set_t *next = calloc(1, sizeof *next); /* ~3 KiB: not on the stack */
    if (!next) return sps__err_fail(SPS_ENOMEM, "sps_set_counters: out of memory");
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    const char *p = names ? names : "";
    while (*p == ' ' || *p == '\t') p++;
    while (*p && rc == 0) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *q = p;
        size_t n = len;
        while (n && (*q == ' ' || *q == '\t')) q++, n--;
        while (n && (q[n - 1] == ' ' || q[n - 1] == '\t')) n--;
        char name[NAME_MAX_LEN + 1];
        if (n == 0)
            rc = sps__err_fail(SPS_EINVAL, "sps_set_counters: an empty event name in \"%s\"",
                               names);
        else if (n > NAME_MAX_LEN)
            rc = sps__err_fail(SPS_EINVAL, "sps_set_counters: an event name longer than %d "
                               "bytes", NAME_MAX_LEN);
        else if (next->n == SPS__PERF_MAX)
            rc = sps__err_fail(SPS_EINVAL, "sps_set_counters: more than %u events",
                               SPS__PERF_MAX);
        if (rc) break;
        memcpy(name, q, n);
        name[n] = '\0';
        for (uint32_t i = 0; i < next->n && rc == 0; i++)
            if (strcasecmp(next->ev[i].name, name) == 0)
                rc = sps__err_fail(SPS_EINVAL, "sps_set_counters: event '%s' named twice", name);
        if (rc == 0) rc = encode(name, &next->ev[next->n]);
        if (rc == 0) next->n++;
        if (!end) break;
        p = end + 1;
        if (*p == '\0')
            rc = sps__err_fail(SPS_EINVAL, "sps_set_counters: an empty event name in \"%s\"",
                               names);
    }
    if (rc == 0) g_choice = *next;
    pthread_mutex_unlock(&g_lock);
    free(next);
    return rc;
}

/* Session setup (under the session lock): freezes the choice. */
uint32_t sps__perf_session_open(void) {
    pthread_mutex_lock(&g_lock);
    g_sess = g_choice;
    uint32_t n = g_sess.n;
    atomic_fetch_add_explicit(&g_epoch, 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* The session's names: read without the lock, as the contract allows
 * (they change only in sps__perf_session_open). */
const char *sps__perf_name(uint32_t i) {
    return i < g_sess.n ? g_sess.ev[i].name : NULL;
}

/* ------------------------------------------------------------------------ */
/* Per-thread state                                                          */
/* ------------------------------------------------------------------------ */

/* One group: a leader and its members, read together (one read(), or
 * rdpmc for each member). */
typedef struct grp {
    uint8_t nm;                  /* members opened, the leader first */
    uint8_t rdpmc;               /* 1: every member read through its page */
    uint8_t slot[SPS__PERF_MAX]; /* member k's index in the session's order */
} grp_t;

typedef struct thr {
    uint32_t epoch;   /* g_epoch when the set was opened */
    pid_t pid;        /* the process that opened it */
    uint32_t n;       /* events of the set */
    uint32_t ng;      /* groups in g[] */
    uint32_t avail;   /* bit i: event i counts */
    int fd[SPS__PERF_MAX];                           /* by slot; -1: none */
    struct perf_event_mmap_page *page[SPS__PERF_MAX]; /* by slot; rdpmc only */
    grp_t g[SPS__PERF_MAX];
    uint64_t last[SPS__PERF_MAX]; /* the last values handed out */
    uint64_t buf[3 + SPS__PERF_MAX];
    uint64_t reads, syscalls, opens;
    /* task-clock read from the software group's time_enabled (thr_open):
     * its slot and that group's index, -1 when not */
    int32_t tclock_slot, tclock_grp;
} thr_t;

static __thread thr_t *g_tls __attribute__((tls_model("initial-exec")));
static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static long g_page_size;

/* Closes the thread's descriptors and unmaps its pages (the state stays). */
static void thr_release(thr_t *t) {
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->page[i]) munmap(t->page[i], (size_t)g_page_size);
        if (t->fd[i] >= 0) close(t->fd[i]);
        t->page[i] = NULL;
        t->fd[i] = -1;
    }
    memset(t->g, 0, sizeof t->g);
    t->ng = t->n = t->avail = 0;
}

/* pthread key destructor: a thread's events die with it. */
static void thr_destroy(void *p) {
    thr_t *t = p;
    thr_release(t);
    if (g_tls == t) g_tls = NULL;
    free(t);
}

/* fork: the child's first read opens its own events (the inherited
 * descriptors count the parent's thread); the lock is held across fork so
 * that the child never inherits it locked.  The session's fork handlers
 * (session.c) call these, after taking the session lock: one order of the
 * two locks, the one session setup takes them in (sps__perf_session_open
 * runs under the session lock); handlers of our own, registered later,
 * would run first and take them the other way round. */
void sps__perf_atfork_prepare(void) { pthread_mutex_lock(&g_lock); }
void sps__perf_atfork_parent(void) { pthread_mutex_unlock(&g_lock); }
void sps__perf_atfork_child(void) {
    atomic_fetch_add_explicit(&g_epoch, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g_lock);
}

static void once_init(void) {
    sps__process_init(); /* the session's fork handlers, which call ours */
    pthread_key_create(&g_key, thr_destroy);
    g_page_size = sysconf(_SC_PAGESIZE);
}

static int sys_perf_event_open(struct perf_event_attr *a, int group_fd) {
    return (int)syscall(SYS_perf_event_open, a, 0 /* this thread */, -1 /* any cpu */,
                        group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Opens one event (counting from now: disabled = 0) into the group led by
 * group_fd (-1: as a leader).  Counts the kernel too unless the name or
 * the kernel's policy says otherwise: an open refused for that (EACCES,
 * EPERM) is retried for user space alone, and so are all later ones.
 * The descriptor, or -1 with errno. */
static int open_event(const ev_desc_t *d, int group_fd) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = d->type;
    a.config = d->config;
    a.config1 = d->config1;
    a.config2 = d->config2;
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                    PERF_FORMAT_TOTAL_TIME_RUNNING;
    a.disabled = 0;
    a.exclude_user = d->excl_user;
    int user_only = atomic_load_explicit(&g_user_only, memory_order_relaxed);
    a.exclude_kernel = d->excl_kernel || user_only;
    a.exclude_hv = d->excl_hv || user_only;
    int fd = sys_perf_event_open(&a, group_fd);
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !(a.exclude_kernel && a.exclude_hv)) {
        a.exclude_kernel = a.exclude_hv = 1;
        fd = sys_perf_event_open(&a, group_fd);
        if (fd >= 0) atomic_store_explicit(&g_user_only, 1, memory_order_relaxed);
    }
    return fd;
}

/* perf_event_paranoid, for the report of a refused event (-9: unknown). */
static int paranoid(void) {
    int v = -9;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = -9;
        fclose(f);
    }
    return v;
}

/* Once per process and name: one stderr line saying why the event reads 0. */
static void report_unavailable(const char *name, int err) {
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nreported; i++)
        if (strcmp(g_reported[i], name) == 0) {
            pthread_mutex_unlock(&g_lock);
            return;
        }
    if (g_nreported < REPORTED_MAX) strcpy(g_reported[g_nreported++], name);
    pthread_mutex_unlock(&g_lock);
    char why[160];
    switch (err) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        snprintf(why, sizeof why, "not supported here (%s: no PMU for it, as on most VMs)",
                 strerror(err));
        break;
    case EACCES:
    case EPERM:
        snprintf(why, sizeof why, "not permitted (%s; kernel.perf_event_paranoid = %d)",
                 strerror(err), paranoid());
        break;
    default:
        snprintf(why, sizeof why, "%s", strerror(err));
    }
    fprintf(stderr, "spanscope: perf event '%s' cannot be counted: %s; it reads 0\n", name, why);
}

/* Which kernel PMU counts an event: events of different PMUs go in
 * different groups.  A group is scheduled as a whole onto one PMU, and a
 * member of another PMU is never scheduled with it: measured on Linux
 * 6.18, page-faults in a group led by task-clock (or task-clock under
 * page-faults) reads 0 forever.  The core PMU takes the hardware, cache
 * and raw types; the software PMU every software event but cpu-clock and
 * task-clock, which are each their own (hrtimer) PMU; tracepoints,
 * breakpoints and every dynamic PMU type (uncore, a hybrid CPU's second
 * core type) are theirs. */
#define SWEVENT_KEY ((uint64_t)1 << 40 | 0xffff) /* the software PMU's */
static uint64_t pmu_key(const ev_desc_t *d) {
    switch (d->type) {
    case PERF_TYPE_HARDWARE:
    case PERF_TYPE_HW_CACHE:
    case PERF_TYPE_RAW:
        return 0;
    case PERF_TYPE_SOFTWARE:
        if (d->config == PERF_COUNT_SW_CPU_CLOCK || d->config == PERF_COUNT_SW_TASK_CLOCK)
            return (uint64_t)1 << 40 | d->config;
        return SWEVENT_KEY;
    default:
        return (uint64_t)2 << 40 | d->type;
    }
}

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_RDPMC 1
static inline uint64_t rdpmc(uint32_t counter) {
    uint32_t lo, hi;
    __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
    return (uint64_t)hi << 32 | lo;
}
static inline uint64_t rdtsc_(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}
#else
#define HAVE_RDPMC 0
#endif

/* Maps every member's page of a core-PMU group and keeps them when the
 * leader's says the counters may be read from user space
 * (cap_user_rdpmc); else unmaps them and the group is read with read(). */
static void try_rdpmc(thr_t *t, grp_t *g) {
#if HAVE_RDPMC
    if (getenv("SPANSCOPE_PERF_NO_RDPMC")) return; /* to measure read() on a PMU */
    for (uint32_t m = 0; m < g->nm; m++) {
        uint8_t s = g->slot[m];
        void *p = mmap(NULL, (size_t)g_page_size, PROT_READ, MAP_SHARED, t->fd[s], 0);
        if (p == MAP_FAILED) goto fail;
        t->page[s] = p;
        if (!t->page[s]->cap_user_rdpmc) goto fail;
    }
    g->rdpmc = 1;
    return;
fail:
    for (uint32_t m = 0; m < g->nm; m++) {
        uint8_t s = g->slot[m];
        if (t->page[s]) munmap(t->page[s], (size_t)g_page_size);
        t->page[s] = NULL;
    }
#else
    (void)t;
    (void)g;
#endif
}

/* The thread's first read (or the first after its epoch went stale):
 * opens the session's events, one group per PMU.  May lock, allocate and
 * print.  NULL when the state cannot be allocated (then reads give 0). */
static thr_t *thr_open(void) {
    pthread_once(&g_once, once_init);
    thr_t *t = g_tls;
    if (t) {
        thr_release(t);
    } else {
        t = calloc(1, sizeof *t);
        if (!t) return NULL;
        pthread_setspecific(g_key, t);
        g_tls = t;
    }
    ev_set_t *set = malloc(sizeof *set);
    if (!set) return NULL;
    pthread_mutex_lock(&g_lock);
    *set = g_sess;
    uint32_t epoch = atomic_load_explicit(&g_epoch, memory_order_acquire);
    pthread_mutex_unlock(&g_lock);

    t->n = set->n;
    t->reads = t->syscalls = 0;
    t->opens++;
    memset(t->last, 0, sizeof t->last);
    int err[SPS__PERF_MAX] = {0};
    uint8_t done[SPS__PERF_MAX] = {0};
    for (uint32_t i = 0; i < set->n; i++) t->fd[i] = -1;
    /* task-clock beside other software events needs no group of its own:
     * a per-thread group's time_enabled advances exactly while the
     * thread's perf context is scheduled in, which is what task-clock
     * counts (the same context clock), and a software group is never
     * multiplexed.  So the software group's read() hands it out and the
     * set costs one read() less (measured: 1.03 us -> 0.54 us per read for
     * task-clock,page-faults,context-switches). */
    int32_t tclock = -1;
    t->tclock_slot = t->tclock_grp = -1;
    for (uint32_t i = 0; i < set->n && tclock < 0; i++)
        if (set->ev[i].type == PERF_TYPE_SOFTWARE &&
            set->ev[i].config == PERF_COUNT_SW_TASK_CLOCK)
            for (uint32_t j = 0; j < set->n; j++)
                if (pmu_key(&set->ev[j]) == SWEVENT_KEY) {
                    tclock = (int32_t)i;
                    done[i] = 1;
                    break;
                }
    int32_t sw_grp = -1;
    /* one group per PMU, in the order of the events' first appearance
     * (the core PMU's, the one rdpmc can read, like any other) */
    for (uint32_t i = 0; i < set->n; i++) {
        if (done[i]) continue;
        uint64_t key = pmu_key(&set->ev[i]);
        grp_t *g = &t->g[t->ng];
        for (uint32_t j = i; j < set->n; j++) {
            if (done[j] || pmu_key(&set->ev[j]) != key) continue;
            done[j] = 1;
            int fd = open_event(&set->ev[j], g->nm ? t->fd[g->slot[0]] : -1);
            if (fd < 0) {
                err[j] = errno ? errno : EINVAL;
                continue;
            }
            t->fd[j] = fd;
            g->slot[g->nm++] = (uint8_t)j;
            t->avail |= 1u << j;
        }
        if (g->nm) {
            if (key == 0) try_rdpmc(t, g);
            if (key == SWEVENT_KEY) sw_grp = (int32_t)t->ng;
            t->ng++;
        }
    }
    if (tclock >= 0 && sw_grp >= 0) {
        t->tclock_slot = tclock;
        t->tclock_grp = sw_grp;
        t->avail |= 1u << tclock;
    } else if (tclock >= 0) { /* no software group opened: its own group */
        grp_t *g = &t->g[t->ng];
        int fd = open_event(&set->ev[tclock], -1);
        if (fd < 0) {
            err[tclock] = errno ? errno : EINVAL;
        } else {
            t->fd[tclock] = fd;
            g->slot[g->nm++] = (uint8_t)tclock;
            t->avail |= 1u << tclock;
            t->ng++;
        }
    }
    t->epoch = epoch;
    t->pid = getpid();
    for (uint32_t i = 0; i < set->n; i++)
        if (err[i]) report_unavailable(set->ev[i].name, err[i]);
    free(set);
    return t;
}

/* count * enabled / running: a group that shared the PMU with others
 * (multiplexing) ran only part of the time it was enabled; the estimate
 * of its full count is scaled up as perf stat scales it.  0 when it never
 * ran. */
static inline uint64_t scale(uint64_t count, uint64_t enabled, uint64_t running) {
    if (running >= enabled) return count;
    if (running == 0) return 0;
    return (uint64_t)((unsigned __int128)count * enabled / running);
}

/* Hands value v out for event slot s: never below the last one (scaled
 * estimates may dip when the multiplexing ratio changes) and below 2^63. */
static inline void put(thr_t *t, uint64_t *out, uint32_t s, uint64_t v) {
    if (v > (uint64_t)INT64_MAX) v = (uint64_t)INT64_MAX;
    if (v < t->last[s]) v = t->last[s];
    t->last[s] = v;
    out[s] = v;
}

#if HAVE_RDPMC
/* One member through its page, by the seqlock loop of linux/perf_event.h
 * (struct perf_event_mmap_page's comment): index says which hardware
 * counter holds the event (0: not on the PMU now, offset then holds the
 * whole count), pmc_width its width; the time fields extrapolate
 * enabled/running to now for the multiplexing scale. */
static inline uint64_t rdpmc_read(volatile struct perf_event_mmap_page *pc) {
    uint32_t seq, idx;
    uint64_t count, enabled, running;
    do {
        seq = pc->lock;
        __asm__ volatile("" ::: "memory");
        enabled = pc->time_enabled;
        running = pc->time_running;
        idx = pc->index;
        count = pc->offset;
        if (pc->cap_user_rdpmc && idx) {
            uint32_t width = pc->pmc_width;
            int64_t pmc = (int64_t)rdpmc(idx - 1);
            pmc = (int64_t)((uint64_t)pmc << (64 - width)) >> (64 - width);
            count += (uint64_t)pmc;
        }
        if (pc->cap_user_time && enabled != running) {
            uint64_t cyc = rdtsc_();
            if (pc->cap_user_time_short)
                cyc = pc->time_cycles + ((cyc - pc->time_cycles) & pc->time_mask);
            uint64_t shift = pc->time_shift, mult = pc->time_mult;
            uint64_t quot = cyc >> shift, rem = cyc & (((uint64_t)1 << shift) - 1);
            uint64_t delta = pc->time_offset + quot * mult + ((rem * mult) >> shift);
            enabled += delta;
            if (idx) running += delta;
        }
        __asm__ volatile("" ::: "memory");
    } while (pc->lock != seq);
    return scale(count, enabled, running);
}
#endif

void sps__perf_read(uint64_t *out) {
    thr_t *t = g_tls;
    if (__builtin_expect(!t || t->epoch != atomic_load_explicit(&g_epoch, memory_order_relaxed),
                         0)) {
        t = thr_open();
        if (!t) {
            memset(out, 0, sizeof(uint64_t) * g_sess.n);
            return;
        }
    }
    t->reads++;
    if (t->avail + 1 != (1u << t->n)) /* some event reads 0 */
        for (uint32_t i = 0; i < t->n; i++)
            if (!(t->avail >> i & 1)) out[i] = 0;
    for (uint32_t k = 0; k < t->ng; k++) {
        const grp_t *g = &t->g[k];
#if HAVE_RDPMC
        if (g->rdpmc) {
            for (uint32_t m = 0; m < g->nm; m++)
                put(t, out, g->slot[m], rdpmc_read(t->page[g->slot[m]]));
            continue;
        }
#endif
        /* PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING:
         * { nr, time_enabled, time_running, value[nr] } */
        t->syscalls++;
        ssize_t want = (ssize_t)(sizeof(uint64_t) * (3 + g->nm));
        if (read(t->fd[g->slot[0]], t->buf, (size_t)want) != want || t->buf[0] != g->nm) {
            for (uint32_t m = 0; m < g->nm; m++) out[g->slot[m]] = t->last[g->slot[m]];
            if ((int32_t)k == t->tclock_grp) out[t->tclock_slot] = t->last[t->tclock_slot];
            continue;
        }
        for (uint32_t m = 0; m < g->nm; m++)
            put(t, out, g->slot[m], scale(t->buf[3 + m], t->buf[1], t->buf[2]));
        if ((int32_t)k == t->tclock_grp) put(t, out, (uint32_t)t->tclock_slot, t->buf[1]);
    }
}

void sps__perf_session_close(void) {
    atomic_fetch_add_explicit(&g_epoch, 1, memory_order_release);
    thr_t *t = g_tls;
    if (t) thr_release(t);
}

void sps__perf_thread_stats(sps__perf_stats_t *out) {
    memset(out, 0, sizeof *out);
    const thr_t *t = g_tls;
    if (!t) return;
    out->n = t->n;
    out->groups = t->ng;
    for (uint32_t k = 0; k < t->ng; k++) out->rdpmc += (uint32_t)t->g[k].rdpmc;
    out->available = t->avail;
    out->reads = t->reads;
    out->syscalls = t->syscalls;
    out->opens = t->opens;
}
