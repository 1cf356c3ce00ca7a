/* test_h5w.c -- the HDF5 writer (src/formats/h5.c), the reader
 * (src/formats/h5_read.c) and the summary table (src/formats/table.c),
 * without a profiling session: layouts with known rows are written, then
 * checked with the plain HDF5 API and read back through the reader.
 *
 * Leaves $SPS_TEST_TMP/h5w_compat.h5 for tests/python/test_h5_compat.py. */
#include "testutil.h"

#include "formats/h5_read.h"
#include "sps_int.h"

#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* A small known recording                                                   */
/* ------------------------------------------------------------------------ */

/* One thread, rank 0:
 *   main  [1000, 2000)                      call 0
 *     solve [1100, 1300)  solve [1400, 1700) calls 1, 2
 *     io    [1800, 1850)                     call 3
 * Rows in file region order: main [0,1), solve [1,3), io [3,4). */
#define K_EV 4
static const char *const k_names[] = {"main", "solve", "io", "unused"};
static const int64_t k_start[K_EV] = {1000, 1100, 1400, 1800};
static const int64_t k_dur[K_EV] = {1000, 200, 300, 50};
static const int64_t k_deltas[K_EV] = {1000, 1100, 300, 1800};
static const int64_t k_call[K_EV] = {0, 1, 2, 3};
static const int64_t k_parent[K_EV] = {-1, 0, 0, 0};
static const int64_t k_thread[K_EV] = {0, 0, 0, 0};

typedef struct known {
    sps__row_t rows[3];
    sps__thread_info_t thr[1];
    sps__layout_t lay;
} known_t;

/* Fills k with the known recording's layout (with the tree columns). */
static void known_init(known_t *k) {
    memset(k, 0, sizeof *k);
    const uint64_t off[3] = {0, 1, 3}, cnt[3] = {1, 2, 1};
    const int64_t excl[3] = {450, 500, 50}, tot[3] = {1000, 500, 50};
    const int64_t mn[3] = {1000, 200, 50}, mx[3] = {1000, 300, 50};
    for (int i = 0; i < 3; i++) {
        sps__row_t *r = &k->rows[i];
        r->file_region = (uint32_t)i;
        r->offset = off[i];
        r->count = cnt[i];
        r->exclusive_total = excl[i];
        r->s.total = tot[i];
        r->s.minimum = mn[i];
        r->s.maximum = mx[i];
        r->s.mean = (double)tot[i] / (double)cnt[i];
        r->s.m2 = i == 1 ? 5000.0 : 0.0;
        r->s.start_minimum = k_start[off[i]];
    }
    k->thr[0] = (sps__thread_info_t){0, 140001, 4242, 900, 2100, -1, "main"};
    k->lay = (sps__layout_t){
        .nnames = 4, .names = k_names, .nrows = 3, .rows = k->rows,
        .nevents = K_EV, .with_tree = 1, .compress_threshold = 0,
        .nthreads = 1, .threads = k->thr, .start_time_ns = 900,
        .finalize_time_ns = 2100, .label = "known", .rank = 0, .size = 1,
        .clock_source = "monotonic"};
}

/* Writes the known recording to path: rows in two pieces, io's duration
 * first as a placeholder and then fixed with a scattered write. */
static void known_write(const char *path, known_t *k) {
    int64_t dur[K_EV];
    memcpy(dur, k_dur, sizeof dur);
    dur[3] = -1;
    sps__h5w_t *w = NULL;
    assert_int_equal(sps__h5w_open(&w, path, &k->lay), 0);
    assert_non_null(w);
    assert_int_equal(sps__h5w_rows(w, 2, 2, k_deltas + 2, dur + 2, k_call + 2,
                                   k_parent + 2, k_thread + 2), 0);
    assert_int_equal(sps__h5w_rows(w, 0, 2, k_deltas, dur, k_call, k_parent,
                                   k_thread), 0);
    const uint64_t pos[1] = {3};
    const int64_t late[1] = {50};
    assert_int_equal(sps__h5w_durations(w, 1, pos, late), 0);
    assert_int_equal(sps__h5w_close(w), 0);
}

/* The known file at name, cut to half its size; returns its path. */
static const char *fresh_cut(const char *name) {
    known_t k;
    known_init(&k);
    const char *path = tu_path(name);
    known_write(path, &k);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
    return path;
}

/* ------------------------------------------------------------------------ */
/* Plain HDF5 checks                                                         */
/* ------------------------------------------------------------------------ */

/* Opens path read-only (HDF5 error printing off). */
static hid_t h5open(const char *path) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    return f;
}

/* Asserts that dataset name of f has file type `type` and n elements. */
static void check_dtype(hid_t f, const char *name, hid_t type, hsize_t n) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) fail_msg("missing dataset %s", name);
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    hsize_t dim = 0;
    assert_int_equal(H5Sget_simple_extent_ndims(s), 1);
    H5Sget_simple_extent_dims(s, &dim, NULL);
    if (H5Tequal(t, type) <= 0) fail_msg("dataset %s has the wrong type", name);
    assert_int_equal(dim, n);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
}

/* Asserts that dataset name of f is a vlen UTF-8 string column. */
static void check_vlen_utf8(hid_t f, const char *name, hsize_t n) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) fail_msg("missing dataset %s", name);
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    hsize_t dim = 0;
    H5Sget_simple_extent_dims(s, &dim, NULL);
    assert_int_equal(H5Tget_class(t), H5T_STRING);
    assert_true(H5Tis_variable_str(t) > 0);
    assert_int_equal(H5Tget_cset(t), H5T_CSET_UTF8);
    assert_int_equal(dim, n);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
}

/* Reads int64 dataset name of f into out (n elements expected). */
static void read_i64(hid_t f, const char *name, int64_t *out, size_t n) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) fail_msg("missing dataset %s", name);
    hid_t s = H5Dget_space(d);
    hsize_t dim = 0;
    H5Sget_simple_extent_dims(s, &dim, NULL);
    assert_int_equal(dim, n);
    if (n) assert_true(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL,
                               H5P_DEFAULT, out) >= 0);
    H5Sclose(s);
    H5Dclose(d);
}

/* Reads the string column name of f; compares with want[0..n). */
static void check_strings(hid_t f, const char *name, const char *const *want,
                          size_t n) {
    char *got[8] = {0};
    assert_true(n <= 8);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    assert_true(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(got[i], want[i]);
        H5free_memory(got[i]);
    }
    H5Tclose(t);
    H5Dclose(d);
}

/* Reads the scalar int64 attribute name of object obj. */
static int64_t attr_i64(hid_t f, const char *obj, const char *name) {
    int64_t v = 0;
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) fail_msg("missing attribute %s/%s", obj, name);
    assert_true(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Aclose(a);
    return v;
}

/* Reads the scalar vlen string attribute name of obj into buf. */
static void attr_str(hid_t f, const char *obj, const char *name, char *buf,
                     size_t cap) {
    char *v = NULL;
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) fail_msg("missing attribute %s/%s", obj, name);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    assert_true(H5Aread(a, t, &v) >= 0);
    snprintf(buf, cap, "%s", v ? v : "");
    H5free_memory(v);
    H5Tclose(t);
    H5Aclose(a);
}

