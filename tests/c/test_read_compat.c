/* test_read_compat.c -- the reader on scope-profiler's layouts beyond what
 * spanscope writes: schema 1 (rank<N>/regions/<name> groups, no schema
 * attribute), the per-row source/tags columns, the per-event GPU/task/await
 * columns and the lane tables of schema 3, built here with the plain HDF5
 * API; bad variants of each must give SPS_EFORMAT and a message, never a
 * crash.  Also sps_fold_spans, the fold over spans held by a caller. */
#include "testutil.h"
#include "formats/h5_read.h"

#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing test files ------------------------------------------------ */

/* Writes int64 dataset name (n values) under loc. */
static void put_i64(hid_t loc, const char *name, const int64_t *v, hsize_t n) {
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(loc, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    if (n) assert_true(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
}

/* Writes uint64/uint32 dataset name (n values given as uint64). */
static void put_u(hid_t loc, const char *name, const uint64_t *v, hsize_t n, int bytes) {
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(loc, name, bytes == 4 ? H5T_STD_U32LE : H5T_STD_U64LE, sp,
                         H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    if (n) assert_true(H5Dwrite(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
}

/* A variable-length UTF-8 string type (caller closes). */
static hid_t vstr(void) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* Writes a vlen string dataset name of n strings. */
static void put_strs(hid_t loc, const char *name, const char *const *v, hsize_t n) {
    hid_t t = vstr(), sp = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    if (n) assert_true(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
}

/* Sets the scalar int64 attribute name of loc. */
static void attr_i64(hid_t loc, const char *name, int64_t v) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, &v);
    H5Aclose(a);
    H5Sclose(sp);
}

/* Sets string attribute name of loc: scalar when n == 0, else n strings. */
static void attr_strs(hid_t loc, const char *name, const char *const *v, hsize_t n) {
    hid_t t = vstr(), sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, v);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

/* Adds region group rank<rank>/regions/<name> with the calls [s[i], e[i])
 * (n each; ne end times, to make bad files), and attrs when file != NULL. */
static void v1_region(hid_t f, int rank, const char *name, const int64_t *s, hsize_t n,
                      const int64_t *e, hsize_t ne, const char *file, int64_t line,
                      const char *const *tags, hsize_t ntags) {
    char rg[32];
    snprintf(rg, sizeof rg, "rank%d", rank);
    hid_t r = H5Lexists(f, rg, H5P_DEFAULT) > 0 ? H5Gopen2(f, rg, H5P_DEFAULT)
                                                 : H5Gcreate2(f, rg, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Lexists(r, "regions", H5P_DEFAULT) > 0
                  ? H5Gopen2(r, "regions", H5P_DEFAULT)
                  : H5Gcreate2(r, "regions", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t x = H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    put_i64(x, "start_times", s, n);
    put_i64(x, "end_times", e, ne);
    if (file) {
        attr_strs(x, "source_file", &file, 0);
        attr_i64(x, "source_lineno", line);
        if (ntags) attr_strs(x, "tags", tags, ntags);
    }
    H5Gclose(x);
    H5Gclose(g);
    H5Gclose(r);
}

/* A schema-1 file like scope-profiler's old writer made: rank 0 has
 * "solve" [10,15) [20,33) [40,55) and "step" [0,100) holding them; rank 1
 * has "solve" [5,9). */
static const char *v1_file(const char *name) {
    const char *path = tu_path(name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t m = H5Gcreate2(f, "metadata", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    attr_i64(m, "mpi_size", 2);
    H5Gclose(m);
    int64_t s[] = {10, 20, 40}, e[] = {15, 33, 55}, s0[] = {0}, e0[] = {100};
    int64_t s1[] = {5}, e1[] = {9};
    const char *tags[] = {"golden", "a\"b"};
    v1_region(f, 0, "solve", s, 3, e, 3, "solver.py", 7, tags, 2);
    v1_region(f, 0, "step", s0, 1, e0, 1, NULL, 0, NULL, 0);
    v1_region(f, 1, "solve", s1, 1, e1, 1, "solver.py", 7, NULL, 0);
    H5Fclose(f);
    return path;
}

/* The row of f for region name on rank, or -1. */
static long row_of(const sps_file_t *f, const char *name, uint32_t rank) {
    for (size_t i = 0; i < f->nrows; i++)
        if (f->rows[i].rank == rank && !strcmp(f->names[f->rows[i].region], name)) return (long)i;
    return -1;
}

/* Opens path expecting failure with code rc and a message containing want. */
static void open_fails(const char *path, int rc, const char *want) {
    const sps_file_t *f = NULL;
    char err[512] = "";
    assert_int_equal(sps_file_open(path, &f, err, sizeof err), rc);
    assert_null(f);
    if (!strstr(err, want)) fail_msg("message \"%s\" lacks \"%s\"", err, want);
}

/* ---- schema 1 ------------------------------------------------------------ */

static void test_schema1_reads_as_one_model(void **state) {
    (void)state;
    const sps_file_t *f = NULL;
    char err[512] = "";
    assert_int_equal(sps_file_open(v1_file("v1.h5"), &f, err, sizeof err), 0);
    assert_int_equal(f->schema, 1);
    assert_int_equal(f->aggregate, 0);
    assert_int_equal(f->nnames, 2); /* the distinct names, sorted */
    assert_string_equal(f->names[0], "solve");
    assert_string_equal(f->names[1], "step");
    assert_int_equal(f->nrows, 3);
    assert_int_equal(f->nevents, 5);
    long a = row_of(f, "solve", 0), b = row_of(f, "step", 0), c = row_of(f, "solve", 1);
    assert_true(a >= 0 && b >= 0 && c >= 0);
    const sps_file_row_t *ra = &f->rows[a];
    assert_int_equal(ra->count, 3);
    assert_int_equal(f->start_ns[ra->first], 10);
    assert_int_equal(f->dur_ns[ra->first + 1], 13);
    assert_int_equal(ra->total_ns, 33);
    /* the fold nests solve's calls in step on rank 0, not rank 1's */
    assert_int_equal(f->rows[b].self_ns, 100 - 33);
    assert_int_equal(f->parent[f->rows[c].first], -1);
    assert_int_equal(f->parent[ra->first], (int32_t)f->rows[b].first);
    /* the region groups' attributes as the per-row columns */
    assert_non_null(f->row_source_lines);
    assert_int_equal(f->row_source_lines[a], 7);
    assert_int_equal(f->row_source_lines[b], -1);
    assert_string_equal(f->row_source_files[a], "solver.py");
    assert_string_equal(f->row_source_files[b], "");
    assert_string_equal(f->row_tags[a], "[\"golden\", \"a\\\"b\"]");
    assert_string_equal(f->row_tags[b], "[]");
    /* no source_text attribute: "" on every row */
    assert_non_null(f->row_source_texts);
    assert_string_equal(f->row_source_texts[a], "");
    assert_int_equal(f->rank_groups, 0);
    assert_null(f->gpu_dur_ns);
    assert_int_equal(f->thread_table.ncols, 0);
    assert_int_equal(f->has_summary_statistics, 0);
    sps_file_close(f);
}

/* A schema-1 file with a region's source_text (longer than any fixed
 * buffer) and scope-profiler's integration groups rank0/line_profile and
 * rank1/likwid: the text is read, the groups are reported (not read). */
static void test_schema1_source_text_and_rank_groups(void **state) {
    (void)state;
    const char *path = v1_file("v1_groups.h5");
    hid_t f5 = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    static char text[6000];
    memset(text, 'x', sizeof text - 1);
    memcpy(text, "with region(\"solve\"):", 21);
    const char *tp = text;
    hid_t g = H5Gopen2(f5, "rank0/regions/solve", H5P_DEFAULT);
    attr_strs(g, "source_text", &tp, 0);
    H5Gclose(g);
    const char *groups[][2] = {{"rank0", "line_profile"}, {"rank1", "likwid"}};
    for (size_t i = 0; i < 2; i++) {
        hid_t r = H5Gopen2(f5, groups[i][0], H5P_DEFAULT);
        H5Gclose(H5Gcreate2(r, groups[i][1], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        H5Gclose(r);
    }
    H5Fclose(f5);
    const sps_file_t *f = NULL;
    char err[512] = "";
    assert_int_equal(sps_file_open(path, &f, err, sizeof err), 0);
    long a = row_of(f, "solve", 0), b = row_of(f, "step", 0);
    assert_int_equal(strlen(f->row_source_texts[a]), sizeof text - 1);
    assert_memory_equal(f->row_source_texts[a], "with region(", 12);
    assert_string_equal(f->row_source_texts[b], "");
    assert_int_equal(f->rank_groups, SPS_FILE_HAS_LINE_PROFILE | SPS_FILE_HAS_LIKWID);
    assert_int_equal(f->nevents, 5); /* the timing is read as before */
    sps_file_close(f);
}

static void test_schema1_bad_files(void **state) {
    (void)state;
    int64_t s[] = {1, 2}, e[] = {3};
    /* end_times shorter than start_times */
    const char *p = tu_path("v1_len.h5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    v1_region(f, 0, "x", s, 2, e, 1, NULL, 0, NULL, 0);
    H5Fclose(f);
    open_fails(p, SPS_EFORMAT, "rank0/regions/x/end_times has 1 elements, expected 2");
    /* a region that is a dataset, not a group */
    p = tu_path("v1_dset.h5");
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    v1_region(f, 0, "ok", s, 1, e, 1, NULL, 0, NULL, 0);
    hid_t g = H5Gopen2(f, "rank0/regions", H5P_DEFAULT);
    put_i64(g, "bogus", s, 2);
    H5Gclose(g);
    H5Fclose(f);
    open_fails(p, SPS_EFORMAT, "rank0/regions/bogus is not a group");
    /* neither the schema attribute nor rank groups */
    p = tu_path("v1_none.h5");
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    put_i64(f, "data", s, 2);
    H5Fclose(f);
    open_fails(p, SPS_EFORMAT, "not a scope-profiler profile");
    /* a schema from the future */
    p = tu_path("v9.h5");
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    attr_i64(f, "scope_profiler_schema", 9);
    H5Fclose(f);
    open_fails(p, SPS_EFORMAT, "unsupported schema version 9");
}

/* The streaming reader (convert, html, merge) serves a schema-1 file's
 * calls from memory, in the whole reader's order. */
static void test_schema1_streamed(void **state) {
    (void)state;
    sps__h5r_t *r = NULL;
    assert_int_equal(sps__h5r_open_index(&r, v1_file("v1s.h5")), 0);
    assert_int_equal(r->schema, 1);
    assert_true(r->in_memory);
    assert_int_equal(r->deltas, 0);
    assert_int_equal(r->nevents, 5);
    int64_t s[5], d[5], tid[5], cid[5], pid[5];
    assert_int_equal(sps__h5r_events_ids(r, 0, 5, s, d, tid, cid, pid), 0);
    const sps_file_t *f = NULL;
    assert_int_equal(sps_file_open(tu_path("v1s.h5"), &f, NULL, 0), 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(s[i], f->start_ns[i]);
        assert_int_equal(d[i], f->dur_ns[i]);
        assert_int_equal(tid[i], -1);
        assert_int_equal(cid[i], -1);
    }
    assert_int_equal(sps__h5r_events(r, 4, 2, s, d, NULL), SPS_EINVAL); /* past the end */
    sps_file_close(f);
    sps__h5r_free(r);
    /* and so the tools convert it */
    const char *cli = getenv("SPS_CLI");
    if (cli && *cli) {
        assert_int_equal(tu_system("'%s' convert '%s' '%s' >/dev/null", cli, tu_path("v1s.h5"),
                                   tu_path("v1s.json")), 0);
        FILE *fp = fopen(tu_path("v1s.json"), "r");
        assert_non_null(fp);
        char buf[4096] = "";
        size_t got = fread(buf, 1, sizeof buf - 1, fp);
        fclose(fp);
        buf[got] = 0;
        assert_non_null(strstr(buf, "\"solve\""));
    }
}

/* Every prefix of a valid schema-1 file (cut at a few points) fails
 * cleanly: the reader never crashes on a truncated file. */
static void test_schema1_truncated(void **state) {
    (void)state;
    const char *src = v1_file("v1t_src.h5");
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    char *buf = malloc((size_t)size);
    fseek(in, 0, SEEK_SET);
    assert_int_equal(fread(buf, 1, (size_t)size, in), (size_t)size);
    fclose(in);
    long cuts[] = {4, 100, size / 3, size / 2, size - 200, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        const char *p = tu_path("v1t.h5");
        FILE *out = fopen(p, "wb");
        fwrite(buf, 1, (size_t)cuts[i], out);
        fclose(out);
        const sps_file_t *f = NULL;
        char err[512] = "";
        int rc = sps_file_open(p, &f, err, sizeof err);
        assert_true(rc == SPS_EFORMAT);
        assert_null(f);
        assert_true(strlen(err) > 0);
    }
    free(buf);
}

/* ---- schema 3 extras ------------------------------------------------------ */

/* A schema-3 file of one region "work" with three calls on rank 0 and
 * scope-profiler's optional columns; bad != 0 makes one column wrong:
 * 1 tags of the wrong length, 2 lane table columns of unequal length. */
static const char *v3_file(const char *name, int bad) {
    const char *path = tu_path(name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    attr_i64(f, "scope_profiler_schema", 3);
    const char *layout = "columnar";
    attr_strs(f, "storage_layout", &layout, 0);
    hid_t g = H5Gcreate2(f, "region_table", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char *names[] = {"work"};
    put_strs(g, "names", names, 1);
    H5Gclose(g);
    g = H5Gcreate2(f, "rank_region_index", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    uint64_t zero[] = {0}, three[] = {3};
    put_u(g, "region_ids", zero, 1, 4);
    put_u(g, "ranks", zero, 1, 4);
    put_u(g, "event_offsets", zero, 1, 8);
    put_u(g, "event_counts", three, 1, 8);
    int64_t line[] = {42};
    put_i64(g, "source_lines", line, 1);
    const char *file[] = {"w.py"}, *text[] = {"with region:\n    pass"};
    const char *tags[] = {"[\"io\"]", "[]"};
    put_strs(g, "source_files", file, 1);
    put_strs(g, "source_texts", text, 1);
    put_strs(g, "tags", tags, bad == 1 ? 2 : 1);
    H5Gclose(g);
    g = H5Gcreate2(f, "events", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int64_t deltas[] = {100, 50, 50}, dur[] = {10, 20, 30};
    int64_t gpu[] = {-1, 5, 6}, task[] = {-1, 0, 1}, await_ns[] = {0, 3, 4};
    put_i64(g, "start_deltas", deltas, 3);
    put_i64(g, "durations", dur, 3);
    put_i64(g, "gpu_durations", gpu, 3);
    put_i64(g, "task_ids", task, 3);
    put_i64(g, "await_ns", await_ns, 3);
    H5Gclose(g);
    g = H5Gcreate2(f, "task_table", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int64_t idx[] = {0, 1}, ranks[] = {0, 0};
    const char *tnames[] = {"Task-1", "Task-2"};
    put_i64(g, "index", idx, 2);
    put_i64(g, "ranks", ranks, bad == 2 ? 1 : 2);
    put_strs(g, "name", tnames, 2);
    double fl[] = {1.0, 2.0}; /* a float column: left out */
    hsize_t two = 2;
    hid_t sp = H5Screate_simple(1, &two, NULL);
    hid_t d = H5Dcreate2(g, "weights", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, fl);
    H5Dclose(d);
    H5Sclose(sp);
    H5Gclose(g);
    H5Fclose(f);
    return path;
}

/* The column name of table t, or NULL. */
static const sps_file_column_t *col_of(const sps_file_table_t *t, const char *name) {
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcmp(t->cols[i].name, name)) return &t->cols[i];
    return NULL;
}

static void test_schema3_extras(void **state) {
    (void)state;
    const sps_file_t *f = NULL;
    char err[512] = "";
    assert_int_equal(sps_file_open(v3_file("v3x.h5", 0), &f, err, sizeof err), 0);
    assert_int_equal(f->schema, 3);
    assert_int_equal(f->start_ns[2], 200);
    assert_int_equal(f->row_source_lines[0], 42);
    assert_string_equal(f->row_source_files[0], "w.py");
    assert_string_equal(f->row_source_texts[0], "with region:\n    pass");
    assert_string_equal(f->row_tags[0], "[\"io\"]");
    assert_null(f->row_event_metadata);
    assert_int_equal(f->gpu_dur_ns[1], 5);
    assert_int_equal(f->task_ids[2], 1);
    assert_int_equal(f->await_ns[2], 4);
    assert_int_equal(f->thread_table.ncols, 0);
    assert_int_equal(f->task_table.nrows, 2);
    assert_int_equal(f->task_table.ncols, 3); /* weights (floats) left out */
    const sps_file_column_t *c = col_of(&f->task_table, "name");
    assert_non_null(c);
    assert_int_equal(c->is_text, 1);
    assert_string_equal(c->texts[1], "Task-2");
    c = col_of(&f->task_table, "index");
    assert_non_null(c);
    assert_int_equal(c->is_text, 0);
    assert_int_equal(c->ints[1], 1);
    assert_null(col_of(&f->task_table, "weights"));
    sps_file_close(f);
}

static void test_schema3_bad_extras(void **state) {
    (void)state;
    open_fails(v3_file("v3_tags.h5", 1), SPS_EFORMAT,
               "/rank_region_index/tags has 2 elements, expected 1");
    open_fails(v3_file("v3_lanes.h5", 2), SPS_EFORMAT, "/task_table/");
}

/* ---- the index alone (sps_file_open_index) ------------------------------- */

/* A file of spanscope's writer: outer holding two inner calls, twice. */
static const char *recorded_file(const char *name) {
    const char *path = tu_path(name);
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = path;
    assert_int_equal(sps_setup(&cfg), 0);
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner");
    for (int i = 0; i < 2; i++) {
        sps_begin(outer);
        for (int k = 0; k < 2; k++) {
            sps_begin(inner);
            tu_spin_ns(20000 * (k + 1));
            sps_end(inner);
        }
        sps_end(outer);
    }
    assert_int_equal(sps_finalize(), 0);
    assert_int_equal(sps_shutdown(), 0);
    return path;
}

static void test_index_only_read(void **state) {
    (void)state;
    const char *path = recorded_file("index_only.h5");
    const sps_file_t *full = NULL, *idx = NULL;
    char err[512] = "";
    assert_int_equal(sps_file_open(path, &full, err, sizeof err), 0);
    assert_int_equal(sps_file_open_index(path, &idx, err, sizeof err), 0);
    assert_null(full->row_summary); /* only the index-only read has it */
    assert_int_equal(idx->nevents, 0);
    assert_null(idx->start_ns);
    assert_int_equal(idx->nsamples, 0);
    assert_true(idx->has_summary_statistics);
    assert_non_null(idx->row_summary);
    assert_int_equal(idx->nrows, full->nrows);
    for (size_t i = 0; i < idx->nrows; i++) {
        const sps_file_row_t *a = &idx->rows[i], *b = &full->rows[i];
        const sps_file_summary_t *s = &idx->row_summary[i];
        assert_int_equal(a->count, b->count);
        /* the writer's stored statistics are the reader's over the calls */
        assert_int_equal(a->total_ns, b->total_ns);
        assert_int_equal(a->min_ns, b->min_ns);
        assert_int_equal(a->max_ns, b->max_ns);
        assert_int_equal(s->total, b->total_ns);
        assert_int_equal(s->first, full->dur_ns[b->first]);
        assert_int_equal(s->last, full->dur_ns[b->first + b->count - 1]);
        assert_int_equal(s->start_minimum, full->start_ns[b->first]);
        assert_true(s->mean > 0 && s->m2 >= 0);
        assert_int_equal(a->self_ns, b->self_ns); /* exclusive_totals */
    }
    sps_file_close(full);
    sps_file_close(idx);
    /* schema 1 has no index to read alone */
    assert_int_equal(sps_file_open_index(v1_file("v1i.h5"), &idx, err, sizeof err),
                     SPS_EFORMAT);
    assert_null(idx);
    assert_non_null(strstr(err, "schema 1"));
}

/* A summary_statistics column of the wrong shape or without its fields
 * is refused with a message. */
static void test_index_only_bad_summary(void **state) {
    (void)state;
    const char *src = recorded_file("index_bad_src.h5");
    for (int variant = 0; variant < 2; variant++) {
        const char *path = tu_path(variant ? "index_bad1.h5" : "index_bad0.h5");
        assert_int_equal(tu_system("cp '%s' '%s'", src, path), 0);
        hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t g = H5Gopen2(f, "rank_region_index", H5P_DEFAULT);
        H5Ldelete(g, "summary_statistics", H5P_DEFAULT);
        if (variant == 0) { /* ints, not a compound */
            int64_t v[] = {1, 2};
            put_i64(g, "summary_statistics", v, 2);
        } else { /* a compound lacking the fields */
            hsize_t n = 2;
            hid_t t = H5Tcreate(H5T_COMPOUND, 8);
            H5Tinsert(t, "other", 0, H5T_NATIVE_INT64);
            hid_t sp = H5Screate_simple(1, &n, NULL);
            int64_t v[] = {1, 2};
            hid_t d = H5Dcreate2(g, "summary_statistics", t, sp, H5P_DEFAULT, H5P_DEFAULT,
                                 H5P_DEFAULT);
            H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
            H5Dclose(d);
            H5Sclose(sp);
            H5Tclose(t);
        }
        H5Gclose(g);
        H5Fclose(f);
        const sps_file_t *x = NULL;
        char err[512] = "";
        assert_int_equal(sps_file_open_index(path, &x, err, sizeof err), SPS_EFORMAT);
        assert_null(x);
        assert_non_null(strstr(err, "summary_statistics"));
        /* the whole-file reader does not need the column */
        assert_int_equal(sps_file_open(path, &x, err, sizeof err), 0);
        sps_file_close(x);
    }
}

/* ---- sps_fold_spans ------------------------------------------------------ */

static void test_fold_spans(void **state) {
    (void)state;
    /* rank 0: a [0,10) holds b [1,3) and c [5,8); rank 1: d [2,4) */
    int64_t s[] = {0, 1, 5, 2}, e[] = {10, 3, 8, 4}, rank[] = {0, 0, 0, 1};
    int32_t parent[4];
    int64_t self[4];
    uint64_t overlaps = 99;
    assert_int_equal(sps_fold_spans(s, e, rank, NULL, 4, parent, self, &overlaps), 0);
    assert_int_equal(parent[0], -1);
    assert_int_equal(parent[1], 0);
    assert_int_equal(parent[2], 0);
    assert_int_equal(parent[3], -1);
    assert_int_equal(self[0], 10 - 2 - 3);
    assert_int_equal(self[3], 2);
    assert_int_equal(overlaps, 0);
    /* threads split lanes: the same intervals on two threads do not nest */
    int64_t thread[] = {0, 1, 0, 0};
    assert_int_equal(sps_fold_spans(s, e, NULL, thread, 4, parent, self, NULL), 0);
    assert_int_equal(parent[1], -1);
    /* a partial overlap is counted, and self times stay >= 0 */
    int64_t s2[] = {0, 5}, e2[] = {10, 15};
    assert_int_equal(sps_fold_spans(s2, e2, NULL, NULL, 2, parent, self, &overlaps), 0);
    assert_int_equal(overlaps, 1);
    assert_true(self[0] >= 0 && self[1] >= 0);
    /* bad arguments */
    int64_t badrank[] = {-1, 0};
    assert_int_equal(sps_fold_spans(s2, e2, badrank, NULL, 2, parent, self, NULL), SPS_EINVAL);
    assert_int_equal(sps_fold_spans(NULL, e2, NULL, NULL, 2, parent, self, NULL), SPS_EINVAL);
    assert_int_equal(sps_fold_spans(NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema1_reads_as_one_model),
        cmocka_unit_test(test_schema1_source_text_and_rank_groups),
        cmocka_unit_test(test_schema1_bad_files),
        cmocka_unit_test(test_schema1_streamed),
        cmocka_unit_test(test_schema1_truncated),
        cmocka_unit_test(test_schema3_extras),
        cmocka_unit_test(test_schema3_bad_extras),
        cmocka_unit_test(test_index_only_read),
        cmocka_unit_test(test_index_only_bad_summary),
        cmocka_unit_test(test_fold_spans),
    };
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
