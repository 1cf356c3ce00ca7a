/* test_schedule.c -- the step schedule (sps_schedule_action, torch's
 * arithmetic), the session's steps (sps_step*, ProfilerStep#N spans from
 * sps_spans, nested by the model's rule), the exact span key
 * (sps_thread_seq) and the session's clock anchor (sps_clock_anchor). */
#include "testutil.h"
#include "tu_core.h"

#include "sps_int.h" /* sps__steps_nest, tested on hand-made spans */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The schedule                                                              */
/* ------------------------------------------------------------------------ */

/* torch/profiler/profiler.py schedule_fn, transcribed from facts §7 with
 * Python's float division. */
static int reference(int64_t step, const sps_schedule_t *s) {
    if (step < s->skip_first) return SPS_ACTION_NONE;
    step -= s->skip_first;
    if (s->skip_first_wait != 0) step += s->wait;
    int64_t num_steps = s->wait + s->warmup + s->active;
    if (s->repeat > 0 && (double)step / (double)num_steps >= (double)s->repeat)
        return SPS_ACTION_NONE;
    int64_t mod = step % num_steps;
    if (mod < s->wait) return SPS_ACTION_NONE;
    if (mod < s->wait + s->warmup) return SPS_ACTION_WARMUP;
    return mod < num_steps - 1 ? SPS_ACTION_RECORD : SPS_ACTION_RECORD_AND_SAVE;
}

/* The 216 parameter sets of the Python test, 60 steps each. */
static void test_schedule_matches_torch(void **state) {
    (void)state;
    static const int64_t waits[] = {0, 1, 3}, warmups[] = {0, 2}, actives[] = {1, 2, 4},
                         repeats[] = {0, 1, 3}, skips[] = {0, 5}, sfw[] = {0, 1};
    int sets = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 3; d++)
                    for (int e = 0; e < 2; e++)
                        for (int f = 0; f < 2; f++) {
                            sps_schedule_t s = {waits[a], warmups[b], actives[c],
                                                repeats[d], skips[e], sfw[f]};
                            assert_int_equal(sps_schedule_check(&s), 0);
                            for (int64_t step = 0; step < 60; step++)
                                assert_int_equal(sps_schedule_action(&s, step),
                                                 reference(step, &s));
                            sets++;
                        }
    assert_int_equal(sets, 216);
    /* two sequences written out: a cycle, and skip_first_wait skipping the
     * first cycle's wait only */
    sps_schedule_t s1 = {1, 1, 2, 0, 0, 0};
    int want1[] = {SPS_ACTION_NONE, SPS_ACTION_WARMUP, SPS_ACTION_RECORD,
                   SPS_ACTION_RECORD_AND_SAVE, SPS_ACTION_NONE};
    for (int i = 0; i < 5; i++) assert_int_equal(sps_schedule_action(&s1, i), want1[i]);
    sps_schedule_t s2 = {2, 1, 1, 2, 2, 1};
    int want2[] = {SPS_ACTION_NONE, SPS_ACTION_NONE, SPS_ACTION_WARMUP,
                   SPS_ACTION_RECORD_AND_SAVE, SPS_ACTION_NONE, SPS_ACTION_NONE,
                   SPS_ACTION_WARMUP, SPS_ACTION_RECORD_AND_SAVE, SPS_ACTION_NONE,
                   SPS_ACTION_NONE};
    for (int i = 0; i < 10; i++) assert_int_equal(sps_schedule_action(&s2, i), want2[i]);
}

/* The same arithmetic in 128 bits, for steps near INT64_MAX. */
static int reference128(int64_t step, const sps_schedule_t *s) {
    if (step < s->skip_first) return SPS_ACTION_NONE;
    __int128 x = (__int128)step - s->skip_first;
    if (s->skip_first_wait) x += s->wait;
    __int128 n = (__int128)s->wait + s->warmup + s->active;
    if (s->repeat > 0 && x / n >= s->repeat) return SPS_ACTION_NONE;
    __int128 m = x % n;
    if (m < s->wait) return SPS_ACTION_NONE;
    if (m < (__int128)s->wait + s->warmup) return SPS_ACTION_WARMUP;
    return m < n - 1 ? SPS_ACTION_RECORD : SPS_ACTION_RECORD_AND_SAVE;
}