/* The summary_statistics compound as the test reads it (by field name). */
typedef struct tsum {
    int64_t total, minimum, maximum;
    double mean, m2;
} tsum_t;

/* Reads total/minimum/maximum/mean/m2 of summary_statistics by name. */
static void read_summary(hid_t f, tsum_t *out, size_t n) {
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(tsum_t));
    H5Tinsert(t, "total", offsetof(tsum_t, total), H5T_NATIVE_INT64);
    H5Tinsert(t, "minimum", offsetof(tsum_t, minimum), H5T_NATIVE_INT64);
    H5Tinsert(t, "maximum", offsetof(tsum_t, maximum), H5T_NATIVE_INT64);
    H5Tinsert(t, "mean", offsetof(tsum_t, mean), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "m2", offsetof(tsum_t, m2), H5T_NATIVE_DOUBLE);
    hid_t d = H5Dopen2(f, "/rank_region_index/summary_statistics",
                       H5P_DEFAULT);
    assert_true(d >= 0);
    if (n) assert_true(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    H5Dclose(d);
    H5Tclose(t);
}

/* Asserts the summary compound's 11 fields, in order, 88 bytes packed. */
static void check_summary_type(hid_t f) {
    static const char *const want[] = {
        "total", "minimum", "maximum", "first", "last", "start_minimum",
        "end_maximum", "gpu_count", "gpu_total", "mean", "m2"};
    hid_t d = H5Dopen2(f, "/rank_region_index/summary_statistics",
                       H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    assert_int_equal(H5Tget_class(t), H5T_COMPOUND);
    assert_int_equal(H5Tget_nmembers(t), 11);
    assert_int_equal(H5Tget_size(t), 88);
    for (unsigned i = 0; i < 11; i++) {
        char *name = H5Tget_member_name(t, i);
        assert_string_equal(name, want[i]);
        H5free_memory(name);
        hid_t m = H5Tget_member_type(t, i);
        hid_t exp = i == 7 ? H5T_STD_U64LE : i >= 9 ? H5T_IEEE_F64LE
                                                    : H5T_STD_I64LE;
        assert_true(H5Tequal(m, exp) > 0);
        assert_int_equal(H5Tget_member_offset(t, i), 8 * i);
        H5Tclose(m);
    }
    H5Tclose(t);
    H5Dclose(d);
}

/* ------------------------------------------------------------------------ */
/* Writer tests                                                              */
/* ------------------------------------------------------------------------ */

/* The known file has the schema-3 layout, dtypes and values. */
static void test_known_file_layout(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    const char *path = tu_path("h5w_compat.h5");
    known_write(path, &k);
    hid_t f = h5open(path);
    char s[256];
    int64_t v[K_EV];
    assert_int_equal(attr_i64(f, "/", "scope_profiler_schema"), 3);
    attr_str(f, "/", "storage_layout", s, sizeof s);
    assert_string_equal(s, "columnar");
    check_vlen_utf8(f, "/region_table/names", 4);
    check_strings(f, "/region_table/names", k_names, 4);
    check_dtype(f, "/rank_region_index/region_ids", H5T_STD_U32LE, 3);
    check_dtype(f, "/rank_region_index/ranks", H5T_STD_U32LE, 3);
    check_dtype(f, "/rank_region_index/event_offsets", H5T_STD_U64LE, 3);
    check_dtype(f, "/rank_region_index/event_counts", H5T_STD_U64LE, 3);
    check_dtype(f, "/rank_region_index/source_lines", H5T_STD_I64LE, 3);
    check_dtype(f, "/rank_region_index/exclusive_totals", H5T_STD_I64LE, 3);
    const char *tags[] = {"[]", "[]", "[]"}, *empty[] = {"", "", ""};
    check_strings(f, "/rank_region_index/tags", tags, 3);
    check_strings(f, "/rank_region_index/event_metadata", tags, 3);
    check_strings(f, "/rank_region_index/source_files", empty, 3);
    check_strings(f, "/rank_region_index/source_texts", empty, 3);
    check_summary_type(f);
    read_i64(f, "/rank_region_index/source_lines", v, 3);
    for (int i = 0; i < 3; i++) assert_int_equal(v[i], -1);
    read_i64(f, "/rank_region_index/exclusive_totals", v, 3);
    assert_int_equal(v[0], 450);
    assert_int_equal(v[1], 500);
    read_i64(f, "/rank_region_index/event_counts", v, 3);
    assert_int_equal(v[1], 2);
    const char *ev[] = {"start_deltas", "durations", "call_ids", "parent_ids",
                        "thread_ids"};
    const int64_t *want[] = {k_deltas, k_dur, k_call, k_parent, k_thread};
    for (int c = 0; c < 5; c++) {
        snprintf(s, sizeof s, "/events/%s", ev[c]);
        check_dtype(f, s, H5T_STD_I64LE, K_EV);
        read_i64(f, s, v, K_EV);
        for (int i = 0; i < K_EV; i++) assert_int_equal(v[i], want[c][i]);
    }
    tsum_t sum[3];
    read_summary(f, sum, 3);
    assert_int_equal(sum[1].total, 500);
    assert_int_equal(sum[1].minimum, 200);
    assert_int_equal(sum[1].maximum, 300);
    assert_true(sum[1].mean == 250.0 && sum[1].m2 == 5000.0);
    H5Fclose(f);
}

/* /metadata and /thread_table hold what the layout gave. */
static void test_known_file_metadata(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    const char *path = tu_path("h5w_meta.h5");
    known_write(path, &k);
    hid_t f = h5open(path);
    char s[512];
    assert_int_equal(attr_i64(f, "/metadata", "start_time_ns"), 900);
    assert_int_equal(attr_i64(f, "/metadata", "finalize_time_ns"), 2100);
    assert_int_equal(attr_i64(f, "/metadata", "mpi_size"), 1);
    assert_int_equal(attr_i64(f, "/metadata", "rank"), 0);
    assert_int_equal(attr_i64(f, "/metadata", "threads"), 1);
    assert_int_equal(attr_i64(f, "/metadata", "pid"), getpid());
    assert_true(attr_i64(f, "/metadata", "total_cores") >= 1);
    attr_str(f, "/metadata", "label", s, sizeof s);
    assert_string_equal(s, "known");
    attr_str(f, "/metadata", "clock_source", s, sizeof s);
    assert_string_equal(s, "monotonic");
    attr_str(f, "/metadata", "spanscope_version", s, sizeof s);
    assert_string_equal(s, SPS_VERSION_STRING);
    attr_str(f, "/metadata", "timestamp", s, sizeof s);
    assert_int_equal(strlen(s), strlen("2026-01-01T00:00:00.000000+00:00"));
    assert_true(s[10] == 'T' && strcmp(s + 26, "+00:00") == 0);
    attr_str(f, "/metadata", "platform", s, sizeof s);
    assert_true(strlen(s) > 0);
    check_dtype(f, "/thread_table/ranks", H5T_STD_U32LE, 1);
    check_dtype(f, "/thread_table/daemon", H5T_STD_I8LE, 1);
    check_dtype(f, "/thread_table/native_id", H5T_STD_I64LE, 1);
    const char *tname[] = {"main"};
    check_strings(f, "/thread_table/name", tname, 1);
    int64_t v[1];
    read_i64(f, "/thread_table/native_id", v, 1);
    assert_int_equal(v[0], 4242);
    read_i64(f, "/thread_table/cpu_ns", v, 1);
    assert_int_equal(v[0], -1);
    H5Fclose(f);
}

static hid_t h5open_rw(const char *path);

/* The one /metadata reader: its typed view of what the writer wrote, the
 * same view inside a reader, and absent or ill-typed fields as absent. */
static void test_metadata_reader(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    k.lay.rank = 3;
    k.lay.size = 8;
    k.lay.wall_anchor_ns = 1700000000000000000;
    k.lay.mono_anchor_ns = 123;
    k.lay.dropped = 5;
    k.lay.has_clock_offset = 1;
    k.lay.clock_offset_ns = -42;
    k.lay.clock_offset_error_ns = 7;
    const char *path = tu_path("h5w_meta_view.h5");
    known_write(path, &k);
    sps__h5r_meta_t m;
    assert_int_equal(sps__h5r_metadata(path, &m), 0);
    assert_true(m.nattrs >= 20);
    for (size_t i = 1; i < m.nattrs; i++) /* name order */
        assert_true(strcmp(m.attrs[i - 1].name, m.attrs[i].name) < 0);
    assert_true(m.has_times);
    assert_int_equal(m.start_time_ns, 900);
    assert_int_equal(m.finalize_time_ns, 2100);
    assert_true(m.has_anchor);
    assert_int_equal(m.wall_anchor_ns, 1700000000000000000);
    assert_int_equal(m.mono_anchor_ns, 123);
    assert_true(m.has_rank);
    assert_int_equal(m.rank, 3);
    assert_int_equal(m.mpi_size, 8);
    assert_true(m.has_clock_offset && m.has_clock_offset_error);
    assert_int_equal(m.clock_offset_ns, -42);
    assert_int_equal(m.clock_offset_error_ns, 7);
    assert_int_equal(m.dropped_events, 5);
    assert_string_equal(m.label, "known");
    assert_string_equal(m.clock_source, "monotonic");
    assert_true(strlen(m.hostname) > 0);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open_index(&r, path), 0);
    assert_int_equal(r->meta.nattrs, m.nattrs);
    assert_int_equal(r->meta.rank, 3);
    assert_string_equal(r->meta.label, "known");
    sps__h5r_free(r);
    sps__h5r_meta_free(&m);
    assert_null(m.attrs);
    /* ill-typed or out-of-range fields read as absent */
    hid_t f = h5open_rw(path);
    hid_t g = H5Gopen2(f, "metadata", H5P_DEFAULT);
    H5Adelete(g, "rank");
    H5Adelete(g, "wall_anchor_ns");
    hid_t sp = H5Screate(H5S_SCALAR);
    int64_t neg = -1;
    hid_t a = H5Acreate2(g, "rank", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, &neg);
    H5Aclose(a);
    double d = 1.5;
    a = H5Acreate2(g, "wall_anchor_ns", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, &d);
    H5Aclose(a);
    H5Adelete(g, "label");
    H5Sclose(sp);
    H5Gclose(g);
    H5Fclose(f);
    assert_int_equal(sps__h5r_metadata(path, &m), 0);
    assert_false(m.has_rank);            /* a negative rank */
    assert_false(m.has_anchor);          /* a float anchor */
    assert_int_equal(m.wall_anchor_ns, 0);
    assert_string_equal(m.label, "");    /* absent */
    assert_true(m.has_times);
    sps__h5r_meta_free(&m);
    /* not a file */
    assert_int_equal(sps__h5r_metadata(tu_path("h5w_no_such.h5"), &m), SPS_EIO);
    assert_non_null(strstr(sps__err_msg(), "h5w_no_such.h5"));
    assert_int_equal(m.nattrs, 0);
}

