/* test_sampling.c -- stack samples (sps_sampling_start, issue 34): two
 * regions of known CPU cost 3:1 get samples 3:1 (within 15 %), on the main
 * thread and on a thread started after sampling began; the leaf frames
 * name this file's functions; a span open across a checkpoint keeps its
 * samples (none lost, none in the wrong file); a program's own SIGPROF
 * handler keeps getting its signals; fork while sampling (policy off: the
 * child samples nothing; own: the child samples into its own file); stop
 * puts the disposition back. */
#include "testutil.h"
#include "tu_h5.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define TU_CLANG_TSAN 1
#  endif
#endif
#ifndef TU_CLANG_TSAN
#  define TU_CLANG_TSAN 0
#endif
#if defined(__SANITIZE_THREAD__) || TU_CLANG_TSAN
#  define TU_TSAN 1
#else
#  define TU_TSAN 0
#endif

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile uint64_t sink;

/* Burns us microseconds of this thread's CPU time.  noinline: the samples' leaf. */
enum { BURN_HEAVY_FIRST = __LINE__ }; /* the line numbers below are this + 1.. */
__attribute__((noinline)) static void burn_heavy(int us) {
    int64_t end = thread_cpu_ns() + (int64_t)us * 1000;
    uint64_t x = sink;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ull + 1;
    sink = x;
}
__attribute__((noinline)) static void burn_light(int us) {
    int64_t end = thread_cpu_ns() + (int64_t)us * 1000;
    uint64_t x = sink;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 1000; i++) x = x * 2862933555777941757ull + 3;
    sink = x;
}

/* 3:1 CPU time in two regions, interleaved, rounds times: 3d and d with d
 * from 40 to 80 ms, varied to the microsecond so that the boundaries fall
 * at every phase of the kernel's tick (a load sampled at the tick whose
 * boundaries keep few phases against it aliases).  A sample stands for the
 * CPU time since the one before (its weight), so each boundary moves a few
 * ms of it across; long segments keep that small against their length. */
static void work(int rounds) {
    sps_region_t h = sps_region("heavy"), l = sps_region("light");
    unsigned x = 12345;
    for (int i = 0; i < rounds; i++) {
        x = x * 1103515245u + 12345u;
        int d = 40000 + (int)((x >> 8) % 40000);
        sps_begin(h);
        burn_heavy(3 * d);
        sps_end(h);
        sps_begin(l);
        burn_light(d);
        sps_end(l);
    }
}

/* /samples of a file, with the names of its regions. */
typedef struct smp {
    size_t n, nnames, nframes, noff, nfr;
    int64_t *regions, *tids, *stacks, *off, *fr, *calls, *weights, *lines;
    char **names, **functions, **files;
} smp_t;

static void smp_read(const char *path, smp_t *s) {
    memset(s, 0, sizeof *s);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Lexists(f, "/samples", H5P_DEFAULT) > 0);
    s->regions = tu_h5_col(f, "/samples/regions", H5T_NATIVE_INT64, 8, &s->n);
    size_t m;
    s->tids = tu_h5_col(f, "/samples/tids", H5T_NATIVE_INT64, 8, &m);
    s->calls = tu_h5_col(f, "/samples/call_ids", H5T_NATIVE_INT64, 8, &m);
    s->stacks = tu_h5_col(f, "/samples/stacks", H5T_NATIVE_INT64, 8, &m);
    s->weights = tu_h5_col(f, "/samples/weights", H5T_NATIVE_INT64, 8, &m);
    s->off = tu_h5_col(f, "/samples/stack_offsets", H5T_NATIVE_INT64, 8, &s->noff);
    s->fr = tu_h5_col(f, "/samples/stack_frames", H5T_NATIVE_INT64, 8, &s->nfr);
    hid_t st = tu_h5_strtype();
    s->functions = tu_h5_col(f, "/samples/frame_functions", st, sizeof(char *), &s->nframes);
    s->files = tu_h5_col(f, "/samples/frame_files", st, sizeof(char *), &m);
    s->lines = tu_h5_col(f, "/samples/frame_lines", H5T_NATIVE_INT64, 8, &m);
    s->names = tu_h5_col(f, "/region_table/names", st, sizeof(char *), &s->nnames);
    H5Tclose(st);
    H5Fclose(f);
}

