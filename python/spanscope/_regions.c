/* _regions.c -- scope-profiler's recording face in C: what runs per call.
 *
 * Region (a context manager: __enter__/__exit__ are one sps_begin/sps_end
 * each), the registry (name -> Region) and region_lookup (the type that
 * is ProfileManager.region: a known name's lookup in C), ProfiledFunction
 * (what @profile returns: its vectorcall is begin, call, end), the
 * recursive tracer (a C profile hook, PyEval_SetProfile or sys.monitoring,
 * installed by the outermost recursive call) with its filters, and the
 * benchmark floors that measure them (ClockPair, _noop_profile,
 * _floor_pair_ns).  The Python package (spanscope.profile_manager) gives
 * them the API's shape.
 *
 * One file because these hot paths use each other's statics directly:
 * the wrapper reads its Region's fields and enters the tracer, the tracer
 * creates Regions through the registry, and sps_begin/sps_end (inline in
 * spanscope.h) are inlined into each.  Nothing per call leaves the file
 * but the read of _profiler.c's sps__py_capture flag (_convert.h).  Added
 * to the module by sps__py_regions_init, from PyInit__ext (_ext.c).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <frameobject.h>
#include <structmember.h>

#include "_convert.h"
#include "spanscope.h"

#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#  include <x86intrin.h>
#endif

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Python 3.10 to 3.13.  What differs, kept to these few lines:
 * - co_extra: 3.12 renamed the private calls PyUnstable_* (the old names
 *   are gone in 3.13);
 * - 3.10 has no co_qualname (added in 3.11): a traced function is named
 *   by co_name there, as scope-profiler's tracer names it on 3.10;
 * - 3.10 has no PyFrame_GetGlobals (3.11): the frame's f_globals field,
 *   public in 3.10's frameobject.h, is the same dict. */
#if PY_VERSION_HEX < 0x030A0000
#  error "spanscope needs Python 3.10 or newer"
#endif
#if PY_VERSION_HEX >= 0x030C0000
#  define CODE_GET_EXTRA PyUnstable_Code_GetExtra
#  define CODE_SET_EXTRA PyUnstable_Code_SetExtra
#  define REQUEST_EXTRA PyUnstable_Eval_RequestCodeExtraIndex
#else
#  define CODE_GET_EXTRA _PyCode_GetExtra
#  define CODE_SET_EXTRA _PyCode_SetExtra
#  define REQUEST_EXTRA _PyEval_RequestCodeExtraIndex
#endif
#if PY_VERSION_HEX >= 0x030B0000
#  define CODE_QUALNAME(code) ((code)->co_qualname)
#  define FRAME_GLOBALS(f) PyFrame_GetGlobals(f) /* a new reference */
#else
#  define CODE_QUALNAME(code) ((code)->co_name)
#  define FRAME_GLOBALS(f) Py_XNewRef((f)->f_globals)
#endif

/* Module state kept in statics: the extension is single-phase and the core
 * is process-wide anyway. */
static PyObject *g_registry;     /* dict name -> Region, insertion ordered */
/* set of the region ids (int) the recursive tracer created or used for
 * Python functions: what spanscope.profiler calls python_function events
 * (torch's key_averages leaves them out unless include_python_functions).
 * Filled on the tracer's slow path only (once per code object and
 * registry generation), emptied with the registry. */
static PyObject *g_traced;
static PyObject *g_region_class; /* the Python subclass to instantiate */
static uint32_t g_generation = 1; /* bumped by clear_registry (new session) */
static Py_ssize_t g_extra_index = -1;

/* ======================================================================== */
/* Region                                                                    */
/* ======================================================================== */

typedef struct {
    PyObject_HEAD
    sps_region_t id;
    int off;         /* 1: records nothing (an opt-in tag this run does not
                        enable, a region_tags filter): scope-profiler's
                        DisabledProfileRegion, one branch here */
    PyObject *name;
    PyObject *tags;  /* tuple of str, () when untagged */
} RegionObject;

static int Region_init(RegionObject *self, PyObject *args, PyObject *kw) {
    PyObject *name;
    static char *kwlist[] = {"name", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "U", kwlist, &name)) return -1;
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(name, &n);
    if (!s) return -1;
    if ((Py_ssize_t)strlen(s) != n) {
        PyErr_SetString(PyExc_ValueError, "region name must not contain NUL characters");
        return -1;
    }
    sps_region_t id = sps_region(s);
    if (id == SPS_REGION_INVALID) {
        PyErr_NoMemory();
        return -1;
    }
    self->id = id;
    Py_INCREF(name);
    Py_XSETREF(self->name, name);
    if (!self->tags) self->tags = PyTuple_New(0);
    return self->tags ? 0 : -1;
}

/* For Python subclasses, subtype_dealloc calls this and then drops the
 * reference to the heap type itself. */
static void Region_dealloc(RegionObject *self) {
    Py_XDECREF(self->name);
    Py_XDECREF(self->tags);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* use_likwid=True (profile_manager/_likwid.py): callables called with the
 * region's name right after each begin and right before each end, as
 * scope-profiler's FullProfileRegion places its LIKWID markers; NULL: none
 * (set_call_hooks).  Not while the session is paused. */
static PyObject *g_hook_start, *g_hook_stop;

static void call_hook(PyObject *fn, PyObject *name) {
    if (sps_is_paused()) return;
    PyObject *type, *value, *tb; /* an exception in flight (__exit__) stays */
    PyErr_Fetch(&type, &value, &tb);
    PyObject *res = PyObject_CallOneArg(fn, name);
    if (!res) PyErr_WriteUnraisable(fn);
    Py_XDECREF(res);
    PyErr_Restore(type, value, tb);
}

static PyObject *Region_enter(RegionObject *self, PyObject *unused) {
    (void)unused;
    if (!self->off) {
        sps_begin(self->id);
        if (g_hook_start) call_hook(g_hook_start, self->name);
    }
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Region_exit(RegionObject *self, PyObject *const *args,
                             Py_ssize_t nargs) {
    (void)args;
    (void)nargs;
    if (!self->off) {
        if (g_hook_stop) call_hook(g_hook_stop, self->name);
        sps_end(self->id);
    }
    Py_RETURN_FALSE; /* never swallows the exception; the call is counted */
}

static PyObject *stats_tuple(sps_region_t id) {
    sps_stats_t st;
    int rc = sps_region_stats(id, &st);
    if (rc == SPS_ENOSESSION) memset(&st, 0, sizeof st);
    else if (rc) return PyErr_Format(PyExc_RuntimeError, "%s", sps_strerror(rc));
    return Py_BuildValue("(KLLLLdd)", (unsigned long long)st.num_calls,
                         (long long)st.total_ns, (long long)st.self_ns,
                         (long long)st.min_ns, (long long)st.max_ns, st.mean_ns,
                         st.var_ns2);
}

static PyObject *Region_get_num_calls(RegionObject *self, void *c) {
    (void)c;
    sps_stats_t st;
    if (sps_region_stats(self->id, &st) != 0) st.num_calls = 0;
    return PyLong_FromUnsignedLongLong(st.num_calls);
}

static PyObject *Region_stats(RegionObject *self, PyObject *unused) {
    (void)unused;
    return stats_tuple(self->id);
}

/* A writable C-contiguous buffer of obj (None: none), as int64 slots:
 * *p and *n (0 for None).  0, or -1 with an exception set. */
static int int64_buffer(PyObject *obj, Py_buffer *view, int64_t **p, size_t *n) {
    *p = NULL;
    *n = 0;
    view->obj = NULL;
    if (obj == Py_None) return 0;
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)) return -1;
    if (view->itemsize != 8) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "expected a buffer of 8-byte items (int64)");
        return -1;
    }
    *p = view->buf;
    *n = (size_t)view->len / 8;
    return 0;
}

/* _calls_into(starts, durations): copies the starts and the durations
 * (int64 ns; either None) of the calls since the last finalize into the
 * given arrays, as many as the shorter holds, and returns how many calls
 * there are (sps_region_calls).  The caller allocates (numpy's large
 * arrays are cheaper to fault in than a bytes object); each call costs the
 * records written since the previous query plus the copy
 * (src/model/collect.c), so sizing with (None, None) first is cheap. */
