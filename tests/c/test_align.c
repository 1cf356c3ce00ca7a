/* The merge's rank resolution and clock alignment (src/model/align.c) as
 * pure functions, without a file: ranks from /metadata, distributedInfo,
 * process labels or the position; several ranks in one input and
 * duplicate ranks as errors; the reference; the same-host rule at its
 * 1 s edge; wall-clock anchor differences; MPI offsets before anchors,
 * with their error bounds summed and saturating; inputs without anchors;
 * and int64 arithmetic that wraps instead of trapping at the extremes. */
#include "testutil.h"
#include "model/align.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

/* The clock facts of an input with anchors (wall, mono) on host. */
static sps__clock_facts_t anchors(int64_t wall, int64_t mono, const char *host) {
    sps__clock_facts_t f;
    memset(&f, 0, sizeof f);
    f.has_anchor = 1;
    f.wall_anchor_ns = wall;
    f.mono_anchor_ns = mono;
    f.hostname = host;
    return f;
}

/* Adds an MPI clock offset (and, when err >= 0, its error bound) to f. */
static sps__clock_facts_t with_mpi(sps__clock_facts_t f, int64_t off, int64_t err) {
    f.has_offset = 1;
    f.offset_ns = off;
    f.has_offset_error = err >= 0;
    f.offset_error_ns = err >= 0 ? err : 0;
    return f;
}

/* n inputs with the given clock facts and ranks 0..n-1 (in al). */
static void inputs(sps__align_in_t *in, sps__align_t *al, size_t n,
                   const sps__clock_facts_t *clock) {
    memset(in, 0, n * sizeof *in);
    for (size_t i = 0; i < n; i++) {
        in[i].clock = clock[i];
        al[i] = (sps__align_t){(int64_t)i, 12345, 12345, SPS__CLOCK_MPI, 0.5, 777}; /* overwritten */
    }
}

/* The rank of facts (named, held, labels) at position pos; -1 when it
 * holds several ranks, with clash checked to be two of the held. */
static int64_t rank_of(int64_t named, const int64_t *held, size_t nheld,
                       int labels, size_t pos) {
    sps__rank_facts_t f = {named, held, nheld, labels};
    int64_t r = -99, clash[2] = {-99, -99};
    if (sps__rank_resolve(&f, pos, &r, clash)) {
        assert_int_equal(r, -99); /* left alone */
        assert_int_not_equal(clash[0], clash[1]);
        return -1;
    }
    return r;
}

/* ------------------------------------------------------------------------ */
/* Ranks                                                                     */
/* ------------------------------------------------------------------------ */

/* A trace: distributedInfo.rank, else the "rank N" label its processes
 * share (unlabelled ones, -1, do not count), else its position. */
static void test_rank_trace(void **state) {
    (void)state;
    const int64_t one[] = {-1, 3, 3}, two[] = {2, 5}, none[] = {-1, -1};
    assert_int_equal(rank_of(7, one, 3, 1, 0), 7);   /* named wins */
    assert_int_equal(rank_of(-1, one, 3, 1, 0), 3);  /* from the labels */
    assert_int_equal(rank_of(-1, none, 2, 1, 4), 4); /* position */
    assert_int_equal(rank_of(-1, NULL, 0, 1, 9), 9);
    /* labels that disagree: an error, unless distributedInfo names one */
    assert_int_equal(rank_of(-1, two, 2, 1, 0), -1);
    assert_int_equal(rank_of(1, two, 2, 1, 0), 1);
    sps__rank_facts_t f = {-1, two, 2, 1};
    int64_t r, clash[2];
    assert_int_equal(sps__rank_resolve(&f, 0, &r, clash), -1);
    assert_int_equal(clash[0], 2);
    assert_int_equal(clash[1], 5);
}

/* An .h5: /metadata rank, else its position -- its rows never name the
 * rank (two files without /metadata rank, both rows rank 0, are not a
 * duplicate), but rows of two ranks are an error whatever is named. */
static void test_rank_h5(void **state) {
    (void)state;
    const int64_t rows0[] = {0, 0, 0}, rows5[] = {5}, mixed[] = {0, 0, 1};
    assert_int_equal(rank_of(2, rows0, 3, 0, 0), 2);
    assert_int_equal(rank_of(-1, rows0, 3, 0, 6), 6);
    assert_int_equal(rank_of(-1, rows5, 1, 0, 1), 1);
    assert_int_equal(rank_of(-1, NULL, 0, 0, 3), 3);
    assert_int_equal(rank_of(0, mixed, 3, 0, 0), -1);
    assert_int_equal(rank_of(-1, mixed, 3, 0, 0), -1);
}

