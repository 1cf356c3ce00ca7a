/*
 * test_chrome_json.c -- the Chrome trace JSON writer (chrome_json.c) and
 * reader (chrome_json_read.c): round trips (plain and gzip) that keep ns
 * exactly, the exact text of times, a torch/kineto-style trace, B/E pairs,
 * nesting repair, writer validation and I/O errors, and hostile input
 * (truncation at every byte, garbage, deep nesting, a gzip bomb).
 *
 * Leaves chrome_rt.json, chrome_rt.json.gz and chrome_names.json in the
 * test scratch directory for tests/python/test_chrome_json.py.
 */
#include "testutil.h"

#include "formats/timeline.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Not in timeline.h: spans/events the reader dropped (chrome_json_read.c). */
SPS__HIDDEN uint64_t sps__cjr_dropped(const void *r);

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* Opens path with the JSON reader; returns the rc, *r the reader or NULL. */
static int rd_open(const char *path, void **r) {
    return sps__cjr_open(r, path, 0);
}
/* The reader's header, next span and free, through its dispatch table. */
static const sps__tl_header_t *rd_header(void *r) {
    return ((sps__tlr_vt_t *)r)->header(r);
}
static int rd_next(void *r, sps__tl_span_t *s) {
    return ((sps__tlr_vt_t *)r)->next(r, s);
}
static void rd_free(void *r) {
    if (r) ((sps__tlr_vt_t *)r)->free(r);
}

/* Writes n bytes of data to path. */
static void put_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Reads all of path into a malloc'd NUL-terminated buffer. */
static char *get_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)sz + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
    b[sz] = 0;
    fclose(f);
    *n = (size_t)sz;
    return b;
}

/* Reads a JSON text given as a string; returns the rc (reader freed). */
static int read_text(const char *text, size_t n) {
    const char *p = tu_path("chrome_text.json");
    put_file(p, text, n);
    void *r = NULL;
    int rc = rd_open(p, &r);
    if (rc == 0) {
        assert_non_null(r);
        sps__tl_span_t s;
        int k;
        while ((k = rd_next(r, &s)) == 1) {
        }
        assert_int_equal(k, 0);
    } else {
        assert_null(r);
        assert_true(strlen(sps__err_msg()) > 0);
        assert_null(strchr(sps__err_msg(), '\n'));
    }
    rd_free(r);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* A synthetic timeline                                                      */
/* ------------------------------------------------------------------------ */

#define NPROC 3
#define NTHR 40
#define NSPAN 3000

static const char *k_names[] = {
    "main", "say \"hi\"", "back\\slash", "line\nbreak\ttab\r",
    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", "ctl\x01\x1f\x7f",
    "slash/</script>", "", "u2028\xe2\x80\xa8", "x"};
#define NNAMES (sizeof k_names / sizeof *k_names)

typedef struct {
    sps__tl_proc_t procs[NPROC];
    sps__tl_thread_t threads[NTHR];
    char tnames[NTHR][32];
    sps__tl_header_t h;
    sps__tl_span_t *spans;
    size_t nspans;
} tl_t;

/* Orders spans by (start, -end, thread, name): the reader's order. */
static int cmp_span(const void *a, const void *b) {
    const sps__tl_span_t *x = a, *y = b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns) return x->end_ns > y->end_ns ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

/* Builds a timeline: NPROC ranks, NTHR threads interleaved over them,
 * properly nested spans with odd ns times (some before base_ns). */
static void make_tl(tl_t *t) {
    memset(t, 0, sizeof *t);
    static char pname[NPROC][24];
    for (int i = 0; i < NPROC; i++) {
        snprintf(pname[i], sizeof pname[i], "rank %d", i);
        t->procs[i] = (sps__tl_proc_t){1000 + i * 7, i, pname[i]};
    }
    for (int i = 0; i < NTHR; i++) {
        if (i % 3) snprintf(t->tnames[i], sizeof t->tnames[i], "worker \"%d\"", i);
        t->threads[i] = (sps__tl_thread_t){1000 + (i % NPROC) * 7,
                                           (int64_t)i * 1000003 + 5, t->tnames[i]};
    }
    t->h.nnames = NNAMES;
    t->h.names = k_names;
    t->h.nprocs = NPROC;
    t->h.procs = t->procs;
    t->h.nthreads = NTHR;
    t->h.threads = t->threads;
    t->h.base_ns = 1234567890123LL;
    t->h.trace_name = "rt \"trace\".h5";
    t->h.rank = 1;
    t->h.world_size = 3;
    t->h.kineto = 1; /* torch's tools' events (chrome_json.c) */
    t->spans = calloc(NSPAN + 1, sizeof *t->spans);
    assert_non_null(t->spans);
    uint64_t x = 88172645463325252ULL;
    size_t n = 0;
    /* per thread: a chain of parents with children inside them */
    for (uint32_t th = 0; th < NTHR && n < NSPAN; th++) {
        int64_t cur = t->h.base_ns - 50 + th * 13; /* some start before base */
        while (n + 3 <= NSPAN && n < (th + 1) * (NSPAN / NTHR)) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            int64_t plen = 1000 + (int64_t)(x % 1000000);
            sps__tl_span_t p = {(uint32_t)(x % NNAMES), th, cur, cur + plen, 0};
            sps__tl_span_t c1 = {(uint32_t)((x >> 8) % NNAMES), th, cur,
                                 cur + plen / 3, 0};
            sps__tl_span_t c2 = {(uint32_t)((x >> 16) % NNAMES), th,
                                 cur + plen / 2 + 1, cur + plen, 0};
            t->spans[n++] = p;
            t->spans[n++] = c1;
            t->spans[n++] = c2;
            cur += plen + (int64_t)((x >> 24) % 777);
        }
    }
    /* an exactly known one: 12345678 ns after base, 1 ns long */
    t->spans[n++] = (sps__tl_span_t){0, NTHR - 1, t->h.base_ns + 999912345678LL,
                                     t->h.base_ns + 999912345679LL, 0};
    t->nspans = n;
    qsort(t->spans, n, sizeof *t->spans, cmp_span);
    t->h.nspans = n;
}