static PyObject *Region_calls_into(RegionObject *self, PyObject *const *args,
                                   Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_calls_into(starts, durations) takes 2 arguments");
        return NULL;
    }
    Py_buffer vs, vd;
    int64_t *ps, *pd;
    size_t ns, nd;
    if (int64_buffer(args[0], &vs, &ps, &ns)) return NULL;
    if (int64_buffer(args[1], &vd, &pd, &nd)) {
        if (vs.obj) PyBuffer_Release(&vs);
        return NULL;
    }
    size_t cap = ps && pd ? (ns < nd ? ns : nd) : ps ? ns : nd;
    size_t n;
    Py_BEGIN_ALLOW_THREADS
    n = sps_region_calls(self->id, ps, pd, cap);
    Py_END_ALLOW_THREADS
    if (vs.obj) PyBuffer_Release(&vs);
    if (vd.obj) PyBuffer_Release(&vd);
    return PyLong_FromSize_t(n);
}

static PyObject *Region_repr(RegionObject *self) {
    return PyUnicode_FromFormat("<%s %R id=%u>", Py_TYPE(self)->tp_name, self->name,
                                (unsigned)self->id);
}

static PyMethodDef Region_methods[] = {
    {"__enter__", (PyCFunction)Region_enter, METH_NOARGS, "Enter the region (sps_begin)."},
    {"__exit__", (PyCFunction)(void (*)(void))Region_exit, METH_FASTCALL,
     "Leave the region (sps_end); exceptions propagate and the call is counted."},
    {"_stats", (PyCFunction)Region_stats, METH_NOARGS,
     "(num_calls, total_ns, self_ns, min_ns, max_ns, mean_ns, var_ns2) over the session."},
    {"_calls_into", (PyCFunction)(void (*)(void))Region_calls_into, METH_FASTCALL,
     "_calls_into(starts, durations) -> calls since the last finalize; copies their "
     "int64 starts and durations (ns) into the arrays given (None: not wanted)."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef Region_members[] = {
    {"id", T_UINT, offsetof(RegionObject, id), READONLY, "region id in the C core"},
    {"region_name", T_OBJECT, offsetof(RegionObject, name), READONLY, "the region's name"},
    {"name", T_OBJECT, offsetof(RegionObject, name), READONLY, "the region's name"},
    {"_off", T_INT, offsetof(RegionObject, off), 0,
     "1: the region records nothing (a disabled tag); set by the package"},
    {"_tags", T_OBJECT, offsetof(RegionObject, tags), 0,
     "the region's tags (a tuple; set by the package, read as .tags)"},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef Region_getset[] = {
    {"num_calls", (getter)Region_get_num_calls, NULL,
     "completed calls in this session (keeps counting across finalize)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject RegionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "spanscope._ext.Region",
    .tp_basicsize = sizeof(RegionObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A named region: a context manager recording one call per with-block.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Region_init,
    .tp_dealloc = (destructor)Region_dealloc,
    .tp_repr = (reprfunc)Region_repr,
    .tp_methods = Region_methods,
    .tp_members = Region_members,
    .tp_getset = Region_getset,
};

/* ======================================================================== */
/* The registry: name -> Region, cleared by each setup()                     */
/* ======================================================================== */

/* Borrowed reference to the region named name, created and registered if
 * new.  NULL with an exception set on failure. */
static PyObject *registry_get(PyObject *name) {
    PyObject *r = PyDict_GetItemWithError(g_registry, name);
    if (r || PyErr_Occurred()) return r;
    if (!PyUnicode_Check(name))
        return PyErr_Format(PyExc_TypeError, "region name must be str, not %.100s",
                            Py_TYPE(name)->tp_name);
    PyObject *cls = g_region_class ? g_region_class : (PyObject *)&RegionType;
    r = PyObject_CallOneArg(cls, name);
    if (!r) return NULL;
    int rc = PyDict_SetItem(g_registry, name, r);
    Py_DECREF(r);
    return rc ? NULL : r;
}

/* ======================================================================== */
/* region_lookup: ProfileManager.region(name), the lookup form, in C        */
/* ======================================================================== */

/* `with ProfileManager.region("step"):` looks the region up by name on
 * every call.  Done in Python (a classmethod and a dict lookup) that
 * lookup cost about as much again as the region itself.  Here the lookup
 * is C, and so is the way CPython reaches it: ProfileManager.region is a
 * type object, RegionLookupType, whose call (tp_vectorcall) is the lookup
 * and returns a Region, never an instance of the type.  A type is no
 * descriptor, so CPython fetches it from the class without making a bound
 * method (a classmethod allocates one per call), and CPython 3.11+
 * specialises the call of a static type with a tp_vectorcall into a
 * direct C call (PRECALL_BUILTIN_CLASS).  Measured in one run on our VMs:
 * a vectorcall object 1.27x a held region, a builtin function 1.07x, this
 * type 1.09-1.13x, and unlike the builtin it can carry the __func__ that
 * scope-profiler's users compare (`ProfileManager.profile_region.__func__
 * is ProfileManager.region.__func__`, on the seed page): it is the type
 * itself.
 *
 * A name already known comes from a cache keyed by the name object's
 * address (below), else from the registry (dict name -> Region).
 * Everything else -- a new name, keywords (functions=, tags=), a name that
 * is not a str -- goes to the package's slow path (set_region_slow), which
 * creates and shapes regions in Python, once per name. */
static PyObject *g_region_slow; /* the package's region(name, functions, tags) */

/* In front of the registry, a direct-mapped cache keyed by the name
 * object's address: a call site passes the same str (a constant) on every
 * call, so a hit is one compare instead of a dict probe.  Entries hold
 * strong references (an address cannot be reused while cached) and belong
 * to one registry generation (clear_registry empties them). */
#define LOOKUP_CACHE 64
static struct { PyObject *name, *region; } g_lookup_cache[LOOKUP_CACHE];

static inline size_t lookup_slot(PyObject *name) {
    return ((uintptr_t)name >> 4) % LOOKUP_CACHE;
}

static void lookup_cache_clear(void) {
    for (size_t i = 0; i < LOOKUP_CACHE; i++) {
        Py_CLEAR(g_lookup_cache[i].name);
        Py_CLEAR(g_lookup_cache[i].region);
    }
}

/* region(name, functions=None, tags=None) -> a new reference to the
 * Region, or NULL with an exception set. */
static PyObject *region_lookup(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    size_t nargsf = (size_t)nargs;
    if (nargs == 1 && !kwnames) {
        size_t i = lookup_slot(args[0]);
        if (g_lookup_cache[i].name == args[0]) return Py_NewRef(g_lookup_cache[i].region);
        if (PyUnicode_CheckExact(args[0])) {
            PyObject *r = PyDict_GetItemWithError(g_registry, args[0]);
            if (r) {
                Py_XSETREF(g_lookup_cache[i].name, Py_NewRef(args[0]));
                Py_XSETREF(g_lookup_cache[i].region, Py_NewRef(r));
                return Py_NewRef(r);
            }
            if (PyErr_Occurred()) return NULL;
        }
    }
    if (!g_region_slow) { /* the package is not imported (tests of _ext) */
        if (nargs != 1 || kwnames) {
            PyErr_SetString(PyExc_TypeError, "region(name) takes exactly one argument");
            return NULL;
        }
        return Py_XNewRef(registry_get(args[0]));
    }
    return PyObject_Vectorcall(g_region_slow, args, nargsf, kwnames);
}

/* The lookup as the call of a type (see above): RegionLookupType's
 * tp_vectorcall.  tp_new is what a call without vectorcall reaches
 * (PyObject_Call with a dict of keywords, type.__call__). */
static PyObject *lookup_type_call(PyObject *type, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
    (void)type;
    return region_lookup(args, PyVectorcall_NARGS(nargsf), kwnames);
}

static PyObject *lookup_type_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
    (void)t;
    (void)kw;
    PyObject *const *v = &PyTuple_GET_ITEM(args, 0);
    if (kw && PyDict_GET_SIZE(kw) && g_region_slow) /* keywords: the slow path */
        return PyObject_Call(g_region_slow, args, kw);
    return region_lookup(v, PyTuple_GET_SIZE(args), NULL);
}

static PyTypeObject RegionLookupType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "spanscope._ext.region",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "region(region_name, functions=None, tags=None)\n--\n\n"
              "The Region of that name, created on first use (the lookup of a known "
              "name runs in C).",
    .tp_new = lookup_type_new,
    .tp_vectorcall = lookup_type_call,
};

static PyObject *ext_set_region_slow(PyObject *mod, PyObject *func) {
    (void)mod;
    if (!PyCallable_Check(func)) return PyErr_Format(PyExc_TypeError, "expected a callable");
    Py_XSETREF(g_region_slow, Py_NewRef(func));
    Py_RETURN_NONE;
}

/* registry_new(name) -> a new Region of the package's class, not
 * registered (the slow path registers it once shaped). */
static PyObject *ext_region_new(PyObject *mod, PyObject *name) {
    (void)mod;
    PyObject *cls = g_region_class ? g_region_class : (PyObject *)&RegionType;
    return PyObject_CallOneArg(cls, name);
}

static PyObject *ext_clear_registry(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    lookup_cache_clear();
    PyDict_Clear(g_registry);
    PySet_Clear(g_traced);
    g_generation++;
    Py_RETURN_NONE;
}

/* set_region_class(cls): the Region subclass the registry creates. */
static PyObject *ext_set_region_class(PyObject *mod, PyObject *cls) {
    (void)mod;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &RegionType))
        return PyErr_Format(PyExc_TypeError, "expected a subclass of Region");
    Py_INCREF(cls);
    Py_XSETREF(g_region_class, cls);
    Py_RETURN_NONE;
}

/* begin(id) / end(id): sps_begin / sps_end by region id (for tests). */
static PyObject *ext_begin(PyObject *mod, PyObject *id) {
    (void)mod;
    sps_begin((sps_region_t)PyLong_AsUnsignedLong(id));
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

static PyObject *ext_end(PyObject *mod, PyObject *id) {
    (void)mod;
    sps_end((sps_region_t)PyLong_AsUnsignedLong(id));
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* ======================================================================== */
/* The recursive tracer                                                      */
/* ======================================================================== */

/* Per-thread stack of what each traced CALL pushed: a region id to end on
 * the matching RETURN, or 0 for a frame that is not recorded. */
typedef struct tstack {
    sps_region_t *v;
    size_t n, cap;
    int depth; /* nesting of recursive wrappers on this thread */
    int monitoring; /* 1: this thread's outermost wrapper uses sys.monitoring */
    int evalframe;  /* 1: ... uses the frame evaluation hook (PEP 523) */
    int busy;       /* 1: inside the tracer's slow path (its Python code is not traced) */
    Py_tracefunc prev_func;
    PyObject *prev_obj;
} tstack_t;
static _Thread_local tstack_t t_trace __attribute__((tls_model("initial-exec")));

#define EXTRA_SKIP ((void *)(uintptr_t)1) /* decorated function: records itself */
#define SPS__PY_LIKELY(x) __builtin_expect(!!(x), 1)

static int tstack_push(tstack_t *t, sps_region_t r) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        sps_region_t *v = realloc(t->v, cap * sizeof *v);
        if (!v) return -1;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = r;
    return 0;
}

/* Path prefixes (resolved) whose code the tracer leaves out -- the
 * standard library and installed packages, for profile_script's "user code
 * only" -- as a tuple of str, or NULL: everything is traced. */
static PyObject *g_trace_skip;

/* Non-zero when g_trace_skip leaves code out: a code object without a real
 * file ("<string>", "<frozen ...>") or one whose file (resolved) lies under
 * a prefix.  Runs once per code object and generation (the result is
 * cached in co_extra). */
/* skipped_file's answers per file name (co_filename -> True/False), so
 * that the realpath() of a file is resolved once, not once per code
 * object of it (a module's functions share their file); emptied when the
 * prefixes change. */
static PyObject *g_skip_cache;

static int skipped_path(const char *fn) {
    if (!*fn || fn[0] == '<') return 1;
    char buf[PATH_MAX];
    const char *path = realpath(fn, buf) ? buf : fn;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(g_trace_skip); i++) {
        const char *pre = PyUnicode_AsUTF8(PyTuple_GET_ITEM(g_trace_skip, i));
        if (!pre) {
            PyErr_Clear();
            continue;
        }
        size_t n = strlen(pre);
        if (n && strncmp(path, pre, n) == 0 && (path[n] == '/' || path[n] == 0)) return 1;
    }
    return 0;
}

static int skipped_file(PyCodeObject *code) {
    if (!g_trace_skip) return 0;
    PyObject *known = g_skip_cache ? PyDict_GetItemWithError(g_skip_cache, code->co_filename)
                                   : NULL;
    if (known) return known == Py_True;
    PyErr_Clear();
    const char *fn = PyUnicode_AsUTF8(code->co_filename);
    if (!fn) {
        PyErr_Clear();
        return 1;
    }
    int skip = skipped_path(fn);
    if (!g_skip_cache) g_skip_cache = PyDict_New();
    if (!g_skip_cache ||
        PyDict_SetItem(g_skip_cache, code->co_filename, skip ? Py_True : Py_False) < 0)
        PyErr_Clear(); /* only the cache lost */
    return skip;
}

/* The name filters of run_script / `spanscope run` (set_trace_filters):
 * g_trace_include and g_trace_exclude are compiled regular expressions of
 * Python's fnmatch.translate (the patterns joined by "|"), or NULL for no
 * patterns; g_trace_entry is a str or NULL.  Python's own translation, not
 * fnmatch(3): scope-profiler matches with fnmatch.fnmatch, whose rules
 * differ from glibc's (a backslash is a plain character, "[^a]" is the set
 * of '^' and 'a', a reversed range is dropped, no [:classes:]), and the
 * decision is taken once per code object and generation, so calling the
 * compiled expression costs nothing per call. */
static PyObject *g_trace_include, *g_trace_exclude, *g_trace_entry;

/* 1 when the expression rx (a compiled re.Pattern, NULL: no patterns)
 * matches name, 0 when not, -1 with an exception set. */
static int pattern_matches(PyObject *rx, PyObject *name) {
    Py_INCREF(rx); /* held: a set_trace_filters of another thread may replace it */
    PyObject *m = PyObject_CallMethod(rx, "match", "O", name);
    Py_DECREF(rx);
    if (!m) return -1;
    int hit = m != Py_None;
    Py_DECREF(m);
    return hit;
}

/* Whether the traced function named name ("<module>.<qualname>") passes
 * the filters, as scope-profiler's tracer decides: no include pattern or
 * one that matches, and no exclude pattern that matches.  An error in
 * the matcher (memory) leaves the function out. */
static int name_passes(PyObject *name) {
    int in = g_trace_include ? pattern_matches(g_trace_include, name) : 1;
    int out = in == 1 && g_trace_exclude ? pattern_matches(g_trace_exclude, name) : 0;
    if (in < 0 || out < 0) {
        PyErr_Clear();
        return 0;
    }
    return in && !out;
}

/* The region name a traced function records under: the entrypoint's name
 * for the code whose co_name equals it (scope-profiler's root renamed),
 * else name itself.  A new reference (the region's creation runs Python
 * code, during which another thread may replace g_trace_entry). */
static PyObject *recorded_name(PyCodeObject *code, PyObject *name) {
    if (g_trace_entry && PyUnicode_Compare(code->co_name, g_trace_entry) == 0)
        return Py_NewRef(g_trace_entry);
    return Py_NewRef(name);
}

/* Caches what the tracer decided for code in generation gen: its region
 * id, 0 for left out. */
static void cache_decision(PyCodeObject *code, uint32_t gen, sps_region_t id) {
    if (g_extra_index >= 0)
        CODE_SET_EXTRA((PyObject *)code, g_extra_index,
                       (void *)(uintptr_t)((uint64_t)gen << 32 | id));
}

/* The region of a traced code object, cached in the code's co_extra slot as
 * (generation << 32 | id), id 0 for a frame left out in this generation
 * (a skipped file or a name the filters refuse: a later call costs the
 * same one compare either way); 0 if the frame is not to be recorded.
 * frame is the code's running frame (borrowed), or NULL for the current
 * one (sys.monitoring hands the hook the code only): it is read on the
 * slow path alone, for the module name. */
static sps_region_t traced_region_slow(PyFrameObject *frame, PyObject *fglobals,
                                       PyCodeObject *code);

static inline sps_region_t traced_region(PyFrameObject *frame, PyObject *fglobals,
                                         PyCodeObject *code) {
    void *extra = NULL;
    if (g_extra_index >= 0) CODE_GET_EXTRA((PyObject *)code, g_extra_index, &extra);
    if (extra == EXTRA_SKIP) return 0;
    uint64_t v = (uint64_t)(uintptr_t)extra;
    if (SPS__PY_LIKELY(v && (uint32_t)(v >> 32) == g_generation)) return (sps_region_t)v;
    return traced_region_slow(frame, fglobals, code);
}

/* traced_region's slow path, once per code object and generation: the
 * name is "<module>.<qualname>", the module's name read from the frame's
 * globals (fglobals, borrowed, when the hook has them: the frame
 * evaluation hook runs before its frame is the current one; else frame's,
 * else the current frame's).  The decision is cached under the generation
 * it started in: the matcher and the region's creation run Python code,
 * and a new generation meanwhile (new filters, a new registry) must decide
 * again.  That Python code is not traced (t->busy).  An exception pending
 * when it starts (one thrown into a generator: the frame evaluation hook
 * sees the frame before it raises there) is put aside and restored. */
__attribute__((noinline))
static sps_region_t traced_region_slow(PyFrameObject *frame, PyObject *fglobals,
                                       PyCodeObject *code) {
    tstack_t *t = &t_trace;
    int busy = t->busy;
    t->busy = 1;
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *pending = PyErr_GetRaisedException();
#else
    PyObject *ptype, *pvalue, *ptb;
    PyErr_Fetch(&ptype, &pvalue, &ptb);
#endif
    sps_region_t id = 0;
    uint32_t gen = g_generation;
    if (!fglobals && !frame) frame = PyEval_GetFrame();
    PyObject *globals = fglobals ? Py_NewRef(fglobals) : frame ? FRAME_GLOBALS(frame) : NULL;
    PyObject *mod = globals ? PyDict_GetItemString(globals, "__name__") : NULL;
    Py_XDECREF(globals);
    const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : "?";
    if (!m) {
        PyErr_Clear();
        m = "?";
    }
    if (strcmp(m, "spanscope") == 0 || strncmp(m, "spanscope.", 10) == 0) {
        if (g_extra_index >= 0) CODE_SET_EXTRA((PyObject *)code, g_extra_index, EXTRA_SKIP);
        goto done;
    }
    if (skipped_file(code)) {
        cache_decision(code, gen, 0);
        goto done;
    }
    PyObject *name = PyUnicode_FromFormat("%s.%U", m, CODE_QUALNAME(code));
    if (name && !name_passes(name)) {
        Py_DECREF(name);
        cache_decision(code, gen, 0);
        goto done;
    }
    PyObject *as = name ? recorded_name(code, name) : NULL;
    PyObject *r = as ? registry_get(as) : NULL;
    Py_XDECREF(as);
    Py_XDECREF(name);
    if (!r) {
        PyErr_Clear();
        goto done;
    }
    id = ((RegionObject *)r)->id;
    PyObject *idobj = PyLong_FromUnsignedLong(id);
    if (!idobj || PySet_Add(g_traced, idobj) < 0) PyErr_Clear(); /* only a label lost */
    Py_XDECREF(idobj);
    cache_decision(code, gen, id);
done:
    PyErr_Clear(); /* nothing of ours outlives the slow path */
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(pending);
#else
    PyErr_Restore(ptype, pvalue, ptb);
#endif
    t->busy = busy;
    return id;
}

/* What a function's start (or resume) does on a tracing thread: push the
 * region to end on the matching exit (0: not recorded) and begin it.  The
 * first frame after trace_enter is the decorated function itself, which
 * records itself.  frame: as traced_region's. */
static inline void traced_start(tstack_t *t, PyFrameObject *frame, PyObject *fglobals,
                                PyCodeObject *code) {
    sps_region_t r = t->n > 0 ? traced_region(frame, fglobals, code) : 0;
    if (tstack_push(t, r) == 0 && r) sps_begin(r);
}

/* What a function's exit (return, yield, unwind) does: end what its start
 * pushed.  An exit with nothing pushed (a frame that started before the
 * tracer) is ignored. */
static inline void traced_exit(tstack_t *t) {
    if (t->n > 0) {
        sps_region_t r = t->v[--t->n];
        if (r) sps_end(r);
    }
}

/* The PyEval_SetProfile hook (every version; the default of none now: the
 * fallback when sys.monitoring has no free tool id). */
static int tracer(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
    (void)obj;
    tstack_t *t = &t_trace;
    if (t->prev_func && t->prev_func(t->prev_obj, frame, what, arg) < 0)
        return -1; /* chain to the profiler that was there before */
    if (what == PyTrace_CALL) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        traced_start(t, frame, NULL, code);
        Py_DECREF(code);
    } else if (what == PyTrace_RETURN) {
        traced_exit(t);
    }
    return 0;
}

