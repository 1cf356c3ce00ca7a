/* signals.c -- never lose a profile to SIGTERM and friends (issue 35).
 *
 * While a session records, SIGTERM, SIGINT, SIGHUP and SIGUSR1 (the list:
 * SPANSCOPE_SIGNALS or sps_signals) get spanscope's handler.  What happens
 * then depends on what the signal would have done without spanscope (the
 * disposition found when the handler was installed, "prev"):
 *
 *   - prev is SIG_DFL (the signal ends the process): the handler only
 *     writes the signal's number to a self-pipe, async-signal-safely; the
 *     watcher thread, blocked in read() on that pipe, writes the profile
 *     recorded so far (a finalize, outside the handler), prints one line
 *     on stderr, restores SIG_DFL and raises the signal again, so the
 *     process dies of it: the exit status is the one it would have had.
 *     A second signal (any of the list) that comes before the first one's
 *     write is done ends the process at once, by its default action.
 *   - prev is a handler of the program's (Python's SIGINT, a C program's
 *     own): that handler is called from ours, at once, in the thread the
 *     signal interrupted, and nothing is written: the program goes on (or
 *     not) as it would have, and its own finalize -- at exit, in a
 *     `finally`, a context manager's exit -- writes everything, the part
 *     before the signal included.  Writing there too would only make the
 *     later finalize replace the file with the period after the signal
 *     (each finalize writes the period since the previous one).
 *   - prev is SIG_IGN: the signal stays ignored (spanscope installs
 *     nothing for it: `nohup` keeps working).
 *
 * MPI (a distributed session): no MPI call can be made from the watcher
 * (the program's threads may be inside MPI, and MPI may not be
 * thread-safe), so each rank writes its part, "<path>.rank<R>.h5", as a
 * finalize writes a part, and rank 0 waits for every rank's part, merges
 * them into <path> with sps_merge and removes them; the other ranks wait
 * until their part is taken (so that a launcher that kills the job when a
 * rank dies does not kill rank 0 in the middle of its merge), at most
 * SPS__SIG_MPI_WAIT_S seconds each.  If a part does not come, the parts
 * stay (join them with `spanscope merge`).
 *
 * Fork: a forked child inherits the handler but has no watcher, and gets
 * none (a child of a multi-threaded process may not portably start
 * threads: POSIX allows only async-signal-safe calls there and
 * ThreadSanitizer refuses; core's spill writer follows the same rule):
 * there the handler does what prev would have, so the child dies of the
 * signal as without spanscope, its own session's profile unwritten.
 *
 * Everything the handler reads is published with atomics (release by the
 * installer, acquire in the handler), so ThreadSanitizer sees the order. */
#include "api/api.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long rank 0 waits for the other ranks' parts, and they for rank 0 to
 * take them, after a signal in a distributed session. */
#define SPS__SIG_MPI_WAIT_S 30

/* The signals spanscope may handle: those whose default action ends the
 * process and that a user, a batch system or a launcher sends to ask a
 * program to stop.  (SIGPROF is the sampler's; SIGSEGV & co. are crashes.) */
static const struct {
    int sig;
    const char *name;
} sig_table[] = {
    {SIGHUP, "HUP"},   {SIGINT, "INT"},   {SIGQUIT, "QUIT"}, {SIGTERM, "TERM"},
    {SIGUSR1, "USR1"}, {SIGUSR2, "USR2"}, {SIGALRM, "ALRM"}, {SIGXCPU, "XCPU"},
};
#define NSIGS (sizeof sig_table / sizeof sig_table[0])
#define DEFAULT_MASK ((1u << 0) | (1u << 1) | (1u << 3) | (1u << 4)) /* HUP INT TERM USR1 */

/* Test hook (tests/c/test_signals.c): called by the watcher before it
 * writes, with the signal's number.  NULL in programs. */
SPS__HIDDEN void (*sps__signals_before_write)(int sig);

/* The process's state.  g_mu orders install, uninstall and sps_signals;
 * the handler takes no lock and reads only the atomics and g_prev[k]
 * after an acquire load of g_on[k]. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction g_prev[NSIGS]; /* what the signal did before us */
