/* test_core.c -- counts, durations, nesting and self time on spans with
 * known timing; the per-call queries; aggregate mode; checkpoints (repeated
 * finalize); the scoped-region macros; the registry queries.
 *
 * Files left in $SPS_TEST_TMP for tests/python/test_c_h5.py:
 *   core_known.h5, core_cp1.h5, core_cp2.h5, core_aggregate.h5 */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Slack for comparing the profiler's timestamps (TSC mapped to
 * CLOCK_MONOTONIC) against the test's own clock_gettime brackets. */
#define EPS_NS 50000

/* ------------------------------------------------------------------------ */
/* Known timing: parent ~2 ms with two children of ~0.5 ms                  */
/* ------------------------------------------------------------------------ */

#define KN 6
typedef struct known {
    int64_t p_t0[KN], p_tb[KN], p_t1[KN];    /* before begin, after begin, after end */
    int64_t c_t0[2 * KN], c_t1[2 * KN];
} known_t;

static void run_known(sps_region_t P, sps_region_t C, known_t *k) {
    for (int i = 0; i < KN; i++) {
        k->p_t0[i] = tu_now();
        sps_begin(P);
        k->p_tb[i] = tu_now();
        tu_spin_ns(250000);
        for (int j = 0; j < 2; j++) {
            k->c_t0[2 * i + j] = tu_now();
            sps_begin(C);
            tu_spin_ns(500000);
            sps_end(C);
            k->c_t1[2 * i + j] = tu_now();
            tu_spin_ns(j == 0 ? 250000 : 500000);
        }
        sps_end(P);
        k->p_t1[i] = tu_now();
    }
}

/* mean and sample variance of d[0..n) */
static void moments(const int64_t *d, size_t n, double *mean, double *var) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)d[i];
    *mean = s / (double)n;
    double q = 0;
    for (size_t i = 0; i < n; i++) q += ((double)d[i] - *mean) * ((double)d[i] - *mean);
    *var = n > 1 ? q / (double)(n - 1) : 0;
}

/* stats agree with durations computed independently */
static void check_stats_vs_durations(const sps_stats_t *st, const int64_t *d,
                                     size_t n) {
    assert_int_equal(st->num_calls, n);
    int64_t tot = 0, mn = INT64_MAX, mx = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        tot += d[i];
        if (d[i] < mn) mn = d[i];
        if (d[i] > mx) mx = d[i];
    }
    double mean, var;
    moments(d, n, &mean, &var);
    TU_ASSERT_NEAR(st->total_ns, tot, 1e-3, 200.0 * (double)n);
    TU_ASSERT_NEAR(st->min_ns, mn, 1e-3, 200);
    TU_ASSERT_NEAR(st->max_ns, mx, 1e-3, 200);
    TU_ASSERT_NEAR(st->mean_ns, mean, 1e-3, 200);
    TU_ASSERT_NEAR(st->mean_ns * (double)st->num_calls, st->total_ns, 1e-6, 2);
    TU_ASSERT_NEAR(sqrt(st->var_ns2), sqrt(var), 0.05, 300);
    assert_true(st->min_ns <= st->mean_ns + 1 && st->mean_ns <= st->max_ns + 1);
}

