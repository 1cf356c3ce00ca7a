/* test_samples_views.c -- the views of a file's stack samples (issue 34
 * part 2; src/formats/folded.c and its users): the report's "Where the
 * time went (samples)" puts each burn function under the region that ran
 * it and the rest outside every span; speedscope's sampled profiles carry
 * every sample's weight; the folded stacks (sps_export_stacks, the export
 * "folded") add up to the file's total weight and name the leaves, by
 * region when asked; the flame graph from samples draws the functions;
 * a file without samples is refused with a clear message. */
#include "testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile uint64_t sink;

/* Each burns ms milliseconds of this thread's CPU, nearly all of it in
 * its own loop (the clock is read every ~100k steps), so that the samples'
 * leaf is the burner itself.  noinline: a frame of its own. */
#define BURNER(name, mul)                                                          \
    __attribute__((noinline)) static void name(int ms) {                           \
        int64_t end = thread_cpu_ns() + (int64_t)ms * 1000000;                     \
        uint64_t x = sink;                                                         \
        while (thread_cpu_ns() < end)                                              \
            for (int i = 0; i < 100000; i++) x = x * (mul) + 1;                    \
        sink = x;                                                                  \
    }
BURNER(burn_alpha, 6364136223846793005ull)
BURNER(burn_beta, 2862933555777941757ull)
BURNER(burn_gamma, 3935559000370003845ull)

static const char *recorded; /* the file with samples, made once */
/* the burners' milliseconds, read at run time: no constant reaches them,
 * so the compiler keeps them as they are named (no .constprop clone) */
static volatile int ms_alpha = 60, ms_beta = 40, ms_gamma = 30;

/* outer > alpha: burn_alpha; beta: burn_beta; outside every span:
 * burn_gamma.  About 300 : 200 : 150 ms of CPU. */
static const char *record(void) {
    if (recorded) return recorded;
    const char *path = tu_path("samples_views.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    cfg.sample_hz = 1000;
    assert_int_equal(sps_setup(&cfg), 0);
    /* (also links the sampler's object from the static library: its
     * constructor registers it, and nothing else here names it) */
    assert_int_equal(sps_sampling_hz(), 1000);
    sps_region_t outer = sps_region("outer"), alpha = sps_region("alpha"),
                 beta = sps_region("beta");
    for (int round = 0; round < 5; round++) {
        sps_begin(outer);
        sps_begin(alpha);
        burn_alpha(ms_alpha);
        sps_end(alpha);
        sps_end(outer);
        sps_begin(beta);
        burn_beta(ms_beta);
        sps_end(beta);
        burn_gamma(ms_gamma);
    }
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    recorded = path;
    return path;
}

/* The weight of every sample of path (sps_samples_read). */
static uint64_t total_weight(const char *path) {
    sps_samples_t s;
    assert_int_equal(sps_samples_read(path, &s), 0);
    uint64_t w = 0;
    for (size_t i = 0; i < s.n; i++) w += (uint64_t)s.weights[i];
    assert_true(s.n > 0);
    sps_samples_free(&s);
    return w;
}

/* The whole file at path, NUL-terminated (malloc'd). */
static char *slurp(const char *path) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
    b[n] = '\0';
    fclose(fp);
    return b;
}

/* The block of the report's samples section that starts with "name: "
 * (up to the next blank line), or NULL. */
static char *block_of(const char *section, const char *name) {
    size_t n = strlen(name);
    for (const char *p = section; (p = strstr(p, name)); p++) {
        if ((p != section && p[-1] != '\n') || strncmp(p + n, ": ", 2)) continue;
        const char *e = strstr(p, "\n\n");
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *b = malloc(len + 1);
        memcpy(b, p, len);
        b[len] = '\0';
        return b;
    }
    return NULL;
}

/* The function of the first table row of block b ("  samples  ms  %  fn"). */
/* Whether text at p is fn's label: "fn (test_samples_views)" (its module),
 * or "fn (<path>/test_samples_views.c:N)" where libdw gives the -g build's
 * lines (not under TSan). */
