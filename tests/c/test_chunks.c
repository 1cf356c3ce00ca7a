/* test_chunks.c -- /events assembled chunk by chunk (src/formats/h5_events.c)
 * and our own shuffle + deflate (src/formats/deflate.c): whatever the order
 * of the writes, the number of worker threads and the encoder each column
 * gets, HDF5 reads back exactly what was written; chunks that do not fit in
 * memory go through the staging file; misuse is refused. */
#include "sps_int.h"
#include "testutil.h"

#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#define NCOLS 5

/* The directory of the tests' files (staging goes next to them). */
static const char *sps_test_tmp_dir(void) {
    const char *d = getenv("SPS_TEST_TMP");
    return d && *d ? d : "/tmp";
}
#define CH 4096u

/* A file with NCOLS int64 columns of n rows, chunked by CH with shuffle +
 * deflate (compressed) or contiguous; the datasets are left open in ds. */
static hid_t make_file(const char *path, uint64_t n, int compressed, int64_t *ds) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hsize_t dim = n, chunk = CH;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (compressed) {
        H5Pset_chunk(dcpl, 1, &chunk);
        H5Pset_shuffle(dcpl);
        H5Pset_deflate(dcpl, 4);
    }
    for (int c = 0; c < NCOLS; c++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", c);
        ds[c] = H5Dcreate2(f, name, H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        assert_true(ds[c] >= 0);
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    return f;
}

/* Column c of the test data at row i: random 64-bit values, small values,
 * a constant, a counter, and (column 1) durations, some of them late (-1
 * when written, the true value later). */
static uint64_t mix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return x;
}
static int64_t value(int c, uint64_t i) {
    switch (c) {
    case 0: return (int64_t)mix(i);                 /* incompressible */
    case 1: return (int64_t)(mix(i + 7) % 5000);    /* durations */
    case 2: return 42;                              /* a run */
    case 3: return (int64_t)i * 3 - 100000;         /* a counter, negative too */
    default: return (int64_t)(mix(i) % 3) - 1;      /* -1, 0, 1 */
    }
}
static int is_late(uint64_t i) { return mix(i * 31) % 7 == 0; }

/* Writes n rows as `regions` interleaved ranges (each range in order, in
 * pieces of `piece` rows, the ranges round-robin) and the late durations:
 * with soon, those of a piece after the next piece of its range (as the
 * merged pass does), else all at the end, last row first; checks the
 * counters and the data read back. */
enum { NONE = 0, STAGED = 1, PARKED = 2 }; /* what roundtrip expects to see */

static int g_queue; /* sps__evcols_queue for the next roundtrips */

