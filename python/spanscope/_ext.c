/* _ext.c -- the CPython extension: a thin face over the C core.
 *
 * Everything that runs per call is here, in C: Region.__enter__/__exit__
 * (one sps_begin/sps_end each), the decorator's wrapper (vectorcall: begin,
 * call, end), and the recursive tracer (a C profile hook installed with
 * PyEval_SetProfile by the outermost recursive call).  The Python package
 * adds the API's shape (ProfileManager, setup options, numpy views) on top.
 *
 * It uses only the public C API and links the shared libspanscope (shipped
 * next to it), so C code in the same process that links libspanscope
 * records into the same session.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <frameobject.h>
#include <structmember.h>

#include "_convert.h"
#include "spanscope.h"

#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#  include <x86intrin.h>
#endif

#include <limits.h>
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

/* _profiler.c (the torch-style face's C half). */
extern int sps__py_capture;
int sps__py_capture_call(sps_region_t r, PyObject *name, PyObject *const *args,
                         size_t nargsf, PyObject *kwnames);
int sps__py_profiler_init(PyObject *m);
int sps__py_export_init(PyObject *m); /* _export.c */

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

static PyObject *Region_enter(RegionObject *self, PyObject *unused) {
    (void)unused;
    if (!self->off) sps_begin(self->id);
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *Region_exit(RegionObject *self, PyObject *const *args,
                             Py_ssize_t nargs) {
    (void)args;
    (void)nargs;
    if (!self->off) sps_end(self->id);
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
    Py_tracefunc prev_func;
    PyObject *prev_obj;
} tstack_t;
static _Thread_local tstack_t t_trace __attribute__((tls_model("initial-exec")));

#define EXTRA_SKIP ((void *)(uintptr_t)1) /* decorated function: records itself */

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
static int skipped_file(PyCodeObject *code) {
    if (!g_trace_skip) return 0;
    const char *fn = PyUnicode_AsUTF8(code->co_filename);
    if (!fn) {
        PyErr_Clear();
        return 1;
    }
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
static sps_region_t traced_region(PyFrameObject *frame, PyCodeObject *code) {
    void *extra = NULL;
    if (g_extra_index >= 0) CODE_GET_EXTRA((PyObject *)code, g_extra_index, &extra);
    if (extra == EXTRA_SKIP) return 0;
    uint64_t v = (uint64_t)(uintptr_t)extra;
    if (v && (uint32_t)(v >> 32) == g_generation) return (sps_region_t)v;
    /* slow path: the name is "<module>.<qualname>".  The decision is cached
     * under the generation it started in: the matcher and the region's
     * creation run Python code, and a new generation meanwhile (new filters,
     * a new registry) must decide again. */
    uint32_t gen = g_generation;
    if (!frame) frame = PyEval_GetFrame();
    PyObject *globals = frame ? FRAME_GLOBALS(frame) : NULL;
    PyObject *mod = globals ? PyDict_GetItemString(globals, "__name__") : NULL;
    Py_XDECREF(globals);
    const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : "?";
    if (!m) {
        PyErr_Clear();
        m = "?";
    }
    if (strcmp(m, "spanscope") == 0 || strncmp(m, "spanscope.", 10) == 0) {
        if (g_extra_index >= 0) CODE_SET_EXTRA((PyObject *)code, g_extra_index, EXTRA_SKIP);
        return 0;
    }
    if (skipped_file(code)) {
        cache_decision(code, gen, 0);
        return 0;
    }
    PyObject *name = PyUnicode_FromFormat("%s.%U", m, CODE_QUALNAME(code));
    if (name && !name_passes(name)) {
        Py_DECREF(name);
        cache_decision(code, gen, 0);
        return 0;
    }
    PyObject *as = name ? recorded_name(code, name) : NULL;
    PyObject *r = as ? registry_get(as) : NULL;
    Py_XDECREF(as);
    Py_XDECREF(name);
    if (!r) {
        PyErr_Clear();
        return 0;
    }
    sps_region_t id = ((RegionObject *)r)->id;
    PyObject *idobj = PyLong_FromUnsignedLong(id);
    if (!idobj || PySet_Add(g_traced, idobj) < 0) PyErr_Clear(); /* only a label lost */
    Py_XDECREF(idobj);
    cache_decision(code, gen, id);
    return id;
}

/* What a function's start (or resume) does on a tracing thread: push the
 * region to end on the matching exit (0: not recorded) and begin it.  The
 * first frame after trace_enter is the decorated function itself, which
 * records itself.  frame: as traced_region's. */
static void traced_start(tstack_t *t, PyFrameObject *frame, PyCodeObject *code) {
    sps_region_t r = t->n > 0 ? traced_region(frame, code) : 0;
    if (tstack_push(t, r) == 0 && r) sps_begin(r);
}

/* What a function's exit (return, yield, unwind) does: end what its start
 * pushed.  An exit with nothing pushed (a frame that started before the
 * tracer) is ignored. */
static void traced_exit(tstack_t *t) {
    if (t->n > 0) {
        sps_region_t r = t->v[--t->n];
        if (r) sps_end(r);
    }
}

/* The PyEval_SetProfile hook (every version; the default before 3.12). */
static int tracer(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
    (void)obj;
    tstack_t *t = &t_trace;
    if (t->prev_func && t->prev_func(t->prev_obj, frame, what, arg) < 0)
        return -1; /* chain to the profiler that was there before */
    if (what == PyTrace_CALL) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        traced_start(t, frame, code);
        Py_DECREF(code);
    } else if (what == PyTrace_RETURN) {
        traced_exit(t);
    }
    return 0;
}

/* The hooks the tracer can use.  PyEval_SetProfile exists everywhere; on
 * 3.12+ sys.monitoring (PEP 669) hands the hook the code object without
 * making a frame object, and since 3.12 sys.setprofile is itself a layer
 * over it.  Which one is used is chosen per version from measurements
 * (docs/benchmarks.md, "Python versions"): on 3.12 and 3.13 a traced call
 * costs about half the time under sys.monitoring (0.46-0.51x, wall time,
 * interleaved runs).  set_trace_hook switches. */
enum { HOOK_SETPROFILE = 0, HOOK_MONITORING = 1 };
#if PY_VERSION_HEX >= 0x030C0000
#  define HOOK_DEFAULT HOOK_MONITORING
#else
#  define HOOK_DEFAULT HOOK_SETPROFILE
#endif
static int g_hook = HOOK_DEFAULT;

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
        traced_start(t, NULL, (PyCodeObject *)args[0]);
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
#if PY_VERSION_HEX >= 0x030C0000
    if (g_hook == HOOK_MONITORING) {
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
    if (strcmp(s, "setprofile") == 0) {
        g_hook = HOOK_SETPROFILE;
        Py_RETURN_NONE;
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
                        "set_trace_hook: 'setprofile' or 'monitoring', not %R", arg);
}

static PyObject *ext_trace_hook(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyUnicode_FromString(g_hook == HOOK_MONITORING ? "monitoring" : "setprofile");
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
    if (sps__py_capture &&
        sps__py_capture_call(r, self->region->name, args, nargsf, kwnames)) {
        sps_end(r);
        if (self->recursive) trace_exit();
        return NULL;
    }
    PyObject *res = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
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

/* ======================================================================== */
/* Session functions                                                         */
/* ======================================================================== */

/* (_convert.h) */
PyObject *sps__py_raise_os(int rc, const char *msg, const char *path) {
    int os_errno = sps_last_errno();
    if (os_errno && *sps_last_error()) msg = sps_last_error();
    if (!os_errno) os_errno = rc == SPS_EPATH ? EACCES : EIO;
    PyObject *p = path ? PyUnicode_DecodeFSDefault(path) : Py_None;
    if (path && !p) return NULL;
    if (!path) Py_INCREF(p);
    PyObject *e = PyObject_CallFunction(PyExc_OSError, "isO", os_errno, msg, p);
    Py_DECREF(p);
    if (e) {
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
        Py_DECREF(e);
    }
    return NULL;
}

static PyObject *raise_sps(int rc, const char *path) {
    if (rc == SPS_EPATH || rc == SPS_EIO) return sps__py_raise_os(rc, sps_strerror(rc), path);
    if (rc == SPS_EHDF5) {
        PyObject *p = path ? PyUnicode_DecodeFSDefault(path) : Py_None;
        if (path && !p) return NULL;
        if (!path) Py_INCREF(p);
        PyObject *e = PyObject_CallFunction(PyExc_OSError, "isO", 5,
                                            sps_strerror(rc), p);
        Py_DECREF(p);
        if (e) {
            PyErr_SetObject(PyExc_OSError, e);
            Py_DECREF(e);
        }
        return NULL;
    }
    if (rc == SPS_EINVAL) return PyErr_Format(PyExc_ValueError, "%s", sps_strerror(rc));
    if (rc == SPS_ENOMEM) return PyErr_NoMemory();
    return PyErr_Format(PyExc_RuntimeError, "%s (%s)", sps_strerror(rc), sps_err_name(rc));
}

static PyObject *ext_setup(PyObject *mod, PyObject *args, PyObject *kw) {
    (void)mod;
    static char *kwlist[] = {"file_path", "aggregate", "memory_limit", "chunk_size",
                             "overflow", "spill_dir", "label", "compress_threshold",
                             "rank", "size", "local", NULL};
    sps_config_t c = SPS_CONFIG_INIT;
    const char *file_path = NULL, *spill_dir = NULL, *label = NULL;
    Py_ssize_t mem = 0, chunk = 0;
    int overflow = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|z$pnnizzliip", kwlist, &file_path,
                                     &c.aggregate, &mem, &chunk, &overflow, &spill_dir,
                                     &label, &c.compress_threshold, &c.rank, &c.size,
                                     &c.local))
        return NULL;
    if (mem < 0 || chunk < 0) return PyErr_Format(PyExc_ValueError, "sizes must be >= 0");
    c.file_path = file_path;
    c.memory_limit = (size_t)mem;
    c.chunk_size = (size_t)chunk;
    c.overflow = (sps_overflow_t)overflow;
    c.spill_dir = spill_dir;
    c.label = label;
    int rc = sps_setup(&c);
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* finalize(path, verbose) -> table text ("" unless verbose). */
static PyObject *ext_finalize(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *path = NULL;
    int verbose = 0;
    if (!PyArg_ParseTuple(args, "zp", &path, &verbose)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = verbose ? open_memstream(&buf, &len) : NULL;
    if (verbose && !fp) return PyErr_NoMemory();
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_finalize_print(path, fp);
    Py_END_ALLOW_THREADS
    if (fp) fclose(fp);
    PyObject *text = rc ? NULL : PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "replace");
    free(buf);
    if (rc) return raise_sps(rc, path);
    return text;
}

static PyObject *str_list(const char *const *s, size_t n);

/* The pooled paths of sps_finalize_paths as {"names": [str], "paths":
 * [(parent, name, calls, total_ns, duration_sum_ns, self_ns, min_ns,
 * max_ns, first_start_ns, first_ns, last_end_ns, last_ns, coverage_ns,
 * recursive)]}, or None when not available.  NULL on error. */
static PyObject *period_paths_dict(const sps_period_paths_t *pp) {
    if (!pp->available) Py_RETURN_NONE;
    PyObject *names = str_list(pp->names, pp->nnames);
    PyObject *paths = names ? PyList_New((Py_ssize_t)pp->npaths) : NULL;
    for (size_t i = 0; paths && i < pp->npaths; i++) {
        const sps_call_path_t *x = &pp->paths[i];
        PyObject *t = Py_BuildValue("(iIKLLLLLLLLLLi)", x->parent, x->name,
                                    (unsigned long long)x->calls, (long long)x->total_ns,
                                    (long long)x->duration_sum_ns, (long long)x->self_ns,
                                    (long long)x->min_ns, (long long)x->max_ns,
                                    (long long)x->first_start_ns, (long long)x->first_ns,
                                    (long long)x->last_end_ns, (long long)x->last_ns,
                                    (long long)x->coverage_ns, x->recursive);
        if (!t) Py_CLEAR(paths);
        else PyList_SET_ITEM(paths, (Py_ssize_t)i, t);
    }
    PyObject *d = paths ? Py_BuildValue("{sOsO}", "names", names, "paths", paths) : NULL;
    Py_XDECREF(names);
    Py_XDECREF(paths);
    return d;
}

/* finalize_paths(path, verbose) -> (table text, paths): finalize (as
 * finalize()) and the period pooled by call path (period_paths_dict; None
 * in a distributed or aggregate session), for print_summary's table.
 * verbose: the C table is made too (its text returned) and a long write
 * shows its progress line, as finalize(path, True). */
static PyObject *ext_finalize_paths(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *path = NULL;
    int verbose = 0;
    if (!PyArg_ParseTuple(args, "zp", &path, &verbose)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = verbose ? open_memstream(&buf, &len) : NULL;
    if (verbose && !fp) return PyErr_NoMemory();
    sps_period_paths_t pp;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sps_finalize_paths(path, fp, &pp);
    Py_END_ALLOW_THREADS
    if (fp) fclose(fp);
    PyObject *out = NULL;
    if (rc) {
        raise_sps(rc, path);
    } else {
        PyObject *text = PyUnicode_DecodeUTF8(buf ? buf : "", (Py_ssize_t)len, "replace");
        PyObject *paths = text ? period_paths_dict(&pp) : NULL;
        if (paths) out = PyTuple_Pack(2, text, paths);
        Py_XDECREF(text);
        Py_XDECREF(paths);
    }
    sps_period_paths_free(&pp);
    free(buf);
    return out;
}

static PyObject *ext_shutdown(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    sps_shutdown();
    Py_RETURN_NONE;
}

static PyObject *ext_is_active(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyBool_FromLong(sps_is_active());
}

static PyObject *ext_now_ns(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyLong_FromLongLong(sps_now_ns());
}

static PyObject *ext_session_start_ns(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyLong_FromLongLong(sps_session_start_ns());
}

static PyObject *region_list(int recorded) {
    size_t n = recorded ? sps_regions_recorded(NULL, 0) : sps_regions_registered(NULL, 0);
    sps_region_t *v = malloc((n + 1) * sizeof *v);
    if (!v) return PyErr_NoMemory();
    size_t m = recorded ? sps_regions_recorded(v, n) : sps_regions_registered(v, n);
    if (m > n) m = n;
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < m; i++) {
        PyObject *id = PyLong_FromUnsignedLong(v[i]);
        if (!id || PyList_Append(out, id)) Py_CLEAR(out);
        Py_XDECREF(id);
    }
    free(v);
    return out;
}

static PyObject *ext_recorded_ids(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return region_list(1);
}

static PyObject *ext_summary(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) return PyErr_NoMemory();
    int rc = sps_print_summary(fp);
    fclose(fp);
    PyObject *s = rc ? NULL : PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    free(buf);
    return rc ? raise_sps(rc, NULL) : s;
}

