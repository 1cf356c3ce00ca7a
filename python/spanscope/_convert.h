/*
 * _convert.h -- the helpers that the C files of the extension
 * (spanscope._ext: _ext.c, _export.c, _profiler.c) share, one of each:
 * the argument converters (defined in _export.c) and the one OSError
 * raised from the library's error state (defined in _ext.c).  Internal:
 * the extension is built with hidden visibility, so nothing here leaves
 * the module.
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

#endif
