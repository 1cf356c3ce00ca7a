/* test_sink.c -- finalize's HDF5 sink (formats/h5_period.c, inlined into
 * the merged pass) against an independent sink of the same pass: every
 * row of /events (start, duration, thread, parent) must be the call
 * sps_spans reports, for workloads that take the sink's and the chunk
 * writer's paths: a plain loop, threads whose calls of one region
 * interleave across chunk boundaries with one long call among them (rows
 * written with their durations to come, chunks parked), and more regions
 * interleaved than there are chunk buffers (chunks staged).  The clock is
 * CLOCK_MONOTONIC, so both sinks see the same ns. */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A span and its index in sps_spans's array. */
typedef struct key {
    int64_t start;
    uint32_t thread;
    uint64_t seq;
    size_t i;
} span_key_t;

static int key_cmp(const void *a, const void *b) {
    const span_key_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Checks that region `name`'s rows of h are v's spans of region r, in
 * start order (ties: the lower thread, then the earlier record, as the
 * pass merges them), and that each row's parent is the span's parent;
 * row_of[i]: the file row of span i, filled for this region. */
static void check_region(const tu_h5_t *h, const char *name, sps_region_t r,
                         const sps_span_t *v, size_t n, long *row_of) {
    long fr = tu_h5_row(h, name);
    assert_true(fr >= 0);
    span_key_t *k = calloc(n ? n : 1, sizeof *k);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].region == r) k[m++] = (span_key_t){v[i].start_ns, v[i].thread, v[i].seq, i};
    qsort(k, m, sizeof *k, key_cmp);
    assert_int_equal(h->counts[fr], m);
    int64_t *starts = calloc(m ? m : 1, sizeof *starts);
    tu_h5_starts(h, fr, starts);
    for (size_t j = 0; j < m; j++) {
        const sps_span_t *s = &v[k[j].i];
        uint64_t row = h->offsets[fr] + j;
        if (starts[j] != s->start_ns || h->durations[row] != s->end_ns - s->start_ns ||
            h->thread_ids[row] != (int64_t)s->thread)
            fail_msg("%s row %zu: start %lld dur %lld thread %lld, span %lld %lld %u", name, j,
                     (long long)starts[j], (long long)h->durations[row],
                     (long long)h->thread_ids[row], (long long)s->start_ns,
                     (long long)(s->end_ns - s->start_ns), s->thread);
        row_of[k[j].i] = (long)row;
    }
    free(starts);
    free(k);
}

/* Every span's row has as parent the call id of its parent span's row. */
static void check_parents(const tu_h5_t *h, const sps_span_t *v, size_t n, const long *row_of) {
    for (size_t i = 0; i < n; i++) {
        assert_true(row_of[i] >= 0);
        int64_t want = v[i].parent < 0 ? -1 : h->call_ids[row_of[v[i].parent]];
        if (h->parent_ids[row_of[i]] != want)
            fail_msg("span %zu: parent id %lld, its parent span's call id %lld", i,
                     (long long)h->parent_ids[row_of[i]], (long long)want);
    }
}

/* Finalizes to path and checks every region of names (ids in regs)
 * against the spans recorded before. */
static void finalize_and_check(const char *path, const char *const *names,
                               const sps_region_t *regs, size_t nregs) {
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(h->nev, n);
    char msg[256];
    if (tu_h5_check_tree(h, msg, sizeof msg)) fail_msg("%s", msg);
    long *row_of = malloc((n ? n : 1) * sizeof *row_of);
    for (size_t i = 0; i < n; i++) row_of[i] = -1;
    for (size_t r = 0; r < nregs; r++) check_region(h, names[r], regs[r], v, n, row_of);
    check_parents(h, v, n, row_of);
    free(row_of);
    free(v);
    tu_h5_free(h);
    remove(path);
}

/* ---- many threads on one region, one of them in a long call ---------- */

#define HOT_THREADS 3
#define HOT_CALLS 40000 /* per thread: the region spans about four chunks */

static sps_region_t g_hot, g_inner;

static void *hot_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < HOT_CALLS; i++) {
        sps_begin(g_hot);
        if (i % 7 == 0) {
            sps_begin(g_inner);
            sps_end(g_inner);
        }
        sps_end(g_hot);
    }
    return NULL;
}

static void test_threads_and_a_long_call(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    g_hot = sps_region("sink.hot");
    g_inner = sps_region("sink.inner");
    sps_begin(g_hot); /* runs while the others fill chunks: its duration comes late */
    pthread_t t[HOT_THREADS];
    for (int i = 0; i < HOT_THREADS; i++) pthread_create(&t[i], NULL, hot_worker, NULL);
    for (int i = 0; i < HOT_THREADS; i++) pthread_join(t[i], NULL);
    sps_end(g_hot);
    static const char *const names[] = {"sink.hot", "sink.inner"};
    sps_region_t regs[] = {g_hot, g_inner};
    finalize_and_check(tu_path("sink_threads.h5"), names, regs, 2);
    sps_shutdown();
}

/* ---- more regions interleaved than there are chunk buffers ----------- */

#define WIDE_REGIONS 14
#define WIDE_CALLS 33000 /* per region: each one's rows fill a chunk */

static void test_regions_without_buffers(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.memory_limit = 64u << 20; /* all in memory */
    assert_int_equal(sps_setup(&cfg), 0);
    char names_buf[WIDE_REGIONS][32];
    const char *names[WIDE_REGIONS];
    sps_region_t regs[WIDE_REGIONS];
    for (int r = 0; r < WIDE_REGIONS; r++) {
        snprintf(names_buf[r], sizeof names_buf[r], "sink.wide.%02d", r);
        names[r] = names_buf[r];
        regs[r] = sps_region(names[r]);
    }
    for (int i = 0; i < WIDE_CALLS; i++)
        for (int r = 0; r < WIDE_REGIONS; r++) {
            sps_begin(regs[r]);
            sps_end(regs[r]);
        }
    finalize_and_check(tu_path("sink_wide.h5"), names, regs, WIDE_REGIONS);
    sps_shutdown();
}

/* ---- a plain loop: every row in place -------------------------------- */

static void test_loop_in_place(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t outer = sps_region("sink.outer"), step = sps_region("sink.step");
    sps_begin(outer);
    for (int i = 0; i < 100000; i++) {
        sps_begin(step);
        sps_end(step);
    }
    sps_end(outer);
    static const char *const names[] = {"sink.outer", "sink.step"};
    sps_region_t regs[] = {outer, step};
    finalize_and_check(tu_path("sink_loop.h5"), names, regs, 2);
    /* again, with a call open across the checkpoint (carried in) and two
     * left open at the next one */
    sps_begin(outer);
    for (int i = 0; i < 100000; i++) {
        sps_begin(step);
        if (i == 50000) sps_begin(outer); /* open at the end */
        sps_end(step);
    }
    finalize_and_check(tu_path("sink_loop2.h5"), names, regs, 2);
    sps_shutdown();
}

int main(void) {
    setenv("SPANSCOPE_CLOCK", "monotonic", 1); /* both sinks: the same ns */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_loop_in_place, tu_fresh, tu_fresh),
        cmocka_unit_test_setup_teardown(test_threads_and_a_long_call, tu_fresh, tu_fresh),
        cmocka_unit_test_setup_teardown(test_regions_without_buffers, tu_fresh, tu_fresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
