/* test_h5_chunkread.c -- the event columns' direct chunk reader
 * (formats/h5_chunkread.c) against H5Dread of the same dataset: columns
 * filtered shuffle+deflate (ours and libhdf5's own), deflate alone, a
 * partial last chunk, reads across chunk edges and in an order that
 * overflows the cache; columns it must leave to H5Dread (no filters,
 * int32, fletcher32 too); a chunk stored with its filters skipped and a
 * damaged chunk answer 1 (the caller's fallback), never garbage; and a
 * whole recording read through sps__h5r_events_ids equals H5Dread. */
#include "testutil.h"

#include "formats/formats.h"
#include "formats/h5_read.h"
#include "spanscope.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#define N 10500     /* elements: ten full chunks of CH and a partial one */
#define CH 1000

static int64_t vals[N];

static void fill_vals(void) {
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) { /* small gaps with noise, some negative, some huge */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vals[i] = i % 97 == 0 ? (int64_t)x : (int64_t)(x % 5000) - (i % 13 == 0 ? 2500 : 0);
    }
}

/* A dataset of N elements of type t in file f, chunked by CH with the
 * given filters ("s": shuffle, "d": deflate, "f": fletcher32), holding
 * vals. */
static hid_t make(hid_t f, const char *name, hid_t t, const char *filters) {
    hsize_t n = N, ch = CH;
    hid_t sp = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    assert_true(H5Pset_chunk(dcpl, 1, &ch) >= 0);
    for (const char *c = filters; *c; c++) {
        if (*c == 's') H5Pset_shuffle(dcpl);
        if (*c == 'd') H5Pset_deflate(dcpl, 4);
        if (*c == 'f') H5Pset_fletcher32(dcpl);
    }
    hid_t d = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals) >= 0);
    H5Pclose(dcpl);
    H5Sclose(sp);
    return d;
}

/* Reads [first, first + n) through c and checks it against vals. */
static void check_range(sps__h5cr_t *c, uint64_t first, size_t n) {
    int64_t *got = malloc(n * sizeof *got);
    assert_non_null(got);
    assert_int_equal(sps__h5cr_read(c, first, n, got), 0);
    assert_memory_equal(got, vals + first, n * sizeof *got);
    free(got);
}

