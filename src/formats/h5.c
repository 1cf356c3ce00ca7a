/*
 * h5.c -- the HDF5 writer: scope-profiler's schema 3, columnar or aggregate.
 *
 * The file it writes (every dataset one-dimensional):
 *
 *   /                       attrs scope_profiler_schema=3, storage_layout
 *   /region_table/names     vlen UTF-8, file region id -> name
 *   /rank_region_index/...  one row per (rank, region): region_ids u4,
 *                           ranks u4, event_offsets u8, event_counts u8,
 *                           source_lines i8, exclusive_totals i8,
 *                           source_files, source_texts, tags,
 *                           event_metadata (vlen UTF-8), summary_statistics
 *                           (compound, 11 fields), and in aggregate mode
 *                           aggregate_counts u8 + aggregate_{totals,
 *                           minimums,maximums,exclusives} i8
 *   /events/...             start_deltas, durations (i8), and with the tree
 *                           call_ids, parent_ids, thread_ids (i8)
 *   /metadata               attributes only
 *   /thread_table/...       one row per thread, when there are threads
 *
 * Usage: sps__h5w_open() creates the file and every dataset at its final
 * size; sps__h5w_rows() / sps__h5w_durations() fill /events in any order;
 * sps__h5w_close() writes the rest and closes.
 *
 * The event columns are assembled chunk by chunk and compressed on worker
 * threads by h5_events.c (see there); this file creates the datasets and
 * writes everything else.
 *
 * The writer never prints:
 * HDF5's automatic error printing is switched off for the duration of each
 * call here and restored afterwards, so a host that uses HDF5 itself keeps
 * its own settings.
 */
#include "formats/formats.h"
#include "formats/h5_read.h" /* the HDF5 plumbing */
#include "formats/h5_device.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* memfd_create */
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define SPS__H5_SCHEMA 3
#define SPS__H5_DEFAULT_THRESHOLD 16384
#define SPS__H5_DEFLATE_LEVEL 4

enum { EV_START, EV_DUR, EV_CALL, EV_PARENT, EV_THREAD, EV_N };
static const char *const ev_names[EV_N] = {
    "start_deltas", "durations", "call_ids", "parent_ids", "thread_ids"};

struct sps__h5w {
    hid_t file;
    hid_t ev[EV_N];            /* event columns, H5I_INVALID_HID if absent */
    int ncols;                 /* event columns written: 2, or EV_N (tree) */
    sps__evcols_t *cols;       /* assembles and writes /events (h5_events.c) */
    sps__h5res_t res;          /* disk space reserved ahead of the writes */
    const sps__layout_t *lay;  /* borrowed, see sps__h5w_open */
    size_t nnames, nrows, nthreads; /* shape fixed at open */
    uint64_t nevents;
    int aggregate, with_tree;
    uint64_t ev_chunk;         /* rows per chunk of the event columns, 0: contiguous */
    char *path;                /* owned copy, for abort's unlink */
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

/* H5Ewalk2 callback: the errno that HDF5's sec2 driver put into the
 * description of a failed read/write ("..., errno = 28, error message =
 * ..."), into *(int *)data; stops at the first. */
static herr_t stack_errno(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    const char *p = e && e->desc ? strstr(e->desc, "errno = ") : NULL;
    if (!p) return 0;
    *(int *)data = atoi(p + 8);
    return 1;
}

/* Whether e says the disk is full or failing. */
static int disk_errno(int e) {
    return e == ENOSPC || e == EDQUOT || e == EIO || e == EFBIG;
}

/* The error code for a failed HDF5 call: SPS_EIO when the operating system
 * said the disk is full or failing, SPS_EHDF5 otherwise.  The cause is
 * errno (cleared before each HDF5 call here) or, when libhdf5 called
 * something after the failed write that changed errno, the errno of the
 * write as HDF5's error stack records it; it is noted (error.c) for the
 * faces: ENOSPC, not just "I/O error". */
int sps__h5_fail(void) {
    int e = errno;
    if (!disk_errno(e)) {
        int from_stack = 0;
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, stack_errno, &from_stack);
        if (disk_errno(from_stack)) e = from_stack;
    }
    if (!disk_errno(e)) return SPS_EHDF5;
    sps__err_os_note(e);
    errno = e;
    return SPS_EIO;
}

#define h5_close sps__h5_close /* h5_read.c */
#define h5_fail sps__h5_fail

/* Abandons the open file f after a failed write: its descriptor (the sec2
 * driver's) is swapped for an anonymous memory file, so that whatever
 * libhdf5 still writes while closing (dirty metadata, cached chunks)
 * succeeds and every handle can be freed.  Without this, libhdf5 1.10's
 * H5Fclose fails the same way as the write did, keeps the file in its ID
 * table, and crashes in H5_term_library at exit (H5F__close_cb).  The
 * caller removes the file from disk. */
static void h5_discard(hid_t f) {
    void *h = NULL;
    hid_t fapl = f >= 0 ? H5Fget_access_plist(f) : H5I_INVALID_HID;
    int sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2; /* its handle: an int fd */
    h5_close(&fapl);
    if (!sec2 || H5Fget_vfd_handle(f, H5P_DEFAULT, &h) < 0 || !h) return;
    int mem = memfd_create("spanscope-discard", MFD_CLOEXEC);
    if (mem < 0) return; /* no way around: the close may fail */
    (void)dup2(mem, *(int *)h);
    close(mem);
    /* a flush that failed half-way leaves libhdf5's cache in a state its
     * close refuses (measured: H5Fclose fails even with the memory file
     * under it); finishing the flush, into memory now, clears it */
    (void)H5Fflush(f, H5F_SCOPE_LOCAL);
}

/* Ends the file *f opened for writing, whose writes so far gave rc:
 * flushes it (rc 0), then closes it with its descriptor swapped away
 * (h5_discard), success or not.  After a successful flush the file on disk
 * is complete: libhdf5 1.10's flush releases the space aggregators and
 * writes every dirty entry, the superblock with the end of allocation
 * included; what its close writes after that (free-space bookkeeping of a
 * non-persistent file) is not needed, and a failure there (EIO, a budget
 * ending) would leave the file open and crash the process at exit.
 * Always closes; returns rc, or the flush's error. */
static int h5_file_end(hid_t *f, int rc) {
    if (*f < 0) return rc;
    if (rc == 0 && H5Fflush(*f, H5F_SCOPE_LOCAL) < 0) rc = h5_fail();
    h5_discard(*f);
    if (H5Fclose(*f) < 0 && rc == 0) rc = h5_fail();
    *f = H5I_INVALID_HID;
    return rc;
}

static void reserve_init(sps__h5w_t *w);

/* A new variable-length UTF-8 string type (caller closes it), or -1. */
static hid_t str_type(void) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 ||
        H5Tset_cset(t, H5T_CSET_UTF8) < 0 ||
        H5Tset_strpad(t, H5T_STR_NULLTERM) < 0)
        h5_close(&t);
    return t;
}

/* Column element kinds: one file type and one memory type each. */
typedef enum { K_U32, K_U64, K_I64, K_I8, K_STR, K_SUMMARY, K_F64 } kind_t;

/* The summary compound with its 11 fields, laid out at base + the field's
 * offset in sps__summary_t within elements of `size` bytes (memory), or
 * packed little-endian (file, when file != 0).  Caller closes it.  Shared
 * with the reader (h5_read.h), which reads summary_statistics with it. */
int64_t sps__h5_summary_type(int file, size_t base, size_t size) {
    static const struct { const char *name; size_t off; int k; } f[] = {
        {"total", offsetof(sps__summary_t, total), 0},
        {"minimum", offsetof(sps__summary_t, minimum), 0},
        {"maximum", offsetof(sps__summary_t, maximum), 0},
        {"first", offsetof(sps__summary_t, first), 0},
        {"last", offsetof(sps__summary_t, last), 0},
        {"start_minimum", offsetof(sps__summary_t, start_minimum), 0},
        {"end_maximum", offsetof(sps__summary_t, end_maximum), 0},
        {"gpu_count", offsetof(sps__summary_t, gpu_count), 1},
        {"gpu_total", offsetof(sps__summary_t, gpu_total), 0},
        {"mean", offsetof(sps__summary_t, mean), 2},
        {"m2", offsetof(sps__summary_t, m2), 2}};
    size_t nf = sizeof f / sizeof f[0];
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? nf * 8 : size);
    for (size_t i = 0; t >= 0 && i < nf; i++) {
        hid_t m = f[i].k == 0 ? (file ? H5T_STD_I64LE : H5T_NATIVE_INT64)
                : f[i].k == 1 ? (file ? H5T_STD_U64LE : H5T_NATIVE_UINT64)
                              : (file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE);
        if (H5Tinsert(t, f[i].name, file ? i * 8 : base + f[i].off, m) < 0)
            h5_close(&t);
    }
    return t;
}