/* Fills a layout of one region with n events and no tree. */
static void big_layout(sps__layout_t *lay, sps__row_t *row, uint64_t n,
                       long threshold) {
    static const char *const names[] = {"hot"};
    memset(row, 0, sizeof *row);
    row->count = n;
    row->exclusive_total = -1;
    *lay = (sps__layout_t){.nnames = 1, .names = names, .nrows = 1,
                           .rows = row, .nevents = n,
                           .compress_threshold = threshold, .size = 1};
}

/* Storage layout, chunk size and filters of a dataset. */
static void storage_of(hid_t f, const char *name, H5D_layout_t *layout,
                       int *nfilters, hsize_t *chunk) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t p = H5Dget_create_plist(d);
    *layout = H5Pget_layout(p);
    *nfilters = H5Pget_nfilters(p);
    *chunk = 0;
    if (*layout == H5D_CHUNKED) H5Pget_chunk(p, 1, chunk);
    H5Pclose(p);
    H5Dclose(d);
}

/* Writes n events of pattern i*7+3 (start gap 1, duration i % 1000) in
 * uneven pieces, in a scrambled order, with half the durations fixed later
 * by scattered writes in reverse order; checks them back. */
static void write_big(const char *path, uint64_t n, long threshold) {
    sps__layout_t lay;
    sps__row_t row;
    big_layout(&lay, &row, n, threshold);
    int64_t *st = malloc(n * 8), *du = malloc(n * 8), *late = malloc(n * 8);
    uint64_t *pos = malloc(n * 8);
    size_t nl = 0;
    for (uint64_t i = 0; i < n; i++) {
        st[i] = (int64_t)i * 7 + 3;
        du[i] = i % 2 ? -1 : (int64_t)(i % 1000);
    }
    for (uint64_t i = n; i-- > 0;)
        if (i % 2) {
            pos[nl] = i;
            late[nl++] = (int64_t)(i % 1000);
        }
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, path, &lay), 0);
    const uint64_t piece = 3001; /* never chunk aligned */
    for (uint64_t k = 0; k * piece < n; k += 2) /* even pieces first */
        assert_int_equal(sps__h5w_rows(w, k * piece, (size_t)(n - k * piece < piece ? n - k * piece : piece), st + k * piece, du + k * piece, NULL, NULL, NULL), 0);
    for (uint64_t k = 1; k * piece < n; k += 2)
        assert_int_equal(sps__h5w_rows(w, k * piece, (size_t)(n - k * piece < piece ? n - k * piece : piece), st + k * piece, du + k * piece, NULL, NULL, NULL), 0);
    assert_int_equal(sps__h5w_durations(w, nl, pos, late), 0);
    assert_int_equal(sps__h5w_close(w), 0);
    hid_t f = h5open(path);
    read_i64(f, "/events/start_deltas", st, n);
    read_i64(f, "/events/durations", du, n);
    for (uint64_t i = 0; i < n; i++) {
        if (st[i] != (int64_t)i * 7 + 3 || du[i] != (int64_t)(i % 1000))
            fail_msg("event %llu reads back wrong", (unsigned long long)i);
    }
    assert_int_equal(H5Lexists(f, "/events/call_ids", H5P_DEFAULT), 0);
    H5Fclose(f);
    free(st);
    free(du);
    free(late);
    free(pos);
}

