/*
 * _export.c -- the exports in the extension (spanscope._ext): export(),
 * over sps_export (spanscope.h, src/api/export.c), which
 * spanscope/_exports.py's export_speedscope, export_prof, to_pstats,
 * export_flamegraph_svg and export_chrome_trace wrap with scope-profiler
 * 0.7.5's signatures; spans_write_h5(), over sps_spans_write_h5
 * (src/api/spans_h5.c), behind write_profile(results, "x.h5") for results
 * held in Python.  Registered from _ext.c's module init
 * (sps__py_export_init).  No analysis here: argument conversion only.
 */
#include "_convert.h"

#include "spanscope.h"

#include <stdlib.h>
#include <string.h>

int sps__py_export_init(PyObject *m);

/* (_convert.h) */
int sps__py_str_list(PyObject *seq, const char ***out, size_t *n, const char *what) {
    *out = NULL;
    *n = 0;
    if (!seq || seq == Py_None) return 0;
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) { /* PySequence_Fast's kinds */
        PyErr_Format(PyExc_TypeError, "%s must be a list of str", what);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    const char **v = calloc((size_t)len + 1, sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyUnicode_Check(it) || !(v[i] = PyUnicode_AsUTF8(it))) {
            free(v);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s must be a list of str", what);
            return -1;
        }
    }
    *out = v;
    *n = (size_t)len;
    return 0;
}

/* The ints of seq (a list of int, or None) as a malloc'd array. */
static int int_list(PyObject *seq, int64_t **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (seq == Py_None) return 0;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int64_t *v = malloc(((size_t)len + 1) * sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (x == -1 && PyErr_Occurred()) {
            free(v);
            return -1;
        }
        v[i] = x;
    }
    *out = v;
    *n = (size_t)len;
    return 0;
}

/* export(in_path, out_path, format, ranks=None, include=None,
 *        exclude=None, call_paths=True, root_name=None, doc_name=None,
 *        width=1200, threshold=0.001, scalable=True) -> None.
 * ValueError for a bad request or an invalid file (a rank the file does
 * not hold: "Invalid rank requested: N ..."), OSError otherwise. */
static PyObject *ext_export(PyObject *mod, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"in_path", "out_path", "format", "ranks", "include",
                             "exclude", "call_paths", "root_name", "doc_name",
                             "width", "threshold", "scalable", NULL};
    const char *in, *out, *fmt, *root = NULL, *doc = NULL;
    PyObject *ranks = Py_None, *inc = Py_None, *exc = Py_None;
    int call_paths = 1, scalable = 1;
    unsigned int width = 1200;
    double threshold = 0.001;
    (void)mod;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sss|OOOpzzIdp", kwlist, &in, &out, &fmt,
                                     &ranks, &inc, &exc, &call_paths, &root, &doc,
                                     &width, &threshold, &scalable))
        return NULL;
    PyObject *rk = ranks == Py_None ? Py_NewRef(Py_None) : PySequence_Fast(ranks, "ranks must be a list of int");
    PyObject *in_seq = inc == Py_None ? Py_NewRef(Py_None) : PySequence_Fast(inc, "include must be a list of str");
    PyObject *ex_seq = exc == Py_None ? Py_NewRef(Py_None) : PySequence_Fast(exc, "exclude must be a list of str");
    sps_export_opts_t o = SPS_EXPORT_OPTS_INIT;
    int64_t *rv = NULL;
    const char **iv = NULL, **ev = NULL;
    PyObject *res = NULL;
    if (!rk || !in_seq || !ex_seq || int_list(rk, &rv, &o.nranks) ||
        sps__py_str_list(in_seq, &iv, &o.ninclude, "include") ||
        sps__py_str_list(ex_seq, &ev, &o.nexclude, "exclude"))
        goto done;
    o.ranks = rv;
    o.include = iv;
    o.exclude = ev;
    o.call_paths = call_paths;
    o.root_name = root;
    o.doc_name = doc;
    o.width = width;
    o.threshold = threshold;
    o.scalable = scalable;
    char err[512] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_export(in, out, fmt, &o, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc == SPS_EINVAL || rc == SPS_EFORMAT) PyErr_SetString(PyExc_ValueError, err);
    else if (rc == SPS_ENOMEM) PyErr_NoMemory();
    else if ((rc == SPS_EIO || rc == SPS_EPATH) && sps_last_errno())
        sps__py_raise_os(rc, err, out); /* the output failed: its cause */
    else if (rc) PyErr_SetString(PyExc_OSError, err);
    else res = Py_NewRef(Py_None);