static void test_schedule_invalid_and_extremes(void **state) {
    (void)state;
    sps_schedule_t ok = {1, 1, 1, 0, 0, 0};
    assert_int_equal(sps_schedule_check(NULL), SPS_EINVAL);
    assert_int_equal(sps_schedule_action(NULL, 0), SPS_EINVAL);
    assert_int_equal(sps_schedule_action(&ok, -1), SPS_EINVAL);
    sps_schedule_t bad[] = {
        {-1, 1, 1, 0, 0, 0}, {0, -1, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 0},
        {0, 0, 1, -1, 0, 0}, {0, 0, 1, 0, -1, 0}, {0, 0, 1, 0, 0, 2},
        {0, 0, 1, 0, 0, -1}, {INT64_MAX, 1, 1, 0, 0, 0}, {1, INT64_MAX - 1, 1, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(sps_schedule_check(&bad[i]), SPS_EINVAL);
        assert_int_equal(sps_schedule_action(&bad[i], 0), SPS_EINVAL);
    }
    /* no overflow anywhere: huge steps, waits, cycles */
    sps_schedule_t big[] = {
        {INT64_MAX / 2, INT64_MAX / 4, INT64_MAX / 4, 0, 0, 1},
        {INT64_MAX - 3, 1, 1, 3, 7, 1},
        {5, 0, INT64_MAX - 5, 1, 0, 1},
        {3, 2, 1, 0, INT64_MAX - 10, 1},
        {0, 0, 1, INT64_MAX, 0, 1},
    };
    int64_t steps[] = {0, 1, 17, INT64_MAX / 3, INT64_MAX / 2, INT64_MAX - 11,
                       INT64_MAX - 1, INT64_MAX};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        assert_int_equal(sps_schedule_check(&big[i]), 0);
        for (size_t j = 0; j < sizeof steps / sizeof *steps; j++)
            assert_int_equal(sps_schedule_action(&big[i], steps[j]),
                             reference128(steps[j], &big[i]));
    }
    /* the 216 sets again near the top of the range */
    for (int64_t w = 0; w < 4; w++)
        for (int64_t r = 0; r < 3; r++)
            for (int f = 0; f < 2; f++) {
                sps_schedule_t s = {w, 1, 2, r, 3, f};
                for (int64_t k = 0; k < 40; k++)
                    assert_int_equal(sps_schedule_action(&s, INT64_MAX - k),
                                     reference128(INT64_MAX - k, &s));
            }
}

/* ------------------------------------------------------------------------ */
/* Steps                                                                     */
/* ------------------------------------------------------------------------ */

static sps_region_t g_a, g_b, g_c;

static void setup_events(void) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    g_a = sps_region("st.a");
    g_b = sps_region("st.b");
    g_c = sps_region("st.c");
}

static const char *name_of(const sps_span_t *s) { return sps_region_name(s->region); }
static int64_t dur(const sps_span_t *s) { return s->end_ns - s->start_ns; }

/* step 1 { a { b } } step 2 { c }: steps adopt the roots inside them. */
static void test_step_spans_nest(void **state) {
    (void)state;
    setup_events();
    assert_int_equal(sps_step_begin(1), 0);
    tu_spin_ns(20000);
    sps_begin(g_a);
    sps_begin(g_b);
    tu_spin_ns(20000);
    sps_end(g_b);
    sps_end(g_a);
    tu_spin_ns(20000);
    assert_int_equal(sps_step(), 2);
    sps_begin(g_c);
    sps_end(g_c);
    assert_int_equal(sps_step_end(), 0);
    assert_int_equal(sps_step_end(), 0); /* none open: nothing */
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 5);
    const char *want[] = {"ProfilerStep#1", "st.a", "st.b", "ProfilerStep#2", "st.c"};
    int64_t parent[] = {-1, 0, 1, -1, 3};
    uint32_t depth[] = {0, 1, 2, 0, 1};
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(name_of(&v[i]), want[i]);
        assert_int_equal(v[i].parent, parent[i]);
        assert_int_equal(v[i].depth, depth[i]);
        assert_int_equal(v[i].thread, 0);
        if (i) assert_true(v[i - 1].start_ns <= v[i].start_ns);
    }
    assert_true(v[0].seq == SPS_SEQ_NONE && v[3].seq == SPS_SEQ_NONE);
    assert_true(v[1].seq != SPS_SEQ_NONE && v[1].seq < v[2].seq && v[2].seq < v[4].seq);
    assert_int_equal(v[0].self_ns, dur(&v[0]) - dur(&v[1]));
    assert_true(v[0].self_ns >= 40000);
    assert_int_equal(v[1].self_ns, dur(&v[1]) - dur(&v[2])); /* the fold's, unchanged */
    assert_int_equal(v[3].self_ns, dur(&v[3]) - dur(&v[4]));
    assert_int_equal(v[0].end_ns, v[3].start_ns); /* sps_step: one instant */
    assert_int_equal(v[0].stack, 0);
    sps_free(v);
    sps_shutdown();
}

