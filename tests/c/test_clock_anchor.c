/* test_clock_anchor.c -- clock anchors in JSON traces ("spanscopeClock"):
 * the writer writes them, the reader reads them back, and sps_merge aligns
 * two traces from different hosts by exactly the difference of their
 * anchors (and does not shift a trace of the same host and boot). */
#include "testutil.h"

#include "formats/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WALL_A 1700000000000000000LL
#define MONO_A 1000000000000LL

/* Writes a one-span JSON trace of rank rank at mono + 100 .. mono + 200
 * with the given anchor (wall 0: none) and hostname. */
static void write_trace(const char *path, int64_t rank, int64_t wall,
                        int64_t mono, const char *host) {
    static const char *names[] = {"step"};
    char pname[32];
    snprintf(pname, sizeof pname, "rank %lld", (long long)rank);
    sps__tl_proc_t proc = {rank, rank, pname};
    sps__tl_thread_t thr = {rank, 1, "main"};
    sps__tl_header_t h;
    memset(&h, 0, sizeof h);
    h.nnames = 1;
    h.names = names;
    h.nprocs = 1;
    h.procs = &proc;
    h.nthreads = 1;
    h.threads = &thr;
    h.base_ns = mono;
    h.rank = rank;
    h.world_size = 2;
    h.wall_anchor_ns = wall;
    h.mono_anchor_ns = wall ? mono : 0;
    h.hostname = host;
    sps__cjw_t *w;
    assert_int_equal(sps__cjw_open(&w, path, 0, &h), 0);
    sps__tl_span_t s = {0, 0, mono + 100, mono + 200, 0};
    assert_int_equal(sps__cjw_span(w, &s), 0);
    assert_int_equal(sps__cjw_close(w), 0);
}

/* The start of the span of process pid in the merged trace at path (and
 * the merged header's anchor in *wall, *mono, *host). */
static int64_t start_of(const char *path, int64_t pid, int64_t *wall,
                        int64_t *mono, char *host, size_t cap) {
    sps__tlr_t *r;
    assert_int_equal(sps__tlr_open(&r, path, SPS__TL_JSON), 0);
    const sps__tl_header_t *h = sps__tlr_header(r);
    *wall = h->wall_anchor_ns;
    *mono = h->mono_anchor_ns;
    snprintf(host, cap, "%s", h->hostname ? h->hostname : "");
    sps__tl_span_t s;
    int64_t got = INT64_MIN;
    while (sps__tlr_next(r, &s) == 1)
        if (h->threads[s.thread].pid == pid) got = s.start_ns;
    sps__tlr_free(r);
    assert_true(got != INT64_MIN);
    return got;
}

/* Whole text of path (caller frees). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(1, (size_t)n + 1);
    assert_true(fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return b;
}

/* The anchor survives a write and a read; no anchor stays 0. */
static void test_round_trip(void **state) {
    (void)state;
    const char *p = tu_path("anchor_rt.json");
    write_trace(p, 0, WALL_A, MONO_A, "host \"a\"");
    char *t = slurp(p);
    assert_non_null(strstr(t, "\"spanscopeClock\":{\"wall_anchor_ns\":1700000000000000000,"
                              "\"mono_anchor_ns\":1000000000000,\"hostname\":\"host \\\"a\\\"\"}"));
    free(t);
    int64_t w, m;
    char host[64];
    assert_int_equal(start_of(p, 0, &w, &m, host, sizeof host), MONO_A + 100);
    assert_int_equal(w, WALL_A);
    assert_int_equal(m, MONO_A);
    assert_string_equal(host, "host \"a\"");

    write_trace(p, 0, 0, MONO_A, NULL);
    t = slurp(p);
    assert_null(strstr(t, "spanscopeClock"));
    free(t);
    start_of(p, 0, &w, &m, host, sizeof host);
    assert_int_equal(w, 0);
    assert_int_equal(m, 0);
}

/* Two hosts, anchors 5 s apart: rank 1 is shifted by exactly 5 s; the
 * merged trace carries the reference's anchor; the same host within a
 * second is not shifted. */
static void test_merge_shift(void **state) {
    (void)state;
    const char *a = tu_path("anchor_a.json"), *b = tu_path("anchor_b.json");
    const char *out = tu_path("anchor_merged.json");
    /* B's monotonic clock is 3 s ahead, its wall - mono 5 s ahead of A's */
    int64_t mono_b = MONO_A + 3000000000LL;
    write_trace(a, 0, WALL_A, MONO_A, "node-a");
    write_trace(b, 1, WALL_A + 8000000000LL, mono_b, "node-b");
    const char *in[] = {a, b};
    assert_int_equal(sps_merge(out, in, 2, stderr), 0);
    int64_t w, m;
    char host[64];
    assert_int_equal(start_of(out, 0, &w, &m, host, sizeof host), MONO_A + 100);
    assert_int_equal(start_of(out, 1, &w, &m, host, sizeof host),
                     mono_b + 100 + 5000000000LL);
    assert_int_equal(w, WALL_A);
    assert_int_equal(m, MONO_A);
    assert_string_equal(host, "node-a");
    char *t = slurp(out);
    assert_non_null(strstr(t, "\"clock\":\"wall-clock\""));
    assert_non_null(strstr(t, "\"offset_ns\":5000000000"));
    free(t);

    /* same host, 0.5 s apart: one boot, not shifted */
    write_trace(b, 1, WALL_A + 3500000000LL, mono_b, "node-a");
    assert_int_equal(sps_merge(out, in, 2, stderr), 0);
    assert_int_equal(start_of(out, 1, &w, &m, host, sizeof host), mono_b + 100);
    t = slurp(out);
    assert_non_null(strstr(t, "\"clock\":\"same-host\""));
    free(t);

    /* without an anchor on B: unshifted, "none" */
    write_trace(b, 1, 0, mono_b, NULL);
    assert_int_equal(sps_merge(out, in, 2, stderr), 0);
    assert_int_equal(start_of(out, 1, &w, &m, host, sizeof host), mono_b + 100);
    t = slurp(out);
    assert_non_null(strstr(t, "\"clock\":\"none\""));
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_merge_shift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
