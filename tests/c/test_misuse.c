/* test_misuse.c -- what a program can get wrong, and what spanscope does
 * about it: unmatched and mismatched ends, calls without a session, bad
 * configurations, unwritable paths, many and deep regions, odd names, error
 * codes.
 *
 * Files left in $SPS_TEST_TMP for tests/python/test_c_h5.py:
 *   misuse_epath.h5, deep.h5, many_names.h5, names.h5 (with a non-UTF-8
 *   name), nonutf8.h5 */
#include "testutil.h"
#include "tu_core.h"
#include "tu_h5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Nesting errors                                                            */
/* ------------------------------------------------------------------------ */

static void test_end_without_begin(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t A = sps_region("mis.lonely");
    assert_int_equal(sps_misuse_count(), 0);
    sps_end(A);
    assert_int_equal(sps_misuse_count(), 1);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 0);
    assert_int_equal(st.min_ns, 0);
    /* recording goes on normally afterwards */
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 1);
    assert_int_equal(sps_misuse_count(), 1);
    sps_end(A); /* again: its begin was already closed */
    assert_int_equal(sps_misuse_count(), 2);
    sps_shutdown();
    /* a new session starts with no misuse */
    assert_int_equal(sps_setup(NULL), 0);
    assert_int_equal(sps_misuse_count(), 0);
    sps_shutdown();
}

static void test_mismatched_nesting(void **state) {
    (void)state;
    const char *path = tu_path("misuse_nesting.h5");
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t A = sps_region("mis.A"), B = sps_region("mis.B");
    sps_region_t C = sps_region("mis.C");
    sps_begin(A);
    tu_spin_ns(100000);
    sps_begin(B);
    tu_spin_ns(100000);
    sps_begin(C);
    tu_spin_ns(100000);
    sps_end(A); /* closes C and B too, at A's end: 2 repairs */
    int64_t after = tu_now();
    tu_spin_ns(100000);
    assert_int_equal(sps_misuse_count(), 2);
    sps_end(B); /* its call was already closed: ignored */
    sps_end(C);
    assert_int_equal(sps_misuse_count(), 4);
    sps_stats_t sa, sb, sc;
    assert_int_equal(sps_region_stats(A, &sa), 0);
    assert_int_equal(sps_region_stats(B, &sb), 0);
    assert_int_equal(sps_region_stats(C, &sc), 0);
    assert_int_equal(sa.num_calls, 1);
    assert_int_equal(sb.num_calls, 1);
    assert_int_equal(sc.num_calls, 1);
    int64_t as, ad, bs, bd, cs, cd;
    assert_int_equal(sps_region_calls(A, &as, &ad, 1), 1);
    assert_int_equal(sps_region_calls(B, &bs, &bd, 1), 1);
    assert_int_equal(sps_region_calls(C, &cs, &cd, 1), 1);
    /* B and C end exactly when A ends, not at their own (ignored) ends */
    assert_int_equal(bs + bd, as + ad);
    assert_int_equal(cs + cd, as + ad);
    assert_true(as + ad <= after + 50000);
    assert_true(as < bs && bs < cs);
    /* nesting: A > B > C */
    TU_ASSERT_NEAR(sa.self_ns, sa.total_ns - sb.total_ns, 0, 4);
    TU_ASSERT_NEAR(sb.self_ns, sb.total_ns - sc.total_ns, 0, 4);
    TU_ASSERT_NEAR(sc.self_ns, sc.total_ns, 0, 4);
    /* end of an outer region while the same region is open twice:
     * the innermost one is closed */
    sps_begin(A);
    sps_begin(A);
    sps_end(A);
    sps_end(A);
    assert_int_equal(sps_misuse_count(), 4);
    assert_int_equal(sps_region_stats(A, &sa), 0);
    assert_int_equal(sa.num_calls, 3);
    /* the file agrees: B's parent is A, C's parent is B */
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    TU_CHECK_TREE(h);
    long ra = tu_h5_row(h, "mis.A"), rb = tu_h5_row(h, "mis.B");
    long rc = tu_h5_row(h, "mis.C");
    assert_int_equal(h->counts[rb], 1);
    assert_int_equal(h->parent_ids[h->offsets[rb]], h->call_ids[h->offsets[ra]]);
    assert_int_equal(h->parent_ids[h->offsets[rc]], h->call_ids[h->offsets[rb]]);
    tu_h5_free(h);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "misuse_count", -1), 4);
    unlink(path);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Sessions                                                                  */
