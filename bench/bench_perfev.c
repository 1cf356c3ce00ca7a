/* bench_perfev -- what one perf_event counter read costs (src/core/perfev.c,
 * docs/perf-events.md), against the same run's clock reads.
 *
 *   bench_perfev [--n CALLS] [--reps R]
 *
 * Rows (median and min over R batches of CALLS calls, ns per call):
 *   clock_gettime / rdtsc      the time-only floor of one timestamp
 *   sps__perf_read, SETS       one reading of the session's counters, as
 *                              every sps_begin and sps_end of a session with
 *                              SPS_TRACK_COUNTERS makes: read() of each
 *                              group, or rdpmc where the kernel allows it
 *                              (hardware sets, only where a PMU exists)
 *   region pair                sps_begin+sps_end of a session, time only and
 *                              with SPS_TRACK_COUNTERS (each begin and end
 *                              reads the counters): what a span costs
 *   scope-profiler's way       open + reset + enable + disable + read +
 *                              close of each of 3 software events per call,
 *                              as scope-profiler 0.7.5's PerfEventGroup does
 * with the syscalls per read counted in the reader itself (its statistics,
 * not an estimate) and the CPU model.  Hardware sets that cannot be counted
 * here (no PMU, as on most VMs) are reported as such, not timed. */
#include "core/perfev.h"
#include "spanscope.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long g_n = 200000;
static int g_reps = 7;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef void (*batch_fn)(long n, void *arg);

/* median and min of g_reps batches, ns per call */
static void timeit(batch_fn fn, void *arg, long n, double *med, double *min) {
    double v[64];
    fn(n / 10 + 1, arg); /* warm: the first read opens the events */
    for (int r = 0; r < g_reps; r++) {
        double t0 = now_ns();
        fn(n, arg);
        v[r] = (now_ns() - t0) / (double)n;
    }
    qsort(v, (size_t)g_reps, sizeof v[0], cmp_d);
    *med = v[g_reps / 2];
    *min = v[0];
}

static volatile uint64_t g_sink;

static void b_clock(long n, void *arg) {
    (void)arg;
    struct timespec ts;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        g_sink += (uint64_t)ts.tv_nsec;
    }
}

#if defined(__x86_64__) || defined(__i386__)
static void b_rdtsc(long n, void *arg) {
    (void)arg;
    for (long i = 0; i < n; i++) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        g_sink += lo;
    }
}
#endif

static void b_perf(long n, void *arg) {
    (void)arg;
    uint64_t out[SPS__PERF_MAX];
    for (long i = 0; i < n; i++) {
        sps__perf_read(out);
        g_sink += out[0];
    }
}

/* scope-profiler 0.7.5's PerfEventGroup, per region call: for each event
 * perf_event_open (disabled), RESET, ENABLE; at the end DISABLE, read,
 * close. */
static void b_scope_profiler(long n, void *arg) {
    (void)arg;
    static const uint64_t cfg[3] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
                                    PERF_COUNT_SW_CONTEXT_SWITCHES};
    for (long i = 0; i < n; i++) {
        int fd[3];
        for (int k = 0; k < 3; k++) {
            struct perf_event_attr a;
            memset(&a, 0, sizeof a);
            a.size = sizeof a;
            a.type = PERF_TYPE_SOFTWARE;
            a.config = cfg[k];
            a.disabled = 1;
            a.exclude_kernel = a.exclude_hv = 1;
            fd[k] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
            if (fd[k] < 0) return;
            ioctl(fd[k], PERF_EVENT_IOC_RESET, 0);
            ioctl(fd[k], PERF_EVENT_IOC_ENABLE, 0);
        }
        for (int k = 0; k < 3; k++) {
            uint64_t v = 0;
            ioctl(fd[k], PERF_EVENT_IOC_DISABLE, 0);
            if (read(fd[k], &v, sizeof v) == sizeof v) g_sink += v;
            close(fd[k]);
        }
    }
}

static void cpu_model(char *buf, size_t cap) {
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ') c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, cap, "%s", c);
                break;
            }
        }
    }
    fclose(f);
}

static double g_floor;

