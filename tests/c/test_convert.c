/* spanscope convert and the timeline round trip: a recording written to
 * HDF5, converted to every trace format, and read back, keeps every span
 * with its name, thread, start and end to the nanosecond. */
#include "testutil.h"
#include "sps_int.h"
#include "formats/timeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NTHR 3
#define NOUT 50

static void *worker(void *arg) {
    (void)arg;
    sps_region_t o = sps_region("conv.outer"), i = sps_region("conv.in \"quoted\"\n");
    for (int k = 0; k < NOUT; k++) {
        sps_begin(o);
        for (int j = 0; j < 3; j++) {
            sps_begin(i);
            tu_spin_ns(2000);
            sps_end(i);
        }
        sps_end(o);
    }
    return NULL;
}

/* Writes a recording of NTHR threads to path. */
static void record(const char *path) {
    assert_int_equal(sps_setup(NULL), 0);
    pthread_t th[NTHR];
    for (int k = 0; k < NTHR; k++) assert_int_equal(pthread_create(&th[k], NULL, worker, NULL), 0);
    for (int k = 0; k < NTHR; k++) pthread_join(th[k], NULL);
    assert_int_equal(sps_finalize_to(path), 0);
    sps_shutdown();
}

typedef struct spans {
    sps__tl_span_t *v;
    size_t n;
    char **names;  /* by span */
    int64_t *tids; /* by span */
} spans_t;

/* Puts spans that start at the same ns in one order, (thread id, end,
 * name): the readers keep start order only, and two threads' spans can
 * start at the same ns (ASan CI once saw such a pair change places between
 * the .h5 and the .json reading). */
static const spans_t *g_sorting;
static int by_start_tid_end(const void *a, const void *b) {
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const spans_t *s = g_sorting;
    if (s->v[i].start_ns != s->v[j].start_ns) return s->v[i].start_ns < s->v[j].start_ns ? -1 : 1;
    if (s->tids[i] != s->tids[j]) return s->tids[i] < s->tids[j] ? -1 : 1;
    if (s->v[i].end_ns != s->v[j].end_ns) return s->v[i].end_ns < s->v[j].end_ns ? -1 : 1;
    return strcmp(s->names[i], s->names[j]);
}
static void spans_sort(spans_t *s) {
    size_t *ix = malloc(s->n * sizeof *ix);
    sps__tl_span_t *v = malloc(s->n * sizeof *v);
    char **names = malloc(s->n * sizeof *names);
    int64_t *tids = malloc(s->n * sizeof *tids);
    assert_true(ix && v && names && tids);
    for (size_t k = 0; k < s->n; k++) ix[k] = k;
    g_sorting = s;
    qsort(ix, s->n, sizeof *ix, by_start_tid_end);
    for (size_t k = 0; k < s->n; k++) {
        v[k] = s->v[ix[k]];
        names[k] = s->names[ix[k]];
        tids[k] = s->tids[ix[k]];
    }
    memcpy(s->v, v, s->n * sizeof *v);
    memcpy(s->names, names, s->n * sizeof *names);
    memcpy(s->tids, tids, s->n * sizeof *tids);
    free(ix), free(v), free(names), free(tids);
}

/* Reads every span of path with the timeline reader. */
static spans_t read_all(const char *path) {
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, path, sps__tl_format_of(path));
    if (rc) fail_msg("%s: %s", path, sps__err_msg());
    const sps__tl_header_t *h = sps__tlr_header(r);
    spans_t s = {calloc(4096, sizeof(sps__tl_span_t)), 0, calloc(4096, sizeof(char *)),
                 calloc(4096, sizeof(int64_t))};
    sps__tl_span_t x;
    int64_t last = INT64_MIN;
    while ((rc = sps__tlr_next(r, &x)) > 0) {
        assert_true(s.n < 4096);
        assert_true(x.name < h->nnames && x.thread < h->nthreads);
        assert_true(x.start_ns >= last); /* timeline order */
        last = x.start_ns;
        s.v[s.n] = x;
        s.names[s.n] = strdup(h->names[x.name]);
        s.tids[s.n] = h->threads[x.thread].tid;
        s.n++;
    }
    assert_int_equal(rc, 0);
    sps__tlr_free(r);
    spans_sort(&s);
    return s;
}

static void spans_free(spans_t *s) {
    for (size_t k = 0; k < s->n; k++) free(s->names[k]);
    free(s->names);
    free(s->tids);
    free(s->v);
}

static void convert_ok(const char *in, const char *out) {
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", getenv("SPS_CLI"), in, out), 0);
}

static void test_round_trip_every_format(void **state) {
    (void)state;
    const char *h5 = tu_path("conv.h5");
    record(h5);
    spans_t ref = read_all(h5);
    assert_int_equal(ref.n, NTHR * NOUT * 4);
    const char *outs[] = {"conv.json", "conv.json.gz", "conv.pftrace"};
    for (size_t f = 0; f < 3; f++) {
        const char *out = tu_path(outs[f]);
        convert_ok(h5, out);
        spans_t got = read_all(out);
        assert_int_equal(got.n, ref.n);
        for (size_t k = 0; k < ref.n; k++) {
            assert_string_equal(got.names[k], ref.names[k]);
            assert_int_equal(got.v[k].start_ns, ref.v[k].start_ns);
            assert_int_equal(got.v[k].end_ns, ref.v[k].end_ns);
            assert_int_equal(got.tids[k], ref.tids[k]);
        }
        /* and back again: trace -> trace keeps everything too */
        const char *again = tu_path(f == 2 ? "conv2.json" : "conv2.pftrace");
        convert_ok(out, again);
        spans_t back = read_all(again);
        assert_int_equal(back.n, ref.n);
        for (size_t k = 0; k < ref.n; k++) {
            assert_int_equal(back.v[k].start_ns, ref.v[k].start_ns);
            assert_int_equal(back.v[k].end_ns, ref.v[k].end_ns);
        }
        spans_free(&back);
        spans_free(&got);
    }
    spans_free(&ref);
}

static void test_convert_errors(void **state) {
    (void)state;
    const char *cli = getenv("SPS_CLI");
    const char *h5 = tu_path("conv.h5");
    record(h5);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s' 2>/dev/null", cli, h5, tu_path("x.txt")), 2);
    assert_int_equal(tu_system("\"%s\" convert 2>/dev/null", cli), 2);
    assert_int_equal(tu_system("\"%s\" convert --bogus a b 2>/dev/null", cli), 2);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s' 2>/dev/null", cli,
                               tu_path("missing.h5"), tu_path("y.json")), 1);
    FILE *fp = fopen(tu_path("garbage.json"), "w");
    fputs("{\"traceEvents\": [ {\"ph\": \"X\", \"ts\": ", fp);
    fclose(fp);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s' 2>/dev/null", cli,
                               tu_path("garbage.json"), tu_path("z.pftrace")), 1);
    fp = fopen(tu_path("garbage.pftrace"), "w");
    fputs("\x0a\xff\xff\xff\xff\x0f not a trace", fp);
    fclose(fp);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s' 2>/dev/null", cli,
                               tu_path("garbage.pftrace"), tu_path("z.json")), 1);
    /* an unwritable output leaves no file behind and says so */
    assert_int_equal(tu_system("\"%s\" convert '%s' /nonexistent-dir/o.json 2>/dev/null", cli, h5), 1);
    assert_int_equal(tu_system("\"%s\" convert --help >/dev/null", cli), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_format),
        cmocka_unit_test(test_convert_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