/* ------------------------------------------------------------------------ */

static void test_no_session(void **state) {
    (void)state;
    sps_shutdown();
    assert_int_equal(sps_shutdown(), 0); /* safe without a session */
    assert_int_equal(sps_is_active(), 0);
    assert_int_equal(sps_finalize(), SPS_ENOSESSION);
    assert_int_equal(sps_finalize_to(tu_path("never.h5")), SPS_ENOSESSION);
    assert_int_not_equal(access(tu_path("never.h5"), F_OK), 0);
    assert_int_equal(sps_set_file_path("x.h5"), SPS_ENOSESSION);
    sps_region_t A = sps_region("mis.nosession");
    sps_begin(A); /* one branch, nothing recorded */
    sps_end(A);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(A, &st), SPS_ENOSESSION);
    assert_int_equal(st.num_calls, 0);
    assert_int_equal(sps_region_durations(A, NULL, 0), 0);
    assert_int_equal(sps_regions_recorded(NULL, 0), 0);
    assert_int_equal(sps_dropped(), 0);
    assert_int_equal(sps_print_summary(NULL), SPS_ENOSESSION);
    /* calls made before setup are not in the session */
    assert_int_equal(sps_setup(NULL), 0);
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 0);
    sps_shutdown();
}

static void test_setup_twice(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t A = sps_region("mis.twice");
    sps_begin(A);
    sps_end(A);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = tu_path("twice.h5");
    assert_int_equal(sps_setup(&cfg), SPS_EACTIVE);
    assert_int_equal(sps_setup(NULL), SPS_EACTIVE);
    /* the first session goes on untouched */
    assert_int_equal(sps_is_active(), 1);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 1);
    /* after a finalize the session is still active: setup still refused */
    assert_int_equal(sps_finalize_to(NULL), 0);
    assert_int_equal(sps_setup(NULL), SPS_EACTIVE);
    assert_int_equal(sps_finalize(), 0); /* no file configured: fine */
    sps_shutdown();
}