/* One row: a session of `names`, or a line saying why it is not timed. */
static void perf_row(const char *label, const char *names) {
    if (sps_set_counters(names) != 0) {
        printf("%-44s %s\n", label, sps_last_error());
        return;
    }
    uint32_t n = sps__perf_session_open();
    fflush(stdout); /* the reader's note of an event it cannot count goes to stderr */
    uint64_t probe[SPS__PERF_MAX];
    sps__perf_read(probe);
    sps__perf_stats_t st;
    sps__perf_thread_stats(&st);
    if (st.available + 1 != 1u << n) {
        printf("%-44s not measured: %u of its %u events cannot be counted here\n", label,
               n - (uint32_t)__builtin_popcount(st.available), n);
        sps__perf_session_close();
        return;
    }
    double med, min;
    timeit(b_perf, NULL, g_n, &med, &min);
    sps__perf_thread_stats(&st);
    printf("%-44s %9.1f %9.1f %10.2f %6.2f  %s, %u group(s)\n", label, med, min,
           (double)st.syscalls / (double)st.reads, med / g_floor,
           st.rdpmc ? "rdpmc" : "read()", st.groups);
    sps__perf_session_close();
}

static sps_region_t g_region;

static void b_pair(long n, void *arg) {
    (void)arg;
    for (long i = 0; i < n; i++) {
        sps_begin(g_region);
        sps_end(g_region);
    }
}

/* sps_begin+sps_end of a session reading `names` at each (NULL: time
 * only); the median, or -1 when the session cannot start. */
static double pair_row(const char *label, const char *names, double time_only) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    if (names) {
        if (sps_set_counters(names) != 0) return -1;
        cfg.track = SPS_TRACK_COUNTERS;
    }
    if (sps_setup(&cfg) != 0) {
        printf("%-44s not measured: sps_setup: %s\n", label, sps_last_error());
        return -1;
    }
    g_region = sps_region("bench.perfev.pair");
    double med, min;
    timeit(b_pair, NULL, g_n, &med, &min);
    sps__perf_stats_t st;
    sps__perf_thread_stats(&st);
    double per_span = names && st.reads ? 2.0 * (double)st.syscalls / (double)st.reads : 0.0;
    printf("%-44s %9.1f %9.1f %10.2f %6.2f  per span%s", label, med, min, per_span,
           med / g_floor, names ? "" : "\n");
    if (names) printf(", %.2f x the time-only pair\n", time_only > 0 ? med / time_only : 0.0);
    sps_shutdown();
    return med;
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--n") == 0) g_n = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0) g_reps = atoi(argv[i + 1]);
    }
    if (g_n < 100) g_n = 100;
    if (g_reps < 1) g_reps = 1;
    if (g_reps > 64) g_reps = 64;
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    int paranoid = -9;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (f) {
        if (fscanf(f, "%d", &paranoid) != 1) paranoid = -9;
        fclose(f);
    }
    printf("perf_event counter reads (bench/bench_perfev.c): CPU %s, "
           "kernel.perf_event_paranoid %d, euid %d\n", cpu, paranoid, (int)geteuid());
    printf("ns per call, median and min of %d batches of %ld calls; "
           "'x floor' = median / clock_gettime's median\n", g_reps, g_n);
    printf("%-44s %9s %9s %10s %6s\n", "what", "median", "min", "syscalls", "x floor");
    double med, min;
    timeit(b_clock, NULL, g_n, &med, &min);
    g_floor = med;
    printf("%-44s %9.1f %9.1f %10.2f %6.2f\n", "clock_gettime(CLOCK_MONOTONIC)", med, min, 0.0,
           1.0);
#if defined(__x86_64__) || defined(__i386__)
    timeit(b_rdtsc, NULL, g_n, &med, &min);
    printf("%-44s %9.1f %9.1f %10.2f %6.2f\n", "rdtsc", med, min, 0.0, med / g_floor);
#endif
    perf_row("sps__perf_read: task-clock,page-faults,cs", "task-clock,page-faults,context-switches");
    perf_row("sps__perf_read: page-faults,minor-faults,cs", "page-faults,minor-faults,context-switches");
    perf_row("sps__perf_read: task-clock", "task-clock");
    perf_row("sps__perf_read: cycles,instructions,branches", "cycles,instructions,branches");
    if (setenv("SPANSCOPE_PERF_NO_RDPMC", "1", 1) == 0) {
        perf_row("  same, read() forced", "cycles,instructions,branches");
        unsetenv("SPANSCOPE_PERF_NO_RDPMC");
    }
    double pair = pair_row("region pair (sps_begin+sps_end), time only", NULL, 0);
    pair_row("  pair + task-clock,page-faults,cs", "task-clock,page-faults,context-switches",
             pair);
    pair_row("  pair + page-faults,minor-faults,cs", "page-faults,minor-faults,context-switches",
             pair);
    sps_set_counters(NULL);
    long sp_n = g_n / 50 > 100 ? g_n / 50 : 100;
    timeit(b_scope_profiler, NULL, sp_n, &med, &min);
    printf("%-44s %9.1f %9.1f %10.2f %6.2f  per region call (3 software events)\n",
           "scope-profiler's open/ioctl/read/close", med, min, 18.0, med / g_floor);
    return 0;
}
