/* test_cli.c -- the command-line tool ($SPS_CLI): help and version, every
 * subcommand's --help and bad options, report on a known file and on
 * scope-profiler's fixture, report against sps_report (one function), and
 * bad input of every kind (missing, text, truncated, corrupted files, bad
 * options): a non-zero exit and one line on stderr, never a crash. */
#include "testutil.h"

#include "sps_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The tool under test; the test is skipped without it. */
static const char *cli(void) {
    const char *p = getenv("SPS_CLI");
    return p && *p ? p : NULL;
}

/* The whole of file path as a string (caller frees); "" when unreadable. */
static char *slurp(const char *path) {
    FILE *fp = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    if (fp) {
        fseek(fp, 0, SEEK_END);
        long n = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        buf = malloc(n > 0 ? (size_t)n + 1 : 1);
        len = n > 0 ? fread(buf, 1, (size_t)n, fp) : 0;
        fclose(fp);
    } else {
        buf = malloc(1);
    }
    buf[len] = 0;
    return buf;
}

/* What one run of the tool did. */
typedef struct result {
    int rc;
    char *out, *err;
} result_t;

/* Runs the tool with args (already shell-quoted), capturing its output.
 * The trailing "exit $?" keeps the shell from exec'ing the tool, so a
 * crash shows as 128 + signal. */
static result_t run(const char *args) {
    const char *out = tu_path("cli_out.txt"), *err = tu_path("cli_err.txt");
    result_t r;
    r.rc = tu_system("timeout 60 '%s' %s >'%s' 2>'%s'; exit $?", cli(), args,
                     out, err);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

static void result_free(result_t *r) {
    free(r->out);
    free(r->err);
}

/* Asserts a failed run: exit code want, exactly one stderr line starting
 * "spanscope: " and containing `what`, nothing on stdout. */
static void failed(const char *args, int want, const char *what) {
    result_t r = run(args);
    if (r.rc != want)
        fail_msg("'%s': exit %d, expected %d (stderr: %s)", args, r.rc, want,
                 r.err);
    if (strncmp(r.err, "spanscope: ", 11) != 0)
        fail_msg("'%s': stderr '%s'", args, r.err);
    char *nl = strchr(r.err, '\n');
    if (!nl || nl[1] != 0) fail_msg("'%s': not one line: '%s'", args, r.err);
    if (!strstr(r.err, what))
        fail_msg("'%s': '%s' does not say '%s'", args, r.err, what);
    assert_string_equal(r.out, "");
    result_free(&r);
}

/* Writes a small valid file: main > {solve x2, io}, with the tree. */
static void write_known(const char *path) {
    static const char *const names[] = {"main", "solve", "io"};
    static const int64_t deltas[4] = {1000, 1100, 300, 1800};
    static const int64_t dur[4] = {1000, 200, 300, 50};
    static const int64_t call[4] = {0, 1, 2, 3}, parent[4] = {-1, 0, 0, 0};
    static const int64_t thread[4] = {0, 0, 0, 0};
    sps__row_t rows[3] = {
        {.file_region = 0, .offset = 0, .count = 1, .exclusive_total = 450},
        {.file_region = 1, .offset = 1, .count = 2, .exclusive_total = 500},
        {.file_region = 2, .offset = 3, .count = 1, .exclusive_total = 50}};
    sps__layout_t lay = {.nnames = 3, .names = names, .nrows = 3,
                         .rows = rows, .nevents = 4, .with_tree = 1,
                         .start_time_ns = 900, .finalize_time_ns = 2100,
                         .size = 1};
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, path, &lay), 0);
    assert_int_equal(sps__h5w_rows(w, 0, 4, deltas, dur, call, parent,
                                   thread), 0);
    assert_int_equal(sps__h5w_close(w), 0);
}

/* The path of tests/data/<name>, found from this source file's path. */
static const char *data_path(const char *name) {
    static char buf[4096];
    const char *env = getenv("SPS_TEST_DATA");
    if (env && *env) {
        snprintf(buf, sizeof buf, "%s/%s", env, name);
        return buf;
    }
    snprintf(buf, sizeof buf, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash) *slash = 0;
    else snprintf(buf, sizeof buf, ".");
    size_t len = strlen(buf);
    snprintf(buf + len, sizeof buf - len, "/../data/%s", name);
    return buf;
}

/* Every subcommand of the tool. */
static const char *const k_commands[] = {"report", "convert", "merge", "diff",
                                         "html"};

