/* test_signals.c -- SIGTERM, SIGINT, SIGHUP and SIGUSR1 on a recording
 * process (api/signals.c, docs/signals.md): the profile recorded so far is
 * written, one line says so on stderr, and the process dies of the signal
 * as it would have without spanscope.  A program's own handler is called
 * instead and nothing is written; SPANSCOPE_SIGNALS=none and sps_signals
 * leave signals alone; a second signal during the write ends the process
 * at once; a forked child dies as without spanscope until it sets up a
 * session of its own.
 *
 * Each case runs in a forked child (the recording program) that this
 * process kills from outside at a random moment: the child's threads count
 * their completed calls in shared memory, so the file's calls can be
 * compared with what the program did before and after the signal. */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* api/signals.c's test hook: called by the watcher before it writes. */
extern void (*sps__signals_before_write)(int sig);

#define MAXT 4

/* What the child and this process share. */
typedef struct shared {
    atomic_ullong done[MAXT];  /* completed calls, per worker thread */
    atomic_int handler_calls;  /* the program's own handler ran */
    atomic_int handler_signo;  /* ... with this siginfo */
    atomic_int handler_pid;
    atomic_int stop;           /* the program's handler asks the workers to stop */
} shared_t;

static shared_t *sh;

static shared_t *shared_new(void) {
    void *p = mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 0, sizeof(shared_t));
    return p;
}

static unsigned long long done_sum(int nthreads) {
    unsigned long long n = 0;
    for (int i = 0; i < nthreads; i++) n += atomic_load(&sh->done[i]);
    return n;
}

static sps_region_t g_work;

static void *worker(void *arg) {
    int i = (int)(intptr_t)arg;
    while (!atomic_load(&sh->stop)) {
        sps_begin(g_work);
        tu_spin_ns(1000);
        sps_end(g_work);
        atomic_fetch_add(&sh->done[i], 1);
    }
    return NULL;
}

/* The recording program: a session writing path, nthreads recording
 * threads; returns when sh->stop is set (by the program's own handler),
 * else runs until a signal ends it. */
static void child_record(const char *path, int nthreads) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    if (sps_setup(&cfg) != 0) _exit(90);
    g_work = sps_region("work");
    pthread_t t[MAXT];
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0) _exit(91);
    while (!atomic_load(&sh->stop)) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
}

/* Forks; the child's stderr goes to errpath.  Returns the child's pid (0
 * in the child). */
static pid_t fork_child(const char *errpath) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(errpath, "w", stderr);
        if (!f) _exit(92);
        setvbuf(stderr, NULL, _IONBF, 0);
        setenv("SPANSCOPE_FORK", "off", 1); /* the fork helper's own-profile mode */
    }
    return pid;
}

/* Waits until the child's workers have completed at least target calls
 * (or it died). */
static void wait_calls(pid_t pid, int nthreads, unsigned long long target) {
    for (int i = 0; i < 400000 && done_sum(nthreads) < target; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) fail_msg("the child ended early: %#x", st);
        tu_spin_ns(50000);
    }
    assert_true(done_sum(nthreads) >= target);
}

/* The lines of errpath that start with "spanscope:", in buf; how many. */
static int spanscope_lines(const char *errpath, char *buf, size_t cap) {
    buf[0] = 0;
    FILE *f = fopen(errpath, "r");
    if (!f) return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "spanscope:", 10) != 0) continue;
        n++;
        if (strlen(buf) + strlen(line) < cap) strcat(buf, line);
    }
    fclose(f);
    return n;
}

/* Calls of region "work" in the file at path, or -1 when it cannot be
 * read as a profile. */
static long long work_calls(const char *path) {
    const sps_file_t *f = NULL;
    char err[512];
    if (sps_file_open(path, &f, err, sizeof err) != 0) {
        print_message("cannot read %s: %s\n", path, err);
        return -1;
    }
    long long n = 0;
    for (size_t i = 0; i < f->nrows; i++)
        if (strcmp(f->names[f->rows[i].region], "work") == 0) n += (long long)f->rows[i].count;
    sps_file_close(f);
    return n;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static const char *sig_text(int sig) {
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    default: return "?";
    }
}

/* One program of nthreads threads killed by sig at a random moment: the
 * file holds at least the calls completed before the signal and no more
 * than were ever completed, one line on stderr, and the process died of
 * sig. */
