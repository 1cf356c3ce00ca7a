/* test_spansort.c -- the readers' external sort (spansort.c): the sorter
 * alone against qsort, the JSON and Perfetto readers with runs forced to
 * spill (several runs) against the same files read in memory, and a
 * TMPDIR that cannot be written (a clean SPS_EIO, small inputs unaffected). */
#include "testutil.h"

#include "formats/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A deterministic xorshift generator. */
static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Orders records by (start, -end, thread, ord). */
static int cmp_rec(const void *a, const void *b) {
    const sps__srec_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* The sorter alone, for several run sizes: same order as qsort, twice
 * (rewind). */
static void test_sorter(void **state) {
    (void)state;
    enum { N = 5000 };
    sps__srec_t *v = malloc(N * sizeof *v), *ref = malloc(N * sizeof *v);
    uint64_t x = 99;
    for (size_t i = 0; i < N; i++) {
        v[i].start = (int64_t)(rnd(&x) % 1000) - 500;
        v[i].end = v[i].start + (int64_t)(rnd(&x) % 50);
        v[i].thread = (uint32_t)(rnd(&x) % 4);
        v[i].name = 0;
        v[i].ord = i;
    }
    memcpy(ref, v, N * sizeof *v);
    qsort(ref, N, sizeof *ref, cmp_rec);
    size_t runs[] = {2, 3, 64, 1000, 0};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        sps__xsort_set_run(runs[k]);
        sps__xsort_t *s;
        assert_int_equal(sps__xsort_new(&s, cmp_rec, "test"), 0);
        for (size_t i = 0; i < N; i++) assert_int_equal(sps__xsort_add(s, &v[i]), 0);
        assert_int_equal(sps__xsort_spilled(s), runs[k] != 0);
        assert_int_equal(sps__xsort_finish(s), 0);
        for (int pass = 0; pass < 2; pass++) {
            sps__srec_t r;
            for (size_t i = 0; i < N; i++) {
                assert_int_equal(sps__xsort_next(s, &r), 1);
                assert_memory_equal(&r, &ref[i], sizeof r);
            }
            assert_int_equal(sps__xsort_next(s, &r), 0);
            assert_int_equal(sps__xsort_rewind(s), 0);
        }
        sps__xsort_free(s);
    }
    sps__xsort_set_run(0);
    free(v);
    free(ref);
}

/* Writes a JSON trace of X events in random file order (with partial
 * overlaps the reader must drop), B/E pairs and metadata on 3 threads. */
static void write_json(const char *path) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"traceEvents\":[\n", f);
    fputs("{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":9,"
          "\"args\":{\"sort_index\":0}},\n", f);
    uint64_t x = 7;
    for (int i = 0; i < 3000; i++) {
        int64_t ts = (int64_t)(rnd(&x) % 20000);
        int64_t dur = (int64_t)(rnd(&x) % 300);
        int tid = 1 + (int)(rnd(&x) % 3) * 4;
        fprintf(f, "{\"ph\":\"X\",\"name\":\"n%d\",\"pid\":1,\"tid\":%d,"
                   "\"ts\":%lld.%03d,\"dur\":%lld},\n",
                (int)(rnd(&x) % 5), tid, (long long)ts, (int)(rnd(&x) % 1000),
                (long long)dur);
    }
    for (int i = 0; i < 200; i++) {
        int tid = 100 + i % 3;
        fprintf(f, "{\"ph\":\"E\",\"pid\":2,\"tid\":%d,\"ts\":%d},\n", tid, 50000 + i * 10 + 5);
        fprintf(f, "{\"ph\":\"B\",\"name\":\"b\",\"pid\":2,\"tid\":%d,\"ts\":%d},\n", tid, 50000 + i * 10);
    }
    fputs("{\"ph\":\"E\",\"pid\":2,\"tid\":5,\"ts\":1}],\n"
          "\"baseTimeNanoseconds\":1000000}\n", f);
    fclose(f);
}

