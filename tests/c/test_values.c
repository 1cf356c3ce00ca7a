/* test_values.c -- values per span (sps_config_t.track, issue 33): memory
 * credited through sps_mem_alloc / sps_mem_free reaches the file's
 * /values per region, own and self by the fold's rule, with peaks; an
 * allocation on another thread never lands in this thread's spans; the
 * values survive spilling (they travel in the record stream). */
#include "testutil.h"
#include "tu_h5.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The /values row of region name in path: its column col (-1: no row). */
static int64_t value_of(const char *path, const char *name, const char *col) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    if (H5Lexists(f, "/values", H5P_DEFAULT) <= 0) {
        H5Fclose(f);
        return -1;
    }
    size_t n = 0, m = 0;
    char path_col[128];
    snprintf(path_col, sizeof path_col, "/values/%s", col);
    int64_t *v = tu_h5_col(f, path_col, H5T_NATIVE_INT64, sizeof(int64_t), &n);
    hid_t st = tu_h5_strtype();
    char **names = tu_h5_col(f, "/values/region", st, sizeof(char *), &m);
    int64_t out = -1;
    for (size_t i = 0; v && names && i < n && i < m; i++)
        if (names[i] && strcmp(names[i], name) == 0) out = v[i];
    if (names) {
        hid_t d = H5Dopen2(f, "/values/region", H5P_DEFAULT);
        hid_t s = H5Dget_space(d);
        H5Dvlen_reclaim(st, s, H5P_DEFAULT, names);
        H5Sclose(s);
        H5Dclose(d);
    }
    H5Tclose(st);
    free(names);
    free(v);
    H5Fclose(f);
    return out;
}

static void setup_track(const char *file, int track, size_t memory_limit) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = file;
    cfg.track = track;
    cfg.memory_limit = memory_limit;
    if (memory_limit) cfg.chunk_size = 4096;
    assert_int_equal(sps_setup(&cfg), 0);
}

/* outer { alloc 100; inner { alloc 1000, free 1000 } alloc 10 } x3:
 * exact own/self sums and the peak of live bytes above the begin. */
static void test_memory_own_self_peak(void **state) {
    (void)state;
    const char *file = tu_path("values_mem.h5");
    setup_track(file, SPS_TRACK_MEMORY, 0);
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner"),
                 idle = sps_region("idle");
    for (int k = 0; k < 3; k++) {
        sps_begin(outer);
        sps_mem_alloc(100);
        sps_begin(inner);
        sps_mem_alloc(1000);
        sps_mem_free(1000);
        sps_mem_alloc(500); /* allocate-free-allocate: peak 1000, not 1500 */
        sps_mem_free(500);
        sps_end(inner);
        sps_mem_alloc(10);
        sps_end(outer);
        sps_mem_free(110);
        sps_begin(idle);
        sps_end(idle);
    }
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(value_of(file, "inner", "calls"), 3);
    assert_int_equal(value_of(file, "inner", "alloc_bytes"), 3 * 1500);
    assert_int_equal(value_of(file, "inner", "free_bytes"), 3 * 1500);
    assert_int_equal(value_of(file, "inner", "allocs"), 3 * 2);
    assert_int_equal(value_of(file, "inner", "peak_bytes"), 1000);
    assert_int_equal(value_of(file, "outer", "alloc_bytes"), 3 * 1610);
    assert_int_equal(value_of(file, "outer", "self_alloc_bytes"), 3 * 110);
    assert_int_equal(value_of(file, "outer", "self_free_bytes"), 0);
    /* outer's live rises to 100 + 1000 inside inner, to 110 outside it */
    assert_int_equal(value_of(file, "outer", "peak_bytes"), 1100);
    assert_int_equal(value_of(file, "outer", "self_peak_bytes"), 110);
    /* a region that allocates nothing shows 0 */
    assert_int_equal(value_of(file, "idle", "calls"), 3);
    assert_int_equal(value_of(file, "idle", "alloc_bytes"), 0);
    assert_int_equal(value_of(file, "idle", "peak_bytes"), 0);
    sps_shutdown();
}

static sps_region_t g_b_region;
static pthread_barrier_t g_bar;

