/* spanscope merge: two sessions recorded in this process as ranks 0 and 1
 * (different region sets, one region shared), merged to .json, .json.gz,
 * .pftrace and .h5 and read back.  Every input span is present exactly
 * once, on its rank's process, with its name and (same host: offset 0) its
 * times; a mixed merge takes one input as JSON from `spanscope convert`;
 * the command's usage and data errors give their exit codes. */
#include "testutil.h"
#include "sps_int.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOUT 40
#define MAXSPANS 4096

/* Records NOUT calls of outer (each with two calls of inner) on two
 * threads. */
typedef struct work {
    const char *outer, *inner;
} work_t;

/* Thread body: the calls of one work_t. */
static void *worker(void *arg) {
    const work_t *w = arg;
    sps_region_t o = sps_region(w->outer), i = sps_region(w->inner);
    for (int k = 0; k < NOUT; k++) {
        sps_begin(o);
        for (int j = 0; j < 2; j++) {
            sps_begin(i);
            tu_spin_ns(1500);
            sps_end(i);
        }
        sps_end(o);
    }
    return NULL;
}

/* Records one session as the given rank of 2 into path: regions outer
 * and inner on two threads. */
static void record(const char *path, int rank, const char *outer,
                   const char *inner) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.rank = rank;
    cfg.size = 2;
    assert_int_equal(sps_setup(&cfg), 0);
    work_t w = {outer, inner};
    pthread_t th[2];
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&th[k], NULL, worker, &w), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    assert_int_equal(sps_finalize_to(path), 0);
    sps_shutdown();
}

/* Every span of a timeline file, with its name, its process's rank and
 * its thread's tid. */
typedef struct spans {
    sps__tl_span_t v[MAXSPANS];
    char *names[MAXSPANS];
    int64_t rank[MAXSPANS];
    int64_t tid[MAXSPANS];
    size_t n;
} spans_t;

/* Reads every span of path with the timeline reader (checking global
 * start order). */
static spans_t *read_all(const char *path) {
    sps__tlr_t *r;
    int rc = sps__tlr_open(&r, path, sps__tl_format_of(path));
    if (rc) fail_msg("%s: %s", path, sps__err_msg());
    const sps__tl_header_t *h = sps__tlr_header(r);
    spans_t *s = calloc(1, sizeof *s);
    sps__tl_span_t x;
    int64_t last = INT64_MIN;
    while ((rc = sps__tlr_next(r, &x)) > 0) {
        assert_true(s->n < MAXSPANS);
        assert_true(x.name < h->nnames && x.thread < h->nthreads);
        assert_true(x.start_ns >= last);
        last = x.start_ns;
        int64_t pid = h->threads[x.thread].pid, rank = -1;
        for (size_t p = 0; p < h->nprocs; p++)
            if (h->procs[p].pid == pid) rank = h->procs[p].rank;
        s->v[s->n] = x;
        s->names[s->n] = strdup(h->names[x.name]);
        s->rank[s->n] = rank;
        s->tid[s->n] = h->threads[x.thread].tid;
        s->n++;
    }
    assert_int_equal(rc, 0);
    sps__tlr_free(r);
    return s;
}

/* Frees s. */
static void spans_free(spans_t *s) {
    for (size_t k = 0; k < s->n; k++) free(s->names[k]);
    free(s);
}

/* A span as compared: times, tid, name. */
typedef struct cmp_span {
    int64_t start, end, tid;
    const char *name;
} cmp_span_t;

/* qsort order: start, end, tid, name (spans that tie on start across
 * threads may come in either order in a merged timeline). */