/* Skips the test when the tool was not built. */
#define NEED_CLI()                                                             \
    do {                                                                       \
        if (!cli()) skip();                                                    \
    } while (0)

/* ------------------------------------------------------------------------ */

static void test_help_and_version(void **state) {
    (void)state;
    NEED_CLI();
    result_t r = run("--help");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "report"));
    assert_string_equal(r.err, "");
    result_free(&r);
    r = run("report --help");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "--sort"));
    assert_non_null(strstr(r.out, "--top"));
    assert_non_null(strstr(r.out, "--no-counters"));
    result_free(&r);
    /* every subcommand is in the dispatcher's table and has its help */
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++) {
        char args[64], want[64];
        r = run("--help");
        snprintf(want, sizeof want, "\n  %s ", k_commands[i]);
        if (!strstr(r.out, want))
            fail_msg("--help does not list %s", k_commands[i]);
        result_free(&r);
        snprintf(args, sizeof args, "%s --help", k_commands[i]);
        r = run(args);
        snprintf(want, sizeof want, "usage: spanscope %s ", k_commands[i]);
        if (r.rc != 0 || strncmp(r.out, want, strlen(want)) != 0 || *r.err)
            fail_msg("'%s': exit %d, stdout '%.40s', stderr '%s'", args,
                     r.rc, r.out, r.err);
        result_free(&r);
    }
    r = run("--version");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, SPS_VERSION_STRING));
    result_free(&r);
}

static void test_report_known_file(void **state) {
    (void)state;
    NEED_CLI();
    const char *path = tu_path("cli_known.h5");
    char args[1200];
    write_known(path);
    snprintf(args, sizeof args, "report '%s'", path);
    result_t r = run(args);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "3 regions, 4 calls"));
    assert_non_null(strstr(r.out, "Call tree"));
    assert_non_null(strstr(r.out, "\nmain "));
    assert_non_null(strstr(r.out, "\n  solve "));
    assert_non_null(strstr(r.out, "\n  io "));
    assert_non_null(strstr(r.out, "Regions (by self; 3 of 3)"));
    result_free(&r);

    snprintf(args, sizeof args, "report --flat --sort calls --top 1 '%s'",
             path);
    r = run(args);
    assert_int_equal(r.rc, 0);
    assert_null(strstr(r.out, "Call tree"));
    assert_non_null(strstr(r.out, "Regions (by calls; 1 of 3)"));
    assert_non_null(strstr(r.out, "\nsolve "));
    result_free(&r);

    snprintf(args, sizeof args, "report '%s' --tree --sort=total --top=2",
             path);
    r = run(args);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "Call tree"));
    assert_null(strstr(r.out, "Regions ("));
    result_free(&r);
}

/* Records a session to path: "main" around 3 calls of "solve", and 3
 * samples of the counter "depth". */
static void write_with_counters(const char *path) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t main_r = sps_region("main"), solve = sps_region("solve");
    sps_region_t depth = sps_counter_id("depth");
    sps_begin(main_r);
    for (int i = 0; i < 3; i++) {
        sps_begin(solve);
        sps_counter(depth, i);
        sps_end(solve);
    }
    sps_end(main_r);
    assert_int_equal(sps_finalize_to(path), 0);
    sps_shutdown();
}

/* What sps_report prints for path, sort and top (caller frees); NULL on
 * failure, with *rc and err set. */
static char *sps_report_text(const char *path, const char *sort, size_t top,
                             int *rc, char *err, size_t errlen) {
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    *rc = sps_report(path, fp, sort, top, err, errlen);
    fclose(fp);
    if (*rc) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The tool's report and sps_report are one function: the same text for
 * the same file, sort and top (counters section included); --no-counters
 * leaves that section out; a bad sort key is SPS_EINVAL naming it. */
static void test_report_is_sps_report(void **state) {
    (void)state;
    NEED_CLI();
    const char *path = tu_path("cli_counters.h5");
    char args[1200], err[256] = "";
    int rc;
    write_with_counters(path);
    snprintf(args, sizeof args, "report --sort calls --top 1 '%s'", path);
    result_t r = run(args);
    assert_int_equal(r.rc, 0);
    char *lib = sps_report_text(path, "calls", 1, &rc, err, sizeof err);
    assert_non_null(lib);
    assert_string_equal(r.out, lib);
    assert_non_null(strstr(lib, "Regions (by calls; 1 of 2)"));
    assert_non_null(strstr(lib, "\nCounters (1; 3 samples)"));
    free(lib);
    result_free(&r);

    snprintf(args, sizeof args, "report --no-counters '%s'", path);
    r = run(args);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "Regions (by self; 2 of 2)"));
    assert_null(strstr(r.out, "Counters"));
    result_free(&r);

    assert_null(sps_report_text(path, "speed", 0, &rc, err, sizeof err));
    assert_int_equal(rc, SPS_EINVAL);
    assert_string_equal(err, "unknown sort key 'speed' (self, total, calls, "
                        "mean, max, name)");
    assert_null(sps_report_text("/nonexistent/x.h5", NULL, 0, &rc, err,
                                sizeof err));
    assert_int_equal(rc, SPS_EIO);
    assert_non_null(strstr(err, "/nonexistent/x.h5"));
}

