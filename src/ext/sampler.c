/* sampler.c -- stack samples of every thread, by each thread's CPU time
 * (sps_sampling_start; docs/sampling.md).
 *
 * An integration of the fifth layer, compiled into libspanscope so that a
 * Python program gets it without another library: it registers
 * sps__sample_ops (core.h) from a constructor, and setup, finalize and
 * shutdown reach it only through that table.
 *
 *   - CPU-time events.  Each thread gets an event on its own CPU time
 *     that sends SIGPROF to that thread alone: a perf_event task-clock
 *     event (an hrtimer while the thread runs: exact periods even when
 *     more threads run than cores; its overflow signal routed with
 *     F_SETOWN_EX/F_SETSIG, identified by si_fd, re-armed by the
 *     handler), else -- perf_event_open refused, or SPANSCOPE_SAMPLER=timer
 *     -- a POSIX timer on the thread's CPU-time clock (the clock id the
 *     kernel derives from the thread id, as glibc's pthread_getcpuclockid
 *     does; SIGEV_THREAD_ID, the thread's ring as its value), which the
 *     kernel checks only at its tick.  A sampler thread lists
 *     /proc/self/task every 20 ms: threads started later get an event
 *     then; an ended thread's is closed.
 *   - The handler.  No lock, no allocation, nothing but copies: the time
 *     (the records' clock), the native return addresses (glibc's
 *     backtrace(), warmed up at start so that its first call, which loads
 *     libgcc_s, is not in a handler; libgcc 12 finds unwind tables with
 *     glibc's lock-free _dl_find_object), and a runtime's frames through
 *     the registered walker (sps_sampling_set_walker), into a
 *     preallocated single-producer ring.  Both walks run under a fault
 *     guard: a SIGSEGV or SIGBUS inside them jumps back (sigsetjmp) and
 *     the walk is dropped and counted, never a crash.  A full ring drops
 *     the sample and counts it.
 *   - The sampler thread empties the rings into one list, interning each
 *     distinct stack once (a stack id), so that memory grows with the
 *     samples by 48 bytes each, not with their depth.
 *   - Finalize takes the samples taken up to the period's last anchor,
 *     after the handlers then running have finished (an in-flight count),
 *     so a sample is in exactly one period; the model attributes each to
 *     the innermost span open on its thread at its time (model/pass.h).
 *     Names are made then (util/symbols.c and the walker's describe),
 *     never while sampling.
 *   - SIGPROF of others: a signal that is not one of our timers' goes to
 *     the handler that was installed before ours (chained), so a program's
 *     own setitimer(ITIMER_PROF) profiler keeps working.
 *   - fork: the child has no timers (POSIX timers are not inherited) and
 *     no sampler thread; under SPANSCOPE_FORK=off it starts with sampling
 *     off and no samples; by default its own session (api/fork.c) samples
 *     at the parent's cfg.sample_hz.
 */
#include "core/core.h"
#include "core/crash_samples.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_RINGS 4096          /* threads sampled at once */
#define RING_WORDS (1u << 13)   /* 64 KiB per thread: 400 ms of deep stacks */
#define NAT_MAX 64              /* native frames kept, innermost first */
#define RT_MAX 128              /* a runtime's frames kept */
#define RT_NAT_MAX 24           /* native frames kept above a runtime's */
#define HZ_DEFAULT 1000
#define HZ_MAX 10000
#define SCAN_NS 20000000L       /* the sampler thread's period: new threads
                                   get a timer within it */
#define REUSE_SCANS 10          /* every so many scans, ended threads' ids
                                   reused by new ones are looked for */
#define REARM_PERIODS 20       /* CPU periods without a sample after which
                                   a thread's perf event is re-armed */
#define HDR_MAGIC 0x5350ull     /* a ring entry's header: magic, counts */

typedef struct ring {
    uint64_t head;          /* words written (the handler; __atomic) */
    uint64_t tail;          /* words read (the sampler thread; __atomic) */
    uint64_t *w;            /* RING_WORDS words */
    pid_t tid;
    int live;               /* a timer or a perf event exists (sampler thread's) */
    int seen;               /* listed by the last scan */
    int fd;                 /* the perf engine's task-clock event, else -1 */
    uint64_t clock_ns;      /* its count at the last sample (the handler's) */
    uint64_t start_ticks;   /* the thread's start time (/proc: a reused id) */
    timer_t timer;          /* the timer engine's */
    uint64_t lost;          /* samples dropped on a full ring (__atomic) */
    uint64_t chk_head;      /* head and the thread's CPU ns at perf_rearm's */
    int64_t chk_cpu_ns;     /* last check (the sampler thread's) */
} ring_t;

/* A stack as interned: nn native addresses, then nr runtime words. */
typedef struct stk {
    uint32_t nn, nr;
    uint64_t *w;
} stk_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* all but the handler */
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static ring_t *g_rings;         /* [MAX_RINGS], kept once made: a late
                                   signal's pointer is always checked
                                   against this range */
