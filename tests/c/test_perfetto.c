/* test_perfetto.c -- the Perfetto protobuf timeline writer (perfetto.c) and
 * reader (perfetto_read.c): round trips, size per span, order checks and
 * hostile input.  Leaves perfetto_rt.pftrace (+ .expected.txt) and
 * perfetto_loop.pftrace in the scratch directory for
 * tests/python/test_perfetto.py. */
#include "testutil.h"

#include "formats/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A deterministic xorshift generator (state owned by the caller). */
static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Orders spans like timeline.h: (start, -end, thread). */
static int cmp_span(const void *a, const void *b) {
    const sps__tl_span_t *x = a, *y = b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns) return x->end_ns > y->end_ns ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return 0;
}

/* Appends to sp (capacity checked by the caller) a random tree of spans
 * strictly inside (lo, hi) on thread th, depth levels deep at most. */
static void gen_tree(sps__tl_span_t *sp, size_t *n, size_t cap, uint64_t *s,
                     uint32_t th, int64_t lo, int64_t hi, int depth,
                     uint32_t nnames) {
    int64_t t = lo + 1;
    while (*n < cap && depth > 0) {
        int64_t room = hi - 1 - t;
        if (room < 4) break;
        int64_t len = 2 + (int64_t)(rnd(s) % (uint64_t)(room / 2 + 1));
        int64_t st = t + (int64_t)(rnd(s) % 3);
        int64_t en = st + len;
        if (en >= hi) break;
        sp[*n].name = (uint32_t)(rnd(s) % nnames);
        sp[*n].thread = th;
        sp[*n].start_ns = st;
        sp[*n].end_ns = en;
        (*n)++;
        gen_tree(sp, n, cap, s, th, st, en, depth - 1, nnames);
        t = en + (int64_t)(rnd(s) % 5);
    }
}

/* A deep chain on thread th: depth spans nested one inside the other. */
static void gen_chain(sps__tl_span_t *sp, size_t *n, uint32_t th, int64_t lo,
                      int depth) {
    for (int i = 0; i < depth; i++) {
        sp[*n].name = (uint32_t)(i % 3);
        sp[*n].thread = th;
        sp[*n].start_ns = lo + i;
        sp[*n].end_ns = lo + 2 * depth - i;
        (*n)++;
    }
}