static void test_report_scope_profiler_fixture(void **state) {
    (void)state;
    NEED_CLI();
    char args[4200];
    snprintf(args, sizeof args, "report '%s'",
             data_path("scope-profiler-schema3-fixture.h5"));
    result_t r = run(args);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "1 region, 3 calls"));
    assert_non_null(strstr(r.out, "\nsolve "));
    result_free(&r);
}

static void test_usage_errors(void **state) {
    (void)state;
    NEED_CLI();
    const char *path = tu_path("cli_known.h5");
    char args[1200];
    write_known(path);
    failed("", 2, "missing command");
    failed("frobnicate", 2, "unknown command 'frobnicate'");
    failed("--frobnicate", 2, "unknown option '--frobnicate'");
    failed("report", 2, "missing FILE");
    snprintf(args, sizeof args, "report '%s' --bogus", path);
    failed(args, 2, "unknown option '--bogus'");
    snprintf(args, sizeof args, "report '%s' --sort speed", path);
    failed(args, 2, "unknown sort key 'speed' (self, total, calls, mean, "
           "max, name)");
    snprintf(args, sizeof args, "report /nonexistent/x.h5 --sort=speed");
    failed(args, 2, "unknown sort key 'speed'"); /* usage before data */
    snprintf(args, sizeof args, "diff '%s' '%s' --sort speed", path, path);
    failed(args, 2, "diff: unknown sort key 'speed' (total, per-call, name)");
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++) {
        char want[64];
        snprintf(args, sizeof args, "%s --bogus '%s'", k_commands[i], path);
        snprintf(want, sizeof want, "%s: unknown option '--bogus'",
                 k_commands[i]);
        failed(args, 2, want);
    }
    snprintf(args, sizeof args, "report '%s' --top lots", path);
    failed(args, 2, "--top needs a number");
    snprintf(args, sizeof args, "report '%s' --top -3", path);
    failed(args, 2, "--top needs a number");
    snprintf(args, sizeof args, "report '%s' --sort", path);
    failed(args, 2, "--sort needs a key");
    snprintf(args, sizeof args, "report '%s' '%s'", path, path);
    failed(args, 2, "one FILE only");
}

/* The output option in each of its forms (cli_output_opt), --max-spans
 * down to 0 (a page with the table and no timeline spans) and past the
 * limit, and no temporary left behind. */
static void test_output_options(void **state) {
    (void)state;
    NEED_CLI();
    char path[1024], page[1024], args[3400]; /* tu_path's buffers get reused */
    snprintf(path, sizeof path, "%s", tu_path("cli_known.h5"));
    snprintf(page, sizeof page, "%s", tu_path("cli_opt.html"));
    write_known(path);
    const char *forms[] = {"-o '%s'", "-o'%s'", "--output '%s'", "--output='%s'"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char o[1100];
        remove(page);
        snprintf(o, sizeof o, forms[i], page);
        snprintf(args, sizeof args, "html '%s' %s --max-spans=%zu", path, o, i);
        result_t r = run(args);
        if (r.rc != 0) fail_msg("'%s': exit %d (%s)", args, r.rc, r.err);
        result_free(&r);
        char *text = slurp(page);
        char kept[32];
        snprintf(kept, sizeof kept, "\"kept\":%zu,", i);
        if (!strstr(text, kept)) fail_msg("'%s': no %s in the page", args, kept);
        assert_non_null(strstr(text, "<td data-v=\"solve\">solve</td>"));
        assert_non_null(strstr(text, "id=\"leftout\"")); /* 4 spans, fewer kept */
        free(text);
    }
    /* the page went through its temporary name, which is gone */
    assert_int_equal(tu_system("for f in '%s'.tmp-*; do test -e \"$f\" && exit 1; done; "
                               "exit 0", page), 0);
    snprintf(args, sizeof args, "html '%s' -o '%s' --max-spans 4294967296", path, page);
    failed(args, 2, "--max-spans needs a number up to 4294967295, got '4294967296'");
    snprintf(args, sizeof args, "html '%s' -o", path);
    failed(args, 2, "html: -o needs a value");
    snprintf(args, sizeof args, "html '%s' -o '%s' --max-spans", path, page);
    failed(args, 2, "html: --max-spans needs a value");
    snprintf(args, sizeof args, "merge '%s' --output", path);
    failed(args, 2, "merge: --output needs a file name");
    snprintf(args, sizeof args, "merge '%s' --output=", path);
    failed(args, 2, "merge: missing -o OUT");
}