static void kill_once(int sig, int nthreads) {
    char name[64], errname[64];
    snprintf(name, sizeof name, "signals_%s_%d.h5", sig_text(sig), nthreads);
    snprintf(errname, sizeof errname, "signals_%s_%d.err", sig_text(sig), nthreads);
    char path[1024], errpath[1024];
    snprintf(path, sizeof path, "%s", tu_path(name));
    snprintf(errpath, sizeof errpath, "%s", tu_path(errname));
    unlink(path);
    sh = shared_new();
    pid_t pid = fork_child(errpath);
    if (pid == 0) {
        child_record(path, nthreads);
        _exit(93); /* not reached: nothing stops the workers but the signal */
    }
    unsigned long long target = 200 + (unsigned long long)(rand() % 3000);
    wait_calls(pid, nthreads, target);
    unsigned long long before = done_sum(nthreads);
    assert_int_equal(kill(pid, sig), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    unsigned long long after = done_sum(nthreads);
    char lines[8192];
    int nl = spanscope_lines(errpath, lines, sizeof lines);
    print_message("%s, %d threads: %llu calls before the signal, %llu at the end; stderr: %s",
                  sig_text(sig), nthreads, before, after, lines);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), sig);
    assert_int_equal(nl, 1);
    assert_non_null(strstr(lines, sig_text(sig)));
    assert_non_null(strstr(lines, "profile written to"));
    assert_non_null(strstr(lines, path));
    long long n = work_calls(path);
    assert_true(n >= 0);
    assert_true((unsigned long long)n >= before);
    assert_true((unsigned long long)n <= after + (unsigned long long)nthreads);
    char count[64]; /* the line's count is the file's */
    snprintf(count, sizeof count, "(%lld calls)", n);
    assert_non_null(strstr(lines, count));
    munmap(sh, sizeof *sh);
}

static void test_each_signal_1_thread(void **state) {
    (void)state;
    int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    for (int i = 0; i < 4; i++) kill_once(sigs[i], 1);
}

static void test_each_signal_4_threads(void **state) {
    (void)state;
    int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    for (int i = 0; i < 4; i++) kill_once(sigs[i], 4);
}

/* The program's own SIGTERM handler (SA_SIGINFO) */
static void own_handler(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    atomic_fetch_add(&sh->handler_calls, 1);
    atomic_store(&sh->handler_signo, si ? si->si_signo : -sig);
    atomic_store(&sh->handler_pid, si ? (int)si->si_pid : -1);
    atomic_store(&sh->stop, 1);
}

/* A program with its own SIGTERM handler, installed before sps_setup: its
 * handler runs (with the signal's siginfo), spanscope writes nothing, and
 * the program's own finalize writes every call, the ones before the
 * signal included; it ends as it chooses (exit 42). */
static void test_own_handler_is_called(void **state) {
    (void)state;
    const char *path = tu_path("signals_own.h5");
    char errpath[1024];
    snprintf(errpath, sizeof errpath, "%s", tu_path("signals_own.err"));
    unlink(path);
    sh = shared_new();
    pid_t pid = fork_child(errpath);
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = own_handler;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        child_record(path, 2); /* returns once the handler stops the workers */
        int rc = sps_finalize();
        sps_shutdown();
        /* shutdown put the program's handler back */
        struct sigaction cur;
        sigaction(SIGTERM, NULL, &cur);
        if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != own_handler) _exit(94);
        _exit(rc == 0 ? 42 : 95);
    }
    wait_calls(pid, 2, 200 + (unsigned long long)(rand() % 2000));
    unsigned long long before = done_sum(2);
    assert_int_equal(kill(pid, SIGTERM), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char lines[8192];
    int nl = spanscope_lines(errpath, lines, sizeof lines);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 42);
    assert_int_equal(atomic_load(&sh->handler_calls), 1);
    assert_int_equal(atomic_load(&sh->handler_signo), SIGTERM);
    assert_int_equal(atomic_load(&sh->handler_pid), (int)getpid());
    assert_int_equal(nl, 0);
    long long n = work_calls(path);
    print_message("own handler: %llu calls before the signal, %lld in the file\n", before, n);
    assert_true(n >= 0 && (unsigned long long)n >= before);
    assert_int_equal((unsigned long long)n, done_sum(2)); /* every call, exactly */
    munmap(sh, sizeof *sh);
}

static atomic_int g_usr1_seen;
static void usr1_handler(int sig) {
    (void)sig;
    atomic_fetch_add(&g_usr1_seen, 1);
}

/* A handler the program installs after sps_setup replaces spanscope's and
 * stays after sps_shutdown; a signal spanscope handled at setup gets its
 * old disposition back at shutdown. */
