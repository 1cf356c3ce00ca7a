/* test_html.c -- the HTML page writers (formats/html.h) on their own:
 * the colours of 20 regions all differ and follow total time (the
 * legend's order), the comparison of two runs matches regions by name and
 * says which run lacks one, and bad arguments are SPS_EINVAL with nothing
 * written; the options of sps_html_write_files (filters, ranks, the
 * table's columns and sort, charts off, the scaling section) on a small
 * recording and on traces of 1, 2 and 4 ranks. */
#include "testutil.h"

#include "formats/html.h"
#include "formats/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes a Chrome trace to path: one span per name on one thread, name
 * i lasting durs_us[i] us, one after the other. */
static void write_trace(const char *path, const char *const *names,
                        const int *durs_us, size_t n) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"traceEvents\":[", f);
    long t = 0;
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"ph\":\"X\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%ld,"
                "\"dur\":%d}", i ? "," : "", names[i], t, durs_us[i]);
        t += durs_us[i] + 1;
    }
    fputs("]}", f);
    fclose(f);
}

static sps__tlr_t *open_json(const char *path) {
    sps__tlr_t *r;
    assert_int_equal(sps__tlr_open(&r, path, SPS__TL_JSON), 0);
    return r;
}

/* The whole of fp, from its start, NUL-terminated (caller frees). */
static char *read_all(FILE *fp) {
    long n = ftell(fp);
    assert_true(n >= 0);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    rewind(fp);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = 0;
    return buf;
}