static int is_label(const char *p, const char *fn) {
    size_t n = strlen(fn);
    if (strncmp(p, fn, n) || strncmp(p + n, " (", 2)) return 0;
    p += n + 2;
    if (!strncmp(p, "test_samples_views)", 19)) return 1;
    const char *close = strchr(p, ')'), *at = strstr(p, "test_samples_views.c:");
    return close && at && at < close;
}

static int top_leaf_is(const char *b, const char *fn) {
    const char *hdr = strstr(b, "function\n");
    if (!hdr) return 0;
    const char *row = hdr + strlen("function\n"), *end = strchr(row, '\n');
    size_t len = end ? (size_t)(end - row) : strlen(row);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)len, row);
    const char *at = strstr(line, fn);
    return at && is_label(at, fn);
}

/* Whether the SVG has a frame titled with fn's label. */
static int svg_has(const char *doc, const char *fn) {
    for (const char *p = doc; (p = strstr(p, "<title>")) != NULL; p++)
        if (is_label(p + 7, fn)) return 1;
    return 0;
}

static void test_report_puts_functions_under_their_regions(void **state) {
    (void)state;
    const char *path = record();
    const char *out = tu_path("samples_views_report.txt");
    FILE *fp = fopen(out, "w");
    assert_non_null(fp);
    char err[256];
    assert_int_equal(sps_report(path, fp, NULL, 0, err, sizeof err), 0);
    fclose(fp);
    char *text = slurp(out);
    char *sec = strstr(text, "Where the time went (samples)\n");
    assert_non_null(sec);
    char *a = block_of(sec, "alpha"), *b = block_of(sec, "beta"),
         *o = block_of(sec, "(outside every span)");
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(o);
    assert_true(top_leaf_is(a, "burn_alpha"));
    assert_true(top_leaf_is(b, "burn_beta"));
    assert_true(top_leaf_is(o, "burn_gamma"));
    assert_null(strstr(a, "burn_beta"));
    assert_null(strstr(a, "burn_gamma"));
    assert_null(strstr(b, "burn_alpha"));
    assert_null(strstr(o, "burn_alpha"));
    /* outer ran no code of its own: its samples are alpha's */
    char *outer = block_of(sec, "outer");
    assert_true(outer == NULL || strstr(outer, "burn_alpha") == NULL);
    /* the shares of a region's rows are of that region */
    assert_non_null(strstr(a, "% of all\n"));
    free(outer);
    free(a);
    free(b);
    free(o);
    free(text);
}

/* The sum of the numbers of every "weights":[...] of a sampled profile in
 * the speedscope document doc; *nprof gets how many there are. */
static uint64_t sampled_weights(const char *doc, int *nprof) {
    uint64_t sum = 0;
    *nprof = 0;
    for (const char *p = doc; (p = strstr(p, "{\"type\":\"sampled\"")); p++) {
        const char *w = strstr(p, "\"weights\":[");
        assert_non_null(w);
        (*nprof)++;
        for (w += strlen("\"weights\":["); *w != ']';) {
            char *end;
            sum += strtoull(w, &end, 10);
            assert_true(end > w);
            w = *end == ',' ? end + 1 : end;
        }
    }
    return sum;
}

static void test_speedscope_has_sampled_profiles(void **state) {
    (void)state;
    const char *path = record();
    const char *out = tu_path("samples_views.speedscope.json");
    char err[256];
    assert_int_equal(sps_export(path, out, "speedscope", NULL, err, sizeof err), 0);
    char *doc = slurp(out);
    int nprof = 0;
    assert_true(strstr(doc, "{\"type\":\"evented\"") != NULL); /* the spans stay */
    assert_int_equal(sampled_weights(doc, &nprof), total_weight(path));
    assert_int_equal(nprof, 1); /* one thread sampled */
    assert_non_null(strstr(doc, "\"unit\":\"none\""));
    assert_non_null(strstr(doc, "{\"name\":\"burn_alpha\",\"file\":\""));
    /* every frame index of a sample is a frame of the document */
    size_t nframes = 0;
    const char *fr = strstr(doc, "\"frames\":["), *fend = strstr(doc, "]},\"profiles\"");
    assert_true(fr && fend);
    for (const char *p = fr; (p = strstr(p, "{\"name\":")) && p < fend; p++) nframes++;
    const char *smp = strstr(strstr(doc, "{\"type\":\"sampled\""), "\"samples\":[");
    const char *wts = strstr(smp, "\"weights\":[");
    size_t nstacks = 0;
    for (const char *p = smp + strlen("\"samples\":["); p < wts; p++) {
        if (*p == '[') nstacks++;
        if (*p >= '0' && *p <= '9') {
            char *end;
            assert_true(strtoull(p, &end, 10) < nframes);
            p = end - 1;
        }
    }
    assert_true(nstacks >= 3);
    free(doc);
}

