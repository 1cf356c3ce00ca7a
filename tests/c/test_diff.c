/* spanscope diff: two traces (synthetic, known durations) where one region got 2x slower, one is
 * unchanged and one exists only in B; the verdicts, the same comparison
 * across formats (.h5 against .json / .pftrace / .json.gz), the options,
 * and the errors. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough calls that the 2x change stays significant even when a loaded
 * machine preempts the spinning thread now and then (a 4 ms outlier every
 * few ms of run time widens the spread a lot). */
#define NCALLS 3000

/* Non-zero when no call of r took more than 1.5 x spin_ns + 20 us: the
 * recording was not disturbed by preemption (a loaded machine can stop a
 * spinning thread for milliseconds, and one such outlier makes the run's
 * spread, rightly, too wide for the t-test to call a 2x change). */
static int clean(sps_region_t r, int64_t spin_ns) {
    sps_stats_t st;
    assert_int_equal(sps_region_stats(r, &st), 0);
    return st.max_ns <= spin_ns + spin_ns / 2 + 20000;
}

/* Records to path: "diff.outer" around NCALLS calls each of "diff.slow"
 * (spinning slow_ns) and "diff.same" (spinning 20 us), plus, when
 * with_new, a few calls of "diff.new".  Records again (up to 3 times)
 * while a call was disturbed by preemption. */
static void record(const char *path, int64_t slow_ns, int with_new) {
    for (int attempt = 0;; attempt++) {
        assert_int_equal(sps_setup(NULL), 0);
        sps_region_t outer = sps_region("diff.outer"), slow = sps_region("diff.slow"),
                     same = sps_region("diff.same"), fresh = sps_region("diff.new");
        sps_begin(outer);
        for (int k = 0; k < NCALLS; k++) {
            sps_begin(slow);
            tu_spin_ns(slow_ns);
            sps_end(slow);
            sps_begin(same);
            tu_spin_ns(20000);
            sps_end(same);
        }
        if (with_new)
            for (int k = 0; k < 5; k++) {
                sps_begin(fresh);
                tu_spin_ns(5000);
                sps_end(fresh);
            }
        sps_end(outer);
        if (attempt == 2 || (clean(slow, slow_ns) && clean(same, 20000))) {
            assert_int_equal(sps_finalize_to(path), 0);
            sps_shutdown();
            return;
        }
        sps_shutdown();
    }
}

/* Reads the whole file at path into a malloc'd string. */
static char *slurp(const char *path) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, fp);
    buf[n] = 0;
    fclose(fp);
    return buf;
}

/* The line of out that starts with region name (followed by a space);
 * fails the test when there is none.  Returns a malloc'd copy. */
static char *row_of(const char *out, const char *name) {
    size_t n = strlen(name);
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, name, n) && p[n] == ' ') {
            const char *e = strchr(p, '\n');
            return strndup(p, e ? (size_t)(e - p) : strlen(p));
        }
    fail_msg("no row for %s in:\n%s", name, out);
    return NULL;
}

/* Runs spanscope diff with args, stdout into a file; asserts exit status
 * 0 and returns the output (malloc'd). */
static char *diff_out(const char *args) {
    const char *out = tu_path("diff_out.txt");
    int rc = tu_system("\"%s\" diff %s > '%s'", getenv("SPS_CLI"), args, out);
    char *s = slurp(out);
    if (rc != 0) fail_msg("spanscope diff %s: exit %d\n%s", args, rc, s);
    return s;
}

/* Asserts the three verdicts: slow got slower, same unchanged (~, within
 * run-to-run spread or below the threshold), new only in B. */
static void check_verdicts(const char *out) {
    char *slow = row_of(out, "diff.slow"), *same = row_of(out, "diff.same"),
         *fresh = row_of(out, "diff.new");
    if (!strstr(slow, " slower ")) fail_msg("diff.slow not slower:\n%s", out);
    if (!strstr(same, "  ~ ")) fail_msg("diff.same not ~:\n%s", out);
    if (!strstr(same, "within run-to-run spread") && !strstr(same, "threshold"))
        fail_msg("diff.same: no explanation:\n%s", out);
    if (!strstr(fresh, "only in B")) fail_msg("diff.new not only in B:\n%s", out);
    /* calls in both columns */
    assert_non_null(strstr(slow, " 3000 "));
    free(slow);
    free(same);
    free(fresh);
}

/* Writes a Chrome trace with known durations (deterministic, unlike a
 * recording on a loaded machine): "diff.outer" around NCALLS calls each of
 * "diff.slow" (slow_ns) and "diff.same" (20 us), each with +-1 us of
 * pseudo-random jitter, plus 5 calls of "diff.new" when with_new. */