/* From the threshold on, event columns are chunked, shuffled and
 * deflated, and every value reads back. */
static void test_compressed_above_threshold(void **state) {
    (void)state;
    const char *path = tu_path("h5w_big.h5");
    write_big(path, 200000, 0); /* default threshold 16384 */
    hid_t f = h5open(path);
    H5D_layout_t lay;
    int nf;
    hsize_t chunk;
    storage_of(f, "/events/durations", &lay, &nf, &chunk);
    assert_int_equal(lay, H5D_CHUNKED);
    assert_int_equal(nf, 2);
    assert_int_equal(chunk, 32768);
    storage_of(f, "/events/start_deltas", &lay, &nf, &chunk);
    assert_int_equal(lay, H5D_CHUNKED);
    H5Fclose(f);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size < 200000 * 16 / 4); /* it did compress */
}

/* Below the threshold, or with -1, the columns stay contiguous; a small
 * explicit threshold compresses small files too. */
static void test_threshold_choices(void **state) {
    (void)state;
    const struct { uint64_t n; long th; H5D_layout_t want; } c[] = {
        {16383, 0, H5D_CONTIGUOUS}, {16384, 0, H5D_CHUNKED},
        {100000, -1, H5D_CONTIGUOUS}, {100, 10, H5D_CHUNKED},
        {9, 10, H5D_CONTIGUOUS}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *path = tu_path("h5w_threshold.h5");
        write_big(path, c[i].n, c[i].th);
        hid_t f = h5open(path);
        H5D_layout_t lay;
        int nf;
        hsize_t chunk;
        storage_of(f, "/events/durations", &lay, &nf, &chunk);
        assert_int_equal(lay, c[i].want);
        if (lay == H5D_CHUNKED) assert_true(chunk <= c[i].n);
        H5Fclose(f);
    }
}

/* A period with nothing recorded is still a valid file. */
static void test_zero_events(void **state) {
    (void)state;
    const char *path = tu_path("h5w_empty.h5");
    sps__layout_t lay = {.size = 1, .with_tree = 1};
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, path, &lay), 0);
    assert_int_equal(sps__h5w_rows(w, 0, 0, NULL, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(sps__h5w_durations(w, 0, NULL, NULL), 0);
    assert_int_equal(sps__h5w_close(w), 0);
    hid_t f = h5open(path);
    check_dtype(f, "/events/durations", H5T_STD_I64LE, 0);
    check_dtype(f, "/events/parent_ids", H5T_STD_I64LE, 0);
    check_dtype(f, "/rank_region_index/region_ids", H5T_STD_U32LE, 0);
    check_vlen_utf8(f, "/region_table/names", 0);
    assert_int_equal(H5Lexists(f, "/thread_table", H5P_DEFAULT), 0);
    H5Fclose(f);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, path), 0);
    assert_int_equal(r->nevents, 0);
    sps__tree_row_t *nodes;
    sps__tflat_t *flat;
    size_t nn, nf;
    assert_int_equal(sps__h5r_tree(r, &nodes, &nn), 0);
    assert_int_equal(sps__h5r_flat(r, &flat, &nf), 0);
    assert_int_equal(nn, 0);
    assert_int_equal(nf, 0);
    free(nodes);
    free(flat);
    sps__h5r_free(r);
}

/* Names with rows of zero calls and no events (a region registered but
 * not entered) also make a valid file. */
static void test_zero_events_with_names(void **state) {
    (void)state;
    const char *path = tu_path("h5w_empty2.h5");
    static const char *const names[] = {"idle", ""};
    sps__row_t row = {.file_region = 1, .exclusive_total = -1};
    sps__layout_t lay = {.nnames = 2, .names = names, .nrows = 1,
                         .rows = &row, .size = 1};
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, path, &lay), 0);
    assert_int_equal(sps__h5w_close(w), 0);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, path), 0);
    assert_int_equal(r->nnames, 2);
    assert_string_equal(r->names[1], "");
    sps__h5r_free(r);
}

/* The aggregate layout: no events, aggregate_* columns from the rows. */
static void test_aggregate_layout(void **state) {
    (void)state;
    const char *path = tu_path("h5w_aggregate.h5");
    static const char *const names[] = {"tick", "tock"};
    sps__row_t rows[2] = {
        {.file_region = 0, .count = 1000000, .exclusive_total = 700,
         .s = {.total = 900, .minimum = 0, .maximum = 5}},
        {.file_region = 1, .count = 3, .exclusive_total = 30,
         .s = {.total = 30, .minimum = 9, .maximum = 11}}};
    sps__layout_t lay = {.aggregate = 1, .nnames = 2, .names = names,
                         .nrows = 2, .rows = rows, .with_tree = 1, .size = 1};
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, path, &lay), 0);
    assert_int_equal(sps__h5w_close(w), 0);
    hid_t f = h5open(path);
    char s[64];
    attr_str(f, "/", "storage_layout", s, sizeof s);
    assert_string_equal(s, "aggregate");
    check_dtype(f, "/events/durations", H5T_STD_I64LE, 0);
    check_dtype(f, "/rank_region_index/aggregate_counts", H5T_STD_U64LE, 2);
    const char *ai[] = {"aggregate_totals", "aggregate_minimums",
                        "aggregate_maximums", "aggregate_exclusives"};
    const int64_t want[4][2] = {{900, 30}, {0, 9}, {5, 11}, {700, 30}};
    int64_t v[2];
    for (int i = 0; i < 4; i++) {
        snprintf(s, sizeof s, "/rank_region_index/%s", ai[i]);
        check_dtype(f, s, H5T_STD_I64LE, 2);
        read_i64(f, s, v, 2);
        assert_int_equal(v[0], want[i][0]);
        assert_int_equal(v[1], want[i][1]);
    }
    read_i64(f, "/rank_region_index/aggregate_counts", v, 2);
    assert_int_equal(v[0], 1000000);
    read_i64(f, "/rank_region_index/event_counts", v, 2);
    assert_int_equal(v[0], 0); /* no /events rows */
    H5Fclose(f);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, path), 0);
    assert_true(r->aggregate);
    sps__tflat_t *flat;
    size_t nf;
    assert_int_equal(sps__h5r_flat(r, &flat, &nf), 0);
    assert_int_equal(nf, 2);
    assert_string_equal(flat[0].name, "tick");
    assert_int_equal(flat[0].calls, 1000000);
    assert_int_equal(flat[0].self_ns, 700);
    assert_int_equal(flat[1].max_ns, 11);
    free(flat);
    sps__h5r_free(r);
}

/* Bad arguments are refused without touching the disk; failures remove
 * the file; paths that cannot be created give SPS_EPATH. */