/* Checks the folded stacks at out: every line "frames weight", the
 * weights adding up to want; *leaf_w[k] gets the weight of lines whose
 * leaf starts with leaves[k] (and, where prefix is not NULL, that start
 * with prefix[k]). */
static void folded_check(const char *out, uint64_t want, const char *const *leaves,
                         const char *const *prefix, uint64_t *leaf_w, int n) {
    char *doc = slurp(out);
    uint64_t sum = 0;
    for (char *line = doc, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl); /* every line ends */
        *nl = '\0';
        char *sp = strrchr(line, ' ');
        assert_non_null(sp);
        char *end;
        uint64_t w = strtoull(sp + 1, &end, 10);
        assert_true(*end == '\0' && w >= 1);
        sum += w;
        *sp = '\0';
        char *leaf = strrchr(line, ';');
        leaf = leaf ? leaf + 1 : line;
        for (int k = 0; k < n; k++)
            if (!strncmp(leaf, leaves[k], strlen(leaves[k])) &&
                (!prefix || !strncmp(line, prefix[k], strlen(prefix[k]))))
                leaf_w[k] += w;
    }
    assert_int_equal(sum, want);
    free(doc);
}

static void test_folded_stacks(void **state) {
    (void)state;
    const char *path = record();
    uint64_t total = total_weight(path);
    static const char *const leaves[] = {"burn_alpha (", "burn_beta (", "burn_gamma ("};
    uint64_t w[3] = {0};
    const char *out = tu_path("samples_views.folded");
    assert_int_equal(sps_export_stacks(path, out, 0), 0);
    folded_check(out, total, leaves, NULL, w, 3);
    for (int k = 0; k < 3; k++) assert_true(w[k] > 0);
    /* 300 : 200 : 150 ms: the leaves' shares within 25 % of it */
    assert_true(w[0] > w[1] && w[1] > w[2] / 2);
    /* by region: each burner under its region, gamma outside */
    static const char *const regions[] = {"alpha;", "beta;", "[no region];"};
    uint64_t wr[3] = {0};
    assert_int_equal(sps_export_stacks(path, out, 1), 0);
    folded_check(out, total, leaves, regions, wr, 3);
    for (int k = 0; k < 3; k++) assert_true(wr[k] * 10 >= w[k] * 9); /* nearly all */
    /* the export "folded" writes the same lines (rank 0 is all there is) */
    const char *out2 = tu_path("samples_views2.folded");
    sps_export_opts_t o = SPS_EXPORT_OPTS_INIT;
    o.call_paths = 0;
    char err[256];
    assert_int_equal(sps_export(path, out2, "folded", &o, err, sizeof err), 0);
    char *a = slurp(out), *b = slurp(out2);
    assert_string_equal(a, b);
    free(a);
    free(b);
}

static void test_svg_from_samples(void **state) {
    (void)state;
    const char *path = record();
    const char *out = tu_path("samples_views.svg");
    sps_export_opts_t o = SPS_EXPORT_OPTS_INIT;
    o.from_samples = 1;
    char err[256];
    assert_int_equal(sps_export(path, out, "svg", &o, err, sizeof err), 0);
    char *doc = slurp(out);
    assert_true(svg_has(doc, "burn_alpha"));
    assert_true(svg_has(doc, "burn_beta"));
    assert_true(svg_has(doc, "burn_gamma"));
    assert_non_null(strstr(doc, " samples, "));
    assert_null(strstr(doc, "<title>alpha (")); /* no region frames unless asked */
    free(doc);
    o.call_paths = 0; /* by region: the regions under the root */
    assert_int_equal(sps_export(path, out, "svg", &o, err, sizeof err), 0);
    doc = slurp(out);
    assert_non_null(strstr(doc, "<title>alpha ("));
    assert_non_null(strstr(doc, "<title>[no region] ("));
    free(doc);
    /* from spans, the same file draws regions, no functions */
    o = (sps_export_opts_t)SPS_EXPORT_OPTS_INIT;
    assert_int_equal(sps_export(path, out, "svg", &o, err, sizeof err), 0);
    doc = slurp(out);
    assert_non_null(strstr(doc, "<title>alpha ("));
    assert_null(strstr(doc, "burn_alpha"));
    free(doc);
}