static int g_on;                /* sampling (atomic loads in the handler) */
static int g_hz;
static int g_last_hz;             /* the rate of the samples not yet taken */
static int g_inflight;          /* handlers between their time and their store */
static int g_stop, g_thread_alive;
static pthread_t g_thread;
static pid_t g_thread_tid;
static sps_frame_walker_t g_walker;
static int g_has_walker;
static struct sigaction g_old_prof, g_old_segv, g_old_bus;
static int g_handlers_in;
/* The engine (docs/sampling.md): perf task-clock events when the kernel
 * gives them (exact periods of CPU time, an hrtimer while the thread runs),
 * else the POSIX CPU-time timers (checked at the kernel's tick only).
 * SPANSCOPE_SAMPLER=timer|perf chooses; perf falls back to the timers. */
enum { ENGINE_TIMER, ENGINE_PERF };
static int g_engine;
#define FD_MAX 65536
static int32_t *g_fd_ring;      /* [FD_MAX] fd -> ring index + 1 (0: none) */
static stk_t *g_stk;            /* id - 1 -> stack */
static size_t g_nstk, g_capstk;
static sps__htab_t g_stk_index;
static sps__sample_t *g_smp;    /* drained, not yet taken */
static size_t g_nsmp, g_capsmp;
static uint64_t g_taken, g_lost_total, g_lost_taken, g_faults, g_threads;

/* The fault guard of the thread's handler (initial-exec: a signal handler
 * may read it without the lazy TLS allocation of dynamic models). */
static __thread sigjmp_buf *t_guard __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------------------ */
/* The signal handlers                                                      */
/* ------------------------------------------------------------------------ */

/* The ring a timer's signal value names, or NULL when it is not one of
 * ours (checked by address, never dereferenced first). */
static ring_t *ring_of(void *p) {
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)g_rings;
    if (!g_rings || a < lo || a >= lo + MAX_RINGS * sizeof(ring_t)) return NULL;
    if ((a - lo) % sizeof(ring_t)) return NULL;
    return p;
}

/* The ring of a perf event's overflow signal (si_code POLL_*, si_fd its
 * event), or NULL. */
static ring_t *ring_of_fd(const siginfo_t *si) {
    int fd = si->si_fd;
    if (!g_fd_ring || fd < 0 || fd >= FD_MAX) return NULL;
    int32_t k = __atomic_load_n(&g_fd_ring[fd], __ATOMIC_ACQUIRE);
    return k > 0 && k <= MAX_RINGS ? &g_rings[k - 1] : NULL;
}

/* Calls the disposition old had for sig (a function; default and ignore:
 * nothing, as for a SIGPROF of no one's timer). */
static void chain(const struct sigaction *old, int sig, siginfo_t *si, void *uc) {
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction) old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN && old->sa_handler) {
        old->sa_handler(sig);
    }
}