/* A new type for kind k, in the file (file != 0) or in memory; for
 * K_SUMMARY the memory type reads the summary out of an sps__row_t array.
 * Caller closes it; -1 on failure. */
static hid_t kind_type(kind_t k, int file) {
    switch (k) {
    case K_U32: return H5Tcopy(file ? H5T_STD_U32LE : H5T_NATIVE_UINT32);
    case K_U64: return H5Tcopy(file ? H5T_STD_U64LE : H5T_NATIVE_UINT64);
    case K_I64: return H5Tcopy(file ? H5T_STD_I64LE : H5T_NATIVE_INT64);
    case K_F64: return H5Tcopy(file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE);
    case K_I8: return H5Tcopy(file ? H5T_STD_I8LE : H5T_NATIVE_INT8);
    case K_STR: return str_type();
    case K_SUMMARY:
        return sps__h5_summary_type(file, offsetof(sps__row_t, s), sizeof(sps__row_t));
    }
    return H5I_INVALID_HID;
}

/* Creates the 1-D dataset loc/name of n elements of kind k with creation
 * properties dcpl (H5P_DEFAULT: contiguous) and returns it open (caller
 * closes it), or -1. */
static hid_t col_create(hid_t loc, const char *name, kind_t k, uint64_t n,
                        hid_t dcpl, hid_t dapl) {
    hsize_t dim = (hsize_t)n;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    hid_t type = kind_type(k, 1);
    hid_t d = H5I_INVALID_HID;
    if (space >= 0 && type >= 0)
        d = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, dapl);
    h5_close(&type);
    h5_close(&space);
    return d;
}

/* Creates every column named in names[0..n) with kind k[i] and len elements
 * under loc, closing them again.  Returns 0 or -1. */
static int cols_create(hid_t loc, const char *const *names, const kind_t *k,
                       size_t n, uint64_t len) {
    for (size_t i = 0; i < n; i++) {
        hid_t d = col_create(loc, names[i], k[i], len, H5P_DEFAULT,
                             H5P_DEFAULT);
        if (d < 0) return -1;
        h5_close(&d);
    }
    return 0;
}

/* Writes the whole of dataset loc/name from buf, elements of kind k in
 * memory.  Returns 0 or -1. */
static int col_write(hid_t loc, const char *name, kind_t k, const void *buf) {
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t t = kind_type(k, 0);
    int rc = -1;
    if (d >= 0 && t >= 0) {
        /* the transfer list sized to the column (sps__h5_dxpl: libhdf5
         * zeroes a 1 MiB conversion buffer for every write that converts,
         * strings and the summary compound among them) */
        hid_t s = H5Dget_space(d);
        hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
        size_t sz = H5Tget_size(t);
        h5_close(&s);
        hid_t x = n >= 0 ? (hid_t)sps__h5_dxpl((size_t)n * 2 * (sz > 16 ? sz : 16)) : H5P_DEFAULT;
        rc = H5Dwrite(d, t, H5S_ALL, H5S_ALL, x, buf) < 0 ? -1 : 0;
    }
    h5_close(&t);
    h5_close(&d);
    return rc;
}

/* Writes a scalar attribute name = *v of kind k (K_I64 or K_STR, where v
 * is a const char **) on loc.  Returns 0 or -1. */
static int attr_put(hid_t loc, const char *name, kind_t k, const void *v) {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t ft = kind_type(k, 1), mt = kind_type(k, 0);
    hid_t a = H5I_INVALID_HID;
    int rc = -1;
    if (space >= 0 && ft >= 0 && mt >= 0)
        a = H5Acreate2(loc, name, ft, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) rc = H5Awrite(a, mt, v) < 0 ? -1 : 0;
    h5_close(&a);
    h5_close(&mt);
    h5_close(&ft);
    h5_close(&space);
    return rc;
}

/* Scalar int64 attribute. */
static int attr_i64(hid_t loc, const char *name, int64_t v) {
    return attr_put(loc, name, K_I64, &v);
}

/* Scalar vlen UTF-8 string attribute; NULL is written as "". */
static int attr_str(hid_t loc, const char *name, const char *s) {
    const char *p = s ? s : "";
    return attr_put(loc, name, K_STR, &p);
}