/* The hooks the tracer can use.  PyEval_SetProfile exists everywhere; on
 * 3.12+ sys.monitoring (PEP 669) hands the hook the code object without
 * making a frame object, and since 3.12 sys.setprofile is itself a layer
 * over it; the frame evaluation hook (PEP 523, below) brackets each
 * frame's evaluation on every version.  The default is the one measured
 * cheapest per traced call (docs/benchmarks.md, "Python versions" and
 * "spanscope run --recursive against cProfile"): the frame evaluation hook
 * (a fib run, CPU time, added per call over cProfile's: 0.34x on 3.10,
 * 0.34-0.36x on 3.11, 0.40-0.41x on 3.12, where sys.monitoring measured
 * 0.53-0.57x and setprofile 0.62x / 0.81x / 1.16x).  set_trace_hook
 * switches. */
enum { HOOK_SETPROFILE = 0, HOOK_MONITORING = 1, HOOK_EVALFRAME = 2 };
/* The frame evaluation hook reads the interpreter's frames (below), whose
 * layout it mirrors for 3.10 to 3.13 only: a newer CPython gets
 * sys.monitoring until its layout is added and measured.
 *
 * It makes every Python call a C call of the evaluator, so deep recursion
 * uses the C stack, as on 3.10 always.  3.12 counts C recursion against a
 * low limit of its own (3.12.1: a 900-deep recursion raised RecursionError
 * under the hook, fine without it): ef_eval gives that count back (EF_C_GIVE
 * below).  3.11, 3.12
 * and 3.13 are fine up to thousands of frames (3.11: 15 000 deep ran, 30 000
 * crashed on the C stack where the interpreter alone runs it; 3.13: 3 000
 * ran, 8 000 raised RecursionError), which only a program that raised
 * sys.setrecursionlimit reaches: when the limit is above EF_SAFE_LIMIT at
 * the outermost recursive call, that call traces with the other hook
 * (setprofile on 3.11, sys.monitoring on 3.12 and 3.13).  3.10 loses nothing: its
 * interpreter recurses in C anyway. */