static void test_known_timing(void **state) {
    (void)state;
    const char *path = tu_path("core_known.h5");
    unlink(path);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.label = "core_known";
    assert_int_equal(sps_setup(&cfg), 0);
    int64_t setup_done = tu_now();
    sps_region_t P = sps_region("core.parent"), C = sps_region("core.child");
    assert_true(P != SPS_REGION_INVALID && C != SPS_REGION_INVALID && P != C);
    static known_t k;
    run_known(P, C, &k);

    sps_stats_t sp, sc;
    assert_int_equal(sps_region_stats(P, &sp), 0);
    assert_int_equal(sps_region_stats(C, &sc), 0);
    assert_int_equal(sp.num_calls, KN);
    assert_int_equal(sc.num_calls, 2 * KN);

    /* every call lies between the test's own brackets */
    int64_t ps[KN], pd[KN], cs[2 * KN], cd[2 * KN];
    assert_int_equal(sps_region_calls(P, ps, pd, KN), KN);
    assert_int_equal(sps_region_calls(C, cs, cd, 2 * KN), 2 * KN);
    int64_t p_lo = 0, p_hi = 0;
    for (int i = 0; i < KN; i++) {
        assert_true(ps[i] >= k.p_t0[i] - EPS_NS && ps[i] <= k.p_tb[i] + EPS_NS);
        assert_true(pd[i] >= 2000000 - EPS_NS);
        assert_true(pd[i] <= k.p_t1[i] - k.p_t0[i] + EPS_NS);
        p_lo += 2000000;
        p_hi += k.p_t1[i] - k.p_t0[i];
    }
    int64_t c_hi = 0;
    for (int i = 0; i < 2 * KN; i++) {
        assert_true(cs[i] >= k.c_t0[i] - EPS_NS && cs[i] <= k.c_t1[i] + EPS_NS);
        assert_true(cd[i] >= 500000 - EPS_NS);
        assert_true(cd[i] <= k.c_t1[i] - k.c_t0[i] + EPS_NS);
        c_hi += k.c_t1[i] - k.c_t0[i];
        /* each child inside its parent */
        int p = i / 2;
        assert_true(cs[i] >= ps[p] && cs[i] + cd[i] <= ps[p] + pd[p]);
    }
    /* totals: nominal 2 ms / 0.5 ms per call, at most what the test measured */
    assert_true(sp.total_ns >= p_lo - KN * EPS_NS);
    assert_true(sp.total_ns <= p_hi + KN * EPS_NS);
    assert_true(sc.total_ns >= KN * 2 * 500000 - 2 * KN * EPS_NS);
    assert_true(sc.total_ns <= c_hi + 2 * KN * EPS_NS);
    /* self time: a child has none below it; parent = total - children */
    TU_ASSERT_NEAR(sc.self_ns, sc.total_ns, 0, 4);
    TU_ASSERT_NEAR(sp.self_ns, sp.total_ns - sc.total_ns, 0.05, 50000);
    TU_ASSERT_NEAR(sp.self_ns, sp.total_ns - sc.total_ns, 0, 4); /* same ticks */
    assert_true(sp.self_ns >= KN * 1000000 - KN * EPS_NS);
    check_stats_vs_durations(&sp, pd, KN);
    check_stats_vs_durations(&sc, cd, 2 * KN);
    /* durations in start order: starts strictly increase */
    for (int i = 1; i < KN; i++) assert_true(ps[i] > ps[i - 1]);
    for (int i = 1; i < 2 * KN; i++) assert_true(cs[i] > cs[i - 1]);
    /* sps_region_durations is sps_region_calls without starts */
    int64_t d2[2 * KN];
    assert_int_equal(sps_region_durations(C, d2, 2 * KN), 2 * KN);
    assert_memory_equal(d2, cd, sizeof d2);

    int64_t before_fin = tu_now();
    assert_int_equal(sps_finalize(), 0);
    int64_t after_fin = tu_now();
    assert_int_equal(access(path, F_OK), 0);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid());
    assert_int_not_equal(access(tmp, F_OK), 0); /* temporary renamed away */

    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(h->schema, 3);
    assert_string_equal(h->layout, "columnar");
    long rp = tu_h5_row(h, "core.parent"), rc = tu_h5_row(h, "core.child");
    assert_true(rp >= 0 && rc >= 0);
    assert_int_equal(h->counts[rp], KN);
    assert_int_equal(h->counts[rc], 2 * KN);
    assert_int_equal(h->nev, 3 * KN);
    int64_t fps[KN], fcs[2 * KN];
    tu_h5_starts(h, rp, fps);
    tu_h5_starts(h, rc, fcs);
    for (int i = 0; i < KN; i++) {
        TU_ASSERT_NEAR(fps[i], ps[i], 0, 1000);
        TU_ASSERT_NEAR(h->durations[h->offsets[rp] + i], pd[i], 1e-3, 200);
    }
    for (int i = 0; i < 2 * KN; i++) {
        TU_ASSERT_NEAR(fcs[i], cs[i], 0, 1000);
        TU_ASSERT_NEAR(h->durations[h->offsets[rc] + i], cd[i], 1e-3, 200);
    }
    /* parent ids: each child's parent is the parent call that contains it */
    assert_non_null(h->call_ids);
    assert_non_null(h->parent_ids);
    assert_non_null(h->thread_ids);
    for (int i = 0; i < KN; i++) {
        assert_int_equal(h->parent_ids[h->offsets[rp] + i], -1);
        assert_int_equal(h->thread_ids[h->offsets[rp] + i], 0);
    }
    for (int i = 0; i < 2 * KN; i++) {
        int64_t pid = h->parent_ids[h->offsets[rc] + i];
        assert_int_equal(pid, h->call_ids[h->offsets[rp] + i / 2]);
        assert_int_equal(h->thread_ids[h->offsets[rc] + i], 0);
    }
    /* call ids: start order over the whole file, 0..n-1 */
    {
        int64_t all_s[3 * KN], all_id[3 * KN];
        for (int i = 0; i < KN; i++) { all_s[i] = fps[i]; all_id[i] = h->call_ids[h->offsets[rp] + i]; }
        for (int i = 0; i < 2 * KN; i++) { all_s[KN + i] = fcs[i]; all_id[KN + i] = h->call_ids[h->offsets[rc] + i]; }
        for (int a = 0; a < 3 * KN; a++) {
            assert_true(all_id[a] >= 0 && all_id[a] < 3 * KN);
            for (int b = 0; b < 3 * KN; b++)
                if (a != b) {
                    assert_true(all_id[a] != all_id[b]);
                    if (all_s[a] < all_s[b]) assert_true(all_id[a] < all_id[b]);
                }
        }
    }
    TU_CHECK_TREE(h);
    /* exclusive totals and the summary */
    TU_ASSERT_NEAR(h->excl[rp], sp.self_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(h->excl[rc], sc.self_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(h->sum[rp].total, sp.total_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(h->sum[rc].total, sc.total_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(h->sum[rp].minimum, sp.min_ns, 1e-3, 200);
    TU_ASSERT_NEAR(h->sum[rp].maximum, sp.max_ns, 1e-3, 200);
    TU_ASSERT_NEAR(h->sum[rp].mean, sp.mean_ns, 1e-3, 200);
    TU_ASSERT_NEAR(sqrt(h->sum[rp].m2 / (KN - 1)), sqrt(sp.var_ns2), 0.05, 300);
    TU_ASSERT_NEAR(h->sum[rp].first, pd[0], 1e-3, 200);
    TU_ASSERT_NEAR(h->sum[rp].last, pd[KN - 1], 1e-3, 200);
    TU_ASSERT_NEAR(h->sum[rp].start_minimum, ps[0], 0, 1000);
    TU_ASSERT_NEAR(h->sum[rp].end_maximum, ps[KN - 1] + pd[KN - 1], 0, 1000);
    tu_h5_free(h);
    /* metadata */
    int64_t st = tu_h5_attr_i64(path, "/metadata", "start_time_ns", -1);
    int64_t ft = tu_h5_attr_i64(path, "/metadata", "finalize_time_ns", -1);
    assert_true(st > 0 && st <= setup_done && st <= ps[0]);
    assert_true(ft >= before_fin - EPS_NS && ft <= after_fin + EPS_NS);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "pid", -1), getpid());
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "threads", -1), 1);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "misuse_count", -1), 0);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "open_calls", -1), 0);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "dropped_events", -1), 0);
    assert_int_equal(sps_shutdown(), 0);
}