static void test_setup_invalid(void **state) {
    (void)state;
    static const struct {
        const char *what;
        size_t chunk, mem;
        int overflow, rank, size;
        long thr;
    } bad[] = {
        {"chunk below 4 KiB", 2048, 0, 0, 0, 1, 0},
        {"chunk not a power of two", 3 * 4096, 0, 0, 0, 1, 0},
        {"chunk above 16 MiB", 32u << 20, 0, 0, 0, 1, 0},
        {"memory below 2 chunks", 4096, 4096, 0, 0, 1, 0},
        {"memory below 2 default chunks", 0, 65536, 0, 0, 1, 0},
        {"overflow policy", 0, 0, 7, 0, 1, 0},
        {"negative overflow policy", 0, 0, -1, 0, 1, 0},
        {"negative rank", 0, 0, 0, -1, 1, 0},
        {"size 0", 0, 0, 0, 0, 0, 0},
        {"rank >= size", 0, 0, 0, 2, 2, 0},
        {"compress threshold", 0, 0, 0, 0, 1, -2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.chunk_size = bad[i].chunk;
        cfg.memory_limit = bad[i].mem;
        cfg.overflow = (sps_overflow_t)bad[i].overflow;
        cfg.rank = bad[i].rank;
        cfg.size = bad[i].size;
        cfg.compress_threshold = bad[i].thr;
        int rc = sps_setup(&cfg);
        if (rc != SPS_EINVAL) fail_msg("%s: sps_setup gave %s", bad[i].what, sps_err_name(rc));
        assert_int_equal(sps_is_active(), 0);
    }
    /* the limits themselves are fine */
    sps_config_t ok = SPS_CONFIG_INIT;
    ok.chunk_size = 4096;
    ok.memory_limit = 8192;
    ok.rank = 3;
    ok.size = 4;
    ok.compress_threshold = -1;
    assert_int_equal(sps_setup(&ok), 0);
    sps_shutdown();
    ok.chunk_size = 0;
    ok.memory_limit = 0;
    ok.rank = 0;
    ok.size = 1;
    assert_int_equal(sps_setup(&ok), 0);
    sps_shutdown();
}

/* An unwritable path keeps the recording: the next finalize with a good
 * path writes both periods. */
static void test_unwritable_path(void **state) {
    (void)state;
    const char *good = tu_path("misuse_epath.h5");
    unlink(good);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = "/nonexistent-dir/x.h5";
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t A = sps_region("epath.a"), O = sps_region("epath.open");
    for (int i = 0; i < 10; i++) {
        sps_begin(A);
        sps_end(A);
    }
    sps_begin(O); /* open across both finalizes */
    assert_int_equal(sps_finalize(), SPS_EPATH);
    assert_int_not_equal(access("/nonexistent-dir/x.h5", F_OK), 0);
    assert_int_equal(sps_finalize_to("/nonexistent-dir/y.h5"), SPS_EPATH);
    for (int i = 0; i < 5; i++) {
        sps_begin(A);
        sps_end(A);
    }
    /* the failed periods are still there for the queries */
    assert_int_equal(sps_region_durations(A, NULL, 0), 15);
    sps_end(O);
    assert_int_equal(sps_finalize_to(good), 0);
    tu_h5_t *h = tu_h5_load(good);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "epath.a"), 15);
    assert_int_equal(tu_h5_count(h, "epath.open"), 1);
    TU_CHECK_TREE(h);
    long ro = tu_h5_row(h, "epath.open"), ra = tu_h5_row(h, "epath.a");
    /* the 5 later calls of A lie inside the open call */
    int n_inside = 0;
    for (uint64_t e = 0; e < h->counts[ra]; e++)
        if (h->parent_ids[h->offsets[ra] + e] == h->call_ids[h->offsets[ro]]) n_inside++;
    assert_int_equal(n_inside, 5);
    tu_h5_free(h);
    /* nothing left for the next one */
    assert_int_equal(sps_region_durations(A, NULL, 0), 0);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 15);
    /* the same through sps_set_file_path */
    for (int i = 0; i < 3; i++) {
        sps_begin(A);
        sps_end(A);
    }
    assert_int_equal(sps_set_file_path("/nonexistent-dir/z.h5"), 0);
    assert_int_equal(sps_finalize(), SPS_EPATH);
    const char *good2 = tu_path("misuse_epath2.h5");
    assert_int_equal(sps_set_file_path(good2), 0);
    assert_int_equal(sps_finalize(), 0);
    h = tu_h5_load(good2);
    assert_non_null(h);
    assert_int_equal(tu_h5_count(h, "epath.a"), 3);
    assert_int_equal(tu_h5_count(h, "epath.open"), 0);
    tu_h5_free(h);
    unlink(good2);
    /* a directory as the path */
    assert_int_equal(sps_finalize_to(getenv("SPS_TEST_TMP") ? getenv("SPS_TEST_TMP") : "/tmp"),
                     SPS_EPATH);
    sps_shutdown();
}