#if PY_VERSION_HEX < 0x030E0000
#  define SPS_HAVE_EVALFRAME 1
#else
#  define SPS_HAVE_EVALFRAME 0
#endif
#if SPS_HAVE_EVALFRAME
#  define HOOK_DEFAULT HOOK_EVALFRAME
#elif PY_VERSION_HEX >= 0x030C0000
#  define HOOK_DEFAULT HOOK_MONITORING
#else
#  define HOOK_DEFAULT HOOK_SETPROFILE
#endif
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#  define EF_SAFE_LIMIT 10000 /* 3.11 */
#  define HOOK_DEEP HOOK_SETPROFILE
#elif PY_VERSION_HEX >= 0x030C0000
#  define EF_SAFE_LIMIT 4000 /* 3.12 and 3.13 */
#  define HOOK_DEEP HOOK_MONITORING
#else
#  define EF_SAFE_LIMIT INT_MAX /* 3.10: the interpreter's own recursion is C's */
#  define HOOK_DEEP HOOK_EVALFRAME
#endif
static int g_hook = HOOK_DEFAULT;
/* 1 while the hook is the default one (set_trace_hook clears it): only the
 * default gives way to HOOK_DEEP under a high recursion limit */
static int g_hook_auto = 1;

/* The frame evaluation hook (PEP 523), the default: the
 * interpreter hands every frame it evaluates -- a call, a generator's or
 * coroutine's resume or throw -- to this function, which begins the
 * frame's region, has the previous evaluator (CPython's own) run the frame
 * and ends the region when it returns, yields or unwinds: the events
 * sys.setprofile's "call" and "return" are made of, so the same regions and
 * counts (tests/python/test_trace_hooks.py compares the hooks).  There is
 * no frame object, no tracing machinery and no Python call per event, where
 * the setprofile hook makes the frame object of every call (3.11) and
 * switches the thread's tracing state twice per call.  What it costs
 * instead: while it is installed (between the first thread's outermost
 * recursive call and the last one's return) 3.11+ does not inline
 * Python-to-Python calls, on every thread (each call is a C call of the
 * evaluator, as in 3.10), and sys.monitoring's tools (cProfile, coverage)
 * keep working beside it.  Measured: docs/benchmarks.md, "spanscope run
 * --recursive against cProfile".
 *
 * The hook is per interpreter, so, like the sys.monitoring callbacks, it
 * first checks that its own thread traces (t->evalframe); a frame of
 * another thread or of the tracer's own slow path goes straight to the
 * previous evaluator.  A hook another tool had installed (a debugger's) is
 * the previous evaluator, called in turn. */