/* ------------------------------------------------------------------------ */
/* sps_region_durations / sps_region_calls                                   */
/* ------------------------------------------------------------------------ */

typedef struct qthr {
    sps_region_t r;
    int n;
} qthr_t;

static void *q_worker(void *arg) {
    qthr_t *q = arg;
    for (int i = 0; i < q->n; i++) {
        sps_begin(q->r);
        tu_spin_ns(20000);
        sps_end(q->r);
    }
    return NULL;
}

static void test_calls_query(void **state) {
    (void)state;
    sps_region_t R = sps_region("core.q");
    /* without a session: nothing */
    assert_int_equal(sps_region_durations(R, NULL, 0), 0);
    int64_t dummy[4];
    sps_stats_t st;
    assert_int_equal(sps_region_stats(R, &st), SPS_ENOSESSION);
    assert_int_equal(sps_setup(NULL), 0);
    R = sps_region("core.q");
    sps_region_t other = sps_region("core.q.other");
    assert_int_equal(sps_region_durations(R, NULL, 0), 0);
    /* 5 calls here, 5 in a thread, 5 here; interleaved other region */
    for (int i = 0; i < 5; i++) {
        sps_begin(R);
        sps_begin(other);
        sps_end(other);
        tu_spin_ns(10000 * (i + 1));
        sps_end(R);
    }
    int64_t ta = tu_now();
    qthr_t q = {R, 5};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, q_worker, &q), 0);
    pthread_join(th, NULL);
    int64_t tb = tu_now();
    for (int i = 0; i < 5; i++) {
        sps_begin(R);
        tu_spin_ns(10000);
        sps_end(R);
    }
    sps_begin(R); /* open: not counted */
    size_t n = sps_region_durations(R, NULL, 0);
    assert_int_equal(n, 15);
    assert_int_equal(sps_region_calls(R, NULL, NULL, 0), 15);
    int64_t s[16], d[16];
    for (int i = 0; i < 16; i++) s[i] = d[i] = -12345;
    assert_int_equal(sps_region_calls(R, s, d, 16), 15);
    assert_int_equal(s[15], -12345);
    assert_int_equal(d[15], -12345);
    for (int i = 1; i < 15; i++) assert_true(s[i] > s[i - 1]); /* start order */
    for (int i = 0; i < 15; i++) {
        int in_thread = s[i] > ta && s[i] < tb;
        assert_int_equal(in_thread, i >= 5 && i < 10);
        assert_true(d[i] >= 0);
    }
    for (int i = 0; i < 5; i++) assert_true(d[i] >= 10000 * (i + 1) - EPS_NS);
    /* values match the stats */
    assert_int_equal(sps_region_stats(R, &st), 0);
    check_stats_vs_durations(&st, d, 15);
    /* cap smaller than the count: full count returned, only cap written */
    int64_t s3[5], d3[5];
    for (int i = 0; i < 5; i++) s3[i] = d3[i] = -7;
    assert_int_equal(sps_region_calls(R, s3, d3, 3), 15);
    assert_int_equal(s3[3], -7);
    assert_int_equal(d3[3], -7);
    assert_memory_equal(s3, s, 3 * sizeof *s);
    assert_memory_equal(d3, d, 3 * sizeof *d);
    assert_int_equal(sps_region_durations(R, dummy, 2), 15);
    assert_memory_equal(dummy, d, 2 * sizeof *d);
    /* starts only */
    int64_t s4[15];
    assert_int_equal(sps_region_calls(R, s4, NULL, 15), 15);
    assert_memory_equal(s4, s, sizeof s4);
    /* the other region: 5 calls */
    assert_int_equal(sps_region_durations(other, NULL, 0), 5);
    /* unknown ids */
    assert_int_equal(sps_region_durations(SPS_REGION_INVALID, dummy, 4), 0);
    assert_int_equal(sps_region_durations(sps_region_count() + 100, dummy, 4), 0);
    assert_int_equal(sps_region_stats(sps_region_count() + 100, &st), SPS_ENOREGION);
    assert_int_equal(sps_region_stats(SPS_REGION_INVALID, &st), SPS_ENOREGION);
    assert_int_equal(sps_region_stats(R, NULL), SPS_EINVAL);
    sps_end(R);
    assert_int_equal(sps_region_durations(R, NULL, 0), 16);
    /* a finalize starts a new period for the per-call queries ... */
    assert_int_equal(sps_finalize_to(NULL), 0);
    assert_int_equal(sps_region_durations(R, NULL, 0), 0);
    sps_begin(R);
    sps_end(R);
    assert_int_equal(sps_region_durations(R, NULL, 0), 1);
    /* ... but not for the statistics */
    assert_int_equal(sps_region_stats(R, &st), 0);
    assert_int_equal(st.num_calls, 17);
    sps_shutdown();
    assert_int_equal(sps_region_durations(R, NULL, 0), 0);
}

