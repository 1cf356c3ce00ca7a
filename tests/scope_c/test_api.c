/* test_api.c -- every function of include/scope_profiler.h, run against
 * libspanscope; exits non-zero naming the first check that failed.  Run in
 * an empty directory: it writes the files tests/scope_c/check.py reads
 * (run.sh runs both).  Argument: "misuse" runs the misuse checks only. */
#include <scope_profiler.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int failures; /* the threads' checks add to it too */
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "test_api.c:%d: check failed: %s\n", __LINE__, #cond); \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* per thread: the threads' work() must not race on it (TSan) */
static _Thread_local volatile double sink;
static void work(int n) {
    double a = 0;
    for (int i = 1; i <= n; i++) a += 1.0 / i;
    sink = a;
}

/* About ms of CPU time, in a function of its own: line sampling names it. */
__attribute__((noinline)) static void burn_cpu(int ms) {
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do {
        work(20000);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static int fib(int n) {
    int id = sp_region("fib");
    sp_begin(id);
    int v = n < 2 ? n : fib(n - 1) + fib(n - 2);
    sp_end(id);
    return v;
}

/* Before sp_init: everything harmless (scope-profiler's promise). */
static void before_init(void) {
    CHECK(sp_default_profiler() == NULL);
    int id = sp_region("never_started");
    CHECK(id == SP_INVALID_REGION);
    sp_begin(id);
    sp_end(id);
    (sp_begin)(id);
    (sp_end)(id);
    CHECK(sp_is_active() == 0);
    CHECK(sp_num_calls(id) == 0);
    CHECK(sp_output_path() == NULL);
    CHECK(sp_finalize() == 0);
    CHECK(sp_start_sampling(100) == SP_ERR_INACTIVE);
    CHECK(sp_stop_sampling() == SP_OK);
    CHECK(sp_current_output_format() == SP_OUTPUT_HDF5);
    CHECK(sp_set_output_format(SP_OUTPUT_TRACE) == SP_ERR_INACTIVE);
    CHECK(access("never_started_rank00000.h5", F_OK) != 0);
}

/* The global API: counts, recursion, output path, finalize, after. */
static void global_api(void) {
    CHECK(sp_init("global", 3) == 0);
    CHECK(sp_is_active());
    CHECK(sp_default_profiler() != NULL);
    CHECK(strcmp(sp_output_path(), "global_rank00003.h5") == 0);
    CHECK(sp_hdf5_available() == 1);
    CHECK(sp_default_output_format() == SP_OUTPUT_HDF5);
    int outer = SP_REGION_AT("outer");
    int inner = sp_region("inner");
    CHECK(outer > 0 && inner > 0 && outer != inner);
    CHECK(sp_region("outer") == outer);
    CHECK(sp_region(NULL) == SP_INVALID_REGION);
    int64_t t0 = sp_now_ns();
    CHECK(sp_start_sampling(1000) == SP_OK); /* every thread, by CPU time */
    int burn = sp_region("burn");
    sp_begin(burn);
    burn_cpu(150);
    sp_end(burn);
    for (int i = 0; i < 4; i++) {
        sp_begin(outer);
        (sp_begin)(inner); /* the exported function as well */
        work(1000);
        (sp_end)(inner);
        sp_end(outer);
    }
    CHECK(sp_now_ns() > t0);
    CHECK(fib(10) == 55);
    CHECK(sp_num_calls(outer) == 4);
    CHECK(sp_num_calls(inner) == 4);
    CHECK(sp_num_calls(sp_region("fib")) == 177);
    sp_begin(outer); /* open: counted as entered, left out of the file */
    CHECK(sp_num_calls(outer) == 5);
    sp_end(outer);
    CHECK(sp_stop_sampling() == SP_OK); /* the samples stay for the finalize */
    CHECK(sp_finalize() == 0);
    CHECK(access("global_rank00003.sps", F_OK) == 0);
    CHECK(!sp_is_active());
    CHECK(sp_num_calls(outer) == 5); /* readable after finalize */
    CHECK(sp_region("late") == SP_INVALID_REGION);
    CHECK(sp_finalize() == 0);       /* twice: harmless */
    CHECK(access("global_rank00003.h5", F_OK) == 0);
}

/* Two contexts at once stay independent; both files are written. */
static void contexts(void) {
    sp_profiler *a = sp_create("ctx_a", 0);
    sp_profiler *b = sp_create("ctx_b", 1);
    CHECK(a && b && sp_profiler_is_active(a) && sp_profiler_is_active(b));
    int ra = sp_profiler_region(a, "solve");
    int rb = sp_profiler_region(b, "solve");
    CHECK(ra > 0 && rb > 0 && ra != rb);
    CHECK(strcmp(sp_profiler_region_name(a, ra), "solve") == 0);
    CHECK(sp_profiler_region_name(a, rb) == NULL); /* b's handle */
    CHECK(sp_profiler_num_regions(a) == 1);
    sp_profiler_begin(a, ra);
    sp_profiler_begin(b, rb);
    sp_profiler_end(b, rb);
    sp_profiler_begin(b, rb);
    sp_profiler_end(b, rb);
    sp_profiler_end(a, ra);
    sp_region_stats st;
    CHECK(sp_profiler_get_region_stats(a, ra, &st) == SP_OK && st.calls == 1);
    CHECK(sp_profiler_get_region_stats(b, rb, &st) == SP_OK && st.calls == 2);
    CHECK(st.total_ns >= st.max_ns && st.max_ns >= st.min_ns && st.min_ns >= 0);
    CHECK(sp_profiler_get_region_stats(a, rb, &st) == SP_ERR_INACTIVE);
    CHECK(sp_profiler_get_region_stats(a, ra, NULL) == SP_ERR_INACTIVE);
    CHECK(sp_profiler_finalize(a) == 0);
    CHECK(sp_profiler_finalize(b) == 0);
    CHECK(sp_profiler_get_region_stats(b, rb, &st) == SP_OK && st.calls == 2);
    sp_destroy(a);
    sp_destroy(b);
    sp_destroy(NULL);
}

/* Scopes, end_last, reset, flush, source locations, the trace format. */
static void checked(void) {
    sp_profiler *p = sp_create("checked", 0);
    int solve = sp_profiler_region_at(p, "solve", "solver.c", 42);
    CHECK(sp_profiler_region_at(p, "solve", "elsewhere.c", 99) == solve);
    int plain = sp_profiler_region(p, "plain");
    CHECK(sp_profiler_region_at(p, "plain", "plain.c", 7) == plain); /* backfill */
    int ctx = SP_PROFILER_REGION_AT(p, "ctx_region");
    sp_scope outer = sp_profiler_scope_begin(p, solve);
    sp_scope inner = sp_profiler_scope_begin(p, solve);
    CHECK(sp_scope_end(&outer) == SP_ERR_UNMATCHED_END); /* inner on top */
    CHECK(sp_profiler_last_error(p) == SP_ERR_UNMATCHED_END);
    CHECK(sp_scope_end(&inner) == SP_OK);
    CHECK(sp_scope_end(&outer) == SP_OK);
    CHECK(sp_scope_end(&outer) == SP_ERR_UNMATCHED_END); /* inert now */
    CHECK(sp_scope_end(NULL) == SP_ERR_UNMATCHED_END);
    sp_profiler_begin(p, plain);
    sp_profiler_begin(p, ctx);
    CHECK(sp_profiler_end_last(p) == SP_OK); /* ctx */
    sp_region_stats st;
    CHECK(sp_profiler_get_region_stats(p, ctx, &st) == SP_OK && st.calls == 1);
    CHECK(sp_profiler_get_region_stats(p, plain, &st) == SP_OK && st.calls == 1); /* open */
    CHECK(sp_profiler_reset(p) == SP_ERR_OPEN_SCOPES);
    CHECK(sp_profiler_end_last(p) == SP_OK); /* plain */
    CHECK(sp_profiler_end_last(p) == SP_ERR_UNMATCHED_END);
    sp_profiler_end(p, plain); /* no matching begin */
    CHECK(sp_profiler_last_error(p) == SP_ERR_UNMATCHED_END);
    CHECK(strcmp(sp_error_string(sp_profiler_last_error(p)), "no open call to end") == 0);
    CHECK(sp_profiler_flush(p) == 0);
    CHECK(sp_profiler_is_active(p));
    CHECK(sp_profiler_reset(p) == SP_OK);
    CHECK(sp_profiler_get_region_stats(p, solve, &st) == SP_OK && st.calls == 0);
    CHECK(sp_profiler_region(p, "solve") == solve);
    sp_scope s = sp_profiler_scope_begin(p, solve);
    CHECK(sp_scope_end(&s) == SP_OK);
    CHECK(sp_profiler_set_output_format(p, (sp_output_format)7) == SP_ERR_UNSUPPORTED);
    CHECK(sp_profiler_set_output_format(p, SP_OUTPUT_TRACE) == SP_OK);
    CHECK(sp_profiler_output_format(p) == SP_OUTPUT_TRACE);
    CHECK(strcmp(sp_profiler_output_path(p), "checked_rank00000.spt") == 0);
    CHECK(sp_profiler_start_sampling(p, 100) == SP_OK);
    CHECK(sp_profiler_finalize(p) == 0);
    CHECK(sp_profiler_set_output_format(p, SP_OUTPUT_HDF5) == SP_ERR_INACTIVE);
    CHECK(sp_profiler_start_sampling(p, 100) == SP_ERR_INACTIVE);
    sp_destroy(p);
    /* checked_rank00000.h5 holds the flush (before reset): solve 2, plain 1,
     * ctx 1; checked_rank00000.spt the period after reset: solve 1 */
}

/* Misuse: NULL and inactive profilers, foreign handles, open at finalize. */
static void misuse(void) {
    CHECK(sp_profiler_region(NULL, "x") == SP_INVALID_REGION);
    CHECK(sp_profiler_is_active(NULL) == 0);
    CHECK(sp_profiler_last_error(NULL) == SP_OK);
    CHECK(sp_profiler_output_path(NULL) == NULL);
    CHECK(sp_profiler_output_format(NULL) == SP_OUTPUT_HDF5);
    CHECK(sp_profiler_num_regions(NULL) == 0);
    CHECK(sp_profiler_region_name(NULL, 1) == NULL);
    CHECK(sp_profiler_flush(NULL) == 0);
    CHECK(sp_profiler_finalize(NULL) == 0);
    CHECK(sp_profiler_reset(NULL) == SP_ERR_INACTIVE);
    CHECK(sp_profiler_end_last(NULL) == SP_ERR_UNMATCHED_END);
    CHECK(sp_profiler_set_output_format(NULL, SP_OUTPUT_HDF5) == SP_ERR_INACTIVE);
    CHECK(sp_profiler_start_sampling(NULL, 1) == SP_ERR_INACTIVE);
    sp_profiler_begin(NULL, 1);
    sp_profiler_end(NULL, 1);
    sp_scope s = sp_profiler_scope_begin(NULL, 1);
    CHECK(s.slot == -1 && sp_scope_end(&s) == SP_ERR_UNMATCHED_END);
    sp_profiler *neg = sp_create("neg", -1);
    CHECK(neg && !sp_profiler_is_active(neg) &&
          sp_profiler_last_error(neg) == SP_ERR_UNSUPPORTED);
    sp_destroy(neg);
    CHECK(strcmp(sp_error_string((sp_status)99), "unknown status") == 0);

    sp_profiler *p = sp_create("misuse", 0);
    sp_profiler *q = sp_create("misuse_other", 0);
    int r = sp_profiler_region(p, "r");
    int rq = sp_profiler_region(q, "r");
    sp_profiler_begin(p, rq); /* q's handle on p: ignored */
    s = sp_profiler_scope_begin(p, rq);
    CHECK(s.slot == -1);
    sp_profiler_begin(p, r);
    sp_profiler_begin(q, rq);
    sp_profiler_end(q, rq);
    /* r left open at finalize: reported, dropped */
    CHECK(sp_profiler_finalize(p) == 0);
    CHECK(sp_profiler_last_error(p) == SP_ERR_OPEN_SCOPES);
    sp_region_stats st;
    CHECK(sp_profiler_get_region_stats(q, rq, &st) == SP_OK && st.calls == 1);
    sp_end(r); /* closes it in the session; p is finalized */
    CHECK(sp_profiler_finalize(q) == 0);
    sp_destroy(p);
    sp_destroy(q);
    /* a path that cannot be written: non-zero, SP_ERR_IO, profiler stops */
    sp_profiler *bad = sp_create("no/such/dir/bad", 0);
    int rb = sp_profiler_region(bad, "x");
    sp_profiler_begin(bad, rb);
    sp_profiler_end(bad, rb);
    CHECK(sp_profiler_flush(bad) != 0 && sp_profiler_last_error(bad) == SP_ERR_IO);
    CHECK(sp_profiler_is_active(bad));
    CHECK(sp_profiler_finalize(bad) != 0 && !sp_profiler_is_active(bad));
    sp_destroy(bad);
    /* an empty profiler still writes a readable file */
    sp_profiler *empty = sp_create("empty", 0);
    sp_profiler_region(empty, "never_entered");
    CHECK(sp_profiler_finalize(empty) == 0);
    sp_destroy(empty);
    /* sp_init twice replaces the default profiler */
    CHECK(sp_init("twice", 0) == 0);
    sp_profiler *first = sp_default_profiler();
    CHECK(sp_init("twice", 1) == 0);
    CHECK(sp_default_profiler() != NULL && strcmp(sp_output_path(), "twice_rank00001.h5") == 0);
    (void)first;
    CHECK(sp_finalize() == 0);
}

/* Threads: sp_begin/sp_end and the checked pair from 4 threads at once;
 * each thread's calls nest on its own lane in the file. */
static int g_t_outer, g_t_inner;
static void *thread_main(void *arg) {
    sp_profiler *p = arg;
    for (int i = 0; i < 1000; i++) {
        sp_begin(g_t_outer);
        sp_scope s = sp_profiler_scope_begin(p, g_t_inner);
        work(50);
        if (sp_scope_end(&s) != SP_OK) failures++;
        sp_end(g_t_outer);
    }
    return NULL;
}
static void threads(void) {
    CHECK(sp_init("threads", 0) == 0);
    g_t_outer = sp_region("t_outer");
    g_t_inner = sp_region("t_inner");
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&th[i], NULL, thread_main, sp_default_profiler()) == 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    CHECK(sp_num_calls(g_t_outer) == 4000 && sp_num_calls(g_t_inner) == 4000);
    CHECK(sp_finalize() == 0);
}

/* A session the program started itself (spanscope's own API, as Python's
 * ProfileManager.setup would): sp_init joins it, writes its own file, and
 * leaves the session running; the session's file holds the C regions too. */
static void shared_session(void) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = "session.h5";
    CHECK(sps_setup(&cfg) == 0);
    sps_region_t own = sps_region("own_region");
    sps_begin(own);
    CHECK(sp_init("joined", 0) == 0);
    int r = sp_region("joined_region");
    sp_begin(r);
    sp_end(r);
    CHECK(sp_finalize() == 0);
    CHECK(sps_is_active()); /* not the face's session: still running */
    sps_end(own);
    CHECK(sps_finalize() == 0);
    CHECK(sps_shutdown() == 0);
}

int main(void) {
    before_init();
    global_api();
    contexts();
    checked();
    misuse();
    threads();
    shared_session();
    /* every profiler stopped: the session the face started is over */
    CHECK(!sps_is_active());
    if (failures) fprintf(stderr, "test_api: %d check(s) failed\n", failures);
    else printf("test_api: all checks passed\n");
    return failures != 0;
}