/* The page of one source (caller frees). */
static char *page_of(sps__tlr_t *r) {
    FILE *fp = tmpfile();
    assert_non_null(fp);
    sps__html_opts_t o = {SPS__HTML_DEFAULT_MAX_SPANS, "t", NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(sps__html_write(fp, r, &o), 0);
    char *page = read_all(fp);
    fclose(fp);
    return page;
}

/* 20 regions: 20 different "#rrggbb" colours in the data blob, and the
 * legend lists the regions by total time, longest first. */
static void test_twenty_colours(void **state) {
    (void)state;
    char names_buf[20][16];
    const char *names[20];
    int durs[20];
    for (int i = 0; i < 20; i++) {
        snprintf(names_buf[i], sizeof names_buf[i], "r%02d", i);
        names[i] = names_buf[i];
        durs[i] = 10 + 7 * ((i * 7) % 20); /* a permutation of lengths */
    }
    const char *path = tu_path("html_twenty.json");
    write_trace(path, names, durs, 20);
    sps__tlr_t *r = open_json(path);
    char *page = page_of(r);
    sps__tlr_free(r);
    char *c = strstr(page, "\"colors\":[");
    assert_non_null(c);
    c += strlen("\"colors\":[");
    char seen[20][8];
    for (int i = 0; i < 20; i++) {
        assert_int_equal(c[0], '"');
        assert_int_equal(c[1], '#');
        memcpy(seen[i], c + 1, 7);
        seen[i][7] = 0;
        for (int k = 0; k < i; k++) assert_string_not_equal(seen[k], seen[i]);
        c += 9 + (i < 19); /* "#rrggbb" and the comma */
    }
    /* the legend: longest first */
    const char *lg = strstr(page, "<div id=\"legend\">");
    assert_non_null(lg);
    int last = 1 << 30;
    for (int i = 0; i < 20; i++) {
        lg = strstr(lg, "</span>r");
        assert_non_null(lg);
        int idx = atoi(lg + strlen("</span>r"));
        assert_true(durs[idx] <= last);
        last = durs[idx];
        lg++;
    }
    free(page);
}

/* Two runs: a region of both, one of each alone. */
static void test_compare_two(void **state) {
    (void)state;
    const char *na[] = {"both", "only_a"}, *nb[] = {"both", "only_b"};
    const int da[] = {100, 5}, db[] = {300, 7};
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s", tu_path("html_cmp_a.json"));
    snprintf(pb, sizeof pb, "%s", tu_path("html_cmp_b.json"));
    write_trace(pa, na, da, 2);
    write_trace(pb, nb, db, 2);
    sps__tlr_t *rs[2] = {open_json(pa), open_json(pb)};
    const char *labels[2] = {"a", "b"};
    FILE *fp = tmpfile();
    assert_non_null(fp);
    sps__html_opts_t o = {0, NULL, NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(sps__html_write_cmp(fp, rs, labels, 2, &o), 0);
    char *buf = read_all(fp);
    fclose(fp);
    sps__tlr_free(rs[0]);
    sps__tlr_free(rs[1]);
    /* regions in order of their most total time, stats per run */
    assert_non_null(strstr(buf, "\"regions\":[\"both\",\"only_b\",\"only_a\"]"));
    assert_non_null(strstr(buf, "\"stats\":[[[1,100000,100000,100000,100000],"
                                "[1,300000,300000,300000,300000]],[null,[1,7000,"));
    assert_non_null(strstr(buf, "data-v=\"3\">3&times; (+200.0%)</td>"));
    assert_non_null(strstr(buf, ">new</td>"));
    assert_non_null(strstr(buf, ">gone</td>"));
    free(buf);
}

/* Bad arguments: SPS_EINVAL, nothing written. */
static void test_bad_arguments(void **state) {
    (void)state;
    const char *n[] = {"x"};
    const int d[] = {1};
    const char *path = tu_path("html_bad.json");
    write_trace(path, n, d, 1);
    sps__tlr_t *r = open_json(path);
    sps__tlr_t *rs[2] = {r, NULL};
    const char *labels[2] = {"a", "b"};
    FILE *fp = tmpfile();
    assert_non_null(fp);
    sps__html_opts_t o = {0, NULL, NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(sps__html_write_cmp(fp, rs, labels, 1, &o), SPS_EINVAL);
    assert_int_equal(sps__html_write_cmp(fp, rs, labels, 2, &o), SPS_EINVAL);
    rs[1] = r;
    assert_int_equal(sps__html_write_cmp(fp, rs, NULL, 2, &o), SPS_EINVAL);
    assert_int_equal(sps__html_write_cmp(NULL, rs, labels, 2, &o), SPS_EINVAL);
    assert_int_equal(sps__html_write_cmp(fp, rs, labels, 2, NULL), SPS_EINVAL);
    assert_int_equal(ftell(fp), 0);
    fclose(fp);
    sps__tlr_free(r);
}

/* sps_html_compare_files (the public face of the comparison): the page of
 * two files written into place; bad arguments and a missing input are
 * codes with a reason, and leave no page behind. */
static void test_compare_files(void **state) {
    (void)state;
    const char *na[] = {"both", "only_a"}, *nb[] = {"both", "only_b"};
    const int da[] = {100, 5}, db[] = {300, 7};
    char pa[512], pb[512], out[512];
    snprintf(pa, sizeof pa, "%s", tu_path("html_cf_a.json"));
    snprintf(pb, sizeof pb, "%s", tu_path("html_cf_b.json"));
    snprintf(out, sizeof out, "%s", tu_path("html_cf.html"));
    write_trace(pa, na, da, 2);
    write_trace(pb, nb, db, 2);
    const char *in[2] = {pa, pb}, *labels[2] = {"base", "new"};
    char err[512] = "";
    remove(out);
    assert_int_equal(sps_html_compare_files(in, labels, 1, out, err, sizeof err), SPS_EINVAL);
    assert_non_null(strstr(err, "two or more"));
    assert_int_equal(sps_html_compare_files(in, NULL, 2, out, err, sizeof err), SPS_EINVAL);
    const char *missing[2] = {pa, tu_path("html_cf_none.json")};
    assert_true(sps_html_compare_files(missing, labels, 2, out, err, sizeof err) < 0);
    assert_non_null(strstr(err, "html_cf_none.json"));
    FILE *fp = fopen(out, "r");
    assert_null(fp);
    assert_int_equal(sps_html_compare_files(in, labels, 2, out, err, sizeof err), 0);
    fp = fopen(out, "r");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    char *page = read_all(fp);
    fclose(fp);
    assert_non_null(strstr(page, "\"regions\":[\"both\",\"only_b\",\"only_a\"]"));
    assert_non_null(strstr(page, ">base<"));
    free(page);
}

/* --- the options (sps_html_write_files) ---------------------------------- */

/* Writes a Chrome trace of nranks processes (ranks 0..nranks-1, one
 * thread each) to path: calls times "main" around "solve" (solve_us) then
 * "io" (io_us), and on rank r > 0 also one "only_r<r>". */
static void write_ranks_trace(const char *path, int nranks, int solve_us, int io_us) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"traceEvents\":[", f);
    const char *sep = "";
    for (int r = 0; r < nranks; r++) {
        fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%d,"
                "\"args\":{\"labels\":\"rank %d\"}}", sep, 100 + r, r);
        sep = ",";
        long t = 0;
        for (int c = 0; c < 4; c++) {
            fprintf(f, ",{\"ph\":\"X\",\"name\":\"main\",\"pid\":%d,\"tid\":1,\"ts\":%ld,"
                    "\"dur\":%d}", 100 + r, t, solve_us + io_us + 2);
            fprintf(f, ",{\"ph\":\"X\",\"name\":\"solve\",\"pid\":%d,\"tid\":1,\"ts\":%ld,"
                    "\"dur\":%d}", 100 + r, t + 1, solve_us);
            fprintf(f, ",{\"ph\":\"X\",\"name\":\"io\",\"pid\":%d,\"tid\":1,\"ts\":%ld,"
                    "\"dur\":%d}", 100 + r, t + 1 + solve_us, io_us);
            t += solve_us + io_us + 10;
        }
        if (r > 0)
            fprintf(f, ",{\"ph\":\"X\",\"name\":\"only_r%d\",\"pid\":%d,\"tid\":1,\"ts\":%ld,"
                    "\"dur\":5}", r, 100 + r, t);
    }
    fputs("]}", f);
    fclose(f);
}

