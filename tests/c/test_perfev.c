/* test_perfev.c -- the perf_event reader (src/core/perfev.c): names,
 * software counters present and monotone, hardware counters counted where
 * a PMU exists and cleanly unavailable (0, one stderr line) where not,
 * threads counted apart, a forked child counting itself, the fallback to
 * user space under kernel.perf_event_paranoid.
 *
 * Machines that forbid perf_event_open altogether (a container's seccomp
 * profile, perf_event_paranoid 3 for non-root) skip the counting tests
 * with the reason; the name tests always run. */
#include "testutil.h"
#include "core/perfev.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* order of the software set used below */
enum { TCLOCK, PFAULTS, CSW };

/* Whether this thread may open one event of (type, config): 0, or errno. */
static int probe(uint32_t type, uint64_t config) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.exclude_kernel = a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}
#define SKIP_WITHOUT_PERF()                                                                 \
    do {                                                                                    \
        int e_ = probe(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);                      \
        if (e_) {                                                                           \
            fprintf(stderr, "skipped: perf_event_open refused here (%s)\n", strerror(e_)); \
            skip();                                                                         \
        }                                                                                   \
    } while (0)

/* Touches n fresh pages (each a page fault) and unmaps them. */
static void touch_pages(size_t n) {
    long ps = sysconf(_SC_PAGESIZE);
    volatile char *p = mmap(NULL, n * (size_t)ps, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    for (size_t i = 0; i < n; i++) p[i * (size_t)ps] = 1;
    munmap((void *)p, n * (size_t)ps);
}

static int count_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* Runs fn with stderr going to a file; returns the file's text (static). */
static const char *capture_stderr(void (*fn)(void *), void *arg) {
    static char text[4096];
    const char *path = tu_path("perfev_stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    assert_true(fd >= 0 && saved >= 0);
    dup2(fd, 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, text, sizeof text - 1);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    return text;
}

static int count_substr(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* --- names ---------------------------------------------------------------- */

static void test_names(void **state) {
    (void)state;
    assert_int_equal(sps_set_counters(" task-clock , faults,CS "), 0);
    assert_int_equal(sps__perf_session_open(), 3);
    assert_string_equal(sps__perf_name(0), "task-clock");
    assert_string_equal(sps__perf_name(1), "faults");
    assert_string_equal(sps__perf_name(2), "CS");
    assert_null(sps__perf_name(3));
    sps__perf_session_close();

    /* every generic name perf stat takes */
    assert_int_equal(sps_set_counters("cycles,instructions,cache-references,cache-misses,"
                                      "branches,branch-misses,bus-cycles,ref-cycles,"
                                      "stalled-cycles-frontend,stalled-cycles-backend,"
                                      "task-clock,cpu-clock,page-faults,minor-faults,"
                                      "major-faults,context-switches,cpu-migrations,"
                                      "alignment-faults,emulation-faults"), 0);
    assert_int_equal(sps__perf_session_open(), 19);
    assert_string_equal(sps__perf_name(18), "emulation-faults");
    sps__perf_session_close();

    /* refused, and the choice stays as it was */
    assert_int_equal(sps_set_counters("page-faults,migrations"), 0);
    const char *bad[] = {"task-clock,no-such-event-xyz", "task-clock,", ",task-clock",
                         "task-clock,,page-faults", "page-faults, ", "cycles,CYCLES",
                         "cycles,instructions,cache-references,cache-misses,branches,"
                         "branch-misses,bus-cycles,ref-cycles,stalled-cycles-frontend,"
                         "stalled-cycles-backend,task-clock,cpu-clock,page-faults,"
                         "minor-faults,major-faults,context-switches,cpu-migrations,"
                         "alignment-faults,emulation-faults,cs"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sps_set_counters(bad[i]), SPS_EINVAL);
        assert_true(strlen(sps_last_error()) > 0);
    }
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(sps_set_counters(longname), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "longer"));
    assert_int_equal(sps_set_counters("no-such-event-xyz"), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "no-such-event-xyz"));
    assert_int_equal(sps__perf_session_open(), 2);
    assert_string_equal(sps__perf_name(0), "page-faults");
    assert_string_equal(sps__perf_name(1), "migrations");
    sps__perf_session_close();

    /* NULL and "" clear the choice */
    assert_int_equal(sps_set_counters(NULL), 0);
    assert_int_equal(sps__perf_session_open(), 0);
    assert_null(sps__perf_name(0));
    sps__perf_session_close();
    assert_int_equal(sps_set_counters("cs"), 0);
    assert_int_equal(sps_set_counters("  "), 0);
    assert_int_equal(sps__perf_session_open(), 0);
    sps__perf_session_close();
}

/* libpfm4's names, where the library is there (Debian libpfm4); without
 * it a name that is not generic is refused. */