/* counters() -> {'dropped': n, 'misuse': n, 'spill_errno': errno or 0,
 * 'spill_error': the spill failure's cause in words or None}
 * (sps_dropped, sps_misuse_count, sps_spill_error). */
static PyObject *ext_counters(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    char why[512];
    int spill = sps_spill_error(why, sizeof why);
    PyObject *text = spill ? PyUnicode_DecodeUTF8(why, (Py_ssize_t)strlen(why), "replace")
                           : Py_NewRef(Py_None);
    if (!text) return NULL;
    return Py_BuildValue("{sKsKsisN}", "dropped", (unsigned long long)sps_dropped(), "misuse",
                         (unsigned long long)sps_misuse_count(), "spill_errno", spill,
                         "spill_error", text);
}

/* sps_query_info as a dict: what the per-call queries decoded and keep. */
static PyObject *ext_query_info(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    sps_query_info_t q;
    sps_query_info(&q);
    return Py_BuildValue("{sKsKsKsK}", "records_read", (unsigned long long)q.records_read,
                         "rebuilds", (unsigned long long)q.rebuilds, "regions",
                         (unsigned long long)q.regions, "bytes", (unsigned long long)q.bytes);
}

static PyObject *ext_region_name(PyObject *mod, PyObject *id) {
    (void)mod;
    unsigned long r = PyLong_AsUnsignedLong(id);
    if (PyErr_Occurred()) return NULL;
    const char *s = r <= UINT32_MAX ? sps_region_name((sps_region_t)r) : NULL;
    if (!s) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

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
 * is bad), MemoryError, else raise_sps's.  Returns NULL. */