/* The path of html_ranks.json, freshly written by write_ranks_trace with
 * nranks ranks, solve 100 us and io 10 us (a static buffer). */
static const char *ranks_trace(int nranks) {
    static char path[512];
    snprintf(path, sizeof path, "%s", tu_path("html_ranks.json"));
    write_ranks_trace(path, nranks, 100, 10);
    return path;
}

/* The page sps_html_write_files writes of the n inputs with o (caller
 * frees), rc its code. */
static char *page_with(const char *const *in, size_t n, const sps_html_options_t *o,
                       int *rc, char *err, size_t errlen) {
    const char *out = tu_path("html_opts.html");
    remove(out);
    *rc = sps_html_write_files(in, NULL, n, out, o, err, errlen);
    FILE *fp = fopen(out, "r");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    char *page = read_all(fp);
    fclose(fp);
    return page;
}

/* The text of the table row of region name in page, up to its </tr>
 * (static buffer), or NULL when the table has no such row. */
static const char *row_of(const char *page, const char *name) {
    static char buf[4096];
    char key[128];
    snprintf(key, sizeof key, "<tr><td data-v=\"%s\">", name);
    const char *t = strstr(page, "<table id=\"stats\">"), *s = t ? strstr(t, key) : NULL;
    if (!s) return NULL;
    const char *e = strstr(s, "</tr>");
    size_t n = (size_t)(e - s) < sizeof buf - 1 ? (size_t)(e - s) : sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return buf;
}

/* The page of the n inputs with o, which must be written (rc 0; caller
 * frees). */
static char *page_ok(const char *const *in, size_t n, const sps_html_options_t *o) {
    char err[512] = "";
    int rc;
    char *page = page_with(in, n, o, &rc, err, sizeof err);
    if (rc) print_error("sps_html_write_files: %d %s\n", rc, err);
    assert_int_equal(rc, 0);
    assert_non_null(page);
    return page;
}

/* Asserts that the n inputs with o are refused, code want and a message
 * holding msg, before anything is written. */
static void page_refused(const char *const *in, size_t n, const sps_html_options_t *o,
                         int want, const char *msg) {
    char err[512] = "";
    int rc;
    char *page = page_with(in, n, o, &rc, err, sizeof err);
    assert_null(page);
    assert_int_equal(rc, want);
    assert_non_null(strstr(err, msg));
}

/* The page of path with include patterns inc (ninc of them) and exclude
 * patterns exc (nexc), the other options default (written; caller frees). */
static char *filtered_page(const char *path, const char *const *inc, size_t ninc,
                           const char *const *exc, size_t nexc) {
    const char *in[1] = {path};
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    o.include = inc;
    o.ninclude = ninc;
    o.exclude = exc;
    o.nexclude = nexc;
    return page_ok(in, 1, &o);
}

/* The first 40 bytes of region name's self-time cell in page's table (the
 * default columns: region calls total self ...: the 4th cell) into buf. */
static void self_cell(const char *page, const char *name, char *buf, size_t cap) {
    const char *c = row_of(page, name);
    assert_non_null(c);
    for (int i = 0; i < 3; i++) assert_non_null(c = strstr(c + 1, "<td"));
    snprintf(buf, cap, "%.40s", c);
}

/* Records a small .h5 with the live API: 3 x outer (inner 2 ms, io 1 ms,
 * 0.5 ms of its own). */