static void test_shutdown_fresh(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t A = sps_region("fresh.a");
    for (int i = 0; i < 10; i++) {
        sps_begin(A);
        sps_end(A);
    }
    sps_begin(A); /* left open */
    sps_end(SPS_REGION_INVALID); /* some misuse */
    assert_true(sps_misuse_count() > 0);
    assert_int_equal(sps_shutdown(), 0);
    assert_int_equal(sps_is_active(), 0);
    assert_int_equal(sps_setup(NULL), 0);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 0);
    assert_int_equal(st.total_ns, 0);
    assert_int_equal(sps_misuse_count(), 0);
    assert_int_equal(sps_region_durations(A, NULL, 0), 0);
    assert_int_equal(sps_regions_recorded(NULL, 0), 0);
    /* the open call of the old session is gone: this end is unmatched */
    sps_end(A);
    assert_int_equal(sps_misuse_count(), 1);
    sps_begin(A);
    sps_end(A);
    assert_int_equal(sps_region_stats(A, &st), 0);
    assert_int_equal(st.num_calls, 1);
    assert_int_equal(sps_region("fresh.a"), A); /* ids survive */
    const char *p = tu_path("fresh.h5");
    assert_int_equal(sps_finalize_to(p), 0);
    tu_h5_t *h = tu_h5_load(p);
    assert_non_null(h);
    assert_int_equal(tu_h5_count(h, "fresh.a"), 1);
    assert_int_equal(h->nev, 1);
    tu_h5_free(h);
    unlink(p);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Many and deep regions                                                     */
/* ------------------------------------------------------------------------ */

#define MANY 100000

static void test_many_names(void **state) {
    (void)state;
    const char *path = tu_path("many_names.h5");
    unlink(path);
    assert_int_equal(sps_setup(NULL), 0);
    uint32_t c0 = sps_region_count();
    sps_region_t *ids = malloc(MANY * sizeof *ids);
    char name[64];
    for (int i = 0; i < MANY; i++) {
        snprintf(name, sizeof name, "many.%06d", i);
        ids[i] = sps_region(name);
        assert_true(ids[i] != SPS_REGION_INVALID);
        sps_begin(ids[i]);
        sps_end(ids[i]);
    }
    assert_int_equal(sps_region_count(), c0 + MANY);
    for (int i = 0; i < MANY; i += 7) {
        snprintf(name, sizeof name, "many.%06d", i);
        assert_int_equal(sps_region(name), ids[i]);
        assert_string_equal(sps_region_name(ids[i]), name);
    }
    assert_int_equal(sps_region_count(), c0 + MANY);
    for (int i = 1; i < MANY; i++) assert_true(ids[i] != ids[i - 1]);
    assert_int_equal(sps_regions_recorded(NULL, 0), MANY);
    sps_stats_t st;
    assert_int_equal(sps_region_stats(ids[MANY - 1], &st), 0);
    assert_int_equal(st.num_calls, 1);
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(h->nrows, MANY);
    assert_int_equal(h->nev, MANY);
    assert_true(h->nnames >= MANY);
    /* every row's name is one of ours, each exactly once */
    char *seen = calloc(MANY, 1);
    for (size_t r = 0; r < h->nrows; r++) {
        const char *n = h->names[h->region_ids[r]];
        assert_int_equal(strncmp(n, "many.", 5), 0);
        int k = atoi(n + 5);
        assert_true(k >= 0 && k < MANY);
        assert_int_equal(seen[k], 0);
        seen[k] = 1;
        assert_int_equal(h->counts[r], 1);
    }
    free(seen);
    TU_CHECK_TREE(h);
    tu_h5_free(h);
    free(ids);
    sps_shutdown();
}

#define DEEP 10000