/* Copies the first n bytes of src to dst. */
static void copy_prefix(const char *src, const char *dst, long n) {
    char *buf = malloc((size_t)n + 1);
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_true(in && out);
    size_t got = fread(buf, 1, (size_t)n, in);
    fwrite(buf, 1, got, out);
    fclose(in);
    fclose(out);
    free(buf);
}

static void test_bad_files(void **state) {
    (void)state;
    NEED_CLI();
    char args[1200];
    failed("report /nonexistent/nothing.h5", 1, "No such file");
    /* html: an output that cannot be created is a data error naming it */
    const char *known = tu_path("cli_known.h5");
    write_known(known);
    snprintf(args, sizeof args, "html '%s' -o /nonexistent/dir/p.html", known);
    failed(args, 1, "html: no such file or directory (writing /nonexistent/dir/p.html)");
    snprintf(args, sizeof args, "diff '%s' /nonexistent/b.h5", known);
    failed(args, 1, "diff: /nonexistent/b.h5");
    failed("report /", 1, "not a regular file");
    const char *txt = tu_path("cli_text.h5");
    FILE *fp = fopen(txt, "w");
    fputs("region,calls\nmain,1\n", fp);
    fclose(fp);
    snprintf(args, sizeof args, "report '%s'", txt);
    failed(args, 1, "not an HDF5 file");
    fp = fopen(txt, "w");
    fclose(fp);
    failed(args, 1, "not an HDF5 file");

    const char *good = tu_path("cli_known.h5");
    const char *cut = tu_path("cli_cut.h5");
    write_known(good);
    struct stat st;
    assert_int_equal(stat(good, &st), 0);
    const long at[] = {8, 96, st.st_size / 10, st.st_size / 2,
                       st.st_size - 1};
    snprintf(args, sizeof args, "report '%s'", cut);
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        copy_prefix(good, cut, at[i]);
        failed(args, 1, "cli_cut.h5");
    }
}

/* Deterministic byte damage to a valid file: every run exits 0 or 1
 * (a crash or an endless loop inside HDF5 is reported as an error). */
static void test_corrupted_files_never_crash(void **state) {
    (void)state;
    NEED_CLI();
    const char *good = tu_path("cli_known.h5");
    const char *bad = tu_path("cli_fuzz.h5");
    char args[1200];
    write_known(good);
    struct stat st;
    assert_int_equal(stat(good, &st), 0);
    char *orig = malloc((size_t)st.st_size);
    FILE *fp = fopen(good, "rb");
    assert_int_equal(fread(orig, 1, (size_t)st.st_size, fp),
                     (size_t)st.st_size);
    fclose(fp);
#if defined(__SANITIZE_ADDRESS__)
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1); /* HDF5's own error paths */
#endif
    setenv("SPANSCOPE_READ_TIMEOUT", "3", 1); /* HDF5 can loop on damage */
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    snprintf(args, sizeof args, "report '%s'", bad);
    for (int it = 0; it < 150; it++) {
        fp = fopen(bad, "wb");
        fwrite(orig, 1, (size_t)st.st_size, fp);
        int flips = 1 + it % 8;
        for (int k = 0; k < flips; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            long off = (long)((seed >> 33) % (uint64_t)st.st_size);
            fseek(fp, off, SEEK_SET);
            fputc((int)(seed >> 20) & 0xff, fp);
        }
        fclose(fp);
        result_t r = run(args);
        if (r.rc != 0 && r.rc != 1)
            fail_msg("damaged file (iteration %d) gave exit %d: %s", it, r.rc,
                     r.err);
        result_free(&r);
    }
    free(orig);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_report_known_file),
        cmocka_unit_test(test_report_is_sps_report),
        cmocka_unit_test(test_report_scope_profiler_fixture),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_output_options),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_corrupted_files_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