static void record_small(const char *path) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner"),
                 io = sps_region("io");
    for (int i = 0; i < 3; i++) {
        sps_begin(outer);
        sps_begin(inner);
        tu_spin_ns(2000000);
        sps_end(inner);
        sps_begin(io);
        tu_spin_ns(1000000);
        sps_end(io);
        tu_spin_ns(500000);
        sps_end(outer);
    }
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
}

/* include/exclude pick what is shown, by an ERE at the name's start (re.match):
 * "in" passes inner, not io; hiding inner leaves outer's self time as it
 * was (hidden children are still folded); a pattern matching nothing is a
 * page that says so, as scope-profiler writes one; a bad one is EINVAL. */
static void test_filters(void **state) {
    (void)state;
    char path[512], self_all[256], self_ex[256];
    snprintf(path, sizeof path, "%s", tu_path("html_small.h5"));
    record_small(path);
    char *page = filtered_page(path, NULL, 0, NULL, 0);
    self_cell(page, "outer", self_all, sizeof self_all);
    free(page);

    const char *inc[] = {"in"};
    page = filtered_page(path, inc, 1, NULL, 0);
    assert_non_null(row_of(page, "inner"));
    assert_null(row_of(page, "io"));
    assert_null(row_of(page, "outer"));
    assert_null(strstr(strstr(page, "<div id=\"legend\">"), ">outer</span>"));
    assert_non_null(strstr(page, "id=\"filters\""));
    free(page);

    const char *exc[] = {"inner"};
    page = filtered_page(path, NULL, 0, exc, 1);
    assert_null(row_of(page, "inner"));
    self_cell(page, "outer", self_ex, sizeof self_ex);
    assert_string_equal(self_all, self_ex);
    free(page);

    const char *none[] = {"zzz"};
    page = filtered_page(path, none, 1, NULL, 0);
    assert_non_null(strstr(page, "No regions matched the selected filters."));
    assert_null(row_of(page, "outer"));
    free(page);

    const char *in[1] = {path}, *bad[] = {"("};
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    o.include = bad;
    o.ninclude = 1;
    page_refused(in, 1, &o, SPS_EINVAL, "bad region pattern '('"); /* nothing written */
}

/* ranks: only the selected ranks' spans are read (a region of another
 * rank is not in the table); a rank the run lacks is named on the page. */
static void test_ranks(void **state) {
    (void)state;
    const char *in[1] = {ranks_trace(3)};
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    const int64_t r1[] = {1}, r7[] = {0, 7};
    o.ranks = r1;
    o.nranks = 1;
    const char *cols[] = {"region", "ranks", "calls"};
    o.columns = cols;
    o.ncolumns = 3;
    char *page = page_ok(in, 1, &o);
    assert_non_null(row_of(page, "only_r1"));
    assert_null(row_of(page, "only_r2"));
    assert_non_null(strstr(row_of(page, "solve"), "data-v=\"1\">1</td><td class=\"n\" "
                                                  "data-v=\"4\">4</td>"));
    free(page);
    o.ranks = r7;
    o.nranks = 2;
    page = page_ok(in, 1, &o);
    assert_non_null(strstr(page, "id=\"badrank-7\">Rank 7 is not in this run: it holds 3 "
                                 "ranks, 0 to 2."));
    assert_null(row_of(page, "only_r1"));
    free(page);
}

/* The table's columns and sort key; unknown ones are SPS_EINVAL with
 * scope-profiler's wording, before anything is written. */
static void test_table_options(void **state) {
    (void)state;
    const char *in[1] = {ranks_trace(2)};
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    const char *cols[] = {"region", "calls", "p50", "imbalance"};
    o.columns = cols;
    o.ncolumns = 4;
    o.sort = "name";
    char *page = page_ok(in, 1, &o);
    assert_non_null(strstr(page, "<thead><tr><th>region</th><th>calls</th><th>p50</th>"
                                 "<th>imbalance</th></tr></thead>"));
    /* by name: io, main, only_r1, solve */
    const char *t = strstr(page, "<table id=\"stats\">");
    const char *a = strstr(t, ">io<"), *b = strstr(t, ">main<"), *c = strstr(t, ">only_r1<"),
               *d = strstr(t, ">solve<");
    assert_true(a && b && c && d && a < b && b < c && c < d);
    /* p50 of solve's eight 100 us calls: 100 us (within its bucket, never past max) */
    assert_non_null(strstr(row_of(page, "solve"), "data-v=\"100000\">100.00 \xc2\xb5s</td>"));
    free(page);
    o.sort = "calls"; /* descending, ties by name: io, main, solve (8), only_r1 (1) */
    page = page_ok(in, 1, &o);
    t = strstr(page, "<table id=\"stats\">");
    a = strstr(t, ">io<");
    c = strstr(t, ">only_r1<");
    d = strstr(t, ">solve<");
    assert_true(a && c && d && a < d && d < c);
    free(page);

    const char *bad[] = {"region", "bogus"};
    o.columns = bad;
    o.ncolumns = 2;
    page_refused(in, 1, &o, SPS_EINVAL, "Unknown region summary column(s): ['bogus']");
    o.ncolumns = 0; /* a list with nothing in it */
    page_refused(in, 1, &o, SPS_EINVAL, "At least one region summary column");
    o.columns = NULL;
    o.sort = "fastest";
    page_refused(in, 1, &o, SPS_EINVAL, "unknown sort key 'fastest'");
    o.sort = NULL;
    o.scaling = "linear";
    page_refused(in, 1, &o, SPS_EINVAL, "scaling must be one of");
}

