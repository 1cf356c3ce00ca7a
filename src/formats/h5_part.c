/*
 * h5_part.c -- a rank's part for the chunk-copy merge of a collective
 * finalize (formats.h, docs/mpi.md "The collective finalize"): its
 * /part_plan, its event rows read and written in place, and its number of
 * events.
 *
 * A part laid out for the chunk-copy merge holds its rank's events at the
 * rows they take in the merged file, less a multiple of SPS__H5_CHUNK:
 * its chunk j is the merged file's chunk base / SPS__H5_CHUNK + j.  The
 * merging rank copies the chunks each part owns (those that start within
 * its events) without inflating them; the first chunk of a rank whose
 * events do not start on a chunk is completed by the rank before it,
 * which writes the later ranks' first rows after its own (sps__part_rows).
 */
#include "formats/formats.h"
#include "formats/h5_read.h"

#include <hdf5.h>

#include <errno.h>

/* The attributes of /part_plan, in sps__part_plan_t's order. */
#define PLAN_N 5
static const char *const plan_names[PLAN_N] = {"base", "total", "pad", "events", "tail"};

static uint64_t *plan_field(sps__part_plan_t *p, int k) {
    uint64_t *f[PLAN_N] = {&p->base, &p->total, &p->pad, &p->events, &p->tail};
    return f[k];
}

/* The event columns, in the order of sps__part_rows' cols. */
static const char *const ev_cols[5] = {"events/start_deltas", "events/durations",
                                       "events/call_ids", "events/parent_ids",
                                       "events/thread_ids"};

typedef struct plan_job {
    const char *path;
    sps__part_plan_t p;
} plan_job_t;

static int plan_write(void *arg) {
    plan_job_t *j = arg;
    hid_t f = H5Fopen(j->path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gcreate2(f, "part_plan", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    hid_t sp = H5Screate(H5S_SCALAR);
    int ok = g >= 0 && sp >= 0;
    for (int k = 0; ok && k < PLAN_N; k++) {
        int64_t v = (int64_t)*plan_field(&j->p, k);
        hid_t a = H5Acreate2(g, plan_names[k], H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        ok = a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0;
        if (a >= 0) H5Aclose(a);
    }
    if (sp >= 0) H5Sclose(sp);
    if (g >= 0) H5Gclose(g);
    if (f >= 0 && H5Fclose(f) < 0) ok = 0;
    return ok ? 0 : sps__err_fail(SPS_EHDF5, "%s: cannot add /part_plan", j->path);
}

int sps__part_plan_write(const char *path, const sps__part_plan_t *p) {
    plan_job_t j = {path, *p};
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    return sps__h5_quiet_end(&q, plan_write(&j));
}

int sps__part_plan_read(int64_t file, sps__part_plan_t *p) {
    hid_t f = (hid_t)file;
    if (f < 0 || H5Lexists(f, "part_plan", H5P_DEFAULT) <= 0) return 0;
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    hid_t g = H5Gopen2(f, "part_plan", H5P_DEFAULT);
    int ok = g >= 0;
    for (int k = 0; ok && k < PLAN_N; k++) {
        int64_t v = -1;
        hid_t a = H5Aexists(g, plan_names[k]) > 0 ? H5Aopen(g, plan_names[k], H5P_DEFAULT)
                                                  : H5I_INVALID_HID;
        hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
        hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
        ok = sp >= 0 && t >= 0 && H5Sget_simple_extent_type(sp) == H5S_SCALAR &&
             H5Tget_class(t) == H5T_INTEGER && H5Aread(a, H5T_NATIVE_INT64, &v) >= 0 && v >= 0;
        *plan_field(p, k) = (uint64_t)v;
        if (t >= 0) H5Tclose(t);
        if (sp >= 0) H5Sclose(sp);
        if (a >= 0) H5Aclose(a);
    }
    if (g >= 0) H5Gclose(g);
    sps__h5_quiet_end(&q, 0);
    /* the plan must describe a layout: pad within a chunk, rows within total */
    if (ok && (p->pad >= SPS__H5_CHUNK || p->base % SPS__H5_CHUNK != p->pad ||
               p->events > p->total || p->base > p->total - p->events ||
               p->tail > p->total - p->base - p->events))
        ok = 0;
    return ok ? 1 : -1;
}

typedef struct rows_job {
    const char *path;
    uint64_t first;
    size_t n;
    int64_t *const *cols;
    int write;
} rows_job_t;

/* One column's rows (see sps__part_rows).  0 or -1. */
static int rows_col(hid_t f, const char *name, const rows_job_t *j, int64_t *v) {
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t fs = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t dims[1] = {0}, start[1] = {j->first}, count[1] = {j->n};
    hid_t ms = H5Screate_simple(1, count, NULL);
    int ok = fs >= 0 && ms >= 0 && H5Sget_simple_extent_ndims(fs) == 1 &&
             H5Sget_simple_extent_dims(fs, dims, NULL) == 1 && j->first <= dims[0] &&
             j->n <= dims[0] - j->first &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0;
    errno = 0;
    if (ok)
        ok = (j->write ? H5Dwrite(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, v)
                       : H5Dread(d, H5T_NATIVE_INT64, ms, fs, (hid_t)sps__h5_dxpl(j->n * 8), v)) >= 0;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (d >= 0 && H5Dclose(d) < 0) ok = 0;
    return ok ? 0 : -1;
}

static int rows_io(void *arg) {
    const rows_job_t *j = arg;
    hid_t f = (hid_t)sps__h5_fopen(j->path, j->write ? H5F_ACC_RDWR : H5F_ACC_RDONLY);
    if (f < 0) return sps__err_fail(SPS_EIO, "%s: cannot open", j->path);
    int rc = 0;
    for (int c = 0; rc == 0 && c < 5; c++)
        if (rows_col(f, ev_cols[c], j, j->cols[c]) < 0)
            rc = sps__err_fail(j->write ? sps__h5_fail() : SPS_EFORMAT,
                               "%s: cannot %s rows %llu..%llu of /%s", j->path,
                               j->write ? "write" : "read", (unsigned long long)j->first,
                               (unsigned long long)(j->first + j->n), ev_cols[c]);
    if (H5Fclose(f) < 0 && rc == 0) rc = sps__err_fail(SPS_EIO, "%s: cannot close", j->path);
    return rc;
}

int sps__part_rows(const char *path, uint64_t first, size_t n, int64_t *const *cols,
                   int write) {
    if (!n) return 0;
    rows_job_t j = {path, first, n, cols, write};
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    return sps__h5_quiet_end(&q, rows_io(&j));
}

int sps__part_events(const char *path, uint64_t *n) {
    sps__h5r_t *r = NULL;
    int trusted = sps__h5_guard_trusted();
    sps__h5_guard_trust(1);
    int rc = sps__h5r_open_index(&r, path);
    sps__h5_guard_trust(trusted);
    *n = 0;
    for (size_t i = 0; rc == 0 && i < r->nrows; i++) *n += r->rows[i].count;
    sps__h5r_free(r);
    return rc;
}
