/* test_h5_guard.c -- work in a child process (util/isolate.c: exit
 * status, crash signal, time limit, memory cap) and the isolated check
 * before libhdf5 reads a file (formats/h5_guard.c): a valid recording
 * passes and is checked once, the hostile files of tests/data/hostile are
 * refused by every reader with SPS_EFORMAT, SPANSCOPE_H5_ISOLATE=0 turns
 * the check off. */
#include "testutil.h"
#include "tu_h5.h"

#include "formats/h5_read.h"
#include "util/util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef SPS_TEST_DATA
#error "SPS_TEST_DATA (tests/data) must be defined"
#endif

static int return_arg(void *arg) { return (int)(intptr_t)arg; }
static int crash(void *arg) {
    (void)arg;
    raise(SIGSEGV);
    return 0;
}
static int sleep_long(void *arg) {
    (void)arg;
    sleep(30);
    return 0;
}
/* 0 when an allocation of 4 GiB fails (the cap), 42 when it succeeds (not
 * 1: a sanitizer's allocator exits with 1 when it gives up). */
static int alloc_big(void *arg) {
    (void)arg;
    size_t n = (size_t)4 << 30;
    char *p = malloc(n);
    if (!p) return 0;
    memset(p, 1, 4096);
    free(p);
    return 42;
}

static void test_isolated(void **state) {
    (void)state;
    assert_int_equal(sps__isolated(return_arg, (void *)(intptr_t)0, 0, 0), 0);
    assert_int_equal(sps__isolated(return_arg, (void *)(intptr_t)7, 0, 0), 7);
    assert_int_equal(sps__isolated(crash, NULL, 0, 0), SPS__ISOLATED_SIGNAL + SIGSEGV);
    time_t t0 = time(NULL);
    assert_int_equal(sps__isolated(sleep_long, NULL, 1, 0), SPS__ISOLATED_SIGNAL + SIGALRM);
    assert_true(time(NULL) - t0 < 20);
    /* the cap makes the allocation fail: malloc returns NULL (0), or a
     * sanitizer's allocator reports it and ends the child; it never
     * succeeds (42) */
    int big = sps__isolated(alloc_big, NULL, 0, (size_t)64 << 20);
    assert_true(big != 42 && big >= 0);
}

/* A small valid recording at path. */
static void write_recording(const char *path) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t a = sps_region("guard.outer"), b = sps_region("guard.inner");
    for (int i = 0; i < 50; i++) {
        sps_begin(a);
        sps_begin(b);
        sps_end(b);
        sps_end(a);
    }
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
}