static void test_libpfm_names(void **state) {
    (void)state;
    void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        assert_int_equal(sps_set_counters("PERF_COUNT_SW_PAGE_FAULTS"), SPS_EINVAL);
        assert_non_null(strstr(sps_last_error(), "libpfm"));
        return;
    }
    dlclose(h);
    assert_int_equal(sps_set_counters("perf::PERF_COUNT_SW_PAGE_FAULTS,task-clock"), 0);
    assert_int_equal(sps_set_counters("NO_SUCH_PFM_EVENT_XYZ"), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "libpfm4"));
    assert_int_equal(sps__perf_session_open(), 2);
    assert_string_equal(sps__perf_name(0), "perf::PERF_COUNT_SW_PAGE_FAULTS");
    if (probe(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK) == 0) {
        uint64_t a[2], b[2];
        sps__perf_read(a);
        touch_pages(100);
        sps__perf_read(b);
        assert_true(b[0] - a[0] >= 100); /* libpfm's encoding counts page faults */
        assert_true(b[1] > a[1]);
    }
    sps__perf_session_close();
}

/* --- software counters ------------------------------------------------------ */

static void test_software_monotone(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    assert_int_equal(sps_set_counters("task-clock,page-faults,context-switches"), 0);
    assert_int_equal(sps__perf_session_open(), 3);
    uint64_t prev[3], cur[3], first[3];
    sps__perf_read(first);
    memcpy(prev, first, sizeof prev);
    for (int round = 0; round < 20; round++) {
        touch_pages(64);
        for (int i = 0; i < 50; i++) {
            sps__perf_read(cur);
            for (int k = 0; k < 3; k++) {
                assert_true(cur[k] >= prev[k]);
                assert_true(cur[k] < (1ull << 63));
            }
            memcpy(prev, cur, sizeof prev);
        }
    }
    assert_true(cur[TCLOCK] > first[TCLOCK]);        /* ns of this thread's CPU */
    assert_true(cur[PFAULTS] - first[PFAULTS] >= 20 * 64);
    sps__perf_stats_t st;
    sps__perf_thread_stats(&st);
    assert_int_equal(st.n, 3);
    /* task-clock comes with the software group's read: one group */
    assert_int_equal(st.groups, 1);
    assert_int_equal(st.available, 7);
    assert_int_equal(st.rdpmc, 0);                   /* software events: read() */
    assert_int_equal(st.reads, 1 + 20 * 50);
    assert_int_equal(st.syscalls, st.reads);         /* ONE read() per call */
    sps__perf_session_close();
}

/* events of one PMU share one group: one read() per call for all of them,
 * and a member counts as its leader does */
static void test_one_read_per_pmu(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    assert_int_equal(sps_set_counters("page-faults,minor-faults,context-switches"), 0);
    assert_int_equal(sps__perf_session_open(), 3);
    uint64_t a[3], b[3];
    sps__perf_read(a);
    touch_pages(300);
    sps__perf_read(b);
    assert_true(b[0] - a[0] >= 300);
    assert_true(b[1] - a[1] >= 300); /* anonymous pages: minor faults */
    sps__perf_stats_t st;
    sps__perf_thread_stats(&st);
    assert_int_equal(st.groups, 1);
    assert_int_equal(st.syscalls, st.reads);
    sps__perf_session_close();
}

/* task-clock is the thread's CPU time: it agrees with
 * CLOCK_THREAD_CPUTIME_ID over a spin (CPU time, not wall time: on a
 * loaded machine the spin's wall time is longer) */
static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_task_clock_is_cpu_time(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    /* alone (its own group), and beside a software event (read from that
     * group's time_enabled), sleeping or spinning */
    const char *sets[] = {"task-clock", "page-faults,task-clock"};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sps_set_counters(sets[k]), 0);
        uint32_t n = sps__perf_session_open();
        uint64_t a[2], b[2], c[2];
        sps__perf_read(a);
        int64_t c0 = thread_cpu_ns();
        tu_spin_ns(20000000);
        int64_t c1 = thread_cpu_ns();
        sps__perf_read(b);
        usleep(30000); /* asleep: no CPU time, no task-clock */
        int64_t c2 = thread_cpu_ns();
        sps__perf_read(c);
        double tc = (double)(b[n - 1] - a[n - 1]), cpu = (double)(c1 - c0);
        double tc_sleep = (double)(c[n - 1] - b[n - 1]), cpu_sleep = (double)(c2 - c1);
        fprintf(stderr, "%s: task-clock %.3f ms, thread CPU time %.3f ms; asleep %.3f, %.3f\n",
                sets[k], tc / 1e6, cpu / 1e6, tc_sleep / 1e6, cpu_sleep / 1e6);
        assert_true(cpu > 1e6);
        assert_true(tc > 0.8 * cpu - 1e6 && tc < 1.2 * cpu + 1e6);
        /* not the 30 ms asleep: a wall clock counts them all.  Below half
         * of them, not near zero: CI's TSan run, two tests at once on two
         * vCPUs, read 5.7 ms here (the thread's own CPU clock 2.9 ms:
         * the reads' system calls, the sanitizer, a preempted read) */
        assert_true(tc_sleep < 15e6);
        sps__perf_stats_t st;
        sps__perf_thread_stats(&st);
        assert_int_equal(st.groups, 1);
        assert_int_equal(st.syscalls, st.reads);
        sps__perf_session_close();
    }
}