/* A region open across sps_step stays whole and is no child of a step; a
 * region entirely inside a step keeps that region as its parent. */
static void test_span_across_step_stays_whole(void **state) {
    (void)state;
    setup_events();
    assert_int_equal(sps_step_begin(0), 0);
    sps_begin(g_a);       /* across */
    sps_begin(g_b);       /* before the step */
    sps_end(g_b);
    assert_int_equal(sps_step(), 1);
    sps_begin(g_c);       /* after the step */
    sps_end(g_c);
    sps_end(g_a);
    assert_int_equal(sps_step(), 2);
    assert_int_equal(sps_step_end(), 0);
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 6);
    const char *want[] = {"ProfilerStep#0", "st.a", "st.b", "ProfilerStep#1", "st.c",
                          "ProfilerStep#2"};
    int64_t parent[] = {-1, -1, 1, -1, 1, -1};
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(name_of(&v[i]), want[i]);
        assert_int_equal(v[i].parent, parent[i]);
    }
    /* steps without children: all their time is their own */
    assert_int_equal(v[0].self_ns, dur(&v[0]));
    assert_int_equal(v[3].self_ns, dur(&v[3]));
    assert_int_equal(v[1].self_ns, dur(&v[1]) - dur(&v[2]) - dur(&v[4]));
    sps_free(v);
    sps_shutdown();
}

/* epoch { step 0 { x } step 1 { x } }: steps inside a region are its
 * children, and the region's self time counts them, not their contents. */
static void test_steps_inside_a_region(void **state) {
    (void)state;
    setup_events();
    sps_begin(g_a); /* epoch */
    tu_spin_ns(10000);
    assert_int_equal(sps_step_begin(0), 0);
    for (int i = 0; i < 2; i++) {
        sps_begin(g_b);
        tu_spin_ns(10000);
        sps_end(g_b);
        tu_spin_ns(5000);
        if (i == 0) assert_int_equal(sps_step(), 1);
    }
    assert_int_equal(sps_step_end(), 0);
    tu_spin_ns(10000);
    sps_end(g_a);
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 5);
    const char *want[] = {"st.a", "ProfilerStep#0", "st.b", "ProfilerStep#1", "st.b"};
    int64_t parent[] = {-1, 0, 1, 0, 3};
    uint32_t depth[] = {0, 1, 2, 1, 2};
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(name_of(&v[i]), want[i]);
        assert_int_equal(v[i].parent, parent[i]);
        assert_int_equal(v[i].depth, depth[i]);
    }
    assert_int_equal(v[0].self_ns, dur(&v[0]) - dur(&v[1]) - dur(&v[3]));
    assert_true(v[0].self_ns >= 20000);
    assert_int_equal(v[1].self_ns, dur(&v[1]) - dur(&v[2]));
    assert_int_equal(v[3].self_ns, dur(&v[3]) - dur(&v[4]));
    int64_t self_sum = 0;
    for (size_t i = 0; i < n; i++) self_sum += v[i].self_ns;
    assert_int_equal(self_sum, dur(&v[0])); /* self times partition the root */
    sps_free(v);
    sps_shutdown();
}

typedef struct {
    int64_t first; /* the step number this thread begins with */
    sps_region_t r;
} stepper_t;

static void *stepper(void *arg) {
    stepper_t *s = arg;
    if (sps_step_begin(s->first) != 0) return (void *)1; /* before any region */
    sps_begin(s->r);
    sps_end(s->r);
    return sps_step_end() ? (void *)1 : NULL;
}

/* Steps of several threads: each on its thread, never adopting another
 * thread's spans; a thread that marks a step before any region joins. */
static void test_steps_of_threads(void **state) {
    (void)state;
    setup_events();
    pthread_t t[3];
    stepper_t s[3] = {{10, g_a}, {20, g_b}, {30, g_c}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_create(&t[i], NULL, stepper, &s[i]), 0);
        void *res;
        pthread_join(t[i], &res);
        assert_null(res);
    }
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i += 2) {
        char want[32];
        snprintf(want, sizeof want, "ProfilerStep#%d", (int)(10 + 5 * i));
        assert_string_equal(name_of(&v[i]), want);
        assert_int_equal(v[i + 1].parent, (int64_t)i);
        assert_int_equal(v[i + 1].thread, v[i].thread);
        sps_thread_t ti;
        assert_int_equal(sps_thread_info(v[i].thread, &ti), 0);
    }
    assert_true(v[0].thread != v[2].thread && v[2].thread != v[4].thread);
    sps_free(v);
    sps_shutdown();
}