static PyObject *raise_read(int rc, const char *err, const char *path) {
    if (rc == SPS_EIO && sps_last_errno()) return sps__py_raise_os(rc, err, path);
    if (rc == SPS_EIO) return PyErr_Format(PyExc_OSError, "%s", err);
    if (rc == SPS_EFORMAT || rc == SPS_EINVAL) return PyErr_Format(PyExc_ValueError, "%s", err);
    return raise_sps(rc, path);
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

/* d[key] = v, taking v's reference (NULL: an error already set).  0 or -1. */
static int put(PyObject *d, const char *key, PyObject *v) {
    int rc = v ? PyDict_SetItemString(d, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

/* The n UTF-8 strings s[] as a list of str. */
static PyObject *str_list(const char *const *s, size_t n) {
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
    if (!d || put(d, "start_ns", column_new(cap, f->start_ns, n, 8, 'q')) ||
        put(d, "durations_ns", column_new(cap, f->dur_ns, n, 8, 'q')) ||
        put(d, "self_ns", column_new(cap, f->self_ns, n, 8, 'q')) ||
        put(d, "parent", column_new(cap, f->parent, n, 4, 'i')) ||
        put(d, "row", column_new(cap, f->row, n, 4, 'I')) ||
        put(d, "call_ids", column_opt(cap, f->call_ids, n, 8, 'q')) ||
        put(d, "parent_ids", column_opt(cap, f->parent_ids, n, 8, 'q')) ||
        put(d, "thread_ids", column_opt(cap, f->thread_ids, n, 8, 'q')) ||
        put(d, "gpu_durations", column_opt(cap, f->gpu_dur_ns, n, 8, 'q')) ||
        put(d, "task_ids", column_opt(cap, f->task_ids, n, 8, 'q')) ||
        put(d, "await_ns", column_opt(cap, f->await_ns, n, 8, 'q')))
        Py_CLEAR(d);
    return d;
}

/* The n strings s[] as a list of str, or None when s is NULL (a column
 * the file lacks). */
static PyObject *str_list_opt(const char *const *s, size_t n) {
    if (!s) Py_RETURN_NONE;
    return str_list(s, n);
}

/* scope-profiler's per-row columns of f (owned by cap): source_lines (a
 * column), source_files, source_texts, tags and event_metadata (lists of
 * str; tags and event_metadata JSON list text), each None when absent. */
static PyObject *file_row_extras(PyObject *cap, const sps_file_t *f) {
    size_t n = f->nrows;
    PyObject *d = PyDict_New();
    if (!d || put(d, "source_lines", column_opt(cap, f->row_source_lines, n, 8, 'q')) ||
        put(d, "source_files", str_list_opt(f->row_source_files, n)) ||
        put(d, "source_texts", str_list_opt(f->row_source_texts, n)) ||
        put(d, "tags", str_list_opt(f->row_tags, n)) ||
        put(d, "event_metadata", str_list_opt(f->row_event_metadata, n)))
        Py_CLEAR(d);
    return d;
}

/* A lane table of f (owned by cap) as {column name: column or list of
 * str}; empty for a table the file lacks. */
static PyObject *file_table(PyObject *cap, const sps_file_table_t *t) {
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < t->ncols; i++) {
        const sps_file_column_t *col = &t->cols[i];
        PyObject *v = col->is_text ? str_list(col->texts, t->nrows)
                                   : column_new(cap, col->ints, t->nrows, 8, 'q');
        if (put(d, col->name, v)) Py_CLEAR(d);
    }
    return d;
}

/* The counter samples of f (owned by cap): names, and columns. */
static PyObject *file_counters(PyObject *cap, const sps_file_t *f) {
    size_t n = f->nsamples;
    PyObject *d = PyDict_New();
    if (!d || put(d, "names", str_list(f->counter_names, f->ncounters)) ||
        put(d, "series", column_new(cap, f->sample_counter, n, 8, 'q')) ||
        put(d, "ranks", column_new(cap, f->sample_rank, n, 8, 'q')) ||
        put(d, "times_ns", column_new(cap, f->sample_t_ns, n, 8, 'q')) ||
        put(d, "values", column_new(cap, f->sample_value, n, 8, 'd')) ||
        put(d, "dropped", PyLong_FromUnsignedLongLong(f->samples_dropped)))
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
    if (!d || put(d, "schema", PyLong_FromLong(f->schema)) ||
        put(d, "layout", PyUnicode_FromString(f->aggregate ? "aggregate" : "columnar")) ||
        put(d, "nested_by_ids", PyBool_FromLong(f->nested_by_ids)) ||
        put(d, "orphans", PyLong_FromUnsignedLongLong(f->orphans)) ||
        put(d, "cycles", PyLong_FromUnsignedLongLong(f->cycles)) ||
        put(d, "names", str_list(f->names, f->nnames)) ||
        put(d, "rows", file_rows(f)) || put(d, "events", file_events(cap, f)) ||
        put(d, "counters", file_counters(cap, f)) ||
        put(d, "metadata", meta_dict(f->attrs, f->nattrs)) ||
        put(d, "row_extras", file_row_extras(cap, f)) ||
        put(d, "thread_table", file_table(cap, &f->thread_table)) ||
        put(d, "task_table", file_table(cap, &f->task_table)) ||
        put(d, "has_summary_statistics", PyBool_FromLong(f->has_summary_statistics)) ||
        put(d, "row_summary", summary_list(f->row_summary, f->nrows)) ||
        put(d, "rank_groups", rank_groups_list(f->rank_groups)))
        Py_CLEAR(d);
    Py_DECREF(cap); /* the columns hold it now; the last one closes f */
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

/* pause() / resume(): sps_pause / sps_resume; RuntimeError without a
 * session. */
static PyObject *ext_pause(PyObject *mod, PyObject *on) {
    (void)mod;
    int t = PyObject_IsTrue(on);
    if (t < 0) return NULL;
    int rc = t ? sps_pause() : sps_resume();
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *ext_is_paused(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return PyBool_FromLong(sps_is_paused());
}

/* open_calls_all() -> [(thread index, depth, name), ...]: the calls open
 * on every thread of the session, each thread's outermost first
 * (sps_open_calls_all); [] without a session, None in an aggregate
 * session (only this thread's are known there: open_calls()). */
static PyObject *ext_open_calls_all(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    for (;;) {
        int64_t n = sps_open_calls_all(NULL, 0);
        if (n == SPS_EMODE) Py_RETURN_NONE;
        if (n < 0) return raise_sps((int)n, NULL);
        size_t cap = (size_t)n + 8; /* room for calls begun meanwhile */
        sps_open_call_t *v = malloc(cap * sizeof *v);
        if (!v) return PyErr_NoMemory();
        int64_t m = sps_open_calls_all(v, cap);
        if (m < 0 || (size_t)m > cap) { /* the session changed, or more opened */
            free(v);
            if (m < 0 && m != SPS_EMODE) return raise_sps((int)m, NULL);
            continue;
        }
        PyObject *l = PyList_New((Py_ssize_t)m);
        for (int64_t i = 0; l && i < m; i++) {
            const char *nm = sps_region_name(v[i].region);
            PyObject *o = Py_BuildValue("(LIs)", (long long)v[i].thread,
                                        (unsigned int)v[i].depth, nm ? nm : "");
            if (!o) Py_CLEAR(l);
            else PyList_SET_ITEM(l, (Py_ssize_t)i, o);
        }
        free(v);
        return l;
    }
}

/* open_calls() -> names of the calls open on this thread, outermost first
 * (sps_open_calls). */
static PyObject *ext_open_calls(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    for (;;) {
        size_t n = sps_open_calls(NULL, 0);
        sps_region_t *v = malloc((n + 1) * sizeof *v);
        if (!v) return PyErr_NoMemory();
        size_t m = sps_open_calls(v, n);
        if (m > n) { /* more opened in between (another thread: never; safe) */
            free(v);
            continue;
        }
        PyObject *l = PyList_New((Py_ssize_t)m);
        for (size_t i = 0; l && i < m; i++) {
            const char *nm = sps_region_name(v[i]);
            PyObject *o = PyUnicode_DecodeUTF8(nm ? nm : "", (Py_ssize_t)strlen(nm ? nm : ""),
                                               "replace");
            if (!o) Py_CLEAR(l);
            else PyList_SET_ITEM(l, (Py_ssize_t)i, o);
        }
        free(v);
        return l;
    }
}

/* A tri-state of sps_env_t (-1 unset) as None / False / True. */
static PyObject *tri(int v) {
    if (v < 0) Py_RETURN_NONE;
    return PyBool_FromLong(v);
}

static PyObject *str_or_none(const char *s) {
    if (!s) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(s);
}

/* env_read() -> the environment's settings (sps_env_read) as a dict of
 * setup() keywords: only those set.  ValueError for a bad variable. */
static PyObject *ext_env_read(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    sps_env_t e;
    char err[512] = "";
    int rc = sps_env_read(&e, err, sizeof err);
    if (rc) return PyErr_Format(PyExc_ValueError, "%s", err[0] ? err : sps_strerror(rc));
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    int bad = 0;
    if (e.has_output) bad |= put(d, "output", str_or_none(e.cfg.file_path));
    if (!bad && e.cfg.label) bad |= put(d, "label", str_or_none(e.cfg.label));
    if (!bad && e.config_path) bad |= put(d, "config_path", str_or_none(e.config_path));
    if (!bad && e.enable_tags) bad |= put(d, "enable_tags", str_or_none(e.enable_tags));
    if (!bad && e.recursive >= 0) bad |= put(d, "recursive_profile", tri(e.recursive));
    if (!bad && e.auto_finalize >= 0) bad |= put(d, "auto_finalize", tri(e.auto_finalize));
    if (!bad && e.deactivate >= 0) bad |= put(d, "deactivate_profiling", tri(e.deactivate));
    if (!bad && e.aggregate >= 0) bad |= put(d, "aggregation_mode", tri(e.aggregate));
    if (!bad && e.cfg.memory_limit)
        bad |= put(d, "memory_limit", PyLong_FromSize_t(e.cfg.memory_limit));
    if (bad) Py_CLEAR(d);
    return d;
}

/* A region id argument (an int that fits sps_region_t). */
static int region_id_arg(PyObject *o, sps_region_t *out) {
    unsigned long v = PyLong_AsUnsignedLong(o);
    if (PyErr_Occurred()) return -1;
    if (v > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "region id out of range");
        return -1;
    }
    *out = (sps_region_t)v;
    return 0;
}

/* region_set_source(id, file, line, text): sps_region_set_source (file
 * and text may be None). */
static PyObject *ext_region_set_source(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ido;
    const char *file, *text;
    long long line;
    if (!PyArg_ParseTuple(args, "OzLz", &ido, &file, &line, &text)) return NULL;
    sps_region_t r;
    if (region_id_arg(ido, &r)) return NULL;
    int rc = sps_region_set_source(r, file, line, text);
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* region_set_tags(id, tags_json): sps_region_set_tags. */
static PyObject *ext_region_set_tags(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ido;
    const char *tags;
    if (!PyArg_ParseTuple(args, "Oz", &ido, &tags)) return NULL;
    sps_region_t r;
    if (region_id_arg(ido, &r)) return NULL;
    int rc = sps_region_set_tags(r, tags);
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* region_set_event_metadata(id, json, ncalls): sps_region_set_event_metadata. */
static PyObject *ext_region_set_event_metadata(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *ido;
    const char *json;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "OzK", &ido, &json, &n)) return NULL;
    sps_region_t r;
    if (region_id_arg(ido, &r)) return NULL;
    int rc = sps_region_set_event_metadata(r, json, n);
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

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

/* tasks_set(rows): sps_tasks_set from a sequence of tuples (index,
 * thread_index, created_ns, done_ns, steps, running_ns, suspended_ns,
 * kind, name, coro_name). */
static PyObject *ext_tasks_set(PyObject *mod, PyObject *rows) {
    (void)mod;
    PyObject *seq = PySequence_Fast(rows, "tasks_set() needs a sequence of tuples");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    sps_task_t *t = calloc(n ? (size_t)n : 1, sizeof *t);
    int ok = t != NULL;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        sps_task_t *x = &t[i];
        long long v[7];
        ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "LLLLLLLsss;a task row",
                              &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &x->kind,
                              &x->name, &x->coro_name);
        x->index = v[0], x->thread_index = v[1], x->created_ns = v[2], x->done_ns = v[3];
        x->steps = v[4], x->running_ns = v[5], x->suspended_ns = v[6];
    }
    int rc = ok ? sps_tasks_set(t, (size_t)n) : 0; /* copies the strings */
    free(t);
    Py_DECREF(seq);
    if (!ok) return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

/* metadata_set(key, value): sps_metadata_set (value None removes). */
static PyObject *ext_metadata_set(PyObject *mod, PyObject *args) {
    (void)mod;
    const char *key, *value;
    if (!PyArg_ParseTuple(args, "sz", &key, &value)) return NULL;
    int rc = sps_metadata_set(key, value);
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
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

/* task_steps_set(buffer): sps_task_steps_set from a buffer of int64
 * (array('q')), four per step: task, thread, start_ns, end_ns. */
static PyObject *ext_task_steps_set(PyObject *mod, PyObject *buf) {
    (void)mod;
    Py_buffer v;
    if (PyObject_GetBuffer(buf, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) return NULL;
    int ok = v.itemsize == 8 && v.len % (4 * 8) == 0 && v.format &&
             (v.format[0] == 'q' || v.format[0] == 'l');
    int rc = 0;
    if (ok) {
        sps_task_step_t *steps = malloc(v.len ? (size_t)v.len : 1); /* 4 int64 each */
        if (!steps) {
            PyBuffer_Release(&v);
            return PyErr_NoMemory();
        }
        memcpy(steps, v.buf, (size_t)v.len);
        Py_BEGIN_ALLOW_THREADS
        rc = sps_task_steps_set(steps, (size_t)v.len / sizeof *steps);
        Py_END_ALLOW_THREADS
        free(steps);
    }
    PyBuffer_Release(&v);
    if (!ok)
        return PyErr_Format(PyExc_TypeError, "task_steps_set() needs int64 items, 4 per step");
    if (rc) return raise_sps(rc, NULL);
    Py_RETURN_NONE;
}

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

static PyObject *ext_set_region_class(PyObject *mod, PyObject *cls) {
    (void)mod;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &RegionType))
        return PyErr_Format(PyExc_TypeError, "expected a subclass of Region");
    Py_INCREF(cls);
    Py_XSETREF(g_region_class, cls);
    Py_RETURN_NONE;
}

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

static PyMethodDef ext_methods[] = {
    {"setup", (PyCFunction)(void (*)(void))ext_setup, METH_VARARGS | METH_KEYWORDS,
     "Start a session (sps_setup)."},
    {"finalize", ext_finalize, METH_VARARGS,
     "finalize(path, verbose) -> table text; writes the period (sps_finalize)."},
    {"file_paths", ext_file_paths, METH_VARARGS,
     "file_paths(column, keep) -> a read file's calls pooled by call path per rank."},
    {"finalize_paths", ext_finalize_paths, METH_VARARGS,
     "finalize_paths(path, verbose) -> (text, paths): finalize and the period's call paths."},
    {"shutdown", ext_shutdown, METH_NOARGS, "End the session without writing."},
    {"h5_check", ext_h5_check, METH_O,
     "h5_check(path): the isolated check before libhdf5 reads a file (sps_h5_check)."},
    {"h5_check_stats", ext_h5_check_stats, METH_NOARGS,
     "(files checked in a child process, files refused) since the library loaded."},
    {"is_active", ext_is_active, METH_NOARGS, "True while a session records."},
    {"now_ns", ext_now_ns, METH_NOARGS, "The profiler's clock, CLOCK_MONOTONIC ns."},
    {"session_start_ns", ext_session_start_ns, METH_NOARGS, "Session start (ns), 0 if none."},
    {"clear_registry", ext_clear_registry, METH_NOARGS, "Forget all Region objects."},
    {"set_region_slow", ext_set_region_slow, METH_O,
     "The package's region(name, functions=None, tags=None) for names not cached."},
    {"region_new", ext_region_new, METH_O, "A new, unregistered Region of the package's class."},
    {"pause", ext_pause, METH_O, "pause(True) / pause(False): sps_pause / sps_resume."},
    {"is_paused", ext_is_paused, METH_NOARGS, "True while the session is paused."},
    {"open_calls_all", ext_open_calls_all, METH_NOARGS,
     "open_calls_all() -> [(thread, depth, name)]: sps_open_calls_all (None: aggregate)."},
    {"open_calls", ext_open_calls, METH_NOARGS,
     "Names of the calls open on this thread, outermost first."},
    {"region_set_source", ext_region_set_source, METH_VARARGS,
     "region_set_source(id, file, line, text): sps_region_set_source."},
    {"region_set_tags", ext_region_set_tags, METH_VARARGS,
     "region_set_tags(id, tags_json): sps_region_set_tags."},
    {"region_set_event_metadata", ext_region_set_event_metadata, METH_VARARGS,
     "region_set_event_metadata(id, json, ncalls): sps_region_set_event_metadata."},
    {"tasks_set", ext_tasks_set, METH_O,
     "tasks_set(rows): the session's task table (sps_tasks_set), written by finalize."},
    {"metadata_set", ext_metadata_set, METH_VARARGS,
     "metadata_set(key, value): a /metadata string of the session's files (sps_metadata_set)."},
    {"set_trace_filters", ext_set_trace_filters, METH_VARARGS,
     "set_trace_filters(include, exclude, entrypoint): glob patterns (tuples of str, "
     "Python's fnmatch rules) on the names the recursive tracer records, and the "
     "function (co_name) recorded under the entrypoint's name (str or None)."},
    {"set_trace_skip", ext_set_trace_skip, METH_O,
     "set_trace_skip(prefixes or None): path prefixes the recursive tracer leaves out."},
    {"task_steps_set", ext_task_steps_set, METH_O,
     "task_steps_set(int64 buffer, 4 per step): the tasks' steps (sps_task_steps_set)."},
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
    {"env_read", ext_env_read, METH_NOARGS,
     "The SPANSCOPE_*/SCOPE_PROFILER_* settings of the environment (sps_env_read)."},
    {"recorded_ids", ext_recorded_ids, METH_NOARGS, "Ids of regions with calls."},
    {"summary", ext_summary, METH_NOARGS, "The session's summary table as text."},
    {"counters", ext_counters, METH_NOARGS,
     "{'dropped': n, 'misuse': n, 'spill_errno': errno, 'spill_error': str or None}"},
    {"query_info", ext_query_info, METH_NOARGS,
     "{'records_read', 'rebuilds', 'regions', 'bytes'} of the per-call queries "
     "(sps_query_info)."},
    {"report", ext_report, METH_VARARGS, "report(path, sort='self', top=0) -> table text."},
    {"read_metadata", ext_read_metadata, METH_VARARGS,
     "read_metadata(path) -> {name: value} of the file's /metadata."},
    {"fold_spans", ext_fold_spans, METH_VARARGS,
     "fold_spans(start, end, rank, thread, parent, self): the one fold over spans "
     "held in Python (sps_fold_spans)."},
    {"read_index", ext_read_index, METH_VARARGS,
     "read_index(path) -> read_file's dict without events: the index, row_summary "
     "(sps_file_open_index)."},
    {"read_file", ext_read_file, METH_VARARGS,
     "read_file(path) -> the file's model (sps_file_open) as a dict of columns."},
    {"region_name", ext_region_name, METH_O, "Name of a region id, or None."},
    {"terminal_text", ext_terminal_text, METH_VARARGS,
     "terminal_text(s, max_cols=0) -> s cleaned for a terminal (sps_terminal_text)."},
    {"set_region_class", ext_set_region_class, METH_O, "The Region subclass to create."},
    {"begin", ext_begin, METH_O, "sps_begin(id) (for tests)."},
    {"end", ext_end, METH_O, "sps_end(id) (for tests)."},
    {"_noop_profile", ext_noop_profile, METH_O, "Benchmark floor: a no-op C profile hook."},
    {"set_trace_hook", ext_set_trace_hook, METH_O,
     "set_trace_hook('setprofile' | 'monitoring'): the recursive tracer's hook "
     "(monitoring: sys.monitoring, Python 3.12+) for the recursive calls that start after it."},
    {"trace_hook", ext_trace_hook, METH_NOARGS, "The recursive tracer's hook: its name."},
    {"_floor_pair_ns", ext_floor_pair_ns, METH_O, "Benchmark floor: ns per two counter reads."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef ext_module = {
    PyModuleDef_HEAD_INIT, "spanscope._ext",
    "The C face of spanscope (see the spanscope package).", -1, ext_methods,
    NULL, NULL, NULL, NULL};

/* ======================================================================== */
/* Thread names: a Python thread is named after threading's name             */
/* ======================================================================== */

/* The core's namer (sps_set_thread_namer): on a thread's first record, if
 * the thread holds the GIL and threading knows it, its threading name
 * ("MainThread", "w0", "ThreadPoolExecutor-0_1") becomes its name in every
 * view -- the pthread name of a Python thread is the interpreter's
 * ("python").  Runs no Python code of threading's (the thread object is
 * found in threading._active by ident, its _name is an instance
 * attribute), so the recursive tracer does not see it; were a subclass's
 * _name a property that records, the core does not ask again.  A pending
 * exception is kept.  Threads started by C code (threading's
 * _DummyThread, or unknown to threading) keep their pthread names. */
static void py_thread_namer(void) {
    if (!Py_IsInitialized() || !PyGILState_Check()) return;
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    PyObject *name_s = PyUnicode_FromString("threading");
    PyObject *mod = name_s ? PyImport_GetModule(name_s) : NULL;
    Py_XDECREF(name_s);
    PyObject *active = mod ? PyObject_GetAttrString(mod, "_active") : NULL;
    PyObject *dummy = mod ? PyObject_GetAttrString(mod, "_DummyThread") : NULL;
    PyObject *key = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    PyObject *thread = (active && key && PyDict_Check(active))
                           ? PyDict_GetItemWithError(active, key) : NULL; /* borrowed */
    if (thread && dummy && PyType_Check(dummy) &&
        !PyObject_TypeCheck(thread, (PyTypeObject *)dummy)) {
        PyObject *name = PyObject_GetAttrString(thread, "_name");
        const char *utf8 = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (utf8 && *utf8) sps_thread_set_name(utf8);
        Py_XDECREF(name);
    }
    Py_XDECREF(key);
    Py_XDECREF(dummy);
    Py_XDECREF(active);
    Py_XDECREF(mod);
    PyErr_Restore(exc_type, exc_value, exc_tb); /* and drops any error of ours */
}

PyMODINIT_FUNC PyInit__ext(void) {
    if (PyType_Ready(&RegionType) < 0 || PyType_Ready(&ProfiledType) < 0 ||
        PyType_Ready(&ClockPairType) < 0 || PyType_Ready(&ColumnType) < 0)
        return NULL;
    g_extra_index = REQUEST_EXTRA(NULL);
    g_use_tsc = strcmp(sps_clock_source(), "tsc") == 0;
    PyObject *m = PyModule_Create(&ext_module);
    if (!m) return NULL;
    g_registry = PyDict_New();
    g_traced = PySet_New(NULL);
    if (!g_traced || PyModule_AddObjectRef(m, "traced_regions", g_traced) ||
        PyType_Ready(&RegionLookupType) < 0 ||
        PyDict_SetItemString(RegionLookupType.tp_dict, "__func__",
                             (PyObject *)&RegionLookupType) < 0)
        return NULL;
    PyType_Modified(&RegionLookupType);
    if (!g_registry || PyModule_AddObjectRef(m, "region_lookup", (PyObject *)&RegionLookupType) || PyModule_AddObjectRef(m, "Region", (PyObject *)&RegionType) ||
        PyModule_AddObjectRef(m, "ProfiledFunction", (PyObject *)&ProfiledType) ||
        PyModule_AddObjectRef(m, "ClockPair", (PyObject *)&ClockPairType) ||
        PyModule_AddObjectRef(m, "registry", g_registry) ||
        PyModule_AddStringConstant(m, "version", SPS_VERSION_STRING) ||
        PyModule_AddIntConstant(m, "OVERFLOW_SPILL", SPS_OVERFLOW_SPILL) ||
        PyModule_AddIntConstant(m, "OVERFLOW_DROP", SPS_OVERFLOW_DROP) ||
        PyModule_AddIntConstant(m, "OVERFLOW_GROW", SPS_OVERFLOW_GROW) ||
        sps__py_profiler_init(m) || sps__py_export_init(m)) {
        Py_DECREF(m);
        return NULL;
    }
    sps_set_thread_namer(py_thread_namer);
    return m;
}