#if SPS_HAVE_EVALFRAME
#if PY_VERSION_HEX >= 0x030C0000
/* 3.12's and 3.13's _PyInterpreterFrame (Include/internal/pycore_frame.h:
 * the fields up to owner, the same layout in both; the first is the code
 * object on 3.12, on 3.13 the code object or None) */
typedef struct {
    PyObject *f_code;
    void *previous;
    PyObject *f_funcobj;
    PyObject *f_globals;
    PyObject *f_builtins;
    PyObject *f_locals;
    PyFrameObject *frame_obj;
    void *instr;
    int stacktop;
    uint16_t return_offset;
    char owner; /* FRAME_OWNED_BY_THREAD 0, _BY_GENERATOR 1, ... */
} sps_iframe_t;
typedef struct _PyInterpreterFrame ef_frame_t;
#  define EF_CODE(f) ((PyCodeObject *)((sps_iframe_t *)(f))->f_code)
#  define EF_GLOBALS(f) (((sps_iframe_t *)(f))->f_globals)
#  define EF_MAKES_GENERATOR(f)                                                            \
      (!PyCode_Check(((sps_iframe_t *)(f))->f_code) ||                                    \
       (((sps_iframe_t *)(f))->owner == 0 &&                                              \
        (EF_CODE(f)->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))))
#elif PY_VERSION_HEX >= 0x030B0000
/* 3.11's _PyInterpreterFrame (Include/internal/pycore_frame.h, 3.11.0 to
 * 3.11.x: the fields up to owner, which an extension cannot include) */
typedef struct {
    PyFunctionObject *f_func;
    PyObject *f_globals;
    PyObject *f_builtins;
    PyObject *f_locals;
    PyCodeObject *f_code;
    PyFrameObject *frame_obj;
    void *previous;
    void *prev_instr;
    int stacktop;
    _Bool is_entry;
    char owner; /* FRAME_OWNED_BY_THREAD 0, _BY_GENERATOR 1, _BY_FRAME_OBJECT 2 */
} sps_iframe_t;
typedef struct _PyInterpreterFrame ef_frame_t;
#    define EF_CODE(f) (((sps_iframe_t *)(f))->f_code)
#    define EF_GLOBALS(f) (((sps_iframe_t *)(f))->f_globals)
/* 3.11 evaluates a generator function's new frame up to RETURN_GENERATOR,
 * which makes the generator: no "call" event there (the first is at the
 * RESUME after it, when the generator starts), so not a start here: a
 * frame of a generator's code still owned by the thread is that one. */
#    define EF_MAKES_GENERATOR(f)                                                          \
        (((sps_iframe_t *)(f))->owner == 0 &&                                            \
         (EF_CODE(f)->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)))
#else
typedef PyFrameObject ef_frame_t; /* 3.10: the frame object; a generator
                                     function's call makes its generator
                                     without evaluating the frame */
#    define EF_CODE(f) ((f)->f_code)
#    define EF_GLOBALS(f) ((f)->f_globals)
#    define EF_MAKES_GENERATOR(f) 0
#endif

static _PyFrameEvalFunction g_ef_prev; /* the evaluator ours calls */
static int g_ef_threads;               /* threads tracing with it (GIL held) */

/* 3.12's evaluator counts each evaluation it is entered for against the C
 * recursion limit (c_recursion_remaining, 1500 in 3.12.1) as two units
 * (PY_EVAL_C_STACK_UNITS, Include/internal/pycore_ceval.h), which a Python
 * call inlined by the interpreter never takes: under the hook a 900-deep
 * recursion raised RecursionError where the bare interpreter runs it.  So
 * each frame's evaluation is given back the units it takes when CPython's
 * own evaluator runs it (another tool's evaluator counts as it likes): the
 * limits are the interpreter's again -- Python's recursion limit bounds the
 * frames, and EF_SAFE_LIMIT the C stack they use under the hook
 * (tests/python/test_recursive_fast.py runs 3 900 frames on the main thread
 * and on another).  3.13 counts the same way against 10 000 (8 000 frames
 * refused, 4 000 run): nothing to give back under EF_SAFE_LIMIT. */
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
#  define EF_C_UNITS 2 /* PY_EVAL_C_STACK_UNITS */
#  define EF_C_GIVE(ts)                                                                    \
      ((ts)->c_recursion_remaining += g_ef_prev == _PyEval_EvalFrameDefault ? EF_C_UNITS : 0)
#  define EF_C_TAKE(ts)                                                                    \
      ((ts)->c_recursion_remaining -= g_ef_prev == _PyEval_EvalFrameDefault ? EF_C_UNITS : 0)
#else
#  define EF_C_GIVE(ts) ((void)0)
#  define EF_C_TAKE(ts) ((void)0)
#endif

static PyObject *ef_eval(PyThreadState *ts, ef_frame_t *f, int throwflag) {
    tstack_t *t = &t_trace;
    PyObject *res;
    if (!t->evalframe || t->busy || EF_MAKES_GENERATOR(f)) {
        EF_C_GIVE(ts); /* other threads' calls are not inlined either */
        res = g_ef_prev(ts, f, throwflag);
        EF_C_TAKE(ts);
        return res;
    }
    size_t n = t->n;
    traced_start(t, NULL, EF_GLOBALS(f), EF_CODE(f));
    EF_C_GIVE(ts);
    res = g_ef_prev(ts, f, throwflag);
    EF_C_TAKE(ts);
    /* ends what the start pushed, unless the outermost wrapper's return
     * emptied the stack meanwhile (it cannot on this thread: defensive) */
    if (t->n > n) traced_exit(t);
    return res;
}

/* Installs ef_eval for the first tracing thread (the evaluator found
 * there, CPython's or another tool's, is the one it calls). */
static void ef_install(void) {
    PyInterpreterState *is = PyThreadState_Get()->interp;
    if (g_ef_threads++ == 0) {
        _PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(is);
        if (cur != (_PyFrameEvalFunction)ef_eval) {
            g_ef_prev = cur;
            _PyInterpreterState_SetEvalFrameFunc(is, (_PyFrameEvalFunction)ef_eval);
        }
    }
}

/* Puts the previous evaluator back when the last tracing thread stops
 * (unless another tool replaced ours meanwhile: theirs stays). */
static void ef_uninstall(void) {
    PyInterpreterState *is = PyThreadState_Get()->interp;
    if (--g_ef_threads == 0 &&
        _PyInterpreterState_GetEvalFrameFunc(is) == (_PyFrameEvalFunction)ef_eval)
        _PyInterpreterState_SetEvalFrameFunc(is, g_ef_prev);
}
#endif /* SPS_HAVE_EVALFRAME */

#if PY_VERSION_HEX >= 0x030C0000
/* sys.monitoring: the events are global to the interpreter (all threads),
 * so each callback first checks that its own thread is inside a recursive
 * wrapper, as the per-thread PyEval_SetProfile hook is.  The events are
 * those sys.setprofile is made of (CPython's Python/legacy_tracing.c):
 * PY_START, PY_RESUME and PY_THROW are its "call", PY_RETURN, PY_YIELD
 * and PY_UNWIND its "return"; C functions (CALL, C_RETURN) are not
 * traced, as the setprofile hook ignores its c_call events.  Same events,
 * same stack: the same regions and counts, generators counted once per
 * resume, an exception's unwind ending its frames' regions. */
