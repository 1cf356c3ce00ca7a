/* test_progress.c -- a long finalize or merge says how far it is on
 * stderr (SPANSCOPE_PROGRESS=1 shows it at once; =0 never; otherwise only
 * after a second, when verbose or on a terminal). */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Records n calls, finalizes to path with stderr sent to errpath, and
 * returns what stderr got (malloc'd). */
static char *finalize_stderr(size_t n, const char *path, const char *errpath) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("progress.call");
    for (size_t i = 0; i < n; i++) {
        sps_begin(r);
        sps_end(r);
    }
    fflush(stderr);
    int saved = dup(2);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = sps_finalize_to(path);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(rc, 0);
    assert_int_equal(sps_shutdown(), 0);
    FILE *fp = fopen(errpath, "r");
    assert_non_null(fp);
    char *buf = calloc(1, 1 << 16);
    size_t got = fread(buf, 1, (1 << 16) - 1, fp);
    buf[got] = 0;
    fclose(fp);
    return buf;
}

static void test_progress_shown_when_asked(void **state) {
    (void)state;
    setenv("SPANSCOPE_PROGRESS", "1", 1);
    char *err = finalize_stderr(300000, tu_path("progress.h5"), tu_path("progress.err"));
    assert_non_null(strstr(err, "spanscope: writing "));
    assert_non_null(strstr(err, "% ("));
    assert_non_null(strstr(err, "of 300000 calls)"));
    assert_non_null(strstr(err, ": 300000 calls in "));
    free(err);
    unsetenv("SPANSCOPE_PROGRESS");
}

static void test_progress_off(void **state) {
    (void)state;
    setenv("SPANSCOPE_PROGRESS", "0", 1);
    char *err = finalize_stderr(300000, tu_path("progress0.h5"), tu_path("progress0.err"));
    assert_string_equal(err, "");
    free(err);
    unsetenv("SPANSCOPE_PROGRESS");
}

/* Not a terminal, not verbose, under a second: nothing (the default for
 * programs whose stderr is a file). */
static void test_progress_quiet_by_default(void **state) {
    (void)state;
    unsetenv("SPANSCOPE_PROGRESS");
    char *err = finalize_stderr(1000, tu_path("progress1.h5"), tu_path("progress1.err"));
    assert_string_equal(err, "");
    free(err);
}

/* Records n calls as rank `rank` of 2 into path (stderr untouched). */
static void record_rank(const char *path, int rank, size_t n) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.rank = rank;
    cfg.size = 2;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("progress.call");
    for (size_t i = 0; i < n; i++) {
        sps_begin(r);
        sps_end(r);
    }
    assert_int_equal(sps_finalize_to(path), 0);
    assert_int_equal(sps_shutdown(), 0);
}

/* spanscope merge (sps_merge) of two ranks' files: the same line, with
 * the events of both. */
static void test_merge_progress(void **state) {
    (void)state;
    unsetenv("SPANSCOPE_PROGRESS");
    const char *a = tu_path("progress_r0.h5"), *b = tu_path("progress_r1.h5");
    record_rank(a, 0, 200000);
    record_rank(b, 1, 100000);
    setenv("SPANSCOPE_PROGRESS", "1", 1);
    const char *in[] = {a, b};
    fflush(stderr);
    int saved = dup(2);
    int fd = open(tu_path("progress_m.err"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = sps_merge(tu_path("progress_m.h5"), in, 2, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("SPANSCOPE_PROGRESS");
    assert_int_equal(rc, 0);
    FILE *fp = fopen(tu_path("progress_m.err"), "r");
    assert_non_null(fp);
    char buf[4096];
    size_t got = fread(buf, 1, sizeof buf - 1, fp);
    buf[got] = 0;
    fclose(fp);
    assert_non_null(strstr(buf, "spanscope: merging into "));
    assert_non_null(strstr(buf, "of 300000 events)"));
    assert_non_null(strstr(buf, ": 300000 events in "));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_shown_when_asked),
        cmocka_unit_test(test_progress_off),
        cmocka_unit_test(test_progress_quiet_by_default),
        cmocka_unit_test(test_merge_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