/* Creates group loc/name and closes it.  Returns 0 or -1. */
static int group_make(hid_t loc, const char *name) {
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return -1;
    h5_close(&g);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* open                                                                      */
/* ------------------------------------------------------------------------ */

static const char *const idx_names[] = {
    "region_ids", "ranks", "event_offsets", "event_counts", "source_lines",
    "exclusive_totals", "source_files", "source_texts", "tags",
    "event_metadata", "summary_statistics"};
static const kind_t idx_kinds[] = {
    K_U32, K_U32, K_U64, K_U64, K_I64, K_I64, K_STR, K_STR, K_STR, K_STR,
    K_SUMMARY};
static const char *const agg_names[] = {
    "aggregate_counts", "aggregate_totals", "aggregate_minimums",
    "aggregate_maximums", "aggregate_exclusives"};
static const kind_t agg_kinds[] = {K_U64, K_I64, K_I64, K_I64, K_I64};
static const char *const thr_names[] = {
    "ranks", "index", "ident", "native_id", "daemon", "start_ns", "end_ns",
    "cpu_ns", "name"};
static const kind_t thr_kinds[] = {
    K_U32, K_I64, K_I64, K_I64, K_I8, K_I64, K_I64, K_I64, K_STR};
/* scope-profiler's task table: numbers, then strings (ranks prepended) */
static const char *const task_names[] = {
    "ranks", "index", "thread_index", "created_ns", "done_ns", "steps", "running_ns",
    "suspended_ns", "kind", "name", "coro_name"};
static const kind_t task_kinds[] = {
    K_U32, K_I64, K_I64, K_I64, K_I64, K_I64, K_I64, K_I64, K_STR, K_STR, K_STR};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Non-zero when this HDF5 can both encode deflate and shuffle. */
static int can_compress(void) {
    unsigned int cfg = 0;
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0 ||
        H5Zfilter_avail(H5Z_FILTER_SHUFFLE) <= 0)
        return 0;
    if (H5Zget_filter_info(H5Z_FILTER_DEFLATE, &cfg) < 0) return 0;
    return (cfg & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0;
}

/* Non-zero when n events reach the layout's compression threshold. */
static int wants_compression(const sps__layout_t *lay, uint64_t n) {
    long th = lay->compress_threshold;
    if (th < 0 || n == 0) return 0;
    if (th == 0) th = SPS__H5_DEFAULT_THRESHOLD;
    return n >= (uint64_t)th;
}

/* The creation property list for the event columns: chunked with shuffle +
 * deflate when compressing, contiguous otherwise.  Caller closes it. */
static hid_t event_dcpl(const sps__layout_t *lay, uint64_t n) {
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    if (p < 0 || !wants_compression(lay, n) || !can_compress()) return p;
    hsize_t chunk = n < SPS__H5_CHUNK ? (hsize_t)n : SPS__H5_CHUNK;
    if (H5Pset_chunk(p, 1, &chunk) < 0 || H5Pset_shuffle(p) < 0 ||
        H5Pset_deflate(p, SPS__H5_DEFLATE_LEVEL) < 0)
        h5_close(&p);
    return p;
}

/* Sets the file format of the objects created next: on != 0 for the
 * event columns, 0 after them.  They are created in the HDF5 1.10
 * format, whose chunked datasets of a fixed size index their chunks in a
 * fixed array instead of the 1.8 format's B-tree: at 64 threads x 2e6
 * calls the writer's peak RSS was 6-7 MiB lower (the tree's nodes stay in
 * libhdf5's memory while the chunks are written; docs/benchmarks.md).
 * libhdf5 >= 1.10 and h5py >= 2.8 read them.  The rest of the file keeps
 * the earliest format: its superblock has no "open for writing" flags
 * (h5_file_end's discarded close would leave them set), and its
 * attributes stay compact (libhdf5 1.10.8's H5Ocopy crashes on vlen
 * attributes in dense storage, which the 1.10 format uses past 8
 * attributes: /metadata has more).  The switch writes to the file; when
 * it fails the caller must fail the write (going on, libhdf5 1.10 left
 * property lists open and looped at exit: test_disk_faults' budget
 * sweep).  0 or -1. */
static int events_format(hid_t file, int on) {
    herr_t e = on ? H5Fset_libver_bounds(file, H5F_LIBVER_V110, H5F_LIBVER_V110)
                  : H5Fset_libver_bounds(file, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    return e < 0 ? -1 : 0;
}

/* Creates /events and its columns, keeping them open in w->ev, and the
 * assembler that writes them (h5_events.c): chunks of SPS__H5_CHUNK rows,
 * compressed, or for contiguous columns the same unit of writing. */
static int events_create(sps__h5w_t *w) {
    hid_t g = H5Gcreate2(w->file, "events", H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    hid_t dcpl = event_dcpl(w->lay, w->nevents);
    int rc = g >= 0 && dcpl >= 0 ? 0 : -1;
    if (rc == 0 && events_format(w->file, 1) < 0) rc = -1;
    int chunked = rc == 0 && H5Pget_layout(dcpl) == H5D_CHUNKED;
    for (int i = 0; rc == 0 && i < w->ncols; i++) {
        w->ev[i] = col_create(g, ev_names[i], K_I64, w->nevents, dcpl,
                              H5P_DEFAULT);
        if (w->ev[i] < 0) rc = -1;
    }
    if (events_format(w->file, 0) < 0) rc = -1;
    h5_close(&dcpl);
    h5_close(&g);
    if (rc == 0) {
        uint64_t ch = w->nevents < SPS__H5_CHUNK ? w->nevents : SPS__H5_CHUNK;
        w->ev_chunk = chunked ? ch : 0;
        char *dup = strdup(w->path);
        int64_t ds[EV_N];
        for (int i = 0; i < w->ncols; i++) ds[i] = w->ev[i];
        rc = dup ? sps__evcols_open(&w->cols, ds, w->ncols, EV_DUR, w->nevents,
                                    ch ? ch : 1, chunked, dirname(dup), w->nrows)
                 : SPS_ENOMEM;
        free(dup);
        if (rc) errno = rc == SPS_EIO ? EIO : ENOMEM;
        rc = rc ? -1 : 0;
    }
    if (rc == 0) sps__evcols_reserve(w->cols, &w->res);
    /* A chunk may wait for a busy worker where memory allows it: without
     * that the writing thread compressed ~12 % of a 10^8-call finalize's
     * chunks itself while the worker idled behind it (docs/benchmarks.md).
     * The waiting chunk is one more buffer (1.25 MiB); with many threads
     * the merged pass's readers (~48 KiB a thread) already use that room
     * under the 64 MiB bound, so there the writer lets none wait. */
    if (rc == 0) sps__evcols_queue(w->cols, w->nthreads <= 16);
    return rc;
}

/* Creates the columns names[0..n) (kinds k[]) of len elements in the
 * existing group `group` of the file.  Returns 0 or -1. */
static int group_cols(sps__h5w_t *w, const char *group,
                      const char *const *names, const kind_t *k, size_t n,
                      uint64_t len) {
    hid_t g = H5Gopen2(w->file, group, H5P_DEFAULT);
    int rc = g < 0 ? -1 : cols_create(g, names, k, n, len);
    h5_close(&g);
    return rc;
}

/* Creates the root attributes, the groups and every dataset. */
static int layout_create(sps__h5w_t *w) {
    static const char *const names[] = {"names"};
    static const kind_t names_k[] = {K_STR};
    const char *layout = w->aggregate ? "aggregate" : "columnar";
    int rc = attr_i64(w->file, "scope_profiler_schema", SPS__H5_SCHEMA);
    if (rc == 0) rc = attr_str(w->file, "storage_layout", layout);
    if (rc == 0) rc = group_make(w->file, "region_table");
    if (rc == 0) rc = group_make(w->file, "rank_region_index");
    if (rc == 0) rc = group_make(w->file, "metadata");
    if (rc == 0 && w->nthreads) rc = group_make(w->file, "thread_table");
    if (rc == 0 && w->lay->ntasks) rc = group_make(w->file, "task_table");
    if (rc == 0) rc = events_create(w);
    if (rc == 0)
        rc = group_cols(w, "region_table", names, names_k, 1, w->nnames);
    if (rc == 0)
        rc = group_cols(w, "rank_region_index", idx_names, idx_kinds,
                        NELEM(idx_names), w->nrows);
    if (rc == 0 && w->aggregate)
        rc = group_cols(w, "rank_region_index", agg_names, agg_kinds,
                        NELEM(agg_names), w->nrows);
    if (rc == 0 && w->nthreads)
        rc = group_cols(w, "thread_table", thr_names, thr_kinds,
                        NELEM(thr_names), w->nthreads);
    if (rc == 0 && w->lay->ntasks)
        rc = group_cols(w, "task_table", task_names, task_kinds, NELEM(task_names),
                        w->lay->ntasks);
    return rc;
}

/* Checks the pointers and sizes of a layout.  Returns 0 or SPS_EINVAL. */
static int layout_check(const sps__layout_t *lay) {
    if ((lay->nnames && !lay->names) || (lay->nrows && !lay->rows) ||
        (lay->nthreads && !lay->threads) || (lay->ntasks && !lay->tasks) ||
        (lay->nextra && (!lay->extra_keys || !lay->extra_values)))
        return SPS_EINVAL;
    if (lay->aggregate && lay->nevents) return SPS_EINVAL;
    if (lay->nevents > (uint64_t)INT64_MAX) return SPS_EINVAL;
    return 0;
}

/* The error code for a file that could not be created: SPS_EPATH when the
 * operating system refused the path, else as h5_fail(). */
static int create_fail(void) {
    switch (errno) {
    case ENOENT: case ENOTDIR: case EACCES: case EPERM: case EROFS:
    case EISDIR: case ENAMETOOLONG: case ELOOP:
        sps__err_os_note(errno);
        return SPS_EPATH;
    default: return h5_fail();
    }
}

/* Frees w and whatever it still holds open; the file stays on disk. */
static void w_free(sps__h5w_t *w) {
    sps__evcols_free(w->cols);
    for (int i = 0; i < EV_N; i++) h5_close(&w->ev[i]);
    h5_close(&w->file);
    free(w->path);
    free(w);
}

/* Creates the file at path (truncating any file there) and every dataset
 * of the layout at its final size: /events/... with lay->nevents rows,
 * /rank_region_index/... with lay->nrows, /region_table/names with
 * lay->nnames, /thread_table/... with lay->nthreads (if any).
 *
 * lay is borrowed, not copied: it and the arrays it points to must stay
 * valid until sps__h5w_close or sps__h5w_abort.  Its contents (rows, the
 * metadata fields) may still change until close, which reads them; its
 * sizes (nnames, nrows, nevents, nthreads, aggregate, with_tree) may not.
 *
 * On success *out owns the open file; the caller must end it with
 * sps__h5w_close or sps__h5w_abort.  Returns 0, SPS_EINVAL (bad layout),
 * SPS_ENOMEM, SPS_EPATH (the path cannot be created), SPS_EIO or
 * SPS_EHDF5; on failure nothing is left on disk and *out is NULL. */
int sps__h5_open(void) { return H5open() < 0 ? SPS_EIO : 0; }

int sps__h5w_open(sps__h5w_t **out, const char *path,
                  const sps__layout_t *lay) {
    sps__h5_quiet_t q;
    if (out) *out = NULL;
    if (!out || !path || !*path || !lay) return SPS_EINVAL;
    int rc = layout_check(lay);
    if (rc) return rc;
    sps__h5w_t *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return SPS_ENOMEM;
    }
    for (int i = 0; i < EV_N; i++) w->ev[i] = H5I_INVALID_HID;
    w->lay = lay;
    w->nnames = lay->nnames;
    w->nrows = lay->nrows;
    w->nthreads = lay->nthreads;
    w->nevents = lay->nevents;
    w->aggregate = lay->aggregate != 0;
    w->with_tree = lay->with_tree != 0;
    w->ncols = w->with_tree ? EV_N : EV_DUR + 1;
    sps__h5_quiet_begin(&q);
    errno = 0;
    w->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (w->file < 0) {
        rc = create_fail();
        w->file = H5I_INVALID_HID;
        w_free(w);
        return sps__h5_quiet_end(&q, rc);
    }
    reserve_init(w);
    if ((rc = sps__h5_reserve(&w->res, 0)) != 0 || layout_create(w) < 0) {
        if (!rc) rc = h5_fail();
        sps__h5w_abort(w);
        return sps__h5_quiet_end(&q, rc);
    }
    *out = w;
    return sps__h5_quiet_end(&q, 0);
}

/* ------------------------------------------------------------------------ */
/* rows and durations                                                        */
/* ------------------------------------------------------------------------ */

/* Writes n consecutive rows of /events starting at row `first`: one value
 * per column from each array (borrowed, only read during the call).
 * start_deltas and durations are required; call_ids, parent_ids and
 * thread_ids are required when the layout has with_tree and ignored
 * otherwise.  Rows may be written in any order, each once; a negative
 * duration is written as 0 and means that the row's duration comes later,
 * once, through sps__h5w_durations (the chunk holding the row is written
 * out when all its rows and durations are in; see h5_events.c).
 * Returns 0, SPS_EINVAL (NULL array, rows out of range, a row written
 * twice), SPS_ENOMEM, SPS_EIO or SPS_EHDF5.  After a failure the writer
 * can only be closed or aborted. */
int sps__h5w_rows(sps__h5w_t *w, uint64_t first, size_t n,
                  const int64_t *start_deltas, const int64_t *durations,
                  const int64_t *call_ids, const int64_t *parent_ids,
                  const int64_t *thread_ids) {
    const int64_t *col[EV_N] = {start_deltas, durations, call_ids, parent_ids,
                                thread_ids};
    sps__h5_quiet_t q;
    if (!w) return SPS_EINVAL;
    if (n == 0) return 0;
    if (first > w->nevents || n > w->nevents - first) return SPS_EINVAL;
    for (int i = 0; i < w->ncols; i++)
        if (!col[i]) return SPS_EINVAL;
    sps__h5_quiet_begin(&q);
    errno = 0;
    return sps__h5_quiet_end(&q, sps__evcols_rows(w->cols, first, n, col));
}

/* Writes dur[i] into /events/durations at row pos[i], for i < n (arrays
 * borrowed): the durations announced by negative ones in sps__h5w_rows,
 * each once, in any order.  Returns 0, SPS_EINVAL (NULL arrays, a position
 * out of range or not announced), SPS_ENOMEM, SPS_EIO or SPS_EHDF5. */
int sps__h5w_durations(sps__h5w_t *w, size_t n, const uint64_t *pos,
                       const int64_t *dur) {
    sps__h5_quiet_t q;
    int rc = 0;
    if (!w || (n && (!pos || !dur))) return SPS_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (pos[i] >= w->nevents) return SPS_EINVAL;
    sps__h5_quiet_begin(&q);
    errno = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = sps__evcols_duration(w->cols, pos[i], dur[i] < 0 ? 0 : dur[i]);
    return sps__h5_quiet_end(&q, rc);
}

/* ------------------------------------------------------------------------ */
/* close: names, index, metadata, threads                                    */
/* ------------------------------------------------------------------------ */

/* Scratch space for one column of the index or thread table. */
typedef struct scratch {
    void *num;         /* n elements of 8 bytes */
    const char **str;  /* n string pointers */
} scratch_t;

/* Writes /region_table/names; NULL names are written as "". */
static int names_write(sps__h5w_t *w, hid_t g, scratch_t *s) {
    for (size_t i = 0; i < w->nnames; i++)
        s->str[i] = w->lay->names[i] ? w->lay->names[i] : "";
    return col_write(g, "names", K_STR, s->str);
}

/* Which field of a row an index column takes; the aggregate mode writes
 * event_offsets and event_counts as 0 (it has no /events rows). */
typedef enum {
    F_REGION, F_RANK, F_OFFSET, F_COUNT, F_LINE, F_EXCL, F_AGG_COUNT,
    F_TOTAL, F_MIN, F_MAX
} field_t;

/* The value of field f of row r (as 64 raw bits). */
static uint64_t row_field(const sps__h5w_t *w, const sps__row_t *r,
                          field_t f) {
    switch (f) {
    case F_REGION: return r->file_region;
    case F_RANK: return r->rank;
    case F_OFFSET: return w->aggregate ? 0 : r->offset;
    case F_COUNT: return w->aggregate ? 0 : r->count;
    case F_LINE:
        return (uint64_t)(w->lay->info ? w->lay->info[r->file_region].line : -1);
    case F_EXCL: return (uint64_t)r->exclusive_total;
    case F_AGG_COUNT: return r->count;
    case F_TOTAL: return (uint64_t)r->s.total;
    case F_MIN: return (uint64_t)r->s.minimum;
    case F_MAX: return (uint64_t)r->s.maximum;
    }
    return 0;
}

/* Writes index column `name` (kind k: K_U32, K_U64 or K_I64) from field f
 * of every row. */
static int field_write(sps__h5w_t *w, hid_t g, const char *name, kind_t k,
                       field_t f, scratch_t *s) {
    for (size_t i = 0; i < w->nrows; i++) {
        uint64_t v = row_field(w, &w->lay->rows[i], f);
        if (k == K_U32) ((uint32_t *)s->num)[i] = (uint32_t)v;
        else memcpy((char *)s->num + i * 8, &v, 8);
    }
    return col_write(g, name, k, s->num);
}

/* The string columns of the index that come from the regions' attributes
 * (sps__rinfo_t), with scope-profiler's value where one is unknown. */
typedef enum { I_FILE, I_TEXT, I_TAGS, I_META } info_col_t;

/* Row r's value of column c. */
static const char *info_value(const sps__h5w_t *w, const sps__row_t *r, info_col_t c) {
    const sps__rinfo_t *i = w->lay->info ? &w->lay->info[r->file_region] : NULL;
    switch (c) {
    case I_FILE: return i && i->file ? i->file : "";
    case I_TEXT: return i && i->text ? i->text : "";
    case I_TAGS: return i && i->tags ? i->tags : "[]";
    case I_META: /* one dict per call written, or none at all */
        return i && i->md && !w->aggregate && i->md_calls == r->count ? i->md : "[]";
    }
    return "";
}

/* Writes index column c of every row. */
static int info_write(sps__h5w_t *w, hid_t g, info_col_t c, scratch_t *s) {
    static const char *const names[] = {"source_files", "source_texts", "tags",
                                        "event_metadata"};
    for (size_t i = 0; i < w->nrows; i++) s->str[i] = info_value(w, &w->lay->rows[i], c);
    return col_write(g, names[c], K_STR, s->str);
}

/* Writes every /rank_region_index column. */
static int index_write(sps__h5w_t *w, hid_t g, scratch_t *s) {
    static const struct { const char *name; kind_t k; field_t f; } num[] = {
        {"region_ids", K_U32, F_REGION}, {"ranks", K_U32, F_RANK},
        {"event_offsets", K_U64, F_OFFSET}, {"event_counts", K_U64, F_COUNT},
        {"source_lines", K_I64, F_LINE}, {"exclusive_totals", K_I64, F_EXCL}};
    static const struct { const char *name; kind_t k; field_t f; } agg[] = {
        {"aggregate_counts", K_U64, F_AGG_COUNT},
        {"aggregate_totals", K_I64, F_TOTAL},
        {"aggregate_minimums", K_I64, F_MIN},
        {"aggregate_maximums", K_I64, F_MAX},
        {"aggregate_exclusives", K_I64, F_EXCL}};
    size_t n = w->nrows;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < NELEM(num); i++)
        rc = field_write(w, g, num[i].name, num[i].k, num[i].f, s);
    for (size_t i = 0; rc == 0 && w->aggregate && i < NELEM(agg); i++)
        rc = field_write(w, g, agg[i].name, agg[i].k, agg[i].f, s);
    static const info_col_t strs[] = {I_FILE, I_TEXT, I_TAGS, I_META};
    for (size_t i = 0; rc == 0 && i < NELEM(strs); i++)
        rc = info_write(w, g, strs[i], s);
    if (rc == 0 && n)
        rc = col_write(g, "summary_statistics", K_SUMMARY, w->lay->rows);
    return rc;
}

/* Which field of a thread a thread_table column takes. */
typedef enum {
    T_RANK, T_INDEX, T_IDENT, T_NATIVE, T_DAEMON, T_START, T_END, T_CPU
} tfield_t;

/* Writes thread_table column `name` from field f of every thread. */
static int tfield_write(sps__h5w_t *w, hid_t g, const char *name, tfield_t f,
                        scratch_t *s) {
    for (size_t i = 0; i < w->nthreads; i++) {
        const sps__thread_info_t *t = &w->lay->threads[i];
        int64_t v = f == T_INDEX ? t->index : f == T_IDENT ? t->ident
                  : f == T_NATIVE ? t->native_id : f == T_START ? t->start_ns
                  : f == T_END ? t->end_ns : f == T_CPU ? t->cpu_ns : 0;
        if (f == T_RANK) ((uint32_t *)s->num)[i] = (uint32_t)w->lay->rank;
        else if (f == T_DAEMON) ((int8_t *)s->num)[i] = 0;
        else ((int64_t *)s->num)[i] = v;
    }
    kind_t k = f == T_RANK ? K_U32 : f == T_DAEMON ? K_I8 : K_I64;
    return col_write(g, name, k, s->num);
}

/* Writes every /thread_table column (columns of scope-profiler's lane
 * table: the events' thread_ids index its `index` column). */
static int threads_write(sps__h5w_t *w, hid_t g, scratch_t *s) {
    int rc = 0;
    for (int f = T_RANK; rc == 0 && f <= T_CPU; f++)
        rc = tfield_write(w, g, thr_names[f], (tfield_t)f, s);
    for (size_t i = 0; rc == 0 && i < w->nthreads; i++)
        s->str[i] = w->lay->threads[i].name ? w->lay->threads[i].name : "";
    if (rc == 0) rc = col_write(g, "name", K_STR, s->str);
    return rc;
}

/* Writes every /task_table column: one row per task of the layout. */
static int tasks_write(sps__h5w_t *w, hid_t g, scratch_t *s) {
    const sps__layout_t *l = w->lay;
    int rc = 0;
    for (size_t c = 0; rc == 0 && c < NELEM(task_names); c++) {
        for (size_t i = 0; i < l->ntasks; i++) {
            const sps_task_t *t = &l->tasks[i];
            const int64_t v[] = {0, t->index, t->thread_index, t->created_ns, t->done_ns,
                                 t->steps, t->running_ns, t->suspended_ns};
            if (c == 0) ((uint32_t *)s->num)[i] = (uint32_t)l->rank;
            else if (c < NELEM(v)) ((int64_t *)s->num)[i] = v[c];
            else s->str[i] = c == 8 ? t->kind : c == 9 ? t->name : t->coro_name;
        }
        rc = col_write(g, task_names[c], task_kinds[c],
                       task_kinds[c] == K_STR ? (const void *)s->str : s->num);
    }
    return rc;
}

/* Formats the wall-clock time of the finalize as ISO-8601 UTC with
 * microseconds ("2026-05-09T07:35:25.123456+00:00", as Python's
 * datetime.isoformat) into buf. */
static void iso_time(const sps__layout_t *lay, char *buf, size_t cap) {
    struct timespec ts;
    int64_t ns;
    if (lay->wall_anchor_ns > 0 && lay->finalize_time_ns > 0) {
        ns = lay->wall_anchor_ns + (lay->finalize_time_ns - lay->mono_anchor_ns);
    } else {
        clock_gettime(CLOCK_REALTIME, &ts);
        ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    }
    time_t sec = (time_t)(ns / 1000000000);
    long us = (long)(ns % 1000000000) / 1000;
    if (us < 0) { us += 1000000; sec -= 1; }
    struct tm tm;
    char day[40];
    if (!gmtime_r(&sec, &tm) ||
        !strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm)) {
        snprintf(buf, cap, "1970-01-01T00:00:00+00:00");
        return;
    }
    snprintf(buf, cap, "%s.%06ld+00:00", day, us);
}