static int g_mon_tool = -1;     /* the tool id held, -1: none yet */
static int g_mon_threads;       /* threads inside a recursive wrapper (GIL held) */
static PyObject *g_mon_set_events; /* sys.monitoring.set_events */
static long g_mon_events;       /* the event set above */

static PyObject *mon_start(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    (void)self;
    tstack_t *t = &t_trace;
    if (t->depth > 0 && n >= 1 && PyCode_Check(args[0]))
        traced_start(t, NULL, NULL, (PyCodeObject *)args[0]);
    Py_RETURN_NONE;
}

static PyObject *mon_exit(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    (void)self;
    (void)args;
    (void)n;
    tstack_t *t = &t_trace;
    if (t->depth > 0) traced_exit(t);
    Py_RETURN_NONE;
}

static PyMethodDef mon_start_def = {"spanscope_start", (PyCFunction)(void (*)(void))mon_start,
                                    METH_FASTCALL, NULL};
static PyMethodDef mon_exit_def = {"spanscope_exit", (PyCFunction)(void (*)(void))mon_exit,
                                   METH_FASTCALL, NULL};

/* Takes a free tool id (4, then 3: the ones CPython gives no name, so
 * that coverage, debuggers and cProfile keep theirs) and registers the
 * callbacks, once per process: the id is held until exit.  0 on success;
 * -1 with an exception set when sys.monitoring has no free id. */
static int mon_acquire(void) {
    if (g_mon_tool >= 0) return 0;
    PyObject *mon = PySys_GetObject("monitoring"); /* borrowed */
    if (!mon) {
        PyErr_SetString(PyExc_RuntimeError, "sys.monitoring is missing");
        return -1;
    }
    PyObject *events = PyObject_GetAttrString(mon, "events");
    if (!events) return -1;
    static const char *const starts[] = {"PY_START", "PY_RESUME", "PY_THROW"};
    static const char *const exits[] = {"PY_RETURN", "PY_YIELD", "PY_UNWIND"};
    long ev[6];
    for (int i = 0; i < 6; i++) {
        PyObject *v = PyObject_GetAttrString(events, i < 3 ? starts[i] : exits[i - 3]);
        ev[i] = v ? PyLong_AsLong(v) : -1;
        Py_XDECREF(v);
        if (ev[i] < 0) {
            Py_DECREF(events);
            return -1;
        }
    }
    Py_DECREF(events);
    int tool = -1;
    for (int id = 4; id >= 3 && tool < 0; id--) {
        PyObject *r = PyObject_CallMethod(mon, "use_tool_id", "is", id, "spanscope");
        if (r) tool = id;
        else PyErr_Clear(); /* ValueError: taken */
        Py_XDECREF(r);
    }
    if (tool < 0) {
        PyErr_SetString(PyExc_RuntimeError, "sys.monitoring has no free tool id (3 and 4 taken)");
        return -1;
    }
    PyObject *start = PyCFunction_New(&mon_start_def, NULL);
    PyObject *exit_ = PyCFunction_New(&mon_exit_def, NULL);
    int rc = start && exit_ ? 0 : -1;
    long all = 0;
    for (int i = 0; i < 6 && rc == 0; i++) {
        PyObject *r = PyObject_CallMethod(mon, "register_callback", "ilO", tool, ev[i],
                                          i < 3 ? start : exit_);
        rc = r ? 0 : -1;
        Py_XDECREF(r);
        all |= ev[i];
    }
    Py_XDECREF(start);
    Py_XDECREF(exit_);
    g_mon_set_events = rc == 0 ? PyObject_GetAttrString(mon, "set_events") : NULL;
    if (!g_mon_set_events) {
        PyObject *r = PyObject_CallMethod(mon, "free_tool_id", "i", tool);
        Py_XDECREF(r);
        return -1;
    }
    g_mon_tool = tool;
    g_mon_events = all;
    return 0;
}

/* Switches the events on (the first tracing thread) or off (the last). */
static void mon_set(int on) {
    PyObject *r = PyObject_CallFunction(g_mon_set_events, "il", g_mon_tool, on ? g_mon_events : 0L);
    if (!r) PyErr_WriteUnraisable(g_mon_set_events); /* nothing the caller can do */
    Py_XDECREF(r);
}
#endif

/* Installs the tracer for the outermost recursive call on this thread.
 * With sys.monitoring, the thread's stack starts empty and the events go
 * on when it is the first thread tracing; a hook that cannot be had
 * (no free tool id) falls back to PyEval_SetProfile for good. */
static void trace_enter(void) {
    tstack_t *t = &t_trace;
    if (t->depth++ > 0) return;
    t->n = 0;
    int hook = g_hook;
    if (hook == HOOK_EVALFRAME && g_hook_auto && Py_GetRecursionLimit() > EF_SAFE_LIMIT)
        hook = HOOK_DEEP; /* see EF_SAFE_LIMIT */
#if PY_VERSION_HEX >= 0x030C0000
    if (hook == HOOK_MONITORING) {
        PyObject *exc = PyErr_GetRaisedException(); /* the caller's, if any */
        if (mon_acquire() == 0) {
            t->monitoring = 1;
            if (g_mon_threads++ == 0) mon_set(1);
        } else { /* said once: the hook stays setprofile from now on */
            PyObject *why = PyErr_GetRaisedException();
            g_hook = HOOK_SETPROFILE;
            if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                                 "spanscope: the recursive tracer uses sys.setprofile: %S",
                                 why ? why : Py_None) < 0)
                PyErr_Clear(); /* warnings as errors: the call goes on all the same */
            Py_XDECREF(why);
        }
        PyErr_SetRaisedException(exc);
        if (t->monitoring) return;
    }
#endif
#if SPS_HAVE_EVALFRAME
    if (hook == HOOK_EVALFRAME) {
        t->evalframe = 1;
        ef_install();
        return;
    }
#endif
    PyThreadState *ts = PyThreadState_Get();
    t->prev_func = ts->c_profilefunc;
    t->prev_obj = ts->c_profileobj;
    Py_XINCREF(t->prev_obj);
    PyEval_SetProfile(tracer, NULL);
}

static void trace_exit(void) {
    tstack_t *t = &t_trace;
    if (--t->depth > 0) return;
    /* close what an exception may have left open */
    while (t->n > 0) {
        sps_region_t r = t->v[--t->n];
        if (r) sps_end(r);
    }
#if SPS_HAVE_EVALFRAME
    if (t->evalframe) {
        t->evalframe = 0;
        ef_uninstall();
        return;
    }
#endif
#if PY_VERSION_HEX >= 0x030C0000
    if (t->monitoring) {
        t->monitoring = 0;
        if (--g_mon_threads == 0) {
            PyObject *exc = PyErr_GetRaisedException(); /* the function's, if it raised */
            mon_set(0);
            PyErr_SetRaisedException(exc);
        }
        return;
    }
#endif
    PyEval_SetProfile(t->prev_func, t->prev_obj);
    Py_XDECREF(t->prev_obj);
    t->prev_obj = NULL;
}

/* set_trace_hook(name): "setprofile" or "monitoring" (3.12+) for the
 * recursive calls that start after it; trace_hook() names the one in use.
 * For the tests that check both give the same regions, and the benchmark
 * that measures both. */
static PyObject *ext_set_trace_hook(PyObject *mod, PyObject *arg) {
    (void)mod;
    const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!s) return PyErr_Format(PyExc_TypeError, "set_trace_hook: a str, not %R", arg);
    g_hook_auto = 0; /* an explicit choice: no fallback under a high recursion limit */
    if (strcmp(s, "setprofile") == 0) {
        g_hook = HOOK_SETPROFILE;
        Py_RETURN_NONE;
    }
    if (strcmp(s, "evalframe") == 0) {
#if SPS_HAVE_EVALFRAME
        g_hook = HOOK_EVALFRAME;
        Py_RETURN_NONE;
#else
        return PyErr_Format(PyExc_ValueError,
                            "set_trace_hook: the frame evaluation hook knows CPython 3.10 to "
                            "3.13's frames only");
#endif
    }
    if (strcmp(s, "monitoring") == 0) {
#if PY_VERSION_HEX >= 0x030C0000
        g_hook = HOOK_MONITORING;
        Py_RETURN_NONE;
#else
        return PyErr_Format(PyExc_ValueError,
                            "set_trace_hook: sys.monitoring needs Python 3.12 or newer");
#endif
    }
    return PyErr_Format(PyExc_ValueError,
                        "set_trace_hook: 'setprofile' or 'monitoring' (3.12+) or 'evalframe', "
                        "not %R", arg);
}