/* The interrupted instruction's address. */
static uintptr_t uc_pc(const void *ucv) {
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

/* The native frames of the interrupted code into out[0..max) (max <= NAT_MAX),
 * innermost first: backtrace() from here, cut at the interrupted
 * instruction (the frame the unwinder reads out of the signal frame); when
 * that is not found, the instruction alone. */
static int native_frames(uint64_t *out, const void *uc, int max) {
    void *buf[NAT_MAX + 8];
    int n = backtrace(buf, max + 8);
    uintptr_t pc = uc_pc(uc);
    int k = 0;
    while (k < n && (uintptr_t)buf[k] != pc) k++;
    if (k == n) {
        if (!pc) return 0;
        out[0] = pc;
        return 1;
    }
    int m = n - k > max ? max : n - k;
    for (int i = 0; i < m; i++) out[i] = (uint64_t)(uintptr_t)buf[k + i];
    return m;
}

/* Takes one sample of this thread into r.  The runtime's frames first:
 * when there are some, the native frames past the first RT_NAT_MAX are
 * the runtime's own (the eval loop's, hidden at finalize anyway), and
 * unwinding them (DWARF, a third of a microsecond a frame) would be most
 * of the sample's cost.  The guards save no signal mask (sigsetjmp(.., 0):
 * two system calls fewer): the fault handler runs with SA_NODEFER, so the
 * mask a jump back lands with is this handler's own. */
static void sample(ring_t *r, uint64_t *words, const void *uc, int overrun) {
    uint64_t t = sps__ticks();
    uint64_t w[2 + NAT_MAX + RT_MAX];
    uint64_t rt[RT_MAX];
    volatile int nn = 0, nr = 0;
    sigjmp_buf jb;
    if (__atomic_load_n(&g_has_walker, __ATOMIC_ACQUIRE)) {
        if (sigsetjmp(jb, 0) == 0) {
            t_guard = &jb;
            int k = g_walker.walk(rt, RT_MAX);
            nr = k < 0 || k > RT_MAX ? 0 : k;
        } else {
            nr = 0;
            __atomic_add_fetch(&g_faults, 1, __ATOMIC_RELAXED);
        }
        t_guard = NULL;
    }
    if (sigsetjmp(jb, 0) == 0) {
        t_guard = &jb;
        nn = native_frames(w + 2, uc, nr ? RT_NAT_MAX : NAT_MAX);
    } else {
        nn = 0;
        __atomic_add_fetch(&g_faults, 1, __ATOMIC_RELAXED);
    }
    t_guard = NULL;
    for (int i = 0; i < nr; i++) w[2 + nn + i] = rt[i];
    /* the periods this sample stands for: the timers' are checked at the
     * kernel's tick, so a rate above CONFIG_HZ comes as overruns; the perf
     * event's count is the thread's CPU ns, read here */
    uint64_t weight = overrun < 0 ? 1 : overrun >= 0xFFFE ? 0xFFFF : (uint64_t)overrun + 1;
    /* fd and clock_ns are atomics: the sampler thread writes them when it
     * starts and ends the event, ordered with this handler by the kernel
     * (the event armed after, the thread dead before), which TSan cannot see */
    int fd = __atomic_load_n(&r->fd, __ATOMIC_RELAXED);
    if (fd >= 0) {
        uint64_t now_ns = 0;
        /* the raw system call: no libc or sanitizer wrapper in a handler */
        if (syscall(SYS_read, fd, &now_ns, sizeof now_ns) == (long)sizeof now_ns) {
            uint64_t period = 1000000000ull / (uint64_t)(g_hz > 0 ? g_hz : HZ_DEFAULT);
            uint64_t d = now_ns - __atomic_load_n(&r->clock_ns, __ATOMIC_RELAXED);
            weight = (d + period / 2) / period;
            weight = weight < 1 ? 1 : weight > 0xFFFF ? 0xFFFF : weight;
            __atomic_store_n(&r->clock_ns, now_ns, __ATOMIC_RELAXED);
        }
    }
    w[0] = HDR_MAGIC << 48 | weight << 32 | (uint64_t)nn << 16 | (uint64_t)nr;
    w[1] = t;
    uint64_t need = 2 + (uint64_t)nn + (uint64_t)nr;
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
    uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (RING_WORDS - (head - tail) < need) {
        __atomic_add_fetch(&r->lost, 1, __ATOMIC_RELAXED);
        return;
    }
    for (uint64_t i = 0; i < need; i++) words[(head + i) & (RING_WORDS - 1)] = w[i];
    __atomic_store_n(&r->head, head + need, __ATOMIC_RELEASE);
}

static void on_prof(int sig, siginfo_t *si, void *uc) {
    ring_t *r = !si ? NULL
              : si->si_code == SI_TIMER ? ring_of(si->si_value.sival_ptr)
              : si->si_code == POLL_IN || si->si_code == POLL_HUP ? ring_of_fd(si) : NULL;
    if (!r && si && (si->si_code == POLL_IN || si->si_code == POLL_HUP) && g_fd_ring &&
        si->si_fd >= 0 && si->si_fd < FD_MAX && g_fd_ring[si->si_fd] < 0)
        return; /* a late overflow of an event we closed */
    if (!r) {
        chain(&g_old_prof, sig, si, uc);
        return;
    }
    int saved = errno;
    __atomic_add_fetch(&g_inflight, 1, __ATOMIC_SEQ_CST);
    uint64_t *w = __atomic_load_n(&r->w, __ATOMIC_ACQUIRE);
    int perf = si->si_code != SI_TIMER;
    if (__atomic_load_n(&g_on, __ATOMIC_ACQUIRE) && w) sample(r, w, uc, perf ? 0 : si->si_overrun);
    /* a perf event's overflow signal is armed once per refresh */
    if (perf && __atomic_load_n(&g_on, __ATOMIC_ACQUIRE))
        syscall(SYS_ioctl, si->si_fd, PERF_EVENT_IOC_REFRESH, 1);
    __atomic_sub_fetch(&g_inflight, 1, __ATOMIC_RELEASE);
    errno = saved;
}

/* A fault inside a guarded walk jumps back to it; any other fault is the
 * program's: the handler before ours takes it, or (default) ours steps
 * aside and the instruction faults again under the default action. */
static void on_fault(int sig, siginfo_t *si, void *uc) {
    sigjmp_buf *g = t_guard;
    if (g) {
        t_guard = NULL;
        siglongjmp(*g, 1);
    }
    const struct sigaction *old = sig == SIGSEGV ? &g_old_segv : &g_old_bus;
    if ((old->sa_flags & SA_SIGINFO) ? old->sa_sigaction != NULL
                                     : (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)) {
        chain(old, sig, si, uc);
        return;
    }
    sigaction(sig, old, NULL);
    /* a real fault happens again at the return, now with the old action;
     * one sent (kill, raise: si_code <= 0) does not: raise it again, or
     * `kill -SEGV` would be swallowed */
    if (si && si->si_code <= 0) raise(sig);
}

/* ------------------------------------------------------------------------ */
/* Timers (the sampler thread, under g_lock)                                */
/* ------------------------------------------------------------------------ */

static long my_tid(void) { return syscall(SYS_gettid); }

/* The CPU-time clock of thread tid of this process (Linux's encoding:
 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
static clockid_t thread_clock(pid_t tid) {
    return (clockid_t)(((unsigned)~tid) << 3 | 6);
}

/* Starts r's timer for thread tid.  0 or -1 (the thread may have ended). */
static int timer_on(ring_t *r, pid_t tid) {
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev.sigev_value.sival_ptr = r;
    ev._sigev_un._tid = tid;
    if (timer_create(thread_clock(tid), &ev, &r->timer)) return -1;
    long ns = 1000000000L / g_hz;
    struct itimerspec it = {{ns / 1000000000L, ns % 1000000000L},
                            {ns / 1000000000L, ns % 1000000000L}};
    if (timer_settime(r->timer, 0, &it, NULL)) {
        timer_delete(r->timer);
        return -1;
    }
    return 0;
}

/* Starts r's perf task-clock event for thread tid, delivering SIGPROF to
 * that thread every period of its CPU time.  0 or -1 (no perf events
 * here, or the thread ended). */
static int perf_on(ring_t *r, pid_t tid) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000000ull / (uint64_t)g_hz;
    a.disabled = 1;
    a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
    a.exclude_hv = 1;
    a.wakeup_events = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return -1;
    struct f_owner_ex own = {F_OWNER_TID, tid};
    if (fd >= FD_MAX || fcntl(fd, F_SETFL, O_ASYNC) || fcntl(fd, F_SETSIG, SIGPROF) ||
        fcntl(fd, F_SETOWN_EX, &own)) {
        close(fd);
        return -1;
    }
    __atomic_store_n(&r->clock_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->fd, fd, __ATOMIC_RELAXED);
    __atomic_store_n(&g_fd_ring[fd], (int32_t)(r - g_rings) + 1, __ATOMIC_RELEASE);
    if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) || ioctl(fd, PERF_EVENT_IOC_REFRESH, 1)) {
        __atomic_store_n(&g_fd_ring[fd], -1, __ATOMIC_RELEASE);
        close(fd);
        __atomic_store_n(&r->fd, -1, __ATOMIC_RELAXED);
        return -1;
    }
    return 0;
}