/* A rank outside 0..INT32_MAX counts as none: the position stands in. */
static void test_rank_range(void **state) {
    (void)state;
    const int64_t big[] = {(int64_t)INT32_MAX + 1};
    assert_int_equal(rank_of(INT32_MAX, NULL, 0, 1, 2), INT32_MAX);
    assert_int_equal(rank_of((int64_t)INT32_MAX + 1, NULL, 0, 1, 2), 2);
    assert_int_equal(rank_of(INT64_MAX, NULL, 0, 0, 2), 2);
    assert_int_equal(rank_of(-1, big, 1, 1, 5), 5);
}

/* Duplicates: the first input whose rank an earlier one has, and that
 * one; none when all differ; no inputs, no duplicate. */
static void test_rank_duplicate(void **state) {
    (void)state;
    sps__align_t al[6];
    memset(al, 0, sizeof al);
    const int64_t ranks[] = {4, 1, 9, 7, 1, 4};
    for (int i = 0; i < 6; i++) al[i].rank = ranks[i];
    size_t a = 99, b = 99;
    assert_int_equal(sps__rank_duplicate(al, 6, &a, &b), 1);
    assert_int_equal(a, 1);
    assert_int_equal(b, 4);
    assert_int_equal(sps__rank_duplicate(al, 4, &a, &b), 0);
    assert_int_equal(sps__rank_duplicate(al, 0, &a, &b), 0);
    /* many inputs: positions as ranks, then one repeat at the end */
    static sps__align_t many[5001];
    for (int i = 0; i < 5000; i++) many[i].rank = i;
    assert_int_equal(sps__rank_duplicate(many, 5000, &a, &b), 0);
    many[5000].rank = 4321;
    assert_int_equal(sps__rank_duplicate(many, 5001, &a, &b), 1);
    assert_int_equal(a, 4321);
    assert_int_equal(b, 5000);
}

/* ------------------------------------------------------------------------ */
/* Clocks                                                                    */
/* ------------------------------------------------------------------------ */

/* One host, one boot: offsets under 1 s are not applied; 1 s or more (a
 * reboot) is; an unknown host never counts as the same. */
static void test_same_host(void **state) {
    (void)state;
    const int64_t w = 1700000000 * SEC, m = 80 * SEC;
    sps__clock_facts_t c[6] = {
        anchors(w, m, "node-a"),
        anchors(w + SEC - 1, m, "node-a"),       /* +0.999999999 s */
        anchors(w - SEC + 1, m, "node-a"),       /* -0.999999999 s */
        anchors(w + SEC, m, "node-a"),           /* exactly 1 s: another boot */
        anchors(w + 500, m, ""),                 /* host unknown */
        anchors(w + 500, m, "node-b"),
    };
    sps__align_in_t in[6];
    sps__align_t al[6];
    inputs(in, al, 6, c);
    assert_int_equal(sps__align_clocks(in, al, 6), 0);
    assert_int_equal(al[0].how, SPS__CLOCK_REFERENCE);
    assert_int_equal(al[0].offset, 0);
    assert_int_equal(al[0].offset_error, -1);
    for (int i = 1; i <= 2; i++) {
        assert_int_equal(al[i].how, SPS__CLOCK_SAME_HOST);
        assert_int_equal(al[i].offset, 0);
        assert_int_equal(al[i].offset_error, -1);
    }
    assert_int_equal(al[3].how, SPS__CLOCK_WALL);
    assert_int_equal(al[3].offset, SEC);
    assert_int_equal(al[4].how, SPS__CLOCK_WALL);
    assert_int_equal(al[4].offset, 500);
    assert_int_equal(al[5].how, SPS__CLOCK_WALL);
    assert_int_equal(al[5].offset, 500);
    /* a NULL host is unknown too, on either side */
    c[0].hostname = NULL;
    inputs(in, al, 2, c);
    sps__align_clocks(in, al, 2);
    assert_int_equal(al[1].how, SPS__CLOCK_WALL);
    assert_int_equal(al[1].offset, SEC - 1);
}

/* Different hosts: the shift is the difference of (wall - mono), to map
 * each input through its own anchor and back through the reference's. */