static PyObject *ext_trace_hook(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyUnicode_FromString(g_hook == HOOK_MONITORING  ? "monitoring"
                                : g_hook == HOOK_EVALFRAME ? "evalframe"
                                                           : "setprofile");
}

/* _evalframe_installed(): whether the frame evaluation hook is the
 * interpreter's evaluator now (for the tests; False where there is no
 * such hook). */
static PyObject *ext_evalframe_installed(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
#if SPS_HAVE_EVALFRAME
    PyInterpreterState *is = PyThreadState_Get()->interp;
    return PyBool_FromLong(_PyInterpreterState_GetEvalFrameFunc(is) ==
                           (_PyFrameEvalFunction)ef_eval);
#else
    Py_RETURN_FALSE;
#endif
}

/* set_trace_skip(prefixes): the tracer leaves out code under these path
 * prefixes (a tuple of str; None: traces everything).  Starts a new
 * generation of the code objects' cached regions, so the change applies
 * to code traced before. */
static PyObject *ext_set_trace_skip(PyObject *mod, PyObject *prefixes) {
    (void)mod;
    if (prefixes != Py_None && !PyTuple_Check(prefixes))
        return PyErr_Format(PyExc_TypeError, "set_trace_skip() needs a tuple of str or None");
    Py_XSETREF(g_trace_skip, prefixes == Py_None ? NULL : Py_NewRef(prefixes));
    if (g_skip_cache) PyDict_Clear(g_skip_cache);
    g_generation++;
    Py_RETURN_NONE;
}

/* One filter expression: None for an empty tuple of patterns, else
 * re.compile of their fnmatch.translate joined by "|" (a new reference),
 * NULL with TypeError for anything but a tuple of str. */
static PyObject *compile_patterns(PyObject *patterns, const char *what) {
    if (!PyTuple_Check(patterns))
        return PyErr_Format(PyExc_TypeError, "set_trace_filters(): %s must be a tuple of str",
                            what);
    Py_ssize_t n = PyTuple_GET_SIZE(patterns);
    if (n == 0) return Py_NewRef(Py_None);
    PyObject *fnmatch = PyImport_ImportModule("fnmatch"), *re = PyImport_ImportModule("re");
    PyObject *parts = PyList_New(0), *rx = NULL;
    for (Py_ssize_t i = 0; fnmatch && re && parts && i < n; i++) {
        PyObject *p = PyTuple_GET_ITEM(patterns, i);
        if (!PyUnicode_Check(p)) {
            PyErr_Format(PyExc_TypeError, "set_trace_filters(): %s pattern must be str, not "
                         "%.100s", what, Py_TYPE(p)->tp_name);
            goto done;
        }
        PyObject *t = PyObject_CallMethod(fnmatch, "translate", "O", p);
        if (!t || PyList_Append(parts, t) < 0) {
            Py_XDECREF(t);
            goto done;
        }
        Py_DECREF(t);
    }
    if (fnmatch && re && parts) {
        PyObject *bar = PyUnicode_FromString("|");
        PyObject *joined = bar ? PyUnicode_Join(bar, parts) : NULL;
        Py_XDECREF(bar);
        if (joined) rx = PyObject_CallMethod(re, "compile", "O", joined);
        Py_XDECREF(joined);
    }
done:
    Py_XDECREF(fnmatch);
    Py_XDECREF(re);
    Py_XDECREF(parts);
    return rx;
}

/* set_trace_filters(include, exclude, entrypoint): the recursive tracer
 * records a function only when its name ("<module>.<qualname>") matches
 * one of the include glob patterns (an empty tuple: every name does) and
 * none of the exclude ones, with Python's fnmatch rules; the function
 * whose co_name equals entrypoint (a str, or None) records under that
 * name.  Starts a new generation of the code objects' cached regions, so
 * the change applies to code traced before.  TypeError for bad types; the
 * filters are unchanged then. */
static PyObject *ext_set_trace_filters(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *inc, *exc, *entry;
    if (!PyArg_ParseTuple(args, "OOO:set_trace_filters", &inc, &exc, &entry)) return NULL;
    if (entry != Py_None && !PyUnicode_Check(entry))
        return PyErr_Format(PyExc_TypeError, "set_trace_filters(): entrypoint must be a str "
                            "or None, not %.100s", Py_TYPE(entry)->tp_name);
    PyObject *rin = compile_patterns(inc, "include");
    PyObject *rex = rin ? compile_patterns(exc, "exclude") : NULL;
    if (!rex) {
        Py_XDECREF(rin);
        return NULL;
    }
    if (rin == Py_None) Py_CLEAR(rin); /* no patterns: NULL, no call at first sight */
    if (rex == Py_None) Py_CLEAR(rex);
    Py_XSETREF(g_trace_include, rin);
    Py_XSETREF(g_trace_exclude, rex);
    Py_XSETREF(g_trace_entry, entry == Py_None ? NULL : Py_NewRef(entry));
    g_generation++;
    Py_RETURN_NONE;
}

/* ======================================================================== */
/* ProfiledFunction: what the decorator returns                              */
/* ======================================================================== */

typedef struct {
    PyObject_HEAD
    PyObject *func;
    RegionObject *region;
    int recursive;
    vectorcallfunc vectorcall;
    PyObject *dict;
    PyObject *weaklist;
} ProfiledObject;

static PyObject *Profiled_vectorcall(ProfiledObject *self, PyObject *const *args,
                                     size_t nargsf, PyObject *kwnames) {
    sps_region_t r = self->region->id;
    if (self->region->off) /* disabled: the function alone, untraced */
        return PyObject_Vectorcall(self->func, args, nargsf, kwnames);
    if (self->recursive) trace_enter();
    sps_begin(r);
    if (g_hook_start) call_hook(g_hook_start, self->region->name);
    if (sps__py_capture &&
        sps__py_capture_call(r, self->region->name, args, nargsf, kwnames)) {
        if (g_hook_stop) call_hook(g_hook_stop, self->region->name);
        sps_end(r);
        if (self->recursive) trace_exit();
        return NULL;
    }
    PyObject *res = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
    if (g_hook_stop) call_hook(g_hook_stop, self->region->name);
    sps_end(r);
    if (self->recursive) trace_exit();
    return res;
}

static PyObject *Profiled_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *func, *region;
    int recursive = 0;
    static char *kwlist[] = {"func", "region", "recursive", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!|p", kwlist, &func, &RegionType,
                                     &region, &recursive))
        return NULL;
    if (!PyCallable_Check(func)) return PyErr_Format(PyExc_TypeError, "%R is not callable", func);
    ProfiledObject *self = (ProfiledObject *)tp->tp_alloc(tp, 0);
    if (!self) return NULL;
    Py_INCREF(func);
    Py_INCREF(region);
    self->func = func;
    self->region = (RegionObject *)region;
    self->recursive = recursive;
    self->vectorcall = (vectorcallfunc)Profiled_vectorcall;
    /* a decorated function records itself: the tracer must not add it again */
    if (PyFunction_Check(func) && g_extra_index >= 0)
        CODE_SET_EXTRA(PyFunction_GET_CODE(func), g_extra_index, EXTRA_SKIP);
    return (PyObject *)self;
}

static int Profiled_traverse(ProfiledObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->func);
    Py_VISIT(self->region);
    Py_VISIT(self->dict);
    return 0;
}

static int Profiled_clear(ProfiledObject *self) {
    Py_CLEAR(self->func);
    Py_CLEAR(self->region);
    Py_CLEAR(self->dict);
    return 0;
}