/* charts 0: the tables alone; charts_cdn changes nothing (the page loads
 * nothing either way). */
static void test_charts_off(void **state) {
    (void)state;
    const char *in[1] = {ranks_trace(2)};
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    char *with = page_ok(in, 1, &o);
    o.charts_cdn = 1;
    char *cdn = page_ok(in, 1, &o);
    assert_string_equal(with, cdn);
    assert_null(strstr(with, "src=\""));
    o.charts = 0;
    char *without = page_ok(in, 1, &o);
    assert_non_null(strstr(with, "<canvas"));
    assert_null(strstr(without, "<canvas"));
    assert_null(strstr(without, "id=\"legend\""));
    assert_null(strstr(without, "id=\"bars\""));
    assert_non_null(row_of(without, "solve"));
    free(with);
    free(cdn);
    free(without);
}

/* The comparison's scaling section: solve's work split over 1, 2, 4 ranks
 * is a speedup of 1, 2, 4 with efficiency 1; io's fixed 10 us a speedup of
 * 1, efficiency 1, 1/2, 1/4.  "weak" draws the weak chart alone; runs of
 * one size have no section; a named axis a run lacks is SPS_EINVAL. */
static void test_scaling(void **state) {
    (void)state;
    char p[3][512];
    const int n[3] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "html_scale%d.json", n[i]);
        snprintf(p[i], sizeof p[i], "%s", tu_path(name));
        write_ranks_trace(p[i], n[i], 400 / n[i], 10);
    }
    const char *in[3] = {p[0], p[1], p[2]};
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    char *page = page_ok(in, 3, &o);
    assert_non_null(strstr(page, "\"scaling\":{\"axis\":\"ranks\",\"x\":[1,2,4],"
                                 "\"regions\":[\"main\",\"solve\",\"io\"]"));
    assert_non_null(strstr(page, "\"speedup\":[[1,1.94"));
    assert_non_null(strstr(page, "[1,2,4],[1,1,1]],\"efficiency\":["));
    assert_non_null(strstr(page, "[1,1,1],[1,0.5,0.25]],\"weak_efficiency\""));
    assert_non_null(strstr(page, "<svg id=\"speedup\""));
    assert_non_null(strstr(page, "<svg id=\"weak-efficiency\""));
    assert_non_null(strstr(page, "\"axes\":[{\"ranks\":1,\"nodes\":1,\"threads\":null,"
                                 "\"cores\":null},{\"ranks\":2,\"nodes\":null,"));
    free(page);
    o.scaling = "weak";
    page = page_ok(in, 3, &o);
    assert_null(strstr(page, "<svg id=\"speedup\""));
    assert_non_null(strstr(page, "<svg id=\"weak-efficiency\""));
    free(page);
    o.scaling = NULL;
    o.speedup_x = "threads"; /* a trace has no /metadata */
    page_refused(in, 3, &o, SPS_EINVAL, "'omp_num_threads'");
    o.speedup_x = NULL;
    const char *same[2] = {p[1], p[1]};
    page = page_ok(same, 2, &o);
    assert_non_null(strstr(page, "\"scaling\":null"));
    assert_null(strstr(page, "id=\"scaling\""));
    free(page);
    o.speedup_x = "ranks"; /* named, one value: a note, no charts */
    page = page_ok(same, 2, &o);
    assert_non_null(strstr(page, "Every run has the same ranks (2), so there is no scaling"));
    assert_null(strstr(page, "<svg"));
    free(page);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twenty_colours),
        cmocka_unit_test(test_compare_two),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_compare_files),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_table_options),
        cmocka_unit_test(test_charts_off),
        cmocka_unit_test(test_scaling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