/* Writes t to path with the JSON writer.  Returns the close rc. */
static int write_tl(const tl_t *t, const char *path, int gz) {
    sps__cjw_t *w = NULL;
    assert_int_equal(sps__cjw_open(&w, path, gz, &t->h), 0);
    for (size_t i = 0; i < t->nspans; i++)
        assert_int_equal(sps__cjw_span(w, &t->spans[i]), 0);
    return sps__cjw_close(w);
}

/* Reads path back and checks it equals t exactly. */
static void check_tl(const tl_t *t, const char *path) {
    void *r = NULL;
    int rc = rd_open(path, &r);
    if (rc) fprintf(stderr, "reader: %s\n", sps__err_msg());
    assert_int_equal(rc, 0);
    const sps__tl_header_t *h = rd_header(r);
    assert_int_equal(h->nprocs, NPROC);
    for (int i = 0; i < NPROC; i++) {
        assert_int_equal(h->procs[i].pid, t->procs[i].pid);
        assert_int_equal(h->procs[i].rank, t->procs[i].rank);
        assert_string_equal(h->procs[i].name, t->procs[i].name);
    }
    assert_int_equal(h->nthreads, NTHR);
    for (int i = 0; i < NTHR; i++) {
        assert_int_equal(h->threads[i].pid, t->threads[i].pid);
        assert_int_equal(h->threads[i].tid, t->threads[i].tid);
        assert_string_equal(h->threads[i].name, t->threads[i].name);
    }
    assert_int_equal(h->base_ns, t->h.base_ns);
    assert_string_equal(h->trace_name, t->h.trace_name);
    assert_int_equal(h->rank, 1);
    assert_int_equal(h->world_size, 3);
    assert_int_equal(h->nspans, t->nspans);
    sps__tl_span_t s;
    for (size_t i = 0; i < t->nspans; i++) {
        assert_int_equal(rd_next(r, &s), 1);
        const sps__tl_span_t *e = &t->spans[i];
        assert_int_equal(s.start_ns, e->start_ns);
        assert_int_equal(s.end_ns, e->end_ns);
        assert_int_equal(s.thread, e->thread);
        assert_true(s.name < h->nnames);
        assert_string_equal(h->names[s.name], k_names[e->name]);
    }
    assert_int_equal(rd_next(r, &s), 0);
    assert_int_equal(sps__cjr_dropped(r), 0);
    rd_free(r);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

/* Plain round trip, and the text of the exactly known span. */
static void test_roundtrip(void **state) {
    (void)state;
    tl_t t;
    make_tl(&t);
    const char *p = tu_path("chrome_rt.json");
    assert_int_equal(write_tl(&t, p, 0), 0);
    check_tl(&t, p);
    size_t n;
    char *txt = get_file(p, &n);
    assert_non_null(strstr(txt, "\"ts\":999912345.678,\"dur\":0.001,\"args\":{\"External id\":"));
    assert_non_null(strstr(txt, "\"ts\":-0.050,"));  /* before base_ns */
    assert_non_null(strstr(txt, "\"name\":\"say \\\"hi\\\"\""));
    assert_non_null(strstr(txt, "\"name\":\"ctl\\u0001\\u001f\\u007f\""));
    assert_non_null(strstr(txt, "\"displayTimeUnit\":\"ms\""));  /* kineto's */
    assert_non_null(strstr(txt, "\"baseTimeNanoseconds\":1234567890123"));
    /* HTA's rank pattern needs the space; no backend was named */
    assert_non_null(strstr(txt, "\"distributedInfo\":{\"rank\": 1, \"world_size\": 3}"));
    /* every span once (user_annotation, as torch writes a
     * record_function): no cpu_op copy, no "Trace" window span; the
     * window end once */
    size_t nua = 0, nop = 0, nx = 0;
    for (const char *q = txt; (q = strstr(q, "\"cat\":\"user_annotation\"")); q++) nua++;
    for (const char *q = txt; (q = strstr(q, "\"cat\":\"cpu_op\"")); q++) nop++;
    for (const char *q = txt; (q = strstr(q, "\"ph\":\"X\"")); q++) nx++;
    assert_int_equal(nua, t.nspans);
    assert_int_equal(nop, 0);
    assert_int_equal(nx, t.nspans);
    assert_null(strstr(txt, "\"name\":\"PyTorch Profiler (0)\""));
    assert_null(strstr(txt, "Iteration Start"));
    assert_non_null(strstr(txt, "\"name\":\"Record Window End\""));
    assert_int_equal(txt[0], '{');
    for (size_t i = 0; i < n; i++) /* only ASCII escapes or valid UTF-8 */
        assert_true((unsigned char)txt[i] >= 0x20 || txt[i] == '\n');
    free(txt);
    free(t.spans);
}

/* The TensorBoard layout (convert --torch-tb): each span also as a
 * cpu_op copy marked spanscope_view, the "PyTorch Profiler (0)" window
 * span and its start instant; our reader still reads each span once. */
static void test_torch_tb_layout(void **state) {
    (void)state;
    tl_t t;
    make_tl(&t);
    t.h.kineto = SPS__TL_TORCH_TB;
    const char *p = tu_path("chrome_tb.json");
    assert_int_equal(write_tl(&t, p, 0), 0);
    check_tl(&t, p);
    size_t n;
    char *txt = get_file(p, &n);
    size_t nua = 0, nop = 0, nview = 0;
    for (const char *q = txt; (q = strstr(q, "\"cat\":\"user_annotation\"")); q++) nua++;
    for (const char *q = txt; (q = strstr(q, "\"cat\":\"cpu_op\"")); q++) nop++;
    for (const char *q = txt; (q = strstr(q, "\"spanscope_view\":1")); q++) nview++;
    assert_int_equal(nua, t.nspans);
    assert_int_equal(nop, t.nspans);
    assert_int_equal(nview, t.nspans);
    assert_non_null(strstr(txt, "\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\""));
    assert_non_null(strstr(txt, "\"name\":\"Iteration Start: PyTorch Profiler\""));
    assert_non_null(strstr(txt, "\"name\":\"Record Window End\""));
    free(txt);
    free(t.spans);
}

/* gzip round trip; the file really is gzip. */
static void test_roundtrip_gz(void **state) {
    (void)state;
    tl_t t;
    make_tl(&t);
    const char *p = tu_path("chrome_rt.json.gz");
    assert_int_equal(write_tl(&t, p, 1), 0);
    size_t n;
    char *b = get_file(p, &n);
    assert_true(n > 2 && (unsigned char)b[0] == 0x1f && (unsigned char)b[1] == 0x8b);
    free(b);
    check_tl(&t, p);
    free(t.spans);
}

/* Invalid UTF-8 and odd names still give valid JSON, read back sanitized;
 * an empty timeline is valid too. */
static void test_names_and_empty(void **state) {
    (void)state;
    const char *names[] = {("bad\xff\xfe" "end"), "over\xc0\xaf", "sur\xed\xa0\x80"};
    sps__tl_proc_t proc = {0, -1, "spanscope"};
    sps__tl_thread_t thr = {0, 1, "t\xff"};
    sps__tl_header_t h = {3, names, 1, &proc, 1, &thr, 0, NULL, -1, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, NULL, 0};
    const char *p = tu_path("chrome_names.json");
    sps__cjw_t *w;
    assert_int_equal(sps__cjw_open(&w, p, 0, &h), 0);
    for (uint32_t i = 0; i < 3; i++) {
        sps__tl_span_t s = {i, 0, 10 + i, 20, 0};
        assert_int_equal(sps__cjw_span(w, &s), 0);
    }
    assert_int_equal(sps__cjw_close(w), 0);
    void *r;
    assert_int_equal(rd_open(p, &r), 0);
    const sps__tl_header_t *g = rd_header(r);
    assert_int_equal(g->nspans, 3);
    assert_int_equal(g->rank, -1);
    assert_null(g->trace_name);
    sps__tl_span_t s;
    assert_int_equal(rd_next(r, &s), 1);
    assert_string_equal(g->names[s.name], "bad\xef\xbf\xbd\xef\xbf\xbd" "end");
    assert_int_equal(s.start_ns, 10);
    assert_string_equal(g->threads[0].name, "t\xef\xbf\xbd");
    assert_string_equal(g->procs[0].name, "spanscope");
    assert_int_equal(g->procs[0].rank, -1);
    rd_free(r);

    /* empty: no procs, no spans */
    sps__tl_header_t e = {0, NULL, 0, NULL, 0, NULL, 5, "e", -1, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, NULL, 0};
    p = tu_path("chrome_empty.json");
    assert_int_equal(sps__cjw_open(&w, p, 0, &e), 0);
    assert_int_equal(sps__cjw_close(w), 0);
    assert_int_equal(rd_open(p, &r), 0);
    assert_int_equal(rd_header(r)->nspans, 0);
    assert_int_equal(rd_header(r)->base_ns, 5);
    assert_int_equal(rd_next(r, &s), 0);
    rd_free(r);
}

/* The writer rejects bad headers and spans, and reports I/O errors. */
static void test_writer_errors(void **state) {
    (void)state;
    const char *names[] = {"a", "b"};
    sps__tl_proc_t procs[2] = {{1, 0, "rank 0"}, {1, 1, "rank 1"}};
    sps__tl_thread_t thr[2] = {{1, 1, ""}, {1, 2, ""}};
    sps__tl_header_t h = {2, names, 2, procs, 2, thr, 0, NULL, -1, 0, 0, 0, 0, NULL, 0, NULL, 0, NULL, NULL, 0};
    const char *p = tu_path("chrome_err.json");
    sps__cjw_t *w = NULL;
    assert_int_equal(sps__cjw_open(&w, p, 0, &h), SPS_EINVAL); /* dup pid */
    h.nprocs = 1;
    thr[1].tid = 1;
    assert_int_equal(sps__cjw_open(&w, p, 0, &h), SPS_EINVAL); /* dup tid */
    thr[1].pid = 9;
    thr[1].tid = 2;
    assert_int_equal(sps__cjw_open(&w, p, 0, &h), SPS_EINVAL); /* no proc 9 */
    thr[1].pid = 1;
    assert_int_equal(sps__cjw_open(&w, "/nonexistent-dir/x.json", 0, &h),
                     SPS_EPATH);
    assert_int_equal(sps__cjw_open(&w, p, 0, &h), 0);
    sps__tl_span_t bad[] = {{2, 0, 5, 6, 0}, {0, 2, 5, 6, 0}, {0, 0, 5, 4, 0}};
    for (int i = 0; i < 3; i++)
        assert_int_equal(sps__cjw_span(w, &bad[i]), SPS_EINVAL);
    sps__tl_span_t ok = {1, 1, 5, 9, 0}, early = {0, 0, 4, 9, 0};
    assert_int_equal(sps__cjw_span(w, &ok), 0);
    assert_int_equal(sps__cjw_span(w, &early), SPS_EINVAL); /* out of order */
    sps__cjw_abort(w);
    struct stat st;
    assert_int_equal(stat(p, &st), -1); /* abort removed it */

    /* disk full: /dev/full accepts open, fails writes */
    if (access("/dev/full", W_OK) == 0) {
        for (int gz = 0; gz < 2; gz++) {
            assert_int_equal(sps__cjw_open(&w, "/dev/full", gz, &h), 0);
            int rc = 0;
            for (int i = 0; i < 20000 && rc == 0; i++) {
                sps__tl_span_t s = {(uint32_t)(i & 1), 0, 10 + i, 10 + i, 0};
                rc = sps__cjw_span(w, &s);
            }
            int rc2 = sps__cjw_close(w);
            assert_int_equal(rc ? rc : rc2, SPS_EIO);
        }
    }
}

/* A kineto-style trace: float ts in µs since an epoch, M events, GPU rows,
 * B/E pairs, an instant with string pid, args with nested values, kineto's
 * Trace span (string pid: not a span of the program) and our writer's
 * cpu_op view of a span (skipped: the span is read once). */
static void test_torch_style(void **state) {
    (void)state;
    static const char txt[] =
        "{\n  \"schemaVersion\": 1,\n"
        "  \"deviceProperties\": [{\"id\": 0, \"name\": \"H100\", \"totalGlobalMem\": 85000000000}],\n"
        "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 1, \"world_size\": 2},\n"
        "  \"record_shapes\": 1,\n"
        "  \"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 4242, \"tid\": 4242,"
        "   \"ts\": 1718000000000000.123, \"dur\": 12.5,"
        "   \"args\": {\"Input Dims\": [[2, 3], [3, 4]], \"External id\": 7, \"Ev Idx\": 1}},\n"
        "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step\\u00e9\", \"pid\": 4242, \"tid\": 4242,"
        "   \"ts\": 1718000000000000, \"dur\": 100},\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"step\\u00e9\", \"pid\": 4242, \"tid\": 4242,"
        "   \"ts\": 1718000000000000, \"dur\": 100, \"args\": {\"External id\": 9}, \"spanscope_view\": 1},\n"
        "  {\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\","
        "   \"tid\": \"PyTorch Profiler\", \"ts\": 1718000000000000, \"dur\": 20, \"args\": {\"Op count\": 0}},\n"
        "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7,"
        "   \"ts\": 1.718000000000005e15, \"dur\": 3, \"args\": {\"stream\": 7, \"grid\": [1,1,1]}},\n"
        "  {\"ph\": \"B\", \"name\": \"outer\", \"pid\": \"4242\", \"tid\": 9, \"ts\": 1718000000000001},\n"
        "  {\"ph\": \"B\", \"name\": \"inner\", \"pid\": 4242, \"tid\": 9, \"ts\": 1718000000000002},\n"
        "  {\"ph\": \"E\", \"pid\": 4242, \"tid\": 9, \"ts\": 1718000000000003.5},\n"
        "  {\"ph\": \"E\", \"pid\": 4242, \"tid\": 9, \"ts\": 1718000000000010},\n"
        "  {\"ph\": \"E\", \"pid\": 4242, \"tid\": 9, \"ts\": 1718000000000011},\n"
        "  {\"ph\": \"s\", \"id\": 1, \"pid\": 4242, \"tid\": 4242, \"ts\": 1718000000000000, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
        "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1718000000000000, \"pid\": 4242, \"tid\": 0,"
        "   \"args\": {\"name\": \"python\"}},\n"
        "  {\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": 0, \"args\": {\"labels\": \"GPU 0\"}},\n"
        "  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": 7, \"args\": {\"name\": \"stream 7\"}},\n"
        "  {\"ph\": \"i\", \"s\": \"g\", \"name\": \"Record Window End\", \"pid\": \"\", \"tid\": \"\", \"ts\": 1718000000000020}\n"
        "  ],\n"
        "  \"traceName\": \"host_1.pt.trace.json\", \"displayTimeUnit\": \"ms\",\n"
        "  \"baseTimeNanoseconds\": 0, \"nested\": {\"a\": [true, false, null, -1.5e-3, \"x\"]}\n"
        "}\n";
    const char *p = tu_path("chrome_torch.json");
    put_file(p, txt, sizeof txt - 1);
    void *r;
    int rc = rd_open(p, &r);
    if (rc) fprintf(stderr, "reader: %s\n", sps__err_msg());
    assert_int_equal(rc, 0);
    const sps__tl_header_t *h = rd_header(r);
    assert_int_equal(h->rank, 1);
    assert_int_equal(h->world_size, 2);
    assert_string_equal(h->backend, "nccl");
    assert_string_equal(h->trace_name, "host_1.pt.trace.json");
    assert_int_equal(h->nprocs, 2);
    assert_int_equal(h->procs[0].pid, 4242);
    assert_string_equal(h->procs[0].name, "python");
    assert_int_equal(h->procs[1].pid, 0);
    assert_string_equal(h->procs[1].name, "rank 1"); /* default, with rank */
    assert_int_equal(h->nthreads, 3);
    assert_int_equal(h->nspans, 5); /* 3 X + 2 B/E; one E unmatched */
    assert_int_equal(sps__cjr_dropped(r), 1);
    const int64_t T = 1718000000000000000LL;
    struct { int64_t s, e; const char *n; int64_t tid; } want[] = {
        {T, T + 100000, "step\xc3\xa9", 4242},
        {T + 123, T + 12623, "aten::mm", 4242},
        {T + 1000, T + 10000, "outer", 9},
        {T + 2000, T + 3500, "inner", 9},
        {T + 5000, T + 8000, "gemm", 7},
    };
    sps__tl_span_t s;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(rd_next(r, &s), 1);
        assert_int_equal(s.start_ns, want[i].s);
        assert_int_equal(s.end_ns, want[i].e);
        assert_string_equal(h->names[s.name], want[i].n);
        assert_int_equal(h->threads[s.thread].tid, want[i].tid);
    }
    assert_int_equal(rd_next(r, &s), 0);
    for (size_t i = 0; i < h->nthreads; i++)
        if (h->threads[i].tid == 7) assert_string_equal(h->threads[i].name, "stream 7");
    rd_free(r);

    /* a bare array without its closing bracket, partial overlaps dropped */
    static const char bare[] =
        "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":1},\n"
        " {\"ph\":\"X\",\"name\":\"b\",\"ts\":5,\"dur\":10,\"pid\":1,\"tid\":1},\n"
        " {\"ph\":\"X\",\"name\":\"c\",\"ts\":2,\"dur\":3,\"pid\":1,\"tid\":1},\n"
        " {\"ph\":\"X\",\"name\":\"d\",\"ts\":5,\"dur\":10,\"pid\":1,\"tid\":2},\n"
        " {\"ph\":\"X\",\"name\":\"neg\",\"ts\":5,\"dur\":-1,\"pid\":1,\"tid\":2},\n";
    put_file(p, bare, sizeof bare - 1);
    assert_int_equal(rd_open(p, &r), 0);
    h = rd_header(r);
    assert_int_equal(h->nspans, 3); /* a, c, d */
    assert_int_equal(sps__cjr_dropped(r), 2); /* b overlaps a; neg */
    const char *order[] = {"a", "c", "d"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rd_next(r, &s), 1);
        assert_string_equal(h->names[s.name], order[i]);
    }
    rd_free(r);

    /* sub-ns fractions round half away from zero; exponents are exact */
    static const char frac[] =
        "[{\"ph\":\"X\",\"name\":\"r\",\"ts\":0.0015,\"dur\":0.0024},"
        " {\"ph\":\"X\",\"name\":\"s\",\"ts\":-0.0005,\"dur\":25e-4,\"tid\":1},"
        " {\"ph\":\"X\",\"name\":\"t\",\"ts\":1.2345678E+3,\"dur\":0.00049999,\"tid\":2}]";
    put_file(p, frac, sizeof frac - 1);
    assert_int_equal(rd_open(p, &r), 0);
    int64_t fr[3][2] = {{-1, 2}, {2, 4}, {1234568, 1234568}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rd_next(r, &s), 1);
        assert_int_equal(s.start_ns, fr[i][0]);
        assert_int_equal(s.end_ns, fr[i][1]);
    }
    rd_free(r);
}

