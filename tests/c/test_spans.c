/* test_spans.c -- sps_spans (a window's spans with parents and self time,
 * from every thread) and sps_timeline_write (caller-held spans to a trace),
 * the two public calls the torch-style face is built on. */
#include "testutil.h"
#include "tu_core.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sps_region_t g_a, g_b, g_c;

static void setup_events(void) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    g_a = sps_region("sp.a");
    g_b = sps_region("sp.b");
    g_c = sps_region("sp.c");
}

static void *thread_body(void *arg) {
    (void)arg;
    sps_begin(g_c);
    sps_end(g_c);
    return NULL;
}

/* a { b b } on the main thread, c on another: parents, self, order. */
static void test_spans_nesting_and_self(void **state) {
    (void)state;
    setup_events();
    assert_int_equal(sps_thread_current(), -1); /* nothing recorded yet */
    sps_begin(g_a);
    assert_int_equal(sps_thread_current(), 0);
    for (int i = 0; i < 2; i++) {
        sps_begin(g_b);
        usleep(200);
        sps_end(g_b);
    }
    sps_end(g_a);
    pthread_t t;
    pthread_create(&t, NULL, thread_body, NULL);
    pthread_join(t, NULL);
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(v[0].region, g_a);
    assert_int_equal(v[0].parent, -1);
    assert_int_equal(v[1].region, g_b);
    assert_int_equal(v[1].parent, 0);
    assert_int_equal(v[2].parent, 0);
    assert_int_equal(v[3].region, g_c);
    assert_int_equal(v[3].thread, 1);
    assert_int_equal(v[3].parent, -1);
    int64_t kids = (v[1].end_ns - v[1].start_ns) + (v[2].end_ns - v[2].start_ns);
    assert_int_equal(v[0].self_ns, (v[0].end_ns - v[0].start_ns) - kids);
    assert_int_equal(v[1].self_ns, v[1].end_ns - v[1].start_ns);
    assert_true(v[1].end_ns - v[1].start_ns >= 200000);
    for (size_t i = 1; i < n; i++) assert_true(v[i - 1].start_ns <= v[i].start_ns);
    sps_thread_t ti;
    assert_int_equal(sps_thread_info(1, &ti), 0);
    assert_true(ti.native_id > 0);
    assert_int_equal(sps_thread_info(7, &ti), SPS_EINVAL);

    /* a window holding only the second b: its parent is outside, so -1 */
    int64_t from = v[2].start_ns, to = v[2].end_ns;
    sps_free(v);
    assert_int_equal(sps_spans(from, to, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].region, g_b);
    assert_int_equal(v[0].parent, -1);
    sps_free(v);
    sps_shutdown();
}

/* Open spans are not returned; a finalize (checkpoint) starts a new
 * period; errors without a session and in aggregate mode. */
static void test_spans_open_periods_errors(void **state) {
    (void)state;
    sps_span_t *v = (sps_span_t *)1;
    size_t n = 9;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), SPS_ENOSESSION);
    assert_null(v);
    assert_int_equal(n, 0);
    assert_int_equal(sps_spans(0, 1, NULL, &n), SPS_EINVAL);
    setup_events();
    sps_begin(g_a);
    sps_begin(g_b);
    sps_end(g_b);
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 1); /* a is still open */
    assert_int_equal(v[0].parent, -1); /* its parent is not in the array */
    sps_free(v);
    assert_int_equal(sps_finalize_to(NULL), 0);
    sps_end(g_a);
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 1); /* a, carried over from the first period */
    assert_int_equal(v[0].region, g_a);
    sps_free(v);
    sps_shutdown();
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), SPS_EMODE);
    sps_shutdown();
}

/* Not static, and the test is linked with ENABLE_EXPORTS: dladdr names
 * only exported symbols, and spanscope is linked statically here, so the
 * stack must be cut at the call site to keep these frames. */
void stacked_work(void);
void __attribute__((noinline)) stacked_work(void) {
    sps_begin(g_b);
    sps_end(g_b);
}

void open_a(void);
void __attribute__((noinline)) open_a(void) {
    sps_begin(g_a);
    __asm__ __volatile__("" ::: "memory"); /* no tail call: keep this frame */
}