/* Ends r's perf event (its fd marked closed: a late signal is dropped). */
static void perf_off(ring_t *r) {
    int fd = __atomic_load_n(&r->fd, __ATOMIC_RELAXED);
    if (fd < 0) return;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    __atomic_store_n(&g_fd_ring[fd], -1, __ATOMIC_RELEASE);
    __atomic_store_n(&r->fd, -1, __ATOMIC_RELAXED);
    close(fd);
}

/* The start time of thread tid (/proc/self/task/<tid>/stat, field 22, in
 * clock ticks since boot), 0 when unknown: tells a new thread that reused
 * an ended one's id. */
static uint64_t thread_start(pid_t tid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    for (int field = 2; p && field < 22; field++) p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Under g_lock: the stack id of f[0..nn + nr) (nn native), interned on
 * first sight; 0 when out of memory. */
static uint32_t stk_intern(const uint64_t *f, uint32_t nn, uint32_t nr) {
    size_t n = (size_t)nn + nr;
    uint64_t h = sps__hash_pair(sps__hash_bytes(f, n * sizeof *f), (uint64_t)nn << 32 | nr);
    sps__hprobe_t p = sps__htab_probe(&g_stk_index, h);
    for (uint32_t i; sps__htab_next(&g_stk_index, &p, &i);) {
        const stk_t *s = &g_stk[i];
        if (s->nn == nn && s->nr == nr && !memcmp(s->w, f, n * sizeof *f)) return i + 1;
    }
    if (sps__htab_make_room(&g_stk_index, &p)) return 0;
    if (g_nstk == g_capstk) {
        size_t cap = g_capstk ? g_capstk * 2 : 1024;
        stk_t *v = realloc(g_stk, cap * sizeof *v);
        if (!v) return 0;
        g_stk = v;
        g_capstk = cap;
    }
    uint64_t *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy) return 0;
    memcpy(copy, f, n * sizeof *f);
    g_stk[g_nstk] = (stk_t){nn, nr, copy};
    sps__htab_put(&g_stk_index, &p, (uint32_t)g_nstk);
    return (uint32_t)++g_nstk;
}

/* Under g_lock: moves r's complete entries into the sample list. */
static void drain(ring_t *r) {
    uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint64_t f[NAT_MAX + RT_MAX];
    while (tail < head) {
        uint64_t hdr = r->w[tail & (RING_WORDS - 1)];
        uint32_t nn = (uint32_t)(hdr >> 16 & 0xFFFF), nr = (uint32_t)(hdr & 0xFFFF);
        uint32_t weight = (uint32_t)(hdr >> 32 & 0xFFFF);
        if (hdr >> 48 != HDR_MAGIC || nn > NAT_MAX || nr > RT_MAX ||
            head - tail < 2 + (uint64_t)nn + nr) {
            tail = head; /* cannot happen: the ring is ours alone */
            break;
        }
        uint64_t t = r->w[(tail + 1) & (RING_WORDS - 1)];
        for (uint32_t i = 0; i < nn + nr; i++) f[i] = r->w[(tail + 2 + i) & (RING_WORDS - 1)];
        tail += 2 + (uint64_t)nn + nr;
        uint32_t id = stk_intern(f, nn, nr);
        if (!id || (g_nsmp == g_capsmp && sps__grow((void **)&g_smp, &g_capsmp,
                                                      g_nsmp, sizeof *g_smp))) {
            g_lost_total++;
            continue;
        }
        g_smp[g_nsmp++] = (sps__sample_t){.ticks = t, .call_id = -1, .stack = id,
                                          .tid = r->tid, .thread = UINT32_MAX,
                                          .weight = weight ? weight : 1};
        g_taken++;
        /* crash safety: to the live directory too (core/crash_samples.h) */
        sps__crash_sample(t, r->tid, weight ? weight : 1, id, f, nn, nr,
                          __atomic_load_n(&g_has_walker, __ATOMIC_ACQUIRE) ? &g_walker : NULL);
    }
    __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
    uint64_t lost = __atomic_exchange_n(&r->lost, 0, __ATOMIC_RELAXED);
    g_lost_total += lost;
    sps__crash_samples_flush(g_last_hz, lost);
}

