/* bench_instrument.c -- what libspanscope_instrument adds to a call of a
 * function built with -finstrument-functions (docs/instrument.md), beside
 * the same process's sps_begin+sps_end pair.  Built twice (bench/CMakeLists.txt):
 *
 *   bench_instrument [--n CALLS] [--reps R]
 *       -finstrument-functions, linked with libspanscope_instrument.  It
 *       runs itself again with SPANSCOPE_OUTPUT=none and
 *       SPANSCOPE_INSTRUMENT_EXCLUDE=leaf_skip (the session is set up
 *       before main), then times, interleaved rep by rep, batches of CALLS
 *       calls of
 *         plain     leaf_plain: not instrumented (the call itself)
 *         recorded  leaf_rec: instrumented, recorded (a region per call)
 *         filtered  leaf_skip: instrumented, left out at run time
 *       (the last two from a loop function that is itself recorded, so
 *       that a call is open around them, as under an instrumented main)
 *         pair      sps_begin+sps_end of one region (no call)
 *       dropping each batch's period (sps_finalize_to(NULL)) so that no
 *       mode pays for another's records.
 *   bench_instrument_pg [--n CALLS] [--reps R]
 *       the same leaves built with -pg, for uftrace ("uftrace record
 *       --no-libcall bench_instrument_pg"): plain and "uftrace" (leaf_rec).
 *   bench_instrument_noop [--n CALLS] [--reps R]
 *       built with -finstrument-functions but not linked with the library:
 *       the hooks are glibc's no-ops, so "noop" (leaf_rec) is what the
 *       compiler's instrumentation costs by itself, the floor of a call
 *       left out.
 *
 * Prints "mode median min added" lines, ns of the thread's CPU time per
 * call; added is the median minus plain's (per pair for "pair"). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* the two variants without libspanscope_instrument (see above) */
#if defined(SPS_BENCH_PG) || defined(SPS_BENCH_NOOP)
#define SPS_BENCH_ALONE 1
#else
#include <spanscope.h>
#endif

#define NOINSTR __attribute__((no_instrument_function))

/* the leaves: one add each, never inlined, the result kept */
static volatile int g_sink;
__attribute__((noinline)) NOINSTR int leaf_plain(int x) {
    __asm__ volatile("" ::: "memory");
    return x + 1;
}
__attribute__((noinline)) int leaf_rec(int x) {
    __asm__ volatile("" ::: "memory");
    return x + 1;
}
__attribute__((noinline)) int leaf_skip(int x) {
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

/* The measuring thread's CPU time, as bench_core's: on a shared VM other
 * processes stretch wall-clock batches, CPU time stays put. */
NOINSTR static int64_t mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* plain's loop is not instrumented; recorded's and filtered's are (one
 * recorded call per batch), so that the leaves run inside a recorded
 * call, as in a program whose main is instrumented */
#define LOOP(name, call, ...)                                                  \
    __attribute__((noinline)) __VA_ARGS__ static void name(long n) {           \
        int s = 0;                                                             \
        for (long i = 0; i < n; i++) s += call;                                \
        g_sink = s;                                                            \
    }
LOOP(run_plain, leaf_plain((int)i), NOINSTR)
LOOP(run_rec, leaf_rec((int)i))
#ifndef SPS_BENCH_ALONE
LOOP(run_skip, leaf_skip((int)i))
static sps_region_t g_r;
/* sps_begin/sps_end's own code, written out: in a file built with
 * -finstrument-functions the header's inline functions would get the
 * hooks too (the library leaves them out, but their calls of the hooks
 * stay) */
__attribute__((noinline)) NOINSTR static void run_pair(long n) {
    for (long i = 0; i < n; i++) {
        if (__builtin_expect(__atomic_load_n(&sps__active, __ATOMIC_RELAXED) != 0, 1))
            sps__begin(g_r);
        if (__builtin_expect(__atomic_load_n(&sps__active, __ATOMIC_RELAXED) != 0, 1))
            sps__end(g_r);
    }
}
#endif

NOINSTR static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

NOINSTR int main(int argc, char **argv) {
    long n = 1000000;
    int reps = 11;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    }
    if (n <= 0 || reps <= 0 || reps > 1000) {
        fprintf(stderr, "usage: %s [--n CALLS] [--reps R]\n", argv[0]);
        return 2;
    }
#ifndef SPS_BENCH_ALONE
    /* the settings are read before main: run again with them */
    const char *ex = getenv("SPANSCOPE_INSTRUMENT_EXCLUDE");
    if (!ex || strcmp(ex, "leaf_skip") != 0) {
        setenv("SPANSCOPE_INSTRUMENT_EXCLUDE", "leaf_skip", 1);
        setenv("SPANSCOPE_OUTPUT", "none", 1);
        unsetenv("SPANSCOPE_INSTRUMENT_INCLUDE");
        unsetenv("SPANSCOPE_DEACTIVATE_PROFILING");
        unsetenv("SPANSCOPE_INSTRUMENT_SETUP");
        execv("/proc/self/exe", argv);
        perror("bench_instrument: execv /proc/self/exe");
        return 2;
    }
    if (!sps_is_active()) {
        fprintf(stderr, "bench_instrument: no session: is libspanscope_instrument linked?\n");
        return 2;
    }
    g_r = sps_region("bench_pair");
    enum { NM = 4 };
    const char *names[NM] = {"plain", "recorded", "filtered", "pair"};
    void (*fn[NM])(long) = {run_plain, run_rec, run_skip, run_pair};
#else
    enum { NM = 2 };
#ifdef SPS_BENCH_PG
    const char *names[NM] = {"plain", "uftrace"};
#else
    const char *names[NM] = {"plain", "noop"};
#endif
    void (*fn[NM])(long) = {run_plain, run_rec};
#endif
    double *t = calloc((size_t)NM * (size_t)reps, sizeof *t);
    if (!t) return 2;
    for (int m = 0; m < NM; m++) fn[m](n / 10 + 1); /* warm up: names, caches, chunks */
#ifndef SPS_BENCH_ALONE
    sps_finalize_to(NULL);
#endif
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < NM; m++) {
            int64_t t0 = mono();
            fn[m](n);
            t[m * reps + r] = (double)(mono() - t0) / (double)n;
#ifndef SPS_BENCH_ALONE
            sps_finalize_to(NULL); /* drop the period: each batch starts alike */
#endif
        }
#ifndef SPS_BENCH_ALONE
    printf("instrumented call, ns (median and min of %d batches of %ld calls; clock %s)\n", reps,
           n, sps_clock_source());
#elif defined(SPS_BENCH_PG)
    printf("-pg call, ns (median and min of %d batches of %ld calls)\n", reps, n);
#else
    printf("-finstrument-functions call, glibc's no-op hooks, ns (median and min of %d "
           "batches of %ld calls)\n", reps, n);
#endif
    printf("%-10s %9s %9s %9s\n", "mode", "median", "min", "added");
    double base = 0;
    for (int m = 0; m < NM; m++) {
        double *v = t + (size_t)m * (size_t)reps;
        qsort(v, (size_t)reps, sizeof *v, cmp);
        double med = v[reps / 2];
        if (m == 0) base = med;
        /* the pair has no call in it: its whole cost is added */
        double added = strcmp(names[m], "pair") == 0 ? med : med - base;
        printf("%-10s %9.2f %9.2f %9.2f\n", names[m], med, v[0], added);
    }
    free(t);
    return 0;
}