/* OMP_NUM_THREADS as a number (its first entry), or -1 when unset. */
static int64_t omp_threads(void) {
    const char *e = getenv("OMP_NUM_THREADS");
    if (!e || !*e) return -1;
    char *end;
    long v = strtol(e, &end, 10);
    return end == e || v <= 0 ? -1 : v;
}

/* Writes the host description attributes on g (platform, uname,
 * hostname). */
static int host_attrs(hid_t g) {
    struct utsname u;
    char plat[3 * sizeof u.release], full[6 * sizeof u.release];
    if (uname(&u) < 0) memset(&u, 0, sizeof u);
    snprintf(plat, sizeof plat, "%s-%s-%s", u.sysname, u.release, u.machine);
    snprintf(full, sizeof full, "%s %s %s %s %s", u.sysname, u.nodename,
             u.release, u.version, u.machine);
    int rc = attr_str(g, "platform", plat);
    if (rc == 0) rc = attr_str(g, "uname", full);
    if (rc == 0) rc = attr_str(g, "hostname", u.nodename);
    return rc;
}

/* Writes every /metadata attribute. */
static int metadata_write(sps__h5w_t *w, hid_t g) {
    const sps__layout_t *l = w->lay;
    const char *ver = "spanscope " SPS_VERSION_STRING;
    char ts[64];
    iso_time(l, ts, sizeof ts);
    const struct { const char *name; int64_t v; } ints[] = {
        {"start_time_ns", l->start_time_ns},
        {"finalize_time_ns", l->finalize_time_ns},
        {"pid", (int64_t)getpid()},
        {"mpi_size", l->size}, {"rank", l->rank},
        {"total_cores", (int64_t)sysconf(_SC_NPROCESSORS_ONLN)},
        {"omp_num_threads", omp_threads()},
        {"threads", (int64_t)l->nthreads},
        {"wall_anchor_ns", l->wall_anchor_ns},
        {"mono_anchor_ns", l->mono_anchor_ns},
        {"dropped_events", (int64_t)l->dropped},
        {"misuse_count", (int64_t)l->misuse},
        {"open_calls", (int64_t)l->open_calls}};
    int rc = attr_str(g, "timestamp", ts);
    /* a run without a label stores none (scope-profiler's files: readers
     * then name the run by the file's stem) */
    if (rc == 0 && l->label && l->label[0]) rc = attr_str(g, "label", l->label);
    for (size_t i = 0; rc == 0 && i < NELEM(ints); i++)
        rc = attr_i64(g, ints[i].name, ints[i].v);
    if (rc == 0 && l->spill_error) { /* what the dropped events lost to */
        rc = attr_str(g, "spill_error", l->spill_error);
        if (rc == 0) rc = attr_i64(g, "spill_errno", l->spill_errno);
    }
    if (rc == 0) rc = host_attrs(g);
    if (rc == 0) rc = attr_str(g, "spanscope_version", SPS_VERSION_STRING);
    if (rc == 0) rc = attr_str(g, "scope_profiler_version", ver);
    if (rc == 0)
        rc = attr_str(g, "clock_source",
                      l->clock_source ? l->clock_source : "unknown");
    if (rc == 0 && l->has_clock_offset) /* MPI clock alignment (docs/mpi.md) */
        rc = attr_i64(g, "clock_offset_ns", l->clock_offset_ns);
    if (rc == 0 && l->has_clock_offset)
        rc = attr_i64(g, "clock_offset_error_ns", l->clock_offset_error_ns);
    for (size_t i = 0; rc == 0 && i < l->nextra; i++) /* the writer's own win */
        if (H5Aexists(g, l->extra_keys[i]) == 0) rc = attr_str(g, l->extra_keys[i],
                                                               l->extra_values[i]);
    return rc;
}