/* Under g_lock: ends r's timer, empties it and frees its words. */
static void ring_end(ring_t *r) {
    if (r->live && r->fd < 0) timer_delete(r->timer);
    perf_off(r);
    r->live = 0;
    drain(r);
    /* a signal already queued finds w NULL and takes no sample */
    uint64_t *w = r->w;
    __atomic_store_n(&r->w, NULL, __ATOMIC_RELEASE);
    free(w);
    r->tid = 0;
}

/* Under g_lock: a ring and a timer for thread tid (a new thread). */
static void ring_start(pid_t tid) {
    ring_t *r = NULL;
    for (size_t i = 0; i < MAX_RINGS && !r; i++)
        if (!g_rings[i].live && !g_rings[i].w) r = &g_rings[i];
    if (!r) return; /* more threads than rings: this one goes unsampled */
    uint64_t *w = malloc(RING_WORDS * sizeof *w);
    if (!w) return;
    memset(w, 0, RING_WORDS * sizeof *w); /* touched now, not in a handler */
    __atomic_store_n(&r->head, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->tail, 0, __ATOMIC_RELAXED);
    r->tid = tid;
    __atomic_store_n(&r->fd, -1, __ATOMIC_RELAXED);
    r->start_ticks = thread_start(tid);
    __atomic_store_n(&r->w, w, __ATOMIC_RELEASE);
    if (g_engine == ENGINE_PERF && perf_on(r, tid) == 0) {
        struct timespec ts;
        r->chk_head = 0;
        r->chk_cpu_ns = clock_gettime(thread_clock(tid), &ts) ? INT64_MAX
                      : (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        r->live = 1;
        r->seen = 1;
        g_threads++;
        return;
    }
    if (timer_on(r, tid)) { /* it ended meanwhile */
        __atomic_store_n(&r->w, NULL, __ATOMIC_RELEASE);
        free(w);
        r->tid = 0;
        return;
    }
    r->live = 1;
    r->seen = 1;
    g_threads++;
}

/* Under g_lock: re-arms r's perf event when its thread ran REARM_PERIODS
 * periods of CPU time since the last check (REUSE_SCANS scans ago) and no
 * sample came meanwhile.  The event sends one signal per refresh and the
 * handler refreshes it, so a signal that never arrives ended the thread's
 * sampling for good -- and the kernel discards one when a SIGPROF is
 * already pending for the thread (the program's own setitimer, a kill;
 * TSan's deferred delivery keeps one per signal too).  The event itself
 * stops then (no sample comes until the refresh), so the thread's CPU
 * clock is what is compared.  A POSIX timer's signal is queued
 * beside a pending one: the timer engine does not stop.  A refresh that
 * was not needed (a thread in the kernel: the event counts user time only)
 * lets one overflow more through, once. */
static void perf_rearm(ring_t *r) {
    int fd = __atomic_load_n(&r->fd, __ATOMIC_RELAXED);
    struct timespec ts;
    if (fd < 0 || clock_gettime(thread_clock(r->tid), &ts)) return;
    int64_t cpu = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    int64_t period = 1000000000 / (g_hz > 0 ? g_hz : HZ_DEFAULT);
    if (head == r->chk_head && cpu - r->chk_cpu_ns >= REARM_PERIODS * period)
        ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
    r->chk_head = head;
    r->chk_cpu_ns = cpu;
}

/* Under g_lock: timers for the threads now listed, none for the ended. */
static void scan(void) {
    static unsigned nscan;
    int reuse = ++nscan % REUSE_SCANS == 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    for (size_t i = 0; i < MAX_RINGS; i++) g_rings[i].seen = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0 || tid == g_thread_tid) continue;
        ring_t *r = NULL;
        for (size_t i = 0; i < MAX_RINGS && !r; i++)
            if (g_rings[i].live && g_rings[i].tid == tid) r = &g_rings[i];
        if (r) {
            r->seen = 1;
            if (reuse) perf_rearm(r);
            /* a thread of another start time: the id was reused by a new
             * thread, which needs a timer of its own */
            if (reuse && r->start_ticks && thread_start((pid_t)tid) != r->start_ticks) {
                ring_end(r);
                ring_start((pid_t)tid);
            }
        } else {
            ring_start((pid_t)tid);
        }
    }
    closedir(d);
    for (size_t i = 0; i < MAX_RINGS; i++)
        if (g_rings[i].live && !g_rings[i].seen) ring_end(&g_rings[i]);
}

static void drain_all(void) {
    for (size_t i = 0; g_rings && i < MAX_RINGS; i++)
        if (g_rings[i].w) drain(&g_rings[i]);
}

static void *sampler_main(void *arg) {
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the program's signals are not ours */
    pthread_mutex_lock(&g_lock);
    g_thread_tid = (pid_t)my_tid();
    while (!g_stop) {
        scan();
        drain_all();
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += SCAN_NS;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&g_wake, &g_lock, &ts);
    }
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Start and stop                                                           */
/* ------------------------------------------------------------------------ */

/* Installs our SIGPROF, SIGSEGV and SIGBUS handlers, keeping the ones
 * before.  SA_RESTART: a sampled system call resumes. */
static void handlers_in(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = on_prof;
    sigaction(SIGPROF, &sa, &g_old_prof);
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sa.sa_sigaction = on_fault;
    sigaction(SIGSEGV, &sa, &g_old_segv);
    sigaction(SIGBUS, &sa, &g_old_bus);
    g_handlers_in = 1;
}