static const char *NAMES[] = {"main", "solve", "π·r²", "日本語の名前",
                              "emoji 🚀", "", "a \"quoted\" \\ name",
                              "long_name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};
static const sps__tl_proc_t PROCS[] = {
    {1001, 0, "rank 0"}, {1002, 1, "rank 1"}, {77, -1, "spanscope"}};
static const sps__tl_thread_t THREADS[] = {
    {1001, 1001, "main"}, {1001, 1005, "worker ü"}, {1002, 1002, ""},
    {1002, 3, "io"}, {77, 77, "t"}};

/* Opens path with the Perfetto reader; returns the rc. */
static int rd_open(void **r, const char *path) { return sps__pfr_open(r, path); }

/* Builds the round-trip span set (sorted) into *out; returns the count. */
static size_t make_spans(sps__tl_span_t **out, int64_t t0) {
    size_t cap = 20000, n = 0;
    sps__tl_span_t *sp = calloc(cap, sizeof *sp);
    assert_non_null(sp);
    uint64_t s = 0x1234567;
    uint32_t nn = sizeof NAMES / sizeof *NAMES;
    for (uint32_t th = 0; th < 5; th++)
        gen_tree(sp, &n, cap - 600, &s, th, t0 + th * 7, t0 + 3000000 + th, 6, nn);
    gen_chain(sp, &n, 1, t0 + 4000000, 300); /* deep nesting */
    qsort(sp, n, sizeof *sp, cmp_span);
    *out = sp;
    return n;
}

/* Write/read round trip: header, every span, exact ns, order. */
static void test_roundtrip(void **st) {
    (void)st;
    const char *path = tu_path("perfetto_rt.pftrace");
    int64_t t0 = 123456789012345; /* absolute CLOCK_MONOTONIC ns */
    sps__tl_span_t *sp;
    size_t n = make_spans(&sp, t0);
    assert_true(n > 1000);
    sps__tl_header_t h = {0};
    h.nnames = sizeof NAMES / sizeof *NAMES;
    h.names = NAMES;
    h.nprocs = 3;
    h.procs = PROCS;
    h.nthreads = 5;
    h.threads = THREADS;
    h.base_ns = sp[0].start_ns + 50; /* the first spans lie before base */
    h.rank = -1;
    h.nspans = n;
    sps__pfw_t *w;
    assert_int_equal(sps__pfw_open(&w, path, &h), 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(sps__pfw_span(w, &sp[i]), 0);
    assert_int_equal(sps__pfw_close(w), 0);

    /* expected values for the Python decoder */
    char epath[1100];
    snprintf(epath, sizeof epath, "%s.expected.txt", path);
    FILE *f = fopen(epath, "w");
    assert_non_null(f);
    fprintf(f, "base %lld\n", (long long)h.base_ns);
    for (size_t i = 0; i < h.nnames; i++) fprintf(f, "name %s\n", NAMES[i]);
    for (size_t i = 0; i < 3; i++)
        fprintf(f, "proc %lld %s\n", (long long)PROCS[i].pid, PROCS[i].name);
    for (size_t i = 0; i < 5; i++)
        fprintf(f, "thread %lld %lld %s\n", (long long)THREADS[i].pid,
                (long long)THREADS[i].tid, THREADS[i].name);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "span %u %u %lld %lld\n", sp[i].thread, sp[i].name,
                (long long)sp[i].start_ns, (long long)sp[i].end_ns);
    assert_int_equal(fclose(f), 0);

    void *r;
    assert_int_equal(rd_open(&r, path), 0);
    const sps__tlr_vt_t *vt = r;
    const sps__tl_header_t *g = vt->header(r);
    assert_int_equal(g->nnames, h.nnames);
    for (size_t i = 0; i < h.nnames; i++) assert_string_equal(g->names[i], NAMES[i]);
    assert_int_equal(g->nprocs, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(g->procs[i].pid, PROCS[i].pid);
        assert_int_equal(g->procs[i].rank, PROCS[i].rank);
        assert_string_equal(g->procs[i].name, PROCS[i].name);
    }
    assert_int_equal(g->nthreads, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(g->threads[i].pid, THREADS[i].pid);
        assert_int_equal(g->threads[i].tid, THREADS[i].tid);
        assert_string_equal(g->threads[i].name, THREADS[i].name);
    }
    assert_int_equal(g->base_ns, h.base_ns);
    assert_int_equal(g->nspans, n);
    sps__tl_span_t s;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(vt->next(r, &s), 1);
        assert_int_equal(s.thread, sp[i].thread);
        assert_int_equal(s.name, sp[i].name);
        assert_int_equal(s.start_ns, sp[i].start_ns);
        assert_int_equal(s.end_ns, sp[i].end_ns);
    }
    assert_int_equal(vt->next(r, &s), 0);
    vt->free(r);
    free(sp);
}

/* A regular loop costs at most 24 bytes per span (begin + end packets). */
static void test_bytes_per_span(void **st) {
    (void)st;
    const char *empty = tu_path("perfetto_empty.pftrace");
    const char *path = tu_path("perfetto_loop.pftrace");
    static const char *nm[] = {"step"};
    static const sps__tl_proc_t pr[] = {{42, -1, "spanscope"}};
    static const sps__tl_thread_t th[] = {{42, 42, "main"}};
    sps__tl_header_t h = {0};
    h.nnames = 1; h.names = nm; h.nprocs = 1; h.procs = pr;
    h.nthreads = 1; h.threads = th; h.base_ns = 1000000000; h.rank = -1;
    sps__pfw_t *w;
    assert_int_equal(sps__pfw_open(&w, empty, &h), 0);
    assert_int_equal(sps__pfw_close(w), 0);
    const size_t n = 100000;
    assert_int_equal(sps__pfw_open(&w, path, &h), 0);
    for (size_t i = 0; i < n; i++) {
        sps__tl_span_t s = {0, 0, h.base_ns + 1000 * (int64_t)i + 17,
                            h.base_ns + 1000 * (int64_t)i + 617, 0};
        assert_int_equal(sps__pfw_span(w, &s), 0);
    }
    assert_int_equal(sps__pfw_close(w), 0);
    struct stat a, b;
    assert_int_equal(stat(empty, &a), 0);
    assert_int_equal(stat(path, &b), 0);
    double per = (double)(b.st_size - a.st_size) / (double)n;
    print_message("perfetto: %.2f bytes per span\n", per);
    assert_true(per <= 24.0);
    void *r;
    assert_int_equal(rd_open(&r, path), 0);
    const sps__tlr_vt_t *vt = r;
    sps__tl_span_t s;
    size_t k = 0;
    while (vt->next(r, &s) == 1) {
        assert_int_equal(s.start_ns, h.base_ns + 1000 * (int64_t)k + 17);
        assert_int_equal(s.end_ns - s.start_ns, 600);
        k++;
    }
    assert_int_equal(k, n);
    vt->free(r);
}