/* Samples of region name (by thread tid; 0: any), each by its weight
 * (the timer periods it stands for): at 1 kHz, milliseconds of CPU. */
static size_t smp_count(const smp_t *s, const char *name, int64_t tid) {
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        int64_t r = s->regions[i];
        if (r >= 0 && (size_t)r < s->nnames && !strcmp(s->names[r], name) &&
            (!tid || s->tids[i] == tid))
            k += (size_t)s->weights[i];
    }
    return k;
}

/* Whether function name is among the 6 innermost frames of sample i: the
 * leaf may be in clock_gettime, which the burner calls through
 * thread_cpu_ns, and for the thread's CPU clock that is a system call, so a
 * timer's signal often comes at its return, under the vDSO's frame, libc's
 * and, in an ASan build, the interceptor's (CI's ASan run: "linux-vdso.so.1
 * clock_gettime __interceptor_clock_gettime thread_cpu_ns burn_heavy", 260
 * of 809 samples with burn_heavy fifth). */
static int smp_near_leaf(const smp_t *s, size_t i, const char *name) {
    int64_t st = s->stacks[i];
    if (st < 0 || (size_t)st + 1 >= s->noff) return 0;
    for (int64_t k = s->off[st]; k < s->off[st + 1] && k < s->off[st] + 6; k++) {
        int64_t fi = s->fr[k];
        if (fi >= 0 && (size_t)fi < s->nframes && !strcmp(s->functions[fi], name)) return 1;
    }
    return 0;
}

/* Whether sample i's stack is one frame in the vDSO.  Under TSan only: its
 * runtime defers an asynchronous signal that comes inside an intercepted
 * call (clock_gettime) to the interceptor's exit, so the handler's
 * backtrace() no longer passes the interrupted instruction and the sampler
 * keeps that instruction alone (native_frames in src/ext/sampler.c).  On the
 * timer engine a third of thread_cpu_ns's samples come at the system call's
 * return (CI's AMD EPYC VM: 167 of 811 heavy ones). */
static int smp_alone_in_vdso(const smp_t *s, size_t i) {
    int64_t st = s->stacks[i];
    if (st < 0 || (size_t)st + 1 >= s->noff || s->off[st + 1] - s->off[st] != 1) return 0;
    int64_t fi = s->fr[s->off[st]];
    return fi >= 0 && (size_t)fi < s->nframes && !strncmp(s->functions[fi], "linux-vdso", 10);
}

static void smp_free(smp_t *s) {
    free(s->regions), free(s->tids), free(s->stacks), free(s->off), free(s->fr), free(s->calls), free(s->weights);
    for (size_t i = 0; i < s->nnames; i++) free(s->names[i]);
    for (size_t i = 0; i < s->nframes; i++) free(s->functions[i]), free(s->files[i]);
    free(s->names), free(s->functions), free(s->files), free(s->lines);
}

static void check_ratio(size_t heavy, size_t light) {
    print_message("heavy %zu light %zu\n", heavy, light);
    assert_true(light > 300);
    double r = (double)heavy / (double)light;
    assert_true(r > 3.0 * 0.85 && r < 3.0 * 1.15);
}

static void *late_thread(void *arg) {
    *(int64_t *)arg = (int64_t)syscall(SYS_gettid);
    work(10);
    return NULL;
}