/* Truncation at every byte, and byte flips, of small valid files (plain
 * and gzip): an error or a success, never a crash. */
static void test_truncated_and_mutated(void **state) {
    (void)state;
    static const char *names[] = {"main", "q\"uote"};
    sps__tl_proc_t proc = {7, 0, "rank 0"};
    sps__tl_thread_t thr[2] = {{7, 1, "main"}, {7, 2, ""}};
    sps__tl_header_t h = {2, names, 1, &proc, 2, thr, 100, "t", 0, 1, 0, 0, 0, NULL, 0, NULL, 0, NULL, NULL, 0};
    for (int gz = 0; gz < 2; gz++) {
        const char *p = tu_path(gz ? "chrome_small.json.gz" : "chrome_small.json");
        sps__cjw_t *w;
        assert_int_equal(sps__cjw_open(&w, p, gz, &h), 0);
        for (int i = 0; i < 6; i++) {
            sps__tl_span_t s = {(uint32_t)(i & 1), (uint32_t)(i % 2), 100 + i * 10,
                                105 + i * 10, 0};
            assert_int_equal(sps__cjw_span(w, &s), 0);
        }
        assert_int_equal(sps__cjw_close(w), 0);
        size_t n;
        char *b = get_file(p, &n);
        int full = read_text(b, n);
        assert_int_equal(full, 0);
        int ok = 0;
        for (size_t cut = 0; cut < n; cut++) {
            int rc = read_text(b, cut);
            assert_true(rc == 0 || rc == SPS_EFORMAT);
            ok += rc == 0;
        }
        if (!gz) assert_true(ok <= 1); /* only a whitespace cut survives */
        uint64_t x = 0x9E3779B97F4A7C15ULL;
        for (int i = 0; i < 3000; i++) {
            char *m = malloc(n);
            memcpy(m, b, n);
            for (int k = 0; k < 1 + i % 4; k++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                m[(x >> 8) % n] = (char)(x >> 40);
            }
            int rc = read_text(m, n);
            assert_true(rc == 0 || rc == SPS_EFORMAT || rc == SPS_ENOMEM);
            free(m);
        }
        free(b);
    }
}