static void test_wall_clock(void **state) {
    (void)state;
    sps__clock_facts_t c[3] = {
        anchors(1000 * SEC, 10 * SEC, "a"),          /* wall - mono = 990 s */
        anchors(1000 * SEC + 7, 3 * SEC, "b"),       /* 997 s + 7 ns */
        anchors(2000 * SEC, 1500 * SEC, "c"),        /* 500 s */
    };
    sps__align_in_t in[3];
    sps__align_t al[3];
    inputs(in, al, 3, c);
    assert_int_equal(sps__align_clocks(in, al, 3), 0);
    assert_int_equal(al[1].how, SPS__CLOCK_WALL);
    assert_int_equal(al[1].offset, 7 * SEC + 7);
    assert_int_equal(al[1].offset_error, -1);
    assert_int_equal(al[2].how, SPS__CLOCK_WALL);
    assert_int_equal(al[2].offset, -490 * SEC);
}

/* MPI offsets: used exactly, before the anchors and the same-host rule,
 * relative to the reference's own offset (0 when it has none); error
 * bounds add up, saturate, and stay unknown when the input gives none;
 * an input without an offset is aligned on the reference by anchors. */
static void test_mpi(void **state) {
    (void)state;
    const int64_t w = 1700000000 * SEC, m = 80 * SEC;
    sps__clock_facts_t c[5] = {
        with_mpi(anchors(w, m, "h"), 100, 30),       /* rank 0, the reference */
        with_mpi(anchors(w, m, "h"), -1234, 800),    /* same host, yet shifted */
        with_mpi(anchors(w, m, "h"), 5000, -1),      /* no error bound */
        anchors(w + 3 * SEC, m, "other"),            /* anchors only */
        with_mpi(anchors(w, m, "h"), 0, INT64_MAX),  /* saturates */
    };
    sps__align_in_t in[5];
    sps__align_t al[5];
    inputs(in, al, 5, c);
    assert_int_equal(sps__align_clocks(in, al, 5), 0);
    assert_int_equal(al[0].how, SPS__CLOCK_REFERENCE);
    assert_int_equal(al[0].offset, 0);
    assert_int_equal(al[0].offset_error, 0); /* it has an offset */
    assert_int_equal(al[1].how, SPS__CLOCK_MPI);
    assert_int_equal(al[1].offset, -1334);
    assert_int_equal(al[1].offset_error, 830);
    assert_int_equal(al[2].how, SPS__CLOCK_MPI);
    assert_int_equal(al[2].offset, 4900);
    assert_int_equal(al[2].offset_error, -1);
    assert_int_equal(al[3].how, SPS__CLOCK_WALL);
    assert_int_equal(al[3].offset, 3 * SEC);
    assert_int_equal(al[4].offset, -100);
    assert_int_equal(al[4].offset_error, INT64_MAX);
    /* a reference without an offset is on rank 0's clock: offsets apply
     * as they are, and its error counts as 0 */
    c[0] = anchors(w, m, "h");
    inputs(in, al, 3, c);
    assert_int_equal(sps__align_clocks(in, al, 3), 0);
    assert_int_equal(al[0].offset_error, -1);
    assert_int_equal(al[1].offset, -1234);
    assert_int_equal(al[1].offset_error, 800);
    assert_int_equal(al[2].offset, 5000);
}

/* The reference: without MPI offsets the first input with anchors (not
 * the lowest rank); with them the lowest-ranked input that has an offset
 * or anchors; inputs with neither never are; none at all: -1. */
