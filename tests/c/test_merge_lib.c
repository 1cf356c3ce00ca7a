/* sps_merge called directly (the library function behind `spanscope
 * merge`): two sessions recorded in this process as ranks 0 and 1, merged
 * to .h5 and .json and read back; a missing input and duplicate ranks give
 * an error code, one line in err_file and no output; an .h5 input whose
 * /metadata carries clock_offset_ns (added here with the HDF5 C API, as the
 * MPI integration writes it) has its times shifted by exactly that, and
 * with /clock_sync by the line fitted to it (malformed tables ignored); .h5
 * inputs without /metadata rank take their positions. */
#include "testutil.h"
#include "sps_int.h"
#include "formats/h5_read.h"
#include "formats/timeline.h"

#include <dirent.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCALLS 30
#define MAXSPANS 1024
#define MPI_OFFSET 7000000123LL /* ns: rank 1's clock is 7 s behind rank 0's */
#define MPI_ERROR 2500LL

/* The inputs: rank 0, rank 1, and rank 1 again with clock_offset_ns. */
static char pa[1024], pb[1024], pc[1024];

/* Records NCALLS calls of outer, each around one call of ml.inner, as
 * the given rank of 2, into path. */
static void record(const char *path, int rank, const char *outer) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.rank = rank;
    cfg.size = 2;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t o = sps_region(outer), in = sps_region("ml.inner");
    for (int k = 0; k < NCALLS; k++) {
        sps_begin(o);
        sps_begin(in);
        tu_spin_ns(1000);
        sps_end(in);
        sps_end(o);
    }
    assert_int_equal(sps_finalize_to(path), 0);
    sps_shutdown();
}

/* Copies the file src to dst. */
static void copy_file(const char *src, const char *dst) {
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Adds the scalar int64 attribute name = v to /metadata of the .h5 file
 * at path, as the MPI integration would. */
static void add_meta_i64(const char *path, const char *name, int64_t v) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, "metadata", H5P_DEFAULT);
    assert_true(g >= 0);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Gclose(g);
    assert_true(H5Fclose(f) >= 0);
}

/* Removes attribute name from /metadata of the .h5 file at path, as in
 * a file scope-profiler wrote (it stores no rank). */
static void del_meta(const char *path, const char *name) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, "metadata", H5P_DEFAULT);
    assert_true(g >= 0);
    assert_true(H5Adelete(g, name) >= 0);
    H5Gclose(g);
    assert_true(H5Fclose(f) >= 0);
}

/* Records the inputs once: ml_a.h5 (rank 0), ml_b.h5 (rank 1) and
 * ml_c.h5, a copy of ml_b.h5 with clock_offset_ns and its error bound. */
static int setup(void **state) {
    (void)state;
    snprintf(pa, sizeof pa, "%s", tu_path("ml_a.h5"));
    snprintf(pb, sizeof pb, "%s", tu_path("ml_b.h5"));
    snprintf(pc, sizeof pc, "%s", tu_path("ml_c.h5"));
    record(pa, 0, "ml.a");
    tu_spin_ns(100000);
    record(pb, 1, "ml.b");
    copy_file(pb, pc);
    add_meta_i64(pc, "clock_offset_ns", MPI_OFFSET);
    add_meta_i64(pc, "clock_offset_error_ns", MPI_ERROR);
    return 0;
}

/* The text err_file received (a tmpfile), in buf; returns its number of
 * lines. */
static int err_text(FILE *err, char *buf, size_t cap) {
    rewind(err);
    size_t n = fread(buf, 1, cap - 1, err);
    buf[n] = 0;
    int lines = 0;
    for (size_t i = 0; i < n; i++) lines += buf[i] == '\n';
    return lines;
}

/* qsort order of int64 values. */
static int i64_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The start times of the spans of the timeline file path on rank (-1:
 * all), sorted, into out[0..MAXSPANS); returns how many. */