static int cmp_span(const void *a, const void *b) {
    const cmp_span_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Checks that the spans of got on rank are exactly those of ref, with the
 * same names, tids and times (shifted by off). */
static void same_spans(const spans_t *got, int64_t rank, const spans_t *ref,
                       int64_t off) {
    cmp_span_t *g = calloc(got->n + 1, sizeof *g), *r = calloc(ref->n + 1, sizeof *r);
    size_t ng = 0;
    for (size_t k = 0; k < got->n; k++) {
        if (got->rank[k] != rank) continue;
        g[ng++] = (cmp_span_t){got->v[k].start_ns, got->v[k].end_ns, got->tid[k], got->names[k]};
    }
    for (size_t k = 0; k < ref->n; k++)
        r[k] = (cmp_span_t){ref->v[k].start_ns + off, ref->v[k].end_ns + off, ref->tid[k],
                            ref->names[k]};
    assert_int_equal(ng, ref->n);
    qsort(g, ng, sizeof *g, cmp_span);
    qsort(r, ref->n, sizeof *r, cmp_span);
    for (size_t k = 0; k < ng; k++) {
        assert_string_equal(g[k].name, r[k].name);
        assert_int_equal(g[k].start, r[k].start);
        assert_int_equal(g[k].end, r[k].end);
        assert_int_equal(g[k].tid, r[k].tid);
    }
    free(g);
    free(r);
}

/* Number of spans named name on rank. */
static size_t count(const spans_t *s, int64_t rank, const char *name) {
    size_t n = 0;
    for (size_t k = 0; k < s->n; k++)
        n += s->rank[k] == rank && !strcmp(s->names[k], name);
    return n;
}

/* The whole text of a (small) file, malloc'd. */
static char *slurp(const char *path) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    return strdup(buf);
}

/* Records the two sessions once: m_a.h5 (rank 0: ma.outer, shared) then
 * m_b.h5 (rank 1: mb.outer, shared), and m_b.json converted from m_b.h5. */
static int setup(void **state) {
    (void)state;
    record(tu_path("m_a.h5"), 0, "ma.outer", "m.shared");
    tu_spin_ns(200000);
    record(tu_path("m_b.h5"), 1, "mb.outer", "m.shared");
    return tu_system("\"%s\" convert '%s' '%s'", getenv("SPS_CLI"),
                     tu_path("m_b.h5"), tu_path("m_b.json"));
}

/* Runs merge with the given arguments; returns its exit status. */
static int merge(const char *args) {
    return tu_system("\"%s\" merge %s 2>/dev/null", getenv("SPS_CLI"), args);
}

/* Checks a merged timeline against the two inputs: every span once, on
 * its rank, unshifted, and B's spans after A's. */
static void check_merged(const char *out, const spans_t *a, const spans_t *b) {
    spans_t *m = read_all(out);
    assert_int_equal(m->n, a->n + b->n);
    same_spans(m, 0, a, 0);
    same_spans(m, 1, b, 0);
    assert_int_equal(count(m, 0, "ma.outer"), 2 * NOUT);
    assert_int_equal(count(m, 0, "m.shared"), 4 * NOUT);
    assert_int_equal(count(m, 0, "mb.outer"), 0);
    assert_int_equal(count(m, 1, "mb.outer"), 2 * NOUT);
    assert_int_equal(count(m, 1, "m.shared"), 4 * NOUT);
    assert_int_equal(count(m, 1, "ma.outer"), 0);
    /* B was recorded after A ended: all of rank 0 comes first */
    int64_t a_end = INT64_MIN, b_start = INT64_MAX;
    size_t last0 = 0, first1 = m->n;
    for (size_t k = 0; k < m->n; k++) {
        if (m->rank[k] == 0) {
            if (m->v[k].end_ns > a_end) a_end = m->v[k].end_ns;
            last0 = k;
        } else if (m->v[k].start_ns < b_start) {
            b_start = m->v[k].start_ns;
            if (k < first1) first1 = k;
        }
    }
    assert_true(b_start > a_end);
    assert_true(last0 < first1);
    spans_free(m);
}

/* .json, .json.gz and .pftrace from two .h5 inputs. */
static void test_merge_traces(void **state) {
    (void)state;
    spans_t *a = read_all(tu_path("m_a.h5")), *b = read_all(tu_path("m_b.h5"));
    assert_int_equal(a->n, 6 * NOUT);
    assert_int_equal(b->n, 6 * NOUT);
    const char *outs[] = {"merged.json", "merged.json.gz", "merged.pftrace"};
    for (size_t f = 0; f < 3; f++) {
        char args[2048];
        /* inputs in reverse order: ranks come from the files */
        snprintf(args, sizeof args, "-o '%s' '%s' '%s'", tu_path(outs[f]),
                 tu_path("m_b.h5"), tu_path("m_a.h5"));
        assert_int_equal(merge(args), 0);
        check_merged(tu_path(outs[f]), a, b);
    }
    char *text = slurp(tu_path("merged.json"));
    assert_non_null(strstr(text, "\"spanscope\":{\"merge\":"));
    assert_non_null(strstr(text, "\"rank\":1,"));
    assert_null(strstr(text, "\"clock_aligned\":false"));
    assert_non_null(strstr(text, "\"process_labels\""));
    free(text);
    /* the merged trace converts again (the extra key is accepted) */
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", getenv("SPS_CLI"),
                               tu_path("merged.json"), tu_path("merged2.pftrace")), 0);
    check_merged(tu_path("merged2.pftrace"), a, b);
    spans_free(a);
    spans_free(b);
}