/* Bad headers and spans out of order / not nested give SPS_EINVAL. */
static void test_einval(void **st) {
    (void)st;
    const char *path = tu_path("perfetto_inval.pftrace");
    static const char *nm[] = {"a", "b"};
    static const char *bad_nm[] = {"a", "\xff\xfe"};
    static const sps__tl_proc_t pr[] = {{1, -1, "p"}};
    static const sps__tl_thread_t th[] = {{1, 1, "t"}, {1, 2, "u"}};
    static const sps__tl_thread_t orphan[] = {{9, 1, "t"}};
    static const sps__tl_thread_t dup[] = {{1, 1, "t"}, {1, 1, "u"}};
    sps__tl_header_t h = {0};
    h.nnames = 2; h.names = nm; h.nprocs = 1; h.procs = pr;
    h.nthreads = 2; h.threads = th; h.base_ns = 0; h.rank = -1;
    sps__pfw_t *w;
    sps__tl_header_t b = h;
    b.names = bad_nm;
    assert_int_equal(sps__pfw_open(&w, path, &b), SPS_EINVAL);
    b = h; b.threads = orphan; b.nthreads = 1;
    assert_int_equal(sps__pfw_open(&w, path, &b), SPS_EINVAL);
    b = h; b.threads = dup;
    assert_int_equal(sps__pfw_open(&w, path, &b), SPS_EINVAL);

    sps__tl_span_t s1 = {0, 0, 100, 200, 0}, s2 = {1, 0, 150, 250, 0},
                   s3 = {0, 0, 90, 95, 0}, s4 = {0, 5, 300, 400, 0},
                   s5 = {0, 1, 120, 130, 0}, s6 = {0, 0, 500, 400, 0};
    assert_int_equal(sps__pfw_open(&w, path, &h), 0);
    assert_int_equal(sps__pfw_span(w, &s1), 0);
    assert_int_equal(sps__pfw_span(w, &s2), SPS_EINVAL); /* overlaps s1 */
    assert_int_equal(sps__pfw_span(w, &s5), SPS_EINVAL); /* sticky */
    sps__pfw_abort(w);
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0); /* abort removed it */
    assert_int_equal(sps__pfw_open(&w, path, &h), 0);
    assert_int_equal(sps__pfw_span(w, &s1), 0);
    assert_int_equal(sps__pfw_span(w, &s3), SPS_EINVAL); /* goes back */
    sps__pfw_abort(w);
    assert_int_equal(sps__pfw_open(&w, path, &h), 0);
    assert_int_equal(sps__pfw_span(w, &s4), SPS_EINVAL); /* bad name */
    assert_int_equal(sps__pfw_close(w), SPS_EINVAL);
    assert_int_equal(sps__pfw_open(&w, path, &h), 0);
    assert_int_equal(sps__pfw_span(w, &s6), SPS_EINVAL); /* end < start */
    sps__pfw_abort(w);
    assert_int_equal(sps__pfw_open(&w, "/nonexistent-dir/x.pftrace", &h), SPS_EIO);
}

/* Reads path; rc must be 0 or SPS_EFORMAT, and spans, when read, must be
 * well formed and in order. */
static int read_check(const char *path) {
    void *r = NULL;
    int rc = rd_open(&r, path);
    if (rc != 0) {
        assert_int_equal(rc, SPS_EFORMAT);
        assert_true(strlen(sps__err_msg()) > 0);
        assert_null(strchr(sps__err_msg(), '\n'));
        return rc;
    }
    const sps__tlr_vt_t *vt = r;
    const sps__tl_header_t *g = vt->header(r);
    sps__tl_span_t s, prev = {0, 0, INT64_MIN, 0, 0};
    while (vt->next(r, &s) == 1) {
        assert_true(s.thread < g->nthreads);
        assert_true(s.name < g->nnames);
        assert_true(s.end_ns >= s.start_ns);
        assert_true(cmp_span(&prev, &s) <= 0 || prev.start_ns == INT64_MIN);
        prev = s;
    }
    vt->free(r);
    return 0;
}

/* Writes n bytes to path. */
static void put_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Truncations at every byte, bit flips and garbage: no crash, no hang,
 * SPS_EFORMAT (or a consistent result). */