static void test_ratio_and_late_thread(void **state) {
    (void)state;
    const char *path = tu_path("sampling_ratio.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.sample_hz = 1000;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_sampling_hz(), 1000);
    assert_int_equal(sps_sampling_start(500), SPS_EACTIVE);
    work(10); /* about 1800 ms : 600 ms */
    pthread_t th;
    int64_t late_tid = 0;
    usleep(30000); /* the sampler thread has scanned before this thread starts */
    assert_int_equal(pthread_create(&th, NULL, late_thread, &late_tid), 0);
    pthread_join(th, NULL);
    assert_int_equal(sps_finalize(), 0);
    uint64_t taken = 0, lost = 0, faults = 0, threads = 0;
    sps_sampling_stats(&taken, &lost, &faults, &threads);
    assert_true(threads >= 2);
    assert_int_equal(sps_shutdown(), 0);
    assert_int_equal(sps_sampling_hz(), 0);
    smp_t s;
    smp_read(path, &s);
    int64_t me = (int64_t)syscall(SYS_gettid);
    check_ratio(smp_count(&s, "heavy", me), smp_count(&s, "light", me));
    check_ratio(smp_count(&s, "heavy", late_tid), smp_count(&s, "light", late_tid));
    /* the leaves are this file's burners, by region */
    size_t named = 0, heavy = 0, deferred = 0;
    for (size_t i = 0; i < s.n; i++) {
        int64_t r = s.regions[i];
        if (r < 0 || strcmp(s.names[r], "heavy")) continue;
        if (TU_TSAN && smp_alone_in_vdso(&s, i)) { /* see smp_alone_in_vdso */
            deferred++;
            continue;
        }
        heavy++;
        int near = smp_near_leaf(&s, i, "burn_heavy");
        named += near;
        if (!near && heavy - named <= 3) { /* what the others look like */
            int64_t st = s.stacks[i];
            print_message("heavy sample without burn_heavy near its leaf:");
            for (int64_t k = st >= 0 && (size_t)st + 1 < s.noff ? s.off[st] : 0;
                 st >= 0 && (size_t)st + 1 < s.noff && k < s.off[st + 1] && k < s.off[st] + 8; k++)
                print_message(" %s", s.fr[k] >= 0 && (size_t)s.fr[k] < s.nframes
                                        ? s.functions[s.fr[k]] : "?");
            print_message("\n");
        }
    }
    print_message("heavy %zu, leaf burn_heavy %zu, left out (TSan, the vDSO alone) %zu\n", heavy,
                  named, deferred);
    assert_true(named * 10 >= heavy * 8);
    assert_true(deferred <= heavy);
    /* native frames of a -g build carry their source line (libdw): the
     * burner's lie in this file, in its body (or in thread_cpu_ns, which
     * the compiler may inline into it: DWARF gives the inlined line) */
    int lined = 0;
    for (size_t k = 0; k < s.nframes; k++)
        lined += !strcmp(s.functions[k], "burn_heavy") && strstr(s.files[k], "test_sampling.c") &&
                 s.lines[k] > BURN_HEAVY_FIRST && s.lines[k] <= BURN_HEAVY_FIRST + 6;
    print_message("burn_heavy frames with this file's lines: %d\n", lined);
    /* under TSan libdw reports nothing for the process (names only) */
    if (!TU_TSAN) assert_true(lined > 0);
    smp_free(&s);
}

/* A span open across a checkpoint: its samples are written with the
 * period that writes the span, with its call id; none is lost. */
static void test_checkpoint(void **state) {
    (void)state;
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s", tu_path("sampling_ck1.h5"));
    snprintf(p2, sizeof p2, "%s", tu_path("sampling_ck2.h5"));
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = p1;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_sampling_start(2000), 0);
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner");
    sps_begin(outer);
    sps_begin(inner);
    burn_heavy(60000);
    sps_end(inner);
    burn_light(60000); /* outer's own, before the checkpoint */
    assert_int_equal(sps_finalize(), 0); /* outer stays open */
    burn_light(60000);
    sps_end(outer);
    assert_int_equal(sps_finalize_to(p2), 0);
    assert_int_equal(sps_sampling_stop(), 0);
    uint64_t taken = 0, lost = 0;
    sps_sampling_stats(&taken, &lost, NULL, NULL);
    assert_int_equal(sps_shutdown(), 0);
    smp_t a, b;
    smp_read(p1, &a);
    smp_read(p2, &b);
    int64_t me = (int64_t)syscall(SYS_gettid);
    print_message("file 1: inner %zu outer %zu; file 2: inner %zu outer %zu; taken %llu lost %llu\n",
                  smp_count(&a, "inner", me), smp_count(&a, "outer", me),
                  smp_count(&b, "inner", me), smp_count(&b, "outer", me),
                  (unsigned long long)taken, (unsigned long long)lost);
    assert_true(smp_count(&a, "inner", me) > 100); /* 60 ms at 2 kHz */
    assert_int_equal(smp_count(&a, "outer", me), 0); /* outer is written with file 2 */
    assert_int_equal(smp_count(&b, "inner", me), 0);
    /* outer's samples from both periods: about 120 ms at 2 kHz */
    assert_true(smp_count(&b, "outer", me) > 200);
    for (size_t i = 0; i < b.n; i++)
        if (b.regions[i] >= 0) assert_true(b.calls[i] >= 0);
    assert_int_equal(lost, 0);
    smp_free(&a);
    smp_free(&b);
}