static int g_on[NSIGS];                /* atomic: our handler is installed */
static int g_pipe_w = -1;              /* atomic: the self-pipe's write end */
static int g_pipe_r = -1;              /* the watcher's end (g_mu) */
static int g_owner;                    /* atomic: the pid whose watcher reads the pipe */
static int g_writing;                  /* atomic: a signal is being written (its number) */
static int g_finalizing;               /* atomic: finalizes under way (not the watcher's) */
static int g_exiting;                  /* atomic: exit_wait ran (the process is exiting) */
static int g_exit_sig;                 /* atomic: a signal deferred to the exit's end */
static __thread int t_watcher;         /* this thread is the watcher */
static int g_session;                  /* a session of this process has us installed (g_mu) */
static int g_forked;                   /* this process is a fork child (set in the child) */
static int g_explicit;                 /* sps_signals set the list (g_mu) */
static unsigned g_mask_explicit;       /* ... to this */
static unsigned g_mask;                /* the list in force (g_mu) */

static const char *sig_name(int sig) {
    for (size_t k = 0; k < NSIGS; k++)
        if (sig_table[k].sig == sig) return sig_table[k].name;
    return "?";
}

static int slot_of(int sig) {
    for (size_t k = 0; k < NSIGS; k++)
        if (sig_table[k].sig == sig) return (int)k;
    return -1;
}

/* Parses a list such as "TERM,INT" ("SIGTERM", any case, spaces around
 * the names allowed; "" or "none": nothing) into *mask.  0 or SPS_EINVAL
 * with the message naming what (the variable or the function). */
static int parse_list(const char *list, const char *what, unsigned *mask) {
    *mask = 0;
    const char *p = list;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p || strcasecmp(p, "none") == 0) return 0;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        const char *end = p;
        while (*end && *end != ',') end++;
        const char *e = end;
        while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
        size_t n = (size_t)(e - p);
        if (n >= 3 && strncasecmp(p, "SIG", 3) == 0) p += 3, n -= 3;
        int k = -1;
        for (size_t i = 0; i < NSIGS && k < 0; i++)
            if (strlen(sig_table[i].name) == n && strncasecmp(p, sig_table[i].name, n) == 0)
                k = (int)i;
        if (k < 0)
            return sps__err_fail(SPS_EINVAL, "%s=%s: \"%.*s\" is not one of HUP, INT, QUIT, "
                                 "TERM, USR1, USR2, ALRM, XCPU (comma-separated; \"none\" "
                                 "or \"\": no signal)", what, list, (int)n, p);
        *mask |= 1u << k;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The handler (async-signal-safe: sigaction, sigprocmask, raise, getpid,   */
/* write, and atomics only)                                                  */
/* ------------------------------------------------------------------------ */

/* Ends the process by sig's default action, now. */
static void die_now(int sig) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, sig);
    sigprocmask(SIG_UNBLOCK, &m, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached: the default action of every listed signal ends */
}

/* Does what prev (the program's disposition) would have done. */
static void pass_on(int k, int sig, siginfo_t *info, void *uc) {
    const struct sigaction *prev = &g_prev[k];
    if (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_IGN) return;
    if (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_DFL) die_now(sig);
    if (prev->sa_flags & SA_RESETHAND) { /* a one-shot handler: the next one is default */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        __atomic_store_n(&g_on[k], 0, __ATOMIC_RELEASE);
    }
    if (prev->sa_flags & SA_SIGINFO)
        prev->sa_sigaction(sig, info, uc);
    else
        prev->sa_handler(sig);
}

static void on_signal(int sig, siginfo_t *info, void *uc);

static int is_ours(const struct sigaction *sa) {
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_signal;
}