static void test_writer_errors(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    sps__h5w_t *w = (sps__h5w_t *)1;
    assert_int_equal(sps__h5w_open(&w, NULL, &k.lay), SPS_EINVAL);
    assert_null(w);
    assert_int_equal(sps__h5w_open(NULL, "x.h5", &k.lay), SPS_EINVAL);
    assert_int_equal(sps__h5w_open(&w, tu_path("x.h5"), NULL), SPS_EINVAL);
    assert_int_equal(sps__h5w_open(&w, "/nonexistent-dir/x.h5", &k.lay),
                     SPS_EPATH);
    sps__layout_t bad = k.lay;
    bad.aggregate = 1; /* aggregate files have no events */
    assert_int_equal(sps__h5w_open(&w, tu_path("x.h5"), &bad), SPS_EINVAL);

    const char *path = tu_path("h5w_err.h5");
    assert_int_equal(sps__h5w_open(&w, path, &k.lay), 0);
    assert_int_equal(sps__h5w_rows(w, 3, 2, k_deltas, k_dur, k_call, k_parent,
                                   k_thread), SPS_EINVAL);
    assert_int_equal(sps__h5w_rows(w, 0, 1, k_deltas, k_dur, NULL, k_parent,
                                   k_thread), SPS_EINVAL); /* tree needs ids */
    const uint64_t pos[1] = {4};
    assert_int_equal(sps__h5w_durations(w, 1, pos, k_dur), SPS_EINVAL);
    sps__h5w_abort(w);
    assert_int_equal(access(path, F_OK), -1);

    assert_int_equal(sps__h5w_open(&w, path, &k.lay), 0);
    k.rows[2].file_region = 9; /* names no region: refused at close */
    assert_int_equal(sps__h5w_close(w), SPS_EINVAL);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(sps__h5w_close(NULL), SPS_EINVAL);
    sps__h5w_abort(NULL);
}

/* Failures print nothing, even with HDF5's default error printing on, and
 * the host's error handler is left as it was. */
static void test_writer_and_reader_are_quiet(void **state) {
    (void)state;
    const char *errs = tu_path("h5w_stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    FILE *fp = fopen(errs, "w");
    assert_non_null(fp);
    dup2(fileno(fp), 2);
    H5Eset_auto2(H5E_DEFAULT, (H5E_auto2_t)H5Eprint2, stderr);
    known_t k;
    known_init(&k);
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, "/nonexistent-dir/x.h5", &k.lay),
                     SPS_EPATH);
    sps__h5r_t *r;
    const char *cut = fresh_cut("h5w_quiet.h5");
    assert_int_equal(sps__h5r_open(&r, cut), SPS_EFORMAT);
    H5E_auto2_t fn = NULL;
    void *data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &fn, &data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(fp);
    assert_true(fn == (H5E_auto2_t)H5Eprint2 && data == stderr);
    struct stat st;
    assert_int_equal(stat(errs, &st), 0);
    assert_int_equal(st.st_size, 0);
}

/* ------------------------------------------------------------------------ */
/* Reader and table                                                          */
/* ------------------------------------------------------------------------ */

/* Index of the node called name with parent `parent` (-2: any), or -1. */
static long node_find(const sps__tree_row_t *n, size_t nn, const char *name,
                      int32_t parent) {
    for (size_t i = 0; i < nn; i++)
        if (!strcmp(n[i].name, name) && (parent == -2 || n[i].parent == parent))
            return (long)i;
    return -1;
}

/* Checks the known recording's tree (from ids or from intervals). */
static void check_known_tree(const sps__h5r_t *r) {
    sps__tree_row_t *n;
    size_t nn;
    assert_int_equal(sps__h5r_tree(r, &n, &nn), 0);
    assert_int_equal(nn, 3);
    long m = node_find(n, nn, "main", -1);
    assert_true(m >= 0);
    long s = node_find(n, nn, "solve", (int32_t)m);
    long io = node_find(n, nn, "io", (int32_t)m);
    assert_true(s >= 0 && io >= 0);
    assert_int_equal(n[m].calls, 1);
    assert_int_equal(n[m].total_ns, 1000);
    assert_int_equal(n[m].self_ns, 450);
    assert_int_equal(n[s].calls, 2);
    assert_int_equal(n[s].total_ns, 500);
    assert_int_equal(n[s].min_ns, 200);
    assert_int_equal(n[s].max_ns, 300);
    assert_int_equal(n[io].self_ns, 50);
    free(n);
}

/* Our known file reads back: names, starts, tree from ids, flat view,
 * session from /metadata. */
static void test_read_known(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    const char *path = tu_path("h5w_read.h5");
    known_write(path, &k);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, path), 0);
    assert_int_equal(r->schema, 3);
    assert_false(r->aggregate);
    assert_int_equal(r->nnames, 4);
    assert_int_equal(r->nevents, K_EV);
    assert_true(r->nested_by_ids);
    for (int i = 0; i < K_EV; i++) {
        assert_int_equal(r->start[i], k_start[i]);
        assert_int_equal(r->dur[i], k_dur[i]);
    }
    check_known_tree(r);
    sps__tflat_t *f;
    size_t nf;
    assert_int_equal(sps__h5r_flat(r, &f, &nf), 0);
    assert_int_equal(nf, 3); /* "unused" has no row */
    assert_string_equal(f[1].name, "solve");
    assert_int_equal(f[1].calls, 2);
    assert_true(f[1].mean_ns == 250.0);
    assert_int_equal(sps__h5r_session_ns(r), 1200);
    free(f);
    sps__h5r_free(r);
}

/* Without call/parent ids the nesting comes from the intervals. */
static void test_read_nesting_from_intervals(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    k.lay.with_tree = 0;
    const char *path = tu_path("h5w_notree.h5");
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, path, &k.lay), 0);
    assert_int_equal(sps__h5w_rows(w, 0, K_EV, k_deltas, k_dur, NULL, NULL,
                                   NULL), 0);
    assert_int_equal(sps__h5w_close(w), 0);
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, path), 0);
    assert_false(r->nested_by_ids);
    check_known_tree(r);
    sps__h5r_free(r);
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

/* scope-profiler's own schema-3 fixture reads: no summary, no ids, no
 * /metadata times. */
static void test_read_scope_profiler_fixture(void **state) {
    (void)state;
    sps__h5r_t *r;
    const char *path = data_path("scope-profiler-schema3-fixture.h5");
    if (sps__h5r_open(&r, path) != 0) fail_msg("%s", sps__err_msg());
    assert_int_equal(r->nnames, 1);
    assert_string_equal(r->names[0], "solve");
    assert_int_equal(r->nevents, 3);
    const int64_t st[3] = {10, 20, 40}, du[3] = {5, 13, 15};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r->start[i], st[i]);
        assert_int_equal(r->dur[i], du[i]);
    }
    sps__tree_row_t *n;
    size_t nn;
    assert_int_equal(sps__h5r_tree(r, &n, &nn), 0);
    assert_int_equal(nn, 1);
    assert_int_equal(n[0].calls, 3);
    assert_int_equal(n[0].total_ns, 33);
    assert_int_equal(sps__h5r_session_ns(r), 45); /* 10 .. 55 */
    free(n);
    sps__h5r_free(r);
}