/* Opens group `name` of the file and runs fn on it.  Returns fn's result
 * or -1. */
static int in_group(sps__h5w_t *w, const char *name,
                    int (*fn)(sps__h5w_t *, hid_t, scratch_t *),
                    scratch_t *s) {
    hid_t g = H5Gopen2(w->file, name, H5P_DEFAULT);
    if (g < 0) return -1;
    int rc = fn(w, g, s);
    h5_close(&g);
    return rc;
}

/* in_group's adapter for metadata_write. */
static int metadata_fn(sps__h5w_t *w, hid_t g, scratch_t *s) {
    (void)s;
    return metadata_write(w, g);
}

/* Checks that the layout still has the shape it had at open and that every
 * row names a region of the table.  Returns 0 or SPS_EINVAL. */
static int shape_check(const sps__h5w_t *w) {
    const sps__layout_t *l = w->lay;
    if (l->nnames != w->nnames || l->nrows != w->nrows ||
        l->nthreads != w->nthreads || l->nevents != w->nevents ||
        (l->aggregate != 0) != w->aggregate ||
        (l->with_tree != 0) != w->with_tree || layout_check(l))
        return SPS_EINVAL;
    for (size_t i = 0; i < w->nrows; i++)
        if (l->rows[i].file_region >= w->nnames) return SPS_EINVAL;
    return 0;
}

