/* tu_h5.h -- reads a spanscope HDF5 file back with the plain HDF5 C API, for
 * the tests' independent checks.  Header-only (static inline), so test
 * programs that do not use it pay nothing. */
#ifndef SPS_TU_H5_H
#define SPS_TU_H5_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The 11-field summary_statistics compound, in memory. */
typedef struct tu_sum {
    int64_t total, minimum, maximum, first, last, start_minimum, end_maximum;
    uint64_t gpu_count;
    int64_t gpu_total;
    double mean, m2;
} tu_sum_t;

/* Everything a test looks at, loaded at once. */
typedef struct tu_h5 {
    int ok;                 /* 1 when every required part was read */
    char layout[32];        /* storage_layout attribute */
    int64_t schema;
    size_t nnames;
    char **names;           /* file region id -> name (UTF-8) */
    size_t nrows;
    uint32_t *region_ids;
    uint64_t *offsets, *counts;
    int64_t *excl;
    uint64_t *agg_counts;   /* aggregate mode only, else NULL */
    int64_t *agg_totals, *agg_excl;
    tu_sum_t *sum;
    size_t nev;
    int64_t *start_deltas, *durations, *call_ids, *parent_ids, *thread_ids;
} tu_h5_t;

/* Reads 1-D dataset `path` of f as native type mt into a malloc'd array;
 * *n receives its length.  NULL when absent (or empty: then *n == 0 and a
 * 1-element array is returned). */
static inline void *tu_h5_col(hid_t f, const char *path, hid_t mt, size_t esz,
                              size_t *n) {
    *n = 0;
    if (H5Lexists(f, path, H5P_DEFAULT) <= 0) return NULL;
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0) return NULL;
    hid_t s = H5Dget_space(d);
    hsize_t dim = 0;
    H5Sget_simple_extent_dims(s, &dim, NULL);
    void *buf = calloc(dim ? dim : 1, esz);
    if (buf && dim && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        buf = NULL;
    }
    H5Sclose(s);
    H5Dclose(d);
    *n = (size_t)dim;
    return buf;
}

static inline hid_t tu_h5_strtype(void) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* Scalar int64 attribute `name` of object `obj`; def when absent. */
static inline int64_t tu_h5_attr_i64(const char *file, const char *obj,
                                     const char *name, int64_t def) {
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return def;
    int64_t v = def;
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) {
        hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
        if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0) v = def;
        H5Aclose(a);
    }
    H5Fclose(f);
    return v;
}

/* Scalar string attribute into buf (""  when absent).  Returns 0 or -1. */
static inline int tu_h5_attr_str(hid_t f, const char *obj, const char *name,
                                 char *buf, size_t cap) {
    buf[0] = 0;
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) <= 0) return -1;
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ft = H5Aget_type(a);
    int rc = -1;
    if (H5Tis_variable_str(ft) > 0) {
        hid_t mt = tu_h5_strtype();
        char *s = NULL;
        if (H5Aread(a, mt, &s) >= 0 && s) {
            snprintf(buf, cap, "%s", s);
            H5free_memory(s);
            rc = 0;
        }
        H5Tclose(mt);
    } else {
        size_t sz = H5Tget_size(ft);
        char *s = calloc(sz + 1, 1);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, sz + 1);
        if (H5Aread(a, mt, s) >= 0) {
            snprintf(buf, cap, "%s", s);
            rc = 0;
        }
        H5Tclose(mt);
        free(s);
    }
    H5Tclose(ft);
    H5Aclose(a);
    return rc;
}

static inline void tu_h5_free(tu_h5_t *h) {
    if (!h) return;
    for (size_t i = 0; h->names && i < h->nnames; i++) free(h->names[i]);
    free(h->names);
    void *p[] = {h->region_ids, h->offsets, h->counts, h->excl, h->agg_counts,
                 h->agg_totals, h->agg_excl, h->sum, h->start_deltas,
                 h->durations, h->call_ids, h->parent_ids, h->thread_ids};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    free(h);
}