static size_t tl_starts(const char *path, int64_t rank, int64_t *out) {
    sps__tlr_t *r;
    if (sps__tlr_open(&r, path, sps__tl_format_of(path)))
        fail_msg("%s: %s", path, sps__err_msg());
    const sps__tl_header_t *h = sps__tlr_header(r);
    sps__tl_span_t s;
    size_t n = 0;
    int rc;
    while ((rc = sps__tlr_next(r, &s)) > 0) {
        int64_t pid = h->threads[s.thread].pid, rk = -1;
        for (size_t p = 0; p < h->nprocs; p++)
            if (h->procs[p].pid == pid) rk = h->procs[p].rank;
        if (rank >= 0 && rk != rank) continue;
        assert_true(n < MAXSPANS);
        out[n++] = s.start_ns;
    }
    assert_int_equal(rc, 0);
    sps__tlr_free(r);
    qsort(out, n, sizeof *out, i64_cmp);
    return n;
}

/* The event start times of rank's rows of the .h5 file path, sorted, into
 * out[0..MAXSPANS); returns how many. */
static size_t h5_starts(const char *path, uint32_t rank, int64_t *out) {
    sps__h5r_t *r;
    if (sps__h5r_open(&r, path)) fail_msg("%s", sps__err_msg());
    size_t n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__row_t *row = &r->rows[i];
        if (row->rank != rank) continue;
        for (uint64_t e = row->offset; e < row->offset + row->count; e++) {
            assert_true(n < MAXSPANS);
            out[n++] = r->start[e];
        }
    }
    sps__h5r_free(r);
    qsort(out, n, sizeof *out, i64_cmp);
    return n;
}

/* Checks that got[0..n) is ref[0..nref) shifted by off. */
static void same_shifted(const int64_t *got, size_t n, const int64_t *ref,
                         size_t nref, int64_t off) {
    assert_int_equal(n, nref);
    for (size_t i = 0; i < n; i++) assert_int_equal(got[i], ref[i] + off);
}

/* The whole text of a (small) file, malloc'd. */
static char *slurp(const char *path) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    return strdup(buf);
}

/* Non-zero when the directory of tu_path holds a file whose name starts
 * with prefix. */
static int leftover(const char *prefix) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tu_path(""));
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)))
        found |= strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return found;
}

/* Two recordings (given in reverse rank order) merged to .h5 and .json:
 * every event once, on its rank, unshifted (same host); no error line. */
static void test_merge_h5_and_json(void **state) {
    (void)state;
    static int64_t a[MAXSPANS], b[MAXSPANS], got[MAXSPANS];
    size_t na = tl_starts(pa, -1, a), nb = tl_starts(pb, -1, b);
    assert_int_equal(na, 2 * NCALLS);
    assert_int_equal(nb, 2 * NCALLS);
    const char *ins[] = {pb, pa};
    char out[1024], buf[4096];
    FILE *err = tmpfile();
    assert_non_null(err);

    snprintf(out, sizeof out, "%s", tu_path("ml_out.h5"));
    assert_int_equal(sps_merge(out, ins, 2, err), 0);
    same_shifted(got, h5_starts(out, 0, got), a, na, 0);
    same_shifted(got, h5_starts(out, 1, got), b, nb, 0);

    snprintf(out, sizeof out, "%s", tu_path("ml_out.json"));
    assert_int_equal(sps_merge(out, ins, 2, err), 0);
    same_shifted(got, tl_starts(out, 0, got), a, na, 0);
    same_shifted(got, tl_starts(out, 1, got), b, nb, 0);
    char *text = slurp(out);
    assert_non_null(strstr(text, "\"clock\":\"reference\""));
    assert_non_null(strstr(text, "\"clock\":\"same-host\""));
    assert_null(strstr(text, "\"clock\":\"mpi\""));
    free(text);

    assert_int_equal(err_text(err, buf, sizeof buf), 0);
    fclose(err);
    assert_false(leftover("ml_out.h5.tmp-") || leftover("ml_out.json.tmp-"));
}

/* A missing input: an error code, one line naming it in err_file, and no
 * output (nor temporary) left; NULL err_file is fine. */
