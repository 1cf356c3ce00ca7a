/* bench_sampling.c -- what stack sampling at 1 kHz costs a CPU-bound C
 * loop (issue 34; docs/sampling.md).
 *
 * The same work -- a loop of regions, each a few microseconds of
 * arithmetic in a function two calls deep -- runs with sampling off and on,
 * reps times each, in ABBA order (off-on, on-off, ...); the table gives the medians of the loop's
 * wall time and of the process's CPU time (which includes the sampler
 * thread's), the overhead of each against the run without sampling
 * measured in the same process, and the cost per sample (the extra
 * process CPU over the samples taken).  The budget (issue 34): <= 2 % of
 * run time.
 *
 *   bench_sampling [--ms N] [--reps N] [--hz N]
 */
#include <spanscope.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t clock_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t leaf(uint64_t x, int n) {
    for (int i = 0; i < n; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}
__attribute__((noinline)) static uint64_t mid(uint64_t x, int n) { return leaf(x, n) ^ 1; }

/* The loop: iters regions of about 5 us each.  Returns its wall ns. */
static int64_t loop(long iters) {
    sps_region_t r = sps_region("step");
    uint64_t x = sink;
    int64_t t0 = clock_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < iters; i++) {
        sps_begin(r);
        x = mid(x, 4000);
        sps_end(r);
    }
    sink = x;
    return clock_ns(CLOCK_MONOTONIC) - t0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median(int64_t *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    int ms = 200, reps = 31, hz = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ms")) ms = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--hz")) hz = atoi(argv[i + 1]);
    }
    if (reps < 1 || reps > 99 || ms < 10 || hz < 1) {
        fprintf(stderr, "usage: bench_sampling [--ms N>=10] [--reps 1..99] [--hz N]\n");
        return 2;
    }
    sps_config_t cfg = SPS_CONFIG_INIT; /* no file: the loop's cost only */
    if (sps_setup(&cfg)) return 1;
    /* iterations for about ms of work */
    long iters = 1000;
    int64_t t = loop(iters);
    iters = (long)((double)iters * ms * 1e6 / (double)(t > 0 ? t : 1));
    int64_t wall_off[99], wall_on[99], cpu_off[99], cpu_on[99], thr_off[99], thr_on[99];
    uint64_t taken_total = 0;
    for (int k = 0; k < reps; k++) {
        /* ABBA: neither kind always runs first */
        for (int j = 0; j < 2; j++) {
            int on = (k % 2) ^ j;
            uint64_t before = 0, after = 0;
            sps_sampling_stats(&before, NULL, NULL, NULL);
            if (on && sps_sampling_start(hz)) {
                fprintf(stderr, "bench_sampling: cannot sample: %s\n", sps_last_error());
                return 1;
            }
            int64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
            int64_t w = loop(iters);
            int64_t t = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
            int64_t c = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (on) {
                sps_sampling_stop();
                sps_sampling_stats(&after, NULL, NULL, NULL);
                taken_total += after - before;
            }
            sps_finalize_to(NULL); /* each run's period dropped (no file) alike */
            (on ? wall_on : wall_off)[k] = w;
            (on ? cpu_on : cpu_off)[k] = c;
            (on ? thr_on : thr_off)[k] = t;
        }
    }
    int64_t wo = median(wall_off, reps), wn = median(wall_on, reps);
    int64_t co = median(cpu_off, reps), cn = median(cpu_on, reps);
    int64_t to = median(thr_off, reps), tn = median(thr_on, reps);
    double per_rep = (double)taken_total / reps;
    printf("Stack sampling at %d Hz: a CPU-bound C loop of %ld regions (~%d ms), "
           "median of %d runs each, alternating (ABBA)\n", hz, iters, ms, reps);
    printf("  %-34s %12s %12s %10s\n", "", "off", "sampling", "overhead");
    printf("  %-34s %10.1f ms %9.1f ms %+9.2f %%\n", "loop wall time", wo / 1e6, wn / 1e6,
           100.0 * (double)(wn - wo) / (double)wo);
    printf("  %-34s %10.1f ms %9.1f ms %+9.2f %%\n", "loop thread CPU (with its handler)",
           to / 1e6, tn / 1e6, 100.0 * (double)(tn - to) / (double)to);
    printf("  %-34s %10.1f ms %9.1f ms %+9.2f %%\n", "process CPU (with sampler thread)",
           co / 1e6, cn / 1e6, 100.0 * (double)(cn - co) / (double)co);
    printf("  %-34s %12.0f\n", "samples per run (entries)", per_rep);
    if (per_rep > 0)
        printf("  %-34s %10.2f us\n", "thread CPU per sample entry",
               (double)(tn - to) / per_rep / 1e3);
    printf("  budget (issue 34): <= 2 %% of run time\n");
    sps_shutdown();
    return 0;
}