static volatile sig_atomic_t user_ticks;
static void user_prof(int sig) {
    (void)sig;
    user_ticks++;
}

/* The program's own SIGPROF profiler (setitimer) goes on getting its
 * signals while spanscope samples; stop puts its handler back. */
static void test_own_sigprof(void **state) {
    (void)state;
    const char *path = tu_path("sampling_own.h5");
    struct sigaction sa, cur;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = user_prof;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_PROF, &it, NULL);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_sampling_start(1000), 0);
    user_ticks = 0;
    work(2);
    print_message("user ticks %d\n", (int)user_ticks);
#if !TU_TSAN
    /* TSan defers signals and keeps one pending per number: our timers'
     * SIGPROF and the program's coalesce there, not in the kernel */
    assert_true(user_ticks > 2); /* its ITIMER_PROF is checked at the tick: few under load */
#endif
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    sigaction(SIGPROF, NULL, &cur);
    assert_true(cur.sa_handler == user_prof); /* put back */
    signal(SIGPROF, SIG_DFL);
    smp_t s;
    smp_read(path, &s);
    assert_true(smp_count(&s, "heavy", 0) > 30);
    smp_free(&s);
}

static volatile sig_atomic_t other_ticks;
static void other_prof(int sig) {
    (void)sig;
    other_ticks++;
}

/* Samples of region name, each once (not by weight). */
static size_t smp_entries(const smp_t *s, const char *name) {
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        int64_t r = s->regions[i];
        k += r >= 0 && (size_t)r < s->nnames && !strcmp(s->names[r], name);
    }
    return k;
}

/* The kernel discards the perf event's SIGPROF when one is already pending
 * for the thread (here a tgkill while SIGPROF is blocked; the program's
 * own setitimer can do the same, and TSan's deferred delivery keeps one
 * per signal).  The event sends one signal per re-arming, so the thread's
 * sampling stopped there for good; now the sampler thread re-arms an event
 * whose thread ran 20 periods without a sample (perf_rearm in
 * src/ext/sampler.c), within 200-400 ms.  A POSIX timer's signal is queued
 * beside a pending one (the kernel's send_sigqueue), so the timer engine
 * (test_sampling_timer) never stopped; this checks it goes on as well. */
static void test_lost_signal_rearms(void **state) {
    (void)state;
    const char *path = tu_path("sampling_lost.h5");
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = other_prof;
    sigaction(SIGPROF, &sa, &old);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_sampling_start(1000), 0);
    burn_light(60000); /* 60 ms: the sampler thread's scans gave this thread its event */
    sigset_t prof, mask;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, &mask);
    other_ticks = 0;
    syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), SIGPROF); /* pending */
    burn_light(20000); /* 20 periods: the event's signal comes, and is discarded */
    pthread_sigmask(SIG_SETMASK, &mask, NULL); /* the tgkill's goes to other_prof */
    assert_int_equal(other_ticks, 1);
    sps_region_t after = sps_region("after");
    sps_begin(after);
    burn_heavy(1000000); /* 1 s of CPU: ~1000 samples, less the time to the re-arm */
    sps_end(after);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    sigaction(SIGPROF, &old, NULL);
    smp_t s;
    smp_read(path, &s);
    size_t n = smp_entries(&s, "after"), ms = smp_count(&s, "after", 0);
    smp_free(&s);
    print_message("samples after the lost signal: %zu, %zu ms of CPU\n", n, ms);
    assert_true(ms > 300); /* by weight: the timer engine's come at the tick, with overruns */
}