static void test_reference(void **state) {
    (void)state;
    sps__clock_facts_t none;
    memset(&none, 0, sizeof none);
    sps__clock_facts_t c[4] = {none, anchors(5 * SEC, SEC, "a"), anchors(6 * SEC, SEC, "b"), none};
    sps__align_in_t in[4];
    sps__align_t al[4];
    inputs(in, al, 4, c);
    const int64_t ranks[] = {0, 3, 1, 2};
    for (int i = 0; i < 4; i++) al[i].rank = ranks[i];
    assert_int_equal(sps__align_ref(in, al, 4), 1);
    assert_int_equal(sps__align_clocks(in, al, 4), 1);
    assert_int_equal(al[1].how, SPS__CLOCK_REFERENCE);
    assert_int_equal(al[2].offset, SEC);
    for (int i = 0; i < 4; i++) assert_int_equal(al[i].rank, ranks[i]); /* kept */
    /* an MPI offset anywhere: the lowest rank that can be aligned (rank
     * 1, input 2; rank 0 has nothing) */
    in[3].clock = with_mpi(none, 77, -1);
    assert_int_equal(sps__align_ref(in, al, 4), 2);
    assert_int_equal(sps__align_clocks(in, al, 4), 2);
    assert_int_equal(al[2].how, SPS__CLOCK_REFERENCE);
    assert_int_equal(al[3].how, SPS__CLOCK_MPI);
    assert_int_equal(al[3].offset, 77);
    assert_int_equal(al[1].how, SPS__CLOCK_WALL);
    assert_int_equal(al[1].offset, -SEC);
    assert_int_equal(al[0].how, SPS__CLOCK_NONE);
    /* the offset input itself, when it has the lowest rank */
    al[3].rank = -5;
    assert_int_equal(sps__align_ref(in, al, 4), 3);
    /* nothing to align by */
    c[1] = c[2] = none;
    inputs(in, al, 4, c);
    assert_int_equal(sps__align_ref(in, al, 4), -1);
    assert_int_equal(sps__align_clocks(in, al, 4), -1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(al[i].how, SPS__CLOCK_NONE);
        assert_int_equal(al[i].offset, 0);
        assert_int_equal(al[i].offset_error, -1);
    }
    assert_int_equal(sps__align_ref(in, al, 0), -1);
}

/* Inputs without anchors (Perfetto, torch's JSON) are merged unshifted
 * and say so, beside aligned ones. */
static void test_no_anchor(void **state) {
    (void)state;
    sps__clock_facts_t none;
    memset(&none, 0, sizeof none);
    none.hostname = "node-a"; /* a host alone aligns nothing */
    sps__clock_facts_t c[3] = {anchors(10 * SEC, SEC, "node-a"), none,
                               anchors(20 * SEC, SEC, "node-b")};
    sps__align_in_t in[3];
    sps__align_t al[3];
    inputs(in, al, 3, c);
    assert_int_equal(sps__align_clocks(in, al, 3), 0);
    assert_int_equal(al[1].how, SPS__CLOCK_NONE);
    assert_int_equal(al[1].offset, 0);
    assert_int_equal(al[1].offset_error, -1);
    assert_int_equal(al[2].offset, 10 * SEC);
    assert_string_equal(sps__clock_name(al[0].how), "reference");
    assert_string_equal(sps__clock_name(al[1].how), "none");
    assert_string_equal(sps__clock_name(SPS__CLOCK_SAME_HOST), "same-host");
    assert_string_equal(sps__clock_name(al[2].how), "wall-clock");
    assert_string_equal(sps__clock_name(SPS__CLOCK_MPI), "mpi");
}

/* Hostile anchors and offsets at the int64 extremes: the arithmetic
 * wraps modulo 2^64 (never traps: UBSan builds check), error bounds
 * saturate, and sps__shift refuses a time that would leave int64. */
static void test_extremes(void **state) {
    (void)state;
    assert_int_equal(sps__wrap_sub(INT64_MIN, 1), INT64_MAX);
    assert_int_equal(sps__wrap_sub(INT64_MAX, -1), INT64_MIN);
    assert_int_equal(sps__wrap_sub(0, INT64_MIN), INT64_MIN);
    assert_int_equal(sps__wrap_sub(-3, 4), -7);
    int64_t t = INT64_MAX;
    assert_int_equal(sps__shift(&t, 1), -1);
    t = INT64_MIN;
    assert_int_equal(sps__shift(&t, -1), -1);
    t = INT64_MAX;
    assert_int_equal(sps__shift(&t, INT64_MIN), 0);
    assert_int_equal(t, -1);
    t = 5;
    assert_int_equal(sps__shift(&t, -8), 0);
    assert_int_equal(t, -3);

    sps__clock_facts_t c[3] = {
        anchors(INT64_MAX, INT64_MIN, "x"),        /* wall - mono wraps to -1 */
        anchors(1, INT64_MAX, "y"),                /* wraps to INT64_MIN + 2 */
        with_mpi(anchors(1, 0, "z"), INT64_MIN, INT64_MAX),
    };
    sps__align_in_t in[3];
    sps__align_t al[3];
    inputs(in, al, 2, c);
    assert_int_equal(sps__align_clocks(in, al, 2), 0);
    uint64_t d0 = (uint64_t)INT64_MAX - (uint64_t)INT64_MIN;
    uint64_t d1 = (uint64_t)1 - (uint64_t)INT64_MAX;
    assert_int_equal(al[1].offset, (int64_t)(d1 - d0));
    assert_int_equal(al[1].how, SPS__CLOCK_WALL);
    /* MPI: INT64_MIN minus the reference's INT64_MAX wraps; the bounds
     * INT64_MAX + INT64_MAX saturate */
    c[0] = with_mpi(anchors(1, 0, "z"), INT64_MAX, INT64_MAX);
    inputs(in, al, 3, c);
    assert_int_equal(sps__align_clocks(in, al, 3), 0);
    assert_int_equal(al[2].how, SPS__CLOCK_MPI);
    assert_int_equal(al[2].offset, 1); /* INT64_MIN - INT64_MAX mod 2^64 */
    assert_int_equal(al[2].offset_error, INT64_MAX);
    assert_int_equal(al[0].offset_error, 0);
}