static void Profiled_dealloc(ProfiledObject *self) {
    PyObject_GC_UnTrack(self);
    if (self->weaklist) PyObject_ClearWeakRefs((PyObject *)self);
    Profiled_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Methods: bind like a function does. */
static PyObject *Profiled_get(PyObject *self, PyObject *obj, PyObject *type) {
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *Profiled_repr(ProfiledObject *self) {
    return PyUnicode_FromFormat("<profiled %R region=%R>", self->func, self->region->name);
}

static PyMemberDef Profiled_members[] = {
    {"region", T_OBJECT, offsetof(ProfiledObject, region), READONLY, "the region it records"},
    {"recursive", T_INT, offsetof(ProfiledObject, recursive), READONLY, "traces nested calls"},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef Profiled_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject ProfiledType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "spanscope._ext.ProfiledFunction",
    .tp_basicsize = sizeof(ProfiledObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A function wrapped by @profile: each call is one call of its region.",
    .tp_new = Profiled_new,
    .tp_dealloc = (destructor)Profiled_dealloc,
    .tp_traverse = (traverseproc)Profiled_traverse,
    .tp_clear = (inquiry)Profiled_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(ProfiledObject, vectorcall),
    .tp_descr_get = Profiled_get,
    .tp_repr = (reprfunc)Profiled_repr,
    .tp_members = Profiled_members,
    .tp_getset = Profiled_getset,
    .tp_dictoffset = offsetof(ProfiledObject, dict),
    .tp_weaklistoffset = offsetof(ProfiledObject, weaklist),
};

/* ======================================================================== */
/* Benchmark floors: the cheapest C context manager and profile hook        */
/* ======================================================================== */

typedef struct {
    PyObject_HEAD
    uint64_t t0, t1;
} ClockPairObject;

static int g_use_tsc;

/* The counter the core reads (sps_clock_source), read the same way. */
static inline uint64_t floor_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (g_use_tsc) return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static PyObject *ClockPair_enter(ClockPairObject *self, PyObject *unused) {
    (void)unused;
    self->t0 = floor_ticks();
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *ClockPair_exit(ClockPairObject *self, PyObject *const *args, Py_ssize_t n) {
    (void)args;
    (void)n;
    self->t1 = floor_ticks();
    Py_RETURN_FALSE;
}

static PyMethodDef ClockPair_methods[] = {
    {"__enter__", (PyCFunction)ClockPair_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))ClockPair_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ClockPairType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "spanscope._ext.ClockPair",
    .tp_basicsize = sizeof(ClockPairObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Benchmark floor: a C context manager that only reads the clock twice.",
    .tp_new = PyType_GenericNew,
    .tp_methods = ClockPair_methods,
};

static int noop_hook(PyObject *o, PyFrameObject *f, int what, PyObject *arg) {
    (void)o;
    (void)arg;
    if (what == PyTrace_CALL) { /* what the tracer must do at least */
        PyCodeObject *code = PyFrame_GetCode(f);
        Py_DECREF(code);
    }
    return 0;
}

/* Benchmark floor: ns per pair of counter reads, timed over n pairs in C. */
static PyObject *ext_floor_pair_ns(PyObject *mod, PyObject *arg) {
    (void)mod;
    long n = PyLong_AsLong(arg);
    if (n <= 0) return PyErr_Occurred() ? NULL : PyFloat_FromDouble(0.0);
    volatile uint64_t sink = 0;
    int64_t t0 = sps_now_ns();
    for (long i = 0; i < n; i++) {
        uint64_t a = floor_ticks();
        uint64_t b = floor_ticks();
        sink += b - a;
    }
    int64_t t1 = sps_now_ns();
    (void)sink;
    return PyFloat_FromDouble((double)(t1 - t0) / (double)n);
}

static PyObject *ext_noop_profile(PyObject *mod, PyObject *on) {
    (void)mod;
    PyEval_SetProfile(PyObject_IsTrue(on) ? noop_hook : NULL, NULL);
    Py_RETURN_NONE;
}

/* set_call_hooks(start, stop): the callables called with a region's name
 * after each begin and before each end (None, None: none). */
static PyObject *ext_set_call_hooks(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *start, *stop;
    if (!PyArg_ParseTuple(args, "OO", &start, &stop)) return NULL;
    if ((start != Py_None && !PyCallable_Check(start)) ||
        (stop != Py_None && !PyCallable_Check(stop))) {
        PyErr_SetString(PyExc_TypeError, "set_call_hooks takes two callables or None");
        return NULL;
    }
    Py_XSETREF(g_hook_start, start == Py_None ? NULL : Py_NewRef(start));
    Py_XSETREF(g_hook_stop, stop == Py_None ? NULL : Py_NewRef(stop));
    Py_RETURN_NONE;
}

static PyMethodDef regions_methods[] = {
    {"set_call_hooks", ext_set_call_hooks, METH_VARARGS,
     "set_call_hooks(start, stop): called with a region's name after each begin and "
     "before each end (use_likwid's LIKWID markers); (None, None): none."},
    {"clear_registry", ext_clear_registry, METH_NOARGS, "Forget all Region objects."},
    {"set_region_slow", ext_set_region_slow, METH_O,
     "The package's region(name, functions=None, tags=None) for names not cached."},
    {"region_new", ext_region_new, METH_O, "A new, unregistered Region of the package's class."},
    {"set_trace_filters", ext_set_trace_filters, METH_VARARGS,
     "set_trace_filters(include, exclude, entrypoint): glob patterns (tuples of str, "
     "Python's fnmatch rules) on the names the recursive tracer records, and the "
     "function (co_name) recorded under the entrypoint's name (str or None)."},
    {"set_trace_skip", ext_set_trace_skip, METH_O,
     "set_trace_skip(prefixes or None): path prefixes the recursive tracer leaves out."},
    {"set_region_class", ext_set_region_class, METH_O, "The Region subclass to create."},
    {"begin", ext_begin, METH_O, "sps_begin(id) (for tests)."},
    {"end", ext_end, METH_O, "sps_end(id) (for tests)."},
    {"_noop_profile", ext_noop_profile, METH_O, "Benchmark floor: a no-op C profile hook."},
    {"set_trace_hook", ext_set_trace_hook, METH_O,
     "set_trace_hook('setprofile' | 'evalframe' | 'monitoring'): the recursive tracer's hook "
     "(monitoring: sys.monitoring, Python 3.12+) for the recursive calls that start after it."},
    {"trace_hook", ext_trace_hook, METH_NOARGS, "The recursive tracer's hook: its name."},
    {"_evalframe_installed", ext_evalframe_installed, METH_NOARGS,
     "Whether the tracer's frame evaluation hook is installed now (3.10/3.11; tests)."},
    {"_floor_pair_ns", ext_floor_pair_ns, METH_O, "Benchmark floor: ns per two counter reads."},
    {NULL, NULL, 0, NULL}};

/* Called by PyInit__ext: readies the types, makes the registry, and adds
 * Region, ProfiledFunction, region_lookup, ClockPair, registry,
 * traced_regions and the functions above to m. */
int sps__py_regions_init(PyObject *m) {
    if (PyType_Ready(&RegionType) < 0 || PyType_Ready(&ProfiledType) < 0 ||
        PyType_Ready(&ClockPairType) < 0 || PyType_Ready(&RegionLookupType) < 0)
        return -1;
    g_extra_index = REQUEST_EXTRA(NULL);
    g_use_tsc = strcmp(sps_clock_source(), "tsc") == 0;
    g_registry = PyDict_New();
    g_traced = PySet_New(NULL);
    /* region_lookup.__func__ is the type itself (see region_lookup) */
    if (!g_registry || !g_traced ||
        PyDict_SetItemString(RegionLookupType.tp_dict, "__func__",
                             (PyObject *)&RegionLookupType) < 0)
        return -1;
    PyType_Modified(&RegionLookupType);
    if (PyModule_AddFunctions(m, regions_methods) ||
        PyModule_AddObjectRef(m, "traced_regions", g_traced) ||
        PyModule_AddObjectRef(m, "region_lookup", (PyObject *)&RegionLookupType) ||
        PyModule_AddObjectRef(m, "Region", (PyObject *)&RegionType) ||
        PyModule_AddObjectRef(m, "ProfiledFunction", (PyObject *)&ProfiledType) ||
        PyModule_AddObjectRef(m, "ClockPair", (PyObject *)&ClockPairType) ||
        PyModule_AddObjectRef(m, "registry", g_registry))
        return -1;
    return 0;
}