/* Non-zero when stack id's formatted first line starts with prefix. */
static int stack_starts(uint32_t id, const char *prefix) {
    char text[4096];
    size_t len = sps_stack_format(id, text, sizeof text);
    return len > 0 && len < sizeof text && strncmp(text, prefix, strlen(prefix)) == 0;
}

/* Native stacks: only while capture is on; interned; formatted. */
static void test_native_stacks(void **state) {
    (void)state;
    assert_int_equal(sps_capture_stacks(1), SPS_ENOSESSION);
    setup_events();
    sps_begin(g_a);                     /* before: no stack */
    sps_end(g_a);
    assert_int_equal(sps_capture_stacks(1), 0);
    for (volatile int i = 0; i < 3; i++) stacked_work(); /* one call site */
    stacked_work();                     /* a second call site */
    assert_int_equal(sps_capture_stacks(0), 0);
    stacked_work();                     /* after: no stack */
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 6);
    assert_int_equal(v[0].stack, 0);
    assert_int_not_equal(v[1].stack, 0);
    assert_int_equal(v[1].stack, v[2].stack); /* the same call site, interned */
    assert_int_equal(v[2].stack, v[3].stack);
    assert_int_not_equal(v[4].stack, 0);
    assert_int_not_equal(v[4].stack, v[1].stack); /* another call site */
    assert_int_equal(v[5].stack, 0);
    /* the innermost frame is the user's function, not spanscope's */
    assert_true(stack_starts(v[1].stack, "stacked_work+"));
    assert_true(stack_starts(v[4].stack, "stacked_work+"));
    size_t len = sps_stack_format(v[1].stack, NULL, 0);
    assert_true(len > 0);
    char *text = malloc(len + 1);
    assert_int_equal(sps_stack_format(v[1].stack, text, len + 1), len);
    assert_int_equal(strlen(text), len);
    assert_non_null(strchr(text, '\n'));
    char small[8];
    assert_int_equal(sps_stack_format(v[1].stack, small, sizeof small), len);
    assert_int_equal(small[0], 0); /* too small: nothing partial */
    assert_int_equal(sps_stack_format(999999, small, sizeof small), 0);
    free(text);
    sps_free(v);
    sps_shutdown();
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.aggregate = 1;
    assert_int_equal(sps_setup(&cfg), 0);
    assert_int_equal(sps_capture_stacks(1), SPS_EMODE);
    sps_shutdown();
}

/* A span open across a finalize while its thread drops events
 * (SPS_OVERFLOW_DROP) keeps its own stack: the record numbering resumes
 * where it stopped, so a later begin does not take the span's number (and
 * stack). */