static void roundtrip(uint64_t n, int regions, size_t piece, int compressed,
                      const char *threads, int soon, int expect) {
    const char *path = tu_path("chunks.h5");
    setenv("SPANSCOPE_WRITE_THREADS", threads, 1);
    int64_t ds[NCOLS];
    hid_t f = make_file(path, n, compressed, ds);
    sps__evcols_t *e;
    assert_int_equal(sps__evcols_open(&e, ds, NCOLS, 1, n, compressed ? CH : 1000,
                                      compressed, sps_test_tmp_dir(), (size_t)regions), 0);
    sps__evcols_queue(e, g_queue);
    int64_t *col[NCOLS];
    for (int c = 0; c < NCOLS; c++) col[c] = malloc(piece * 8);
    uint64_t *next = calloc((size_t)regions, sizeof *next);
    uint64_t per = n / (uint64_t)regions;
    for (int busy = 1; busy;) {
        busy = 0;
        for (int r = 0; r < regions; r++) {
            uint64_t lo = (uint64_t)r * per, hi = r == regions - 1 ? n : lo + per;
            uint64_t at = lo + next[r];
            if (at >= hi) continue;
            busy = 1;
            size_t m = hi - at < piece ? (size_t)(hi - at) : piece;
            for (size_t j = 0; j < m; j++)
                for (int c = 0; c < NCOLS; c++)
                    col[c][j] = c == 1 && is_late(at + j) ? -1 : value(c, at + j);
            const int64_t *cc[NCOLS] = {col[0], col[1], col[2], col[3], col[4]};
            assert_int_equal(sps__evcols_rows(e, at, m, cc), 0);
            for (uint64_t i = at > lo + piece ? at - piece : lo; soon && i < at; i++)
                if (is_late(i)) assert_int_equal(sps__evcols_duration(e, i, value(1, i)), 0);
            if (soon && at + m == hi) /* the range's last piece */
                for (uint64_t i = at; i < hi; i++)
                    if (is_late(i)) assert_int_equal(sps__evcols_duration(e, i, value(1, i)), 0);
            next[r] += m;
        }
    }
    for (uint64_t i = n; !soon && i-- > 0;) /* late durations, last row first */
        if (is_late(i)) assert_int_equal(sps__evcols_duration(e, i, value(1, i)), 0);
    uint64_t staged, parked, written;
    int workers;
    sps__evcols_counts(e, &staged, &parked, &written, &workers);
    assert_int_equal(workers, compressed ? atoi(threads) : 0);
    if (expect & STAGED) assert_true(staged > 0);
    else assert_int_equal(staged, 0);
    if (expect & PARKED) assert_true(parked > 0);
    assert_int_equal(sps__evcols_finish(e), 0);
    sps__evcols_counts(e, &staged, &parked, &written, &workers);
    assert_int_equal(written, (n + (compressed ? CH : 1000) - 1) / (compressed ? CH : 1000));
    sps__evcols_free(e);
    int64_t *back = malloc(n * 8);
    for (int c = 0; c < NCOLS; c++) {
        assert_true(H5Dread(ds[c], H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
        for (uint64_t i = 0; i < n; i++)
            if (back[i] != value(c, i))
                fail_msg("column %d row %llu: %lld, wrote %lld", c, (unsigned long long)i,
                         (long long)back[i], (long long)value(c, i));
        H5Dclose(ds[c]);
    }
    H5Fclose(f);
    free(back);
    free(next);
    for (int c = 0; c < NCOLS; c++) free(col[c]);
    unsetenv("SPANSCOPE_WRITE_THREADS");
}

/* In order, one region: every chunk assembled in memory, never staged;
 * the last chunk is short. */
static void test_in_order(void **state) {
    (void)state;
    roundtrip(10 * CH + 123, 1, 777, 1, "2", 1, NONE);
    roundtrip(10 * CH + 123, 1, 777, 1, "0", 1, NONE); /* compressed on the writing thread */
    roundtrip(10 * CH + 123, 1, 777, 1, "1", 1, NONE);
    roundtrip(10 * CH + 123, 3, 777, 1, "1", 1, NONE); /* three regions fit */
    g_queue = 1; /* a complete chunk may wait for a busy worker: same data */
    roundtrip(10 * CH + 123, 1, 777, 1, "1", 1, NONE);
    roundtrip(10 * CH + 123, 3, 777, 1, "2", 1, NONE);
    roundtrip(10 * CH + 5, 1, 500, 1, "1", 0, PARKED);
    g_queue = 0;
}

/* Many regions interleaved: more chunks partly written at once than there
 * are buffers, so some go through the staging file; same data. */
static void test_interleaved_regions_stage(void **state) {
    (void)state;
    roundtrip(40 * CH + 5, 20, 100, 1, "2", 1, STAGED);
    roundtrip(40 * CH + 5, 20, 100, 1, "1", 1, STAGED);
    roundtrip(40 * CH + 5, 20, 100, 1, "0", 1, STAGED);
}

/* Durations that come long after their rows (calls still running): the
 * chunks are parked, their other columns written at once; same data. */
static void test_late_durations_park(void **state) {
    (void)state;
    roundtrip(10 * CH + 5, 1, 500, 1, "1", 0, PARKED);
    roundtrip(10 * CH + 5, 1, 500, 1, "0", 0, PARKED);
    roundtrip(30 * CH + 5, 7, 300, 1, "2", 0, PARKED | STAGED);
}

/* Contiguous columns take the same path, written with H5Dwrite. */
static void test_contiguous(void **state) {
    (void)state;
    roundtrip(5000, 1, 64, 0, "1", 1, NONE);
    roundtrip(25000, 30, 10, 0, "1", 0, STAGED);
}

/* A row written twice, a duration never announced, rows out of range:
 * SPS_EINVAL, and the writer stays failed. */
static void test_misuse(void **state) {
    (void)state;
    const char *path = tu_path("chunks_misuse.h5");
    int64_t ds[NCOLS];
    hid_t f = make_file(path, 3 * CH, 1, ds);
    sps__evcols_t *e;
    int64_t v[NCOLS][4] = {{1, 2, 3, 4}, {5, -1, 7, 8}, {0}, {0}, {0}};
    const int64_t *cc[NCOLS] = {v[0], v[1], v[2], v[3], v[4]};
    assert_int_equal(sps__evcols_open(&e, ds, NCOLS, 1, 3 * CH, CH, 1, sps_test_tmp_dir(), 1), 0);
    assert_int_equal(sps__evcols_rows(e, 3 * CH - 2, 4, cc), SPS_EINVAL); /* past the end */
    sps__evcols_free(e);
    assert_int_equal(sps__evcols_open(&e, ds, NCOLS, 1, 3 * CH, CH, 1, sps_test_tmp_dir(), 1), 0);
    assert_int_equal(sps__evcols_duration(e, 5, 3), SPS_EINVAL); /* row never written */
    assert_int_equal(sps__evcols_rows(e, 0, 4, cc), 0);
    assert_int_equal(sps__evcols_duration(e, 1, 6), 0);
    assert_int_equal(sps__evcols_duration(e, 2, 6), SPS_EINVAL); /* not announced */
    sps__evcols_free(e);
    assert_int_equal(sps__evcols_open(&e, ds, NCOLS, 1, 3 * CH, CH, 1, sps_test_tmp_dir(), 1), 0);
    assert_int_equal(sps__evcols_rows(e, 0, 4, cc), 0);
    assert_int_equal(sps__evcols_rows(e, 0, 4, cc), 0); /* counted, not yet seen */
    int64_t big[CH];
    memset(big, 0, sizeof big);
    const int64_t *bb[NCOLS] = {big, big, big, big, big};
    assert_int_equal(sps__evcols_rows(e, 4, CH - 4, bb), SPS_EINVAL); /* the chunk overflows */
    assert_int_equal(sps__evcols_rows(e, CH, 4, cc), SPS_EINVAL);      /* stays failed */
    assert_int_equal(sps__evcols_finish(e), SPS_EINVAL);
    sps__evcols_free(e);
    for (int c = 0; c < NCOLS; c++) H5Dclose(ds[c]);
    H5Fclose(f);
}

/* The coder alone: every column kind gives a zlib stream HDF5's filters
 * read back (through a file), and the encoder choice does not leak from
 * one column to another. */
static void test_coder_columns(void **state) {
    (void)state;
    sps__coder_t *c = sps__coder_new(CH * 8);
    assert_non_null(c);
    int64_t in[CH];
    unsigned char *out;
    size_t len;
    for (int col = 0; col < NCOLS; col++) {
        for (uint64_t i = 0; i < CH; i++) in[i] = value(col, i);
        assert_int_equal(sps__coder_column(c, col, in, CH, &out, &len), 0);
        assert_true(len > 0);
        if (col == 2) assert_true(len < CH * 8 / 64); /* a run is tiny */
        free(out);
    }
    assert_int_equal(sps__coder_column(c, 0, in, CH + 1, &out, &len), SPS_EINVAL);
    /* a column given to the fast encoder (the durations): still one zlib
     * stream of the shuffled column, whatever the build's encoders */
    sps__coder_fast_columns(c, 1u << 1);
    for (uint64_t i = 0; i < CH; i++) in[i] = value(1, i);
    assert_int_equal(sps__coder_column(c, 1, in, CH, &out, &len), 0);
    static unsigned char plain[CH * 8];
    uLongf plain_len = sizeof plain;
    assert_int_equal(uncompress(plain, &plain_len, out, (uLong)len), Z_OK);
    assert_int_equal(plain_len, CH * 8);
    for (uint64_t i = 0; i < CH; i += 997) /* byte j of element i at j * CH + i */
        for (int j = 0; j < 8; j++)
            assert_int_equal(plain[(uint64_t)j * CH + i], (unsigned char)((uint64_t)in[i] >> (8 * j)));
    free(out);
    /* the shuffle byte for byte, at lengths around its vector widths (16
     * and 32 elements: SSE2, AVX2) and their tails */
    static const size_t lens[] = {1, 15, 16, 17, 31, 32, 33, 47, 64, 95, 1000, CH};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        size_t n = lens[li];
        for (uint64_t i = 0; i < n; i++) in[i] = (int64_t)(0x0123456789abcdefULL * (i + 1) ^ (i << 29));
        assert_int_equal(sps__coder_column(c, 1, in, n, &out, &len), 0);
        plain_len = sizeof plain;
        assert_int_equal(uncompress(plain, &plain_len, out, (uLong)len), Z_OK);
        assert_int_equal(plain_len, n * 8);
        for (uint64_t i = 0; i < n; i++)
            for (int j = 0; j < 8; j++)
                if (plain[(uint64_t)j * n + i] != (unsigned char)((uint64_t)in[i] >> (8 * j)))
                    fail_msg("n %zu: byte %d of element %llu misplaced", n, j,
                             (unsigned long long)i);
        free(out);
    }
    assert_non_null(sps__coder_name());
    sps__coder_free(c);
    sps__coder_free(NULL);
}

/* Whether out[0..len) inflates (zlib, as HDF5's filter) to HDF5's shuffle
 * of in[0..n). */
static int inflates_to(const unsigned char *out, size_t len, const int64_t *in, size_t n) {
    static unsigned char plain[CH * 8];
    uLongf plain_len = sizeof plain;
    if (uncompress(plain, &plain_len, out, (uLong)len) != Z_OK || plain_len != n * 8) return 0;
    for (uint64_t i = 0; i < n; i++)
        for (int j = 0; j < 8; j++)
            if (plain[(uint64_t)j * n + i] != (unsigned char)((uint64_t)in[i] >> (8 * j)))
                return 0;
    return 1;
}

/* Columns of one value (thread ids of a one-thread program, parent ids
 * of a top-level region) come from the coder's memo after the first:
 * the same bytes, for the same (value, length) only; a column that
 * differs in its last element, another length, more values than the memo
 * holds: every stream inflates to its own column. */
static void test_coder_one_value(void **state) {
    (void)state;
    sps__coder_t *c = sps__coder_new(CH * 8);
    assert_non_null(c);
    static int64_t in[CH];
    unsigned char *first[8], *out;
    size_t first_len[8], len;
    const int64_t values[8] = {0, -1, 7, INT64_MIN, INT64_MAX, 1, 2, 3};
    for (int round = 0; round < 3; round++)
        for (int j = 0; j < 8; j++) { /* 8 values: more than the memo keeps */
            int k = round == 1 ? 7 - j : j; /* round 1 meets the remembered first */
            size_t n = round == 1 ? 1000 : CH;
            for (size_t i = 0; i < n; i++) in[i] = values[k];
            assert_int_equal(sps__coder_column(c, 4, in, n, &out, &len), 0);
            assert_true(inflates_to(out, len, in, n));
            if (round == 0) {
                first[k] = out;
                first_len[k] = len;
                continue;
            }
            if (round == 2) /* remembered or not, the same bytes */
                assert_true(len == first_len[k] && !memcmp(out, first[k], len));
            free(out);
            in[n - 1] = values[k] ^ 1; /* one element differs: not one value */
            assert_int_equal(sps__coder_column(c, 4, in, n, &out, &len), 0);
            assert_true(inflates_to(out, len, in, n));
            free(out);
        }
    for (int k = 0; k < 8; k++) free(first[k]);
    sps__coder_free(c);
}

/* The split stream (libdeflate for the low byte planes, ISA-L for the
 * rest, joined into one zlib stream): for 1..7 varying low planes, data
 * that libdeflate stores raw (noise), codes with its own tables (small
 * numbers, start gaps), or nearly constant, at lengths whose planes end
 * at any bit, every column inflates to its shuffle, the same bytes as the
 * whole column given to libdeflate; and the split path was taken (the
 * streams differ) where the build has both encoders. */
static void test_coder_split(void **state) {
    (void)state;
    sps__coder_t *c = sps__coder_new(CH * 8);
    assert_non_null(c);
    static int64_t in[CH];
    static const size_t lens[] = {CH, CH - 1, 1000, 777, 65};
    int can = sps__coder_split(c, 1);
    unsigned differ = 0, tried = 0;
    for (unsigned k = 1; k <= 7; k++)
        for (int kind = 0; kind < 3; kind++)
            for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
                size_t n = lens[li];
                uint64_t mask = (1ULL << (8 * k)) - 1;
                for (uint64_t i = 0; i < n; i++) {
                    uint64_t m = mix(i * 13 + k * 7 + (uint64_t)kind + li);
                    in[i] = (int64_t)(kind == 0 ? m & mask                /* noise */
                                    : kind == 1 ? 20 + m % 50 + (m & mask & ~0xFFULL) /* gaps */
                                                : (mask >> 1) + (m % 97 == 0)); /* constant */
                }
                in[0] = 1201597732559; /* the first start gap is a time */
                unsigned char *whole, *split;
                size_t wlen, slen;
                sps__coder_split(c, 0);
                assert_int_equal(sps__coder_column(c, 5, in, n, &whole, &wlen), 0);
                sps__coder_split(c, 1);
                assert_int_equal(sps__coder_column(c, 6, in, n, &split, &slen), 0);
                if (!inflates_to(whole, wlen, in, n) || !inflates_to(split, slen, in, n))
                    fail_msg("k %u kind %d n %zu: the stream does not inflate to the column",
                             k, kind, n);
                tried++;
                differ += wlen != slen || memcmp(whole, split, wlen) != 0;
                free(whole);
                free(split);
            }
    if (can) assert_true(differ > tried * 9 / 10); /* not all runs */
    else assert_int_equal(differ, 0);
    sps__coder_free(c);
}