/* The drift fit (sps__clock_fit): one measurement is a constant, two the
 * line through them, more a least-squares line weighted by 1/error^2 (a
 * sloppy measurement moves it little) whose bound covers every
 * measurement's residual plus its error; bad input gives up. */
static void test_clock_fit(void **state) {
    (void)state;
    sps__clock_fit_t f = {0};
    sps__clock_sample_t one = {5 * SEC, 700, 40};
    assert_int_equal(sps__clock_fit(&one, 1, &f), 0);
    assert_int_equal(f.n, 1);
    assert_int_equal(f.t0, 5 * SEC);
    assert_int_equal(f.t1, 5 * SEC);
    assert_int_equal(f.off0, 700);
    assert_int_equal(f.off1, 700);
    assert_true(f.error >= 40 && f.error <= 42);
    /* two: the line through them, 1000 ppm (1 ms per s), on a big clock */
    const int64_t t = 3600000 * SEC, o = -86400 * SEC;
    sps__clock_sample_t two[2] = {{t + 2 * SEC, o + 2000000, 10},
                                  {t, o, 20}}; /* any order */
    assert_int_equal(sps__clock_fit(two, 2, &f), 0);
    assert_int_equal(f.t0, t);
    assert_int_equal(f.t1, t + 2 * SEC);
    assert_int_equal(f.off0, o);
    assert_int_equal(f.off1, o + 2000000);
    assert_true(f.error >= 20 && f.error <= 22); /* no residual */
    /* four on a line of -50 ppm with noise, one of them sloppy (error
     * 10 us, 8 us off the line): the weighted line stays within 1 us of
     * the true one, and the bound covers every measurement */
    sps__clock_sample_t four[4] = {{0, 1000, 500},
                                   {SEC, 1000 - 50000 + 300, 400},
                                   {2 * SEC, 1000 - 100000 + 8000, 10000},
                                   {3 * SEC, 1000 - 150000 - 200, 300}};
    assert_int_equal(sps__clock_fit(four, 4, &f), 0);
    assert_int_equal(f.n, 4);
    assert_true(llabs(f.off0 - 1000) < 1000);
    assert_true(llabs(f.off1 - (1000 - 150000)) < 1000);
    for (int i = 0; i < 4; i++) {
        double line = (double)f.off0 + (double)(f.off1 - f.off0) *
                                           (double)(four[i].t_ns - f.t0) / (double)(f.t1 - f.t0);
        assert_true(fabs(line - (double)four[i].offset_ns) + (double)four[i].error_ns <=
                    (double)f.error);
    }
    assert_true(f.error >= 10000 && f.error < 20000);
    /* unweighted, the sloppy one would pull the line by ~2 us: the weights
     * matter (the same samples with equal errors) */
    sps__clock_sample_t eq[4];
    memcpy(eq, four, sizeof eq);
    for (int i = 0; i < 4; i++) eq[i].error_ns = 500;
    sps__clock_fit_t g = {0};
    assert_int_equal(sps__clock_fit(eq, 4, &g), 0);
    assert_true(llabs(g.off0 - 1000) > llabs(f.off0 - 1000));
    /* refused: nothing, a negative error, an implausible slope (2%), times
     * too far apart */
    assert_int_equal(sps__clock_fit(four, 0, &f), -1);
    sps__clock_sample_t bad[2] = {{0, 0, -1}, {SEC, 0, 1}};
    assert_int_equal(sps__clock_fit(bad, 2, &f), -1);
    sps__clock_sample_t steep[2] = {{0, 0, 1}, {SEC, SEC / 50, 1}};
    assert_int_equal(sps__clock_fit(steep, 2, &f), -1);
    sps__clock_sample_t far[2] = {{INT64_MIN, 0, 1}, {INT64_MAX, 0, 1}};
    assert_int_equal(sps__clock_fit(far, 2, &f), -1);
}