static void test_stacks_across_drop_and_finalize(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.overflow = SPS_OVERFLOW_DROP;
    cfg.chunk_size = 4096;
    cfg.memory_limit = 2 * 4096;
    assert_int_equal(sps_setup(&cfg), 0);
    g_a = sps_region("sp.a");
    g_b = sps_region("sp.b");
    g_c = sps_region("sp.c");
    assert_int_equal(sps_capture_stacks(1), 0);
    open_a(); /* a stays open: begin record 1 of this thread */
    /* fill both chunks with unmatched ends (no stacks, no open spans) */
    for (int i = 0; i < 100000 && sps_dropped() == 0; i++) sps_end(g_c);
    assert_true(sps_dropped() > 0);
    assert_int_equal(sps_finalize_to(NULL), 0); /* takes the retired chunks */
    stacked_work(); /* recovers from dropping: its begin must not be number 1 */
    sps_end(g_a);
    sps_span_t *v;
    size_t n;
    assert_int_equal(sps_spans(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(v[0].region, g_a); /* carried over the finalize */
    assert_int_equal(v[1].region, g_b);
    assert_int_equal(v[1].parent, 0);
    assert_int_not_equal(v[0].stack, 0);
    assert_int_not_equal(v[0].stack, v[1].stack);
    assert_true(stack_starts(v[0].stack, "open_a+"));
    assert_true(stack_starts(v[1].stack, "stacked_work+"));
    sps_free(v);
    sps_shutdown();
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* Caller-held spans with args and extra keys; bad input is refused. */
static void test_timeline_write(void **state) {
    (void)state;
    const char *names[] = {"zero", "outer", "inn\"er"};
    int64_t tids[] = {4242};
    const char *tnames[] = {"main"};
    sps_span_t sp[2] = {{1000, 5000, 2000, -1, 1, 0, 0, 0, 0}, {2000, 4000, 2000, 0, 2, 0, 1, 0, 0}};
    const char *args[] = {"{ }", "{\"Input Dims\":[[2,3]]} "}; /* no members; a trailing blank */
    sps_timeline_t t = {3, names, 1, tids, tnames, 2, sp, args, "\"record_shapes\":true",
                        500, NULL, "unit", 1, 2, 1700000000000000000, 123456789, "node-x",
                        0, NULL, 777, "gloo"};
    const char *path = tu_path("spans.json");
    assert_int_equal(sps_timeline_write(path, &t), 0);
    char *s = slurp(path);
    assert_non_null(s);
    /* each span once: user_annotation with kineto's args (no cpu_op copy:
     * that is the TensorBoard layout's, spanscope convert --torch-tb) */
    assert_non_null(strstr(s, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"outer\","
                              "\"pid\":777,\"tid\":4242,\"ts\":0.500,\"dur\":4.000,"
                              "\"args\":{\"External id\":1,\"Record function id\":0,\"Ev Idx\":0}}"));
    assert_null(strstr(s, "\"cat\":\"cpu_op\""));
    assert_null(strstr(s, "spanscope_view"));
    assert_non_null(strstr(s, "\"name\":\"inn\\\"er\""));
    /* the caller's args follow kineto's */
    assert_non_null(strstr(s, "\"dur\":2.000,\"args\":{\"External id\":2,\"Record function id\":0,"
                              "\"Ev Idx\":1,\"Input Dims\":[[2,3]]}}"));
    /* the window's end (no "Trace" span: TensorBoard's), and
     * distributedInfo as HTA matches it */
    assert_null(strstr(s, "PyTorch Profiler (0)"));
    assert_non_null(strstr(s, "\"name\":\"Record Window End\",\"pid\":777,\"tid\":0,\"ts\":4.500}"));
    assert_non_null(strstr(s, "\"distributedInfo\":{\"rank\": 1, \"world_size\": 2, "
                              "\"backend\": \"gloo\"}"));
    assert_non_null(strstr(s, "\"displayTimeUnit\":\"ms\""));
    /* pid 0: this process's; no backend: no key */
    t.pid = 0;
    t.backend = NULL;
    assert_int_equal(sps_timeline_write(path, &t), 0);
    s = slurp(path);
    assert_non_null(s);
    char want[64];
    snprintf(want, sizeof want, "\"pid\":%lld,\"tid\":4242", (long long)getpid());
    assert_non_null(strstr(s, want));
    assert_non_null(strstr(s, "\"distributedInfo\":{\"rank\": 1, \"world_size\": 2}"));
    assert_non_null(strstr(s, "\"record_shapes\":true,\"deviceProperties\""));
    assert_non_null(strstr(s, "\"thread_name\""));
    assert_non_null(strstr(s, "\"spanscopeClock\":{\"wall_anchor_ns\":1700000000000000000,"
                              "\"mono_anchor_ns\":123456789,\"hostname\":\"node-x\"}"));
    /* out of order, out of range, unknown extension, missing directory */
    sps_span_t bad[2] = {sp[1], sp[0]};
    t.spans = bad;
    assert_int_equal(sps_timeline_write(path, &t), SPS_EINVAL);
    t.spans = sp;
    sp[1].region = 3;
    assert_int_equal(sps_timeline_write(path, &t), SPS_EINVAL);
    sp[1].region = 2;
    assert_int_equal(sps_timeline_write(tu_path("spans.txt"), &t), SPS_EINVAL);
    assert_int_equal(sps_timeline_write("/nonexistent-dir/x.json", &t), SPS_EPATH);
    assert_int_equal(access(tu_path("spans.txt"), F_OK), -1);
    /* Perfetto: ignores args and extra, still writes the spans */
    assert_int_equal(sps_timeline_write(tu_path("spans.pftrace"), &t), 0);
    assert_int_equal(access(tu_path("spans.pftrace"), F_OK), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spans_nesting_and_self),
        cmocka_unit_test(test_spans_open_periods_errors),
        cmocka_unit_test(test_timeline_write),
        cmocka_unit_test(test_native_stacks),
        cmocka_unit_test(test_stacks_across_drop_and_finalize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