/* Writes the names, index, thread table and metadata.  Returns 0,
 * SPS_ENOMEM, SPS_EIO or SPS_EHDF5. */
static int tables_write(sps__h5w_t *w) {
    size_t n = w->nrows > w->nnames ? w->nrows : w->nnames;
    if (w->nthreads > n) n = w->nthreads;
    if (w->lay->ntasks > n) n = w->lay->ntasks;
    scratch_t s = {malloc((n ? n : 1) * 8), malloc((n ? n : 1) * sizeof(char *))};
    int rc = s.num && s.str ? 0 : SPS_ENOMEM;
    if (rc == 0 && in_group(w, "region_table", names_write, &s) < 0)
        rc = h5_fail();
    if (rc == 0 && in_group(w, "rank_region_index", index_write, &s) < 0)
        rc = h5_fail();
    if (rc == 0 && w->nthreads &&
        in_group(w, "thread_table", threads_write, &s) < 0)
        rc = h5_fail();
    if (rc == 0 && w->lay->ntasks && in_group(w, "task_table", tasks_write, &s) < 0)
        rc = h5_fail();
    if (rc == 0 && in_group(w, "metadata", metadata_fn, &s) < 0)
        rc = h5_fail();
    free(s.num);
    free(s.str);
    return rc;
}

#define RESERVE_STEP (8u << 20) /* bytes reserved at a time, at least */

/* Starts reserving for w's file: its descriptor, and slack for what
 * closing writes (the index, names, threads, metadata: a generous
 * estimate from the layout, at least 1 MiB). */
static void reserve_init(sps__h5w_t *w) {
    void *h = NULL;
    w->res.file = w->file;
    w->res.fd = -1;
    w->res.end = 0;
    w->res.slack = (1u << 20) +
                   512 * (uint64_t)(w->nrows + w->nnames + w->nthreads + w->lay->ntasks);
    if (H5Fget_vfd_handle(w->file, H5P_DEFAULT, &h) >= 0 && h) w->res.fd = *(int *)h;
}

int sps__h5_reserve(sps__h5res_t *r, uint64_t bytes) {
    haddr_t eoa = 0;
    if (r->fd < 0 || H5Fget_eoa((hid_t)r->file, &eoa) < 0) return 0;
    uint64_t want = (uint64_t)eoa + bytes + r->slack;
    if (want <= r->end) return 0;
    uint64_t to = want + (r->end ? RESERVE_STEP : 0); /* small files stay small */
    if (fallocate(r->fd, 0, (off_t)r->end, (off_t)(to - r->end)) == 0) {
        r->end = to;
        return 0;
    }
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) { /* not here */
        r->fd = -1;
        return 0;
    }
    if (r->end < (uint64_t)eoa + bytes) { /* the data does not fit */
        sps__err_os_note(errno); /* ENOSPC, EDQUOT, EFBIG... */
        return SPS_EIO;
    }
    return 0; /* the data fits, only the slack is short: let it be */
}

/* The file reserved past its data is cut back to its end of allocation
 * (HDF5 leaves the length alone when it wrote everything it allocated). */
static void reserve_trim(const char *path, uint64_t eoa) {
    struct stat st;
    if (eoa && stat(path, &st) == 0 && (uint64_t)st.st_size > eoa) (void)truncate(path, (off_t)eoa);
}

/* Flushes the file to stable storage (fsync), so that a rename that
 * follows publishes complete data.  Returns 0 or SPS_EIO. */
static int file_sync(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sps__err_os_note(errno);
        return SPS_EIO;
    }
    int rc = fsync(fd) < 0 && errno != EINVAL && errno != EROFS ? SPS_EIO : 0;
    if (rc) sps__err_os_note(errno);
    close(fd);
    return rc;
}

/* Writes the event chunks not yet written (h5_events.c), then
 * /region_table/names, /rank_region_index/..., /thread_table/... and the
 * /metadata attributes from the layout given to open, then flushes,
 * closes and fsyncs the file.  Always frees w (NULL is a no-op returning
 * SPS_EINVAL).  On failure the (incomplete) file is removed.  Returns 0,
 * SPS_EINVAL (the layout's shape changed since open, or a row names a
 * region >= nnames), SPS_ENOMEM, SPS_EIO or SPS_EHDF5. */
int sps__h5w_close(sps__h5w_t *w) {
    sps__h5_quiet_t q;
    if (!w) return SPS_EINVAL;
    int rc = shape_check(w);
    if (rc) {
        sps__h5w_abort(w);
        return rc;
    }
    sps__h5_quiet_begin(&q);
    errno = 0;
    rc = sps__evcols_finish(w->cols);
    sps__evcols_free(w->cols);
    w->cols = NULL;
    if (rc == 0) rc = sps__h5_reserve(&w->res, 0); /* the tables' room */
    if (rc == 0) rc = tables_write(w);
    /* everything (cached chunks too) reaches the disk while the datasets
     * are open, so that a failure can still abandon the file cleanly */
    if (rc == 0 && H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0) rc = h5_fail();
    if (rc) h5_discard(w->file);
    for (int i = 0; i < EV_N; i++)
        if (w->ev[i] >= 0 && H5Dclose(w->ev[i]) < 0 && rc == 0) rc = h5_fail();
    for (int i = 0; i < EV_N; i++) w->ev[i] = H5I_INVALID_HID;
    haddr_t eoa = 0;
    if (rc == 0 && H5Fget_eoa(w->file, &eoa) < 0) eoa = 0;
    rc = h5_file_end(&w->file, rc);
    if (rc == 0) reserve_trim(w->path, (uint64_t)eoa);
    if (rc == 0) rc = file_sync(w->path);
    if (rc) unlink(w->path);
    w_free(w);
    return sps__h5_quiet_end(&q, rc);
}

/* Closes the file without finishing it, removes it from disk and frees w.
 * NULL is a no-op. */
void sps__h5w_abort(sps__h5w_t *w) {
    sps__h5_quiet_t q;
    if (!w) return;
    sps__h5_quiet_begin(&q);
    h5_discard(w->file); /* nothing more of it reaches the disk */
    for (int i = 0; i < EV_N; i++) h5_close(&w->ev[i]);
    h5_close(&w->file);
    unlink(w->path);
    w_free(w);
    sps__h5_quiet_end(&q, 0);
}

/* The rows of each event chunk when the event columns are chunked
 * (compressed), else 0 (formats.h). */
uint64_t sps__h5w_event_chunk(const sps__h5w_t *w) { return w->ev_chunk; }

/* Stores an already compressed chunk of event column col (formats.h). */
int sps__h5w_chunk_raw(sps__h5w_t *w, int col, uint64_t k, uint32_t filter_mask,
                       const void *buf, size_t len) {
    if (col < 0 || col >= w->ncols || w->ev[col] < 0 || !buf) return SPS_EINVAL;
    uint64_t ch = w->ev_chunk;
    if (!ch || k >= (w->nevents + ch - 1) / ch) return SPS_EINVAL;
    int rc = sps__h5_reserve(&w->res, (uint64_t)len + 4096); /* + the chunk index's growth */
    hsize_t off = (hsize_t)(k * ch);
    errno = 0; /* HDF5's printing is off: the caller's (a merge) */
    if (!rc && H5Dwrite_chunk(w->ev[col], H5P_DEFAULT, filter_mask, &off, len, buf) < 0)
        rc = sps__h5_fail();
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Extra tables (src/ext/mpi.c: /communication, /mpi_clock; docs/mpi.md)    */
/* ------------------------------------------------------------------------ */

/* Adds group `group` to the closed file at path: n rows of an optional
 * vlen UTF-8 column strname (skipped when strcol is NULL) and ncols int64
 * columns colname[i] = cols[i][0..n), and a string attribute description.
 * Returns 0 or SPS_EHDF5 / SPS_EIO. */
int sps__h5_add_table(const char *path, const char *group, const char *desc,
                      size_t n, const char *strname, const char *const *strcol,
                      size_t ncols, const char *const *colname,
                      const int64_t *const *cols) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    errno = 0;
    int rc = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    if (g < 0) rc = h5_fail();
    if (rc == 0 && strcol) {
        hid_t d = col_create(g, strname, K_STR, n, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0) rc = h5_fail();
        h5_close(&d);
        if (rc == 0 && n && col_write(g, strname, K_STR, strcol) < 0) rc = h5_fail();
    }
    for (size_t i = 0; rc == 0 && i < ncols; i++) {
        hid_t d = col_create(g, colname[i], K_I64, n, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0) rc = h5_fail();
        h5_close(&d);
        if (rc == 0 && n && col_write(g, colname[i], K_I64, cols[i]) < 0) rc = h5_fail();
    }
    if (rc == 0 && desc && attr_str(g, "description", desc) < 0) rc = h5_fail();
    h5_close(&g);
    rc = h5_file_end(&f, rc);
    return sps__h5_quiet_end(&q, rc);
}