/* Errors; the window; a finalize consumes the steps before it; a new
 * session starts the counter again. */
static void test_steps_errors_window_periods(void **state) {
    (void)state;
    assert_int_equal(sps_step(), SPS_ENOSESSION);
    assert_int_equal(sps_step_begin(0), SPS_ENOSESSION);
    assert_int_equal(sps_step_end(), SPS_ENOSESSION);
    sps_config_t agg = SPS_CONFIG_INIT;
    agg.aggregate = 1;
    assert_int_equal(sps_setup(&agg), 0);
    assert_int_equal(sps_step(), SPS_EMODE);
    sps_shutdown();
    setup_events();
    assert_int_equal(sps_step_begin(-1), SPS_EINVAL);
    assert_int_equal(sps_step(), 1); /* from 0 */
    assert_int_equal(sps_step(), 2);
    int64_t mid = tu_now();
    tu_spin_ns(1000);
    assert_int_equal(sps_step(), 3);
    assert_int_equal(sps_step_end(), 0);
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(mid, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(name_of(&v[0]), "ProfilerStep#3");
    sps_free(v);
    assert_int_equal(sps_finalize_to(NULL), 0);
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 0); /* written by the finalize */
    sps_free(v);
    assert_int_equal(sps_step_begin(7), 0); /* open across a finalize */
    assert_int_equal(sps_finalize_to(NULL), 0);
    assert_int_equal(sps_step(), 8);
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 1); /* completed in this period, as a region would be */
    assert_string_equal(name_of(&v[0]), "ProfilerStep#7");
    sps_free(v);
    assert_int_equal(sps_step_begin(INT64_MAX), 0);
    assert_int_equal(sps_step(), SPS_ETOOBIG); /* no wrap-around */
    assert_int_equal(sps_step_end(), 0);
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 3); /* 7, 8 (ended by the sps_step_begin), INT64_MAX */
    assert_string_equal(name_of(&v[1]), "ProfilerStep#8");
    assert_string_equal(name_of(&v[2]), "ProfilerStep#9223372036854775807");
    sps_free(v);
    sps_shutdown();
    setup_events();
    assert_int_equal(sps_step(), 1); /* a fresh counter */
    sps_shutdown();
}

/* Many steps over many finalizes: the log is trimmed as it grows, and
 * every period still gets exactly its own steps. */
static void test_steps_over_many_periods(void **state) {
    (void)state;
    setup_events();
    int64_t step = 0;
    assert_int_equal(sps_step_begin(0), 0);
    for (int period = 0; period < 60; period++) {
        for (int i = 0; i < 50; i++) {
            sps_begin(g_a);
            sps_end(g_a);
            assert_int_equal(sps_step(), ++step);
        }
        sps_span_t *v;
        size_t n;
        assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
        /* 50 regions; steps: the 50 that ended in this period */
        size_t nsteps = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i].seq == SPS_SEQ_NONE) {
                char want[32];
                snprintf(want, sizeof want, "ProfilerStep#%lld",
                         (long long)(step - 50 + (int64_t)nsteps));
                assert_string_equal(name_of(&v[i]), want);
                nsteps++;
            } else {
                assert_true(v[i].parent >= 0 && v[v[i].parent].seq == SPS_SEQ_NONE);
            }
        assert_int_equal(nsteps, 50);
        assert_int_equal(n, 100);
        sps_free(v);
        assert_int_equal(sps_finalize_to(NULL), 0);
    }
    sps_shutdown();
}

/* sps__steps_nest on hand-made spans: the ties and corners a clock rarely
 * produces.  f(start, end, parent, thread, depth) is a folded span. */
static sps_span_t f(int64_t s, int64_t e, int64_t parent, uint32_t thread, uint32_t depth) {
    return (sps_span_t){s, e, e - s, parent, 1, thread, depth, 0, (uint64_t)s};
}

