/* _results.c -- the reader's side of the extension: what reads files.
 *
 * The reader's model (sps_file_open / sps_file_open_index) handed to
 * Python without copies: read_file and read_index return dicts of Column
 * objects, read-only buffers over the C reader's arrays that numpy views
 * (np.frombuffer), each holding the file's handle alive; file_paths pools
 * a read file's calls by call path; fold_spans runs the one fold over
 * spans held in Python.  And the file-level calls: report (the text
 * report), read_metadata, h5_check (the isolated check before libhdf5
 * opens a file), the HTML report (html_file, html_write, html_compare),
 * and terminal_text (text made safe for a terminal).  spanscope.results
 * builds its API on these.
 *
 * Its own file because none of it records: it runs on files, never per
 * call, and shares only the error mapping and small converters with the
 * rest (_convert.h).  Added to the module by sps__py_results_init, from
 * PyInit__ext (_ext.c).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_convert.h"
#include "spanscope.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== */
/* File-level calls: report, metadata, the h5 check, terminal text          */
/* ======================================================================== */

/* terminal_text(s, max_cols=0) -> str: s as a terminal may be shown it,
 * by sps_terminal_text (controls as '?', invalid UTF-8 -- lone surrogates
 * of a str -- as U+FFFD, cut to max_cols columns with "..."); a NUL
 * character is a control like the others. */
static PyObject *ext_terminal_text(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *str;
    Py_ssize_t max_cols = 0;
    if (!PyArg_ParseTuple(args, "U|n", &str, &max_cols)) return NULL;
    if (max_cols < 0) {
        PyErr_SetString(PyExc_ValueError, "max_cols must be >= 0");
        return NULL;
    }
    PyObject *b = PyUnicode_AsEncodedString(str, "utf-8", "surrogatepass");
    if (!b) return NULL;
    Py_ssize_t n = PyBytes_GET_SIZE(b);
    size_t cap = (size_t)n * 3 + 8; /* every byte as U+FFFD at worst, and "..." */
    char *in = malloc((size_t)n + 1), *out = malloc(cap);
    if (!in || !out) {
        free(in);
        free(out);
        Py_DECREF(b);
        return PyErr_NoMemory();
    }
    /* a copy (bytes objects may be shared): NUL as another control, '?' */
    for (Py_ssize_t i = 0; i < n; i++) in[i] = PyBytes_AS_STRING(b)[i] ? PyBytes_AS_STRING(b)[i] : 1;
    in[n] = 0;
    Py_DECREF(b);
    size_t len = sps_terminal_text(in, (size_t)max_cols, out, cap);
    free(in);
    if (!len && n) {
        free(out);
        return PyErr_NoMemory();
    }
    PyObject *r = PyUnicode_DecodeUTF8(out, (Py_ssize_t)(len < cap ? len : strlen(out)), "replace");
    free(out);
    return r;
}

/* Raises what a failed read of the file at path (a reader's code rc, its
 * one-line reason err) means in Python: OSError when the file cannot be
 * opened or read, ValueError when it is not a valid file (or an argument
 * is bad), MemoryError, else sps__py_raise_sps's.  Returns NULL. */
static PyObject *raise_read(int rc, const char *err, const char *path) {
    if (rc == SPS_EIO && sps_last_errno()) return sps__py_raise_os(rc, err, path);
    if (rc == SPS_EIO) return PyErr_Format(PyExc_OSError, "%s", err);
    if (rc == SPS_EFORMAT || rc == SPS_EINVAL) return PyErr_Format(PyExc_ValueError, "%s", err);
    return sps__py_raise_sps(rc, path);
}

/* report(path, sort='self', top=0) -> the report of a file, as text: what
 * `spanscope report PATH --sort SORT --top TOP` prints (both are
 * sps_report).  OSError if the file cannot be opened, ValueError if it is
 * not valid or sort is not a sort key. */
static PyObject *ext_report(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *path, *sort = "self";
    Py_ssize_t top = 0;
    if (!PyArg_ParseTuple(args, "s|sn", &path, &sort, &top)) return NULL;
    char *buf = NULL, err[512] = "";
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) return PyErr_NoMemory();
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_report(path, fp, sort, top < 0 ? 0 : (size_t)top, err, sizeof err);
    Py_END_ALLOW_THREADS
    fclose(fp);
    PyObject *s = rc ? NULL : PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    free(buf);
    return rc ? raise_read(rc, err, path) : s;
}

/* h5_check(path) -> None: the isolated check every reader makes before
 * libhdf5 opens a file (sps_h5_check); ValueError when it refuses the
 * file, OSError when no child process could be made. */
static PyObject *ext_h5_check(PyObject *mod, PyObject *arg) {
    (void)mod;
    const char *path = PyUnicode_AsUTF8(arg);
    if (!path) return NULL;
    char err[512] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_h5_check(path, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc) return raise_read(rc, err, path);
    Py_RETURN_NONE;
}

/* h5_check_stats() -> (files checked in a child, files refused). */
static PyObject *ext_h5_check_stats(PyObject *mod, PyObject *unused) {
    (void)mod, (void)unused;
    uint64_t checked = 0, refused = 0;
    sps_h5_check_stats(&checked, &refused);
    return Py_BuildValue("(KK)", (unsigned long long)checked, (unsigned long long)refused);
}