/* Loads file `path`; NULL when it cannot be opened.  Check ->ok. */
static inline tu_h5_t *tu_h5_load(const char *path) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return NULL;
    tu_h5_t *h = calloc(1, sizeof *h);
    size_t n;
    tu_h5_attr_str(f, "/", "storage_layout", h->layout, sizeof h->layout);
    h->schema = -1;
    if (H5Aexists_by_name(f, "/", "scope_profiler_schema", H5P_DEFAULT) > 0) {
        hid_t a = H5Aopen_by_name(f, "/", "scope_profiler_schema", H5P_DEFAULT,
                                  H5P_DEFAULT);
        H5Aread(a, H5T_NATIVE_INT64, &h->schema);
        H5Aclose(a);
    }
    /* names */
    int ok = 1;
    if (H5Lexists(f, "/region_table", H5P_DEFAULT) > 0 &&
        H5Lexists(f, "/region_table/names", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(f, "/region_table/names", H5P_DEFAULT);
        hid_t s = H5Dget_space(d);
        hsize_t dim = 0;
        H5Sget_simple_extent_dims(s, &dim, NULL);
        char **raw = calloc(dim ? dim : 1, sizeof *raw);
        hid_t mt = tu_h5_strtype();
        if (dim && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) ok = 0;
        h->nnames = (size_t)dim;
        h->names = calloc(dim ? dim : 1, sizeof *h->names);
        for (size_t i = 0; i < dim; i++) {
            h->names[i] = strdup(raw[i] ? raw[i] : "");
            if (raw[i]) H5free_memory(raw[i]);
        }
        free(raw);
        H5Tclose(mt);
        H5Sclose(s);
        H5Dclose(d);
    } else {
        ok = 0;
    }
    const char *I = "/rank_region_index/";
    char p[128];
#define TU_COL(field, name, mt, T)                                             \
    do {                                                                       \
        snprintf(p, sizeof p, "%s%s", I, name);                               \
        h->field = (T *)tu_h5_col(f, p, mt, sizeof(T), &n);                    \
    } while (0)
    TU_COL(region_ids, "region_ids", H5T_NATIVE_UINT32, uint32_t);
    h->nrows = n;
    if (!h->region_ids) ok = 0;
    TU_COL(offsets, "event_offsets", H5T_NATIVE_UINT64, uint64_t);
    if (!h->offsets || n != h->nrows) ok = 0;
    TU_COL(counts, "event_counts", H5T_NATIVE_UINT64, uint64_t);
    if (!h->counts || n != h->nrows) ok = 0;
    TU_COL(excl, "exclusive_totals", H5T_NATIVE_INT64, int64_t);
    if (!h->excl || n != h->nrows) ok = 0;
    TU_COL(agg_counts, "aggregate_counts", H5T_NATIVE_UINT64, uint64_t);
    TU_COL(agg_totals, "aggregate_totals", H5T_NATIVE_INT64, int64_t);
    TU_COL(agg_excl, "aggregate_exclusives", H5T_NATIVE_INT64, int64_t);
#undef TU_COL
    {
        hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(tu_sum_t));
#define TU_F(name, T)                                                          \
    H5Tinsert(ct, #name, offsetof(tu_sum_t, name), T)
        TU_F(total, H5T_NATIVE_INT64);
        TU_F(minimum, H5T_NATIVE_INT64);
        TU_F(maximum, H5T_NATIVE_INT64);
        TU_F(first, H5T_NATIVE_INT64);
        TU_F(last, H5T_NATIVE_INT64);
        TU_F(start_minimum, H5T_NATIVE_INT64);
        TU_F(end_maximum, H5T_NATIVE_INT64);
        TU_F(gpu_count, H5T_NATIVE_UINT64);
        TU_F(gpu_total, H5T_NATIVE_INT64);
        TU_F(mean, H5T_NATIVE_DOUBLE);
        TU_F(m2, H5T_NATIVE_DOUBLE);
#undef TU_F
        snprintf(p, sizeof p, "%ssummary_statistics", I);
        h->sum = (tu_sum_t *)tu_h5_col(f, p, ct, sizeof(tu_sum_t), &n);
        if (!h->sum || n != h->nrows) ok = 0;
        H5Tclose(ct);
    }
    h->start_deltas = (int64_t *)tu_h5_col(f, "/events/start_deltas",
                                           H5T_NATIVE_INT64, 8, &h->nev);
    if (!h->start_deltas) ok = 0;
    const char *evc[] = {"durations", "call_ids", "parent_ids", "thread_ids"};
    int64_t **dst[] = {&h->durations, &h->call_ids, &h->parent_ids,
                       &h->thread_ids};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "/events/%s", evc[i]);
        *dst[i] = (int64_t *)tu_h5_col(f, p, H5T_NATIVE_INT64, 8, &n);
        if (i == 0 && (!*dst[i] || n != h->nev)) ok = 0;
        if (*dst[i] && n != h->nev) ok = 0;
    }
    H5Fclose(f);
    h->ok = ok;
    return h;
}

/* File region id of name, -1 when absent. */
static inline long tu_h5_name(const tu_h5_t *h, const char *name) {
    for (size_t i = 0; i < h->nnames; i++)
        if (strcmp(h->names[i], name) == 0) return (long)i;
    return -1;
}

/* Index row of name, -1 when it has none. */
static inline long tu_h5_row(const tu_h5_t *h, const char *name) {
    long id = tu_h5_name(h, name);
    if (id < 0) return -1;
    for (size_t i = 0; i < h->nrows; i++)
        if (h->region_ids[i] == (uint32_t)id) return (long)i;
    return -1;
}

/* Number of events of name in the file (0 when it has no row). */
static inline uint64_t tu_h5_count(const tu_h5_t *h, const char *name) {
    long r = tu_h5_row(h, name);
    return r < 0 ? 0 : h->counts[r];
}