static void *other_thread(void *arg) {
    (void)arg;
    pthread_barrier_wait(&g_bar); /* A's span is open */
    sps_begin(g_b_region);
    sps_mem_alloc(1 << 20);
    sps_end(g_b_region);
    sps_mem_alloc(4096); /* outside any span of B */
    pthread_barrier_wait(&g_bar);
    return NULL;
}

/* torch's bug (pytorch#166121): B's allocations while A's span is open
 * never count for A's span. */
static void test_thread_attribution(void **state) {
    (void)state;
    const char *file = tu_path("values_threads.h5");
    setup_track(file, SPS_TRACK_MEMORY, 0);
    sps_region_t a = sps_region("thread_a");
    g_b_region = sps_region("thread_b");
    pthread_barrier_init(&g_bar, NULL, 2);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);
    sps_begin(a);
    sps_mem_alloc(64);
    pthread_barrier_wait(&g_bar);
    pthread_barrier_wait(&g_bar); /* B allocated 1 MiB + 4 KiB meanwhile */
    sps_end(a);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&g_bar);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(value_of(file, "thread_a", "alloc_bytes"), 64);
    assert_int_equal(value_of(file, "thread_b", "alloc_bytes"), 1 << 20);
    sps_shutdown();
}

/* 20 000 calls in 4 KiB chunks under an 8 KiB budget: the chunks spill,
 * packed, and the values come back exact from the spill file. */
static void test_values_survive_spilling(void **state) {
    (void)state;
    const char *file = tu_path("values_spill.h5");
    setup_track(file, SPS_TRACK_MEMORY, 8192);
    sps_region_t r = sps_region("spilled");
    for (int k = 0; k < 20000; k++) {
        sps_begin(r);
        sps_mem_alloc((size_t)(k % 7) + 1);
        sps_end(r);
    }
    assert_int_equal(sps_finalize(), 0);
    int64_t want = 0;
    for (int k = 0; k < 20000; k++) want += k % 7 + 1;
    assert_int_equal(value_of(file, "spilled", "calls"), 20000);
    assert_int_equal(value_of(file, "spilled", "alloc_bytes"), want);
    assert_int_equal(value_of(file, "spilled", "allocs"), 20000);
    sps_shutdown();
}

/* Without track no /values group; track with aggregate mode is refused. */
static void test_off_and_refused(void **state) {
    (void)state;
    const char *file = tu_path("values_off.h5");
    setup_track(file, 0, 0);
    sps_region_t r = sps_region("plain");
    sps_begin(r);
    sps_mem_alloc(10);
    sps_end(r);
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(value_of(file, "plain", "calls"), -1);
    sps_shutdown();
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.aggregate = 1;
    cfg.track = SPS_TRACK_MEMORY;
    assert_int_equal(sps_setup(&cfg), SPS_EINVAL);
    cfg.aggregate = 0;
    cfg.track = 8;
    assert_int_equal(sps_setup(&cfg), SPS_EINVAL);
}

/* sps_spans_values: each span's own and self values beside it. */
static void test_spans_values(void **state) {
    (void)state;
    setup_track(NULL, SPS_TRACK_MEMORY, 0);
    sps_region_t p = sps_region("sv.parent"), c = sps_region("sv.child");
    sps_begin(p);
    sps_mem_alloc(7);
    sps_begin(c);
    sps_mem_alloc(30);
    sps_end(c);
    sps_end(p);
    sps_span_t *v = NULL;
    uint64_t *vals = NULL;
    size_t n = 0;
    uint32_t nv = 0;
    assert_int_equal(sps_spans_values(0, INT64_MAX, &v, &n, &vals, &nv), 0);
    assert_int_equal(nv, 5);
    assert_string_equal(sps_value_name(0), "alloc_bytes");
    assert_string_equal(sps_value_name(4), "peak_bytes");
    assert_null(sps_value_name(5));
    assert_int_equal(n, 2);
    assert_int_equal(v[0].region, p); /* start order */
    assert_int_equal(vals[0], 37);          /* parent own alloc_bytes */
    assert_int_equal(vals[nv + 0], 7);      /* parent self alloc_bytes */
    assert_int_equal(vals[4], 37);          /* parent own peak */
    assert_int_equal(vals[2 * nv + 0], 30); /* child own */
    assert_int_equal(vals[2 * nv + nv + 0], 30);
    sps_free(v);
    sps_free(vals);
    assert_int_equal(sps_spans_values(0, INT64_MAX, &v, &n, NULL, &nv), SPS_EINVAL);
    uint64_t own[8], self[8], calls = 0;
    assert_int_equal(sps_region_values(p, own, self, 8, &calls), 5);
    assert_int_equal(calls, 1);
    assert_int_equal(own[0], 37);
    assert_int_equal(self[0], 7);
    assert_int_equal(sps_region_values(c, own, NULL, 1, &calls), 5);
    assert_int_equal(own[0], 30);
    sps_shutdown();
}