static void test_deep_nesting(void **state) {
    (void)state;
    const char *path = tu_path("deep.h5");
    unlink(path);
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t R = sps_region("deep.r"), L = sps_region("deep.leaf");
    for (int i = 0; i < DEEP; i++) sps_begin(R);
    sps_begin(L);
    tu_spin_ns(10000);
    sps_end(L);
    for (int i = 0; i < DEEP; i++) sps_end(R);
    assert_int_equal(sps_misuse_count(), 0);
    sps_stats_t sr, sl;
    assert_int_equal(sps_region_stats(R, &sr), 0);
    assert_int_equal(sps_region_stats(L, &sl), 0);
    assert_int_equal(sr.num_calls, DEEP);
    assert_int_equal(sl.num_calls, 1);
    /* self time: every level's self is tiny; in all, total of the outermost
     * minus the leaf */
    int64_t d[DEEP];
    assert_int_equal(sps_region_durations(R, d, DEEP), DEEP);
    /* outer calls first: a later start never has a longer duration (calls
     * with the same start, at the clock's resolution, may come in any
     * order) */
    int64_t s[DEEP];
    assert_int_equal(sps_region_calls(R, s, NULL, DEEP), DEEP);
    for (int i = 1; i < DEEP; i++) assert_true(s[i] >= s[i - 1]);
    for (int i = 0, g0 = 0; i < DEEP;) {
        int g1 = i;
        while (g1 < DEEP && s[g1] == s[i]) g1++;
        if (g0 < i) { /* previous group g0..i-1 vs this one i..g1-1 */
            int64_t mn = INT64_MAX, mx = INT64_MIN;
            for (int k = g0; k < i; k++) mn = d[k] < mn ? d[k] : mn;
            for (int k = i; k < g1; k++) mx = d[k] > mx ? d[k] : mx;
            assert_true(mx <= mn);
        }
        g0 = i;
        i = g1;
    }
    TU_ASSERT_NEAR(sr.self_ns, d[0] - sl.total_ns, 1e-3, 1000);
    TU_ASSERT_NEAR(sr.max_ns, d[0], 1e-3, 200);
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    TU_CHECK_TREE(h);
    long rr = tu_h5_row(h, "deep.r"), rl = tu_h5_row(h, "deep.leaf");
    assert_int_equal(h->counts[rr], DEEP);
    assert_int_equal(h->counts[rl], 1);
    /* call k of R (start order) is depth k: its parent is call k-1 */
    uint64_t o = h->offsets[rr];
    assert_int_equal(h->parent_ids[o], -1);
    for (int k = 1; k < DEEP; k++)
        assert_int_equal(h->parent_ids[o + k], h->call_ids[o + k - 1]);
    assert_int_equal(h->parent_ids[h->offsets[rl]], h->call_ids[o + DEEP - 1]);
    /* durations in the file (some written late, after their rows) */
    for (int k = 0; k < DEEP; k++) {
        assert_true(h->durations[o + k] > 0);
        TU_ASSERT_NEAR(h->durations[o + k], d[k], 1e-3, 200);
        if (k) assert_true(h->durations[o + k] <= h->durations[o + k - 1]);
    }
    TU_ASSERT_NEAR(h->excl[rr], sr.self_ns, 1e-3, 1000);
    tu_h5_free(h);
    sps_shutdown();
}

/* ------------------------------------------------------------------------ */
/* Names                                                                     */
/* ------------------------------------------------------------------------ */

/* valid UTF-8? (strict: no overlongs, no surrogates, <= U+10FFFF) */
static int utf8_valid(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] <= 0xDF ? 2
                 : p[0] >= 0xE0 && p[0] <= 0xEF ? 3 : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : 0;
        if (!n) return 0;
        for (size_t i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80) return 0;
        if (n == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0))) return 0;
        if (n == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))) return 0;
        p += n;
    }
    return 1;
}

