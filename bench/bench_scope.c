/* bench_scope.c -- what scope-profiler's C API over spanscope costs per
 * begin+end pair, beside spanscope's own sps_begin+sps_end, in one process
 * and one session (the default profiler's, sp_init).  Prints a table:
 *
 *   bench_scope [--n PAIRS] [--reps R]
 *
 * Modes, interleaved rep by rep (so that drift hits them alike), each rep a
 * batch of PAIRS pairs timed with CLOCK_MONOTONIC, the period then dropped
 * (sps_finalize_to(NULL)) so that no mode pays for another's records:
 *   sps        sps_begin/sps_end (spanscope.h, inlined)
 *   sp         sp_begin/sp_end (scope_profiler.h, inlined: the handle check
 *              and sps_begin/sps_end)
 *   sp_call    (sp_begin)/(sp_end): the exported functions (what a binding
 *              without the header, e.g. Fortran's bind(C), calls)
 *   checked    sp_profiler_begin/sp_profiler_end (the thread's stack)
 *   scope      sp_profiler_scope_begin/sp_scope_end (sp::Scope's pair)
 * and "disabled": sp_begin/sp_end after sp_finalize (no session). */
#define _GNU_SOURCE
#include <scope_profiler.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int g_r;
static sp_profiler *g_p;

__attribute__((noinline)) static void run_sps(long n) {
    for (long i = 0; i < n; i++) {
        sps_begin((sps_region_t)g_r);
        sps_end((sps_region_t)g_r);
    }
}
__attribute__((noinline)) static void run_sp(long n) {
    for (long i = 0; i < n; i++) {
        sp_begin(g_r);
        sp_end(g_r);
    }
}
__attribute__((noinline)) static void run_sp_call(long n) {
    for (long i = 0; i < n; i++) {
        (sp_begin)(g_r);
        (sp_end)(g_r);
    }
}
__attribute__((noinline)) static void run_checked(long n) {
    for (long i = 0; i < n; i++) {
        sp_profiler_begin(g_p, g_r);
        sp_profiler_end(g_p, g_r);
    }
}
__attribute__((noinline)) static void run_scope(long n) {
    for (long i = 0; i < n; i++) {
        sp_scope s = sp_profiler_scope_begin(g_p, g_r);
        sp_scope_end(&s);
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    long n = 200000;
    int reps = 11;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    }
    if (n <= 0 || reps <= 0 || reps > 1000) {
        fprintf(stderr, "usage: bench_scope [--n PAIRS] [--reps R]\n");
        return 2;
    }
    if (sp_init("bench_scope", 0) != 0) return 2;
    g_p = sp_default_profiler();
    g_r = sp_region("bench");
    enum { NM = 5 };
    const char *names[NM] = {"sps", "sp", "sp_call", "checked", "scope"};
    void (*fn[NM])(long) = {run_sps, run_sp, run_sp_call, run_checked, run_scope};
    double *t = calloc((size_t)(NM + 1) * (size_t)reps, sizeof *t);
    if (!t) return 2;
    for (int m = 0; m < NM; m++) fn[m](n / 10 + 1); /* warm up: chunks, TLS */
    sps_finalize_to(NULL);
    for (int r = 0; r < reps; r++) {
        for (int m = 0; m < NM; m++) {
            int64_t t0 = mono();
            fn[m](n);
            t[m * reps + r] = (double)(mono() - t0) / (double)n;
            sps_finalize_to(NULL); /* drop the period: each batch starts alike */
        }
    }
    sp_finalize(); /* no session left: the disabled cost */
    for (int r = 0; r < reps; r++) {
        int64_t t0 = mono();
        run_sp(n);
        t[NM * reps + r] = (double)(mono() - t0) / (double)n;
    }
    printf("begin+end pair, ns (median and min of %d batches of %ld pairs; clock %s)\n", reps, n,
           sps_clock_source());
    printf("%-10s %9s %9s %12s\n", "mode", "median", "min", "vs sps");
    double base = 0;
    for (int m = 0; m <= NM; m++) {
        double *v = t + (size_t)m * (size_t)reps;
        qsort(v, (size_t)reps, sizeof *v, cmp);
        double med = v[reps / 2];
        if (m == 0) base = med;
        printf("%-10s %9.2f %9.2f %+11.2f\n", m < NM ? names[m] : "disabled", med, v[0],
               med - base);
    }
    free(t);
    return 0;
}