static void test_shutdown_restores(void **state) {
    (void)state;
    struct sigaction before_hup, after;
    sigaction(SIGHUP, NULL, &before_hup);
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sigaction(SIGHUP, NULL, &after);
    assert_true(after.sa_flags & SA_SIGINFO); /* spanscope's handler */
    signal(SIGUSR1, usr1_handler);            /* the program's, after setup */
    assert_int_equal(sps_shutdown(), 0);
    sigaction(SIGHUP, NULL, &after);
    assert_true(after.sa_handler == before_hup.sa_handler);
    assert_false(after.sa_flags & SA_SIGINFO);
    sigaction(SIGUSR1, NULL, &after);
    assert_true(after.sa_handler == usr1_handler);
    raise(SIGUSR1);
    assert_int_equal(atomic_load(&g_usr1_seen), 1);
    signal(SIGUSR1, SIG_DFL);
}

/* How a child configured by how ends on sig: the file must not exist, no
 * spanscope line, death by sig. */
enum { OPT_ENV_NONE, OPT_CALL_OTHER, OPT_CALL_NONE_AFTER };
static void opt_out_once(int how, int sig) {
    const char *path = tu_path("signals_optout.h5");
    char errpath[1024];
    snprintf(errpath, sizeof errpath, "%s", tu_path("signals_optout.err"));
    unlink(path);
    sh = shared_new();
    pid_t pid = fork_child(errpath);
    if (pid == 0) {
        if (how == OPT_ENV_NONE) setenv("SPANSCOPE_SIGNALS", "none", 1);
        if (how == OPT_CALL_OTHER && sps_signals("sigterm, HUP") != 0) _exit(96);
        if (how == OPT_CALL_NONE_AFTER) {
            sps_config_t cfg = SPS_CONFIG_INIT;
            cfg.file_path = path;
            if (sps_setup(&cfg) != 0) _exit(97);
            if (sps_signals("") != 0) _exit(98);
            sps_shutdown();
        }
        child_record(path, 1);
        _exit(93);
    }
    wait_calls(pid, 1, 300);
    assert_int_equal(kill(pid, sig), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char lines[8192];
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), sig);
    assert_int_equal(spanscope_lines(errpath, lines, sizeof lines), 0);
    assert_false(file_exists(path));
    munmap(sh, sizeof *sh);
}

static void test_opt_out(void **state) {
    (void)state;
    opt_out_once(OPT_ENV_NONE, SIGTERM);
    opt_out_once(OPT_CALL_OTHER, SIGINT);       /* INT is not in the list */
    opt_out_once(OPT_CALL_NONE_AFTER, SIGTERM); /* "" chosen before the session */
}

/* Bad lists are refused with a reason; a bad SPANSCOPE_SIGNALS fails
 * sps_setup (no session), sps_signals' list wins over it. */
static void test_bad_lists(void **state) {
    (void)state;
    assert_int_equal(sps_signals("TERM,BOGUS"), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "BOGUS"));
    assert_int_equal(sps_signals("KILL"), SPS_EINVAL); /* cannot be caught: not offered */
    assert_int_equal(sps_signals("SEGV"), SPS_EINVAL); /* a crash, not a request to stop */
    setenv("SPANSCOPE_SIGNALS", "TERM;INT", 1);
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "SPANSCOPE_SIGNALS"));
    assert_false(sps_is_active());
    assert_int_equal(sps_signals(NULL), SPS_EINVAL); /* back to the (bad) environment */
    assert_int_equal(sps_signals("usr1 , Term"), 0);
    assert_int_equal(sps_setup(&cfg), 0); /* the call's list wins */
    struct sigaction cur;
    sigaction(SIGUSR1, NULL, &cur);
    assert_true(cur.sa_flags & SA_SIGINFO);
    sigaction(SIGINT, NULL, &cur);
    assert_false(cur.sa_flags & SA_SIGINFO);
    assert_int_equal(sps_signals("INT"), 0); /* at once, in the live session */
    sigaction(SIGUSR1, NULL, &cur);
    assert_false(cur.sa_flags & SA_SIGINFO);
    sigaction(SIGINT, NULL, &cur);
    assert_true(cur.sa_flags & SA_SIGINFO);
    sps_shutdown();
    sigaction(SIGINT, NULL, &cur);
    assert_false(cur.sa_flags & SA_SIGINFO);
    unsetenv("SPANSCOPE_SIGNALS");
    assert_int_equal(sps_signals(NULL), 0);
}