/* Facts with a drift line through (t0, o0) and (t1, o1) and bound err. */
static sps__clock_facts_t with_drift(sps__clock_facts_t f, int64_t t0, int64_t o0,
                                     int64_t t1, int64_t o1, int64_t err) {
    f = with_mpi(f, o0, err);
    f.has_drift = 1;
    f.drift_t0 = t0, f.drift_off0 = o0, f.drift_t1 = t1, f.drift_off1 = o1;
    return f;
}

/* A drifting input maps t to t + offset(t) along its line (sps__shift_at);
 * a constant input keeps drift 0; a drifting reference (a merge without
 * rank 0) is composed exactly: the output is its clock. */
static void test_drift(void **state) {
    (void)state;
    const int64_t w = 1700000000 * SEC, m = 80 * SEC, T = 1000 * SEC;
    sps__clock_facts_t c[3] = {
        with_mpi(anchors(w, m, "h"), 0, 0),                          /* rank 0 */
        with_drift(anchors(w, m, "h"), T, 5000, T + 10 * SEC, 5000 + 10000000, 900),
        with_mpi(anchors(w, m, "h"), -77, 5),                        /* no drift */
    };
    sps__align_in_t in[3];
    sps__align_t al[3];
    inputs(in, al, 3, c);
    assert_int_equal(sps__align_clocks(in, al, 3), 0);
    assert_true(al[0].drift == 0);
    assert_true(al[2].drift == 0);
    assert_int_equal(al[2].offset, -77);
    int64_t x = T + 123;
    assert_int_equal(sps__shift_at(&x, &al[2]), 0);
    assert_int_equal(x, T + 123 - 77);
    assert_int_equal(al[1].how, SPS__CLOCK_MPI);
    assert_int_equal(al[1].offset_error, 900);
    assert_int_equal(al[1].drift_t0, T);
    assert_int_equal(al[1].offset, 5000);
    assert_true(fabs(al[1].drift - 1e-3) < 1e-12);
    for (int64_t dt = -SEC; dt <= 20 * SEC; dt += SEC / 3) {
        int64_t y = T + dt;
        assert_int_equal(sps__shift_at(&y, &al[1]), 0);
        assert_true(llabs(y - (T + dt + 5000 + dt / 1000)) <= 1);
    }
    /* the reference drifts (ranks 1 and 2 merged without rank 0): rank 2's
     * time t is g1^-1(g2(t)) -- check the composition at several times */
    sps__clock_facts_t d[2] = {c[1], with_drift(anchors(w, m, "h"), T + 3 * SEC, -40000,
                                                 T + 9 * SEC, -40000 - 1200000, 50)};
    inputs(in, al, 2, d);
    assert_int_equal(sps__align_clocks(in, al, 2), 0);
    assert_int_equal(al[0].how, SPS__CLOCK_REFERENCE);
    assert_int_equal(al[1].offset_error, 950);
    for (int64_t dt = 0; dt <= 12 * SEC; dt += SEC / 2) {
        int64_t t = T + dt, y = t;
        assert_int_equal(sps__shift_at(&y, &al[1]), 0);
        /* y on the reference's clock: g1(y) must equal g2(t) */
        double g2 = (double)t - 40000 - 2e-4 * (double)(t - (T + 3 * SEC));
        double g1 = (double)y + 5000 + 1e-3 * (double)(y - T);
        assert_true(fabs(g1 - g2) <= 2);
    }
    /* an overflow is reported, not wrapped */
    int64_t big = INT64_MAX - 10;
    sps__align_t a = {0, 100, 0, SPS__CLOCK_MPI, 1e-3, 0};
    assert_int_equal(sps__shift_at(&big, &a), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_fit),
        cmocka_unit_test(test_drift),
        cmocka_unit_test(test_rank_trace),
        cmocka_unit_test(test_rank_h5),
        cmocka_unit_test(test_rank_range),
        cmocka_unit_test(test_rank_duplicate),
        cmocka_unit_test(test_same_host),
        cmocka_unit_test(test_wall_clock),
        cmocka_unit_test(test_mpi),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_no_anchor),
        cmocka_unit_test(test_extremes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
