/*
 * file.c -- sps_file_open / sps_file_close: an HDF5 recording as the
 * model every view of it sees, for the bindings (the Python faces read
 * files through it, never a second time with h5py).
 *
 * The model is the validating reader's (formats/h5_read.h): names, index,
 * decoded starts, durations, and the one fold's parents and self times.
 * This file only points the public struct at the reader's arrays, adds
 * each row's statistics over its calls and reads /counters beside them;
 * it derives nothing itself.
 */
#include "api/api.h"
#include "formats/h5_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a handle owns.  pub comes first: the handle the caller holds is
 * &pub, and sps_file_close finds the rest from it. */
typedef struct file {
    sps_file_t pub;
    sps__h5r_t *r;            /* the reader's model (events, names, meta) */
    sps__h5r_counters_t cnt;  /* /counters */
    sps__h5r_values_t vals;   /* /values */
    sps_file_row_t *rows;     /* the public rows, one per r->rows */
    sps_file_summary_t *summary; /* sps_file_open_index: r->summary, public */
} file_t;

/* Writes the formatted one-line reason to err[0..errlen) (when err is not
 * NULL) and returns rc. */
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    if (!err || !errlen) return rc;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

/* The public row of reader row i of a columnar file: count, total, min,
 * max and the fold's self total over its calls (sums wrap, as the
 * reader's flat view's do, so hostile durations cannot trap). */
static sps_file_row_t row_of_events(const sps__h5r_t *r, size_t i) {
    const sps__row_t *x = &r->rows[i];
    sps_file_row_t o = {x->file_region, x->rank, x->offset, x->count,
                        0, 0, 0, 0, x->exclusive_total};
    uint64_t total = 0, self = 0;
    for (uint64_t e = x->offset; e < x->offset + x->count; e++) {
        int64_t d = r->dur[e];
        if (e == x->offset || d < o.min_ns) o.min_ns = d;
        if (e == x->offset || d > o.max_ns) o.max_ns = d;
        total += (uint64_t)d;
        self += (uint64_t)r->self[e];
    }
    o.total_ns = (int64_t)total;
    o.self_ns = (int64_t)self;
    return o;
}

/* The public row of reader row i of an aggregate file: its statistics as
 * stored (no calls to fold). */
static sps_file_row_t row_of_aggregate(const sps__h5r_t *r, size_t i) {
    const sps__row_t *x = &r->rows[i];
    return (sps_file_row_t){x->file_region, x->rank, 0, x->count,
                            x->s.total, x->s.minimum, x->s.maximum,
                            x->exclusive_total, x->exclusive_total};
}

/* Builds f->rows from the reader's index.  0 or SPS_ENOMEM. */
static int rows_build(file_t *f) {
    const sps__h5r_t *r = f->r;
    f->rows = malloc((r->nrows ? r->nrows : 1) * sizeof *f->rows);
    if (!f->rows) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nrows; i++)
        f->rows[i] = r->aggregate ? row_of_aggregate(r, i) : row_of_events(r, i);
    return 0;
}

/* Points the public struct at what f owns. */
static void pub_fill(file_t *f) {
    const sps__h5r_t *r = f->r;
    const sps__h5r_counters_t *c = &f->cnt;
    sps_file_t *p = &f->pub;
    p->schema = r->schema;
    p->aggregate = r->aggregate;
    p->nested_by_ids = r->nested_by_ids;
    p->orphans = r->orphans;
    p->cycles = r->cycles;
    p->nnames = r->nnames;
    p->names = (const char *const *)r->names;
    p->nrows = r->nrows;
    p->rows = f->rows;
    p->nevents = r->aggregate ? 0 : r->nevents;
    p->start_ns = r->start;
    p->dur_ns = r->dur;
    p->self_ns = r->self;
    p->parent = r->parent;
    p->row = r->row;
    p->call_ids = r->call_ids;
    p->parent_ids = r->parent_ids;
    p->thread_ids = r->thread_ids;
    p->ncounters = c->nnames;
    p->counter_names = (const char *const *)c->names;
    p->nsamples = c->n;
    p->sample_counter = c->series;
    p->sample_rank = c->ranks;
    p->sample_t_ns = c->times;
    p->sample_value = c->values;
    p->samples_dropped = c->dropped;
    p->nattrs = r->meta.nattrs;
    p->attrs = r->meta.attrs;
    p->row_source_lines = r->src_lines;
    p->row_source_files = (const char *const *)r->src_files;
    p->row_source_texts = (const char *const *)r->src_texts;
    p->row_tags = (const char *const *)r->tags;
    p->row_event_metadata = (const char *const *)r->ev_meta;
    p->gpu_dur_ns = r->aggregate ? NULL : r->gpu_dur;
    p->task_ids = r->aggregate ? NULL : r->task_ids;
    p->await_ns = r->aggregate ? NULL : r->await_ns;
    p->thread_table = r->thread_table;
    p->task_table = r->task_table;
    p->has_summary_statistics = r->has_summary;
    p->rank_groups = r->rank_groups;
    p->nvalue_names = f->vals.nnames;
    p->value_names = (const char *const *)f->vals.names;
    p->value_nrows = f->vals.n;
    p->value_regions = (const char *const *)f->vals.regions;
    p->value_ranks = f->vals.ranks;
    p->value_calls = f->vals.calls;
    p->value_own = f->vals.own;
    p->value_self = f->vals.self;
}