/* All spans of path read with run size run (0: in memory), checking
 * timeline order and per-thread nesting; *nspans gets the header's. */
static sps__tl_span_t *read_spans(const char *path, sps__tl_format_t fmt,
                                  size_t run, size_t *n, uint64_t *nspans) {
    sps__xsort_set_run(run);
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, path, fmt);
    if (rc) fprintf(stderr, "%s\n", sps__err_msg());
    assert_int_equal(rc, 0);
    const sps__tl_header_t *h = sps__tlr_header(r);
    *nspans = h->nspans;
    size_t cap = 1024, k = 0;
    sps__tl_span_t *v = malloc(cap * sizeof *v);
    int64_t (*stk)[64] = calloc(h->nthreads, sizeof *stk);
    size_t *depth = calloc(h->nthreads, sizeof *depth);
    sps__tl_span_t s;
    while ((rc = sps__tlr_next(r, &s)) == 1) {
        if (k == cap) v = realloc(v, (cap *= 2) * sizeof *v);
        if (k) {
            const sps__tl_span_t *p = &v[k - 1];
            assert_true(p->start_ns < s.start_ns ||
                        (p->start_ns == s.start_ns && p->end_ns >= s.end_ns));
        }
        size_t *d = &depth[s.thread];
        while (*d && stk[s.thread][*d - 1] <= s.start_ns) (*d)--;
        if (*d) assert_true(s.end_ns <= stk[s.thread][*d - 1]);
        assert_true(*d < 64);
        stk[s.thread][(*d)++] = s.end_ns;
        v[k++] = s;
    }
    assert_int_equal(rc, 0);
    free(stk);
    free(depth);
    sps__tlr_free(r);
    sps__xsort_set_run(0);
    *n = k;
    return v;
}

/* Reads path in memory and with several run sizes: the same spans. */
static void same_as_memory(const char *path, sps__tl_format_t fmt) {
    size_t n0, n;
    uint64_t h0, h;
    sps__tl_span_t *ref = read_spans(path, fmt, 0, &n0, &h0);
    assert_true(n0 > 100);
    assert_int_equal(h0, n0);
    size_t runs[] = {2, 5, 97, 4096};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        sps__tl_span_t *v = read_spans(path, fmt, runs[k], &n, &h);
        assert_int_equal(n, n0);
        assert_int_equal(h, n0);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(v[i].start_ns, ref[i].start_ns);
            assert_int_equal(v[i].end_ns, ref[i].end_ns);
            assert_int_equal(v[i].thread, ref[i].thread);
            /* equal (start, end, thread) may differ only in name order */
            if (v[i].name != ref[i].name)
                assert_true((i && v[i - 1].start_ns == v[i].start_ns) ||
                            (i + 1 < n && v[i + 1].start_ns == v[i].start_ns));
        }
        free(v);
    }
    free(ref);
}

/* The JSON reader (plain and gzip) spilling equals it in memory. */
static void test_json_runs(void **state) {
    (void)state;
    const char *p = tu_path("xsort.json");
    write_json(p);
    same_as_memory(p, SPS__TL_JSON);
    const char *gz = tu_path("xsort.json.gz");
    assert_int_equal(tu_system("gzip -c '%s' > '%s'", p, gz), 0);
    same_as_memory(gz, SPS__TL_JSON_GZ);
}

/* Writes p as Perfetto through the JSON file's timeline. */
static void json_to_pftrace(const char *json, const char *pf) {
    sps__tlr_t *r;
    assert_int_equal(sps__tlr_open(&r, json, SPS__TL_JSON), 0);
    sps__tlw_t *w;
    assert_int_equal(sps__tlw_open(&w, pf, SPS__TL_PFTRACE, sps__tlr_header(r)), 0);
    sps__tl_span_t s;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) == 1) assert_int_equal(sps__tlw_span(w, &s), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(sps__tlw_close(w), 0);
    sps__tlr_free(r);
}