/* Adds /counters to the closed file at path: /counters/names[nnames] and,
 * per sample, series (index into names), ranks, times_ns (CLOCK_MONOTONIC)
 * and values (float64), plus the attribute dropped (samples lost to the
 * per-period cap).  scope-profiler's readers ignore the group.  Returns 0
 * or SPS_EHDF5 / SPS_EIO. */
int sps__h5_add_counters(const char *path, size_t nnames, const char *const *names,
                         size_t n, const int64_t *series, const int64_t *ranks,
                         const int64_t *t_ns, const double *values, uint64_t dropped) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    errno = 0;
    int rc = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gcreate2(f, "counters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    if (g < 0) rc = h5_fail();
    static const char *const cols[] = {"names", "series", "ranks", "times_ns", "values"};
    const kind_t kinds[] = {K_STR, K_I64, K_I64, K_I64, K_F64};
    const void *bufs[] = {names, series, ranks, t_ns, values};
    for (size_t i = 0; rc == 0 && i < 5; i++) {
        uint64_t len = i == 0 ? nnames : n;
        hid_t d = col_create(g, cols[i], kinds[i], len, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0) rc = h5_fail();
        h5_close(&d);
        if (rc == 0 && len && col_write(g, cols[i], kinds[i], bufs[i]) < 0) rc = h5_fail();
    }
    if (rc == 0 && attr_i64(g, "dropped", (int64_t)dropped) < 0) rc = h5_fail();
    if (rc == 0 && attr_str(g, "description", "counter samples: series indexes names; "
                            "times_ns is CLOCK_MONOTONIC") < 0)
        rc = h5_fail();
    h5_close(&g);
    rc = h5_file_end(&f, rc);
    /* the writer's fsync came before these changes: sync again, or the
     * caller's rename would publish a file whose counters are not on disk */
    if (rc == 0) rc = file_sync(path);
    return sps__h5_quiet_end(&q, rc);
}

int sps__h5_add_samples(const char *path, const sps__h5_samples_t *x) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    errno = 0;
    int rc = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gcreate2(f, "samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    if (g < 0) rc = h5_fail();
    uint64_t nst = x->nstacks ? x->stack_offsets[x->nstacks] : 0;
    const struct { const char *name; kind_t k; uint64_t len; const void *buf; } c[] = {
        {"times_ns", K_I64, x->n, x->times_ns}, {"threads", K_I64, x->n, x->threads},
        {"tids", K_I64, x->n, x->tids}, {"ranks", K_I64, x->n, x->ranks},
        {"regions", K_I64, x->n, x->regions}, {"call_ids", K_I64, x->n, x->call_ids},
        {"stacks", K_I64, x->n, x->stacks}, {"weights", K_I64, x->n, x->weights},
        {"stack_offsets", K_I64, x->nstacks + 1, x->stack_offsets},
        {"stack_frames", K_I64, nst, x->stack_frames},
        {"frame_functions", K_STR, x->nframes, x->functions},
        {"frame_files", K_STR, x->nframes, x->files},
        {"frame_modules", K_STR, x->nframes, x->modules},
        {"frame_lines", K_I64, x->nframes, x->lines},
        {"frame_kinds", K_I64, x->nframes, x->kinds},
        {"frame_addresses", K_I64, x->nframes, x->addresses}};
    static const int64_t zero = 0;
    for (size_t i = 0; rc == 0 && i < sizeof c / sizeof c[0]; i++) {
        const void *buf = c[i].buf ? c[i].buf : &zero; /* stack_offsets of no stacks */
        hid_t d = col_create(g, c[i].name, c[i].k, c[i].len, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0) rc = h5_fail();
        h5_close(&d);
        if (rc == 0 && c[i].len && col_write(g, c[i].name, c[i].k, buf) < 0) rc = h5_fail();
    }
    if (rc == 0 && (attr_i64(g, "hz", x->hz) < 0 || attr_i64(g, "lost", x->lost) < 0))
        rc = h5_fail();
    if (rc == 0 && attr_str(g, "description", "stack samples (docs/sampling.md): a sample "
                            "belongs to the innermost span open on its thread at its time "
                            "(regions, call_ids); stacks index stack_offsets, whose ranges of "
                            "stack_frames list frame indexes innermost first") < 0)
        rc = h5_fail();
    h5_close(&g);
    rc = h5_file_end(&f, rc);
    if (rc == 0) rc = file_sync(path);
    return sps__h5_quiet_end(&q, rc);
}

/* A row's statistics as the index stores them, from the model's
 * accumulator (ns). */
void sps__summary_of(const sps__acc_t *a, sps__summary_t *o) {
    sps_stats_t st;
    sps__acc_stats(a, &st);
    o->total = st.total_ns;
    o->minimum = st.min_ns;
    o->maximum = st.max_ns;
    o->first = (int64_t)a->first_dur;
    o->last = (int64_t)a->last_dur;
    o->start_minimum = a->count ? (int64_t)a->first_start : 0;
    o->end_maximum = a->count ? (int64_t)a->end_max : 0;
    o->gpu_count = 0;
    o->gpu_total = 0;
    o->mean = st.mean_ns;
    o->m2 = st.var_ns2 * (double)(a->count > 1 ? a->count - 1 : 0);
}


/* ------------------------------------------------------------------------ */
/* Per-call task columns (track_async)                                      */
/* ------------------------------------------------------------------------ */

/* qsort orders: by (thread, start) for "which task held this thread", by
 * (task, start) for "how long did this task run inside a call". */
static int by_thread(const void *a, const void *b) {
    const sps_task_step_t *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}