/* ------------------------------------------------------------------------ */
/* Aggregate mode                                                            */
/* ------------------------------------------------------------------------ */

static void *agg_worker(void *arg) {
    sps_region_t r = *(sps_region_t *)arg;
    for (int i = 0; i < 10000; i++) {
        sps_begin(r);
        sps_end(r);
    }
    return NULL;
}

/* Aggregate mode as a process's first session: the analyzer never ran, so
 * its arrays had no room for the regions, and the file's index came out
 * empty (issue 12: Python's setup(aggregation_mode=True)).  Must run first:
 * an earlier events session leaves room behind that hides the bug. */
static void test_aggregate_first_session(void **state) {
    (void)state;
    const char *path = tu_path("core_aggregate_first.h5");
    unlink(path);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t A = sps_region("first.outer"), B = sps_region("first.inner");
    for (int i = 0; i < 5; i++) {
        sps_begin(A);
        for (int j = 0; j < 3; j++) sps_begin(B), sps_end(B);
        sps_end(A);
    }
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_string_equal(h->layout, "aggregate");
    long ra = tu_h5_row(h, "first.outer"), rb = tu_h5_row(h, "first.inner");
    assert_true(ra >= 0 && rb >= 0);
    assert_int_equal(h->agg_counts[ra], 5);
    assert_int_equal(h->agg_counts[rb], 15);
    tu_h5_free(h);
    sps_shutdown();
    unlink(path);
}