static void synth(const char *path, int64_t slow_ns, int with_new, unsigned seed) {
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("{\"traceEvents\":[\n", fp);
    int64_t t = 1000;
    unsigned x = seed;
    for (int k = 0; k < NCALLS; k++) {
        for (int j = 0; j < 2; j++) {
            x = x * 1103515245u + 12345u;
            int64_t d = (j ? 20000 : slow_ns) + (int64_t)((x >> 16) % 2001) - 1000;
            fprintf(fp, "{\"ph\":\"X\",\"name\":\"%s\",\"pid\":0,\"tid\":1,"
                        "\"ts\":%lld.%03lld,\"dur\":%lld.%03lld},\n",
                    j ? "diff.same" : "diff.slow", (long long)(t / 1000),
                    (long long)(t % 1000), (long long)(d / 1000), (long long)(d % 1000));
            t += d + 500;
        }
    }
    for (int k = 0; with_new && k < 5; k++, t += 6000)
        fprintf(fp, "{\"ph\":\"X\",\"name\":\"diff.new\",\"pid\":0,\"tid\":1,"
                    "\"ts\":%lld.%03lld,\"dur\":5.000},\n",
                (long long)(t / 1000), (long long)(t % 1000));
    fprintf(fp, "{\"ph\":\"X\",\"name\":\"diff.outer\",\"pid\":0,\"tid\":1,"
                "\"ts\":0.500,\"dur\":%lld.%03lld}\n]}\n",
            (long long)(t / 1000), (long long)(t % 1000));
    fclose(fp);
}

/* A and B for the verdicts (synthetic: known durations), and a real
 * recording for the checks that compare a file with itself or with its
 * conversions (those are exact whatever the machine does). */
static int setup(void **state) {
    (void)state;
    synth(tu_path("diff_a.json"), 40000, 0, 1);
    synth(tu_path("diff_b.json"), 80000, 1, 2);
    record(tu_path("diff_a.h5"), 40000, 0);
    return 0;
}

static void test_verdicts(void **state) {
    (void)state;
    char args[2048];
    snprintf(args, sizeof args, "'%s' '%s'", tu_path("diff_a.json"), tu_path("diff_b.json"));
    char *out = diff_out(args);
    check_verdicts(out);
    assert_non_null(strstr(out, "1 slower, 0 faster, 0 only in A, 1 only in B"));
    /* the other way round: faster, and only in A */
    snprintf(args, sizeof args, "'%s' '%s'", tu_path("diff_b.json"), tu_path("diff_a.json"));
    free(out);
    out = diff_out(args);
    char *slow = row_of(out, "diff.slow"), *fresh = row_of(out, "diff.new");
    assert_non_null(strstr(slow, " faster "));
    assert_non_null(strstr(fresh, "only in A"));
    free(slow);
    free(fresh);
    free(out);
}

static void test_same_file_is_unchanged(void **state) {
    (void)state;
    char args[2048];
    snprintf(args, sizeof args, "'%s' '%s'", tu_path("diff_a.h5"), tu_path("diff_a.h5"));
    char *out = diff_out(args);
    assert_non_null(strstr(out, "0 slower, 0 faster, 0 only in A, 0 only in B, 3 unchanged"));
    char *slow = row_of(out, "diff.slow");
    assert_non_null(strstr(slow, "within run-to-run spread"));
    free(slow);
    free(out);
}

static void test_mixed_formats(void **state) {
    (void)state;
    const char *cli = getenv("SPS_CLI");
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", cli, tu_path("diff_a.json"),
                               tu_path("diff_a.pftrace")), 0);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", cli, tu_path("diff_b.json"),
                               tu_path("diff_b.json.gz")), 0);
    assert_int_equal(tu_system("\"%s\" convert '%s' '%s'", cli, tu_path("diff_a.h5"),
                               tu_path("diff_ah5.json")), 0);
    char args[2048];
    snprintf(args, sizeof args, "'%s' '%s'", tu_path("diff_a.pftrace"),
             tu_path("diff_b.json.gz"));
    char *out = diff_out(args);
    check_verdicts(out);
    free(out);
    /* a converted file is the same recording: no differences at all */
    snprintf(args, sizeof args, "'%s' '%s'", tu_path("diff_a.h5"), tu_path("diff_ah5.json"));
    out = diff_out(args);
    assert_non_null(strstr(out, "0 slower, 0 faster, 0 only in A, 0 only in B, 3 unchanged"));
    free(out);
}