/* Prints the table of file path into a string (caller frees). */
static char *table_of(const char *path, const sps__table_opts_t *opt) {
    sps__h5r_t *r;
    sps__tree_row_t *n;
    sps__tflat_t *f;
    size_t nn, nf, len = 0;
    char *out = NULL;
    assert_int_equal(sps__h5r_open(&r, path), 0);
    assert_int_equal(sps__h5r_tree(r, &n, &nn), 0);
    assert_int_equal(sps__h5r_flat(r, &f, &nf), 0);
    FILE *fp = open_memstream(&out, &len);
    assert_non_null(fp);
    sps__table_opts_t o = *opt;
    o.session_ns = sps__h5r_session_ns(r);
    assert_int_equal(sps__table_print(fp, n, nn, f, nf, &o), 0);
    fclose(fp);
    free(n);
    free(f);
    sps__h5r_free(r);
    return out;
}

/* The table shows the tree indented, the counts, and the flat view in the
 * requested order and length. */
static void test_table_output(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    const char *path = tu_path("h5w_table.h5");
    known_write(path, &k);
    sps__table_opts_t o = {1, 1, SPS__SORT_SELF, 0, 0};
    char *t = table_of(path, &o);
    assert_non_null(strstr(t, "Call tree"));
    assert_non_null(strstr(t, "\nmain "));
    assert_non_null(strstr(t, "\n  solve "));
    assert_non_null(strstr(t, "\n  io "));
    assert_non_null(strstr(t, "\nTOTAL "));
    assert_non_null(strstr(t, "% session"));
    assert_non_null(strstr(t, "83.3%")); /* main: 1000 of 1200 ns */
    assert_non_null(strstr(t, "Regions (by self; 3 of 3)"));
    /* flat by self: solve (500) before main (450) before io (50) */
    char *flat = strstr(t, "Regions");
    char *ps = strstr(flat, "\nsolve "), *pm = strstr(flat, "\nmain ");
    char *pi = strstr(flat, "\nio ");
    assert_true(ps && pm && pi && ps < pm && pm < pi);
    free(t);
    sps__table_opts_t o2 = {0, 1, SPS__SORT_CALLS, 1, 0};
    t = table_of(path, &o2);
    assert_null(strstr(t, "Call tree"));
    assert_non_null(strstr(t, "Regions (by calls; 1 of 3)"));
    assert_non_null(strstr(t, "\nsolve "));
    assert_null(strstr(t, "\nmain "));
    free(t);
}

/* Odd table input: cycles, parents out of range, control bytes, long
 * names, NULL names, no rows at all -- all printed, nothing crashes. */
static void test_table_odd_input(void **state) {
    (void)state;
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    sps__tree_row_t n[] = {
        {1, "a", 1, 10, 10, 10, 10}, {0, "b", 1, 5, 5, 5, 5},   /* cycle */
        {99, "c\x1b[2J", 1, 3, 3, 3, 3}, {-7, longname, 1, 1, 1, 1, 1},
        {2, NULL, 1, 1, 1, 1, 1}, {5, "self-parent", 0, 0, 0, 0, 0}};
    sps__tflat_t f[] = {{NULL, 0, 0, 0, 0, 0, 0}, {"x", 2, -5, -5, -9, 4, -2.5}};
    char *out = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&out, &len);
    sps__table_opts_t o = {1, 1, (sps__sort_t)77, 0, -1};
    assert_int_equal(sps__table_print(fp, n, 6, f, 2, &o), 0);
    assert_int_equal(sps__table_print(fp, NULL, 0, NULL, 0, NULL), 0);
    fclose(fp);
    assert_null(strchr(out, '\x1b'));
    assert_non_null(strstr(out, "c?[2J"));
    assert_non_null(strstr(out, "self-parent"));
    assert_non_null(strstr(out, "(null)"));
    assert_non_null(strstr(out, "(no calls recorded)"));
    assert_non_null(strstr(out, "..."));
    assert_non_null(strstr(out, "\na ") ? strstr(out, "\n  b ")
                                        : strstr(out, "\n  a "));
    free(out);
    assert_int_equal(sps__table_print(NULL, NULL, 0, NULL, 0, NULL),
                     SPS_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* The reader on damaged files                                               */
/* ------------------------------------------------------------------------ */

/* Opens path read-write (error printing off). */
static hid_t h5open_rw(const char *path) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    return f;
}

/* Overwrites the first element of int64-convertible dataset name. */
static void poke(const char *path, const char *name, size_t i, int64_t v) {
    hid_t f = h5open_rw(path);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    hsize_t at = i, one = 1;
    hid_t m = H5Screate_simple(1, &one, NULL);
    H5Sselect_hyperslab(s, H5S_SELECT_SET, &at, NULL, &one, NULL);
    assert_true(H5Dwrite(d, H5T_NATIVE_INT64, m, s, H5P_DEFAULT, &v) >= 0);
    H5Sclose(m);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
}

/* Replaces dataset name by a 2-D float dataset (or a 1-D one of n
 * doubles when two_d is 0). */