int sps_file_open(const char *path, const sps_file_t **out, char *err,
                  size_t errlen) {
    if (out) *out = NULL;
    if (err && errlen) err[0] = 0;
    if (!path || !out) return fail(SPS_EINVAL, err, errlen, "no path or output");
    file_t *f = calloc(1, sizeof *f);
    if (!f) return fail(SPS_ENOMEM, err, errlen, "%s: out of memory", path);
    int rc = sps__h5r_open(&f->r, path);
    if (rc == 0) rc = sps__h5r_counters(path, &f->cnt);
    if (rc == 0) rc = sps__h5r_values(path, &f->vals);
    if (rc) {
        fail(rc, err, errlen, "%s", sps__err_msg());
        sps_file_close(&f->pub);
        return rc;
    }
    if (rows_build(f)) {
        sps_file_close(&f->pub);
        return fail(SPS_ENOMEM, err, errlen, "%s: out of memory", path);
    }
    pub_fill(f);
    *out = &f->pub;
    return 0;
}

void sps_file_close(const sps_file_t *pub) {
    if (!pub) return;
    file_t *f = (file_t *)(void *)pub; /* pub is the first member */
    sps__h5r_free(f->r);
    sps__h5r_counters_free(&f->cnt);
    sps__h5r_values_free(&f->vals);
    free(f->rows);
    free(f->summary);
    free(f);
}

/* Checks sps_fold_spans' arguments.  0 or SPS_EINVAL. */
static int fold_args_ok(const int64_t *start_ns, const int64_t *end_ns,
                        const int64_t *rank, size_t n, const int32_t *parent,
                        const int64_t *self_ns) {
    if (n == 0) return 0;
    if (!start_ns || !end_ns || !parent || !self_ns || n >= INT32_MAX) return SPS_EINVAL;
    for (size_t i = 0; rank && i < n; i++)
        if (rank[i] < 0 || rank[i] > (int64_t)UINT32_MAX) return SPS_EINVAL;
    return 0;
}

int sps_fold_spans(const int64_t *start_ns, const int64_t *end_ns,
                   const int64_t *rank, const int64_t *thread, size_t n,
                   int32_t *parent, int64_t *self_ns, uint64_t *overlaps) {
    if (overlaps) *overlaps = 0;
    int rc = fold_args_ok(start_ns, end_ns, rank, n, parent, self_ns);
    if (rc || n == 0) return rc;
    sps__ival_t *v = malloc(n * sizeof *v);
    sps__fold_out_t *out = malloc(n * sizeof *out);
    if (!v || !out) {
        free(v);
        free(out);
        return SPS_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (sps__ival_t){start_ns[i], end_ns[i] < start_ns[i] ? start_ns[i] : end_ns[i],
                             rank ? (uint32_t)rank[i] : 0, 0, thread ? thread[i] : 0, 0};
    rc = sps__fold_ivals(v, n, out, overlaps) ? SPS_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        parent[i] = out[i].parent < 0 ? -1 : (int32_t)out[i].parent;
        self_ns[i] = out[i].self;
    }
    free(v);
    free(out);
    return rc;
}

/* The public row of reader row i of a file read without its events: the
 * index's count, the stored statistics (summary_statistics, s, when
 * read; else zero) and the stored exclusive total. */
static sps_file_row_t row_of_index(const sps__h5r_t *r, size_t i) {
    const sps__row_t *x = &r->rows[i];
    const sps__summary_t *s = r->summary ? &r->summary[i] : NULL;
    return (sps_file_row_t){x->file_region, x->rank, x->offset, x->count,
                            s ? s->total : 0, s ? s->minimum : 0, s ? s->maximum : 0,
                            x->exclusive_total, x->exclusive_total};
}

/* Builds the public rows and summaries of an index-only read.  0 or
 * SPS_ENOMEM. */
static int index_rows_build(file_t *f) {
    const sps__h5r_t *r = f->r;
    f->rows = malloc((r->nrows ? r->nrows : 1) * sizeof *f->rows);
    if (!f->rows) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nrows; i++)
        f->rows[i] = r->aggregate ? row_of_aggregate(r, i) : row_of_index(r, i);
    if (!r->summary) return 0;
    f->summary = malloc((r->nrows ? r->nrows : 1) * sizeof *f->summary);
    if (!f->summary) return SPS_ENOMEM;
    for (size_t i = 0; i < r->nrows; i++) {
        const sps__summary_t *s = &r->summary[i];
        f->summary[i] = (sps_file_summary_t){s->total, s->minimum, s->maximum, s->first,
                                             s->last, s->start_minimum, s->end_maximum,
                                             s->gpu_count, s->gpu_total, s->mean, s->m2};
    }
    return 0;
}

int sps_file_open_index(const char *path, const sps_file_t **out, char *err,
                        size_t errlen) {
    if (out) *out = NULL;
    if (err && errlen) err[0] = 0;
    if (!path || !out) return fail(SPS_EINVAL, err, errlen, "no path or output");
    file_t *f = calloc(1, sizeof *f);
    if (!f) return fail(SPS_ENOMEM, err, errlen, "%s: out of memory", path);
    int rc = sps__h5r_open_index(&f->r, path);
    if (rc == 0 && f->r->schema == 1) /* its calls are all in memory: no summary */
        rc = sps__err_fail(SPS_EFORMAT, "%s: a schema 1 file has no index to read "
                           "alone; read it whole (sps_file_open)", path);
    if (rc) {
        fail(rc, err, errlen, "%s", sps__err_msg());
        sps_file_close(&f->pub);
        return rc;
    }
    if (index_rows_build(f)) {
        sps_file_close(&f->pub);
        return fail(SPS_ENOMEM, err, errlen, "%s: out of memory", path);
    }
    pub_fill(f);
    f->pub.nevents = 0; /* the events stay in the file */
    f->pub.row_summary = f->summary;
    *out = &f->pub;
    return 0;
}