static void test_merge_missing_input(void **state) {
    (void)state;
    char out[1024], missing[1024], buf[4096];
    snprintf(out, sizeof out, "%s", tu_path("ml_missing.json"));
    snprintf(missing, sizeof missing, "%s", tu_path("ml_not_there.h5"));
    remove(out);
    const char *ins[] = {pa, missing};
    FILE *err = tmpfile();
    assert_non_null(err);
    int rc = sps_merge(out, ins, 2, err);
    assert_int_equal(rc, SPS_EIO);
    assert_int_equal(err_text(err, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, "ml_not_there.h5"));
    fclose(err);
    assert_int_equal(access(out, F_OK), -1);
    assert_false(leftover("ml_missing.json"));
    assert_int_equal(sps_merge(out, ins, 2, NULL), rc);
    assert_int_equal(access(out, F_OK), -1);
    /* .h5 output too */
    snprintf(out, sizeof out, "%s", tu_path("ml_missing.h5"));
    assert_int_equal(sps_merge(out, ins, 2, NULL), SPS_EIO);
    assert_false(leftover("ml_missing.h5"));
}

/* Duplicate ranks are SPS_EINVAL with one line; so are bad arguments,
 * before any file is read. */
static void test_merge_bad_inputs(void **state) {
    (void)state;
    char out[1024], buf[4096];
    const char *dup[] = {pb, pc};      /* both rank 1 */
    const char *fmt[] = {pa, "ml.csv"};
    const char *trace[] = {pa, "ml_none.json"};
    const char *null_in[] = {pa, NULL};
    snprintf(out, sizeof out, "%s", tu_path("ml_dup.json"));
    remove(out);
    FILE *err = tmpfile();
    assert_non_null(err);
    assert_int_equal(sps_merge(out, dup, 2, err), SPS_EINVAL);
    assert_int_equal(err_text(err, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, "are both rank 1"));
    fclose(err);
    assert_int_equal(access(out, F_OK), -1);
    assert_false(leftover("ml_dup.json"));
    snprintf(out, sizeof out, "%s", tu_path("ml_dup.h5"));
    assert_int_equal(sps_merge(out, dup, 2, NULL), SPS_EINVAL);
    assert_int_equal(access(out, F_OK), -1);
    assert_int_equal(sps_merge(out, dup, 0, NULL), SPS_EINVAL);
    assert_int_equal(sps_merge(NULL, dup, 2, NULL), SPS_EINVAL);
    assert_int_equal(sps_merge(out, NULL, 2, NULL), SPS_EINVAL);
    assert_int_equal(sps_merge(out, null_in, 2, NULL), SPS_EINVAL);
    assert_int_equal(sps_merge(tu_path("ml.txt"), dup, 2, NULL), SPS_EINVAL);
    assert_int_equal(sps_merge(out, fmt, 2, NULL), SPS_EINVAL);
    /* an .h5 from a trace input is no longer refused (issue 12): this one
     * is missing, a data error */
    assert_int_equal(sps_merge(out, trace, 2, NULL), SPS_EIO);
    assert_int_equal(access(out, F_OK), -1);
}

/* Merges {x, y} into out and checks rank 1 (ml_c.h5) is ml_b.h5 shifted
 * by exactly MPI_OFFSET, rank 0 unshifted. */
static void check_mpi_merge(const char *out, const char *x, const char *y) {
    static int64_t a[MAXSPANS], b[MAXSPANS], got[MAXSPANS];
    size_t na = tl_starts(pa, -1, a), nb = tl_starts(pb, -1, b);
    const char *ins[] = {x, y};
    assert_int_equal(sps_merge(out, ins, 2, stderr), 0);
    int h5 = sps__tl_format_of(out) == SPS__TL_H5;
    same_shifted(got, h5 ? h5_starts(out, 0, got) : tl_starts(out, 0, got), a,
                 na, 0);
    same_shifted(got, h5 ? h5_starts(out, 1, got) : tl_starts(out, 1, got), b,
                 nb, MPI_OFFSET);
}

/* An .h5 input with /metadata clock_offset_ns: its times move by exactly
 * that (onto rank 0's clock, whatever the inputs' order), in preference to
 * the anchors (which say: same host, no shift); JSON records "mpi". */