/* A trace from `spanscope convert` (rank from its "rank 1" label; it
 * carries m_b.h5's clock anchor in "spanscopeClock", so it is aligned like
 * the .h5 it came from) merged with an .h5. */
static void test_merge_mixed(void **state) {
    (void)state;
    spans_t *a = read_all(tu_path("m_a.h5")), *b = read_all(tu_path("m_b.h5"));
    char args[2048];
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", tu_path("mixed.json"),
             tu_path("m_b.json"), tu_path("m_a.h5"));
    assert_int_equal(merge(args), 0);
    check_merged(tu_path("mixed.json"), a, b);
    char *text = slurp(tu_path("mixed.json"));
    assert_null(strstr(text, "\"clock_aligned\":false"));
    assert_non_null(strstr(text, "\"clock_aligned\":true,\"clock\":\"reference\""));
    free(text);
    text = slurp(tu_path("m_b.json"));
    assert_non_null(strstr(text, "\"spanscopeClock\":{\"wall_anchor_ns\":"));
    free(text);
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", tu_path("mixed.pftrace"),
             tu_path("m_a.h5"), tu_path("m_b.json"));
    assert_int_equal(merge(args), 0);
    check_merged(tu_path("mixed.pftrace"), a, b);
    spans_free(a);
    spans_free(b);
}

/* .h5 from two .h5 inputs: one schema-3 file, rows per (region, rank),
 * events intact; readable by the reader, report and the timeline. */
static void test_merge_h5(void **state) {
    (void)state;
    const char *out = tu_path("merged.h5");
    char args[2048];
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", out, tu_path("m_a.h5"),
             tu_path("m_b.h5"));
    assert_int_equal(merge(args), 0);
    sps__h5r_t *m, *ia, *ib;
    if (sps__h5r_open(&m, out) < 0) fail_msg("%s", sps__err_msg());
    assert_int_equal(sps__h5r_open(&ia, tu_path("m_a.h5")), 0);
    assert_int_equal(sps__h5r_open(&ib, tu_path("m_b.h5")), 0);
    assert_int_equal(m->schema, 3);
    assert_int_equal(m->nevents, ia->nevents + ib->nevents);
    assert_int_equal(m->nrows, ia->nrows + ib->nrows);
    assert_true(m->nested_by_ids);
    assert_int_equal(m->orphans, 0);
    /* every input row is there once, on its rank, with its events */
    const sps__h5r_t *src[2] = {ia, ib};
    for (uint32_t rk = 0; rk < 2; rk++) {
        const sps__h5r_t *s = src[rk];
        for (size_t i = 0; i < s->nrows; i++) {
            const sps__row_t *sr = &s->rows[i];
            const char *name = s->names[sr->file_region];
            size_t hits = 0;
            for (size_t j = 0; j < m->nrows; j++) {
                const sps__row_t *mr = &m->rows[j];
                if (mr->rank != rk || strcmp(m->names[mr->file_region], name)) continue;
                hits++;
                assert_int_equal(mr->count, sr->count);
                for (uint64_t e = 0; e < sr->count; e++) {
                    assert_int_equal(m->start[mr->offset + e], s->start[sr->offset + e]);
                    assert_int_equal(m->dur[mr->offset + e], s->dur[sr->offset + e]);
                    assert_int_equal(m->call_ids[mr->offset + e], s->call_ids[sr->offset + e]);
                    assert_int_equal(m->parent_ids[mr->offset + e], s->parent_ids[sr->offset + e]);
                    assert_int_equal(m->thread_ids[mr->offset + e], s->thread_ids[sr->offset + e]);
                }
            }
            assert_int_equal(hits, 1);
        }
    }
    /* region names merged: one entry per distinct name */
    for (size_t i = 0; i < m->nnames; i++)
        for (size_t j = i + 1; j < m->nnames; j++)
            assert_string_not_equal(m->names[i], m->names[j]);
    sps__h5r_free(m);
    sps__h5r_free(ia);
    sps__h5r_free(ib);
    /* the timeline of the merged .h5 is the merged timeline */
    spans_t *a = read_all(tu_path("m_a.h5")), *b = read_all(tu_path("m_b.h5"));
    check_merged(out, a, b);
    spans_free(a);
    spans_free(b);
    assert_int_equal(tu_system("\"%s\" report '%s' >/dev/null", getenv("SPS_CLI"), out), 0);
    /* metadata: mpi_size 2, rank 0 */
    assert_int_equal(tu_system("h5dump -a /metadata/mpi_size '%s' 2>/dev/null | grep -q '(0): 2' "
                               "|| ! command -v h5dump >/dev/null", out), 0);
}