static void test_names(void **state) {
    (void)state;
    const char *path = tu_path("names.h5");
    unlink(path);
    assert_int_equal(sps_setup(NULL), 0);
    /* NULL: the invalid region; its calls are misuse */
    assert_int_equal(sps_region(NULL), SPS_REGION_INVALID);
    uint64_t m0 = sps_misuse_count();
    sps_begin(SPS_REGION_INVALID);
    sps_end(SPS_REGION_INVALID);
    assert_int_equal(sps_misuse_count(), m0 + 2);
    /* an id never handed out: misuse too */
    sps_begin(sps_region_count() + 1000);
    sps_end(sps_region_count() + 1000);
    assert_int_equal(sps_misuse_count(), m0 + 4);
    /* empty */
    sps_region_t E = sps_region("");
    assert_true(E != SPS_REGION_INVALID);
    assert_int_equal(sps_region(""), E);
    assert_string_equal(sps_region_name(E), "(empty)");
    assert_true(sps_region("(empty)") != E); /* a different region */
    /* very long: cut at 4096 bytes */
    char *big = malloc(100001);
    memset(big, 'x', 100000);
    big[100000] = 0;
    sps_region_t L = sps_region(big);
    assert_true(L != SPS_REGION_INVALID);
    assert_int_equal(strlen(sps_region_name(L)), 4096);
    assert_int_equal(strncmp(sps_region_name(L), big, 4096), 0);
    big[4096] = 0;
    assert_int_equal(sps_region(big), L); /* the same once cut */
    big[4095] = 0;
    assert_true(sps_region(big) != L);
    /* a cut never splits a UTF-8 sequence: 4095 'y' then a 2-byte char */
    memset(big, 'y', 4095);
    memcpy(big + 4095, "\xC3\xA9zzz", 6);
    sps_region_t U = sps_region(big);
    const char *un = sps_region_name(U);
    assert_non_null(un);
    assert_true(utf8_valid(un));
    assert_true(strlen(un) <= 4096);
    /* not UTF-8: written as U+FFFD, kept apart for identity */
    const char *raw1 = "bad\xff\xfe-name", *raw2 = "bad\xfe\xff-name";
    sps_region_t N1 = sps_region(raw1), N2 = sps_region(raw2);
    assert_true(N1 != N2);
    assert_int_equal(sps_region(raw1), N1);
    assert_string_equal(sps_region_name(N1), "bad\xEF\xBF\xBD\xEF\xBF\xBD-name");
    assert_true(utf8_valid(sps_region_name(N2)));
    /* overlong, surrogate, truncated sequences */
    const char *odd[] = {"ov\xC0\xAF", "sur\xED\xA0\x80", "cut\xE2\x82", "lone\x80\xBF",
                         "ok-\xE2\x82\xAC-\xF0\x9F\x98\x80"};
    sps_region_t O[5];
    for (int i = 0; i < 5; i++) {
        O[i] = sps_region(odd[i]);
        assert_true(O[i] != SPS_REGION_INVALID);
        assert_true(utf8_valid(sps_region_name(O[i])));
    }
    assert_string_equal(sps_region_name(O[4]), odd[4]); /* valid: unchanged */
    sps_region_t all[] = {E, L, U, N1, N2, O[0], O[1], O[2], O[3], O[4]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        sps_begin(all[i]);
        sps_end(all[i]);
    }
    assert_int_equal(sps_finalize_to(path), 0);
    tu_h5_t *h = tu_h5_load(path);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(h->nev, sizeof all / sizeof all[0]);
    for (size_t i = 0; i < h->nnames; i++) assert_true(utf8_valid(h->names[i]));
    assert_true(tu_h5_row(h, "(empty)") >= 0);
    assert_true(tu_h5_row(h, "bad\xEF\xBF\xBD\xEF\xBF\xBD-name") >= 0);
    assert_true(tu_h5_row(h, odd[4]) >= 0);
    big[4096] = 0;
    memset(big, 'x', 4096);
    assert_true(tu_h5_row(h, big) >= 0);
    tu_h5_free(h);
    assert_int_equal(tu_h5_attr_i64(path, "/metadata", "misuse_count", -1), 4);
    free(big);
    /* a small file with only the non-UTF-8 names, for the Python side */
    sps_shutdown();
    const char *p2 = tu_path("nonutf8.h5");
    unlink(p2);
    assert_int_equal(sps_setup(NULL), 0);
    sps_region_t N3 = sps_region("caf\xe9-latin1");
    for (int i = 0; i < 3; i++) {
        sps_begin(N1);
        sps_begin(N3);
        sps_end(N3);
        sps_end(N1);
    }
    assert_int_equal(sps_finalize_to(p2), 0);
    h = tu_h5_load(p2);
    assert_non_null(h);
    assert_true(h->ok);
    assert_int_equal(tu_h5_count(h, "caf\xEF\xBF\xBD-latin1"), 3);
    assert_int_equal(tu_h5_count(h, "bad\xEF\xBF\xBD\xEF\xBF\xBD-name"), 3);
    tu_h5_free(h);
    sps_shutdown();
}