/* Hostile texts: each must give SPS_EFORMAT. */
static void test_hostile(void **state) {
    (void)state;
    static const char *bad[] = {
        "", "   ", "{", "{}", "nul", "{\"traceEvents\":5}",
        "{\"traceEvents\":[1]}",
        "{\"traceEvents\":[]}{}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":NaN,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":Infinity,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":-Infinity,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1e400,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1e99999999999999999999,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":9223372036854775807,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":\"5\",\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":5,\"dur\":[]}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":5,\"dur\":1,\"pid\":1.5}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":9e15,\"dur\":9e15}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":01}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1.}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,}]}",
        "{\"traceEvents\":[{\"ph\":\"X\" \"ts\":1}]}",
        "{\"traceEvents\":[{\"name\":\"a\x01\"}]}",
        "{\"traceEvents\":[{\"name\":\"\\x\"}]}",
        "{\"traceEvents\":[{\"name\":\"\\u12g4\"}]}",
        "{\"traceEvents\":[],\"baseTimeNanoseconds\":1e30}",
        ("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":9000000000000000,\"dur\":0}],"
         "\"baseTimeNanoseconds\":9000000000000000000}"),
        "{\"traceEvents\":[{\"name\":\"",  /* a string that never ends */
        "{\"traceEvents\":[{\"args\":{\"a\":[1,2,{\"b\":tru}]}}]}",
        "{\"traceEvents\":[{\"args\":{\"a\":[1,2}}]}",
        "\"just a string\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = read_text(bad[i], strlen(bad[i]));
        if (rc != SPS_EFORMAT) fprintf(stderr, "case %zu: rc %d\n", i, rc);
        assert_int_equal(rc, SPS_EFORMAT);
    }
    /* fine: NaN nowhere, escapes, surrogate pairs, lone surrogates */
    static const char *good[] = {
        "[]", "[", "[{\"ph\":\"X\",\"ts\":1,\"dur\":1},",
        ("{\"traceEvents\":[{\"name\":\"\\ud83d\\ude00 \\udc00 \\u0000\","
         "\"ph\":\"X\",\"ts\":1.0e0,\"dur\":0.0005}]}"),
        "\xef\xbb\xbf{\"traceEvents\":[]}",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_int_equal(read_text(good[i], strlen(good[i])), 0);

    /* 10^6 nested arrays, at top level and inside args */
    size_t depth = 1000000;
    char *deep = malloc(2 * depth + 64);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    assert_int_equal(read_text(deep, 2 * depth), SPS_EFORMAT);
    int k = sprintf(deep, "{\"traceEvents\":[{\"args\":");
    memset(deep + k, '[', depth);
    memset(deep + k + depth, ']', depth);
    assert_int_equal(read_text(deep, k + 2 * depth), SPS_EFORMAT);
    memset(deep + k, '{', depth); /* unbalanced, unkeyed */
    assert_int_equal(read_text(deep, k + depth), SPS_EFORMAT);
    free(deep);

    /* random garbage */
    uint64_t x = 12345;
    char g[512];
    for (int i = 0; i < 2000; i++) {
        size_t n = 1 + i % sizeof g;
        for (size_t j = 0; j < n; j++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            g[j] = i & 1 ? "{}[]\",:0123456789.eE-tfnul \\\"ab"[x % 31] : (char)x;
        }
        int rc = read_text(g, n);
        assert_true(rc == 0 || rc == SPS_EFORMAT);
    }
}