/* Usage errors exit 2, data errors 1; no output is left behind. */
static void test_merge_errors(void **state) {
    (void)state;
    char args[8192];
    char a[1024], b[1024], o[1024]; /* tu_path's buffers get reused */
    snprintf(a, sizeof a, "%s", tu_path("m_a.h5"));
    snprintf(b, sizeof b, "%s", tu_path("m_b.h5"));
    snprintf(o, sizeof o, "%s", tu_path("err.json"));
    remove(o);
    assert_int_equal(merge(""), 2);                             /* nothing */
    snprintf(args, sizeof args, "-o '%s'", o);
    assert_int_equal(merge(args), 2);                           /* no inputs */
    snprintf(args, sizeof args, "'%s' '%s'", a, b);
    assert_int_equal(merge(args), 2);                           /* no -o */
    snprintf(args, sizeof args, "--bogus -o '%s' '%s'", o, a);
    assert_int_equal(merge(args), 2);                           /* option */
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", tu_path("x.txt"), a, b);
    assert_int_equal(merge(args), 2);                           /* out ext */
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", o, a, tu_path("m.csv"));
    assert_int_equal(merge(args), 2);                           /* in ext */
    /* .h5 from a trace input: issue 12 makes this work (it was "not
     * supported", exit 2): both ranks' calls in one schema-3 file */
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", tu_path("e.h5"), a,
             tu_path("m_b.json"));
    assert_int_equal(merge(args), 0);                           /* .h5 from trace */
    {
        sps__h5r_t *r, *ra;
        assert_int_equal(sps__h5r_open(&r, tu_path("e.h5")), 0);
        assert_int_equal(sps__h5r_open(&ra, a), 0);
        uint32_t seen[2] = {0, 0};
        for (size_t i = 0; i < r->nrows; i++)
            if (r->rows[i].rank < 2) seen[r->rows[i].rank] = 1;
        assert_true(seen[0] && seen[1]);
        assert_true(r->nevents > ra->nevents);
        assert_non_null(r->call_ids);
        assert_non_null(r->parent_ids);
        sps__h5r_free(ra);
        sps__h5r_free(r);
        remove(tu_path("e.h5"));
    }
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", o, a, tu_path("missing.h5"));
    assert_int_equal(merge(args), 1);                           /* missing */
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", o, a, a);
    assert_int_equal(merge(args), 1);                           /* dup rank */
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", tu_path("e.h5"), b, b);
    assert_int_equal(merge(args), 1);                           /* dup rank */
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", o, b, tu_path("m_b.json"));
    assert_int_equal(merge(args), 1);                           /* dup rank */
    snprintf(args, sizeof args, "-o /nonexistent-dir/o.json '%s' '%s'", a, b);
    assert_int_equal(merge(args), 1);                           /* unwritable */
    FILE *fp = fopen(o, "r");
    assert_null(fp);
    /* the error is one line on stderr */
    snprintf(args, sizeof args, "\"%s\" merge -o '%s' '%s' '%s' 2>&1 >/dev/null "
             "| grep -c . | grep -qx 1", getenv("SPS_CLI"), o, a, a);
    assert_int_equal(tu_system("%s", args), 0);
    assert_int_equal(tu_system("\"%s\" merge --help | grep -q 'merge -o OUT'",
                               getenv("SPS_CLI")), 0);
    /* a merged file is not an input: it holds several ranks */
    snprintf(args, sizeof args, "-o '%s' '%s' '%s'", o, tu_path("merged.h5"), b);
    assert_int_equal(merge(args), 1);
}

/* Runs the tests in order (later ones use earlier outputs). */
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_traces),
        cmocka_unit_test(test_merge_mixed),
        cmocka_unit_test(test_merge_h5),
        cmocka_unit_test(test_merge_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