/* Lead bytes 0xF5..0xFF never start a UTF-8 sequence; followed by
 * continuation bytes they must still be written as U+FFFD.
 *
 * Regression test for a library bug (it failed before the fix): utf8_seq() in
 * src/core/registry.c takes any byte >= 0xE0 that is not 0xF0..0xF4 for a
 * 3-byte lead, so "\xF5\x80\x80" (or "\xFF\x80\x80") is copied through and
 * the written name is not valid UTF-8 (h5py cannot decode it). */
static void test_name_bad_lead_bytes(void **state) {
    (void)state;
    const char *path = tu_path("nonutf8_lead.h5");
    unlink(path);
    assert_int_equal(sps_setup(NULL), 0);
    const char *raw[] = {"lead-f5\xF5\x80\x80\x80", "lead-ff\xFF\x80\x80", "lead-f8\xF8\x88\x80\x80\x80"};
    int bad = 0;
    char msg[256] = "";
    for (int i = 0; i < 3; i++) {
        sps_region_t r = sps_region(raw[i]);
        assert_true(r != SPS_REGION_INVALID);
        sps_begin(r);
        sps_end(r);
        if (!utf8_valid(sps_region_name(r)) && !bad++) {
            int n = snprintf(msg, sizeof msg, "name of \"%s\" is", i == 0 ? "lead-f5\\xF5\\x80\\x80\\x80"
                             : i == 1 ? "lead-ff\\xFF\\x80\\x80" : "lead-f8\\xF8\\x88\\x80\\x80\\x80");
            for (const unsigned char *p = (const unsigned char *)sps_region_name(r); *p && n < 240; p++)
                n += snprintf(msg + n, sizeof msg - (size_t)n, " %02x", *p);
        }
    }
    assert_int_equal(sps_finalize_to(path), 0); /* for tests/python/test_c_h5.py */
    sps_shutdown();
    if (bad)
        fail_msg("REGRESSION (registry utf8_seq: 0xF5..0xFF taken for 3-byte "
                 "leads): %d of 3 written names are not valid UTF-8; first: %s",
                 bad, msg);
}

/* A cut at 4096 bytes never splits a UTF-8 sequence: a valid name stays
 * valid and gains no U+FFFD.
 *
 * Regression test for a library bug (it failed before the fix): the back-off loop
 * in sps__registry_intern() only runs while n == NAME_MAX_BYTES, so it backs
 * off one byte at most: a 3- or 4-byte character across the cut leaves a
 * partial sequence, written as U+FFFD characters. */
static void test_name_cut_multibyte(void **state) {
    (void)state;
    assert_int_equal(sps_setup(NULL), 0);
    char *big = malloc(8192);
    const struct { size_t pad; const char *ch; } cases[] = {
        {4095, "\xC3\xA9"},          /* 2-byte across the cut */
        {4094, "\xE2\x82\xAC"},      /* 3-byte, cut after its 2nd byte */
        {4095, "\xE2\x82\xAC"},      /* 3-byte, cut after its 1st byte */
        {4093, "\xF0\x9F\x98\x80"},  /* 4-byte, cut after its 3rd byte */
    };
    int bad = 0;
    char msg[200] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(big, 'a' + (int)i, cases[i].pad);
        snprintf(big + cases[i].pad, 8192 - cases[i].pad, "%stail", cases[i].ch);
        const char *n = sps_region_name(sps_region(big));
        assert_non_null(n);
        assert_true(utf8_valid(n));
        int ok = strlen(n) <= 4096 && strstr(n, "\xEF\xBF\xBD") == NULL &&
                 strncmp(n, big, cases[i].pad) == 0;
        if (!ok && !bad++)
            snprintf(msg, sizeof msg, "%zu pad bytes + %zu-byte char: display "
                     "name is %zu bytes, %s U+FFFD", cases[i].pad,
                     strlen(cases[i].ch), strlen(n),
                     strstr(n, "\xEF\xBF\xBD") ? "with" : "without");
    }
    free(big);
    sps_shutdown();
    if (bad)
        fail_msg("REGRESSION (name cut splits a UTF-8 sequence): %d of 4 "
                 "cases; first: %s", bad, msg);
}