static void test_valid_file_checked_once(void **state) {
    (void)state;
    const char *path = tu_path("guard_ok.h5");
    write_recording(path);
    uint64_t c0, r0, c1, r1;
    sps_h5_check_stats(&c0, &r0);
    char err[256] = "";
    assert_int_equal(sps_h5_check(path, err, sizeof err), 0);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, path), 0); /* the kept verdict */
    sps__h5r_free(r);
    sps_h5_check_stats(&c1, &r1);
    assert_int_equal(c1 - c0, 1);
    assert_int_equal(r1 - r0, 0);
    /* a changed file is checked again */
    struct timespec later[2] = {{0, UTIME_OMIT}, {time(NULL) + 5, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
    assert_int_equal(sps_h5_check(path, err, sizeof err), 0);
    sps_h5_check_stats(&c1, NULL);
    assert_int_equal(c1 - c0, 2);
    /* a missing file is the reader's to report */
    assert_int_equal(sps_h5_check(tu_path("guard_missing.h5"), err, sizeof err), 0);
    assert_int_equal(sps_h5_check(NULL, err, sizeof err), SPS_EINVAL);
}

/* Each hostile file and the check that refuses it (its message). */
static const struct {
    const char *file, *why;
    int fresh; /* refused only by a check in a fresh process */
} k_hostile[] = {
    {"attr-vlen-heap.h5", "global heap collection", 0},
    {"attr-message.h5", "crashed libhdf5", 0},
    {"dset-vlen-heap.h5", "global heap collection", 0},
    {"dset-vlen-broken-link.h5", "global heap collection", 0},
    {"attr-message-two-handles.h5", "crashed libhdf5", 0},
    {"attr-vlen-14gb.h5", "would need over", 0},
    {"compound-member-offset.h5", "compound datatype", 0},
    {"dset-vlen-8gb.h5", "would need over", 0},
    {"group-unlisted.h5", "global heap collection", 0},
    /* group-unlisted.h5 with its heap object's size repaired */
    {"group-unlisted-only.h5", "link table cannot be read", 0},
    /* an object of index 0 and size 0: libhdf5 1.10 loops on it forever */
    {"gheap-loop.h5", "global heap collection", 0},
    /* crashes the check only when libhdf5's free lists hand it a fresh
     * block (test_hostile_files.py reads a primer first) */
    {"attr-close-primed.h5", "crashed libhdf5", 1},
    /* reads "fine" in a fresh heap; libhdf5 cannot copy it (without a
     * copy, the second walk, without malloc's caches, crashes on it:
     * test_hostile_files.py) */
    {"attr-table-unset.h5", "could not copy|crashed libhdf5", 1}, /* ASan's heap: a crash */
    /* a heap object index past the collection's array (H5HG_read) */
    {"dset-vlen-heap-index.h5", "crashed libhdf5", 1},
};

/* Non-zero when err holds one of the '|'-separated words of why. */
static int why_found(const char *err, const char *why) {
    char w[128];
    snprintf(w, sizeof w, "%s", why);
    for (char *save, *t = strtok_r(w, "|", &save); t; t = strtok_r(NULL, "|", &save))
        if (strstr(err, t)) return 1;
    return 0;
}

static void test_hostile_files_refused(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof k_hostile / sizeof k_hostile[0]; i++) {
        char path[1024], err[512] = "";
        if (k_hostile[i].fresh && !sps__h5_guard_fresh()) {
            printf("skipped %s: the check walks in the fork in this build\n", k_hostile[i].file);
            continue;
        }
        snprintf(path, sizeof path, "%s/hostile/%s", SPS_TEST_DATA, k_hostile[i].file);
        assert_int_equal(sps_h5_check(path, err, sizeof err), SPS_EFORMAT);
        assert_non_null(strstr(err, "corrupt file"));
        /* which step refuses it is the file's alone only in a fresh process
         * (in the fork, a crash can depend on the heap: the copy may be
         * what fails) */
        if (sps__h5_guard_fresh() && !why_found(err, k_hostile[i].why))
            fail_msg("%s: %s", k_hostile[i].file, err);
        /* every reader: the kept verdict refuses it again */
        sps__h5r_t *r;
        assert_int_equal(sps__h5r_open(&r, path), SPS_EFORMAT);
        char buf[64];
        FILE *fp = fmemopen(buf, sizeof buf, "w");
        assert_int_equal(sps_report(path, fp, "self", 0, err, sizeof err), SPS_EFORMAT);
        fclose(fp);
        const sps_file_t *f;
        assert_int_equal(sps_file_open(path, &f, err, sizeof err), SPS_EFORMAT);
        sps_meta_attr_t *attrs;
        size_t n;
        assert_int_equal(sps_metadata_read(path, &attrs, &n, err, sizeof err), SPS_EFORMAT);
    }
}

/* The clean copy holds what the file holds: the same calls per region,
 * the same metadata attributes (read with the check off, from both). */