/* One value of a /metadata attribute as a Python int, float or str. */
static PyObject *meta_value(const sps_meta_attr_t *a, size_t i) {
    if (a->kind == SPS_META_INT) return PyLong_FromLongLong(a->ints[i]);
    if (a->kind == SPS_META_FLOAT) return PyFloat_FromDouble(a->floats[i]);
    return PyUnicode_DecodeUTF8(a->texts[i], (Py_ssize_t)strlen(a->texts[i]), "replace");
}

/* A /metadata attribute as a Python value: a scalar, or a list for an
 * array. */
static PyObject *meta_object(const sps_meta_attr_t *a) {
    if (!a->is_array) return meta_value(a, 0);
    PyObject *l = PyList_New((Py_ssize_t)a->n);
    for (size_t i = 0; l && i < a->n; i++) {
        PyObject *v = meta_value(a, i);
        if (!v) Py_CLEAR(l);
        else PyList_SET_ITEM(l, (Py_ssize_t)i, v);
    }
    return l;
}

/* {name: value} of n /metadata attributes a (meta_object's values). */
static PyObject *meta_dict(const sps_meta_attr_t *a, size_t n) {
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n; i++) {
        PyObject *v = meta_object(&a[i]);
        if (!v || PyDict_SetItemString(d, a[i].name, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* read_metadata(path) -> {name: value} of the file's /metadata attributes
 * (sps_metadata_read): ints, floats, str, lists for arrays.  OSError if
 * the file cannot be opened, ValueError if it is not HDF5. */
static PyObject *ext_read_metadata(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    sps_meta_attr_t *a = NULL;
    size_t n = 0;
    char err[512] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_metadata_read(path, &a, &n, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc) return raise_read(rc, err, path);
    PyObject *d = meta_dict(a, n);
    sps_metadata_free(a, n);
    return d;
}

/* ======================================================================== */
/* Files: the reader's model (sps_file_open) as numpy-ready buffers         */
/* ======================================================================== */

/* A read-only 1-D buffer over one array of an sps_file_t handle.  It holds
 * the capsule that owns the handle, so the handle lives as long as any
 * column, or any numpy array made from one, does: numpy wraps the C
 * reader's arrays themselves, nothing is copied. */
typedef struct {
    PyObject_HEAD
    PyObject *owner;        /* capsule "spanscope.file" */
    const void *data;
    Py_ssize_t n, itemsize; /* also the buffer's shape and stride */
    char format[2];         /* struct-module code of one element */
} ColumnObject;

static void Column_dealloc(ColumnObject *self) {
    Py_XDECREF(self->owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The buffer protocol's export: one contiguous 1-D array, read-only. */
static int Column_getbuffer(ColumnObject *self, Py_buffer *view, int flags) {
    static const int64_t none[1]; /* a valid address for an empty column */
    if (flags & PyBUF_WRITABLE) {
        PyErr_SetString(PyExc_BufferError, "spanscope file columns are read-only");
        view->obj = NULL;
        return -1;
    }
    view->buf = (void *)(self->data ? self->data : none);
    view->obj = Py_NewRef((PyObject *)self);
    view->len = self->n * self->itemsize;
    view->readonly = 1;
    view->itemsize = self->itemsize;
    view->format = flags & PyBUF_FORMAT ? self->format : NULL;
    view->ndim = 1;
    view->shape = flags & PyBUF_ND ? &self->n : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? &self->itemsize : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static PyBufferProcs Column_as_buffer = {(getbufferproc)Column_getbuffer, NULL};

static PyTypeObject ColumnType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "spanscope._ext.Column",
    .tp_basicsize = sizeof(ColumnObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A read-only array of a file read by the C reader (np.frombuffer it).",
    .tp_dealloc = (destructor)Column_dealloc,
    .tp_as_buffer = &Column_as_buffer,
};

/* A new column over data[0..n) (elements of itemsize bytes, struct code
 * fmt) kept alive by owner.  NULL with an exception set on failure. */
static PyObject *column_new(PyObject *owner, const void *data, size_t n,
                            Py_ssize_t itemsize, char fmt) {
    ColumnObject *c = PyObject_New(ColumnObject, &ColumnType);
    if (!c) return NULL;
    c->owner = Py_NewRef(owner);
    c->data = data;
    c->n = (Py_ssize_t)n;
    c->itemsize = itemsize;
    c->format[0] = fmt;
    c->format[1] = 0;
    return (PyObject *)c;
}

/* column_new, or None for an optional array the file lacks (NULL). */
static PyObject *column_opt(PyObject *owner, const void *data, size_t n,
                            Py_ssize_t itemsize, char fmt) {
    if (!data) Py_RETURN_NONE;
    return column_new(owner, data, n, itemsize, fmt);
}

/* The capsule's destructor: closes the handle. */
static void file_capsule_free(PyObject *cap) {
    sps_file_close(PyCapsule_GetPointer(cap, "spanscope.file"));
}

/* The n UTF-8 strings s[] as a list of str (_convert.h). */
PyObject *sps__py_utf8_list(const char *const *s, size_t n) {
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *v = PyUnicode_DecodeUTF8(s[i], (Py_ssize_t)strlen(s[i]), "replace");
        if (!v) Py_CLEAR(l);
        else PyList_SET_ITEM(l, (Py_ssize_t)i, v);
    }
    return l;
}

/* The index rows as tuples (region, rank, first, count, total_ns, min_ns,
 * max_ns, self_ns, stored_self_ns): one per region and rank, few. */
static PyObject *file_rows(const sps_file_t *f) {
    PyObject *l = PyList_New((Py_ssize_t)f->nrows);
    for (size_t i = 0; l && i < f->nrows; i++) {
        const sps_file_row_t *r = &f->rows[i];
        PyObject *t = Py_BuildValue("(IIKKLLLLL)", r->region, r->rank,
                                    (unsigned long long)r->first,
                                    (unsigned long long)r->count, (long long)r->total_ns,
                                    (long long)r->min_ns, (long long)r->max_ns,
                                    (long long)r->self_ns, (long long)r->stored_self_ns);
        if (!t) Py_CLEAR(l);
        else PyList_SET_ITEM(l, (Py_ssize_t)i, t);
    }
    return l;
}

/* The per-event columns of f (owned by cap) as a dict of columns. */
static PyObject *file_events(PyObject *cap, const sps_file_t *f) {
    size_t n = (size_t)f->nevents;
    PyObject *d = PyDict_New();
    if (!d || sps__py_put(d, "start_ns", column_new(cap, f->start_ns, n, 8, 'q')) ||
        sps__py_put(d, "durations_ns", column_new(cap, f->dur_ns, n, 8, 'q')) ||
        sps__py_put(d, "self_ns", column_new(cap, f->self_ns, n, 8, 'q')) ||
        sps__py_put(d, "parent", column_new(cap, f->parent, n, 4, 'i')) ||
        sps__py_put(d, "row", column_new(cap, f->row, n, 4, 'I')) ||
        sps__py_put(d, "call_ids", column_opt(cap, f->call_ids, n, 8, 'q')) ||
        sps__py_put(d, "parent_ids", column_opt(cap, f->parent_ids, n, 8, 'q')) ||
        sps__py_put(d, "thread_ids", column_opt(cap, f->thread_ids, n, 8, 'q')) ||
        sps__py_put(d, "gpu_durations", column_opt(cap, f->gpu_dur_ns, n, 8, 'q')) ||
        sps__py_put(d, "task_ids", column_opt(cap, f->task_ids, n, 8, 'q')) ||
        sps__py_put(d, "await_ns", column_opt(cap, f->await_ns, n, 8, 'q')))
        Py_CLEAR(d);
    return d;
}

/* The n strings s[] as a list of str, or None when s is NULL (a column
 * the file lacks). */
static PyObject *str_list_opt(const char *const *s, size_t n) {
    if (!s) Py_RETURN_NONE;
    return sps__py_utf8_list(s, n);
}

/* scope-profiler's per-row columns of f (owned by cap): source_lines (a
 * column), source_files, source_texts, tags and event_metadata (lists of
 * str; tags and event_metadata JSON list text), each None when absent. */
static PyObject *file_row_extras(PyObject *cap, const sps_file_t *f) {
    size_t n = f->nrows;
    PyObject *d = PyDict_New();
    if (!d || sps__py_put(d, "source_lines", column_opt(cap, f->row_source_lines, n, 8, 'q')) ||
        sps__py_put(d, "source_files", str_list_opt(f->row_source_files, n)) ||
        sps__py_put(d, "source_texts", str_list_opt(f->row_source_texts, n)) ||
        sps__py_put(d, "tags", str_list_opt(f->row_tags, n)) ||
        sps__py_put(d, "event_metadata", str_list_opt(f->row_event_metadata, n)))
        Py_CLEAR(d);
    return d;
}

/* A lane table of f (owned by cap) as {column name: column or list of
 * str}; empty for a table the file lacks. */
static PyObject *file_table(PyObject *cap, const sps_file_table_t *t) {
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < t->ncols; i++) {
        const sps_file_column_t *col = &t->cols[i];
        PyObject *v = col->is_text ? sps__py_utf8_list(col->texts, t->nrows)
                                   : column_new(cap, col->ints, t->nrows, 8, 'q');
        if (sps__py_put(d, col->name, v)) Py_CLEAR(d);
    }
    return d;
}

/* The counter samples of f (owned by cap): names, and columns. */
static PyObject *file_counters(PyObject *cap, const sps_file_t *f) {
    size_t n = f->nsamples;
    PyObject *d = PyDict_New();
    if (!d || sps__py_put(d, "names", sps__py_utf8_list(f->counter_names, f->ncounters)) ||
        sps__py_put(d, "series", column_new(cap, f->sample_counter, n, 8, 'q')) ||
        sps__py_put(d, "ranks", column_new(cap, f->sample_rank, n, 8, 'q')) ||
        sps__py_put(d, "times_ns", column_new(cap, f->sample_t_ns, n, 8, 'q')) ||
        sps__py_put(d, "values", column_new(cap, f->sample_value, n, 8, 'd')) ||
        sps__py_put(d, "dropped", PyLong_FromUnsignedLongLong(f->samples_dropped)))
        Py_CLEAR(d);
    return d;
}

/* The values per region of f (/values; owned by cap): names, regions,
 * and columns (own and self: rows x names, row-major). */
static PyObject *file_values(PyObject *cap, const sps_file_t *f) {
    size_t n = f->value_nrows, cells = n * f->nvalue_names;
    PyObject *d = PyDict_New();
    if (!d || sps__py_put(d, "names", sps__py_utf8_list(f->value_names, f->nvalue_names)) ||
        sps__py_put(d, "regions", sps__py_utf8_list(f->value_regions, n)) ||
        sps__py_put(d, "ranks", column_new(cap, f->value_ranks, n, 8, 'q')) ||
        sps__py_put(d, "calls", column_new(cap, f->value_calls, n, 8, 'q')) ||
        sps__py_put(d, "own", column_new(cap, f->value_own, cells, 8, 'q')) ||
        sps__py_put(d, "self", column_new(cap, f->value_self, cells, 8, 'q')))
        Py_CLEAR(d);
    return d;
}

/* read_file(path) -> the file's model as sps_file_open reads it: a dict
 * with schema, layout, nested_by_ids, orphans, cycles, names, rows (see
 * file_rows), events and counters (dicts of columns: buffers over the C
 * reader's arrays, None for an id column the file lacks), metadata,
 * row_extras (file_row_extras), thread_table / task_table (file_table)
 * and has_summary_statistics.
 * OSError if the file cannot be opened, ValueError if it is not valid. */
static PyObject *file_read(PyObject *args, int index_only);

static PyObject *ext_read_file(PyObject *mod, PyObject *args) {
    (void)mod;
    return file_read(args, 0);
}

/* The n stored summaries s (or None when NULL) as 11-tuples (total,
 * minimum, maximum, first, last, start_minimum, end_maximum, gpu_count,
 * gpu_total, mean, m2). */
static PyObject *summary_list(const sps_file_summary_t *s, size_t n) {
    if (!s) Py_RETURN_NONE;
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        const sps_file_summary_t *x = &s[i];
        PyObject *t = Py_BuildValue("(LLLLLLLKLdd)", (long long)x->total, (long long)x->minimum,
                                    (long long)x->maximum, (long long)x->first,
                                    (long long)x->last, (long long)x->start_minimum,
                                    (long long)x->end_maximum,
                                    (unsigned long long)x->gpu_count, (long long)x->gpu_total,
                                    x->mean, x->m2);
        if (!t) Py_CLEAR(l);
        else PyList_SET_ITEM(l, (Py_ssize_t)i, t);
    }
    return l;
}

/* read_index(path) -> read_file's dict of an index-only read
 * (sps_file_open_index): no events (empty columns), no counters, and
 * row_summary (summary_list, None when the file has no such column). */
static PyObject *ext_read_index(PyObject *mod, PyObject *args) {
    (void)mod;
    return file_read(args, 1);
}

/* The names of the SPS_FILE_HAS_* bits set in bits ("likwid",
 * "perf_events", "line_profile"): a new list, NULL on error. */
static PyObject *rank_groups_list(unsigned bits) {
    static const struct { unsigned bit; const char *name; } kinds[] = {
        {SPS_FILE_HAS_LIKWID, "likwid"},
        {SPS_FILE_HAS_PERF_EVENTS, "perf_events"},
        {SPS_FILE_HAS_LINE_PROFILE, "line_profile"}};
    PyObject *l = PyList_New(0);
    for (size_t k = 0; l && k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!(bits & kinds[k].bit)) continue;
        PyObject *s = PyUnicode_FromString(kinds[k].name);
        if (!s || PyList_Append(l, s)) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

/* read_file / read_index: opens the file of args (one path) whole or by
 * its index alone and makes the dict. */
static PyObject *file_read(PyObject *args, int index_only) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    const sps_file_t *f = NULL;
    char err[512] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = index_only ? sps_file_open_index(path, &f, err, sizeof err)
                    : sps_file_open(path, &f, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc) return raise_read(rc, err, path);
    PyObject *cap = PyCapsule_New((void *)f, "spanscope.file", file_capsule_free);
    if (!cap) {
        sps_file_close(f);
        return NULL;
    }
    PyObject *d = PyDict_New();
    if (!d || sps__py_put(d, "schema", PyLong_FromLong(f->schema)) ||
        sps__py_put(d, "layout", PyUnicode_FromString(f->aggregate ? "aggregate" : "columnar")) ||
        sps__py_put(d, "nested_by_ids", PyBool_FromLong(f->nested_by_ids)) ||
        sps__py_put(d, "orphans", PyLong_FromUnsignedLongLong(f->orphans)) ||
        sps__py_put(d, "cycles", PyLong_FromUnsignedLongLong(f->cycles)) ||
        sps__py_put(d, "names", sps__py_utf8_list(f->names, f->nnames)) ||
        sps__py_put(d, "rows", file_rows(f)) || sps__py_put(d, "events", file_events(cap, f)) ||
        sps__py_put(d, "counters", file_counters(cap, f)) ||
        sps__py_put(d, "values", file_values(cap, f)) ||
        sps__py_put(d, "metadata", meta_dict(f->attrs, f->nattrs)) ||
        sps__py_put(d, "row_extras", file_row_extras(cap, f)) ||
        sps__py_put(d, "thread_table", file_table(cap, &f->thread_table)) ||
        sps__py_put(d, "task_table", file_table(cap, &f->task_table)) ||
        sps__py_put(d, "has_summary_statistics", PyBool_FromLong(f->has_summary_statistics)) ||
        sps__py_put(d, "row_summary", summary_list(f->row_summary, f->nrows)) ||
        sps__py_put(d, "rank_groups", rank_groups_list(f->rank_groups)))
        Py_CLEAR(d);
    Py_DECREF(cap); /* the columns hold it now; the last one closes f */
    return d;
}

/* ======================================================================== */
/* Stack samples: read_samples                                              */
/* ======================================================================== */

/* The capsule's destructor: frees what sps_samples_read read. */
static void samples_capsule_free(PyObject *cap) {
    sps_samples_t *s = PyCapsule_GetPointer(cap, "spanscope.samples");
    sps_samples_free(s);
    free(s);
}

/* read_samples(path) -> the file's stack samples (its /samples group) as
 * sps_samples_read reads and checks them: a dict of columns (read-only
 * int64 buffers over the reader's arrays, np.frombuffer them, no copy)
 * and lists --
 *   per sample: times_ns, threads, tids, ranks, regions (index into
 *     region_names, -1 outside every span), call_ids, stacks (index into
 *     the stack table), weights (timer periods it stands for, >= 1);
 *   the stack table: stack_offsets (nstacks + 1 entries) and stack_frames
 *     (stack k: stack_frames[stack_offsets[k]:stack_offsets[k + 1]],
 *     frame indexes innermost first);
 *   per frame: functions, files, modules (lists of str), lines, kinds
 *     (0 native, 1 Python), addresses;
 *   region_names (list of str), hz and lost (int).
 * A file without samples gives empty columns (n 0) and hz 0.
 * OSError if the file cannot be opened or read, ValueError if it is not
 * a valid file (the message names the bad index), MemoryError. */
static PyObject *ext_read_samples(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *pathobj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &pathobj)) return NULL;
    const char *path = PyBytes_AS_STRING(pathobj);
    sps_samples_t *s = calloc(1, sizeof *s);
    if (!s) {
        Py_DECREF(pathobj);
        return PyErr_NoMemory();
    }
    int rc;
    char err[512] = "";
    Py_BEGIN_ALLOW_THREADS
    rc = sps_samples_read(path, s);
    if (rc) snprintf(err, sizeof err, "%s", sps_last_error());
    Py_END_ALLOW_THREADS
    if (rc) {
        sps_samples_free(s);
        free(s);
        if (!err[0]) snprintf(err, sizeof err, "%s: %s", path, sps_strerror(rc));
        PyObject *r = raise_read(rc, err, path);
        Py_DECREF(pathobj);
        return r;
    }
    Py_DECREF(pathobj);
    PyObject *cap = PyCapsule_New(s, "spanscope.samples", samples_capsule_free);
    if (!cap) {
        sps_samples_free(s);
        free(s);
        return NULL;
    }
    size_t n = s->n, nf = s->nframes;
    size_t noff = s->stack_offsets ? s->nstacks + 1 : 0;
    size_t nsf = noff ? (size_t)s->stack_offsets[s->nstacks] : 0;
    PyObject *d = PyDict_New();
    if (!d || sps__py_put(d, "times_ns", column_new(cap, s->times_ns, n, 8, 'q')) ||
        sps__py_put(d, "threads", column_new(cap, s->threads, n, 8, 'q')) ||
        sps__py_put(d, "tids", column_new(cap, s->tids, n, 8, 'q')) ||
        sps__py_put(d, "ranks", column_new(cap, s->ranks, n, 8, 'q')) ||
        sps__py_put(d, "regions", column_new(cap, s->regions, n, 8, 'q')) ||
        sps__py_put(d, "call_ids", column_new(cap, s->call_ids, n, 8, 'q')) ||
        sps__py_put(d, "stacks", column_new(cap, s->stacks, n, 8, 'q')) ||
        sps__py_put(d, "weights", column_new(cap, s->weights, n, 8, 'q')) ||
        sps__py_put(d, "stack_offsets", column_new(cap, s->stack_offsets, noff, 8, 'q')) ||
        sps__py_put(d, "stack_frames", column_new(cap, s->stack_frames, nsf, 8, 'q')) ||
        sps__py_put(d, "functions", sps__py_utf8_list(s->functions, nf)) ||
        sps__py_put(d, "files", sps__py_utf8_list(s->files, nf)) ||
        sps__py_put(d, "modules", sps__py_utf8_list(s->modules, nf)) ||
        sps__py_put(d, "lines", column_new(cap, s->lines, nf, 8, 'q')) ||
        sps__py_put(d, "kinds", column_new(cap, s->kinds, nf, 8, 'q')) ||
        sps__py_put(d, "addresses", column_new(cap, s->addresses, nf, 8, 'q')) ||
        sps__py_put(d, "region_names", sps__py_utf8_list(s->region_names, s->nregion_names)) ||
        sps__py_put(d, "hz", PyLong_FromLongLong((long long)s->hz)) ||
        sps__py_put(d, "lost", PyLong_FromLongLong((long long)s->lost)))
        Py_CLEAR(d);
    Py_DECREF(cap); /* the columns hold it now */
    return d;
}

/* file_paths(column, keep) -> the file's calls pooled by call path per
 * rank (sps_file_paths) for print_summary's table: column is any column
 * of a read_file dict (its owner is the file's handle), keep None or
 * bytes, one per name (non-zero: the region is kept).  A dict: parent and
 * name (lists, per path), entries (tuples (path, rank, first_pos, calls,
 * total_ns, duration_sum_ns, self_ns, min_ns, max_ns, first_start_ns,
 * first_ns, last_end_ns, last_ns, coverage_ns, recursive)) and bad_ranks.
 * TypeError when column is not one, ValueError when the file cannot be
 * pooled (aggregate, two rows of a region on a rank), MemoryError. */
static PyObject *ext_file_paths(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *col, *keep;
    if (!PyArg_ParseTuple(args, "OO", &col, &keep)) return NULL;
    if (!PyObject_TypeCheck(col, &ColumnType) ||
        !PyCapsule_IsValid(((ColumnObject *)col)->owner, "spanscope.file"))
        return PyErr_Format(PyExc_TypeError, "file_paths() needs a column of read_file()");
    const sps_file_t *f =
        PyCapsule_GetPointer(((ColumnObject *)col)->owner, "spanscope.file");
    const unsigned char *k = NULL;
    if (keep != Py_None) {
        if (!PyBytes_Check(keep) || (size_t)PyBytes_GET_SIZE(keep) != f->nnames)
            return PyErr_Format(PyExc_TypeError, "file_paths(): keep must be None or "
                                "bytes, one per region name");
        k = (const unsigned char *)PyBytes_AS_STRING(keep);
    }
    sps_file_paths_t fp;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_file_paths(f, k, &fp);
    Py_END_ALLOW_THREADS
    if (rc == SPS_ENOMEM) return PyErr_NoMemory();
    if (rc) return PyErr_Format(PyExc_ValueError, "file_paths: %s", sps_strerror(rc));
    PyObject *parent = PyList_New((Py_ssize_t)fp.npaths);
    PyObject *name = PyList_New((Py_ssize_t)fp.npaths);
    PyObject *entries = PyList_New((Py_ssize_t)fp.nentries);
    PyObject *bad = PyList_New((Py_ssize_t)fp.nbad);
    int ok = parent && name && entries && bad;
    for (size_t i = 0; ok && i < fp.npaths; i++) {
        PyObject *a = PyLong_FromLong(fp.parent[i]), *b = PyLong_FromUnsignedLong(fp.name[i]);
        ok = a && b;
        if (a) PyList_SET_ITEM(parent, (Py_ssize_t)i, a);
        if (b) PyList_SET_ITEM(name, (Py_ssize_t)i, b);
    }
    for (size_t i = 0; ok && i < fp.nentries; i++) {
        const sps_file_path_rank_t *x = &fp.entries[i];
        PyObject *t = Py_BuildValue(
            "(IIKKLLLLLLLLLLi)", x->path, x->rank, (unsigned long long)x->first_pos,
            (unsigned long long)x->calls, (long long)x->total_ns,
            (long long)x->duration_sum_ns, (long long)x->self_ns, (long long)x->min_ns,
            (long long)x->max_ns, (long long)x->first_start_ns, (long long)x->first_ns,
            (long long)x->last_end_ns, (long long)x->last_ns, (long long)x->coverage_ns,
            x->recursive);
        ok = t != NULL;
        if (t) PyList_SET_ITEM(entries, (Py_ssize_t)i, t);
    }
    for (size_t i = 0; ok && i < fp.nbad; i++) {
        PyObject *a = PyLong_FromUnsignedLong(fp.bad_ranks[i]);
        ok = a != NULL;
        if (a) PyList_SET_ITEM(bad, (Py_ssize_t)i, a);
    }
    PyObject *d = ok ? Py_BuildValue("{sOsOsOsO}", "parent", parent, "name", name,
                                     "entries", entries, "bad_ranks", bad)
                     : NULL;
    Py_XDECREF(parent), Py_XDECREF(name), Py_XDECREF(entries), Py_XDECREF(bad);
    sps_file_paths_free(&fp);
    return d;
}

/* ======================================================================== */
/* The HTML report                                                          */
/* ======================================================================== */

/* Raises what a failed HTML page means (rc, the one-line reason err):
 * the page could not be written (SPS_EPATH, or SPS_EIO with a cause
 * noted): OSError with the cause and out as its filename; else what a
 * failed read of in means.  Returns NULL. */
static PyObject *raise_html(int rc, const char *err, const char *in, const char *out) {
    if (rc == SPS_EPATH || (rc == SPS_EIO && sps_last_errno()))
        return sps__py_raise_os(rc, err, out);
    return raise_read(rc, err, in);
}

/* html_file(in_path, out_path, max_spans=0): sps_html_file.  OSError when
 * a file cannot be read or written, ValueError for a bad input. */
static PyObject *ext_html_file(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *in, *out;
    Py_ssize_t max = 0;
    if (!PyArg_ParseTuple(args, "ss|n", &in, &out, &max)) return NULL;
    char err[512] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_html_file(in, out, max < 0 ? 0 : (size_t)max, err, sizeof err);
    Py_END_ALLOW_THREADS
    return rc ? raise_html(rc, err, in, out) : Py_NewRef(Py_None);
}

/* html_compare(in_paths, labels, out_path): sps_html_compare_files over
 * two sequences of str of one length (>= 2).  OSError when a file cannot
 * be read or written, ValueError for a bad input. */
static PyObject *ext_html_compare(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ino, *labo;
    const char *out;
    if (!PyArg_ParseTuple(args, "OOs", &ino, &labo, &out)) return NULL;
    PyObject *ins = PySequence_Fast(ino, "html_compare() needs a sequence of paths");
    PyObject *labs = ins ? PySequence_Fast(labo, "html_compare() needs a sequence of labels")
                         : NULL;
    Py_ssize_t n = ins ? PySequence_Fast_GET_SIZE(ins) : 0;
    const char **v = NULL;
    int ok = labs != NULL;
    if (ok && (n < 2 || PySequence_Fast_GET_SIZE(labs) != n)) {
        PyErr_SetString(PyExc_ValueError, "html_compare() needs two or more paths and one "
                                          "label per path");
        ok = 0;
    }
    if (ok && !(v = calloc(2 * (size_t)n, sizeof *v))) ok = !PyErr_NoMemory();
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        v[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(ins, i));
        v[n + i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(labs, i));
        ok = v[i] && v[n + i];
    }
    int rc = 0;
    char err[512] = "";
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        rc = sps_html_compare_files(v, v + n, (size_t)n, out, err, sizeof err);
        Py_END_ALLOW_THREADS
    }
    PyObject *first = ok ? PySequence_Fast_GET_ITEM(ins, 0) : NULL;
    const char *in0 = first ? PyUnicode_AsUTF8(first) : NULL;
    free(v);
    PyObject *res = NULL;
    if (!ok) res = NULL;
    else if (rc) res = raise_html(rc, err, in0 ? in0 : "", out);
    else res = Py_NewRef(Py_None);
    Py_XDECREF(ins);
    Py_XDECREF(labs);
    return res;
}