/* Puts back each disposition that is still ours. */
static void handlers_out(void) {
    if (!g_handlers_in) return;
    struct sigaction cur;
    if (!sigaction(SIGPROF, NULL, &cur) && cur.sa_sigaction == on_prof)
        sigaction(SIGPROF, &g_old_prof, NULL);
    if (!sigaction(SIGSEGV, NULL, &cur) && cur.sa_sigaction == on_fault)
        sigaction(SIGSEGV, &g_old_segv, NULL);
    if (!sigaction(SIGBUS, NULL, &cur) && cur.sa_sigaction == on_fault)
        sigaction(SIGBUS, &g_old_bus, NULL);
    g_handlers_in = 0;
}

/* Waits until no handler is between its time and its store. */
static void inflight_wait(void) {
    while (__atomic_load_n(&g_inflight, __ATOMIC_ACQUIRE)) sched_yield();
}

/* Under g_lock: stops the timers and the thread (the lock is released
 * while joining it). */
static void stop_locked(void) {
    if (!__atomic_load_n(&g_on, __ATOMIC_RELAXED) || !g_rings) return;
    __atomic_store_n(&g_on, 0, __ATOMIC_RELEASE);
    g_stop = 1;
    pthread_cond_signal(&g_wake);
    if (g_thread_alive) {
        pthread_mutex_unlock(&g_lock);
        pthread_join(g_thread, NULL);
        pthread_mutex_lock(&g_lock);
        g_thread_alive = 0;
    }
    for (size_t i = 0; i < MAX_RINGS; i++)
        if (g_rings[i].live) {
            if (g_rings[i].fd >= 0) perf_off(&g_rings[i]);
            else timer_delete(g_rings[i].timer);
            g_rings[i].live = 0;
        }
    inflight_wait();
    for (size_t i = 0; i < MAX_RINGS; i++)
        if (g_rings[i].w) ring_end(&g_rings[i]);
    handlers_out();
    g_hz = 0;
}

