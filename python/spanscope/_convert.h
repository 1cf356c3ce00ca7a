/*
 * _convert.h -- what the C files of the extension (spanscope._ext) share,
 * declared once.  The module is one shared object built from a file per
 * face and job:
 *
 *   _ext.c       the module: its init (PyInit__ext, which calls the
 *                sps__py_*_init below), the session functions and the
 *                thread namer;
 *   _regions.c   scope-profiler's recording objects: Region, the
 *                registry, region_lookup, ProfiledFunction, the recursive
 *                tracer and the benchmark floors that measure them;
 *   _results.c   the reader's model and everything that reads files:
 *                Column, read_file, read_index, file_paths, fold_spans,
 *                report, read_metadata, html_*, h5_check, terminal_text;
 *   _profiler.c  the torch-style face's C half (record_function, spans,
 *                timelines, Schedule);
 *   _export.c    the exports;
 *   _memhooks.c  the memory sources (Python's and numpy's allocators);
 *   _sampler.c   stack sampling: sampling_start/stop/hz/stats and the
 *                CPython frame walker the sampler's signal handler calls.
 *
 * Each file but _ext.c keeps its objects static and adds them to the
 * module in its sps__py_*_init(m): its own PyMethodDef table
 * (PyModule_AddFunctions) and its types.  What crosses files is here, one
 * of each: the argument converters (defined in _export.c), the one
 * OSError raised from the library's error state and the one mapping of
 * the other error codes (_ext.c), the list of str made from C strings
 * (_results.c), and the flag a decorated function reads to report its
 * arguments (_profiler.c).  None of it is on a per-call path but that
 * flag, a plain int read as before.  Internal: the extension is built
 * with hidden visibility, so nothing here leaves the module.
 */
#ifndef SPS_PY_CONVERT_H
#define SPS_PY_CONVERT_H

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include "spanscope.h"

#include <stddef.h>

/* ---- The module's parts: each adds its functions and types to m (the
 * module being made by PyInit__ext).  0, or -1 with a Python error. ---- */
int sps__py_regions_init(PyObject *m);  /* _regions.c */
int sps__py_results_init(PyObject *m);  /* _results.c */
int sps__py_profiler_init(PyObject *m); /* _profiler.c */
int sps__py_export_init(PyObject *m);   /* _export.c */
int sps__py_sampler_init(PyObject *m);  /* _sampler.c */

/* ---- Argument conversion (_export.c) ---- */

/* The str items of seq as a malloc'd array into *out (n of them, NULL
 * terminated), each pointing into seq's items: the caller keeps seq alive
 * while it uses them and frees *out.  seq is a PySequence_Fast result (a
 * list or a tuple), or NULL or None for none (*out NULL, *n 0).  Returns 0,
 * or -1 with a Python error: TypeError "WHAT must be a list of str" for
 * anything else or an item that is not a str, MemoryError. */
int sps__py_str_list(PyObject *seq, const char ***out, size_t *n, const char *what);

/* ---- Results to Python ---- */

/* The n UTF-8 strings s[] as a new list of str (invalid UTF-8 replaced),
 * or NULL with a Python error.  Defined in _results.c. */
PyObject *sps__py_utf8_list(const char *const *s, size_t n);

/* d[key] = v, taking v's reference (NULL: an error already set).  0 or
 * -1. */
static inline int sps__py_put(PyObject *d, const char *key, PyObject *v) {
    int rc = v ? PyDict_SetItemString(d, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

/* ---- Errors (_ext.c) ---- */

/* Raises OSError(errno, message, path) for a file that could not be
 * written or read (rc: SPS_EIO or SPS_EPATH): errno is the operating
 * system's cause when the library noted one (sps_last_errno: ENOSPC,
 * EROFS, EFBIG...; OSError then makes the matching subclass, e.g.
 * PermissionError for EACCES, FileNotFoundError for ENOENT) and the
 * message the library's line naming it (sps_last_error: "no space left on
 * device (writing out.h5)"), else EACCES (SPS_EPATH) / EIO with msg.  path
 * (NULL: None) becomes e.filename.  The one way every binding turns the C
 * error state into OSError.  Call it in the thread that made the failed
 * call (the state is thread-local).  Returns NULL. */
PyObject *sps__py_raise_os(int rc, const char *msg, const char *path);

/* Raises what the library's code rc (not 0) means in Python: OSError for
 * SPS_EPATH / SPS_EIO (sps__py_raise_os; path, NULL: None, its filename)
 * and SPS_EHDF5 (errno EIO), ValueError for SPS_EINVAL, MemoryError for
 * SPS_ENOMEM, else RuntimeError naming the code.  Returns NULL. */
PyObject *sps__py_raise_sps(int rc, const char *path);

/* ---- The torch-style face (_profiler.c), read by _regions.c's
 * decorated-function wrapper on every call ---- */

/* 1: every span opened from Python reports its arguments. */
extern int sps__py_capture;

/* A decorated function of region r was called with these arguments
 * (vectorcall convention), right after its sps_begin: reports them to the
 * payload hook.  0, or -1 with a Python error. */
int sps__py_capture_call(sps_region_t r, PyObject *name, PyObject *const *args,
                         size_t nargsf, PyObject *kwnames);

#endif