static sps_span_t *nest(const sps_span_t *in, size_t n, const sps__step_span_t *st,
                        size_t k, size_t *m) {
    sps_span_t *v = malloc(n * sizeof *v);
    memcpy(v, in, n * sizeof *v);
    /* self times as the fold gives them */
    for (size_t i = 0; i < n; i++)
        if (v[i].parent >= 0) v[v[i].parent].self_ns -= v[i].end_ns - v[i].start_ns;
    *m = n;
    assert_int_equal(sps__steps_nest(&v, m, st, k), 0);
    assert_int_equal(*m, n + k);
    for (size_t i = 1; i < *m; i++) assert_true(v[i - 1].start_ns <= v[i].start_ns);
    for (size_t i = 0; i < *m; i++) assert_true(v[i].parent < (int64_t)i);
    return v;
}

static void test_steps_nest_corners(void **state) {
    (void)state;
    size_t m;
    /* ties at one start: A [10,50] encloses step [10,40] (A first); the step
     * encloses B [10,40] (equal: the step first) and C [10,20]; thread 1's
     * D [10,45] and E [10,5..] are not its business */
    sps_span_t in1[] = {f(10, 45, -1, 1, 0), f(10, 50, -1, 0, 0), f(10, 40, 1, 0, 1),
                        f(10, 20, 2, 0, 2)};
    sps__step_span_t st1[] = {{10, 40, 3, 0, 99}};
    sps_span_t *v = nest(in1, 4, st1, 1, &m);
    /* order: D (thread 1, first as given), A, step, B, C */
    assert_int_equal(v[0].thread, 1);
    assert_int_equal(v[1].end_ns, 50);
    assert_int_equal(v[2].seq, SPS_SEQ_NONE);
    assert_int_equal(v[2].parent, 1);      /* A encloses the step */
    assert_int_equal(v[3].parent, 2);      /* B: fold parent A = the step's: adopted */
    assert_int_equal(v[4].parent, 3);      /* C keeps B */
    assert_int_equal(v[0].parent, -1);     /* other thread: untouched */
    assert_int_equal(v[2].self_ns, 0);     /* B fills the step */
    assert_int_equal(v[1].self_ns, 10);    /* A: 40 minus the step (was 40 - B) */
    assert_int_equal(v[3].depth, 2);
    assert_int_equal(v[4].depth, 3);
    sps_free(v);

    /* a root whose fold depth is 3 (its parents outside the window) keeps
     * it, plus one for the step around it; a step with no parent is 0 */
    sps_span_t in2[] = {f(100, 110, -1, 0, 3)};
    sps__step_span_t st2[] = {{90, 120, 1, 0, 99}};
    v = nest(in2, 1, st2, 1, &m);
    assert_int_equal(v[0].depth, 0);
    assert_int_equal(v[1].depth, 4);
    assert_int_equal(v[1].parent, 0);
    sps_free(v);

    /* inside a common parent P [0,100]: S1 [10,50], S2 [50,90] and X
     * [40,60] crossing their boundary.  X keeps P, no child of either step;
     * P's self counts the overlaps twice (the documented cost) */
    sps_span_t in3[] = {f(0, 100, -1, 0, 0), f(40, 60, 0, 0, 1), f(20, 30, 0, 0, 1),
                        f(70, 80, 0, 0, 1)};
    /* in start order: P, (20,30), X, (70,80) */
    sps_span_t in3s[] = {in3[0], in3[2], in3[1], in3[3]};
    sps__step_span_t st3[] = {{50, 90, 2, 0, 99}, {10, 50, 1, 0, 99}};
    v = nest(in3s, 4, st3, 2, &m);
    /* P, S1, (20,30), X, S2, (70,80) */
    int64_t starts[] = {0, 10, 20, 40, 50, 70}, parents[] = {-1, 0, 1, 0, 0, 4};
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(v[i].start_ns, starts[i]);
        assert_int_equal(v[i].parent, parents[i]);
    }
    assert_int_equal(v[1].self_ns, 40 - 10);
    assert_int_equal(v[4].self_ns, 40 - 10);
    assert_int_equal(v[0].self_ns, 100 - 40 - 40 - 20); /* -0: overlap 20 counted twice */
    sps_free(v);
}

/* ------------------------------------------------------------------------ */
/* sps_thread_seq: the exact key of a span                                   */
/* ------------------------------------------------------------------------ */

#define NSEQ 3000

typedef struct {
    uint32_t thread;
    uint64_t seq[NSEQ];
    int nested;
} seqs_t;

/* Begins NSEQ spans (nested in pairs when asked), noting each begin's key. */
static void *seq_body(void *arg) {
    seqs_t *s = arg;
    for (int i = 0; i < NSEQ; i++) {
        sps_begin(g_a);
        if (sps_thread_seq(&s->thread, &s->seq[i])) return (void *)1;
        if (!s->nested || (i & 1)) {
            sps_end(g_a);
            if (s->nested) sps_end(g_a);
        }
    }
    return NULL;
}