/* A PySequence_Fast of o (a new reference), Py_None for None, NULL with
 * a TypeError naming what for anything else (a str is not a list). */
static PyObject *html_seq(PyObject *o, const char *what) {
    if (o == Py_None) return Py_NewRef(Py_None);
    if (PyUnicode_Check(o)) return PyErr_Format(PyExc_TypeError, "%s must be a list", what);
    return PySequence_Fast(o, what);
}

/* html_write(in_paths, out_path, labels=None, max_spans=200000,
 *            include=None, exclude=None, ranks=None, sort=None,
 *            columns=None, charts=True, charts_cdn=False, scaling=None,
 *            speedup_x=None, title=None) -> None: sps_html_write_files,
 * one page (one path) or the comparison (several).  ValueError for bad
 * options or a bad input, OSError when a file cannot be read or
 * written. */
static PyObject *ext_html_write(PyObject *mod, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"in_paths", "out_path", "labels", "max_spans", "include",
                             "exclude", "ranks", "sort", "columns", "charts", "charts_cdn",
                             "scaling", "speedup_x", "title", NULL};
    PyObject *ino, *labo = Py_None, *inco = Py_None, *exco = Py_None, *rko = Py_None,
             *colo = Py_None;
    const char *out;
    Py_ssize_t max = SPS_HTML_DEFAULT_MAX_SPANS;
    sps_html_options_t o = SPS_HTML_OPTIONS_INIT;
    (void)mod;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Os|OnOOOzOppzzz", kwlist, &ino, &out, &labo,
                                     &max, &inco, &exco, &rko, &o.sort, &colo, &o.charts,
                                     &o.charts_cdn, &o.scaling, &o.speedup_x, &o.title))
        return NULL;
    if (max < 0) return PyErr_Format(PyExc_ValueError, "max_spans must be >= 0");
    o.max_spans = (size_t)max;
    PyObject *seqs[6] = {html_seq(ino, "in_paths"), NULL, NULL, NULL, NULL, NULL};
    seqs[1] = seqs[0] ? html_seq(labo, "labels") : NULL;
    seqs[2] = seqs[1] ? html_seq(inco, "include") : NULL;
    seqs[3] = seqs[2] ? html_seq(exco, "exclude") : NULL;
    seqs[4] = seqs[3] ? html_seq(colo, "columns") : NULL;
    seqs[5] = seqs[4] ? html_seq(rko, "ranks") : NULL;
    const char **in = NULL, **labs = NULL, **inc = NULL, **exc = NULL, **cols = NULL;
    size_t nin = 0, nlab = 0;
    int64_t *ranks = NULL;
    PyObject *res = NULL;
    if (!seqs[5] || sps__py_str_list(seqs[0], &in, &nin, "in_paths") ||
        sps__py_str_list(seqs[1], &labs, &nlab, "labels") ||
        sps__py_str_list(seqs[2], &inc, &o.ninclude, "include") ||
        sps__py_str_list(seqs[3], &exc, &o.nexclude, "exclude") ||
        sps__py_str_list(seqs[4], &cols, &o.ncolumns, "columns"))
        goto done;
    if (labs && nlab != nin) {
        PyErr_SetString(PyExc_ValueError, "html_write() needs one label per path");
        goto done;
    }
    if (seqs[5] != Py_None) {
        o.nranks = (size_t)PySequence_Fast_GET_SIZE(seqs[5]);
        if (!(ranks = malloc((o.nranks + 1) * sizeof *ranks))) {
            PyErr_NoMemory();
            goto done;
        }
        for (size_t i = 0; i < o.nranks; i++) {
            ranks[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seqs[5], (Py_ssize_t)i));
            if (ranks[i] == -1 && PyErr_Occurred()) goto done;
        }
    }
    o.include = inc;
    o.exclude = exc;
    o.columns = cols;
    o.ranks = ranks;
    char err[1024] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_html_write_files(in, labs, nin, out, &o, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc) raise_html(rc, err, nin ? in[0] : "", out);
    else res = Py_NewRef(Py_None);