static void replace(const char *path, const char *name, int two_d, hsize_t n) {
    hid_t f = h5open_rw(path);
    assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    hsize_t dims[2] = {n, 2};
    hid_t s = H5Screate_simple(two_d ? 2 : 1, dims, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    assert_true(d >= 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
}

/* Asserts that the reader refuses path with SPS_EFORMAT and a message
 * containing `what`. */
static void refused(const char *path, const char *what) {
    sps__h5r_t *r = (sps__h5r_t *)1;
    int rc = sps__h5r_open(&r, path);
    if (rc != SPS_EFORMAT)
        fail_msg("expected SPS_EFORMAT for '%s', got %d", what, rc);
    assert_null(r);
    if (!strstr(sps__err_msg(), what))
        fail_msg("message '%s' does not mention '%s'", sps__err_msg(), what);
    assert_null(strchr(sps__err_msg(), '\n'));
}

/* A fresh copy of the known file at name. */
static const char *fresh(const char *name) {
    known_t k;
    known_init(&k);
    const char *path = tu_path(name);
    known_write(path, &k);
    return path;
}

/* Every kind of damage is refused with a one-line message. */
static void test_reader_refuses_damage(void **state) {
    (void)state;
    const char *p = fresh("h5w_bad.h5");
    poke(p, "/rank_region_index/region_ids", 1, 77);
    refused(p, "names region 77");
    p = fresh("h5w_bad.h5");
    poke(p, "/rank_region_index/event_counts", 2, 5);
    refused(p, "slices events");
    p = fresh("h5w_bad.h5");
    poke(p, "/rank_region_index/event_offsets", 2, 0x7fffffffffffffff);
    refused(p, "slices events");
    p = fresh("h5w_bad.h5");
    poke(p, "/rank_region_index/event_offsets", 1, 0);
    refused(p, "overlap");
    p = fresh("h5w_bad.h5");
    poke(p, "/events/call_ids", 2, 1);
    refused(p, "appears twice");
    p = fresh("h5w_bad.h5");
    poke(p, "/events/parent_ids", 1, -5);
    refused(p, "parent id");
    p = fresh("h5w_bad.h5");
    replace(p, "/events/durations", 1, 4);
    refused(p, "one-dimensional");
    p = fresh("h5w_bad.h5");
    replace(p, "/events/durations", 0, 4);
    refused(p, "not an integer");
    p = fresh("h5w_bad.h5");
    replace(p, "/events/durations", 0, 0);
    refused(p, "not an integer");
    p = fresh("h5w_bad.h5");
    replace(p, "/region_table/names", 0, 4);
    refused(p, "not a string");
    p = fresh("h5w_bad.h5");
    hid_t f = h5open_rw(p);
    H5Ldelete(f, "/events/start_deltas", H5P_DEFAULT);
    H5Fclose(f);
    refused(p, "missing dataset /events/start_times");
    p = fresh("h5w_bad.h5");
    f = h5open_rw(p);
    H5Ldelete(f, "/rank_region_index", H5P_DEFAULT);
    H5Fclose(f);
    refused(p, "missing group /rank_region_index");
    p = fresh("h5w_bad.h5");
    f = h5open_rw(p);
    H5Adelete(f, "scope_profiler_schema");
    H5Fclose(f);
    refused(p, "scope_profiler_schema");
}

/* Parent ids forming a cycle, or naming no call, are survivable: cycles
 * are cut (calls become roots), orphans become roots. */
static void test_reader_survives_cycles(void **state) {
    (void)state;
    const char *p = fresh("h5w_cycle.h5");
    poke(p, "/events/parent_ids", 0, 3); /* main -> io -> main */
    poke(p, "/events/parent_ids", 2, 12345); /* orphan */
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, p), 0);
    assert_int_equal(r->cycles, 1);
    assert_int_equal(r->orphans, 1);
    sps__tree_row_t *n;
    size_t nn;
    assert_int_equal(sps__h5r_tree(r, &n, &nn), 0);
    assert_true(nn >= 3);
    char *out = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&out, &len);
    assert_int_equal(sps__table_print(fp, n, nn, NULL, 0, NULL), 0);
    fclose(fp);
    free(out);
    free(n);
    sps__h5r_free(r);
}

/* A dataset claiming far more elements than the file could hold is
 * refused before anything is allocated. */
static void test_reader_refuses_absurd_sizes(void **state) {
    (void)state;
    const char *p = fresh("h5w_huge.h5");
    hid_t f = h5open_rw(p);
    H5Ldelete(f, "/events/thread_ids", H5P_DEFAULT);
    hsize_t dim = (hsize_t)1 << 30, chunk = 1024;
    hid_t s = H5Screate_simple(1, &dim, NULL);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, 1, &chunk); /* no chunk written: nothing on disk */
    hid_t d = H5Dcreate2(f, "/events/thread_ids", H5T_STD_I64LE, s,
                         H5P_DEFAULT, pl, H5P_DEFAULT);
    assert_true(d >= 0);
    H5Dclose(d);
    H5Pclose(pl);
    H5Sclose(s);
    H5Fclose(f);
    refused(p, "claims more elements");
}