static void test_decodes_what_hdf5_wrote(void **state) {
    (void)state;
    fill_vals();
    hid_t f = H5Fcreate(tu_path("chunkread.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    const char *filt[] = {"sd", "d"};
    for (int k = 0; k < 2; k++) {
        hid_t d = make(f, k ? "deflate" : "shuffle_deflate", H5T_STD_I64LE, filt[k]);
        sps__h5cr_t *c = sps__h5cr_new(d);
        assert_non_null(c);
        check_range(c, 0, N);                 /* everything, partial last chunk included */
        check_range(c, CH - 3, 7);            /* across an edge */
        check_range(c, N - 5, 5);             /* the tail */
        for (uint64_t i = 0; i < 40; i++)     /* 21 chunks back and forth: past the cache */
            check_range(c, (i * 7919) % (N - 300), 300);
        sps__h5cr_free(c);
        H5Dclose(d);
    }
    H5Fclose(f);
}

static void test_leaves_other_columns_to_hdf5(void **state) {
    (void)state;
    fill_vals();
    hid_t f = H5Fcreate(tu_path("chunkread2.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t plain = make(f, "plain", H5T_STD_I64LE, "");
    hid_t narrow = make(f, "i32", H5T_STD_I32LE, "sd");
    hid_t big_endian = make(f, "be", H5T_STD_I64BE, "sd");
    hid_t fletcher = make(f, "fl", H5T_STD_I64LE, "sdf");
    hid_t ids[] = {plain, narrow, big_endian, fletcher};
    for (size_t i = 0; i < 4; i++) {
        assert_null(sps__h5cr_new(ids[i]));
        H5Dclose(ids[i]);
    }
    assert_null(sps__h5cr_new(-1));
    H5Fclose(f);
}

static void test_odd_chunks_fall_back(void **state) {
    (void)state;
    fill_vals();
    hid_t f = H5Fcreate(tu_path("chunkread3.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t d = make(f, "col", H5T_STD_I64LE, "sd");
    /* chunk 2 stored raw with both filters skipped (mask 0x3), chunk 4
     * with bytes that are no zlib stream under mask 0 */
    hsize_t off2 = 2 * CH, off4 = 4 * CH;
    assert_true(H5Dwrite_chunk(d, H5P_DEFAULT, 0x3, &off2, CH * 8, vals + 2 * CH) >= 0);
    unsigned char junk[64];
    memset(junk, 0x5a, sizeof junk);
    assert_true(H5Dwrite_chunk(d, H5P_DEFAULT, 0, &off4, sizeof junk, junk) >= 0);
    sps__h5cr_t *c = sps__h5cr_new(d);
    assert_non_null(c);
    int64_t got[CH];
    assert_int_equal(sps__h5cr_read(c, 0, CH, got), 0);
    assert_memory_equal(got, vals, sizeof got);
    assert_int_equal(sps__h5cr_read(c, 2 * CH + 10, 20, got), 1); /* filters skipped */
    assert_int_equal(sps__h5cr_read(c, 4 * CH, 5, got), 1);       /* damaged */
    /* H5Dread reads the raw chunk (HDF5 honours the mask) and refuses the damaged one */
    hsize_t start = 2 * CH + 10, count = 20;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    assert_true(H5Dread(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, got) >= 0);
    assert_memory_equal(got, vals + 2 * CH + 10, 20 * sizeof *got);
    start = 4 * CH;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    H5E_BEGIN_TRY { assert_true(H5Dread(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, got) < 0); }
    H5E_END_TRY;
    H5Sclose(ms);
    H5Sclose(fs);
    /* the chunks around still decode, the cache unharmed */
    check_range(c, 3 * CH, CH);
    check_range(c, 5 * CH, CH);
    sps__h5cr_free(c);
    H5Dclose(d);
    H5Fclose(f);
}

/* A recording of several regions on two threads (rows interleave in the
 * columns) read in blocks through sps__h5r_events_ids equals H5Dread of
 * each /events column. */
static void test_recording_equals_h5dread(void **state) {
    (void)state;
    const char *path = tu_path("chunkread_rec.h5");
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t a = sps_region("a"), b = sps_region("b"), c = sps_region("c");
    for (int i = 0; i < 60000; i++) {
        sps_begin(a);
        sps_begin(i % 3 ? b : c);
        sps_end(i % 3 ? b : c);
        sps_end(a);
    }
    assert_int_equal(sps_finalize(), 0);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open_index(&r, path), 0);
    assert_non_null(r->cr[0]); /* ours: the direct path */
    assert_non_null(r->cr[1]);
    uint64_t n = r->nevents;
    assert_true(n >= 120000);
    int64_t *col[5], *want = malloc(n * 8);
    for (int k = 0; k < 5; k++) col[k] = malloc(n * 8);
    for (uint64_t at = 0; at < n; at += 4093) { /* blocks that straddle chunks */
        size_t m = n - at < 4093 ? (size_t)(n - at) : 4093;
        assert_int_equal(sps__h5r_events_ids(r, at, m, col[0] + at, col[1] + at, col[2] + at,
                                             col[3] + at, col[4] + at), 0);
    }
    hid_t ds[5] = {r->h_start, r->h_dur, r->h_tid, r->h_call, r->h_parent};
    for (int k = 0; k < 5; k++) {
        if (ds[k] < 0) continue;
        assert_true(H5Dread(ds[k], H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, want) >= 0);
        if (k == 1 && !r->deltas) /* end times: the reader gives durations */
            for (uint64_t i = 0; i < n; i++) want[i] -= col[0][i];
        assert_memory_equal(col[k], want, n * 8);
    }
    for (int k = 0; k < 5; k++) free(col[k]);
    free(want);
    sps__h5r_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decodes_what_hdf5_wrote),
        cmocka_unit_test(test_leaves_other_columns_to_hdf5),
        cmocka_unit_test(test_odd_chunks_fall_back),
        cmocka_unit_test(test_recording_equals_h5dread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