static void test_clean_copy(void **state) {
    (void)state;
    const char *path = tu_path("guard_copy_src.h5");
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", tu_path("guard_copy_dst.h5"));
    write_recording(path);
    assert_int_equal(sps__h5_copy(path, copy), 0);
    setenv("SPANSCOPE_H5_ISOLATE", "0", 1);
    tu_h5_t *a = tu_h5_load(path), *b = tu_h5_load(copy);
    assert_true(a && a->ok && b && b->ok);
    assert_int_equal(tu_h5_count(a, "guard.outer"), 50);
    assert_int_equal(tu_h5_count(b, "guard.outer"), 50);
    assert_int_equal(tu_h5_count(b, "guard.inner"), tu_h5_count(a, "guard.inner"));
    tu_h5_free(a);
    tu_h5_free(b);
    sps_meta_attr_t *ma, *mb;
    size_t na, nb;
    char err[256];
    assert_int_equal(sps_metadata_read(path, &ma, &na, err, sizeof err), 0);
    assert_int_equal(sps_metadata_read(copy, &mb, &nb, err, sizeof err), 0);
    assert_int_equal(na, nb);
    assert_true(na > 3);
    sps_metadata_free(ma, na);
    sps_metadata_free(mb, nb);
    unsetenv("SPANSCOPE_H5_ISOLATE");
    /* a file libhdf5 cannot open is not copied: its reader says why */
    assert_int_equal(sps__h5_copy(tu_path("guard_missing.h5"), copy), SPS__H5_COPY_NONE);
}

/* A reader opens a name of its own for the copy, in $TMPDIR, gone once it
 * closes; the copies of a process that is gone are swept by the first
 * check of the next (this test runs first: the sweep is once a process). */
static void test_copies_swept_and_private(void **state) {
    (void)state;
    char dir[1024], stale[1200];
    snprintf(dir, sizeof dir, "%s", tu_path("guard_tmp"));
    mkdir(dir, 0700);
    setenv("TMPDIR", dir, 1);
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    snprintf(stale, sizeof stale, "%s/.spanscope-h5copy-%ld-1", dir, (long)dead);
    FILE *f = fopen(stale, "w");
    assert_non_null(f);
    fclose(f);
    const char *path = tu_path("guard_private.h5");
    write_recording(path);
    sps__h5_open_t o;
    assert_int_equal(sps__h5_guard_open(path, &o), 0);
    assert_true(o.linked);
    assert_int_equal(strncmp(o.path, dir, strlen(dir)), 0);
    struct stat st;
    assert_int_equal(stat(o.path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_true(st.st_nlink >= 2); /* the kept copy and this reader's name */
    char mine[sizeof o.path];
    snprintf(mine, sizeof mine, "%s", o.path);
    sps__h5_guard_close(&o);
    assert_int_not_equal(stat(mine, &st), 0);
    assert_int_not_equal(stat(stale, &st), 0);
    /* with SPANSCOPE_H5_COPY=0 the file itself is opened */
    const char *other = tu_path("guard_nocopy.h5");
    write_recording(other);
    setenv("SPANSCOPE_H5_COPY", "0", 1);
    assert_int_equal(sps__h5_guard_open(other, &o), 0);
    unsetenv("SPANSCOPE_H5_COPY");
    assert_false(o.linked);
    assert_string_equal(o.path, other);
    sps__h5_guard_close(&o);
    unsetenv("TMPDIR");
}

static void test_check_off(void **state) {
    (void)state;
    const char *path = tu_path("guard_off.h5");
    write_recording(path);
    uint64_t c0, c1;
    sps_h5_check_stats(&c0, NULL);
    setenv("SPANSCOPE_H5_ISOLATE", "0", 1);
    char err[256] = "";
    assert_int_equal(sps_h5_check(path, err, sizeof err), 0);
    unsetenv("SPANSCOPE_H5_ISOLATE");
    sps_h5_check_stats(&c1, NULL);
    assert_int_equal(c1, c0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_swept_and_private),
        cmocka_unit_test(test_isolated),
        cmocka_unit_test(test_valid_file_checked_once),
        cmocka_unit_test(test_hostile_files_refused),
        cmocka_unit_test(test_check_off),
        cmocka_unit_test(test_clean_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