/* --- hardware counters -------------------------------------------------------- */

static uint64_t g_hw_vals[3];
static void read_hw_twice(void *arg) {
    (void)arg;
    uint64_t a[3];
    sps__perf_read(a);
    volatile double x = 1;
    for (int i = 0; i < 2000000; i++) x = x * 1.0000001 + 1e-9;
    sps__perf_read(g_hw_vals);
    for (int k = 0; k < 3; k++) g_hw_vals[k] -= a[k];
}
static void *hw_thread(void *arg) {
    read_hw_twice(arg);
    return NULL;
}
static void hw_in_a_thread(void *arg) {
    pthread_t th;
    pthread_create(&th, NULL, hw_thread, arg);
    pthread_join(th, NULL);
}
static void hw_new_session(void *arg) {
    sps__perf_session_close();
    assert_int_equal(sps__perf_session_open(), 3);
    read_hw_twice(arg);
}

static void test_hardware_present_or_cleanly_unavailable(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    int pmu = probe(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES) == 0 &&
              probe(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS) == 0;
    assert_int_equal(sps_set_counters("cycles,instructions,task-clock"), 0);
    assert_int_equal(sps__perf_session_open(), 3);
    const char *err = capture_stderr(read_hw_twice, NULL);
    sps__perf_stats_t st;
    sps__perf_thread_stats(&st);
    assert_true(g_hw_vals[2] > 0); /* task-clock counts either way */
    if (pmu) {
        fprintf(stderr, "PMU here: cycles %llu, instructions %llu, rdpmc groups %u\n",
                (unsigned long long)g_hw_vals[0], (unsigned long long)g_hw_vals[1], st.rdpmc);
        assert_true(g_hw_vals[0] > 0 && g_hw_vals[1] > 2000000);
        assert_int_equal(st.available, 7);
        assert_int_equal(st.groups, 2); /* hardware group + task-clock's */
        assert_int_equal(count_substr(err, "spanscope: perf event"), 0);
    } else {
        fprintf(stderr, "no PMU here: hardware events read 0 (checked)\n");
        assert_int_equal(g_hw_vals[0], 0);
        assert_int_equal(g_hw_vals[1], 0);
        assert_int_equal(st.available, 4);
        assert_int_equal(st.groups, 1);
        /* one line per event, naming it and why */
        assert_int_equal(count_substr(err, "\n"), 2);
        assert_int_equal(count_substr(err, "'cycles'"), 1);
        assert_int_equal(count_substr(err, "'instructions'"), 1);
        assert_non_null(strstr(err, "reads 0"));
    }
    /* once per process: another thread and another session say nothing */
    err = capture_stderr(hw_in_a_thread, NULL);
    assert_int_equal(count_substr(err, "spanscope: perf event"), 0);
    assert_true(g_hw_vals[2] > 0);
    err = capture_stderr(hw_new_session, NULL);
    assert_int_equal(count_substr(err, "spanscope: perf event"), 0);
    sps__perf_session_close();
}

/* --- threads ------------------------------------------------------------------ */

typedef struct {
    pthread_barrier_t *bar;
    size_t pages;
    uint64_t delta[2];
    int cpu_ok; /* task-clock's delta agreed with CLOCK_THREAD_CPUTIME_ID */
} thr_arg_t;

static void *counting_thread(void *p) {
    thr_arg_t *a = p;
    uint64_t v0[2], v1[2];
    pthread_barrier_wait(a->bar);
    sps__perf_read(v0);
    int64_t c0 = thread_cpu_ns();
    if (a->pages)
        touch_pages(a->pages);
    else
        tu_spin_ns(5000000);
    int64_t c1 = thread_cpu_ns();
    sps__perf_read(v1);
    pthread_barrier_wait(a->bar);
    a->delta[0] = v1[0] - v0[0];
    a->delta[1] = v1[1] - v0[1];
    double tc = (double)a->delta[1], cpu = (double)(c1 - c0);
    a->cpu_ok = tc > 0.8 * cpu - 1e6 && tc < 1.2 * cpu + 1e6;
    return NULL;
}