static void test_aggregate(void **state) {
    (void)state;
    const char *path = tu_path("core_aggregate.h5");
    unlink(path);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t P = sps_region("agg.parent"), C = sps_region("agg.child");
    sps_region_t T = sps_region("agg.threads");
    static known_t k;
    run_known(P, C, &k);
    sps_stats_t sp, sc;
    assert_int_equal(sps_region_stats(P, &sp), 0);
    assert_int_equal(sps_region_stats(C, &sc), 0);
    assert_int_equal(sp.num_calls, KN);
    assert_int_equal(sc.num_calls, 2 * KN);
    int64_t p_hi = 0;
    for (int i = 0; i < KN; i++) p_hi += k.p_t1[i] - k.p_t0[i];
    assert_true(sp.total_ns >= KN * 2000000 - KN * EPS_NS);
    assert_true(sp.total_ns <= p_hi + KN * EPS_NS);
    assert_true(sp.min_ns >= 2000000 - EPS_NS);
    assert_true(sc.min_ns >= 500000 - EPS_NS);
    assert_true(sp.min_ns <= sp.mean_ns + 1 && sp.mean_ns <= sp.max_ns + 1);
    TU_ASSERT_NEAR(sp.mean_ns * KN, sp.total_ns, 1e-6, 2);
    TU_ASSERT_NEAR(sp.self_ns, sp.total_ns - sc.total_ns, 0, 4);
    TU_ASSERT_NEAR(sc.self_ns, sc.total_ns, 0, 4);
    /* the variance is bounded by the spread */
    double spread = (double)(sp.max_ns - sp.min_ns);
    assert_true(sp.var_ns2 >= 0 && sp.var_ns2 <= spread * spread + 1);
    /* no per-call events in aggregate mode */
    assert_int_equal(sps_region_durations(P, NULL, 0), 0);
    /* threads: counts merge exactly */
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, agg_worker, &T), 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    sps_stats_t stt;
    assert_int_equal(sps_region_stats(T, &stt), 0);
    assert_int_equal(stt.num_calls, 40000);
    assert_true(stt.min_ns >= 0 && stt.min_ns <= stt.max_ns);
    /* misuse is counted in aggregate mode too */
    uint64_t m0 = sps_misuse_count();
    sps_end(P);
    assert_int_equal(sps_misuse_count(), m0 + 1);
    assert_int_equal(sps_finalize(), 0);

    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_string_equal(h->layout, "aggregate");
    assert_int_equal(h->nev, 0);
    assert_non_null(h->agg_counts);
    long rp = tu_h5_row(h, "agg.parent"), rc = tu_h5_row(h, "agg.child");
    long rt = tu_h5_row(h, "agg.threads");
    assert_true(rp >= 0 && rc >= 0 && rt >= 0);
    assert_int_equal(h->agg_counts[rp], KN);
    assert_int_equal(h->agg_counts[rc], 2 * KN);
    assert_int_equal(h->agg_counts[rt], 40000);
    assert_int_equal(h->counts[rp], 0);
    TU_ASSERT_NEAR(h->agg_totals[rp], sp.total_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(h->agg_excl[rp], sp.self_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(h->sum[rp].total, sp.total_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(h->sum[rp].minimum, sp.min_ns, 1e-3, 200);
    TU_ASSERT_NEAR(h->sum[rp].maximum, sp.max_ns, 1e-3, 200);
    tu_h5_free(h);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "threads", -1), 5);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Checkpoints: repeated finalize                                            */
/* ------------------------------------------------------------------------ */

static void test_checkpoints(void **state) {
    (void)state;
    const char *p1 = tu_path("core_cp1.h5"), *p2 = tu_path("core_cp2.h5");
    const char *p3 = tu_path("core_cp3.h5");
    unlink(p1);
    unlink(p2);
    unlink(p3);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = p1;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t A = sps_region("cp.a"), O = sps_region("cp.open");
    sps_region_t K = sps_region("cp.kid");
    for (int i = 0; i < 10; i++) {
        sps_begin(A);
        sps_end(A);
    }
    int64_t o0 = tu_now();
    sps_begin(O);
    int64_t ob = tu_now();
    for (int i = 0; i < 3; i++) {
        sps_begin(K);
        tu_spin_ns(100000);
        sps_end(K);
    }
    int64_t f1 = tu_now();
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_set_file_path(p2), 0);
    /* period 2 */
    assert_int_equal(sps_region_durations(A, NULL, 0), 0);
    assert_int_equal(sps_region_durations(K, NULL, 0), 0);
    for (int i = 0; i < 5; i++) {
        sps_begin(A);
        sps_end(A);
    }
    for (int i = 0; i < 2; i++) {
        sps_begin(K);
        tu_spin_ns(100000);
        sps_end(K);
    }
    tu_spin_ns(200000);
    sps_end(O);
    int64_t o1 = tu_now();
    sps_stats_t st;
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 15); /* keeps counting across finalize */
    assert_int_equal(sps_region_stats(K, &st), 0);
    assert_int_equal(st.num_calls, 5);
    sps_stats_t so, sk = st;
    assert_int_equal(sps_region_stats(O, &so), 0);
    assert_int_equal(so.num_calls, 1);
    assert_true(so.total_ns >= 500000 + 200000 - EPS_NS);
    assert_true(so.total_ns <= o1 - o0 + EPS_NS);
    /* O's direct children: the 5 kids and period 2's 5 calls of A */
    int64_t da[5], a2 = 0;
    assert_int_equal(sps_region_durations(A, da, 5), 5);
    for (int i = 0; i < 5; i++) a2 += da[i];
    TU_ASSERT_NEAR(so.self_ns, so.total_ns - sk.total_ns - a2, 0, 20);
    /* the open call's duration spans the checkpoint */
    int64_t os[1], od[1];
    assert_int_equal(sps_region_calls(O, os, od, 1), 1);
    assert_true(os[0] >= o0 - EPS_NS && os[0] <= ob + EPS_NS);
    assert_true(os[0] < f1 && os[0] + od[0] > f1);
    assert_int_equal(sps_finalize(), 0);
    /* period 3: nothing happens */
    assert_int_equal(sps_finalize_to(p3), 0);
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 15);

    tu_h5_t *h1 = tu_h5_load(p1), *h2 = tu_h5_load(p2), *h3 = tu_h5_load(p3);
    assert_non_null(h1);
    assert_non_null(h2);
    assert_non_null(h3);
    assert_true(h1->ok && h2->ok && h3->ok);
    assert_int_equal(tu_h5_count(h1, "cp.a"), 10);
    assert_int_equal(tu_h5_count(h1, "cp.kid"), 3);
    assert_int_equal(tu_h5_count(h1, "cp.open"), 0);
    assert_int_equal(tu_h5_total_count(h1), 13);
    assert_int_equal(tu_h5_count(h2, "cp.a"), 5);
    assert_int_equal(tu_h5_count(h2, "cp.kid"), 2);
    assert_int_equal(tu_h5_count(h2, "cp.open"), 1);
    assert_int_equal(tu_h5_total_count(h2), 8);
    assert_int_equal(tu_h5_total_count(h3), 0);
    assert_int_equal(h3->nev, 0);
    assert_int_equal(tu_h5_attr_i64(p1, "/metadata", "open_calls", -1), 1);
    assert_int_equal(tu_h5_attr_i64(p2, "/metadata", "open_calls", -1), 0);
    /* the open call, in file 2, with its full duration and its children */
    long ro = tu_h5_row(h2, "cp.open"), rk = tu_h5_row(h2, "cp.kid");
    int64_t s_o;
    tu_h5_starts(h2, ro, &s_o);
    TU_ASSERT_NEAR(s_o, os[0], 0, 1000);
    TU_ASSERT_NEAR(h2->durations[h2->offsets[ro]], od[0], 1e-3, 1000);
    int64_t oid = h2->call_ids[h2->offsets[ro]];
    assert_int_equal(h2->parent_ids[h2->offsets[ro]], -1);
    for (int i = 0; i < 2; i++)
        assert_int_equal(h2->parent_ids[h2->offsets[rk] + i], oid);
    TU_CHECK_TREE(h1);
    TU_CHECK_TREE(h2);
    /* the periods do not overlap and cover the session */
    int64_t e1 = tu_h5_attr_i64(p1, "/metadata", "finalize_time_ns", -1);
    int64_t s2 = tu_h5_attr_i64(p2, "/metadata", "start_time_ns", -1);
    assert_true(e1 > 0 && s2 >= e1 - 1000);
    assert_true(tu_h5_attr_i64(p1, "/metadata", "start_time_ns", -1) < e1);
    tu_h5_free(h1);
    tu_h5_free(h2);
    tu_h5_free(h3);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* SPS_REGION / SPS_FUNCTION                                                 */
