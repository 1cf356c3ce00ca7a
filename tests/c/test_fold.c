/* test_fold.c -- the one fold (src/model/fold.c): the nesting rule for
 * begin/end streams and for interval streams, self times, and that the two
 * agree wherever a recording can be written either way. */
#include "testutil.h"
#include "sps_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct closed {
    uint32_t region;
    uint64_t start, end, self;
    size_t depth;
    int parent_region; /* -1: root */
} closed_t;

typedef struct sink {
    closed_t v[64];
    size_t n;
    const sps__stack_t *st;
} sink_t;

static void on_close(void *ctx, const sps__frame_t *f, uint64_t end,
                     uint64_t self, size_t depth) {
    sink_t *k = ctx;
    assert_true(k->n < 64);
    k->v[k->n++] = (closed_t){f->region, f->start, end, self, depth,
                              depth ? (int)k->st->f[depth - 1].region : -1};
}

static sps__frame_t begin_frame(uint32_t r, uint64_t t) {
    return (sps__frame_t){r, -1, t, 0, 0, -1, 0, 0, 0};
}

/* begin/end: an end closes the innermost frame of its region and the frames
 * above it at the same time (repairs), an unmatched end is ignored. */
static void test_events_rule(void **state) {
    (void)state;
    sps__stack_t st = {0};
    sink_t k = {.st = &st};
    assert_int_equal(sps__stack_push(&st, begin_frame(1, 0)), 0);
    assert_int_equal(sps__stack_push(&st, begin_frame(2, 10)), 0);
    assert_int_equal(sps__stack_push(&st, begin_frame(3, 20)), 0);
    /* end(2) at 50 closes 3 (a repair) and 2 */
    assert_int_equal(sps__fold_end(&st, 2, 50, on_close, &k), 1);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.v[0].region, 3);
    assert_int_equal(k.v[0].end, 50);
    assert_int_equal(k.v[0].self, 30);
    assert_int_equal(k.v[0].parent_region, 2);
    assert_int_equal(k.v[1].region, 2);
    assert_int_equal(k.v[1].self, 10); /* 40 - 30 in its child */
    /* the late end(3) matches nothing: ignored, one misuse */
    assert_int_equal(sps__fold_end(&st, 3, 60, on_close, &k), 1);
    assert_int_equal(k.n, 2);
    assert_int_equal(sps__fold_end(&st, 1, 100, on_close, &k), 0);
    assert_int_equal(k.v[2].region, 1);
    assert_int_equal(k.v[2].self, 60); /* 100 - 40 */
    assert_int_equal(st.n, 0);
    sps__stack_free(&st);
}

static sps__ival_t iv(uint32_t lane, uint32_t region, int64_t s, int64_t e) {
    return (sps__ival_t){s, e, 0, region, lane, 0};
}

/* intervals: containment, partial overlaps (torch's rule), zero-length
 * spans at a parent's start and end, lanes apart, input order free. */