static void test_threads_count_separately(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    assert_int_equal(sps_set_counters("page-faults,task-clock"), 0);
    assert_int_equal(sps__perf_session_open(), 2);
    int fds0 = count_fds();
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    thr_arg_t a = {&bar, 2000, {0, 0}, 0}, b = {&bar, 0, {0, 0}, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, counting_thread, &a);
    pthread_create(&tb, NULL, counting_thread, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&bar);
    if (b.delta[0] * 4 >= a.delta[0])
        fprintf(stderr, "page faults: A %llu, B %llu\n", (unsigned long long)a.delta[0],
                (unsigned long long)b.delta[0]);
    assert_true(a.delta[0] >= 2000);  /* A's own faults */
    /* B touched nothing new (a few faults of its own at most: under a
     * sanitizer, its shadow memory's): A's are not counted as B's */
    assert_true(b.delta[0] * 4 < a.delta[0]);
    /* B's task-clock is B's CPU time (checked against the kernel's
     * per-thread clock in counting_thread) */
    assert_true(b.delta[1] > 0 && b.cpu_ok);
    /* the threads' descriptors closed at their exit */
    assert_int_equal(count_fds(), fds0);
    sps__perf_session_close();
}

/* --- fork ----------------------------------------------------------------------- */

static void test_fork_child_counts_itself(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    assert_int_equal(sps_set_counters("page-faults,task-clock"), 0);
    assert_int_equal(sps__perf_session_open(), 2);
    uint64_t p0[2], p1[2];
    sps__perf_read(p0);
    touch_pages(3000);
    sps__perf_read(p1);
    assert_true(p1[0] - p0[0] >= 3000);
    sps__perf_stats_t pst;
    sps__perf_thread_stats(&pst);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t c0[2], c1[2];
        sps__perf_read(c0);
        sps__perf_stats_t cst;
        sps__perf_thread_stats(&cst);
        if (cst.opens != pst.opens + 1) _exit(10); /* opened its own group */
        if (c0[0] >= p1[0]) _exit(11);             /* not the parent's count */
        touch_pages(500);
        sps__perf_read(c1);
        if (c1[0] - c0[0] < 500) _exit(12);
        if (c1[1] < c0[1]) _exit(13);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* the parent's own counting goes on undisturbed */
    uint64_t p2[2];
    sps__perf_read(p2);
    assert_true(p2[0] >= p1[0]);
    sps__perf_thread_stats(&pst);
    assert_int_equal(pst.reads, 3);
    sps__perf_session_close();
}

/* --- kernel policy -------------------------------------------------------------- */

/* As root under perf_event_paranoid >= 2, a child that drops to nobody may
 * count user space only: the reader falls back to exclude_kernel and
 * software counters still count. */
static void test_unprivileged_falls_back_to_user_space(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    if (geteuid() != 0) {
        fprintf(stderr, "skipped: not root (the fallback is what runs here anyway)\n");
        skip();
    }
    assert_int_equal(sps_set_counters("task-clock,page-faults"), 0);
    assert_int_equal(sps__perf_session_open(), 2);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) || setuid(65534)) _exit(20);
        uint64_t a[2], b[2];
        sps__perf_read(a);
        touch_pages(200);
        tu_spin_ns(2000000);
        sps__perf_read(b);
        sps__perf_stats_t st;
        sps__perf_thread_stats(&st);
        if (st.available != 3) _exit(21);
        if (b[1] - a[1] < 200) _exit(22);
        if (b[0] <= a[0]) _exit(23);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    sps__perf_session_close();
}

/* A session's choice is frozen: changing it mid-session changes nothing
 * until the next session, which reopens the thread's set. */
static void test_frozen_per_session(void **state) {
    (void)state;
    SKIP_WITHOUT_PERF();
    assert_int_equal(sps_set_counters("page-faults"), 0);
    assert_int_equal(sps__perf_session_open(), 1);
    uint64_t v[2];
    sps__perf_read(v);
    assert_int_equal(sps_set_counters("task-clock,page-faults"), 0);
    assert_string_equal(sps__perf_name(0), "page-faults");
    sps__perf_read(v);
    sps__perf_stats_t st;
    sps__perf_thread_stats(&st);
    assert_int_equal(st.n, 1);
    uint64_t opens = st.opens;
    sps__perf_session_close();
    assert_int_equal(sps__perf_session_open(), 2);
    sps__perf_read(v);
    sps__perf_thread_stats(&st);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.opens, opens + 1);
    sps__perf_session_close();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_libpfm_names),
        cmocka_unit_test(test_hardware_present_or_cleanly_unavailable),
        cmocka_unit_test(test_software_monotone),
        cmocka_unit_test(test_one_read_per_pmu),
        cmocka_unit_test(test_task_clock_is_cpu_time),
        cmocka_unit_test(test_threads_count_separately),
        cmocka_unit_test(test_fork_child_counts_itself),
        cmocka_unit_test(test_unprivileged_falls_back_to_user_space),
        cmocka_unit_test(test_frozen_per_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