static void on_signal(int sig, siginfo_t *info, void *uc) {
    int saved = errno;
    int k = slot_of(sig);
    if (k < 0) die_now(sig); /* never installed for it */
    if (!__atomic_load_n(&g_on[k], __ATOMIC_ACQUIRE)) {
        /* uninstalled while this signal was on its way: what the signal
         * did before (g_prev stays valid once published) */
        pass_on(k, sig, info, uc);
        errno = saved;
        return;
    }
    const struct sigaction *prev = &g_prev[k];
    int dfl = !(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_DFL;
    int pw = __atomic_load_n(&g_pipe_w, __ATOMIC_ACQUIRE);
    int owner = (int)getpid() == __atomic_load_n(&g_owner, __ATOMIC_ACQUIRE);
    if (owner && __atomic_load_n(&g_writing, __ATOMIC_ACQUIRE))
        die_now(sig); /* any signal of the list while a write goes on, handled or not */
    if (!dfl || pw < 0 || !owner) {
        /* the program's own handler, or a forked child with no watcher */
        pass_on(k, sig, info, uc);
        errno = saved;
        return;
    }
    int first = 0;
    /* sequentially consistent, as sps__signals_finalize_enter's add and
     * load: of this store and a finalize's, one sees the other */
    if (!__atomic_compare_exchange_n(&g_writing, &first, sig, 0, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST))
        die_now(sig); /* a second signal while the first one's write goes on */
    /* ... and of this load and exit_wait's store of g_exiting, one sees
     * the other's g_writing store: the process is exiting (HDF5's exit
     * handler may be shutting the library down), so the exit goes on --
     * its own finalize writes, if the program has one -- and the signal
     * ends the process at the end of it (exit_signal) */
    if (__atomic_load_n(&g_exiting, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&g_exit_sig, sig, __ATOMIC_SEQ_CST);
        errno = saved;
        return;
    }
    unsigned char b = (unsigned char)sig;
    if (write(pw, &b, 1) != 1) die_now(sig); /* no watcher to wake: as without us */
    errno = saved;
}

/* ------------------------------------------------------------------------ */
/* The watcher                                                               */
/* ------------------------------------------------------------------------ */

/* Calls in the file at path (every rank's), or -1 when it cannot be read. */
static int64_t calls_in(const char *path) {
    const sps_file_t *f = NULL;
    if (sps_file_open_index(path, &f, NULL, 0) != 0) return -1;
    uint64_t n = 0;
    for (size_t i = 0; i < f->nrows; i++) n += f->rows[i].count;
    sps_file_close(f);
    return (int64_t)n;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Sleeps about ms milliseconds. */
static void nap(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* "<path>.rank<R>.h5" into a new string (NULL: no memory). */
static char *part_name(const char *path, int rank) {
    size_t n = strlen(path) + 32;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s.rank%d.h5", path, rank);
    return s;
}

/* The message of rc, for the line. */
static const char *why(int rc) {
    const char *m = sps__err_msg();
    return m && *m ? m : sps_strerror(rc);
}

/* A distributed session's write (see the top of the file); line gets the
 * message. */
static void write_ranks(int sig, const char *path, int rank, int size, int64_t start_wall,
                        char *line, size_t cap) {
    const char *name = sig_name(sig);
    char *mine = part_name(path, rank);
    if (!mine) {
        snprintf(line, cap, "spanscope: SIG%s: rank %d: out of memory; ending as the signal does\n",
                 name, rank);
        return;
    }
    int rc = sps__finalize_part(mine, NULL);
    if (rc) {
        snprintf(line, cap, "spanscope: SIG%s: rank %d could not write %s: %s; ending as the "
                 "signal does\n", name, rank, mine, why(rc));
        free(mine);
        return;
    }
    if (rank != 0) { /* rank 0 takes it; wait for that, then die */
        for (int i = 0; i < SPS__SIG_MPI_WAIT_S * 20 && file_exists(mine); i++) nap(50);
        if (file_exists(mine))
            snprintf(line, cap, "spanscope: SIG%s: rank %d wrote %s; rank 0 did not merge it "
                     "within %d s (join the parts with spanscope merge); ending as the signal "
                     "does\n", name, rank, mine, SPS__SIG_MPI_WAIT_S);
        free(mine);
        return;
    }
    char **parts = calloc((size_t)size, sizeof *parts);
    int ok = parts != NULL;
    for (int r = 0; ok && r < size; r++) ok = (parts[r] = part_name(path, r)) != NULL;
    /* every part, written after this session started (not a stale one of
     * an earlier run) */
    int missing = size;
    for (int i = 0; ok && missing && i < SPS__SIG_MPI_WAIT_S * 20; i++) {
        missing = 0;
        for (int r = 0; r < size; r++) {
            struct stat st;
            int64_t t = 0;
            if (stat(parts[r], &st) == 0)
                t = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
            if (!t || t + 2000000000 < start_wall) missing++;
        }
        if (missing) nap(50);
    }
    if (!ok) {
        snprintf(line, cap, "spanscope: SIG%s: out of memory; the parts are %s.rank<R>.h5; "
                 "ending as the signal does\n", name, path);
    } else if (missing) {
        snprintf(line, cap, "spanscope: SIG%s: %d of %d ranks wrote no part within %d s: "
                 "%s.rank<R>.h5 left (join them with spanscope merge); ending as the signal "
                 "does\n", name, missing, size, SPS__SIG_MPI_WAIT_S, path);
    } else {
        sps__err_clear();
        rc = sps_merge(path, (const char *const *)parts, (size_t)size, NULL);
        if (rc) {
            snprintf(line, cap, "spanscope: SIG%s: could not merge the ranks' parts into %s: "
                     "%s (the parts %s.rank<R>.h5 are left); ending as the signal does\n",
                     name, path, why(rc), path);
        } else {
            for (int r = 0; r < size; r++) unlink(parts[r]);
            snprintf(line, cap, "spanscope: SIG%s: profile of %d ranks written to %s (%lld "
                     "calls); ending as the signal does\n", name, size, path,
                     (long long)calls_in(path));
        }
    }
    for (int r = 0; parts && r < size; r++) free(parts[r]);
    free(parts);
    free(mine);
}

/* This process's write (see the top of the file); line gets the message. */
static void write_local(int sig, const char *path, int finalized_before, char *line,
                        size_t cap) {
    const char *name = sig_name(sig);
    /* written beside the output, then renamed over it: after a finalize of
     * the session an empty period must not replace the file it wrote, and
     * a finalize of the program's running at this moment (its temporary
     * file is "<path>.tmp-<pid>") must not share a temporary file with
     * this one */
    size_t tn = strlen(path) + 48;
    char *tmp = malloc(tn);
    if (tmp) snprintf(tmp, tn, "%s.signal-%ld.h5", path, (long)getpid());
    int rc = sps__finalize_local(tmp ? tmp : path, NULL);
    if (rc) {
        snprintf(line, cap, "spanscope: SIG%s: could not write %s: %s; ending as the signal "
                 "does\n", name, path, why(rc));
        free(tmp);
        return;
    }
    int64_t n = calls_in(tmp ? tmp : path);
    if (tmp && n == 0 && finalized_before) {
        unlink(tmp);
        snprintf(line, cap, "spanscope: SIG%s: nothing recorded since the last finalize, %s "
                 "kept as it was; ending as the signal does\n", name, path);
    } else if (tmp && rename(tmp, path) != 0) {
        snprintf(line, cap, "spanscope: SIG%s: profile written to %s (%lld calls), could not "
                 "rename it to %s: %s; ending as the signal does\n", name, tmp, (long long)n,
                 path, strerror(errno));
    } else {
        snprintf(line, cap, "spanscope: SIG%s: profile written to %s (%lld calls); ending as "
                 "the signal does\n", name, path, (long long)n);
    }
    free(tmp);
    /* written: the crash-recovery directory has nothing left to give, and
     * the signal ends the process without its exit handlers (core/crash.c) */
    sps__crash_release();
}

/* The write of one signal, then the signal's own end.  A finalize under
 * way (the program's, at its exit say) is let finish first: the two would
 * use HDF5 at once. */
static void handle(int sig) {
    while (__atomic_load_n(&g_finalizing, __ATOMIC_SEQ_CST) > 0) nap(5);
    pthread_mutex_lock(&sps__g.lock);
    int live = sps__session_live();
    char *path = live && sps__g.file_path ? strdup(sps__g.file_path) : NULL;
    sps__dist_t dist = live ? sps__g.dist : (sps__dist_t){0};
    int finalized_before = live && sps__g.period_start_ns != sps__g.start_ns;
    pthread_mutex_unlock(&sps__g.lock);
    void (*hook)(int) = __atomic_load_n(&sps__signals_before_write, __ATOMIC_ACQUIRE);
    if (hook) hook(sig);
    char line[8192];
    line[0] = 0;
    if (live && !path) {
        snprintf(line, sizeof line, "spanscope: SIG%s: the session has no output file, nothing "
                 "written; ending as the signal does\n", sig_name(sig));
    } else if (live && dist.on && dist.size > 1) {
        int64_t wall = 0, mono = 0;
        sps_clock_anchor(&wall, &mono);
        write_ranks(sig, path, dist.rank, dist.size, wall, line, sizeof line);
    } else if (live) {
        write_local(sig, path, finalized_before, line, sizeof line);
    }
    free(path);
    if (line[0]) {
        size_t len = strlen(line), off = 0;
        while (off < len) {
            ssize_t w = write(STDERR_FILENO, line + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += (size_t)w;
        }
    }
    die_now(sig);
}

static void *watcher(void *arg) {
    int fd = (int)(intptr_t)arg;
    t_watcher = 1;
    for (;;) {
        unsigned char b;
        ssize_t n = read(fd, &b, 1);
        if (n == 1 && b) handle(b);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || (n < 0 && errno != EAGAIN)) break; /* the pipe is gone */
    }
    return NULL;
}

static void atfork_child(void) {
    g_forked = 1;
    __atomic_store_n(&g_finalizing, 0, __ATOMIC_RELAXED); /* the parent's threads' */
    __atomic_store_n(&g_exiting, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_exit_sig, 0, __ATOMIC_RELAXED);
}
static void atfork_register(void) { pthread_atfork(NULL, NULL, atfork_child); }

/* Makes the pipe and the watcher of this process, once per process; none
 * in a fork child (see the top of the file: the handler then passes every
 * signal on, g_owner being the parent's pid).  Under g_mu.  0, SPS_EIO or
 * SPS_ENOMEM. */
static int watcher_start(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, atfork_register);
    int me = (int)getpid();
    if (g_forked) return 0;
    if (__atomic_load_n(&g_owner, __ATOMIC_ACQUIRE) == me && g_pipe_r >= 0) return 0;
    int fds[2];
    if (pipe(fds) != 0) return sps__err_fail(SPS_EIO, "signals: pipe: %s", strerror(errno));
    for (int i = 0; i < 2; i++) fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    /* the watcher takes no signal: handlers run in the program's threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &at, watcher, (void *)(intptr_t)fds[0]);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        close(fds[0]), close(fds[1]);
        return sps__err_fail(SPS_ENOMEM, "signals: cannot start the watcher thread: %s",
                             strerror(rc));
    }
    g_pipe_r = fds[0];
    __atomic_store_n(&g_writing, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&g_pipe_w, fds[1], __ATOMIC_RELEASE);
    __atomic_store_n(&g_owner, me, __ATOMIC_RELEASE);
    return 0;
}

/* Installs the handler for the signals of mask not yet installed, and
 * restores the others' dispositions.  Under g_mu. */
static void apply(unsigned mask) {
    for (size_t k = 0; k < NSIGS; k++) {
        int sig = sig_table[k].sig;
        int on = __atomic_load_n(&g_on[k], __ATOMIC_ACQUIRE);
        struct sigaction cur;
        if (sigaction(sig, NULL, &cur) != 0) continue;
        if ((mask >> k) & 1) {
            if (on && is_ours(&cur)) continue;
            if (is_ours(&cur)) { /* a fork child re-installing: prev is the parent's */
                __atomic_store_n(&g_on[k], 1, __ATOMIC_RELEASE);
                continue;
            }
            if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) {
                __atomic_store_n(&g_on[k], 0, __ATOMIC_RELEASE);
                continue; /* ignored by the program: it stays ignored */
            }
            __atomic_store_n(&g_on[k], 0, __ATOMIC_RELEASE);
            g_prev[k] = cur;
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_signal;
            sa.sa_mask = cur.sa_mask;
            int dfl = !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
            sa.sa_flags = SA_SIGINFO | (dfl ? SA_RESTART : cur.sa_flags & (SA_RESTART | SA_ONSTACK |
                                                                         SA_NODEFER));
            __atomic_store_n(&g_on[k], 1, __ATOMIC_RELEASE); /* g_prev[k] published */
            if (sigaction(sig, &sa, NULL) != 0) __atomic_store_n(&g_on[k], 0, __ATOMIC_RELEASE);
        } else if (on || is_ours(&cur)) {
            /* restore what the signal did before, unless the program has
             * put its own handler in our place since */
            if (is_ours(&cur)) sigaction(sig, &g_prev[k], NULL);
            __atomic_store_n(&g_on[k], 0, __ATOMIC_RELEASE);
        }
    }
    g_mask = mask;
}

/* ------------------------------------------------------------------------ */
/* The calls                                                                 */
/* ------------------------------------------------------------------------ */

/* At exit, while a signal's write is under way (the watcher's), waits for
 * it: it ends the process as the signal does.  Without this a program
 * that reaches its end while the watcher writes (a Python script a
 * SIGTERM reached just before its last line: spanscope's handler does not
 * stop it) ran HDF5's exit handler, which shut the library down under the
 * write ("could not write ...: the HDF5 library reported an error"), and
 * the signal then ended the process with no file at all. */
static void exit_wait(void) {
    __atomic_store_n(&g_exiting, 1, __ATOMIC_SEQ_CST); /* on_signal's load: see there */
    while (__atomic_load_n(&g_writing, __ATOMIC_SEQ_CST) &&
           !__atomic_load_n(&g_exit_sig, __ATOMIC_SEQ_CST) &&
           __atomic_load_n(&g_owner, __ATOMIC_ACQUIRE) == (int)getpid())
        nap(10);
}

/* At the very end of the exit (this library's destructor runs after every
 * exit handler, and after the destructors of the libraries that use it:
 * the preloaded run library's, the Python extension's): a signal that came
 * after exit_wait ran was let wait for the exit's end -- its write would
 * have raced HDF5's exit handler and the program's exit finalize (a native
 * run's, SPANSCOPE_AUTO_FINALIZE's) -- and now ends the process as it
 * would have, with the same status. */
__attribute__((destructor)) static void exit_signal(void) {
    int sig = __atomic_load_n(&g_exit_sig, __ATOMIC_SEQ_CST);
    if (!sig || __atomic_load_n(&g_owner, __ATOMIC_ACQUIRE) != (int)getpid()) return;
    char line[160];
    int n = snprintf(line, sizeof line, "spanscope: SIG%s came as the program was exiting: "
                     "its exit went on (its own finalize writes the profile); ending as the "
                     "signal does\n", sig_name(sig));
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
    }
    die_now(sig);
}

/* Once per process, before the first session with signals: HDF5 is
 * initialised first, so that exit_wait, registered after HDF5's own exit
 * handler, runs before it (atexit runs the last registered first).  A
 * signal that comes after exit_wait ran waits for the exit's end
 * (exit_signal). */
static void exit_wait_register(void) {
    sps__h5_open();
    atexit(exit_wait);
}

void sps__signals_finalize_enter(void) {
    if (t_watcher) return;
    for (;;) {
        __atomic_add_fetch(&g_finalizing, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&g_writing, __ATOMIC_SEQ_CST) ||
            __atomic_load_n(&g_exit_sig, __ATOMIC_SEQ_CST) || /* no write: deferred */
            __atomic_load_n(&g_owner, __ATOMIC_ACQUIRE) != (int)getpid())
            return;
        __atomic_sub_fetch(&g_finalizing, 1, __ATOMIC_SEQ_CST);
        nap(10); /* the write ends the process */
    }
}