/* The Perfetto reader spilling equals it in memory. */
static void test_perfetto_runs(void **state) {
    (void)state;
    const char *p = tu_path("xsort2.json");
    write_json(p);
    const char *pf = tu_path("xsort.pftrace");
    json_to_pftrace(p, pf);
    same_as_memory(pf, SPS__TL_PFTRACE);
}

/* TMPDIR that cannot hold a file: a spill is a clean SPS_EIO naming the
 * trace and TMPDIR; without a spill nothing changes. */
static void test_bad_tmpdir(void **state) {
    (void)state;
    const char *p = tu_path("xsort3.json");
    write_json(p);
    const char *pf = tu_path("xsort3.pftrace");
    json_to_pftrace(p, pf);
    const char *old = getenv("TMPDIR");
    char *keep = old ? strdup(old) : NULL;
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/not-a-dir", p); /* p is a regular file */
    setenv("TMPDIR", bad, 1);
    const char *paths[] = {p, pf};
    sps__tl_format_t fmts[] = {SPS__TL_JSON, SPS__TL_PFTRACE};
    for (int i = 0; i < 2; i++) {
        sps__xsort_set_run(16);
        sps__tlr_t *r = NULL;
        assert_int_equal(sps__tlr_open(&r, paths[i], fmts[i]), SPS_EIO);
        assert_null(r);
        const char *m = sps__err_msg();
        assert_non_null(strstr(m, paths[i]));
        assert_non_null(strstr(m, "temporary sort file"));
        assert_non_null(strstr(m, "not-a-dir"));
        assert_null(strchr(m, '\n'));
        sps__xsort_set_run(0);
        assert_int_equal(sps__tlr_open(&r, paths[i], fmts[i]), 0);
        sps__tlr_free(r);
    }
    if (keep) setenv("TMPDIR", keep, 1);
    else unsetenv("TMPDIR");
    free(keep);
}

/* The CLI converts through a spilling reader (SPANSCOPE_SORT_RUN). */
static void test_cli_env(void **state) {
    (void)state;
    const char *p = tu_path("xsort4.json");
    write_json(p);
    const char *a = tu_path("xsort4_mem.pftrace"), *b = tu_path("xsort4_run.pftrace");
    const char *cli = getenv("SPS_CLI");
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", cli, p, a), 0);
    assert_int_equal(tu_system("SPANSCOPE_SORT_RUN=3 \"%s\" convert '%s' '%s'", cli, p, b), 0);
    assert_int_equal(tu_system("cmp -s '%s' '%s'", a, b), 0);
}

/* Appends to f n spaces (0 often, sometimes more than the reader's
 * look-ahead, so tokens straddle its window's end). */
static void pad(FILE *f, uint64_t *x) {
    uint64_t r = rnd(x) % 16;
    size_t n = r < 10 ? 0 : r < 14 ? (size_t)(rnd(x) % 64) : (size_t)(rnd(x) % 140000);
    for (size_t i = 0; i < n; i++) fputc(i % 7 ? ' ' : '\n', f);
}

/* Writes the same trace compact (seed 0) or with padding between every
 * token (seed != 0), a 1.5 MiB args string (window growth), escapes and
 * surrogate pairs in names, and top-level members after the events. */
static void write_padded(const char *path, uint64_t seed) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    uint64_t x = seed ? seed : 1, *px = seed ? &x : NULL;
    uint64_t y = 4242;