static void test_thread_seq_is_the_spans_key(void **state) {
    (void)state;
    uint32_t th;
    uint64_t seq;
    assert_int_equal(sps_thread_seq(&th, &seq), SPS_ENOSESSION);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.chunk_size = 4096; /* many chunks: keys across chunk boundaries */
    cfg.overflow = SPS_OVERFLOW_GROW;
    assert_int_equal(sps_setup(&cfg), 0);
    g_a = sps_region("st.a");
    assert_int_equal(sps_thread_seq(NULL, &seq), SPS_EINVAL);
    assert_int_equal(sps_thread_seq(&th, &seq), SPS_ENOSESSION); /* nothing yet */
    static seqs_t s[3];
    pthread_t t[2];
    s[0].nested = 1;
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, seq_body, &s[i + 1]);
    assert_null(seq_body(&s[0]));
    for (int i = 0; i < 2; i++) {
        void *res;
        pthread_join(t[i], &res);
        assert_null(res);
    }
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 3 * NSEQ);
    for (int k = 0; k < 3; k++) {
        size_t j = 0;
        for (size_t i = 0; i < n; i++) /* start order = begin order per thread */
            if (v[i].thread == s[k].thread) {
                assert_true(j < NSEQ);
                assert_true(v[i].seq == s[k].seq[j]);
                j++;
            }
        assert_int_equal(j, NSEQ);
    }
    sps_free(v);
    sps_shutdown();
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_begin(g_a);
    assert_int_equal(sps_thread_seq(&th, &seq), SPS_EMODE);
    sps_end(g_a);
    sps_shutdown();
}

/* While a thread drops events its begins have no key. */
static void test_thread_seq_when_dropping(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.chunk_size = 4096;
    cfg.memory_limit = 8192;
    cfg.overflow = SPS_OVERFLOW_DROP;
    assert_int_equal(sps_setup(&cfg), 0);
    g_a = sps_region("st.a");
    uint32_t th;
    uint64_t seq, last = 0;
    int keyed = 0, unkeyed = 0;
    for (int i = 0; i < 4000; i++) {
        sps_begin(g_a);
        int rc = sps_thread_seq(&th, &seq);
        if (rc == 0) {
            assert_true(!keyed || seq > last);
            last = seq;
            keyed++;
        } else {
            assert_int_equal(rc, SPS_ETOOBIG);
            unkeyed++;
        }
        sps_end(g_a);
    }
    assert_true(keyed > 0 && unkeyed > 0);
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_true(n > 0 && n <= (size_t)keyed);
    for (size_t i = 0; i < n; i++) assert_true(v[i].seq <= last);
    sps_free(v);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* The clock anchor                                                          */
/* ------------------------------------------------------------------------ */

static void test_clock_anchor(void **state) {
    (void)state;
    int64_t w = 1, m = 1;
    assert_int_equal(sps_clock_anchor(&w, &m), SPS_ENOSESSION);
    assert_true(w == 0 && m == 0);
    int64_t before = tu_now();
    setup_events();
    int64_t after = tu_now();
    assert_int_equal(sps_clock_anchor(&w, &m), 0);
    assert_true(m >= before && m <= after); /* taken at setup */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wall_now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, mono_now = tu_now();
    /* the two clocks' offset, read back to back (NTP may slew a little) */
    TU_ASSERT_NEAR(w - m, wall_now - mono_now, 0, 5e6);
    int64_t w2, m2;
    assert_int_equal(sps_clock_anchor(&w2, NULL), 0);
    assert_int_equal(sps_clock_anchor(NULL, &m2), 0);
    assert_true(w2 == w && m2 == m); /* one anchor per session */
    sps_shutdown();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule_matches_torch),
        cmocka_unit_test(test_schedule_invalid_and_extremes),
        TU_TEST(test_step_spans_nest),
        TU_TEST(test_span_across_step_stays_whole),
        TU_TEST(test_steps_inside_a_region),
        TU_TEST(test_steps_of_threads),
        TU_TEST(test_steps_errors_window_periods),
        TU_TEST(test_steps_over_many_periods),
        cmocka_unit_test(test_steps_nest_corners),
        TU_TEST(test_thread_seq_is_the_spans_key),
        TU_TEST(test_thread_seq_when_dropping),
        TU_TEST(test_clock_anchor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