/* ------------------------------------------------------------------------ */
/* Error codes                                                               */
/* ------------------------------------------------------------------------ */

/* How many codes SPS_ERRNO_MAP names (they are -1 .. -NCODES). */
#define COUNT_CODE(name, val, msg) +1
enum { NCODES = 0 SPS_ERRNO_MAP(COUNT_CODE) };
#undef COUNT_CODE

static void test_errors(void **state) {
    (void)state;
    const int codes[] = {SPS_EINVAL, SPS_ENOMEM, SPS_ENOSESSION, SPS_EACTIVE, SPS_EIO,
                         SPS_EHDF5, SPS_EFORMAT, SPS_ENOREGION, SPS_EPATH, SPS_ETOOBIG,
                         SPS_ENOTSUP};
    const char *names[] = {"SPS_EINVAL", "SPS_ENOMEM", "SPS_ENOSESSION", "SPS_EACTIVE",
                           "SPS_EIO", "SPS_EHDF5", "SPS_EFORMAT", "SPS_ENOREGION",
                           "SPS_EPATH", "SPS_ETOOBIG", "SPS_ENOTSUP"};
    size_t n = sizeof codes / sizeof codes[0];
    const char *unknown = sps_strerror(-1000);
    assert_non_null(unknown);
    assert_true(*unknown);
    for (size_t i = 0; i < n; i++) {
        assert_true(codes[i] < 0);
        assert_true(codes[i] >= -NCODES);
        const char *m = sps_strerror(codes[i]);
        assert_non_null(m);
        assert_true(strlen(m) > 0);
        assert_string_not_equal(m, unknown);
        assert_string_not_equal(m, sps_strerror(0));
        for (size_t j = 0; j < i; j++) {
            assert_true(codes[i] != codes[j]);
            assert_string_not_equal(m, sps_strerror(codes[j]));
        }
        assert_string_equal(sps_err_name(codes[i]), names[i]);
    }
    /* every value in the code range is named */
    for (int c = -1; c >= -NCODES; c--) assert_string_not_equal(sps_strerror(c), unknown);
    assert_string_equal(sps_strerror(-NCODES - 1), unknown); /* dense: nothing past them */
    assert_string_equal(sps_err_name(0), "SPS_OK");
    assert_non_null(sps_strerror(0));
    assert_true(*sps_strerror(0));
    assert_non_null(sps_err_name(-1000));
    assert_non_null(sps_err_name(12345));
    assert_non_null(sps_strerror(12345));
    assert_true(*sps_err_name(-1000));
    assert_string_not_equal(sps_err_name(-1000), "SPS_OK");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TU_TEST(test_end_without_begin), TU_TEST(test_mismatched_nesting),
        TU_TEST(test_no_session),        TU_TEST(test_setup_twice),
        TU_TEST(test_setup_invalid),     TU_TEST(test_unwritable_path),
        TU_TEST(test_shutdown_fresh),    TU_TEST(test_many_names),
        TU_TEST(test_deep_nesting),      TU_TEST(test_names),
        TU_TEST(test_name_bad_lead_bytes), TU_TEST(test_name_cut_multibyte),
        TU_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