/* ------------------------------------------------------------------------ */

static int64_t g_inside_end;

static void scoped_function(void) {
    SPS_FUNCTION();
    tu_spin_ns(100000);
}

static void nested_scopes(void) {
    SPS_REGION("macro.outer");
    tu_spin_ns(50000);
    {
        SPS_REGION("macro.inner");
        tu_spin_ns(100000);
        SPS_REGION("macro.inner2"); /* two in one block: closed in reverse */
        tu_spin_ns(50000);
    }
    tu_spin_ns(50000);
}

static void test_macros(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    uint64_t m0 = sps_misuse_count();
    int64_t t0 = tu_now();
    for (int i = 0; i < 4; i++) {
        SPS_REGION("macro.block");
        tu_spin_ns(200000);
        g_inside_end = tu_now();
    }
    tu_spin_ns(1000000); /* outside the block: not counted */
    int64_t t1 = tu_now();
    for (int i = 0; i < 3; i++) scoped_function();
    nested_scopes();
    sps_region_t B = sps_region("macro.block");
    sps_stats_t st;
    assert_int_equal(sps_region_stats(B, &st), 0);
    assert_int_equal(st.num_calls, 4);
    assert_true(st.min_ns >= 200000 - EPS_NS);
    int64_t d[4], s[4];
    assert_int_equal(sps_region_calls(B, s, d, 4), 4);
    assert_true(s[0] >= t0 - EPS_NS);
    /* the last call ended with its block, well before the 1 ms spin ended */
    assert_true(s[3] + d[3] >= g_inside_end - EPS_NS);
    assert_true(s[3] + d[3] < t1 - 500000);
    /* SPS_FUNCTION is named after the function */
    sps_region_t F = sps_region("scoped_function");
    assert_string_equal(sps_region_name(F), "scoped_function");
    assert_int_equal(sps_region_stats(F, &st), 0);
    assert_int_equal(st.num_calls, 3);
    assert_true(st.min_ns >= 100000 - EPS_NS);
    /* nesting by blocks */
    sps_stats_t so, si, si2;
    assert_int_equal(sps_region_stats(sps_region("macro.outer"), &so), 0);
    assert_int_equal(sps_region_stats(sps_region("macro.inner"), &si), 0);
    assert_int_equal(sps_region_stats(sps_region("macro.inner2"), &si2), 0);
    assert_int_equal(so.num_calls, 1);
    assert_int_equal(si.num_calls, 1);
    assert_int_equal(si2.num_calls, 1);
    assert_true(si2.total_ns >= 50000 - EPS_NS && si2.total_ns < si.total_ns);
    TU_ASSERT_NEAR(si.self_ns, si.total_ns - si2.total_ns, 0, 4);
    TU_ASSERT_NEAR(so.self_ns, so.total_ns - si.total_ns, 0, 4);
    assert_true(so.self_ns >= 100000 - EPS_NS);
    assert_int_equal(sps_misuse_count(), m0); /* scopes nest cleanly */
    /* the cached id survives a new session */
    sps_shutdown();
    assert_int_equal(sps_setup(NULL), 0);
    for (int i = 0; i < 2; i++) scoped_function();
    assert_int_equal(sps_region_stats(F, &st), 0);
    assert_int_equal(st.num_calls, 2);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Registry and session queries                                              */
/* ------------------------------------------------------------------------ */

static int has_id(const sps_region_t *v, size_t n, sps_region_t r) {
    for (size_t i = 0; i < n; i++)
        if (v[i] == r) return 1;
    return 0;
}

static void test_registry(void **state) {
    (void)state;
    sps_region_t pre = sps_region("reg.before_setup");
    assert_true(pre != SPS_REGION_INVALID);
    assert_int_equal(sps_region("reg.before_setup"), pre);
    assert_string_equal(sps_region_name(pre), "reg.before_setup");
    assert_true(pre < sps_region_count());
    assert_null(sps_region_name(sps_region_count() + 5));
    assert_int_equal(sps_is_active(), 0);
    assert_int_equal(sps_setup(NULL), 0);
    assert_int_equal(sps_is_active(), 1);
    uint32_t c0 = sps_region_count();
    sps_region_t a = sps_region("reg.a"), b = sps_region("reg.b");
    assert_true(a != b);
    assert_int_equal(sps_region_count(), c0 + 2);
    assert_int_equal(sps_region("reg.a"), a);
    assert_int_equal(sps_region_count(), c0 + 2);
    sps_begin(b);
    sps_end(b);
    sps_begin(pre);
    sps_end(pre);
    sps_region_t v[4096];
    size_t nreg = sps_regions_registered(v, 4096);
    assert_true(nreg <= 4096);
    assert_true(has_id(v, nreg, a) && has_id(v, nreg, b) && has_id(v, nreg, pre));
    size_t nrec = sps_regions_recorded(v, 4096);
    assert_int_equal(nrec, 2);
    assert_true(has_id(v, nrec, b) && has_id(v, nrec, pre) && !has_id(v, nrec, a));
    assert_int_equal(sps_regions_recorded(NULL, 0), 2);
    assert_int_equal(sps_regions_registered(v, 1), nreg);
    /* sps_now_ns is CLOCK_MONOTONIC */
    int64_t t0 = tu_now();
    int64_t n = sps_now_ns();
    int64_t t1 = tu_now();
    assert_true(n >= t0 && n <= t1);
    /* the summary names the regions */
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(sps_print_summary(fp), 0);
    fflush(fp);
    rewind(fp);
    char buf[8192];
    size_t got = fread(buf, 1, sizeof buf - 1, fp);
    buf[got] = 0;
    fclose(fp);
    assert_non_null(strstr(buf, "reg.b"));
    assert_non_null(strstr(buf, "reg.before_setup"));
    /* after shutdown: nothing is registered, stats are gone, ids stay */
    sps_shutdown();
    assert_int_equal(sps_is_active(), 0);
    assert_int_equal(sps_regions_registered(v, 4096), 0);
    assert_int_equal(sps_print_summary(NULL), SPS_ENOSESSION);
    assert_int_equal(sps_setup(NULL), 0);
    assert_int_equal(sps_regions_registered(v, 4096), 0);
    assert_int_equal(sps_regions_recorded(v, 4096), 0);
    assert_int_equal(sps_region("reg.a"), a);
    assert_int_equal(sps_regions_registered(v, 4096), 1);
    assert_int_equal(v[0], a);
    sps_shutdown();
}

/* A session lists and writes its regions in the order it registered them
 * (scope-profiler's order), not in the process-wide order of the ids an
 * earlier session handed out. */
static void test_region_order(void **state) {
    (void)state;
    char path[] = "/tmp/sps-order-XXXXXX.h5";
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t late = sps_region("order.late"); /* the lower id */
    sps_region_t early = sps_region("order.early");
    assert_true(late < early);
    sps_shutdown();
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_region("order.early"), early);
    assert_int_equal(sps_region("order.late"), late);
    sps_region_t v[8];
    assert_int_equal(sps_regions_registered(v, 8), 2);
    assert_int_equal(v[0], early);
    assert_int_equal(v[1], late);
    assert_int_equal(sps_regions_registered(v, 1), 2); /* a cut keeps the order */
    assert_int_equal(v[0], early);
    sps_begin(late), sps_end(late), sps_begin(early), sps_end(early);
    assert_int_equal(sps_finalize(), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(tu_h5_name(h, "order.early") >= 0);
    assert_true(tu_h5_name(h, "order.early") < tu_h5_name(h, "order.late"));
    tu_h5_free(h);
    sps_shutdown();
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TU_TEST(test_aggregate_first_session), /* first: see there */
        TU_TEST(test_known_timing), TU_TEST(test_calls_query),
        TU_TEST(test_aggregate),    TU_TEST(test_checkpoints),
        TU_TEST(test_macros),       TU_TEST(test_registry), TU_TEST(test_region_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