static void test_options(void **state) {
    (void)state;
    char args[2048];
    /* --top 1 by total: the region whose total changed most is diff.outer
     * or diff.slow, and the rest is counted */
    snprintf(args, sizeof args, "--top 1 '%s' '%s'", tu_path("diff_a.json"), tu_path("diff_b.json"));
    char *out = diff_out(args);
    assert_non_null(strstr(out, "... 3 more regions (--top)"));
    assert_null(strstr(out, "\ndiff.same "));
    free(out);
    /* --sort name */
    snprintf(args, sizeof args, "--sort=name '%s' '%s'", tu_path("diff_a.json"), tu_path("diff_b.json"));
    out = diff_out(args);
    char *n = strstr(out, "\ndiff.new "), *o = strstr(out, "\ndiff.outer "),
         *sa = strstr(out, "\ndiff.same "), *sl = strstr(out, "\ndiff.slow ");
    assert_true(n && o && sa && sl && n < o && o < sa && sa < sl);
    free(out);
    /* --sort per-call: diff.slow changed most per call */
    snprintf(args, sizeof args, "--sort per-call '%s' '%s'", tu_path("diff_a.json"), tu_path("diff_b.json"));
    out = diff_out(args);
    sl = strstr(out, "\ndiff.slow ");
    sa = strstr(out, "\ndiff.same ");
    assert_true(sl && sa && sl < sa);
    free(out);
    /* a threshold above the 2x change makes that region "~ below threshold" */
    snprintf(args, sizeof args, "--threshold 150 '%s' '%s'", tu_path("diff_a.json"), tu_path("diff_b.json"));
    out = diff_out(args);
    char *slow = row_of(out, "diff.slow");
    assert_non_null(strstr(slow, "  ~ "));
    free(slow);
    free(out);
    assert_int_equal(tu_system("\"%s\" diff --help | grep -q Mann-Whitney", getenv("SPS_CLI")), 0);
}

static void test_errors(void **state) {
    (void)state;
    const char *cli = getenv("SPS_CLI");
    const char *a = tu_path("diff_a.h5");
    /* usage: exit 2, one line on stderr */
    assert_int_equal(tu_system("\"%s\" diff 2>/dev/null", cli), 2);
    assert_int_equal(tu_system("\"%s\" diff '%s' 2>/dev/null", cli, a), 2);
    assert_int_equal(tu_system("\"%s\" diff '%s' '%s' '%s' 2>/dev/null", cli, a, a, a), 2);
    assert_int_equal(tu_system("\"%s\" diff --sort bogus '%s' '%s' 2>/dev/null", cli, a, a), 2);
    assert_int_equal(tu_system("\"%s\" diff --top x '%s' '%s' 2>/dev/null", cli, a, a), 2);
    assert_int_equal(tu_system("\"%s\" diff --threshold -1 '%s' '%s' 2>/dev/null", cli, a, a), 2);
    assert_int_equal(tu_system("\"%s\" diff --threshold 2>/dev/null", cli), 2);
    assert_int_equal(tu_system("\"%s\" diff --bogus '%s' '%s' 2>/dev/null", cli, a, a), 2);
    assert_int_equal(tu_system("\"%s\" diff '%s' '%s' 2>/dev/null", cli, a,
                               tu_path("diff.txt")), 2);
    /* bad data: exit 1, one line naming the problem */
    assert_int_equal(tu_system("\"%s\" diff '%s' '%s' 2>/dev/null", cli, a,
                               tu_path("diff_missing.h5")), 1);
    FILE *fp = fopen(tu_path("diff_garbage.json"), "w");
    fputs("{\"traceEvents\": [ {\"ph\": \"X\", \"ts\": ", fp);
    fclose(fp);
    assert_int_equal(tu_system("\"%s\" diff '%s' '%s' 2>'%s'", cli,
                               tu_path("diff_garbage.json"), a, tu_path("diff_err.txt")), 1);
    char *err = slurp(tu_path("diff_err.txt"));
    assert_true(!strncmp(err, "spanscope: diff: ", 17));
    assert_non_null(strchr(err, '\n'));
    assert_int_equal(strchr(err, '\n')[1], 0); /* one line */
    free(err);
    fp = fopen(tu_path("diff_garbage.h5"), "w");
    fputs("not an HDF5 file at all", fp);
    fclose(fp);
    assert_int_equal(tu_system("\"%s\" diff '%s' '%s' 2>/dev/null", cli, a,
                               tu_path("diff_garbage.h5")), 1);
    fp = fopen(tu_path("diff_garbage.pftrace"), "w");
    fputs("\x0a\xff\xff\xff\xff\x0f not a trace", fp);
    fclose(fp);
    assert_int_equal(tu_system("\"%s\" diff '%s' '%s' 2>/dev/null", cli,
                               tu_path("diff_garbage.pftrace"), a), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_same_file_is_unchanged),
        cmocka_unit_test(test_mixed_formats),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