static void test_merge_mpi_offset(void **state) {
    (void)state;
    char out[1024];
    snprintf(out, sizeof out, "%s", tu_path("ml_mpi.json"));
    check_mpi_merge(out, pa, pc);
    char *text = slurp(out);
    assert_non_null(strstr(text, "\"clock\":\"mpi\",\"offset_ns\":7000000123,"
                                 "\"offset_error_ns\":2500}"));
    assert_non_null(strstr(text, "\"rank\":0,"));
    free(text);
    check_mpi_merge(out, pc, pa); /* rank 0 is the reference, not the first */
    text = slurp(out);
    assert_non_null(strstr(text, "\"clock\":\"mpi\",\"offset_ns\":7000000123,"));
    free(text);
    snprintf(out, sizeof out, "%s", tu_path("ml_mpi.h5"));
    check_mpi_merge(out, pc, pa);
    snprintf(out, sizeof out, "%s", tu_path("ml_mpi.pftrace"));
    check_mpi_merge(out, pa, pc);
}

/* Adds /clock_sync (t_ns, offset_ns, error_ns: n, n and ne rows) to the
 * .h5 file at path, as the MPI integration writes a rank's measurements. */
static void add_sync(const char *path, const int64_t *t, const int64_t *o,
                     const int64_t *e, hsize_t n, hsize_t ne) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gcreate2(f, "clock_sync", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(g >= 0);
    const char *names[3] = {"t_ns", "offset_ns", "error_ns"};
    const int64_t *cols[3] = {t, o, e};
    for (int k = 0; k < 3; k++) {
        hsize_t dims[1] = {k == 2 ? ne : n};
        hid_t sp = H5Screate_simple(1, dims, NULL);
        hid_t d = H5Dcreate2(g, names[k], H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
        assert_true(d >= 0);
        assert_true(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, cols[k]) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
    }
    H5Gclose(g);
    assert_true(H5Fclose(f) >= 0);
}

/* An .h5 input with /clock_sync (the MPI integration's measurements over
 * a session) is shifted by the line fitted to them, not by its constant
 * clock_offset_ns: here three measurements on a line of +1000 ppm from
 * MPI_OFFSET (one a little off, with a larger error), so every time t
 * moves by MPI_OFFSET + 0.001 (t - t0) within the fit's rounding, and a
 * duration by 0.1%.  Malformed tables (a negative error, columns of
 * different lengths, a slope of 2%) are ignored: the constant offset, as
 * for a file written before drift was tracked. */
static void test_merge_drift(void **state) {
    (void)state;
    static int64_t b[MAXSPANS], got[MAXSPANS];
    size_t nb = tl_starts(pb, -1, b);
    assert_true(nb > 10);
    const int64_t t0 = b[0] - 10000000, t1 = b[nb - 1] + 5000000, tm = (t0 + t1) / 2;
    const int64_t span = t1 - t0;
    char pd[1024], out[1024];
    snprintf(pd, sizeof pd, "%s", tu_path("ml_drift.h5"));
    snprintf(out, sizeof out, "%s", tu_path("ml_drift_out.h5"));
    copy_file(pc, pd);
    int64_t t[3] = {t0, tm, t1};
    int64_t o[3] = {MPI_OFFSET, MPI_OFFSET + (tm - t0) / 1000 + 300, MPI_OFFSET + span / 1000};
    int64_t e[3] = {100, 5000, 100};
    add_sync(pd, t, o, e, 3, 3);
    const char *ins[] = {pa, pd};
    assert_int_equal(sps_merge(out, ins, 2, stderr), 0);
    size_t n = h5_starts(out, 1, got);
    assert_int_equal(n, nb);
    /* the weighted line passes within a few ns of the two tight ends */
    for (size_t i = 0; i < n; i++) {
        int64_t want = b[i] + MPI_OFFSET + (b[i] - t0) / 1000;
        if (llabs(got[i] - want) > 20)
            fail_msg("span %zu: got %lld, want %lld", i, (long long)got[i], (long long)want);
    }
    /* the mapping is not the constant one: the last span moved by more */
    assert_true(got[n - 1] - b[n - 1] > MPI_OFFSET + (b[n - 1] - t0) / 1000 - 20);
    assert_true((b[n - 1] - t0) / 1000 >= 10000);
    /* the same into traces: spans on the line, the JSON's merge key says so */
    const char *traces[] = {"ml_drift.json", "ml_drift.pftrace"};
    for (int k = 0; k < 2; k++) {
        char tout[1024];
        snprintf(tout, sizeof tout, "%s", tu_path(traces[k]));
        assert_int_equal(sps_merge(tout, ins, 2, stderr), 0);
        assert_int_equal(tl_starts(tout, 1, got), nb);
        for (size_t i = 0; i < nb; i++) {
            int64_t want = b[i] + MPI_OFFSET + (b[i] - t0) / 1000;
            if (llabs(got[i] - want) > 20)
                fail_msg("%s span %zu: got %lld, want %lld", traces[k], i, (long long)got[i],
                         (long long)want);
        }
        if (k == 0) {
            char *text = slurp(tout);
            assert_non_null(strstr(text, "\"clock\":\"mpi\""));
            const char *d = strstr(text, "\"drift_ppm\":");
            assert_non_null(d);
            double ppm = strtod(d + strlen("\"drift_ppm\":"), NULL);
            assert_true(ppm > 999.9 && ppm < 1000.1);
            free(text);
        }
    }

    /* malformed: each gives the constant offset */
    for (int bad = 0; bad < 3; bad++) {
        copy_file(pc, pd);
        int64_t eb[3] = {100, bad == 0 ? -1 : 5000, 100};
        int64_t ob[3] = {o[0], o[1], bad == 2 ? MPI_OFFSET + span / 50 : o[2]};
        add_sync(pd, t, ob, eb, 3, bad == 1 ? 2 : 3);
        assert_int_equal(sps_merge(out, ins, 2, stderr), 0);
        static int64_t ref[MAXSPANS];
        size_t nr = tl_starts(pb, -1, ref);
        same_shifted(got, h5_starts(out, 1, got), ref, nr, MPI_OFFSET);
    }
}

/* Two .h5 files without /metadata rank whose rows both say rank 0 (two
 * serial recordings as scope-profiler writes them) take their positions
 * as ranks, to .h5 as to .json: the rows never name the rank.  (The .h5
 * output used to take the rows' rank and fail: "both rank 0".) */
static void test_merge_no_rank(void **state) {
    (void)state;
    static int64_t a[MAXSPANS], got[MAXSPANS];
    char pd[1024], pe[1024], out[1024];
    snprintf(pd, sizeof pd, "%s", tu_path("ml_d.h5"));
    snprintf(pe, sizeof pe, "%s", tu_path("ml_e.h5"));
    copy_file(pa, pd);
    copy_file(pa, pe);
    del_meta(pd, "rank");
    del_meta(pe, "rank");
    size_t na = tl_starts(pa, -1, a);
    const char *ins[] = {pd, pe};
    snprintf(out, sizeof out, "%s", tu_path("ml_norank.h5"));
    assert_int_equal(sps_merge(out, ins, 2, stderr), 0);
    for (uint32_t rk = 0; rk < 2; rk++)
        same_shifted(got, h5_starts(out, rk, got), a, na, 0);
    snprintf(out, sizeof out, "%s", tu_path("ml_norank.json"));
    assert_int_equal(sps_merge(out, ins, 2, stderr), 0);
    for (int64_t rk = 0; rk < 2; rk++)
        same_shifted(got, tl_starts(out, rk, got), a, na, 0);
}

/* Runs the tests (they share the recordings made by setup). */
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_h5_and_json),
        cmocka_unit_test(test_merge_missing_input),
        cmocka_unit_test(test_merge_bad_inputs),
        cmocka_unit_test(test_merge_mpi_offset),
        cmocka_unit_test(test_merge_drift),
        cmocka_unit_test(test_merge_no_rank),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