/* The HTML page's section: each region's table names its burner and no
 * other. */
static void test_html_page_per_region(void **state) {
    (void)state;
    const char *path = record();
    const char *out = tu_path("samples_views.html");
    char err[256];
    assert_int_equal(sps_html_file(path, out, 0, err, sizeof err), 0);
    char *doc = slurp(out);
    char *sec = strstr(doc, "<h2 id=\"samples\">Where the time went (samples)</h2>");
    assert_non_null(sec);
    static const char *const heads[] = {"<h3>alpha <", "<h3>beta <",
                                        "<h3>(outside every span) <"};
    static const char *const fns[] = {"burn_alpha", "burn_beta", "burn_gamma"};
    for (int k = 0; k < 3; k++) {
        char *h = strstr(sec, heads[k]);
        assert_non_null(h);
        char *end = strstr(h, "</table>");
        assert_non_null(end);
        *end = '\0';
        assert_non_null(strstr(h, fns[k]));
        for (int j = 0; j < 3; j++)
            if (j != k) assert_null(strstr(h, fns[j]));
        *end = '<';
    }
    free(doc);
}

static void test_file_without_samples_is_refused(void **state) {
    (void)state;
    const char *path = tu_path("samples_views_none.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("plain");
    sps_begin(r);
    sps_end(r);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    const char *out = tu_path("samples_views_none.folded");
    assert_int_equal(sps_export_stacks(path, out, 0), SPS_EINVAL);
    assert_non_null(strstr(sps_last_error(), "no stack samples"));
    assert_non_null(strstr(sps_last_error(), path));
    FILE *fp = fopen(out, "r");
    assert_null(fp); /* nothing written */
    sps_export_opts_t o = SPS_EXPORT_OPTS_INIT;
    o.from_samples = 1;
    char err[256];
    assert_int_equal(sps_export(path, tu_path("samples_views_none.svg"), "svg", &o, err,
                               sizeof err), SPS_EINVAL);
    assert_non_null(strstr(err, "no stack samples"));
    assert_int_equal(sps_export(path, out, "folded", NULL, err, sizeof err), SPS_EINVAL);
    assert_int_equal(sps_export_stacks(NULL, out, 0), SPS_EINVAL);
    /* the report of a file without samples has no samples section */
    const char *rep = tu_path("samples_views_none.txt");
    fp = fopen(rep, "w");
    assert_int_equal(sps_report(path, fp, NULL, 0, err, sizeof err), 0);
    fclose(fp);
    char *text = slurp(rep);
    assert_null(strstr(text, "Where the time went"));
    free(text);
    assert_int_equal(sps_html_file(path, tu_path("samples_views_none.html"), 0, err,
                                   sizeof err), 0);
    text = slurp(tu_path("samples_views_none.html"));
    assert_null(strstr(text, "Where the time went"));
    free(text);
    /* and the speedscope document keeps only the evented profile */
    assert_int_equal(sps_export(path, tu_path("samples_views_none.json"), "speedscope", NULL,
                                err, sizeof err), 0);
    text = slurp(tu_path("samples_views_none.json"));
    assert_null(strstr(text, "\"sampled\""));
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_puts_functions_under_their_regions),
        cmocka_unit_test(test_speedscope_has_sampled_profiles),
        cmocka_unit_test(test_folded_stacks),
        cmocka_unit_test(test_svg_from_samples),
        cmocka_unit_test(test_html_page_per_region),
        cmocka_unit_test(test_file_without_samples_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