static int g_hook_fd = -1;
static void slow_write_hook(int sig) {
    unsigned char b = (unsigned char)sig;
    if (write(g_hook_fd, &b, 1) != 1) _exit(99);
    sleep(30); /* the write would come after: a second signal must not wait */
}

static void own_int_handler(int sig) {
    (void)sig;
    atomic_fetch_add(&sh->handler_calls, 1);
}

/* A second signal while the first one's write is under way ends the
 * process at once, by the second signal, also when the program has a
 * handler of its own for it (which is not called); the write never
 * happens. */
static void second_signal_once(int own_int) {
    const char *path = tu_path("signals_second.h5");
    char errpath[1024];
    snprintf(errpath, sizeof errpath, "%s", tu_path("signals_second.err"));
    unlink(path);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    sh = shared_new();
    pid_t pid = fork_child(errpath);
    if (pid == 0) {
        close(fds[0]);
        g_hook_fd = fds[1];
        sps__signals_before_write = slow_write_hook;
        if (own_int) signal(SIGINT, own_int_handler);
        child_record(path, 2);
        _exit(93);
    }
    close(fds[1]);
    wait_calls(pid, 2, 300);
    assert_int_equal(kill(pid, SIGTERM), 0);
    unsigned char b = 0;
    assert_int_equal(read(fds[0], &b, 1), 1); /* the watcher is about to write */
    assert_int_equal(b, SIGTERM);
    assert_int_equal(kill(pid, SIGINT), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    close(fds[0]);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGINT);
    assert_false(file_exists(path));
    assert_int_equal(atomic_load(&sh->handler_calls), 0);
    char lines[8192];
    assert_int_equal(spanscope_lines(errpath, lines, sizeof lines), 0);
    munmap(sh, sizeof *sh);
}

static void test_second_signal_ends_at_once(void **state) {
    (void)state;
    second_signal_once(0);
    second_signal_once(1);
}

/* A recording process forks: a SIGTERM to the child ends the child as
 * without spanscope and writes nothing of the parent's, also when the
 * child has set up a session of its own (a fork child starts no watcher
 * thread: docs/signals.md); the parent records on, and its own finalize
 * writes its file. */