static void test_intervals_rule(void **state) {
    (void)state;
    sps__ival_t v[] = {
        iv(0, 1, 0, 100),   /* 0: root */
        iv(0, 2, 10, 40),   /* 1: child of 0 */
        iv(0, 3, 30, 120),  /* 2: starts in 0, ends after it: not its child */
        iv(0, 4, 0, 0),     /* 3: zero-length at 0's start: child of 0 */
        iv(0, 5, 40, 40),   /* 4: zero-length at 1's end: not 1's child; 2 is open */
        iv(1, 6, 10, 40),   /* 5: another lane: a root there */
        iv(0, 7, 20, 25),   /* 6: inside 1 */
    };
    size_t n = sizeof v / sizeof v[0];
    sps__fold_out_t out[7];
    uint64_t overlaps = 0;
    sps__ival_t w[7];
    /* reversed input order gives the same answer */
    for (size_t i = 0; i < n; i++) w[i] = v[n - 1 - i];
    assert_int_equal(sps__fold_ivals(v, n, out, &overlaps), 0);
    assert_int_equal(overlaps, 2); /* 2 outlives 1 and 0 */
    assert_int_equal(out[0].parent, -1);
    assert_int_equal(out[1].parent, 0);
    assert_int_equal(out[2].parent, -1); /* 0 was closed when 2 outlived it */
    assert_int_equal(out[3].parent, 0);
    assert_int_equal(out[4].parent, 2);
    assert_int_equal(out[5].parent, -1);
    assert_int_equal(out[6].parent, 1);
    assert_int_equal(out[6].depth, 2);
    /* self: 0 = 100 - 30 (child 1) - 0 (child 3) ; 1 = 30 - 5 */
    assert_int_equal(out[0].self, 70);
    assert_int_equal(out[1].self, 25);
    assert_int_equal(out[2].self, 90);
    assert_int_equal(out[4].self, 0);
    /* the caller's order is restored */
    assert_int_equal(v[2].start, 30);
    assert_int_equal(v[5].thread, 1);
    sps__fold_out_t out2[7];
    assert_int_equal(sps__fold_ivals(w, n, out2, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        int64_t p = out2[n - 1 - i].parent;
        assert_int_equal(p < 0 ? -1 : (int64_t)(n - 1 - (size_t)p), out[i].parent);
        assert_int_equal(out2[n - 1 - i].self, out[i].self);
    }
}

/* Every properly nested recording folds to the same parents and self
 * times whether it is read as begin/end records or as intervals. */
static void test_streams_agree(void **state) {
    (void)state;
    srand(7);
    for (int round = 0; round < 200; round++) {
        sps__stack_t st = {0};
        sink_t k = {.st = &st};
        uint64_t t = 0;
        int depth = 0, opened = 0;
        while (opened < 20 || depth > 0) {
            t += (uint64_t)(rand() % 3); /* zero-length calls and ties too */
            if (opened < 20 && (depth == 0 || rand() % 2)) {
                sps__stack_push(&st, begin_frame((uint32_t)(opened + 1), t));
                opened++, depth++;
            } else {
                assert_int_equal(sps__fold_end(&st, st.f[st.n - 1].region, t,
                                               on_close, &k), 0);
                depth--;
            }
        }
        assert_int_equal(k.n, 20);
        /* as a file lists them: in begin order (regions were numbered so);
         * equal intervals keep that order, outer first */
        closed_t byb[20];
        for (size_t i = 0; i < 20; i++) byb[k.v[i].region - 1] = k.v[i];
        memcpy(k.v, byb, sizeof byb);
        sps__ival_t v[20];
        sps__fold_out_t out[20];
        for (size_t i = 0; i < 20; i++)
            v[i] = iv(0, k.v[i].region, (int64_t)k.v[i].start, (int64_t)k.v[i].end);
        assert_int_equal(sps__fold_ivals(v, 20, out, NULL), 0);
        for (size_t i = 0; i < 20; i++) {
            /* self times agree; a zero-length call tied with a sibling's
             * start is ambiguous as an interval (it becomes the longer
             * one's child), so parents are compared where calls have length */
            assert_int_equal(out[i].self, (int64_t)k.v[i].self);
            if (k.v[i].end > k.v[i].start) {
                int p = out[i].parent < 0 ? -1 : (int)v[out[i].parent].region;
                assert_int_equal(p, k.v[i].parent_region);
            }
        }
        sps__stack_free(&st);
    }
}

static void test_acc_merge(void **state) {
    (void)state;
    sps__acc_t a = {0}, b = {0}, all = {0};
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t d = (i * 7919) % 1000 + 1;
        sps__acc_add(i % 3 ? &a : &b, i * 10, i * 10 + d, d / 2);
        sps__acc_add(&all, i * 10, i * 10 + d, d / 2);
    }
    sps__acc_merge(&a, &b);
    sps_stats_t x, y;
    sps__acc_stats(&a, &x);
    sps__acc_stats(&all, &y);
    assert_int_equal(x.num_calls, y.num_calls);
    assert_int_equal(x.total_ns, y.total_ns);
    assert_int_equal(x.self_ns, y.self_ns);
    assert_int_equal(x.min_ns, y.min_ns);
    assert_int_equal(x.max_ns, y.max_ns);
    assert_true(x.mean_ns - y.mean_ns < 1e-6 && y.mean_ns - x.mean_ns < 1e-6);
    assert_true(x.var_ns2 / y.var_ns2 > 1 - 1e-9 && x.var_ns2 / y.var_ns2 < 1 + 1e-9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_rule),
        cmocka_unit_test(test_intervals_rule),
        cmocka_unit_test(test_streams_agree),
        cmocka_unit_test(test_acc_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