done:
    free(rv);
    free(iv);
    free(ev);
    Py_XDECREF(rk);
    Py_XDECREF(in_seq);
    Py_XDECREF(ex_seq);
    return res;
}

/* A C-contiguous buffer of obj with n items of sz bytes (n < 0: any
 * count, stored in *n).  0, or -1 with TypeError (release with
 * PyBuffer_Release). */
static int col_get(PyObject *obj, Py_buffer *b, Py_ssize_t sz, Py_ssize_t *n,
                   const char *what) {
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) return -1;
    Py_ssize_t items = b->itemsize ? b->len / b->itemsize : 0;
    if (b->itemsize != sz || (*n >= 0 && items != *n)) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_TypeError, "%s must be %zd-byte integers%s", what, sz,
                     *n >= 0 ? ", one per span" : "");
        return -1;
    }
    *n = items;
    return 0;
}

/* A per-name list of str or None (each item str or None) as a malloc'd
 * array of nn strings (NULL where None), or NULL for None.  0, or -1 with
 * TypeError. */
static int opt_strs(PyObject *seq, size_t nn, const char ***out, const char *what) {
    *out = NULL;
    if (seq == Py_None) return 0;
    if (!PyList_Check(seq) || (size_t)PyList_GET_SIZE(seq) != nn) {
        PyErr_Format(PyExc_TypeError, "%s must be a list with one item per name", what);
        return -1;
    }
    const char **v = calloc(nn + 1, sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < nn; i++) {
        PyObject *it = PyList_GET_ITEM(seq, (Py_ssize_t)i);
        if (it != Py_None && (!PyUnicode_Check(it) || !(v[i] = PyUnicode_AsUTF8(it)))) {
            free(v);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s must hold str or None", what);
            return -1;
        }
    }
    *out = v;
    return 0;
}

/* spans_write_h5(path, names, name, rank, thread, start_ns, end_ns, *,
 * start_time_ns=None, finalize_time_ns=None, label=None,
 * source_files=None, source_lines=None, source_texts=None, tags=None,
 * metadata=None) -> None: sps_spans_write_h5.  metadata: {str: str} more
 * /metadata strings.  names: list of str; name: uint32 indices;
 * rank .. end_ns int64 (numpy arrays), one per span; the per-name lists
 * one item per name (None where unknown; source_lines an int64 array).
 * ValueError for spans the writer refuses, OSError for the file. */