#if defined(__SANITIZE_THREAD__)
#  define TU_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define TU_TSAN 1
#  endif
#endif
static void test_fork_child(void **state) {
    (void)state;
#ifdef TU_TSAN
    /* ThreadSanitizer delivers no signal to a handler in the child of a
     * multi-threaded fork (a plain program with a thread, a handler and
     * fork shows it): the child would never die */
    skip();
#endif
    const char *ppath = tu_path("signals_fork_parent.h5");
    char cpath[1024], errpath[1024];
    snprintf(cpath, sizeof cpath, "%s", tu_path("signals_fork_child.h5"));
    snprintf(errpath, sizeof errpath, "%s", tu_path("signals_fork.err"));
    unlink(ppath);
    unlink(cpath);
    sh = shared_new();
    pid_t pid = fork_child(errpath);
    if (pid == 0) {
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.file_path = ppath;
        if (sps_setup(&cfg) != 0) _exit(90);
        g_work = sps_region("work");
        for (int own = 0; own < 2; own++) {
            fflush(NULL);
            pid_t c = fork();
            if (c < 0) _exit(91);
            if (c == 0) {
                if (own) {
                    cfg.file_path = cpath;
                    if (sps_setup(&cfg) != 0) _exit(92);
                    for (int i = 0; i < 50; i++) {
                        sps_begin(g_work);
                        sps_end(g_work);
                    }
                }
                atomic_fetch_add(&sh->handler_calls, 1); /* ready */
                for (;;) pause();
            }
            while (atomic_load(&sh->handler_calls) != own + 1) tu_spin_ns(100000);
            if (kill(c, SIGTERM) != 0) _exit(93);
            int st;
            if (waitpid(c, &st, 0) != c || !WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
                _exit(94 + own);
        }
        if (file_exists(ppath)) _exit(96); /* the children wrote nothing of ours */
        for (int i = 0; i < 100; i++) {
            sps_begin(g_work);
            sps_end(g_work);
        }
        _exit(sps_finalize() == 0 ? 0 : 97);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(work_calls(ppath), 100);
    assert_false(file_exists(cpath));
    char lines[8192];
    assert_int_equal(spanscope_lines(errpath, lines, sizeof lines), 0);
    munmap(sh, sizeof *sh);
}

/* After a finalize: a signal with nothing completed since keeps the file
 * that finalize wrote (a program killed in its teardown); with calls
 * since, it writes them, as the next checkpoint would. */
static void after_finalize_once(int more) {
    const char *path = tu_path("signals_after.h5");
    char errpath[1024];
    snprintf(errpath, sizeof errpath, "%s", tu_path("signals_after.err"));
    unlink(path);
    sh = shared_new();
    pid_t pid = fork_child(errpath);
    if (pid == 0) {
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.file_path = path;
        if (sps_setup(&cfg) != 0) _exit(90);
        g_work = sps_region("work");
        for (int i = 0; i < 100; i++) {
            sps_begin(g_work);
            sps_end(g_work);
        }
        if (sps_finalize() != 0) _exit(91);
        for (int i = 0; i < more; i++) {
            sps_begin(g_work);
            sps_end(g_work);
        }
        atomic_store(&sh->handler_calls, 1); /* ready */
        for (;;) pause();
    }
    while (atomic_load(&sh->handler_calls) != 1) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) fail_msg("the child ended early: %#x", st);
        tu_spin_ns(100000);
    }
    assert_int_equal(kill(pid, SIGTERM), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char lines[8192];
    int nl = spanscope_lines(errpath, lines, sizeof lines);
    print_message("%d calls after the finalize: %s", more, lines);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    assert_int_equal(nl, 1);
    assert_int_equal(work_calls(path), more ? more : 100);
    assert_non_null(strstr(lines, more ? "profile written to" : "nothing recorded since"));
    munmap(sh, sizeof *sh);
}

static void test_after_finalize(void **state) {
    (void)state;
    after_finalize_once(0);
    after_finalize_once(10);
}

/* A signal that comes after the exit began (after spanscope's exit handler
 * ran and HDF5's shut the library down: here from an exit handler of the
 * program's, registered before the session, so run after both) lets the
 * exit go on -- the program's exit finalize writes, as a native run's does
 * -- and then ends the process with the signal's status and one line.
 * Before, the watcher wrote beside HDF5's shut-down and the exit finalize,
 * and the signal cut the exit short. */
static void late_exit(void) {
    kill(getpid(), SIGTERM);
    struct timespec ts = {0, 300000000}; /* the watcher's write would end us here */
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    for (int i = 0; i < 50; i++) {
        sps_begin(g_work);
        sps_end(g_work);
    }
    int rc = sps_finalize(); /* the exit's own finalize */
    atomic_store(&sh->handler_calls, rc == 0 ? 2 : 3);
}

static void test_signal_during_exit(void **state) {
    (void)state;
    const char *path = tu_path("signals_exit.h5");
    char errpath[1024];
    snprintf(errpath, sizeof errpath, "%s", tu_path("signals_exit.err"));
    unlink(path);
    sh = shared_new();
    pid_t pid = fork_child(errpath);
    if (pid == 0) {
        if (atexit(late_exit) != 0) _exit(94);
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.file_path = path;
        if (sps_setup(&cfg) != 0) _exit(90);
        g_work = sps_region("work");
        for (int i = 0; i < 100; i++) {
            sps_begin(g_work);
            sps_end(g_work);
        }
        exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char lines[8192];
    int nl = spanscope_lines(errpath, lines, sizeof lines);
    print_message("exit status %#x, exit handler %d; stderr: %s", st,
                  atomic_load(&sh->handler_calls), lines);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    assert_int_equal(atomic_load(&sh->handler_calls), 2); /* it ran to its end */
    assert_int_equal(work_calls(path), 150);
    assert_non_null(strstr(lines, "SIGTERM came as the program was exiting"));
    assert_null(strstr(lines, "profile written to"));
    (void)nl;
    munmap(sh, sizeof *sh);
}

int main(void) {
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    const struct CMUnitTest tests[] = {
        /* the recording programs are children of this process, forked
         * while it has one thread (a child of a multi-threaded process
         * starts no threads under TSan; nor does spanscope in it) */
        cmocka_unit_test(test_each_signal_1_thread),
        cmocka_unit_test(test_each_signal_4_threads),
        cmocka_unit_test(test_own_handler_is_called),
        cmocka_unit_test(test_opt_out),
        cmocka_unit_test(test_second_signal_ends_at_once),
        cmocka_unit_test(test_fork_child),
        cmocka_unit_test(test_after_finalize),
        cmocka_unit_test(test_signal_during_exit),
        /* sessions of this process: its watcher thread from here on */
        cmocka_unit_test(test_shutdown_restores),
        cmocka_unit_test(test_bad_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