/* Software counters through perf_event (no PMU needed): present, and a
 * span that faults pages in counts at least those page faults. */
static void test_software_counters(void **state) {
    (void)state;
    assert_int_equal(sps_set_counters("task-clock,page-faults"), 0);
    const char *file = tu_path("values_counters.h5");
    setup_track(file, SPS_TRACK_COUNTERS | SPS_TRACK_MEMORY, 0);
    assert_string_equal(sps_value_name(5), "task-clock");
    assert_string_equal(sps_value_name(6), "page-faults");
    sps_region_t touch = sps_region("touch_pages");
    size_t pages = 256, page = 4096;
    sps_begin(touch);
    /* fresh pages (malloc may hand back memory touched before) */
    char *mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    for (size_t i = 0; i < pages; i++) mem[i * page] = (char)i;
    sps_end(touch);
    munmap(mem, pages * page);
    assert_int_equal(sps_finalize(), 0);
    int64_t faults = value_of(file, "touch_pages", "page-faults");
    int64_t clock_ns = value_of(file, "touch_pages", "task-clock");
    if (faults == 0 && clock_ns == 0) { /* perf_event_open refused here */
        fprintf(stderr, "test_software_counters: perf_event unavailable, counters read 0\n");
    } else {
        assert_true(faults >= (int64_t)pages / 2); /* THP may map a few at once */
        assert_true(clock_ns > 0);
    }
    sps_shutdown();
    assert_int_equal(sps_set_counters(NULL), 0);
}

/* Two ranks' files merged: both ranks' rows in the merged /values, and
 * spanscope report prints them. */
static void test_merge_keeps_values(void **state) {
    (void)state;
    const char *paths[2] = {tu_path("values_r0.h5"), tu_path("values_r1.h5")};
    for (int rank = 0; rank < 2; rank++) {
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.file_path = paths[rank];
        cfg.track = SPS_TRACK_MEMORY;
        cfg.rank = rank;
        cfg.size = 2;
        cfg.local = 1;
        assert_int_equal(sps_setup(&cfg), 0);
        sps_region_t r = sps_region("per_rank");
        sps_begin(r);
        sps_mem_alloc((size_t)(rank + 1) * 1000);
        sps_end(r);
        assert_int_equal(sps_finalize(), 0);
        sps_shutdown();
    }
    const char *out = tu_path("values_merged.h5");
    assert_int_equal(sps_merge(out, paths, 2, stderr), 0);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    size_t n = 0, m = 0;
    int64_t *rank = tu_h5_col(f, "/values/rank", H5T_NATIVE_INT64, sizeof(int64_t), &n);
    int64_t *bytes = tu_h5_col(f, "/values/alloc_bytes", H5T_NATIVE_INT64, sizeof(int64_t), &m);
    assert_int_equal(n, 2);
    assert_int_equal(m, 2);
    for (size_t i = 0; i < n; i++) assert_int_equal(bytes[i], (rank[i] + 1) * 1000);
    assert_int_not_equal(rank[0], rank[1]);
    free(rank);
    free(bytes);
    H5Fclose(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_own_self_peak),
        cmocka_unit_test(test_thread_attribution),
        cmocka_unit_test(test_values_survive_spilling),
        cmocka_unit_test(test_off_and_refused),
        cmocka_unit_test(test_spans_values),
        cmocka_unit_test(test_software_counters),
        cmocka_unit_test(test_merge_keeps_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