static PyObject *ext_spans_write_h5(PyObject *mod, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "names", "name", "rank", "thread", "start_ns",
                             "end_ns", "start_time_ns", "finalize_time_ns", "label",
                             "source_files", "source_lines", "source_texts", "tags",
                             "metadata", NULL};
    const char *path, *label = NULL;
    PyObject *names, *cols[5], *t0 = Py_None, *t1 = Py_None, *files = Py_None,
             *lines = Py_None, *texts = Py_None, *tags = Py_None, *meta = Py_None;
    (void)mod;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOOOOOO|$OOzOOOOO", kwlist, &path, &names,
                                     &cols[0], &cols[1], &cols[2], &cols[3], &cols[4],
                                     &t0, &t1, &label, &files, &lines, &texts, &tags, &meta))
        return NULL;
    if (meta != Py_None && !PyDict_Check(meta)) {
        PyErr_SetString(PyExc_TypeError, "metadata must be a dict of str to str");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(names, "names must be a list of str");
    if (!seq) return NULL;
    const char **nv = NULL, **fv = NULL, **xv = NULL, **tv = NULL, **mk = NULL, **mv = NULL;
    size_t nn = 0, nm = 0;
    Py_buffer b[6];
    int got = 0, have_lines = 0;
    PyObject *res = NULL;
    Py_ssize_t n = -1, nl;
    if (sps__py_str_list(seq, &nv, &nn, "names")) goto done;
    static const char *const what[5] = {"name", "rank", "thread", "start_ns", "end_ns"};
    for (; got < 5; got++)
        if (col_get(cols[got], &b[got], got ? 8 : 4, &n, what[got])) goto done;
    nl = (Py_ssize_t)nn;
    if (lines != Py_None) {
        if (col_get(lines, &b[5], 8, &nl, "source_lines")) goto done;
        have_lines = 1;
    }
    if (opt_strs(files, nn, &fv, "source_files") || opt_strs(texts, nn, &xv, "source_texts") ||
        opt_strs(tags, nn, &tv, "tags"))
        goto done;
    if ((t0 == Py_None) != (t1 == Py_None)) {
        PyErr_SetString(PyExc_TypeError, "start_time_ns and finalize_time_ns go together");
        goto done;
    }
    if (meta != Py_None && PyDict_GET_SIZE(meta)) {
        Py_ssize_t pos = 0, nd = PyDict_GET_SIZE(meta);
        PyObject *k, *v;
        mk = calloc((size_t)nd, sizeof *mk);
        mv = calloc((size_t)nd, sizeof *mv);
        if (!mk || !mv) {
            PyErr_NoMemory();
            goto done;
        }
        while (PyDict_Next(meta, &pos, &k, &v)) { /* borrowed UTF-8, kept by the dict */
            if (!PyUnicode_Check(k) || !PyUnicode_Check(v)) {
                PyErr_SetString(PyExc_TypeError, "metadata must be a dict of str to str");
                goto done;
            }
            if (!(mk[nm] = PyUnicode_AsUTF8(k)) || !(mv[nm] = PyUnicode_AsUTF8(v))) goto done;
            nm++;
        }
    }
    sps_span_set_t set = {0};
    set.nnames = nn;
    set.names = nv;
    set.nspans = (size_t)n;
    set.name = b[0].buf;
    set.rank = b[1].buf;
    set.thread = b[2].buf;
    set.start_ns = b[3].buf;
    set.end_ns = b[4].buf;
    if (t0 != Py_None) {
        set.has_times = 1;
        set.start_time_ns = PyLong_AsLongLong(t0);
        set.finalize_time_ns = PyLong_AsLongLong(t1);
        if (PyErr_Occurred()) goto done;
    }
    set.label = label;
    set.source_files = fv;
    set.source_texts = xv;
    set.tags = tv;
    set.source_lines = have_lines ? b[5].buf : NULL;
    set.nmeta = nm;
    set.meta_keys = mk;
    set.meta_values = mv;
    char err[512] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_spans_write_h5(path, &set, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc == SPS_EINVAL) PyErr_SetString(PyExc_ValueError, err);
    else if (rc == SPS_ENOMEM) PyErr_NoMemory();
    else if (rc == SPS_EIO || rc == SPS_EPATH) sps__py_raise_os(rc, err, path);
    else if (rc) PyErr_SetString(PyExc_OSError, err);
    else res = Py_NewRef(Py_None);
done:
    if (have_lines) PyBuffer_Release(&b[5]);
    while (got > 0) PyBuffer_Release(&b[--got]);
    free(nv), free(fv), free(xv), free(tv), free(mk), free(mv);
    Py_DECREF(seq);
    return res;
}

static PyMethodDef export_methods[] = {
    {"export", (PyCFunction)(void (*)(void))ext_export, METH_VARARGS | METH_KEYWORDS,
     "export(in_path, out_path, format, ...) -> None: sps_export (speedscope, prof, svg, chrome)."},
    {"spans_write_h5", (PyCFunction)(void (*)(void))ext_spans_write_h5,
     METH_VARARGS | METH_KEYWORDS,
     "spans_write_h5(path, names, name, rank, thread, start_ns, end_ns) -> None: "
     "sps_spans_write_h5."},
    {NULL, NULL, 0, NULL},
};

/* Adds the export functions to module m.  0, or -1 with a Python error. */
int sps__py_export_init(PyObject *m) {
    return PyModule_AddFunctions(m, export_methods);
}