#define P() do { if (px) pad(f, px); } while (0)
    fputs("{", f); P();
    fputs("\"traceEvents\"", f); P(); fputs(":", f); P(); fputs("[", f);
    for (int i = 0; i < 400; i++) {
        if (i) { P(); fputs(",", f); }
        P(); fputs("{", f); P();
        fprintf(f, "\"name\"");
        P(); fputs(":", f); P();
        fprintf(f, "\"n\\ud83d\\ude00\\u00e9\\\"%d\"", (int)(rnd(&y) % 7));
        P(); fputs(",", f); P();
        fputs("\"ph\"", f); P(); fputs(":", f); P(); fputs("\"X\"", f);
        P(); fputs(",", f); P();
        fprintf(f, "\"ts\"");
        P(); fputs(":", f); P();
        fprintf(f, "%llu.%03d", (unsigned long long)(rnd(&y) % 100000000),
                (int)(rnd(&y) % 1000));
        P(); fputs(",", f); P();
        fputs("\"dur\":", f); P();
        fprintf(f, "%de-1", (int)(rnd(&y) % 100000));
        P(); fputs(",", f); P();
        fprintf(f, "\"tid\":%d", (int)(rnd(&y) % 3));
        P(); fputs(",", f); P();
        fputs("\"args\":{\"a\":[true,false,null,-1.5e3,{\"b\":\"\\u0041\"}]", f);
        if (i == 200) {
            fputs(",\"big\":\"", f);
            for (int k = 0; k < 1500000; k++) fputc('a' + k % 26, f);
            fputs("\"", f);
        }
        fputs("}", f); P();
        fputs("}", f);
    }
    P(); fputs("]", f); P(); fputs(",", f); P();
    fputs("\"baseTimeNanoseconds\"", f); P(); fputs(":", f); P();
    fputs("123456789012", f); P(); fputs(",", f); P();
    fputs("\"spanscopeClock\":{\"wall_anchor_ns\":", f); P();
    fputs("1700000000000000001,\"mono_anchor_ns\":5,\"hostname\":\"h\"}", f); P();
    fputs("}", f); P();
#undef P
    fclose(f);
}

/* Padding that moves every token across the reader's window boundary
 * changes nothing: same spans, names, base and anchor. */
static void test_json_window(void **state) {
    (void)state;
    const char *a = tu_path("xwin_a.json"), *b = tu_path("xwin_b.json");
    write_padded(a, 0);
    size_t n0, n;
    uint64_t h0, h;
    sps__tl_span_t *ref = read_spans(a, SPS__TL_JSON, 0, &n0, &h0);
    assert_true(n0 > 300);
    sps__tlr_t *r;
    assert_int_equal(sps__tlr_open(&r, a, SPS__TL_JSON), 0);
    const sps__tl_header_t *hr = sps__tlr_header(r);
    assert_int_equal(hr->base_ns, 123456789012LL);
    assert_int_equal(hr->wall_anchor_ns, 1700000000000000001LL);
    assert_int_equal(strncmp(hr->names[0], "n\xf0\x9f\x98\x80\xc3\xa9\"", 8), 0);
    for (uint64_t seed = 1; seed <= 6; seed++) {
        write_padded(b, seed * 977);
        sps__tl_span_t *v = read_spans(b, SPS__TL_JSON, seed & 1 ? 7 : 0, &n, &h);
        assert_int_equal(n, n0);
        assert_int_equal(h, h0);
        assert_memory_equal(v, ref, n * sizeof *v);
        sps__tlr_t *q;
        assert_int_equal(sps__tlr_open(&q, b, SPS__TL_JSON), 0);
        const sps__tl_header_t *hq = sps__tlr_header(q);
        assert_int_equal(hq->base_ns, hr->base_ns);
        assert_int_equal(hq->wall_anchor_ns, hr->wall_anchor_ns);
        assert_int_equal(hq->mono_anchor_ns, 5);
        assert_string_equal(hq->hostname, "h");
        assert_int_equal(hq->nnames, hr->nnames);
        for (size_t i = 0; i < hq->nnames; i++)
            assert_string_equal(hq->names[i], hr->names[i]);
        sps__tlr_free(q);
        free(v);
    }
    sps__tlr_free(r);
    free(ref);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorter),
        cmocka_unit_test(test_json_runs),
        cmocka_unit_test(test_perfetto_runs),
        cmocka_unit_test(test_bad_tmpdir),
        cmocka_unit_test(test_cli_env),
        cmocka_unit_test(test_json_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
