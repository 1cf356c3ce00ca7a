/* test_html.c -- the HTML page writers (formats/html.h) on their own:
 * the colours of 20 regions all differ and follow total time (the
 * legend's order), the comparison of two runs matches regions by name and
 * says which run lacks one, and bad arguments are SPS_EINVAL with nothing
 * written. */
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
    sps__html_opts_t o = {SPS__HTML_DEFAULT_MAX_SPANS, "t", NULL, NULL, NULL, NULL};
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
    sps__html_opts_t o = {0, NULL, NULL, NULL, NULL, NULL};
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
    sps__html_opts_t o = {0, NULL, NULL, NULL, NULL, NULL};
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twenty_colours),
        cmocka_unit_test(test_compare_two),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_compare_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