static void test_hostile(void **st) {
    (void)st;
    /* a small valid file */
    const char *src = tu_path("perfetto_small.pftrace");
    static const char *nm[] = {"outer", "inner", "ü"};
    static const sps__tl_proc_t pr[] = {{5, 0, "rank 0"}};
    static const sps__tl_thread_t th[] = {{5, 5, "main"}, {5, 6, "w"}};
    sps__tl_header_t h = {0};
    h.nnames = 3; h.names = nm; h.nprocs = 1; h.procs = pr;
    h.nthreads = 2; h.threads = th; h.base_ns = 1000; h.rank = 0;
    sps__pfw_t *w;
    assert_int_equal(sps__pfw_open(&w, src, &h), 0);
    for (int i = 0; i < 40; i++) {
        sps__tl_span_t a = {(uint32_t)(i % 3), (uint32_t)(i % 2), 1000 + 100 * i, 1000 + 100 * i + 90, 0};
        sps__tl_span_t b = {1, (uint32_t)(i % 2), 1000 + 100 * i + 10, 1000 + 100 * i + 50, 0};
        assert_int_equal(sps__pfw_span(w, &a), 0);
        assert_int_equal(sps__pfw_span(w, &b), 0);
    }
    assert_int_equal(sps__pfw_close(w), 0);
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    static uint8_t data[1 << 16], mut[1 << 16];
    size_t n = fread(data, 1, sizeof data, f);
    fclose(f);
    assert_true(n > 100 && n < sizeof data);
    assert_int_equal(read_check(src), 0);

    const char *bad = tu_path("perfetto_bad.pftrace");
    size_t nfail = 0;
    for (size_t k = 0; k < n; k++) { /* every truncation */
        put_file(bad, data, k);
        if (read_check(bad)) nfail++;
    }
    assert_true(nfail > n / 2);
    uint64_t s = 99;
    for (int it = 0; it < 3000; it++) { /* random bit flips */
        memcpy(mut, data, n);
        int flips = 1 + (int)(rnd(&s) % 4);
        for (int j = 0; j < flips; j++) {
            size_t pos = (size_t)(rnd(&s) % n);
            mut[pos] ^= (uint8_t)(1u << (rnd(&s) % 8));
        }
        put_file(bad, mut, n);
        read_check(bad);
    }
    for (int it = 0; it < 300; it++) { /* garbage */
        size_t len = (size_t)(rnd(&s) % 2000);
        for (size_t j = 0; j < len; j++) mut[j] = (uint8_t)rnd(&s);
        if (it % 2) mut[0] = 0x0A; /* looks like a packet */
        put_file(bad, mut, len);
        read_check(bad);
    }
    /* specific shapes */
    static const uint8_t empty[1] = {0};
    put_file(bad, empty, 0);
    assert_int_equal(read_check(bad), SPS_EFORMAT);
    static const uint8_t longvar[] = {0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                      0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    put_file(bad, longvar, sizeof longvar);
    assert_int_equal(read_check(bad), SPS_EFORMAT);
    static const uint8_t biglen[] = {0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00};
    put_file(bad, biglen, sizeof biglen);
    assert_int_equal(read_check(bad), SPS_EFORMAT);
    /* a slice end without a begin */
    static const uint8_t endonly[] = {0x0A, 0x08, 0x40, 0x05, 0x5A, 0x04, 0x48, 0x02, 0x58, 0x01};
    put_file(bad, endonly, sizeof endonly);
    assert_int_equal(read_check(bad), SPS_EFORMAT);
    /* an unknown iid */
    static const uint8_t noiid[] = {0x0A, 0x0A, 0x40, 0x05, 0x5A, 0x06, 0x48, 0x01, 0x50, 0x07, 0x58, 0x01};
    put_file(bad, noiid, sizeof noiid);
    assert_int_equal(read_check(bad), SPS_EFORMAT);
    /* a group wire type */
    static const uint8_t group[] = {0x0B, 0x0C};
    put_file(bad, group, sizeof group);
    assert_int_equal(read_check(bad), SPS_EFORMAT);
    /* many begins, never ended: deep stack, then EFORMAT */
    size_t m = 0;
    for (int i = 0; i < 5000; i++) {
        /* begin, literal name (field 23: a 2-byte tag) "x" */
        static const uint8_t pk[12] = {0x0A, 0x0A, 0x40, 0x01, 0x5A, 0x06,
                                       0x48, 0x01, 0xBA, 0x01, 0x01, 'x'};
        memcpy(mut + m, pk, 12);
        m += 12;
    }
    put_file(bad, mut, m);
    assert_int_equal(read_check(bad), SPS_EFORMAT);
    /* a non-existent file */
    void *r;
    assert_int_equal(rd_open(&r, tu_path("perfetto_missing.pftrace")), SPS_EIO);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_bytes_per_span),
        cmocka_unit_test(test_einval),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