static int by_task(const void *a, const void *b) {
    const sps_task_step_t *x = a, *y = b;
    if (x->task != y->task) return x->task < y->task ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* The task whose step on thread thr (in s[0..n), by_thread order) holds
 * time t, or -1. */
static int64_t task_at(const sps_task_step_t *s, size_t n, int64_t thr, int64_t t) {
    size_t lo = 0, hi = n; /* the first step after (thr, t) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].thread < thr || (s[mid].thread == thr && s[mid].start_ns <= t)) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    const sps_task_step_t *c = &s[lo - 1];
    return c->thread == thr && t < c->end_ns ? c->task : -1;
}

/* The first index of s[lo..hi) for which past(s[i]) holds (past is
 * monotone there), by bisection. */
#define FIRST(lo, hi, past)                                                    \
    do {                                                                       \
        while (lo < hi) {                                                      \
            size_t mid_ = lo + (hi - lo) / 2;                                  \
            if (past(mid_)) hi = mid_;                                         \
            else lo = mid_ + 1;                                                \
        }                                                                      \
    } while (0)

/* How long task ran inside [a, b): its steps (s[0..n), by_task order, P the
 * prefix sums of their durations, P[0] = 0) clipped to the interval.  A
 * task's steps never overlap, so the ones between the first ending after a
 * and the last starting before b count whole but for their clipped ends. */
static int64_t ran_inside(const sps_task_step_t *s, const int64_t *P, size_t n, int64_t task,
                          int64_t a, int64_t b) {
    size_t t0 = 0, t1 = n;
#define TASK_GE(i) (s[i].task >= task)
#define TASK_GT(i) (s[i].task > task)
    FIRST(t0, t1, TASK_GE);
    size_t e0 = t0, e1 = n;
    FIRST(e0, e1, TASK_GT);
    size_t i = t0, ihi = e0;
#define ENDS_AFTER_A(k) (s[k].end_ns > a)
#define STARTS_AT_B(k) (s[k].start_ns >= b)
    FIRST(i, ihi, ENDS_AFTER_A);
    size_t j = i, jhi = e0;
    FIRST(j, jhi, STARTS_AT_B);
#undef TASK_GE
#undef TASK_GT
#undef ENDS_AFTER_A
#undef STARTS_AT_B
    if (i >= j) return 0;
    int64_t sum = P[j] - P[i];
    if (s[i].start_ns < a) sum -= a - s[i].start_ns;
    if (s[j - 1].end_ns > b) sum -= s[j - 1].end_ns - b;
    return sum > 0 ? sum : 0;
}

/* Reads 1-D int64 (or, with u64, uint64 read as int64) dataset path of f
 * into a malloc'd array of n elements.  0, or -1. */
static int read_i64(hid_t f, const char *path, size_t n, int64_t **out) {
    *out = malloc((n ? n : 1) * sizeof **out);
    hid_t d = *out ? H5Dopen2(f, path, H5P_DEFAULT) : H5I_INVALID_HID;
    int ok = d >= 0 && (!n || H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, (hid_t)sps__h5_dxpl(n * 8),
                                      *out) >= 0);
    h5_close(&d);
    return ok ? 0 : -1;
}

/* The task and await columns of every event of the open file f (nev
 * events in nrows index rows), into tasks and waits; steps as given. */
static int task_cols_compute(hid_t f, size_t nrows, size_t nev, sps_task_step_t *steps,
                             size_t nsteps, int64_t *tasks, int64_t *waits) {
    int64_t *off = NULL, *cnt = NULL, *delta = NULL, *dur = NULL, *thr = NULL, *P = NULL;
    sps_task_step_t *bt = malloc((nsteps ? nsteps : 1) * sizeof *bt);
    P = malloc((nsteps + 1) * sizeof *P);
    int rc = bt && P ? 0 : SPS_ENOMEM;
    if (!rc && (read_i64(f, "/rank_region_index/event_offsets", nrows, &off) ||
                read_i64(f, "/rank_region_index/event_counts", nrows, &cnt) ||
                read_i64(f, "/events/start_deltas", nev, &delta) ||
                read_i64(f, "/events/durations", nev, &dur) ||
                read_i64(f, "/events/thread_ids", nev, &thr)))
        rc = h5_fail();
    if (!rc) {
        memcpy(bt, steps, nsteps * sizeof *bt);
        qsort(steps, nsteps, sizeof *steps, by_thread);
        qsort(bt, nsteps, sizeof *bt, by_task);
        P[0] = 0;
        for (size_t i = 0; i < nsteps; i++) P[i + 1] = P[i] + (bt[i].end_ns - bt[i].start_ns);
        for (size_t r = 0; r < nrows; r++) {
            int64_t start = 0; /* schema 3: each row's starts are gaps from the last */
            for (int64_t k = off[r]; k >= 0 && k < off[r] + cnt[r] && (size_t)k < nev; k++) {
                start += delta[k];
                int64_t task = task_at(steps, nsteps, thr[k], start);
                int64_t ran = task < 0 ? 0
                    : ran_inside(bt, P, nsteps, task, start, start + dur[k]);
                tasks[k] = task;
                waits[k] = task < 0 || dur[k] <= ran ? 0 : dur[k] - ran;
            }
        }
    }
    free(off), free(cnt), free(delta), free(dur), free(thr), free(P), free(bt);
    return rc;
}

int sps__h5_add_task_columns(const char *path, sps_task_step_t *steps, size_t nsteps) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    errno = 0;
    int rc = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gopen2(f, "events", H5P_DEFAULT) : H5I_INVALID_HID;
    hsize_t nev = 0, nrows = 0;
    if (g < 0) rc = h5_fail();
    for (int i = 0; rc == 0 && i < 2; i++) { /* the two lengths */
        hid_t d = H5Dopen2(f, i ? "/events/durations" : "/rank_region_index/event_offsets",
                           H5P_DEFAULT);
        hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
        if (sp < 0 || H5Sget_simple_extent_dims(sp, i ? &nev : &nrows, NULL) < 0) rc = h5_fail();
        h5_close(&sp);
        h5_close(&d);
    }
    int64_t *tasks = rc ? NULL : malloc((nev ? nev : 1) * sizeof *tasks);
    int64_t *waits = rc ? NULL : malloc((nev ? nev : 1) * sizeof *waits);
    if (!rc && (!tasks || !waits)) rc = SPS_ENOMEM;
    if (!rc && nev)
        rc = task_cols_compute(f, (size_t)nrows, (size_t)nev, steps, nsteps, tasks, waits);
    static const char *const names[] = {"task_ids", "await_ns"};
    const int64_t *cols[] = {tasks, waits};
    for (int i = 0; rc == 0 && i < 2; i++) {
        hid_t d = col_create(g, names[i], K_I64, nev, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0) rc = h5_fail();
        h5_close(&d);
        if (rc == 0 && nev && col_write(g, names[i], K_I64, cols[i]) < 0) rc = h5_fail();
    }
    free(tasks);
    free(waits);
    h5_close(&g);
    rc = h5_file_end(&f, rc);
    return sps__h5_quiet_end(&q, rc);
}

/* ------------------------------------------------------------------------ */
/* /device and /events/gpu_durations (docs/device.md)                       */
/* ------------------------------------------------------------------------ */

const char *const sps__h5_device_cols[SPS__DEVC_N] = {
    "kinds", "names_idx", "devices", "contexts", "streams", "correlations", "starts_ns",
    "ends_ns", "bytes", "ranks", "threads", "tids", "regions", "call_ids", "grid_x",
    "grid_y", "grid_z", "block_x", "block_y", "block_z", "copy_kinds", "src_kinds",
    "dst_kinds", "cbids"};

int sps__h5_add_device(const char *path, const sps__h5_device_t *x) {
    sps__h5_quiet_t q;
    sps__h5_quiet_begin(&q);
    errno = 0;
    int rc = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f >= 0 ? H5Gcreate2(f, "device", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    if (g < 0) rc = h5_fail();
    for (size_t i = 0; rc == 0 && i <= SPS__DEVC_N; i++) {
        const char *name = i < SPS__DEVC_N ? sps__h5_device_cols[i] : "names";
        kind_t k = i < SPS__DEVC_N ? K_I64 : K_STR;
        uint64_t len = i < SPS__DEVC_N ? x->n : x->nnames;
        const void *buf = i < SPS__DEVC_N ? (const void *)x->cols[i] : (const void *)x->names;
        hid_t d = col_create(g, name, k, len, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0) rc = h5_fail();
        h5_close(&d);
        if (rc == 0 && len && col_write(g, name, k, buf) < 0) rc = h5_fail();
    }
    if (rc == 0 && (attr_str(g, "collector", x->collector) < 0 ||
                    attr_str(g, "clock", x->clock) < 0 ||
                    attr_i64(g, "dropped", x->dropped) < 0 ||
                    attr_i64(g, "cupti_version", x->cupti_version) < 0))
        rc = h5_fail();
    if (rc == 0 && attr_str(g, "description",
                            "device activities (docs/device.md): one row per kernel, copy, set "
                            "and CUDA runtime/driver API call; starts_ns/ends_ns CLOCK_MONOTONIC; "
                            "kinds 1 kernel 2 memcpy 3 memset 4 runtime API 5 driver API; "
                            "names_idx indexes names; cbids: CUPTI's callback id of an API row (0 for "
                            "device rows); regions/call_ids: the launching span (the "
                            "innermost span of the launch's external-correlation region open on "
                            "the launching thread at the launch), -1 none") < 0)
        rc = h5_fail();
    h5_close(&g);
    if (rc == 0 && x->gpu_dur) {
        hid_t ev = H5Gopen2(f, "events", H5P_DEFAULT);
        hid_t d = ev >= 0 ? col_create(ev, "gpu_durations", K_I64, x->nevents, H5P_DEFAULT,
                                       H5P_DEFAULT)
                          : H5I_INVALID_HID;
        if (d < 0) rc = h5_fail();
        h5_close(&d);
        if (rc == 0 && x->nevents && col_write(ev, "gpu_durations", K_I64, x->gpu_dur) < 0)
            rc = h5_fail();
        h5_close(&ev);
    }
    rc = h5_file_end(&f, rc);
    if (rc == 0) rc = file_sync(path);
    return sps__h5_quiet_end(&q, rc);
}
