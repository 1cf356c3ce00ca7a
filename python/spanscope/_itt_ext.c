/* _itt_ext.c -- the extension's ITT functions behind torch.profiler.itt's
 * helpers (spanscope.profiler.itt, _itt.py; docs/nvtx-itt.md): tasks and
 * markers with any name, in the ITT domain "spanscope", for Intel VTune.
 *
 * The extension embeds its own static part of Intel's ittnotify
 * (third_party/ittnotify, as every module that speaks ITT does: the
 * library's is hidden inside libspanscope.so), which loads the collector
 * named by INTEL_LIBITTNOTIFY64 on the first call here and is a no-op
 * without one.  Regions of the ITT emitter (emit_itt(), sps_emit_set) come
 * from the library's static part, in a domain of the same name.
 *
 * String handles are made once per name and kept in a dict (names are
 * Python strings; the collector keeps its handles for the process life
 * anyway), up to HANDLE_CACHE_MAX names; past that a name's handle is
 * asked of the static part each time (it finds it by name).  Depth is
 * counted per thread, as NVTX's range push/pop answer it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifdef SPS_HAVE_ITT
#include <sps_ittnotify.h>
#include <pthread.h>

#define HANDLE_CACHE_MAX 65536

static __itt_domain *g_domain;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static PyObject *g_handles; /* str -> int (the handle's address) */
static _Thread_local long t_depth; /* this thread's pushed ranges */

static void itt_init(void) {
    (void)sps__itt_get_collection_state(); /* loads the collector, if any */
    g_domain = __itt_domain_create("spanscope");
}

/* whether calls go anywhere (a collector's domain, enabled) */
static int itt_live(void) {
    pthread_once(&g_once, itt_init);
    return g_domain && g_domain->flags;
}

/* msg's string handle (NULL with a Python error; NULL without one when the
 * collector gives none: the task is then unnamed) */
static __itt_string_handle *handle_of(PyObject *msg, int *err) {
    *err = 0;
    PyObject *hit = PyDict_GetItemWithError(g_handles, msg); /* borrowed */
    if (hit) return (__itt_string_handle *)PyLong_AsVoidPtr(hit);
    if (PyErr_Occurred()) goto fail;
    const char *utf8 = PyUnicode_AsUTF8(msg);
    if (!utf8) goto fail;
    __itt_string_handle *h = __itt_string_handle_create(utf8);
    if (h && PyDict_GET_SIZE(g_handles) < HANDLE_CACHE_MAX) {
        PyObject *v = PyLong_FromVoidPtr(h);
        if (!v || PyDict_SetItem(g_handles, msg, v)) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_DECREF(v);
    }
    return h;
fail:
    *err = 1;
    return NULL;
}

static int check_msg(PyObject *msg, const char *fn) {
    if (!PyUnicode_Check(msg)) {
        PyErr_Format(PyExc_TypeError, "%s: msg must be a str, not %.100s", fn,
                     Py_TYPE(msg)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *itt_range_push(PyObject *mod, PyObject *msg) {
    (void)mod;
    if (check_msg(msg, "itt_range_push")) return NULL;
    if (itt_live()) {
        int err;
        __itt_string_handle *h = handle_of(msg, &err);
        if (err) return NULL;
        __itt_task_begin(g_domain, __itt_null, __itt_null, h);
    }
    return PyLong_FromLong(t_depth++);
}

static PyObject *itt_range_pop(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    if (t_depth == 0) return PyLong_FromLong(-1); /* nothing pushed here */
    if (itt_live()) __itt_task_end(g_domain);
    return PyLong_FromLong(--t_depth);
}

static PyObject *itt_mark(PyObject *mod, PyObject *msg) {
    (void)mod;
    if (check_msg(msg, "itt_mark")) return NULL;
    if (itt_live()) {
        int err;
        __itt_string_handle *h = handle_of(msg, &err);
        if (err) return NULL;
        __itt_marker(g_domain, __itt_null, h, __itt_marker_scope_thread);
    }
    Py_RETURN_NONE;
}

static PyObject *itt_attached(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    pthread_once(&g_once, itt_init);
    return PyBool_FromLong(sps__itt_get_collection_state() == __itt_collection_init_successful);
}

#define ITT_BUILT 1
#else
#define ITT_BUILT 0
#endif /* SPS_HAVE_ITT */

static PyObject *itt_built(PyObject *mod, PyObject *noargs) {
    (void)mod;
    (void)noargs;
    return PyBool_FromLong(ITT_BUILT);
}

static PyMethodDef itt_methods[] = {
    {"itt_built", itt_built, METH_NOARGS,
     "True when this build has ITT (the vendored ittnotify; CMake SPS_ITT)."},
#ifdef SPS_HAVE_ITT
    {"itt_attached", itt_attached, METH_NOARGS,
     "True when an ITT collector (VTune's, INTEL_LIBITTNOTIFY64) is loaded; the first "
     "ITT call loads it."},
    {"itt_range_push", itt_range_push, METH_O,
     "itt_range_push(msg) -> depth: begins an ITT task named msg in the domain "
     "'spanscope' on this thread; the zero-based depth of the range it starts."},
    {"itt_range_pop", itt_range_pop, METH_NOARGS,
     "itt_range_pop() -> depth: ends this thread's innermost task pushed by itt_range_push; "
     "the zero-based depth of the range it ends, -1 (and nothing ended) when none is open."},
    {"itt_mark", itt_mark, METH_O,
     "itt_mark(msg): an ITT marker (an instant, thread scope) named msg in the domain "
     "'spanscope'."},
#endif
    {NULL, NULL, 0, NULL}};

/* Adds the ITT functions to the module m (PyInit__ext).  0, or -1 with a
 * Python error.  Nothing of ITT is loaded here: the first call does it. */
int sps__py_itt_init(PyObject *m);
int sps__py_itt_init(PyObject *m) {
#ifdef SPS_HAVE_ITT
    if (!g_handles && !(g_handles = PyDict_New())) return -1;
#endif
    return PyModule_AddFunctions(m, itt_methods);
}