/* fork while sampling, under policy off (SPANSCOPE_FORK=off): the child
 * runs on without timers or samples; the parent's sampling goes on.  (By
 * default the child samples into a session of its own at the parent's
 * rate: test_fork_child.c.) */
static void test_fork(void **state) {
    (void)state;
    int policy = sps_fork_policy(0);
    const char *path = tu_path("sampling_fork.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.sample_hz = 2000;
    assert_int_equal(sps_setup(&cfg), 0);
    work(1);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = sps_sampling_hz() != 0;
        burn_heavy(50000);
        _exit(bad ? 3 : 0);
    }
    assert_true(pid > 0);
    work(1);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(sps_sampling_hz(), 2000);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    smp_t s;
    smp_read(path, &s);
    assert_true(smp_count(&s, "heavy", 0) > 100);
    for (size_t i = 0; i < s.n; i++) assert_int_equal(s.tids[i] == pid, 0);
    smp_free(&s);
    sps_fork_policy(policy);
}

/* fork while sampling under the default policy (own): the child samples
 * into a session of its own at the parent's rate, and its file
 * (DIR/STEM.pid<PID>.EXT) has its own thread's samples only.  Not under
 * ThreadSanitizer, which kills a child of a multithreaded process that
 * starts a thread (the child's sampler). */
static void test_fork_own(void **state) {
    (void)state;
    if (TU_TSAN) skip();
    int policy = sps_fork_policy(1);
    const char *path = tu_path("sampling_fork_own.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.sample_hz = 2000;
    assert_int_equal(sps_setup(&cfg), 0);
    work(1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (sps_sampling_hz() != 2000) _exit(3);
        work(1);
        _exit(sps_finalize() ? 4 : 0);
    }
    assert_true(pid > 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    sps_fork_policy(policy);
    char child[1024];
    assert_true(sps_fork_child_path(path, pid, child, sizeof child) < sizeof child);
    smp_t s;
    smp_read(child, &s);
    /* the child's own thread only, sampled by its CPU time: work(1) is
     * 160 to 320 ms of it, 320 to 640 periods at 2 kHz (the weights) */
    size_t w = 0;
    for (size_t i = 0; i < s.n; i++) {
        assert_int_equal(s.tids[i], pid);
        w += (size_t)s.weights[i];
    }
    assert_true(w > 200);
    /* and they land in its regions: the child's thread table has its id */
    assert_true(smp_count(&s, "heavy", pid) > 100);
    smp_free(&s);
    unlink(child);
    unlink(path);
}

/* Misuse: no session, aggregate mode, a rate too high, a bad walker, an
 * engine that does not exist. */
static void test_misuse(void **state) {
    (void)state;
    assert_int_equal(sps_sampling_start(1000), SPS_ENOSESSION);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_sampling_start(1000), SPS_EMODE);
    assert_int_equal(sps_shutdown(), 0);
    cfg.sample_hz = 1000; /* aggregate with samples */
    assert_int_equal(sps_setup(&cfg), SPS_EINVAL);
    cfg = (sps_config_t)SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_sampling_start(20000), SPS_EINVAL);
    sps_frame_walker_t w = {99, 0, NULL, NULL, NULL};
    assert_int_equal(sps_sampling_set_walker(&w), SPS_EINVAL);
    assert_int_equal(sps_sampling_stop(), 0); /* not sampling: fine */
    const char *engine = getenv("SPANSCOPE_SAMPLER");
    char *keep = engine ? strdup(engine) : NULL;
    setenv("SPANSCOPE_SAMPLER", "itimer", 1);
    assert_int_equal(sps_sampling_start(1000), SPS_EINVAL);
    if (keep) setenv("SPANSCOPE_SAMPLER", keep, 1);
    else unsetenv("SPANSCOPE_SAMPLER");
    free(keep);
    assert_int_equal(sps_shutdown(), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_ratio_and_late_thread),
        cmocka_unit_test(test_checkpoint),
        cmocka_unit_test(test_own_sigprof),
        cmocka_unit_test(test_lost_signal_rearms),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_fork_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
