/* test_counters.c -- counter samples: recorded only in a session, queried by
 * window, written to /counters at finalize (one period each), kept when a
 * write fails, from many threads. */
#include "testutil.h"
#include "tu_core.h"
#include "formats/h5_read.h"

#include <hdf5.h>
#include <stdio.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_counters_basic(void **state) {
    (void)state;
    sps_region_t c = sps_counter_id("queue");
    assert_int_not_equal(c, SPS_REGION_INVALID);
    assert_int_equal(sps_counter_id(NULL), SPS_REGION_INVALID);
    sps_counter(c, 1.0); /* no session: ignored */
    sps_counter_sample_t *v;
    size_t n;
    assert_int_equal(sps_counter_samples(0, INT64_MAX, &v, &n), SPS_ENOSESSION);
    assert_int_equal(sps_counter_samples(0, INT64_MAX, NULL, &n), SPS_EINVAL);
    const char *p1 = tu_path("counters1.h5"), *p2 = tu_path("counters2.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t loss = sps_counter_id("loss");
    int64_t t0 = sps_now_ns();
    for (int i = 0; i < 10; i++) sps_counter(i % 2 ? c : loss, i * 0.5);
    int64_t t1 = sps_now_ns();
    sps_counter(SPS_REGION_INVALID, 3.0); /* ignored */
    sps_counter(0x7ffffff0u, 3.0);        /* unknown id: ignored */
    assert_int_equal(sps_counter_samples(t0, t1, &v, &n), 0);
    assert_int_equal(n, 10);
    for (size_t i = 0; i < n; i++) {
        assert_true(v[i].value == (double)i * 0.5);
        assert_int_equal(v[i].counter, i % 2 ? c : loss);
        if (i) assert_true(v[i].t_ns >= v[i - 1].t_ns);
    }
    sps_free(v);
    assert_int_equal(sps_counter_samples(t1 + 1, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 0);
    sps_free(v);
    assert_int_equal(sps_finalize_to(p1), 0);
    sps_counter(c, 42.0);
    assert_int_equal(sps_finalize_to(p2), 0);
    sps_shutdown();

    sps__h5r_counters_t k;
    assert_int_equal(sps__h5r_counters(p1, &k), 0);
    assert_int_equal(k.n, 10);
    assert_int_equal(k.nnames, 2);
    assert_string_equal(k.names[k.series[0]], "loss");
    assert_string_equal(k.names[k.series[1]], "queue");
    assert_true(k.values[9] == 4.5);
    assert_int_equal(k.ranks[0], 0);
    sps__h5r_counters_free(&k);
    assert_int_equal(sps__h5r_counters(p2, &k), 0);
    assert_int_equal(k.n, 1); /* the second period only */
    assert_true(k.values[0] == 42.0);
    sps__h5r_counters_free(&k);
}

/* A file without /counters reads as none; a missing file is an error. */
static void test_counters_absent(void **state) {
    (void)state;
    const char *p = tu_path("nocounters.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t r = sps_region("r");
    sps_begin(r);
    sps_end(r);
    assert_int_equal(sps_finalize_to(p), 0);
    sps_shutdown();
    sps__h5r_counters_t k;
    assert_int_equal(sps__h5r_counters(p, &k), 0);
    assert_int_equal(k.n, 0);
    sps__h5r_counters_free(&k);
    assert_int_equal(sps__h5r_counters(tu_path("missing.h5"), &k), SPS_EIO);
}

/* A failed write keeps the period's samples for the next finalize. */
static void test_counters_survive_a_failed_write(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t c = sps_counter_id("kept");
    sps_counter(c, 1.0);
    assert_int_equal(sps_finalize_to("/nonexistent-dir/x.h5"), SPS_EPATH);
    sps_counter(c, 2.0);
    /* the pending period's sample is still the session's: queries see it
     * (first), as sps_spans sees pending spans; the window still filters */
    sps_counter_sample_t *v;
    size_t n;
    assert_int_equal(sps_counter_samples(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 2);
    assert_true(v[0].value == 1.0 && v[1].value == 2.0);
    assert_true(v[0].t_ns <= v[1].t_ns);
    int64_t t1 = v[1].t_ns;
    sps_free(v);
    assert_int_equal(sps_counter_samples(t1, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_true(v[0].value == 2.0);
    sps_free(v);
    const char *p = tu_path("counters_kept.h5");
    assert_int_equal(sps_finalize_to(p), 0);
    sps_shutdown();
    sps__h5r_counters_t k;
    assert_int_equal(sps__h5r_counters(p, &k), 0);
    assert_int_equal(k.n, 2);
    assert_true(k.values[0] == 1.0 && k.values[1] == 2.0);
    sps__h5r_counters_free(&k);
}

#define NTHR 8
#define PER 2000
static sps_region_t g_tc;
static void *sampler(void *arg) {
    (void)arg;
    for (int i = 0; i < PER; i++) sps_counter(g_tc, i);
    return NULL;
}

static void test_counters_threads(void **state) {
    (void)state;
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    g_tc = sps_counter_id("threads");
    pthread_t t[NTHR];
    for (int i = 0; i < NTHR; i++) pthread_create(&t[i], NULL, sampler, NULL);
    for (int i = 0; i < NTHR; i++) pthread_join(t[i], NULL);
    sps_counter_sample_t *v;
    size_t n;
    assert_int_equal(sps_counter_samples(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, NTHR * PER);
    for (size_t i = 1; i < n; i++) assert_true(v[i].t_ns >= v[i - 1].t_ns);
    sps_free(v);
    sps_shutdown();
    sps_config_t again = SPS_CONFIG_INIT; /* a new session starts empty */
    assert_int_equal(sps_setup(&again), 0);
    assert_int_equal(sps_counter_samples(0, INT64_MAX, &v, &n), 0);
    assert_int_equal(n, 0);
    sps_free(v);
    sps_shutdown();
}

/* A corrupt /counters (a series index out of range, a missing column) is
 * refused with a message naming the file; report prints the summary. */
static void test_counters_corrupt_and_report(void **state) {
    (void)state;
    const char *p = tu_path("counters_bad.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t c = sps_counter_id("depth");
    for (int i = 0; i < 3; i++) sps_counter(c, i);
    assert_int_equal(sps_finalize_to(p), 0);
    sps_shutdown();
    char out[4096] = "", err[256] = "";
    FILE *fp = fmemopen(out, sizeof out, "w");
    assert_int_equal(sps_report(p, fp, NULL, 0, err, sizeof err), 0);
    fclose(fp);
    assert_non_null(strstr(out, "Counters (1; 3 samples)"));
    assert_non_null(strstr(out, "depth"));
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "counters/series", H5P_DEFAULT);
    int64_t bad[3] = {0, 7, 0};
    assert_true(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, bad) >= 0);
    H5Dclose(d);
    H5Fclose(f);
    sps__h5r_counters_t k;
    assert_int_equal(sps__h5r_counters(p, &k), SPS_EFORMAT);
    assert_non_null(strstr(sps__err_msg(), "counters_bad.h5"));
    assert_int_equal(k.n, 0);
    fp = fmemopen(out, sizeof out, "w");
    assert_int_equal(sps_report(p, fp, NULL, 0, err, sizeof err), SPS_EFORMAT);
    fclose(fp);
    assert_non_null(strstr(err, "series"));
    f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, "counters/values", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    assert_int_equal(sps__h5r_counters(p, &k), SPS_EFORMAT);
    assert_non_null(strstr(sps__err_msg(), "values"));
}

/* The public reader hands out the same samples as /counters holds, and a
 * damaged /counters makes the whole file invalid through it too. */
static void test_counters_through_sps_file(void **state) {
    (void)state;
    const char *p = tu_path("counters_file.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t a = sps_counter_id("file.a"), b = sps_counter_id("file.b");
    for (int i = 0; i < 6; i++) sps_counter(i % 3 ? a : b, 0.25 * i);
    assert_int_equal(sps_finalize_to(p), 0);
    sps_shutdown();
    const sps_file_t *f;
    char err[256];
    assert_int_equal(sps_file_open(p, &f, err, sizeof err), 0);
    assert_int_equal(f->ncounters, 2);
    assert_int_equal(f->nsamples, 6);
    for (size_t i = 0; i < f->nsamples; i++) {
        assert_true(f->sample_value[i] == 0.25 * (double)i);
        assert_string_equal(f->counter_names[f->sample_counter[i]],
                            i % 3 ? "file.a" : "file.b");
        assert_int_equal(f->sample_rank[i], 0);
        if (i) assert_true(f->sample_t_ns[i] >= f->sample_t_ns[i - 1]);
    }
    assert_int_equal(f->samples_dropped, 0);
    sps_file_close(f);
    hid_t h = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = H5Dopen2(h, "counters/ranks", H5P_DEFAULT);
    int64_t bad[6] = {0, 0, -4, 0, 0, 0};
    assert_true(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, bad) >= 0);
    H5Dclose(d);
    H5Fclose(h);
    f = (const sps_file_t *)1;
    assert_int_equal(sps_file_open(p, &f, err, sizeof err), SPS_EFORMAT);
    assert_null(f);
    assert_non_null(strstr(err, "ranks"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_basic),
        cmocka_unit_test(test_counters_absent),
        cmocka_unit_test(test_counters_survive_a_failed_write),
        cmocka_unit_test(test_counters_threads),
        cmocka_unit_test(test_counters_corrupt_and_report),
        cmocka_unit_test(test_counters_through_sps_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