/* A gzip bomb (64 MiB of spaces in ~64 KiB) is refused by the expansion
 * cap; a corrupt gzip stream is a format error; a missing file is EIO. */
static void test_gzip_limits(void **state) {
    (void)state;
    const char *p = tu_path("chrome_bomb.json.gz");
    gzFile gz = gzopen(p, "wb9");
    assert_non_null(gz);
    assert_true(gzwrite(gz, "[", 1) == 1);
    static char sp[1 << 16];
    memset(sp, ' ', sizeof sp);
    for (int i = 0; i < 1024; i++) assert_true(gzwrite(gz, sp, sizeof sp) > 0);
    assert_int_equal(gzclose(gz), Z_OK);
    void *r = NULL;
    assert_int_equal(rd_open(p, &r), SPS_EFORMAT);
    assert_non_null(strstr(sps__err_msg(), "expands"));
    assert_null(r);

    static const unsigned char junk[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3,
                                         0xff, 0xff, 0xff, 0xff, 0, 1, 2};
    put_file(p, junk, sizeof junk);
    assert_int_equal(rd_open(p, &r), SPS_EFORMAT);
    assert_non_null(strstr(sps__err_msg(), p));

    assert_int_equal(rd_open(tu_path("chrome_no_such_file.json"), &r), SPS_EIO);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_torch_tb_layout),
        cmocka_unit_test(test_roundtrip_gz),
        cmocka_unit_test(test_names_and_empty),
        cmocka_unit_test(test_writer_errors),
        cmocka_unit_test(test_torch_style),
        cmocka_unit_test(test_truncated_and_mutated),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_gzip_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