void sps__signals_finalize_leave(void) {
    if (!t_watcher) __atomic_sub_fetch(&g_finalizing, 1, __ATOMIC_SEQ_CST);
}

/* sps_setup's: the list (sps_signals', else SPANSCOPE_SIGNALS, else the
 * default) installed for the new session.  0, or SPS_EINVAL for a bad
 * SPANSCOPE_SIGNALS (the session is then not started), or the watcher's
 * failure. */
SPS__HIDDEN int sps__signals_install(void) {
    pthread_mutex_lock(&g_mu);
    unsigned mask = DEFAULT_MASK;
    int rc = 0;
    if (g_explicit) {
        mask = g_mask_explicit;
    } else {
        const char *v = getenv("SPANSCOPE_SIGNALS");
        if (v) rc = parse_list(v, "SPANSCOPE_SIGNALS", &mask);
    }
    if (!rc && mask) rc = watcher_start();
    if (!rc && mask) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, exit_wait_register);
    }
    if (!rc) {
        apply(mask);
        g_session = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

/* sps_shutdown's: the dispositions as they were.  If a signal's write is
 * under way, waits for it: it ends the process. */
SPS__HIDDEN void sps__signals_uninstall(void) {
    pthread_mutex_lock(&g_mu);
    if (g_session) apply(0);
    g_session = 0;
    pthread_mutex_unlock(&g_mu);
    /* after the restore, so that a signal taken just before it is seen:
     * the session must outlive its write */
    while (__atomic_load_n(&g_writing, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&g_exit_sig, __ATOMIC_SEQ_CST) &&
           __atomic_load_n(&g_owner, __ATOMIC_ACQUIRE) == (int)getpid())
        nap(10);
}

int sps_signals(const char *list) {
    sps__err_clear();
    unsigned mask = DEFAULT_MASK;
    int rc = 0;
    if (list) rc = parse_list(list, "sps_signals", &mask);
    if (rc) return rc;
    pthread_mutex_lock(&g_mu);
    if (!list) {
        g_explicit = 0;
        const char *v = getenv("SPANSCOPE_SIGNALS");
        if (v) rc = parse_list(v, "SPANSCOPE_SIGNALS", &mask);
    } else {
        g_explicit = 1;
        g_mask_explicit = mask;
    }
    if (!rc && g_session && sps__session_live()) {
        if (mask) rc = watcher_start();
        if (!rc) apply(mask);
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}