int sps_sampling_start(int hz) {
    if (hz <= 0) hz = HZ_DEFAULT;
    if (hz > HZ_MAX)
        return sps__err_fail(SPS_EINVAL, "sps_sampling_start: %d Hz is above the most, %d", hz,
                             HZ_MAX);
    if (!sps__session_live()) return SPS_ENOSESSION;
    if (sps__g.mode == SPS__AGGREGATE)
        return sps__err_fail(SPS_EMODE, "sps_sampling_start: an aggregate session keeps no "
                                        "spans for samples to belong to");
    pthread_mutex_lock(&g_lock);
    int rc = 0;
    if (__atomic_load_n(&g_on, __ATOMIC_RELAXED)) rc = SPS_EACTIVE;
    struct sigaction cur;
    if (!rc && !sigaction(SIGPROF, NULL, &cur) && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_prof)
        rc = sps__err_fail(SPS_EACTIVE, "sps_sampling_start: already sampling");
    if (!rc && !g_rings && !(g_rings = calloc(MAX_RINGS, sizeof *g_rings))) rc = SPS_ENOMEM;
    if (!rc && !g_fd_ring && !(g_fd_ring = calloc(FD_MAX, sizeof *g_fd_ring))) rc = SPS_ENOMEM;
    if (!rc) {
        const char *e = getenv("SPANSCOPE_SAMPLER");
        if (e && *e && strcmp(e, "timer") && strcmp(e, "perf"))
            rc = sps__err_fail(SPS_EINVAL, "SPANSCOPE_SAMPLER=%s: expected timer or perf", e);
        g_engine = e && !strcmp(e, "timer") ? ENGINE_TIMER : ENGINE_PERF;
    }
    if (!rc) {
        void *warm[4];
        backtrace(warm, 4); /* loads libgcc_s here, not in a handler */
        g_hz = g_last_hz = hz;
        g_stop = 0;
        handlers_in();
        __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
        if (pthread_create(&g_thread, NULL, sampler_main, NULL)) {
            __atomic_store_n(&g_on, 0, __ATOMIC_RELEASE);
            handlers_out();
            rc = sps__err_fail(SPS_ENOMEM, "sps_sampling_start: no sampler thread");
        } else {
            g_thread_alive = 1;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

int sps_sampling_stop(void) {
    pthread_mutex_lock(&g_lock);
    stop_locked();
    pthread_mutex_unlock(&g_lock);
    return 0;
}

int sps_sampling_hz(void) {
    return __atomic_load_n(&g_on, __ATOMIC_ACQUIRE) ? g_hz : 0;
}

void sps_sampling_stats(uint64_t *taken, uint64_t *lost, uint64_t *walk_faults,
                        uint64_t *threads) {
    pthread_mutex_lock(&g_lock);
    if (taken) *taken = g_taken;
    if (lost) *lost = g_lost_total;
    if (walk_faults) *walk_faults = __atomic_load_n(&g_faults, __ATOMIC_RELAXED);
    if (threads) *threads = g_threads;
    pthread_mutex_unlock(&g_lock);
}

int sps_sampling_set_walker(const sps_frame_walker_t *w) {
    if (w && (w->abi != SPS_FRAME_WALKER_ABI || !w->walk || !w->describe))
        return sps__err_fail(SPS_EINVAL, "sps_sampling_set_walker: abi %d (this library: %d) "
                             "or a missing function", w->abi, SPS_FRAME_WALKER_ABI);
    pthread_mutex_lock(&g_lock);
    int rc = 0;
    if (__atomic_load_n(&g_on, __ATOMIC_RELAXED)) {
        rc = SPS_EACTIVE;
    } else if (w) {
        g_walker = *w;
        __atomic_store_n(&g_has_walker, 1, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(&g_has_walker, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The table core calls through                                             */
/* ------------------------------------------------------------------------ */

static int ops_take(uint64_t upto, sps__sample_t **out, size_t *n, int *hz, uint64_t *lost) {
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&g_lock);
    *hz = g_last_hz; /* the rate they were taken at, also after a stop */
    inflight_wait(); /* a handler that read its time before upto has stored */
    drain_all();
    size_t k = 0;
    for (size_t i = 0; i < g_nsmp; i++) k += g_smp[i].ticks <= upto;
    int rc = 0;
    if (k) {
        sps__sample_t *v = malloc(k * sizeof *v);
        if (!v) {
            rc = SPS_ENOMEM;
        } else {
            size_t a = 0, b = 0;
            for (size_t i = 0; i < g_nsmp; i++) {
                if (g_smp[i].ticks <= upto) v[a++] = g_smp[i];
                else g_smp[b++] = g_smp[i];
            }
            g_nsmp = b;
            *out = v;
            *n = k;
        }
    }
    *lost = g_lost_total - g_lost_taken;
    if (!rc) g_lost_taken = g_lost_total;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static void ops_put_back(const sps__sample_t *v, size_t n) {
    pthread_mutex_lock(&g_lock);
    int room = 0;
    while (!room && g_capsmp < g_nsmp + n)
        room = sps__grow((void **)&g_smp, &g_capsmp, g_capsmp, sizeof *g_smp);
    if (!room) {
        memmove(g_smp + n, g_smp, g_nsmp * sizeof *g_smp); /* the older first */
        for (size_t i = 0; i < n; i++) {
            g_smp[i] = v[i];
            g_smp[i].flags = 0;
            g_smp[i].call_id = -1;
            g_smp[i].region = 0;
        }
        g_nsmp += n;
    } else {
        g_lost_total += n;
    }
    pthread_mutex_unlock(&g_lock);
}

static void ops_session_end(void) {
    pthread_mutex_lock(&g_lock);
    stop_locked();
    g_nsmp = 0;
    g_lost_taken = g_lost_total;
    pthread_mutex_unlock(&g_lock);
}

static int ops_start(int hz) { return sps_sampling_start(hz < 0 ? 0 : hz); }

/* ---- describing stacks (finalize; no handler involved) ---- */

/* A frame being built: its key fields (strings owned). */
typedef struct fdesc {
    int64_t kind, line, address;
    char *function, *file, *module;
} fdesc_t;

typedef struct fbuild {
    fdesc_t *v;
    size_t n, cap;
    sps__htab_t index;
    uint64_t *key;     /* [n] the word or address each frame came from */
    int64_t *key_kind;
} fbuild_t;

/* The frame index for (kind, word), described on first sight; -1 when
 * out of memory. */
static int64_t frame_get(fbuild_t *b, int64_t kind, uint64_t word, int leaf) {
    uint64_t h = sps__hash_pair(word, (uint64_t)kind);
    sps__hprobe_t p = sps__htab_probe(&b->index, h);
    for (uint32_t i; sps__htab_next(&b->index, &p, &i);)
        if (b->key[i] == word && b->key_kind[i] == kind) return i;
    if (sps__htab_make_room(&b->index, &p)) return -1;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        fdesc_t *v = realloc(b->v, cap * sizeof *v);
        uint64_t *k = v ? realloc(b->key, cap * sizeof *k) : NULL;
        if (k) b->key = k;
        int64_t *kk = k ? realloc(b->key_kind, cap * sizeof *kk) : NULL;
        if (v) b->v = v;
        if (!kk) return -1;
        b->key_kind = kk;
        b->cap = cap;
    }
    char func[1024], file[4096];
    fdesc_t d = {kind, 0, 0, NULL, NULL, NULL};
    if (kind == SPS__FRAME_NATIVE) {
        uintptr_t off = 0;
        /* a return address is the instruction after the call: name the call */
        uintptr_t at = leaf ? (uintptr_t)word : (uintptr_t)word - 1;
        sps__sym_name(at, 0, func, sizeof func, file, sizeof file, &off);
        d.address = (int64_t)off;
        d.function = strdup(func);
        d.module = strdup(file);
        char src[4096];
        sps__sym_line(at, src, sizeof src, &d.line); /* -g builds: file and line */
        d.file = strdup(src);
    } else {
        int64_t line = 0;
        func[0] = file[0] = 0;
        if (g_walker.describe(word, func, sizeof func, file, sizeof file, &line) != 0) {
            strcpy(func, "?");
            file[0] = 0;
            line = 0;
        }
        d.line = line;
        d.function = strdup(func);
        d.file = strdup(file);
        d.module = strdup("");
    }
    if (!d.function || !d.file || !d.module) {
        free(d.function), free(d.file), free(d.module);
        return -1;
    }
    b->v[b->n] = d;
    b->key[b->n] = word;
    b->key_kind[b->n] = kind;
    sps__htab_put(&b->index, &p, (uint32_t)b->n);
    return (int64_t)b->n++;
}

/* The object file holding the runtime's own code (walker.runtime_fn), or
 * "" when none. */
static void runtime_object(char *obj, size_t cap) {
    obj[0] = 0;
    if (!g_has_walker || !g_walker.runtime_fn) return;
    char f[8];
    sps__sym_name((uintptr_t)g_walker.runtime_fn, 1, f, sizeof f, obj, cap, NULL);
}

static void sframes_free(sps__sframes_t *s) {
    for (size_t i = 0; i < s->nframes; i++) {
        free(s->function[i]);
        free(s->file[i]);
        free(s->module[i]);
    }
    free(s->function), free(s->file), free(s->module);
    free(s->line), free(s->kind), free(s->address);
    free(s->offsets), free(s->frame_of);
    memset(s, 0, sizeof *s);
}

static int ops_describe(const uint32_t *ids, size_t n, sps__sframes_t *out) {
    memset(out, 0, sizeof *out);
    char rt[4096];
    fbuild_t b = {0};
    pthread_mutex_lock(&g_lock);
    runtime_object(rt, sizeof rt);
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] && ids[i] <= g_nstk) total += g_stk[ids[i] - 1].nn + g_stk[ids[i] - 1].nr;
    out->offsets = malloc((n + 1) * sizeof *out->offsets);
    out->frame_of = malloc((total ? total : 1) * sizeof *out->frame_of);
    int rc = out->offsets && out->frame_of ? 0 : SPS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        out->offsets[i] = k;
        if (!ids[i] || ids[i] > g_nstk) continue;
        const stk_t *s = &g_stk[ids[i] - 1];
        /* native frames up to the runtime's own, then the runtime's frames
         * (a thread without them: every native frame) */
        for (uint32_t j = 0; !rc && j < s->nn; j++) {
            int64_t f = frame_get(&b, SPS__FRAME_NATIVE, s->w[j], j == 0);
            if (f < 0) rc = SPS_ENOMEM;
            else if (s->nr && rt[0] && !strcmp(b.v[f].module, rt)) break;
            else out->frame_of[k++] = (uint32_t)f;
        }
        for (uint32_t j = 0; !rc && j < s->nr; j++) {
            int64_t f = frame_get(&b, SPS__FRAME_RUNTIME, s->w[s->nn + j], 0);
            if (f < 0) rc = SPS_ENOMEM;
            else out->frame_of[k++] = (uint32_t)f;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (!rc) out->offsets[n] = k;
    out->nstacks = n;
    size_t nf = b.n;
    out->function = malloc((nf + 1) * sizeof(char *));
    out->file = malloc((nf + 1) * sizeof(char *));
    out->module = malloc((nf + 1) * sizeof(char *));
    out->line = malloc((nf + 1) * sizeof(int64_t));
    out->kind = malloc((nf + 1) * sizeof(int64_t));
    out->address = malloc((nf + 1) * sizeof(int64_t));
    int ok = out->function && out->file && out->module && out->line && out->kind && out->address;
    for (size_t i = 0; i < nf; i++) {
        if (ok) {
            out->function[i] = b.v[i].function;
            out->file[i] = b.v[i].file;
            out->module[i] = b.v[i].module;
            out->line[i] = b.v[i].line;
            out->kind[i] = b.v[i].kind;
            out->address[i] = b.v[i].address;
        } else {
            free(b.v[i].function), free(b.v[i].file), free(b.v[i].module);
        }
    }
    out->nframes = ok ? nf : 0;
    free(b.v), free(b.key), free(b.key_kind);
    sps__htab_free(&b.index);
    if (!ok) rc = SPS_ENOMEM;
    if (rc) sframes_free(out);
    return rc;
}

static const sps__sample_ops_t g_ops = {ops_start, ops_take, ops_put_back, ops_describe,
                                        sframes_free, ops_session_end};

/* ------------------------------------------------------------------------ */
/* fork and registration                                                    */
/* ------------------------------------------------------------------------ */

static void fork_prepare(void) { pthread_mutex_lock(&g_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&g_lock); }

/* The child: no timers, no sampler thread, no samples; our handlers go
 * (the parent's sampling is not the child's). */
static void fork_child(void) {
    if (__atomic_load_n(&g_on, __ATOMIC_RELAXED) && g_rings) {
        __atomic_store_n(&g_on, 0, __ATOMIC_RELAXED);
        g_thread_alive = 0;
        for (size_t i = 0; i < MAX_RINGS; i++) {
            if (g_rings[i].fd >= 0 && g_rings[i].live) perf_off(&g_rings[i]); /* the parent's */
            g_rings[i].live = 0;
            g_rings[i].tid = 0;
            free(g_rings[i].w);
            g_rings[i].w = NULL;
        }
        handlers_out();
        g_hz = 0;
    }
    g_nsmp = 0;
    g_inflight = 0;
    pthread_cond_init(&g_wake, NULL); /* a waiter of the parent's is gone */
    pthread_mutex_unlock(&g_lock);    /* fork_prepare's, this thread's in the child */
}

/* Stops the timers at exit: no signal lands in a process tearing down. */
static void at_exit(void) {
    if (__atomic_load_n(&g_on, __ATOMIC_RELAXED)) sps_sampling_stop();
}

__attribute__((constructor)) static void sampler_register(void) {
    sps__sample_ops = &g_ops;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    atexit(at_exit);
}