/* Sum of every row's event count. */
static inline uint64_t tu_h5_total_count(const tu_h5_t *h) {
    uint64_t s = 0;
    for (size_t i = 0; i < h->nrows; i++) s += h->counts[i];
    return s;
}

/* Absolute start (ns) of event k of row r: cumulative start_deltas. */
static inline void tu_h5_starts(const tu_h5_t *h, long r, int64_t *out) {
    int64_t acc = 0;
    for (uint64_t k = 0; k < h->counts[r]; k++) {
        acc += h->start_deltas[h->offsets[r] + k];
        out[k] = acc;
    }
}

/* Absolute starts of every event (row by row: cumulative start_deltas),
 * malloc'd. */
static inline int64_t *tu_h5_all_starts(const tu_h5_t *h) {
    int64_t *s = calloc(h->nev ? h->nev : 1, sizeof *s);
    for (size_t r = 0; r < h->nrows; r++)
        if (h->counts[r]) tu_h5_starts(h, (long)r, s + h->offsets[r]);
    return s;
}

typedef struct tu_idpos { int64_t id; size_t pos; } tu_idpos_t;
static inline int tu_idpos_cmp(const void *a, const void *b) {
    const tu_idpos_t *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Checks the tree columns: rows tile /events, starts non-decreasing per row,
 * durations >= 0, call ids unique, every parent id -1 or the id of a call
 * on the same thread whose interval contains the child's, one level up.
 * Returns 0, or -1 with a message in msg. */
static inline int tu_h5_check_tree(const tu_h5_t *h, char *msg, size_t cap) {
    msg[0] = 0;
    uint64_t tot = 0;
    for (size_t r = 0; r < h->nrows; r++) {
        if (h->offsets[r] + h->counts[r] > h->nev) {
            snprintf(msg, cap, "row %zu out of range", r);
            return -1;
        }
        tot += h->counts[r];
    }
    if (tot != h->nev) {
        snprintf(msg, cap, "rows hold %llu events, /events has %zu",
                 (unsigned long long)tot, h->nev);
        return -1;
    }
    if (!h->call_ids || !h->parent_ids || !h->thread_ids) {
        snprintf(msg, cap, "no tree columns");
        return -1;
    }
    int64_t *st = tu_h5_all_starts(h);
    int rc = 0;
    for (size_t r = 0; r < h->nrows && !rc; r++)
        for (uint64_t k = 1; k < h->counts[r]; k++)
            if (st[h->offsets[r] + k] < st[h->offsets[r] + k - 1]) {
                snprintf(msg, cap, "row %zu: starts not sorted at %llu", r,
                         (unsigned long long)k);
                rc = -1;
                break;
            }
    tu_idpos_t *ix = calloc(h->nev ? h->nev : 1, sizeof *ix);
    for (size_t e = 0; e < h->nev; e++) ix[e] = (tu_idpos_t){h->call_ids[e], e};
    qsort(ix, h->nev, sizeof *ix, tu_idpos_cmp);
    for (size_t e = 1; !rc && e < h->nev; e++)
        if (ix[e].id == ix[e - 1].id) {
            snprintf(msg, cap, "call id %lld twice", (long long)ix[e].id);
            rc = -1;
        }
    for (size_t e = 0; !rc && e < h->nev; e++) {
        if (h->durations[e] < 0) {
            snprintf(msg, cap, "event %zu: duration %lld", e,
                     (long long)h->durations[e]);
            rc = -1;
            break;
        }
        int64_t pid = h->parent_ids[e];
        if (pid == -1) continue;
        tu_idpos_t key = {pid, 0};
        tu_idpos_t *f = bsearch(&key, ix, h->nev, sizeof *ix, tu_idpos_cmp);
        if (!f) {
            snprintf(msg, cap, "event %zu: parent id %lld not in the file", e,
                     (long long)pid);
            rc = -1;
            break;
        }
        size_t p = f->pos;
        if (h->thread_ids[p] != h->thread_ids[e] || st[p] > st[e] ||
            st[p] + h->durations[p] < st[e] + h->durations[e] ||
            h->call_ids[p] >= h->call_ids[e]) {
            snprintf(msg, cap,
                     "event %zu [%lld +%lld, thread %lld, id %lld] not inside "
                     "its parent %zu [%lld +%lld, thread %lld, id %lld]",
                     e, (long long)st[e], (long long)h->durations[e],
                     (long long)h->thread_ids[e], (long long)h->call_ids[e], p,
                     (long long)st[p], (long long)h->durations[p],
                     (long long)h->thread_ids[p], (long long)h->call_ids[p]);
            rc = -1;
        }
    }
    free(ix);
    free(st);
    return rc;
}

#define TU_CHECK_TREE(h)                                                       \
    do {                                                                       \
        char tu_msg_[512];                                                     \
        if (tu_h5_check_tree((h), tu_msg_, sizeof tu_msg_))                   \
            fail_msg("tree check: %s", tu_msg_);                               \
    } while (0)

#endif