/* Missing files, text files, truncated files, directories. */
static void test_reader_refuses_non_files(void **state) {
    (void)state;
    sps__h5r_t *r;
    assert_int_equal(sps__h5r_open(&r, tu_path("does-not-exist.h5")),
                     SPS_EIO);
    assert_non_null(strstr(sps__err_msg(), "No such file"));
    assert_int_equal(sps__h5r_open(&r, "/"), SPS_EIO);
    const char *txt = tu_path("h5w_text.h5");
    FILE *fp = fopen(txt, "w");
    fputs("this is not HDF5\n", fp);
    fclose(fp);
    refused(txt, "not an HDF5 file");
    const char *p = fresh("h5w_trunc.h5");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(truncate(p, st.st_size / 2), 0);
    refused(p, "truncated or corrupt");
    assert_int_equal(sps__h5r_open(NULL, p), SPS_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* The public reader (api/file.c): the same model through sps_file_open      */
/* ------------------------------------------------------------------------ */

/* Asserts that f holds the known recording's model: rows with their
 * statistics, events with the fold's parents and self times. */
static void check_known_file(const sps_file_t *f) {
    static const int64_t self[K_EV] = {450, 200, 300, 50};
    static const int32_t parent[K_EV] = {-1, 0, 0, 0};
    static const uint32_t row[K_EV] = {0, 1, 1, 2};
    assert_int_equal(f->schema, 3);
    assert_false(f->aggregate);
    assert_int_equal(f->nnames, 4);
    assert_string_equal(f->names[3], "unused");
    assert_int_equal(f->nevents, K_EV);
    for (int i = 0; i < K_EV; i++) {
        assert_int_equal(f->start_ns[i], k_start[i]);
        assert_int_equal(f->dur_ns[i], k_dur[i]);
        assert_int_equal(f->self_ns[i], self[i]);
        assert_int_equal(f->parent[i], parent[i]);
        assert_int_equal(f->row[i], row[i]);
    }
    assert_int_equal(f->nrows, 3);
    const sps_file_row_t *solve = &f->rows[1];
    assert_int_equal(solve->region, 1);
    assert_int_equal(solve->rank, 0);
    assert_int_equal(solve->first, 1);
    assert_int_equal(solve->count, 2);
    assert_int_equal(solve->total_ns, 500);
    assert_int_equal(solve->min_ns, 200);
    assert_int_equal(solve->max_ns, 300);
    assert_int_equal(solve->self_ns, 500);
    assert_int_equal(f->rows[0].self_ns, 450);
    assert_int_equal(f->rows[0].stored_self_ns, 450); /* the writer's */
    assert_int_equal(f->rows[2].self_ns, 50);
    assert_int_equal(f->ncounters, 0);
    assert_int_equal(f->nsamples, 0);
}

/* The value of the text attribute name of f's /metadata, or NULL. */
static const char *file_meta_text(const sps_file_t *f, const char *name) {
    for (size_t i = 0; i < f->nattrs; i++)
        if (!strcmp(f->attrs[i].name, name) && f->attrs[i].kind == SPS_META_TEXT)
            return f->attrs[i].texts[0];
    return NULL;
}

/* The known file through the public reader: parents from the ids, the
 * columns as stored, /metadata. */
static void test_file_known(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    const char *path = tu_path("h5w_file.h5");
    known_write(path, &k);
    const sps_file_t *f = NULL;
    char err[256] = "x";
    assert_int_equal(sps_file_open(path, &f, err, sizeof err), 0);
    assert_string_equal(err, "");
    check_known_file(f);
    assert_true(f->nested_by_ids);
    assert_non_null(f->call_ids);
    assert_non_null(f->parent_ids);
    assert_non_null(f->thread_ids);
    assert_int_equal(f->parent_ids[1], 0);
    assert_int_equal(f->call_ids[3], 3);
    assert_int_equal(f->orphans + f->cycles, 0);
    const char *label = file_meta_text(f, "label");
    assert_non_null(label);
    assert_string_equal(label, "known");
    sps_file_close(f);
    sps_file_close(NULL);
}

/* Without call/parent ids the fold's interval rule gives the same model;
 * the id columns are absent (NULL). */
static void test_file_nesting_from_intervals(void **state) {
    (void)state;
    known_t k;
    known_init(&k);
    k.lay.with_tree = 0;
    const char *path = tu_path("h5w_file_notree.h5");
    sps__h5w_t *w;
    assert_int_equal(sps__h5w_open(&w, path, &k.lay), 0);
    assert_int_equal(sps__h5w_rows(w, 0, K_EV, k_deltas, k_dur, NULL, NULL,
                                   NULL), 0);
    assert_int_equal(sps__h5w_close(w), 0);
    const sps_file_t *f;
    assert_int_equal(sps_file_open(path, &f, NULL, 0), 0);
    check_known_file(f);
    assert_false(f->nested_by_ids);
    assert_null(f->call_ids);
    assert_null(f->parent_ids);
    assert_null(f->thread_ids);
    sps_file_close(f);
}

/* Hostile parent ids: a cycle is cut and an orphan made a root, and the
 * handle says how many of each. */
static void test_file_counts_cycles_and_orphans(void **state) {
    (void)state;
    const char *p = fresh("h5w_file_cycle.h5");
    poke(p, "/events/parent_ids", 0, 3); /* main -> io -> main */
    poke(p, "/events/parent_ids", 2, 12345); /* orphan */
    const sps_file_t *f;
    assert_int_equal(sps_file_open(p, &f, NULL, 0), 0);
    assert_int_equal(f->cycles, 1);
    assert_int_equal(f->orphans, 1);
    assert_int_equal(f->parent[2], -1);
    for (uint64_t e = 0; e < f->nevents; e++) assert_true(f->self_ns[e] >= 0);
    sps_file_close(f);
}

/* An aggregate file: statistics per row as stored, no events. */
static void test_file_aggregate(void **state) {
    (void)state;
    const sps_file_t *f;
    /* written by test_aggregate_layout */
    assert_int_equal(sps_file_open(tu_path("h5w_aggregate.h5"), &f, NULL, 0), 0);
    assert_true(f->aggregate);
    assert_int_equal(f->nevents, 0);
    assert_int_equal(f->nrows, 2);
    const sps_file_row_t *tick = &f->rows[0], *tock = &f->rows[1];
    assert_string_equal(f->names[tick->region], "tick");
    assert_int_equal(tick->count, 1000000);
    assert_int_equal(tick->total_ns, 900);
    assert_int_equal(tick->min_ns, 0);
    assert_int_equal(tick->max_ns, 5);
    assert_int_equal(tick->self_ns, 700);
    assert_int_equal(tock->count, 3);
    assert_int_equal(tock->min_ns, 9);
    assert_int_equal(tock->self_ns, 30);
    assert_int_equal(tock->stored_self_ns, 30);
    sps_file_close(f);
}

/* scope-profiler's own fixture: no ids, exclusive_totals -1: the fold
 * derives parents (none: the calls are disjoint) and self times. */
static void test_file_scope_profiler_fixture(void **state) {
    (void)state;
    const sps_file_t *f;
    char err[256];
    int rc = sps_file_open(data_path("scope-profiler-schema3-fixture.h5"), &f,
                           err, sizeof err);
    if (rc) fail_msg("%s", err);
    assert_false(f->nested_by_ids);
    assert_int_equal(f->nevents, 3);
    const int64_t st[3] = {10, 20, 40}, du[3] = {5, 13, 15};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f->start_ns[i], st[i]);
        assert_int_equal(f->self_ns[i], du[i]);
        assert_int_equal(f->parent[i], -1);
    }
    assert_int_equal(f->rows[0].stored_self_ns, -1);
    assert_int_equal(f->rows[0].self_ns, 33);
    sps_file_close(f);
}

/* Asserts sps_file_open(path) fails with rc and a one-line reason that
 * names the file and mentions what. */
static void file_refused(const char *path, int rc, const char *what) {
    const sps_file_t *f = (const sps_file_t *)1;
    char err[512] = "";
    assert_int_equal(sps_file_open(path, &f, err, sizeof err), rc);
    assert_null(f);
    if (!strstr(err, path) || !strstr(err, what))
        fail_msg("reason '%s' does not name %s and '%s'", err, path, what);
    assert_null(strchr(err, '\n'));
}

/* Missing, text, truncated and damaged files; NULL arguments. */
static void test_file_refuses_bad_input(void **state) {
    (void)state;
    file_refused(tu_path("does-not-exist.h5"), SPS_EIO, "No such file");
    const char *txt = tu_path("h5w_file_text.h5");
    FILE *fp = fopen(txt, "w");
    assert_non_null(fp);
    fputs("this is not HDF5\n", fp);
    fclose(fp);
    file_refused(txt, SPS_EFORMAT, "not an HDF5 file");
    file_refused(fresh_cut("h5w_file_trunc.h5"), SPS_EFORMAT, "truncated");
    const char *p = fresh("h5w_file_bad.h5");
    poke(p, "/rank_region_index/event_counts", 2, 5);
    file_refused(p, SPS_EFORMAT, "slices events");
    const sps_file_t *f;
    assert_int_equal(sps_file_open(NULL, &f, NULL, 0), SPS_EINVAL);
    assert_int_equal(sps_file_open(p, NULL, NULL, 0), SPS_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_file_layout),
        cmocka_unit_test(test_known_file_metadata),
        cmocka_unit_test(test_metadata_reader),
        cmocka_unit_test(test_compressed_above_threshold),
        cmocka_unit_test(test_threshold_choices),
        cmocka_unit_test(test_zero_events),
        cmocka_unit_test(test_zero_events_with_names),
        cmocka_unit_test(test_aggregate_layout),
        cmocka_unit_test(test_writer_errors),
        cmocka_unit_test(test_writer_and_reader_are_quiet),
        cmocka_unit_test(test_read_known),
        cmocka_unit_test(test_read_nesting_from_intervals),
        cmocka_unit_test(test_read_scope_profiler_fixture),
        cmocka_unit_test(test_table_output),
        cmocka_unit_test(test_table_odd_input),
        cmocka_unit_test(test_reader_refuses_damage),
        cmocka_unit_test(test_reader_survives_cycles),
        cmocka_unit_test(test_reader_refuses_absurd_sizes),
        cmocka_unit_test(test_reader_refuses_non_files),
        cmocka_unit_test(test_file_known),
        cmocka_unit_test(test_file_nesting_from_intervals),
        cmocka_unit_test(test_file_counts_cycles_and_orphans),
        cmocka_unit_test(test_file_aggregate),
        cmocka_unit_test(test_file_scope_profiler_fixture),
        cmocka_unit_test(test_file_refuses_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