/* A disk that fills while the file is written (here a file size limit,
 * as a full disk gives ENOSPC): finalize fails with SPS_EIO, leaves no
 * file, keeps the period (written by the next finalize, once there is
 * room), and the program still exits normally.  HDF5 1.10 cannot close a
 * file whose flush fails and crashes at exit; the writer reserves space
 * ahead (sps__h5_reserve) so that it fails before HDF5 writes.  In a
 * child: the limit and the exit are the child's. */
static void test_full_disk_fails_cleanly(void **state) {
    (void)state;
    const char *path = tu_path("chunks_full.h5");
    unlink(path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        sps_config_t cfg = SPS_CONFIG_INIT;
        cfg.file_path = path;
        cfg.spill_dir = sps_test_tmp_dir();
        if (sps_setup(&cfg)) _exit(10);
        sps_region_t a = sps_region("full.a"), b = sps_region("full.b");
        for (int i = 0; i < 1000000; i++) {
            sps_begin(a);
            sps_begin(b);
            sps_end(b);
            sps_end(a);
        }
        struct rlimit r, was; /* the soft limit only: it can be raised again */
        if (getrlimit(RLIMIT_FSIZE, &was)) _exit(11);
        r = was;
        r.rlim_cur = 200000; /* bytes per file */
        if (setrlimit(RLIMIT_FSIZE, &r)) _exit(11);
        int rc = sps_finalize();
        if (rc != SPS_EIO) _exit(12);
        if (access(path, F_OK) == 0) _exit(13);
        if (setrlimit(RLIMIT_FSIZE, &was)) _exit(11);
        if (sps_finalize() != 0) _exit(14); /* the period was kept: written now */
        if (access(path, F_OK) != 0) _exit(15);
        sps_shutdown();
        exit(0); /* through HDF5's atexit */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    unlink(path);
}

int main(void) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_interleaved_regions_stage),
        cmocka_unit_test(test_late_durations_park),
        cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_coder_columns),
        cmocka_unit_test(test_coder_split),
        cmocka_unit_test(test_coder_one_value),
        cmocka_unit_test(test_full_disk_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