done:
    free(in);
    free(labs);
    free(inc);
    free(exc);
    free(cols);
    free(ranks);
    for (int i = 0; i < 6; i++) Py_XDECREF(seqs[i]);
    return res;
}

/* ======================================================================== */
/* The one fold over spans held in Python                                   */
/* ======================================================================== */

/* Gets a C-contiguous buffer of obj (writable when w) of n elements of
 * sz bytes each; None gives buf->buf NULL when none_ok.  0 or -1 with an
 * exception set (release with buf_release). */
static int buf_get(PyObject *obj, Py_buffer *buf, Py_ssize_t n, Py_ssize_t sz, int w,
                   int none_ok, const char *what) {
    memset(buf, 0, sizeof *buf);
    if (obj == Py_None && none_ok) return 0;
    if (PyObject_GetBuffer(obj, buf, PyBUF_C_CONTIGUOUS | (w ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (buf->len != n * sz) {
        PyErr_Format(PyExc_ValueError, "fold_spans: %s has %zd bytes, expected %zd", what,
                     buf->len, n * sz);
        PyBuffer_Release(buf);
        memset(buf, 0, sizeof *buf);
        return -1;
    }
    return 0;
}

/* Releases a buffer of buf_get (one left empty for None is a no-op). */
static void buf_release(Py_buffer *b) {
    if (b->obj) PyBuffer_Release(b);
}

/* fold_spans(start, end, rank, thread, parent, self) -> overlaps: the one
 * fold (sps_fold_spans) over n spans given as int64 buffers (rank and
 * thread may be None), writing int32 parents and int64 self times into
 * the writable buffers parent and self; returns the partial overlaps met.  ValueError for buffers of the wrong
 * size or bad ranks, MemoryError. */
static PyObject *ext_fold_spans(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *o[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]))
        return NULL;
    Py_buffer b[6];
    memset(b, 0, sizeof b);
    if (PyObject_GetBuffer(o[0], &b[0], PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_ssize_t n = b[0].len / 8;
    static const char *what[6] = {"start", "end", "rank", "thread", "parent", "self"};
    int bad = b[0].len % 8 != 0;
    if (bad) PyErr_SetString(PyExc_ValueError, "fold_spans: start is not an int64 array");
    for (int i = 1; !bad && i < 6; i++)
        bad = buf_get(o[i], &b[i], n, i == 4 ? 4 : 8, i >= 4, i == 2 || i == 3, what[i]) < 0;
    int rc = 0;
    uint64_t overlaps = 0;
    if (!bad) {
        Py_BEGIN_ALLOW_THREADS
        rc = sps_fold_spans(b[0].buf, b[1].buf, b[2].buf, b[3].buf, (size_t)n, b[4].buf,
                            b[5].buf, &overlaps);
        Py_END_ALLOW_THREADS
    }
    for (int i = 0; i < 6; i++) buf_release(&b[i]);
    if (bad) return NULL;
    if (rc == SPS_ENOMEM) return PyErr_NoMemory();
    if (rc) return PyErr_Format(PyExc_ValueError, "fold_spans: %s", sps_strerror(rc));
    return PyLong_FromUnsignedLongLong(overlaps);
}
static PyMethodDef results_methods[] = {
    {"file_paths", ext_file_paths, METH_VARARGS,
     "file_paths(column, keep) -> a read file's calls pooled by call path per rank."},
    {"h5_check", ext_h5_check, METH_O,
     "h5_check(path): the isolated check before libhdf5 reads a file (sps_h5_check)."},
    {"h5_check_stats", ext_h5_check_stats, METH_NOARGS,
     "(files checked in a child process, files refused) since the library loaded."},
    {"html_file", ext_html_file, METH_VARARGS,
     "html_file(in_path, out_path, max_spans=0): the HTML report (sps_html_file)."},
    {"html_write", (PyCFunction)(void (*)(void))ext_html_write, METH_VARARGS | METH_KEYWORDS,
     "html_write(in_paths, out_path, labels=None, max_spans=200000, include=None, "
     "exclude=None, ranks=None, sort=None, columns=None, charts=True, charts_cdn=False, "
     "scaling=None, speedup_x=None, title=None): the HTML report of one run or the "
     "comparison of several, with the options (sps_html_write_files)."},
    {"html_compare", ext_html_compare, METH_VARARGS,
     "html_compare(in_paths, labels, out_path): the page comparing runs "
     "(sps_html_compare_files)."},
    {"report", ext_report, METH_VARARGS, "report(path, sort='self', top=0) -> table text."},
    {"read_metadata", ext_read_metadata, METH_VARARGS,
     "read_metadata(path) -> {name: value} of the file's /metadata."},
    {"fold_spans", ext_fold_spans, METH_VARARGS,
     "fold_spans(start, end, rank, thread, parent, self): the one fold over spans "
     "held in Python (sps_fold_spans)."},
    {"read_index", ext_read_index, METH_VARARGS,
     "read_index(path) -> read_file's dict without events: the index, row_summary "
     "(sps_file_open_index)."},
    {"read_samples", ext_read_samples, METH_VARARGS,
     "read_samples(path) -> the file's stack samples (sps_samples_read) as a dict of "
     "columns and lists."},
    {"read_file", ext_read_file, METH_VARARGS,
     "read_file(path) -> the file's model (sps_file_open) as a dict of columns."},
    {"terminal_text", ext_terminal_text, METH_VARARGS,
     "terminal_text(s, max_cols=0) -> s cleaned for a terminal (sps_terminal_text)."},
    {NULL, NULL, 0, NULL}};

/* Called by PyInit__ext: readies Column (made by read_file and
 * read_index; not a module attribute) and adds the functions above. */
int sps__py_results_init(PyObject *m) {
    if (PyType_Ready(&ColumnType) < 0) return -1;
    return PyModule_AddFunctions(m, results_methods);
}
