/*
 * _convert.h -- the argument converters that the C files of the extension
 * (spanscope._ext: _ext.c, _export.c) share; one of each, defined in
 * _export.c.  Internal: the extension is built with hidden visibility, so
 * nothing here leaves the module.
 */
#ifndef SPS_PY_CONVERT_H
#define SPS_PY_CONVERT_H

#ifndef PY_SSIZE_T_CLEAN
#  define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stddef.h>

/* The str items of seq as a malloc'd array into *out (n of them, NULL
 * terminated), each pointing into seq's items: the caller keeps seq alive
 * while it uses them and frees *out.  seq is a PySequence_Fast result (a
 * list or a tuple), or NULL or None for none (*out NULL, *n 0).  Returns 0,
 * or -1 with a Python error: TypeError "WHAT must be a list of str" for
 * anything else or an item that is not a str, MemoryError. */
int sps__py_str_list(PyObject *seq, const char ***out, size_t *n, const char *what);

#endif
